"""The training set-up shared by the tasks in `hf_models.tasks` (and so by the recipes in `recipes/`): argument
dataclasses, logging and seed, the tokenizer and the model to start from, config building, the block-size check,
local `evaluate` metrics, plots, and the end of every run (model, plots, `report.json` and the run record).

Everything here works offline: metrics are loaded by absolute path from `hf_models/metrics/`, plots use
matplotlib's Agg backend, and reports are written with `evaluate.save`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import evaluate
import numpy as np
import torch
import transformers
from transformers import (
    HfArgumentParser,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    set_seed,
)

from .run_record import Evaluation, RunRecord, model_reference, model_size, read_record

__all__ = [
    "METRICS_DIR",
    "ModelArguments",
    "PlotCallback",
    "ReproducibleTrainer",
    "RunTimer",
    "TrimPaddingCollator",
    "build_config",
    "check_block_size",
    "check_plateau",
    "finish_run",
    "last_logged",
    "load_metric",
    "load_or_build_model",
    "load_run_tokenizer",
    "model_source",
    "new_record",
    "parse_args",
    "run_task",
    "plot_curves",
    "setup_run",
    "str2bool",
    "train_model",
    "unigram_entropy",
    "write_report",
]

METRICS_DIR = Path(__file__).resolve().parent / "metrics"
# A pretraining loss above this share of the data's unigram entropy means the model learned little more than
# token frequencies: a backbone that finetuning cannot profit from.
PLATEAU_RATIO = 0.9
PLATEAU_KEYS = ("unigram_entropy", "loss_over_unigram_entropy", "plateau")

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    """Which model to start from, or which config to build one from."""

    model_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A trained model folder (save_pretrained) to start from. Omit to train from scratch."},
    )
    model_config: str | None = field(
        default=None,
        metadata={
            "help": "From scratch: a preset name ('altegrad-lab', 'cs224n-mingpt') or a config JSON file. "
            "Each recipe has its own default preset."
        },
    )
    config_overrides: str | None = field(
        default=None,
        metadata={
            "help": "Override config fields when training from scratch, e.g. "
            "'hidden_size=64,num_hidden_layers=2,num_attention_heads=4' (same syntax as run_clm.py)."
        },
    )
    attention_type: str | None = field(
        default=None,
        metadata={"help": "Override the attention type.", "choices": ["vanilla", "synthesizer", "random", "factorized"]},
    )
    tokenizer_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A tokenizer folder (tokenizer/train_tokenizer.py). Defaults to --model_name_or_path."},
    )


def str2bool(value: str | bool) -> bool:
    """Parse 'true'/'false' style flags such as `--causal_mask false`."""
    if isinstance(value, bool):
        return value
    lowered = value.lower()
    if lowered in ("true", "1", "yes", "y"):
        return True
    if lowered in ("false", "0", "no", "n"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def parse_args(dataclass_types: Sequence[type], args: Sequence[str] | None = None) -> tuple:
    """Parse flags into the dataclasses, or read them all from a single JSON file (as run_clm.py does)."""
    parser = HfArgumentParser(dataclass_types)
    args = list(sys.argv[1:] if args is None else args)
    if len(args) == 1 and args[0].endswith(".json"):
        return parser.parse_json_file(json_file=os.path.abspath(args[0]))
    return parser.parse_args_into_dataclasses(args=args)


def build_config(
    model_config: str,
    config_overrides: str | None = None,
    tokenizer: PreTrainedTokenizerBase | None = None,
    **fields: Any,
):
    """Build a `SmallEncoderConfig` from a preset name or a JSON file, then apply overrides.

    `config_overrides` is a 'key=value,...' string; `fields` are named overrides (None values are skipped).
    With a tokenizer, the vocabulary size and the special-token ids are copied from it, so that the
    model's embedding table and its pad/bos/eos/sep/mask ids always match the tokenizer.
    """
    from hf_models import SmallEncoderConfig

    if os.path.isfile(model_config):
        config = SmallEncoderConfig.from_json_file(model_config)
    else:
        config = SmallEncoderConfig.from_preset(model_config)
    if config_overrides:
        config.update_from_string(config_overrides)
    for key, value in fields.items():
        if value is not None:
            setattr(config, key, value)
    if tokenizer is not None:
        config.vocab_size = len(tokenizer)
        # The courses' own vocabularies lack some special tokens (CS224N's characters have no bos/eos, the lab's
        # no sep/mask): copy those the tokenizer has (`load_tokenizer` already insists on all of them for ours).
        for key, value in _present_token_ids(tokenizer).items():
            setattr(config, key, value)
    # `@strict` checked each field as it was set; the constraints between fields are checked once all are set.
    config.validate()
    return config


def _present_token_ids(tokenizer: PreTrainedTokenizerBase) -> dict[str, int]:
    names = ("pad", "bos", "eos", "sep", "mask")
    ids = {f"{name}_token_id": getattr(tokenizer, f"{name}_token_id", None) for name in names}
    return {key: value for key, value in ids.items() if value is not None}


def setup_run(training_args: TrainingArguments) -> None:
    """Logging (to stdout, at the process's level, for datasets and transformers too) and the seed, as run_clm.py."""
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)]
    )
    log_level = training_args.get_process_log_level()
    logging.getLogger("hf_models").setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    set_seed(training_args.seed)


