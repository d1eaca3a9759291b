"""Greedy decoding of many prompts in left-padded batches: the loop under the birthplace answers (ours and the
course's character setting)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["greedy_completions"]


@torch.no_grad()
def greedy_completions(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[list[int]],
    block_size: int,
    max_new_tokens: int,
    batch_size: int = 64,
    **generate_kwargs: Any,
) -> list[list[int]]:
    """The tokens greedily generated after each prompt (ids), at most `max_new_tokens` and never past `block_size`.

    Batches are left-padded (the model derives positions from the attention mask), as the text-generation
    pipeline does, so that every prompt ends right where generation starts. `generate_kwargs` go to `generate`
    (e.g. `eos_token_id` stop ids, `min_new_tokens`); the tokenizer's padding side is restored afterwards.
    """
    model.eval()
    padding_side, tokenizer.padding_side = tokenizer.padding_side, "left"
    completions = []
    try:
        for start in range(0, len(prompts), batch_size):
            batch = tokenizer.pad({"input_ids": list(prompts[start : start + batch_size])}, return_tensors="pt")
            batch = batch.to(model.device)
            width = batch["input_ids"].shape[1]
            new_tokens = max(1, min(max_new_tokens, block_size - width))
            kwargs = dict(generate_kwargs)
            if "min_new_tokens" in kwargs:
                kwargs["min_new_tokens"] = min(kwargs["min_new_tokens"], new_tokens)
            generated = model.generate(
                **batch, do_sample=False, max_new_tokens=new_tokens, pad_token_id=tokenizer.pad_token_id, **kwargs
            )
            completions.extend(generated[:, width:].tolist())
    finally:
        tokenizer.padding_side = padding_side
    return completions
