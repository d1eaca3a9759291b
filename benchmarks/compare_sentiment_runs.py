#!/usr/bin/env python
r"""A lever against its reference, run by run: sentiment runs compared in pairs, on validation and on the test
reviews (issue 18).

    python benchmarks/compare_sentiment_runs.py --data_dir ../shared/data/cls-books \
        --pairs runs/pretrained_lp_ft_seed42=runs/pretrained_lp_ft_aux_seed42 \
                runs/pretrained_lp_ft_lm43_seed42=runs/pretrained_lp_ft_lm43_aux_seed42 --output compare.json

Each pair is REFERENCE=LEVER: two run folders of `recipes/finetune_sentiment.py` (`run_record.json` and
`test_predictions.txt`) that differ by the lever alone: the same backbone (or both from scratch), the same seed.
For each pair: validation accuracy after epoch 1 and at the end, how often the test predictions agree with TF-IDF's
(`agreement_with_tfidf.py`: a label-free view of the 2,000 test reviews), and how many test predictions the lever
changed. Then each difference's mean over the pairs with its standard error.

Why pairs: a backbone's own draw moves a row's validation accuracy by ±2 points (BENCHMARKS.md, "Four LM draws"),
as much as any lever did, and validation's 400 reviews cannot rank rows 2–3 points apart. A lever compared with
the same runs without it, over several LM draws, measures the lever and not the draw. Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from agreement_with_tfidf import add_output_arguments, check_output, read_labels
from tfidf_baseline import tfidf_test_predictions

from hf_models.data import load_cls_books
from hf_models.run_record import read_record
from hf_models.safety import command_line
from hf_models.textio import DataError, UsageError, atomic_write_text

PREDICTIONS_FILE = "test_predictions.txt"
MEASURES = ("epoch_1", "final", "test_agreement")


def parse_pairs(values: Sequence[str]) -> list[tuple[Path, Path]]:
    pairs = []
    for value in values:
        reference, separator, lever = value.partition("=")
        if not (separator and reference and lever):
            raise UsageError(f"--pairs {value!r}: give REFERENCE_DIR=LEVER_DIR (two run folders)")
        pairs.append((Path(reference), Path(lever)))
    return pairs


def run_scores(folder: Path, reference_labels: np.ndarray) -> dict:
    """A run folder's validation accuracy after epoch 1 and at the end, and its test predictions' agreement."""
    record = read_record(folder)
    if record is None or record.evaluation("validation") is None:
        raise DataError(
            f"{folder}: no run_record.json with a validation evaluation (a finetune_sentiment.py run folder?)"
        )
    epochs, accuracies = record.accuracy_per_epoch()
    trained = [accuracy for epoch, accuracy in zip(epochs, accuracies, strict=True) if epoch > 0]
    predictions = read_labels(folder / PREDICTIONS_FILE, len(reference_labels))
    return {
        "folder": str(folder),
        "epoch_1": trained[0] if trained else None,
        "final": record.evaluation("validation").metrics["accuracy"],
        "test_agreement": float(np.mean(predictions == reference_labels)),
        "predictions": predictions,
    }


def compare(pairs: list[tuple[Path, Path]], reference_labels: np.ndarray) -> dict:
    """Every pair's scores and differences, and each difference's mean and standard error over the pairs."""
    rows = []
    for reference_dir, lever_dir in pairs:
        reference, lever = run_scores(reference_dir, reference_labels), run_scores(lever_dir, reference_labels)
        changed = int(np.sum(reference.pop("predictions") != lever.pop("predictions")))
        differences = {m: lever[m] - reference[m] for m in MEASURES if None not in (lever[m], reference[m])}
        rows.append(
            {"reference": reference, "lever": lever, "difference": differences, "changed_predictions": changed}
        )
    summary = {}
    for measure in MEASURES:
        values = [row["difference"][measure] for row in rows if measure in row["difference"]]
        if values:
            error = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else None
            summary[measure] = {"mean": statistics.mean(values), "standard_error": error, "pairs": len(values)}
    return {"pairs": rows, "mean_difference": summary}


def _percent(value: float | None, sign: bool = False) -> str:
    return "—" if value is None else f"{value * 100:{'+' if sign else ''}.2f}"


def markdown(report: dict) -> str:
    """One line a pair (reference → lever, in points), then the mean differences."""
    lines = [
        "| lever run (against its reference) | epoch 1 | final | test agreement with TF-IDF | changed test predictions |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for row in report["pairs"]:
        cells = [f"{_percent(row['reference'][m])} → {_percent(row['lever'][m])}" for m in MEASURES]
        lines.append(f"| {row['lever']['folder']} | {' | '.join(cells)} | {row['changed_predictions']} |")
    means = []
    for measure in MEASURES:
        entry = report["mean_difference"].get(measure)
        error = "" if entry is None or entry["standard_error"] is None else f" ± {entry['standard_error'] * 100:.2f}"
        means.append("—" if entry is None else f"**{_percent(entry['mean'], sign=True)}{error}**")
    changed = statistics.mean(row["changed_predictions"] for row in report["pairs"])
    lines.append(
        f"| mean difference (± standard error), {len(report['pairs'])} pairs | {' | '.join(means)} | {changed:.0f} |"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", required=True, help="the cls-books folder (train, valid and test reviews)")
    parser.add_argument(
        "--pairs",
        nargs="+",
        required=True,
        metavar="REFERENCE_DIR=LEVER_DIR",
        help="run folders, each with the same run and the lever",
    )
    add_output_arguments(parser, "the comparison")
    args = parser.parse_args(argv)
    pairs = parse_pairs(args.pairs)
    check_output(args)
    for folder in {folder for pair in pairs for folder in pair}:
        if not folder.is_dir():
            raise UsageError(f"--pairs: {folder} is not a folder")
    reference_labels = np.asarray(tfidf_test_predictions(load_cls_books(args.data_dir)))
    report = compare(pairs, reference_labels)
    print(markdown(report))
    if args.output:
        atomic_write_text(Path(args.output), json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
