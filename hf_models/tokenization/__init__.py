"""Tokenizers: the project's byte-level BPE (`bpe`), the two courses' own vocabularies (`courses`), and
`resolve_tokenizer`, the one way a task gets its run's tokenizer.

    python -m hf_models.tokenization.courses {cs224n-char|altegrad-lab|altegrad-lab-raw} --data_dir DIR --output_dir OUT
"""

from __future__ import annotations

import os
from collections.abc import Callable

from transformers import PreTrainedTokenizerBase

# The text-file readers live in `hf_models.textio`; re-exported here for the tokenizer trainer's callers.
from ..textio import TextDecodeError, UsageError, find_invalid_utf8, iter_text_files, iter_text_lines, open_binary
from .bpe import (
    CONFIG_TOKENS,
    DEFAULT_MODEL_MAX_LENGTH,
    SPECIAL_TOKENS,
    chars_per_token,
    config_token_ids,
    load_tokenizer,
    train_bpe_tokenizer,
)
from .courses import (
    ALTEGRAD_LAB,
    ALTEGRAD_LAB_RAW,
    COURSE_VOCABULARIES,
    CS224N_CHAR,
    build_course_tokenizer,
    is_course_tokenizer,
    is_cs224n_char_tokenizer,
    load_course_tokenizer,
)
from .lab_dictionary import LAB_SPECIAL_TOKENS

__all__ = [
    "CONFIG_TOKENS",
    "COURSE_VOCABULARIES",
    "DEFAULT_MODEL_MAX_LENGTH",
    "SPECIAL_TOKENS",
    "TextDecodeError",
    "VOCABULARIES",
    "VOCABULARY_LANGUAGES",
    "build_course_tokenizer",
    "chars_per_token",
    "config_token_ids",
    "find_invalid_utf8",
    "is_course_tokenizer",
    "iter_text_files",
    "iter_text_lines",
    "load_course_tokenizer",
    "load_tokenizer",
    "open_binary",
    "resolve_tokenizer",
    "train_bpe_tokenizer",
    "vocabulary_of",
]

BPE = "bpe"
VOCABULARIES = (BPE, *COURSE_VOCABULARIES)
# The language of a course's text, which its vocabulary was made for.
VOCABULARY_LANGUAGES = {ALTEGRAD_LAB: "fr", ALTEGRAD_LAB_RAW: "fr", CS224N_CHAR: "en"}


def vocabulary_of(tokenizer: PreTrainedTokenizerBase) -> str:
    """Which vocabulary a tokenizer is, read from the tokenizer itself (not from the flags that chose it): CS224N's
    characters, the lab's 50,001 ids over pieces (`altegrad-lab`) or over raw text (`altegrad-lab-raw`, its
    SentencePiece pre-tokenizer), our byte-level BPE, else "custom"."""
    if is_cs224n_char_tokenizer(tokenizer):
        return CS224N_CHAR
    backend = getattr(tokenizer, "backend_tokenizer", None)
    pre_tokenizer = type(getattr(backend, "pre_tokenizer", None)).__name__
    lab_ids = tokenizer.convert_ids_to_tokens(list(range(len(LAB_SPECIAL_TOKENS)))) == list(LAB_SPECIAL_TOKENS)
    if lab_ids and tokenizer.mask_token is None:
        return ALTEGRAD_LAB_RAW if pre_tokenizer == "Metaspace" else ALTEGRAD_LAB
    return BPE if pre_tokenizer == "ByteLevel" else "custom"


def resolve_tokenizer(
    path: str | os.PathLike | None,
    vocabulary: str = BPE,
    *,
    data_dir: str | os.PathLike | None = None,
    train: Callable[[], PreTrainedTokenizerBase] | None = None,
    missing: str = "no tokenizer: pass --tokenizer_name_or_path",
    accept_course: bool = False,
) -> PreTrainedTokenizerBase:
    """The run's tokenizer, for every task.

    - `path` given (`--tokenizer_name_or_path`, else the model folder): loaded, our BPE with its special tokens
      checked (`load_tokenizer`), a course vocabulary as saved (`load_course_tokenizer`); with `accept_course`, a
      saved course vocabulary is taken where our BPE was asked for (a causal LM continued from a course model);
    - else a course vocabulary is built from `data_dir` when one is given, and our BPE trained by `train()` when given;
    - else `UsageError(missing)`.
    """
    if vocabulary not in VOCABULARIES:
        raise ValueError(f"unknown vocabulary {vocabulary!r}; expected one of {VOCABULARIES}")
    course = vocabulary != BPE
    if path:
        if course:
            return load_course_tokenizer(path)
        try:
            return load_tokenizer(path)
        except ValueError:
            if not accept_course or not is_course_tokenizer(path):
                raise
            return load_course_tokenizer(path)
    if course and data_dir is not None:
        return build_course_tokenizer(vocabulary, data_dir)
    if not course and train is not None:
        return train()
    raise UsageError(missing)
