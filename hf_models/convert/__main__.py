"""`python -m hf_models.convert`: see `hf_models/convert/__init__.py` (or `--help`)."""

import sys

from ..safety import command_line
from . import main

if __name__ == "__main__":
    sys.exit(command_line(main))
