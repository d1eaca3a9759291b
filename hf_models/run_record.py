"""The run record: what a recipe did, and the model card built from it.

A run folder holds one file per purpose. Trainer writes its own: `trainer_state.json` (`save_state`: steps, epochs,
every logged loss and evaluation) and `all_results.json` (`save_metrics`: the numbers the training and the final
evaluation returned). `run_record.json` holds what those do not say (task, data, model, tokenizer, hyperparameters,
hardware, wall time, the examples seen, the scores of later evaluation steps), and `report.json` the run's arguments.
`RunRecord.save` leaves out of `run_record.json` whatever Trainer's files in the folder already say, and `read_record`
joins them back: every reader (the card, `push_to_hub.py`, the benchmarks, the app) gets the whole account.

The record is written without local paths (a starting checkpoint is named by its folder name, or its Hub id), and
`RunRecord.public()` is what leaves the machine: `push_to_hub.py` uploads it beside the model as `run_record.json`,
with anything that still names a local file or folder taken out, so that a Hub copy of a birthplace model answers
as the run did (`hf_models.tasks.birthplace_qa.answer_format_of` reads it there).

The card (`build_model_card`) is `huggingface_hub.ModelCard.from_template` over `ModelCardData` and the template
`model_card.md` shipped in the package, which words each claim of the record and the exported `config.json`.
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
from enum import Enum
from pathlib import Path
from typing import Any

from filelock import FileLock

from .textio import UsageError, atomic_write_text

__all__ = [
    "DEFAULT_LICENSE",
    "RECORD_FILE",
    "Evaluation",
    "RunRecord",
    "build_model_card",
    "hardware",
    "model_reference",
    "model_size",
    "one_per_epoch",
    "read_record",
    "to_json",
    "updating_record",
    "write_run_card",
]

RECORD_FILE = "run_record.json"
RECORD_VERSION = 1
# Trainer's files in a run folder, which the record joins on reading (`read_record`).
STATE_FILE, RESULTS_FILE = "trainer_state.json", "all_results.json"
# The evaluation Trainer's results describe: the run's own, on its validation split.
TRAINER_SPLIT = "validation"
# Metrics of the evaluation that do not start with `eval_` (run_clm.py puts the perplexity with them).
EVAL_KEYS = ("perplexity",)
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
# An argument whose name holds one of these names a local file or folder: never kept in a record.
PATH_WORDS = ("dir", "file", "path")


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
    # Training outcome, as `all_results.json` has it: final_train_loss (the last logged loss), train_loss (Trainer's
    # mean), train_runtime, the task's own numbers.
    train_metrics: dict[str, Any] = field(default_factory=dict)
    evaluations: list[Evaluation] = field(default_factory=list)
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    # What ran: the steps and epochs (`trainer_state.json`'s) and the examples seen (`from_trainer`).
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

    def evaluation(self, split: str = TRAINER_SPLIT, baseline: str | None = None) -> Evaluation | None:
        return next((e for e in self.evaluations if (e.split, e.baseline) == (split, baseline)), None)

    def scored(self, split: str = TRAINER_SPLIT, metric: str = "exact_match") -> Evaluation | None:
        """The model's evaluation on `split` that has `metric`, else a baseline's (in a baseline's own folder)."""
        candidates = sorted((e for e in self.evaluations if e.split == split), key=lambda e: e.baseline is not None)
        return next((e for e in candidates if metric in e.metrics), None)

    def accuracy_per_epoch(self, split: str = TRAINER_SPLIT) -> tuple[list[float], list[float]]:
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
        task_args: Any,
        wall_time_s: float,
        *,
        hyperparameters: dict[str, Any] | None = None,
        not_applicable: Sequence[str] = (),
        **fields: Any,
    ) -> RunRecord:
        """The record of a finished training, once Trainer has saved its files in the output folder: what the task
        knows (`fields`: task, objective, dataset, split sizes, language, preset, starting model), what those files
        say (`_join`: training outcome, evaluation, steps and epochs) and what every run knows the same way, read from
        the `Trainer`: size, examples seen, hyperparameters, hardware and time.

        `hyperparameters` are the task's own values (they win over the arguments'); `not_applicable` names the task
        arguments that did not apply to this run (left out of the hyperparameters)."""
        from .tokenization import VOCABULARY_LANGUAGES, vocabulary_of

        record = cls(**fields)
        if trainer.processing_class is not None:
            record.tokenizer = vocabulary_of(trainer.processing_class)
            # A course's vocabulary is of its course's language (the lab's French pieces) unless the task said.
            record.language = record.language or VOCABULARY_LANGUAGES.get(record.tokenizer)
        record.model_size = model_size(trainer.accelerator.unwrap_model(trainer.model))
        # The training examples drawn (repeats across epochs counted) and the distinct ones among them (of a label
        # budget: the labels the model saw). An epoch is ceil(N / B) steps of B examples (batch x accumulation x
        # processes), its last step the remainder: so the count is exact on one process, and counts the sampler's
        # padding on several.
        args, dataset = trainer.args, trainer.train_dataset
        n_train = len(dataset) if dataset is not None else 0
        steps = int(trainer.state.global_step)
        batch = args.train_batch_size * args.gradient_accumulation_steps * args.world_size
        seen = 0
        if n_train and steps:
            full_epochs, rest = divmod(steps, math.ceil(n_train / batch))
            seen = full_epochs * n_train + min(rest * batch, n_train)
        record.trained = {"examples_seen": seen, "distinct_examples_seen": min(seen, n_train)}
        record._join(args.output_dir)
        # The curated `TrainingArguments` plus the task's own scalar arguments, without those that name a file or
        # folder, unset values and the options of the evaluation step (their help starts with 'evaluate:').
        values = {key: getattr(args, key) for key in TRAINING_HYPERPARAMETERS}
        # Trainer runs --max_steps when it is positive, else --num_train_epochs: the other one did not apply.
        values.pop("num_train_epochs" if args.max_steps > 0 else "max_steps")
        for task_field in dataclasses.fields(task_args):
            key, value = task_field.name, getattr(task_args, task_field.name)
            if task_field.metadata.get("help", "").startswith("evaluate:"):
                continue  # options of the evaluation step, not of the training
            if not _is_local(key) and isinstance(value, bool | int | float | str):
                values[key] = value
        values = {key: to_json(value) for key, value in values.items() if value is not None}
        values.update(hyperparameters or {})
        left_out = (*not_applicable, *TOKENIZER_ARGUMENTS)
        record.hyperparameters = {key: value for key, value in values.items() if key not in left_out}
        record.hardware = hardware(args)
        record.wall_time_s = wall_time_s
        return record

    def _join(self, folder: str | os.PathLike) -> None:
        """Take in what Trainer's files in `folder` say (`all_results.json`'s numbers, `trainer_state.json`'s log):
        the training numbers, the evaluation of the run's validation split with its per-epoch curve, the steps and
        epochs run. A value the record already holds wins (a later evaluation step's). A broken file is an error."""
        found = []
        for path in (Path(folder) / RESULTS_FILE, Path(folder) / STATE_FILE):
            try:
                found.append(json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {})
            except ValueError as err:
                raise UsageError(f"{path}: not Trainer's file ({err})") from None
        results, state = found
        self.train_metrics = {
            **{k: v for k, v in results.items() if not k.startswith("eval_") and k not in (*EVAL_KEYS, "epoch")},
            **self.train_metrics,
        }
        # The final evaluation's scores and each logged one's, `eval_loss` as "loss" (without the loop's timings).
        history = [entry for entry in state.get("log_history", []) if "eval_loss" in entry and "epoch" in entry]
        final, *logged = (
            {
                key.removeprefix("eval_"): float(value)
                for key, value in entry.items()
                if key.startswith("eval_") and not key.endswith(LOOP_KEYS) and type(value) in (int, float)
            }
            for entry in (results, *history)
        )
        if final:
            final.update({key: results[key] for key in EVAL_KEYS if key in results})  # run_clm.py's perplexity
            # Trainer counts the examples of an evaluation only where the task says (`eval_samples`).
            samples = results.get("eval_samples")
            count = int(samples) if samples is not None else self.split_sizes.get(TRAINER_SPLIT)
            joined = Evaluation(TRAINER_SPLIT, final, count)
            joined.per_epoch = one_per_epoch(
                {"epoch": entry["epoch"], **scores} for entry, scores in zip(history, logged, strict=True)
            )
            earlier = self.evaluation()
            if earlier is not None:  # the record's own values win over Trainer's
                joined.metrics.update(earlier.metrics)
                joined.per_epoch = earlier.per_epoch or joined.per_epoch
                joined.num_examples = earlier.num_examples or joined.num_examples
                self.evaluations.remove(earlier)
            self.evaluations.insert(0, joined)
        if "global_step" in state:
            ran = {"steps": state["global_step"], "epochs": round(float(state.get("epoch") or 0.0), 4)}
            self.trained = {**ran, **self.trained}

    def public(self) -> RunRecord:
        """This record as it may be published with the model: the same fields, without anything local. A model is
        named by its folder name or Hub id (`model_reference`), a data file by its name; a hyperparameter, training
        metric or hardware field that names a file or folder (`data_dir`, ...) or holds a path is left out (`_is_local`).
        How a birthplace model answers (`recite_tokens`, `answer_words`, `capitalized_answers`) stays."""
        record = copy.deepcopy(self)
        record.finetuned_from = model_reference(self.finetuned_from)
        record.evaluated_model = model_reference(self.evaluated_model)
        if self.dataset:
            record.dataset = ", ".join(model_reference(name.strip()) or "" for name in self.dataset.split(","))
        record.hub_datasets = [name for name in self.hub_datasets if model_reference(name) == name]
        for name in ("hyperparameters", "train_metrics", "hardware"):
            kept = {key: value for key, value in getattr(self, name).items() if not _is_local(key, value)}
            setattr(record, name, kept)
        return record

    def save(self, folder: str | os.PathLike) -> Path:
        """Write `run_record.json` without what Trainer's files in `folder` already say (`read_record` joins it)."""
        path = Path(folder) / RECORD_FILE
        saying = RunRecord(task="", objective="")
        saying._join(folder)
        data = dataclasses.asdict(self)
        said = dataclasses.asdict(saying)
        for name in ("train_metrics", "trained"):
            data[name] = {k: v for k, v in data[name].items() if k not in said[name] or said[name][k] != v}
        trainers = saying.evaluation()
        for evaluation in data["evaluations"]:
            if trainers is not None and (evaluation["split"], evaluation["baseline"]) == (TRAINER_SPLIT, None):
                metrics = evaluation["metrics"]
                evaluation["metrics"] = {k: v for k, v in metrics.items() if trainers.metrics.get(k) != v}
                if evaluation["per_epoch"] == trainers.per_epoch:
                    evaluation["per_epoch"] = []
        text = json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n"
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
    """The record of a run folder, joined with Trainer's files beside it, or None when the folder has none. A broken
    file is an error naming it."""
    path = Path(folder) / RECORD_FILE
    if not path.is_file():
        return None
    try:
        record = RunRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as err:
        raise UsageError(f"{path}: not a run record ({err})") from None
    record._join(folder)
    return record


