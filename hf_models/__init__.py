"""hf_models: small Transformers to pretrain and transfer, native to the Hugging Face ecosystem.

Importing the package registers the `small-encoder` model family with the Auto classes.
"""

from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForSequenceClassification,
)

from .small_encoder import (
    SmallEncoderConfig,
    SmallEncoderForCausalLM,
    SmallEncoderForMaskedLM,
    SmallEncoderForSequenceClassification,
    SmallEncoderModel,
    SmallEncoderPreTrainedModel,
)

AutoConfig.register(SmallEncoderConfig.model_type, SmallEncoderConfig, exist_ok=True)
AutoModel.register(SmallEncoderConfig, SmallEncoderModel, exist_ok=True)
AutoModelForCausalLM.register(SmallEncoderConfig, SmallEncoderForCausalLM, exist_ok=True)
AutoModelForSequenceClassification.register(SmallEncoderConfig, SmallEncoderForSequenceClassification, exist_ok=True)
AutoModelForMaskedLM.register(SmallEncoderConfig, SmallEncoderForMaskedLM, exist_ok=True)

__version__ = "0.1.0"

__all__ = [
    "SmallEncoderConfig",
    "SmallEncoderPreTrainedModel",
    "SmallEncoderModel",
    "SmallEncoderForCausalLM",
    "SmallEncoderForSequenceClassification",
    "SmallEncoderForMaskedLM",
]
