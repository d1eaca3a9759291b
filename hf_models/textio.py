"""Files: the one place that reads text, and writes that fail whole, so that bad input is named and nothing is lost.

Text files, plain or gzip (told by their magic number) or folders of them, are read as Python's text mode reads them
with `TEXT_ENCODING` (one byte order mark at the very start dropped) and universal newlines (a line ends at `\\n`,
`\\r\\n` or a lone `\\r`, as in `datasets`' text builder; never at U+2028, U+0085 or a form feed). Invalid UTF-8 is
a `DataError` naming `file:line`; a corrupt gzip file, a dangling link, a named pipe or a device is named as
such. A write goes to a staging copy first (`staged_save`, `atomic_write`), or keeps the folder's earlier files aside
(`restoring_on_failure`) or notes what it adds (`removing_what_fails`): a failure leaves the folder as it was.
`UsageError` (`DataError`) is what the user can fix (one `error: ...` line, exit status 2: `safety.command_line`).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import re
import shutil
import stat
import string
import tempfile
import warnings
import zlib
from collections.abc import Iterable, Iterator
from fnmatch import fnmatch
from pathlib import Path

Paths = str | os.PathLike | Iterable[str | os.PathLike]


class UsageError(ValueError):
    """An input the user can fix (a flag, a value, a file, an output folder, a line of data): the message says what,
    where (`file:line` for a line of a file) and what to do."""


DataError = UsageError  # bad input data: the name the readers and loaders raise it by


class DataWarning(UserWarning):
    """Recovered or dropped input rows: one warning per file and kind, with a count and the line numbers."""

    one_line = True  # `safety.command_line` prints it as one line


def warn_rows(path: object, what: str, line_numbers: list[int], action: str) -> None:
    """Emit one counted warning for several rows of one file, instead of one warning per row."""
    if line_numbers:
        shown = ", ".join(map(str, line_numbers[:20])) + (", ..." if len(line_numbers) > 20 else "")
        warnings.warn(f"{path}: {len(line_numbers)} {what} ({action}); line(s) {shown}", DataWarning, stacklevel=3)


def iter_text_files(paths: Paths) -> list[Path]:
    """Files and folders (recursively, sorted, hidden files skipped) as a list of files: a missing path is a
    `FileNotFoundError` naming it, a folder of no file a `UsageError`, so that a typo never yields an empty corpus."""
    files: list[Path] = []
    for p in map(Path, [paths] if isinstance(paths, str | os.PathLike) else paths):
        if not p.is_dir():
            check_text_file(p)
            files.append(p)
            continue
        found = sorted(f for f in p.rglob("*") if f.is_file() and not any(s[0] == "." for s in f.relative_to(p).parts))
        if not found:
            raise UsageError(f"{p}: the folder holds no text file; give a folder of .txt or .txt.gz files")
        files += found
    return files


_SPECIAL_FILES = {
    stat.S_ISFIFO: "a named pipe (FIFO)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
}


def check_text_file(path: str | os.PathLike) -> None:
    """Refuse, before opening it, a path that is no regular file: `FileNotFoundError` for a missing one (a dangling
    link says where it points, a missing folder is named), `DataError` for a folder, a named pipe (a read would wait
    forever), a device such as /dev/null (it reads as an empty file) or a socket."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise FileNotFoundError(
                f"{path}: a symbolic link to {os.readlink(path)}, which does not exist; fix the link or give the file"
            ) from None
        if not path.parent.exists():  # a mistyped data folder
            raise FileNotFoundError(f"{path.parent}: no such folder") from None
        raise FileNotFoundError(f"{path}: no such file or folder") from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{path} is a folder; give a text file")
    kind = next((name for test, name in _SPECIAL_FILES.items() if test(mode)), "a socket")
    if not stat.S_ISREG(mode):
        raise DataError(f"{path} is {kind}, not a text file; give a regular file")


# The encoding of every text file read here: UTF-8, with one byte order mark at the very start of the file dropped, as
# Python's "utf-8-sig" codec does (a U+FEFF elsewhere stays). `load_text_corpus` drops it itself.
TEXT_ENCODING = "utf-8-sig"
BOM = "\ufeff"
# What reading a corrupt gzip file (gzip's `EOFError` names no file) or invalid UTF-8 raises: `_named` names the file.
_READ_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError)


def open_text(path: str | os.PathLike) -> io.TextIOWrapper:
    """Open a regular file (`check_text_file`), plain or gzip (by its magic number: a mislabelled file still reads),
    as text, the way every reader here does (`TEXT_ENCODING`, universal newlines); its `buffer` reads the bytes."""
    check_text_file(path)
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return io.TextIOWrapper(gzip.open(path) if gzipped else open(path, "rb"), encoding=TEXT_ENCODING, newline=None)


