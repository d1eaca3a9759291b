"""The model family against the lab's plain-torch model, and the HF behaviours it promises."""

import math

import pytest
import torch
from course_reference import LabTransformerModel, tiny_config
from huggingface_hub.errors import StrictDataclassClassValidationError, StrictDataclassFieldValidationError
from torch import nn
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForSequenceClassification,
)

from hf_models import (
    SmallEncoderConfig,
    SmallEncoderForCausalLM,
    SmallEncoderForMaskedLM,
    SmallEncoderForSequenceClassification,
    SmallEncoderModel,
)
from hf_models.small_encoder.modeling_small_encoder import CACHE_FIELD

ATTENTION_TYPES = ["vanilla", "synthesizer"]


def count_trainable(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# 1. The lab's parameter counts.
def test_altegrad_lab_parameter_counts():
    config = SmallEncoderConfig.from_preset("altegrad-lab")
    assert count_trainable(SmallEncoderForCausalLM(config)) == 21_018_401
    classifier = SmallEncoderForSequenceClassification(SmallEncoderConfig.from_preset("altegrad-lab", num_labels=2))
    assert count_trainable(classifier) == 10_968_602
    classifier.freeze_backbone()
    assert count_trainable(classifier) == 402


def test_altegrad_large_is_a_pre_norm_lab_model_of_the_labs_size():
    # The GPU lever of issue 18: 6 pre-norm layers, d=384; with the 16k BPE about the lab's 21M parameters.
    config = SmallEncoderConfig.from_preset("altegrad-large", vocab_size=16_000)
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (6, 384, 6)
    assert config.norm_first and config.position_embedding_type == "sinusoidal"
    # 6,144,000 embeddings + 6,160,000 LM head + 6 x 1,774,464 per block + 768 final norm
    assert count_trainable(SmallEncoderForCausalLM(config)) == 22_951_552


def test_cs224n_preset_matches_mingpt_shapes():
    config = SmallEncoderConfig.from_preset("cs224n-mingpt")
    assert (config.hidden_size, config.num_attention_heads, config.num_hidden_layers) == (256, 8, 4)
    assert config.max_position_embeddings == 128 and config.norm_first and config.position_embedding_type == "learned"
    model = SmallEncoderForCausalLM(config)
    assert model.model.embed_positions.weight.shape == (128, 256)
    assert isinstance(model.model.norm, nn.LayerNorm)


def test_base_preset_is_gpt2_small_parameter_for_parameter():
    """`base` is GPT-2 small's shape. Both models hold the same tensors: token and position tables, per block a fused
    q/k/v projection (GPT-2's `c_attn`), an output projection, two feed-forward layers, all with biases, and two
    LayerNorms, then a final LayerNorm; the LM head has no bias and is tied to the token table in both. So the
    counts are equal: V·d + P·d + L·(12·d² + 13·d) + 2·d."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = SmallEncoderConfig.from_preset("base")
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (12, 768, 12)
    assert (config.max_position_embeddings, config.intermediate_size, config.vocab_size) == (1024, 3072, 50257)
    assert config.norm_first and config.position_embedding_type == "learned" and config.tie_word_embeddings
    with torch.device("meta"):  # shapes only: no 124M-parameter initialisation
        ours = SmallEncoderForCausalLM(config)
        gpt2 = GPT2LMHeadModel(GPT2Config())  # GPT-2 small's defaults: 12 x 768, 12 heads, 1024, vocab 50257
    vocab, positions, width, layers = 50257, 1024, 768, 12
    expected = vocab * width + positions * width + layers * (12 * width**2 + 13 * width) + 2 * width
    assert count_trainable(ours) == count_trainable(gpt2) == expected == 124_439_808
    assert ours.lm_head.weight is ours.model.embed_tokens.weight
    # Untied, each model gains exactly the head's V·d.
    with torch.device("meta"):
        untied = SmallEncoderForCausalLM(SmallEncoderConfig.from_preset("base", tie_word_embeddings=False))
        gpt2_untied = GPT2LMHeadModel(GPT2Config(tie_word_embeddings=False))
    assert count_trainable(untied) == count_trainable(gpt2_untied) == expected + vocab * width


def test_unknown_preset_and_bad_switch_raise_clear_errors():
    with pytest.raises(ValueError, match="available presets"):
        SmallEncoderConfig.from_preset("no-such-preset")
    # `@strict` checks each field as it is set (types, choices, ranges), then the constraints between fields.
    with pytest.raises(StrictDataclassFieldValidationError, match="attention_type"):
        tiny_config(attention_type="linformer")
    with pytest.raises(StrictDataclassFieldValidationError, match="classifier_pooling"):
        tiny_config(classifier_pooling="max")
    with pytest.raises(StrictDataclassFieldValidationError, match="a probability between 0.0 and 1.0, got 1.5"):
        tiny_config(hidden_dropout=1.5)
    with pytest.raises(StrictDataclassFieldValidationError, match="num_hidden_layers"):
        tiny_config(num_hidden_layers="2")
    with pytest.raises(StrictDataclassClassValidationError, match=r"hidden_size \(30\) must be a multiple"):
        tiny_config(hidden_size=30, num_attention_heads=4)
    config = tiny_config()
    with pytest.raises(StrictDataclassFieldValidationError, match="position_embedding_type"):
        config.position_embedding_type = "rotary"  # also on assignment


# 2. Equivalence with the lab's model built from plain torch.nn.
def copy_lab_weights(lab: LabTransformerModel, ours: SmallEncoderModel) -> None:
    with torch.no_grad():
        ours.embed_tokens.weight.copy_(lab.encoder.weight)
        for lab_layer, layer in zip(lab.transformer_encoder.layers, ours.layers, strict=True):
            layer.self_attn.qkv_proj.weight.copy_(lab_layer.self_attn.in_proj_weight)
            layer.self_attn.qkv_proj.bias.copy_(lab_layer.self_attn.in_proj_bias)
            layer.self_attn.o_proj.load_state_dict(lab_layer.self_attn.out_proj.state_dict())
            layer.mlp.fc1.load_state_dict(lab_layer.linear1.state_dict())
            layer.mlp.fc2.load_state_dict(lab_layer.linear2.state_dict())
            layer.attn_norm.load_state_dict(lab_layer.norm1.state_dict())
            layer.mlp_norm.load_state_dict(lab_layer.norm2.state_dict())


@pytest.fixture(scope="module")
def lab_models():
    torch.manual_seed(0)
    lab = LabTransformerModel().eval()
    lm_head = nn.Linear(200, 50001)
    classifier_head = nn.Linear(200, 2)
    src = torch.randint(0, 50001, (12, 3))  # [L, B], the lab's layout
    return lab, lm_head, classifier_head, src


def test_lab_equivalence_language_model(lab_models):
    lab, lm_head, _, src = lab_models
    ours = SmallEncoderForCausalLM(SmallEncoderConfig.from_preset("altegrad-lab")).eval()
    copy_lab_weights(lab, ours.model)
    ours.lm_head.load_state_dict(lm_head.state_dict())
    with torch.no_grad():
        expected = lm_head(lab(src)).transpose(0, 1)
        logits = ours(src.t().contiguous()).logits
    assert (logits - expected).abs().max().item() <= 1e-5


def test_lab_equivalence_classifier(lab_models):
    lab, _, classifier_head, src = lab_models
    ours = SmallEncoderForSequenceClassification(SmallEncoderConfig.from_preset("altegrad-lab", num_labels=2)).eval()
    copy_lab_weights(lab, ours.model)
    ours.classifier.load_state_dict(classifier_head.state_dict())
    with torch.no_grad():
        expected = classifier_head(lab(src)[-1])  # the lab reads the last position
        logits = ours(src.t().contiguous()).logits
    assert (logits - expected).abs().max().item() <= 1e-5


# 3. Causality.
@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_causality(attention_type):
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(attention_type)).eval()
    input_ids = torch.randint(3, 61, (2, 16))
    changed = input_ids.clone()
    changed[:, 9:] = torch.randint(3, 61, (2, 7))
    with torch.no_grad():
        before, after = model(input_ids).logits, model(changed).logits
    torch.testing.assert_close(before[:, :9], after[:, :9])
    assert not torch.allclose(before[:, 9:], after[:, 9:])

    bidirectional = SmallEncoderForCausalLM(tiny_config(attention_type, is_causal=False)).eval()
    with torch.no_grad():
        before, after = bidirectional(input_ids).logits, bidirectional(changed).logits
    assert not torch.allclose(before[:, :9], after[:, :9])


def test_masked_lm_is_bidirectional_and_refuses_a_causal_config():
    config = tiny_config()
    with pytest.raises(ValueError, match="SmallEncoderForMaskedLM needs a bidirectional config"):
        SmallEncoderForMaskedLM(config)
    assert config.is_causal is True  # the caller's config is left as it was
    torch.manual_seed(0)
    model = SmallEncoderForMaskedLM(tiny_config(is_causal=False)).eval()
    input_ids = torch.randint(3, 61, (1, 10))
    changed = input_ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 61
    with torch.no_grad():
        assert not torch.allclose(model(input_ids).logits[:, 0], model(changed).logits[:, 0])


# 4. Padding invariance.
@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
@pytest.mark.parametrize("is_causal", [True, False])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_padding_invariance(attention_type, is_causal, padding_side):
    torch.manual_seed(0)
    model = SmallEncoderModel(tiny_config(attention_type, is_causal=is_causal)).eval()
    short, long = torch.randint(3, 61, (1, 7)), torch.randint(3, 61, (1, 12))
    pad = torch.zeros(1, 5, dtype=torch.long)
    padded_short = torch.cat([short, pad] if padding_side == "right" else [pad, short], dim=1)
    batch = torch.cat([padded_short, long])
    mask = (batch != 0).long()
    mask[1] = 1
    with torch.no_grad():
        batched = model(batch, attention_mask=mask).last_hidden_state
        alone_short = model(short).last_hidden_state
        alone_long = model(long).last_hidden_state
    real = slice(0, 7) if padding_side == "right" else slice(5, 12)
    torch.testing.assert_close(batched[0, real], alone_short[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(batched[1], alone_long[0], atol=1e-5, rtol=1e-4)
    assert torch.isfinite(batched).all()


def layer_masks(model: SmallEncoderModel, *args, **kwargs) -> tuple[list[torch.Tensor | None], object]:
    """The attention masks that `model(*args, **kwargs)` gives its first layer, as booleans (True: attend; None
    where none is needed), and the model's output."""
    seen = []

    def keep(module, args, kwargs) -> None:
        mask = kwargs["attention_mask"]
        seen.append(mask if mask is None or mask.dtype == torch.bool else mask == 0)

    handle = model.layers[0].register_forward_pre_hook(keep, with_kwargs=True)
    try:
        with torch.no_grad():
            output = model(*args, **kwargs)
    finally:
        handle.remove()
    return seen, output


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
@pytest.mark.parametrize("attention_type", ["vanilla", "synthesizer"])
@pytest.mark.parametrize("is_causal", [True, False])
def test_attention_mask_is_exact_and_a_padding_query_stays_finite(is_causal, attention_type, implementation):
    """The mask of every layer (transformers' `create_causal_mask`, for each implementation and attention type):
    real queries see the real keys (up to themselves when causal), and one new token after a cache the real past
    keys and itself. A padding query may see no key: its row stays finite (NaN there would reach the real queries
    of the next layer through their masked keys)."""
    torch.manual_seed(0)
    model = SmallEncoderModel(tiny_config(attention_type, is_causal=is_causal)).eval()
    model.set_attn_implementation(implementation)
    attention_mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]])
    real_key = attention_mask[:, None, None, :].bool()
    allowed = torch.ones(5, 5, dtype=torch.bool).tril() if is_causal else torch.ones(5, 5, dtype=torch.bool)
    input_ids = torch.randint(3, 61, (2, 5))
    (mask,), output = layer_masks(model, input_ids, attention_mask=attention_mask, use_cache=True)
    real_query = attention_mask.bool()
    expected = (allowed & real_key)[:, 0]
    assert torch.equal(mask.expand(2, 1, 5, 5)[:, 0][real_query], expected[real_query])
    assert torch.isfinite(output.last_hidden_state).all()
    with torch.no_grad():  # with the attention weights: SDPA's boolean mask through the written-out attention
        weighed = model(input_ids, attention_mask=attention_mask, output_attentions=True).last_hidden_state
    assert torch.isfinite(weighed).all()
    # One new token after a cache of 5: it sees the real past keys and itself.
    step_mask = torch.cat([attention_mask, torch.ones(2, 1, dtype=torch.long)], 1)
    cache = getattr(output, CACHE_FIELD)
    (step,), _ = layer_masks(model, torch.randint(3, 61, (2, 1)), attention_mask=step_mask, cache=cache)
    assert step.tolist() == [[[[False, False, True, True, True, True]]], [[[True, True, True, False, False, True]]]]


