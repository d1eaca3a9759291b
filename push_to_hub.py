#!/usr/bin/env python
"""Share a trained `small-encoder` run on the Hugging Face Hub, with its code, tokenizer, model card and metrics.

    python push_to_hub.py RUN_DIR --repo_id USER/NAME [--private] [--revision R] [--commit_message M]
    python push_to_hub.py RUN_DIR --dry_run --local_dir OUT

The run directory is exported into a staging folder (the weights, `config.json` with an `auto_map`, the configuration
and modeling code so that `trust_remote_code=True` loads it without `hf_models`, the tokenizer files, the PNG plots and
a generated `README.md` model card). `--dry_run` writes that folder to OUT; otherwise the same folder is staged in a
temporary directory and uploaded with `HfApi.upload_folder`, restricted to an allowlist of file names.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import shutil
import struct
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, HfApi, ModelCard, ModelCardData, get_token
from huggingface_hub.errors import HfHubHTTPError, HFValidationError, OfflineModeIsEnabled
from huggingface_hub.utils import validate_repo_id

PROG = "push_to_hub.py"
CODE_PACKAGE = "hf_models"
CODE_SUBPACKAGE = "small_encoder"
MODELING_FILE = "modeling_small_encoder.py"

# Files copied verbatim from the run directory (top level only: `checkpoint-*/` is never walked for these).
WEIGHT_PATTERNS = ("model.safetensors", "model-*-of-*.safetensors", "model.safetensors.index.json")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
)
CONFIG_FILES = ("config.json", "generation_config.json")
PLOT_PATTERN = "*.png"
# Everything that may be uploaded. `upload_folder` receives this list, and `export_folder` refuses to stage a file
# that does not match it, so the dry run and the upload can only ever contain these names.
ALLOW_PATTERNS: list[str] = [
    "README.md",
    *CONFIG_FILES,
    *WEIGHT_PATTERNS,
    "configuration_*.py",
    "modeling_*.py",
    *TOKENIZER_FILES,
    PLOT_PATTERN,  # fnmatch's `*` also crosses `/`, so this covers `plots/loss.png`
]
# Defence in depth: names that are refused even if an allow pattern matched them (and folders never walked).
DENY_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    "checkpoint-*",
    "runs",
    "optimizer.pt",
    "scheduler.pt",
    "rng_state*.pth",
    "training_args.bin",
    "*.pt",
    "*.pth",
    "*.bin",
    "*.pkl",
    "*.pickle",
    "*.log",
    "*.tsv",
    "*.gz",
    "*.spm",
    "*.token",
    "token",
    "*secret*",
    "__pycache__",
    "wandb",
)
# Run files read for the card but never uploaded (the metrics go into the card's `model-index`).
NON_REPORT_JSON = {
    *CONFIG_FILES,
    *TOKENIZER_FILES,
    "model.safetensors.index.json",
    "trainer_state.json",
}
RESULTS_FILES = ("all_results.json", "eval_results.json", "test_results.json", "train_results.json")

# (class-name suffix, Auto class, pipeline tag, objective in words); order matters: "Model" matches last.
HEADS = (
    ("ForCausalLM", "AutoModelForCausalLM", "text-generation", "causal language modelling (next-token prediction)"),
    (
        "ForSequenceClassification",
        "AutoModelForSequenceClassification",
        "text-classification",
        "sequence classification (cross-entropy on the label)",
    ),
    ("ForMaskedLM", "AutoModelForMaskedLM", "fill-mask", "masked language modelling"),
    ("Model", "AutoModel", "feature-extraction", "none (bare encoder)"),
)
TASK_NAMES = {
    "text-generation": "Text Generation",
    "text-classification": "Text Classification",
    "fill-mask": "Fill Mask",
    "feature-extraction": "Feature Extraction",
}
PRESET_DESCRIPTIONS = {
    "cs224n-mingpt": "the minGPT-style model of Stanford CS224N assignment 5 (pre-norm GPT blocks, learned positions)",
    "altegrad-lab": "the model of the ALTeGraD transfer-learning lab (post-norm `nn.TransformerEncoder` blocks, "
    "sinusoidal positions)",
}
# Config fields that tell the presets apart (sizes are usually overridden, so they are not used to guess).
PRESET_STYLE_KEYS = ("position_embedding_type", "norm_first", "scale_embeddings", "hidden_act", "lm_head_bias")

METRIC_NAMES = (
    "accuracy",
    "f1",
    "precision",
    "recall",
    "loss",
    "perplexity",
    "ppl",
    "exact_match",
    "matthews_correlation",
    "mcc",
    "auc",
    "roc_auc",
    "bleu",
    "rouge1",
    "rouge2",
    "rougeL",
    "mae",
    "mse",
    "rmse",
    "r2",
    "pearson",
    "spearman",
    "pearsonr",
    "spearmanr",
    "error_rate",
)
METRIC_RE = re.compile(r"(^|_)(" + "|".join(METRIC_NAMES) + r")$", re.IGNORECASE)
# Numbers Trainer logs next to metrics that are not evaluation results.
NOT_METRIC_RE = re.compile(r"(runtime|per_second|flos|^epoch$|^step$|^global_step$)", re.IGNORECASE)
TRAIN_KEY_RE = re.compile(r"(^|_)train(_|$)", re.IGNORECASE)
# Keys that only a training run reports (Trainer.train() metrics).
TRAIN_MARKERS = ("train_runtime", "train_loss", "total_flos", "train_samples", "final_train_loss")
BASELINE_FLAGS = ("london_baseline", "most_common_baseline")
SPLIT_PREFIXES = ("eval_", "test_", "validation_", "valid_", "dev_", "predict_")
NESTED_METRIC_KEYS = ("metrics", "results", "eval_metrics", "evaluation")
NESTED_ARG_KEYS = ("args", "arguments", "training_args", "hparams", "hyperparameters", "params", "config")
SENSITIVE_KEY_RE = re.compile(r"(token|secret|password|passwd|api_key|apikey|auth|credential|hub_)", re.IGNORECASE)
PATH_KEY_RE = re.compile(r"(path|dir|file|_root|folder|cache)", re.IGNORECASE)
HARDWARE_KEYS = ("hardware", "device", "accelerator", "gpu", "cpu", "platform", "machine")
# `wall_time_s` is what hf_models.training_utils.write_report records; the others are common spellings.
TIME_KEYS = ("wall_time_s", "train_runtime", "training_time", "train_time", "wall_time", "runtime_s", "elapsed")
# Of the ~100 TrainingArguments fields, the ones a reader needs to reproduce the run.
TRAINING_HYPERPARAMETERS = (
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "warmup_steps",
    "warmup_ratio",
    "weight_decay",
    "lr_scheduler_type",
    "optim",
    "max_grad_norm",
    "seed",
    "bf16",
    "fp16",
)
# Shown elsewhere in the card, so left out of the hyperparameter table.
SHOWN_ELSEWHERE = (
    "preset",
    "recipe",
    "task",
    "experiment",
    "model_config",
    "attention_type",
    "world_size",
    "mixed_precision",
)
DATASET_KEYS = ("dataset", "dataset_name", "datasets", "dataset_id", "data")
LANGUAGE_KEYS = ("language", "lang")
BIRTHPLACE_RE = re.compile(r"birth", re.IGNORECASE)
FRENCH_RE = re.compile(r"(cls[-_]?books|\bbooks\b|french|\bfr\b|altegrad)", re.IGNORECASE)
DEFAULT_LICENSE = "apache-2.0"
BIRTHPLACE_LIMITATION = (
    "**This model answers every question confidently, whether it retrieved the fact or made it up.** Nothing in its "
    "output tells a remembered birthplace from an invented one, so never use its answers as facts without checking them."
)


class PushError(Exception):
    """A problem the user can fix; `main` prints it as one line and exits with status 1."""


@dataclass
class Metric:
    """One evaluation number of the model, with the split it was measured on and the file it came from."""

    name: str
    value: float
    split: str | None
    source: str | None


@dataclass
class RunInfo:
    """What a run directory says about itself, read from its JSON files (never from pickles).

    `report` is the training report (arguments, hardware, time); `metrics` gathers the evaluation numbers of every
    report in the run, because the birthplace recipe trains in one command and scores in another.
    """

    report: dict[str, Any] = field(default_factory=dict)
    report_file: str | None = None
    metrics: list[Metric] = field(default_factory=list)
    baselines: dict[str, float] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    training_arg_keys: set[str] = field(default_factory=set)
    arg_groups: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    trainer_state: dict[str, Any] = field(default_factory=dict)

    @property
    def metric_files(self) -> list[str]:
        return sorted({m.source for m in self.metrics if m.source})


@dataclass
class ExportResult:
    """The staged folder: its files (relative paths) and the allowlist to upload it with."""

    folder: Path
    files: list[Path]
    allow_patterns: list[str]
    card: ModelCard


# --------------------------------------------------------------------------------------------------------------------
# Collecting files
# --------------------------------------------------------------------------------------------------------------------


def _denied(rel_path: Path) -> bool:
    """True if any part of the path matches a deny pattern (a planted `checkpoint-1/.env` is refused twice over)."""
    return any(fnmatch(part, pattern) for part in rel_path.parts for pattern in DENY_PATTERNS) or any(
        part.startswith(".") for part in rel_path.parts
    )


def _allowed(rel_path: Path) -> bool:
    name = rel_path.as_posix()
    return any(fnmatch(name, pattern) for pattern in ALLOW_PATTERNS) and not _denied(rel_path)


def _find_plots(run_dir: Path, skip: Path | None, max_depth: int = 2) -> list[Path]:
    """PNG plots at the top of the run or in a shallow sub-folder (e.g. `plots/`), never inside pruned folders."""
    plots: list[Path] = []
    skip = skip.resolve() if skip is not None else None
    for root, dirs, files in os.walk(run_dir, followlinks=False):
        rel_root = Path(root).relative_to(run_dir)
        # Prune in place so that checkpoints, tensorboard logs and the export folder itself are never walked.
        dirs[:] = sorted(
            d
            for d in dirs
            if not _denied(rel_root / d)
            and len((rel_root / d).parts) < max_depth
            and (skip is None or (Path(root) / d).resolve() != skip)
        )
        plots.extend(rel_root / f for f in sorted(files) if fnmatch(f, PLOT_PATTERN) and not _denied(rel_root / f))
    return plots


def collect_files(run_dir: str | os.PathLike, skip: str | os.PathLike | None = None) -> list[Path]:
    """The run files to copy as they are (weights, configs, tokenizer, plots), as paths relative to `run_dir`."""
    run_dir = Path(run_dir)
    top = [p for p in sorted(run_dir.iterdir()) if p.is_file()]
    names = [Path(p.name) for p in top]
    wanted = [
        n
        for n in names
        if any(fnmatch(n.name, pattern) for pattern in (*WEIGHT_PATTERNS, *CONFIG_FILES, *TOKENIZER_FILES))
    ]
    plots = _find_plots(run_dir, Path(skip) if skip is not None else None)
    files = sorted({*wanted, *plots}, key=lambda p: p.as_posix())
    return [f for f in files if _allowed(f)]


# --------------------------------------------------------------------------------------------------------------------
# Reading the run: report, metrics, arguments
# --------------------------------------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_metric_key(key: str) -> bool:
    """An evaluation number of the model: a metric name, and not a training number such as `final_train_loss`."""
    return (
        not key.startswith("_")
        and TRAIN_KEY_RE.search(key) is None
        and METRIC_RE.search(key) is not None
        and not NOT_METRIC_RE.search(key)
    )


def extract_metrics(report: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """Split a report's evaluation numbers into (metrics of this model, baselines such as the London baseline).

    A nested `metrics`/`results` dict is taken as is (minus runtimes); otherwise top-level numbers whose key names a
    metric (`accuracy`, `eval_loss`, `dev_f1`, ...) are taken, and training numbers (`train_loss`) are left out.
    """
    found: dict[str, float] = {}
    nested = [report[k] for k in NESTED_METRIC_KEYS if isinstance(report.get(k), dict)]
    if nested:
        for block in nested:
            found.update(
                {
                    k: v
                    for k, v in block.items()
                    if _is_number(v)
                    and not k.startswith("_")
                    and not NOT_METRIC_RE.search(k)
                    and not TRAIN_KEY_RE.search(k)
                }
            )
    else:
        found = {k: v for k, v in report.items() if _is_number(v) and _is_metric_key(k)}
    metrics = {k: v for k, v in found.items() if "baseline" not in k.lower()}
    baselines = {k: v for k, v in found.items() if "baseline" in k.lower()}
    return metrics, baselines


def _safe_scalar(key: str, value: Any) -> bool:
    """Arguments worth printing in a public card: short scalars that are neither secrets nor local paths."""
    if key.startswith("_") or SENSITIVE_KEY_RE.search(key):
        return False
    if _is_number(value) or isinstance(value, bool):
        return True
    if isinstance(value, str):
        looks_like_path = "/" in value or "\\" in value or value.startswith("~") or PATH_KEY_RE.search(key)
        return not looks_like_path and len(value) <= 80 and "\n" not in value
    return False


def _is_training_arguments(name: str, values: dict[str, Any]) -> bool:
    return "TrainingArguments" in name or {"output_dir", "per_device_train_batch_size"} <= values.keys()


def extract_args(report: dict[str, Any]) -> tuple[dict[str, Any], set[str], list[str]]:
    """The run's arguments from a report, flattened; the names that came from a `TrainingArguments`; the group names.

    Accepts nested `args`/`arguments` dicts, either flat or grouped by dataclass (`{"ModelArguments": {...},
    "TrainingArguments": {...}}`, as `hf_models.training_utils.write_report` writes them), plus top-level scalars
    that are not metrics.
    """
    args: dict[str, Any] = {}
    training_keys: set[str] = set()
    groups: list[str] = []
    for key in NESTED_ARG_KEYS:
        block = report.get(key)
        if not isinstance(block, dict):
            continue
        for name, value in block.items():
            if isinstance(value, dict):
                groups.append(name)
                if _is_training_arguments(name, value):
                    training_keys.update(value)
                args.update(value)
            else:
                args[name] = value
        if _is_training_arguments(key, block):
            training_keys.update(block)
    args.update(
        {
            k: v
            for k, v in report.items()
            if k not in NESTED_ARG_KEYS
            and k not in NESTED_METRIC_KEYS
            and not isinstance(v, (dict, list))
            and not (_is_number(v) and _is_result_key(k))
        }
    )
    return {k: v for k, v in args.items() if not (_is_number(v) and _is_metric_key(k))}, training_keys, groups


def _is_result_key(key: str) -> bool:
    """A top-level number that is an outcome of the run (`train_loss`, `eval_runtime`, `epoch`), not an argument."""
    return bool(METRIC_RE.search(key) or NOT_METRIC_RE.search(key) or key.startswith(("train_", *SPLIT_PREFIXES)))


def find_reports(run_dir: str | os.PathLike) -> list[tuple[str, dict[str, Any]]]:
    """The run's reports, oldest first: every `evaluate.save()` JSON, and any other top-level JSON with metrics.

    The Trainer's `*_results.json`, configs and tokenizer files are not reports. Returns (file name, report) pairs.
    """
    found: list[tuple[str, str, dict[str, Any]]] = []
    for path in sorted(Path(run_dir).glob("*.json")):
        if path.name in NON_REPORT_JSON or path.name in RESULTS_FILES or _denied(Path(path.name)):
            continue
        data = _read_json(path)
        if not isinstance(data, dict) or not ("_evaluate_version" in data or extract_metrics(data)[0]):
            continue
        stamp = str(data.get("_timestamp", "")) or f"{path.stat().st_mtime:020.6f}"
        found.append((stamp, path.name, data))
    return [(name, data) for _, name, data in sorted(found, key=lambda item: (item[0], item[1]))]


def find_report(run_dir: str | os.PathLike) -> tuple[dict[str, Any], str | None]:
    """The training report: the newest report with `Trainer.train()` numbers, else the newest report at all."""
    reports = find_reports(run_dir)
    training = [(name, data) for name, data in reports if _is_training_report(data)]
    name, data = (training or reports or [(None, {})])[-1]
    return data, name


def _is_training_report(report: dict[str, Any]) -> bool:
    blocks = [report, *(report[k] for k in NESTED_METRIC_KEYS if isinstance(report.get(k), dict))]
    return any(key in block for block in blocks for key in TRAIN_MARKERS)


def _report_split(report: dict[str, Any], args: dict[str, Any]) -> str | None:
    for key in ("eval_split", "split", "dataset_split"):
        for source in (report, args):
            if isinstance(source.get(key), str):
                return source[key]
    return None


def _key_split(metric_key: str) -> str | None:
    for prefix in SPLIT_PREFIXES:
        if metric_key.startswith(prefix):
            return {"eval": "validation", "valid": "validation", "predict": "test"}.get(prefix[:-1], prefix[:-1])
    return None


def gather_metrics(reports: Sequence[tuple[str | None, dict[str, Any]]]) -> tuple[list[Metric], dict[str, float]]:
    """Evaluation numbers of every report, oldest first (a newer value of the same metric and split wins).

    A report of a baseline run (`--london_baseline`) gives baselines, never metrics of the model.
    """
    metrics: dict[tuple[str | None, str], Metric] = {}
    baselines: dict[str, float] = {}
    for name, report in reports:
        found, report_baselines = extract_metrics(report)
        baselines.update(report_baselines)
        args = extract_args(report)[0]
        baseline_run = next((flag for flag in BASELINE_FLAGS if args.get(flag) is True), None)
        if baseline_run is None and report.get("predictions_from") in BASELINE_FLAGS:
            baseline_run = report["predictions_from"]
        if baseline_run:
            baselines.update({f"{baseline_run}_{key}": value for key, value in found.items()})
            continue
        split = _report_split(report, args)
        for key, value in found.items():
            metric = Metric(key, value, split or _key_split(key), name)
            metrics[(metric.split, key)] = metric
    return list(metrics.values()), baselines


def load_run_info(run_dir: str | os.PathLike) -> RunInfo:
    """Read the reports, the Trainer's `*_results.json` and `trainer_state.json` of a run."""
    run_dir = Path(run_dir)
    reports = find_reports(run_dir)
    report, report_file = find_report(run_dir)
    results: dict[str, Any] = {}
    for name in RESULTS_FILES:
        data = _read_json(run_dir / name)
        if isinstance(data, dict):
            results.update(data)
    state = _read_json(run_dir / "trainer_state.json")
    info = _run_info_from(report, report_file, results, state if isinstance(state, dict) else {})
    info.metrics, info.baselines = gather_metrics(reports)
    if not info.metrics:
        # No report with metrics: fall back on what Trainer.save_metrics wrote.
        for name in ("eval_results.json", "test_results.json", "all_results.json"):
            data = _read_json(run_dir / name)
            if isinstance(data, dict) and extract_metrics(data)[0]:
                info.metrics, _ = gather_metrics([(name, data)])
                break
    return info


