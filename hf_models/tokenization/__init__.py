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
from .courses import COURSE_VOCABULARIES, build_course_tokenizer, is_course_tokenizer, load_course_tokenizer

__all__ = [
    "CONFIG_TOKENS",
    "COURSE_VOCABULARIES",
    "DEFAULT_MODEL_MAX_LENGTH",
    "SPECIAL_TOKENS",
    "TextDecodeError",
    "VOCABULARIES",
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
]

BPE = "bpe"
VOCABULARIES = (BPE, *COURSE_VOCABULARIES)


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