@pytest.mark.parametrize("pooling", ["last", "mean", "first"])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_classifier_pooling_ignores_padding(pooling, padding_side):
    torch.manual_seed(0)
    model = SmallEncoderForSequenceClassification(tiny_config(classifier_pooling=pooling, num_labels=2)).eval()
    short = torch.randint(3, 61, (1, 6))
    pad = torch.zeros(1, 4, dtype=torch.long)
    padded = torch.cat([short, pad] if padding_side == "right" else [pad, short], dim=1)
    with torch.no_grad():
        torch.testing.assert_close(
            model(padded, attention_mask=(padded != 0).long()).logits, model(short).logits, atol=1e-5, rtol=1e-4
        )
        # Without a mask, the pad id in the config finds the padding.
        torch.testing.assert_close(model(padded).logits, model(short).logits, atol=1e-5, rtol=1e-4)


# 5. Generation: cache == no cache == manual argmax loop.
@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_greedy_generation_with_and_without_cache(attention_type):
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(attention_type)).eval()
    prompt = torch.randint(3, 61, (2, 5))
    kwargs = dict(max_new_tokens=10, do_sample=False, pad_token_id=0, eos_token_id=None)
    with torch.no_grad():
        cached = model.generate(prompt, use_cache=True, **kwargs)
        uncached = model.generate(prompt, use_cache=False, **kwargs)
        manual = prompt
        for _ in range(10):
            next_token = model(manual, use_cache=False).logits[:, -1].argmax(-1, keepdim=True)
            manual = torch.cat([manual, next_token], dim=1)
    assert torch.equal(cached, uncached)
    assert torch.equal(cached, manual)


