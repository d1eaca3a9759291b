#!/usr/bin/env python
"""Bar chart of the birthplace dev accuracies of a profile's rows (`benchmarks/profiles/<profile>.yaml`: London, no
pretraining, each pretrained model alone and after the course's finetuning stage), with the course's bars (10%
vanilla, 5% synthesizer) as reference lines.

    python benchmarks/plot_birthplace.py --bench_dir outputs/bench    # outputs/bench/figures/birthplace_dev_accuracy.png
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import grid  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from course_table import counted  # noqa: E402

from hf_models.run_record import read_record  # noqa: E402
from hf_models.safety import check_output_file, command_line  # noqa: E402
from hf_models.textio import atomic_write  # noqa: E402
from hf_models.training import HelpFormatter  # noqa: E402

COLOURS = {  # by the profiles' rows
    "london": "#999999",
    "vanilla_nopretrain": "#d98c5f",
    "vanilla_finetuned": "#8fa9d6",
    "synthesizer_finetuned": "#9fd0ac",
    "vanilla_recite_pretrain_only": "#dd8452",
    "vanilla_recite_finetuned": "#f2bf9b",
    "synthesizer_recite_pretrain_only": "#da8bc3",
    "synthesizer_recite_finetuned": "#f0c6e3",
    "vanilla_span_corruption_pretrain_only": "#937860",
    "vanilla_span_corruption_finetuned": "#c9b29b",
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--bench_dir", default="outputs/bench", help="the run's folder (make bench's OUT)")
    parser.add_argument("--profile", choices=grid.names(), default="cpu", help="the profile whose rows to plot")
    parser.add_argument("--output", help="PNG file to write (default: BENCH_DIR/figures/birthplace_dev_accuracy.png)")
    parser.add_argument(
        "--title", default=None, help="the figure's title (default: dev accuracy and the questions scored)"
    )
    args = parser.parse_args(argv)
    if not Path(args.bench_dir).is_dir():
        raise SystemExit(f"--bench_dir {args.bench_dir}: no such folder")
    args.output = args.output or f"{args.bench_dir}/figures/birthplace_dev_accuracy.png"
    rows = grid.load(args.profile).rows["birthplace"]
    inputs = [("--bench_dir", Path(args.bench_dir) / row.runs[0]) for row in rows]
    check_output_file(args.output, inputs, "--output", inside=True)  # never over a run's own plots
    labels, values, colours, questions = [], [], [], []
    for row in rows:
        record = read_record(Path(args.bench_dir) / row.runs[0])
        scores = record.scored("validation") if record else None
        if scores is not None:
            labels.append(row.label.replace(", ", "\n"))
            values.append(100 * scores.metrics["exact_match"])
            colours.append(COLOURS.get(row.key, "#666666"))
            questions.append(scores.num_examples)
    # about an inch per bar, so that the two-line labels of the longer profiles do not run into each other
    fig, ax = plt.subplots(figsize=(max(7.5, 1.1 * len(labels)), 3.8), dpi=90)
    bars = ax.bar(labels, values, color=colours)
    ax.tick_params(axis="x", labelsize=8)
    ax.bar_label(bars, fmt="%.1f%%")
    for y, text, style in ((10, "course bar, vanilla (10 %)", "--"), (5, "course bar, synthesizer (5 %)", ":")):
        ax.axhline(y, color="black", linestyle=style, linewidth=0.8, label=text)
    ax.legend(loc="upper left", fontsize=7)  # a legend, not text on the lines, so that no bar label is covered
    ax.set_ylabel("dev accuracy (%)")
    ax.set_ylim(0, max([12.0, *values]) * 1.25)
    ax.set_title(args.title or f"Birthplace dev accuracy{counted(questions, 'questions')}", fontsize=10)
    fig.tight_layout()
    with atomic_write(args.output) as staging:
        fig.savefig(staging, format="png")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
