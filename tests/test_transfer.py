"""Finetuning levers for sentiment (issue 18): concat pooling, classifier dropout, gradual unfreezing, weight
averaging, decay toward the starting weights, WiSE-FT's mix with the start, the auxiliary LM loss and the best epoch on
a held-out slice."""

from __future__ import annotations

import pytest
import torch
from transformers import TrainerControl, TrainerState, TrainingArguments

from hf_models import (
    SmallEncoderConfig,
    SmallEncoderForCausalLM,
    SmallEncoderForSequenceClassification,
)
from hf_models.training import (
    AuxiliaryLMLoss,
    DecayTowardStartCallback,
    GradualUnfreezingCallback,
    InterpolateWithStartCallback,
    WeightAveragingCallback,
    discriminative_optimizer,
    pretrained_lm_head,
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
def test_concat_pooling_is_last_mean_max_of_real_tokens(padding_side):
    model = _classifier(classifier_pooling="concat", is_causal=False)
    assert model.classifier.in_features == 3 * TINY["hidden_size"]
    lengths = [7, 4]
    rows = [torch.randint(1, 50, (n,)) for n in lengths]
    hidden = torch.randn(2, 7, TINY["hidden_size"]) * 100  # padding positions hold large values: never read
    mask = torch.zeros(2, 7, dtype=torch.long)
    for i, n in enumerate(lengths):
        real = slice(0, n) if padding_side == "right" else slice(7 - n, 7)
        mask[i, real] = 1
        expected = torch.cat([hidden[i, real][-1], hidden[i, real].mean(0), hidden[i, real].max(0).values])
        torch.testing.assert_close(model.pool(hidden, mask)[i], expected)
    del rows


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
        pooled = model.pool_all_layers(hidden, mask)
    assert len(hidden) == layers
    for i in range(2):
        real = mask[i].bool()
        expected = []
        for states in hidden:
            for vector in (states[i, real].mean(0), states[i, real].max(0).values):
                expected.append((vector - vector.mean()) / torch.sqrt(vector.var(unbiased=False) + 1e-5))
        torch.testing.assert_close(pooled[i], torch.cat(expected), atol=1e-5, rtol=1e-4)
    # The head reads exactly this vector: the logits are the classifier applied to it.
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids, attention_mask=mask).logits, model.classifier(pooled))


@pytest.mark.parametrize("pooling", ["last", "mean", "first", "concat", "all_layers"])
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


def test_weight_averaging_loads_the_mean_of_the_last_epochs():
    model = _classifier()
    args, control = TrainingArguments(output_dir="unused", use_cpu=True, num_train_epochs=4), TrainerControl()
    callback = WeightAveragingCallback(model, epochs=2)
    snapshots = []
    for epoch in (1, 2, 3, 4):
        with torch.no_grad():
            model.classifier.weight.fill_(float(epoch))
        snapshots.append(model.classifier.weight.clone())
        callback.on_epoch_end(args, _state(float(epoch)), control)
    callback.on_train_end(args, _state(4.0), control)
    assert callback.count == 2
    torch.testing.assert_close(model.classifier.weight, (snapshots[2] + snapshots[3]) / 2)  # epochs 3 and 4


