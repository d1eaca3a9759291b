"""The app's layout in Gradio: one tab per function of `predictions`, errors shown as one `gr.Error` line, and `main`,
the command line of `recipes/app.py` (and of the Space that `push_to_hub.py --space` writes).

Gradio is imported only when the app is built (`pip install -e '.[app]'`), so that the package imports without it.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from ..safety import one_line
from .arguments import APP_CONFIG_FILE, parse_args
from .loading import VIEW_NAMES, AppError, LoadedModel, load_models, read_app_config
from .predictions import (
    EXAMPLE_PROMPT,
    EXAMPLE_QUESTION,
    EXAMPLE_REVIEW,
    LONDON_LABEL,
    QUESTION_FORM,
    answer_birthplace,
    attention_map,
    classify_review,
    empty_answer_reason,
    empty_continuation_reason,
    generate_text,
    render_heatmap,
)
from .text import printable

logger = logging.getLogger(__name__)


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
            raise gr.Error(" ".join(f"{type(error).__name__}: {one_line(error, 200)}".split())) from None

    return wrapper


def _models_markdown(models: Sequence[LoadedModel]) -> str:
    rows = [
        f"- **{printable(m.label)}**: `{printable(m.source)}` ({VIEW_NAMES[m.view]}, "
        + (f"task `{printable(m.task)}`" if m.task else "no run record")
        + f"; {m.attention_type} attention, {sum(p.numel() for p in m.model.parameters()):,} parameters)"
        for m in models
    ]
    return "\n".join(["# Try a small-encoder model", "", *rows])


def _reasons(lines: Sequence[str]) -> str:
    """The one-line reasons of the empty outputs, as Markdown (empty when every output has text)."""
    return "\n".join(f"- {printable(line)}" for line in lines)


def _birthplace_tab(gr, models: Sequence[LoadedModel]) -> None:
    qa_models = [m for m in models if m.view == "birthplace"]
    gr.Markdown(
        "The answers `recipes/birthplace.py evaluate` scores: greedy, or for a model that recites the "
        "person's opening first, the span of its recitation it scores highest. The models were finetuned on "
        f"questions of the form *{QUESTION_FORM}*. Always answering London is the course's baseline."
    )
    question = gr.Textbox(label="Question", placeholder=EXAMPLE_QUESTION, elem_id="birthplace-question")
    ask = gr.Button("Answer", variant="primary", elem_id="birthplace-button")
    with gr.Row():
        answers = [
            gr.Textbox(label=m.label, interactive=False, elem_id=f"birthplace-answer-{i}")
            for i, m in enumerate(qa_models)
        ]
        answers.append(gr.Textbox(label=LONDON_LABEL, interactive=False, elem_id="birthplace-london"))
    notes = gr.Markdown(elem_id="birthplace-notes")

    def run(text: str) -> list[str]:
        by_label = answer_birthplace(models, text)
        empty = [empty_answer_reason(m, text) for m in qa_models if not by_label[m.label]]
        return [*by_label.values(), _reasons(empty)]  # the models' answers, London's, then why any is empty

    outputs = [*answers, notes]
    ask.click(shown_as_one_line(run), inputs=question, outputs=outputs, api_name="birthplace")
    question.submit(shown_as_one_line(run), inputs=question, outputs=outputs, api_name=False)


def _generate_tab(gr, models: Sequence[LoadedModel]) -> None:
    lms = [m for m in models if m.view == "generate"]
    gr.Markdown(
        "The continuation each plain language model (pretrained, never finetuned to answer) writes after the "
        "prompt: greedy (the likeliest token each time) or sampled (among the 50 likeliest)."
    )
    prompt = gr.Textbox(label="Prompt", placeholder=EXAMPLE_PROMPT, elem_id="generate-prompt")
    with gr.Row():
        decoding = gr.Radio(["greedy", "sampled"], value="greedy", label="Decoding", elem_id="generate-decoding")
        longest = max((m.model.config.max_position_embeddings for m in lms), default=64) - 1
        new_tokens = gr.Slider(
            1, longest, value=min(40, longest), step=1, label="Max new tokens", elem_id="generate-max-new-tokens"
        )
    write = gr.Button("Generate", variant="primary", elem_id="generate-button")
    with gr.Row():
        texts = [
            gr.Textbox(label=m.label, lines=4, interactive=False, elem_id=f"generate-text-{i}")
            for i, m in enumerate(lms)
        ]
    notes = gr.Markdown(elem_id="generate-notes")

    def run(text: str, how: str, max_new_tokens: float) -> list[str]:
        if not lms:
            raise AppError("no plain language model is loaded: start the app with a run of recipes/pretrain.py")
        outputs = [generate_text(m, text, int(max_new_tokens), sample=how == "sampled") for m in lms]
        empty = [empty_continuation_reason(m) for m, output in zip(lms, outputs, strict=True) if not output]
        return [*outputs, _reasons(empty)]

    inputs = [prompt, decoding, new_tokens]
    write.click(shown_as_one_line(run), inputs=inputs, outputs=[*texts, notes], api_name="generate")
    prompt.submit(shown_as_one_line(run), inputs=inputs, outputs=[*texts, notes], api_name=False)


def _sentiment_tab(gr, models: Sequence[LoadedModel]) -> None:
    classifiers = [m for m in models if m.view == "sentiment"]
    gr.Markdown("The label each classifier gives and its probability.")
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


def _index_range(count: int) -> dict[str, Any]:
    """A slider over the indices 0 to `count - 1`, at 0; Gradio refuses a slider from 0 to 0, so one layer or one
    head is a slider from 0 to 1 locked at 0."""
    return {"minimum": 0, "maximum": max(count - 1, 1), "value": 0, "interactive": count > 1}


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
        layer = gr.Slider(**_index_range(first.num_hidden_layers), step=1, label="Layer", elem_id="attention-layer")
        head = gr.Slider(**_index_range(first.num_attention_heads), step=1, label="Head", elem_id="attention-head")
    show = gr.Button("Show attention", variant="primary", elem_id="attention-button")
    heatmap = gr.Image(label="Attention", type="pil", elem_id="attention-image")

    def limits(label: str) -> tuple[Any, Any]:
        config = by_label[label].model.config
        return (
            gr.Slider(**_index_range(config.num_hidden_layers)),
            gr.Slider(**_index_range(config.num_attention_heads)),
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
        views = {m.view for m in models}  # a tab shows only when a model goes in it
        with gr.Tab("Birthplace", elem_id="tab-birthplace", visible="birthplace" in views):
            _birthplace_tab(gr, models)
        with gr.Tab("Generate", elem_id="tab-generate", visible="generate" in views):
            _generate_tab(gr, models)
        with gr.Tab("Sentiment", elem_id="tab-sentiment", visible="sentiment" in views):
            _sentiment_tab(gr, models)
        with gr.Tab("Attention", elem_id="tab-attention"):
            _attention_tab(gr, models)
    return demo


def main(argv: Sequence[str] | None = None) -> int:
    """`recipes/app.py`: load the models and serve the app until interrupted. It runs under
    `safety.command_line`, which says a user's error (an `AppError`, a bad flag) in one line with exit status 2."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    sources = args.models or read_app_config()
    if not sources:
        raise AppError(f"give at least one [LABEL=]RUN_OR_HUB_ID (or put them in {APP_CONFIG_FILE})")
    demo = build_app(load_models(sources))
    demo.launch(server_name=args.host, server_port=args.port, share=False)
    return 0
