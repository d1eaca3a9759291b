"""The command-line arguments of `recipes/finetune_sentiment.py`, beside `hf_models.tasks.sentiment`."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from hf_models.safety.ranges import KEPT_SHARE, NON_NEGATIVE, POSITIVE, Range
from hf_models.training.arguments import FlagGroup, model_group, read_arguments_file, trainer_group

# The model config's own `ClassifierPooling = Literal[...]`, read from its source: importing the model package would
# double the time of -h.
_CONFIG_SOURCE = Path(__file__).resolve().parent.parent / "small_encoder" / "configuration_small_encoder.py"
CLASSIFIER_POOLINGS = next(
    list(ast.literal_eval(node.value.slice))
    for node in ast.parse(_CONFIG_SOURCE.read_text(encoding="utf-8")).body
    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "ClassifierPooling"
)
DEFAULT_PRESET = "altegrad-lab"  # the model from scratch, unless --model_config names another
# The lab's finetuning from the pretrained model, in the recipes' configs/ folder: the recipe's defaults of the
# Trainer flags and of the length a review is read to.
LAB_CONFIG = "altegrad/course/pretrained.json"


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
