"""Book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab (`recipes/finetune_sentiment.py`).

A classifier from scratch, from a pretrained language model, or with that model's backbone frozen; validation
accuracy and F1 every epoch, and one predicted label per held-back test review.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from transformers import DataCollatorWithPadding, EvalPrediction, Trainer, TrainingArguments
from transformers.trainer_utils import IntervalStrategy

from hf_models import SmallEncoderForSequenceClassification
from hf_models.data import load_cls_books
from hf_models.metrics import load_metric
from hf_models.run_record import Evaluation, RunRecord, hardware, model_size
from hf_models.safety import check_not_input
from hf_models.textio import UsageError, atomic_write_text
from hf_models.tokenization import resolve_tokenizer
from hf_models.training import (
    TRAINER_GROUP,
    AuxiliaryLMLoss,
    DecayTowardStartCallback,
    FlagGroup,
    GradualUnfreezingCallback,
    InterpolateWithStartCallback,
    ModelArguments,
    RunTimer,
    WeightAveragingCallback,
    check_run_output,
    discriminative_optimizer,
    finish_run,
    help_sections,
    init_head_by_linear_probe,
    load_or_build_model,
    model_group,
    model_source,
    pretrained_lm_head,
    run_task,
    train_model,
)
from hf_models.training.linear_probe import head_inputs

from .sentiment_arguments import SentimentArguments

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"
DATASET = "cls-books"
LANGUAGE = "fr"
BACKBONE_DROPOUTS = ("embedding_dropout", "attention_dropout", "hidden_dropout", "activation_dropout")  # --dropout
LINEAR_PROBE_FOLDER = "linear_probe"  # `--save_linear_probe`: the probe alone, in this folder of the run


def _classifier(model_args: ModelArguments, data_args: SentimentArguments, tokenizer, id2label: dict):
    """A new classifier, or a pretrained checkpoint whose LM head is dropped for a fresh classification head."""
    overrides = {
        "is_causal": data_args.causal_mask,
        "classifier_pooling": data_args.classifier_pooling,
        "classifier_dropout": data_args.classifier_dropout,
        **dict.fromkeys(BACKBONE_DROPOUTS, data_args.dropout),
    }
    labels = {"id2label": id2label, "label2id": {name: i for i, name in id2label.items()}}
    model = load_or_build_model(
        SmallEncoderForSequenceClassification,
        model_args,
        tokenizer,
        DEFAULT_PRESET,
        from_pretrained={**overrides, **labels},
        **overrides,
        **labels,
    )
    if data_args.freeze_backbone:
        model.freeze_backbone()
    if data_args.freeze_embeddings:
        model.get_input_embeddings().requires_grad_(False)
    return model


def _encoded_reviews(
    raw,
    data_args: SentimentArguments,
    training_args: TrainingArguments,
    tokenizer,
    max_length: int,
    reverse: bool = False,
):
    limits = (
        ("train", data_args.max_train_samples),
        ("validation", data_args.max_eval_samples),
        ("test", data_args.max_predict_samples),
    )
    for split, limit in limits:
        if limit is not None:
            raw[split] = raw[split].select(range(min(limit, len(raw[split]))))
    if data_args.keep_review_end >= max_length:
        raise UsageError(
            f"--keep_review_end {data_args.keep_review_end}: give fewer tokens than the {max_length} a review keeps"
        )
    with training_args.main_process_first(desc="tokenization"):
        return encode_reviews(raw, tokenizer, max_length, keep_review_end=data_args.keep_review_end, reverse=reverse)


def encode_reviews(raw, tokenizer, max_length: int, keep_review_end: int = 0, reverse: bool = False):
    """Each review's `input_ids` and `attention_mask`: its first `max_length` tokens, or, with `keep_review_end`,
    its first `max_length - keep_review_end` and its last `keep_review_end`; with `reverse` (a backbone that
    `reads_reversed_text`), the kept tokens last to first."""

    def encode(batch: dict) -> dict:
        if keep_review_end:
            encoded = _cut_middle(tokenizer(batch["text"], verbose=False), max_length, keep_review_end)
        else:
            encoded = tokenizer(batch["text"], truncation=True, max_length=max_length)
        return {key: [values[::-1] for values in column] for key, column in encoded.items()} if reverse else encoded

    return raw.map(encode, batched=True, remove_columns=["text"], desc="Tokenizing reviews")


def _cut_middle(encoded: Mapping[str, list[list[int]]], max_length: int, tail: int) -> dict:
    """Each encoding longer than max_length cut in its middle: its first max_length - tail tokens and its last tail."""
    head = max_length - tail
    return {
        key: [values if len(values) <= max_length else values[:head] + values[-tail:] for values in column]
        for key, column in encoded.items()
    }


def _compute_metrics():
    accuracy, f1 = load_metric("accuracy"), load_metric("f1")

    def compute_metrics(prediction: EvalPrediction) -> dict:
        predictions = np.argmax(prediction.predictions, axis=-1)
        return {
            **accuracy.compute(predictions=predictions, references=prediction.label_ids),
            **f1.compute(predictions=predictions, references=prediction.label_ids),
        }

    return compute_metrics


def _write_test_predictions(trainer: Trainer, test_set, data_args: SentimentArguments, metrics: dict) -> None:
    """Test labels are held back: predict them, one label (0 or 1) per line, in the order of the reviews.
    They are predicted shortest first, so that a batch is padded to about its own length, then put back in order."""
    by_length = np.argsort([len(ids) for ids in test_set["input_ids"]], kind="stable")
    sorted_logits = trainer.predict(test_set.select(by_length), metric_key_prefix="test").predictions
    test_predictions = np.empty(len(by_length), dtype=np.int64)
    test_predictions[by_length] = np.argmax(sorted_logits, axis=-1)
    if trainer.is_world_process_zero():
        path = _test_predictions_path(trainer.args, data_args)
        atomic_write_text(path, "".join(f"{int(label)}\n" for label in test_predictions))
        metrics["test_predictions_file"] = path
    metrics["test_samples"] = len(test_predictions)


def _selection_split(encoded, data_args: SentimentArguments, training_args: TrainingArguments):
    """The evaluation sets: validation, and with `--selection_split_percentage` a stratified slice of the training
    reviews that picks the best epoch through Trainer's own best-checkpoint machinery."""
    if not data_args.selection_split_percentage:
        return encoded["validation"]
    if data_args.average_last_epochs:
        raise UsageError(
            "--selection_split_percentage keeps one epoch and --average_last_epochs averages several: give one of them"
        )
    split = encoded["train"].train_test_split(
        test_size=data_args.selection_split_percentage / 100, seed=training_args.seed, stratify_by_column="label"
    )
    encoded["train"], encoded["selection"] = split["train"], split["test"]
    training_args.save_strategy = training_args.eval_strategy
    training_args.load_best_model_at_end = True
    training_args.metric_for_best_model = "eval_selection_accuracy"
    training_args.greater_is_better = True
    training_args.save_total_limit = 1
    return {"validation": encoded["validation"], "selection": encoded["selection"]}


