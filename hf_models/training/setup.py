"""The model a run starts from: a trained folder, or a new one built from a preset (or config file), the overrides
and the tokenizer's vocabulary and special-token ids; and the block size it can take."""

from __future__ import annotations

import os
from typing import Any

from huggingface_hub.errors import StrictDataclassError
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..safety import check_json_files, one_line, reading
from ..small_encoder import SmallEncoderConfig
from ..textio import UsageError
from ..tokenization import config_token_ids
from .arguments import ModelArguments

__all__ = ["build_config", "check_block_size", "check_vocabulary", "load_or_build_model", "load_pretrained"]

# The fields a tokenizer gives a new model: an override of one of them cannot apply.
TOKENIZER_FIELDS = ("vocab_size", *(f"{name}_token_id" for name in ("pad", "bos", "eos", "sep", "mask")))


def _check_model_type(found: object, where: str) -> None:
    """A config of another model family (GPT-2's, BERT's) would be read field by field as ours, the fields it does
    not share silently left at their defaults."""
    if found not in (None, SmallEncoderConfig.model_type):
        raise UsageError(
            f"{where} is a config of model_type {found!r}, not {SmallEncoderConfig.model_type!r}: this project builds "
            "and loads its own models only; give one of its presets, a config file or a folder it saved"
        )


def _check_overrides(config_overrides: str | None, tokenizer: PreTrainedTokenizerBase | None) -> None:
    """Overrides of the fields the tokenizer fixes (the vocabulary size, the special-token ids) cannot apply."""
    if not config_overrides or tokenizer is None:
        return
    keys = {item.split("=", 1)[0].strip() for item in config_overrides.split(",") if item.strip()}
    fixed = sorted(keys & set(TOKENIZER_FIELDS))
    if fixed:
        raise UsageError(
            f"--config_overrides {', '.join(fixed)}: the tokenizer fixes these ({len(tokenizer)} tokens and its "
            "special-token ids); drop them from the overrides, or give another --tokenizer_name_or_path"
        )


# `dropout=X` in --config_overrides: every dropout of the model (the lab's nn.TransformerEncoder has one), in its place.
DROPOUT_SHORTHAND = "dropout"


def expand_dropout(config_overrides: str, config: SmallEncoderConfig) -> str:
    """`config_overrides` with each `dropout=X` written as every `*_dropout` field of the model but the classifier's
    (set by --classifier_dropout), in its place: the items apply in order."""
    fields = [name for name in config.to_dict() if name.endswith("_dropout") and name != "classifier_dropout"]
    items = []
    for item in (item.strip() for item in config_overrides.split(",") if item.strip()):
        key, _, value = item.partition("=")
        items += [f"{name}={value.strip()}" for name in fields] if key.strip() == DROPOUT_SHORTHAND else [item]
    return ",".join(items)


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
    _check_overrides(config_overrides, tokenizer)
    try:
        if os.path.isfile(model_config):
            folder, name = os.path.split(model_config)
            found = check_json_files(folder or ".", [name], "--model_config").get(name, {})
            _check_model_type(found.get("model_type"), f"--model_config {model_config}")
            config = SmallEncoderConfig.from_json_file(model_config)
        else:
            config = SmallEncoderConfig.from_preset(model_config)
    except UsageError:
        raise
    except (ValueError, StrictDataclassError) as error:  # a broken JSON file, an unknown preset, a bad field
        raise UsageError(f"--model_config {model_config}: {one_line(error)}") from None
    if config_overrides:
        try:
            config.update_from_string(expand_dropout(config_overrides, config))
        except TypeError:  # transformers takes only int, float, bool and text, never a list or a null setting
            raise UsageError(_not_overridable(config_overrides, config)) from None
        except (ValueError, StrictDataclassError) as error:
            raise UsageError(f"--config_overrides {config_overrides!r}: {one_line(error)}") from None
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
        raise UsageError(f"the model config ({source}): {one_line(error)}") from None
    return config


def _not_overridable(config_overrides: str, config: SmallEncoderConfig) -> str:
    """What to say of an override of a setting that holds a list, a mapping or nothing (None)."""
    settings = config.to_dict()
    keys = [item.split("=", 1)[0].strip() for item in config_overrides.split(",") if item.strip()]
    key = next((key for key in keys if not isinstance(settings.get(key), int | float | bool | str)), keys[0])
    held = "nothing (None)" if settings.get(key) is None else f"a {type(settings[key]).__name__}"
    return (
        f"--config_overrides {key}: the setting holds {held}, which key=value cannot set; give it in a "
        "--model_config JSON file"
    )


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
        causal = config_fields.get("is_causal")
        model = load_pretrained(model_class, model_args.model_name_or_path, causal=causal, **overrides)
        check_vocabulary(tokenizer, model.config.vocab_size, model_args.tokenizer_path, model_args.model_name_or_path)
        return model
    # --attention_type wins over the preset's.
    config_fields["attention_type"] = model_args.attention_type or config_fields.get("attention_type")
    config = build_config(
        model_args.model_config or default_preset, model_args.config_overrides, tokenizer, **config_fields
    )
    return model_class(config)


def load_pretrained(
    model_class: type[PreTrainedModel],
    path: str | os.PathLike,
    flag: str = "--model_name_or_path",
    causal: bool | None = None,
    **overrides: Any,
) -> PreTrainedModel:
    """`model_class.from_pretrained(path, **overrides)` for a folder this project saved, checked first: a missing
    folder, a config.json that is not valid JSON or of another model family, a bidirectional model (a masked LM)
    where `causal` asks for one that reads left to right; and, while loading, weights that are truncated, not
    safetensors or not of the config's shapes: each a `UsageError` naming the folder and the file."""
    if os.path.exists(path):  # else a Hub id: transformers says what it found
        if not os.path.isdir(path):
            raise UsageError(f"{flag} {path} is a file; give the folder a run saved (save_pretrained)")
        config = check_json_files(path, ["config.json"], flag).get("config.json")
        if config is None:
            raise UsageError(f"{flag} {path} has no config.json: give the folder a run saved (save_pretrained)")
        _check_model_type(config.get("model_type"), f"{flag} {path}/config.json")
        _check_causal(config, causal, f"{flag} {path}")
    with reading(path, flag):
        return model_class.from_pretrained(str(path), **overrides)


def _check_causal(config: dict, causal: bool | None, where: str) -> None:
    if causal and config.get("is_causal") is False:
        raise UsageError(
            f"{where} is a bidirectional model (is_causal false: a masked LM); this task reads and generates "
            "left to right: give a causal model (pretrained with --objective clm or span_corruption)"
        )


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
