"""Pretrain a SmallEncoder language model on raw text with `Trainer` (`recipes/pretrain.py`).

Objectives: `clm` (next-token prediction on packed blocks, as run_clm.py), `span_corruption` (CS224N's
`prefix ⁇ suffix ⁇ span ⁇`, trained as a causal LM) and `mlm` (BERT-style masked LM with a bidirectional model).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from transformers import DataCollatorForLanguageModeling, TrainingArguments

from hf_models import SmallEncoderForCausalLM, SmallEncoderForMaskedLM, SmallEncoderForPreTraining
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
    TRAINER_GROUP,
    FlagGroup,
    ModelArguments,
    RunTimer,
    check_block_size,
    check_plateau,
    check_run_output,
    finish_run,
    help_sections,
    load_or_build_model,
    model_group,
    run_task,
    train_model,
    unigram_entropy,
)

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"


@dataclass
class DataTrainingArguments:
    objective: str = field(
        default="clm",
        metadata={
            "help": "Pretraining objective: causal LM, span corruption, masked LM, or ELECTRA's replaced-token "
            "detection (rtd: a small masked-LM generator fills the masked positions and the model learns, at every "
            "position, whether the token was replaced).",
            "choices": ["clm", "span_corruption", "mlm", "rtd"],
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
        default=5.0, metadata={"help": "Percent of the training lines held out when no --validation_files."}
    )
    block_size: int | None = field(
        default=None,
        metadata={"help": "Tokens per training sequence. Defaults to min(128, the model's max_position_embeddings)."},
    )
    mlm_probability: float = field(
        default=0.15, metadata={"help": "Share of tokens masked for --objective mlm and rtd."}
    )
    generator_layers: int = field(default=1, metadata={"help": "--objective rtd: blocks in the generator."})
    rtd_weight: float = field(
        default=50.0,
        metadata={"help": "--objective rtd: weight of the detection loss against the generator's (ELECTRA's 50)."},
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Truncate the training set (debugging)."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Truncate the validation set."})
    preprocessing_num_workers: int | None = field(default=None, metadata={"help": "Processes for tokenization."})
    lab_vocabulary: str | None = field(
        default=None,
        metadata={
            "help": "A cls-books folder: pretrain with the lab's 50,001 ids over raw text (the altegrad-lab-raw "
            "tokenizer, built from its sentencepiece.french.model and dict.txt unless --tokenizer_name_or_path "
            "or the model folder has one), the vocabulary of the altegrad-lab preset. Objective clm only (the "
            "lab's vocabulary has no mask token)."
        },
    )
    language: str | None = field(
        default=None, metadata={"help": "ISO code of the corpus language (e.g. fr, en), recorded for the model card."}
    )


def _datasets(
    data_args: DataTrainingArguments, training_args: TrainingArguments, tokenizer, block_size: int, reverse: bool
):
    """Train and validation sets and their collator: packed blocks for clm/mlm (each document's tokens last to
    first with `reverse`); whole documents for span corruption, corrupted anew at every batch."""
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
            lm_datasets = tokenize_and_group(raw, tokenizer, block_size, num_proc=num_proc, reverse=reverse)
            # ELECTRA's generator sees [MASK] at every masked position (no random or kept tokens).
            replace = {"mask_replace_prob": 1.0, "random_replace_prob": 0.0} if data_args.objective == "rtd" else {}
            collator = DataCollatorForLanguageModeling(
                tokenizer,
                mlm=data_args.objective in ("mlm", "rtd"),
                mlm_probability=data_args.mlm_probability,
                **replace,
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


class ReplacedTokenDetection(nn.Module):
    """ELECTRA pretraining: a small masked-LM generator fills the masked positions with its own samples, and the
    discriminator learns, at every position, whether the token is the original. Only the discriminator is kept.
    The two keep their own embeddings (ELECTRA shares them, for a gain it measured at 0.1 GLUE point), so that
    Trainer's checkpoints hold no shared tensor."""

    def __init__(self, discriminator: SmallEncoderForPreTraining, generator_layers: int, weight: float) -> None:
        super().__init__()
        generator_config = copy.deepcopy(discriminator.config)
        generator_config.num_hidden_layers = generator_layers
        self.discriminator = discriminator
        self.generator = SmallEncoderForMaskedLM(generator_config)
        self.config = discriminator.config
        self.weight = weight

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, labels: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """`labels` as `DataCollatorForLanguageModeling` makes them: the original id where masked, -100 elsewhere."""
        masked = labels != -100
        hidden = self.generator.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        generator_logits = self.generator.lm_head(hidden[masked])  # the vocabulary only where it is needed
        generator_loss = F.cross_entropy(generator_logits, labels[masked]) if masked.any() else hidden.sum() * 0
        with torch.no_grad():
            sampled = torch.multinomial(F.softmax(generator_logits.float(), dim=-1), 1).squeeze(-1)
        corrupted = input_ids.masked_scatter(masked, sampled)
        replaced = (corrupted != torch.where(masked, labels, input_ids)).float()
        if attention_mask is not None:
            replaced = replaced.masked_fill(attention_mask == 0, -100)
        detection = self.discriminator(input_ids=corrupted, attention_mask=attention_mask, labels=replaced)
        return {"loss": generator_loss + self.weight * detection.loss, "logits": detection.logits}


