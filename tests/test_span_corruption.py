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


def chi_square_p_value(counts: list[int], expected: list[float]) -> float:
    """Pearson's chi-square goodness of fit; the p-value is the chi-square survival function (torch has it)."""
    statistic = sum((c - e) ** 2 / e for c, e in zip(counts, expected, strict=True))
    dof = len(counts) - 1
    return torch.special.gammaincc(torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(statistic / 2)).item()


STATS_BLOCK = 32  # lengths 4..28 (⌊7/8·32⌋ = 28)
STATS_DRAWS = 12_000


def corruption_draws(doc_len: int, seed: int) -> list[tuple[int, int, int]]:
    """(truncated length, masked length, span start) of `STATS_DRAWS` corruptions of one document, each
    checked against the exact output format `doc[:s] SEP doc[s+k:L] SEP doc[s:s+k] SEP pad...`."""
    doc = list(range(100, 100 + doc_len))  # distinct ids: the parts can be located unambiguously
    rng = random.Random(seed)
    draws = []
    for _ in range(STATS_DRAWS):
        out = span_corrupt(doc, STATS_BLOCK, SEP, PAD, rng)
        prefix, masked, suffix, n_real = _split(out)
        length, start, span = len(prefix) + len(masked) + len(suffix), len(prefix), len(masked)
        body = doc[:start] + [SEP] + doc[start + span : length] + [SEP] + doc[start : start + span] + [SEP]
        n_pad = STATS_BLOCK - len(body)
        assert out == {
            "input_ids": body + [PAD] * n_pad,
            "attention_mask": [1] * len(body) + [0] * n_pad,
            "labels": body + [IGNORE_INDEX] * n_pad,
        }
        draws.append((length, span, start))
    return draws


@pytest.mark.parametrize("doc_len", [20, 30, 60], ids=["shorter-than-7/8-block", "between", "longer-than-block"])
def test_span_corruption_statistics(doc_len) -> None:
    """The handout's distribution: the truncated length is uniform in [4, ⌊7/8·block⌋] (a shorter document
    keeps its whole length when the draw exceeds it), the masked span averages a quarter of the truncated
    length, and the span start is uniform over [0, length - span]."""
    draws = corruption_draws(doc_len, seed=doc_len)
    max_len = 7 * STATS_BLOCK // 8
    lengths = [length for length, _, _ in draws]

    # 1. Truncation: P(L = k) = 1/25 for k < doc_len, and the rest of the mass on the whole document.
    support = list(range(4, min(max_len, doc_len) + 1))
    n_values = max_len - 4 + 1
    probabilities = [1 / n_values] * (len(support) - 1) + [(max_len - support[-1] + 1) / n_values]
    counts = [lengths.count(k) for k in support]
    assert sum(counts) == STATS_DRAWS  # nothing outside the support
    assert min(counts) > 0
    assert chi_square_p_value(counts, [p * STATS_DRAWS for p in probabilities]) > 1e-3

    # 2. Masked length: uniform in [1, m] with mean length / 4, overall and within each length.
    spans = np.array([span for _, span, _ in draws], dtype=float)
    quarter = np.array(lengths, dtype=float) / 4
    assert all(1 <= span <= length // 2 for length, span, _ in draws)
    standard_error = (spans - quarter).std() / np.sqrt(STATS_DRAWS)
    assert abs((spans - quarter).mean()) < 4 * standard_error + 1e-9
    assert np.mean(spans / np.array(lengths)) == pytest.approx(0.25, abs=0.01)

    # 3. Start: uniform over the length - span + 1 places. Randomised probability integral transform:
    # (start + U) / (length - span + 1) is uniform on [0, 1) exactly when the start is uniform.
    jitter = np.random.default_rng(doc_len)
    positions = [(start + jitter.random()) / (length - span + 1) for length, span, start in draws]
    bins = np.histogram(positions, bins=10, range=(0.0, 1.0))[0].tolist()
    assert chi_square_p_value(bins, [STATS_DRAWS / 10] * 10) > 1e-3


def test_chi_square_helper_rejects_a_skewed_sample() -> None:
    assert chi_square_p_value([100, 100, 100, 100], [100.0] * 4) == pytest.approx(1.0)
    assert chi_square_p_value([160, 80, 80, 80], [100.0] * 4) < 1e-3


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
    full = out["input_ids"][0]
    assert cut["input_ids"][0] == full[-8:]  # exactly the last 8 tokens: what goes is the question's start


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
