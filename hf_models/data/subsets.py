"""A label budget: a class-balanced draw of the training examples, the one draw every reader of a budget shares
(`recipes/finetune_sentiment.py --label_budget`, `benchmarks/tfidf_baseline.py --label_budget`), so that a
classifier and its reference line learn from the very same reviews."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..textio import UsageError

__all__ = ["balanced_subset"]


def balanced_subset(labels: Sequence[int], size: int, seed: int) -> list[int]:
    """The indices of `size` examples, `size / k` of each of the k labels present, drawn with `seed`, in the
    dataset's order (so that a budget of every example is the dataset itself, in its own order).

    The draws are nested: each label's examples are shuffled once by `seed`, and a budget takes the first
    `size / k` of each, so that for one seed the draw of a budget holds the draws of every smaller one (a curve over
    budgets adds reviews, it never swaps them). The same labels, size and seed give the same draw on any machine."""
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if not len(classes):
        raise UsageError(f"--label_budget {size}: the training set has no labelled example")
    if size < len(classes):
        raise UsageError(f"--label_budget {size}: give at least {len(classes)} examples, one of each label")
    if size % len(classes):
        raise UsageError(f"--label_budget {size}: give a multiple of {len(classes)}, the same number of each label")
    per_class = size // len(classes)
    rng = np.random.default_rng(seed)
    chosen = []
    for label in classes:
        members = np.flatnonzero(labels == label)
        if per_class > len(members):
            raise UsageError(
                f"--label_budget {size}: {per_class} examples of label {label} asked, the data have {len(members)}"
            )
        chosen.append(rng.permutation(members)[:per_class])
    return sorted(int(i) for i in np.concatenate(chosen))