def _transfer_callbacks(model, data_args: SentimentArguments, training_args: TrainingArguments) -> tuple[list, float]:
    """ULMFiT's gradual unfreezing, weight averaging, L2-SP and WiSE-FT, and the backbone's learning rate."""
    callbacks = []
    backbone_lr = data_args.backbone_learning_rate
    if data_args.gradual_unfreezing:
        callbacks.append(GradualUnfreezingCallback(model, data_args.gradual_unfreezing))
        backbone_lr = backbone_lr or training_args.learning_rate  # every group in the optimizer from the start
    if data_args.average_last_epochs:
        callbacks.append(WeightAveragingCallback(model, data_args.average_last_epochs))
    if data_args.decay_toward_start:
        callbacks.append(DecayTowardStartCallback(model, data_args.decay_toward_start))
    if data_args.wise_ft_alpha < 1:  # after the averaging, if both: the average is what is mixed
        callbacks.append(InterpolateWithStartCallback(model, data_args.wise_ft_alpha))
    return callbacks, backbone_lr


def _auxiliary_lm_loss(model, model_args: ModelArguments, data_args: SentimentArguments, seed: int):
    """`--auxiliary_lm_weight`: the LM loss `ReproducibleTrainer` adds, its head the pretrained model's if it has one."""
    if not data_args.auxiliary_lm_weight:
        return None
    if not model.config.is_causal:
        raise UsageError(
            "--auxiliary_lm_weight predicts each next token, which a bidirectional backbone sees: "
            "finetune with --causal_mask true"
        )
    lm_head = pretrained_lm_head(model_args.model_name_or_path) if model_args.model_name_or_path else None
    if model_args.model_name_or_path and lm_head is None:
        logger.warning(f"{model_args.model_name_or_path} has no plain LM head: the auxiliary LM head starts at random")
    return AuxiliaryLMLoss(
        model,
        data_args.auxiliary_lm_weight,
        data_args.auxiliary_lm_decay,
        data_args.auxiliary_lm_positions,
        lm_head,
        seed,
    )


