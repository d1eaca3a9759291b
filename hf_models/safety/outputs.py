"""What a command checks before it writes anything: an output folder that is not a used one (as run_clm.py, unless the
user allows it), and no output, through a symbolic link or not, that is one of the command's inputs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path

from ..textio import UsageError
from .errors import one_line

__all__ = [
    "Inputs",
    "check_checkpoint",
    "check_count",
    "check_not_input",
    "check_output_dir",
    "check_output_file",
    "used_files",
]

# `(flag, path)` pairs: what a command reads, by the flag that named it. A folder stands for its files too.
Inputs = Iterable[tuple[str, "str | os.PathLike | None"]]

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


def used_files(folder: str | os.PathLike) -> list[str]:
    """The names in `folder` that show it holds earlier output (sorted); empty for a missing or fresh folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if any(fnmatch(p.name, pattern) for pattern in USED_PATTERNS))


def _input_paths(inputs: Inputs) -> list[tuple[str, Path]]:
    """Each input resolved through its links, and, for a folder, each file directly in it."""
    paths = []
    for flag, source in inputs:
        if source is None or not str(source):
            continue
        source = Path(source).resolve()
        paths.append((flag, source))
        if source.is_dir():
            paths += [(flag, child.resolve()) for child in source.iterdir() if not child.is_dir()]
    return paths


def check_not_input(path: str | os.PathLike, inputs: Inputs, what: str) -> None:
    """Refuse an output `path` that is, once its links are resolved, one of the command's inputs (`(flag, path)`
    pairs; a folder stands for its files too): no command ever writes over what it reads."""
    target = Path(path).resolve()
    for flag, source in _input_paths(inputs):
        if target == source:
            via = f" (through the link {path})" if Path(path).is_symlink() else ""
            raise UsageError(
                f"{what} {path} is also {flag}{via}: a command never writes over its own input; pick another"
            )


def check_output_file(path: str | os.PathLike, inputs: Inputs, what: str, *, inside: bool = False) -> None:
    """Before a command writes the file `path`: it is no folder, no symbolic link (a write would go where the link
    points), and not one of the `inputs`; with `inside`, it does not lie inside an input folder either (a plot never
    writes into the runs it reads)."""
    if not str(path):
        raise UsageError(f"{what} is empty: give a file name")
    if Path(path).is_symlink():
        raise UsageError(
            f"{what} {path} is a symbolic link (to {os.readlink(path)}): a command never writes through a link; "
            "remove it or pick another name"
        )
    if Path(path).is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name")
    check_not_input(path, inputs, what)
    if inside:
        target = Path(path).resolve()
        for flag, source in _input_paths(inputs):
            if source.is_dir() and target.is_relative_to(source):
                raise UsageError(f"{what} {path} lies inside {flag} {source}: it never writes into what it reads")


def _links_to_inputs(output_dir: Path, inputs: Inputs) -> list[str]:
    """The links in `output_dir` that point to one of the inputs (a write over the link's name must not reach it)."""
    if not output_dir.is_dir():
        return []
    sources = {source for _, source in _input_paths(inputs)}
    return sorted(child.name for child in output_dir.iterdir() if child.is_symlink() and child.resolve() in sources)


def check_output_dir(
    output_dir: str | os.PathLike,
    *,
    overwrite: bool,
    flag: str = "--overwrite_output_dir",
    resume: str | bool | None = None,
    inputs: Inputs = (),
) -> None:
    """Before any work: refuse an empty `output_dir`, one that is (through its links too) one of the inputs or holds
    links to them, or one that already holds a model, a tokenizer, a run record or predictions, unless `overwrite`
    (the user gave `flag`) or, for a folder with checkpoints, `resume` (`--resume_from_checkpoint`), as run_clm.py
    does. A path to a file is refused too."""
    if not str(output_dir).strip():
        raise UsageError("--output_dir is empty: give the folder to write to")
    output_dir = Path(output_dir)
    inputs = list(inputs)
    if output_dir.is_symlink() and not output_dir.exists():
        raise UsageError(
            f"--output_dir {output_dir} is a symbolic link to {os.readlink(output_dir)}, which does not exist: "
            "remove the link, or make the folder it points to"
        )
    check_not_input(output_dir, inputs, "--output_dir")
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(f"--output_dir {output_dir} is a file, not a folder; pick a folder")
    links = _links_to_inputs(output_dir, inputs)
    if links:
        raise UsageError(
            f"--output_dir {output_dir} holds links to the command's inputs ({', '.join(links)}): a write there "
            "could reach them; remove the links or pick another folder"
        )
    used = used_files(output_dir)
    linked = sorted(child.name for child in output_dir.iterdir() if child.is_symlink()) if used else []
    if linked:
        raise UsageError(
            f"--output_dir {output_dir} holds links to files elsewhere ({', '.join(linked[:4])}): a run there would "
            "mix its files with the files they point to; pick another folder, or remove the links"
        )
    if overwrite:
        _check_no_input_inside(output_dir, inputs, flag)
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


