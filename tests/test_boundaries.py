"""Every numeric range, both sides of each boundary: the value at the boundary and the value just beyond it. A
boundary that makes a run degenerate (nothing masked, nothing drawn, nothing kept, nothing measured) is refused;
the first value past it is accepted. The table is written here, by hand, from what each flag means, and each row
is checked against the range where the flag is defined (its dataclass field's metadata, `TRAINER_RANGES`, a
script's table), so that a range opened at the wrong end there fails here."""

from __future__ import annotations

import math

import prepare_data
import pytest
from grid import training_steps

from hf_models.data import balanced_subset
from hf_models.safety import check_flag_ranges
from hf_models.safety.ranges import field_ranges
from hf_models.tasks.birthplace import BirthplaceArguments
from hf_models.tasks.pretraining import DataTrainingArguments
from hf_models.tasks.sentiment import SentimentArguments
from hf_models.textio import UsageError
from hf_models.training.arguments import TRAINER_RANGES

# Where each command line keeps its flags' ranges.
RANGES = {
    "trainer": TRAINER_RANGES,
    "pretrain": field_ranges(DataTrainingArguments),
    "sentiment": field_ranges(SentimentArguments),
    "birthplace": field_ranges(BirthplaceArguments),
    "prepare_data": prepare_data.FLAG_RANGES,
}
TINY = 1e-9
# (where, flag, value, accepted): for each boundary, the value at it and the value just beyond it, on both sides.
BOUNDARIES = [
    # nothing masked: no loss to learn from
    ("pretrain", "mlm_probability", 0.0, False),
    ("pretrain", "mlm_probability", TINY, True),
    ("pretrain", "mlm_probability", 1.0, True),
    ("pretrain", "mlm_probability", 1.0 + 1e-6, False),
    # a share held out: 100 % leaves nothing to train on, 0 % holds out nothing (no validation: allowed)
    ("pretrain", "validation_split_percentage", 100.0, False),
    ("pretrain", "validation_split_percentage", 100.0 - 1e-6, True),
    ("pretrain", "validation_split_percentage", 0.0, True),
    ("pretrain", "validation_split_percentage", -1e-6, False),
    # the birthplace tuning split: none held out, or every question held out, is no split
    ("prepare_data", "tune_fraction", 0.0, False),
    ("prepare_data", "tune_fraction", TINY, True),
    ("prepare_data", "tune_fraction", 1.0, False),
    ("prepare_data", "tune_fraction", 1.0 - 1e-6, True),
    # a dropout of 1 before the head keeps nothing: the head trains on zeros
    ("sentiment", "classifier_dropout", 1.0, False),
    ("sentiment", "classifier_dropout", 1.0 - 1e-6, True),
    ("sentiment", "classifier_dropout", 0.0, True),
    ("sentiment", "classifier_dropout", -1e-6, False),
    # -1 trains by epochs; below it, no length
    ("trainer", "max_steps", -1, True),
    ("trainer", "max_steps", -2, False),
    # label smoothing of 1: every target is uniform, the labels say nothing
    ("trainer", "label_smoothing_factor", 1.0, False),
    ("trainer", "label_smoothing_factor", 1.0 - 1e-6, True),
    ("trainer", "label_smoothing_factor", 0.0, True),
    # Adam's betas: 1 never forgets
    ("trainer", "adam_beta2", 1.0, False),
    ("trainer", "adam_beta2", 0.999, True),
    ("trainer", "adam_beta1", 0.0, True),
    # counts: none drawn, none kept, none scored
    ("pretrain", "max_train_samples", 0, False),
    ("pretrain", "max_train_samples", 1, True),
    ("pretrain", "max_eval_samples", 0, False),
    ("pretrain", "max_eval_samples", 1, True),
    ("birthplace", "max_predict_samples", 0, False),
    ("birthplace", "max_predict_samples", 1, True),
    ("sentiment", "max_predict_samples", 0, False),
    ("sentiment", "max_predict_samples", 1, True),
    ("trainer", "per_device_train_batch_size", 0, False),
    ("trainer", "per_device_train_batch_size", 1, True),
    ("pretrain", "block_size", 0, False),
    ("pretrain", "block_size", 1, True),
    ("birthplace", "max_new_tokens", 0, False),
    ("birthplace", "max_new_tokens", 1, True),
    ("sentiment", "linear_probe_folds", 1, False),
    ("sentiment", "linear_probe_folds", 2, True),
    # 0 is off; below is nothing
    ("birthplace", "recite_tokens", 0, True),
    ("birthplace", "recite_tokens", -1, False),
    ("trainer", "warmup_steps", 0, True),
    ("trainer", "warmup_steps", -1, False),
    # numpy's seeds, tokenizers' 32-bit ids
    ("trainer", "seed", 0, True),
    ("trainer", "seed", -1, False),
    ("trainer", "seed", 2**32 - 1, True),
    ("trainer", "seed", 2**32, False),
    ("birthplace", "tokenizer_vocab_size", 2**31 - 1, True),
    ("birthplace", "tokenizer_vocab_size", 2**31, False),
    ("birthplace", "tokenizer_vocab_size", 1, True),
    ("birthplace", "tokenizer_vocab_size", 0, False),
]


@pytest.mark.parametrize(
    ("where", "flag", "value", "accepted"), BOUNDARIES, ids=[f"{w}-{f}={v}" for w, f, v, _ in BOUNDARIES]
)
def test_each_boundary_both_ways(where: str, flag: str, value: float, accepted: bool) -> None:
    ranges = {flag: RANGES[where][flag]}  # a KeyError: the flag lost its range
    if accepted:
        check_flag_ranges({flag: value}, ranges=ranges)
    else:
        with pytest.raises(UsageError, match=f"^--{flag} "):
            check_flag_ranges({flag: value}, ranges=ranges)


def test_a_non_finite_float_is_refused_whatever_its_range() -> None:
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(UsageError, match="finite"):
            check_flag_ranges({"learning_rate": value}, ranges={"learning_rate": TRAINER_RANGES["learning_rate"]})
    check_flag_ranges({"learning_rate": 0.0, "unknown_flag": -5})  # a flag without a range: finite is enough


def test_the_label_budget_one_of_each_label_and_every_example_of_a_label() -> None:
    labels = [0, 1] * 5  # five of each
    assert balanced_subset(labels, 2, seed=0) and len(balanced_subset(labels, 2, seed=0)) == 2  # one of each
    for size in (0, 1):
        with pytest.raises(UsageError, match="at least 2"):
            balanced_subset(labels, size, seed=0)
    assert balanced_subset(labels, 10, seed=0) == list(range(10))  # every example: the data set, in its order
    with pytest.raises(UsageError, match="6 examples of label 0 asked, the data have 5"):
        balanced_subset(labels, 12, seed=0)
    with pytest.raises(UsageError, match="multiple of 2"):
        balanced_subset(labels, 3, seed=0)


def test_a_curve_points_steps_at_the_minimum_and_just_past_it() -> None:
    """5 epochs of batches of 10, at least 50 steps: 100 reviews are exactly the minimum, 101 (a last batch of one)
    are 55, 90 are 45 raised to the minimum."""
    assert training_steps(100, epochs=5, batch_size=10, min_steps=50) == 50
    assert training_steps(101, epochs=5, batch_size=10, min_steps=50) == 55
    assert training_steps(90, epochs=5, batch_size=10, min_steps=50) == 50
    assert training_steps(1600, epochs=4, batch_size=16, min_steps=50) == 400
