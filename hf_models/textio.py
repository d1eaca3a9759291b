"""Reading text files, the one place that does it: plain or gzip files, or folders of them, decoded as UTF-8, so
that bad input gets an error naming `file:line` (never a bare `UnicodeDecodeError` from deep inside a reader). The
tokenizer trainer, the corpus readers, the course tokenizers and the data loaders all read through here.

Every reader decodes a file the same way, Python's text mode with `TEXT_ENCODING`: one byte order mark at the very
start of a file is dropped (Windows editors write one; it is no text), a U+FEFF anywhere else stays, and a line ends
at `\\n`, `\\r\\n` or a lone `\\r` (universal newlines, as `datasets`' text builder, which also opens files in text
mode, ends them), never at U+2028, U+0085 or a form feed.

A path that is not a regular file (a dangling link, a named pipe, a device such as /dev/null) and a corrupt or
truncated gzip file are named as such, never read as an empty corpus, waited on, or reported as a bare `EOFError`.

It also holds the two things every command line shares about files: `UsageError`, the project's one class for an
input the user can fix (printed as one `error: ...` line with exit status 2), and `atomic_write` (with
`atomic_write_text`), so that a write that fails half-way never leaves a truncated file where the previous good one
was.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "BOM",
    "TEXT_ENCODING",
    "DataError",
    "TextDecodeError",
    "UsageError",
    "atomic_write",
    "atomic_write_text",
    "check_not_empty",
    "check_text_file",
    "find_invalid_utf8",
    "iter_text_files",
    "iter_text_lines",
    "open_binary",
    "open_text",
    "read_lines",
    "read_text",
    "starts_with_bom",
]


class UsageError(ValueError):
    """An input the user can fix (a flag, a value, a file, an output folder): the message says what, where and what
    to do. Every command line prints it as one line, `error: MESSAGE`, and exits with status 2."""


class DataError(UsageError):
    """Bad input data. The message names the file, and the line (`file:line`) when there is one."""


class TextDecodeError(DataError):
    """A text file is not valid UTF-8; the message names `file:line`, and `line`/`column` say where."""

    def __init__(self, path: str | os.PathLike, line: int, raw: bytes, error: UnicodeDecodeError) -> None:
        self.line, self.column = line, error.start + 1
        byte = raw[error.start : error.start + 1]
        super().__init__(f"{path}:{line}: invalid UTF-8 (byte {byte!r} at column {self.column})")


def iter_text_files(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """Expand files and folders (recursively, sorted, hidden files skipped) into a list of files.

    Raises `FileNotFoundError` naming the first path that does not exist, and `UsageError` when a
    folder holds no file, so that a typo never yields an empty corpus.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f
                for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            if not found:
                raise UsageError(f"{p}: the folder holds no text file; give a folder of .txt or .txt.gz files")
            files.extend(found)
        else:
            check_text_file(p)
            files.append(p)
    return files


