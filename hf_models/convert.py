"""Convert a checkpoint trained with the course code into a `small-encoder` `save_pretrained` folder.

    python -m hf_models.convert altegrad-lab CHECKPOINT.pt --output_dir DIR [--tokenizer TOKENIZER_DIR]
    python -m hf_models.convert cs224n-mingpt CHECKPOINT.pt --output_dir DIR [--variant vanilla|synthesizer]

In the spirit of transformers' `convert_*_original_pytorch_checkpoint_to_pytorch.py` scripts: the input is the state
dict the course code saves (`torch.save(model.state_dict(), path)`, or a dict holding it under `model_state_dict` or
`state_dict`); every key is checked (name and shape) before anything is written, and unknown, missing or mis-shaped
keys are reported together in one error.

- `altegrad-lab`: the lab's `Model` (`base.encoder`, `base.pos_encoder.pe`, `base.transformer_encoder.layers.N.*`,
  `classifier.decoder`). A decoder with one output per token gives `SmallEncoderForCausalLM`, any other width
  `SmallEncoderForSequenceClassification` (the lab's classifier reads the last position). Dropouts are 0, as in the lab.
- `cs224n-mingpt`: CS224N a5's minGPT (`tok_emb`, `pos_emb`, `blocks.N.{ln1,ln2,attn.*,mlp.0,mlp.2}`, `ln_f`, `head`),
  with vanilla attention or the course's synthesizer (`attn.w1`, `attn.w2`, `attn.b2`), as `SmallEncoderForCausalLM`
  with exact GELU. The course synthesizer spans ℓ = block − 1 key positions (its inputs are block − 1 characters long)
  while `pos_emb` has `block` rows, so the converted config has `max_position_embeddings=block` and
  `synthesizer_width=block-1`. Its single B and b2 are tiled across the heads (one B_i per head, the project's
  layout); `--share_synthesizer_heads` keeps them shared (`synthesizer_shared_heads=True`): the same logits, and
  exactly the course's parameter count.

Attention head counts are not stored in a state dict: `--num_heads` defaults to the course's (2 for the lab, 8 for
minGPT), and a synthesizer's is checked against the width of its B.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import torch
from transformers import AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from .run_record import RunRecord, model_size
from .safety import check_output_dir, command_line, used_files
from .small_encoder import SmallEncoderConfig, SmallEncoderForCausalLM, SmallEncoderForSequenceClassification
from .textio import UsageError
from .tokenization import config_token_ids
from .training import HelpFormatter

COURSES = ("altegrad-lab", "cs224n-mingpt")
DEFAULT_NUM_HEADS = {"altegrad-lab": 2, "cs224n-mingpt": 8}
STATE_DICT_WRAPPER_KEYS = ("model_state_dict", "state_dict")
LAB_DROPOUTS = dict(embedding_dropout=0.0, attention_dropout=0.0, hidden_dropout=0.0, activation_dropout=0.0)

StateDict = dict[str, torch.Tensor]


class CheckpointError(UsageError):
    """A course checkpoint that does not match the expected model: the message lists every bad key."""


def load_course_state_dict(path: str | os.PathLike) -> StateDict:
    """Read a state dict saved with `torch.save`, unwrapping `{"model_state_dict": ...}`-style checkpoints."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several types for a non-checkpoint file
        # Its first sentence says enough; never its advice to unpickle with weights_only=False (running the file).
        reason = f"{type(error).__name__}: {(str(error).strip() or '?').splitlines()[0].split('. ')[0][:200]}"
        if type(error).__name__ == "UnpicklingError" or "weights_only" in str(error):
            reason = "not a torch.save archive of tensors; it is never unpickled with weights_only=False"
        raise CheckpointError(f"{path}: not a PyTorch state dict, or a corrupt one ({reason})") from None
    for key in STATE_DICT_WRAPPER_KEYS:
        if isinstance(checkpoint, dict) and isinstance(checkpoint.get(key), dict):
            checkpoint = checkpoint[key]
            break
    if not isinstance(checkpoint, dict) or not all(isinstance(v, torch.Tensor) for v in checkpoint.values()):
        raise CheckpointError(f"{path}: expected a dict of tensors (a model's state_dict), got {type(checkpoint)}")
    return dict(checkpoint)


