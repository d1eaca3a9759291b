#!/usr/bin/env python
r"""Average the class probabilities of finetuned sentiment classifiers: ULMFiT's ensemble of a forward and a
backward classifier (Howard and Ruder, 2018), or of any runs of `recipes/finetune_sentiment.py`.

    python benchmarks/ensemble_sentiment.py --runs outputs/bench/sentiment/pretrained_lp_ft_seed42 \
        outputs/bench/sentiment/pretrained_backward_lp_ft_seed42 --data_dir ../shared/data/cls-books \
        --output_dir outputs/bench/sentiment/pretrained_bidirectional_seed42

Each run reads the reviews as it was finetuned on them (its `report.json`): its own tokenizer, the tokens its
`--max_seq_length` and `--keep_review_end` kept, last to first for a backbone that `reads_reversed_text`. Writes
`ensemble.json` (each run's validation accuracy and the ensemble's) and `test_predictions.txt` (one label per test
review, in file order) in OUTPUT_DIR.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from datasets import DatasetDict
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, HfArgumentParser

import hf_models  # noqa: F401  (registers the model family with the Auto classes)
from hf_models.data import load_cls_books
from hf_models.safety import check_flag_ranges, command_line
from hf_models.tasks.sentiment import encode_reviews
from hf_models.textio import UsageError, atomic_write_text

logger = logging.getLogger(__name__)


@dataclass
class EnsembleArguments:
    runs: list[str] = field(metadata={"help": "Folders of finetuned sentiment classifiers (two or more)."})
    data_dir: str = field(metadata={"help": "The cls-books folder (train/valid/test .review.spm, .label)."})
    output_dir: str = field(metadata={"help": "Where to write ensemble.json and test_predictions.txt."})
    batch_size: int = field(default=64, metadata={"help": "Reviews per forward pass."})
    overwrite_output_dir: bool = field(default=False, metadata={"help": "Replace an earlier ensemble's files."})


def finetuning_arguments(run_dir: str) -> dict:
    """The run's sentiment flags, from the `report.json` that `recipes/finetune_sentiment.py` wrote."""
    report = Path(run_dir) / "report.json"
    try:
        arguments = json.loads(report.read_text(encoding="utf-8"))["arguments"]["SentimentArguments"]
    except (OSError, ValueError, KeyError) as error:
        raise UsageError(
            f"--runs {run_dir}: no readable {report} with the run's sentiment flags ({error!r}): give "
            "folders written by recipes/finetune_sentiment.py"
        ) from None
    if arguments.get("lab_vocabulary"):
        raise UsageError(f"--runs {run_dir}: a --lab_vocabulary run reads .spm pieces; this script reads raw reviews")
    return arguments


@torch.no_grad()
def class_probabilities(run_dir: str, splits: DatasetDict, batch_size: int) -> dict[str, np.ndarray]:
    """The run's softmax over the classes for each review of each split (rows in the split's order), the reviews
    encoded as in its finetuning, batches shortest first; the model is loaded once for all splits."""
    arguments = finetuning_arguments(run_dir)
    tokenizer = AutoTokenizer.from_pretrained(run_dir)
    model = AutoModelForSequenceClassification.from_pretrained(run_dir).eval()
    max_length = min(arguments["max_seq_length"], model.config.max_position_embeddings)
    reverse = getattr(model.config, "reads_reversed_text", False)
    encoded = encode_reviews(splits, tokenizer, max_length, arguments.get("keep_review_end", 0), reverse=reverse)
    collator = DataCollatorWithPadding(tokenizer)
    probabilities = {}
    for split, reviews in encoded.items():
        order = np.argsort([len(ids) for ids in reviews["input_ids"]], kind="stable")
        probabilities[split] = np.empty((len(order), model.config.num_labels), dtype=np.float64)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch = collator([{key: reviews[int(i)][key] for key in ("input_ids", "attention_mask")} for i in rows])
            probabilities[split][rows] = model(**batch).logits.float().softmax(-1).numpy()
    return probabilities


def main(argv: Sequence[str] | None = None) -> dict:
    help_format = argparse.RawDescriptionHelpFormatter
    parser = HfArgumentParser(EnsembleArguments, description=__doc__, formatter_class=help_format)
    (args,) = parser.parse_args_into_dataclasses(args=argv)
    check_flag_ranges(args)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if len(args.runs) < 2:
        raise UsageError(f"--runs: give two or more finetuned classifiers to average, not {len(args.runs)}")
    for run in args.runs:
        finetuning_arguments(run)  # every run readable before any is scored
    out = Path(args.output_dir)
    written = [out / name for name in ("ensemble.json", "test_predictions.txt")]
    if any(path.exists() for path in written) and not args.overwrite_output_dir:
        raise UsageError(f"{out} holds an earlier ensemble: give --overwrite_output_dir to replace it")
    raw = load_cls_books(args.data_dir)
    labels = np.asarray(raw["validation"]["label"])
    texts = DatasetDict({split: raw[split].select_columns(["text"]) for split in ("validation", "test")})
    validation, test, scores = [], [], {}
    for run in args.runs:
        probabilities = class_probabilities(run, texts, args.batch_size)
        validation.append(probabilities["validation"])
        test.append(probabilities["test"])
        scores[run] = float((validation[-1].argmax(-1) == labels).mean())
        logger.info(f"{run}: validation accuracy {scores[run]:.2%}")
    accuracy = float((np.mean(validation, axis=0).argmax(-1) == labels).mean())
    logger.info(f"The ensemble of {len(args.runs)} runs: validation accuracy {accuracy:.2%}")
    out.mkdir(parents=True, exist_ok=True)
    predictions = np.mean(test, axis=0).argmax(-1)
    atomic_write_text(written[1], "".join(f"{int(label)}\n" for label in predictions))
    report = {
        "runs": args.runs,
        "validation_accuracy_per_run": scores,
        "validation_accuracy": accuracy,
        "test_predictions_file": str(written[1]),
    }
    atomic_write_text(written[0], json.dumps(report, indent=2) + "\n")
    print(json.dumps({"validation_accuracy": accuracy, "validation_accuracy_per_run": scores}, indent=2))
    return report


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
