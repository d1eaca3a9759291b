"""What every command line does around its work that no library does: the user's errors as one line (`error: ...`,
exit status 2) while a real bug keeps its traceback; an output folder already used refused (as run_clm.py, unless
the user allows it), and no output that is one of the command's inputs or a link. Writes that fail whole
(`staged_save`, `restoring_on_failure`, `removing_what_fails`) live in `hf_models.textio`; `ranges` checks numeric
flags."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from huggingface_hub.errors import StrictDataclassError

from ..textio import UsageError, removing_what_fails, restoring_on_failure, staged_save
from .ranges import check_flag_ranges

__all__ = [
    "Inputs",
    "USER_ERRORS",
    "check_checkpoint",
    "check_flag_ranges",
    "check_json_files",
    "check_output_dir",
    "check_output_file",
    "command_line",
    "describe_os_error",
    "one_line",
    "reading",
    "removing_what_fails",
    "restoring_on_failure",
    "staged_save",
    "used_files",
]

# The user's errors: ours, a missing input file, a config field of the wrong type (`huggingface_hub.dataclasses`).
USER_ERRORS: tuple[type[BaseException], ...] = (UsageError, FileNotFoundError, StrictDataclassError)

_PERMISSIONS, _SPACE = "fix its permissions or pick another path", "free some space, or write to another disk"
# An `OSError` the machine or the user's paths cause, not the code: what it means and what to do.
USER_OS_ERRORS: dict[int, tuple[str, str]] = {
    errno.EACCES: ("permission denied", _PERMISSIONS),
    errno.EPERM: ("operation not permitted", _PERMISSIONS),
    errno.EROFS: ("read-only file system", "pick a folder on a writable disk"),
    errno.ENOSPC: ("no space left on the device", _SPACE),
    errno.EDQUOT: ("disk quota exceeded", _SPACE),
    errno.EFBIG: ("file too large for this file system", "write to another disk"),
    errno.ENAMETOOLONG: ("file name too long", "pick a shorter path"),
    errno.ELOOP: ("too many levels of symbolic links", "fix the links"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "fix the path"),
    errno.EISDIR: ("is a folder, not a file", "give a file"),
    errno.ENXIO: ("no such device", "give a regular file"),
    errno.EXDEV: ("on another device than its folder", "pick a path on one disk"),
}


def describe_os_error(error: OSError) -> str | None:
    """One line for an `OSError` of `USER_OS_ERRORS`: the path, what happened, what to do; None for another."""
    if error.errno not in USER_OS_ERRORS:
        return None
    paths = " -> ".join(str(name) for name in (error.filename, error.filename2) if name is not None)
    return f"{paths or 'a file'}: {'; '.join(USER_OS_ERRORS[error.errno])}"


def one_line(error: BaseException | str, limit: int | None = None) -> str:
    """The message of `error` (an exception, or a text) on one line, the project's one way to shorten one: its lines
    joined with '; ' (a line ending with ':' runs on into the next), white space collapsed, its type's name when it
    has no message, a missing file's name; at most `limit` characters, '...' at the cut."""
    text = str(error).strip() or (type(error).__name__ if isinstance(error, BaseException) else "")
    if isinstance(error, FileNotFoundError) and error.filename and str(error.filename) not in text:
        text = f"{error.filename}: {error.strerror or text}"
    joined = ""
    for line in (" ".join(line.split()) for line in text.splitlines() if line.strip()):
        joined += (" " if joined.endswith(":") else "; ") + line if joined else line
    return joined if limit is None or len(joined) <= limit else joined[: limit - 3] + "..."