def check_keys(
    state_dict: StateDict, expected: dict[str, tuple[int, ...]], optional: Sequence[str] = (), source: str = ""
) -> None:
    """Raise one `CheckpointError` listing every missing, unknown and mis-shaped key."""
    missing = [key for key in expected if key not in state_dict and key not in optional]
    unknown = sorted(key for key in state_dict if key not in expected)
    misshaped = [
        f"{key}: {tuple(state_dict[key].shape)}, expected {shape}"
        for key, shape in expected.items()
        if key in state_dict and tuple(state_dict[key].shape) != shape
    ]
    problems = [
        (f"{len(items)} {what}", items)
        for what, items in (("missing keys", missing), ("unknown keys", unknown), ("mis-shaped keys", misshaped))
        if items
    ]
    if problems:
        lines = [f"{source or 'checkpoint'} does not match the expected model:"]
        for title, items in problems:
            lines.append(f"  {title}:")
            lines.extend(f"    {item}" for item in items)
        raise CheckpointError("\n".join(lines))


def _require(state_dict: StateDict, key: str, ndim: int, source: str) -> torch.Tensor:
    """An anchor tensor whose shape gives the model's sizes."""
    if key not in state_dict or state_dict[key].dim() != ndim:
        found = tuple(state_dict[key].shape) if key in state_dict else "absent"
        raise CheckpointError(f"{source}: cannot read the model's sizes: {key} must be a {ndim}-d tensor ({found})")
    return state_dict[key]


def _num_layers(state_dict: StateDict, prefix: str, source: str) -> int:
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)\.")
    indices = {int(match.group(1)) for key in state_dict if (match := pattern.match(key))}
    if not indices:
        raise CheckpointError(f"{source}: no layer keys starting with {prefix!r}")
    return max(indices) + 1


