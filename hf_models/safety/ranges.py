"""Numeric flags checked where they are parsed, for every command line, so that a learning rate of NaN, a batch size
of 0 or a probability of 1.5 is one line naming the flag, before any work (not a `ZeroDivisionError` or a
`KeyError: 'eval_loss'` after the data and the model are loaded).

A flag's range sits beside its definition, so that removing the flag removes its range: in a dataclass field's
metadata (`field(metadata={"help": ..., "range": POSITIVE})`), or, for an argparse script or a class of another
library (`TrainingArguments`), in a `ranges` mapping beside the flags, whose every name must be a flag. The same
check refuses a path flag given as an empty string."""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..textio import UsageError


@dataclass(frozen=True)
class Range:
    """The values a numeric flag takes: from `low` to `high` (None: no bound), each end in or out."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __str__(self) -> str:
        if self.high is None:
            return f"a number {'>' if self.low_open else '>='} {_number(self.low)}"
        if self.low is None:
            return f"a number {'<' if self.high_open else '<='} {_number(self.high)}"
        low, high = _number(self.low), _number(self.high)
        return f"a number in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


POSITIVE = Range(0, low_open=True)  # counts and sizes: 1 or more (a step interval may be a float ratio)
NON_NEGATIVE = Range(0)
SHARE = Range(0, 1)  # a probability or a fraction
KEPT_SHARE = Range(0, 1, high_open=True)  # a share dropped or smoothed away: 1 keeps nothing to learn from
PERCENT = Range(0, 100, high_open=True)  # a share held out: 100 would leave nothing to train on
SEED = Range(0, 2**32 - 1)  # numpy's seeds
TOKEN_ID_LIMIT = 2**31  # tokenizers' ids and counts are 32-bit
RANGE_KEY = "range"  # a dataclass field's metadata key for its Range


# Flags that name a file or a folder, by the end of their name: an empty string there is never meant.
PATH_SUFFIXES = ("_dir", "_file", "_files", "_path", "_name_or_path", "_config", "_vocabulary")


def _init_fields(arguments: Any) -> dict[str, Any]:
    return {spec.name: getattr(arguments, spec.name) for spec in dataclasses.fields(arguments) if spec.init}


def field_ranges(arguments: Any) -> dict[str, Range]:
    """The ranges written in the metadata of the fields of a dataclass (an instance or the class); {} otherwise."""
    fields = dataclasses.fields(arguments) if dataclasses.is_dataclass(arguments) else ()
    return {spec.name: spec.metadata[RANGE_KEY] for spec in fields if RANGE_KEY in spec.metadata}


def check_flag_ranges(*arguments: Any, ranges: Mapping[str, Range] | None = None) -> None:
    """Refuse, as one-line `UsageError`s, in the parsed `arguments` (dataclasses, argparse namespaces or dicts): a
    NaN or infinite float flag, a value out of its range, and a path flag (`--output_dir ""`, a `--train_files`
    entry) given as an empty string, which would silently mean the current folder, or nothing. A dataclass's ranges
    are its fields' metadata; `ranges` adds those of flags defined elsewhere (an argparse script's,
    `TrainingArguments`'): a name there that no argument has is a bug (a removed flag's range). None: not given."""
    values = [
        vars(a) if isinstance(a, argparse.Namespace) else a if isinstance(a, Mapping) else _init_fields(a)
        for a in arguments
    ]
    unknown = set(ranges or {}) - {name for names in values for name in names}
    if unknown:
        raise ValueError(f"ranges of flags that these arguments do not have: {sorted(unknown)}")
    for argument, named in zip(arguments, values, strict=True):
        allowed_by_name = {**(field_ranges(argument) if dataclasses.is_dataclass(argument) else {}), **(ranges or {})}
        for name, value in named.items():
            items = value if isinstance(value, list | tuple) else [value]
            if name.endswith(PATH_SUFFIXES) and any(isinstance(item, str) and not item.strip() for item in items):
                raise UsageError(f"--{name} is empty: give a path")
            if value is None or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            allowed = allowed_by_name.get(name)
            if isinstance(value, float) and not math.isfinite(value):
                raise UsageError(f"--{name} {value}: give a finite number" + (f", {allowed}" if allowed else ""))
            if allowed is None:
                continue
            above = allowed.low is None or (value > allowed.low if allowed.low_open else value >= allowed.low)
            below = allowed.high is None or (value < allowed.high if allowed.high_open else value <= allowed.high)
            if not (above and below):
                raise UsageError(f"--{name} {_number(value)}: give {allowed}")