def load_run_tokenizer(model_args: ModelArguments, missing: str) -> PreTrainedTokenizerBase:
    """The tokenizer of `--tokenizer_name_or_path`, else the one saved with `--model_name_or_path`.

    `missing` is the error message when neither is given."""
    from hf_models.tokenization import load_tokenizer

    path = model_args.tokenizer_name_or_path or model_args.model_name_or_path
    if path is None:
        raise ValueError(missing)
    return load_tokenizer(path)


def load_or_build_model(
    model_class: type[PreTrainedModel],
    model_args: ModelArguments,
    tokenizer: PreTrainedTokenizerBase,
    default_preset: str,
    from_pretrained: dict[str, Any] | None = None,
    **config_fields: Any,
) -> PreTrainedModel:
    """`--model_name_or_path` loaded as `model_class` (with the `from_pretrained` overrides), or a new model built
    from `--model_config` (default: `default_preset`), the overrides, `config_fields` and the tokenizer's ids."""
    if model_args.model_name_or_path:
        overrides = {key: value for key, value in (from_pretrained or {}).items() if value is not None}
        return model_class.from_pretrained(model_args.model_name_or_path, **overrides)
    # --attention_type wins over a task's default (the birthplace --variant).
    config_fields["attention_type"] = model_args.attention_type or config_fields.get("attention_type")
    config = build_config(model_args.model_config or default_preset, model_args.config_overrides, tokenizer, **config_fields)
    return model_class(config)


def model_source(model_args: ModelArguments, default_preset: str) -> tuple[str | None, str | None]:
    """(preset, finetuned from) for the run record: a new model's preset name (None for a config file); a
    pretrained model's name, and the preset its own record names."""
    if model_args.model_name_or_path:
        parent = read_record(model_args.model_name_or_path) if os.path.isdir(model_args.model_name_or_path) else None
        return (parent.preset if parent else None), model_reference(model_args.model_name_or_path)
    from hf_models import SmallEncoderConfig

    preset = model_args.model_config or default_preset
    return (preset if preset in SmallEncoderConfig.available_presets() else None), None


def new_record(task: str, objective: str, model_args: ModelArguments, default_preset: str, **fields: Any) -> RunRecord:
    """A run record with what the task knows: task, objective, and (through `fields`) data, language and its own
    hyperparameters; the preset and the starting model come from the model arguments."""
    preset, finetuned_from = model_source(model_args, default_preset)
    return RunRecord(task=task, objective=objective, preset=preset, finetuned_from=finetuned_from, **fields)


def run_task(step: Callable[..., dict], task_arguments: type, args: Sequence[str] | None = None) -> dict:
    """A task's command line: parse (`ModelArguments`, `task_arguments`, `TrainingArguments`) from flags or one
    JSON file, set up logging and the seed, and run `step(model_args, task_args, training_args)`."""
    model_args, task_args, training_args = parse_args((ModelArguments, task_arguments, TrainingArguments), args)
    setup_run(training_args)
    return step(model_args, task_args, training_args)


def check_block_size(block_size: int | None, model: PreTrainedModel) -> int:
    """`--block_size`, or the model's `max_position_embeddings` when not given; never more than that."""
    max_positions = model.config.max_position_embeddings
    if block_size is not None and block_size > max_positions:
        raise ValueError(f"--block_size {block_size} exceeds max_position_embeddings={max_positions}")
    return block_size or max_positions


