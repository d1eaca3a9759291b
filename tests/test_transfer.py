"""Finetuning techniques for sentiment: every-layer pooling, classifier dropout and gradual unfreezing."""

from __future__ import annotations

import pytest
import torch
from transformers import TrainerControl, TrainerState, TrainingArguments

from hf_models import (
    SmallEncoderConfig,
    SmallEncoderForSequenceClassification,
)
from hf_models.training import (
    GradualUnfreezingCallback,
    discriminative_optimizer,
)
from hf_models.training.transfer import backbone_layer_groups

TINY = dict(
    vocab_size=50,
    hidden_size=16,
    num_hidden_layers=3,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=32,
    pad_token_id=0,
)


def _classifier(**overrides) -> SmallEncoderForSequenceClassification:
    torch.manual_seed(0)
    return SmallEncoderForSequenceClassification(SmallEncoderConfig(**{**TINY, **overrides})).eval()


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_all_layers_pooling_reads_every_layer_of_real_tokens(padding_side):
    model = _classifier(classifier_pooling="all_layers")
    layers, width = TINY["num_hidden_layers"] + 1, TINY["hidden_size"]
    assert model.classifier.in_features == 2 * layers * width
    ids = torch.randint(1, 50, (2, 7))
    mask = torch.zeros(2, 7, dtype=torch.long)
    lengths = [7, 4]
    for i, n in enumerate(lengths):
        mask[i, slice(0, n) if padding_side == "right" else slice(7 - n, 7)] = 1
    ids[mask == 0] = 0
    with torch.no_grad():
        hidden = model.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
        logits = model(input_ids=ids, attention_mask=mask).logits
    assert len(hidden) == layers
    for i in range(2):
        real = mask[i].bool()
        expected = []
        for states in hidden:
            for vector in (states[i, real].mean(0), states[i, real].max(0).values):
                expected.append((vector - vector.mean()) / torch.sqrt(vector.var(unbiased=False) + 1e-5))
        # The head reads exactly this vector: the logits are the classifier applied to it.
        with torch.no_grad():
            torch.testing.assert_close(logits[i], model.classifier(torch.cat(expected)), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("pooling", ["last", "mean", "first", "all_layers"])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_classification_batched_equals_one_at_a_time(pooling, padding_side):
    model = _classifier(classifier_pooling=pooling, is_causal=False, classifier_dropout=0.3)
    sequences = [torch.randint(1, 50, (n,)) for n in (9, 3, 6)]
    longest = max(len(s) for s in sequences)
    ids = torch.zeros(len(sequences), longest, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, s in enumerate(sequences):
        span = slice(0, len(s)) if padding_side == "right" else slice(longest - len(s), longest)
        ids[i, span], mask[i, span] = s, 1
    with torch.no_grad():
        batched = model(input_ids=ids, attention_mask=mask).logits
        single = torch.cat([model(input_ids=s[None]).logits for s in sequences])
    torch.testing.assert_close(batched, single, atol=1e-5, rtol=1e-4)


def test_classifier_dropout_reaches_the_head():
    model = _classifier(classifier_dropout=0.25).train()
    assert model.dropout.p == 0.25
    ids = torch.randint(1, 50, (4, 6))
    torch.manual_seed(1)
    first = model(input_ids=ids).logits
    torch.manual_seed(2)
    assert not torch.equal(first, model(input_ids=ids).logits)  # dropout is on in training mode
    model.eval()
    assert torch.equal(model(input_ids=ids).logits, model(input_ids=ids).logits)


def _state(epoch: float) -> TrainerState:
    state = TrainerState()
    state.epoch = epoch
    return state


def test_gradual_unfreezing_thaws_from_the_top_one_group_per_epoch():
    model = _classifier()
    groups = backbone_layer_groups(model)
    # last block (+ final norm), the blocks below it, then the embeddings: every backbone parameter once
    assert len(groups) == TINY["num_hidden_layers"] + 1
    assert sorted(map(id, (p for g in groups for p in g))) == sorted(map(id, model.base_model.parameters()))
    assert groups[0][0] is next(model.base_model.layers[-1].parameters())
    assert groups[-1][0] is model.base_model.embed_tokens.weight

    callback = GradualUnfreezingCallback(model, groups_per_epoch=1)
    args, control = TrainingArguments(output_dir="unused", use_cpu=True), TrainerControl()
    for epoch, thawed in ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 4)):
        callback.on_epoch_begin(args, _state(float(epoch)), control)
        trainable = [all(p.requires_grad for p in g) for g in groups]
        assert trainable == [i < thawed for i in range(len(groups))], epoch
        assert all(p.requires_grad for p in model.classifier.parameters())
    # The optimizer holds the frozen groups from the start, so that thawing them trains them.
    _, kwargs = discriminative_optimizer(model, args, 1e-4)
    assert sum(len(g["params"]) for g in kwargs["params"]) == len(list(model.parameters()))
    with pytest.raises(ValueError, match="at least 1"):
        GradualUnfreezingCallback(model, 0)
