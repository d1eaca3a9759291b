"""The user's errors as one line: `command_line` runs a command and prints `error: <what, where, what to do>` with exit
status 2 for them, while a real bug keeps its traceback; `reading` names the file a load failed on."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from huggingface_hub.errors import StrictDataclassError

from ..textio import UsageError

__all__ = ["USER_ERRORS", "check_json_files", "command_line", "describe_os_error", "one_line", "reading"]

# The user's errors: ours, a missing input file, and the strict-config errors of `huggingface_hub.dataclasses`
# (a config field of the wrong type or out of range).
USER_ERRORS: tuple[type[BaseException], ...] = (UsageError, FileNotFoundError, StrictDataclassError)

# An `OSError` the machine or the paths the user gave cause, not the code: what it means and what to do.
USER_OS_ERRORS: dict[int, tuple[str, str]] = {
    errno.EACCES: ("permission denied", "fix its permissions or pick another path"),
    errno.EPERM: ("operation not permitted", "fix its permissions or pick another path"),
    errno.EROFS: ("read-only file system", "pick a folder on a writable disk"),
    errno.ENOSPC: ("no space left on the device", "free some space, or write to another disk"),
    errno.EDQUOT: ("disk quota exceeded", "free some space, or write to another disk"),
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
    meaning = USER_OS_ERRORS.get(error.errno)
    if meaning is None:
        return None
    what, advice = meaning
    paths = " -> ".join(str(name) for name in (error.filename, error.filename2) if name is not None)
    return f"{paths or 'a file'}: {what}; {advice}"


def machine_errno(error: BaseException) -> int | None:
    """The `errno` of the machine's error that a Rust library (safetensors, tokenizers) reports in its message as
    "... (os error 28)", when it is one of `USER_OS_ERRORS`; None otherwise."""
    found = re.search(r"\(os error (\d+)\)", str(error))
    return int(found.group(1)) if found and int(found.group(1)) in USER_OS_ERRORS else None


def one_line(error: BaseException | str, limit: int | None = None) -> str:
    """The message of `error` (an exception, or a text) on one line, the project's one way to shorten one: its
    lines joined with '; ' (a line that ends with ':' runs on into the next), white space collapsed, its type's
    name when it has no message; a missing file's message names the file; at most `limit` characters, '...' at
    the cut, when given."""
    text = str(error).strip() or (type(error).__name__ if isinstance(error, BaseException) else "")
    if isinstance(error, FileNotFoundError) and error.filename and str(error.filename) not in text:
        text = f"{error.filename}: {error.strerror or text}"
    joined = ""
    for line in (" ".join(line.split()) for line in text.splitlines() if line.strip()):
        joined += (" " if joined.endswith(":") else "; ") + line if joined else line
    return joined if limit is None or len(joined) <= limit else joined[: limit - 3] + "..."


def _safetensors_error() -> tuple[type[BaseException], ...]:
    try:
        from safetensors import SafetensorError
    except ImportError:  # an older safetensors
        return ()
    return (SafetensorError,)


@contextlib.contextmanager
def reading(path: str | os.PathLike, what: str) -> Iterator[None]:
    """Around a library's load of `path` (`what`: "the model", "the tokenizer", ...): a broken file becomes a
    `UsageError` naming it: safetensors weights that are truncated or not weights, a JSON file that is not valid
    JSON, weights whose shapes do not match the config (transformers' mismatched-sizes error)."""
    try:
        yield
    except UsageError:
        raise
    except _safetensors_error() as error:
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
        # transformers' "does not appear to have a file named ...", "Can't load ... from ..."
        raise UsageError(f"{what} {path}: {one_line(error)}") from None
    except RuntimeError as error:
        if "ignore_mismatched_sizes" not in str(error) and "size mismatch" not in str(error):
            raise
        raise UsageError(
            f"{what} {path}: its weights do not have the shapes its config.json gives (e.g. its vocab_size): the "
            "config was edited or comes from another model; restore the folder's own config.json"
        ) from None


def check_json_files(folder: str | os.PathLike, names: Sequence[str], what: str) -> dict[str, Any]:
    """Read the JSON files `names` of `folder` that exist (a config, the tokenizer's files) before a library does,
    so that a broken one is named: a `UsageError` for one that is not valid JSON, not UTF-8, or not one object.
    Returns the objects read, by name."""
    objects = {}
    for name in names:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                objects[name] = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            where = f"{path}:{error.lineno}" if isinstance(error, json.JSONDecodeError) else path
            reason = error.msg if isinstance(error, json.JSONDecodeError) else "not UTF-8"
            raise UsageError(
                f"{what} {folder}: {where}: not valid JSON ({reason}); the file is damaged: save or copy it again"
            ) from None
        if not isinstance(objects[name], dict):
            raise UsageError(f"{what} {folder}: {path} holds a JSON {type(objects[name]).__name__}, not an object")
    return objects


class _ArgumentError(UsageError):
    """An argparse error, raised instead of printing the usage and exiting (under `command_line`)."""


def _raise_parser_error(parser: argparse.ArgumentParser, message: str) -> None:
    raise _ArgumentError(f"{parser.prog}: {message}; {parser.prog} -h lists its flags")


@contextlib.contextmanager
def _parser_errors_raised() -> Iterator[None]:
    """argparse prints its usage and an error line, then exits: under `command_line` its errors are raised as
    `UsageError`s instead, so that they are printed as one line too."""
    error = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = _raise_parser_error
    try:
        yield
    finally:
        argparse.ArgumentParser.error = error


def _is_first_process() -> bool:
    # Under `accelerate launch` or torchrun every process meets the same user error: one of them says it.
    return os.environ.get("RANK", "0") == "0" and os.environ.get("LOCAL_RANK", "0") == "0"


@contextlib.contextmanager
def _counted_warnings_on_one_line() -> Iterator[None]:
    """A warning whose class says `one_line = True` (the data loaders' counted `DataWarning`) printed as one line
    `warning: ...`, without Python's header and source line (which read like a traceback); the others as Python
    prints them."""
    with warnings.catch_warnings():  # restores `showwarning` afterwards
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            if not getattr(category, "one_line", False):
                return shown(message, category, filename, lineno, file, line)
            print(f"warning: {one_line(Exception(str(message)))}", file=file or sys.stderr)

        warnings.showwarning = show
        yield


def command_line(main: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None) -> int:
    """Run a command's `main(argv)` and return its exit status: 0 (or the int `main` returned), and 2 with one line
    `error: <what, where, what to do>` on stderr for the user's errors (`USER_ERRORS`, argparse's errors, a
    `SystemExit` with a message, and an `OSError` of `USER_OS_ERRORS`: a read-only folder, a full disk, a name too
    long...). Anything else is a bug and keeps its traceback. Under a launcher with several processes, only the first prints a `UsageError`."""
    try:
        with _parser_errors_raised(), _counted_warnings_on_one_line():
            result = main(argv)
    except KeyboardInterrupt as interrupt:  # Ctrl-C: one line (a training run's says its last checkpoint), 130
        if _is_first_process():
            print(f"error: {one_line(interrupt) if str(interrupt) else 'interrupted'}", file=sys.stderr)
        return 130
    except SystemExit as exit_:  # `raise SystemExit("message")`, a script's way to refuse: one line too
        if not isinstance(exit_.code, str):
            raise
        print(f"error: {one_line(Exception(exit_.code))}", file=sys.stderr)
        return 2
    except USER_ERRORS as error:
        if _is_first_process() or not isinstance(error, UsageError):
            print(f"error: {one_line(error)}", file=sys.stderr)
        return 2
    except OSError as error:
        message = describe_os_error(error)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    return result if isinstance(result, int) and not isinstance(result, bool) else 0
