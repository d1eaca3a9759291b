#!/usr/bin/env python
"""Draw the sentiment label-budget curve: validation accuracy against the number of training labels (log scale),
each row's mean over its draws with its band (its 95 % interval over the draws and the reviews, when the runs saved
their scored reviews; else the lowest to the highest draw), TF-IDF among them, and the TF-IDF test accuracies scored
outside the project as a reference line.

    python benchmarks/plot_label_curve.py --bench_dir outputs/bench --profile cpu   # a run's (its curve's last step)
    python benchmarks/plot_label_curve.py --from_results                           # from benchmarks/results.json

The points are the profile's curve rows (`benchmarks/profiles/<profile>.yaml`), read from the run folders under
BENCH_DIR as `benchmarks/write_results.py` reads them, or with `--from_results` from the profile's
`sentiment_label_curve` section of RESULTS. The reference line is RESULTS' `sentiment_test_acc.tfidf_label_curve`,
when there is one. The figure goes to BENCH_DIR/figures/ unless --output says otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import grid
from write_results import label_curve_of, read_timings

from hf_models.safety import check_output_file, command_line
from hf_models.training import HelpFormatter

REFERENCE_LABEL = "TF-IDF, test, scored outside"


def has_intervals(curve: dict) -> bool:
    """Whether every point of the curve has its 95 % interval (`ci95`): the bands are then the intervals."""
    return all("ci95" in point for points in curve["rows"].values() for point in points.values())


def band(points: dict, budgets: list[str]) -> tuple[list[float], list[float]]:
    """A row's band (percent): its 95 % interval at each budget, or without one the lowest to the highest draw."""
    if all("ci95" in points[n] for n in budgets):
        return [100 * points[n]["ci95"][0] for n in budgets], [100 * points[n]["ci95"][1] for n in budgets]
    draws = [[100 * value for value in points[n]["per_draw"].values()] for n in budgets]
    return [min(d) for d in draws], [max(d) for d in draws]


def plot_curve(
    curve: dict, reference: dict[str, float] | None, output: str | Path, title: str, profile: str = "cpu"
) -> Path:
    """Save the figure of `curve` (a `sentiment_label_curve` section) and the outside `reference` line
    ({budget: accuracy}); accuracies in percent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for row, points in curve["rows"].items():
        budgets = sorted(points, key=int)
        x = [int(n) for n in budgets]
        ax.plot(x, [100 * points[n]["mean"] for n in budgets], marker="o", label=grid.label(profile, row))
        ax.fill_between(x, *band(points, budgets), alpha=0.2)
    if reference:
        x = sorted(int(n) for n in reference)
        ax.plot(x, [100 * reference[str(n)] for n in x], "k--", marker="x", label=REFERENCE_LABEL)
    ax.set_xscale("log")
    ticks = sorted({int(n) for points in curve["rows"].values() for n in points})
    ax.set_xticks(ticks, [f"{n:,}" for n in ticks])
    ax.minorticks_off()
    ax.set_xlabel("training labels (balanced draws of the 1,600 reviews)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")  # the curves rise to the right: below them is free
    fig.tight_layout()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output


def main(args: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--bench_dir", default="outputs/bench", help="the run's folder (make bench's OUT)")
    parser.add_argument("--profile", choices=grid.names(), default="cpu", help="the run's profile")
    parser.add_argument("--from_results", action="store_true", help="read the points from RESULTS, not BENCH_DIR")
    parser.add_argument("--results", default="benchmarks/results.json", help="the reference line (and the points)")
    parser.add_argument("--output", default=None, help="default: BENCH_DIR/figures/sentiment_label_curve.png")
    parsed = parser.parse_args(args)
    suffix = grid.load(parsed.profile).suffix
    results_path = Path(parsed.results)
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else {}
    if parsed.from_results:
        if f"sentiment_label_curve{suffix}" not in results:
            raise SystemExit(f"{results_path} has no sentiment_label_curve{suffix} section")
        curve = results[f"sentiment_label_curve{suffix}"]
    else:
        bench = Path(parsed.bench_dir)
        if not bench.is_dir():
            raise SystemExit(f"--bench_dir {bench}: no such folder")
        curve = label_curve_of(bench, parsed.profile, read_timings(bench), "", "")
    reference = results.get("sentiment_test_acc", {}).get("tfidf_label_curve")
    shown = "band: 95 % interval" if has_intervals(curve) else "band from lowest to highest draw"
    title = f"CLS-FR books, validation accuracy ({parsed.profile} profile): mean of the draws, {shown}"
    output = parsed.output or f"{parsed.bench_dir}/figures/sentiment_label_curve.png"
    check_output_file(output, [("--results", results_path)], "--output")
    path = plot_curve(curve, reference, output, title, parsed.profile)
    print(f"Wrote {path}")
    return path


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
