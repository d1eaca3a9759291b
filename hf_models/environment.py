"""The environment every command, test and benchmark of this project runs in, defined once: offline (models, data
sets and metrics are never downloaded at run time) and one tokenizer thread pool per process. The Makefile exports the
same variables (`tests/test_offline_environment.py` checks that they are these); scripts and tests import them."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

__all__ = ["OFFLINE_ENVIRONMENT", "go_offline"]

OFFLINE_ENVIRONMENT: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    # Tokenizers' Rust threads and a forked process (DataLoader workers, datasets' map) deadlock or warn.
    "TOKENIZERS_PARALLELISM": "false",
}


def go_offline(environ: MutableMapping[str, str] = os.environ) -> MutableMapping[str, str]:
    """Set `OFFLINE_ENVIRONMENT` in `environ` where it is not set already (a user's own choice wins), before
    transformers, datasets or huggingface_hub read it at import; returns `environ`."""
    for name, value in OFFLINE_ENVIRONMENT.items():
        environ.setdefault(name, value)
    return environ
