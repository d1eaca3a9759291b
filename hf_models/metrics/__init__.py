"""Local `evaluate` metric modules, loaded by path (the Hub is never contacted).

Each sub-folder `NAME/NAME.py` defines one `evaluate.Metric`; load it with `hf_models.metrics.load_metric("NAME")`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["METRICS_DIR", "load_metric"]

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