class ReproducibleTrainer(Trainer):
    """`Trainer` whose evaluations leave torch's random state as they found it.

    Building an evaluation DataLoader draws its base seed from torch's global generator, which also drives
    dropout and the training sampler: without this, the training losses would depend on `eval_steps`.
    """

    def evaluate(self, *args: Any, **kwargs: Any) -> dict[str, float]:
        devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
        with torch.random.fork_rng(devices=devices):
            return super().evaluate(*args, **kwargs)


def train_model(
    model: PreTrainedModel,
    training_args: TrainingArguments,
    tokenizer: PreTrainedTokenizerBase,
    train_dataset,
    data_collator: Callable,
    eval_dataset=None,
    **trainer_kwargs: Any,
) -> tuple[Trainer, dict[str, Any]]:
    """Build a `ReproducibleTrainer` (with the plot callback), so that evaluations do not shift the training's
    random stream, and train, resuming from `--resume_from_checkpoint` if given.

    Returns the trainer and the training metrics, with `train_samples` and `final_train_loss`: the last logged
    loss, or Trainer's mean loss for a run too short to log a step."""
    trainer = ReproducibleTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=data_collator,
        callbacks=[PlotCallback()],
        **trainer_kwargs,
    )
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    metrics = {**result.metrics, "train_samples": len(train_dataset)}
    metrics["final_train_loss"] = last_logged(trainer, "loss", default=result.training_loss)
    return trainer, metrics


def last_logged(trainer: Trainer, key: str = "loss", default: float | None = None) -> float | None:
    """The last value of `key` in the trainer's log history (the final training loss), else `default`."""
    return next((entry[key] for entry in reversed(trainer.state.log_history) if key in entry), default)


def load_metric(name: str, **kwargs: Any) -> evaluate.EvaluationModule:
    """Load one of the package's own metrics (accuracy, f1, perplexity, exact_match) by absolute path.

    An absolute path never reaches the Hub, and never picks up a same-named folder in the working directory.
    """
    path = METRICS_DIR / name
    if not (path / f"{name}.py").is_file():
        available = sorted(p.name for p in METRICS_DIR.iterdir() if (p / f"{p.name}.py").is_file())
        raise ValueError(f"unknown metric {name!r}; available: {available}")
    return evaluate.load(str(path), **kwargs)


class TrimPaddingCollator:
    """Wrap a collator whose batches are right-padded to a fixed length (such as span corruption's
    `block_size`) and cut the columns that are padding in every row.

    For a causal model this changes no real token's output (they never attend to later positions), and
    on short documents it saves most of the compute spent on padding.
    """

    def __init__(self, collator: Callable[[list[dict]], dict[str, Any]]) -> None:
        self.collator = collator

    def __call__(self, examples: list[dict]) -> dict[str, Any]:
        batch = self.collator(examples)
        mask = batch.get("attention_mask")
        if mask is None or mask.ndim != 2:
            return batch
        used = mask.any(dim=0).nonzero()
        length = int(used.max()) + 1 if len(used) else 1
        return {k: (v[:, :length] if getattr(v, "ndim", 0) == 2 and v.shape == mask.shape else v) for k, v in batch.items()}


# --------------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------------
def _series(log_history: list[dict], key: str, x_key: str = "step") -> tuple[list[float], list[float]]:
    points = [(entry[x_key], entry[key]) for entry in log_history if key in entry and x_key in entry]
    return [p[0] for p in points], [p[1] for p in points]


def plot_curves(log_history: list[dict], output_dir: str | os.PathLike) -> list[Path]:
    """Write `loss.png` (train and eval loss per step) and, when accuracy was evaluated, `accuracy.png`
    (eval accuracy and F1 per epoch) from a `Trainer` log history. Returns the written paths."""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers; must be chosen before pyplot is imported
    import matplotlib.pyplot as plt

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []

    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (("loss", "train loss"), ("eval_loss", "eval loss")):
        xs, ys = _series(log_history, key)
        if xs:
            ax.plot(xs, ys, marker="o" if len(xs) < 30 else None, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    if ax.lines:
        ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(output_dir / "loss.png", dpi=100)
    plt.close(fig)
    written.append(output_dir / "loss.png")

    if any("eval_accuracy" in entry for entry in log_history):
        fig, ax = plt.subplots(figsize=(6, 4))
        for key, label in (("eval_accuracy", "validation accuracy"), ("eval_f1", "validation F1")):
            xs, ys = _series(log_history, key, x_key="epoch")
            if xs:
                ax.plot(xs, ys, marker="o", label=label)
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 1)
        if ax.lines:
            ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(output_dir / "accuracy.png", dpi=100)
        plt.close(fig)
        written.append(output_dir / "accuracy.png")
    return written


