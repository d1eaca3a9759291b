"""Book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab (`recipes/finetune_sentiment.py`).

A classifier from scratch, from a pretrained language model, or with that model's backbone frozen; validation
accuracy and F1 every epoch, and one predicted label per held-back test review (`test_predictions.txt`). Its flags are
`SentimentArguments`, beside the model's and Trainer's (`argument_groups`); the training stack is imported by the
functions that run, so that `-h` needs neither datasets nor Trainer.

`--head_init linear_probe` is LP-FT (Kumar et al., 2022, "Fine-Tuning can Distort Pretrained Features and
Underperform Out-of-Distribution"). A new head starts random, and its first gradients push the pretrained features
around before the head has learned to use them. `init_head_by_linear_probe` starts it instead as a logistic
regression fitted to convergence on the frozen backbone's features: what the head reads (`model.classifier`'s
input, in eval mode), each feature standardised on the training set, the L2 strength chosen by stratified k-fold
cross-validation on the training set alone. The standardisation is folded into the head's weights, so the model is
an ordinary `SmallEncoderForSequenceClassification`. With a frozen backbone and no training epochs after it, the
probe *is* the classifier: a head trained to convergence instead of for a few epochs of AdamW.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn
from transformers import DataCollatorWithPadding, EvalPrediction, TrainingArguments
from transformers.trainer_utils import IntervalStrategy

from hf_models import data, training
from hf_models.metrics import load_metric, write_scored_examples
from hf_models.run_record import Evaluation, RunRecord, hardware, model_size
from hf_models.safety import check_output_file
from hf_models.safety.ranges import KEPT_SHARE, NON_NEGATIVE, POSITIVE, Range
from hf_models.textio import UsageError, atomic_write_text
from hf_models.tokenization import resolve_tokenizer
from hf_models.training.arguments import (
    FlagGroup,
    ModelArguments,
    check_run_output,
    model_group,
    read_arguments_file,
    trainer_group,
)

if TYPE_CHECKING:  # the training stack (datasets, Trainer): imported when a run starts, not for -h
    from datasets import DatasetDict
    from transformers import Trainer

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"  # the model from scratch, unless --model_config names another
DATASET = "cls-books"
LANGUAGE = "fr"
# One label (0 or 1) a line, in --output_dir (as run_glue.py's predict_results file, a fixed name).
TEST_PREDICTIONS = "test_predictions.txt"
LINEAR_PROBE_FOLDER = "linear_probe"  # `--save_linear_probe`: the probe alone, in this folder of the run
# sklearn's C (inverse regularisation): the loss is mean cross-entropy + ||W||^2 / (2 C n).
# Its lower end matters: 2,000 pooled features on 1,600 reviews want strong regularisation (C 0.001 on CLS-FR books).
PROBE_C_GRID = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
# The cross-validation's fits stop at a loss change of 1e-9 instead of the final fit's 1e-12: half the L-BFGS steps
# (its 45 fits took 54 s of a pretrained LP-FT run and 76 s of a scratch one on 2 cores, most of them at large C,
# where the reviews are nearly separable). Only held-out argmaxes are read from them; on the CPU profile's features
# one review of 1,600 flipped at one C, never the chosen one (BENCHMARKS.md, "The probe's cross-validation").
CV_TOLERANCE = 1e-9


# --------------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------------

# The lab's finetuning from the pretrained model, in the recipes' configs/ folder: the recipe's defaults of the
# Trainer flags and of the length a review is read to.
LAB_CONFIG = "altegrad/course/pretrained.json"
# The model's poolings (its config's `ClassifierPooling`, which tests/test_help.py holds this copy to): written
# here so that -h answers without importing the model.
CLASSIFIER_POOLINGS = ("last", "mean", "first", "all_layers")
CLASSIFIER = "SmallEncoderForSequenceClassification"


@dataclass
class SentimentArguments:
    data_dir: str = field(default=None, metadata={"help": "The CLS-FR books folder (*.review.spm, *.label)."})
    from_scratch: bool = field(default=False, metadata={"help": "A new model from --model_config."})
    freeze_backbone: bool = field(default=False, metadata={"help": "Train the classification head only."})
    causal_mask: bool | None = field(
        default=None,
        metadata={"help": "true: causal attention (the lab's); false: bidirectional. Default: the model's."},
    )
    classifier_pooling: str | None = field(
        default=None,
        metadata={
            "help": "What the head reads: the 'last' non-pad token (the lab's), 'mean', 'first', or 'all_layers' "
            "(mean and max of each layer). Default: the model's.",
            "choices": list(CLASSIFIER_POOLINGS),
        },
    )
    classifier_dropout: float | None = field(
        default=None, metadata={"help": "Dropout before the head. Default: the model's.", "range": KEPT_SHARE}
    )
    gradual_unfreezing: int = field(
        default=0,
        metadata={"help": "ULMFiT: the head alone in epoch 1, then N more layer groups each epoch (0: all at once)."},
    )
    backbone_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "ULMFiT's discriminative rate: the backbone's (the head's: --learning_rate). Default: one rate.",
            "range": NON_NEGATIVE,
        },
    )
    # LP-FT's probe: a logistic regression fitted to convergence on the frozen model's features of the training
    # reviews, its L2 strength chosen by --linear_probe_folds-fold cross-validation on them (never on validation).
    head_init: str = field(
        default="random",
        metadata={
            "help": "'linear_probe' (LP-FT): the head starts as a logistic regression on the frozen features "
            "(the classifier itself with --freeze_backbone --num_train_epochs 0).",
            "choices": ["random", "linear_probe"],
        },
    )
    # The frozen backbone's linear-probe classifier (its record with the validation scores, its test predictions),
    # without a second run over the same features.
    save_linear_probe: bool = field(
        default=False,
        metadata={"help": "With linear_probe: also save the probe, unfinetuned, as a run in OUTPUT_DIR/linear_probe."},
    )
    linear_probe_folds: int = field(
        default=5, metadata={"help": "Folds of the probe's cross-validation.", "range": Range(2)}
    )
    max_seq_length: int | None = field(
        default=None,
        metadata={
            "help": "Tokens read of each review, cut to the model's positions (default: all of them).",
            "range": POSITIVE,
        },
    )
    # Half the positions of a random batch of 16 are padding. Unlike --train_sampling_strategy group_by_length, whose
    # batches run longest first, every epoch ends on reviews of any length.
    length_buckets: bool = field(
        default=False, metadata={"help": "Batches of reviews of similar length, in random order (less padding)."}
    )
    # A draw seeded by --data_seed (else --seed), nested (for one seed a budget holds every smaller one's reviews), in
    # the file's order; benchmarks/tfidf_baseline.py --label_budget draws the same reviews.
    label_budget: int | None = field(
        default=None,
        metadata={"help": "Train on N training reviews, half of each label (default: all of them)."},
    )
    max_eval_samples: int | None = field(
        default=None, metadata={"help": "Truncate the validation set (debugging).", "range": POSITIVE}
    )
    max_predict_samples: int | None = field(
        default=None,
        metadata={"help": "Predict only the first N test reviews (debugging, a smoke test).", "range": POSITIVE},
    )
    # The lab's ids: <s> <pad> </s> <unk>, then DATA_DIR/dict.txt. The tokenizer is built from DATA_DIR unless
    # --tokenizer_name_or_path or the model folder has one (so for --lab_raw_text).
    lab_vocabulary: bool = field(
        default=False,
        metadata={"help": "The lab's setting: the pieces as its 50,001 ids (altegrad-lab's)."},
    )
    # A model pretrained on raw text with recipes/pretrain.py --lab_vocabulary has this tokenizer saved beside it.
    lab_raw_text: bool = field(
        default=False,
        metadata={"help": "The lab's 50,001 ids over the detokenized reviews (the altegrad-lab-raw tokenizer)."},
    )


# The Trainer flags -h lists; their defaults are the lab's (its handout's optimization, in the config file of its
# finetuning from the pretrained model), the others Trainer's.
TRAINER_FLAGS = (
    "output_dir",
    "num_train_epochs",
    "max_steps",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "weight_decay",
    "max_grad_norm",
    "per_device_train_batch_size",
    "per_device_eval_batch_size",
    "logging_steps",
    "seed",
    "bf16",
    "use_cpu",
    "resume_from_checkpoint",
)
TRAINER_FLAG_HELPS = {
    "num_train_epochs": "Passes over the reviews.",
    "learning_rate": "AdamW's peak rate.",
    "max_grad_norm": "Gradients clipped to this norm.",
    "per_device_train_batch_size": "Reviews per training batch.",
    "per_device_eval_batch_size": "Reviews per evaluation batch.",
}


def argument_groups(configs: str | os.PathLike | None = None) -> tuple[FlagGroup, ...]:
    """The command line: the task's flags, the model's, then Trainer's (each group under its title in --help).
    `configs`: the recipes' configs/ folder, whose lab's file gives the defaults of the flags it sets (the review
    length, the handout's optimization); None: the model's length and Trainer's own."""
    own = FlagGroup("Sentiment arguments", SentimentArguments)
    if configs is not None:
        length = {"max_seq_length": read_arguments_file(os.path.join(configs, LAB_CONFIG))["max_seq_length"]}
        text = "Tokens read of each review, cut to the model's positions (the lab's)."
        own = FlagGroup("Sentiment arguments", SentimentArguments, helps={"max_seq_length": text}, defaults=length)
    trainer = trainer_group(TRAINER_FLAGS, configs, LAB_CONFIG, "the lab's", **TRAINER_FLAG_HELPS)
    return (own, model_group(DEFAULT_PRESET), trainer)


# --------------------------------------------------------------------------------------------------
# The reviews, the classifier, its scores
# --------------------------------------------------------------------------------------------------
def load_reviews(data_args: SentimentArguments, seed: int) -> DatasetDict:
    """The train, validation and test reviews (SentencePiece pieces with `--lab_vocabulary`, else the text): with
    `--label_budget`, the training reviews of its balanced draw with `seed`; with `--max_eval_samples` and
    `--max_predict_samples`, the first validation and test reviews."""
    raw = data.load_cls_books(data_args.data_dir, detokenize=not data_args.lab_vocabulary)
    if data_args.label_budget is not None:
        raw["train"] = raw["train"].select(data.balanced_subset(raw["train"]["label"], data_args.label_budget, seed))
    for split, limit in (("validation", data_args.max_eval_samples), ("test", data_args.max_predict_samples)):
        if limit is not None:
            raw[split] = raw[split].select(range(min(limit, len(raw[split]))))
    return raw


def _classifier(model_args: ModelArguments, data_args: SentimentArguments, tokenizer, id2label: dict):
    """A new classifier, or a pretrained checkpoint whose LM head is dropped for a fresh classification head."""
    overrides = {
        "is_causal": data_args.causal_mask,
        "classifier_pooling": data_args.classifier_pooling,
        "classifier_dropout": data_args.classifier_dropout,
        "id2label": id2label,
        "label2id": {name: i for i, name in id2label.items()},
    }
    from hf_models import SmallEncoderForSequenceClassification

    model = training.load_or_build_model(
        SmallEncoderForSequenceClassification,
        model_args,
        tokenizer,
        DEFAULT_PRESET,
        from_pretrained=overrides,
        **overrides,
    )
    if data_args.freeze_backbone:
        model.freeze_backbone()
    return model


def compute_metrics() -> Callable[[EvalPrediction], dict]:
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


def write_test_predictions(trainer: Trainer, test_set, metrics: dict) -> None:
    """Test labels are held back: predict them, one label (0 or 1) per line, in the order of the reviews.
    They are predicted shortest first, so that a batch is padded to about its own length, then put back in order."""
    by_length = np.argsort([len(ids) for ids in test_set["input_ids"]], kind="stable")
    sorted_logits = trainer.predict(test_set.select(by_length), metric_key_prefix="test").predictions
    test_predictions = np.empty(len(by_length), dtype=np.int64)
    test_predictions[by_length] = np.argmax(sorted_logits, axis=-1)
    if trainer.is_world_process_zero():
        path = os.path.join(trainer.args.output_dir, TEST_PREDICTIONS)
        atomic_write_text(path, "".join(f"{int(label)}\n" for label in test_predictions))
        metrics["test_predictions_file"] = path
    metrics["test_samples"] = len(test_predictions)


# --------------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------------
def _check_before_training(model_args: ModelArguments, data_args: SentimentArguments, training_args) -> None:
    """Everything the user gave that could fail after training, checked before it: the output folder, the test
    predictions' path (never an input, never a folder), flags that contradict each other."""
    if data_args.data_dir is None:
        raise UsageError("--data_dir is required: the folder with the CLS-FR books files")
    if data_args.from_scratch == bool(model_args.model_name_or_path):
        raise UsageError("give exactly one of --model_name_or_path (pretrained) and --from_scratch")
    if data_args.lab_vocabulary and data_args.lab_raw_text:
        raise UsageError("give at most one of --lab_vocabulary (.spm pieces) and --lab_raw_text (raw reviews)")
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
        architecture=CLASSIFIER,
        task="sentiment",
    )
    data_dir = data_args.data_dir
    names = os.listdir(data_dir) if os.path.isdir(data_dir) else []
    data_files = [("--data_dir", os.path.join(data_dir, name)) for name in names]
    predictions = os.path.join(training_args.output_dir, TEST_PREDICTIONS)
    check_output_file(predictions, data_files, "the test predictions")