def _linear(prefix: str, out_features: int, in_features: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.weight": (out_features, in_features), f"{prefix}.bias": (out_features,)}


def _layer_norm(prefix: str, size: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.weight": (size,), f"{prefix}.bias": (size,)}


def convert_altegrad_lab(state_dict: StateDict, num_heads: int = 2, source: str = "") -> PreTrainedModel:
    """The lab's `Model` (LM or classifier head) as `SmallEncoderForCausalLM` / `...ForSequenceClassification`."""
    vocab_size, hidden = _require(state_dict, "base.encoder.weight", 2, source).shape
    intermediate = _require(state_dict, "base.transformer_encoder.layers.0.linear1.weight", 2, source).shape[0]
    num_outputs = _require(state_dict, "classifier.decoder.weight", 2, source).shape[0]
    num_layers = _num_layers(state_dict, "base.transformer_encoder.layers.", source)
    max_positions = state_dict["base.pos_encoder.pe"].shape[0] if "base.pos_encoder.pe" in state_dict else 5000

    expected = {"base.encoder.weight": (vocab_size, hidden), "base.pos_encoder.pe": (max_positions, 1, hidden)}
    renames = {"base.encoder.weight": "model.embed_tokens.weight"}
    for i in range(num_layers):
        lab, ours = f"base.transformer_encoder.layers.{i}", f"model.layers.{i}"
        expected[f"{lab}.self_attn.in_proj_weight"] = (3 * hidden, hidden)
        expected[f"{lab}.self_attn.in_proj_bias"] = (3 * hidden,)
        renames[f"{lab}.self_attn.in_proj_weight"] = f"{ours}.self_attn.qkv_proj.weight"
        renames[f"{lab}.self_attn.in_proj_bias"] = f"{ours}.self_attn.qkv_proj.bias"
        for lab_name, our_name, shape in (
            ("self_attn.out_proj", "self_attn.o_proj", (hidden, hidden)),
            ("linear1", "mlp.fc1", (intermediate, hidden)),
            ("linear2", "mlp.fc2", (hidden, intermediate)),
            ("norm1", "attn_norm", (hidden,)),
            ("norm2", "mlp_norm", (hidden,)),
        ):
            module = (
                _linear(f"{lab}.{lab_name}", *shape) if len(shape) == 2 else _layer_norm(f"{lab}.{lab_name}", hidden)
            )
            expected.update(module)
            renames.update({key: key.replace(f"{lab}.{lab_name}", f"{ours}.{our_name}") for key in module})
    is_language_model = num_outputs == vocab_size
    head = "lm_head" if is_language_model else "classifier"
    expected.update(_linear("classifier.decoder", num_outputs, hidden))
    renames.update({f"classifier.decoder.{p}": f"{head}.{p}" for p in ("weight", "bias")})
    check_keys(state_dict, expected, optional=["base.pos_encoder.pe"], source=source)

    config_values = dict(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate,
        max_position_embeddings=max_positions,
        **LAB_DROPOUTS,
    )
    if is_language_model:
        model = SmallEncoderForCausalLM(SmallEncoderConfig.from_preset("altegrad-lab", **config_values))
    else:
        config = SmallEncoderConfig.from_preset("altegrad-lab", num_labels=num_outputs, **config_values)
        model = SmallEncoderForSequenceClassification(config)
    model.load_state_dict({ours: state_dict[lab] for lab, ours in renames.items()}, strict=True)
    return model.eval()


def _mingpt_variant(state_dict: StateDict, variant: str | None, source: str) -> str:
    detected = "synthesizer" if "blocks.0.attn.w2" in state_dict else "vanilla"
    if variant is not None and variant != detected:
        raise CheckpointError(
            f"{source}: --variant {variant} was asked, but the checkpoint holds {detected} attention "
            f"({'blocks.0.attn.w2 present' if detected == 'synthesizer' else 'no blocks.0.attn.w2'})"
        )
    return detected


def _mingpt_attention(
    state_dict: StateDict, index: int, hidden: int, num_heads: int, variant: str, shared: bool
) -> tuple[dict[str, tuple[int, ...]], dict[str, torch.Tensor]]:
    """The expected shapes of one block's course attention keys, and its weights under our names."""
    course, ours = f"blocks.{index}.attn", f"model.layers.{index}.self_attn"
    block = state_dict["pos_emb"].shape[1]
    expected = {f"{course}.mask": (1, 1, block, block), **_linear(f"{course}.proj", hidden, hidden)}
    expected.update(_linear(f"{course}.value", hidden, hidden))
    if variant == "vanilla":
        for name in ("query", "key"):
            expected.update(_linear(f"{course}.{name}", hidden, hidden))
    else:
        expected.update(_linear(f"{course}.w1", hidden, hidden))
        expected.update({f"{course}.w2": (hidden // num_heads, block - 1), f"{course}.b2": (block - 1,)})
    if any(key not in state_dict or tuple(state_dict[key].shape) != shape for key, shape in expected.items()):
        return expected, {}  # check_keys reports it
    weights = {f"{ours}.o_proj.{p}": state_dict[f"{course}.proj.{p}"] for p in ("weight", "bias")}
    if variant == "vanilla":
        for p in ("weight", "bias"):
            parts = [state_dict[f"{course}.{name}.{p}"] for name in ("query", "key", "value")]
            weights[f"{ours}.qkv_proj.{p}"] = torch.cat(parts, dim=0)
    else:
        copies = 1 if shared else num_heads
        weights.update({f"{ours}.v_proj.{p}": state_dict[f"{course}.value.{p}"] for p in ("weight", "bias")})
        weights.update({f"{ours}.synth_proj.{p}": state_dict[f"{course}.w1.{p}"] for p in ("weight", "bias")})
        weights[f"{ours}.synth_weight"] = state_dict[f"{course}.w2"].expand(copies, -1, -1).clone()
        weights[f"{ours}.synth_bias"] = state_dict[f"{course}.b2"].expand(copies, 1, -1).clone()
    return expected, weights


def convert_cs224n_mingpt(
    state_dict: StateDict,
    variant: str | None = None,
    num_heads: int | None = None,
    share_synthesizer_heads: bool = False,
    source: str = "",
) -> SmallEncoderForCausalLM:
    """CS224N a5's minGPT (vanilla or synthesizer attention) as `SmallEncoderForCausalLM`."""
    variant = _mingpt_variant(state_dict, variant, source)
    vocab_size, hidden = _require(state_dict, "tok_emb.weight", 2, source).shape
    block = _require(state_dict, "pos_emb", 3, source).shape[1]
    intermediate = _require(state_dict, "blocks.0.mlp.0.weight", 2, source).shape[0]
    if num_heads is None:
        num_heads = DEFAULT_NUM_HEADS["cs224n-mingpt"]
        if variant == "synthesizer":
            num_heads = hidden // _require(state_dict, "blocks.0.attn.w2", 2, source).shape[0]
    num_layers = _num_layers(state_dict, "blocks.", source)

    expected = {
        "tok_emb.weight": (vocab_size, hidden),
        "pos_emb": (1, block, hidden),
        "head.weight": (vocab_size, hidden),
    }
    expected.update(_layer_norm("ln_f", hidden))
    weights = {
        "model.embed_tokens.weight": state_dict["tok_emb.weight"],
        "model.embed_positions.weight": state_dict["pos_emb"][0],
        "lm_head.weight": state_dict.get("head.weight"),
    }
    weights.update({f"model.norm.{p}": state_dict.get(f"ln_f.{p}") for p in ("weight", "bias")})
    optional = []
    for i in range(num_layers):
        course, ours = f"blocks.{i}", f"model.layers.{i}"
        for course_name, our_name, module in (
            ("ln1", "attn_norm", _layer_norm(f"{course}.ln1", hidden)),
            ("ln2", "mlp_norm", _layer_norm(f"{course}.ln2", hidden)),
            ("mlp.0", "mlp.fc1", _linear(f"{course}.mlp.0", intermediate, hidden)),
            ("mlp.2", "mlp.fc2", _linear(f"{course}.mlp.2", hidden, intermediate)),
        ):
            expected.update(module)
            weights.update(
                {key.replace(f"{course}.{course_name}", f"{ours}.{our_name}"): state_dict.get(key) for key in module}
            )
        attention_expected, attention_weights = _mingpt_attention(
            state_dict, i, hidden, num_heads, variant, share_synthesizer_heads
        )
        expected.update(attention_expected)
        weights.update(attention_weights)
        optional.append(f"{course}.attn.mask")  # a buffer: present in the course's state dicts, not needed here
    check_keys(state_dict, expected, optional=optional, source=source)

    config_values = dict(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate,
        max_position_embeddings=block,
        attention_type=variant,
        hidden_act="gelu",  # the course's nn.GELU() is the exact (erf) GELU
    )
    if variant == "synthesizer":
        config_values.update(synthesizer_width=block - 1, synthesizer_shared_heads=share_synthesizer_heads)
    model = SmallEncoderForCausalLM(SmallEncoderConfig.from_preset("cs224n-mingpt", **config_values))
    model.load_state_dict(weights, strict=True)
    return model.eval()


def attach_tokenizer(model: PreTrainedModel, tokenizer_dir: str | os.PathLike) -> PreTrainedTokenizerBase:
    """Load the tokenizer, check that it fits the embedding table, and copy its special-token ids into the config."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    except (OSError, ValueError) as error:
        raise UsageError(
            f"--tokenizer {tokenizer_dir}: cannot load a tokenizer ({' '.join(str(error).split())})"
        ) from None
    if len(tokenizer) != model.config.vocab_size:
        raise UsageError(
            f"{tokenizer_dir}: the tokenizer has {len(tokenizer)} tokens but the checkpoint's vocabulary has "
            f"{model.config.vocab_size}: pass the tokenizer the course model was trained with."
        )
    for key, token_id in config_token_ids(tokenizer).items():
        setattr(model.config, key, token_id)
        if model.can_generate() and hasattr(model.generation_config, key):
            setattr(model.generation_config, key, token_id)
    return tokenizer


def convert_checkpoint(
    course: str,
    checkpoint_path: str | os.PathLike,
    output_dir: str | os.PathLike,
    tokenizer_dir: str | os.PathLike | None = None,
    variant: str | None = None,
    num_heads: int | None = None,
    share_synthesizer_heads: bool = False,
) -> PreTrainedModel:
    """Convert, then `save_pretrained` the model (and the tokenizer when given) into `output_dir`."""
    state_dict = load_course_state_dict(checkpoint_path)
    source = str(checkpoint_path)
    if course == "altegrad-lab":
        if variant not in (None, "vanilla"):
            raise UsageError(f"the lab's model has vanilla attention only, not --variant {variant}")
        model = convert_altegrad_lab(state_dict, num_heads=num_heads or DEFAULT_NUM_HEADS[course], source=source)
    elif course == "cs224n-mingpt":
        model = convert_cs224n_mingpt(state_dict, variant, num_heads, share_synthesizer_heads, source=source)
    else:
        raise ValueError(f"unknown course {course!r}; choose one of {COURSES}")
    tokenizer = attach_tokenizer(model, tokenizer_dir) if tokenizer_dir is not None else None
    model.save_pretrained(output_dir)
    if tokenizer is not None:
        tokenizer.save_pretrained(output_dir)
    conversion_record(course, model, checkpoint_path).save(output_dir)
    return model


def conversion_record(course: str, model: PreTrainedModel, checkpoint_path: str | os.PathLike) -> RunRecord:
    """The run record of a converted checkpoint (what `push_to_hub.py` builds the model card from): the course's
    task, data and language, the preset the config follows, and the model's size; no training outcome."""
    classifier = isinstance(model, SmallEncoderForSequenceClassification)
    task, dataset, language = {
        "altegrad-lab": ("sentiment" if classifier else "pretraining", "cls-books" if classifier else None, "fr"),
        "cs224n-mingpt": ("birthplace-qa", "birthplace", "en"),
    }[course]
    return RunRecord(
        task=task,
        objective="course-checkpoint",
        dataset=dataset,
        language=language,
        preset=course,
        model_size=model_size(model),
        hyperparameters={"converted_from": Path(checkpoint_path).name},
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hf_models.convert", description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("course", choices=COURSES, help="which course code saved the checkpoint")
    parser.add_argument("checkpoint", help="the .pt file (a state dict, or a dict with model_state_dict)")
    parser.add_argument("--output_dir", required=True, help="where to save_pretrained the model")
    parser.add_argument("--tokenizer", default=None, help="a tokenizer folder to save with the model")
    parser.add_argument(
        "--variant",
        choices=("vanilla", "synthesizer"),
        default=None,
        help="minGPT's attention (default: detected from the keys)",
    )
    parser.add_argument("--num_heads", type=int, default=None, help="attention heads (default: the course's)")
    parser.add_argument(
        "--overwrite_output_dir",
        action="store_true",
        help="replace what --output_dir holds (a model, a tokenizer, a record); refused otherwise",
    )
    parser.add_argument(
        "--share_synthesizer_heads",
        action="store_true",
        help="keep the course synthesizer's single B and b2 shared by the heads (exact parameter "
        "count) instead of tiling them",
    )
    return parser.parse_args(argv)


def check_output(args: argparse.Namespace) -> None:
    """Before converting: an --output_dir that is no input, holds no earlier output (unless allowed) nor an old
    tokenizer that would stay beside new weights."""
    inputs = [("the checkpoint", args.checkpoint), ("--tokenizer", args.tokenizer)]
    check_output_dir(args.output_dir, overwrite=args.overwrite_output_dir, inputs=inputs)
    old_tokenizer = {"tokenizer.json", "tokenizer_config.json", "vocab.json"} & set(used_files(args.output_dir))
    if old_tokenizer and args.tokenizer is None:
        raise UsageError(
            f"--output_dir {args.output_dir} holds an earlier tokenizer ({', '.join(sorted(old_tokenizer))}) that "
            "would stay beside the new weights; give --tokenizer, or pick a new folder"
        )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    check_output(args)
    model = convert_checkpoint(
        args.course,
        args.checkpoint,
        args.output_dir,
        tokenizer_dir=args.tokenizer,
        variant=args.variant,
        num_heads=args.num_heads,
        share_synthesizer_heads=args.share_synthesizer_heads,
    )
    parameters = model.num_parameters()
    print(f"Saved {type(model).__name__} ({parameters:,} parameters) to {args.output_dir}")


if __name__ == "__main__":
    sys.exit(command_line(main))
