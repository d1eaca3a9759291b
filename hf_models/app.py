"""Try trained runs in a browser: a Gradio app with three tabs over one or more run folders or Hub models.

    python recipes/app.py [LABEL=]RUN_OR_HUB_ID [...] [--host 127.0.0.1] [--port 7860]

- **Birthplace:** a question in; the answer of every loaded causal LM side by side (the `predict` of its QA
  format in `tasks.qa_formats`, what `evaluate` scores: a reciting model recites the person's opening, then
  answers with the span of it that it scores highest), with London's as the baseline.
- **Sentiment:** a review in; each classifier's label and probability (transformers' text-classification `pipeline`).
- **Attention:** any text in; a heatmap of one layer's and one head's weights, as the model returns them with
  `output_attentions=True`: softmax(QKᵀ/√d) for vanilla attention, the softmax of the synthesized scores for the
  synthesizers (no keys involved). No second copy of the attention code.

The functions below are plain Python (the tests call them); `AppError` carries a one-line message, which the Gradio
layer shows with `gr.Error`. Gradio is imported only by `build_app` and `main` (`pip install -e '.[app]'`). With no
model on the command line, `main` reads them from `app.json` in the working folder: that is how the Space that
`push_to_hub.py --space` writes starts, with the very same launcher as `recipes/app.py`.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import AutoConfig, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from .tasks.qa_formats import answering_format
from .tokenization.courses import CourseCharTokenizer, is_cs224n_char_tokenizer

logger = logging.getLogger(__name__)

PROG = "app.py"
APP_CONFIG_FILE = "app.json"  # {"models": ["[LABEL=]RUN_OR_HUB_ID", ...]}, read when no model is given
LONDON = "London"
LONDON_LABEL = "London (baseline)"
HEADS = {"ForCausalLM": "causal-lm", "ForSequenceClassification": "classifier"}
ATTENTION_TITLES = {
    "vanilla": "vanilla attention: softmax(QKᵀ/√d)",
    "synthesizer": "dense synthesizer: softmax of the scores synthesized from each query alone (no keys)",
    "random": "random synthesizer: softmax of the learned matrix R (no keys, no input)",
    "factorized": "factorized synthesizer: softmax of the synthesized scores A·Bᵀ (no keys)",
}
EXAMPLE_QUESTION = "Where was Albert Einstein born?"
EXAMPLE_REVIEW = "Un livre passionnant, je le recommande."


class AppError(ValueError):
    """A problem the user can fix, said in one line (the app shows it with `gr.Error`)."""

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

    @property
    def attention_type(self) -> str:
        return getattr(self.model.config, "attention_type", "vanilla")


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------
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
    # Importing this module imported `hf_models`, which registers the family with the Auto classes.
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, pipeline

    _check_source(source)
    try:
        config = AutoConfig.from_pretrained(source)
    except (OSError, ValueError) as error:
        where = "the folder" if Path(source).exists() else "the Hub (offline, or no such repository?)"
        raise AppError(f"cannot load {source} from {where}: {_first_line(error)}") from None
    if config.model_type != "small-encoder":
        raise AppError(f"{source} holds a {config.model_type!r} model; this app shows small-encoder models only")
    if getattr(config, "reads_reversed_text", False):  # the pipelines read text forward only
        raise AppError(f"{source} reads text last to first (reads_reversed_text); the app reads it forward only")
    architecture = (config.architectures or [""])[0]
    kind = next((k for suffix, k in HEADS.items() if architecture.endswith(suffix)), None)
    if kind is None:
        raise AppError(f"{source} is a {architecture or 'headless'} model; the app needs a causal LM or a classifier")
    auto_class = AutoModelForCausalLM if kind == "causal-lm" else AutoModelForSequenceClassification
    try:
        model = auto_class.from_pretrained(source, dtype=torch.float32).eval()
        tokenizer = AutoTokenizer.from_pretrained(source)
        if is_cs224n_char_tokenizer(tokenizer):  # the same files, with an error that names an unknown character
            tokenizer = CourseCharTokenizer.from_pretrained(source)
    except (OSError, ValueError) as error:
        raise AppError(f"cannot load the model or tokenizer of {source}: {_first_line(error)}") from None
    tokenizer.clean_up_tokenization_spaces = False
    loaded = LoadedModel(label or Path(source).name, source, model, tokenizer, kind)
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


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _require_text(text: str | None, what: str, example: str) -> str:
    text = (text or "").strip()
    if not text:
        raise AppError(f"type {what} first, for example {example!r}")
    return text


# --------------------------------------------------------------------------------------------------
# The three tabs, as functions
# --------------------------------------------------------------------------------------------------
def answer_birthplace(models: Sequence[LoadedModel], question: str) -> dict[str, str]:
    """Each causal LM's greedy answer to `question` (the evaluation's decoding), then London's, by label."""
    question = _require_text(question, "a question", EXAMPLE_QUESTION)
    lms = [m for m in models if m.kind == "causal-lm"]
    if not lms:
        raise AppError("no causal LM is loaded: start the app with a run of recipes/birthplace.py")
    answers = {m.label: _answer(m, question) for m in lms}
    answers[LONDON_LABEL] = LONDON
    return answers