class PlotCallback(TrainerCallback):
    """Redraw the curves after each evaluation and at the end of training (main process only), so that
    a long run can be watched and an interrupted one still leaves its plots."""

    def on_evaluate(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            plot_curves(state.log_history, args.output_dir)

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            plot_curves(state.log_history, args.output_dir)


# --------------------------------------------------------------------------------------------------
# Plateau check
# --------------------------------------------------------------------------------------------------
def unigram_entropy(dataset, vocab_size: int, column: str = "input_ids") -> float:
    """Entropy, in nats, of the token frequencies of `dataset[column]`: the cross-entropy of the best model
    that ignores context. A language model's loss should end well below it."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for batch in dataset.iter(batch_size=1000):
        ids = np.fromiter((t for row in batch[column] for t in row), dtype=np.int64)
        counts += np.bincount(ids[(ids >= 0) & (ids < vocab_size)], minlength=vocab_size)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def check_plateau(loss: float | None, entropy: float, ratio: float = PLATEAU_RATIO) -> dict[str, Any]:
    """Compare a pretraining run's final loss with the unigram entropy of its data; warn when the run ended
    near it. Returns the figures for the run's report."""
    if loss is None or not math.isfinite(loss):
        return {"unigram_entropy": round(entropy, 4)}
    share = loss / entropy
    plateau = share > ratio
    if plateau:
        logger.warning(
            f"PLATEAU: the final loss {loss:.3f} is {share:.0%} of the unigram entropy of the data ({entropy:.3f} "
            f"nats): the model learned little beyond token frequencies. Finetuning from it is unlikely to beat "
            "training from scratch; train longer, or lower the learning rate and lengthen the warm-up."
        )
    else:
        logger.info(f"final loss {loss:.3f} = {share:.0%} of the data's unigram entropy ({entropy:.3f} nats)")
    return {"unigram_entropy": round(entropy, 4), "loss_over_unigram_entropy": round(share, 4), "plateau": plateau}


# --------------------------------------------------------------------------------------------------
# Reports
# --------------------------------------------------------------------------------------------------
class RunTimer:
    """Wall time since construction; build it first thing in `main()`."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return round(time.perf_counter() - self.start, 2)


def _jsonable(value: Any) -> Any:
    # Arguments hold enums, paths and tuples; keep the report a plain JSON document.
    try:
        json.dumps(value)
        return value
    except TypeError:
        if isinstance(value, dict):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, list | tuple | set):
            return [_jsonable(v) for v in value]
        return str(value)


def write_report(
    training_args: TrainingArguments,
    arguments: Sequence[Any],
    metrics: dict[str, Any],
    wall_time_s: float,
    path: str | os.PathLike | None = None,
) -> Path | None:
    """On the main process only, write `report.json` with `evaluate.save`: the run's arguments (each
    dataclass under its class name), its metrics, `world_size`, the mixed-precision mode and the wall time.

    `TrainingArguments.mixed_precision` is what `Trainer`'s accelerator uses: "bf16"/"fp16" from the flags,
    otherwise accelerate's `--mixed_precision` (through the environment), else "no".
    Returns the report path, or None on the other processes.
    """
    if training_args.process_index != 0:
        return None
    args_dict = {}
    for arg in arguments:
        # TrainingArguments.to_dict() hides tokens and turns enums into strings.
        as_dict = arg.to_dict() if hasattr(arg, "to_dict") else dataclasses.asdict(arg)
        args_dict[type(arg).__name__] = _jsonable(as_dict)
    clean_metrics = {
        k: (None if isinstance(v, float) and not math.isfinite(v) else _jsonable(v)) for k, v in metrics.items()
    }
    path = Path(path) if path is not None else Path(training_args.output_dir) / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return evaluate.save(
        str(path),
        arguments=args_dict,
        **clean_metrics,
        world_size=training_args.world_size,
        mixed_precision=str(getattr(training_args, "mixed_precision", "no")),
        wall_time_s=wall_time_s,
    )


# Of the ~100 TrainingArguments fields, the ones a reader needs to reproduce the run.
TRAINING_HYPERPARAMETERS = (
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "warmup_steps",
    "weight_decay",
    "lr_scheduler_type",
    "optim",
    "max_grad_norm",
    "seed",
    "bf16",
    "fp16",
)


def hyperparameters(training_args: TrainingArguments, task_args: Any) -> dict[str, Any]:
    """The curated `TrainingArguments` plus the task's own scalar arguments, without local paths and unset values."""
    values = {key: getattr(training_args, key) for key in TRAINING_HYPERPARAMETERS}
    for task_field in dataclasses.fields(task_args):
        key, value = task_field.name, getattr(task_args, task_field.name)
        if task_field.metadata.get("help", "").startswith("evaluate:"):
            continue  # options of the evaluation step, not of the training
        if not any(word in key for word in ("dir", "file", "path")) and isinstance(value, bool | int | float | str):
            values[key] = value
    return {key: _jsonable(value) for key, value in values.items() if value is not None}


