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
from transformers import DataCollatorForSeq2Seq, PreTrainedModel, PreTrainedTokenizerBase

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
    the tokens the QA loss trains on. Batches are grouped by length and padded as in training
    (`DataCollatorForSeq2Seq`: labels with `IGNORE_INDEX`)."""
    if not questions:
        return []
    rows = encode_reciting_qa({"question": questions, "answer": answers}, tokenizer, block_size, recitations)
    rows = [dict(zip(rows, values, strict=True)) for values in zip(*rows.values(), strict=True)]
    collate = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE_INDEX)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["input_ids"]))
    scores = [0.0] * len(rows)
    model.eval()
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        inputs = collate([rows[i] for i in batch]).to(model.device)
        labels = inputs.pop("labels")[:, 1:]
        log_probs = torch.log_softmax(model(**inputs).logits[:, :-1].float(), dim=-1)
        picked = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        for i, total in zip(batch, (picked * (labels != IGNORE_INDEX)).sum(dim=-1).tolist(), strict=True):
            scores[i] = total
    return scores
