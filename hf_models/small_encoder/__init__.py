"""The `small-encoder` model family: its configuration and its model classes, standalone (torch and transformers
only) so that every saved model ships them as remote code. `HEADS` (modeling_small_encoder.py) lists the model
classes once; what this folder exports follows from it."""

from . import configuration_small_encoder, modeling_small_encoder

# Re-exported as transformers' model folders do: the names are each module's `__all__`, written nowhere else.
from .configuration_small_encoder import *  # noqa: F403
from .modeling_small_encoder import *  # noqa: F403

__all__ = [*configuration_small_encoder.__all__, *modeling_small_encoder.__all__]
