"""CS224N assignment 5 with `Trainer`: knowledge access through pretraining, on the birthplace task
(`recipes/birthplace.py`).

Three steps, as in the course's `run.py`, each a function of the parsed arguments: `pretrain` on wiki.txt (span
corruption, or causal LM on paragraph openings), `finetune` on the training questions, and `evaluate_answers`
(greedy-decode the answers and score them by exact match, or the London / most-common baselines); `main` runs one
of them. QA examples are `question ⁇ answer ⁇ </s>` with the loss on the answer only; answers are generated after
`question ⁇` until the next `⁇` (or `</s>`).

`pretrain --course_vocabulary` runs the course's own setting: its character vocabulary, built from wiki.txt, with
character span corruption, block 128 and 32-character answers; the model's tokenizer carries it to `finetune` and
`evaluate`. The settings differ in their tokenizer and their QA format only (`hf_models.tasks.birthplace_qa`):
`qa_format` chooses the training's from the tokenizer, `answering_format` a trained model's from its tokenizer and
its run record.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from transformers import DataCollatorForSeq2Seq, PreTrainedTokenizerBase, TrainingArguments

import hf_models
from hf_models import data, training
from hf_models.data.augmentation import augment_forms
from hf_models.metrics import load_metric, write_scored_examples
from hf_models.run_record import Evaluation, RunRecord, model_reference, read_record, updating_record, write_run_card
from hf_models.safety import check_output_file, removing_what_fails
from hf_models.safety.ranges import NON_NEGATIVE, POSITIVE, TOKEN_ID_LIMIT, Range
from hf_models.textio import UsageError, atomic_write_text
from hf_models.tokenization import BPE, resolve_tokenizer, train_bpe_tokenizer
from hf_models.tokenization.courses import CS224N_CHAR, is_cs224n_char_tokenizer
from hf_models.training.arguments import (
    FlagGroup,
    ModelArguments,
    check_model_folder,
    check_run_output,
    model_group,
    trainer_group,
)

if TYPE_CHECKING:  # the QA formats (read with the training stack) and the model: imported by a run, not for -h
    from transformers import PreTrainedModel

    from .birthplace_qa import QAFormat

logger = logging.getLogger(__name__)

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
# Arguments of the pretraining only: not hyperparameters of a finetuning run.
PRETRAINING_ONLY = (
    "course_vocabulary",
    "tokenizer_vocab_size",
    "pretraining_objective",
    "opening_tokens",
    "pretrain_with_qa",
    "augment",
)
SUBCOMMAND_FIELDS = {
    "pretrain": (*_SHARED, *PRETRAINING_ONLY, *_ANSWERING),
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


# What pretrain and finetune train, by name: the checks before a run (`check_run_output`) import no model
# (tests/test_help.py holds the name to the class's).
CAUSAL_LM = "SmallEncoderForCausalLM"


def _model(model_args: ModelArguments, bp_args: BirthplaceArguments, tokenizer) -> PreTrainedModel:
    causal_lm = getattr(hf_models, CAUSAL_LM)
    return training.load_or_build_model(causal_lm, model_args, tokenizer, DEFAULT_PRESET, is_causal=True)


def _finish(trainer, arguments: tuple, metrics: dict, started: float, task: str, objective: str, split_sizes: dict):
    """Save the run, with its record: the pretraining options apply to the pretraining only. The record alone keeps
    how the model answers (`--recite_tokens`, `--answer_from_recitation` with the training answers' shape):
    `evaluate` and the app read it there."""
    from .birthplace_qa import answer_shape

    bp_args = arguments[1]
    answering = (
        answer_shape(data.load_birthplace(bp_args.data_dir)["train"]["answer"])
        if bp_args.answer_from_recitation
        else {}
    )
    not_applicable = PRETRAINING_ONLY if task == "birthplace-qa" else ()
    return training.finish_run(
        trainer,
        arguments,
        metrics,
        started,
        default_preset=DEFAULT_PRESET,
        task=task,
        objective=objective,
        dataset=DATASET,
        split_sizes=split_sizes,
        language=LANGUAGE,
        max_length=metrics["block_size"],
        hyperparameters={"block_size": metrics["block_size"], **answering},
        not_applicable=not_applicable,
    )


def qa_format(bp_args: BirthplaceArguments, tokenizer, paragraphs: Sequence[str] = ()) -> QAFormat:
    """The training's QA format: the course's when the tokenizer holds its characters (`pretrain
    --course_vocabulary` builds them; the model's tokenizer carries them on), else our BPE reciting with
    `--recite_tokens` (`paragraphs`, wiki.txt, give the training rows their openings), else our BPE. A trained model
    answers in the format its tokenizer and run record name (`answering_format`)."""
    from .birthplace_qa import BPEQAFormat, CourseQAFormat, RecitingQAFormat

    if is_cs224n_char_tokenizer(tokenizer):
        if bp_args.recite_tokens:
            raise UsageError("--recite_tokens is for our BPE; a model of the course's characters answers directly")
        return CourseQAFormat()
    if bp_args.recite_tokens:
        return RecitingQAFormat(bp_args.recite_tokens, tuple(paragraphs))
    return BPEQAFormat()


# --------------------------------------------------------------------------------------------------
# pretrain
# --------------------------------------------------------------------------------------------------
def _run_tokenizer(model_args: ModelArguments, bp_args: BirthplaceArguments, corpus) -> PreTrainedTokenizerBase:
    """The given tokenizer; else the course's characters built from wiki.txt, or our BPE trained on `corpus` only
    (the pretraining corpus, never dev/test), saved with the model at the end."""

    def train() -> PreTrainedTokenizerBase:
        logger.info(f"Training a {bp_args.tokenizer_vocab_size}-token BPE tokenizer on the pretraining corpus")
        return train_bpe_tokenizer(corpus["text"], bp_args.tokenizer_vocab_size, show_progress=False)

    vocabulary = CS224N_CHAR if bp_args.course_vocabulary else BPE
    return resolve_tokenizer(
        model_args.tokenizer_path, vocabulary, data_dir=bp_args.data_dir, train=train, accept_course=True
    )


def pretrain(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    import datasets  # the training stack: imported by a run, not for -h

    started = time.perf_counter()  # the run's wall time, in its record
    require_data_dir(bp_args)
    check_run_output(
        model_args, training_args, data_files(bp_args), architecture=CAUSAL_LM, task="birthplace-pretraining"
    )
    corpus = data.load_birthplace_corpus(bp_args.data_dir)["train"]
    paragraphs = list(corpus["text"])  # wiki.txt alone: the source of the augmented copies and the recitations
    qa_train = data.load_birthplace(bp_args.data_dir)["train"] if bp_args.pretrain_with_qa else None
    if qa_train is not None and bp_args.recite_tokens and bp_args.pretraining_objective != "openings":
        raise UsageError("--recite_tokens with --pretrain_with_qa needs --pretraining_objective openings")
    if qa_train is not None and bp_args.pretraining_objective == "span_corruption":
        # The QA pairs as plain sentences ('Where was X born? Paris').
        pairs = zip(list(qa_train["question"]), list(qa_train["answer"]), strict=True)
        qa = datasets.Dataset.from_dict({"text": [f"{question} {answer}" for question, answer in pairs]})
        corpus = datasets.concatenate_datasets([corpus, qa.cast(corpus.features)])
    tokenizer = _run_tokenizer(model_args, bp_args, corpus)
    model = _model(model_args, bp_args, tokenizer)
    block_size = training.check_block_size(bp_args.block_size, model)
    # Knowledge augmentation: after the tokenizer, which never sees the copies (with or without them, one tokenizer).
    corpus, augmentation = _augment(corpus, paragraphs, tokenizer, bp_args, block_size)

    with training_args.main_process_first(desc="tokenization"):
        if bp_args.pretraining_objective == "openings":
            train_dataset, collator = _openings_dataset(corpus, qa_train, paragraphs, tokenizer, bp_args, block_size)
        else:
            train_dataset = data.tokenize_documents(corpus, tokenizer)
            # A fresh span corruption of every paragraph at every batch (CS224N's CharCorruptionDataset); the
            # columns that are padding in the whole batch are cut (paragraphs are often much shorter than a block).
            collator = data.TrimPaddingCollator(
                data.SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed)
            )
    trainer, metrics = training.train_model(
        model, training_args, tokenizer, train_dataset, collator, task="birthplace-pretraining"
    )
    metrics["block_size"] = block_size
    metrics["pretraining_objective"] = bp_args.pretraining_objective
    metrics.update(augmentation)
    metrics.update(
        training.check_plateau(
            training.last_or_mean_loss(metrics), training.unigram_entropy(train_dataset, len(tokenizer))
        )
    )
    arguments = (model_args, bp_args, training_args)
    objective = bp_args.pretraining_objective
    return _finish(
        trainer, arguments, metrics, started, "birthplace-pretraining", objective, {"train": len(train_dataset)}
    )


def _augment(corpus, paragraphs: list[str], tokenizer, bp_args: BirthplaceArguments, block_size: int):
    """The corpus followed by the `--augment` copies of its paragraphs, and their cost (none without the option:
    the corpus is returned as it is)."""
    import datasets  # the training stack: imported by a run, not for -h

    forms = augment_forms(bp_args.augment)
    if not forms:
        return corpus, {}
    openings = bp_args.pretraining_objective == "openings"
    copies = data.augmented_copies(paragraphs, forms)
    cost = data.augmentation_cost(
        paragraphs, copies, tokenizer, min(bp_args.opening_tokens, block_size - 1) if openings else None
    )
    added = datasets.Dataset.from_dict({"text": [text for form in forms for text in copies[form]]})
    return datasets.concatenate_datasets([corpus, added.cast(corpus.features)]), cost


def _openings_dataset(corpus, qa_train, paragraphs, tokenizer, bp_args: BirthplaceArguments, block_size: int):
    """Paragraph openings (plus, for mixed training, the QA rows of the run's format, with the loss on every token)
    and their collator, which pads inputs with <pad> and labels with `data.IGNORE_INDEX`."""
    import datasets  # the training stack: imported by a run, not for -h

    openings = corpus.map(
        data.encode_openings,
        batched=True,
        remove_columns=corpus.column_names,
        fn_kwargs={"tokenizer": tokenizer, "max_tokens": min(bp_args.opening_tokens, block_size - 1)},
        desc="Paragraph openings",
    )
    if qa_train is not None:
        qa_rows = qa_format(bp_args, tokenizer, paragraphs)
        rows = {
            "batched": True,
            "remove_columns": qa_train.column_names,
            "fn_kwargs": {"tokenizer": tokenizer, "block_size": block_size},
        }
        qa = qa_train.map(qa_rows.encode, **rows)
        qa = qa.map(lambda example: {"labels": example["input_ids"]}).cast(openings.features)
        openings = datasets.concatenate_datasets([openings, qa])
    return openings, DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=data.IGNORE_INDEX)


# --------------------------------------------------------------------------------------------------
# finetune
# --------------------------------------------------------------------------------------------------
def finetune(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    started = time.perf_counter()  # the run's wall time, in its record
    require_data_dir(bp_args)
    check_run_output(model_args, training_args, data_files(bp_args), architecture=CAUSAL_LM, task="birthplace-qa")
    # Our BPE, or the course's characters of a course model (its vocabulary comes with its tokenizer); no pretraining
    # and no tokenizer: the BPE `pretrain` would train, on wiki.txt alone.
    corpus = data.load_birthplace_corpus(bp_args.data_dir)["train"]
    tokenizer = _run_tokenizer(model_args, bp_args, corpus)
    paragraphs = list(corpus["text"]) if bp_args.recite_tokens else []
    qa_rows = qa_format(bp_args, tokenizer, paragraphs)
    if not model_args.model_name_or_path:
        logger.info("No --model_name_or_path: finetuning a model trained from scratch (no pretraining)")
    model = _model(model_args, bp_args, tokenizer)
    block_size = training.check_block_size(bp_args.block_size, model)

    qa = data.load_birthplace(bp_args.data_dir)
    qa.pop("test")  # questions only: nothing to learn from
    with training_args.main_process_first(desc="tokenization"):
        rows = {"tokenizer": tokenizer, "block_size": block_size}
        encoded = qa.map(qa_rows.encode, batched=True, remove_columns=["question", "answer"], fn_kwargs=rows)
    trainer, metrics = training.train_model(
        model,
        training_args,
        tokenizer,
        encoded["train"],
        # Pads inputs with <pad> and labels with data.IGNORE_INDEX, so that padding never enters the loss.
        DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=data.IGNORE_INDEX),
        # Dev loss on the answer tokens, for the curves; accuracy comes from `evaluate`.
        encoded["validation"] if training_args.eval_strategy != "no" else None,
        task="birthplace-qa",
    )
    metrics["block_size"] = block_size
    metrics["pretrained_from"] = model_args.model_name_or_path
    split_sizes = {split: len(encoded[split]) for split in encoded}
    return _finish(trainer, (model_args, bp_args, training_args), metrics, started, "birthplace-qa", "qa", split_sizes)


# --------------------------------------------------------------------------------------------------
# evaluate: greedy-decode the answers to the questions of a split, in the format the model was trained to answer in
# (`answering_format`: its tokenizer and its run record), or give a constant baseline's (always "London", or the
# most common training birthplace); score them by exact match, write one prediction per line, and add the score to
# the run record of the output folder.
# --------------------------------------------------------------------------------------------------
def evaluation_device(use_cpu: bool) -> str:
    """Where `evaluate` runs the model: the GPU when there is one, unless `--use_cpu`."""
    return "cpu" if use_cpu or not torch.cuda.is_available() else "cuda"


def _predictions(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args, qa) -> tuple[list, str]:
    """The answers to the questions of `--eval_split` and where they come from (a model, or a baseline)."""
    from hf_models.training.trainer import check_vocabulary

    from .birthplace_qa import answering_format

    questions = list(qa[bp_args.eval_split]["question"])
    if baseline := _baseline_answer(bp_args, qa):
        return [baseline[0]] * len(questions), baseline[1]
    missing = "evaluate needs --model_name_or_path, or --london_baseline / --most_common_baseline"
    if model_args.model_name_or_path is None:
        raise UsageError(missing)
    tokenizer = resolve_tokenizer(model_args.tokenizer_path, BPE, missing=missing, accept_course=True)
    # A causal LM first (a masked LM is refused as such), then how it answers, as its training recorded it.
    model = training.load_pretrained(
        getattr(hf_models, CAUSAL_LM), model_args.model_name_or_path, causal=True, dtype=torch.float32
    )
    answers = answering_format(tokenizer, model_args.model_name_or_path, max_new_tokens=bp_args.max_new_tokens)
    check_vocabulary(tokenizer, model.config.vocab_size, model_args.tokenizer_path, model_args.model_name_or_path)
    training.check_block_size(bp_args.block_size, model)
    model.to(evaluation_device(training_args.use_cpu))
    predictions = answers.predict(
        model,
        tokenizer,
        questions,
        bp_args.block_size,
        training_args.per_device_eval_batch_size,
        where=_question_lines(bp_args),
    )
    return predictions, model_args.model_name_or_path


def _baseline_answer(bp_args: BirthplaceArguments, qa) -> tuple[str, str] | None:
    """The constant answer of `--london_baseline` or `--most_common_baseline` (of the training answers), and the
    baseline's name; None to score the model."""
    if bp_args.london_baseline:
        return "London", "london_baseline"
    if bp_args.most_common_baseline:
        constant, _ = Counter(list(qa["train"]["answer"])).most_common(1)[0]
        return constant, "most_common_baseline"
    return None


def _question_lines(bp_args: BirthplaceArguments):
    """`where(i)`: the `file:line` of question i of `--eval_split` (the loader keeps every non-blank line, in order)."""
    path = Path(bp_args.data_dir) / data.BIRTHPLACE_FILES[bp_args.eval_split]
    lines = [number for number, line in enumerate(data.read_lines(path), start=1) if line.strip()]
    return lambda index: f"{path}:{lines[index]}"


def _record_evaluation(
    output_dir: str, bp_args: BirthplaceArguments, source: str, metrics: dict, seconds: float
) -> None:
    """Add the scores to the run record of `output_dir` (the model's own folder, usually), or start one there."""
    baseline = source if source.endswith("_baseline") else None
    start = partial(
        RunRecord,
        task="birthplace-evaluation",
        objective="qa",
        dataset=DATASET,
        language=LANGUAGE,
        evaluated_model=None if baseline else model_reference(source),
        wall_time_s=seconds,
    )
    with updating_record(output_dir, start) as record:
        scores = {"exact_match": metrics["exact_match"]}
        record.add_evaluation(Evaluation(bp_args.eval_split, scores, metrics["total"], baseline=baseline))
        if os.path.isfile(os.path.join(output_dir, "config.json")):  # a model's folder: its card gains the scores
            record.save(output_dir)
            write_run_card(output_dir)


def _evaluation_outputs(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args) -> tuple:
    """The output folder (None: print only), predictions file and report of `evaluate`, checked before any work:
    they never replace an input file, and earlier predictions or reports are kept unless --overwrite_output_dir. A
    baseline's files carry its name (`predictions_validation_london_baseline.txt`), so that it never replaces a
    model's in the model's folder."""
    # TrainingArguments falls back to "trainer_output" when --output_dir is omitted: print only.
    output_dir = training_args.output_dir if training_args.output_dir not in (None, "", "trainer_output") else None
    name = _output_name(bp_args)
    predictions_file = bp_args.predictions_file or (
        os.path.join(output_dir, f"predictions_{name}.txt") if output_dir else None
    )
    report = os.path.join(output_dir, f"report_evaluate_{name}.json") if output_dir else None
    if bp_args.max_new_tokens <= 0:
        raise UsageError(f"--max_new_tokens {bp_args.max_new_tokens}: give a positive number of tokens")
    # The model's own files; its earlier predictions and reports are outputs, and so are its folders (an evaluation's
    # own, as the grid's eval_tune; checkpoints, which evaluate never reads).
    model_files = []
    if model_args.model_name_or_path and os.path.isdir(model_args.model_name_or_path):
        model_files = [
            ("--model_name_or_path", str(p))
            for p in Path(model_args.model_name_or_path).iterdir()
            if p.is_file() and not p.name.startswith(("predictions", "report"))
        ]
    if output_dir:
        _check_evaluation_folder(output_dir, model_args.model_name_or_path, bp_args.data_dir)
    for path in [p for p in (predictions_file, report) if p]:
        what = "--predictions_file" if path == predictions_file else "the report"
        check_output_file(path, [*data_files(bp_args), *model_files], what, inside=path == report)
        if os.path.exists(path) and not model_args.overwrite_output_dir:
            raise UsageError(
                f"{path} already exists; pick another --output_dir or --predictions_file, or add "
                "--overwrite_output_dir to replace it"
            )
    return output_dir, predictions_file, report


def _check_evaluation_folder(output_dir: str, model: str | None, data_dir: str | None) -> None:
    """`evaluate` writes a report and adds its scores to the run record of `output_dir`: never into the data folder,
    and never into the record of another model than the one evaluated (a baseline's scores may go beside a model's)."""
    folder = Path(output_dir).resolve()
    if data_dir and folder.is_relative_to(Path(data_dir).resolve()):
        raise UsageError(
            f"--output_dir {output_dir} is --data_dir {data_dir} or lies inside it: evaluate never writes into its "
            "data folder; pick another --output_dir (the model's own folder, say)"
        )
    if not model or (os.path.isdir(model) and folder == Path(model).resolve()):
        return
    record = read_record(folder) if folder.is_dir() else None
    if record is not None and record.evaluated_model != model_reference(model):
        whose = f"of {record.evaluated_model}" if record.evaluated_model else f"of another run ({record.task})"
        raise UsageError(
            f"--output_dir {output_dir} holds the run record {whose}: the scores of {model} would be added to it; "
            "give the model's own folder, or a new --output_dir"
        )


def _output_name(bp_args: BirthplaceArguments) -> str:
    """The split, and the baseline's name for a baseline: the stem of the predictions and report files."""
    baseline = "london" if bp_args.london_baseline else "most_common" if bp_args.most_common_baseline else None
    return f"{bp_args.eval_split}_{baseline}_baseline" if baseline else bp_args.eval_split


def evaluate_answers(
    model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments
) -> dict:
    started = time.perf_counter()  # the run's wall time, in its record
    require_data_dir(bp_args)
    check_answer_source(model_args.model_name_or_path, bp_args)
    check_model_folder(model_args)
    output_dir, predictions_file, report = _evaluation_outputs(model_args, bp_args, training_args)
    qa = data.load_birthplace(bp_args.data_dir)
    if bp_args.max_predict_samples is not None:  # the first N questions, as the file orders them
        questions = qa[bp_args.eval_split]
        qa[bp_args.eval_split] = questions.select(range(min(bp_args.max_predict_samples, len(questions))))
    split = qa[bp_args.eval_split]
    predictions, source = _predictions(model_args, bp_args, training_args, qa)
    metrics: dict = {"eval_split": bp_args.eval_split, "predictions_from": source, "num_questions": len(predictions)}
    if "answer" in split.column_names:
        scores = load_metric("exact_match").compute(predictions=predictions, references=list(split["answer"]))
        correct, total = scores["correct"], scores["total"]
        print(f"Correct: {correct} out of {total}: {100.0 * correct / total}%")
        metrics.update(exact_match=scores["exact_match"], correct=correct, total=total)
    else:
        print(f"No answers for the {bp_args.eval_split} split: {len(predictions)} predictions written, not scored")

    if training_args.process_index == 0:
        with removing_what_fails([output_dir], [predictions_file]):  # a disk full at the report leaves nothing new
            if predictions_file:
                # One line per question; a newline inside a generated answer would shift every later line.
                atomic_write_text(predictions_file, "".join(p.replace("\n", " ") + "\n" for p in predictions))
                metrics["predictions_file"] = predictions_file
            if output_dir:
                seconds = round(time.perf_counter() - started, 2)
                training.write_report(
                    training_args, (model_args, bp_args, training_args), metrics, seconds, path=report
                )
                if "exact_match" in metrics:
                    _record_evaluation(output_dir, bp_args, source, metrics, seconds)
                    write_scored_examples(output_dir, predictions, list(split["answer"]), _output_name(bp_args))
    return metrics
