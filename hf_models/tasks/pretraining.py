"""Pretrain a SmallEncoder language model on raw text with `Trainer` (`recipes/pretrain.py`).

Objectives: `clm` (next-token prediction on packed blocks, as run_clm.py), `span_corruption` (CS224N's
`prefix ⁇ suffix ⁇ span ⁇`, trained as a causal LM) and `mlm` (BERT-style masked LM with a bidirectional model).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from transformers import DataCollatorForLanguageModeling, TrainingArguments

from hf_models import SmallEncoderForCausalLM, SmallEncoderForMaskedLM
from hf_models.data import (
    SpanCorruptionCollator,
    TrimPaddingCollator,
    corrupt_for_evaluation,
    load_text_corpus,
    tokenize_and_group,
    tokenize_documents,
)
from hf_models.metrics import load_metric
from hf_models.textio import UsageError
from hf_models.tokenization import resolve_tokenizer
from hf_models.training import (
    ModelArguments,
    RunTimer,
    check_block_size,
    check_plateau,
    check_run_output,
    finish_run,
    help_sections,
    last_or_mean_loss,
    load_or_build_model,
    run_task,
    train_model,
    unigram_entropy,
)

from .pretraining_arguments import ARGUMENT_GROUPS, DEFAULT_PRESET, DataTrainingArguments

logger = logging.getLogger(__name__)


def _datasets(data_args: DataTrainingArguments, training_args: TrainingArguments, tokenizer, block_size: int):
    """Train and validation sets and their collator: packed blocks for clm/mlm; whole documents for span
    corruption, corrupted anew at every batch."""
    validation_fraction = 0.0 if data_args.validation_files else data_args.validation_split_percentage / 100
    raw = load_text_corpus(data_args.train_files, validation_fraction=validation_fraction, seed=training_args.seed)
    if data_args.validation_files:
        raw["validation"] = load_text_corpus(data_args.validation_files)["train"]
    num_proc = data_args.preprocessing_num_workers
    with training_args.main_process_first(desc="tokenization"):
        if data_args.objective == "span_corruption":
            lm_datasets = tokenize_documents(raw, tokenizer, num_proc=num_proc)
            # Cutting the all-padding columns saves compute on short documents (the model is causal).
            collator = TrimPaddingCollator(SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed))
        else:
            lm_datasets = tokenize_and_group(raw, tokenizer, block_size, num_proc=num_proc)
            collator = DataCollatorForLanguageModeling(
                tokenizer, mlm=data_args.objective == "mlm", mlm_probability=data_args.mlm_probability
            )
    train_dataset, eval_dataset = lm_datasets["train"], lm_datasets.get("validation")
    eval_files = data_args.validation_files or data_args.train_files
    for split, dataset, files in (
        ("training", train_dataset, data_args.train_files),
        ("validation", eval_dataset, eval_files),
    ):
        if dataset is not None and len(dataset) == 0:  # else the Trainer fails deep inside (no eval_loss)
            raise UsageError(
                f"the {split} split of {', '.join(files)} holds no block of {block_size} tokens: give more text, "
                "a smaller --block_size or another --validation_split_percentage"
            )
    if data_args.max_train_samples is not None:
        train_dataset = train_dataset.select(range(min(len(train_dataset), data_args.max_train_samples)))
    if eval_dataset is not None and data_args.max_eval_samples is not None:
        eval_dataset = eval_dataset.select(range(min(len(eval_dataset), data_args.max_eval_samples)))
    if eval_dataset is not None and data_args.objective == "span_corruption":
        # One fixed corruption per document: the eval loss is comparable across evaluations.
        eval_dataset = corrupt_for_evaluation(eval_dataset, tokenizer, block_size, seed=training_args.seed)
    return train_dataset, eval_dataset, collator


def pretrain(model_args: ModelArguments, data_args: DataTrainingArguments, training_args: TrainingArguments) -> dict:
    """Train, evaluate (loss and perplexity), check for a plateau, and save the run."""
    timer = RunTimer()
    if not data_args.train_files:
        raise UsageError("--train_files is required: give the text files (or folders) to pretrain on")
    inputs = [("--train_files", f) for f in data_args.train_files] + [
        ("--validation_files", f) for f in data_args.validation_files or ()
    ]
    architecture = (SmallEncoderForMaskedLM if data_args.objective == "mlm" else SmallEncoderForCausalLM).__name__
    check_run_output(model_args, training_args, inputs, architecture=architecture, task="pretraining")
    logger.info(f"Objective {data_args.objective}, world size {training_args.world_size}")
    if data_args.lab_vocabulary and data_args.objective != "clm":
        raise UsageError(f"--lab_vocabulary has no mask token: --objective {data_args.objective} needs one; use clm")
    bidirectional = data_args.objective == "mlm"
    tokenizer = resolve_tokenizer(
        model_args.tokenizer_path,
        "altegrad-lab-raw" if data_args.lab_vocabulary else "bpe",
        data_dir=data_args.lab_vocabulary,
        missing="--tokenizer_name_or_path is required (train one with tokenizer/train_tokenizer.py)",
        accept_course=not bidirectional,  # a causal LM continued from a lab model keeps its vocabulary
    )
    model_class = SmallEncoderForMaskedLM if bidirectional else SmallEncoderForCausalLM
    # The objective decides the attention, of a new model and of a continued one alike.
    attention = {"is_causal": not bidirectional}
    model = load_or_build_model(
        model_class, model_args, tokenizer, DEFAULT_PRESET, from_pretrained=attention, **attention
    )
    n_params = model.num_parameters()
    logger.info(f"Training a {model_class.__name__} with {n_params / 1e6:.2f}M parameters")
    default_block = min(128, model.config.max_position_embeddings)
    block_size = check_block_size(default_block if data_args.block_size is None else data_args.block_size, model)
    train_dataset, eval_dataset, collator = _datasets(data_args, training_args, tokenizer, block_size)
    trainer, metrics = train_model(
        model, training_args, tokenizer, train_dataset, collator, eval_dataset, task="pretraining"
    )
    if eval_dataset is not None:
        eval_metrics = trainer.evaluate()
        eval_metrics["eval_samples"] = len(eval_dataset)
        losses = [eval_metrics["eval_loss"]]
        eval_metrics["perplexity"] = load_metric("perplexity").compute(losses=losses)["perplexity"]
        metrics.update(eval_metrics)
    # No silent plateau: a run that ends near the unigram entropy of its data says so (log and report).
    final_loss = metrics.get("eval_loss", last_or_mean_loss(metrics))
    metrics.update(check_plateau(final_loss, unigram_entropy(train_dataset, len(tokenizer))))
    metrics["objective"] = data_args.objective
    metrics["num_parameters"] = n_params
    return finish_run(
        trainer,
        (model_args, data_args, training_args),
        metrics,
        timer,
        default_preset=DEFAULT_PRESET,
        task="pretraining",
        objective=data_args.objective,
        language=data_args.language,
        dataset=", ".join(Path(f).name for f in data_args.train_files),
        split_sizes={"train": len(train_dataset), **({"validation": len(eval_dataset)} if eval_dataset else {})},
        max_length=block_size,
        hyperparameters={"block_size": block_size},
    )


def main(args: Sequence[str] | None = None, doc: str | None = None) -> dict:
    """`recipes/pretrain.py`: parse the flags (after an arguments file, if one is given) and pretrain; `doc`,
    the recipe's docstring, is its --help."""
    return run_task(pretrain, ARGUMENT_GROUPS, args, **help_sections(doc))
