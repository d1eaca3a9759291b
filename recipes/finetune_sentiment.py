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
    # the lab's exact setting: the .spm pieces and the lab's 50,001 ids (dict.txt), altegrad-lab preset
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch --lab_vocabulary \
        --model_config altegrad-lab --output_dir runs/sentiment/lab-scratch

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
from hf_models.course_settings import altegrad_lab_tokenizer
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

    raw = load_cls_books(data_args.data_dir, detokenize=not data_args.lab_vocabulary)
    label_names = raw["train"].features["label"].names
    id2label = dict(enumerate(label_names))
    label2id = {name: i for i, name in id2label.items()}

    tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if data_args.lab_vocabulary:
        tokenizer = altegrad_lab_tokenizer(data_args.data_dir, tokenizer_path)
    elif tokenizer_path is None:
        raise ValueError("--from_scratch needs --tokenizer_name_or_path (train one with tokenizer/train_tokenizer.py)")
    else:
        tokenizer = load_tokenizer(tokenizer_path)
    if data_args.from_scratch:
        config = build_config(
            model_args.model_config or DEFAULT_PRESET,
            model_args.config_overrides,
            tokenizer,
            attention_type=model_args.attention_type,
            is_causal=data_args.causal_mask,
            id2label=id2label,
            label2id=label2id,
        )
        model = SmallEncoderForSequenceClassification(config)
    else:
        # The LM head of a pretrained checkpoint is dropped and a fresh classifier is initialized.
        overrides = {} if data_args.causal_mask is None else {"is_causal": data_args.causal_mask}
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


if __name__ == "__main__":
    main()
