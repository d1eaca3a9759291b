"""Pieces shared by the `Trainer` recipes in `recipes/`: argument dataclasses, config building, local
`evaluate` metrics, plots and the JSON run report.

Everything here works offline: metrics are loaded by absolute path from `hf_models/metrics/`, plots use
matplotlib's Agg backend, and reports are written with `evaluate.save`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import evaluate
from transformers import HfArgumentParser, PreTrainedTokenizerBase, Trainer, TrainerCallback, TrainingArguments

__all__ = [
    "METRICS_DIR",
    "ModelArguments",
    "PlotCallback",
    "RunTimer",
    "TrimPaddingCollator",
    "build_config",
    "finish_run",
    "load_metric",
    "parse_args",
    "plot_curves",
    "str2bool",
    "write_report",
]

METRICS_DIR = Path(__file__).resolve().parent / "metrics"


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
    # Overrides bypass the dataclass __post_init__ checks: run them again.
    config.validate_architecture()
    return config


def _present_token_ids(tokenizer: PreTrainedTokenizerBase) -> dict[str, int]:
    names = ("pad", "bos", "eos", "sep", "mask")
    ids = {f"{name}_token_id": getattr(tokenizer, f"{name}_token_id", None) for name in names}
    return {key: value for key, value in ids.items() if value is not None}


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


def finish_run(
    trainer: Trainer,
    arguments: Sequence[Any],
    metrics: dict[str, Any],
    timer: RunTimer,
) -> dict[str, Any]:
    """End of every recipe: save the model and tokenizer, the trainer state, the plots and the report.

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
    # The report holds the wall time up to here; the barrier keeps ranks from exiting before it is written.
    write_report(trainer.args, arguments, metrics, timer.seconds)
    trainer.accelerator.wait_for_everyone()
    return metrics