@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_incremental_decoding_matches_full_forward(attention_type):
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(attention_type)).eval()
    input_ids = torch.randint(3, 61, (2, 12))
    with torch.no_grad():
        full = model(input_ids, use_cache=False).logits
        prefix = model(input_ids[:, :8], use_cache=True)
        chunk = model(input_ids[:, 8:], cache=getattr(prefix, CACHE_FIELD), use_cache=True)
    torch.testing.assert_close(chunk.logits, full[:, 8:], atol=1e-5, rtol=1e-4)


def test_the_cache_under_its_pre_5_24_name_past_key_values():
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config("vanilla")).eval()
    input_ids = torch.randint(3, 61, (2, 12))
    with torch.no_grad():
        full = model(input_ids, use_cache=False).logits
        cache = getattr(model(input_ids[:, :8], use_cache=True), CACHE_FIELD)
        assert cache.get_seq_length() == 8
        chunk = model(input_ids[:, 8:], past_key_values=cache, use_cache=True).logits
        torch.testing.assert_close(chunk, full[:, 8:], atol=1e-5, rtol=1e-4)
        with pytest.raises(ValueError, match="Pass the key/value cache once"):
            model(input_ids[:, 8:], cache=cache, past_key_values=cache)


@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_left_padded_batch_generation_matches_single(attention_type):
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(attention_type)).eval()
    short, long = torch.randint(3, 61, (1, 4)), torch.randint(3, 61, (1, 7))
    batch = torch.cat([torch.cat([torch.zeros(1, 3, dtype=torch.long), short], 1), long])
    kwargs = dict(max_new_tokens=6, do_sample=False, pad_token_id=0, eos_token_id=None)
    with torch.no_grad():
        batched = model.generate(batch, attention_mask=(batch != 0).long(), **kwargs)
        alone = model.generate(short, **kwargs)
    assert torch.equal(batched[0, 3:], alone[0])


