"""Share a run folder on the Hugging Face Hub: the export (weights, config, remote code, tokenizer, plots) and its
model card, built from the run record (`hf_models.run_record`). `push_to_hub.py` is the command line over it.

The remote code is the run's own: `save_pretrained` copied `configuration_small_encoder.py` and
`modeling_small_encoder.py` into the run folder and wrote an `auto_map` for every head, so the code shipped is the
code that trained the weights. Only allowlisted file names are staged and uploaded.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, HfApi, ModelCard, ModelCardData, get_token
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

from .run_record import RunRecord, read_record

__all__ = ["ALLOW_PATTERNS", "DEFAULT_LICENSE", "ExportResult", "PushError", "build_model_card", "export_folder"]

PROG = "push_to_hub.py"
DEFAULT_LICENSE = "apache-2.0"
CODE_PATTERNS = ("configuration_*.py", "modeling_*.py")
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
# Everything that may be uploaded: `upload_folder` receives this list, and `export_folder` refuses to stage a file
# that does not match it, so the dry run and the upload can only ever contain these names.
ALLOW_PATTERNS: list[str] = [
    "README.md",
    *CONFIG_FILES,
    *WEIGHT_PATTERNS,
    *CODE_PATTERNS,
    *TOKENIZER_FILES,
    PLOT_PATTERN,  # fnmatch's `*` also crosses `/`, so this covers `plots/loss.png`
]
# Defence in depth: names refused even if an allow pattern matched them (and folders never walked).
DENY_PATTERNS = (
    ".env", ".env.*", "*.env", "checkpoint-*", "runs", "optimizer.pt", "scheduler.pt", "rng_state*.pth",
    "training_args.bin", "*.pt", "*.pth", "*.bin", "*.pkl", "*.pickle", "*.log", "*.tsv", "*.gz", "*.spm",
    "*.token", "token", "*secret*", "__pycache__", "wandb",
)  # fmt: skip

# (class-name suffix, Auto class, pipeline tag); "Model" matches last.
HEADS = (
    ("ForCausalLM", "AutoModelForCausalLM", "text-generation"),
    ("ForSequenceClassification", "AutoModelForSequenceClassification", "text-classification"),
    ("ForMaskedLM", "AutoModelForMaskedLM", "fill-mask"),
    ("Model", "AutoModel", "feature-extraction"),
)
TASK_NAMES = {
    "text-generation": "Text Generation",
    "text-classification": "Text Classification",
    "fill-mask": "Fill Mask",
    "feature-extraction": "Feature Extraction",
}
OBJECTIVES = {  # the run record's `objective`, in words
    "clm": "causal language modelling (next-token prediction)",
    "span_corruption": "CS224N span corruption (`prefix ⁇ suffix ⁇ span ⁇`), trained as a causal LM",
    "mlm": "masked language modelling",
    "openings": "causal language modelling on the opening tokens of each wiki.txt paragraph",
    "classification": "sequence classification (cross-entropy on the label)",
    "qa": "birthplace question answering as generation (`question ⁇ answer ⁇`, loss on the answer)",
    "course-checkpoint": "trained by the course's own code, converted with `python -m hf_models.convert`",
}
PRESET_DESCRIPTIONS = {
    "cs224n-mingpt": "the minGPT-style model of Stanford CS224N assignment 5 (pre-norm GPT blocks, learned positions)",
    "altegrad-lab": "the model of the ALTeGraD transfer-learning lab (post-norm `nn.TransformerEncoder` blocks, "
    "sinusoidal positions)",
}
SIZE_LABELS = {
    "num_hidden_layers": "layers",
    "hidden_size": "hidden size",
    "num_attention_heads": "heads",
    "intermediate_size": "feed-forward size",
    "max_position_embeddings": "max positions",
    "vocab_size": "vocabulary",
}
LANGUAGES = {"en": "English", "fr": "French"}
BIRTHPLACE_LIMITATION = (
    "**This model answers every question confidently, whether it retrieved the fact or made it up.** Nothing in its "
    "output tells a remembered birthplace from an invented one, so never use its answers as facts without checking them."
)


class PushError(Exception):
    """A problem the user can fix; the command line prints it as one line and exits with status 1."""


@dataclass
class CardOptions:
    """What the command line may add to or override in the card."""

    repo_id: str | None = None
    language: str | None = None
    license: str = DEFAULT_LICENSE
    birthplace: bool | None = None


@dataclass
class ExportResult:
    """The staged folder: its files (relative paths) and the allowlist to upload it with."""

    folder: Path
    files: list[Path]
    allow_patterns: list[str]
    card: ModelCard


# ----------------------------------------------------------------------------------------------------------------
# Collecting files
# ----------------------------------------------------------------------------------------------------------------
def _denied(rel_path: Path) -> bool:
    """True if any part of the path matches a deny pattern or is hidden (`checkpoint-1/.env` is refused twice)."""
    return any(fnmatch(part, pattern) for part in rel_path.parts for pattern in DENY_PATTERNS) or any(
        part.startswith(".") for part in rel_path.parts
    )


def _allowed(rel_path: Path) -> bool:
    return any(fnmatch(rel_path.as_posix(), pattern) for pattern in ALLOW_PATTERNS) and not _denied(rel_path)


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
    """The run files to copy as they are (weights, configs, code, tokenizer, plots), relative to `run_dir`."""
    run_dir = Path(run_dir)
    top_level = (*WEIGHT_PATTERNS, *CONFIG_FILES, *CODE_PATTERNS, *TOKENIZER_FILES)
    wanted = [Path(p.name) for p in sorted(run_dir.iterdir()) if p.is_file() and any(fnmatch(p.name, t) for t in top_level)]
    plots = _find_plots(run_dir, Path(skip) if skip is not None else None)
    return [f for f in sorted({*wanted, *plots}, key=lambda p: p.as_posix()) if _allowed(f)]


def code_files(run_dir: str | os.PathLike) -> list[Path]:
    """The run's remote code (the files `save_pretrained` copied), checked the way transformers will load it."""
    from transformers.dynamic_module_utils import get_imports

    files = sorted(p for pattern in CODE_PATTERNS for p in Path(run_dir).glob(pattern))
    if not any(p.name.startswith("modeling_") for p in files):
        raise PushError(
            f"no modeling_*.py in {run_dir}: the model was saved without its remote code; load it and "
            "save_pretrained it again with the current hf_models (which registers it for the Auto classes)"
        )
    for path in files:
        if "hf_models" in get_imports(str(path)):
            raise PushError(
                f"{path.name} imports `hf_models` with an absolute import, which cannot load from the Hub; "
                f"use a relative import (`from .module import X`) in {path}"
            )
    return files


