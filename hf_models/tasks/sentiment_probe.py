"""LP-FT's first step in the sentiment run (`--head_init linear_probe`): the head fitted as a logistic regression on
the frozen features, scored on validation, and with `--save_linear_probe` kept as a run of its own."""

from __future__ import annotations

import logging
import os

import torch
from transformers import EvalPrediction

from hf_models.metrics import write_scored_examples
from hf_models.run_record import Evaluation, RunRecord, hardware, model_size
from hf_models.textio import atomic_write_text
from hf_models.training import RunTimer, init_head_by_linear_probe, model_source
from hf_models.training.linear_probe import head_inputs

from .sentiment_arguments import DEFAULT_PRESET, SentimentArguments
from .sentiment_predictions import TEST_PREDICTIONS, compute_metrics
from .sentiment_reviews import DATASET, LANGUAGE

logger = logging.getLogger(__name__)

LINEAR_PROBE_FOLDER = "linear_probe"  # `--save_linear_probe`: the probe alone, in this folder of the run


def linear_probe_head(model, encoded, collator, data_args: SentimentArguments, training_args) -> tuple[dict, tuple]:
    """With `--head_init linear_probe`: the head becomes the logistic regression on the frozen features of the
    training reviews (L2 chosen by cross-validation on them). Its validation accuracy, before any finetuning, is
    reported (`linear_probe_validation_accuracy`), never used to choose anything. Returns the metrics and the
    probe's (validation logits, labels)."""
    if data_args.head_init != "linear_probe":
        return {}, ()
    model.to(training_args.device)
    batch_size = training_args.per_device_eval_batch_size
    metrics = init_head_by_linear_probe(
        model, encoded["train"], collator, data_args.linear_probe_folds, training_args.seed, batch_size
    )
    logits, labels = _probe_logits(model, encoded["validation"], collator, batch_size)
    metrics["linear_probe_validation_accuracy"] = float((logits.argmax(-1) == labels).float().mean())
    logger.info(f"The linear-probe head scores {metrics['linear_probe_validation_accuracy']:.2%} on validation")
    return metrics, (logits, labels)


@torch.no_grad()
def _probe_logits(model, dataset, collator, batch_size: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    features, labels = head_inputs(model, dataset, collator, batch_size)
    return model.classifier(features.to(model.classifier.weight)).float().cpu(), labels


def save_linear_probe_run(
    model, encoded, collator, run_args: tuple, probe: tuple[dict, tuple], timer: RunTimer
) -> None:
    """`--save_linear_probe`: the probe alone, before any finetuning, as a run folder of its own
    (OUTPUT_DIR/linear_probe): its record, with the validation scores as one evaluation at epoch 0, and its test
    predictions. It is the classifier that `--freeze_backbone --num_train_epochs 0` would train and score."""
    model_args, data_args, training_args = run_args
    folder = os.path.join(training_args.output_dir, LINEAR_PROBE_FOLDER)
    probe_metrics, (logits, labels) = probe
    scores = compute_metrics()(EvalPrediction(predictions=logits.numpy(), label_ids=labels.numpy()))
    test_logits, _ = _probe_logits(model, encoded["test"], collator, training_args.per_device_eval_batch_size)
    if not training_args.should_save:
        return
    os.makedirs(folder, exist_ok=True)
    atomic_write_text(os.path.join(folder, TEST_PREDICTIONS), "".join(f"{int(i)}\n" for i in test_logits.argmax(-1)))
    write_scored_examples(folder, logits.argmax(-1).tolist(), labels.tolist())
    hyperparameters = {"seed": training_args.seed, "classifier_pooling": model.config.classifier_pooling}
    record = RunRecord(
        task="sentiment",
        objective="linear_probe",
        dataset=DATASET,
        language=LANGUAGE,
        split_sizes={split: len(encoded[split]) for split in encoded},
        **model_source(model_args, DEFAULT_PRESET),
        model_size=model_size(model),
        hardware=hardware(training_args),
        wall_time_s=timer.seconds,
        hyperparameters={**hyperparameters, **probe_metrics},
    )
    record.add_evaluation(Evaluation("validation", scores, len(labels), per_epoch=[{"epoch": 0.0, **scores}]))
    record.save(folder)
    logger.info(f"The linear probe alone is saved in {folder} ({scores['accuracy']:.2%} on validation)")
