"""Local `evaluate` metric modules, loaded by path (the Hub is never contacted).

Each sub-folder `NAME/NAME.py` defines one `evaluate.Metric`; load it with `hf_models.metrics.load_metric("NAME")`.
A run's scored examples (`write_scored_examples`) keep each prediction beside its reference, so that an interval
or a paired comparison of two runs can be computed again from them (benchmarks/intervals.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["METRICS_DIR", "SCORED_EXAMPLES", "load_metric", "read_scored_examples", "write_scored_examples"]

METRICS_DIR = Path(__file__).resolve().parent


def load_metric(name: str, **kwargs: Any):
    """Load one of the package's own metrics (accuracy, f1, perplexity, exact_match) by absolute path.

    An absolute path never reaches the Hub, and never picks up a same-named folder in the working directory.
    """
    import evaluate

    path = METRICS_DIR / name
    if not (path / f"{name}.py").is_file():
        available = sorted(p.name for p in METRICS_DIR.iterdir() if (p / f"{p.name}.py").is_file())
        raise ValueError(f"unknown metric {name!r}; available: {available}")
    return evaluate.load(str(path), **kwargs)


# A run's scored examples, in its output folder: `examples_<split>.jsonl` (a baseline's: `examples_<split>_<name>`).
SCORED_EXAMPLES = "examples_{name}.jsonl"


def write_scored_examples(
    folder: str | os.PathLike, predictions: Sequence[Any], references: Sequence[Any], name: str = "validation"
) -> Path:
    """One line per scored example, in the split's order: its index, the prediction and the reference (a review's
    label, a question's place), as JSON lines in FOLDER/examples_<name>.jsonl. Returns the file's path."""
    from hf_models.textio import atomic_write_text

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    lines = (
        # A numpy or torch scalar is written as the Python number it holds.
        json.dumps({"index": index, "prediction": p, "reference": r}, ensure_ascii=False, default=lambda v: v.item())
        for index, (p, r) in enumerate(zip(predictions, references, strict=True))
    )
    return atomic_write_text(Path(folder) / SCORED_EXAMPLES.format(name=name), "".join(f"{line}\n" for line in lines))


def read_scored_examples(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The scored examples of `write_scored_examples`, in the split's order."""
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]
