"""Writes that fail whole, never half-way:

- `staged_save(folder)`: one save (a library's `save_pretrained`) into a staging folder; only once it has finished is
  each file moved over its old version (`os.replace`), so that a failed save leaves the old model or tokenizer whole
  (`textio.atomic_write` does the same for one file);
- `restoring_on_failure(folder)`: around several writes (the end of a run), the folder's earlier files wait aside;
  if the block fails, what it wrote goes and the folder is as it was;
- `removing_what_fails(folders, files)`: around a command's writes of several files, what the block added goes if it
  fails (a file it replaced stays replaced)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from fnmatch import fnmatch
from pathlib import Path

from .errors import machine_errno

__all__ = ["restoring_on_failure", "removing_what_fails", "staged_save"]

STAGING_PREFIX = ".staging-"


def _move_files(staging: Path, folder: Path) -> None:
    """Each file of `staging` over its namesake in `folder` (sub-folders merged the same way)."""
    for source in sorted(staging.iterdir()):
        target = folder / source.name
        if source.is_dir() and not source.is_symlink():
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                target.unlink()
            target.mkdir(exist_ok=True)
            _move_files(source, target)
        else:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(source, target)


# torch.save's C++ writer on a full disk: no errno, only these words.
_TORCH_WRITE_ERRORS = ("iostream error", "PytorchStreamWriter", "unexpected pos", "file write failed")


def _full_disk(error: BaseException, folder: Path) -> int | None:
    """ENOSPC for torch.save's write error where the disk of `folder` is (nearly) full; None otherwise."""
    if not isinstance(error, RuntimeError) or not any(words in str(error) for words in _TORCH_WRITE_ERRORS):
        return None
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return None
    return errno.ENOSPC if free < 1 << 20 else None


@contextlib.contextmanager
def staged_save(folder: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty staging folder inside `folder` (created if needed; same disk, so `os.replace` is one step) to
    save into; when the block ends without an error, its files replace their namesakes in `folder`, file by file,
    each complete. On an error the staging folder is removed and `folder` is as it was (a folder this call made is
    removed again). A link in `folder` is replaced by the new file, never written through."""
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    try:
        yield staging
        for path in staging.rglob("*"):
            if path.is_file() and not path.is_symlink():
                with open(path, "rb") as f:
                    os.fsync(f.fileno())
        _move_files(staging, folder)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(folder.iterdir()):  # a failed save leaves no empty folder either
            folder.rmdir()
        code = machine_errno(error) or _full_disk(error, folder)
        if code is not None and not isinstance(error, OSError):  # a library's "(os error 28)": the disk, named
            raise OSError(code, os.strerror(code), str(folder)) from error
        raise
    shutil.rmtree(staging, ignore_errors=True)


EARLIER_PREFIX = ".earlier-"


def _movable(path: Path) -> bool:
    # The hidden staging folders and the checkpoints (a resumed run's own) stay where they are.
    return not path.name.startswith(".") and not (path.name.startswith("checkpoint-") and path.is_dir())


@contextlib.contextmanager
def restoring_on_failure(folder: str | os.PathLike, discard: tuple[str, ...] = ()) -> Iterator[None]:
    """Around the writes that end a run in `folder`: the earlier files (its top level, but the checkpoints) wait aside
    in a hidden folder on the same disk (a rename: no space needed). If the block fails (a full disk half-way), what
    it wrote is removed and the earlier files come back, the folder as it was; if it ends well, the earlier files it
    did not replace come back, but for those `discard` matches (names or `fnmatch` patterns: an earlier run's files
    the new one must not leave)."""
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=EARLIER_PREFIX, dir=folder))
    earlier = [path for path in sorted(folder.iterdir()) if path != aside and _movable(path)]
    try:
        for path in earlier:
            os.rename(path, aside / path.name)
        yield
    except BaseException as error:
        for path in folder.iterdir():
            if path != aside and _movable(path):
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        for path in aside.iterdir():
            os.rename(path, folder / path.name)
        aside.rmdir()
        if created and not any(folder.iterdir()):
            folder.rmdir()
        if isinstance(error, OSError) and error.errno is not None and error.filename is None:  # a flush on close
            raise OSError(error.errno, error.strerror, str(folder)) from error
        raise
    for path in aside.iterdir():
        if not any(fnmatch(path.name, pattern) for pattern in discard) and not os.path.lexists(folder / path.name):
            os.rename(path, folder / path.name)
    shutil.rmtree(aside)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


@contextlib.contextmanager
def removing_what_fails(
    folders: Iterable[str | os.PathLike | None] = (), files: Iterable[str | os.PathLike | None] = ()
) -> Iterator[None]:
    """Around a command's writes of several files (each in one step): if the block fails half-way (a full disk at
    the second file), what it added is removed: the new entries of `folders`, the `files` that were not there, and
    the folders made for them, so that a failed command leaves nothing new behind. A file it replaced stays
    replaced (`--overwrite_output_dir` asked for it)."""
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
        for path in new_files:
            _remove(path)
        for folder in sorted(set(made), key=lambda path: len(path.parts), reverse=True):
            _remove(folder)  # deepest first; a folder made for the writes goes with what is in it
        raise