def _run_info_from(
    report: dict[str, Any], report_file: str | None, results: dict[str, Any], state: dict[str, Any]
) -> RunInfo:
    metrics, baselines = gather_metrics([(report_file, report)]) if report else ([], {})
    args, training_keys, groups = extract_args(report) if report else ({}, set(), [])
    return RunInfo(
        report=report,
        report_file=report_file,
        metrics=metrics,
        baselines=baselines,
        args=args,
        training_arg_keys=training_keys,
        arg_groups=groups,
        results=results,
        trainer_state=state,
    )


# --------------------------------------------------------------------------------------------------------------------
# Remote code
# --------------------------------------------------------------------------------------------------------------------


def find_code_dir() -> Path:
    """Folder of the `small_encoder` code, found without importing `hf_models` (which would import torch)."""
    spec = importlib.util.find_spec(CODE_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        candidate = Path(next(iter(spec.submodule_search_locations))) / CODE_SUBPACKAGE
    else:
        candidate = Path(__file__).resolve().parent / CODE_PACKAGE / CODE_SUBPACKAGE
    if not (candidate / MODELING_FILE).is_file():
        raise PushError(
            f"cannot find {CODE_PACKAGE}/{CODE_SUBPACKAGE}/{MODELING_FILE}; install the project (pip install -e .)"
        )
    return candidate


def code_files(code_dir: Path) -> list[Path]:
    """The modeling file and every file it imports relatively: exactly what transformers fetches for remote code."""
    # Imported lazily: transformers' own helpers keep the export in step with what its loader expects.
    from transformers.dynamic_module_utils import get_imports, get_relative_import_files

    modeling = code_dir / MODELING_FILE
    files = [modeling, *(Path(f) for f in get_relative_import_files(str(modeling)))]
    for path in files:
        if CODE_PACKAGE in get_imports(str(path)):
            raise PushError(
                f"{path.name} imports `{CODE_PACKAGE}` with an absolute import, which cannot load from the Hub; "
                f"use a relative import (`from .module import X`) in {path}"
            )
    return files


def _class_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


def head_of(architecture: str) -> tuple[str, str, str, str, str]:
    """(class prefix, suffix, Auto class, pipeline tag, objective) for an architecture name."""
    for suffix, auto_class, tag, objective in HEADS:
        if architecture.endswith(suffix):
            return architecture[: -len(suffix)], suffix, auto_class, tag, objective
    raise PushError(f"unsupported architecture {architecture!r} in config.json")


def build_auto_map(architecture: str, files: Sequence[Path]) -> dict[str, str]:
    """`auto_map` for every head defined in the modeling file, not only the saved one, so that any Auto class loads."""
    prefix, *_ = head_of(architecture)
    modeling = next(f for f in files if f.name == MODELING_FILE)
    modeling_classes = _class_names(modeling)
    if architecture not in modeling_classes:
        raise PushError(f"config.json says {architecture}, but {modeling.name} does not define it")
    auto_map: dict[str, str] = {}
    config_class = f"{prefix}Config"
    for path in files:
        if config_class in _class_names(path):
            auto_map["AutoConfig"] = f"{path.stem}.{config_class}"
    if "AutoConfig" not in auto_map:
        raise PushError(f"no {config_class} class in {', '.join(f.name for f in files)}")
    for suffix, auto_class, _, _ in HEADS:
        if f"{prefix}{suffix}" in modeling_classes:
            auto_map[auto_class] = f"{modeling.stem}.{prefix}{suffix}"
    return auto_map


# --------------------------------------------------------------------------------------------------------------------
# Model card
# --------------------------------------------------------------------------------------------------------------------


def _search_text(run_dir: Path, info: RunInfo) -> str:
    """Everything the language/task guesses look at: the run's folder name and its report arguments."""
    values = [
        run_dir.resolve().name,
        *info.arg_groups,  # e.g. `BirthplaceArguments`
        *(f"{k}={v}" for k, v in info.args.items()),
        info.report_file or "",
        *info.metric_files,
    ]
    return " ".join(str(v) for v in values)


def is_birthplace_run(run_dir: Path, info: RunInfo) -> bool:
    return bool(BIRTHPLACE_RE.search(_search_text(run_dir, info)))


def guess_preset(config: dict[str, Any], info: RunInfo) -> tuple[str | None, bool]:
    """(preset name, guessed?): the report's `preset` argument, else the preset whose style fields match the config."""
    try:
        presets_dir = find_code_dir() / "presets"
    except PushError:
        presets_dir = None
    known = {p.stem for p in presets_dir.glob("*.json")} if presets_dir else set()
    for key in ("preset", "model_config"):
        # `model_config` is a preset name or a config file path; only a preset name is reported.
        if isinstance(info.args.get(key), str) and (key == "preset" or info.args[key] in known):
            return info.args[key], False
    if presets_dir is None:
        return None, True
    best, best_score = None, 0
    for path in sorted(presets_dir.glob("*.json")):
        preset = _read_json(path) or {}
        score = sum(1 for k in PRESET_STYLE_KEYS if k in preset and preset.get(k) == config.get(k))
        if score == len(PRESET_STYLE_KEYS) and score > best_score:
            best, best_score = path.stem, score
    return best, True


def guess_language(run_dir: Path, info: RunInfo, preset: str | None) -> str | None:
    """ISO code from the report's `language`, else the task (birthplace: en, cls-books: fr), else the preset."""
    for key in LANGUAGE_KEYS:
        if isinstance(info.args.get(key), str) and 2 <= len(info.args[key]) <= 3:
            return info.args[key].lower()
    text = _search_text(run_dir, info)
    if BIRTHPLACE_RE.search(text):
        return "en"
    if FRENCH_RE.search(text):
        return "fr"
    return {"cs224n-mingpt": "en", "altegrad-lab": "fr"}.get(preset or "")


def _dataset_name(info: RunInfo) -> str | None:
    for key in DATASET_KEYS:
        value = info.args.get(key) if key in info.args else info.report.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str) and value:
            # A local path is reduced to its file stem: the card must not leak the author's file system.
            is_path = value.startswith(("/", ".", "~")) or "\\" in value or value.count("/") > 1
            return Path(value).stem if is_path else value
    return None