def _check_no_input_inside(output_dir: Path, inputs: Inputs, flag: str) -> None:
    """With `flag` (--overwrite_output_dir) the run replaces the files of `output_dir`: none of them may be one of the
    command's inputs (an arguments file, a config, a corpus kept in the run's folder)."""
    if not output_dir.is_dir():
        return
    folder = output_dir.resolve()
    for input_flag, source in _input_paths(inputs):
        if source.parent == folder and not source.is_dir():
            raise UsageError(
                f"{input_flag} {source} lies in --output_dir {output_dir}, whose files {flag} replaces: a command "
                "never writes over its own input; move it out of the folder, or pick another"
            )


def check_checkpoint(checkpoint: str | bool | None, architecture: str | None = None, task: str | None = None) -> None:
    """`--resume_from_checkpoint FOLDER` names a checkpoint Trainer saved (`checkpoint-N`, with its
    `trainer_state.json`), not a folder of other files (code, a model alone) nor a finished run's folder, which
    Trainer would take for one, resuming another run's weights and step as if they were this run's. Nor is it
    another task's checkpoint: its model (config.json's `architectures`) is the `architecture` this command trains,
    the run it belongs to, when finished, recorded this command's `task` (run_record.json beside it), and the run
    that saved it named that task too (trainer_state.json, `training.trainer.RunTask`)."""
    if not isinstance(checkpoint, str) or not checkpoint or checkpoint.lower() in ("true", "false"):
        return  # not given, or Trainer's own "the last checkpoint of --output_dir"
    folder = Path(checkpoint)
    if not folder.is_dir():
        raise UsageError(f"--resume_from_checkpoint {checkpoint}: no such folder; give a checkpoint-N folder")
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
    other = _other_task(folder, architecture, task)
    if other:
        raise UsageError(
            f"--resume_from_checkpoint {checkpoint} is another task's checkpoint ({other}): resume from a "
            "checkpoint-N folder of this command's own run, or start from a model with --model_name_or_path"
        )
    _check_weights_readable(folder)


def _check_weights_readable(checkpoint: Path) -> None:
    """The checkpoint's weights open (a kill during the save cuts model.safetensors short): refused before any work,
    naming the file, rather than safetensors' error from inside Trainer's resume."""
    from safetensors import safe_open

    for weights in sorted(checkpoint.glob("model*.safetensors")):
        try:
            with safe_open(weights, framework="pt"):
                pass
        except Exception as error:  # SafetensorError, or an OSError of the file itself
            raise UsageError(
                f"--resume_from_checkpoint {checkpoint}: {weights.name} cannot be read ({one_line(error)}): the "
                "save was cut short; resume from an earlier checkpoint-N"
            ) from None


def _other_task(checkpoint: Path, architecture: str | None, task: str | None) -> str | None:
    """What shows that `checkpoint` belongs to another task than `task`, training another model than
    `architecture`: its config's model class, its run's record, or the task its trainer state names; None when
    nothing does."""
    try:
        config = json.loads((checkpoint / "config.json").read_text(encoding="utf-8"))
        architectures = config.get("architectures") or []
    except (OSError, ValueError, AttributeError):
        architectures = []  # the load says what is wrong with it
    if architecture and architectures and architecture not in architectures:
        return f"a {', '.join(map(str, architectures))}; this command trains a {architecture}"
    try:
        recorded = json.loads((checkpoint.parent / "run_record.json").read_text(encoding="utf-8")).get("task")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if task and recorded and recorded != task and not str(recorded).endswith("-evaluation"):  # scores added later
        return f"its run {checkpoint.parent} is a {recorded} run; this command is {task}"
    try:  # the task our trainer names in each checkpoint (`training.trainer.RunTask`)
        state = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
        saved_by = state["stateful_callbacks"]["RunTask"]["args"]["task"]
    except (OSError, ValueError, KeyError, TypeError):
        saved_by = None
    if task and saved_by and saved_by != task:
        return f"saved by a {saved_by} run; this command is {task}"
    return None


def check_count(flag: str, value: int | None) -> None:
    """A count of examples to keep (`--max_predict_samples`): None for all of them, else at least 1 (0 would score
    nothing, and a negative count would silently mean another number)."""
    if value is not None and value < 1:
        raise UsageError(f"{flag} {value}: give a count of at least 1, or leave it out for all of them")