def _answer(loaded: LoadedModel, question: str) -> str:
    """The answer `recipes/birthplace.py evaluate` would give: the QA format of the model's vocabulary predicts it."""
    # Characters, BPE, or BPE reciting first (the answer then a span of the recitation), as its config says.
    qa_format = answering_format(loaded.tokenizer, loaded.source, loaded.model.config)
    try:
        return qa_format.predict(loaded.model, loaded.tokenizer, [question], block_size=None, batch_size=1)[0]
    except ValueError as error:  # e.g. characters outside the course vocabulary
        raise AppError(f"{loaded.label}: {_first_line(error)}") from None


def classify_review(loaded: LoadedModel, review: str) -> dict[str, float]:
    """The probability of each label of a classifier for one review (truncated to the model's length)."""
    review = _require_text(review, "a review", EXAMPLE_REVIEW)
    if loaded.kind != "classifier":
        raise AppError(
            f"{loaded.label} is not a classifier: start the app with a run of recipes/finetune_sentiment.py"
        )
    max_length = loaded.model.config.max_position_embeddings
    scores = loaded.pipeline(review, top_k=None, truncation=True, max_length=max_length)
    return {entry["label"]: float(entry["score"]) for entry in scores}


@dataclass
class AttentionMap:
    """One head's weights [query, key] over the tokens of a text, and what they are."""

    tokens: list[str]
    weights: np.ndarray
    title: str


def attention_map(loaded: LoadedModel, text: str, layer: int, head: int) -> AttentionMap:
    """The weights the model returns with `output_attentions=True` at (layer, head) for `text`."""
    text = _require_text(text, "some text", "The book was gripping.")
    config = loaded.model.config
    layer, head = int(layer), int(head)
    if not 0 <= layer < config.num_hidden_layers:
        raise AppError(f"{loaded.label} has layers 0 to {config.num_hidden_layers - 1}; layer {layer} does not exist")
    if not 0 <= head < config.num_attention_heads:
        raise AppError(f"{loaded.label} has heads 0 to {config.num_attention_heads - 1}; head {head} does not exist")
    max_length = config.max_position_embeddings
    if loaded.attention_type != "vanilla":  # a synthesizer spans ℓ key positions only
        max_length = min(max_length, config.synthesizer_length)
    input_ids = loaded.tokenizer(text, truncation=True, max_length=max_length)["input_ids"]
    if not input_ids:
        raise AppError("the text gives no tokens; type some words")
    with torch.no_grad():
        kwargs = {"use_cache": False} if loaded.kind == "causal-lm" else {}
        outputs = loaded.model(input_ids=torch.tensor([input_ids]), output_attentions=True, **kwargs)
    weights = outputs.attentions[layer][0, head].float().numpy()
    tokens = [loaded.tokenizer.decode([i]).strip() or "␣" for i in input_ids]
    title = f"{loaded.label}, layer {layer}, head {head}: {ATTENTION_TITLES.get(loaded.attention_type, loaded.attention_type)}"
    return AttentionMap(tokens, weights, title)