def finetune(model_args: ModelArguments, data_args: SentimentArguments, training_args: TrainingArguments) -> dict:
    """Train the classifier, evaluate it every epoch, predict the test reviews, and save the run."""
    started = time.perf_counter()  # the run's wall time, in its record
    _check_before_training(model_args, data_args, training_args)
    if training_args.eval_strategy == IntervalStrategy.NO:
        # The recipe's point is the per-epoch validation curve.
        training_args.eval_strategy = IntervalStrategy.EPOCH
    # --tokenizer_name_or_path, else the model's own; with neither, the lab's vocabulary is built from DATA_DIR.
    vocabulary = (
        "altegrad-lab" if data_args.lab_vocabulary else "altegrad-lab-raw" if data_args.lab_raw_text else "bpe"
    )
    missing = "--from_scratch needs --tokenizer_name_or_path (train one with tokenizer/train_tokenizer.py)"
    tokenizer = resolve_tokenizer(model_args.tokenizer_path, vocabulary, data_dir=data_args.data_dir, missing=missing)
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
    with training_args.main_process_first(desc="tokenization"):  # each review's first `max_length` tokens
        encoded = raw.map(
            lambda batch: tokenizer(batch["text"], truncation=True, max_length=max_length),
            batched=True,
            remove_columns=["text"],
            desc="Tokenizing reviews",
        )
    budget_draw = {"label_budget_seed": draw_seed} if data_args.label_budget is not None else {}
    # ULMFiT's gradual unfreezing, and the backbone's learning rate (its discriminative rate; none: Trainer's optimizer).
    callbacks = []
    backbone_lr = data_args.backbone_learning_rate
    if data_args.gradual_unfreezing:
        callbacks.append(training.GradualUnfreezingCallback(model, data_args.gradual_unfreezing))
        backbone_lr = backbone_lr or training_args.learning_rate  # every group in the optimizer from the start
    optimizer = None if backbone_lr is None else training.discriminative_optimizer(model, training_args, backbone_lr)
    collator = DataCollatorWithPadding(tokenizer)
    probe_metrics = {}
    if data_args.head_init == "linear_probe":
        probe_metrics, probe_validation = linear_probe_head(model, encoded, collator, data_args, training_args)
        if data_args.save_linear_probe:
            run_args, probe = (model_args, data_args, training_args), (probe_metrics, probe_validation)
            save_linear_probe_run(model, encoded, collator, run_args, probe, started)

    trainer, metrics = training.train_model(
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
        optimizer_cls_and_kwargs=optimizer,
    )
    metrics["trainable_parameters"] = trainable
    metrics.update(probe_metrics)
    metrics.update(trainer.evaluate(encoded["validation"]))
    if trainer.is_world_process_zero():  # each review's predicted and gold label, for the intervals
        write_scored_examples(training_args.output_dir, *scorer.scored)
    write_test_predictions(trainer, encoded["test"], metrics)
    return training.finish_run(
        trainer,
        (model_args, data_args, training_args),
        metrics,
        started,
        default_preset=DEFAULT_PRESET,
        task="sentiment",
        objective="classification",
        dataset=DATASET,
        language=LANGUAGE,
        split_sizes={split: len(encoded[split]) for split in encoded},
        max_length=max_length,
        hyperparameters=budget_draw,
    )