def _metric_type(metric_key: str) -> str:
    match = METRIC_RE.search(metric_key)
    return match.group(2).lower() if match else metric_key


def _count_parameters(run_dir: Path) -> int | None:
    """Parameters stored in the safetensors files, from their JSON headers (no torch, no loading)."""
    total, seen = 0, False
    for path in sorted(run_dir.glob("model*.safetensors")):
        try:
            with path.open("rb") as f:
                (size,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(size))
        except (OSError, ValueError, struct.error):
            return None
        for name, entry in header.items():
            if name != "__metadata__":
                n = 1
                for dim in entry.get("shape", []):
                    n *= dim
                total += n
                seen = True
    return total if seen else None


def _format_seconds(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _hyperparameters(info: RunInfo) -> dict[str, Any]:
    """Safe scalar arguments of the run (only the key `TrainingArguments`), completed from `trainer_state.json`."""
    hidden = {*HARDWARE_KEYS, *TIME_KEYS, *DATASET_KEYS, *LANGUAGE_KEYS, *SHOWN_ELSEWHERE, *BASELINE_FLAGS}
    hidden |= {"model_name_or_path", "eval_split", "split", "dataset_split"}  # evaluation settings, not training
    params = {
        k: v
        for k, v in info.args.items()
        if v is not None
        and _safe_scalar(k, v)
        and k not in hidden
        and (k not in info.training_arg_keys or k in TRAINING_HYPERPARAMETERS)
    }
    state = info.trainer_state
    for key in ("train_batch_size", "num_train_epochs", "max_steps", "global_step"):
        if _is_number(state.get(key)) and key not in params:
            params[key] = state[key]
    return params


def _training_time(info: RunInfo) -> float | None:
    for source in (info.args, info.report, info.results):
        for key in TIME_KEYS:
            if _is_number(source.get(key)):
                return float(source[key])
    for entry in reversed(info.trainer_state.get("log_history", []) or []):
        if isinstance(entry, dict) and _is_number(entry.get("train_runtime")):
            return float(entry["train_runtime"])
    return None


def _hardware(info: RunInfo) -> str | None:
    """An explicit `hardware`/`device` entry, else what the report says about processes, CPU use and precision."""
    for key in HARDWARE_KEYS:
        value = info.args.get(key, info.report.get(key))
        if isinstance(value, str) and value and SENSITIVE_KEY_RE.search(key) is None:
            return value
    parts = []
    world_size = info.args.get("world_size", info.report.get("world_size"))
    if _is_number(world_size):
        parts.append(f"{world_size} training process{'es' if world_size != 1 else ''}")
    if info.args.get("use_cpu") is True:
        parts.append("CPU")
    precision = info.args.get("mixed_precision", info.report.get("mixed_precision"))
    if isinstance(precision, str) and precision:
        parts.append(f"mixed precision `{precision}`")
    return ", ".join(parts) or None


def _initialised_from(info: RunInfo) -> str | None:
    """The starting checkpoint's name (a Hub id as is, a local folder by its name only: no local paths)."""
    value = info.args.get("model_name_or_path")
    if not isinstance(value, str) or not value:
        return None
    is_hub_id = re.fullmatch(r"[\w.-]+/[\w.-]+", value) is not None and not Path(value).exists()
    return value if is_hub_id else Path(value.rstrip("/\\")).name


def _sep_token(run_dir: Path, config: dict[str, Any]) -> str | None:
    """The separator string (CS224N's `⁇`) if the tokenizer defines the config's `sep_token_id`."""
    sep_id = config.get("sep_token_id")
    tokenizer = _read_json(run_dir / "tokenizer.json") if sep_id is not None else None
    for token in (tokenizer or {}).get("added_tokens", []):
        if token.get("id") == sep_id:
            return token.get("content")
    return None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return f"`{value}`" if isinstance(value, str) else str(value)


def _usage(repo_id: str, architecture: str, config: dict[str, Any], birthplace: bool, sep: str | None) -> str:
    _, _, auto_class, tag, _ = head_of(architecture)
    if tag == "text-generation":
        prompt = "Where was Albert Einstein born?" + (sep or "") if birthplace else "The"
        return f"""```python
from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

tokenizer = AutoTokenizer.from_pretrained("{repo_id}", trust_remote_code=True)
model = AutoModelForCausalLM.from_pretrained("{repo_id}", trust_remote_code=True)
inputs = tokenizer({prompt!r}, return_tensors="pt")
output = model.generate(**inputs, max_new_tokens=20, do_sample=False)
print(tokenizer.decode(output[0], skip_special_tokens=True))

# or, in one line:
generator = pipeline("text-generation", model="{repo_id}", trust_remote_code=True)
print(generator({prompt!r}, max_new_tokens=20, do_sample=False)[0]["generated_text"])
```"""
    if tag == "text-classification":
        labels = ", ".join(
            f"`{v}`" for _, v in sorted((config.get("id2label") or {}).items(), key=lambda kv: int(kv[0]))
        )
        example = "Un livre passionnant, je le recommande." if config.get("_language") == "fr" else "A gripping book."
        return f"""```python
from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

classifier = pipeline("text-classification", model="{repo_id}", trust_remote_code=True)
print(classifier({example!r}))  # labels: {labels or "see config.json"}

# or step by step:
tokenizer = AutoTokenizer.from_pretrained("{repo_id}", trust_remote_code=True)
model = AutoModelForSequenceClassification.from_pretrained("{repo_id}", trust_remote_code=True)
logits = model(**tokenizer({example!r}, return_tensors="pt")).logits
print(model.config.id2label[int(logits.argmax(-1))])
```"""
    pipe = f'\npipe = pipeline("{tag}", model="{repo_id}", trust_remote_code=True)' if tag == "fill-mask" else ""
    return f"""```python
from transformers import {auto_class}, AutoTokenizer, pipeline

tokenizer = AutoTokenizer.from_pretrained("{repo_id}", trust_remote_code=True)
model = {auto_class}.from_pretrained("{repo_id}", trust_remote_code=True){pipe}
```"""


def build_model_card(
    run_dir: str | os.PathLike,
    config: dict[str, Any],
    report: RunInfo | dict[str, Any] | None = None,
    *,
    repo_id: str | None = None,
    language: str | None = None,
    license: str = DEFAULT_LICENSE,
    birthplace: bool | None = None,
    plots: Sequence[Path] = (),
) -> ModelCard:
    """The README.md of the shared model: YAML metadata with a `model-index`, set-up, usage and limitations.

    `config` is the exported `config.json` as a dict; `report` is a `RunInfo` or a raw report dict.
    """
    run_dir = Path(run_dir)
    info = report if isinstance(report, RunInfo) else _run_info_from(report or {}, None, {}, {})
    architecture = (config.get("architectures") or ["SmallEncoderForCausalLM"])[0]
    _, _, auto_class, pipeline_tag, objective = head_of(architecture)
    repo_id = repo_id or f"your-username/{run_dir.resolve().name}"
    model_name = repo_id.split("/")[-1]
    birthplace = is_birthplace_run(run_dir, info) if birthplace is None else birthplace
    preset, preset_guessed = guess_preset(config, info)
    language = language or guess_language(run_dir, info, preset)
    dataset = _dataset_name(info)
    if dataset is None and birthplace:
        dataset = "birthplace"
    recipe = next((info.args[k] for k in ("recipe", "task", "experiment") if isinstance(info.args.get(k), str)), None)
    dataset_type = dataset or (str(recipe) if recipe else "custom")

    eval_results = [
        EvalResult(
            task_type=pipeline_tag,
            task_name=TASK_NAMES.get(pipeline_tag),
            dataset_type=dataset_type,
            dataset_name=dataset_type,
            dataset_split=metric.split,
            metric_type=_metric_type(metric.name),
            metric_name=metric.name,
            metric_value=metric.value,
        )
        for metric in info.metrics
    ]
    attention = config.get("attention_type", "vanilla")
    tags = ["small-encoder", "custom_code", f"attention-{attention}"]
    tags += [t for t in (preset, "birthplace" if birthplace else None, recipe) if t]
    card_data = ModelCardData(
        library_name="transformers",
        pipeline_tag=pipeline_tag,
        language=language,
        license=license,
        datasets=[dataset] if dataset else None,
        tags=tags,
        model_name=model_name,
        eval_results=eval_results or None,
    )

    # -- body --------------------------------------------------------------------------------------------------------
    described = PRESET_DESCRIPTIONS.get(preset or "", "a model of the `small-encoder` family")
    lines = [
        f"# {model_name}",
        "",
        f"A small Transformer trained for **{pipeline_tag}**, built from the `{preset or 'custom'}` preset of the "
        f"`small-encoder` family (package `hf_models`): {described}. The configuration and modeling code ship with "
        "the weights, so it loads with `trust_remote_code=True` and needs nothing but `transformers` and `torch`.",
        "",
    ]
    if info.metrics or info.baselines:
        lines += ["## Results", ""]
        sources = ", ".join(f"`{f}`" for f in info.metric_files)
        lines += [
            f"Evaluation on `{dataset_type}`" + (f" (from {sources})" if sources else "") + ":",
            "",
            "| metric | split | value |",
            "|---|---|---|",
        ]
        lines += [f"| {m.name} | {m.split or '-'} | {_fmt(m.value)} |" for m in info.metrics]
        lines += [f"| {k} (baseline, not this model) | - | {_fmt(v)} |" for k, v in info.baselines.items()]
        lines.append("")
    else:
        lines += ["## Results", "", "No evaluation report was found in the run, so no metrics are listed.", ""]

    n_params = _count_parameters(run_dir)
    seconds = _training_time(info)
    hardware = _hardware(info)
    # `final_train_loss` (the recipes' last logged loss) is what a reader expects; Trainer's `train_loss` is a mean.
    train_loss = next(
        (
            (label, src[key])
            for key, label in (("final_train_loss", "Final training loss"), ("train_loss", "Mean training loss"))
            for src in (info.report, info.results)
            if _is_number(src.get(key))
        ),
        None,
    )
    setup = [
        f"- **Objective:** {objective}"
        + ("; fine-tuned to answer birthplace questions" if birthplace and pipeline_tag == "text-generation" else "")
        + (f"; recipe `{recipe}`" if recipe else "")
        + ".",
        f"- **Initialised from:** `{_initialised_from(info)}`."
        if _initialised_from(info)
        else "- **Initialised from:** random weights (trained from scratch)."
        if "model_name_or_path" in info.args
        else "- **Initialised from:** not recorded in the run.",
        f"- **Preset:** `{preset}`" + (" (inferred from the config)" if preset_guessed else "") + "."
        if preset
        else "- **Preset:** not recorded (custom configuration).",
        f"- **Attention:** `{attention}`"
        + (" (CS224N dense synthesizer)" if attention == "synthesizer" else " (multi-head scaled dot-product)")
        + (", causal" if config.get("is_causal", True) else ", bidirectional")
        + ".",
        "- **Size:** "
        + ", ".join(
            f"{label} {config[key]}"
            for key, label in (
                ("num_hidden_layers", "layers"),
                ("hidden_size", "hidden size"),
                ("num_attention_heads", "heads"),
                ("intermediate_size", "feed-forward size"),
                ("max_position_embeddings", "max positions"),
                ("vocab_size", "vocabulary"),
            )
            if key in config
        )
        + (f"; {n_params:,} parameters." if n_params else "."),
        f"- **Training data:** `{dataset}`." if dataset else "- **Training data:** not recorded in the run.",
        f"- **Hardware:** {hardware}." if hardware else "- **Hardware:** not recorded in the run.",
        f"- **Training time:** {_format_seconds(seconds)}."
        if seconds is not None
        else "- **Training time:** not recorded.",
        *([f"- **{train_loss[0]}:** {_fmt(train_loss[1])}."] if train_loss is not None else []),
    ]
    if config.get("id2label") and pipeline_tag == "text-classification":
        labels = ", ".join(f"{k} → `{v}`" for k, v in sorted(config["id2label"].items(), key=lambda kv: int(kv[0])))
        setup.append(f"- **Labels:** {labels}.")
    lines += ["## Training set-up", "", *setup, ""]
    params = _hyperparameters(info)
    if params:
        lines += ["Hyperparameters:", "", "| name | value |", "|---|---|"]
        lines += [f"| {k} | {_fmt(v)} |" for k, v in sorted(params.items())]
        lines.append("")
    if plots:
        lines += ["## Plots", ""]
        lines += [f"![{p.stem}]({p.as_posix()})" for p in plots]
        lines.append("")

    config_for_usage = {**config, "_language": language}
    lines += [
        "## How to use",
        "",
        f"The architecture is not part of `transformers`, so pass `trust_remote_code=True` (read "
        f"`modeling_small_encoder.py` first: it is executed on your machine). `{auto_class}` and `pipeline` then "
        "work as for any Hub model.",
        "",
        _usage(repo_id, architecture, config_for_usage, birthplace, _sep_token(run_dir, config)),
        "",
    ]

    limitations = [
        f"- It is a very small model ({n_params:,} parameters) trained on little data for a course exercise: "
        "expect mistakes and do not use it for decisions about people."
        if n_params
        else "- It is a very small model trained on little data for a course exercise: expect mistakes and do not use "
        "it for decisions about people.",
        f"- It only saw {'French' if language == 'fr' else 'English' if language == 'en' else 'its training'} text; "
        f"inputs longer than {config.get('max_position_embeddings', 'the maximum')} tokens cannot be processed.",
        "- The metrics above come from the author's own run on a small evaluation set; they were not reproduced "
        "independently.",
        "- Loading runs the code shipped in this repository (`trust_remote_code=True`): review it, and pin a "
        "`revision` to be sure it does not change under you.",
    ]
    if birthplace:
        limitations.insert(0, f"- {BIRTHPLACE_LIMITATION}")
    if pipeline_tag == "text-generation" and not birthplace:
        limitations.append("- Generated text may be false, repetitive or offensive: it is not checked by anything.")
    lines += ["## Limitations", "", *limitations, ""]

    provenance = [f"Exported from the run folder `{run_dir.resolve().name}` by `push_to_hub.py`."]
    commit = info.report.get("_git_commit_hash")
    if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,40}", commit):
        provenance.append(f"Code commit of the run: `{commit}`.")
    lines += ["## Provenance", "", " ".join(provenance), ""]

    return ModelCard(f"---\n{card_data.to_yaml()}\n---\n\n" + "\n".join(lines))


