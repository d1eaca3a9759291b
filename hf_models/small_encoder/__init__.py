from .configuration_small_encoder import SmallEncoderConfig
from .modeling_small_encoder import (
    SmallEncoderForCausalLM,
    SmallEncoderForMaskedLM,
    SmallEncoderForSequenceClassification,
    SmallEncoderModel,
    SmallEncoderPreTrainedModel,
)

__all__ = [
    "SmallEncoderConfig",
    "SmallEncoderPreTrainedModel",
    "SmallEncoderModel",
    "SmallEncoderForCausalLM",
    "SmallEncoderForSequenceClassification",
    "SmallEncoderForMaskedLM",
]
