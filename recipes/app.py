"""Try trained runs in a browser (Gradio): `python recipes/app.py [LABEL=]RUN_OR_HUB_ID [...]`; see hf_models/app/.

This file is also the `app.py` of the Space that `push_to_hub.py --space` writes, byte for byte."""

import sys
from collections.abc import Sequence

from hf_models.app.arguments import parse_args
from hf_models.safety import command_line


def main(argv: Sequence[str]) -> int:
    parse_args(argv)  # -h and a refused flag answer before the models, torch and Gradio are imported
    from hf_models.app import main as serve

    return serve(argv)


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
