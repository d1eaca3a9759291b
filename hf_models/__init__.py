"""hf_models: small Transformers to pretrain and transfer, native to the Hugging Face ecosystem.

Importing the package registers the `small-encoder` model family with the Auto classes.

The layout follows the pipeline: `small_encoder/` (the model, standalone remote code), `tokenization/`, `data/`,
`training/` (set-up, Trainer, plots, the end of a run), `tasks/` (the recipes' logic), then `hub/` (sharing a run)
and `convert/` (course checkpoints). `run_record.py` is the record every stage writes or reads.
"""

import transformers
from transformers import AutoConfig

from . import small_encoder
from .small_encoder import *  # noqa: F403  (the config and the model classes: `small_encoder.__all__`)
from .small_encoder import HEADS, SmallEncoderConfig

AutoConfig.register(SmallEncoderConfig.model_type, SmallEncoderConfig, exist_ok=True)
# Every `save_pretrained` then ships the configuration and modeling files with an `auto_map` for every head: a saved
# folder loads with `trust_remote_code=True` where `hf_models` is not installed.
SmallEncoderConfig.register_for_auto_class()
for _auto_class, _model_class in HEADS.items():
    getattr(transformers, _auto_class).register(SmallEncoderConfig, _model_class, exist_ok=True)
    _model_class.register_for_auto_class(_auto_class)

__version__ = "0.1.0"

__all__ = list(small_encoder.__all__)
