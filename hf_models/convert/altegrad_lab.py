"""The ALTeGraD lab's checkpoint (its `Model`, LM or classifier) as a `small-encoder` model; the package's docstring
says what converts and how."""

from __future__ import annotations

from transformers import PreTrainedModel

from ..small_encoder import SmallEncoderConfig, SmallEncoderForCausalLM, SmallEncoderForSequenceClassification
from .checkpoint import (
    StateDict,
    check_keys,
    layer_norm_shapes,
    linear_shapes,
    num_layers,
    require,
)

COURSE = "altegrad-lab"
NUM_HEADS = 2  # the lab's; no tensor holds it
LAB_DROPOUTS = dict(embedding_dropout=0.0, attention_dropout=0.0, hidden_dropout=0.0, activation_dropout=0.0)
# The lab's sinusoid table (`base.pos_encoder.pe`) is optional in its state dict; without it, its default length.
LAB_MAX_POSITIONS = 5000


def convert_altegrad_lab(state_dict: StateDict, num_heads: int | None = None, source: str = "") -> PreTrainedModel:
    """The lab's `Model` as `SmallEncoderForCausalLM` when its decoder has one output per token, else as
    `SmallEncoderForSequenceClassification` (the lab's classifier reads the last position). Dropouts are 0, as in
    the lab's evaluation."""
    vocab_size, hidden = require(state_dict, "base.encoder.weight", 2, source).shape
    intermediate = require(state_dict, "base.transformer_encoder.layers.0.linear1.weight", 2, source).shape[0]
    num_outputs = require(state_dict, "classifier.decoder.weight", 2, source).shape[0]
    layers = num_layers(state_dict, "base.transformer_encoder.layers.", source)
    pe = state_dict.get("base.pos_encoder.pe")
    max_positions = pe.shape[0] if pe is not None else LAB_MAX_POSITIONS

    expected = {"base.encoder.weight": (vocab_size, hidden), "base.pos_encoder.pe": (max_positions, 1, hidden)}
    renames = {"base.encoder.weight": "model.embed_tokens.weight"}
    for i in range(layers):
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
            prefix = f"{lab}.{lab_name}"
            module = linear_shapes(prefix, *shape) if len(shape) == 2 else layer_norm_shapes(prefix, hidden)
            expected.update(module)
            renames.update({key: key.replace(prefix, f"{ours}.{our_name}") for key in module})
    is_language_model = num_outputs == vocab_size
    head = "lm_head" if is_language_model else "classifier"
    expected.update(linear_shapes("classifier.decoder", num_outputs, hidden))
    renames.update({f"classifier.decoder.{p}": f"{head}.{p}" for p in ("weight", "bias")})
    check_keys(state_dict, expected, optional=["base.pos_encoder.pe"], source=source)

    # The lab's preset with the checkpoint's sizes (the head count, which no tensor holds, given or the lab's).
    config = SmallEncoderConfig.from_preset(
        COURSE,
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=num_heads or NUM_HEADS,
        intermediate_size=intermediate,
        max_position_embeddings=max_positions,
        **LAB_DROPOUTS,
        **({} if is_language_model else {"num_labels": num_outputs}),
    )
    model = (SmallEncoderForCausalLM if is_language_model else SmallEncoderForSequenceClassification)(config)
    model.load_state_dict({ours: state_dict[lab] for lab, ours in renames.items()}, strict=True)
    return model.eval()
