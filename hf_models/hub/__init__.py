"""Sharing a run on the Hugging Face Hub (`push_to_hub.py` is the command line over it):

- `card`: the model card, from the run record and the exported config;
- `publish`: the allowlisted export of a run folder, its upload, and the card every recipe writes into its run
  folder (`write_run_card`).
"""

from .card import DEFAULT_LICENSE, CardOptions, PushError, build_model_card, head_of
from .publish import (
    ALLOW_PATTERNS,
    PROG,
    ExportResult,
    code_files,
    collect_files,
    endpoint,
    explain,
    export_folder,
    network_errors,
    one_line,
    run_card,
    share_run,
    upload,
    write_run_card,
)

__all__ = [
    "ALLOW_PATTERNS",
    "DEFAULT_LICENSE",
    "PROG",
    "CardOptions",
    "ExportResult",
    "PushError",
    "build_model_card",
    "code_files",
    "collect_files",
    "endpoint",
    "explain",
    "export_folder",
    "head_of",
    "network_errors",
    "one_line",
    "run_card",
    "share_run",
    "upload",
    "write_run_card",
]