def hardware(training_args: TrainingArguments) -> dict[str, Any]:
    """Processes, mixed precision and device of a run."""
    device = training_args.device
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    return {
        "world_size": training_args.world_size,
        "mixed_precision": str(getattr(training_args, "mixed_precision", "no")),
        "device": name,
    }


def complete_record(
    record: RunRecord, trainer: Trainer, task_args: Any, metrics: dict[str, Any], wall_time_s: float
) -> RunRecord:
    """Fill in what every run knows the same way: size, outcome, evaluations, hyperparameters, hardware, time."""
    record.model_size = model_size(trainer.accelerator.unwrap_model(trainer.model))
    record.train_metrics = {
        key: value
        for key, value in metrics.items()
        if (key.startswith(("train_", "final_train_", "total_flos")) or key in PLATEAU_KEYS)
        and isinstance(value, int | float)
    }
    history = [entry for entry in trainer.state.log_history if "eval_loss" in entry and "epoch" in entry]
    # The final evaluation, else the last one during training (the birthplace finetuning evaluates only then).
    evaluation = Evaluation.from_trainer_metrics(metrics if "eval_loss" in metrics else (history or [{}])[-1])
    if evaluation.metrics:
        if "perplexity" in metrics:
            evaluation.metrics["perplexity"] = metrics["perplexity"]
        evaluation.per_epoch = [
            {"epoch": entry["epoch"], **Evaluation.from_trainer_metrics(entry).metrics} for entry in history
        ]
        record.add_evaluation(evaluation)
    # The task's own values win; a None drops an argument that did not apply to this run.
    merged = {**hyperparameters(trainer.args, task_args), **record.hyperparameters}
    record.hyperparameters = {key: value for key, value in merged.items() if value is not None}
    record.hardware = hardware(trainer.args)
    record.wall_time_s = wall_time_s
    return record


def finish_run(
    trainer: Trainer,
    arguments: Sequence[Any],
    metrics: dict[str, Any],
    timer: RunTimer,
    record: RunRecord,
) -> dict[str, Any]:
    """End of every recipe: save the model and tokenizer, the trainer state, the plots, the report and the record.

    `arguments` are the run's argument dataclasses, the task's own second (model, task, training); `record` holds
    what the task knows (task, data, language, preset, starting model) and is completed here.
    `Trainer.save_model` already writes on the main process only (`args.should_save`); the model's
    `use_cache` is restored first because `Trainer` turns it off for training.
    """
    unwrapped = trainer.accelerator.unwrap_model(trainer.model)
    if hasattr(unwrapped.config, "use_cache"):
        unwrapped.config.use_cache = True
    trainer.save_model()
    if trainer.is_world_process_zero():
        trainer.save_state()
        plot_curves(trainer.state.log_history, trainer.args.output_dir)
        complete_record(record, trainer, arguments[1], metrics, timer.seconds).save(trainer.args.output_dir)
    # The report holds the wall time up to here; the barrier keeps ranks from exiting before it is written.
    write_report(trainer.args, arguments, metrics, timer.seconds)
    trainer.accelerator.wait_for_everyone()
    return metrics
