"""The sentiment classifier's scores and its test predictions: accuracy and F1 of its logits, the validation curve
of a run, and one predicted label per held-back test review."""

from __future__ import annotations

import os

import numpy as np
from transformers import EvalPrediction, Trainer, TrainingArguments

from hf_models.metrics import load_metric
from hf_models.run_record import one_per_epoch
from hf_models.textio import atomic_write_text


def compute_metrics():
    """Trainer's `compute_metrics`: accuracy and F1 of the predicted classes. The last evaluation's classes and
    labels stay on the function (`scored`: the split's order, the eval sampler's) for `write_scored_examples`."""
    accuracy, f1 = load_metric("accuracy"), load_metric("f1")

    def compute(prediction: EvalPrediction) -> dict:
        predictions = np.argmax(prediction.predictions, axis=-1)
        compute.scored = (predictions.tolist(), np.asarray(prediction.label_ids).tolist())
        return {
            **accuracy.compute(predictions=predictions, references=prediction.label_ids),
            **f1.compute(predictions=predictions, references=prediction.label_ids),
        }

    return compute


def validation_per_epoch(log_history: list[dict]) -> dict:
    """Validation accuracy and F1 after each epoch: the last evaluation at an epoch (`one_per_epoch`: the final
    evaluation repeats the epoch where training stopped)."""
    return {
        "eval_accuracy_per_epoch": one_per_epoch(
            {"epoch": entry["epoch"], "accuracy": entry["eval_accuracy"], "f1": entry.get("eval_f1")}
            for entry in log_history
            if "eval_accuracy" in entry
        )
    }


# One label (0 or 1) a line, in --output_dir (as run_glue.py's predict_results file, a fixed name).
TEST_PREDICTIONS = "test_predictions.txt"


def predictions_path(training_args: TrainingArguments) -> str:
    """Where the test predictions go: `test_predictions.txt` in `--output_dir`."""
    return os.path.join(training_args.output_dir, TEST_PREDICTIONS)


def write_test_predictions(trainer: Trainer, test_set, metrics: dict) -> None:
    """Test labels are held back: predict them, one label (0 or 1) per line, in the order of the reviews.
    They are predicted shortest first, so that a batch is padded to about its own length, then put back in order."""
    by_length = np.argsort([len(ids) for ids in test_set["input_ids"]], kind="stable")
    sorted_logits = trainer.predict(test_set.select(by_length), metric_key_prefix="test").predictions
    test_predictions = np.empty(len(by_length), dtype=np.int64)
    test_predictions[by_length] = np.argmax(sorted_logits, axis=-1)
    if trainer.is_world_process_zero():
        path = predictions_path(trainer.args)
        atomic_write_text(path, "".join(f"{int(label)}\n" for label in test_predictions))
        metrics["test_predictions_file"] = path
    metrics["test_samples"] = len(test_predictions)
