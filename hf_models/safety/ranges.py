"""Numeric flags checked where they are parsed, for every command line: one table of ranges by flag name, applied to
`TrainingArguments`, the project's argument dataclasses and argparse's namespaces alike, so that a learning rate of
NaN, a batch size of 0 or a probability of 1.5 is one line naming the flag, before any work (not a
`ZeroDivisionError` or a `KeyError: 'eval_loss'` after the data and the model are loaded)."""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..textio import UsageError

__all__ = ["FLAG_RANGES", "Range", "check_flag_ranges", "check_paths_given"]


@dataclass(frozen=True)
class Range:
    """The values a numeric flag takes: from `low` to `high` (None: no bound), each end in or out."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value: float) -> bool:
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

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
PERCENT = Range(0, 100, high_open=True)  # a share held out: 100 would leave nothing to train on
SEED = Range(0, 2**32 - 1)  # numpy's seeds
TOKEN_ID_LIMIT = 2**31  # tokenizers' ids and counts are 32-bit

# By flag name; a name missing from a command's arguments is skipped. Every float flag must also be finite.
FLAG_RANGES: dict[str, Range] = {
    # TrainingArguments
    "learning_rate": NON_NEGATIVE,
    "weight_decay": NON_NEGATIVE,
    "max_grad_norm": NON_NEGATIVE,
    "adam_beta1": Range(0, 1, high_open=True),
    "adam_beta2": Range(0, 1, high_open=True),
    "adam_epsilon": NON_NEGATIVE,
    "label_smoothing_factor": SHARE,
    "num_train_epochs": NON_NEGATIVE,
    "warmup_steps": NON_NEGATIVE,
    "per_device_train_batch_size": POSITIVE,
    "per_device_eval_batch_size": POSITIVE,
    "gradient_accumulation_steps": POSITIVE,
    "eval_accumulation_steps": POSITIVE,
    "logging_steps": POSITIVE,
    "eval_steps": POSITIVE,
    "save_steps": POSITIVE,
    "save_total_limit": POSITIVE,
    "seed": SEED,
    "data_seed": SEED,
    "dataloader_num_workers": NON_NEGATIVE,
    # the project's dataclasses and scripts
    "max_train_samples": POSITIVE,
    "max_eval_samples": POSITIVE,
    "validation_split_percentage": PERCENT,
    "selection_split_percentage": PERCENT,
    "mlm_probability": Range(0, 1, low_open=True),  # nothing masked: no loss to learn from
    "block_size": POSITIVE,
    "max_seq_length": POSITIVE,
    "max_new_tokens": POSITIVE,
    "opening_tokens": POSITIVE,
    "generator_layers": POSITIVE,
    "preprocessing_num_workers": POSITIVE,
    "tokenizer_vocab_size": Range(1, TOKEN_ID_LIMIT, high_open=True),
    "vocab_size": Range(1, TOKEN_ID_LIMIT, high_open=True),
    "min_frequency": Range(0, 2**63 - 1),
    "model_max_length": POSITIVE,
    "max_chars": POSITIVE,
    "batch_size": POSITIVE,
    "dropout": SHARE,
    "classifier_dropout": SHARE,
    "counterfactual_qa": SHARE,
    "wise_ft_alpha": SHARE,
    "backbone_learning_rate": NON_NEGATIVE,
    "rtd_weight": NON_NEGATIVE,
    "auxiliary_lm_weight": NON_NEGATIVE,
    "decay_toward_start": NON_NEGATIVE,
    "keep_review_end": NON_NEGATIVE,
    "recite_tokens": NON_NEGATIVE,
    "linear_probe_folds": Range(2),
    # recipes/prepare_data.py
    "tune_fraction": Range(0, 1, low_open=True, high_open=True),
    "news_lines": NON_NEGATIVE,
    "novel_lines": NON_NEGATIVE,
}


def _values(arguments: Any) -> Mapping[str, Any]:
    if dataclasses.is_dataclass(arguments):
        return {spec.name: getattr(arguments, spec.name) for spec in dataclasses.fields(arguments) if spec.init}
    if isinstance(arguments, argparse.Namespace):
        return vars(arguments)
    return arguments


def check_flag_ranges(*arguments: Any, ranges: Mapping[str, Range] = FLAG_RANGES) -> None:
    """Refuse, as `UsageError('--flag value: give ...')`, a NaN or infinite float flag, or a value out of its
    `ranges` entry, in the parsed `arguments` (dataclasses, argparse namespaces or dicts). None means not given."""
    for values in map(_values, arguments):
        for name, value in values.items():
            if value is None or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            allowed = ranges.get(name)
            if isinstance(value, float) and not math.isfinite(value):
                raise UsageError(f"--{name} {value}: give a finite number" + (f", {allowed}" if allowed else ""))
            if allowed is not None and value not in allowed:
                raise UsageError(f"--{name} {_number(value)}: give {allowed}")


# Flags that name a file or a folder, by the end of their name: an empty string there is never meant.
PATH_SUFFIXES = ("_dir", "_file", "_files", "_path", "_name_or_path", "_config", "_vocabulary")


def check_paths_given(*arguments: Any) -> None:
    """Refuse a path flag (`--output_dir ""`, a `--train_files` entry...) given as an empty string: it would
    silently mean the current folder, or nothing."""
    for values in map(_values, arguments):
        for name, value in values.items():
            if not name.endswith(PATH_SUFFIXES):
                continue
            items = value if isinstance(value, list | tuple) else [value]
            if any(isinstance(item, str) and not item.strip() for item in items):
                raise UsageError(f"--{name} is empty: give a path")
