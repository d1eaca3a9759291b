"""The app's command line, apart from the app (importable without torch or Gradio: `recipes/app.py -h` and a refused
flag answer at once; the models and Gradio are imported once the flags are accepted)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

PROG = "app.py"
APP_CONFIG_FILE = "app.json"  # {"models": ["[LABEL=]RUN_OR_HUB_ID", ...]}, read when no model is given


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Try trained small-encoder runs in a browser, each in the tab of the task it was trained for: "
        "birthplace answers side by side, a plain LM's continuations, review sentiment, and attention heatmaps. "
        f"With no model given, reads {APP_CONFIG_FILE} (as in a Space).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
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
