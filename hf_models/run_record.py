"""The run record: what a recipe did, written once at the end of training and read by every consumer.

Each recipe saves `run_record.json` next to the model (`finish_run` in `hf_models.training_utils`), and the
birthplace `evaluate` step adds its scores to it. `push_to_hub.py` builds the model card from it,
`benchmarks/write_results.py` and `benchmarks/plot_birthplace.py` read the headline numbers from it, and
`recipes/plot_sentiment.py` draws its per-epoch curves. Nothing is guessed from folder names.

The record holds no local path: a starting checkpoint is named by its folder name (or its Hub id), so that a
record can be published as it is.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RECORD_FILE", "Evaluation", "RunRecord", "model_reference", "model_size", "read_record"]

RECORD_FILE = "run_record.json"
RECORD_VERSION = 1
# Trainer logs these next to evaluation metrics; they describe the evaluation loop, not the model.
LOOP_KEYS = ("runtime", "samples_per_second", "steps_per_second", "epoch", "samples")
# Config fields that give a model's size in the record.
SIZE_FIELDS = (
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "vocab_size",
)


@dataclass
class Evaluation:
    """The scores of one model (or of a constant-answer baseline) on one split."""

    split: str
    metrics: dict[str, float]
    num_examples: int | None = None
    # A constant-answer baseline ("london_baseline", "most_common_baseline"): never counted as the model's result.
    baseline: str | None = None
    # One entry a validation pass during training: {"epoch": 1.0, "accuracy": 0.8, "f1": 0.79, "loss": 0.4}.
    per_epoch: list[dict[str, float]] = field(default_factory=list)

    @classmethod
    def from_trainer_metrics(cls, metrics: dict[str, Any], prefix: str = "eval", split: str = "validation"):
        """`eval_loss`, `eval_accuracy`, ... from `Trainer.evaluate()` as `Evaluation(split, {"loss": ..., ...})`."""
        values = {
            key.removeprefix(f"{prefix}_"): float(value)
            for key, value in metrics.items()
            if key.startswith(f"{prefix}_") and _is_number(value) and not key.endswith(LOOP_KEYS)
        }
        num_examples = metrics.get(f"{prefix}_samples")
        return cls(split, values, int(num_examples) if num_examples is not None else None)


@dataclass
class RunRecord:
    """One training (or evaluation) run of a recipe.

    `task` is what the model was trained for ("pretraining", "sentiment", "birthplace-pretraining",
    "birthplace-qa"); `objective` how ("clm", "span_corruption", "mlm", "openings", "classification", "qa").
    """

    task: str
    objective: str
    dataset: str | None = None
    split_sizes: dict[str, int] = field(default_factory=dict)
    language: str | None = None
    preset: str | None = None
    # Size: num_parameters, trainable_parameters and the config's shape (layers, hidden size, heads, ...).
    model_size: dict[str, int] = field(default_factory=dict)
    finetuned_from: str | None = None
    # In a record that only holds evaluations (the birthplace `evaluate` step into a new folder): the model scored.
    evaluated_model: str | None = None
    # Training outcome: final_train_loss (the last logged loss), train_loss (Trainer's mean), train_runtime, ...
    train_metrics: dict[str, Any] = field(default_factory=dict)
    evaluations: list[Evaluation] = field(default_factory=list)
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    # world_size, mixed_precision, device ("cpu", or the GPU's name).
    hardware: dict[str, Any] = field(default_factory=dict)
    wall_time_s: float | None = None
    version: int = RECORD_VERSION

    def add_evaluation(self, evaluation: Evaluation) -> None:
        """Add scores; those of a split (and baseline) already evaluated join them, a metric's new value wins.
        (The birthplace finetuning records the dev loss, then its `evaluate` step the exact match.)"""
        earlier = self.evaluation(evaluation.split, evaluation.baseline)
        if earlier is None:
            self.evaluations.append(evaluation)
            return
        earlier.metrics.update(evaluation.metrics)
        earlier.num_examples = evaluation.num_examples or earlier.num_examples
        earlier.per_epoch = evaluation.per_epoch or earlier.per_epoch

    def evaluation(self, split: str = "validation", baseline: str | None = None) -> Evaluation | None:
        return next((e for e in self.evaluations if (e.split, e.baseline) == (split, baseline)), None)

    def scored(self, split: str = "validation", metric: str = "exact_match") -> Evaluation | None:
        """The model's evaluation on `split` that has `metric`, else a baseline's (in a baseline's own folder)."""
        candidates = sorted((e for e in self.evaluations if e.split == split), key=lambda e: e.baseline is not None)
        return next((e for e in candidates if metric in e.metrics), None)

    def accuracy_per_epoch(self, split: str = "validation") -> tuple[list[float], list[float]]:
        """(epochs, accuracies) of the validation passes during training, one per epoch (the final evaluation
        repeats the last epoch's)."""
        evaluation = self.evaluation(split)
        points = {p["epoch"]: p["accuracy"] for p in (evaluation.per_epoch if evaluation else []) if "accuracy" in p}
        epochs = sorted(points)
        return epochs, [points[e] for e in epochs]

    def save(self, folder: str | os.PathLike) -> Path:
        path = Path(folder) / RECORD_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_finite(dataclasses.asdict(self)), indent=2, ensure_ascii=False) + "\n", "utf-8")
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["evaluations"] = [Evaluation(**e) for e in values.get("evaluations", [])]
        return cls(**values)


def read_record(folder: str | os.PathLike) -> RunRecord | None:
    """The record of a run folder, or None when the folder has none. A broken file is an error naming it."""
    path = Path(folder) / RECORD_FILE
    if not path.is_file():
        return None
    try:
        return RunRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: not a run record ({err})") from None


def model_size(model: Any) -> dict[str, int]:
    """A model's parameters (all, and those that train) and the config fields that give its shape."""
    return {
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        **{key: getattr(model.config, key) for key in SIZE_FIELDS},
    }


def model_reference(name_or_path: str | os.PathLike | None) -> str | None:
    """How a record names a starting model: a Hub id as it is, a local folder by its name (no local paths)."""
    if not name_or_path:
        return None
    value = str(name_or_path)
    if Path(value).exists() or value.startswith(("/", ".", "~")) or value.count("/") != 1:
        return Path(value.rstrip("/\\")).name
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: Any) -> Any:
    # JSON has no NaN or infinity: an undefined number is recorded as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