def _linear_probe_head(model, encoded, collator, data_args: SentimentArguments, training_args) -> tuple[dict, tuple]:
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


def _save_linear_probe_run(
    model, encoded, collator, run_args: tuple, probe: tuple[dict, tuple], timer: RunTimer
) -> None:
    """`--save_linear_probe`: the probe alone, before any finetuning, as a run folder of its own
    (OUTPUT_DIR/linear_probe): its record, with the validation scores as one evaluation at epoch 0, and its test
    predictions. It is the classifier that `--freeze_backbone --num_train_epochs 0` would train and score."""
    model_args, data_args, training_args = run_args
    folder = os.path.join(training_args.output_dir, LINEAR_PROBE_FOLDER)
    probe_metrics, (logits, labels) = probe
    scores = _compute_metrics()(EvalPrediction(predictions=logits.numpy(), label_ids=labels.numpy()))
    test_logits, _ = _probe_logits(model, encoded["test"], collator, training_args.per_device_eval_batch_size)
    if not training_args.should_save:
        return
    os.makedirs(folder, exist_ok=True)
    atomic_write_text(
        os.path.join(folder, data_args.test_predictions_file), "".join(f"{int(i)}\n" for i in test_logits.argmax(-1))
    )
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


def _per_epoch(log_history: list[dict], selection: bool) -> dict:
    """Validation accuracy and F1 after each epoch (and the selection slice's accuracy, when there is one)."""
    prefix = "eval_validation_" if selection else "eval_"
    per_epoch = {
        "eval_accuracy_per_epoch": [
            {"epoch": entry["epoch"], "accuracy": entry[f"{prefix}accuracy"], "f1": entry.get(f"{prefix}f1")}
            for entry in log_history
            if f"{prefix}accuracy" in entry
        ]
    }
    if selection:
        selection = [entry["eval_selection_accuracy"] for entry in log_history if "eval_selection_accuracy" in entry]
        per_epoch["selection_accuracy_per_epoch"] = selection
        per_epoch["selected_epoch"] = selection.index(max(selection)) + 1  # Trainer keeps the first best
    return per_epoch


def _test_predictions_path(training_args: TrainingArguments, data_args: SentimentArguments) -> str:
    return os.path.join(training_args.output_dir, data_args.test_predictions_file)


