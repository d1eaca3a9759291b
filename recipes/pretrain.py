#!/usr/bin/env python
"""Pretrain a SmallEncoder language model on raw text with `Trainer`.

Objectives:
  clm              next-token prediction on packed blocks (run_clm.py)
  span_corruption  CS224N span corruption, `prefix ⁇ suffix ⁇ span ⁇`, trained as a causal LM
  mlm              BERT-style masked LM on packed blocks, with a bidirectional model

    python recipes/pretrain.py --objective clm --train_files corpus.txt.gz \
        --tokenizer_name_or_path outputs/tok --model_config altegrad-lab --output_dir runs/clm

The same command runs under `accelerate launch recipes/pretrain.py ...` (one process, or data parallel
with `--multi_gpu --num_processes N`); a single JSON file with all the arguments also works. The run
reports the evaluation loss and perplexity in `OUTPUT_DIR/report.json`, with loss.png beside it.
"""

import logging
import sys
from dataclasses import dataclass, field

import datasets
import transformers
from transformers import DataCollatorForLanguageModeling, TrainingArguments, set_seed

from hf_models import SmallEncoderForCausalLM, SmallEncoderForMaskedLM
from hf_models.data import (
    SpanCorruptionCollator,
    corrupt_for_evaluation,
    load_text_corpus,
    tokenize_and_group,
    tokenize_documents,
)
from hf_models.tokenization import load_tokenizer
from hf_models.training_utils import (
    ModelArguments,
    PlotCallback,
    ReproducibleTrainer,
    RunTimer,
    TrimPaddingCollator,
    build_config,
    finish_run,
    load_metric,
    parse_args,
)

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "altegrad-lab"


@dataclass
class DataTrainingArguments:
    objective: str = field(
        default="clm",
        metadata={"help": "Pretraining objective.", "choices": ["clm", "span_corruption", "mlm"]},
    )
    train_files: list[str] = field(
        default_factory=list,
        metadata={"help": "Text files (plain or .gz) or folders of them; one document per line."},
    )
    validation_files: list[str] | None = field(
        default=None, metadata={"help": "Held-out text files. Without them, a share of the training lines is held out."}
    )
    validation_split_percentage: float = field(
        default=5.0, metadata={"help": "Percent of the training lines held out when no --validation_files."}
    )
    block_size: int | None = field(
        default=None,
        metadata={"help": "Tokens per training sequence. Defaults to min(128, the model's max_position_embeddings)."},
    )
    mlm_probability: float = field(default=0.15, metadata={"help": "Share of tokens masked for --objective mlm."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Truncate the training set (debugging)."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Truncate the validation set."})
    preprocessing_num_workers: int | None = field(default=None, metadata={"help": "Processes for tokenization."})


def main(args: list[str] | None = None) -> dict:
    timer = RunTimer()
    model_args, data_args, training_args = parse_args((ModelArguments, DataTrainingArguments, TrainingArguments), args)
    if not data_args.train_files:
        raise ValueError("--train_files is required")

    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)])
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    logger.info(f"Objective {data_args.objective}, world size {training_args.world_size}")
    set_seed(training_args.seed)

    # Tokenizer and model: the tokenizer's vocabulary and special ids are copied into a fresh config.
    tokenizer_path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if tokenizer_path is None:
        raise ValueError("--tokenizer_name_or_path is required (train one with tokenizer/train_tokenizer.py)")
    tokenizer = load_tokenizer(tokenizer_path)
    mlm = data_args.objective == "mlm"
    model_class = SmallEncoderForMaskedLM if mlm else SmallEncoderForCausalLM
    if model_args.model_name_or_path:
        model = model_class.from_pretrained(model_args.model_name_or_path)
    else:
        config = build_config(
            model_args.model_config or DEFAULT_PRESET,
            model_args.config_overrides,
            tokenizer,
            attention_type=model_args.attention_type,
            is_causal=not mlm,
        )
        model = model_class(config)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info(f"Training a new {model_class.__name__} with {n_params / 1e6:.2f}M parameters")

    block_size = data_args.block_size or min(128, model.config.max_position_embeddings)
    if block_size > model.config.max_position_embeddings:
        raise ValueError(f"--block_size {block_size} exceeds max_position_embeddings={model.config.max_position_embeddings}")

    # Data: packed blocks for clm/mlm; whole documents for span corruption, corrupted anew at every batch.
    validation_fraction = 0.0 if data_args.validation_files else data_args.validation_split_percentage / 100
    raw = load_text_corpus(data_args.train_files, validation_fraction=validation_fraction, seed=training_args.seed)
    if data_args.validation_files:
        raw["validation"] = load_text_corpus(data_args.validation_files)["train"]
    with training_args.main_process_first(desc="tokenization"):
        if data_args.objective == "span_corruption":
            lm_datasets = tokenize_documents(raw, tokenizer, num_proc=data_args.preprocessing_num_workers)
            # Cutting the all-padding columns saves compute on short documents (the model is causal).
            collator = TrimPaddingCollator(SpanCorruptionCollator(tokenizer, block_size, seed=training_args.seed))
        else:
            lm_datasets = tokenize_and_group(raw, tokenizer, block_size, num_proc=data_args.preprocessing_num_workers)
            collator = DataCollatorForLanguageModeling(tokenizer, mlm=mlm, mlm_probability=data_args.mlm_probability)
    train_dataset = lm_datasets["train"]
    if data_args.max_train_samples is not None:
        train_dataset = train_dataset.select(range(min(len(train_dataset), data_args.max_train_samples)))
    eval_dataset = lm_datasets.get("validation")
    if eval_dataset is not None and data_args.max_eval_samples is not None:
        eval_dataset = eval_dataset.select(range(min(len(eval_dataset), data_args.max_eval_samples)))
    if eval_dataset is not None and data_args.objective == "span_corruption":
        # One fixed corruption per document: the eval loss is comparable across evaluations.
        eval_dataset = corrupt_for_evaluation(eval_dataset, tokenizer, block_size, seed=training_args.seed)

    trainer = ReproducibleTrainer(  # evaluations do not shift the training's random stream
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=collator,
        callbacks=[PlotCallback()],
    )

    train_result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    metrics = dict(train_result.metrics)
    metrics["train_samples"] = len(train_dataset)
    metrics["final_train_loss"] = next(
        (entry["loss"] for entry in reversed(trainer.state.log_history) if "loss" in entry), None
    )
    if eval_dataset is not None:
        eval_metrics = trainer.evaluate()
        eval_metrics["eval_samples"] = len(eval_dataset)
        eval_metrics["perplexity"] = load_metric("perplexity").compute(losses=[eval_metrics["eval_loss"]])[
            "perplexity"
        ]
        trainer.log_metrics("eval", eval_metrics)
        metrics.update(eval_metrics)
    metrics["objective"] = data_args.objective
    metrics["num_parameters"] = n_params
    trainer.log_metrics("train", {k: v for k, v in metrics.items() if k.startswith("train")})
    return finish_run(trainer, (model_args, data_args, training_args), metrics, timer)


if __name__ == "__main__":
    main()
