"""The dense synthesizer against an independent reference of the CS224N handout's equation.

For head i, with X the block's input (T × d), positions 0..T-1 and ℓ = max_position_embeddings:

    Y_i = softmax( ReLU(X·A_i + b1) · B_i[:, :T] + b2[:T] , causal mask ) · (X·V_i)

and the heads are concatenated then projected. The reference below is written per sequence, per head, per
query and per key with Python loops, reading only the model's parameters, never its attention code. The
weights are drawn at unit scale (at initialisation B_i is ±0.001 and b2 is zero, which would hide a model that
ignores them).
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from transformers.activations import ACT2FN

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
from hf_models.small_encoder.modeling_small_encoder import CACHE_FIELD

BLOCK = 12  # ℓ
VOCAB = 61
PAD = 0


def synthesizer_config(**overrides) -> SmallEncoderConfig:
    values = dict(
        vocab_size=VOCAB,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=32,
        max_position_embeddings=BLOCK,
        attention_type="synthesizer",
        pad_token_id=PAD,
        embedding_dropout=0.0,
        attention_dropout=0.0,
        hidden_dropout=0.0,
    )
    values.update(overrides)
    return SmallEncoderConfig.from_preset("cs224n-mingpt", **values)


def unit_scale_model(seed: int = 0, **overrides) -> SmallEncoderForCausalLM:
    torch.manual_seed(seed)
    model = SmallEncoderForCausalLM(synthesizer_config(**overrides)).eval()
    with torch.no_grad():
        # Logits of order one, so that the tolerance below is small next to every term.
        model.model.embed_tokens.weight.normal_(0.0, 1.0)
        model.model.embed_positions.weight.normal_(0.0, 1.0)
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                module.weight.normal_(0.0, module.in_features**-0.5)
        for layer in model.model.layers:
            attention = layer.self_attn
            attention.synth_weight.normal_(0.0, 1.0)  # B_i
            attention.synth_bias.normal_(0.0, 1.0)  # b2
            attention.synth_proj.bias.normal_(0.0, 0.5)  # b1
            attention.v_proj.bias.normal_(0.0, 0.5)
        for norm in [model.model.norm] + [
            m for layer in model.model.layers for m in (layer.attn_norm, layer.mlp_norm)
        ]:
            norm.weight.normal_(1.0, 0.3)
            norm.bias.normal_(0.0, 0.3)
    return model


def reference_synthesizer(attention, x: torch.Tensor, causal: bool) -> torch.Tensor:
    """The handout's dense synthesizer on one sequence x (T × d) at positions 0..T-1, head by head."""
    seq_len, hidden = x.shape
    num_heads = attention.synth_weight.shape[0]
    head_dim = hidden // num_heads
    heads = []
    for i in range(num_heads):
        rows = slice(i * head_dim, (i + 1) * head_dim)
        a_i, b1_i = attention.synth_proj.weight[rows].T, attention.synth_proj.bias[rows]  # d × d/h, d/h
        big_b_i, b2_i = attention.synth_weight[i], attention.synth_bias[i].reshape(-1)  # d/h × ℓ, ℓ
        v_i, v_bias_i = attention.v_proj.weight[rows].T, attention.v_proj.bias[rows]
        y_i = torch.zeros(seq_len, head_dim, dtype=torch.float64)
        for t in range(seq_len):
            synthesized = torch.relu(x[t] @ a_i + b1_i)
            keys = [s for s in range(seq_len) if not causal or s <= t]
            scores = torch.stack([synthesized @ big_b_i[:, s] + b2_i[s] for s in keys])
            weights = torch.softmax(scores, dim=0)
            for weight, s in zip(weights, keys, strict=True):
                y_i[t] += weight * (x[s] @ v_i + v_bias_i)
        heads.append(y_i)
    return torch.cat(heads, dim=-1) @ attention.o_proj.weight.T + attention.o_proj.bias


