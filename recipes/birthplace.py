#!/usr/bin/env python
"""CS224N assignment 5 with `Trainer`: knowledge access through pretraining, on the birthplace task.

Three subcommands, as in the course's `run.py`:

    # 1. pretrain on wiki.txt with span corruption (trains a BPE tokenizer first unless one is given)
    python recipes/birthplace.py pretrain --variant vanilla --data_dir ../shared/data/birthplace \
        --output_dir runs/birthplace/pretrain --num_train_epochs 200 --learning_rate 6e-3
    # 2. finetune on birth_places_train.tsv, from the pretrained model ...
    python recipes/birthplace.py finetune --data_dir ../shared/data/birthplace \
        --model_name_or_path runs/birthplace/pretrain --output_dir runs/birthplace/finetune
    #    ... or from scratch, with the same tokenizer
    python recipes/birthplace.py finetune --data_dir ../shared/data/birthplace --variant vanilla \
        --tokenizer_name_or_path runs/birthplace/pretrain --output_dir runs/birthplace/scratch
    # 3. greedy-decode the answers to the dev questions and score them
    python recipes/birthplace.py evaluate --data_dir ../shared/data/birthplace \
        --model_name_or_path runs/birthplace/finetune --output_dir runs/birthplace/finetune
    # the always-"London" baseline (5.0% on the real dev set)
    python recipes/birthplace.py evaluate --data_dir ../shared/data/birthplace --london_baseline

`--course_vocabulary` (on every subcommand) runs the course's own setting: its character vocabulary, built from
wiki.txt, with character span corruption, block 128 and 32-character answers (`hf_models/course_settings.py`).

QA examples are `question ⁇ answer ⁇ </s>` with the loss on the answer only; `evaluate` generates after
`question ⁇` until the next `⁇` (or `</s>`), writes one prediction per line and prints
`Correct: X out of Y: Z%`.
"""

import logging
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import torch
import transformers
from datasets import concatenate_datasets
from transformers import DataCollatorForSeq2Seq, PreTrainedTokenizerBase, Trainer, TrainingArguments, set_seed

from hf_models import SmallEncoderForCausalLM
from hf_models.course_settings import cs224n_char_tokenizer, encode_char_qa, predict_char_answers
from hf_models.course_tokenizers import load_course_tokenizer
from hf_models.data import (
    SpanCorruptionCollator,
    encode_birthplace_qa,
    load_birthplace,
    load_birthplace_corpus,
    tokenize_documents,
)
from hf_models.tokenization import load_tokenizer, train_bpe_tokenizer
from hf_models.training_utils import (
    ModelArguments,
    PlotCallback,
    RunTimer,
    TrimPaddingCollator,
    build_config,
    finish_run,
    load_metric,
    parse_args,
    write_report,
)

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "cs224n-mingpt"
SUBCOMMANDS = ("pretrain", "finetune", "evaluate")


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
    pretrain_with_qa: bool = field(
        default=False,
        metadata={"help": "pretrain: add the training QA pairs ('question answer' lines) to the corpus."},
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


def _setup(training_args: TrainingArguments) -> None:
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)]
    )
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    set_seed(training_args.seed)


def _new_model(model_args: ModelArguments, bp_args: BirthplaceArguments, tokenizer) -> SmallEncoderForCausalLM:
    config = build_config(
        model_args.model_config or DEFAULT_PRESET,
        model_args.config_overrides,
        tokenizer,
        attention_type=model_args.attention_type or bp_args.variant,
        is_causal=True,
    )
    return SmallEncoderForCausalLM(config)


def _block_size(bp_args: BirthplaceArguments, model) -> int:
    max_positions = model.config.max_position_embeddings
    if bp_args.block_size is not None and bp_args.block_size > max_positions:
        raise ValueError(f"--block_size {bp_args.block_size} exceeds max_position_embeddings={max_positions}")
    return bp_args.block_size or max_positions


def qa_texts(dataset: datasets.Dataset) -> list[str]:
    """QA pairs as plain sentences ('Where was X born? Paris'), to mix into a pretraining corpus."""
    return [f"{q} {a}" for q, a in zip(list(dataset["question"]), list(dataset["answer"]), strict=True)]


