"""Greedy decoding of the birthplace answers, for every QA format (`hf_models.tasks.qa_formats`): left-padded batches
of prompts (`greedy_completions`), the answer after `question ⁇` up to the next `⁇` or `</s>` (our BPE), a model's
recitation after a person's title (recite, then answer), and the course's 32 characters read between the first and
second `⁇` (CS224N's characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..data import check_characters, encode_birthplace_qa
from ..tokenization.courses import CS224N_MASK_CHAR

__all__ = [
    "CS224N_ANSWER_CHARS",
    "answer_between_masks",
    "answers_after",
    "greedy_completions",
    "predict_answers",
    "predict_char_answers",
    "recitations_after_titles",
]

CS224N_ANSWER_CHARS = 32  # the course's evaluation samples 32 characters


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


def predict_answers(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    questions: list[str],
    block_size: int | None = None,
    batch_size: int = 64,
    max_new_tokens: int = 16,
) -> list[str]:
    """Greedy-decode the answer to each question: generate after `question ⁇` until `⁇` or `</s>`."""
    block_size = block_size or model.config.max_position_embeddings
    prompts = encode_birthplace_qa({"question": questions}, tokenizer, block_size, prompt_only=True)["input_ids"]
    return answers_after(model, tokenizer, prompts, block_size, batch_size, max_new_tokens)


def answers_after(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: list[list[int]],
    block_size: int,
    batch_size: int,
    max_new_tokens: int,
) -> list[str]:
    """The text greedily generated after each prompt, up to the first `⁇` or `</s>`, stripped."""
    stop_ids = [tokenizer.sep_token_id, tokenizer.eos_token_id]
    answers = []
    for row in greedy_completions(
        model, tokenizer, prompts, block_size, max_new_tokens, batch_size, eos_token_id=stop_ids
    ):
        stop = next((i for i, token in enumerate(row) if token in stop_ids), len(row))
        answers.append(tokenizer.decode(row[:stop], skip_special_tokens=True).strip())
    return answers


def recitations_after_titles(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    titles: list[list[int]],
    recite_tokens: int,
    batch_size: int,
) -> list[list[int]]:
    """Each title (`Name.`, ids) followed by what the model greedily writes after it, at position 0 as in
    pretraining: at most `recite_tokens` tokens in all, up to the model's `</s>` (left out)."""
    titles = [title[:recite_tokens] for title in titles]
    completions = greedy_completions(
        model,
        tokenizer,
        titles,
        model.config.max_position_embeddings,
        recite_tokens,
        batch_size,
        eos_token_id=tokenizer.eos_token_id,
    )
    recitations = []
    for title, completion in zip(titles, completions, strict=True):
        if tokenizer.eos_token_id in completion:
            completion = completion[: completion.index(tokenizer.eos_token_id)]
        recitations.append((title + completion)[:recite_tokens])
    return recitations


def answer_between_masks(completion: str) -> str:
    """The course's `completion.split('⁇')[1]`: the text between the first and second `⁇` ('' when absent)."""
    parts = completion.split(CS224N_MASK_CHAR)
    return parts[1] if len(parts) > 1 else ""


def predict_char_answers(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    questions: list[str],
    block_size: int | None = None,
    batch_size: int = 64,
    max_new_chars: int = CS224N_ANSWER_CHARS,
    where=None,
) -> list[str]:
    """Greedy-decode `max_new_chars` characters after `question⁇` (left-padded batches, no early stop), then keep
    the text between the first and second `⁇` of question + completion. A character outside the vocabulary is an
    error naming it and where it is (`where(i)` names question i, e.g. its `file:line`)."""
    config = model.config
    # A converted course synthesizer spans ℓ = block - 1 positions only.
    usable = config.max_position_embeddings if config.attention_type == "vanilla" else config.synthesizer_length
    block_size = min(block_size or usable, usable)
    check_characters(questions, tokenizer, "questions", where)
    prompts = [ids[-(block_size - 1) :] for ids in tokenizer([q + CS224N_MASK_CHAR for q in questions])["input_ids"]]
    # min_new_tokens: never stop early, as the course samples a fixed number of characters.
    completions = greedy_completions(
        model, tokenizer, prompts, block_size, max_new_chars, batch_size, min_new_tokens=max_new_chars
    )
    return [answer_between_masks(tokenizer.decode(p + c)) for p, c in zip(prompts, completions, strict=True)]
