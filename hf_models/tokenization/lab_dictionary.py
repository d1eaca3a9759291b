"""The lab's ids, shared by its two tokenizers (`altegrad-lab` over `.spm` pieces in `courses`, `altegrad-lab-raw`
over raw text in `lab_sentencepiece`): fairseq's `<s> <pad> </s> <unk>` (ids 0-3), then the pieces of `dict.txt` in
file order.

Here: reading `dict.txt` and the SentencePiece `.model` (with transformers' protobuf schema, no `sentencepiece`
package needed), the checks both tokenizers make on them, and the transformers tokenizer around a `tokenizers`
model with the lab's ids.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from tokenizers import Tokenizer, processors
from transformers import PreTrainedTokenizerFast

from ..safety import staged_save
from ..textio import UsageError, iter_text_lines

__all__ = [
    "LAB_SPECIAL_TOKENS",
    "VocabularyError",
    "check_dictionary_in_model",
    "read_fairseq_dictionary",
    "read_lab_dictionary",
    "read_sentencepiece_model",
    "read_sentencepiece_pieces",
    "wrap_lab_tokenizer",
]

LAB_SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq's Dictionary: ids 0-3


class VocabularyError(UsageError):
    """A vocabulary file that cannot give the course's ids; the message names the file and line."""


def read_fairseq_dictionary(path: str | os.PathLike) -> list[str]:
    """The symbols of a fairseq `dict.txt` (`SYMBOL COUNT` per line), in file order."""
    path = Path(path)
    symbols: list[str] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(iter_text_lines(path, skip_empty=False), start=1):
        symbol, _, count = line.rpartition(" ")
        if not symbol or not count.lstrip("-").isdigit():
            raise VocabularyError(f"{path}:{lineno}: expected 'SYMBOL COUNT', found {line!r}")
        if symbol in seen:
            raise VocabularyError(f"{path}:{lineno}: duplicate symbol {symbol!r} (first on line {seen[symbol]})")
        seen[symbol] = lineno
        symbols.append(symbol)
    return symbols


def read_lab_dictionary(path: str | os.PathLike) -> list[str]:
    """The pieces of the lab's `dict.txt`, which must not list the special tokens fairseq puts in front of them."""
    pieces = read_fairseq_dictionary(path)
    clashes = [piece for piece in pieces if piece in LAB_SPECIAL_TOKENS]
    if clashes:
        raise VocabularyError(f"{path}: lists the special tokens {clashes}, which fairseq adds itself")
    return pieces


def read_sentencepiece_model(path: str | os.PathLike):
    """A SentencePiece `.model` (its `ModelProto`), parsed with transformers' copy of its protobuf schema."""
    try:
        import google.protobuf  # noqa: F401  (transformers' schema needs it)
    except ImportError:
        raise VocabularyError(f"{path}: reading a SentencePiece model needs the protobuf package") from None
    from transformers.convert_slow_tokenizer import import_protobuf

    model = import_protobuf().ModelProto()
    try:
        model.ParseFromString(Path(path).read_bytes())
    except Exception as error:  # protobuf's DecodeError, or a version-specific type
        raise VocabularyError(f"{path}: not a SentencePiece model ({error})") from error
    return model


def read_sentencepiece_pieces(path: str | os.PathLike) -> list[str]:
    """The pieces of a SentencePiece `.model`, in id order."""
    return [piece.piece for piece in read_sentencepiece_model(path).pieces]


def check_dictionary_in_model(
    dict_path: str | os.PathLike,
    pieces: list[str],
    known: Collection[str],
    sentencepiece_model: str | os.PathLike,
) -> None:
    """Every piece of `dict.txt` is one the SentencePiece model gives (`known`), else the two files do not match."""
    unknown = [piece for piece in pieces if piece not in known]
    if unknown:
        raise VocabularyError(
            f"{dict_path}: {len(unknown)} pieces are not in {sentencepiece_model} (first: {unknown[:5]}): "
            "the dictionary was not made with this SentencePiece model"
        )


def wrap_lab_tokenizer(
    tokenizer: Tokenizer, model_max_length: int, output_dir: str | os.PathLike | None
) -> PreTrainedTokenizerFast:
    """A `tokenizers` model with the lab's ids as a transformers tokenizer (saved to `output_dir` if given): the
    lab's data set puts <s> (its <sos>) in front of every sequence; <pad>, </s> and <unk> are fairseq's."""
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", LAB_SPECIAL_TOKENS.index("<s>"))]
    )
    hf_tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        model_max_length=model_max_length,
        clean_up_tokenization_spaces=False,
        bos_token="<s>",
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
    )
    if output_dir is not None:
        with staged_save(output_dir) as staging:
            hf_tokenizer.save_pretrained(str(staging))
    return hf_tokenizer