def test_sampling_generates():
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config()).eval()
    out = model.generate(torch.randint(3, 61, (3, 4)), do_sample=True, top_k=10, max_new_tokens=5, pad_token_id=0)
    assert out.shape == (3, 9)


def test_generation_past_block_size_is_a_clear_error():
    model = SmallEncoderForCausalLM(tiny_config()).eval()
    with pytest.raises(ValueError, match="exceeds max_position_embeddings=24"):
        model.generate(torch.randint(3, 61, (1, 20)), max_new_tokens=10, do_sample=False, pad_token_id=0)


# 6. Round-trip through save_pretrained and the Auto classes.
@pytest.mark.parametrize(
    "model_class, auto_class",
    [
        (SmallEncoderModel, AutoModel),
        (SmallEncoderForCausalLM, AutoModelForCausalLM),
        (SmallEncoderForSequenceClassification, AutoModelForSequenceClassification),
        (SmallEncoderForMaskedLM, AutoModelForMaskedLM),
    ],
)
@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_save_and_reload_through_auto_classes(tmp_path, model_class, auto_class, attention_type):
    torch.manual_seed(0)
    config = tiny_config(
        attention_type,
        position_embedding_type="sinusoidal",
        num_labels=3,
        is_causal=model_class is not SmallEncoderForMaskedLM,
    )
    model = model_class(config).eval()
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    assert AutoConfig.from_pretrained(tmp_path).model_type == "small-encoder"
    reloaded = auto_class.from_pretrained(tmp_path).eval()
    assert type(reloaded) is model_class
    input_ids = torch.randint(3, 61, (2, 9))
    with torch.no_grad():
        expected, actual = model(input_ids), reloaded(input_ids)
    key = "last_hidden_state" if model_class is SmallEncoderModel else "logits"
    assert torch.equal(expected[key], actual[key])