def _check_before_training(model_args: ModelArguments, data_args: SentimentArguments, training_args) -> None:
    """Everything the user gave that could fail after training, checked before it: the output folder, the test
    predictions' path (never an input, never a folder) and the sequence length."""
    if data_args.data_dir is None:
        raise UsageError("--data_dir is required: the folder with the CLS-FR books files")
    if data_args.from_scratch == bool(model_args.model_name_or_path):
        raise UsageError("give exactly one of --model_name_or_path (pretrained) and --from_scratch")
    if data_args.max_seq_length <= 0:
        raise UsageError(f"--max_seq_length {data_args.max_seq_length}: give a positive number of tokens")
    if not 0 <= data_args.keep_review_end < data_args.max_seq_length:
        raise UsageError(
            f"--keep_review_end {data_args.keep_review_end}: give 0 to {data_args.max_seq_length - 1} "
            f"tokens (fewer than --max_seq_length {data_args.max_seq_length})"
        )
    if data_args.head_init not in ("random", "linear_probe"):
        raise UsageError(f"--head_init {data_args.head_init}: give 'random' or 'linear_probe'")
    if data_args.save_linear_probe and data_args.head_init != "linear_probe":
        raise UsageError("--save_linear_probe keeps the probe that --head_init linear_probe fits: give both")
    if data_args.auxiliary_lm_weight and data_args.freeze_backbone:
        raise UsageError(
            "--auxiliary_lm_weight trains the backbone on the reviews' LM loss, which --freeze_backbone "
            "keeps: give one"
        )
    if data_args.auxiliary_lm_weight < 0 or not (
        0 < data_args.auxiliary_lm_decay <= 1 and 0 < data_args.auxiliary_lm_positions <= 1
    ):
        raise UsageError(
            f"--auxiliary_lm_weight {data_args.auxiliary_lm_weight}, --auxiliary_lm_decay "
            f"{data_args.auxiliary_lm_decay}, --auxiliary_lm_positions {data_args.auxiliary_lm_positions}: "
            "give a weight of 0 or more, a decay and a share of positions in (0, 1]"
        )
    if data_args.decay_toward_start and data_args.freeze_backbone:
        raise UsageError("--decay_toward_start pulls the backbone's weights, which --freeze_backbone keeps: give one")
    if data_args.freeze_embeddings and (data_args.freeze_backbone or data_args.gradual_unfreezing):
        other = (
            "--freeze_backbone freezes them too" if data_args.freeze_backbone else "--gradual_unfreezing thaws them"
        )
        raise UsageError(f"--freeze_embeddings: {other}; give one of the two")
    for flag, value in (("--dropout", data_args.dropout), ("--wise_ft_alpha", data_args.wise_ft_alpha)):
        if value is not None and not 0 <= value <= 1:
            raise UsageError(f"{flag} {value}: give a number from 0 to 1")
    if data_args.wise_ft_alpha < 1 and training_args.resume_from_checkpoint:
        raise UsageError("--wise_ft_alpha mixes with the weights a run starts from, which a resumed run no longer has")
    if data_args.length_buckets and (strategy := training_args.train_sampling_strategy) != "random":
        raise UsageError(f"--length_buckets orders the batches itself: drop --train_sampling_strategy {strategy}")
    probe_only = training_args.max_steps <= 0 and training_args.num_train_epochs == 0
    if probe_only and not (data_args.head_init == "linear_probe" and data_args.freeze_backbone):
        raise UsageError(
            "--num_train_epochs 0 trains nothing: it is for --freeze_backbone --head_init linear_probe, where the "
            "probe is the classifier; give a positive number of epochs"
        )
    check_run_output(model_args, training_args, [("--data_dir", data_args.data_dir)], fitted_otherwise=probe_only)
    predictions = _test_predictions_path(training_args, data_args)
    data_dir = data_args.data_dir
    names = os.listdir(data_dir) if os.path.isdir(data_dir) else []
    data_files = [("--data_dir", os.path.join(data_dir, name)) for name in names]
    check_not_input(predictions, data_files, "--test_predictions_file")
    if os.path.isdir(predictions):
        raise UsageError(f"--test_predictions_file {predictions} is a folder; give a file name")


