"""What every command line does before and around its work, so that nothing is lost: refuse a used output folder
(as run_clm.py, unless the user allows it), never write over one of its own inputs, and turn the user's errors into
one line (`error: ...`, exit status 2) while a real bug keeps its traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from huggingface_hub.errors import StrictDataclassError

from .textio import UsageError

__all__ = ["USER_ERRORS", "check_not_input", "check_output_dir", "command_line", "used_files"]

# What makes a folder "used": the files a run, a conversion, a tokenizer or an evaluation leaves there.
USED_PATTERNS = (
    "config.json",
    "model*.safetensors",
    "pytorch_model*.bin",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "run_record.json",
    "report*.json",
    "predictions*.txt",
    "*_predictions.txt",
    "checkpoint-*",
)
# The user's errors: ours, a missing input file, and the strict-config errors of `huggingface_hub.dataclasses`
# (a config field of the wrong type or out of range).
USER_ERRORS: tuple[type[BaseException], ...] = (UsageError, FileNotFoundError, StrictDataclassError)


def used_files(folder: str | os.PathLike) -> list[str]:
    """The names in `folder` that show it holds earlier output (sorted); empty for a missing or fresh folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if any(fnmatch(p.name, pattern) for pattern in USED_PATTERNS))


def _same_path(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def check_not_input(
    path: str | os.PathLike, inputs: Iterable[tuple[str, str | os.PathLike | None]], what: str
) -> None:
    """Refuse an output `path` that is one of the command's inputs (`(flag, path)` pairs), or lies inside an input
    file's place: no command ever writes over what it reads."""
    for flag, source in inputs:
        if source is not None and str(source) and _same_path(path, source):
            raise UsageError(f"{what} {path} is also {flag}: a command never writes over its own input; pick another")


def check_output_dir(
    output_dir: str | os.PathLike,
    *,
    overwrite: bool,
    flag: str = "--overwrite_output_dir",
    resume: str | bool | None = None,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
) -> None:
    """Before any work: refuse an `output_dir` that is one of the inputs, or that already holds a model, a tokenizer,
    a run record or predictions, unless `overwrite` (the user gave `flag`) or, for a folder with checkpoints,
    `resume` (`--resume_from_checkpoint`), as run_clm.py does. A path to a file is refused too."""
    output_dir = Path(output_dir)
    check_not_input(output_dir, inputs, "--output_dir")
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(f"--output_dir {output_dir} is a file, not a folder; pick a folder")
    used = used_files(output_dir)
    if not used or overwrite:
        return
    if resume and any(name.startswith("checkpoint-") for name in used):
        return
    shown = ", ".join(used[:4]) + (", ..." if len(used) > 4 else "")
    has_checkpoint = any(name.startswith("checkpoint-") for name in used)
    resume_hint = ", or --resume_from_checkpoint to continue from its checkpoint" if has_checkpoint else ""
    raise UsageError(
        f"--output_dir {output_dir} already holds earlier output ({shown}); pick a new folder, or add {flag} to "
        f"replace it{resume_hint}"
    )


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    if isinstance(error, FileNotFoundError) and error.filename and str(error.filename) not in text:
        text = f"{error.filename}: {text}"
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def command_line(main: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None) -> int:
    """Run a command's `main(argv)` and return its exit status: 0 (or the int `main` returned), and 2 with one line
    `error: <what, where, what to do>` on stderr for the user's errors (`USER_ERRORS`). Anything else is a bug and
    keeps its traceback."""
    try:
        result = main(argv)
    except USER_ERRORS as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2
    return result if isinstance(result, int) and not isinstance(result, bool) else 0