def test_decay_toward_start_pulls_the_backbone_back_by_rate_times_strength():
    """L2-SP, decoupled: w <- w + lr x strength x (w0 - w) for the backbone after each step; the head is left alone."""
    model = _classifier()
    callback = DecayTowardStartCallback(model, strength=100.0)
    start = {name: p.detach().clone() for name, p in model.named_parameters()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    moved = {name: p.detach().clone() for name, p in model.named_parameters()}

    class Schedule:  # the scheduler Trainer hands to callbacks: the rate of the next step
        def get_last_lr(self):
            return [2e-3]

    args = TrainingArguments(output_dir="unused", use_cpu=True)
    callback.on_step_end(args, _state(0.1), TrainerControl(), lr_scheduler=Schedule())
    for name, p in model.named_parameters():
        if name.startswith("model."):  # 0.2 of the way back
            torch.testing.assert_close(p, moved[name] + 0.2 * (start[name] - moved[name]))
        else:
            assert torch.equal(p, moved[name]), f"the head {name} was pulled"
    with pytest.raises(ValueError, match="positive strength"):
        DecayTowardStartCallback(model, strength=0.0)


def test_wise_ft_mixes_the_start_and_the_finetuned_weights():
    """(1 - alpha) x the weights at on_train_begin + alpha x those at on_train_end, for every weight and buffer of
    floating type; the start is taken when training begins, after a probe head was set."""
    model = _classifier()
    callback = InterpolateWithStartCallback(model, alpha=0.25)
    args, control = TrainingArguments(output_dir="unused", use_cpu=True), TrainerControl()
    with torch.no_grad():
        model.classifier.weight.fill_(2.0)  # the probe head, fitted after the callback was made
    callback.on_train_begin(args, _state(0.0), control)
    start = {name: t.clone() for name, t in model.state_dict().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(-3.0).add_(1.0)
    finetuned = {name: t.clone() for name, t in model.state_dict().items()}
    callback.on_train_end(args, _state(4.0), control)
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, 0.75 * start[name] + 0.25 * finetuned[name], msg=name)
    torch.testing.assert_close(model.classifier.weight, torch.full_like(model.classifier.weight, 0.75 * 2 + 0.25 * -5))
    with pytest.raises(ValueError, match="from 0 to 1"):
        InterpolateWithStartCallback(model, alpha=1.5)


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_auxiliary_lm_loss_is_the_pretrained_lm_loss_of_the_real_tokens(tmp_path, padding_side):
    """At every position (share 1) and epoch 0, the auxiliary loss of a classifier loaded from a language model is
    that model's own causal LM loss on the real tokens; it is weighted by weight x decay ** epoch, and its head,
    attached for the training, is gone when training ends."""
    torch.manual_seed(0)
    lm = SmallEncoderForCausalLM(SmallEncoderConfig(**TINY)).eval()
    lm.save_pretrained(tmp_path / "lm")
    classifier = SmallEncoderForSequenceClassification.from_pretrained(tmp_path / "lm", num_labels=2).eval()
    head = pretrained_lm_head(str(tmp_path / "lm"))
    assert torch.equal(head[0], lm.lm_head.weight) and torch.equal(head[1], lm.lm_head.bias)
    auxiliary = AuxiliaryLMLoss(classifier, weight=2.0, decay=0.5, share=1.0, lm_head=head, seed=0)
    ids, mask = torch.randint(6, 50, (2, 9)), torch.ones(2, 9, dtype=torch.long)
    real = slice(0, 5) if padding_side == "right" else slice(4, 9)
    mask[1] = 0
    mask[1, real] = 1
    ids[mask == 0] = 0
    labels = ids.masked_fill(mask == 0, -100)
    labels[1, real.start] = -100  # a first token has no real token before it (left padding: a pad would predict it)
    with torch.no_grad():
        outputs = classifier(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        expected = lm(input_ids=ids, attention_mask=mask, labels=labels).loss
        torch.testing.assert_close(auxiliary({"input_ids": ids, "attention_mask": mask}, outputs, 0.0), 2.0 * expected)
        torch.testing.assert_close(auxiliary({"input_ids": ids, "attention_mask": mask}, outputs, 2.0), 0.5 * expected)
    assert auxiliary.mean_since_last_log() == pytest.approx(expected.item(), rel=1e-5)
    assert auxiliary.mean_since_last_log() is None  # emptied by the read
    args = TrainingArguments(output_dir="unused", use_cpu=True)
    auxiliary.on_train_end(args, _state(4.0), TrainerControl())
    assert not hasattr(classifier, AuxiliaryLMLoss.head_name)
    assert set(classifier.state_dict()) == set(SmallEncoderForSequenceClassification(classifier.config).state_dict())


def test_auxiliary_lm_loss_draws_its_share_of_positions_on_its_own_stream():
    """The random head and a share of the positions, drawn from the loss's own generator: torch's stream (dropout,
    batch order) is left as it was, and two losses of the same seed draw the same positions."""
    classifier = _classifier()
    ids = torch.randint(1, 50, (4, 30))
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    with torch.no_grad():
        outputs = classifier(**inputs, output_hidden_states=True)
    losses = []
    for _ in range(2):
        state = torch.get_rng_state()
        auxiliary = AuxiliaryLMLoss(classifier, weight=1.0, decay=1.0, share=0.25, lm_head=None, seed=3)
        losses.append(auxiliary(inputs, outputs, 0.0))
        assert torch.equal(torch.get_rng_state(), state), "the head's start or the positions drew from torch's stream"
    assert torch.equal(losses[0], losses[1])
    full = AuxiliaryLMLoss(classifier, weight=1.0, decay=1.0, share=1.0, lm_head=None, seed=3)(inputs, outputs, 0.0)
    assert not torch.equal(losses[0], full)  # a quarter of the 116 positions, not all of them
    with pytest.raises(ValueError, match="share of positions"):
        AuxiliaryLMLoss(classifier, weight=1.0, decay=1.0, share=0.0, lm_head=None, seed=0)
