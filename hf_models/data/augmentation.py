"""Knowledge augmentation of birthplace paragraphs: more forms of each biography in the pretraining corpus.

"Physics of Language Models, Part 3.1" (Allen-Zhu and Li, 2023) finds that a model which stores a fact from one
form of a biography rarely answers a question about it, and that extraction rises when each biography appears in
several forms. The forms here are built from the paragraph's own text only (no other data, no question or
answer). A `wiki.txt` paragraph is `Title. Sentence ...`: the title is the person's full name.

- `name_first`: the title, then every sentence starting with the full name: a leading pronoun (He, His, ...) or
  part of the name (a surname) is replaced by it, else the name is put before the sentence (`Name: Born in ...`).
- `opening`: the opening sentence on its own, without the title, starting with the full name as in `name_first`
  (so that it still says whose fact it is).

Each form gives at most one copy of a paragraph, different from the paragraph (none where the paragraph already
has the form).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


logger = logging.getLogger(__name__)

AUGMENT_FORMS = ("name_first", "opening")

# Words whose period ends no sentence: initials ("P.", "U.S."), "b.", "St.", "Jr.", "Dr.", ... (a capital and two letters at
# most, three lower-case letters, a day "29."), also after "(" or "*"; and a sentence starts with a capital, a digit or an opening quote/bracket.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_ABBREVIATION = re.compile(r"(?:^|\s)[(*\"']*(?:(?:\w\.)+|[A-Z][a-z]{0,2}\.|[a-z]{1,3}\.|\d{1,2}\.)$")
_INITIALS = re.compile(r"(?:\w\.)*\w")  # "P", "J.C": the title goes on after them
_SUBJECT_PRONOUNS = ("He", "She", "They")
_POSSESSIVE_PRONOUNS = ("His", "Her", "Their")


def _split_sentences(text: str) -> list[str]:
    pieces, sentences = _SENTENCE_END.split(text), []
    for piece in pieces:
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] += " " + piece  # "b. 1968", "Douglas P. Fry": not a sentence end
        else:
            sentences.append(piece)
    return [s for s in sentences if s]


def split_paragraph(paragraph: str) -> tuple[str | None, list[str]]:
    """`(title, sentences)` of a `wiki.txt` paragraph: the title is the text before the first '. ' that ends no
    initial ('Douglas P. Fry. Douglas P Fry (born ...' has the title 'Douglas P. Fry', 'J.C. Patterson. Born ...'
    'J.C. Patterson'); None without one."""
    paragraph = paragraph.strip()
    start = 0
    while (cut := paragraph.find(". ", start)) != -1:
        last_word = paragraph[:cut].rsplit(" ", 1)[-1]
        if not _INITIALS.fullmatch(last_word):
            return paragraph[:cut], _split_sentences(paragraph[cut + 2 :].strip())
        start = cut + 2
    return None, _split_sentences(paragraph)


def _with_name_first(sentence: str, name: str) -> str:
    """The sentence starting with the full name: a leading pronoun or part of the name replaced, else prefixed."""
    if sentence.startswith((name, name.replace(".", ""))):
        return sentence
    first, _, rest = sentence.partition(" ")
    if first in _SUBJECT_PRONOUNS:
        return f"{name} {rest}"
    if first in _POSSESSIVE_PRONOUNS:
        return f"{name}'s {rest}"
    words = name.replace(".", "").split()
    for size in range(len(words) - 1, 0, -1):  # the longest ending of the name first: "Toulmin Smith", "Smith"
        part = " ".join(words[-size:])
        if re.match(rf"{re.escape(part)}(?=\b)", sentence):
            return name + sentence[len(part) :]
    return f"{name}: {sentence}"


def name_first(paragraph: str) -> str | None:
    """The `name_first` form; None when the paragraph has no title or already has the form."""
    title, sentences = split_paragraph(paragraph)
    if title is None:
        return None
    copy = f"{title}. " + " ".join(_with_name_first(s, title) for s in sentences)
    return copy if copy != paragraph.strip() else None


def opening_sentence(paragraph: str) -> str | None:
    """The `opening` form: the first sentence alone, starting with the name; None when it is the paragraph."""
    title, sentences = split_paragraph(paragraph)
    if not sentences:
        return None
    copy = _with_name_first(sentences[0], title) if title else sentences[0]
    return copy if copy != paragraph.strip() else None


def augment_paragraph(paragraph: str, form: str) -> str | None:
    """The copy of one paragraph in one form (see the module's docstring); None where the form gives none."""
    if form == "name_first":
        return name_first(paragraph)
    if form == "opening":
        return opening_sentence(paragraph)
    raise ValueError(f"unknown augmentation form {form!r}; expected one of {', '.join(AUGMENT_FORMS)}")


def augment_forms(value: str) -> tuple[str, ...]:
    """The forms of `augment` ('name_first,opening'), checked, in the order given."""
    forms = tuple(form.strip() for form in value.split(",") if form.strip())
    unknown = [form for form in forms if form not in AUGMENT_FORMS]
    if unknown or len(set(forms)) != len(forms):
        raise ValueError(f"--augment {value!r}: expected distinct forms among {', '.join(AUGMENT_FORMS)}")
    return forms


def augmented_copies(paragraphs: list[str], forms: Sequence[str]) -> dict[str, list[str]]:
    """Each form's copies of the wiki.txt paragraphs (never of QA rows), in the paragraphs' order."""
    copies = {form: [augment_paragraph(text, form) for text in paragraphs] for form in forms}
    return {form: [copy for copy in texts if copy is not None] for form, texts in copies.items()}


def augmentation_cost(
    paragraphs: list[str], copies: dict[str, list[str]], tokenizer: PreTrainedTokenizerBase, max_tokens: int | None
) -> dict[str, int]:
    """What each form adds per epoch, logged and recorded: `train_augment_FORM_examples` and `_tokens` (the tokens
    trained on: with 'openings', the first `max_tokens` and eos), beside the same counts for the paragraphs."""

    def trained_tokens(texts: list[str]) -> int:
        ids = tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"] if texts else []
        return sum(len(x) if max_tokens is None else min(len(x), max_tokens) + 1 for x in ids)

    cost = {
        "train_augment_paragraphs_examples": len(paragraphs),
        "train_augment_paragraphs_tokens": trained_tokens(paragraphs),
    }
    for form, texts in copies.items():
        cost[f"train_augment_{form}_examples"] = len(texts)
        cost[f"train_augment_{form}_tokens"] = trained_tokens(texts)
        logger.info(
            f"Augmentation '{form}': {len(texts)} copies of {len(paragraphs)} paragraphs, "
            f"{cost[f'train_augment_{form}_tokens']} tokens per epoch "
            f"(the paragraphs: {cost['train_augment_paragraphs_tokens']})"
        )
    return cost
