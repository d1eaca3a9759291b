"""Try trained runs in a browser (Gradio): `python recipes/app.py [LABEL=]RUN_OR_HUB_ID [...]`; see hf_models/app/.

This file is also the `app.py` of the Space that `push_to_hub.py --space` writes, byte for byte."""

import sys

from hf_models.app import main
from hf_models.safety import command_line

if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
