"""Tokenizers: the project's byte-level BPE (`bpe`: training it), the two courses' own vocabularies (`courses`), and
here what every task needs of a saved or built tokenizer: loading it with its special tokens checked
(`load_tokenizer`), the ids a model config takes from it (`config_token_ids`), which vocabulary it is
(`vocabulary_of`). `resolve_tokenizer`, the one way a task gets its run's tokenizer, lives in `courses` beside the
course vocabularies it builds or loads.

    python -m hf_models.tokenization.courses {cs224n-char|altegrad-lab|altegrad-lab-raw} --data_dir DIR --output_dir OUT

Design decisions of our byte-level BPE (the recipes rely on them):

- **Byte-level BPE, no normalizer**: every string round-trips, accents, `?`, `⁇`, runs of spaces and
  leading spaces included: `decode(encode(x, add_special_tokens=False), skip_special_tokens=False) == x`.
  `clean_up_tokenization_spaces` is forced to False, since it would rewrite `" ?"` into `"?"`.
- **Encoding adds no special token** (no post-processor): `tokenizer(x)` and
  `tokenizer(x, add_special_tokens=False)` give the same ids. Each objective inserts the special tokens
  its format needs explicitly (span corruption and QA use the separator, LM blocks put `</s>` between
  documents), so nothing is added twice or silently.
- **Special tokens** get the first ids, in the order of `SPECIAL_TOKENS`: `<pad>`=0, `<s>`=1, `</s>`=2,
  `<unk>`=3, `<mask>`=4, `⁇`=5. `⁇` (U+2047) is the tokenizer's `sep_token`: it plays the role of
  CS224N's `MASK_CHAR` in span corruption and in the birthplace QA format.
"""

from __future__ import annotations

import os
from pathlib import Path

from transformers import PreTrainedTokenizerBase

from .. import lazy_namespace
from ..safety import check_json_files, reading
from ..textio import UsageError

# Keys are the `PreTrainedTokenizerBase` special-token attributes (without `_token`).
SPECIAL_TOKENS: dict[str, str] = {
    "pad": "<pad>",
    "bos": "<s>",
    "eos": "</s>",
    "unk": "<unk>",
    "mask": "<mask>",
    "sep": "\u2047",  # "⁇", CS224N's MASK_CHAR
}
# The special tokens a model config holds the ids of (`pad_token_id`, ...): all but `unk`, which no model reads.
CONFIG_TOKENS = tuple(name for name in SPECIAL_TOKENS if name != "unk")
DEFAULT_MODEL_MAX_LENGTH = 1024
# The JSON files `AutoTokenizer` reads (config.json: to find the tokenizer's class), read first so that a damaged
# one is named.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "config.json",
)

# The vocabularies a run can use: our BPE, and the ones `courses.build_course_tokenizer` makes, by name.
# `altegrad-lab-raw`: the lab's ids over raw text, through `sentencepiece.french.model`.
BPE, CS224N_CHAR, ALTEGRAD_LAB, ALTEGRAD_LAB_RAW = "bpe", "cs224n-char", "altegrad-lab", "altegrad-lab-raw"
COURSE_VOCABULARIES = (CS224N_CHAR, ALTEGRAD_LAB, ALTEGRAD_LAB_RAW)
VOCABULARIES = (BPE, *COURSE_VOCABULARIES)
# The language of a course's text, which its vocabulary was made for.
VOCABULARY_LANGUAGES = {ALTEGRAD_LAB: "fr", ALTEGRAD_LAB_RAW: "fr", CS224N_CHAR: "en"}
CS224N_PAD_CHAR = "\u25a1"  # □
CS224N_MASK_CHAR = "\u2047"  # ⁇
LAB_SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq's Dictionary: ids 0-3


def is_cs224n_char_tokenizer(tokenizer: PreTrainedTokenizerBase) -> bool:
    return vocabulary_of(tokenizer) == CS224N_CHAR