# --------------------------------------------------------------------------------------------------
# pretrain
# --------------------------------------------------------------------------------------------------
def pretrain(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    timer = RunTimer()
    corpus = load_birthplace_corpus(bp_args.data_dir)["train"]
    if bp_args.pretrain_with_qa:
        qa = datasets.Dataset.from_dict({"text": qa_texts(load_birthplace(bp_args.data_dir)["train"])})
        corpus = concatenate_datasets([corpus, qa.cast(corpus.features)])

    tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if bp_args.course_vocabulary:
        tokenizer = cs224n_char_tokenizer(bp_args.data_dir, tokenizer_path)
    elif tokenizer_path is not None:
        tokenizer = load_tokenizer(tokenizer_path)
    else:
        # Trained on the pretraining corpus only (never on dev/test); saved with the model at the end.
        logger.info(f"Training a {bp_args.tokenizer_vocab_size}-token BPE tokenizer on the pretraining corpus")
        tokenizer = train_bpe_tokenizer(corpus["text"], bp_args.tokenizer_vocab_size, show_progress=False)
    if model_args.model_name_or_path:
        model = SmallEncoderForCausalLM.from_pretrained(model_args.model_name_or_path)
    else:
        model = _new_model(model_args, bp_args, tokenizer)
    block_size = _block_size(bp_args, model)

    with training_args.main_process_first(desc="tokenization"):
        train_dataset = tokenize_documents(corpus, tokenizer)
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        processing_class=tokenizer,
        # A fresh span corruption of every paragraph at every batch (CS224N's CharCorruptionDataset); the
        # columns that are padding in the whole batch are cut (paragraphs are often much shorter than a block).
        data_collator=TrimPaddingCollator(SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed)),
        callbacks=[PlotCallback()],
    )
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    metrics = {**result.metrics, "train_samples": len(train_dataset), "block_size": block_size}
    # A short run may log no step at all: fall back to the average loss Trainer returns.
    metrics["final_train_loss"] = _last_logged(trainer, "loss", default=result.training_loss)
    trainer.log_metrics("train", metrics)
    return finish_run(trainer, (model_args, bp_args, training_args), metrics, timer)


def _last_logged(trainer: Trainer, key: str, default: float) -> float:
    return next((entry[key] for entry in reversed(trainer.state.log_history) if key in entry), default)


# --------------------------------------------------------------------------------------------------
# finetune
# --------------------------------------------------------------------------------------------------
def finetune(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments) -> dict:
    timer = RunTimer()
    tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if tokenizer_path is None:
        raise ValueError("finetune needs --model_name_or_path (pretrained) or --tokenizer_name_or_path (from scratch)")
    tokenizer = load_course_tokenizer(tokenizer_path) if bp_args.course_vocabulary else load_tokenizer(tokenizer_path)
    if model_args.model_name_or_path:
        model = SmallEncoderForCausalLM.from_pretrained(model_args.model_name_or_path)
    else:
        logger.info("No --model_name_or_path: finetuning a model trained from scratch (no pretraining)")
        model = _new_model(model_args, bp_args, tokenizer)
    block_size = _block_size(bp_args, model)

    qa = load_birthplace(bp_args.data_dir)
    qa.pop("test")  # questions only: nothing to learn from
    with training_args.main_process_first(desc="tokenization"):
        encoded = qa.map(
            encode_char_qa if bp_args.course_vocabulary else encode_birthplace_qa,
            batched=True,
            remove_columns=["question", "answer"],
            fn_kwargs={"tokenizer": tokenizer, "block_size": block_size},
        )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=encoded["train"],
        # Dev loss on the answer tokens, for the curves; accuracy comes from `evaluate`.
        eval_dataset=encoded["validation"] if training_args.eval_strategy != "no" else None,
        processing_class=tokenizer,
        # Pads inputs with <pad> and labels with -100, so that padding never enters the loss.
        data_collator=DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100),
        callbacks=[PlotCallback()],
    )
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    metrics = {**result.metrics, "train_samples": len(encoded["train"]), "block_size": block_size}
    # A short run may log no step at all: fall back to the average loss Trainer returns.
    metrics["final_train_loss"] = _last_logged(trainer, "loss", default=result.training_loss)
    trainer.log_metrics("train", metrics)
    metrics["pretrained_from"] = model_args.model_name_or_path
    return finish_run(trainer, (model_args, bp_args, training_args), metrics, timer)