def _named(path: str | os.PathLike, error: Exception) -> Exception:
    """A read's error of `_READ_ERRORS` as a `DataError` naming `path`: invalid UTF-8 by `file:line` (the decoder reads
    in chunks and knows no line: `find_decode_error` reads the file again, line by line, to find it)."""
    if isinstance(error, UnicodeDecodeError):
        return find_decode_error(path) or error
    return DataError(
        f"{path}: corrupt or truncated gzip file ({error or type(error).__name__}); download or compress it again"
    )


def find_decode_error(path: str | os.PathLike) -> DataError | None:
    """The `DataError` naming the first line (`file:line`, and the column) of a plain or gzip file that is not valid
    UTF-8, or None. Lines are cut as `open_text` cuts them; 0x0A and 0x0D occur in no UTF-8 multi-byte character:
    each decodes alone."""
    lineno = 0
    try:
        with open_text(path) as f:
            for index, raw in enumerate(f.buffer):
                raw = raw.removeprefix(BOM.encode()) if index == 0 else raw
                end = 2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0
                for line in raw[: len(raw) - end].split(b"\r"):
                    lineno += 1
                    try:
                        line.decode("utf-8")
                    except UnicodeDecodeError as err:
                        byte = line[err.start : err.start + 1]
                        return DataError(f"{path}:{lineno}: invalid UTF-8 (byte {byte!r} at column {err.start + 1})")
    except _READ_ERRORS as error:  # a corrupt gzip file
        raise _named(path, error) from None
    return None


def iter_text_lines(paths: Paths, skip_empty: bool = True) -> Iterator[str]:
    """The lines (without the line break) of plain or gzip text files, or folders of them, read as `open_text` reads
    them; invalid UTF-8 raises a `DataError` naming `file:line`."""
    for path in iter_text_files(paths):
        try:
            with open_text(path) as f:
                for line in f:
                    line = line.removesuffix("\n")
                    if skip_empty and not line.strip():
                        continue
                    yield line
        except _READ_ERRORS as error:
            raise _named(path, error) from None


def read_text(path: str | os.PathLike) -> str:
    """The whole of a plain or gzip text file, read as `open_text` reads it."""
    try:
        with open_text(path) as f:
            return f.read()
    except _READ_ERRORS as error:
        raise _named(path, error) from None


def check_not_empty(path: str | os.PathLike) -> None:
    """A `DataError` for a plain or gzip file of nothing but white space and perhaps a byte order mark (or for no
    regular file)."""
    try:
        with open_text(path) as f:
            for index, chunk in enumerate(iter(lambda: f.buffer.read(1 << 20), b"")):
                if (chunk.removeprefix(BOM.encode()) if index == 0 else chunk).strip():
                    return
    except _READ_ERRORS as error:
        raise _named(path, error) from None
    raise DataError(f"{path}: file is empty")


def read_lines(path: str | os.PathLike) -> list[str]:
    """A UTF-8 text file's lines, without line breaks (a final line break ends the last line): a missing file is a
    `FileNotFoundError`, an empty one or invalid UTF-8 a `DataError` naming it (`file:line`)."""
    lines = list(iter_text_lines(path, skip_empty=False))
    if not any(line.strip(string.whitespace) for line in lines):  # as `check_not_empty`: ASCII white space only
        raise DataError(f"{path}: file is empty")
    return lines


# A library's write error that names the machine's: a Rust one (safetensors, tokenizers) says "(os error 28)", and
# torch.save's C++ writer on a full disk only these words.
_TORCH_WRITE_ERRORS = ("iostream error", "PytorchStreamWriter", "unexpected pos", "file write failed")


def _as_os_error(error: BaseException, staging: Path | None, folder: Path) -> OSError | None:
    """The `OSError` to raise for a failed save into `staging`: named by the path of `folder` it was for (not the
    staging one), or a library's disk error as the `OSError` it is; None to raise `error` as it is."""
    if isinstance(error, OSError) and error.errno is not None:
        name = Path(error.filename) if error.filename is not None else None
        if staging is not None and name is not None and name.is_relative_to(staging):
            return OSError(error.errno, error.strerror, str(folder / name.relative_to(staging)))
        if name is None or staging is None and name.name.startswith(".staging-"):  # a flush on close, the staging
            return OSError(error.errno, error.strerror, str(folder))
        return None
    found = re.search(r"\(os error (\d+)\)", str(error))
    if found:
        return OSError(int(found.group(1)), os.strerror(int(found.group(1))), str(folder))
    if isinstance(error, RuntimeError) and any(words in str(error) for words in _TORCH_WRITE_ERRORS):
        with contextlib.suppress(OSError):
            if shutil.disk_usage(folder).free < 1 << 20:
                return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))
    return None


