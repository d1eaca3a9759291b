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
# Every `save_pretrained` then ships the configuration and modeling files with an `auto_map` for every head: a saved
# folder loads with `trust_remote_code=True` where `hf_models` is not installed.
SmallEncoderConfig.register_for_auto_class()
for _model_class, _auto_class in (
    (SmallEncoderModel, "AutoModel"),
    (SmallEncoderForCausalLM, "AutoModelForCausalLM"),
    (SmallEncoderForSequenceClassification, "AutoModelForSequenceClassification"),
    (SmallEncoderForMaskedLM, "AutoModelForMaskedLM"),
):
    _model_class.register_for_auto_class(_auto_class)

__version__ = "0.1.0"

__all__ = [
    "SmallEncoderConfig",
    "SmallEncoderPreTrainedModel",
    "SmallEncoderModel",
    "SmallEncoderForCausalLM",
    "SmallEncoderForSequenceClassification",
    "SmallEncoderForMaskedLM",
]
