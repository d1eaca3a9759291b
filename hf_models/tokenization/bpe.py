"""Training the byte-level BPE tokenizer shared by every task of the project (its design: `hf_models.tokenization`).

The tokenizer is trained with the `tokenizers` library and saved as a fast tokenizer that
`AutoTokenizer.from_pretrained(dir)` loads offline; `chars_per_token` measures its compression.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

from ..safety import staged_save
from ..textio import UsageError
from . import DEFAULT_MODEL_MAX_LENGTH, SPECIAL_TOKENS

# tokenizers counts ids and frequencies in 32 and 64 bits: larger numbers are an `OverflowError` deep inside.
MAX_VOCAB_SIZE = 2**31 - 1


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
