"""Every batched path gives what the same work gives one item at a time, on items of DIFFERENT lengths (so that
padding shows), on both padding sides where the path allows either: greedy birthplace answers (both QA formats),
classification with each pooling, generation with and without the cache, span-corruption evaluation and the
sentiment predictions of `Trainer.predict`."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from course_reference import tiny_config
from tiny import TINY

from hf_models import SmallEncoderForCausalLM, SmallEncoderForSequenceClassification
from hf_models.data import SpanCorruptionCollator, TrimPaddingCollator, corrupt_for_evaluation
from hf_models.tasks.birthplace_qa import predict_answers, predict_char_answers
from hf_models.training import build_config

QUESTIONS = [
    "Where was Ada born?",
    "Where was Jean-Baptiste Emmanuel Zorg born?",
    "Where was Bo born?",
    "Where was Maximilian von Habsburg-Lothringen the Younger born?",
]


def causal_lm(tokenizer, attention_type: str = "vanilla", seed: int = 0) -> SmallEncoderForCausalLM:
    torch.manual_seed(seed)
    config = build_config("cs224n-mingpt", TINY, tokenizer, attention_type=attention_type, is_causal=True)
    return SmallEncoderForCausalLM(config).eval()


@pytest.mark.parametrize("tokenizer_padding_side", ["right", "left"])
@pytest.mark.parametrize("attention_type", ["vanilla", "synthesizer"])
def test_greedy_answers_batched_equal_one_at_a_time(tiny_tokenizer, attention_type, tokenizer_padding_side):
    model = causal_lm(tiny_tokenizer, attention_type)
    tiny_tokenizer.padding_side = tokenizer_padding_side
    try:
        batched = predict_answers(model, tiny_tokenizer, QUESTIONS, batch_size=len(QUESTIONS), max_new_tokens=6)
        alone = [predict_answers(model, tiny_tokenizer, [q], batch_size=1, max_new_tokens=6)[0] for q in QUESTIONS]
        assert tiny_tokenizer.padding_side == tokenizer_padding_side  # restored
    finally:
        tiny_tokenizer.padding_side = "right"
    assert batched == alone
    assert len(set(batched)) > 1  # a model that answers the same to every question would prove nothing


def test_course_char_answers_batched_equal_one_at_a_time(synthetic_birthplace_dir):
    from hf_models.tokenization import resolve_tokenizer
    from hf_models.tokenization.courses import CS224N_CHAR

    tokenizer = resolve_tokenizer(None, CS224N_CHAR, data_dir=str(synthetic_birthplace_dir))
    model = causal_lm(tokenizer, seed=1)
    rows = (synthetic_birthplace_dir / "birth_dev.tsv").read_text(encoding="utf-8").splitlines()
    # The synthetic wiki.txt has no '?': the questions lose it to stay inside the character vocabulary.
    by_length = {len(q): q for q in (row.split("\t")[0].rstrip("?") for row in rows)}
    questions = [by_length[n] for n in sorted(by_length)[:: max(1, len(by_length) // 4)]][:4]
    assert len(questions) == 4
    batched = predict_char_answers(model, tokenizer, questions, batch_size=len(questions), max_new_chars=12)
    alone = [predict_char_answers(model, tokenizer, [q], batch_size=1, max_new_chars=12)[0] for q in questions]
    assert batched == alone


@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("pooling", ["last", "mean", "first", "all_layers"])
def test_classification_batched_equals_one_at_a_time(tiny_tokenizer, pooling, padding_side):
    torch.manual_seed(0)
    config = build_config("altegrad-lab", TINY, tiny_tokenizer, classifier_pooling=pooling, num_labels=3)
    model = SmallEncoderForSequenceClassification(config).eval()
    tiny_tokenizer.padding_side = padding_side
    try:
        batch = tiny_tokenizer(QUESTIONS, padding=True, return_tensors="pt")
    finally:
        tiny_tokenizer.padding_side = "right"
    assert (batch["attention_mask"] == 0).any()
    with torch.no_grad():
        batched = model(**batch).logits
        alone = torch.cat([model(**tiny_tokenizer([q], return_tensors="pt")).logits for q in QUESTIONS])
    torch.testing.assert_close(batched, alone, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("attention_type", ["vanilla", "synthesizer"])
def test_generation_batched_equals_one_at_a_time(attention_type, use_cache):
    """Left padding (generation appends on the right); the cache on and off."""
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(tiny_config(attention_type)).eval()
    prompts = [torch.randint(3, 61, (n,)) for n in (3, 7, 5)]
    width = max(len(p) for p in prompts)
    batch = torch.stack([F.pad(p, (width - len(p), 0), value=0) for p in prompts])
    kwargs = dict(max_new_tokens=6, do_sample=False, pad_token_id=0, eos_token_id=None, use_cache=use_cache)
    with torch.no_grad():
        batched = model.generate(batch, attention_mask=(batch != 0).long(), **kwargs)[:, width:]
        alone = [model.generate(p[None], **kwargs)[0, len(p) :] for p in prompts]
    for row, single in zip(batched, alone, strict=True):
        assert torch.equal(row, single)


def test_span_corruption_evaluation_batched_equals_one_at_a_time(tiny_tokenizer, synthetic_birthplace_dir):
    """The fixed evaluation corruptions, collated and trimmed as Trainer does: every row's summed token loss
    in a batch equals its loss alone (rows of different lengths, right-padded)."""
    from datasets import Dataset

    lines = (synthetic_birthplace_dir / "wiki.txt").read_text(encoding="utf-8").splitlines()[:6]
    documents = Dataset.from_dict({"input_ids": [tiny_tokenizer(line)["input_ids"] for line in lines]})
    eval_rows = corrupt_for_evaluation(documents, tiny_tokenizer, block_size=48, seed=0)
    collator = TrimPaddingCollator(SpanCorruptionCollator(tiny_tokenizer, 48, seed=0))
    model = causal_lm(tiny_tokenizer)

    def row_losses(examples: list[dict]) -> torch.Tensor:
        batch = collator(examples)
        with torch.no_grad():
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        losses = F.cross_entropy(logits[:, :-1].transpose(1, 2), batch["labels"][:, 1:], reduction="none")
        return losses.sum(dim=1)

    rows = [eval_rows[i] for i in range(len(eval_rows))]
    assert len({sum(row["attention_mask"]) for row in rows}) > 1  # different lengths
    batched = row_losses(rows)
    alone = torch.cat([row_losses([row]) for row in rows])
    torch.testing.assert_close(batched, alone, atol=1e-4, rtol=1e-5)