# What a path that exists but is not a regular file is, in words.
_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_text_file(path: str | os.PathLike) -> None:
    """Refuse, before opening it, a path that is not a regular file: `FileNotFoundError` for a missing one (a
    dangling symbolic link says where it points), `DataError` for a folder, a named pipe (reading it would wait
    forever) or a device such as /dev/null (it reads as an empty file)."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise FileNotFoundError(
                f"{path}: a symbolic link to {os.readlink(path)}, which does not exist; fix the link or give the file"
            ) from None
        raise FileNotFoundError(f"{path}: no such file or folder") from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{path} is a folder; give a text file")
    kind = next((name for test, name in _SPECIAL_FILES if test(mode)), None)
    if kind is not None:
        raise DataError(f"{path} is {kind}, not a text file; give a regular file")


@contextlib.contextmanager
def _gzip_errors(path: str | os.PathLike) -> Iterator[None]:
    """A corrupt or truncated gzip file as a `DataError` naming it (gzip says `EOFError` or `BadGzipFile`, no file)."""
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise DataError(
            f"{path}: corrupt or truncated gzip file ({err or type(err).__name__}); download or compress it again"
        ) from None


# The encoding of every text file read here: UTF-8, with one byte order mark at the very start of the file dropped, as
# Python's "utf-8-sig" codec does (a U+FEFF elsewhere stays). `load_text_corpus` drops it itself: `starts_with_bom`.
TEXT_ENCODING = "utf-8-sig"
BOM = "\ufeff"
_BOM = BOM.encode()


def open_binary(path: str | os.PathLike):
    """Open a plain or gzip file for binary reading."""
    # Decide on the magic number rather than on the suffix, so that a mislabeled file still reads.
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def starts_with_bom(path: str | os.PathLike) -> bool:
    """Whether a plain or gzip file starts with a UTF-8 byte order mark."""
    with _gzip_errors(path), open_binary(path) as f:
        return f.read(len(_BOM)) == _BOM


def open_text(path: str | os.PathLike) -> io.TextIOWrapper:
    """Open a plain or gzip file as text, the way every reader here does: `TEXT_ENCODING`, universal newlines (each
    line break read as `\\n`). Reading it may raise `UnicodeDecodeError`; `_decode_errors` names the file and line."""
    return io.TextIOWrapper(open_binary(path), encoding=TEXT_ENCODING, newline=None)


def _raw_lines(path: str | os.PathLike) -> Iterator[bytes]:
    """The lines of a plain or gzip file as bytes, cut as `open_text` cuts them (at `\\n`, `\\r\\n` and a lone
    `\\r`, the byte order mark dropped), without their line breaks. Neither 0x0A nor 0x0D occurs inside a UTF-8
    multi-byte character, so each line decodes on its own."""
    with _gzip_errors(path), open_binary(path) as f:
        for index, raw in enumerate(f):
            if index == 0:
                raw = raw.removeprefix(_BOM)
            end = 2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0
            yield from raw[: len(raw) - end].split(b"\r")


def _find_decode_error(path: str | os.PathLike) -> TextDecodeError | None:
    """The `TextDecodeError` naming the first line of a plain or gzip file that is not valid UTF-8, or None."""
    for lineno, raw in enumerate(_raw_lines(path), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as err:
            return TextDecodeError(path, lineno, raw, err)
    return None


@contextlib.contextmanager
def _decode_errors(path: str | os.PathLike) -> Iterator[None]:
    """A `UnicodeDecodeError` while reading `path` as a `TextDecodeError` naming its line (the text decoder reads
    in chunks and knows no line: the file is read again as bytes, line by line, to find it)."""
    try:
        yield
    except UnicodeDecodeError:
        error = _find_decode_error(path)
        if error is None:
            raise
        raise error from None


def iter_text_lines(paths: str | os.PathLike | Iterable[str | os.PathLike], skip_empty: bool = True) -> Iterator[str]:
    """Yield the lines (without the line break) of plain or gzip text files, or folders of them, read as
    `open_text` reads them.

    Invalid UTF-8 raises `TextDecodeError` naming `file:line`.
    """
    for path in iter_text_files(paths):
        with _gzip_errors(path), _decode_errors(path), open_text(path) as f:
            for line in f:
                line = line.removesuffix("\n")
                if skip_empty and not line.strip():
                    continue
                yield line


def read_text(path: str | os.PathLike) -> str:
    """The whole of a plain or gzip text file, read as `open_text` reads it (line breaks as `\\n`, no byte order
    mark). Invalid UTF-8 raises `TextDecodeError` naming `file:line`."""
    check_text_file(path)
    with _gzip_errors(path), _decode_errors(path), open_text(path) as f:
        return f.read()


def find_invalid_utf8(path: str | os.PathLike) -> tuple[int, int] | None:
    """Return `(line, column)` (1-based) of the first invalid UTF-8 byte of a plain or gzip file, or None."""
    error = _find_decode_error(path)
    return None if error is None else (error.line, error.column)


def check_not_empty(path: str | os.PathLike) -> None:
    """Raise `DataError` when a plain or gzip file holds nothing but white space and perhaps a byte order mark (or is
    no regular file)."""
    check_text_file(path)
    with _gzip_errors(path), open_binary(path) as f:
        for index, chunk in enumerate(iter(lambda: f.read(1 << 20), b"")):
            if (chunk.removeprefix(_BOM) if index == 0 else chunk).strip():
                return
    raise DataError(f"{path}: file is empty")


def read_lines(path: str | os.PathLike) -> list[str]:
    """Read a UTF-8 text file as a list of lines, without line breaks (a final line break ends the last line).

    Raises `FileNotFoundError` when the file is missing, and `DataError` when it is empty or when a line
    is not valid UTF-8 (the message names `file:line`).
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"{path}: file not found")
    check_not_empty(path)
    return list(iter_text_lines(path, skip_empty=False))


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """Write `path` in one step: yields a temporary path in the same folder to write (`open`, `savefig`,
    `torch.save`...), then, when the block ends without an error, flushes it to the disk and moves it over `path`
    with `os.replace`. Readers see the old file or the new one, never half of one; a failed write leaves the old
    file and no temporary one. A symbolic link at `path` is replaced, never written through. Creates the parent
    folders, and removes those it created again when the write fails (nothing left behind)."""
    path = Path(path)
    created = [folder for folder in path.parents if not os.path.lexists(folder)]
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + path.suffix, dir=path.parent)
    except OSError as error:
        _remove_empty(created)
        raise OSError(error.errno, error.strerror, str(path)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as error:  # a full disk, say: named by the file the user asked for, not the temporary one
        Path(tmp).unlink(missing_ok=True)
        _remove_empty(created)
        if error.errno is None or error.filename not in (None, tmp):  # a flush on close names no file
            raise
        raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        _remove_empty(created)
        raise


def _remove_empty(folders: list[Path]) -> None:
    """Remove `folders` (deepest first) where they are empty: the ones a failed write made."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write `text` (UTF-8) to `path` through `atomic_write`: the old file stays until the new one is complete."""
    with atomic_write(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return Path(path)