@contextlib.contextmanager
def reading(path: str | os.PathLike, what: str) -> Iterator[None]:
    """Around a library's load of `path` (`what`: "the model", "the tokenizer"...): a broken file is a `UsageError`
    naming it (safetensors weights truncated or not weights, a JSON file not JSON, weights of other shapes)."""
    from safetensors import SafetensorError

    try:
        yield
    except UsageError:
        raise
    except SafetensorError as error:
        raise UsageError(
            f"{what} {path}: its weights (model.safetensors) cannot be read ({one_line(error)}): the file is "
            "truncated or not safetensors; save or copy it again"
        ) from None
    except json.JSONDecodeError as error:  # `check_json_files` names the file first where it can
        raise UsageError(
            f"{what} {path}: a JSON file in it is not valid JSON ({error.msg}, line {error.lineno})"
        ) from None
    except OSError as error:
        if error.errno is not None:  # the machine's (a permission, a full disk): `command_line` says it
            raise
        raise UsageError(f"{what} {path}: {one_line(error)}") from None  # transformers' "Can't load ... from ..."
    except RuntimeError as error:
        if "ignore_mismatched_sizes" not in str(error) and "size mismatch" not in str(error):
            raise
        raise UsageError(
            f"{what} {path}: its weights do not have the shapes its config.json gives (e.g. its vocab_size): the "
            "config was edited or comes from another model; restore the folder's own config.json"
        ) from None


def check_json_files(folder: str | os.PathLike, names: Sequence[str], what: str) -> dict[str, Any]:
    """Read the JSON files `names` of `folder` that exist (a config, the tokenizer's) before a library does, so that
    a broken one is named (`file:line`): not JSON, not UTF-8, not one object. Returns the objects, by name."""
    objects = {}
    for name in [name for name in names if os.path.isfile(os.path.join(folder, name))]:
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as f:
                objects[name] = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            where, reason = (f"{path}:{error.lineno}", error.msg) if hasattr(error, "lineno") else (path, "not UTF-8")
            raise UsageError(
                f"{what} {folder}: {where}: not valid JSON ({reason}); the file is damaged: save or copy it again"
            ) from None
        if not isinstance(objects[name], dict):
            raise UsageError(f"{what} {folder}: {path} holds a JSON {type(objects[name]).__name__}, not an object")
    return objects


def _raise_parser_error(parser: argparse.ArgumentParser, message: str) -> None:
    # Under `command_line` argparse raises its errors, to be printed as one line too (not its usage, then an exit).
    raise UsageError(f"{parser.prog}: {message}; {parser.prog} -h lists its flags")


def _is_main_process() -> bool:
    # Under `accelerate launch` or torchrun every process meets the same user error: the main one says it.
    if "WORLD_SIZE" not in os.environ:  # no launcher: no torch to import for one line
        return True
    from accelerate import PartialState

    return PartialState().is_main_process


def command_line(main: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None) -> int:
    """Run a command's `main(argv)` and return its exit status: 0 (or the int `main` returned), 130 for Ctrl-C, and
    2 with one line `error: <what, where, what to do>` on stderr for the user's errors (`USER_ERRORS`, argparse's, a
    `SystemExit` with a message, an `OSError` of `USER_OS_ERRORS`). Anything else is a bug and keeps its traceback.
    A counted warning (its class says `one_line = True`) is one line `warning: ...`, without Python's header."""
    parser_error, shown = argparse.ArgumentParser.error, warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if not getattr(category, "one_line", False):
            return shown(message, category, filename, lineno, file, line)
        print(f"warning: {one_line(str(message))}", file=file or sys.stderr)

    try:
        argparse.ArgumentParser.error = _raise_parser_error
        with warnings.catch_warnings():  # restores `showwarning` afterwards
            warnings.showwarning = show
            result = main(argv)
    except KeyboardInterrupt as interrupt:  # a training run's says its last checkpoint
        if _is_main_process():
            print(f"error: {one_line(interrupt) if str(interrupt) else 'interrupted'}", file=sys.stderr)
        return 130
    except SystemExit as exit_:  # `raise SystemExit("message")`, a script's way to refuse
        if not isinstance(exit_.code, str):
            raise
        print(f"error: {one_line(exit_.code)}", file=sys.stderr)
        return 2
    except USER_ERRORS as error:
        if not isinstance(error, UsageError) or _is_main_process():
            print(f"error: {one_line(error)}", file=sys.stderr)
        return 2
    except OSError as error:
        if describe_os_error(error) is None:
            raise
        print(f"error: {describe_os_error(error)}", file=sys.stderr)
        return 2
    finally:
        argparse.ArgumentParser.error = parser_error
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


