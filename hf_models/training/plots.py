"""The curves of a run (`loss.png`, `accuracy.png`) from a `Trainer` log history, redrawn while it trains."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from transformers import TrainerCallback

from ..textio import atomic_write

__all__ = ["PlotCallback", "plot_curves"]

PLOT_NAMES = ("loss.png", "accuracy.png")

logger = logging.getLogger(__name__)


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
    try:
        with atomic_write(path) as staging:  # a plot being redrawn is never seen half-written
            fig.savefig(staging, dpi=100, format="png")
    except OSError as error:  # Pillow's full disk names no file
        if error.filename is not None or error.errno is None:
            raise
        raise OSError(error.errno, error.strerror, str(path)) from error
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
    """Redraw the curves after each evaluation (main process only), so that a long run can be watched and an
    interrupted one still leaves its plots; the run's end draws them once more (`finish_run`). An earlier run's plots,
    in a folder the user lets this run replace, are left as they are until the new run has ended well; plots drawn
    into a new folder go again if the run fails at its end (`discard`)."""

    def __init__(self, output_dir: str | os.PathLike | None = None) -> None:
        # Built before the Trainer, which makes the output folder: whether this run made it.
        self.new_folder = output_dir is not None and not os.path.lexists(output_dir)
        self.live, self.drawn = True, set()

    def on_train_begin(self, args, state, control, **kwargs):
        folder = Path(args.output_dir)
        self.live = bool(args.resume_from_checkpoint) or not any((folder / n).exists() for n in PLOT_NAMES)

    def on_evaluate(self, args, state, control, **kwargs):
        if not (state.is_world_process_zero and self.live):
            return
        try:
            self.drawn.update(path.name for path in plot_curves(state.log_history, args.output_dir))
        except OSError as error:  # a plot to watch is not worth the run: the run's end draws it, or says why not
            logger.warning(f"the curves are not redrawn during this run: {error}")
            self.live = False
            self.discard(args.output_dir)

    def discard(self, output_dir: str | os.PathLike) -> None:
        """Remove the plots this run drew before a failure, unless the folder keeps checkpoints they go with."""
        folder = Path(output_dir)
        if not folder.is_dir() or any(folder.glob("checkpoint-*")):
            return
        for name in self.drawn:
            (folder / name).unlink(missing_ok=True)
        if self.new_folder and not any(folder.iterdir()):
            folder.rmdir()
