"""Errors and warnings raised by the data loaders."""

from __future__ import annotations

import warnings

from ..textio import DataError

__all__ = ["DataError", "DataWarning", "warn_rows"]


class DataWarning(UserWarning):
    """Recovered or dropped input rows; one warning per file and kind, with a count and the line numbers. A command
    line prints it as one line (`safety.command_line`)."""

    one_line = True


def warn_rows(path: object, what: str, line_numbers: list[int], action: str) -> None:
    """Emit one counted warning for several rows of one file, instead of one warning per row."""
    if not line_numbers:
        return
    shown = ", ".join(map(str, line_numbers[:20])) + (", ..." if len(line_numbers) > 20 else "")
    warnings.warn(
        f"{path}: {len(line_numbers)} {what} ({action}); line(s) {shown}",
        DataWarning,
        stacklevel=3,
    )