def test_backbone_loads_from_a_causal_lm_checkpoint(tmp_path):
    torch.manual_seed(0)
    lm = SmallEncoderForCausalLM(tiny_config()).eval()
    lm.save_pretrained(tmp_path)
    classifier = SmallEncoderForSequenceClassification.from_pretrained(tmp_path, num_labels=2)
    for name, tensor in lm.model.state_dict().items():
        assert torch.equal(classifier.model.state_dict()[name], tensor), name


def test_tied_embeddings_share_storage_when_asked():
    tied = SmallEncoderForCausalLM(tiny_config(tie_word_embeddings=True))
    assert tied.lm_head.weight.data_ptr() == tied.model.embed_tokens.weight.data_ptr()
    untied = SmallEncoderForCausalLM(tiny_config())
    assert untied.lm_head.weight.data_ptr() != untied.model.embed_tokens.weight.data_ptr()


# 7. Synthesizer shapes and the over-long input error.
def test_synthesizer_parameter_shapes():
    config = SmallEncoderConfig.from_preset("cs224n-mingpt", attention_type="synthesizer")
    attention = SmallEncoderModel(config).layers[0].self_attn
    d, h, block = 256, 8, 128
    assert attention.synth_proj.weight.shape == (d, d)  # A_i (d × d/h) for the h heads, stacked
    assert attention.synth_proj.bias.shape == (d,)  # b1
    assert attention.synth_weight.shape == (h, d // h, block)  # B_i: d/h × ℓ
    assert attention.synth_bias.shape == (h, 1, block)  # b2
    assert attention.v_proj.weight.shape == (d, d)  # V_i (d × d/h), stacked
    assert attention.o_proj.weight.shape == (d, d)


def test_synthesizer_rejects_input_longer_than_block():
    model = SmallEncoderForCausalLM(tiny_config("synthesizer")).eval()
    with pytest.raises(ValueError, match=r"Input length 30 exceeds max_position_embeddings=24"):
        model(torch.randint(3, 61, (1, 30)))


# output_attentions / output_hidden_states
@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_output_attentions_and_hidden_states(attention_type):
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(attention_type)).eval()
    input_ids = torch.randint(3, 61, (2, 6))
    with torch.no_grad():
        out = model(input_ids, output_attentions=True, output_hidden_states=True)
        plain = model(input_ids)
    assert len(out.attentions) == 2 and out.attentions[0].shape == (2, 4, 6, 6)
    torch.testing.assert_close(out.attentions[0].sum(-1), torch.ones(2, 4, 6))
    assert torch.all(out.attentions[0].triu(1) == 0)  # causal
    assert len(out.hidden_states) == 3
    # Vanilla: output_attentions takes the eager path, the plain call SDPA; the synthesizer has one path.
    torch.testing.assert_close(out.logits, plain.logits, atol=1e-5, rtol=1e-4)


