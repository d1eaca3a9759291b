"""Book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab (`recipes/finetune_sentiment.py`).

A classifier from scratch, from a pretrained language model, or with that model's backbone frozen; validation
accuracy and F1 every epoch, and one predicted label per held-back test review.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from transformers import DataCollatorWithPadding, EvalPrediction, Trainer, TrainingArguments
from transformers.trainer_utils import IntervalStrategy

from hf_models import SmallEncoderForSequenceClassification
from hf_models.data import load_cls_books
from hf_models.metrics import load_metric
from hf_models.safety import check_not_input
from hf_models.textio import UsageError, atomic_write_text
from hf_models.tokenization import resolve_tokenizer
from hf_models.training import (
    ModelArguments,
    RunTimer,
    check_run_output,
    finish_run,
    load_or_build_model,
    run_task,
    train_model,
)

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"
DATASET = "cls-books"
LANGUAGE = "fr"


@dataclass
class SentimentArguments:
    data_dir: str = field(
        default=None, metadata={"help": "Folder with {train,valid,test}.review.spm and {train,valid}.label."}
    )
    from_scratch: bool = field(
        default=False, metadata={"help": "Train a new model from --model_config instead of --model_name_or_path."}
    )
    freeze_backbone: bool = field(default=False, metadata={"help": "Train the classification head only."})
    causal_mask: bool | None = field(
        default=None,
        metadata={"help": "true: causal attention (the lab's LM backbone); false: bidirectional. Default: keep the model's."},
    )
    classifier_pooling: str | None = field(
        default=None,
        metadata={
            "help": "How the classifier reads the sequence: 'last' non-pad token (the lab's), 'mean' of the "
            "tokens, or 'first'. Default: keep the model's.",
            "choices": ["last", "mean", "first"],
        },
    )
    backbone_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "Discriminative learning rate (ULMFiT): the backbone trains at this rate and the new "
            "classification head at --learning_rate. Default: one rate for all."
        },
    )
    max_seq_length: int = field(default=256, metadata={"help": "Reviews are truncated to this many tokens."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Truncate the training set (debugging)."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Truncate the validation set (debugging)."})
    lab_vocabulary: bool = field(
        default=False,
        metadata={
            "help": "The lab's exact setting: reviews stay SentencePiece pieces and map to the lab's 50,001 ids "
            "(<s> <pad> </s> <unk>, then DATA_DIR/dict.txt), the vocabulary of the altegrad-lab preset. The "
            "tokenizer is built from DATA_DIR unless --tokenizer_name_or_path or the model folder has one."
        },
    )
    test_predictions_file: str = field(
        default="test_predictions.txt", metadata={"help": "File name (in --output_dir) of the test predictions."}
    )


def discriminative_optimizer(
    model: SmallEncoderForSequenceClassification, training_args: TrainingArguments, backbone_lr: float | None
) -> tuple[type, dict] | None:
    """Trainer's AdamW with two parameter groups: the backbone at `backbone_lr`, the head at the main rate.

    Weight decay follows Trainer's rule (none on biases and LayerNorm weights). None: Trainer's default."""
    if backbone_lr is None:
        return None
    decay = set(Trainer.get_decay_parameter_names(None, model))
    groups = []
    for in_backbone, lr in ((True, backbone_lr), (False, training_args.learning_rate)):
        for with_decay in (True, False):
            params = [
                p
                for name, p in model.named_parameters()
                if p.requires_grad and name.startswith(f"{model.base_model_prefix}.") == in_backbone
                and (name in decay) == with_decay
            ]
            if params:
                groups.append({"params": params, "lr": lr, "weight_decay": training_args.weight_decay * with_decay})
    optimizer_cls, optimizer_kwargs = Trainer.get_optimizer_cls_and_kwargs(training_args, model)
    return optimizer_cls, {**optimizer_kwargs, "params": groups}


def _classifier(model_args: ModelArguments, data_args: SentimentArguments, tokenizer, id2label: dict):
    """A new classifier, or a pretrained checkpoint whose LM head is dropped for a fresh classification head."""
    overrides = {"is_causal": data_args.causal_mask, "classifier_pooling": data_args.classifier_pooling}
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
    return model


def _encoded_reviews(raw, data_args: SentimentArguments, training_args: TrainingArguments, tokenizer, max_length: int):
    for split, limit in (("train", data_args.max_train_samples), ("validation", data_args.max_eval_samples)):
        if limit is not None:
            raw[split] = raw[split].select(range(min(limit, len(raw[split]))))
    with training_args.main_process_first(desc="tokenization"):
        return raw.map(
            lambda batch: tokenizer(batch["text"], truncation=True, max_length=max_length),
            batched=True,
            remove_columns=["text"],
            desc="Tokenizing reviews",
        )


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
    """Test labels are held back: predict them, one label (0 or 1) per line, in the order of the reviews."""
    test_predictions = np.argmax(trainer.predict(test_set, metric_key_prefix="test").predictions, axis=-1)
    if trainer.is_world_process_zero():
        path = _test_predictions_path(trainer.args, data_args)
        atomic_write_text(path, "".join(f"{int(label)}\n" for label in test_predictions))
        metrics["test_predictions_file"] = path
    metrics["test_samples"] = len(test_predictions)


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
    check_run_output(model_args, training_args, [("--data_dir", data_args.data_dir)])
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
    # The lab's vocabulary is built from DATA_DIR when no tokenizer is given.
    tokenizer = resolve_tokenizer(
        model_args.tokenizer_path,
        "altegrad-lab" if data_args.lab_vocabulary else "bpe",
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
    encoded = _encoded_reviews(raw, data_args, training_args, tokenizer, max_length)

    trainer, metrics = train_model(
        model,
        training_args,
        tokenizer,
        encoded["train"],
        DataCollatorWithPadding(tokenizer),
        encoded["validation"],
        compute_metrics=_compute_metrics(),
        optimizer_cls_and_kwargs=discriminative_optimizer(model, training_args, data_args.backbone_learning_rate),
    )
    metrics["trainable_parameters"] = trainable
    eval_metrics = trainer.evaluate()
    trainer.log_metrics("eval", eval_metrics)
    metrics.update(eval_metrics)
    metrics["eval_accuracy_per_epoch"] = [
        {"epoch": entry["epoch"], "accuracy": entry["eval_accuracy"], "f1": entry.get("eval_f1")}
        for entry in trainer.state.log_history
        if "eval_accuracy" in entry
    ]
    _write_test_predictions(trainer, encoded["test"], data_args, metrics)
    return finish_run(
        trainer, (model_args, data_args, training_args), metrics, timer, default_preset=DEFAULT_PRESET,
        task="sentiment", objective="classification", dataset=DATASET, language=LANGUAGE,
        split_sizes={split: len(encoded[split]) for split in encoded}, hyperparameters={"max_length": max_length},
    )  # fmt: skip


def main(args: Sequence[str] | None = None) -> dict:
    """`recipes/finetune_sentiment.py`: parse the flags (or one JSON file) and finetune."""
    return run_task(finetune, SentimentArguments, args)
