"""What each tab of the app computes, as plain functions (the tests call them; `interface` wires them to Gradio):
birthplace answers side by side with London's, a review's label probabilities, and one head's attention map."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..tasks.qa_formats import answering_format
from .loading import AppError, LoadedModel, first_line

LONDON = "London"
LONDON_LABEL = "London (baseline)"
ATTENTION_TITLES = {
    "vanilla": "vanilla attention: softmax(QKᵀ/√d)",
    "synthesizer": "dense synthesizer: softmax of the scores synthesized from each query alone (no keys)",
    "random": "random synthesizer: softmax of the learned matrix R (no keys, no input)",
    "factorized": "factorized synthesizer: softmax of the synthesized scores A·Bᵀ (no keys)",
}
EXAMPLE_QUESTION = "Where was Albert Einstein born?"
EXAMPLE_REVIEW = "Un livre passionnant, je le recommande."


def _require_text(text: str | None, what: str, example: str) -> str:
    text = (text or "").strip()
    if not text:
        raise AppError(f"type {what} first, for example {example!r}")
    return text


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
        raise AppError(f"{loaded.label}: {first_line(error)}") from None


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