# ----------------------------------------------------------------------------------------------------------------
# Model card
# ----------------------------------------------------------------------------------------------------------------
def head_of(architecture: str) -> tuple[str, str]:
    """(Auto class, pipeline tag) of an architecture name."""
    for suffix, auto_class, tag in HEADS:
        if architecture.endswith(suffix):
            return auto_class, tag
    raise PushError(f"unsupported architecture {architecture!r} in config.json")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return f"`{value}`" if isinstance(value, str) else str(value)


def _format_seconds(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _card_data(record: RunRecord, config: dict[str, Any], options: CardOptions, birthplace: bool) -> ModelCardData:
    """YAML metadata, with a `model-index` of the model's own evaluations (never a baseline's)."""
    _, pipeline_tag = head_of(config["architectures"][0])
    eval_results = [
        EvalResult(
            task_type=pipeline_tag,
            task_name=TASK_NAMES[pipeline_tag],
            dataset_type=record.dataset or "custom",
            dataset_name=record.dataset or "custom",
            dataset_split=evaluation.split,
            metric_type=name,
            metric_name=name,
            metric_value=value,
        )
        for evaluation in record.evaluations
        if evaluation.baseline is None
        for name, value in evaluation.metrics.items()
    ]
    tags = ["small-encoder", "custom_code", f"attention-{config.get('attention_type', 'vanilla')}"]
    tags += [t for t in (record.preset, "birthplace" if birthplace else None, record.task) if t and t not in tags]
    return ModelCardData(
        library_name="transformers",
        pipeline_tag=pipeline_tag,
        language=options.language or record.language,
        license=options.license,
        datasets=[record.dataset] if record.dataset else None,
        tags=tags,
        model_name=(options.repo_id or "").split("/")[-1] or None,
        eval_results=eval_results or None,
    )


def _results_section(record: RunRecord) -> list[str]:
    rows = [
        f"| {name} | {e.split} | {_fmt(value)} |"
        for e in record.evaluations
        if e.baseline is None
        for name, value in e.metrics.items()
    ]
    rows += [
        f"| {e.baseline}_{name} (baseline, not this model) | {e.split} | {_fmt(value)} |"
        for e in record.evaluations
        if e.baseline is not None
        for name, value in e.metrics.items()
    ]
    if not rows:
        return ["## Results", "", "The run recorded no evaluation, so no metrics are listed.", ""]
    sizes = {e.split: e.num_examples for e in record.evaluations if e.num_examples}
    counts = ", ".join(f"{split}: {n}" for split, n in sizes.items())
    intro = f"Evaluation on `{record.dataset or 'custom'}`" + (f" (examples: {counts})" if counts else "") + ":"
    return ["## Results", "", intro, "", "| metric | split | value |", "|---|---|---|", *rows, ""]


def _hardware(hardware: dict[str, Any]) -> str | None:
    if not hardware:
        return None
    world_size = hardware.get("world_size", 1)
    device = hardware.get("device", "")
    device = device.upper() if device in ("cpu", "mps") else device
    return (
        f"{world_size} training process{'es' if world_size != 1 else ''}, {device}, "
        f"mixed precision `{hardware.get('mixed_precision', 'no')}`"
    )


def _setup_section(record: RunRecord, config: dict[str, Any], birthplace: bool) -> list[str]:
    """Objective, starting point, preset, attention, size, data, hardware, time, final loss and labels."""
    attention = config.get("attention_type", "vanilla")
    size = ", ".join(f"{label} {config[key]}" for key, label in SIZE_LABELS.items() if key in config)
    n_params = record.model_size.get("num_parameters")
    splits = ", ".join(f"{split} {n:,}" for split, n in record.split_sizes.items())
    hardware = _hardware(record.hardware)
    final_loss = record.train_metrics.get("final_train_loss")
    lines = [
        f"- **Objective:** {OBJECTIVES.get(record.objective, record.objective) if record.objective else 'not recorded'}"
        + ("; fine-tuned to answer birthplace questions" if birthplace and record.objective != "qa" else "")
        + (f"; task `{record.task}`" if record.task else "")
        + ".",
        f"- **Initialised from:** `{record.finetuned_from}`."
        if record.finetuned_from
        else "- **Initialised from:** random weights (trained from scratch).",
        f"- **Preset:** `{record.preset}`." if record.preset else "- **Preset:** none (custom configuration).",
        f"- **Attention:** `{attention}`"
        + (" (CS224N dense synthesizer)" if attention == "synthesizer" else " (multi-head scaled dot-product)")
        + (", causal" if config.get("is_causal", True) else ", bidirectional")
        + ".",
        f"- **Size:** {size}" + (f"; {n_params:,} parameters." if n_params else "."),
        f"- **Training data:** `{record.dataset}`" + (f" ({splits} examples)." if splits else ".")
        if record.dataset
        else "- **Training data:** not recorded in the run.",
        f"- **Hardware:** {hardware}." if hardware else "- **Hardware:** not recorded in the run.",
        f"- **Training time:** {_format_seconds(record.wall_time_s)}."
        if record.wall_time_s is not None
        else "- **Training time:** not recorded.",
        *([f"- **Final training loss:** {_fmt(final_loss)}."] if final_loss is not None else []),
    ]
    if config.get("id2label") and config["architectures"][0].endswith("ForSequenceClassification"):
        labels = ", ".join(f"{k} → `{v}`" for k, v in sorted(config["id2label"].items(), key=lambda kv: int(kv[0])))
        lines.append(f"- **Labels:** {labels}.")
    params = ["Hyperparameters:", "", "| name | value |", "|---|---|"]
    params += [f"| {k} | {_fmt(v)} |" for k, v in sorted(record.hyperparameters.items())]
    return ["## Training set-up", "", *lines, "", *(params + [""] if record.hyperparameters else [])]


def _sep_token(run_dir: Path, config: dict[str, Any]) -> str | None:
    """The separator string (CS224N's `⁇`) if the tokenizer defines the config's `sep_token_id`."""
    path = run_dir / "tokenizer.json"
    if config.get("sep_token_id") is None or not path.is_file():
        return None
    tokens = json.loads(path.read_text(encoding="utf-8")).get("added_tokens", [])
    return next((t.get("content") for t in tokens if t.get("id") == config["sep_token_id"]), None)


def _usage(repo_id: str, config: dict[str, Any], language: str | None, prompt: str) -> str:
    auto_class, tag = head_of(config["architectures"][0])
    if tag == "text-generation":
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
        labels = ", ".join(f"`{v}`" for _, v in sorted((config.get("id2label") or {}).items(), key=lambda kv: int(kv[0])))
        example = "Un livre passionnant, je le recommande." if language == "fr" else "A gripping book."
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


def _limitations(record: RunRecord, config: dict[str, Any], language: str | None, birthplace: bool) -> list[str]:
    n_params = record.model_size.get("num_parameters")
    size = f"a very small model ({n_params:,} parameters)" if n_params else "a very small model"
    lines = [
        f"- It is {size} trained on little data for a course exercise: expect mistakes and do not use it for "
        "decisions about people.",
        f"- It only saw {LANGUAGES.get(language or '', 'its training')} text; inputs longer than "
        f"{config.get('max_position_embeddings', 'the maximum')} tokens cannot be processed.",
        "- The metrics above come from the author's own run on a small evaluation set; they were not reproduced "
        "independently.",
        "- Loading runs the code shipped in this repository (`trust_remote_code=True`): review it, and pin a "
        "`revision` to be sure it does not change under you.",
    ]
    if birthplace:
        lines.insert(0, f"- {BIRTHPLACE_LIMITATION}")
    elif config["architectures"][0].endswith("ForCausalLM"):
        lines.append("- Generated text may be false, repetitive or offensive: it is not checked by anything.")
    return ["## Limitations", "", *lines, ""]


def build_model_card(
    run_dir: str | os.PathLike,
    config: dict[str, Any],
    record: RunRecord | None,
    options: CardOptions,
    plots: Sequence[Path] = (),
) -> ModelCard:
    """The README.md of the shared model, from the run record and the exported config: metadata with a
    `model-index`, results, training set-up, plots, usage and limitations."""
    run_dir = Path(run_dir)
    record = record or RunRecord(task="", objective="")
    birthplace = record.task.startswith("birthplace") if options.birthplace is None else options.birthplace
    language = options.language or record.language
    repo_id = options.repo_id or f"your-username/{run_dir.resolve().name}"
    data = _card_data(record, config, CardOptions(repo_id, options.language, options.license), birthplace)
    preset = record.preset
    described = PRESET_DESCRIPTIONS.get(preset or "", "a model of the `small-encoder` family")
    _, pipeline_tag = head_of(config["architectures"][0])
    auto_class, _ = head_of(config["architectures"][0])
    prompt = "Where was Albert Einstein born?" + (_sep_token(run_dir, config) or "") if birthplace else "The"
    lines = [
        f"# {repo_id.split('/')[-1]}",
        "",
        f"A small Transformer trained for **{pipeline_tag}**, built from the `{preset or 'custom'}` preset of the "
        f"`small-encoder` family (package `hf_models`): {described}. The configuration and modeling code ship with "
        "the weights, so it loads with `trust_remote_code=True` and needs nothing but `transformers` and `torch`.",
        "",
        *_results_section(record),
        *_setup_section(record, config, birthplace),
        *(["## Plots", "", *(f"![{p.stem}]({p.as_posix()})" for p in plots), ""] if plots else []),
        "## How to use",
        "",
        "The architecture is not part of `transformers`, so pass `trust_remote_code=True` (read "
        f"`modeling_small_encoder.py` first: it is executed on your machine). `{auto_class}` and `pipeline` then "
        "work as for any Hub model.",
        "",
        _usage(repo_id, config, language, prompt),
        "",
        *_limitations(record, config, language, birthplace),
        "## Provenance",
        "",
        f"Exported from the run folder `{run_dir.resolve().name}` by `push_to_hub.py`, with the code the run saved.",
        "",
    ]
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines))


