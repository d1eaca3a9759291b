"""The birthplace QA formats, each one object that encodes the training rows and predicts the answers, so that
`hf_models.tasks.birthplace` chooses between them once:

- `BPEQAFormat` (our BPE): `question ⁇ answer ⁇ </s>` with the loss on the answer; answers generated after
  `question ⁇` until the next `⁇` (or `</s>`).
- `RecitingQAFormat` (our BPE, `--recite_tokens N`): recite, then answer. The model first writes the opening of
  the person's paragraph from the name alone (the first N tokens, as the `openings` pretraining saw them), then
  answers `recitation </s> question ⁇`. Training rows put the person's real paragraph opening there; the answer is
  read from the context, where the pretrained model can write the fact, instead of from the question alone.
- `CourseQAFormat` (CS224N's character vocabulary, `pretrain --course_vocabulary`): the course's `NameDataset` rows
  `question⁇answer⁇`; 32 characters greedily generated after `question⁇`, the answer read between the first and
  second `⁇` of the completion, as the course's `run.py` does.

All decode greedily, in left-padded batches (`hf_models.tasks.qa_decoding`). How a trained model of our BPE answers
(reciting first or not, the answer generated or chosen from the recitation) is chosen when it is trained and kept in
its run record alone; `answering_format` reads it there for `evaluate` and the app.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import hf_hub_download
from huggingface_hub.errors import EntryNotFoundError, HFValidationError
from transformers import PreTrainedTokenizerBase

from ..data import encode_birthplace_qa, encode_char_qa, encode_reciting_qa, person_name
from ..run_record import RECORD_FILE, RunRecord, read_record
from ..textio import UsageError
from ..tokenization.courses import is_cs224n_char_tokenizer
from .qa_decoding import answers_after, predict_answers, predict_char_answers, recitations_after_titles
from .recitation_spans import answer_log_likelihoods, recitation_spans

logger = logging.getLogger(__name__)

__all__ = [
    "BPEQAFormat",
    "CourseQAFormat",
    "QAFormat",
    "RecitingQAFormat",
    "answer_format_of",
    "answer_shape",
    "answering_format",
]


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

    def _first_tokens(self, texts: list[str], tokenizer) -> list[list[int]]:
        ids = tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
        return [row[: self.recite_tokens] for row in ids]

    def openings(self, questions: list[str], tokenizer) -> list[list[int]]:
        """The first `recite_tokens` tokens of each person's paragraph (the one that starts with `Name.`)."""
        return self._first_tokens(self._paragraphs(questions), tokenizer)

    def encode(self, examples: dict[str, list[str]], tokenizer, block_size: int) -> dict[str, list[list[int]]]:
        """Each row after its person's real opening (`openings`)."""
        recitations = self.openings(list(examples["question"]), tokenizer)
        return encode_reciting_qa(examples, tokenizer, block_size, recitations)

    def recite(self, model, tokenizer, questions: list[str], batch_size: int) -> list[list[int]]:
        """What the model writes from each person's title `Name.` (at position 0, as in pretraining), up to
        `recite_tokens` tokens or its `</s>`."""
        names = [person_name(question) for question in questions]
        if unnamed := sum(name is None for name in names):
            logger.warning(f"{unnamed} question(s) are not 'Where was NAME born?': answered without a recitation")
        named = [i for i, name in enumerate(names) if name is not None]
        if not named:
            return [[] for _ in questions]
        titles = tokenizer([f"{names[i]}." for i in named], add_special_tokens=False)["input_ids"]
        written = recitations_after_titles(model, tokenizer, titles, self.recite_tokens, batch_size)
        recitations: list[list[int]] = [[] for _ in questions]
        for i, recitation in zip(named, written, strict=True):
            recitations[i] = recitation
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
