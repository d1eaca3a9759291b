"""Pretraining and finetuning objectives on token ids: CS224N span corruption and birthplace QA.

Causal LM and MLM use transformers' `DataCollatorForLanguageModeling` (`mlm=False` / `mlm=True`) on
the blocks of `tokenize_and_group`; classification uses `DataCollatorWithPadding`. Only span corruption
needs a collator of its own, because it draws a new random corruption of each document at every batch
(as CS224N's `CharCorruptionDataset.__getitem__` does).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from datasets import Dataset
from transformers import PreTrainedTokenizerBase

from ..tokenization.courses import VocabularyError, unknown_characters

IGNORE_INDEX = -100  # label value that transformers' losses ignore
_CORRUPTED_KEYS = ("input_ids", "attention_mask", "labels")
_QUESTION_PREFIX, _QUESTION_SUFFIX = "Where was ", " born?"


def _randint(rng: random.Random | np.random.Generator | None, low: int, high: int) -> int:
    """Uniform integer in [low, high], both ends included, from either kind of generator."""
    if rng is None:
        return random.randint(low, high)
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(low, high + 1))
    return rng.randint(low, high)


def span_corruption_max_length(block_size: int) -> int:
    """Longest truncated document: ⌊7/8·block⌋, and at most block - 3 so that the three separators fit."""
    return min(7 * block_size // 8, block_size - 3)


def span_corrupt(
    ids: Sequence[int],
    block_size: int,
    sep_id: int,
    pad_id: int,
    rng: random.Random | np.random.Generator | None = None,
) -> dict[str, list[int]]:
    """CS224N span corruption on token ids.

    1. Truncate the document to a random length in [4, ⌊7/8·block⌋] (or to the whole document when it
       is shorter).
    2. Cut out a span whose length is uniform in [1, m], with m ≈ length/2 - 1 (randomly rounded), so
       that it averages a quarter of the truncated length; its start is uniform.
    3. Emit `prefix SEP suffix SEP masked SEP`, then pad to `block_size`.

    Returns `input_ids`, `attention_mask` (0 on pads) and `labels`: the input ids with -100 on pads.
    The labels are not shifted, as transformers' causal-LM losses shift them.
    """
    max_len = span_corruption_max_length(block_size)
    if max_len < 4:
        raise ValueError(f"block_size={block_size} is too small for span corruption (needs at least 7)")
    length = min(_randint(rng, 4, max_len), len(ids))
    truncated = list(ids[:length])
    if length > 0:
        # Uniform in [1, m] has mean (m + 1) / 2; m = length/2 - 1 gives mean length/4. For odd lengths
        # m is rounded down or up with probability 1/2 each, which keeps the mean at exactly length/4.
        m = max(1, (length - 2 + _randint(rng, 0, 1)) // 2)
        span = _randint(rng, 1, m)
        start = _randint(rng, 0, length - span)
    else:
        span = start = 0
    prefix, masked, suffix = truncated[:start], truncated[start : start + span], truncated[start + span :]
    input_ids = prefix + [sep_id] + suffix + [sep_id] + masked + [sep_id]
    n_pad = block_size - len(input_ids)
    return {
        "input_ids": input_ids + [pad_id] * n_pad,
        "attention_mask": [1] * len(input_ids) + [0] * n_pad,
        "labels": input_ids + [IGNORE_INDEX] * n_pad,
    }


@dataclass
class SpanCorruptionCollator:
    """Trainer data collator: each example is a tokenized document (`input_ids`); every call draws a new
    span corruption of it (`span_corrupt`) and returns tensors of shape `(batch, block_size)`.

    With `seed`, the sequence of corruptions is reproducible. In DataLoader worker processes, each worker
    reseeds its own generator from `seed` and `torch.initial_seed()`, which torch makes distinct for every
    worker and draws anew at every epoch (from the main process's seeded generator): workers neither
    repeat each other's draws nor replay the same draws every epoch.

    Examples that already carry `labels` were corrupted once and for all (`corrupt_for_evaluation`): they
    are stacked as they are, so that evaluation sees the same corruptions every time and draws nothing
    from the training stream.
    """

    tokenizer: PreTrainedTokenizerBase
    block_size: int
    seed: int | None = None
    _rng: random.Random = field(init=False, repr=False)
    _worker_seed: int | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        missing = [name for name in ("sep_token_id", "pad_token_id") if getattr(self.tokenizer, name, None) is None]
        if missing:
            raise ValueError(f"span corruption needs a tokenizer with {' and '.join(missing)}")
        if span_corruption_max_length(self.block_size) < 4:  # fail at construction, not at the first batch
            raise ValueError(f"block_size={self.block_size} is too small for span corruption (needs at least 7)")
        self._rng = random.Random(self.seed)

    def _generator(self) -> random.Random:
        if torch.utils.data.get_worker_info() is not None:
            # A worker process holds a copy of this collator made at the start of the epoch; without a
            # reseed every worker of every epoch would replay the main process's stream.
            worker_seed = torch.initial_seed()
            if worker_seed != self._worker_seed:
                self._worker_seed = worker_seed
                self._rng = random.Random(f"{self.seed}-{worker_seed}")
        return self._rng

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        if all("labels" in ex for ex in examples):  # a fixed evaluation set, corrupted already
            return {key: torch.tensor([ex[key] for ex in examples], dtype=torch.long) for key in _CORRUPTED_KEYS}
        rng = self._generator()
        rows = [
            span_corrupt(
                ex["input_ids"], self.block_size, self.tokenizer.sep_token_id, self.tokenizer.pad_token_id, rng
            )
            for ex in examples
        ]
        return {key: torch.tensor([row[key] for row in rows], dtype=torch.long) for key in rows[0]}


def corrupt_for_evaluation(
    dataset: Dataset, tokenizer: PreTrainedTokenizerBase, block_size: int, seed: int = 0
) -> Dataset:
    """Span-corrupt every document once, with a generator seeded by `seed` and the row's index, for evaluation.

    Evaluating on these fixed rows gives the same loss every time (whatever the batch size, the number of
    workers or the training progress) and draws nothing from the training collator's generator;
    `SpanCorruptionCollator` stacks such rows as they are.
    """
    sep_id, pad_id = tokenizer.sep_token_id, tokenizer.pad_token_id
    if sep_id is None or pad_id is None:
        raise ValueError("span corruption needs a tokenizer with sep_token_id and pad_token_id")

    def corrupt(example: dict[str, Any], index: int) -> dict[str, list[int]]:
        return span_corrupt(example["input_ids"], block_size, sep_id, pad_id, random.Random(f"{seed}-{index}"))

    other_columns = [name for name in dataset.column_names if name != "input_ids"]
    return dataset.map(
        corrupt, with_indices=True, remove_columns=other_columns, desc="Span-corrupting the evaluation set"
    )


def encode_birthplace_qa(
    examples: dict[str, list[str]],
    tokenizer: PreTrainedTokenizerBase,
    block_size: int,
    answer_prefix: str = " ",
    prompt_only: bool = False,
) -> dict[str, list[list[int]]]:
    """Batched `datasets.map` function: `question SEP answer SEP eos` for finetuning on birthplace QA.

    `labels` are -100 on the question and the first SEP, so that the loss falls on the answer (and the
    closing `SEP eos`, which teach the model to stop). Sequences are not padded: use
    `DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)`, which pads labels with -100.

    The answer is encoded with `answer_prefix` (a space by default) so that its tokens are the ones the
    place name has inside a sentence of `wiki.txt` (" Berlin", not "Berlin"); strip the decoded answer.

    Without an `answer` column (the test split), or with `prompt_only=True`, only the prompt
    `question SEP` is emitted, with all labels -100: the input of `generate`.

    Over-long examples lose the start of the question first, so that the answer is kept.
    """
    sep, eos = tokenizer.sep_token_id, tokenizer.eos_token_id
    if sep is None or eos is None:
        raise ValueError("birthplace QA needs a tokenizer with sep_token and eos_token")
    questions = tokenizer(examples["question"], add_special_tokens=False, verbose=False)["input_ids"]
    answers_text = examples.get("answer")
    if prompt_only or answers_text is None:
        answers = None
    else:
        answers = tokenizer([answer_prefix + a for a in answers_text], add_special_tokens=False, verbose=False)[
            "input_ids"
        ]
    out: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for i, question in enumerate(questions):
        target = [] if answers is None else answers[i] + [sep, eos]
        overflow = len(question) + 1 + len(target) - block_size
        if overflow > 0:
            question = question[min(overflow, len(question)) :]
        prompt = question + [sep]
        input_ids = (prompt + target)[:block_size]
        labels = ([IGNORE_INDEX] * len(prompt) + target)[:block_size]
        out["input_ids"].append(input_ids)
        out["attention_mask"].append([1] * len(input_ids))
        out["labels"].append(labels)
    return out


def check_characters(texts: list[str], tokenizer: PreTrainedTokenizerBase, what: str, where=None) -> None:
    """CS224N's `stoi` has no unknown character: name the first one missing, where it is (`where(i)`, e.g.
    `file:line`, or `what` and the text's number) and how many others, instead of failing inside tokenizers."""
    message = unknown_characters(texts, tokenizer.get_vocab(), what, where)
    if message is not None:
        raise VocabularyError(message)


def encode_char_qa(
    examples: dict[str, list[str]], tokenizer: PreTrainedTokenizerBase, block_size: int
) -> dict[str, list[list[int]]]:
    """Batched `datasets.map` function: CS224N's `NameDataset` rows on character ids (`--course_vocabulary`).

    `input_ids` is `question⁇answer⁇`; `labels` are -100 on the question only, so that (after the causal shift) the
    model learns to emit `⁇`, the answer and the closing `⁇`, as the course's targets do. Rows are not padded (the
    collator pads with `□` and -100). A row longer than `block_size` loses the start of its question.
    """
    sep = tokenizer.sep_token_id
    check_characters(examples["question"] + examples["answer"], tokenizer, "birthplace QA rows")
    questions = tokenizer(examples["question"], add_special_tokens=False)["input_ids"]
    answers = tokenizer(examples["answer"], add_special_tokens=False)["input_ids"]
    out: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for question, answer in zip(questions, answers, strict=True):
        target = [sep, *answer, sep]
        question = question[max(0, len(question) + len(target) - block_size) :]
        out["input_ids"].append(question + target)
        out["attention_mask"].append([1] * (len(question) + len(target)))
        out["labels"].append([IGNORE_INDEX] * len(question) + target)
    return out


def encode_openings(
    examples: dict[str, list[str]], tokenizer: PreTrainedTokenizerBase, max_tokens: int
) -> dict[str, list[list[int]]]:
    """Batched `datasets.map` function: each document cut to its first `max_tokens` tokens, then `eos`, as a
    causal-LM example with the loss on every token.

    CS224N's span corruption only ever sees a random prefix of at most ⌊7/8·block⌋ characters of each
    `wiki.txt` paragraph, which is where the birth fact is. Training on the openings alone spends every token
    on that part (see BENCHMARKS.md). Sequences are not padded: use
    `DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)`.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("paragraph openings need a tokenizer with an eos_token")
    ids = tokenizer(examples["text"], add_special_tokens=False, verbose=False)["input_ids"]
    input_ids = [seq[:max_tokens] + [eos] for seq in ids]
    return {"input_ids": input_ids, "attention_mask": [[1] * len(x) for x in input_ids], "labels": input_ids}


def person_name(question: str) -> str | None:
    """The NAME of 'Where was NAME born?' (None for a question of another shape)."""
    question = question.strip()
    if question.startswith(_QUESTION_PREFIX) and question.endswith(_QUESTION_SUFFIX):
        return question[len(_QUESTION_PREFIX) : -len(_QUESTION_SUFFIX)].strip() or None
    return None


def encode_reciting_qa(
    examples: dict[str, list[str]],
    tokenizer: PreTrainedTokenizerBase,
    block_size: int,
    recitations: list[list[int]],
    answer_prefix: str = " ",
    prompt_only: bool = False,
) -> dict[str, list[list[int]]]:
    """Batched QA rows that answer after a recitation: `recitation </s> question ⁇ answer ⁇ </s>`.

    `recitations[i]` are the ids of what precedes question i: in training, the opening of the person's `wiki.txt`
    paragraph (what `encode_openings` trains on); at evaluation, what the model itself generated from the
    person's name. The loss falls on the answer (and the closing `⁇ </s>`), as in `encode_birthplace_qa`, so the
    model learns to read the answer from its own recitation. An over-long row loses the end of its recitation
    first, then the start of its question.
    """
    if len(recitations) != len(examples["question"]):
        raise ValueError(f"{len(recitations)} recitations for {len(examples['question'])} questions")
    plain = encode_birthplace_qa(examples, tokenizer, block_size, answer_prefix, prompt_only)  # checks sep and eos
    eos = tokenizer.eos_token_id
    out: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for recitation, input_ids, labels in zip(recitations, plain["input_ids"], plain["labels"], strict=True):
        room = max(0, block_size - len(input_ids) - 1)
        prefix = [*recitation[:room], eos]
        input_ids = (prefix + input_ids)[:block_size]
        out["input_ids"].append(input_ids)
        out["attention_mask"].append([1] * len(input_ids))
        out["labels"].append(([IGNORE_INDEX] * len(prefix) + labels)[:block_size])
    return out
