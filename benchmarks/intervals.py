"""95 % intervals of the benchmark's accuracies and of the differences between two rows, from the runs' scored
examples (`examples_<split>.jsonl`, written by the recipes and benchmarks/tfidf_baseline.py through
`hf_models.metrics.write_scored_examples`).

- One run: Wilson's score interval of its proportion correct (`scipy.stats.binomtest`).
- A row averaged over its finetuning seeds (every seed scored on the same examples): a two-way bootstrap
  (`scipy.stats.bootstrap` resampling the seeds and, independently, the examples: Owen's pigeonhole bootstrap for
  a seeds × examples design), percentile interval; the row's accuracy is the mean of the whole seeds × examples
  table of right and wrong answers.
- A paired difference of two rows scored on the same examples (and, with seeds, the same seeds: a seed's draw of
  training labels and data order is the same in both rows): the same bootstrap, each resample of examples (and
  seeds) taken by both rows at once; with one run a row, the examples alone are resampled.
The two-way bootstrap counts the seeds' and the examples' spread, and their interaction more than once: it is
conservative (Owen 2007, "The pigeonhole bootstrap"); with three seeds it sees few seed draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from hf_models.metrics import read_scored_examples

CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 0  # the bootstrap's own random stream: a rerun of write_results on the same runs writes the same intervals
WILSON = "Wilson score interval over the examples (scipy.stats.binomtest)"
TWO_WAY = "bootstrap resampling seeds and examples (scipy.stats.bootstrap, percentile, 9,999 resamples)"
PAIRED = "paired bootstrap over the same examples (scipy.stats.bootstrap, percentile, 9,999 resamples)"
PAIRED_SEEDS = (
    "paired bootstrap resampling the same seeds and the same examples (scipy.stats.bootstrap, percentile, "
    "9,999 resamples)"
)


class ExamplesMismatch(SystemExit):
    """Two files of scored examples that are not the same examples: the message names them."""


def _correct(prediction: object, reference: object) -> bool:
    """Exact match, as the project's metrics score it (text compared without its outer spaces)."""
    if isinstance(prediction, str) or isinstance(reference, str):
        return str(prediction or "").strip() == str(reference or "").strip()
    return prediction == reference


def read_correct(path: str | Path) -> tuple[np.ndarray, list]:
    """A run's scored examples as (right or wrong per example, the references in order)."""
    examples = read_scored_examples(path)
    if [example["index"] for example in examples] != list(range(len(examples))):
        raise ExamplesMismatch(f"{path}: the examples are not numbered 0, 1, 2, ... in order")
    correct = np.array([_correct(e["prediction"], e["reference"]) for e in examples], dtype=float)
    return correct, [example["reference"] for example in examples]


def correct_table(paths: Sequence[str | Path]) -> np.ndarray:
    """Right (1) or wrong (0), seeds × examples, of one row's runs: each run must have scored the same examples
    (the same references in the same order), else an error naming the two files."""
    rows, first = [], None
    for path in paths:
        correct, references = read_correct(path)
        if first is None:
            first = (path, references)
        elif references != first[1]:
            raise ExamplesMismatch(f"{path} and {first[0]} did not score the same examples (their references differ)")
        rows.append(correct)
    if not rows:
        raise ValueError("no scored examples")
    return np.vstack(rows)


def _bootstrap(table: np.ndarray) -> list[float]:
    """The percentile interval of the mean of `table` (seeds × examples) under resampling of the examples and, with
    more than one seed, of the seeds (the resampled indices drawn by scipy, the mean taken over both at once)."""
    seeds, examples = table.shape

    def mean(*indices: np.ndarray, axis: int = -1) -> np.ndarray:  # vectorized: each (resamples, its length)
        seed, example = (np.zeros((len(indices[0]), 1), dtype=int), *indices) if seeds == 1 else indices
        return table[seed[:, :, None], example[:, None, :]].mean(axis=(1, 2))

    # scipy resamples a sample of two or more: one seed stays as it is
    data = (np.arange(examples),) if seeds == 1 else (np.arange(seeds), np.arange(examples))
    result = stats.bootstrap(
        data,
        mean,
        paired=False,
        vectorized=True,
        batch=max(1, 2_000_000 // (seeds * examples)),  # a few tens of MB at a time
        n_resamples=RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(SEED),
    )
    interval = result.confidence_interval
    return [round(float(interval.low), 4), round(float(interval.high), 4)]


def accuracy_interval(table: np.ndarray) -> dict:
    """`n` (the examples scored, each seed on the same ones), `ci95` and its method, of a row's accuracy: the mean
    of `table` (seeds × examples, 1 where right)."""
    seeds, examples = table.shape
    if seeds == 1:
        correct = int(table.sum())
        interval = stats.binomtest(correct, examples).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
        ci95, method = [round(float(interval.low), 4), round(float(interval.high), 4)], WILSON
    else:
        ci95 = _bootstrap(table)
        method = TWO_WAY
    return {"n": examples, "seeds": seeds, "ci95": ci95, "ci_method": method}


def paired_difference(first: np.ndarray, second: np.ndarray) -> dict:
    """The difference of two rows' accuracies (first − second), its paired 95 % interval, `n` and the method: both
    tables (seeds × examples) must be the same examples and seeds."""
    if first.shape != second.shape:
        raise ExamplesMismatch(
            f"a paired comparison needs the same seeds and examples: {first.shape[0]} × {first.shape[1]} against "
            f"{second.shape[0]} × {second.shape[1]} (seeds × examples)"
        )
    seeds, examples = first.shape
    difference = first - second
    ci95 = _bootstrap(difference)
    return {
        "diff": round(float(difference.mean()), 4),
        "ci95": ci95,
        "n": examples,
        "seeds": seeds,
        "method": PAIRED if seeds == 1 else PAIRED_SEEDS,
    }


def holds_zero(interval: Sequence[float]) -> bool:
    """Whether a difference's interval holds zero: then the two rows show no measurable difference."""
    return interval[0] <= 0 <= interval[1]