def render_heatmap(attention: AttentionMap):
    """The heatmap as a PIL image (queries down, keys across)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    n = len(attention.tokens)
    side = min(12.0, 3.0 + 0.28 * n)
    figure = Figure(figsize=(side + 1.5, side), dpi=90, layout="constrained")
    axes = figure.add_subplot()
    image = axes.imshow(attention.weights, cmap="viridis", vmin=0.0, vmax=float(attention.weights.max()) or 1.0)
    fontsize = 9 if n <= 30 else 6
    axes.set_xticks(range(n), attention.tokens, rotation=90, fontsize=fontsize)
    axes.set_yticks(range(n), attention.tokens, fontsize=fontsize)
    axes.set_xlabel("key (attended to)")
    axes.set_ylabel("query (attending)")
    axes.set_title(attention.title, fontsize=9, wrap=True)
    figure.colorbar(image, ax=axes, shrink=0.8)
    canvas = FigureCanvasAgg(figure)  # no pyplot, no global backend
    canvas.draw()
    return Image.fromarray(np.asarray(canvas.buffer_rgba())).convert("RGB")


# --------------------------------------------------------------------------------------------------
# The Gradio app
# --------------------------------------------------------------------------------------------------
def shown_as_one_line(fn: Callable) -> Callable:
    """Every error reaches the user as one `gr.Error` line; unexpected ones are also logged with their traceback."""
    import gradio as gr

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        try:
            return fn(*args)
        except AppError as error:
            raise gr.Error(str(error)) from None
        except Exception as error:
            logger.exception("the app failed")
            raise gr.Error(" ".join(f"{type(error).__name__}: {_first_line(error)}".split())) from None

    return wrapper


def _models_markdown(models: Sequence[LoadedModel]) -> str:
    rows = [
        f"- **{m.label}**: `{m.source}` ({'birthplace QA / causal LM' if m.kind == 'causal-lm' else 'classifier'}, "
        f"{m.attention_type} attention, {sum(p.numel() for p in m.model.parameters()):,} parameters)"
        for m in models
    ]
    return "\n".join(["# Try a small-encoder model", "", *rows])


def _birthplace_tab(gr, models: Sequence[LoadedModel]) -> None:
    lms = [m for m in models if m.kind == "causal-lm"]
    gr.Markdown(
        "The answers `recipes/birthplace.py evaluate` scores: greedy, or for a model that recites the "
        "person's opening first, the span of its recitation it scores highest. Always answering London is "
        "the course's baseline." + ("" if lms else " **No causal LM is loaded.**")
    )
    question = gr.Textbox(label="Question", placeholder=EXAMPLE_QUESTION, elem_id="birthplace-question")
    ask = gr.Button("Answer", variant="primary", elem_id="birthplace-button")
    with gr.Row():
        answers = [
            gr.Textbox(label=m.label, interactive=False, elem_id=f"birthplace-answer-{i}") for i, m in enumerate(lms)
        ]
        answers.append(gr.Textbox(label=LONDON_LABEL, interactive=False, elem_id="birthplace-london"))

    def run(text: str) -> list[str]:
        return list(answer_birthplace(models, text).values())  # at least two outputs: the models and London

    ask.click(shown_as_one_line(run), inputs=question, outputs=answers, api_name="birthplace")
    question.submit(shown_as_one_line(run), inputs=question, outputs=answers, api_name=False)


def _sentiment_tab(gr, models: Sequence[LoadedModel]) -> None:
    classifiers = [m for m in models if m.kind == "classifier"]
    gr.Markdown(
        "The label each classifier gives and its probability."
        + ("" if classifiers else " **No classifier is loaded.**")
    )
    review = gr.Textbox(label="Review", placeholder=EXAMPLE_REVIEW, lines=3, elem_id="sentiment-review")
    classify = gr.Button("Classify", variant="primary", elem_id="sentiment-button")
    with gr.Row():
        labels = [
            gr.Label(label=m.label, num_top_classes=3, elem_id=f"sentiment-label-{i}")
            for i, m in enumerate(classifiers)
        ]

    def run(text: str) -> list[dict[str, float]] | dict[str, float]:
        if not classifiers:
            raise AppError("no classifier is loaded: start the app with a run of recipes/finetune_sentiment.py")
        scores = [classify_review(m, text) for m in classifiers]
        return scores[0] if len(scores) == 1 else scores  # Gradio wants a bare value for one output

    classify.click(shown_as_one_line(run), inputs=review, outputs=labels or None, api_name="sentiment")


def _attention_tab(gr, models: Sequence[LoadedModel]) -> None:
    by_label = {m.label: m for m in models}
    gr.Markdown(
        "The weights the model itself returns with `output_attentions=True`; a synthesizer's come from "
        "scores synthesized without keys."
    )
    text = gr.Textbox(label="Text", value="The book was gripping and the ending moved me.", elem_id="attention-text")
    first = models[0].model.config
    with gr.Row():
        choice = gr.Dropdown(list(by_label), value=models[0].label, label="Model", elem_id="attention-model")
        layer = gr.Slider(0, first.num_hidden_layers - 1, value=0, step=1, label="Layer", elem_id="attention-layer")
        head = gr.Slider(0, first.num_attention_heads - 1, value=0, step=1, label="Head", elem_id="attention-head")
    show = gr.Button("Show attention", variant="primary", elem_id="attention-button")
    heatmap = gr.Image(label="Attention", type="pil", elem_id="attention-image")

    def limits(label: str) -> tuple[Any, Any]:
        config = by_label[label].model.config
        return (
            gr.Slider(maximum=config.num_hidden_layers - 1, value=0),
            gr.Slider(maximum=config.num_attention_heads - 1, value=0),
        )

    def run(label: str, words: str, layer_index: float, head_index: float):
        if label not in by_label:
            raise AppError(f"pick a model among {', '.join(by_label)}")
        return render_heatmap(attention_map(by_label[label], words, int(layer_index), int(head_index)))

    choice.change(limits, inputs=choice, outputs=[layer, head], api_name=False)
    show.click(shown_as_one_line(run), inputs=[choice, text, layer, head], outputs=heatmap, api_name="attention")


def build_app(models: Sequence[LoadedModel]):
    """The Gradio Blocks app over loaded models (at least one)."""
    import gradio as gr

    if not models:
        raise AppError("no model to show: give at least one run folder or Hub id")
    with gr.Blocks(title="small-encoder: try it", analytics_enabled=False) as demo:
        gr.Markdown(_models_markdown(models))
        with gr.Tab("Birthplace", elem_id="tab-birthplace"):
            _birthplace_tab(gr, models)
        with gr.Tab("Sentiment", elem_id="tab-sentiment"):
            _sentiment_tab(gr, models)
        with gr.Tab("Attention", elem_id="tab-attention"):
            _attention_tab(gr, models)
    return demo


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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Try trained small-encoder runs in a browser: birthplace answers side by side, review "
        f"sentiment, and attention heatmaps. With no model given, reads {APP_CONFIG_FILE} (as in a Space).",
    )
    parser.add_argument(
        "models",
        nargs="*",
        metavar="[LABEL=]RUN_OR_HUB_ID",
        help="run folders (or Hub ids) to load, e.g. pretrained=runs/bp/finetune scratch=runs/bp/scratch",
    )
    parser.add_argument("--host", help="address to serve on (default: $GRADIO_SERVER_NAME, else 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default: $GRADIO_SERVER_PORT, else 7860)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """`recipes/app.py`: load the models and serve the app until interrupted; 1 with one line on a bad input."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    try:
        sources = args.models or read_app_config()
        if not sources:
            raise AppError(f"give at least one [LABEL=]RUN_OR_HUB_ID (or put them in {APP_CONFIG_FILE})")
        demo = build_app(load_models(sources))
    except AppError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    demo.launch(server_name=args.host, server_port=args.port, share=False)
    return 0
