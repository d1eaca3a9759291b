"""Book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab (`recipes/finetune_sentiment.py`).

A classifier from scratch, from a pretrained language model, or with that model's backbone frozen; validation
accuracy and F1 every epoch, and one predicted label per held-back test review. The run is here; beside it, its
flags (`sentiment_arguments`), the reviews as the model reads them (`sentiment_reviews`), LP-FT's linear probe
(`sentiment_probe`), and the scores and test predictions (`sentiment_predictions`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from transformers import DataCollatorWithPadding, TrainingArguments
from transformers.trainer_utils import IntervalStrategy

from hf_models import SmallEncoderForSequenceClassification
from hf_models.metrics import write_scored_examples
from hf_models.safety import check_count, check_output_file
from hf_models.textio import UsageError
from hf_models.training import (
    GradualUnfreezingCallback,
    ModelArguments,
    RunTimer,
    check_run_output,
    discriminative_optimizer,
    finish_run,
    help_sections,
    load_or_build_model,
    run_task,
    train_model,
)

from .sentiment_arguments import DEFAULT_PRESET, SentimentArguments, argument_groups
from .sentiment_predictions import compute_metrics, predictions_path, validation_per_epoch, write_test_predictions
from .sentiment_probe import linear_probe_head, save_linear_probe_run
from .sentiment_reviews import DATASET, LANGUAGE, encode_reviews, load_reviews, review_tokenizer

logger = logging.getLogger(__name__)


def _classifier(model_args: ModelArguments, data_args: SentimentArguments, tokenizer, id2label: dict):
    """A new classifier, or a pretrained checkpoint whose LM head is dropped for a fresh classification head."""
    overrides = {
        "is_causal": data_args.causal_mask,
        "classifier_pooling": data_args.classifier_pooling,
        "classifier_dropout": data_args.classifier_dropout,
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
    return model


def _transfer_callbacks(model, data_args: SentimentArguments, training_args: TrainingArguments) -> tuple[list, float]:
    """ULMFiT's gradual unfreezing, and the backbone's learning rate (its discriminative rate)."""
    callbacks = []
    backbone_lr = data_args.backbone_learning_rate
    if data_args.gradual_unfreezing:
        callbacks.append(GradualUnfreezingCallback(model, data_args.gradual_unfreezing))
        backbone_lr = backbone_lr or training_args.learning_rate  # every group in the optimizer from the start
    return callbacks, backbone_lr


def _check_before_training(model_args: ModelArguments, data_args: SentimentArguments, training_args) -> None:
    """Everything the user gave that could fail after training, checked before it: the output folder, the test
    predictions' path (never an input, never a folder) and the sequence length."""
    if data_args.data_dir is None:
        raise UsageError("--data_dir is required: the folder with the CLS-FR books files")
    if data_args.from_scratch == bool(model_args.model_name_or_path):
        raise UsageError("give exactly one of --model_name_or_path (pretrained) and --from_scratch")
    if data_args.max_seq_length is not None and data_args.max_seq_length <= 0:
        raise UsageError(f"--max_seq_length {data_args.max_seq_length}: give a positive number of tokens")
    if data_args.head_init not in ("random", "linear_probe"):
        raise UsageError(f"--head_init {data_args.head_init}: give 'random' or 'linear_probe'")
    if data_args.freeze_backbone and data_args.gradual_unfreezing:
        raise UsageError("--freeze_backbone keeps the backbone that --gradual_unfreezing thaws: give one")
    if data_args.save_linear_probe and data_args.head_init != "linear_probe":
        raise UsageError("--save_linear_probe keeps the probe that --head_init linear_probe fits: give both")
    if data_args.length_buckets and (strategy := training_args.train_sampling_strategy) != "random":
        raise UsageError(f"--length_buckets orders the batches itself: drop --train_sampling_strategy {strategy}")
    probe_only = training_args.max_steps <= 0 and training_args.num_train_epochs == 0
    if probe_only and not (data_args.head_init == "linear_probe" and data_args.freeze_backbone):
        raise UsageError(
            "--num_train_epochs 0 trains nothing: it is for --freeze_backbone --head_init linear_probe, where the "
            "probe is the classifier; give a positive number of epochs"
        )
    check_run_output(
        model_args,
        training_args,
        [("--data_dir", data_args.data_dir)],
        fitted_otherwise=probe_only,
        architecture=SmallEncoderForSequenceClassification.__name__,
        task="sentiment",
    )
    check_count("--max_predict_samples", data_args.max_predict_samples)
    predictions = predictions_path(training_args)
    data_dir = data_args.data_dir
    names = os.listdir(data_dir) if os.path.isdir(data_dir) else []
    data_files = [("--data_dir", os.path.join(data_dir, name)) for name in names]
    check_output_file(predictions, data_files, "the test predictions")


