"""`python -m hf_models.convert`: see `hf_models/convert/cli.py` (or `--help`)."""

import sys

from ..safety import command_line
from .cli import main

if __name__ == "__main__":
    sys.exit(command_line(main))
