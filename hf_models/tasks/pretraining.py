"""Pretrain a SmallEncoder language model on raw text with `Trainer` (`recipes/pretrain.py`).

Objectives: `clm` (next-token prediction on packed blocks, as run_clm.py), `span_corruption` (CS224N's
`prefix ⁇ suffix ⁇ span ⁇`, trained as a causal LM) and `mlm` (BERT-style masked LM with a bidirectional model).
Its flags are `DataTrainingArguments`, beside the model's and Trainer's (`ARGUMENT_GROUPS`); the training stack is
imported when a run starts, not for `-h`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from transformers import DataCollatorForLanguageModeling, TrainingArguments

import hf_models
from hf_models import data, training
from hf_models.metrics import load_metric
from hf_models.safety.ranges import PERCENT, POSITIVE, Range
from hf_models.textio import UsageError
from hf_models.tokenization import resolve_tokenizer
from hf_models.training.arguments import FlagGroup, ModelArguments, check_run_output, model_group, trainer_group

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"
# What each objective trains, by name: the checks before a run (`check_run_output`) import no model (tests/test_help.py
# holds the names to the classes').
ARCHITECTURES = {"clm": "SmallEncoderForCausalLM", "mlm": "SmallEncoderForMaskedLM"}


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


def _datasets(data_args: DataTrainingArguments, training_args: TrainingArguments, tokenizer, block_size: int):
    """Train and validation sets and their collator: packed blocks for clm/mlm; whole documents for span
    corruption, corrupted anew at every batch."""
    validation_fraction = 0.0 if data_args.validation_files else data_args.validation_split_percentage / 100
    raw = data.load_text_corpus(
        data_args.train_files, validation_fraction=validation_fraction, seed=training_args.seed
    )
    if data_args.validation_files:
        raw["validation"] = data.load_text_corpus(data_args.validation_files)["train"]
    num_proc = data_args.preprocessing_num_workers
    with training_args.main_process_first(desc="tokenization"):
        if data_args.objective == "span_corruption":
            lm_datasets = data.tokenize_documents(raw, tokenizer, num_proc=num_proc)
            # Cutting the all-padding columns saves compute on short documents (the model is causal).
            collator = data.TrimPaddingCollator(
                data.SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed)
            )
        else:
            lm_datasets = data.tokenize_and_group(raw, tokenizer, block_size, num_proc=num_proc)
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
        eval_dataset = data.corrupt_for_evaluation(eval_dataset, tokenizer, block_size, seed=training_args.seed)
    return train_dataset, eval_dataset, collator


def pretrain(model_args: ModelArguments, data_args: DataTrainingArguments, training_args: TrainingArguments) -> dict:
    """Train, evaluate (loss and perplexity), check for a plateau, and save the run."""
    started = time.perf_counter()  # the run's wall time, in its record
    if not data_args.train_files:
        raise UsageError("--train_files is required: give the text files (or folders) to pretrain on")
    inputs = [("--train_files", f) for f in data_args.train_files] + [
        ("--validation_files", f) for f in data_args.validation_files or ()
    ]
    architecture = ARCHITECTURES["mlm" if data_args.objective == "mlm" else "clm"]
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
    model_class = getattr(hf_models, architecture)
    # The objective decides the attention, of a new model and of a continued one alike.
    attention = {"is_causal": not bidirectional}
    model = training.load_or_build_model(
        model_class, model_args, tokenizer, DEFAULT_PRESET, from_pretrained=attention, **attention
    )
    n_params = model.num_parameters()
    logger.info(f"Training a {model_class.__name__} with {n_params / 1e6:.2f}M parameters")
    default_block = min(128, model.config.max_position_embeddings)
    block_size = training.check_block_size(
        default_block if data_args.block_size is None else data_args.block_size, model
    )
    train_dataset, eval_dataset, collator = _datasets(data_args, training_args, tokenizer, block_size)
    trainer, metrics = training.train_model(
        model, training_args, tokenizer, train_dataset, collator, eval_dataset, task="pretraining"
    )
    if eval_dataset is not None:
        eval_metrics = trainer.evaluate()
        eval_metrics["eval_samples"] = len(eval_dataset)
        losses = [eval_metrics["eval_loss"]]
        eval_metrics["perplexity"] = load_metric("perplexity").compute(losses=losses)["perplexity"]
        metrics.update(eval_metrics)
    # No silent plateau: a run that ends near the unigram entropy of its data says so (log and report).
    final_loss = metrics.get("eval_loss", training.last_or_mean_loss(metrics))
    metrics.update(training.check_plateau(final_loss, training.unigram_entropy(train_dataset, len(tokenizer))))
    metrics["objective"] = data_args.objective
    metrics["num_parameters"] = n_params
    return training.finish_run(
        trainer,
        (model_args, data_args, training_args),
        metrics,
        started,
        default_preset=DEFAULT_PRESET,
        task="pretraining",
        objective=data_args.objective,
        language=data_args.language,
        dataset=", ".join(Path(f).name for f in data_args.train_files),
        split_sizes={"train": len(train_dataset), **({"validation": len(eval_dataset)} if eval_dataset else {})},
        max_length=block_size,
        hyperparameters={"block_size": block_size},
    )
