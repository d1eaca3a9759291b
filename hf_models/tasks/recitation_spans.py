"""Answer by choosing a span of the recitation (`--answer_from_recitation`).

A reciting model writes the person's paragraph opening, then answers. Generating the answer freely, it often
answers from memory of the name, with a place that is not in its recitation, or a garbled one. Here the answer is
instead the span of the recitation (a run of words inside one clause, shaped like the training answers: no longer
than the longest, capitalized if they all are) to which the model gives the highest likelihood as the answer,
closing `⁇ </s>` included. This is extractive QA with the model as its own scorer: it reads nothing but the model's
recitation and the question.
"""

from __future__ import annotations

import re

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..data import IGNORE_INDEX, encode_reciting_qa

__all__ = ["answer_log_likelihoods", "recitation_spans"]

_CLAUSE_BREAK = re.compile(r"[,;:()\[\]\"]")
_WORD = re.compile(r"[^\W\d_][\w'.\-]*")  # starts with a letter; keeps "St." and "Saint-Denis" whole


def recitation_spans(text: str, max_words: int, capitalized: bool = False) -> list[str]:
    """The candidate answers in `text`: every run of 1 to `max_words` words inside one clause (`capitalized`: only
    those that start with a capital letter), a trailing period dropped, each once, in order of first appearance."""
    spans: dict[str, None] = {}
    for clause in _CLAUSE_BREAK.split(text):
        words = _WORD.findall(clause)
        for start in range(len(words)):
            if capitalized and not words[start][0].isupper():
                continue
            for length in range(1, max_words + 1):
                if start + length <= len(words):
                    span = " ".join(words[start : start + length]).rstrip(".")
                    if span:
                        spans.setdefault(span)
    return list(spans)


@torch.no_grad()
def answer_log_likelihoods(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    questions: list[str],
    answers: list[str],
    recitations: list[list[int]],
    block_size: int,
    batch_size: int = 64,
) -> list[float]:
    """log p(answer ⁇ </s> | recitation </s> question ⁇) for each (question, answer, recitation) triple: the sum over
    the tokens the QA loss trains on. Batches are right-padded and grouped by length."""
    if not questions:
        return []
    rows = encode_reciting_qa({"question": questions, "answer": answers}, tokenizer, block_size, recitations)
    order = sorted(range(len(questions)), key=lambda i: len(rows["input_ids"][i]))
    scores = [0.0] * len(questions)
    model.eval()
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        width = max(len(rows["input_ids"][i]) for i in batch)
        pad = tokenizer.pad_token_id

        def padded(key: str, value: int, batch: list[int] = batch, width: int = width) -> torch.Tensor:
            return torch.tensor([rows[key][i] + [value] * (width - len(rows[key][i])) for i in batch])

        input_ids, attention_mask = padded("input_ids", pad), padded("attention_mask", 0)
        labels = padded("labels", IGNORE_INDEX)[:, 1:].to(model.device)
        logits = model(input_ids=input_ids.to(model.device), attention_mask=attention_mask.to(model.device)).logits
        log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        picked = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        totals = (picked * (labels != IGNORE_INDEX)).sum(dim=-1).tolist()
        for i, total in zip(batch, totals, strict=True):
            scores[i] = total
    return scores
