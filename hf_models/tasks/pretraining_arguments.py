"""The command-line arguments of `recipes/pretrain.py`, beside `hf_models.tasks.pretraining`. Its Trainer flags keep
Trainer's own defaults, as run_clm.py's: a setting is a config file (configs/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hf_models.safety.ranges import PERCENT, POSITIVE, Range
from hf_models.training.arguments import FlagGroup, model_group, trainer_group

DEFAULT_PRESET = "altegrad-lab"


@dataclass
class DataTrainingArguments:
    objective: str = field(
        default="clm",
        metadata={
            "help": "Pretraining objective: causal LM, span corruption or masked LM.",
            "choices": ["clm", "span_corruption", "mlm"],
        },
    )
    train_files: list[str] = field(
        default_factory=list,
        metadata={"help": "Text files (plain or .gz) or folders of them; one document per line."},
    )
    validation_files: list[str] | None = field(
        default=None,
        metadata={"help": "Held-out text files. Without them, a share of the training lines is held out."},
    )
    validation_split_percentage: float = field(
        default=5.0,
        metadata={"help": "Percent of the training lines held out when no --validation_files.", "range": PERCENT},
    )
    block_size: int | None = field(
        default=None,
        metadata={
            "help": "Tokens per training sequence. Defaults to min(128, the model's max_position_embeddings).",
            "range": POSITIVE,
        },
    )
    mlm_probability: float = field(
        default=0.15,
        # nothing masked: no loss to learn from
        metadata={"help": "Share of tokens masked for --objective mlm.", "range": Range(0, 1, low_open=True)},
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "Truncate the training set (debugging).", "range": POSITIVE}
    )
    max_eval_samples: int | None = field(
        default=None, metadata={"help": "Truncate the validation set.", "range": POSITIVE}
    )
    preprocessing_num_workers: int | None = field(
        default=None, metadata={"help": "Processes for tokenization.", "range": POSITIVE}
    )
    # The altegrad-lab-raw tokenizer is built from the folder's sentencepiece.french.model and dict.txt unless
    # --tokenizer_name_or_path or the model folder has one. Objective clm only: the lab's vocabulary has no mask token.
    lab_vocabulary: str | None = field(
        default=None,
        metadata={
            "help": "A cls-books folder: pretrain on the lab's 50,001 ids over raw text (the altegrad-lab preset's; "
            "clm only)."
        },
    )
    language: str | None = field(
        default=None, metadata={"help": "ISO code of the corpus language (e.g. fr, en), recorded for the model card."}
    )


# The Trainer flags -h lists (Trainer's defaults; --help_trainer lists them all).
TRAINER_FLAGS = (
    "output_dir",
    "num_train_epochs",
    "max_steps",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "weight_decay",
    "per_device_train_batch_size",
    "per_device_eval_batch_size",
    "logging_steps",
    "seed",
    "bf16",
    "use_cpu",
    "resume_from_checkpoint",
)
TRAINER_FLAG_HELPS = {
    "per_device_train_batch_size": "Blocks per training batch.",
    "per_device_eval_batch_size": "Blocks per evaluation batch.",
}

# The command line: the task's flags, the model's, then Trainer's (each group under its title in --help).
ARGUMENT_GROUPS = (
    FlagGroup("Pretraining arguments", DataTrainingArguments),
    model_group(DEFAULT_PRESET),
    trainer_group(TRAINER_FLAGS, **TRAINER_FLAG_HELPS),
)
