"""The plateau check of a pretraining run: its final loss against the unigram entropy of its data."""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from accelerate import PartialState

__all__ = ["PLATEAU_KEYS", "check_plateau", "unigram_entropy"]

# A pretraining loss above this share of the data's unigram entropy means the model learned little more than
# token frequencies: a backbone that finetuning cannot profit from.
PLATEAU_RATIO = 0.9
# The figures `check_plateau` adds to a run's metrics (kept in the run record's training metrics).
PLATEAU_KEYS = ("unigram_entropy", "loss_over_unigram_entropy", "plateau")

logger = logging.getLogger(__name__)


def unigram_entropy(dataset, vocab_size: int, column: str = "input_ids") -> float:
    """Entropy, in nats, of the token frequencies of `dataset[column]`: the cross-entropy of the best model
    that ignores context. A language model's loss should end well below it."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for batch in dataset.iter(batch_size=1000):
        ids = np.fromiter((t for row in batch[column] for t in row), dtype=np.int64)
        counts += np.bincount(ids[(ids >= 0) & (ids < vocab_size)], minlength=vocab_size)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def check_plateau(loss: float | None, entropy: float, ratio: float = PLATEAU_RATIO) -> dict[str, Any]:
    """Compare a pretraining run's final loss with the unigram entropy of its data; warn (on the main process) when
    the run ended near it. Returns the figures for the run's report."""
    if loss is None or not math.isfinite(loss):
        return {"unigram_entropy": round(entropy, 4)}
    share = loss / entropy
    figures = {"unigram_entropy": round(entropy, 4), "loss_over_unigram_entropy": round(share, 4)}
    figures["plateau"] = plateau = share > ratio
    # Every process of a distributed run computes the figures; the main process alone says them, once per run.
    if not PartialState().is_main_process:
        return figures
    if plateau:
        logger.warning(
            f"PLATEAU: the final loss {loss:.3f} is {share:.0%} of the unigram entropy of the data ({entropy:.3f} "
            f"nats): the model learned little beyond token frequencies. Finetuning from it is unlikely to beat "
            "training from scratch; train longer, or lower the learning rate and lengthen the warm-up."
        )
    else:
        logger.info(f"final loss {loss:.3f} = {share:.0%} of the data's unigram entropy ({entropy:.3f} nats)")
    return figures