def count_sdpa_calls(monkeypatch) -> list[int]:
    """Count the calls of torch's fused attention, to prove which path a forward took."""
    calls = [0]
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def counting(*args, **kwargs):
        calls[0] += 1
        return sdpa(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", counting)
    return calls


@pytest.mark.parametrize("case", ["causal", "padding", "bidirectional-padding", "cache"])
def test_eager_and_sdpa_agree(case, monkeypatch):
    """The vanilla attention's two paths (our eager function and transformers' SDPA) give the same outputs: with
    no mask (is_causal), with a padding mask, bidirectional, and on a chunk after a cache (square-ending mask)."""
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(is_causal=case != "bidirectional-padding")).eval()
    input_ids = torch.randint(3, 61, (2, 10))
    mask = torch.ones_like(input_ids)
    if "padding" in case:
        mask[0, 7:] = 0
        mask[1, :2] = 0
    calls = count_sdpa_calls(monkeypatch)

    def run() -> torch.Tensor:
        if case != "cache":
            return model(input_ids, attention_mask=mask).logits
        prefix = model(input_ids[:, :6], use_cache=True)
        return model(input_ids[:, 6:], cache=getattr(prefix, CACHE_FIELD), use_cache=True).logits

    with torch.no_grad():
        model.set_attn_implementation("sdpa")
        sdpa = run()
        assert calls[0] >= 2  # both layers went through torch's SDPA
        model.set_attn_implementation("eager")
        calls[0] = 0
        eager = run()
        assert calls[0] == 0  # ... and here through the written-out attention
    real = mask.bool() if case != "cache" else torch.ones(2, 4, dtype=torch.bool)
    torch.testing.assert_close(sdpa[real], eager[real], atol=1e-5, rtol=1e-4)


