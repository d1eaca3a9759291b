"""CS224N a5's minGPT checkpoint (vanilla or synthesizer attention) as `SmallEncoderForCausalLM`; the package's
docstring says what converts and how."""

from __future__ import annotations

import torch

from ..small_encoder import SmallEncoderConfig, SmallEncoderForCausalLM
from .checkpoint import (
    CheckpointError,
    StateDict,
    check_keys,
    layer_norm_shapes,
    linear_shapes,
    num_layers,
    require,
)

COURSE = "cs224n-mingpt"
NUM_HEADS = 8  # the course's for vanilla attention; a synthesizer's follows from the width of its B


def _variant(state_dict: StateDict, variant: str | None, source: str) -> str:
    detected = "synthesizer" if "blocks.0.attn.w2" in state_dict else "vanilla"
    if variant is not None and variant != detected:
        raise CheckpointError(
            f"{source}: --attention_type {variant} was asked, but the checkpoint holds {detected} attention "
            f"({'blocks.0.attn.w2 present' if detected == 'synthesizer' else 'no blocks.0.attn.w2'})"
        )
    return detected


def _attention(
    state_dict: StateDict, index: int, hidden: int, num_heads: int, variant: str, shared: bool
) -> tuple[dict[str, tuple[int, ...]], dict[str, torch.Tensor]]:
    """The expected shapes of one block's course attention keys, and its weights under our names."""
    course, ours = f"blocks.{index}.attn", f"model.layers.{index}.self_attn"
    block = state_dict["pos_emb"].shape[1]
    expected = {f"{course}.mask": (1, 1, block, block), **linear_shapes(f"{course}.proj", hidden, hidden)}
    expected.update(linear_shapes(f"{course}.value", hidden, hidden))
    if variant == "vanilla":
        for name in ("query", "key"):
            expected.update(linear_shapes(f"{course}.{name}", hidden, hidden))
    else:
        expected.update(linear_shapes(f"{course}.w1", hidden, hidden))
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
    """CS224N a5's minGPT (vanilla or synthesizer attention, detected from the keys) as `SmallEncoderForCausalLM`,
    with the course's exact GELU."""
    variant = _variant(state_dict, variant, source)
    vocab_size, hidden = require(state_dict, "tok_emb.weight", 2, source).shape
    block = require(state_dict, "pos_emb", 3, source).shape[1]
    intermediate = require(state_dict, "blocks.0.mlp.0.weight", 2, source).shape[0]
    if num_heads is None:
        num_heads = NUM_HEADS
        if variant == "synthesizer":
            num_heads = hidden // require(state_dict, "blocks.0.attn.w2", 2, source).shape[0]
    layers = num_layers(state_dict, "blocks.", source)

    expected = {
        "tok_emb.weight": (vocab_size, hidden),
        "pos_emb": (1, block, hidden),
        "head.weight": (vocab_size, hidden),
    }
    expected.update(layer_norm_shapes("ln_f", hidden))
    weights = {
        "model.embed_tokens.weight": state_dict["tok_emb.weight"],
        "model.embed_positions.weight": state_dict["pos_emb"][0],
        "lm_head.weight": state_dict.get("head.weight"),
    }
    weights.update({f"model.norm.{p}": state_dict.get(f"ln_f.{p}") for p in ("weight", "bias")})
    optional = []
    for i in range(layers):
        course, ours = f"blocks.{i}", f"model.layers.{i}"
        for course_name, our_name, module in (
            ("ln1", "attn_norm", layer_norm_shapes(f"{course}.ln1", hidden)),
            ("ln2", "mlp_norm", layer_norm_shapes(f"{course}.ln2", hidden)),
            ("mlp.0", "mlp.fc1", linear_shapes(f"{course}.mlp.0", intermediate, hidden)),
            ("mlp.2", "mlp.fc2", linear_shapes(f"{course}.mlp.2", hidden, intermediate)),
        ):
            expected.update(module)
            weights.update(
                {key.replace(f"{course}.{course_name}", f"{ours}.{our_name}"): state_dict.get(key) for key in module}
            )
        attention_expected, attention_weights = _attention(
            state_dict, i, hidden, num_heads, variant, share_synthesizer_heads
        )
        expected.update(attention_expected)
        weights.update(attention_weights)
        optional.append(f"{course}.attn.mask")  # a buffer: present in the course's state dicts, not needed here
    check_keys(state_dict, expected, optional=optional, source=source)

    attention = dict(attention_type=variant)
    if variant == "synthesizer":  # ℓ = block - 1: the course's inputs are block - 1 characters long
        attention.update(synthesizer_width=block - 1, synthesizer_shared_heads=share_synthesizer_heads)
    config = SmallEncoderConfig.from_preset(
        COURSE,
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate,
        max_position_embeddings=block,
        hidden_act="gelu",  # the course's nn.GELU() is the exact (erf) GELU
        **attention,
    )
    model = SmallEncoderForCausalLM(config)
    model.load_state_dict(weights, strict=True)
    return model.eval()