# --------------------------------------------------------------------------------------------------
# evaluate
# --------------------------------------------------------------------------------------------------
@torch.no_grad()
def predict_answers(
    model: SmallEncoderForCausalLM,
    tokenizer: PreTrainedTokenizerBase,
    questions: list[str],
    block_size: int | None = None,
    batch_size: int = 64,
    max_new_tokens: int = 16,
) -> list[str]:
    """Greedy-decode the answer to each question: generate after `question ⁇` until `⁇` or `</s>`.

    Batches are left-padded (the model derives positions from the attention mask), as the text-generation
    pipeline does, so that every prompt ends right where generation starts.
    """
    block_size = block_size or model.config.max_position_embeddings
    stop_ids = [tokenizer.sep_token_id, tokenizer.eos_token_id]
    prompts = encode_birthplace_qa({"question": questions}, tokenizer, block_size, prompt_only=True)["input_ids"]
    model.eval()
    padding_side, tokenizer.padding_side = tokenizer.padding_side, "left"
    answers = []
    try:
        for start in range(0, len(prompts), batch_size):
            batch = tokenizer.pad({"input_ids": prompts[start : start + batch_size]}, return_tensors="pt")
            batch = batch.to(model.device)
            room = block_size - batch["input_ids"].shape[1]
            generated = model.generate(
                **batch,
                do_sample=False,
                max_new_tokens=max(1, min(max_new_tokens, room)),
                eos_token_id=stop_ids,
                pad_token_id=tokenizer.pad_token_id,
            )
            for row in generated[:, batch["input_ids"].shape[1] :].tolist():
                stop = next((i for i, token in enumerate(row) if token in stop_ids), len(row))
                answers.append(tokenizer.decode(row[:stop], skip_special_tokens=True).strip())
    finally:
        tokenizer.padding_side = padding_side
    return answers


def evaluate_answers(
    model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments
) -> dict:
    timer = RunTimer()
    qa = load_birthplace(bp_args.data_dir)
    split = qa[bp_args.eval_split]
    questions = list(split["question"])
    if bp_args.london_baseline or bp_args.most_common_baseline:
        if bp_args.london_baseline:
            constant, source = "London", "london_baseline"
        else:
            constant, _ = Counter(list(qa["train"]["answer"])).most_common(1)[0]
            source = "most_common_baseline"
        predictions = [constant] * len(questions)
    else:
        if model_args.model_name_or_path is None:
            raise ValueError("evaluate needs --model_name_or_path, or --london_baseline / --most_common_baseline")
        tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
        tokenizer = load_course_tokenizer(tokenizer_path) if bp_args.course_vocabulary else load_tokenizer(tokenizer_path)
        model = SmallEncoderForCausalLM.from_pretrained(model_args.model_name_or_path, dtype=torch.float32)
        device = "cpu" if training_args.use_cpu or not torch.cuda.is_available() else "cuda"
        model.to(device)
        predictions = (predict_char_answers if bp_args.course_vocabulary else predict_answers)(
            model,
            tokenizer,
            questions,
            block_size=bp_args.block_size,
            batch_size=training_args.per_device_eval_batch_size,
            **({} if bp_args.course_vocabulary else {"max_new_tokens": bp_args.max_new_tokens}),
        )
        source = model_args.model_name_or_path

    metrics: dict = {"eval_split": bp_args.eval_split, "predictions_from": source, "num_questions": len(questions)}
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
    if output_dir:
        write_report(
            training_args,
            (model_args, bp_args, training_args),
            metrics,
            timer.seconds,
            path=os.path.join(output_dir, f"report_evaluate_{bp_args.eval_split}.json"),
        )
    return metrics


def _output_dir_given(training_args: TrainingArguments) -> bool:
    # TrainingArguments falls back to "trainer_output" when --output_dir is omitted.
    return bool(training_args.output_dir) and training_args.output_dir != "trainer_output"


def main(args: list[str] | None = None) -> dict:
    args = list(sys.argv[1:] if args is None else args)
    if not args or args[0] not in SUBCOMMANDS:
        raise SystemExit(f"usage: birthplace.py {{{'|'.join(SUBCOMMANDS)}}} --data_dir DIR [options]; -h for help")
    command, rest = args[0], args[1:]
    model_args, bp_args, training_args = parse_args((ModelArguments, BirthplaceArguments, TrainingArguments), rest)
    if bp_args.data_dir is None:
        raise ValueError("--data_dir is required")
    _setup(training_args)
    if command == "pretrain":
        return pretrain(model_args, bp_args, training_args)
    if command == "finetune":
        return finetune(model_args, bp_args, training_args)
    return evaluate_answers(model_args, bp_args, training_args)


if __name__ == "__main__":
    main()
