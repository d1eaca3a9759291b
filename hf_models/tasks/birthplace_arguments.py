"""The command-line arguments of `recipes/birthplace.py`, beside `hf_models.tasks.birthplace`: one dataclass for the
three steps, of which each subcommand takes only the fields it uses (`subcommand_groups`), and the checks of the data
folder that every step reads."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hf_models.data.augmentation import augment_forms
from hf_models.safety.ranges import NON_NEGATIVE, POSITIVE, TOKEN_ID_LIMIT, Range
from hf_models.textio import UsageError
from hf_models.training.arguments import (
    FlagGroup,
    ModelArguments,
    model_group,
    parse_args,
    setup_run,
    trainer_group,
)

DEFAULT_PRESET = "cs224n-mingpt"
SUBCOMMANDS = ("pretrain", "finetune", "evaluate")


@dataclass
class BirthplaceArguments:
    data_dir: str = field(
        default=None,
        metadata={"help": "Folder of wiki.txt and the birth_*.tsv question files."},
    )
    block_size: int | None = field(
        default=None, metadata={"help": "Tokens per sequence; default: the model's positions.", "range": POSITIVE}
    )
    tokenizer_vocab_size: int = field(
        default=2000,
        metadata={
            "help": "Without --tokenizer_name_or_path (pretrain; finetune from scratch): size of the BPE trained "
            "on wiki.txt.",
            "range": Range(1, TOKEN_ID_LIMIT, high_open=True),
        },
    )
    pretraining_objective: str = field(
        default="span_corruption",
        metadata={
            "help": "pretrain: 'span_corruption' (the course's), or 'openings': causal LM on each paragraph's first "
            "--opening_tokens tokens, where the birth facts are.",
            "choices": ["span_corruption", "openings"],
        },
    )
    opening_tokens: int = field(
        default=40, metadata={"help": "pretrain with 'openings': tokens kept per paragraph.", "range": POSITIVE}
    )
    pretrain_with_qa: bool = field(
        default=False,
        metadata={
            "help": "pretrain: mix the training QA pairs into the corpus (as text with span corruption, as QA rows "
            "with 'openings')."
        },
    )
    # Knowledge augmentation (`hf_models.data.augmentation`): built from the paragraph's own text only; the tokenizer
    # is trained on the paragraphs without them.
    augment: str = field(
        default="",
        metadata={
            "help": "pretrain: comma-separated forms of each paragraph added to the corpus: 'name_first' (each "
            "sentence starts with the name), 'opening' (the first sentence alone)."
        },
    )
    eval_split: str = field(
        default="validation",
        metadata={"help": "evaluate: which questions to answer.", "choices": ["validation", "test", "train"]},
    )
    predictions_file: str | None = field(
        default=None,
        metadata={"help": "evaluate: where to write the predictions (default OUTPUT_DIR/predictions_SPLIT.txt)."},
    )
    london_baseline: bool = field(default=False, metadata={"help": "evaluate: answer 'London' to every question."})
    most_common_baseline: bool = field(
        default=False, metadata={"help": "evaluate: answer the most common training birthplace to every question."}
    )
    max_new_tokens: int = field(
        default=16, metadata={"help": "evaluate: longest generated answer, in tokens.", "range": POSITIVE}
    )
    max_predict_samples: int | None = field(
        default=None,
        metadata={
            "help": "evaluate: answer only the first N questions of --eval_split (debugging, a smoke test).",
            "range": POSITIVE,  # 0: nothing scored (a division by zero in the report)
        },
    )
    # QA rows become `recitation </s> question ⁇ answer ⁇ </s>`: the recitation is the first N tokens of the person's
    # wiki.txt paragraph in training, and what the model writes from the name `Name.` when it answers (with
    # --pretrain_with_qa, in the mixed QA rows too).
    recite_tokens: int = field(
        default=0,
        metadata={
            "help": "Recite, then answer (our BPE; 0: off): QA rows start with the first N tokens of the person's "
            "paragraph, written from the name. Use the pretraining's --opening_tokens; the run record keeps it "
            "for evaluate and the app.",
            "range": NON_NEGATIVE,
        },
    )
    # The span: a run of words within a clause, no longer than the longest training answer, capitalized if they all
    # are. A question whose recitation has no such span is answered by generation.
    answer_from_recitation: bool = field(
        default=False,
        metadata={
            "help": "With --recite_tokens: answer with the span of the model's recitation that it scores highest, "
            "shaped like the training answers, instead of generating (kept by the run record)."
        },
    )
    # The characters of wiki.txt (□ pad = 0, ⁇ mask = 1, then the sorted characters); answers are read from 32
    # greedily generated characters, between the first and second ⁇.
    course_vocabulary: bool = field(
        default=False,
        metadata={
            "help": "pretrain: CS224N's own setting: its character vocabulary and span corruption, "
            "'question⁇answer⁇' rows, 32-character answers. Saved with the model: finetune and evaluate take it "
            "from its tokenizer."
        },
    )

    def __post_init__(self) -> None:  # a wrong --augment fails before the tokenizer and the model are built
        augment_forms(self.augment)
        if self.recite_tokens < 0:
            raise ValueError(f"--recite_tokens must be 0 (off) or positive, got {self.recite_tokens}")
        if self.recite_tokens and self.course_vocabulary:
            raise ValueError(
                "--recite_tokens is for our BPE; the course's characters (--course_vocabulary) answer directly"
            )
        if self.answer_from_recitation and not self.recite_tokens:
            raise ValueError("--answer_from_recitation chooses the answer in the recitation: it needs --recite_tokens")


# What the task's run records name.
DATASET = "birthplace"
LANGUAGE = "en"


def check_answer_source(model_name_or_path: str | None, bp_args: BirthplaceArguments) -> None:
    """`evaluate` scores one source of answers: a model, or one baseline, never a silent choice between them."""
    baselines = [
        flag
        for flag, given in (
            ("--london_baseline", bp_args.london_baseline),
            ("--most_common_baseline", bp_args.most_common_baseline),
        )
        if given
    ]
    if len(baselines) > 1 or (baselines and model_name_or_path):
        given = " and ".join([*(["--model_name_or_path"] if model_name_or_path else []), *baselines])
        raise UsageError(f"evaluate scores one source of answers, but got {given}: give one of them")


def require_data_dir(bp_args: BirthplaceArguments) -> None:
    if bp_args.data_dir is None:
        raise UsageError("--data_dir is required: the folder with wiki.txt and the birth_*.tsv files")


def data_files(bp_args: BirthplaceArguments) -> list[tuple[str, str]]:
    """The data folder and its files, as inputs that no output may replace."""
    folder = Path(bp_args.data_dir)
    files = sorted(folder.iterdir()) if folder.is_dir() else []
    return [("--data_dir", str(folder)), *(("--data_dir", str(f)) for f in files)]


# What each subcommand does (its --help's first line), and the fields it takes.
SUBCOMMAND_HELP = {
    "pretrain": "Pretrain on wiki.txt: the course's span corruption, or causal LM on paragraph openings (ours).",
    "finetune": "Finetune on birth_places_train.tsv, from a pretrained model or from scratch.",
    "evaluate": "Answer the dev (or test) questions by greedy decoding and score them; or a baseline.",
}
_SHARED = ("data_dir", "block_size")
# How the trained model answers: chosen by its training, read from its run record by evaluate.
_ANSWERING = ("recite_tokens", "answer_from_recitation")
SUBCOMMAND_FIELDS = {
    "pretrain": (
        *_SHARED,
        "course_vocabulary",
        "tokenizer_vocab_size",
        "pretraining_objective",
        "opening_tokens",
        "pretrain_with_qa",
        "augment",
        *_ANSWERING,
    ),
    "finetune": (*_SHARED, "tokenizer_vocab_size", *_ANSWERING),
    "evaluate": (
        *_SHARED,
        "eval_split",
        "predictions_file",
        "london_baseline",
        "most_common_baseline",
        "max_new_tokens",
        "max_predict_samples",
    ),
}
# `evaluate` builds no model: no preset, overrides or attention type.
EVALUATE_MODEL_FIELDS = ("model_name_or_path", "tokenizer_name_or_path", "overwrite_output_dir")
EVALUATE_MODEL_HELPS = {"model_name_or_path": "The trained model folder that answers (or a baseline flag)."}
# ... and no Trainer: of TrainingArguments it reads only these.
EVALUATE_TRAINER_FIELDS = ("output_dir", "per_device_eval_batch_size", "seed", "use_cpu", "log_level")
EVALUATE_TRAINER_TITLE = "Trainer arguments (the few of transformers.TrainingArguments that evaluate reads)"
# The Trainer flags each training's -h lists; their defaults are the course's (its handout's optimization, in the
# config file of each step of its own setting), the others Trainer's.
_TRAINING = ("output_dir", "num_train_epochs", "max_steps", "learning_rate", "lr_scheduler_type")
_BATCHES = ("per_device_train_batch_size", "logging_steps", "seed", "bf16", "use_cpu", "resume_from_checkpoint")
TRAINER_FLAGS = {
    "pretrain": (*_TRAINING, "lr_scheduler_kwargs", "warmup_steps", "weight_decay", "adam_beta2", *_BATCHES),
    "finetune": (*_TRAINING, "warmup_steps", "weight_decay", "eval_strategy", "per_device_eval_batch_size", *_BATCHES),
}
# In the recipes' configs/ folder, which the recipe names (`subcommand_groups`).
COURSE_CONFIGS = {
    "pretrain": "cs224n/course/pretrain_vanilla.json",
    "finetune": "cs224n/course/finetune.json",
    "evaluate": "cs224n/course/evaluate.json",
}
TRAINER_FLAG_HELPS = {
    "pretrain": {
        "num_train_epochs": "Passes over the corpus.",
        "per_device_train_batch_size": "Paragraphs per batch.",
    },
    "finetune": {
        "num_train_epochs": "Passes over the questions.",
        "eval_strategy": "When to compute the dev loss: no, steps or epoch.",
        "per_device_train_batch_size": "Questions per training batch.",
        "per_device_eval_batch_size": "Questions per dev batch.",
    },
    "evaluate": {
        "output_dir": "Where the predictions and the report go (none: the score is printed only).",
        "per_device_eval_batch_size": "Questions answered at once.",
        "use_cpu": "Answer on the CPU, even with a GPU.",
    },
}


def subcommand_groups(
    subcommand: str, default_preset: str, configs: str | os.PathLike | None = None
) -> tuple[FlagGroup, ...]:
    """The flag groups of one subcommand: its own birthplace fields, the model's, then Trainer's (for `evaluate`,
    only the ones it reads: a Trainer flag there would change nothing, so it is refused). `configs`: the recipes'
    configs/ folder, whose course file of the subcommand gives the Trainer flags' defaults (None: Trainer's own)."""
    title = f"Birthplace arguments ({subcommand})"
    # "evaluate: which questions to answer." reads "Which questions to answer." under evaluate's own -h.
    prefix = f"{subcommand}: "
    helps = {}
    for spec in dataclasses.fields(BirthplaceArguments):
        if (text := spec.metadata.get("help", "")).startswith(prefix):
            text = text.removeprefix(prefix)
            helps[spec.name] = text[:1].upper() + text[1:]
    own = FlagGroup(title, BirthplaceArguments, SUBCOMMAND_FIELDS[subcommand], helps)
    trainer_helps, config = TRAINER_FLAG_HELPS[subcommand], COURSE_CONFIGS[subcommand]
    if subcommand == "evaluate":
        model = FlagGroup("Model arguments", ModelArguments, EVALUATE_MODEL_FIELDS, EVALUATE_MODEL_HELPS)
        fields, title = EVALUATE_TRAINER_FIELDS, EVALUATE_TRAINER_TITLE
        return (own, model, trainer_group(None, configs, config, title=title, names=fields, **trainer_helps))
    return (
        own,
        model_group(default_preset),
        trainer_group(TRAINER_FLAGS[subcommand], configs, config, "the course's", **trainer_helps),
    )


def main(args: Sequence[str] | None = None, configs: str | os.PathLike | None = None, **parser_kwargs) -> dict:
    """`birthplace.py {pretrain|finetune|evaluate} [CONFIG.json] --data_dir DIR [options]`: the subcommand's step
    on its flags; `configs`, the recipes' configs/ folder, gives the course's defaults (`subcommand_groups`)."""
    args = list(sys.argv[1:] if args is None else args)
    if not args or args[0] not in SUBCOMMANDS:
        raise UsageError(
            f"usage: birthplace.py {{{'|'.join(SUBCOMMANDS)}}} [CONFIG.json] --data_dir DIR [options]; -h for help"
        )
    groups = subcommand_groups(args[0], DEFAULT_PRESET, configs)
    bp_args, model_args, training_args = parse_args(groups, args[1:], **parser_kwargs)
    setup_run(training_args)
    from . import birthplace

    step = {"pretrain": birthplace.pretrain, "finetune": birthplace.finetune, "evaluate": birthplace.evaluate_answers}
    return step[args[0]](model_args, bp_args, training_args)