# --------------------------------------------------------------------------------------------------
# LP-FT: the head started as a linear probe (`--head_init linear_probe`)
# --------------------------------------------------------------------------------------------------
def linear_probe_head(model, encoded, collator, data_args: SentimentArguments, training_args) -> tuple[dict, tuple]:
    """The head becomes the logistic regression on the frozen features of the training reviews (L2 chosen by
    cross-validation on them). Its validation accuracy, before any finetuning, is reported
    (`linear_probe_validation_accuracy`), never used to choose anything. Returns the metrics and the probe's
    (validation logits, labels)."""
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
    model, encoded, collator, run_args: tuple, probe: tuple[dict, tuple], started: float
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
        **training.model_source(model_args, DEFAULT_PRESET),
        model_size=model_size(model),
        hardware=hardware(training_args),
        wall_time_s=round(time.perf_counter() - started, 2),
        hyperparameters={**hyperparameters, **probe_metrics},
    )
    record.add_evaluation(Evaluation("validation", scores, len(labels), per_epoch=[{"epoch": 0.0, **scores}]))
    record.save(folder)
    logger.info(f"The linear probe alone is saved in {folder} ({scores['accuracy']:.2%} on validation)")


@torch.no_grad()
def head_inputs(
    model: nn.Module, dataset, collator: Callable, batch_size: int = 64
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(features, labels): what `model.classifier` reads for each example of `dataset`, with dropout off, in float32
    on the CPU; the labels the collator gives (`labels`; None for a set without them, such as held-back test
    reviews). The examples go through shortest first, so that a batch is padded to about its own length; the rows
    come back in the dataset's order."""
    captured: list[torch.Tensor] = []
    labels: list[torch.Tensor] = []
    hook = model.classifier.register_forward_pre_hook(lambda module, args: captured.append(args[0].float().cpu()))
    was_training = model.training
    device = next(model.parameters()).device
    by_length = torch.tensor([len(dataset[i]["input_ids"]) for i in range(len(dataset))]).argsort(stable=True)
    model.eval()
    try:
        for start in range(0, len(dataset), batch_size):
            batch = collator([dataset[int(i)] for i in by_length[start : start + batch_size]])
            if "labels" in batch:
                labels.append(batch.pop("labels"))
            model(**{key: value.to(device) for key, value in batch.items()})
    finally:
        hook.remove()
        model.train(was_training)
    order = by_length.argsort()  # row k of the sorted pass is example by_length[k]
    return torch.cat(captured)[order], torch.cat(labels).long()[order] if labels else None


def fit_logistic_regression(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_labels: int,
    c: float,
    max_iter: int = 1000,
    tolerance: float = 1e-12,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight, bias) of a softmax regression minimising mean cross-entropy + ||weight||^2 / (2 c n), by L-BFGS
    from zero (the problem is convex: the start does not matter, and zero makes it deterministic), until a step
    changes the loss or the parameters by less than `tolerance`."""
    features = features.double()
    weight = torch.zeros(num_labels, features.shape[1], dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(num_labels, dtype=torch.float64, requires_grad=True)
    strength = 1.0 / (c * len(features))
    optimizer = torch.optim.LBFGS(
        [weight, bias],
        lr=1.0,
        max_iter=max_iter,
        tolerance_grad=1e-9,
        tolerance_change=tolerance,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = probe_objective(features, labels, weight, bias, strength)
        loss.backward()
        return loss

    optimizer.step(closure)
    return weight.detach(), bias.detach()


def probe_objective(
    features: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, strength: float
) -> torch.Tensor:
    """Mean cross-entropy + strength / 2 * ||weight||^2 (the bias is not penalised)."""
    logits = features @ weight.T + bias
    return nn.functional.cross_entropy(logits, labels) + strength / 2 * weight.pow(2).sum()


def stratified_folds(labels: torch.Tensor, folds: int, seed: int) -> torch.Tensor:
    """A fold number for each example: each label's examples shuffled (by `seed`) and dealt round-robin."""
    generator = torch.Generator().manual_seed(seed)
    fold_of = torch.empty(len(labels), dtype=torch.long)
    for label in labels.unique():
        members = (labels == label).nonzero().flatten()
        members = members[torch.randperm(len(members), generator=generator)]
        fold_of[members] = torch.arange(len(members)) % folds
    return fold_of


def standardise(features: torch.Tensor, reference: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(standardised features, mean, scale) with the mean and scale of `reference`; a constant feature keeps scale 1."""
    mean, scale = reference.mean(0), reference.std(0)
    scale = torch.where(scale > 1e-8, scale, torch.ones_like(scale))
    return (features - mean) / scale, mean, scale


def cross_validate(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_labels: int,
    folds: int,
    seed: int,
    c_grid: Sequence[float] = PROBE_C_GRID,
) -> dict[float, float]:
    """Mean held-out accuracy of each C over stratified folds (each fold standardised on its own training part)."""
    if folds < 2:
        raise UsageError(f"--linear_probe_folds needs at least 2 folds, not {folds}")
    smallest = min(int((labels == label).sum()) for label in labels.unique())
    if smallest < folds:
        raise UsageError(
            f"--linear_probe_folds {folds}: the rarest label has only {smallest} training examples; give fewer folds"
        )
    fold_of = stratified_folds(labels, folds, seed)
    scores = {}
    for c in c_grid:
        correct = 0
        for fold in range(folds):
            held_out = fold_of == fold
            train_x, mean, scale = standardise(features[~held_out], features[~held_out])
            weight, bias = fit_logistic_regression(train_x, labels[~held_out], num_labels, c, tolerance=CV_TOLERANCE)
            test_x = ((features[held_out] - mean) / scale).double()
            correct += int(((test_x @ weight.T + bias).argmax(-1) == labels[held_out]).sum())
        scores[c] = correct / len(labels)
    return scores


def init_head_by_linear_probe(
    model: nn.Module,
    train_dataset,
    collator: Callable,
    folds: int = 5,
    seed: int = 42,
    batch_size: int = 64,
    c_grid: Sequence[float] = PROBE_C_GRID,
) -> dict[str, float]:
    """Set `model.classifier` to the logistic regression on the frozen features of `train_dataset` whose C scores
    best in `folds`-fold cross-validation on that set (ties: the smaller C, the stronger regularisation).

    Returns what was chosen: `linear_probe_C`, its `linear_probe_train_cv_accuracy`, the number of folds, and the
    training accuracy of the final fit."""
    features, labels = head_inputs(model, train_dataset, collator, batch_size)
    num_labels = model.classifier.out_features
    scores = cross_validate(features, labels, num_labels, folds, seed, c_grid)
    best = max(scores, key=lambda c: (scores[c], -c))
    if len(scores) > 1 and best in (min(scores), max(scores)):
        logger.warning(
            "Linear probe: the cross-validation chose C=%s, at the edge of the grid %s; the best C may lie beyond it",
            best,
            sorted(scores),
        )
    standardised, mean, scale = standardise(features, features)
    weight, bias = fit_logistic_regression(standardised, labels, num_labels, best)
    # logits = W (x - mean) / scale + b = (W / scale) x + (b - (W / scale) . mean)
    folded_weight = weight / scale.double()
    folded_bias = bias - folded_weight @ mean.double()
    classifier = model.classifier
    with torch.no_grad():
        classifier.weight.copy_(folded_weight.to(classifier.weight.dtype))
        classifier.bias.copy_(folded_bias.to(classifier.bias.dtype))
    train_accuracy = float(((features.double() @ folded_weight.T + folded_bias).argmax(-1) == labels).double().mean())
    logger.info(
        "Linear probe of the head's %d features on %d training examples: %d-fold accuracy by C %s; chose C=%s "
        "(%.2f%%), %.2f%% on the whole training set",
        features.shape[1],
        len(labels),
        folds,
        {c: round(s, 4) for c, s in scores.items()},
        best,
        100 * scores[best],
        100 * train_accuracy,
    )
    return {
        "linear_probe_C": best,
        "linear_probe_train_cv_accuracy": scores[best],
        "linear_probe_folds": folds,
        "linear_probe_train_accuracy": train_accuracy,
    }