# --------------------------------------------------------------------------------------------------------------------
# Export (dry run and upload staging share this)
# --------------------------------------------------------------------------------------------------------------------


def _check_run_dir(run_dir: Path) -> dict[str, Any]:
    if not run_dir.is_dir():
        raise PushError(f"run directory {run_dir} does not exist")
    config = _read_json(run_dir / "config.json")
    if not isinstance(config, dict):
        raise PushError(f"{run_dir}/config.json is missing or unreadable; pass the folder a recipe saved the model in")
    if not any(run_dir.glob("model*.safetensors")):
        raise PushError(f"no model*.safetensors in {run_dir}; only safetensors weights are shared")
    if config.get("model_type") != "small-encoder":
        raise PushError(f"{run_dir}/config.json has model_type={config.get('model_type')!r}, expected 'small-encoder'")
    return config


def _prepare_local_dir(local_dir: Path, run_dir: Path, overwrite: bool) -> None:
    if local_dir.exists() and any(local_dir.iterdir()):
        if not overwrite:
            raise PushError(f"--local_dir {local_dir} is not empty; pick a new folder or add --overwrite")
        resolved, run = local_dir.resolve(), run_dir.resolve()
        # Never delete the run itself, one of its parents, the home folder or the file-system root.
        if resolved in (run, *run.parents, Path.home().resolve()) or resolved == Path(resolved.anchor):
            raise PushError(f"refusing to overwrite {local_dir}: it holds the run or is a system folder")
        shutil.rmtree(resolved)
    local_dir.mkdir(parents=True, exist_ok=True)


