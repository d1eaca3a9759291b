"""The curves of a run (`loss.png`, `accuracy.png`) from a `Trainer` log history, redrawn while it trains."""

from __future__ import annotations

import os
from pathlib import Path

from transformers import TrainerCallback

from ..textio import atomic_write

__all__ = ["PlotCallback", "plot_curves"]


def _series(log_history: list[dict], key: str, x_key: str = "step") -> tuple[list[float], list[float]]:
    points = [(entry[x_key], entry[key]) for entry in log_history if key in entry and x_key in entry]
    return [p[0] for p in points], [p[1] for p in points]


def _draw(log_history: list[dict], curves: dict[str, str], x_key: str, path: Path, mark_all: bool, **axes) -> Path:
    """One figure of the `curves` (log key -> label) against `x_key`; points marked when few, or always."""
    # A figure of its own, not pyplot's: no display needed, and the process's backend is left alone (a notebook's
    # figures still show after a run).
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for key, label in curves.items():
        xs, ys = _series(log_history, key, x_key)
        if xs:
            ax.plot(xs, ys, marker="o" if mark_all or len(xs) < 30 else None, label=label)
    ax.set(xlabel=x_key, **axes)
    if ax.lines:
        ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_write(path) as staging:  # a plot being redrawn is never seen half-written
        fig.savefig(staging, dpi=100, format="png")
    return path


def plot_curves(log_history: list[dict], output_dir: str | os.PathLike) -> list[Path]:
    """Write `loss.png` (train and eval loss per step) and, when accuracy was evaluated, `accuracy.png`
    (eval accuracy and F1 per epoch) from a `Trainer` log history. Returns the written paths."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    losses = {"loss": "train loss", "eval_loss": "eval loss"}
    written = [_draw(log_history, losses, "step", output_dir / "loss.png", False, ylabel="cross-entropy loss")]
    if any("eval_accuracy" in entry for entry in log_history):
        scores = {"eval_accuracy": "validation accuracy", "eval_f1": "validation F1"}
        written.append(_draw(log_history, scores, "epoch", output_dir / "accuracy.png", True, ylim=(0, 1)))
    return written


class PlotCallback(TrainerCallback):
    """Redraw the curves after each evaluation and at the end of training (main process only), so that
    a long run can be watched and an interrupted one still leaves its plots."""

    def on_evaluate(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            plot_curves(state.log_history, args.output_dir)

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            plot_curves(state.log_history, args.output_dir)
