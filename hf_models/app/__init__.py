"""Try trained runs in a browser: a Gradio app with four tabs over one or more run folders or Hub models.

    python recipes/app.py [LABEL=]RUN_OR_HUB_ID [...] [--host 127.0.0.1] [--port 7860]

Each model goes in the tab of the task it was trained for (its run record's `task`, else its model card's tags);
a tab no model goes in is hidden.

- **Birthplace:** a question in; the answer of every birthplace QA model side by side (the `predict` of its QA
  format in `tasks.qa_formats`, what `evaluate` scores: a reciting model recites the person's opening, then
  answers with the span of it that it scores highest), with London's as the baseline; an empty answer says why.
- **Generate:** a prompt in; each plain language model's (pretrained, no QA finetuning) greedy or sampled
  continuation.
- **Sentiment:** a review in; each classifier's label and probability (transformers' text-classification `pipeline`).
- **Attention:** any text in; a heatmap of one layer's and one head's weights, as the model returns them with
  `output_attentions=True`: softmax(QKᵀ/√d) for vanilla attention, the softmax of the synthesized scores for the
  synthesizers (no keys involved). No second copy of the attention code.

`loading` finds and loads the models and the task each was trained for, `tabs` computes what each tab shows (plain
Python, which the tests call), `text.printable` keeps the control characters a model writes off the page, and
`interface` wires them to Gradio (imported only there, `pip install -e '.[app]'`), showing each `AppError` as one
`gr.Error` line. With no model on the command line, `main` reads them from `app.json` in the working folder: that is
how the Space that `push_to_hub.py --space` writes starts, with the very same launcher as `recipes/app.py`.
"""

from .interface import PROG, build_app, main, parse_args, shown_as_one_line
from .loading import (
    APP_CONFIG_FILE,
    HEADS,
    TASK_VIEWS,
    AppError,
    LoadedModel,
    load_model,
    load_models,
    model_view,
    parse_source,
    read_app_config,
    trained_task,
)
from .tabs import (
    ATTENTION_TITLES,
    EXAMPLE_PROMPT,
    EXAMPLE_QUESTION,
    EXAMPLE_REVIEW,
    LONDON,
    LONDON_LABEL,
    QUESTION_FORM,
    AttentionMap,
    answer_birthplace,
    attention_map,
    classify_review,
    empty_answer_reason,
    empty_continuation_reason,
    generate_text,
    render_heatmap,
)
from .text import printable

__all__ = [
    "APP_CONFIG_FILE",
    "ATTENTION_TITLES",
    "EXAMPLE_PROMPT",
    "EXAMPLE_QUESTION",
    "EXAMPLE_REVIEW",
    "HEADS",
    "LONDON",
    "LONDON_LABEL",
    "PROG",
    "QUESTION_FORM",
    "TASK_VIEWS",
    "AppError",
    "AttentionMap",
    "LoadedModel",
    "answer_birthplace",
    "attention_map",
    "build_app",
    "classify_review",
    "empty_answer_reason",
    "empty_continuation_reason",
    "generate_text",
    "load_model",
    "load_models",
    "main",
    "model_view",
    "parse_args",
    "parse_source",
    "printable",
    "read_app_config",
    "render_heatmap",
    "shown_as_one_line",
    "trained_task",
]