def reference_logits(model: SmallEncoderForCausalLM, ids: list[int]) -> torch.Tensor:
    """The whole pre-norm minGPT forward on one unpadded sequence, in float64, with the reference attention."""
    config = model.config
    model = copy.deepcopy(model).double()
    backbone = model.model
    x = backbone.embed_tokens.weight[ids] * (math.sqrt(config.hidden_size) if config.scale_embeddings else 1.0)
    x = x + backbone.embed_positions.weight[: len(ids)]
    eps = config.layer_norm_eps
    act = ACT2FN[config.hidden_act]

    def norm(module, h):
        return F.layer_norm(h, (config.hidden_size,), module.weight, module.bias, eps)

    def mlp(module, h):
        return F.linear(act(F.linear(h, module.fc1.weight, module.fc1.bias)), module.fc2.weight, module.fc2.bias)

    for layer in backbone.layers:
        x = x + reference_synthesizer(layer.self_attn, norm(layer.attn_norm, x), config.is_causal)
        x = x + mlp(layer.mlp, norm(layer.mlp_norm, x))
    x = norm(backbone.norm, x)
    return F.linear(x, model.lm_head.weight, model.lm_head.bias).float()


def assert_matches(actual: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(actual, expected, atol=2e-4, rtol=2e-4)


@pytest.mark.parametrize("seq_len", [7, BLOCK])
@pytest.mark.parametrize("is_causal", [True, False])
def test_synthesizer_matches_reference(seq_len, is_causal):
    model = unit_scale_model(is_causal=is_causal)
    input_ids = torch.randint(3, VOCAB, (2, seq_len), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = model(input_ids, use_cache=False).logits
        for row in range(2):
            assert_matches(logits[row], reference_logits(model, input_ids[row].tolist()))


@pytest.mark.parametrize("short_len", [5, BLOCK - 4])
def test_synthesizer_matches_reference_with_left_padding(short_len):
    model = unit_scale_model()
    generator = torch.Generator().manual_seed(2)
    short, long = (
        torch.randint(3, VOCAB, (short_len,), generator=generator),
        torch.randint(3, VOCAB, (BLOCK,), generator=generator),
    )
    n_pad = BLOCK - short_len
    batch = torch.stack([torch.cat([torch.full((n_pad,), PAD), short]), long])
    mask = torch.ones_like(batch)
    mask[0, :n_pad] = 0
    with torch.no_grad():
        logits = model(batch, attention_mask=mask, use_cache=False).logits
        assert_matches(logits[0, n_pad:], reference_logits(model, short.tolist()))
        assert_matches(logits[1], reference_logits(model, long.tolist()))


def test_synthesizer_cache_matches_reference_token_by_token():
    """A left-padded batch decoded one token at a time through the cache, up to the full block ℓ."""
    model = unit_scale_model(seed=3)
    generator = torch.Generator().manual_seed(3)
    sequences = [torch.randint(3, VOCAB, (n,), generator=generator) for n in (BLOCK - 3, BLOCK)]
    prompt_len = 4
    n_pad = 3
    prompts = torch.stack([torch.cat([torch.full((n_pad,), PAD), sequences[0][:1]]), sequences[1][:prompt_len]])
    mask = torch.ones_like(prompts)
    mask[0, :n_pad] = 0
    with torch.no_grad():
        out = model(prompts, attention_mask=mask, use_cache=True)
        step_logits = [out.logits]
        for step in range(prompt_len, BLOCK):
            next_ids = torch.stack([sequences[0][step - n_pad], sequences[1][step]])[:, None]
            mask = torch.cat([mask, torch.ones(2, 1, dtype=mask.dtype)], dim=1)
            out = model(next_ids, attention_mask=mask, cache=getattr(out, CACHE_FIELD), use_cache=True)
            step_logits.append(out.logits)
        logits = torch.cat(step_logits, dim=1)
        assert_matches(logits[0, n_pad:], reference_logits(model, sequences[0].tolist()))
        assert_matches(logits[1], reference_logits(model, sequences[1].tolist()))


def test_reference_is_sensitive_to_b_and_b2():
    """The weights are large enough that dropping B_i·(...) or b2 moves the logits far beyond the tolerance."""
    model = unit_scale_model()
    ids = torch.randint(3, VOCAB, (BLOCK,), generator=torch.Generator().manual_seed(4)).tolist()
    with torch.no_grad():
        full = reference_logits(model, ids)
        for attribute in ("synth_weight", "synth_bias"):
            saved = [getattr(layer.self_attn, attribute).clone() for layer in model.model.layers]
            for layer in model.model.layers:
                getattr(layer.self_attn, attribute).zero_()
            assert (reference_logits(model, ids) - full).abs().max() > 0.1, attribute
            for layer, tensor in zip(model.model.layers, saved, strict=True):
                getattr(layer.self_attn, attribute).copy_(tensor)