# ----------------------------------------------------------------------------------------------------------------
# Export (dry run and upload staging share this) and upload
# ----------------------------------------------------------------------------------------------------------------
def _check_run_dir(run_dir: Path) -> dict[str, Any]:
    if not run_dir.is_dir():
        raise PushError(f"run directory {run_dir} does not exist")
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise PushError(
            f"{run_dir}/config.json is missing or unreadable; pass the folder a recipe saved the model in"
        ) from None
    if not any(run_dir.glob("model*.safetensors")):
        raise PushError(f"no model*.safetensors in {run_dir}; only safetensors weights are shared")
    if config.get("model_type") != "small-encoder":
        raise PushError(f"{run_dir}/config.json has model_type={config.get('model_type')!r}, expected 'small-encoder'")
    if not config.get("architectures"):
        raise PushError(f"{run_dir}/config.json has no `architectures`; save the model with save_pretrained")
    head_of(config["architectures"][0])
    if not config.get("auto_map"):
        raise PushError(f"{run_dir}/config.json has no `auto_map`; save the model again with the current hf_models")
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
    run_dir: str | os.PathLike, local_dir: str | os.PathLike, options: CardOptions | None = None, overwrite=False
) -> ExportResult:
    """Write to `local_dir` exactly what would be uploaded: allowlisted run files, its code, config and card."""
    run_dir, local_dir = Path(run_dir), Path(local_dir)
    config = _check_run_dir(run_dir)
    code_files(run_dir)
    _prepare_local_dir(local_dir, run_dir, overwrite)
    # Trainer saves use_cache=False; a shared model should use its KV cache in plain forwards too.
    config["use_cache"] = True
    files = collect_files(run_dir, skip=local_dir)
    for rel in files:
        if rel.name != "config.json":
            (local_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(run_dir / rel, local_dir / rel)
    (local_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if not (run_dir / "tokenizer_config.json").is_file():
        print(f"{PROG}: warning: no tokenizer files in {run_dir}; pipeline() will not work from the export", file=sys.stderr)
    plots = [f for f in files if fnmatch(f.name, PLOT_PATTERN)]
    card = build_model_card(run_dir, config, read_record(run_dir), options or CardOptions(), plots)
    card.save(local_dir / "README.md")
    staged = sorted((p.relative_to(local_dir) for p in local_dir.rglob("*") if p.is_file()), key=lambda p: p.as_posix())
    refused = [rel for rel in staged if not _allowed(rel)]
    if refused:
        raise PushError(f"internal error: staged files outside the allowlist: {', '.join(map(str, refused))}")
    return ExportResult(folder=local_dir, files=staged, allow_patterns=list(ALLOW_PATTERNS), card=card)


def network_errors() -> tuple[type[BaseException], ...]:
    """Exception types meaning 'the Hub could not be reached or refused': OSError covers huggingface_hub's own
    (offline mode, HfHubHTTPError); the HTTP client's are added if the installed huggingface_hub uses it."""
    types: list[type[BaseException]] = [OSError]
    for module, name in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(getattr(mod, name, None), type):
            types.append(getattr(mod, name))
    return tuple(types)


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


OFFLINE_MESSAGE = (
    "cannot upload: offline mode is on (HF_HUB_OFFLINE=1); unset it and check your network, "
    "or use --dry_run --local_dir OUT"
)


def explain(error: BaseException) -> str:
    """One line saying what is missing and how to fix it, for an error raised while talking to the Hub."""
    if isinstance(error, OfflineModeIsEnabled):
        return OFFLINE_MESSAGE
    if isinstance(error, HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return f"the Hub rejected the token (HTTP {status}); run 'hf auth login' with a token that has write access"
        return f"the Hub refused the request (HTTP {status}): {one_line(error)}"
    if isinstance(error, OSError) and not isinstance(error, ConnectionError | TimeoutError):
        # A local file problem (permissions, disk full), not the network.
        return f"{type(error).__name__}: {one_line(error)}"
    return (
        f"cannot reach the Hugging Face Hub at {endpoint()} ({type(error).__name__}: {one_line(error, 120)}); "
        "check your network or proxy, or use --dry_run --local_dir OUT"
    )


def upload(
    run_dir: str | os.PathLike,
    options: CardOptions,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
) -> tuple[str, int]:
    """Stage the export in a temporary folder and upload it; returns (commit URL, number of files).

    Raises PushError for what the user must fix, and the Hub client's errors for the network."""
    run_dir = Path(run_dir)
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}:
        raise PushError(OFFLINE_MESSAGE)
    token = get_token()
    if not token:
        raise PushError("no Hugging Face token found; run 'hf auth login' (or 'huggingface-cli login') or set HF_TOKEN")
    api = HfApi(token=token)
    api.whoami()  # fails fast, before staging, on a bad token or no network
    with tempfile.TemporaryDirectory(prefix="push_to_hub-") as tmp:
        staged = export_folder(run_dir, Path(tmp) / "export", options)
        api.create_repo(repo_id=options.repo_id, repo_type="model", private=private or None, exist_ok=True)
        if revision:
            api.create_branch(repo_id=options.repo_id, branch=revision, repo_type="model", exist_ok=True)
        info = api.upload_folder(
            repo_id=options.repo_id,
            repo_type="model",
            folder_path=str(staged.folder),
            revision=revision,
            commit_message=commit_message or f"Upload {run_dir.resolve().name} with push_to_hub.py",
            allow_patterns=staged.allow_patterns,
        )
    return str(getattr(info, "commit_url", None) or f"{endpoint()}/{options.repo_id}"), len(staged.files)
