"""The `small-encoder` model family: its configuration and its model classes, standalone (torch and transformers
only) so that every saved model ships them as remote code. `HEADS` (modeling_small_encoder.py) lists the model
classes once; what this folder exports follows from it.

Importing it registers the family with the Auto classes (`AutoConfig`, `AutoModelForCausalLM`, ...), and every
`save_pretrained` then ships the configuration and modeling files with an `auto_map` for every head: a saved folder
loads with `trust_remote_code=True` where `hf_models` is not installed."""

import transformers
from transformers import AutoConfig

from . import configuration_small_encoder, modeling_small_encoder

# Re-exported as transformers' model folders do: the names are each module's `__all__`, written nowhere else.
from .configuration_small_encoder import *  # noqa: F403
from .modeling_small_encoder import *  # noqa: F403

__all__ = [*configuration_small_encoder.__all__, *modeling_small_encoder.__all__]

AutoConfig.register(
    configuration_small_encoder.SmallEncoderConfig.model_type,
    configuration_small_encoder.SmallEncoderConfig,
    exist_ok=True,
)
configuration_small_encoder.SmallEncoderConfig.register_for_auto_class()
for _auto_class, _model_class in modeling_small_encoder.HEADS.items():
    getattr(transformers, _auto_class).register(
        configuration_small_encoder.SmallEncoderConfig, _model_class, exist_ok=True
    )
    _model_class.register_for_auto_class(_auto_class)
