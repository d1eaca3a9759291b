"""`config.loss_chunk_size`: the causal LM's loss a chunk of tokens at a time, without the whole logits matrix. It
must give transformers' loss and the same gradients and keep the logits whenever they are asked for (compiled:
tests/test_torch_compile.py)."""

from __future__ import annotations

import pytest
import torch
from huggingface_hub.errors import StrictDataclassFieldValidationError

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM

# Dropout off: the two paths must see the same arithmetic. A vocabulary that no chunk size below divides.
TINY = dict(
    vocab_size=97,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
    embedding_dropout=0.0,
    attention_dropout=0.0,
    hidden_dropout=0.0,
    activation_dropout=0.0,
)


class ChunkedLossTester:
    """One tiny lab-shaped model, a batch whose first row starts with ignored labels, and the plain path's loss and
    gradients to compare with."""

    def __init__(self, **overrides):
        torch.manual_seed(0)
        self.model = SmallEncoderForCausalLM(SmallEncoderConfig.from_preset("altegrad-lab", **TINY, **overrides))
        self.model.train()
        generator = torch.Generator().manual_seed(1)
        self.input_ids = torch.randint(0, TINY["vocab_size"], (3, 16), generator=generator)
        self.labels = self.input_ids.clone()
        self.labels[0, :5] = -100

    def loss_and_grads(self, chunk_size: int, **kwargs) -> tuple[torch.Tensor, dict[str, torch.Tensor], object]:
        self.model.config.loss_chunk_size = chunk_size
        self.model.zero_grad(set_to_none=True)
        outputs = self.model(input_ids=self.input_ids, labels=self.labels, **kwargs)
        outputs.loss.backward()
        grads = {name: p.grad.clone() for name, p in self.model.named_parameters() if p.grad is not None}
        return outputs.loss.detach(), grads, outputs


def assert_same_grads(grads: dict, expected: dict) -> None:
    assert grads.keys() == expected.keys() and len(grads) > 10
    for name, grad in grads.items():
        torch.testing.assert_close(grad, expected[name], rtol=1e-5, atol=1e-6, msg=name)


@pytest.mark.parametrize("chunk_size", [1, 7, 40, 1000])  # one token, uneven chunks, the last one short, one chunk
def test_chunked_loss_and_gradients_equal_the_plain_ones(chunk_size):
    tester = ChunkedLossTester()
    plain_loss, plain_grads, plain = tester.loss_and_grads(0)
    loss, grads, chunked = tester.loss_and_grads(chunk_size)
    assert plain.logits.shape == (3, 16, 97) and chunked.logits is None  # training: the loss only
    torch.testing.assert_close(loss, plain_loss, rtol=1e-6, atol=1e-6)
    assert_same_grads(grads, plain_grads)
    # Both are the mean over the 41 kept targets (3 rows of 15, 4 ignored), not over all 45.
    targets = tester.labels[:, 1:].reshape(-1)
    per_token = torch.nn.functional.cross_entropy(
        plain.logits[:, :-1].reshape(-1, 97), targets, ignore_index=-100, reduction="none"
    )
    assert (targets != -100).sum() == 41
    torch.testing.assert_close(loss, per_token.sum() / 41, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("overrides", [dict(lm_head_bias=False), dict(tie_word_embeddings=True)])
def test_head_without_bias_and_tied_head(overrides):
    tester = ChunkedLossTester(**overrides)
    plain_loss, plain_grads, _ = tester.loss_and_grads(0)
    loss, grads, _ = tester.loss_and_grads(5)
    torch.testing.assert_close(loss, plain_loss, rtol=1e-6, atol=1e-6)
    assert_same_grads(grads, plain_grads)


def test_trainer_token_count_and_frozen_head():
    """Trainer's `num_items_in_batch` (the tokens of the whole accumulated batch) divides the sum, as in
    transformers' loss; a frozen head gets no gradient and the rest the same ones."""
    tester = ChunkedLossTester()
    plain_loss, plain_grads, _ = tester.loss_and_grads(0, num_items_in_batch=torch.tensor(82))
    loss, grads, _ = tester.loss_and_grads(6, num_items_in_batch=torch.tensor(82))
    torch.testing.assert_close(loss, plain_loss, rtol=1e-6, atol=1e-6)
    assert_same_grads(grads, plain_grads)
    mean_loss, _, _ = tester.loss_and_grads(6)
    torch.testing.assert_close(loss * 82 / 41, mean_loss, rtol=1e-6, atol=1e-6)

    tester.model.lm_head.requires_grad_(False)
    _, frozen_grads, _ = tester.loss_and_grads(6, num_items_in_batch=torch.tensor(82))
    assert not any(name.startswith("lm_head") for name in frozen_grads)
    assert_same_grads(frozen_grads, {k: v for k, v in plain_grads.items() if not k.startswith("lm_head")})


def test_logits_are_kept_when_asked_for():
    tester = ChunkedLossTester()
    plain_loss, _, plain = tester.loss_and_grads(0)
    _, _, asked = tester.loss_and_grads(7, skip_logits=False)
    torch.testing.assert_close(asked.logits, plain.logits)
    torch.testing.assert_close(asked.loss, plain_loss)
    tester.model.eval()  # evaluation (Trainer's prediction step): the logits, the same loss
    with torch.no_grad():
        evaluated = tester.model(input_ids=tester.input_ids, labels=tester.labels)
        generated = tester.model.generate(tester.input_ids[:1, :4], max_new_tokens=3, do_sample=False)
    assert evaluated.logits.shape == (3, 16, 97)
    torch.testing.assert_close(evaluated.loss, plain_loss, rtol=1e-6, atol=1e-6)
    assert generated.shape == (1, 7)


def test_bf16_autocast_matches_the_plain_loss():
    """Under autocast the head's product is bf16 in both paths and the softmax fp32."""
    tester = ChunkedLossTester()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        plain_loss, plain_grads, _ = tester.loss_and_grads(0)
        loss, grads, _ = tester.loss_and_grads(7)
    torch.testing.assert_close(loss, plain_loss, rtol=1e-3, atol=1e-3)
    for name, grad in grads.items():
        torch.testing.assert_close(grad, plain_grads[name], rtol=2e-2, atol=2e-3, msg=name)


def test_the_chunk_size_is_checked_and_set_from_a_string():
    with pytest.raises(StrictDataclassFieldValidationError, match="loss_chunk_size"):
        SmallEncoderConfig(loss_chunk_size=-1)
    config = SmallEncoderConfig.from_preset("altegrad-lab")
    config.update_from_string("loss_chunk_size=4096")  # how configs/altegrad/course/lm.json sets it
    assert config.loss_chunk_size == 4096
