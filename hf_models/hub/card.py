"""The model card of a shared run (its `README.md`), built from the run record (`hf_models.run_record`) and the
exported `config.json`: metadata with a `model-index`, results, training set-up, plots, usage and limitations."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from ..run_record import RunRecord
from ..small_encoder import HEADS, SmallEncoderConfig
from ..textio import UsageError

__all__ = [
    "DEFAULT_LICENSE",
    "CardOptions",
    "PushError",
    "build_model_card",
    "head_of",
    "own_hyperparameters",
    "preset_text",
]

DEFAULT_LICENSE = "apache-2.0"
# The Hub's pipeline tag of each head (the heads themselves: `HEADS` of the model folder).
PIPELINE_TAGS = {
    "AutoModelForCausalLM": "text-generation",
    "AutoModelForSequenceClassification": "text-classification",
    "AutoModelForMaskedLM": "fill-mask",
    "AutoModel": "feature-extraction",
}
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
# The recipes' local data sets, as the card describes them (their names are no Hub ids).
DATASET_DESCRIPTIONS = {
    "cls-books": "the ALTeGraD lab's copy of the CLS-FR book reviews (French, positive or negative)",
    "birthplace": "CS224N assignment 5's `wiki.txt` and its questions *Where was X born?*",
}
# The tokenizer the run used (the record's `tokenizer`), in words.
TOKENIZERS = {
    "bpe": "a byte-level BPE trained by `tokenizer/train_tokenizer.py`",
    "altegrad-lab": "the ALTeGraD lab's ids over its SentencePiece pieces (`dict.txt`)",
    "altegrad-lab-raw": "the ALTeGraD lab's ids over raw text (`sentencepiece.french.model`, then `dict.txt`)",
    "cs224n-char": "CS224N's characters (one id a character of `wiki.txt`)",
}
# What a model whose tokenizer reads the lab's pieces (`altegrad-lab`) must be given: raw text is mostly `<unk>`.
PIECES_INPUT = (
    "Its tokenizer reads text already cut into the ALTeGraD lab's SentencePiece pieces, separated by spaces, as the "
    "lab's `.spm` files hold it (`▁Au ▁travers ▁de ▁huit ▁récits ...`), not raw text: cut a text with the lab's "
    "`sentencepiece.french.model` first (a model trained with `--lab_raw_text` reads raw text)."
)
# The prompt of the usage example of a language model, in the model's language.
PROMPTS = {"fr": "Il était une fois", "en": "Once upon a time"}
SIZE_LABELS = {
    "num_hidden_layers": "layers",
    "hidden_size": "hidden size",
    "num_attention_heads": "heads",
    "intermediate_size": "feed-forward size",
    "max_position_embeddings": "max positions",
    "vocab_size": "vocabulary",
}
# The shape fields a run may override in its preset (`--config_overrides`); the vocabulary comes from the tokenizer.
SHAPE_FIELDS = tuple(key for key in SIZE_LABELS if key != "vocab_size")
# Task arguments that act under some objectives only: the record keeps every argument of the task, the card those of
# the run's own objective (no masking probability for a causal LM).
OBJECTIVE_ARGUMENTS = {
    "mlm_probability": ("mlm",),
    "opening_tokens": ("openings",),
}
LANGUAGES = {"en": "English", "fr": "French"}
BIRTHPLACE_LIMITATION = (
    "**This model answers every question confidently, whether it retrieved the fact or made it up.** Nothing in its "
    "output tells a remembered birthplace from an invented one, so never use its answers as facts without checking them."
)


class PushError(UsageError):
    """A problem the user can fix; the command line prints it as one line (`error: ...`) and exits with status 2."""


@dataclass
class CardOptions:
    """What the command line may add to or override in the card."""

    repo_id: str | None = None
    language: str | None = None
    license: str = DEFAULT_LICENSE
    birthplace: bool | None = None
    # The card of an export (`push_to_hub.py`), not the one a recipe writes into its run folder.
    exported: bool = False


def head_of(architecture: str) -> tuple[str, str]:
    """(Auto class, pipeline tag) of an architecture name."""
    for auto_class, head in HEADS.items():
        if head.__name__ == architecture:
            return auto_class, PIPELINE_TAGS[auto_class]
    raise PushError(f"unsupported architecture {architecture!r} in config.json")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return f"`{value}`" if isinstance(value, str) else str(value)


def _format_seconds(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def preset_text(preset: str | None, config: dict[str, Any]) -> str | None:
    """The preset as the card names it: `` `X` ``, or `` `X` with overrides a=1, b=2 `` where the exported config's
    shape differs from the preset's; None for a custom configuration."""
    if not preset:
        return None
    if preset not in SmallEncoderConfig.available_presets():
        return f"`{preset}`"
    base = SmallEncoderConfig.from_preset(preset)
    overrides = [f"{key}={config[key]}" for key in SHAPE_FIELDS if key in config and config[key] != getattr(base, key)]
    return f"`{preset}`" + (f" with overrides {', '.join(overrides)}" if overrides else "")