def finetune(model_args: ModelArguments, data_args: SentimentArguments, training_args: TrainingArguments) -> dict:
    """Train the classifier, evaluate it every epoch, predict the test reviews, and save the run."""
    timer = RunTimer()
    _check_before_training(model_args, data_args, training_args)
    if training_args.eval_strategy == IntervalStrategy.NO:
        # The recipe's point is the per-epoch validation curve.
        training_args.eval_strategy = IntervalStrategy.EPOCH
    tokenizer = review_tokenizer(model_args, data_args)
    # The budget's draw follows Trainer's convention for data sampling: --data_seed, else --seed.
    draw_seed = training_args.seed if training_args.data_seed is None else training_args.data_seed
    raw = load_reviews(data_args, draw_seed)
    label_names = raw["train"].features["label"].names
    model = _classifier(model_args, data_args, tokenizer, dict(enumerate(label_names)))
    trainable = model.num_parameters(only_trainable=True)
    logger.info(f"{trainable:,} trainable parameters of {model.num_parameters():,}")
    wanted = data_args.max_seq_length or model.config.max_position_embeddings
    max_length = min(wanted, model.config.max_position_embeddings)
    if max_length < wanted:
        logger.warning(f"--max_seq_length {data_args.max_seq_length} is cut to the model's {max_length} positions")
    encoded = encode_reviews(raw, tokenizer, max_length, training_args)
    budget_draw = {"label_budget_seed": draw_seed} if data_args.label_budget is not None else {}
    callbacks, backbone_lr = _transfer_callbacks(model, data_args, training_args)
    collator = DataCollatorWithPadding(tokenizer)
    probe_metrics, probe_validation = linear_probe_head(model, encoded, collator, data_args, training_args)
    if data_args.save_linear_probe:
        run_args, probe = (model_args, data_args, training_args), (probe_metrics, probe_validation)
        save_linear_probe_run(model, encoded, collator, run_args, probe, timer)

    trainer, metrics = train_model(
        model,
        training_args,
        tokenizer,
        encoded["train"],
        collator,
        encoded["validation"],
        callbacks=callbacks,
        task="sentiment",
        compute_metrics=(scorer := compute_metrics()),
        length_buckets=data_args.length_buckets,
        optimizer_cls_and_kwargs=discriminative_optimizer(model, training_args, backbone_lr),
    )
    metrics["trainable_parameters"] = trainable
    metrics.update(probe_metrics)
    eval_metrics = trainer.evaluate(encoded["validation"])
    metrics.update(eval_metrics)
    if trainer.is_world_process_zero():  # each review's predicted and gold label, for the intervals
        write_scored_examples(training_args.output_dir, *scorer.scored)
    metrics.update(validation_per_epoch(trainer.state.log_history))
    write_test_predictions(trainer, encoded["test"], metrics)
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
        max_length=max_length,
        hyperparameters=budget_draw,
    )


def main(args: Sequence[str] | None = None, doc: str | None = None, configs: str | os.PathLike | None = None) -> dict:
    """`recipes/finetune_sentiment.py`: parse the flags (after an arguments file, if one is given) and finetune;
    `doc`, the recipe's docstring, is its --help; `configs`, the recipes' configs/ folder, gives the lab's defaults
    (`argument_groups`)."""
    return run_task(finetune, argument_groups(configs), args, **help_sections(doc))
