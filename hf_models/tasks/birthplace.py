"""CS224N assignment 5 with `Trainer`: knowledge access through pretraining, on the birthplace task
(`recipes/birthplace.py`).

Three steps, as in the course's `run.py`: `pretrain` on wiki.txt (span corruption, or causal LM on paragraph
openings) and `finetune` on the training questions, here, and `evaluate` (greedy-decode the answers and score them,
or the London / most-common baselines: `hf_models.tasks.birthplace_evaluation`); `main` runs one of them. QA
examples are `question ⁇ answer ⁇ </s>` with the loss on the answer only; answers are generated after `question ⁇`
until the next `⁇` (or `</s>`).

`pretrain --course_vocabulary` runs the course's own setting: its character vocabulary, built from wiki.txt, with
character span corruption, block 128 and 32-character answers; the model's tokenizer carries it to `finetune` and
`evaluate`. The settings differ in their tokenizer and their QA format only (`hf_models.tasks.qa_formats`):
`qa_format` chooses the training's from the tokenizer, `answering_format` a trained model's from its tokenizer and
its run record.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import datasets
from datasets import concatenate_datasets
from transformers import DataCollatorForSeq2Seq, PreTrainedTokenizerBase, TrainingArguments

from hf_models import SmallEncoderForCausalLM
from hf_models.data import (
    IGNORE_INDEX,
    SpanCorruptionCollator,
    TrimPaddingCollator,
    augment_forms,
    augmentation_cost,
    augmented_copies,
    encode_openings,
    load_birthplace,
    load_birthplace_corpus,
    tokenize_documents,
)
from hf_models.textio import UsageError
from hf_models.tokenization import BPE, resolve_tokenizer, train_bpe_tokenizer
from hf_models.tokenization.courses import CS224N_CHAR, is_cs224n_char_tokenizer
from hf_models.training import (
    ModelArguments,
    RunTimer,
    check_block_size,
    check_plateau,
    check_run_output,
    finish_run,
    last_or_mean_loss,
    load_or_build_model,
    train_model,
    unigram_entropy,
)

from .birthplace_arguments import (
    DATASET,
    DEFAULT_PRESET,
    LANGUAGE,
    BirthplaceArguments,
    data_files,
    require_data_dir,
)
from .birthplace_arguments import SUBCOMMANDS as SUBCOMMANDS  # noqa: F401  (the recipe's, re-exported)
from .birthplace_arguments import main as main
from .birthplace_evaluation import evaluate_answers as evaluate_answers
from .qa_formats import BPEQAFormat, CourseQAFormat, QAFormat, RecitingQAFormat, answer_shape

logger = logging.getLogger(__name__)


CAUSAL_LM = SmallEncoderForCausalLM.__name__  # what pretrain and finetune train (`check_run_output`)


def _model(model_args: ModelArguments, bp_args: BirthplaceArguments, tokenizer) -> SmallEncoderForCausalLM:
    return load_or_build_model(SmallEncoderForCausalLM, model_args, tokenizer, DEFAULT_PRESET, is_causal=True)


# Arguments of the pretraining only: not hyperparameters of a finetuning run.
PRETRAINING_ONLY = (
    "course_vocabulary",
    "tokenizer_vocab_size",
    "pretraining_objective",
    "opening_tokens",
    "pretrain_with_qa",
    "augment",
)


def _finish(trainer, arguments: tuple, metrics: dict, timer: RunTimer, task: str, objective: str, split_sizes: dict):
    """Save the run, with its record: the pretraining options apply to the pretraining only. The record alone keeps how the model answers (`--recite_tokens`, `--answer_from_recitation`
    with the training answers' shape): `evaluate` and the app read it there."""
    bp_args = arguments[1]
    answering = (
        answer_shape(load_birthplace(bp_args.data_dir)["train"]["answer"]) if bp_args.answer_from_recitation else {}
    )
    not_applicable = PRETRAINING_ONLY if task == "birthplace-qa" else ()
    return finish_run(
        trainer,
        arguments,
        metrics,
        timer,
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
    if is_cs224n_char_tokenizer(tokenizer):
        if bp_args.recite_tokens:
            raise UsageError("--recite_tokens is for our BPE; a model of the course's characters answers directly")
        return CourseQAFormat()
    if bp_args.recite_tokens:
        return RecitingQAFormat(bp_args.recite_tokens, tuple(paragraphs))
    return BPEQAFormat()


def qa_texts(dataset: datasets.Dataset) -> list[str]:
    """QA pairs as plain sentences ('Where was X born? Paris'), to mix into a pretraining corpus."""
    return [f"{q} {a}" for q, a in zip(list(dataset["question"]), list(dataset["answer"]), strict=True)]


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
    timer = RunTimer()
    require_data_dir(bp_args)
    check_run_output(
        model_args, training_args, data_files(bp_args), architecture=CAUSAL_LM, task="birthplace-pretraining"
    )
    corpus = load_birthplace_corpus(bp_args.data_dir)["train"]
    paragraphs = list(corpus["text"])  # wiki.txt alone: the source of the augmented copies and the recitations
    qa_train = load_birthplace(bp_args.data_dir)["train"] if bp_args.pretrain_with_qa else None
    if qa_train is not None and bp_args.recite_tokens and bp_args.pretraining_objective != "openings":
        raise UsageError("--recite_tokens with --pretrain_with_qa needs --pretraining_objective openings")
    if qa_train is not None and bp_args.pretraining_objective == "span_corruption":
        qa = datasets.Dataset.from_dict({"text": qa_texts(qa_train)})
        corpus = concatenate_datasets([corpus, qa.cast(corpus.features)])
    tokenizer = _run_tokenizer(model_args, bp_args, corpus)
    model = _model(model_args, bp_args, tokenizer)
    block_size = check_block_size(bp_args.block_size, model)
    # Knowledge augmentation: after the tokenizer, which never sees the copies (with or without them, one tokenizer).
    corpus, augmentation = _augment(corpus, paragraphs, tokenizer, bp_args, block_size)

    with training_args.main_process_first(desc="tokenization"):
        if bp_args.pretraining_objective == "openings":
            train_dataset, collator = _openings_dataset(corpus, qa_train, paragraphs, tokenizer, bp_args, block_size)
        else:
            train_dataset = tokenize_documents(corpus, tokenizer)
            # A fresh span corruption of every paragraph at every batch (CS224N's CharCorruptionDataset); the
            # columns that are padding in the whole batch are cut (paragraphs are often much shorter than a block).
            collator = TrimPaddingCollator(SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed))
    trainer, metrics = train_model(
        model, training_args, tokenizer, train_dataset, collator, task="birthplace-pretraining"
    )
    metrics["block_size"] = block_size
    metrics["pretraining_objective"] = bp_args.pretraining_objective
    metrics.update(augmentation)
    metrics.update(check_plateau(last_or_mean_loss(metrics), unigram_entropy(train_dataset, len(tokenizer))))
    arguments = (model_args, bp_args, training_args)
    objective = bp_args.pretraining_objective
    return _finish(
        trainer, arguments, metrics, timer, "birthplace-pretraining", objective, {"train": len(train_dataset)}
    )


def _augment(corpus, paragraphs: list[str], tokenizer, bp_args: BirthplaceArguments, block_size: int):
    """The corpus followed by the `--augment` copies of its paragraphs, and their cost (none without the option:
    the corpus is returned as it is)."""
    forms = augment_forms(bp_args.augment)
    if not forms:
        return corpus, {}
    openings = bp_args.pretraining_objective == "openings"
    copies = augmented_copies(paragraphs, forms)
    cost = augmentation_cost(
        paragraphs, copies, tokenizer, min(bp_args.opening_tokens, block_size - 1) if openings else None
    )
    added = datasets.Dataset.from_dict({"text": [text for form in forms for text in copies[form]]})
    return concatenate_datasets([corpus, added.cast(corpus.features)]), cost


def _openings_dataset(corpus, qa_train, paragraphs, tokenizer, bp_args: BirthplaceArguments, block_size: int):
    """Paragraph openings (plus, for mixed training, the QA rows of the run's format, with the loss on every token)
    and their collator, which pads inputs with <pad> and labels with `IGNORE_INDEX`."""
    openings = corpus.map(
        encode_openings,
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
        openings = concatenate_datasets([openings, qa])
    return openings, DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE_INDEX)


# --------------------------------------------------------------------------------------------------
# finetune
# --------------------------------------------------------------------------------------------------
def finetune(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    timer = RunTimer()
    require_data_dir(bp_args)
    check_run_output(model_args, training_args, data_files(bp_args), architecture=CAUSAL_LM, task="birthplace-qa")
    # Our BPE, or the course's characters of a course model (its vocabulary comes with its tokenizer); no pretraining
    # and no tokenizer: the BPE `pretrain` would train, on wiki.txt alone.
    corpus = load_birthplace_corpus(bp_args.data_dir)["train"]
    tokenizer = _run_tokenizer(model_args, bp_args, corpus)
    paragraphs = list(corpus["text"]) if bp_args.recite_tokens else []
    qa_rows = qa_format(bp_args, tokenizer, paragraphs)
    if not model_args.model_name_or_path:
        logger.info("No --model_name_or_path: finetuning a model trained from scratch (no pretraining)")
    model = _model(model_args, bp_args, tokenizer)
    block_size = check_block_size(bp_args.block_size, model)

    qa = load_birthplace(bp_args.data_dir)
    qa.pop("test")  # questions only: nothing to learn from
    with training_args.main_process_first(desc="tokenization"):
        encoded = datasets.DatasetDict(
            {
                split: qa[split].map(
                    qa_rows.encode,
                    batched=True,
                    remove_columns=["question", "answer"],
                    fn_kwargs={"tokenizer": tokenizer, "block_size": block_size},
                )
                for split in qa
            }
        )
    trainer, metrics = train_model(
        model,
        training_args,
        tokenizer,
        encoded["train"],
        # Pads inputs with <pad> and labels with IGNORE_INDEX, so that padding never enters the loss.
        DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE_INDEX),
        # Dev loss on the answer tokens, for the curves; accuracy comes from `evaluate`.
        encoded["validation"] if training_args.eval_strategy != "no" else None,
        task="birthplace-qa",
    )
    metrics["block_size"] = block_size
    metrics["pretrained_from"] = model_args.model_name_or_path
    split_sizes = {split: len(encoded[split]) for split in encoded}
    return _finish(trainer, (model_args, bp_args, training_args), metrics, timer, "birthplace-qa", "qa", split_sizes)