def one_per_epoch(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluations (each with its `epoch`) one per epoch, in the order of their epochs' first evaluation: where
    several share an epoch, the last wins. A run's final `Trainer.evaluate()` logs at the epoch where training
    stopped, which the evaluation at the end of that epoch (or at `--max_steps`) already has; the final one scores the
    model the run kept (the best one with `--load_best_model_at_end`)."""
    by_epoch: dict[float, dict[str, Any]] = {}
    for entry in entries:
        by_epoch[entry["epoch"]] = entry
    return list(by_epoch.values())


def model_size(model: Any) -> dict[str, int]:
    """A model's parameters (all, and those that train) and the config fields that give its shape."""
    return {
        "num_parameters": model.num_parameters(),
        "trainable_parameters": model.num_parameters(only_trainable=True),
        **{key: getattr(model.config, key) for key in SIZE_FIELDS},
    }


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
    if (
        Path(value).exists()
        or value.startswith(("/", ".", "~"))
        or value.count("/") != 1
        or any(c in value for c in "\\:")
    ):
        return re.split(r"[\\/]", value.rstrip("/\\"))[-1]  # a Windows path's name too, on any machine
    return value


def _is_local(key: str, value: Any = None) -> bool:
    """Whether an entry names a file or folder of this machine: by its name (`data_dir`, `predictions_file`, ...) or
    by its text, in a list or dict too: a `/` or a backslash (`../shared/data/cls-books`, `configs/x.json`, a Windows
    path, an absolute one), a leading `.` or `~`, or a file or folder that exists here."""
    if any(word in key for word in PATH_WORDS):
        return True
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple | set):
        return any(_is_local("", v) for v in value)
    return isinstance(value, str) and (
        "/" in value or "\\" in value or value.startswith((".", "~")) or os.path.exists(value)
    )


