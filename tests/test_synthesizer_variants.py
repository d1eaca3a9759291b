"""The synthesizer paper's other variants (random, factorized dense) and the dense switches (ℓ, head-shared B)."""

import pytest
import torch
from course_reference import tiny_config
from huggingface_hub.errors import StrictDataclassClassValidationError
from torch.nn import functional as F
from transformers import AutoModelForCausalLM

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM, SmallEncoderModel
from hf_models.small_encoder.modeling_small_encoder import CACHE_FIELD

VARIANTS = ["random", "factorized"]


def randomized(model: torch.nn.Module) -> torch.nn.Module:
    """Non-trivial synthesizer weights (the inits make near-uniform attention)."""
    torch.manual_seed(1)
    with torch.no_grad():
        for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
            if "synth" in name:
                tensor.normal_(0.0, 1.0)
    return model.eval()


def test_parameter_shapes_and_counts():
    d, h, block = 256, 8, 128
    random = SmallEncoderModel(SmallEncoderConfig.from_preset("cs224n-mingpt", attention_type="random"))
    attention = random.layers[0].self_attn
    assert attention.synth_random.shape == (h, block, block) and attention.synth_random.requires_grad
    assert not hasattr(attention, "synth_proj")  # input-independent
    fixed = SmallEncoderModel(
        SmallEncoderConfig.from_preset("cs224n-mingpt", attention_type="random", synthesizer_random_trainable=False)
    )
    fixed_attention = fixed.layers[0].self_attn
    assert "synth_random" in dict(fixed_attention.named_buffers())
    assert sum(p.numel() for p in random.parameters()) - sum(p.numel() for p in fixed.parameters()) == 4 * h * block**2
    assert fixed_attention.synth_random.std() > 0.5  # a fixed R far from uniform attention

    config = SmallEncoderConfig.from_preset("cs224n-mingpt", attention_type="factorized")
    assert config.synthesizer_factor_sizes == (12, 11)  # ⌈√128⌉ = 12, ⌈128/12⌉ = 11
    attention = SmallEncoderModel(config).layers[0].self_attn
    assert attention.synth_proj.weight.shape == (d, d)
    assert attention.synth_weight_a.shape == (h, d // h, 12) and attention.synth_bias_a.shape == (h, 1, 12)
    assert attention.synth_weight_b.shape == (h, d // h, 11) and attention.synth_bias_b.shape == (h, 1, 11)


def test_dense_switches_width_and_shared_heads():
    config = SmallEncoderConfig.from_preset(
        "cs224n-mingpt", attention_type="synthesizer", synthesizer_width=127, synthesizer_shared_heads=True
    )
    attention = SmallEncoderModel(config).layers[0].self_attn
    assert attention.synth_weight.shape == (1, 32, 127) and attention.synth_bias.shape == (1, 1, 127)


def test_bad_variant_settings_are_clear_errors():
    with pytest.raises(
        StrictDataclassClassValidationError,
        match=r"synthesizer_width \(30\) must be between 1 and max_position_embeddings",
    ):
        tiny_config("random", synthesizer_width=30)
    with pytest.raises(
        StrictDataclassClassValidationError, match=r"synthesizer_factors=\[3, 4\] must be two positive integers"
    ):
        tiny_config("factorized", synthesizer_factors=[3, 4])
    model = SmallEncoderForCausalLM(tiny_config("factorized", synthesizer_width=10)).eval()
    with pytest.raises(ValueError, match=r"Input length 12 exceeds synthesizer_width=10"):
        model(torch.randint(3, 61, (1, 12)))


def reference_attention(attention, hidden_states: torch.Tensor, variant: str, is_causal: bool) -> torch.Tensor:
    """One head, one query, one key at a time, from the paper's formulas."""
    batch, length, _ = hidden_states.shape
    heads, head_dim = attention.num_heads, attention.head_dim
    output = torch.zeros(batch, length, heads * head_dim)
    for b in range(batch):
        x = hidden_states[b]
        values = attention.v_proj(x)
        hidden = F.relu(attention.synth_proj(x)) if variant != "random" else None
        for head in range(heads):
            cols = slice(head * head_dim, (head + 1) * head_dim)
            for i in range(length):
                keys = range(i + 1) if is_causal else range(length)
                scores = []
                for j in keys:
                    if variant == "random":
                        scores.append(attention.synth_random[head, i, j])
                    elif variant == "factorized":
                        num_b = attention.factor_b
                        a = hidden[i, cols] @ attention.synth_weight_a[head] + attention.synth_bias_a[head, 0]
                        bb = hidden[i, cols] @ attention.synth_weight_b[head] + attention.synth_bias_b[head, 0]
                        scores.append(a[j // num_b] * bb[j % num_b])
                    else:  # dense, B possibly shared by the heads
                        weight_head = head if attention.synth_weight.shape[0] > 1 else 0
                        weight = attention.synth_weight[weight_head]
                        scores.append(hidden[i, cols] @ weight[:, j] + attention.synth_bias[weight_head, 0, j])
                weights = torch.softmax(torch.stack(scores), dim=0)
                output[b, i, cols] = sum(w * values[j, cols] for w, j in zip(weights, keys, strict=True))
    return attention.o_proj(output)


@pytest.mark.parametrize("is_causal", [True, False])
@pytest.mark.parametrize(
    ("variant", "overrides"),
    [
        ("random", {}),
        ("random", {"synthesizer_random_trainable": False}),
        ("factorized", {}),
        ("factorized", {"synthesizer_factors": [5, 7]}),
        ("synthesizer", {"synthesizer_shared_heads": True, "synthesizer_width": 20}),
    ],
)
def test_matches_an_explicit_loop_reference(variant, overrides, is_causal):
    model = randomized(SmallEncoderModel(tiny_config(variant, is_causal=is_causal, **overrides)))
    attention = model.layers[0].self_attn
    hidden_states = torch.randn(2, 9, 32)
    with torch.no_grad():
        ours, _ = attention(hidden_states, position_ids=torch.arange(9)[None])
        expected = reference_attention(attention, hidden_states, variant, is_causal)
    torch.testing.assert_close(ours, expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_causality(variant):
    model = randomized(SmallEncoderForCausalLM(tiny_config(variant)))
    input_ids = torch.randint(3, 61, (2, 16))
    changed = input_ids.clone()
    changed[:, 9:] = torch.randint(3, 61, (2, 7))
    with torch.no_grad():
        before, after = model(input_ids).logits, model(changed).logits
    torch.testing.assert_close(before[:, :9], after[:, :9])
    assert not torch.allclose(before[:, 9:], after[:, 9:])
    bidirectional = randomized(SmallEncoderForCausalLM(tiny_config(variant, is_causal=False)))
    with torch.no_grad():
        before, after = bidirectional(input_ids).logits, bidirectional(changed).logits
    assert not torch.allclose(before[:, :9], after[:, :9])


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("is_causal", [True, False])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_padding_invariance(variant, is_causal, padding_side):
    model = randomized(SmallEncoderModel(tiny_config(variant, is_causal=is_causal)))
    short, long = torch.randint(3, 61, (1, 7)), torch.randint(3, 61, (1, 12))
    pad = torch.zeros(1, 5, dtype=torch.long)
    batch = torch.cat([torch.cat([short, pad] if padding_side == "right" else [pad, short], dim=1), long])
    mask = (batch != 0).long()
    mask[1] = 1
    with torch.no_grad():
        batched = model(batch, attention_mask=mask).last_hidden_state
        alone_short, alone_long = model(short).last_hidden_state, model(long).last_hidden_state
    real = slice(0, 7) if padding_side == "right" else slice(5, 12)
    torch.testing.assert_close(batched[0, real], alone_short[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(batched[1], alone_long[0], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cached_generation_equals_uncached_and_the_argmax_loop(variant):
    model = randomized(SmallEncoderForCausalLM(tiny_config(variant)))
    prompt = torch.randint(3, 61, (2, 5))
    kwargs = dict(max_new_tokens=10, do_sample=False, pad_token_id=0, eos_token_id=None)
    with torch.no_grad():
        cached = model.generate(prompt, use_cache=True, **kwargs)
        uncached = model.generate(prompt, use_cache=False, **kwargs)
        manual = prompt
        for _ in range(10):
            manual = torch.cat([manual, model(manual, use_cache=False).logits[:, -1].argmax(-1, keepdim=True)], 1)
        full = model(input_ids := torch.randint(3, 61, (2, 12)), use_cache=False).logits
        prefix = model(input_ids[:, :8], use_cache=True)
        chunk = model(input_ids[:, 8:], cache=getattr(prefix, CACHE_FIELD), use_cache=True).logits
    assert torch.equal(cached, uncached) and torch.equal(cached, manual)
    torch.testing.assert_close(chunk, full[:, 8:], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_left_padded_batch_generation_matches_single(variant):
    model = randomized(SmallEncoderForCausalLM(tiny_config(variant)))
    short, long = torch.randint(3, 61, (1, 4)), torch.randint(3, 61, (1, 7))
    batch = torch.cat([torch.cat([torch.zeros(1, 3, dtype=torch.long), short], 1), long])
    kwargs = dict(max_new_tokens=6, do_sample=False, pad_token_id=0, eos_token_id=None)
    with torch.no_grad():
        batched = model.generate(batch, attention_mask=(batch != 0).long(), **kwargs)
        alone = model.generate(short, **kwargs)
    assert torch.equal(batched[0, 3:], alone[0])


@pytest.mark.parametrize("trainable", [True, False])
@pytest.mark.parametrize("variant", VARIANTS)
def test_save_and_reload_keeps_the_logits(tmp_path, variant, trainable):
    model = randomized(SmallEncoderForCausalLM(tiny_config(variant, synthesizer_random_trainable=trainable)))
    model.save_pretrained(tmp_path)
    reloaded = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    input_ids = torch.randint(3, 61, (1, 10))
    with torch.no_grad():
        torch.testing.assert_close(reloaded(input_ids).logits, model(input_ids).logits)


@pytest.mark.parametrize("variant", VARIANTS)
def test_overfits_one_batch(variant):
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(
        tiny_config(variant, embedding_dropout=0.0, hidden_dropout=0.0, attention_dropout=0.0)
    )
    input_ids = torch.randint(3, 61, (4, 16))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(40):
        loss = model(input_ids, labels=input_ids).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
