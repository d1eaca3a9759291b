#!/usr/bin/env python
"""Finetune a SmallEncoder for book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab.

    # from a pretrained model (its tokenizer is saved beside it)
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books \
        --model_name_or_path runs/pretrain-fr --output_dir runs/sentiment/pretrained --num_train_epochs 5
    # the same with the backbone frozen (only the classification head trains)
    python recipes/finetune_sentiment.py ... --freeze_backbone --output_dir runs/sentiment/frozen
    # from scratch, with a tokenizer and a config
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch \
        --tokenizer_name_or_path outputs/tok-fr --model_config altegrad-lab --output_dir runs/sentiment/scratch

Validation accuracy and F1 are reported every epoch (and drawn in accuracy.png); the held-back test
reviews get one predicted label per line in OUTPUT_DIR/test_predictions.txt. `--causal_mask false`
turns the causal mask off (a bidirectional encoder); by default a pretrained model keeps its own.
The lab's figure, validation accuracy per epoch for several runs on one plot:

    python recipes/plot_sentiment.py --runs scratch=runs/sentiment/scratch \
        pretrained=runs/sentiment/pretrained frozen=runs/sentiment/frozen --output sentiment.png
"""

import logging
import os
import sys
from dataclasses import dataclass, field

import datasets
import numpy as np
import transformers
from transformers import DataCollatorWithPadding, EvalPrediction, Trainer, TrainingArguments, set_seed
from transformers.trainer_utils import IntervalStrategy

from hf_models import SmallEncoderForSequenceClassification
from hf_models.data import load_cls_books
from hf_models.tokenization import load_tokenizer
from hf_models.training_utils import (
    ModelArguments,
    PlotCallback,
    RunTimer,
    build_config,
    finish_run,
    load_metric,
    parse_args,
)

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"


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
    test_predictions_file: str = field(
        default="test_predictions.txt", metadata={"help": "File name (in --output_dir) of the test predictions."}
    )


def main(args: list[str] | None = None) -> dict:
    timer = RunTimer()
    model_args, data_args, training_args = parse_args((ModelArguments, SentimentArguments, TrainingArguments), args)
    if data_args.data_dir is None:
        raise ValueError("--data_dir is required")
    if data_args.from_scratch == bool(model_args.model_name_or_path):
        raise ValueError("give exactly one of --model_name_or_path (pretrained) and --from_scratch")
    if training_args.eval_strategy == IntervalStrategy.NO:
        # The recipe's point is the per-epoch validation curve.
        training_args.eval_strategy = IntervalStrategy.EPOCH

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)]
    )
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    set_seed(training_args.seed)

    raw = load_cls_books(data_args.data_dir)
    label_names = raw["train"].features["label"].names
    id2label = dict(enumerate(label_names))
    label2id = {name: i for i, name in id2label.items()}

    tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if tokenizer_path is None:
        raise ValueError("--from_scratch needs --tokenizer_name_or_path (train one with tokenizer/train_tokenizer.py)")
    tokenizer = load_tokenizer(tokenizer_path)
    if data_args.from_scratch:
        config = build_config(
            model_args.model_config or DEFAULT_PRESET,
            model_args.config_overrides,
            tokenizer,
            attention_type=model_args.attention_type,
            is_causal=data_args.causal_mask,
            classifier_pooling=data_args.classifier_pooling,
            id2label=id2label,
            label2id=label2id,
        )
        model = SmallEncoderForSequenceClassification(config)
    else:
        # The LM head of a pretrained checkpoint is dropped and a fresh classifier is initialized.
        overrides = {"is_causal": data_args.causal_mask, "classifier_pooling": data_args.classifier_pooling}
        overrides = {key: value for key, value in overrides.items() if value is not None}
        model = SmallEncoderForSequenceClassification.from_pretrained(
            model_args.model_name_or_path, id2label=id2label, label2id=label2id, **overrides
        )
    if data_args.freeze_backbone:
        model.freeze_backbone()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    logger.info(f"{trainable:,} trainable parameters of {sum(p.numel() for p in model.parameters()):,}")

    max_length = min(data_args.max_seq_length, model.config.max_position_embeddings)
    for split, limit in (("train", data_args.max_train_samples), ("validation", data_args.max_eval_samples)):
        if limit is not None:
            raw[split] = raw[split].select(range(min(limit, len(raw[split]))))
    with training_args.main_process_first(desc="tokenization"):
        encoded = raw.map(
            lambda batch: tokenizer(batch["text"], truncation=True, max_length=max_length),
            batched=True,
            remove_columns=["text"],
            desc="Tokenizing reviews",
        )

    accuracy, f1 = load_metric("accuracy"), load_metric("f1")

    def compute_metrics(prediction: EvalPrediction) -> dict:
        predictions = np.argmax(prediction.predictions, axis=-1)
        return {
            **accuracy.compute(predictions=predictions, references=prediction.label_ids),
            **f1.compute(predictions=predictions, references=prediction.label_ids),
        }

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        callbacks=[PlotCallback()],
        optimizer_cls_and_kwargs=_discriminative_optimizer(model, training_args, data_args.backbone_learning_rate),
    )
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    metrics = {**result.metrics, "train_samples": len(encoded["train"]), "trainable_parameters": trainable}
    metrics["final_train_loss"] = next(
        (entry["loss"] for entry in reversed(trainer.state.log_history) if "loss" in entry), None
    )
    eval_metrics = trainer.evaluate()
    trainer.log_metrics("eval", eval_metrics)
    metrics.update(eval_metrics)
    metrics["eval_accuracy_per_epoch"] = [
        {"epoch": entry["epoch"], "accuracy": entry["eval_accuracy"], "f1": entry.get("eval_f1")}
        for entry in trainer.state.log_history
        if "eval_accuracy" in entry
    ]

    # Test labels are held back: predict them, one label (0 or 1) per line, in the order of the reviews.
    test_logits = trainer.predict(encoded["test"], metric_key_prefix="test").predictions
    test_predictions = np.argmax(test_logits, axis=-1)
    if trainer.is_world_process_zero():
        os.makedirs(training_args.output_dir, exist_ok=True)
        path = os.path.join(training_args.output_dir, data_args.test_predictions_file)
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{int(label)}\n" for label in test_predictions)
        metrics["test_predictions_file"] = path
    metrics["test_samples"] = len(test_predictions)
    return finish_run(trainer, (model_args, data_args, training_args), metrics, timer)


def _discriminative_optimizer(
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


if __name__ == "__main__":
    main()
