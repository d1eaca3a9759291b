"""Sharing a run on the Hugging Face Hub (`push_to_hub.py` is the command line over it): the allowlisted export of a
run folder with its card (built by `hf_models.run_record.build_model_card`) and its upload (`publish`)."""

from ..run_record import DEFAULT_LICENSE, build_model_card, write_run_card
from .publish import (
    ALLOW_PATTERNS,
    PROG,
    CardOptions,
    PushError,
    code_files,
    collect_files,
    endpoint,
    explain,
    export_folder,
    network_errors,
    one_line,
    share_run,
    upload,
)

__all__ = [
    "ALLOW_PATTERNS",
    "DEFAULT_LICENSE",
    "PROG",
    "CardOptions",
    "PushError",
    "build_model_card",
    "code_files",
    "collect_files",
    "endpoint",
    "explain",
    "export_folder",
    "network_errors",
    "one_line",
    "share_run",
    "upload",
    "write_run_card",
]
