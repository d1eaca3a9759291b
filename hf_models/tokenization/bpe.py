"""Byte-level BPE tokenizer shared by every task of the project.

The tokenizer is trained with the `tokenizers` library and saved as a fast tokenizer that
`AutoTokenizer.from_pretrained(dir)` loads offline.

Design decisions (the recipes rely on them):

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
from collections.abc import Iterable, Iterator
from pathlib import Path

from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

from ..safety import check_json_files, reading, staged_save
from ..textio import UsageError

__all__ = [
    "CONFIG_TOKENS",
    "SPECIAL_TOKENS",
    "chars_per_token",
    "config_token_ids",
    "load_tokenizer",
    "open_tokenizer",
    "train_bpe_tokenizer",
]

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
# tokenizers counts ids and frequencies in 32 and 64 bits: larger numbers are an `OverflowError` deep inside.
MAX_VOCAB_SIZE = 2**31 - 1


# --------------------------------------------------------------------------------------------------
# Training, loading, inspecting
# --------------------------------------------------------------------------------------------------
def _batched(texts: Iterable[str], size: int = 1000) -> Iterator[list[str]]:
    # `train_from_iterator` is much faster on batches than on single strings.
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def train_bpe_tokenizer(
    texts: Iterable[str],
    vocab_size: int,
    output_dir: str | os.PathLike | None = None,
    model_max_length: int = DEFAULT_MODEL_MAX_LENGTH,
    min_frequency: int = 2,
    show_progress: bool = True,
    length: int | None = None,
) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on `texts` and wrap it as a transformers fast tokenizer.

    Args:
        texts: the training strings (for example `iter_text_lines(files)`).
        vocab_size: the final vocabulary size, special tokens and the 256 byte symbols included.
        output_dir: where to `save_pretrained` it, if given.
        model_max_length: recorded in `tokenizer_config.json` (the longest input the model takes).
        min_frequency: a pair must occur this often to be merged.
        show_progress: show the `tokenizers` progress bars.
        length: number of batches of 1,000 texts, if known, for the progress bar.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    specials = list(SPECIAL_TOKENS.values())
    if not 256 + len(specials) <= vocab_size <= MAX_VOCAB_SIZE:
        size = "too small" if vocab_size < 256 + len(specials) else "too large"
        raise UsageError(
            f"vocab_size {vocab_size} is {size}: byte-level BPE needs at least {256 + len(specials)} (the 256 bytes "
            f"and {len(specials)} special tokens), and tokenizers takes at most {MAX_VOCAB_SIZE}"
        )
    if not 0 <= min_frequency < 2**63:
        raise UsageError(f"min_frequency {min_frequency}: give a count of 0 or more")
    tok = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS["unk"]))
    # No normalizer and no prefix space: the byte-level alphabet covers every string, so the
    # round trip is exact.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=show_progress,
    )
    tok.train_from_iterator(_batched(texts), trainer=trainer, length=length)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        model_max_length=model_max_length,
        clean_up_tokenization_spaces=False,
        **{f"{name}_token": token for name, token in SPECIAL_TOKENS.items()},
    )
    if output_dir is not None:
        with staged_save(output_dir) as staging:  # a failed save leaves the folder's old tokenizer whole
            hf_tok.save_pretrained(str(staging))
    return hf_tok


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


def chars_per_token(tokenizer: PreTrainedTokenizerBase, texts: Iterable[str], batch_size: int = 1000) -> float:
    """Compression of `tokenizer` on `texts`: characters divided by tokens (no special token added)."""
    n_chars = n_tokens = 0
    backend = getattr(tokenizer, "backend_tokenizer", None)
    for batch in _batched(texts, batch_size):
        n_chars += sum(len(t) for t in batch)
        if backend is not None:  # the Rust batch encoder is parallel and skips Python overhead
            n_tokens += sum(len(e.ids) for e in backend.encode_batch(batch, add_special_tokens=False))
        else:
            n_tokens += sum(len(ids) for ids in tokenizer(batch, add_special_tokens=False)["input_ids"])
    if n_tokens == 0:
        raise ValueError("no text to measure")
    return n_chars / n_tokens
