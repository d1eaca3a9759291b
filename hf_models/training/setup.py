"""The model a run starts from: a trained folder, or a new one built from a preset (or config file), the overrides
and the tokenizer's vocabulary and special-token ids; and the block size it can take."""

from __future__ import annotations

import os
from typing import Any

from huggingface_hub.errors import StrictDataclassError
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..small_encoder import SmallEncoderConfig
from ..textio import UsageError
from ..tokenization import config_token_ids
from .arguments import ModelArguments

__all__ = ["build_config", "check_block_size", "check_vocabulary", "load_or_build_model"]


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
    try:
        if os.path.isfile(model_config):
            config = SmallEncoderConfig.from_json_file(model_config)
        else:
            config = SmallEncoderConfig.from_preset(model_config)
    except (ValueError, StrictDataclassError) as error:  # a broken JSON file, an unknown preset, a bad field
        raise UsageError(f"--model_config {model_config}: {_first_line(error)}") from None
    if config_overrides:
        try:
            config.update_from_string(config_overrides)
        except (ValueError, StrictDataclassError) as error:
            raise UsageError(f"--config_overrides {config_overrides!r}: {_first_line(error)}") from None
    for key, value in fields.items():
        if value is not None:
            setattr(config, key, value)
    if tokenizer is not None:
        config.vocab_size = len(tokenizer)
        for key, value in config_token_ids(tokenizer).items():
            setattr(config, key, value)
    # `@strict` checked each field as it was set; the constraints between fields are checked once all are set.
    try:
        config.validate()
    except (ValueError, StrictDataclassError) as error:
        source = f"{model_config}, {config_overrides or 'no overrides'}"
        raise UsageError(f"the model config ({source}): {_first_line(error)}") from None
    return config


def _first_line(error: BaseException) -> str:
    return " ".join(str(error).split())


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
        model = model_class.from_pretrained(model_args.model_name_or_path, **overrides)
        check_vocabulary(tokenizer, model.config.vocab_size, model_args.tokenizer_path, model_args.model_name_or_path)
        return model
    # --attention_type wins over a task's default (the birthplace --variant).
    config_fields["attention_type"] = model_args.attention_type or config_fields.get("attention_type")
    config = build_config(
        model_args.model_config or default_preset, model_args.config_overrides, tokenizer, **config_fields
    )
    return model_class(config)


def check_vocabulary(tokenizer: PreTrainedTokenizerBase, vocab_size: int, tokenizer_path, model_path) -> None:
    """A tokenizer and a model must share their vocabulary: a larger tokenizer gives ids past the embedding table,
    a smaller one a mismatched pair. Checked before any work."""
    if len(tokenizer) != vocab_size:
        raise UsageError(
            f"the tokenizer {tokenizer_path} has {len(tokenizer)} tokens but the model {model_path} has a vocabulary "
            f"of {vocab_size}; pass the tokenizer the model was trained with (--tokenizer_name_or_path)"
        )


def check_block_size(block_size: int | None, model: PreTrainedModel, flag: str = "--block_size") -> int:
    """`--block_size`, or the model's `max_position_embeddings` when not given; positive and never more than that."""
    max_positions = model.config.max_position_embeddings
    if block_size is not None and not 0 < block_size <= max_positions:
        raise UsageError(
            f"{flag} {block_size}: give a length from 1 to the model's max_position_embeddings={max_positions}"
        )
    return block_size or max_positions
