"""Finding and loading the app's models: `[LABEL=]RUN_OR_HUB_ID` strings (from the command line or `app.json`) ->
small-encoder models with their tokenizers, in evaluation mode, and the task each was trained for (its run record's,
else its model card's), which decides its tab; `AppError` for what the user can fix."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import AutoConfig, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from ..run_record import read_record
from ..safety import one_line, reading
from ..textio import UsageError
from ..tokenization.courses import CourseCharTokenizer, is_cs224n_char_tokenizer
from .arguments import APP_CONFIG_FILE

HEADS = {"ForCausalLM": "causal-lm", "ForSequenceClassification": "classifier"}
# The tab of each task a run record names (`RunRecord.task`): a model goes where what it was trained for is shown.
TASK_VIEWS = {
    "birthplace-qa": "birthplace",  # finetuned to answer 'Where was X born?'
    "birthplace-evaluation": "birthplace",  # a record that holds only the QA scores of the model
    "birthplace-pretraining": "generate",  # pretrained on the people's paragraphs, never asked a question
    "pretraining": "generate",
    "sentiment": "sentiment",
}
VIEW_NAMES = {"birthplace": "birthplace QA", "generate": "language model", "sentiment": "review classifier"}


class AppError(UsageError):
    """A problem the user can fix, said in one line: the app shows it with `gr.Error`, the command line
    (`safety.command_line`) as `error: ...` with exit status 2."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


@dataclass
class LoadedModel:
    """A model ready to use: its label in the app, where it came from, and what its head is for."""

    label: str
    source: str
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    kind: str  # "causal-lm" or "classifier"
    pipeline: Any = field(default=None, repr=False)
    task: str | None = None  # the run record's (or the model card's) task; None when neither says

    @property
    def attention_type(self) -> str:
        return getattr(self.model.config, "attention_type", "vanilla")

    @property
    def view(self) -> str:
        """The tab the model goes in: "birthplace" (QA), "generate" (a plain LM) or "sentiment"."""
        return model_view(self.kind, self.task)


def model_view(kind: str, task: str | None) -> str:
    """The tab of a model: its task's, when its head can do it; else a classifier's is Sentiment and a causal LM's
    Generate."""
    view = TASK_VIEWS.get(task or "")
    if view is not None and (view == "sentiment") == (kind == "classifier"):
        return view
    if kind == "classifier":
        return "sentiment"
    return "generate"


def trained_task(source: str) -> str | None:
    """The task a model was trained for: its run record's (a run folder), else the one its model card's tags name
    (an export of `push_to_hub.py`, or a Hub model: the card is its README.md); None when neither says."""
    folder = Path(source)
    record = read_record(folder) if folder.is_dir() else None
    if record is not None and record.task:
        return record.task
    import yaml
    from huggingface_hub import ModelCard

    try:
        card = ModelCard.load(folder / "README.md" if folder.is_dir() else source)
    except (OSError, ValueError, yaml.YAMLError):  # no card, offline, or not a card: the head decides the tab
        return None
    return next((tag for tag in card.data.tags or [] if tag in TASK_VIEWS), None)


def parse_source(text: str) -> tuple[str, str]:
    """`LABEL=SOURCE` or `SOURCE` -> (label, source); the label defaults to the folder's or the repository's name."""
    label, sep, source = text.partition("=")
    if not sep:
        label, source = "", text
    source = source.strip()
    if not source:
        raise AppError(f"empty model source in {text!r}: give a run folder or a Hub id, as [LABEL=]RUN_OR_HUB_ID")
    return label.strip() or Path(source.rstrip("/")).name, source


def _check_source(source: str) -> None:
    path = Path(source)
    if path.exists():
        if not (path / "config.json").is_file():
            raise AppError(f"{source} has no config.json: pass the folder a recipe saved the model in")
        return
    if source.startswith((".", "/")) or source.count("/") != 1:
        raise AppError(f"{source}: no such run folder (and not a Hub id of the form USER/NAME)")


def load_model(source: str, label: str | None = None) -> LoadedModel:
    """Load a run folder or a Hub model of the small-encoder family, with its tokenizer, in evaluation mode."""
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, pipeline

    # Registers the family with the Auto classes (`import hf_models` alone does not): a run folder then loads with
    # the package's classes, with no remote-code prompt and no `trust_remote_code`.
    from .. import small_encoder  # noqa: F401

    _check_source(source)
    try:
        config = AutoConfig.from_pretrained(source)
    except (OSError, ValueError) as error:
        where = "the folder" if Path(source).exists() else "the Hub (offline, or no such repository?)"
        raise AppError(f"cannot load {source} from {where}: {one_line(error, 200)}") from None
    if config.model_type != "small-encoder":
        raise AppError(f"{source} holds a {config.model_type!r} model; this app shows small-encoder models only")
    architecture = (config.architectures or [""])[0]
    kind = next((k for suffix, k in HEADS.items() if architecture.endswith(suffix)), None)
    if kind is None:
        raise AppError(f"{source} is a {architecture or 'headless'} model; the app needs a causal LM or a classifier")
    auto_class = AutoModelForCausalLM if kind == "causal-lm" else AutoModelForSequenceClassification
    try:
        with reading(source, "the model"):  # truncated weights, or weights of other shapes, named in one line
            model = auto_class.from_pretrained(source, dtype=torch.float32).eval()
        tokenizer = AutoTokenizer.from_pretrained(source)
        if is_cs224n_char_tokenizer(tokenizer):  # the same files, with an error that names an unknown character
            tokenizer = CourseCharTokenizer.from_pretrained(source)
    except UsageError as error:
        raise AppError(str(error)) from None
    except (OSError, ValueError) as error:
        raise AppError(f"cannot load the model or tokenizer of {source}: {one_line(error, 200)}") from None
    if len(tokenizer) > config.vocab_size:  # its last ids would index past the embedding table at the first input
        raise AppError(
            f"{source}: its tokenizer has {len(tokenizer)} tokens but the model a vocabulary of {config.vocab_size}: "
            "the tokenizer files come from another run; copy the run's own tokenizer back into the folder"
        )
    try:
        task = trained_task(source)
    except ValueError as error:  # a run record that is not one: `read_record` names the file
        raise AppError(one_line(error, 200)) from None
    tokenizer.clean_up_tokenization_spaces = False
    loaded = LoadedModel(label or Path(source).name, source, model, tokenizer, kind, task=task)
    if kind == "classifier":
        loaded.pipeline = pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu")
    return loaded


def load_models(sources: Sequence[str]) -> list[LoadedModel]:
    """`[LABEL=]SOURCE` strings -> loaded models, with distinct labels."""
    models = [load_model(source, label) for label, source in map(parse_source, sources)]
    labels = [m.label for m in models]
    if duplicates := sorted({label for label in labels if labels.count(label) > 1}):
        raise AppError(f"two models are labelled {duplicates[0]!r}: name them, as LABEL=RUN_OR_HUB_ID")
    return models


def read_app_config(folder: str | os.PathLike = ".") -> list[str]:
    """The model sources of `app.json` (written by `push_to_hub.py --space`); [] when there is none."""
    path = Path(folder) / APP_CONFIG_FILE
    if not path.is_file():
        return []
    try:
        sources = json.loads(path.read_text(encoding="utf-8"))["models"]
    except (ValueError, KeyError, TypeError):
        raise AppError(f'{path}: expected {{"models": ["[LABEL=]RUN_OR_HUB_ID", ...]}}') from None
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise AppError(f"{path}: 'models' must be a list of strings")
    return sources