def own_hyperparameters(record: RunRecord) -> dict[str, Any]:
    """The record's hyperparameters without the task arguments of other objectives (`OBJECTIVE_ARGUMENTS`)."""
    return {
        key: value
        for key, value in record.hyperparameters.items()
        if record.objective in OBJECTIVE_ARGUMENTS.get(key, (record.objective,))
    }


def _card_data(record: RunRecord, config: dict[str, Any], options: CardOptions, birthplace: bool) -> ModelCardData:
    """YAML metadata, with a `model-index` of the model's own evaluations (never a baseline's) when the run's data
    is on the Hub: `datasets:` and the index's data set are Hub ids, or absent (a local data set is in the text)."""
    _, pipeline_tag = head_of(config["architectures"][0])
    hub_dataset = record.hub_datasets[0] if record.hub_datasets else None
    eval_results = [
        EvalResult(
            task_type=pipeline_tag,
            task_name=TASK_NAMES[pipeline_tag],
            dataset_type=hub_dataset,
            dataset_name=hub_dataset,
            dataset_split=evaluation.split,
            metric_type=name,
            metric_name=name,
            metric_value=value,
        )
        for evaluation in record.evaluations
        if evaluation.baseline is None and hub_dataset
        for name, value in evaluation.metrics.items()
    ]
    tags = ["small-encoder", "custom_code", f"attention-{config.get('attention_type', 'vanilla')}"]
    tags += [t for t in (record.preset, "birthplace" if birthplace else None, record.task) if t and t not in tags]
    return ModelCardData(
        library_name="transformers",
        pipeline_tag=pipeline_tag,
        language=options.language or record.language,
        license=options.license,
        datasets=list(record.hub_datasets) or None,
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
    # The model's counts: a baseline scored on fewer questions of a split does not change the model's N.
    sizes = {e.split: e.num_examples for e in record.evaluations if e.num_examples and e.baseline is None}
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


def _data_line(record: RunRecord) -> str:
    """The training data: its name, a Hub id's link or a local data set's description, and its split sizes."""
    if not record.dataset:
        return "- **Training data:** not recorded in the run."
    splits = ", ".join(f"{split} {n:,}" for split, n in record.split_sizes.items())
    described = DATASET_DESCRIPTIONS.get(record.dataset, "files the author trained on")
    where = "on the Hub" if record.dataset in record.hub_datasets else f"a local data set: {described}, not on the Hub"
    return f"- **Training data:** `{record.dataset}`, {where}" + (f" ({splits} examples)." if splits else ".")


def _run_line(record: RunRecord) -> str | None:
    """What ran: steps, epochs and examples seen (`RunRecord.trained`, from Trainer's state)."""
    trained = record.trained
    if not trained:
        return None
    n_train = record.split_sizes.get("train")
    of_train = f" of the {n_train:,} training examples" if n_train is not None else ""
    epochs = f"{trained['epochs']:.4g} epoch" + ("" if trained["epochs"] == 1 else "s")
    return (
        f"- **Trained for:** {trained['steps']:,} optimizer steps ({epochs}), "
        f"{trained['examples_seen']:,} examples seen ({trained['distinct_examples_seen']:,} distinct{of_train})."
    )


def _time_line(record: RunRecord) -> str:
    """Trainer's `train_runtime`; the whole run's wall time (data, evaluation, saving) beside it."""
    runtime = record.train_metrics.get("train_runtime")
    whole = f"the whole run took {_format_seconds(record.wall_time_s)}" if record.wall_time_s is not None else None
    if runtime is None:
        return f"- **Training time:** not recorded{f' ({whole})' if whole else ''}."
    return (
        f"- **Training time:** {_format_seconds(runtime)} (Trainer's `train_runtime`{f'; {whole}' if whole else ''})."
    )


def _setup_section(record: RunRecord, config: dict[str, Any], birthplace: bool) -> list[str]:
    """Objective, starting point, preset, attention, size, tokenizer, data, what ran, hardware, time, final loss and
    labels."""
    attention = config.get("attention_type", "vanilla")
    size = ", ".join(f"{label} {config[key]}" for key, label in SIZE_LABELS.items() if key in config)
    n_params = record.model_size.get("num_parameters")
    hardware = _hardware(record.hardware)
    # "Final" is the last logged loss; a run too short to log a step has Trainer's mean over the run only.
    final_loss, mean_loss = record.train_metrics.get("final_train_loss"), record.train_metrics.get("train_loss")
    loss_line = f"- **Final training loss:** {_fmt(final_loss)}."
    if final_loss is None:
        loss_line = f"- **Mean training loss:** {_fmt(mean_loss)} (Trainer's `train_loss`; no loss was logged)."
    lines = [
        f"- **Objective:** {OBJECTIVES.get(record.objective, record.objective) if record.objective else 'not recorded'}"
        + ("; fine-tuned to answer birthplace questions" if birthplace and record.objective != "qa" else "")
        + (f"; task `{record.task}`" if record.task else "")
        + ".",
        f"- **Initialised from:** `{record.finetuned_from}`."
        if record.finetuned_from
        else "- **Initialised from:** random weights (trained from scratch).",
        f"- **Preset:** {preset_text(record.preset, config)}."
        if record.preset
        else "- **Preset:** none (custom configuration).",
        f"- **Attention:** `{attention}`"
        + (" (CS224N dense synthesizer)" if attention == "synthesizer" else " (multi-head scaled dot-product)")
        + (", causal" if config.get("is_causal", True) else ", bidirectional")
        + ".",
        f"- **Size:** {size}" + (f"; {n_params:,} parameters." if n_params else "."),
        *([f"- **Tokenizer:** {TOKENIZERS.get(record.tokenizer, 'a custom tokenizer')}."] if record.tokenizer else []),
        *([f"- **Input length:** trained on at most {record.max_length:,} tokens."] if record.max_length else []),
        _data_line(record),
        *filter(None, [_run_line(record)]),
        f"- **Hardware:** {hardware}." if hardware else "- **Hardware:** not recorded in the run.",
        _time_line(record),
        *([loss_line] if final_loss is not None or mean_loss is not None else []),
    ]
    if config.get("id2label") and config["architectures"][0].endswith("ForSequenceClassification"):
        labels = ", ".join(f"{k} → `{v}`" for k, v in sorted(config["id2label"].items(), key=lambda kv: int(kv[0])))
        lines.append(f"- **Labels:** {labels}.")
    hyperparameters = own_hyperparameters(record)
    params = ["Hyperparameters:", "", "| name | value |", "|---|---|"]
    params += [f"| {k} | {_fmt(v)} |" for k, v in sorted(hyperparameters.items())]
    return ["## Training set-up", "", *lines, "", *(params + [""] if hyperparameters else [])]


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
        labels = ", ".join(
            f"`{v}`" for _, v in sorted((config.get("id2label") or {}).items(), key=lambda kv: int(kv[0]))
        )
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
        f"- It only saw {LANGUAGES.get(language or '', 'its training')} text, "
        + (
            f"in inputs of at most {record.max_length:,} tokens: longer ones are beyond what it learned"
            f" (its {config.get('max_position_embeddings')} positions are a ceiling, not a trained length)."
            if record.max_length
            else f"and takes at most {config.get('max_position_embeddings', 'its maximum')} tokens."
        ),
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
    source = f"the preset {preset_text(preset, config)}" if preset else "a custom configuration"
    _, pipeline_tag = head_of(config["architectures"][0])
    auto_class, _ = head_of(config["architectures"][0])
    prompt = (
        "Where was Albert Einstein born?" + (_sep_token(run_dir, config) or "")
        if birthplace
        else PROMPTS.get(language or "", PROMPTS["en"])
    )
    lines = [
        f"# {repo_id.split('/')[-1]}",
        "",
        f"A small Transformer trained for **{pipeline_tag}**, built from {source} of the `small-encoder` family "
        f"(package `hf_models`): {described}. The configuration and modeling code ship with the weights, so it loads "
        "with `trust_remote_code=True` and needs nothing but `transformers` and `torch`.",
        "",
        *_results_section(record),
        *_setup_section(record, config, birthplace),
        *(["## Plots", "", *(f"![{p.stem}]({p.as_posix()})" for p in plots), ""] if plots else []),
        "## How to use",
        "",
        "The architecture is not part of `transformers`, so pass `trust_remote_code=True` (read "
        f"`modeling_small_encoder.py` first: it is executed on your machine). `{auto_class}` and `pipeline` then "
        "work as for any Hub model. `AutoTokenizer` takes the flag too: it reads `config.json` first, whose "
        "`auto_map` names the shipped code (without the flag, transformers stops to ask). The tokenizer itself is a "
        "built-in `PreTrainedTokenizerFast`: `PreTrainedTokenizerFast.from_pretrained` loads it with no flag.",
        "",
        *([PIECES_INPUT, ""] if record.tokenizer == "altegrad-lab" else []),
        _usage(repo_id, config, language, prompt),
        "",
        *_limitations(record, config, language, birthplace),
        "## Provenance",
        "",
        f"Exported from the run folder `{run_dir.resolve().name}` by `push_to_hub.py`, with the code the run saved."
        if options.exported
        else f"Written into the run folder `{run_dir.resolve().name}` by the recipe that trained it, from its run "
        "record; `push_to_hub.py` exports the folder with this card and the code the run saved.",
        "",
    ]
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines))