def pretrain(model_args: ModelArguments, data_args: DataTrainingArguments, training_args: TrainingArguments) -> dict:
    """Train, evaluate (loss and perplexity), check for a plateau, and save the run."""
    timer = RunTimer()
    if not data_args.train_files:
        raise UsageError("--train_files is required: give the text files (or folders) to pretrain on")
    inputs = [("--train_files", f) for f in data_args.train_files] + [
        ("--validation_files", f) for f in data_args.validation_files or ()
    ]
    check_run_output(model_args, training_args, inputs)
    logger.info(f"Objective {data_args.objective}, world size {training_args.world_size}")
    if data_args.lab_vocabulary and data_args.objective != "clm":
        raise UsageError(f"--lab_vocabulary has no mask token: --objective {data_args.objective} needs one; use clm")
    bidirectional = data_args.objective in ("mlm", "rtd")
    tokenizer = resolve_tokenizer(
        model_args.tokenizer_path,
        "altegrad-lab-raw" if data_args.lab_vocabulary else "bpe",
        data_dir=data_args.lab_vocabulary,
        missing="--tokenizer_name_or_path is required (train one with tokenizer/train_tokenizer.py)",
        accept_course=not bidirectional,  # a causal LM continued from a lab model keeps its vocabulary
    )
    model_class = {"mlm": SmallEncoderForMaskedLM, "rtd": SmallEncoderForPreTraining}.get(
        data_args.objective, SmallEncoderForCausalLM
    )
    model = load_or_build_model(model_class, model_args, tokenizer, DEFAULT_PRESET, is_causal=not bidirectional)
    n_params = model.num_parameters()
    logger.info(f"Training a {model_class.__name__} with {n_params / 1e6:.2f}M parameters")
    reverse = model.config.reads_reversed_text
    if reverse and data_args.objective != "clm":
        raise UsageError(
            f"the model reads text last to first (reads_reversed_text): a backward LM is trained with "
            f"--objective clm, not {data_args.objective}"
        )
    if reverse:
        logger.info("A backward LM: each document is read last token first (reads_reversed_text)")
    default_block = min(128, model.config.max_position_embeddings)
    block_size = check_block_size(default_block if data_args.block_size is None else data_args.block_size, model)
    train_dataset, eval_dataset, collator = _datasets(data_args, training_args, tokenizer, block_size, reverse)
    rtd = data_args.objective == "rtd"
    trained = ReplacedTokenDetection(model, data_args.generator_layers, data_args.rtd_weight) if rtd else model
    trainer, metrics = train_model(trained, training_args, tokenizer, train_dataset, collator, eval_dataset)
    if eval_dataset is not None:
        eval_metrics = trainer.evaluate()
        eval_metrics["eval_samples"] = len(eval_dataset)
        if not rtd:
            losses = [eval_metrics["eval_loss"]]
            eval_metrics["perplexity"] = load_metric("perplexity").compute(losses=losses)["perplexity"]
        trainer.log_metrics("eval", eval_metrics)
        metrics.update(eval_metrics)
    if rtd:  # what is saved and finetuned is the discriminator alone
        trainer.model = trainer.model_wrapped = model
    # No silent plateau: a run that ends near the unigram entropy of its data says so (log and report).
    final_loss = metrics.get("eval_loss", metrics["final_train_loss"])
    if not rtd:  # a detection loss is not comparable with the unigram entropy
        metrics.update(check_plateau(final_loss, unigram_entropy(train_dataset, len(tokenizer))))
    metrics["objective"] = data_args.objective
    metrics["num_parameters"] = n_params
    trainer.log_metrics("train", {k: v for k, v in metrics.items() if k.startswith("train")})
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
        hyperparameters={"block_size": block_size},
    )


# The command line: the task's flags, the model's, then Trainer's (each group under its title in --help).
ARGUMENT_GROUPS = (
    FlagGroup("Pretraining arguments", DataTrainingArguments),
    model_group(DEFAULT_PRESET),
    TRAINER_GROUP,
)


def main(args: Sequence[str] | None = None, doc: str | None = None) -> dict:
    """`recipes/pretrain.py`: parse the flags (after an arguments file, if one is given) and pretrain; `doc`,
    the recipe's docstring, is its --help."""
    return run_task(pretrain, ARGUMENT_GROUPS, args, **help_sections(doc))
