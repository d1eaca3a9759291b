from .configuration_small_encoder import SmallEncoderConfig
from .modeling_small_encoder import (
    AUTO_MAP,
    HEADS,
    SmallEncoderForCausalLM,
    SmallEncoderForMaskedLM,
    SmallEncoderForSequenceClassification,
    SmallEncoderModel,
    SmallEncoderPreTrainedModel,
)

__all__ = [
    "AUTO_MAP",
    "HEADS",
    "SmallEncoderConfig",
    "SmallEncoderPreTrainedModel",
    "SmallEncoderModel",
    "SmallEncoderForCausalLM",
    "SmallEncoderForSequenceClassification",
    "SmallEncoderForMaskedLM",
]
