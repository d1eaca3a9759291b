"""Folders written in one step per file: a library's `save_pretrained` writes into a staging folder, and only once it
has finished is each file moved over its old version (`os.replace`), so that a failed or interrupted save leaves the
old model or tokenizer whole, never half of a new one (`textio.atomic_write` does the same for one file)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["saving_into"]

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


@contextlib.contextmanager
def saving_into(folder: str | os.PathLike) -> Iterator[Path]:
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
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(folder.iterdir()):  # a failed save leaves no empty folder either
            folder.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)
