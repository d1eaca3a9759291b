"""CS224N assignment 5 with `Trainer`: knowledge access through pretraining, on the birthplace task
(`recipes/birthplace.py`).

Three steps, as in the course's `run.py`: `pretrain` on wiki.txt (span corruption, or causal LM on paragraph
openings), `finetune` on the training questions, and `evaluate` (greedy-decode the answers and score them, or the
London / most-common baselines). QA examples are `question ⁇ answer ⁇ </s>` with the loss on the answer only;
`predict_answers` generates after `question ⁇` until the next `⁇` (or `</s>`).

`--course_vocabulary` (on every step) runs the course's own setting: its character vocabulary, built from
wiki.txt, with character span corruption, block 128 and 32-character answers (`hf_models/course_settings.py`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import torch
from datasets import concatenate_datasets
from transformers import DataCollatorForSeq2Seq, PreTrainedTokenizerBase, TrainingArguments

from hf_models import SmallEncoderForCausalLM
from hf_models.course_settings import cs224n_char_tokenizer, encode_char_qa, predict_char_answers
from hf_models.course_tokenizers import load_course_tokenizer
from hf_models.data import (
    SpanCorruptionCollator,
    encode_birthplace_qa,
    encode_openings,
    load_birthplace,
    load_birthplace_corpus,
    tokenize_documents,
)
from hf_models.generation import greedy_completions
from hf_models.run_record import Evaluation, RunRecord, model_reference, read_record
from hf_models.tokenization import load_tokenizer, train_bpe_tokenizer
from hf_models.training_utils import (
    ModelArguments,
    RunTimer,
    TrimPaddingCollator,
    check_block_size,
    check_plateau,
    finish_run,
    load_metric,
    load_or_build_model,
    load_run_tokenizer,
    new_record,
    run_task,
    train_model,
    unigram_entropy,
    write_report,
)

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "cs224n-mingpt"
SUBCOMMANDS = ("pretrain", "finetune", "evaluate")
DATASET = "birthplace"
LANGUAGE = "en"


@dataclass
class BirthplaceArguments:
    data_dir: str = field(
        default=None,
        metadata={"help": "Folder with wiki.txt, birth_places_train.tsv, birth_dev.tsv, birth_test_inputs.tsv."},
    )
    variant: str = field(
        default="vanilla",
        metadata={"help": "Attention of a model built from scratch.", "choices": ["vanilla", "synthesizer"]},
    )
    block_size: int | None = field(
        default=None, metadata={"help": "Tokens per sequence. Defaults to the model's max_position_embeddings."}
    )
    tokenizer_vocab_size: int = field(
        default=2000, metadata={"help": "pretrain without --tokenizer_name_or_path: size of the BPE trained on wiki.txt."}
    )
    pretraining_objective: str = field(
        default="span_corruption",
        metadata={
            "help": "pretrain: 'span_corruption' (the course's), or 'openings': causal LM on the first "
            "--opening_tokens tokens of each wiki.txt paragraph, where the birth facts are.",
            "choices": ["span_corruption", "openings"],
        },
    )
    opening_tokens: int = field(default=40, metadata={"help": "pretrain with 'openings': tokens kept per paragraph."})
    pretrain_with_qa: bool = field(
        default=False,
        metadata={
            "help": "pretrain: mix the training QA pairs into the corpus (mixed training): 'question answer' "
            "lines with span corruption, `question ⁇ answer ⁇ </s>` examples with 'openings'."
        },
    )
    eval_split: str = field(
        default="validation",
        metadata={"help": "evaluate: which questions to answer.", "choices": ["validation", "test", "train"]},
    )
    predictions_file: str | None = field(
        default=None, metadata={"help": "evaluate: where to write the predictions (default OUTPUT_DIR/predictions_SPLIT.txt)."}
    )
    london_baseline: bool = field(default=False, metadata={"help": "evaluate: answer 'London' to every question."})
    most_common_baseline: bool = field(
        default=False, metadata={"help": "evaluate: answer the most common training birthplace to every question."}
    )
    max_new_tokens: int = field(default=16, metadata={"help": "evaluate: longest generated answer, in tokens."})
    course_vocabulary: bool = field(
        default=False,
        metadata={
            "help": "CS224N's own setting: its character vocabulary (built from wiki.txt: □ pad = 0, ⁇ mask = 1, "
            "then the sorted characters), character span corruption, QA rows 'question⁇answer⁇', and answers read "
            "from 32 greedily generated characters, between the first and second ⁇. Give it to every subcommand."
        },
    )


def _model(model_args: ModelArguments, bp_args: BirthplaceArguments, tokenizer) -> SmallEncoderForCausalLM:
    return load_or_build_model(
        SmallEncoderForCausalLM, model_args, tokenizer, DEFAULT_PRESET, attention_type=bp_args.variant, is_causal=True
    )


# Arguments that do not apply to a finetuning run (None drops them from the record's hyperparameters).
PRETRAINING_ONLY = dict.fromkeys(("tokenizer_vocab_size", "pretraining_objective", "opening_tokens", "pretrain_with_qa"))


def _record(task: str, objective: str, model_args: ModelArguments, split_sizes: dict, block_size: int) -> RunRecord:
    dropped = {**(PRETRAINING_ONLY if task == "birthplace-qa" else {})}
    if model_args.model_name_or_path:
        dropped["variant"] = None  # the attention of a new model only
    hyperparameters = {**dropped, "block_size": block_size}
    return new_record(
        task, objective, model_args, DEFAULT_PRESET, dataset=DATASET, split_sizes=split_sizes, language=LANGUAGE,
        hyperparameters=hyperparameters,
    )  # fmt: skip


def _require_data_dir(bp_args: BirthplaceArguments) -> None:
    if bp_args.data_dir is None:
        raise ValueError("--data_dir is required")


def qa_texts(dataset: datasets.Dataset) -> list[str]:
    """QA pairs as plain sentences ('Where was X born? Paris'), to mix into a pretraining corpus."""
    return [f"{q} {a}" for q, a in zip(list(dataset["question"]), list(dataset["answer"]), strict=True)]


# --------------------------------------------------------------------------------------------------
# pretrain
# --------------------------------------------------------------------------------------------------
def _tokenizer(model_args: ModelArguments, bp_args: BirthplaceArguments, missing: str) -> PreTrainedTokenizerBase:
    """The run's tokenizer (`--tokenizer_name_or_path`, else the model's): the course's character vocabulary with
    `--course_vocabulary`, else our BPE."""
    if bp_args.course_vocabulary:
        path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
        if path is None:
            raise ValueError(missing)
        return load_course_tokenizer(path)
    return load_run_tokenizer(model_args, missing)


def _pretraining_tokenizer(model_args: ModelArguments, bp_args: BirthplaceArguments, corpus) -> PreTrainedTokenizerBase:
    tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if bp_args.course_vocabulary:
        return cs224n_char_tokenizer(bp_args.data_dir, tokenizer_path)
    if tokenizer_path:
        return load_tokenizer(tokenizer_path)
    # Trained on the pretraining corpus only (never on dev/test); saved with the model at the end.
    logger.info(f"Training a {bp_args.tokenizer_vocab_size}-token BPE tokenizer on the pretraining corpus")
    return train_bpe_tokenizer(corpus["text"], bp_args.tokenizer_vocab_size, show_progress=False)


def pretrain(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    timer = RunTimer()
    _require_data_dir(bp_args)
    corpus = load_birthplace_corpus(bp_args.data_dir)["train"]
    qa_train = load_birthplace(bp_args.data_dir)["train"] if bp_args.pretrain_with_qa else None
    if qa_train is not None and bp_args.pretraining_objective == "span_corruption":
        qa = datasets.Dataset.from_dict({"text": qa_texts(qa_train)})
        corpus = concatenate_datasets([corpus, qa.cast(corpus.features)])
    tokenizer = _pretraining_tokenizer(model_args, bp_args, corpus)
    model = _model(model_args, bp_args, tokenizer)
    block_size = check_block_size(bp_args.block_size, model)

    with training_args.main_process_first(desc="tokenization"):
        if bp_args.pretraining_objective == "openings":
            train_dataset, collator = _openings_dataset(corpus, qa_train, tokenizer, bp_args, block_size)
        else:
            train_dataset = tokenize_documents(corpus, tokenizer)
            # A fresh span corruption of every paragraph at every batch (CS224N's CharCorruptionDataset); the
            # columns that are padding in the whole batch are cut (paragraphs are often much shorter than a block).
            collator = TrimPaddingCollator(SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed))
    trainer, metrics = train_model(model, training_args, tokenizer, train_dataset, collator)
    metrics["block_size"] = block_size
    metrics["pretraining_objective"] = bp_args.pretraining_objective
    metrics.update(check_plateau(metrics["final_train_loss"], unigram_entropy(train_dataset, len(tokenizer))))
    trainer.log_metrics("train", metrics)
    record = _record(
        "birthplace-pretraining", bp_args.pretraining_objective, model_args, {"train": len(train_dataset)}, block_size
    )
    return finish_run(trainer, (model_args, bp_args, training_args), metrics, timer, record)


def _openings_dataset(corpus, qa_train, tokenizer, bp_args: BirthplaceArguments, block_size: int):
    """Paragraph openings (plus, for mixed training, the QA pairs with the loss on every token) and their
    collator, which pads inputs with <pad> and labels with -100."""
    openings = corpus.map(
        encode_openings,
        batched=True,
        remove_columns=corpus.column_names,
        fn_kwargs={"tokenizer": tokenizer, "max_tokens": min(bp_args.opening_tokens, block_size - 1)},
        desc="Paragraph openings",
    )
    if qa_train is not None:
        qa = qa_train.map(
            encode_birthplace_qa,
            batched=True,
            remove_columns=qa_train.column_names,
            fn_kwargs={"tokenizer": tokenizer, "block_size": block_size},
        )
        qa = qa.map(lambda example: {"labels": example["input_ids"]}).cast(openings.features)
        openings = concatenate_datasets([openings, qa])
    return openings, DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)


# --------------------------------------------------------------------------------------------------
# finetune
# --------------------------------------------------------------------------------------------------
def finetune(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    timer = RunTimer()
    _require_data_dir(bp_args)
    tokenizer = _tokenizer(
        model_args, bp_args, "finetune needs --model_name_or_path (pretrained) or --tokenizer_name_or_path (from scratch)"
    )
    if not model_args.model_name_or_path:
        logger.info("No --model_name_or_path: finetuning a model trained from scratch (no pretraining)")
    model = _model(model_args, bp_args, tokenizer)
    block_size = check_block_size(bp_args.block_size, model)

    qa = load_birthplace(bp_args.data_dir)
    qa.pop("test")  # questions only: nothing to learn from
    with training_args.main_process_first(desc="tokenization"):
        encoded = qa.map(
            encode_char_qa if bp_args.course_vocabulary else encode_birthplace_qa,
            batched=True,
            remove_columns=["question", "answer"],
            fn_kwargs={"tokenizer": tokenizer, "block_size": block_size},
        )
    trainer, metrics = train_model(
        model,
        training_args,
        tokenizer,
        encoded["train"],
        # Pads inputs with <pad> and labels with -100, so that padding never enters the loss.
        DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100),
        # Dev loss on the answer tokens, for the curves; accuracy comes from `evaluate`.
        encoded["validation"] if training_args.eval_strategy != "no" else None,
    )
    metrics["block_size"] = block_size
    trainer.log_metrics("train", metrics)
    metrics["pretrained_from"] = model_args.model_name_or_path
    record = _record("birthplace-qa", "qa", model_args, {s: len(encoded[s]) for s in encoded}, block_size)
    return finish_run(trainer, (model_args, bp_args, training_args), metrics, timer, record)


# --------------------------------------------------------------------------------------------------
# evaluate
# --------------------------------------------------------------------------------------------------
def predict_answers(
    model: SmallEncoderForCausalLM,
    tokenizer: PreTrainedTokenizerBase,
    questions: list[str],
    block_size: int | None = None,
    batch_size: int = 64,
    max_new_tokens: int = 16,
) -> list[str]:
    """Greedy-decode the answer to each question: generate after `question ⁇` until `⁇` or `</s>`."""
    block_size = block_size or model.config.max_position_embeddings
    stop_ids = [tokenizer.sep_token_id, tokenizer.eos_token_id]
    prompts = encode_birthplace_qa({"question": questions}, tokenizer, block_size, prompt_only=True)["input_ids"]
    answers = []
    for row in greedy_completions(
        model, tokenizer, prompts, block_size, max_new_tokens, batch_size, eos_token_id=stop_ids
    ):
        stop = next((i for i, token in enumerate(row) if token in stop_ids), len(row))
        answers.append(tokenizer.decode(row[:stop], skip_special_tokens=True).strip())
    return answers


def _predictions(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args, qa) -> tuple[list, str]:
    """The answers to the questions of `--eval_split` and where they come from (a model, or a baseline)."""
    questions = list(qa[bp_args.eval_split]["question"])
    if bp_args.london_baseline:
        return ["London"] * len(questions), "london_baseline"
    if bp_args.most_common_baseline:
        constant, _ = Counter(list(qa["train"]["answer"])).most_common(1)[0]
        return [constant] * len(questions), "most_common_baseline"
    missing = "evaluate needs --model_name_or_path, or --london_baseline / --most_common_baseline"
    if model_args.model_name_or_path is None:
        raise ValueError(missing)
    tokenizer = _tokenizer(model_args, bp_args, missing)
    model = SmallEncoderForCausalLM.from_pretrained(model_args.model_name_or_path, dtype=torch.float32)
    model.to("cpu" if training_args.use_cpu or not torch.cuda.is_available() else "cuda")
    predictions = (predict_char_answers if bp_args.course_vocabulary else predict_answers)(
        model,
        tokenizer,
        questions,
        block_size=bp_args.block_size,
        batch_size=training_args.per_device_eval_batch_size,
        **({} if bp_args.course_vocabulary else {"max_new_tokens": bp_args.max_new_tokens}),
    )
    return predictions, model_args.model_name_or_path


def _record_evaluation(output_dir: str, bp_args: BirthplaceArguments, source: str, metrics: dict, timer) -> None:
    """Add the scores to the run record of `output_dir` (the model's own folder, usually), or start one there."""
    baseline = source if source.endswith("_baseline") else None
    record = read_record(output_dir) or RunRecord(
        task="birthplace-evaluation",
        objective="qa",
        dataset=DATASET,
        language=LANGUAGE,
        evaluated_model=None if baseline else model_reference(source),
        wall_time_s=timer.seconds,
    )
    scores = {"exact_match": metrics["exact_match"]}
    record.add_evaluation(Evaluation(bp_args.eval_split, scores, metrics["total"], baseline=baseline))
    record.save(output_dir)


def evaluate_answers(
    model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments
) -> dict:
    timer = RunTimer()
    _require_data_dir(bp_args)
    qa = load_birthplace(bp_args.data_dir)
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

    output_dir = training_args.output_dir if _output_dir_given(training_args) else None
    predictions_file = bp_args.predictions_file or (
        os.path.join(output_dir, f"predictions_{bp_args.eval_split}.txt") if output_dir else None
    )
    if predictions_file and training_args.process_index == 0:
        Path(predictions_file).parent.mkdir(parents=True, exist_ok=True)
        # One line per question; a newline inside a generated answer would shift every later line.
        Path(predictions_file).write_text("".join(p.replace("\n", " ") + "\n" for p in predictions), encoding="utf-8")
        metrics["predictions_file"] = predictions_file
    if output_dir and training_args.process_index == 0:
        report = os.path.join(output_dir, f"report_evaluate_{bp_args.eval_split}.json")
        write_report(training_args, (model_args, bp_args, training_args), metrics, timer.seconds, path=report)
        if "exact_match" in metrics:
            _record_evaluation(output_dir, bp_args, source, metrics, timer)
    return metrics


def _output_dir_given(training_args: TrainingArguments) -> bool:
    # TrainingArguments falls back to "trainer_output" when --output_dir is omitted.
    return bool(training_args.output_dir) and training_args.output_dir != "trainer_output"


def main(args: Sequence[str] | None = None) -> dict:
    """`recipes/birthplace.py {pretrain|finetune|evaluate} --data_dir DIR [options]`."""
    args = list(sys.argv[1:] if args is None else args)
    if not args or args[0] not in SUBCOMMANDS:
        raise SystemExit(f"usage: birthplace.py {{{'|'.join(SUBCOMMANDS)}}} --data_dir DIR [options]; -h for help")
    step = {"pretrain": pretrain, "finetune": finetune, "evaluate": evaluate_answers}[args[0]]
    return run_task(step, BirthplaceArguments, args[1:])