def to_json(value: Any) -> Any:
    """`value` as a plain JSON document: JSON has no NaN or infinity, so an undefined number is written as null;
    enums their values, paths and other objects strings, tuples and sets lists, and keys strings."""
    if isinstance(value, Enum):  # `lr_scheduler_type`'s SchedulerType: "linear", as JSON writes it
        value = value.value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


# ----------------------------------------------------------------------------------------------------------------
# The model card: `ModelCard.from_template` over `ModelCardData` and the package's `model_card.md`
# ----------------------------------------------------------------------------------------------------------------
CARD_TEMPLATE = Path(__file__).with_name("model_card.md")
DEFAULT_LICENSE = "apache-2.0"
# The Hub's pipeline tag and task name of each head (the heads themselves: `HEADS` of the model folder).
PIPELINE_TAGS = {
    "AutoModelForCausalLM": ("text-generation", "Text Generation"),
    "AutoModelForSequenceClassification": ("text-classification", "Text Classification"),
    "AutoModelForMaskedLM": ("fill-mask", "Fill Mask"),
    "AutoModel": ("feature-extraction", "Feature Extraction"),
}
# The prompt of the usage example of a language model, in the model's language.
PROMPTS = {"fr": "Il était une fois", "en": "Once upon a time"}
# Task arguments that act under some objectives only: the record keeps every argument of the task, the card those of
# the run's own objective (no masking probability for a causal LM).
OBJECTIVE_ARGUMENTS = {"mlm_probability": ("mlm",), "opening_tokens": ("openings",)}


