"""Try trained runs in a browser: a Gradio app with three tabs over one or more run folders or Hub models.

    python recipes/app.py [LABEL=]RUN_OR_HUB_ID [...] [--host 127.0.0.1] [--port 7860]

- **Birthplace:** a question in; the answer of every loaded causal LM side by side (the `predict` of its QA
  format in `tasks.qa_formats`, what `evaluate` scores: a reciting model recites the person's opening, then
  answers with the span of it that it scores highest), with London's as the baseline.
- **Sentiment:** a review in; each classifier's label and probability (transformers' text-classification `pipeline`).
- **Attention:** any text in; a heatmap of one layer's and one head's weights, as the model returns them with
  `output_attentions=True`: softmax(QKᵀ/√d) for vanilla attention, the softmax of the synthesized scores for the
  synthesizers (no keys involved). No second copy of the attention code.

`loading` finds and loads the models, `tabs` computes what each tab shows (plain Python, which the tests call), and
`interface` wires them to Gradio (imported only there, `pip install -e '.[app]'`), showing each `AppError` as one
`gr.Error` line. With no model on the command line, `main` reads them from `app.json` in the working folder: that is
how the Space that `push_to_hub.py --space` writes starts, with the very same launcher as `recipes/app.py`.
"""

from .interface import PROG, build_app, main, parse_args, shown_as_one_line
from .loading import (
    APP_CONFIG_FILE,
    HEADS,
    AppError,
    LoadedModel,
    load_model,
    load_models,
    parse_source,
    read_app_config,
)
from .tabs import (
    ATTENTION_TITLES,
    EXAMPLE_QUESTION,
    EXAMPLE_REVIEW,
    LONDON,
    LONDON_LABEL,
    AttentionMap,
    answer_birthplace,
    attention_map,
    classify_review,
    render_heatmap,
)

__all__ = [
    "APP_CONFIG_FILE",
    "ATTENTION_TITLES",
    "EXAMPLE_QUESTION",
    "EXAMPLE_REVIEW",
    "HEADS",
    "LONDON",
    "LONDON_LABEL",
    "PROG",
    "AppError",
    "AttentionMap",
    "LoadedModel",
    "answer_birthplace",
    "attention_map",
    "build_app",
    "classify_review",
    "load_model",
    "load_models",
    "main",
    "parse_args",
    "parse_source",
    "read_app_config",
    "render_heatmap",
    "shown_as_one_line",
]
