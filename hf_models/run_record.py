"""The run record: what a recipe did, written once at the end of training and read by every consumer.

Each recipe saves `run_record.json` next to the model (`RunRecord.from_trainer`, called by `finish_run` in
`hf_models.training.finish`), and the birthplace `evaluate` step adds its scores to it. `push_to_hub.py` builds the
model card from it, `benchmarks/write_results.py` and `benchmarks/plot_birthplace.py` read the headline numbers from
it, and `benchmarks/plot_sentiment.py` draws its per-epoch curves. Nothing is guessed from folder names.

The record is written without local paths (a starting checkpoint is named by its folder name, or its Hub id), and
`RunRecord.public()` is what leaves the machine: `push_to_hub.py` uploads it beside the model as `run_record.json`,
with anything that still names a local file or folder taken out, so that a Hub copy of a birthplace model answers
as the run did (`hf_models.tasks.birthplace_qa.answer_format_of` reads it there).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from .textio import UsageError, atomic_write_text

__all__ = [
    "RECORD_FILE",
    "Evaluation",
    "RunRecord",
    "hardware",
    "model_reference",
    "model_size",
    "one_per_epoch",
    "read_record",
    "to_json",
    "training_run",
    "training_hyperparameters",
    "updating_record",
]

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
# Task arguments that choose the tokenizer: the record names the tokenizer the run used instead (`tokenizer`), which
# a model's own tokenizer (`--model_name_or_path` with no flag) makes differ from the flags.
TOKENIZER_ARGUMENTS = ("lab_vocabulary", "lab_raw_text")
# Trainer's training metrics (train_loss, train_runtime, ...) and ours (final_train_loss).
TRAIN_METRIC_PREFIXES = ("train_", "final_train_", "total_flos")
# An argument whose name holds one of these names a local file or folder: never kept in a record.
PATH_WORDS = ("dir", "file", "path")
# A Windows drive ("C:\\", "D:/") or network share ("\\\\host") at the start of a string.
WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")


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
    # The data's name (a folder or file name, never its path); the card describes it in its text.
    dataset: str | None = None
    # Hub ids of the data sets the run read, the only ones the card's metadata names (`datasets:`, `model-index`).
    # The recipes read local folders and files only, so they leave it empty.
    hub_datasets: list[str] = field(default_factory=list)
    split_sizes: dict[str, int] = field(default_factory=dict)
    language: str | None = None
    preset: str | None = None
    # A new model's --config_overrides on its preset: an arguments file's and the flag's, merged key by key.
    config_overrides: str | None = None
    # Size: num_parameters, trainable_parameters and the config's shape (layers, hidden size, heads, ...).
    model_size: dict[str, int] = field(default_factory=dict)
    finetuned_from: str | None = None
    # In a record that only holds evaluations (the birthplace `evaluate` step into a new folder): the model scored.
    evaluated_model: str | None = None
    # Training outcome: final_train_loss (the last logged loss), train_loss (Trainer's mean), train_runtime, ...
    train_metrics: dict[str, Any] = field(default_factory=dict)
    evaluations: list[Evaluation] = field(default_factory=list)
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    # What ran, from Trainer's state (`trainer_state.json`): `training_run`'s steps, epochs and examples seen.
    trained: dict[str, Any] = field(default_factory=dict)
    # The tokenizer the run used: its vocabulary (`hf_models.tokenization.vocabulary_of`: "bpe", "altegrad-lab-raw",
    # ...); its size is the model's `vocab_size`.
    tokenizer: str | None = None
    # The longest input the model trained on, in tokens: a review's cut, a block's size.
    max_length: int | None = None
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
        """(epochs, accuracies) of the validation passes during training, one per epoch (the last at an epoch:
        `one_per_epoch`)."""
        evaluation = self.evaluation(split)
        points = {p["epoch"]: p["accuracy"] for p in (evaluation.per_epoch if evaluation else []) if "accuracy" in p}
        epochs = sorted(points)
        return epochs, [points[e] for e in epochs]

    @classmethod
    def from_trainer(
        cls,
        trainer: Any,
        metrics: dict[str, Any],
        task_args: Any,
        wall_time_s: float,
        *,
        hyperparameters: dict[str, Any] | None = None,
        not_applicable: Sequence[str] = (),
        train_metric_keys: Sequence[str] = (),
        **fields: Any,
    ) -> RunRecord:
        """The record of a finished training: what the task knows (`fields`: task, objective, dataset, split sizes,
        language, preset, starting model) and what every run knows the same way, read from the `Trainer`: size,
        training outcome, evaluations, hyperparameters, hardware and time.

        `hyperparameters` are the task's own values (they win over the arguments'); `not_applicable` names the task
        arguments that did not apply to this run (left out of the hyperparameters); `train_metric_keys` are the
        task's own training metrics kept besides Trainer's `train_*`."""
        from .tokenization import VOCABULARY_LANGUAGES, vocabulary_of

        record = cls(**fields)
        if trainer.processing_class is not None:
            record.tokenizer = vocabulary_of(trainer.processing_class)
            # A course's vocabulary is of its course's language (the lab's French pieces) unless the task said.
            record.language = record.language or VOCABULARY_LANGUAGES.get(record.tokenizer)
        record.trained = training_run(trainer)
        record.model_size = model_size(trainer.accelerator.unwrap_model(trainer.model))
        record.train_metrics = {
            key: value
            for key, value in metrics.items()
            if (key.startswith(TRAIN_METRIC_PREFIXES) or key in train_metric_keys) and isinstance(value, int | float)
        }
        history = [entry for entry in trainer.state.log_history if "eval_loss" in entry and "epoch" in entry]
        # The final evaluation, else the last one during training (the birthplace finetuning evaluates only then).
        evaluation = Evaluation.from_trainer_metrics(metrics if "eval_loss" in metrics else (history or [{}])[-1])
        if evaluation.metrics:
            if "perplexity" in metrics:
                evaluation.metrics["perplexity"] = metrics["perplexity"]
            evaluation.per_epoch = one_per_epoch(
                {"epoch": entry["epoch"], **Evaluation.from_trainer_metrics(entry).metrics} for entry in history
            )
            # Trainer counts the examples of an evaluation only where the task says (`eval_samples`).
            evaluation.num_examples = evaluation.num_examples or record.split_sizes.get(evaluation.split)
            record.add_evaluation(evaluation)
        values = {**training_hyperparameters(trainer.args, task_args), **(hyperparameters or {})}
        left_out = (*not_applicable, *TOKENIZER_ARGUMENTS)
        record.hyperparameters = {key: value for key, value in values.items() if key not in left_out}
        record.hardware = hardware(trainer.args)
        record.wall_time_s = wall_time_s
        return record

    def public(self) -> RunRecord:
        """This record as it may be published with the model: the same fields, without anything local. A model is
        named by its folder name or Hub id (`model_reference`), a data file by its name; a hyperparameter, training
        metric or hardware field that names a file or folder (`data_dir`, ...) or holds a local path is left out.
        How a birthplace model answers (`recite_tokens`, `answer_words`, `capitalized_answers`) stays."""
        record = copy.deepcopy(self)
        record.finetuned_from = model_reference(self.finetuned_from)
        record.evaluated_model = model_reference(self.evaluated_model)
        if self.dataset:
            record.dataset = ", ".join(model_reference(name.strip()) or "" for name in self.dataset.split(","))
        record.hub_datasets = [name for name in self.hub_datasets if not _names_local_file(name)]
        record.hyperparameters = _without_local_paths(self.hyperparameters)
        record.train_metrics = _without_local_paths(self.train_metrics)
        record.hardware = _without_local_paths(self.hardware)
        return record

    def save(self, folder: str | os.PathLike) -> Path:
        path = Path(folder) / RECORD_FILE
        text = json.dumps(to_json(dataclasses.asdict(self)), indent=2, ensure_ascii=False) + "\n"
        return atomic_write_text(path, text)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["evaluations"] = [Evaluation(**e) for e in values.get("evaluations", [])]
        return cls(**values)


@contextmanager
def updating_record(folder: str | os.PathLike, start: Callable[[], RunRecord]) -> Iterator[RunRecord]:
    """The record of `folder` (or `start()` when it has none) to change, saved on exit. A lock serialises the
    read-change-save of processes that score one model side by side (the benchmark's dev and test evaluations), so
    that none loses another's scores. The lock file lives in the temporary folder, never beside the model."""
    key = hashlib.sha256(str(Path(folder).resolve()).encode()).hexdigest()[:20]
    with FileLock(Path(tempfile.gettempdir()) / f"hf_models-record-{key}.lock"):
        record = read_record(folder) or start()
        yield record
        record.save(folder)


def read_record(folder: str | os.PathLike) -> RunRecord | None:
    """The record of a run folder, or None when the folder has none. A broken file is an error naming it."""
    path = Path(folder) / RECORD_FILE
    if not path.is_file():
        return None
    try:
        return RunRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as err:
        raise UsageError(f"{path}: not a run record ({err})") from None


def one_per_epoch(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluations (each with its `epoch`) one per epoch, in the order of their epochs' first evaluation: where
    several share an epoch, the last wins. A run's final `Trainer.evaluate()` logs at the epoch where training
    stopped, which the evaluation at the end of that epoch (or at `--max_steps`) already has; the final one scores the
    model the run kept (the best one with `--load_best_model_at_end`)."""
    by_epoch: dict[float, dict[str, Any]] = {}
    for entry in entries:
        by_epoch[entry["epoch"]] = entry
    return list(by_epoch.values())


def training_run(trainer: Any) -> dict[str, Any]:
    """What a training ran, from Trainer's state (as `trainer_state.json` saves it) and the training set: the
    optimizer steps, the epochs (a fraction when `--max_steps` stops the run first), the training examples drawn
    (repeats across epochs counted) and the distinct ones among them (of a label budget: the labels the model saw).

    An epoch is ceil(N / B) steps of B examples (batch x accumulation x processes), its last step the remainder: so
    the count is exact on one process, and counts the sampler's padding on several."""
    state, args = trainer.state, trainer.args
    dataset = trainer.train_dataset
    n_train = len(dataset) if dataset is not None else 0
    steps = int(state.global_step)
    batch = args.train_batch_size * args.gradient_accumulation_steps * args.world_size
    seen = 0
    if n_train and steps:
        full_epochs, rest = divmod(steps, math.ceil(n_train / batch))
        seen = full_epochs * n_train + min(rest * batch, n_train)
    return {
        "steps": steps,
        "epochs": round(float(state.epoch or 0.0), 4),
        "examples_seen": seen,
        "distinct_examples_seen": min(seen, n_train),
    }


def model_size(model: Any) -> dict[str, int]:
    """A model's parameters (all, and those that train) and the config fields that give its shape."""
    return {
        "num_parameters": model.num_parameters(),
        "trainable_parameters": model.num_parameters(only_trainable=True),
        **{key: getattr(model.config, key) for key in SIZE_FIELDS},
    }


def training_hyperparameters(training_args: Any, task_args: Any) -> dict[str, Any]:
    """The curated `TrainingArguments` plus the task's own scalar arguments, without local paths, unset values and
    the options of the evaluation step (their help starts with 'evaluate:')."""
    values = {key: getattr(training_args, key) for key in TRAINING_HYPERPARAMETERS}
    # Trainer runs --max_steps when it is positive, else --num_train_epochs: the other one did not apply.
    values.pop("num_train_epochs" if training_args.max_steps > 0 else "max_steps")
    for task_field in dataclasses.fields(task_args):
        key, value = task_field.name, getattr(task_args, task_field.name)
        if task_field.metadata.get("help", "").startswith("evaluate:"):
            continue  # options of the evaluation step, not of the training
        if not _names_a_path(key) and isinstance(value, bool | int | float | str):
            values[key] = value
    return {key: to_json(value) for key, value in values.items() if value is not None}


def hardware(training_args: Any) -> dict[str, Any]:
    """Processes, mixed precision and device of a run. `TrainingArguments.mixed_precision` is what `Trainer`'s
    accelerator uses: "bf16"/"fp16" from the flags, otherwise accelerate's `--mixed_precision`, else "no"."""
    device = training_args.device
    if device.type == "cuda":
        import torch

        name = torch.cuda.get_device_name(device)
    else:
        name = device.type
    return {
        "world_size": training_args.world_size,
        "mixed_precision": str(getattr(training_args, "mixed_precision", "no")),
        "device": name,
    }


def model_reference(name_or_path: str | os.PathLike | None) -> str | None:
    """How a record names a starting model: a Hub id as it is, a local folder by its name (no local paths)."""
    if not name_or_path:
        return None
    value = str(name_or_path)
    if Path(value).exists() or value.startswith(("/", ".", "~")) or value.count("/") != 1 or "\\" in value:
        return re.split(r"[\\/]", value.rstrip("/\\"))[-1]  # a Windows path's name too, on any machine
    return value


def _names_a_path(key: str) -> bool:
    """Whether an argument's name says it is a local file or folder (`data_dir`, `predictions_file`, ...)."""
    return any(word in key for word in PATH_WORDS)


def _is_local_path(value: Any) -> bool:
    """Whether a value is, or holds, a path of this machine: an absolute path (POSIX or Windows), one from the home
    folder (`~`), or any text with the home folder in it."""
    if isinstance(value, dict):
        return any(_is_local_path(v) for v in value.values())
    if isinstance(value, list | tuple | set):
        return any(_is_local_path(v) for v in value)
    if not isinstance(value, str):
        return False
    home = str(Path.home())
    return value.startswith(("/", "~")) or bool(WINDOWS_ABSOLUTE.match(value)) or (len(home) > 1 and home in value)


def _names_local_file(value: Any) -> bool:
    """Whether a text names a file or folder of this machine: absolute, existing here, with a backslash or a
    leading `.` (`../shared/data/cls-books`, `runs\\tok`); a Hub id (`owner/name`) is not one."""
    if isinstance(value, dict):
        return any(_names_local_file(v) for v in value.values())
    if isinstance(value, list | tuple | set):
        return any(_names_local_file(v) for v in value)
    if not isinstance(value, str) or not value:
        return False
    return _is_local_path(value) or "\\" in value or value.startswith(".") or os.path.exists(value)


def _without_local_paths(values: dict[str, Any]) -> dict[str, Any]:
    """Values without any that name a file or folder, by the argument's name or by the text (a relative path too:
    `--lab_vocabulary ../shared/data/cls-books`, `--model_config configs/x.json`)."""
    return {
        key: value
        for key, value in values.items()
        if not _names_a_path(key) and not _names_local_file(value) and not _has_separator(value)
    }


def _has_separator(value: Any) -> bool:
    """A text with a `/`: in a hyperparameter, training metric or hardware field, a relative path."""
    if isinstance(value, dict):
        return any(_has_separator(v) for v in value.values())
    if isinstance(value, list | tuple | set):
        return any(_has_separator(v) for v in value)
    return isinstance(value, str) and "/" in value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def to_json(value: Any) -> Any:
    """`value` as a plain JSON document: JSON has no NaN or infinity, so an undefined number is written as null;
    enums, paths and other objects become strings, tuples and sets lists, and keys strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
