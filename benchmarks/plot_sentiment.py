#!/usr/bin/env python
r"""Draw the ALTeGraD lab's figure: validation accuracy per epoch of several sentiment runs on one plot.

    python benchmarks/plot_sentiment.py --runs scratch=runs/sentiment/scratch \
        pretrained=runs/sentiment/pretrained frozen=runs/sentiment/frozen --output sentiment_accuracy.png
    python benchmarks/plot_sentiment.py --bench_dir outputs/bench --profile cpu    # a profile's rows in a run

Each run folder is an `--output_dir` of `recipes/finetune_sentiment.py`; the curve is read from the run
record (`run_record.json`) the recipe saved there. Several folders for one label (`label=DIR1,DIR2,DIR3`, e.g.
one per finetuning seed) draw their mean, with a band of ± one standard deviation. Without `--runs`, the runs are
the rows of the profile (`benchmarks/profiles/<profile>.yaml`) under `--bench_dir`, drawn into its figures/ folder.
"""

import argparse
import sys
from pathlib import Path

import grid
import numpy as np

from hf_models.run_record import RECORD_FILE, read_record
from hf_models.safety import check_output_file, command_line
from hf_models.textio import UsageError, atomic_write
from hf_models.training import HelpFormatter


def accuracy_per_epoch(run_dir: str | Path) -> tuple[list[float], list[float]]:
    """(epochs, validation accuracies) from a run's record."""
    record = read_record(run_dir)
    if record is None:
        raise FileNotFoundError(f"{run_dir}: no {RECORD_FILE}; pass the --output_dir of recipes/finetune_sentiment.py")
    if record.task != "sentiment":  # another kind of run has no accuracy per epoch to draw
        raise UsageError(
            f"{run_dir} is a {record.task or 'task-less'} run, not a sentiment one: pass the --output_dir of "
            "recipes/finetune_sentiment.py"
        )
    return record.accuracy_per_epoch()


def plot_runs(
    runs: dict[str, str | Path | list[str | Path]], output: str | Path, title: str = "CLS-FR books sentiment"
) -> Path:
    """Plot validation accuracy per epoch for each `label -> run folder(s)` and save the PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for label, run_dirs in runs.items():
        curves = [accuracy_per_epoch(d) for d in ([run_dirs] if isinstance(run_dirs, str | Path) else run_dirs)]
        epochs = curves[0][0]
        accuracies = np.array([acc[: len(epochs)] for _, acc in curves])
        mean = accuracies.mean(axis=0)
        ax.plot(epochs, mean, marker="o", label=label if len(curves) == 1 else f"{label} (mean of {len(curves)})")
        if len(curves) > 1:
            std = accuracies.std(axis=0, ddof=1)
            ax.fill_between(epochs, mean - std, mean + std, alpha=0.2)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation accuracy")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.xaxis.get_major_locator().set_params(integer=True)  # epochs, not fractions of one
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize="small")  # beside the curves, never over them
    fig.tight_layout()
    output = Path(output)
    with atomic_write(output) as staging:
        fig.savefig(staging, dpi=100, format="png")
    plt.close(fig)
    return output


def main(args: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--runs", nargs="+", metavar="LABEL=DIR[,DIR...]", help="runs to draw, as label=folder(s)")
    parser.add_argument("--bench_dir", default="outputs/bench", help="without --runs: the run's folder (make's OUT)")
    parser.add_argument("--profile", choices=grid.names(), default="cpu", help="without --runs: the run's profile")
    parser.add_argument("--output", help="PNG file to write (default: BENCH_DIR/figures/sentiment_valid_accuracy.png)")
    parser.add_argument("--title", help="the figure's title (default: the data set, split and profile)")
    parsed = parser.parse_args(args)
    if not parsed.runs and not Path(parsed.bench_dir).is_dir():
        raise SystemExit(f"--bench_dir {parsed.bench_dir}: no such folder")
    parsed.output = parsed.output or f"{parsed.bench_dir}/figures/sentiment_valid_accuracy.png"
    title = parsed.title or f"CLS-FR books, validation ({parsed.profile} profile, mean ± std of seeds)"
    rows = grid.load(parsed.profile).rows["sentiment"]
    runs = {row.label: [Path(parsed.bench_dir) / run for run in row.runs] for row in rows}
    # A pipeline draws the rows finished so far (`sentiment` before `sentiment_lab` has run).
    unfinished = [label for label, dirs in runs.items() if not all((d / RECORD_FILE).is_file() for d in dirs)]
    if unfinished and not parsed.runs:
        print(f"Not drawn (no run record in {parsed.bench_dir} yet): {', '.join(unfinished)}")
        runs = {label: dirs for label, dirs in runs.items() if label not in unfinished}
        if not runs:
            raise SystemExit(f"no sentiment run of the {parsed.profile} profile has finished in {parsed.bench_dir}")
    if parsed.runs:
        runs = {}
        for item in parsed.runs:
            label, sep, run_dir = item.partition("=")
            if not sep:
                parser.error(f"expected LABEL=DIR, got {item!r}")
            runs[label] = run_dir.split(",")
    inputs = [("--runs", run_dir) for dirs in runs.values() for run_dir in ([dirs] if isinstance(dirs, str) else dirs)]
    check_output_file(parsed.output, inputs, "--output", inside=True)  # never over a run's own plots
    path = plot_runs(runs, parsed.output, title)
    print(f"Wrote {path}")
    return path


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
