"""The birthplace QA formats, each one object that encodes the training rows and predicts the answers, so that
`hf_models.tasks.birthplace` chooses between them once, and their greedy decoding.

They are a module of their own, beside `birthplace`, because the app and `evaluate` answer questions with them
without the training stack that `birthplace` imports (Trainer, collators, the run's end); merged, the task's module
would hold three steps and three formats in one file of over a thousand lines.

- `BPEQAFormat` (our BPE): `question ⁇ answer ⁇ </s>` with the loss on the answer; answers generated after
  `question ⁇` until the next `⁇` (or `</s>`).
- `RecitingQAFormat` (our BPE, `--recite_tokens N`): recite, then answer. The model first writes the opening of
  the person's paragraph from the name alone (the first N tokens, as the `openings` pretraining saw them), then
  answers `recitation </s> question ⁇`. Training rows put the person's real paragraph opening there; the answer is
  read from the context, where the pretrained model can write the fact, instead of from the question alone. With
  `--answer_from_recitation`, the answer is instead the span of the recitation (a run of words inside one clause,
  shaped like the training answers) to which the model gives the highest likelihood as the answer, closing
  `⁇ </s>` included: extractive QA with the model as its own scorer. Generating freely, a reciting model often
  answers from memory of the name, with a place that is not in its recitation, or a garbled one.
- `CourseQAFormat` (CS224N's character vocabulary, `pretrain --course_vocabulary`): the course's `NameDataset` rows
  `question⁇answer⁇`; 32 characters greedily generated after `question⁇`, the answer read between the first and
  second `⁇` of the completion, as the course's `run.py` does.

All decode greedily, in left-padded batches (`greedy_completions`). How a trained model of our BPE answers (reciting
first or not, the answer generated or chosen from the recitation) is chosen when it is trained and kept in its run
record alone; `answering_format` reads it there for `evaluate` and the app.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from huggingface_hub import hf_hub_download
from huggingface_hub.errors import EntryNotFoundError, HFValidationError
from transformers import DataCollatorForSeq2Seq, PreTrainedModel, PreTrainedTokenizerBase

from ..data import (
    IGNORE_INDEX,
    check_characters,
    encode_birthplace_qa,
    encode_char_qa,
    encode_reciting_qa,
    person_name,
)
from ..run_record import RECORD_FILE, RunRecord, read_record
from ..textio import UsageError
from ..tokenization.courses import CS224N_MASK_CHAR, is_cs224n_char_tokenizer

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------------
# Greedy decoding
# --------------------------------------------------------------------------------------------------
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


def usable_length(config) -> int:
    """The positions a model attends over: a synthesizer spans ℓ key positions only (a converted course synthesizer,
    ℓ = block - 1)."""
    return config.max_position_embeddings if config.attention_type == "vanilla" else config.synthesizer_length


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
    usable = usable_length(model.config)
    block_size = min(block_size or usable, usable)
    check_characters(questions, tokenizer, "questions", where)
    prompts = [ids[-(block_size - 1) :] for ids in tokenizer([q + CS224N_MASK_CHAR for q in questions])["input_ids"]]
    # min_new_tokens: never stop early, as the course samples a fixed number of characters.
    completions = greedy_completions(
        model, tokenizer, prompts, block_size, max_new_chars, batch_size, min_new_tokens=max_new_chars
    )
    return [answer_between_masks(tokenizer.decode(p + c)) for p, c in zip(prompts, completions, strict=True)]


# --------------------------------------------------------------------------------------------------
# Answers chosen among the recitation's spans (`--answer_from_recitation`)
# --------------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------------
# The formats
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BPEQAFormat:
    """Our BPE: `question ⁇ answer ⁇ </s>`, answers of at most `max_new_tokens` tokens."""

    max_new_tokens: int = 16

    def encode(self, examples: dict[str, list[str]], tokenizer, block_size: int) -> dict[str, list[list[int]]]:
        return encode_birthplace_qa(examples, tokenizer, block_size)

    def predict(self, model, tokenizer, questions: list[str], block_size: int | None, batch_size: int, where=None):
        """`where` (the questions' `file:line`) is for errors about characters, which byte-level BPE never has."""
        return predict_answers(model, tokenizer, questions, block_size, batch_size, self.max_new_tokens)


@dataclass(frozen=True)
class CourseQAFormat:
    """CS224N's characters: `question⁇answer⁇`, answers read from 32 generated characters."""

    def encode(self, examples: dict[str, list[str]], tokenizer, block_size: int) -> dict[str, list[list[int]]]:
        return encode_char_qa(examples, tokenizer, block_size)

    def predict(self, model, tokenizer, questions: list[str], block_size: int | None, batch_size: int, where=None):
        return predict_char_answers(model, tokenizer, questions, block_size, batch_size, where=where)


@dataclass(frozen=True)
class RecitingQAFormat:
    """Our BPE, recite then answer: `recitation </s> question ⁇ answer ⁇ </s>`.

    `recite_tokens` is the length of a recitation, title included (the pretraining's `--opening_tokens`).
    `paragraphs` (wiki.txt) give the training rows their real openings; a person without a paragraph gets the
    title alone, `Name.`, and a question of another shape than 'Where was NAME born?' no recitation.
    `answer_words` (`--answer_from_recitation`):
    0 generates the answer; N > 0 chooses it among the recitation's spans of at most N words (`recitation_spans`;
    `capitalized_answers`: only those that start with a capital letter).
    """

    recite_tokens: int
    paragraphs: tuple[str, ...] = ()
    max_new_tokens: int = 16
    answer_words: int = 0
    capitalized_answers: bool = False

    def __post_init__(self) -> None:
        if self.recite_tokens < 1:
            raise ValueError(f"recite_tokens must be positive, got {self.recite_tokens}")

    def _paragraphs(self, questions: list[str]) -> list[str]:
        """Each person's paragraph (the one that starts with `Name.`), the title alone without one."""
        by_first_word: dict[str, list[str]] = {}
        for paragraph in self.paragraphs:
            by_first_word.setdefault(paragraph.split(" ", 1)[0], []).append(paragraph)
        texts = []
        for question in questions:
            name = person_name(question)
            if name is None:
                texts.append("")
                continue
            title = f"{name}."
            candidates = by_first_word.get(name.split(" ", 1)[0], [])
            texts.append(next((p for p in candidates if p.startswith(title)), title))
        return texts

    def openings(self, questions: list[str], tokenizer) -> list[list[int]]:
        """The first `recite_tokens` tokens of each person's paragraph (the one that starts with `Name.`)."""
        ids = tokenizer(self._paragraphs(questions), add_special_tokens=False, verbose=False)["input_ids"]
        return [row[: self.recite_tokens] for row in ids]

    def encode(self, examples: dict[str, list[str]], tokenizer, block_size: int) -> dict[str, list[list[int]]]:
        """Each row after its person's real opening (`openings`)."""
        recitations = self.openings(list(examples["question"]), tokenizer)
        return encode_reciting_qa(examples, tokenizer, block_size, recitations)

    def recite(self, model, tokenizer, questions: list[str], batch_size: int) -> list[list[int]]:
        """Each person's title `Name.` followed by what the model greedily writes after it (at position 0, as in
        pretraining): at most `recite_tokens` tokens in all, up to the model's `</s>`."""
        names = [person_name(question) for question in questions]
        if unnamed := sum(name is None for name in names):
            logger.warning(f"{unnamed} question(s) are not 'Where was NAME born?': answered without a recitation")
        named = [i for i, name in enumerate(names) if name is not None]
        if not named:
            return [[] for _ in questions]
        titles = tokenizer([f"{names[i]}." for i in named], add_special_tokens=False)["input_ids"]
        titles = [title[: self.recite_tokens] for title in titles]
        eos = tokenizer.eos_token_id
        max_length = model.config.max_position_embeddings
        completions = greedy_completions(
            model, tokenizer, titles, max_length, self.recite_tokens, batch_size, eos_token_id=eos
        )
        recitations: list[list[int]] = [[] for _ in questions]
        for i, title, completion in zip(named, titles, completions, strict=True):
            if eos in completion:  # the model's </s> ends the recitation, and is left out
                completion = completion[: completion.index(eos)]
            recitations[i] = (title + completion)[: self.recite_tokens]
        return recitations

    def predict(self, model, tokenizer, questions: list[str], block_size: int | None, batch_size: int, where=None):
        block_size = block_size or model.config.max_position_embeddings
        recitations = self.recite(model, tokenizer, questions, batch_size)
        answers = self._span_answers(model, tokenizer, questions, recitations, block_size, batch_size)
        generate = [i for i, answer in enumerate(answers) if answer is None]
        if not generate:
            return answers
        prompts = encode_reciting_qa(
            {"question": [questions[i] for i in generate]},
            tokenizer,
            block_size,
            [recitations[i] for i in generate],
            prompt_only=True,
        )
        generated = answers_after(model, tokenizer, prompts["input_ids"], block_size, batch_size, self.max_new_tokens)
        for i, answer in zip(generate, generated, strict=True):
            answers[i] = answer
        return answers

    def _span_answers(self, model, tokenizer, questions, recitations, block_size: int, batch_size: int) -> list:
        """With `answer_words`: for each question, the span of its recitation that the model scores highest as the
        answer; None where the recitation has no span (or without `answer_words`): that answer is generated."""
        if not self.answer_words:
            return [None] * len(questions)
        texts = [tokenizer.decode(ids, skip_special_tokens=True) for ids in recitations]
        spans = [recitation_spans(text, self.answer_words, self.capitalized_answers) for text in texts]
        owners = [i for i, candidates in enumerate(spans) for _ in candidates]
        scores = answer_log_likelihoods(
            model,
            tokenizer,
            [questions[i] for i in owners],
            [span for candidates in spans for span in candidates],
            [recitations[i] for i in owners],
            block_size,
            batch_size,
        )
        best: list = [None] * len(questions)
        position = 0
        for i, candidates in enumerate(spans):
            if candidates:
                ranked = scores[position : position + len(candidates)]
                best[i] = candidates[max(range(len(candidates)), key=ranked.__getitem__)]
                position += len(candidates)
        return best


# The format a birthplace run encodes its rows in and answers with.
QAFormat = BPEQAFormat | CourseQAFormat | RecitingQAFormat


# --------------------------------------------------------------------------------------------------
# How a trained model answers: chosen by its training, kept in its run record
# --------------------------------------------------------------------------------------------------
def answer_shape(train_answers: Sequence[str]) -> dict[str, Any]:
    """The shape an answer chosen from the recitation takes (`--answer_from_recitation`), that of the training
    answers: the most words, and whether all start with a capital letter."""
    return {
        "answer_words": max((len(answer.split()) for answer in train_answers), default=0),
        "capitalized_answers": bool(train_answers) and all(answer[:1].isupper() for answer in train_answers),
    }


def _run_record(model_name_or_path: str | os.PathLike) -> RunRecord | None:
    """The run record of a run folder, or of a Hub model that ships one; None where there is none."""
    if os.path.isdir(model_name_or_path):
        return read_record(model_name_or_path)
    try:
        path = hf_hub_download(str(model_name_or_path), RECORD_FILE)
    except (OSError, EntryNotFoundError, HFValidationError):  # offline, no such repository or file
        return None
    return read_record(Path(path).parent)


def answer_format_of(model_name_or_path: str | os.PathLike) -> dict[str, Any]:
    """How a birthplace model of our BPE answers, as its training (`pretrain` or `finetune`) kept it in its run
    record: `recite_tokens` (0: directly; N: after an N-token recitation), `answer_words` (0: the answer is
    generated; W: it is the best-scored span of at most W words of the recitation, `--answer_from_recitation`) and
    `capitalized_answers` (spans that start with a capital letter only). A model without it is an error."""
    record = _run_record(model_name_or_path)
    if record is None:
        raise UsageError(
            f"{model_name_or_path} has no run record ({RECORD_FILE}) to say how it answers: give a model trained "
            "by recipes/birthplace.py pretrain or finetune, which keep --recite_tokens there"
        )
    trained = record.hyperparameters
    if "recite_tokens" not in trained:
        raise UsageError(
            f"the run record of {model_name_or_path} does not say how it answers (no recite_tokens): give a model "
            "trained by recipes/birthplace.py pretrain or finetune"
        )
    return {
        "recite_tokens": int(trained["recite_tokens"]),
        "answer_words": int(trained.get("answer_words", 0)),
        "capitalized_answers": bool(trained.get("capitalized_answers", False)),
    }


def answering_format(
    tokenizer: PreTrainedTokenizerBase,
    model_name_or_path: str | os.PathLike,
    max_new_tokens: int = 16,
) -> QAFormat:
    """The format a trained model answers in, for `evaluate` and the app: the course's when its tokenizer holds
    CS224N's characters, else our BPE as its run record says (`answer_format_of`): reciting first or not, the
    answer generated (at most `max_new_tokens` tokens) or chosen from the recitation."""
    if is_cs224n_char_tokenizer(tokenizer):
        return CourseQAFormat()
    answers = answer_format_of(model_name_or_path)
    if not answers["recite_tokens"]:
        return BPEQAFormat(max_new_tokens)
    return RecitingQAFormat(
        answers["recite_tokens"],
        max_new_tokens=max_new_tokens,
        answer_words=answers["answer_words"],
        capitalized_answers=answers["capitalized_answers"],
    )