# `(flag, path)` pairs: what a command reads, by the flag that named it. A folder stands for its files too.
Inputs = Iterable[tuple[str, "str | os.PathLike | None"]]
# The files that show a folder holds earlier output: a run's, a conversion's, a tokenizer's, an evaluation's.
USED_PATTERNS = (
    "config.json model*.safetensors pytorch_model*.bin tokenizer.json tokenizer_config.json vocab.json "
    "run_record.json report*.json predictions*.txt *_predictions.txt checkpoint-*"
).split()


def used_files(folder: str | os.PathLike) -> list[str]:
    """The names in `folder` that show it holds earlier output (sorted); empty for a missing or fresh folder."""
    folder = Path(folder)
    names = [path.name for path in folder.iterdir()] if folder.is_dir() else []
    return sorted(name for name in names if any(fnmatch(name, pattern) for pattern in USED_PATTERNS))


def _inputs_other_than(path: str | os.PathLike, inputs: Inputs, what: str) -> list[tuple[str, Path]]:
    """Each input resolved through its links, and, for a folder, each file directly in it (a folder stands for its
    files too), after refusing an output `path` (`what`) that, its links resolved, is one of them: no command ever
    writes over what it reads."""
    paths = []
    for flag, source in ((flag, Path(source).resolve()) for flag, source in inputs if source and str(source)):
        paths.append((flag, source))
        if source.is_dir():
            paths += [(flag, child.resolve()) for child in source.iterdir() if not child.is_dir()]
    for flag, source in paths:
        if Path(path).resolve() == source:
            via = f" (through the link {path})" if Path(path).is_symlink() else ""
            raise UsageError(
                f"{what} {path} is also {flag}{via}: a command never writes over its own input; pick another"
            )
    return paths


def check_output_file(path: str | os.PathLike, inputs: Inputs, what: str, *, inside: bool = False) -> None:
    """Before a command writes the file `path`: it is named, no folder, no link (a write would go where it points)
    and none of the inputs; with `inside`, it lies in no input folder either (a command that writes into what it
    reads)."""
    if not str(path):
        raise UsageError(f"{what} is empty: give a file name")
    if Path(path).is_symlink():
        raise UsageError(
            f"{what} {path} is a symbolic link (to {os.readlink(path)}): a command never writes through a link; "
            "remove it or pick another name"
        )
    if Path(path).is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    sources = _inputs_other_than(path, inputs, what)
    for flag, source in sources if inside else ():
        if source.is_dir() and Path(path).resolve().is_relative_to(source):
            raise UsageError(f"{what} {path} lies inside {flag} {source}: it never writes into what it reads")


def check_output_dir(
    output_dir: str | os.PathLike,
    *,
    overwrite: bool,
    resume: str | bool | None = None,
    inputs: Inputs = (),
) -> None:
    """Before any work: refuse an empty `output_dir`, a file, one that is (through its links too) one of the inputs or
    holds links to them, or one that already holds earlier output (`used_files`) unless `overwrite` (the user gave
    --overwrite_output_dir) or, for a folder with checkpoints, `resume` (`--resume_from_checkpoint`), as run_clm.py
    does."""
    if not str(output_dir).strip():
        raise UsageError("--output_dir is empty: give the folder to write to")
    output_dir = Path(output_dir)
    if output_dir.is_symlink() and not output_dir.exists():
        raise UsageError(
            f"--output_dir {output_dir} is a symbolic link to {os.readlink(output_dir)}, which does not exist: "
            "remove the link, or make the folder it points to"
        )
    sources = _inputs_other_than(output_dir, inputs, "--output_dir")
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(f"--output_dir {output_dir} is a file, not a folder; pick a folder")
    links = [child for child in output_dir.iterdir() if child.is_symlink()] if output_dir.is_dir() else []
    to_inputs = sorted(link.name for link in links if link.resolve() in {source for _, source in sources})
    if to_inputs:
        raise UsageError(
            f"--output_dir {output_dir} holds links to the command's inputs ({', '.join(to_inputs)}): a write there "
            "could reach them; remove the links or pick another folder"
        )
    used = used_files(output_dir)
    if used and links:
        raise UsageError(
            f"--output_dir {output_dir} holds links to files elsewhere ({', '.join(sorted(p.name for p in links)[:4])}"
            "): a run there would mix its files with the files they point to; pick another folder, or remove the links"
        )
    for flag, source in sources if overwrite and output_dir.is_dir() else ():
        if source.parent == output_dir.resolve() and not source.is_dir():  # the files --overwrite_output_dir replaces
            raise UsageError(
                f"{flag} {source} lies in --output_dir {output_dir}, whose files --overwrite_output_dir replaces: a "
                "command never writes over its own input; move it out of the folder, or pick another"
            )
    checkpoints = any(name.startswith("checkpoint-") for name in used)
    if used and not overwrite and not (resume and checkpoints):
        raise UsageError(
            f"--output_dir {output_dir} already holds earlier output ({', '.join(used[:4])}"
            f"{', ...' if len(used) > 4 else ''}); pick a new folder, or add --overwrite_output_dir to replace it"
            + (", or --resume_from_checkpoint to continue from its checkpoint" if checkpoints else "")
        )


