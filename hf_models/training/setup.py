"""The model a run starts from: a trained folder, or a new one built from a preset (or config file), the overrides
and the tokenizer's vocabulary and special-token ids; and the block size it can take."""

from __future__ import annotations

import os
from typing import Any

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..small_encoder import SmallEncoderConfig
from ..tokenization import config_token_ids
from .arguments import ModelArguments

__all__ = ["build_config", "check_block_size", "load_or_build_model"]


def build_config(
    model_config: str,
    config_overrides: str | None = None,
    tokenizer: PreTrainedTokenizerBase | None = None,
    **fields: Any,
) -> SmallEncoderConfig:
    """Build a `SmallEncoderConfig` from a preset name or a JSON file, then apply overrides.

    `config_overrides` is a 'key=value,...' string; `fields` are named overrides (None values are skipped).
    With a tokenizer, the vocabulary size and the special-token ids are copied from it, so that the
    model's embedding table and its pad/bos/eos/sep/mask ids always match the tokenizer.
    """
    if os.path.isfile(model_config):
        config = SmallEncoderConfig.from_json_file(model_config)
    else:
        config = SmallEncoderConfig.from_preset(model_config)
    if config_overrides:
        config.update_from_string(config_overrides)
    for key, value in fields.items():
        if value is not None:
            setattr(config, key, value)
    if tokenizer is not None:
        config.vocab_size = len(tokenizer)
        for key, value in config_token_ids(tokenizer).items():
            setattr(config, key, value)
    # `@strict` checked each field as it was set; the constraints between fields are checked once all are set.
    config.validate()
    return config


def load_or_build_model(
    model_class: type[PreTrainedModel],
    model_args: ModelArguments,
    tokenizer: PreTrainedTokenizerBase,
    default_preset: str,
    from_pretrained: dict[str, Any] | None = None,
    **config_fields: Any,
) -> PreTrainedModel:
    """`--model_name_or_path` loaded as `model_class` (with the `from_pretrained` overrides), or a new model built
    from `--model_config` (default: `default_preset`), the overrides, `config_fields` and the tokenizer's ids."""
    if model_args.model_name_or_path:
        overrides = {key: value for key, value in (from_pretrained or {}).items() if value is not None}
        return model_class.from_pretrained(model_args.model_name_or_path, **overrides)
    # --attention_type wins over a task's default (the birthplace --variant).
    config_fields["attention_type"] = model_args.attention_type or config_fields.get("attention_type")
    config = build_config(model_args.model_config or default_preset, model_args.config_overrides, tokenizer, **config_fields)
    return model_class(config)


def check_block_size(block_size: int | None, model: PreTrainedModel) -> int:
    """`--block_size`, or the model's `max_position_embeddings` when not given; never more than that."""
    max_positions = model.config.max_position_embeddings
    if block_size is not None and block_size > max_positions:
        raise ValueError(f"--block_size {block_size} exceeds max_position_embeddings={max_positions}")
    return block_size or max_positions
