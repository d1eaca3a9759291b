"""Objectives: CS224N span corruption (properties over 1,000 draws), birthplace QA, and the transformers
collators used for causal LM, MLM and classification."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from datasets import Dataset
from transformers import DataCollatorForLanguageModeling, DataCollatorForSeq2Seq, DataCollatorWithPadding

from hf_models.data import (
    IGNORE_INDEX,
    SpanCorruptionCollator,
    encode_birthplace_qa,
    span_corrupt,
    tokenize_and_group,
    tokenize_documents,
)

SEP, PAD = 5, 0
BLOCK = 128


def _split(out: dict[str, list[int]]) -> tuple[list[int], list[int], list[int], int]:
    """Parse `prefix SEP suffix SEP masked SEP pads` back into its parts."""
    ids = out["input_ids"]
    n_real = sum(out["attention_mask"])
    body = ids[:n_real]
    seps = [i for i, t in enumerate(body) if t == SEP]
    assert len(seps) == 3 and seps[-1] == n_real - 1
    prefix, suffix, masked = body[: seps[0]], body[seps[0] + 1 : seps[1]], body[seps[1] + 1 : seps[2]]
    return prefix, masked, suffix, n_real


@pytest.mark.parametrize(
    "make_rng", [lambda: random.Random(0), lambda: np.random.default_rng(0)], ids=["random", "numpy"]
)
def test_span_corruption_properties_over_1000_draws(make_rng) -> None:
    rng = make_rng()
    doc_rng = random.Random(1)
    fractions = []
    for _ in range(1000):
        doc = [doc_rng.randint(6, 999) for _ in range(doc_rng.randint(150, 400))]  # ids never equal SEP or PAD
        out = span_corrupt(doc, BLOCK, SEP, PAD, rng)
        # The output is exactly one block, labels are the inputs with -100 on the pads.
        assert all(len(v) == BLOCK for v in out.values())
        prefix, masked, suffix, n_real = _split(out)
        assert out["input_ids"][n_real:] == [PAD] * (BLOCK - n_real)
        assert out["attention_mask"] == [1] * n_real + [0] * (BLOCK - n_real)
        assert out["labels"] == out["input_ids"][:n_real] + [IGNORE_INDEX] * (BLOCK - n_real)
        # Truncated length in [4, 7/8 block]; prefix + masked + suffix gives back the truncated document.
        length = len(prefix) + len(masked) + len(suffix)
        assert 4 <= length <= 7 * BLOCK // 8
        assert prefix + masked + suffix == doc[:length]
        assert 1 <= len(masked) <= length
        fractions.append(len(masked) / length)
    assert np.mean(fractions) == pytest.approx(0.25, abs=0.015)
    assert min(fractions) < 0.1 and max(fractions) > 0.4  # random, not fixed


def test_short_documents_and_small_blocks() -> None:
    rng = random.Random(0)
    for n in range(0, 6):
        out = span_corrupt(list(range(10, 10 + n)), 16, SEP, PAD, rng)
        assert len(out["input_ids"]) == 16
        if n:
            prefix, masked, suffix, _ = _split(out)
            assert prefix + masked + suffix == list(range(10, 10 + n))
    # block 8: 7/8 block = 7 would not leave room for the 3 separators; the length is capped at block - 3.
    for _ in range(200):
        out = span_corrupt(list(range(10, 60)), 8, SEP, PAD, rng)
        prefix, masked, suffix, n_real = _split(out)
        assert len(out["input_ids"]) == 8 and 4 <= len(prefix + masked + suffix) <= 5
    with pytest.raises(ValueError, match="too small"):
        span_corrupt([10, 11, 12, 13], 6, SEP, PAD, rng)


def test_collator_draws_new_corruptions_and_is_seedable(tiny_tokenizer) -> None:
    docs = Dataset.from_dict({"text": ["Vera Tamton was born in Oslo in 1901 . She was a painter ."] * 4})
    examples = list(tokenize_documents(docs, tiny_tokenizer))
    collator = SpanCorruptionCollator(tiny_tokenizer, block_size=32, seed=0)
    batch = collator(examples)
    assert set(batch) == {"input_ids", "attention_mask", "labels"}
    assert all(t.shape == (4, 32) and t.dtype == torch.long for t in batch.values())
    assert (batch["labels"][batch["attention_mask"] == 0] == IGNORE_INDEX).all()
    assert ((batch["input_ids"] == tiny_tokenizer.sep_token_id).sum(dim=1) == 3).all()
    # A new corruption at each call (CS224N draws one per __getitem__), reproducible with the seed.
    second = collator(examples)
    assert not torch.equal(batch["input_ids"], second["input_ids"])
    replay = SpanCorruptionCollator(tiny_tokenizer, block_size=32, seed=0)
    assert torch.equal(replay(examples)["input_ids"], batch["input_ids"])
    with pytest.raises(ValueError, match="too small"):
        SpanCorruptionCollator(tiny_tokenizer, block_size=4)


def test_collator_in_a_dataloader_with_workers(tiny_tokenizer) -> None:
    docs = tokenize_documents(Dataset.from_dict({"text": ["Ida Norford was born in Rome ."] * 8}), tiny_tokenizer)
    collator = SpanCorruptionCollator(tiny_tokenizer, block_size=24, seed=3)
    loader = torch.utils.data.DataLoader(docs, batch_size=4, collate_fn=collator, num_workers=2)
    batches = [b["input_ids"] for b in loader]
    assert len(batches) == 2
    # Each worker reseeds: the two workers do not produce the same corruption stream.
    assert not torch.equal(batches[0], batches[1])


def test_birthplace_qa_encoding_masks_the_question(tiny_tokenizer) -> None:
    tok = tiny_tokenizer
    examples = {"question": ["Where was Vera Tamton born?", "Where was Ida Norford born?"], "answer": ["Oslo", "Rome"]}
    out = encode_birthplace_qa(examples, tok, block_size=64)
    for i, (question, answer) in enumerate(zip(examples["question"], examples["answer"], strict=True)):
        ids, labels = out["input_ids"][i], out["labels"][i]
        q_ids = tok(question)["input_ids"]
        a_ids = tok(" " + answer)["input_ids"]
        assert ids == q_ids + [tok.sep_token_id] + a_ids + [tok.sep_token_id, tok.eos_token_id]
        assert labels == [IGNORE_INDEX] * (len(q_ids) + 1) + a_ids + [tok.sep_token_id, tok.eos_token_id]
        assert tok.decode(ids) == f"{question}⁇ {answer}⁇</s>"
        assert out["attention_mask"][i] == [1] * len(ids)

    # Padding with a transformers collator: labels padded with -100, inputs with <pad>.
    rows = [{k: v[i] for k, v in out.items()} for i in range(2)]
    batch = DataCollatorForSeq2Seq(tok, label_pad_token_id=IGNORE_INDEX)(rows)
    lengths = [len(r["input_ids"]) for r in rows]
    assert batch["input_ids"].shape == (2, max(lengths))
    short = int(np.argmin(lengths))
    assert (batch["labels"][short, lengths[short] :] == IGNORE_INDEX).all()
    assert (batch["input_ids"][short, lengths[short] :] == tok.pad_token_id).all()

    # Test rows (no answer) and prompt_only: the generation prompt `question SEP`, no loss.
    prompt = encode_birthplace_qa({"question": examples["question"]}, tok, block_size=64)
    assert prompt["input_ids"][0] == tok(examples["question"][0])["input_ids"] + [tok.sep_token_id]
    assert set(prompt["labels"][0]) == {IGNORE_INDEX}
    assert encode_birthplace_qa(examples, tok, 64, prompt_only=True)["input_ids"] == prompt["input_ids"]

    # Too long: the start of the question goes first, the answer is kept.
    cut = encode_birthplace_qa(examples, tok, block_size=8)
    assert all(len(ids) == 8 for ids in cut["input_ids"])
    assert cut["labels"][0][-2:] == [tok.sep_token_id, tok.eos_token_id]


def test_lm_and_classification_use_transformers_collators(tiny_tokenizer) -> None:
    tok = tiny_tokenizer
    texts = [f"Vera Tamton number {i} was born in Oslo and died in Rome ." for i in range(40)]
    blocks = tokenize_and_group(Dataset.from_dict({"text": texts}), tok, block_size=32)
    rows = [blocks[i] for i in range(8)]

    clm = DataCollatorForLanguageModeling(tok, mlm=False)(rows)
    assert torch.equal(clm["labels"], clm["input_ids"])  # blocks have no pad: every position is a target

    torch.manual_seed(0)
    mlm = DataCollatorForLanguageModeling(tok, mlm=True, mlm_probability=0.15)(rows)
    targets = mlm["labels"] != IGNORE_INDEX
    assert 0.05 < targets.float().mean().item() < 0.3
    assert (mlm["input_ids"][targets] == tok.mask_token_id).any()

    features = [tok(t, truncation=True) | {"label": i % 2} for i, t in enumerate(["court", "un peu plus long que ça"])]
    cls = DataCollatorWithPadding(tok)(features)
    assert cls["input_ids"].shape[0] == 2 and cls["labels"].tolist() == [0, 1]
    assert (cls["attention_mask"][0] == 0).any()
