#!/usr/bin/env python
"""Reference line for CLS-FR books: TF-IDF (word 1-2 grams) + logistic regression.

Trained on train, scored on validation (the number in BENCHMARKS.md; each review's prediction and label in
OUTPUT_DIR/examples_validation.jsonl); then refit on train+valid and the
test reviews predicted into OUTPUT_DIR/test_predictions.txt (as the data README's 84.4% reference does).
With `--label_budget N`: trained on the balanced draw of N training reviews that `recipes/finetune_sentiment.py
--label_budget N` trains on with the same `--seed` (`hf_models.data.balanced_subset`), scored on validation, and
the test reviews predicted by that same fit (the budget is every label it learns from: no refit on validation).
Exits 0 with a message when scikit-learn is not installed (it is not a project dependency).
"""

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hf_models.data import balanced_subset, load_cls_books
from hf_models.metrics import write_scored_examples
from hf_models.safety import check_flag_ranges, check_output_dir, command_line, removing_what_fails
from hf_models.safety.ranges import POSITIVE, SEED
from hf_models.textio import atomic_write_text
from hf_models.training import HelpFormatter


def tfidf_classifier():
    """Word 1-2 grams, sublinear TF-IDF, logistic regression (needs scikit-learn)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2), LogisticRegression(C=10, max_iter=2000)
    )


# The allowed values of the numeric flags below (`check_flag_ranges`); a budget past the data is refused by the draw.
FLAG_RANGES = {"label_budget": POSITIVE, "seed": SEED}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--data_dir", required=True, help="the cls-books folder")
    parser.add_argument("--output_dir", required=True, help="where to write report.json and the test predictions")
    parser.add_argument(
        "--overwrite_output_dir",
        action="store_true",
        help="replace what --output_dir holds (a report, predictions, a run); refused otherwise",
    )
    parser.add_argument(
        "--label_budget", type=int, default=None, help="train on this balanced draw of training reviews only"
    )
    parser.add_argument("--seed", type=int, default=42, help="the draw's seed (the finetuning's --seed)")
    args = parser.parse_args(argv)
    check_flag_ranges(args, ranges=FLAG_RANGES)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    check_output_dir(args.output_dir, overwrite=args.overwrite_output_dir, inputs=[("--data_dir", args.data_dir)])
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print("scikit-learn is not installed: TF-IDF baseline skipped")
        return 0
    start = time.time()
    data = load_cls_books(args.data_dir)
    if args.label_budget is not None:  # a bad budget is a UsageError: one line, exit status 2
        data["train"] = data["train"].select(balanced_subset(data["train"]["label"], args.label_budget, args.seed))
    train, valid = data["train"].to_dict(), data["validation"].to_dict()
    clf = tfidf_classifier().fit(train["text"], train["label"])
    valid_predictions = clf.predict(valid["text"])
    acc = float((valid_predictions == np.array(valid["label"])).mean())
    if args.label_budget is None:  # the test labels: refit on train + valid, as the data README's 84.4 % was
        clf = tfidf_classifier().fit(train["text"] + valid["text"], train["label"] + valid["label"])
    out = Path(args.output_dir)
    report = {"eval_accuracy": acc, "train_samples": len(train["label"]), "wall_time_s": round(time.time() - start, 1)}
    if args.label_budget is not None:
        report.update(label_budget=args.label_budget, seed=args.seed)
    with removing_what_fails([out]):  # a disk full at the report leaves no predictions without it
        predictions = "".join(f"{int(p)}\n" for p in clf.predict(data["test"]["text"]))
        atomic_write_text(out / "test_predictions.txt", predictions)
        write_scored_examples(out, valid_predictions.tolist(), valid["label"])  # each review's, for the intervals
        atomic_write_text(out / "report.json", json.dumps(report, indent=2))
    print(f"TF-IDF + logistic regression: validation accuracy {acc:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