def finetune(model_args: ModelArguments, data_args: SentimentArguments, training_args: TrainingArguments) -> dict:
    """Train the classifier, evaluate it every epoch, predict the test reviews, and save the run."""
    timer = RunTimer()
    _check_before_training(model_args, data_args, training_args)
    if training_args.eval_strategy == IntervalStrategy.NO:
        # The recipe's point is the per-epoch validation curve.
        training_args.eval_strategy = IntervalStrategy.EPOCH
    if data_args.lab_vocabulary and data_args.lab_raw_text:
        raise UsageError("give at most one of --lab_vocabulary (.spm pieces) and --lab_raw_text (raw reviews)")
    # The lab's vocabulary is built from DATA_DIR when no tokenizer is given.
    vocabulary = (
        "altegrad-lab" if data_args.lab_vocabulary else "altegrad-lab-raw" if data_args.lab_raw_text else "bpe"
    )
    tokenizer = resolve_tokenizer(
        model_args.tokenizer_path,
        vocabulary,
        data_dir=data_args.data_dir,
        missing="--from_scratch needs --tokenizer_name_or_path (train one with tokenizer/train_tokenizer.py)",
    )
    raw = load_cls_books(data_args.data_dir, detokenize=not data_args.lab_vocabulary)
    label_names = raw["train"].features["label"].names
    model = _classifier(model_args, data_args, tokenizer, dict(enumerate(label_names)))
    trainable = model.num_parameters(only_trainable=True)
    logger.info(f"{trainable:,} trainable parameters of {model.num_parameters():,}")
    max_length = min(data_args.max_seq_length, model.config.max_position_embeddings)
    if max_length < data_args.max_seq_length:
        logger.warning(f"--max_seq_length {data_args.max_seq_length} is cut to the model's {max_length} positions")
    reverse = model.config.reads_reversed_text
    if reverse:
        logger.info("A backward backbone (reads_reversed_text): each review's kept tokens are read last to first")
    encoded = _encoded_reviews(raw, data_args, training_args, tokenizer, max_length, reverse)
    eval_sets = _selection_split(encoded, data_args, training_args)
    callbacks, backbone_lr = _transfer_callbacks(model, data_args, training_args)
    collator = DataCollatorWithPadding(tokenizer)
    probe_metrics, probe_validation = _linear_probe_head(model, encoded, collator, data_args, training_args)
    if data_args.save_linear_probe:
        run_args, probe = (model_args, data_args, training_args), (probe_metrics, probe_validation)
        _save_linear_probe_run(model, encoded, collator, run_args, probe, timer)
    auxiliary_loss = _auxiliary_lm_loss(model, model_args, data_args, training_args.seed)

    trainer, metrics = train_model(
        model,
        training_args,
        tokenizer,
        encoded["train"],
        collator,
        eval_sets,
        callbacks=[*callbacks, auxiliary_loss] if auxiliary_loss else callbacks,
        auxiliary_loss=auxiliary_loss,
        compute_metrics=_compute_metrics(),
        length_buckets=data_args.length_buckets,
        optimizer_cls_and_kwargs=discriminative_optimizer(model, training_args, backbone_lr),
    )
    metrics["trainable_parameters"] = trainable
    metrics.update(probe_metrics)
    eval_metrics = trainer.evaluate(encoded["validation"])
    trainer.log_metrics("eval", eval_metrics)
    metrics.update(eval_metrics)
    metrics.update(_per_epoch(trainer.state.log_history, selection="selection" in encoded))
    _write_test_predictions(trainer, encoded["test"], data_args, metrics)
    return finish_run(
        trainer,
        (model_args, data_args, training_args),
        metrics,
        timer,
        default_preset=DEFAULT_PRESET,
        task="sentiment",
        objective="classification",
        dataset=DATASET,
        language=LANGUAGE,
        split_sizes={split: len(encoded[split]) for split in encoded},
        hyperparameters={"max_length": max_length},
    )


# The command line: the task's flags, the model's, then Trainer's (each group under its title in --help).
ARGUMENT_GROUPS = (FlagGroup("Sentiment arguments", SentimentArguments), model_group(DEFAULT_PRESET), TRAINER_GROUP)


def main(args: Sequence[str] | None = None, doc: str | None = None) -> dict:
    """`recipes/finetune_sentiment.py`: parse the flags (after an arguments file, if one is given) and finetune;
    `doc`, the recipe's docstring, is its --help."""
    return run_task(finetune, ARGUMENT_GROUPS, args, **help_sections(doc))