@contextlib.contextmanager
def staged_save(folder: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty staging folder inside `folder` (made if needed; the same disk, so that `os.replace` is one step)
    to save into: when the block ends without an error, its files replace their namesakes in `folder`, each complete.
    On an error `folder` is as it was (the folders this call made removed again), and the error names the file it
    was for."""
    folder = Path(folder)
    made = [parent for parent in (folder, *folder.parents) if not os.path.lexists(parent)]
    folder.mkdir(parents=True, exist_ok=True)
    staging = None
    try:
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
        yield staging
        entries = sorted(staging.rglob("*"))  # a folder before what it holds
        for path in entries:
            if path.is_file() and not path.is_symlink():
                with open(path, "rb") as f:
                    os.fsync(f.fileno())
        for path in entries:  # each file over its namesake in one step, the folders merged
            target = folder / path.relative_to(staging)
            if path.is_dir() and not path.is_symlink():
                if target.is_symlink() or (target.exists() and not target.is_dir()):
                    target.unlink()
                target.mkdir(exist_ok=True)
            else:
                os.replace(path, target)  # a folder there is the machine's error (EISDIR), never removed
    except BaseException as error:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for parent in made:
            with contextlib.suppress(OSError):
                parent.rmdir()
        named = _as_os_error(error, staging, folder)
        if named is None:
            raise
        raise named from error
    shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """Write `path` in one step (`staged_save`): yields the path to write (`open`, `savefig`, `torch.save`...) in a
    staging folder beside it; readers see the old file or the new one, never half of one."""
    with staged_save(Path(path).parent) as staging:
        yield staging / Path(path).name


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write `text` (UTF-8) to `path` through `atomic_write`: the old file stays until the new one is complete."""
    path = Path(path)
    with staged_save(path.parent) as staging, open(staging / path.name, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return path


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


@contextlib.contextmanager
def restoring_on_failure(folder: str | os.PathLike, discard: tuple[str, ...] = ()) -> Iterator[None]:
    """Around the writes that end a run in `folder`: its earlier files (the checkpoints stay) wait aside in a hidden
    folder on the same disk. If the block fails, what it wrote goes and the earlier files come back; if it ends well,
    the earlier files it did not replace come back, but those `discard` matches (names or `fnmatch` patterns)."""
    folder = Path(folder)
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=".earlier-", dir=folder))
    # The hidden folders (staging ones, `aside`) and the checkpoints (a resumed run's own) stay where they are.
    staying = {
        path
        for path in folder.iterdir()
        if path.name[0] == "." or path.name.startswith("checkpoint-") and path.is_dir()
    }
    try:
        for path in sorted(set(folder.iterdir()) - staying):
            os.rename(path, aside / path.name)
        yield
    except BaseException as error:
        for path in set(folder.iterdir()) - staying:
            _remove(path)
        for path in aside.iterdir():
            os.rename(path, folder / path.name)
        aside.rmdir()
        if made and not any(folder.iterdir()):
            folder.rmdir()
        if isinstance(error, OSError) and error.errno is not None and error.filename is None:  # a flush on close
            raise OSError(error.errno, error.strerror, str(folder)) from error
        raise
    for path in aside.iterdir():
        if not any(fnmatch(path.name, pattern) for pattern in discard) and not os.path.lexists(folder / path.name):
            os.rename(path, folder / path.name)
    shutil.rmtree(aside)


@contextlib.contextmanager
def removing_what_fails(
    folders: Iterable[str | os.PathLike | None] = (), files: Iterable[str | os.PathLike | None] = ()
) -> Iterator[None]:
    """Around a command's writes of several files (each in one step): if the block fails half-way, what it added goes
    (the new entries of `folders`, the `files` that were not there, the folders made for them). A file it replaced
    stays replaced (`--overwrite_output_dir` asked for it)."""
    folders = [Path(folder) for folder in folders if folder]
    files = [Path(file) for file in files if file]
    entries = {folder: set(os.listdir(folder)) if folder.is_dir() else None for folder in folders}
    new_files = [file for file in files if not os.path.lexists(file)]
    made = [parent for path in [*folders, *files] for parent in [path, *path.parents] if not os.path.lexists(parent)]
    try:
        yield
    except BaseException:
        for folder, names in entries.items():
            for name in set(os.listdir(folder)) - names if names is not None and folder.is_dir() else ():
                _remove(folder / name)
        for path in [*new_files, *sorted(set(made), key=lambda path: len(path.parts), reverse=True)]:
            _remove(path)  # the folders deepest first; a folder made for the writes goes with what is in it
        raise