def _read_json(path: Path, *keys: str) -> Any:
    """The value at `keys` in the JSON file `path`, or None where the file or a key is missing or damaged."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        for key in keys:
            value = value[key]
        return value
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_checkpoint(checkpoint: str | bool | None, architecture: str | None = None, task: str | None = None) -> None:
    """`--resume_from_checkpoint FOLDER` names a checkpoint Trainer saved (`checkpoint-N`, its `trainer_state.json`
    beside weights that open), not a folder of other files nor a finished run's folder (Trainer would resume another
    run's weights and step as this run's), nor another task's: its model (config.json's `architectures`) is the
    `architecture` this command trains, and its run's record and trainer state (`training.trainer.RunTask`) name this
    command's `task`."""
    if not isinstance(checkpoint, str) or not checkpoint or checkpoint.lower() in ("true", "false"):
        return  # not given, or Trainer's own "the last checkpoint of --output_dir"
    folder = Path(checkpoint)
    if not folder.is_dir():
        problem = "is a file" if folder.exists() else "does not exist"
        raise UsageError(
            f"--resume_from_checkpoint {checkpoint} {problem}; give the checkpoint-N folder of an earlier run"
        )
    if (folder / "run_record.json").is_file():
        raise UsageError(
            f"--resume_from_checkpoint {checkpoint} is a finished run's folder, not a checkpoint: resume from one of "
            "its checkpoint-N folders, or start from its model with --model_name_or_path"
        )
    if not (folder / "trainer_state.json").is_file():
        raise UsageError(
            f"--resume_from_checkpoint {checkpoint} holds no trainer_state.json: it is not a checkpoint Trainer "
            "saved (a checkpoint-N folder of a run with --save_strategy steps or epoch)"
        )
    architectures = _read_json(folder / "config.json", "architectures") or []  # the load says what is wrong with it
    recorded = _read_json(folder.parent / "run_record.json", "task")
    saved_by = _read_json(folder / "trainer_state.json", "stateful_callbacks", "RunTask", "args", "task")
    other = None
    if architecture and isinstance(architectures, list) and architectures and architecture not in architectures:
        other = f"a {', '.join(map(str, architectures))}; this command trains a {architecture}"
    elif task and recorded and recorded != task and not str(recorded).endswith("-evaluation"):  # scores added later
        other = f"its run {folder.parent} is a {recorded} run; this command is {task}"
    elif task and saved_by and saved_by != task:
        other = f"saved by a {saved_by} run; this command is {task}"
    if other:
        raise UsageError(
            f"--resume_from_checkpoint {checkpoint} is another task's checkpoint ({other}): resume from a "
            "checkpoint-N folder of this command's own run, or start from a model with --model_name_or_path"
        )
    from safetensors import safe_open

    for weights in sorted(folder.glob("model*.safetensors")):  # a kill during the save cuts them short
        try:
            with safe_open(weights, framework="pt"):
                pass
        except Exception as error:  # SafetensorError, or an OSError of the file itself
            raise UsageError(
                f"--resume_from_checkpoint {checkpoint}: {weights.name} cannot be read ({one_line(error)}): the "
                "save was cut short; resume from an earlier checkpoint-N"
            ) from None