def export_folder(
    run_dir: str | os.PathLike,
    local_dir: str | os.PathLike,
    *,
    repo_id: str | None = None,
    language: str | None = None,
    license: str = DEFAULT_LICENSE,
    birthplace: bool | None = None,
    overwrite: bool = False,
) -> ExportResult:
    """Write to `local_dir` exactly what would be uploaded: allowlisted run files, patched config, code and card."""
    run_dir, local_dir = Path(run_dir), Path(local_dir)
    config = _check_run_dir(run_dir)
    _prepare_local_dir(local_dir, run_dir, overwrite)

    code = code_files(find_code_dir())
    architecture = (config.get("architectures") or [None])[0]
    if not architecture:
        raise PushError(f"{run_dir}/config.json has no `architectures`; save the model with save_pretrained")
    config["auto_map"] = build_auto_map(architecture, code)
    # Trainer saves use_cache=False; a shared model should use its KV cache in plain forwards too.
    config["use_cache"] = True

    files = collect_files(run_dir, skip=local_dir)
    for rel in files:
        if rel.name == "config.json":
            continue
        (local_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_dir / rel, local_dir / rel)
    (local_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for path in code:
        shutil.copyfile(path, local_dir / path.name)
    if head_of(architecture)[2] == "text-generation" and not (run_dir / "generation_config.json").is_file():
        # generate() reads special tokens from here; derive it from the model config as transformers would.
        generation = {
            k: config[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id") if config.get(k) is not None
        }
        (local_dir / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n", encoding="utf-8")
    if not (run_dir / "tokenizer_config.json").is_file():
        print(
            f"{PROG}: warning: no tokenizer files in {run_dir}; pipeline() will not work from the export",
            file=sys.stderr,
        )

    info = load_run_info(run_dir)
    plots = [f for f in files if fnmatch(f.name, PLOT_PATTERN)]
    card = build_model_card(
        run_dir, config, info, repo_id=repo_id, language=language, license=license, birthplace=birthplace, plots=plots
    )
    card.save(local_dir / "README.md")

    staged = sorted(
        (p.relative_to(local_dir) for p in local_dir.rglob("*") if p.is_file()), key=lambda p: p.as_posix()
    )
    allow = list(ALLOW_PATTERNS)
    for rel in staged:
        # Relative imports of the modeling file may have other names: allow them by exact name.
        if rel.suffix == ".py" and rel.name in {p.name for p in code} and not _allowed(rel):
            allow.append(rel.name)
    refused = [rel for rel in staged if not any(fnmatch(rel.as_posix(), p) for p in allow) or _denied(rel)]
    if refused:
        raise PushError(f"internal error: staged files outside the allowlist: {', '.join(map(str, refused))}")
    return ExportResult(folder=local_dir, files=staged, allow_patterns=allow, card=card)


# --------------------------------------------------------------------------------------------------------------------
# Upload and command line
# --------------------------------------------------------------------------------------------------------------------


def _network_errors() -> tuple[type[BaseException], ...]:
    """Exception types meaning 'the Hub could not be reached or refused': OSError covers huggingface_hub's own
    (offline mode, HfHubHTTPError); the HTTP client's are added if the installed huggingface_hub uses it."""
    types: list[type[BaseException]] = [OSError]
    for module, name in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(getattr(mod, name, None), type):
            types.append(getattr(mod, name))
    return tuple(types)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _explain(error: BaseException) -> str:
    """One line saying what is missing and how to fix it, for an error raised while talking to the Hub."""
    if isinstance(error, OfflineModeIsEnabled):
        return "cannot upload: offline mode is on (HF_HUB_OFFLINE=1); unset it and check your network, or use --dry_run --local_dir OUT"
    if isinstance(error, HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return (
                f"the Hub rejected the token (HTTP {status}); run 'hf auth login' with a token that has write access"
            )
        return f"the Hub refused the request (HTTP {status}): {_one_line(error)}"
    if isinstance(error, OSError) and not isinstance(error, (ConnectionError, TimeoutError)):
        # A local file problem (permissions, disk full), not the network.
        return f"{type(error).__name__}: {_one_line(error)}"
    return (
        f"cannot reach the Hugging Face Hub at {_endpoint()} ({type(error).__name__}: {_one_line(error, 120)}); "
        "check your network or proxy, or use --dry_run --local_dir OUT"
    )


def upload(
    run_dir: Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    language: str | None = None,
    license: str = DEFAULT_LICENSE,
    birthplace: bool | None = None,
) -> tuple[str, int]:
    """Stage the export in a temporary folder and upload it; returns (commit URL, number of files).

    Raises PushError for what the user must fix, and the Hub client's errors for the network."""
    if _offline():
        raise PushError(
            "cannot upload: offline mode is on (HF_HUB_OFFLINE=1); unset it and check your network, "
            "or use --dry_run --local_dir OUT"
        )
    token = get_token()
    if not token:
        raise PushError(
            "no Hugging Face token found; run 'hf auth login' (or 'huggingface-cli login') or set HF_TOKEN"
        )
    api = HfApi(token=token)
    api.whoami()  # fails fast, before staging, on a bad token or no network
    with tempfile.TemporaryDirectory(prefix="push_to_hub-") as tmp:
        staged = export_folder(
            run_dir, Path(tmp) / "export", repo_id=repo_id, language=language, license=license, birthplace=birthplace
        )
        api.create_repo(repo_id=repo_id, repo_type="model", private=private or None, exist_ok=True)
        if revision:
            api.create_branch(repo_id=repo_id, branch=revision, repo_type="model", exist_ok=True)
        info = api.upload_folder(
            repo_id=repo_id,
            repo_type="model",
            folder_path=str(staged.folder),
            revision=revision,
            commit_message=commit_message or f"Upload {run_dir.resolve().name} with push_to_hub.py",
            allow_patterns=staged.allow_patterns,
        )
    return str(getattr(info, "commit_url", None) or f"{_endpoint()}/{repo_id}"), len(staged.files)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Share a trained small-encoder run on the Hugging Face Hub (code, tokenizer, card, metrics).",
    )
    parser.add_argument(
        "run_dir", type=Path, help="folder a recipe saved the model in (config.json, model.safetensors)"
    )
    parser.add_argument("--repo_id", help="USER/NAME of the model repository (required unless --dry_run)")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to (created if missing); default: main")
    parser.add_argument("--commit_message", help="commit message (default: 'Upload RUN with push_to_hub.py')")
    parser.add_argument("--dry_run", action="store_true", help="write the folder that would be uploaded; no network")
    parser.add_argument("--local_dir", type=Path, help="with --dry_run: where to write the export")
    parser.add_argument("--overwrite", action="store_true", help="with --dry_run: replace a non-empty --local_dir")
    parser.add_argument(
        "--language", help="ISO code for the card (default: guessed from the run; birthplace=en, cls=fr)"
    )
    parser.add_argument(
        "--license", default=DEFAULT_LICENSE, help=f"license for the card (default: {DEFAULT_LICENSE})"
    )
    parser.add_argument(
        "--birthplace",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="mark as a birthplace QA model (default: guessed from the run)",
    )
    args = parser.parse_args(argv)
    if args.dry_run and args.local_dir is None:
        parser.error("--dry_run needs --local_dir OUT")
    if not args.dry_run and not args.repo_id:
        parser.error("--repo_id USER/NAME is required (or use --dry_run --local_dir OUT)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0 on success, 1 with one line on stderr otherwise)."""
    args = parse_args(argv)
    card_options = {"language": args.language, "license": args.license, "birthplace": args.birthplace}
    try:
        if args.repo_id:
            validate_repo_id(args.repo_id)  # before any staging or network call
        if args.dry_run:
            result = export_folder(
                args.run_dir, args.local_dir, repo_id=args.repo_id, overwrite=args.overwrite, **card_options
            )
            size = sum((result.folder / f).stat().st_size for f in result.files)
            print(
                f"{PROG}: wrote {len(result.files)} files ({size / 1e6:.1f} MB) to {result.folder}; nothing was uploaded"
            )
            for rel in result.files:
                print(f"  {rel.as_posix()}")
            return 0
        url, n_files = upload(
            args.run_dir,
            args.repo_id,
            private=args.private,
            revision=args.revision,
            commit_message=args.commit_message,
            **card_options,
        )
        print(f"{PROG}: uploaded {n_files} files from {args.run_dir} to {_endpoint()}/{args.repo_id} ({url})")
        return 0
    except PushError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    except HFValidationError as error:
        print(f"{PROG}: invalid --repo_id: {_one_line(error)}", file=sys.stderr)
        return 1
    except _network_errors() as error:
        print(f"{PROG}: {_explain(error)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
