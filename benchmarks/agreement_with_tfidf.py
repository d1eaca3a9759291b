#!/usr/bin/env python
r"""How often each row's test predictions agree with TF-IDF's: a view of the 2,000 test reviews without their
labels, while the outside scores are pending (issue 18).

    python benchmarks/agreement_with_tfidf.py --data_dir ../shared/data/cls-books \
        --scored benchmarks/predictions/scored/cpu_scratch_seed42_2026-11-22.txt=0.7765 \
        benchmarks/predictions/scored/gpu_pretrained_seed42_2026-11-22.txt=0.761 --output agreement.json

A row is a folder of `seed<N>.txt` files (one label per test review), found under each --predictions_dirs folder.
TF-IDF + logistic regression, fitted on train + valid (benchmarks/tfidf_baseline.py), labels the test reviews; each
row gets the mean and spread of its seeds' agreement with those labels, and how often its seeds agree with each
other. A classifier that is right more often agrees more often with an 84 %-accurate one: on the 400 validation
reviews, where the labels are known, the finetuned runs' agreement with TF-IDF follows their accuracy (BENCHMARKS.md,
"The test reviews without their labels"), and averaged over 2,000 reviews it moves less by chance than validation accuracy does.
It is not a score: a row whose mistakes are TF-IDF's mistakes agrees more than its accuracy says.

Files scored outside the project (`--scored FILE=ACCURACY`) calibrate it: each gives an offset, its accuracy minus
its agreement, and every row gets `estimate` = agreement + the offsets' mean (their spread is printed beside it).
Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
from tfidf_baseline import tfidf_test_predictions

from hf_models.data import load_cls_books
from hf_models.safety import command_line
from hf_models.textio import DataError, UsageError, atomic_write_text, read_lines


def read_labels(path: Path, expected: int) -> np.ndarray:
    """A predictions file: `expected` lines of 0 or 1."""
    lines = read_lines(path)
    if len(lines) != expected:
        raise DataError(f"{path}: {len(lines)} lines, expected {expected} (one label per test review, in file order)")
    for number, line in enumerate(lines, start=1):
        if line.strip() not in ("0", "1"):
            raise DataError(f"{path}:{number}: {line!r} is not a label (0 or 1)")
    return np.asarray([int(line) for line in lines])


def rows_under(folder: Path) -> dict[str, list[Path]]:
    """Every folder holding `seed<N>.txt` files, by its path under `folder`, and its files sorted."""
    files = sorted(folder.glob("**/seed*.txt"))
    rows: dict[str, list[Path]] = {}
    for path in files:
        rows.setdefault(str(path.parent.relative_to(folder)), []).append(path)
    return rows


def parse_scored(values: Sequence[str]) -> list[tuple[Path, float]]:
    scored = []
    for value in values:
        path, _, accuracy = value.rpartition("=")
        try:
            fraction = float(accuracy)
        except ValueError:
            fraction = -1.0
        if not path or not 0.0 <= fraction <= 1.0:
            raise UsageError(f"--scored {value!r}: give FILE=ACCURACY with an accuracy between 0 and 1")
        scored.append((Path(path), fraction))
    return scored


def agreement_table(reference: np.ndarray, rows: dict[str, list[Path]], offsets: Sequence[float] = ()) -> list[dict]:
    """One entry a row: its seeds' agreement with `reference` (mean, std), with each other, and the estimate."""
    table = []
    for name, paths in rows.items():
        labels = [read_labels(path, len(reference)) for path in paths]
        agreements = [float(np.mean(row == reference)) for row in labels]
        between = [float(np.mean(a == b)) for a, b in combinations(labels, 2)]
        entry = {
            "row": name,
            "files": len(paths),
            "agreement": statistics.mean(agreements),
            "agreement_std": statistics.stdev(agreements) if len(agreements) > 1 else None,
            "between_seeds": statistics.mean(between) if between else None,
        }
        if offsets:
            entry["estimate"] = min(1.0, max(0.0, entry["agreement"] + statistics.mean(offsets)))
        table.append(entry)
    return sorted(table, key=lambda entry: -entry["agreement"])


def markdown(table: list[dict], offsets: Sequence[float]) -> str:
    """The table as printed: agreement with TF-IDF, between seeds, and the calibrated estimate when there is one."""
    header = "| row | files | agreement with TF-IDF | between seeds |"
    if offsets:
        header += f" estimate (offset {statistics.mean(offsets):+.2%} ± {np.std(offsets):.2%}) |"
    lines = [header, "| --- | ---: | ---: | ---: |" + " ---: |" * bool(offsets)]
    for entry in table:
        between = "—" if entry["between_seeds"] is None else f"{entry['between_seeds']:.2%}"
        spread = "" if entry["agreement_std"] is None else f" ± {entry['agreement_std']:.2%}"
        line = f"| {entry['row']} | {entry['files']} | {entry['agreement']:.2%}{spread} | {between} |"
        lines.append(line + (f" {entry['estimate']:.2%} |" if offsets else ""))
    return "\n".join(lines)


def add_output_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """`--output` (the report as JSON) and `--overwrite_output`, shared with `compare_sentiment_runs.py`."""
    parser.add_argument("--output", help=f"also write {what} as JSON here")
    parser.add_argument("--overwrite_output", action="store_true", help="replace an earlier --output file")


def check_output(args: argparse.Namespace) -> None:
    """Refuse an --output file of an earlier run, unless --overwrite_output; checked before any work."""
    if args.output and Path(args.output).exists() and not args.overwrite_output:
        raise UsageError(f"--output {args.output} exists: give --overwrite_output to replace it")


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", required=True, help="the cls-books folder (train, valid and test reviews)")
    parser.add_argument(
        "--predictions_dirs",
        nargs="+",
        default=["benchmarks/predictions"],
        help="folders searched for rows: folders of seed<N>.txt files (default: %(default)s)",
    )
    parser.add_argument(
        "--scored",
        nargs="*",
        default=[],
        metavar="FILE=ACCURACY",
        help="predictions files with their accuracy scored outside the project, to calibrate",
    )
    add_output_arguments(parser, "the table")
    args = parser.parse_args(argv)
    scored = parse_scored(args.scored)
    check_output(args)
    rows = {}
    for folder in args.predictions_dirs:
        rows.update({f"{folder}/{name}": paths for name, paths in rows_under(Path(folder)).items()})
    if not rows:
        raise UsageError(f"--predictions_dirs {' '.join(args.predictions_dirs)}: no folder of seed<N>.txt files there")
    reference = np.asarray(tfidf_test_predictions(load_cls_books(args.data_dir)))
    calibration = []
    for path, accuracy in scored:
        agreement = float(np.mean(read_labels(path, len(reference)) == reference))
        calibration.append(
            {"file": str(path), "accuracy": accuracy, "agreement": agreement, "offset": accuracy - agreement}
        )
        print(f"scored {path}: accuracy {accuracy:.2%}, agreement {agreement:.2%}, offset {accuracy - agreement:+.2%}")
    offsets = [entry["offset"] for entry in calibration]
    table = agreement_table(reference, rows, offsets)
    print(markdown(table, offsets))
    report = {
        "reference": "TF-IDF + logistic regression fitted on train + valid",
        "test_reviews": len(reference),
        "scored": calibration,
        "rows": table,
    }
    if args.output:
        atomic_write_text(Path(args.output), json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