def build_model_card(
    run_dir: str | os.PathLike,
    config: dict[str, Any],
    record: RunRecord | None,
    plots: Sequence[Path] = (),
    *,
    repo_id: str | None = None,
    language: str | None = None,
    license: str = DEFAULT_LICENSE,
    birthplace: bool | None = None,
    exported: bool = False,
):
    """The README.md of a run folder or of its export (`exported`: by `push_to_hub.py`), from the run record and the
    (exported) config, with the folder's `plots`; `repo_id`, `language` and `birthplace` override the record's. Its
    metadata has a `model-index` of the model's own evaluations (never a baseline's) when the run's data is on the
    Hub: `datasets:` and the index's data set are Hub ids, or absent (a local data set is in the text)."""
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    from .small_encoder import HEADS, SmallEncoderConfig
    from .small_encoder.configuration_small_encoder import PRESETS

    run_dir = Path(run_dir)
    record = record or RunRecord(task="", objective="")
    birthplace = record.task.startswith("birthplace") if birthplace is None else birthplace
    language = language or record.language
    repo_id = repo_id or f"your-username/{run_dir.resolve().name}"
    architecture = config["architectures"][0]
    auto_class = next((auto for auto, head in HEADS.items() if head.__name__ == architecture), None)
    if auto_class is None:
        raise UsageError(f"unsupported architecture {architecture!r} in config.json")
    pipeline_tag, task_name = PIPELINE_TAGS[auto_class]
    hub_dataset = record.hub_datasets[0] if record.hub_datasets else None
    index = dict(task_type=pipeline_tag, task_name=task_name, dataset_type=hub_dataset, dataset_name=hub_dataset)
    eval_results = [
        EvalResult(**index, dataset_split=evaluation.split, metric_type=name, metric_name=name, metric_value=value)
        for evaluation in record.evaluations
        if evaluation.baseline is None and hub_dataset
        for name, value in evaluation.metrics.items()
    ]
    tags = ["small-encoder", "custom_code", f"attention-{config.get('attention_type', 'vanilla')}"]
    tags += [t for t in (record.preset, "birthplace" if birthplace else None, record.task) if t and t not in tags]
    data = ModelCardData(
        library_name="transformers",
        pipeline_tag=pipeline_tag,
        language=language,
        license=license,
        datasets=list(record.hub_datasets) or None,
        tags=tags,
        model_name=repo_id.split("/")[-1] or None,
        eval_results=eval_results or None,
    )
    # Where the exported config's shape differs from its preset's (the vocabulary comes from the tokenizer).
    overrides = []
    if record.preset in PRESETS:
        preset = SmallEncoderConfig.from_preset(record.preset)
        shape = [key for key in SIZE_FIELDS if key != "vocab_size" and key in config]
        overrides = [f"{key}={config[key]}" for key in shape if config[key] != getattr(preset, key)]
    prompt = _birthplace_prompt(run_dir, config) if birthplace else PROMPTS.get(language or "", PROMPTS["en"])
    return ModelCard.from_template(
        data,
        template_path=str(CARD_TEMPLATE),
        record=record,
        config=config,
        language=language,
        repo_id=repo_id,
        auto_class=auto_class,
        birthplace=birthplace,
        overrides=overrides,
        hyperparameters={
            key: value
            for key, value in record.hyperparameters.items()
            if record.objective in OBJECTIVE_ARGUMENTS.get(key, (record.objective,))
        },
        id2label=sorted((config.get("id2label") or {}).items(), key=lambda kv: int(kv[0])),
        prompt=repr(prompt),
        example=repr("Un livre passionnant, je le recommande." if language == "fr" else "A gripping book."),
        plots=list(plots),
        exported=exported,
        folder=run_dir.resolve().name,
    )


def _birthplace_prompt(run_dir: Path, config: dict[str, Any]) -> str:
    """A birthplace question, ended by the separator (CS224N's `⁇`) where the tokenizer defines `sep_token_id`."""
    path, question = run_dir / "tokenizer.json", "Where was Albert Einstein born?"
    if config.get("sep_token_id") is None or not path.is_file():
        return question
    tokens = json.loads(path.read_text(encoding="utf-8")).get("added_tokens", [])
    return question + next((t.get("content") or "" for t in tokens if t.get("id") == config["sep_token_id"]), "")


def write_run_card(run_dir: str | os.PathLike, record: RunRecord | None = None) -> Path:
    """Write the run folder's `README.md`, as `run_clm.py`'s `trainer.create_model_card()` writes one: the card of
    `record` (default: the folder's own) in its public form, with the folder's plots, that says the recipe wrote it."""
    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    record = record or read_record(run_dir)
    plots = sorted(path.relative_to(run_dir) for path in run_dir.glob("*.png"))
    card = build_model_card(run_dir, config, record.public() if record else None, plots)
    return atomic_write_text(run_dir / "README.md", str(card))
