"""Tokenization and LM-block packing with `datasets.map`, following transformers' `run_clm.py`.

The map functions are module-level and receive their arguments through `fn_kwargs`, so that `datasets`
can pickle them for `num_proc` and hash them into stable fingerprints: a second run with the same
data, tokenizer and block size reuses the cached Arrow files.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import Any

from datasets import Dataset, DatasetDict
from transformers import PreTrainedTokenizerBase


def _column_names(dataset: Dataset | DatasetDict) -> list[str]:
    if isinstance(dataset, DatasetDict):
        return list(next(iter(dataset.values())).column_names)
    return list(dataset.column_names)


def _tokenize_batch(
    batch: dict[str, list],
    tokenizer: PreTrainedTokenizerBase,
    text_column: str,
    eos_token_id: int | None,
) -> dict[str, list[list[int]]]:
    # verbose=False: documents longer than model_max_length are expected here (they are cut into blocks
    # afterwards), so the "sequence too long" warning would be noise.
    out = tokenizer(batch[text_column], add_special_tokens=False, return_attention_mask=False, verbose=False)
    ids = out["input_ids"]
    if eos_token_id is not None:
        # `</s>` between documents, so that a block spanning two documents shows where one ends.
        ids = [seq + [eos_token_id] for seq in ids]
    return {"input_ids": ids}


def group_texts(examples: dict[str, list[list[int]]], block_size: int) -> dict[str, list[list[int]]]:
    """Concatenate a batch of tokenized documents and cut it into blocks of `block_size` (run_clm.py).

    The remainder shorter than a block at the end of each map batch is dropped, as in `run_clm.py`.
    """
    concatenated = list(chain.from_iterable(examples["input_ids"]))
    total_length = (len(concatenated) // block_size) * block_size
    blocks = [concatenated[i : i + block_size] for i in range(0, total_length, block_size)]
    return {"input_ids": blocks, "attention_mask": [[1] * block_size for _ in blocks]}


def tokenize_documents(
    dataset: Dataset | DatasetDict,
    tokenizer: PreTrainedTokenizerBase,
    text_column: str = "text",
    num_proc: int | None = None,
    eos_token_id: int | None = None,
) -> Dataset | DatasetDict:
    """Tokenize each document (no special token added; `eos_token_id` after it when given) into an `input_ids`
    column, one row per document.

    This is the input of `SpanCorruptionCollator`, which draws a new corruption of each document at
    every batch.
    """
    return dataset.map(
        _tokenize_batch,
        batched=True,
        num_proc=num_proc,
        remove_columns=_column_names(dataset),
        fn_kwargs={"tokenizer": tokenizer, "text_column": text_column, "eos_token_id": eos_token_id},
        desc="Tokenizing documents",
    )


def tokenize_and_group(
    dataset: Dataset | DatasetDict,
    tokenizer: PreTrainedTokenizerBase,
    block_size: int,
    text_column: str = "text",
    num_proc: int | None = None,
    add_eos: bool = True,
    batch_size: int = 1000,
) -> Dataset | DatasetDict:
    """Tokenize a text dataset and pack it into LM blocks of exactly `block_size` tokens.

    Each document is followed by `</s>` (when `add_eos`); documents are concatenated and cut into blocks
    as in `run_clm.py`. The result has `input_ids` and `attention_mask` (all ones) and no `labels`:
    `DataCollatorForLanguageModeling` builds them (`mlm=False` for causal LM, `mlm=True` for MLM).
    """
    if block_size < 1:
        raise ValueError(f"block_size must be positive, got {block_size}")
    if add_eos and tokenizer.eos_token_id is None:
        raise ValueError("add_eos=True needs a tokenizer with an eos_token")
    tokenized = tokenize_documents(
        dataset, tokenizer, text_column, num_proc, tokenizer.eos_token_id if add_eos else None
    )
    return tokenized.map(
        group_texts,
        batched=True,
        batch_size=batch_size,
        num_proc=num_proc,
        fn_kwargs={"block_size": block_size},
        desc=f"Grouping texts in blocks of {block_size}",
    )


class TrimPaddingCollator:
    """Wrap a collator whose batches are right-padded to a fixed length (such as span corruption's
    `block_size`) and cut the columns that are padding in every row.

    For a causal model this changes no real token's output (they never attend to later positions), and
    on short documents it saves most of the compute spent on padding.
    """

    def __init__(self, collator: Callable[[list[dict]], dict[str, Any]]) -> None:
        self.collator = collator

    def __call__(self, examples: list[dict]) -> dict[str, Any]:
        batch = self.collator(examples)
        mask = batch.get("attention_mask")
        if mask is None or mask.ndim != 2:
            return batch
        used = mask.any(dim=0).nonzero()
        length = int(used.max()) + 1 if len(used) else 1
        return {
            k: (v[:, :length] if getattr(v, "ndim", 0) == 2 and v.shape == mask.shape else v) for k, v in batch.items()
        }
