"""What each tab of the app computes, as plain functions (the tests call them; `layout` wires them to Gradio):
birthplace answers side by side with London's (and why an answer is empty), a plain LM's continuation of a prompt, a
review's label probabilities, and one head's attention map. Every text a model wrote passes through `printable`."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..data import person_name
from ..safety import one_line
from ..tasks.birthplace_qa import CS224N_ANSWER_CHARS, CourseQAFormat, answering_format, usable_length
from .loading import AppError, LoadedModel
from .text import is_visible, printable

LONDON = "London"
LONDON_LABEL = "London (baseline)"
ATTENTION_TITLES = {
    "vanilla": "vanilla attention: softmax(QKᵀ/√d)",
    "synthesizer": "dense synthesizer: softmax of the scores synthesized from each query alone (no keys)",
    "random": "random synthesizer: softmax of the learned matrix R (no keys, no input)",
    "factorized": "factorized synthesizer: softmax of the synthesized scores A·Bᵀ (no keys)",
}
EXAMPLE_QUESTION = "Where was Albert Einstein born?"
EXAMPLE_PROMPT = "Albert Einstein was"
EXAMPLE_REVIEW = "Un livre passionnant, je le recommande."
QUESTION_FORM = "Where was X born?"


def _require_text(text: str | None, what: str, example: str) -> str:
    """The typed text without white space at its ends; refused, as an empty one, when no character of it shows (white
    space, zero-width and other format or control characters alone)."""
    text = (text or "").strip()
    if not is_visible(text):
        raise AppError(f"type {what} first, for example {example!r}")
    return text


def answer_birthplace(models: Sequence[LoadedModel], question: str) -> dict[str, str]:
    """Each birthplace QA model's greedy answer to `question` (the evaluation's decoding), then London's, by label."""
    question = _require_text(question, "a question", EXAMPLE_QUESTION)
    qa_models = [m for m in models if m.view == "birthplace"]
    if not qa_models:
        raise AppError("no birthplace QA model is loaded: start the app with a run of recipes/birthplace.py finetune")
    answers = {m.label: printable(_answer(m, question)) for m in qa_models}
    answers[LONDON_LABEL] = LONDON
    return answers


def _answer(loaded: LoadedModel, question: str) -> str:
    """The answer `recipes/birthplace.py evaluate` would give: the QA format of the model's vocabulary predicts it."""
    # Characters, BPE, or BPE reciting first (the answer then a span of the recitation), as its run record says.
    try:
        qa_format = answering_format(loaded.tokenizer, loaded.source)
        return qa_format.predict(loaded.model, loaded.tokenizer, [question], block_size=None, batch_size=1)[0]
    except ValueError as error:  # no run record to say how it answers, or characters outside the course vocabulary
        raise AppError(f"{loaded.label}: {one_line(error, limit=200)}") from None


def empty_answer_reason(loaded: LoadedModel, question: str) -> str:
    """Why `loaded` answered nothing to `question`, in one line (shown under the empty answer)."""
    if person_name(question) is None:
        return f"{loaded.label} answered nothing: it was finetuned on questions of the form '{QUESTION_FORM}'."
    if isinstance(answering_format(loaded.tokenizer, loaded.source), CourseQAFormat):
        return (
            f"{loaded.label} answered nothing: the {CS224N_ANSWER_CHARS} characters it wrote after the question "
            "hold no answer between two ⁇."
        )
    return f"{loaded.label} answered nothing: it ended its answer at once (its first token was ⁇ or </s>)."


def generate_text(loaded: LoadedModel, prompt: str, max_new_tokens: int = 40, sample: bool = False) -> str:
    """A plain LM's continuation of `prompt`: greedy, or sampled (`generate`'s defaults: top-k 50), up to
    `max_new_tokens` tokens or its end-of-text token; the prompt's start is cut when both exceed the model's length.
    Empty when the model ends the text at once (`empty_continuation_reason`)."""
    prompt = _require_text(prompt, "a prompt", EXAMPLE_PROMPT)
    if loaded.view != "generate":
        raise AppError(f"{loaded.label} is not a plain language model: its tab is {loaded.view.capitalize()}")
    try:
        ids = loaded.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    except ValueError as error:  # e.g. characters outside a course vocabulary
        raise AppError(f"{loaded.label}: {one_line(error, limit=200)}") from None
    if not ids:
        raise AppError("the prompt gives no tokens; type some words")
    length = usable_length(loaded.model.config)
    max_new_tokens = max(1, min(int(max_new_tokens), length - 1))
    ids = ids[-(length - max_new_tokens) :]
    eos = loaded.tokenizer.eos_token_id
    with torch.no_grad():
        output = loaded.model.generate(
            torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=max_new_tokens,
            do_sample=sample,
            eos_token_id=eos,
            pad_token_id=loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else eos,
        )[0, len(ids) :].tolist()
    if eos in output:
        output = output[: output.index(eos)]
    # Special tokens stay: a span-corruption model writes ⁇ between what it fills in.
    return printable(loaded.tokenizer.decode(output), keep_newlines=True)


def empty_continuation_reason(loaded: LoadedModel) -> str:
    """Why `loaded` continued a prompt with nothing, in one line."""
    return f"{loaded.label} wrote nothing: its first token ended the text (</s>)."


def classify_review(loaded: LoadedModel, review: str) -> dict[str, float]:
    """The probability of each label of a classifier for one review (truncated to the model's length)."""
    review = _require_text(review, "a review", EXAMPLE_REVIEW)
    if loaded.kind != "classifier":
        raise AppError(
            f"{loaded.label} is not a classifier: start the app with a run of recipes/finetune_sentiment.py"
        )
    max_length = loaded.model.config.max_position_embeddings
    scores = loaded.pipeline(review, top_k=None, truncation=True, max_length=max_length)
    return {printable(entry["label"]): float(entry["score"]) for entry in scores}


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
    input_ids = loaded.tokenizer(text, truncation=True, max_length=usable_length(loaded.model.config))["input_ids"]
    if not input_ids:
        raise AppError("the text gives no tokens; type some words")
    with torch.no_grad():
        kwargs = {"use_cache": False} if loaded.kind == "causal-lm" else {}
        outputs = loaded.model(input_ids=torch.tensor([input_ids]), output_attentions=True, **kwargs)
    weights = outputs.attentions[layer][0, head].float().numpy()
    tokens = [printable(loaded.tokenizer.decode([i])).strip() or "␣" for i in input_ids]
    what = ATTENTION_TITLES.get(loaded.attention_type, loaded.attention_type)
    title = printable(f"{loaded.label}, layer {layer}, head {head}: {what}")
    return AttentionMap(tokens, weights, title)


def render_heatmap(attention: AttentionMap):
    """The heatmap as a PIL image (queries down, keys across), cropped to what is drawn: no blank band around it."""
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
    # Wrapped by hand: matplotlib's `wrap=True` made the layout reserve a tall blank band above the plot.
    axes.set_title(textwrap.fill(attention.title, width=max(40, int(14 * side))), fontsize=9)
    figure.colorbar(image, ax=axes, shrink=0.8)
    FigureCanvasAgg(figure)  # no pyplot, no global backend
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.1)
    return Image.open(buffer).convert("RGB")