def open_tokenizer(path: str | os.PathLike) -> PreTrainedTokenizerBase:
    """`AutoTokenizer.from_pretrained(path)`, with a damaged folder named: a missing folder is a
    `FileNotFoundError`; a broken JSON file, a tokenizer.json that tokenizers cannot read, or a folder
    transformers cannot load a tokenizer from, a `UsageError` naming the file."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer  # imports torch: here, not for a command's -h

    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: tokenizer folder not found")
    check_json_files(path, TOKENIZER_FILES, "the tokenizer")
    if (path / "tokenizer.json").is_file():
        try:
            Tokenizer.from_file(str(path / "tokenizer.json"))
        except Exception as err:  # tokenizers raises a bare `Exception` for a file it cannot read
            raise UsageError(
                f"the tokenizer {path}: {path / 'tokenizer.json'} is not a tokenizers file ({err}); save it again"
            ) from None
    with reading(path, "the tokenizer"):
        try:
            return AutoTokenizer.from_pretrained(str(path))
        except (KeyError, TypeError, ValueError) as err:  # a file of the right syntax with the wrong content
            raise UsageError(f"the tokenizer {path}: cannot load a tokenizer from this folder ({err})") from None


def load_tokenizer(path: str | os.PathLike) -> PreTrainedTokenizerBase:
    """Load a saved tokenizer and check that it has every special token the project needs.

    Raises `FileNotFoundError` when the folder does not exist and `UsageError` naming the folder (and the
    file) when it holds no tokenizer we can load, or naming the missing tokens when some of
    pad/bos/eos/unk/mask/sep are not set.
    """
    path = Path(path)
    tok = open_tokenizer(path)
    missing = [
        f"{name}_token"
        for name in SPECIAL_TOKENS
        if getattr(tok, f"{name}_token", None) is None or getattr(tok, f"{name}_token_id", None) is None
    ]
    if missing:
        raise UsageError(
            f"{path}: tokenizer lacks the special tokens {', '.join(missing)}; "
            f"train it with tokenizer/train_tokenizer.py (expected {SPECIAL_TOKENS})"
        )
    # A tokenizer saved by older code may have the default cleanup on; it breaks the round trip.
    tok.clean_up_tokenization_spaces = False
    return tok


def config_token_ids(tokenizer: PreTrainedTokenizerBase) -> dict[str, int]:
    """The `CONFIG_TOKENS` ids the tokenizer has, as config fields (`pad_token_id`, ...). The courses' vocabularies
    lack some (CS224N's characters have no bos/eos, the lab's no sep/mask); `load_tokenizer` insists on all of them
    for ours."""
    ids = {f"{name}_token_id": getattr(tokenizer, f"{name}_token_id", None) for name in CONFIG_TOKENS}
    return {key: value for key, value in ids.items() if value is not None}


def vocabulary_of(tokenizer: PreTrainedTokenizerBase) -> str:
    """Which vocabulary a tokenizer is, read from the tokenizer itself (not from the flags that chose it): CS224N's
    characters, the lab's 50,001 ids over pieces (`altegrad-lab`) or over raw text (`altegrad-lab-raw`, its
    SentencePiece pre-tokenizer), our byte-level BPE, else "custom"."""
    if tokenizer.pad_token == CS224N_PAD_CHAR and tokenizer.unk_token is None:
        return CS224N_CHAR
    backend = getattr(tokenizer, "backend_tokenizer", None)
    pre_tokenizer = type(getattr(backend, "pre_tokenizer", None)).__name__
    lab_ids = tokenizer.convert_ids_to_tokens(list(range(len(LAB_SPECIAL_TOKENS)))) == list(LAB_SPECIAL_TOKENS)
    if lab_ids and tokenizer.mask_token is None:
        return ALTEGRAD_LAB_RAW if pre_tokenizer == "Metaspace" else ALTEGRAD_LAB
    return BPE if pre_tokenizer == "ByteLevel" else "custom"


# The BPE trainer and the course vocabularies, imported when first used. `resolve_tokenizer` (every task's tokenizer:
# ours or a course's) lives with the course vocabularies, which it builds or loads.
_MODULES = {
    "chars_per_token": "bpe",
    "train_bpe_tokenizer": "bpe",
    "CourseCharTokenizer": "courses",
    "VocabularyError": "courses",
    "build_course_tokenizer": "courses",
    "is_course_tokenizer": "courses",
    "load_course_tokenizer": "courses",
    "resolve_tokenizer": "courses",
}
__getattr__, __dir__ = lazy_namespace(__name__, _MODULES)

__all__ = [
    "ALTEGRAD_LAB",
    "ALTEGRAD_LAB_RAW",
    "BPE",
    "CONFIG_TOKENS",
    "COURSE_VOCABULARIES",
    "CS224N_CHAR",
    "DEFAULT_MODEL_MAX_LENGTH",
    "SPECIAL_TOKENS",
    "VOCABULARIES",
    "VOCABULARY_LANGUAGES",
    "config_token_ids",
    "is_cs224n_char_tokenizer",
    "load_tokenizer",
    "open_tokenizer",
    "resolve_tokenizer",
    "vocabulary_of",
    *_MODULES,
]