# 8. Every head overfits one tiny batch.
def head_and_batch(head: str, attention_type: str):
    torch.manual_seed(0)
    config = tiny_config(
        attention_type,
        num_labels=2,
        embedding_dropout=0.0,
        attention_dropout=0.0,
        hidden_dropout=0.0,
        is_causal=head != "masked",  # a masked LM reads both sides
    )
    input_ids = torch.randint(3, 61, (4, 12))
    if head == "causal":
        return SmallEncoderForCausalLM(config), dict(input_ids=input_ids, labels=input_ids)
    if head == "classification":
        return SmallEncoderForSequenceClassification(config), dict(
            input_ids=input_ids, labels=torch.tensor([0, 1, 1, 0])
        )
    labels = torch.full_like(input_ids, -100)
    masked = input_ids.clone()
    labels[:, ::3] = input_ids[:, ::3]
    masked[:, ::3] = 60
    return SmallEncoderForMaskedLM(config), dict(input_ids=masked, labels=labels)


@pytest.mark.parametrize("head", ["causal", "classification", "masked"])
@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_every_head_overfits_one_batch(head, attention_type):
    model, batch = head_and_batch(head, attention_type)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(80):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] <= 0.1 * losses[0], (losses[0], losses[-1])


def test_post_norm_lab_model_learns_context():
    """The lab's post-norm shape trains: it goes far below the unigram entropy on a task that needs context."""
    torch.manual_seed(0)
    vocab = 97
    config = SmallEncoderConfig.from_preset(
        "altegrad-lab",
        vocab_size=vocab,
        hidden_size=64,
        intermediate_size=64,
        num_hidden_layers=2,
        max_position_embeddings=64,
    )
    model = SmallEncoderForCausalLM(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(150):
        start, step = torch.randint(0, vocab, (16, 1)), torch.randint(1, 4, (16, 1))
        input_ids = (start + step * torch.arange(32)) % vocab  # the next token follows from the previous two
        loss = model(input_ids=input_ids, labels=input_ids).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.5 * math.log(vocab), loss.item()


def test_causal_lm_ignores_minus_100_labels():
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config()).eval()
    input_ids = torch.randint(3, 61, (2, 8))
    labels = input_ids.clone()
    labels[:, :4] = -100
    with torch.no_grad():
        logits = model(input_ids).logits
        loss = model(input_ids, labels=labels).loss
    expected = nn.functional.cross_entropy(logits[:, 3:-1].reshape(-1, 61), input_ids[:, 4:].reshape(-1))
    torch.testing.assert_close(loss, expected)


@pytest.mark.parametrize("attention_type", ATTENTION_TYPES)
def test_gradient_checkpointing_is_engaged_and_gives_the_same_gradients(attention_type):
    model, batch = head_and_batch("causal", attention_type)
    model.train()
    block_calls = [0]
    for layer in model.model.layers:
        # Hooks on the block itself stay outside transformers' checkpoint, those of its attention run inside (a
        # pre-hook: torch stops the recomputation as soon as it has every saved tensor back).
        layer.self_attn.register_forward_pre_hook(lambda *_: block_calls.__setitem__(0, block_calls[0] + 1))
    model(**batch).loss.backward()
    assert block_calls[0] == 2  # one forward per block
    expected = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    block_calls[0] = 0
    # transformers 5.x renamed gradient_checkpointing_enable; keep working on both names.
    getattr(model, "activation_checkpointing_enable", model.gradient_checkpointing_enable)()
    loss = model(**batch).loss
    assert block_calls[0] == 2
    loss.backward()
    assert block_calls[0] == 4  # the backward pass ran every block's forward again: activations were not kept
    for grad, p in zip(expected, model.parameters(), strict=True):
        torch.testing.assert_close(p.grad, grad)


def test_the_package_exports_the_model_family_lazily():
    import subprocess
    import sys

    import hf_models
    from hf_models import small_encoder

    assert sorted(hf_models.__all__) == sorted(small_encoder.__all__)
    assert set(small_encoder.__all__) <= set(dir(hf_models))
    # `import hf_models` alone imports no torch: a recipe's -h answers without it.
    code = "import sys, hf_models; assert 'torch' not in sys.modules; hf_models.SmallEncoderConfig; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "ok\n"
