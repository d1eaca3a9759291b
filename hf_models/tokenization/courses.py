"""The two courses' own vocabularies as `PreTrainedTokenizerFast` tokenizers that `AutoTokenizer` loads offline.

- `build_cs224n_char_tokenizer`: CS224N a5's character vocabulary. The course builds it in `CharCorruptionDataset` as
  `chars = sorted(set(wiki_text)); chars.insert(0, MASK_CHAR); chars.insert(0, PAD_CHAR)`, so `□` (pad) is id 0,
  `⁇` (mask, also the separator of span corruption and QA) is id 1, and every character of `wiki.txt` follows in
  code-point order. One token per character; decoding concatenates. A character outside the vocabulary is an error,
  as in the course (its `stoi` raises `KeyError`): there is no unknown token.
- `build_altegrad_lab_raw_tokenizer` (`lab_sentencepiece`, vocabulary `altegrad-lab-raw`): the same 50,001 ids
  over raw text, the SentencePiece model turned into a fast `tokenizers` model.
- `build_altegrad_lab_tokenizer`: the lab's 50,001 ids: `<s> <pad> </s> <unk>` (0–3), then the pieces of the fairseq
  `dict.txt` in file order. The lab's data is already SentencePiece pieces separated by spaces (made with
  `sentencepiece.french.model`), so the tokenizer maps each space-separated piece to its id (`<unk>` when absent) and
  puts `<s>` in front, as the lab's data set does. The SentencePiece model, read with transformers' protobuf
  schema (no `sentencepiece` package needed), is checked to contain every piece of the dictionary.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from ..safety import check_output_dir, command_line, staged_save
from ..textio import UsageError, read_text
from .bpe import open_tokenizer
from .lab_dictionary import (
    LAB_SPECIAL_TOKENS,
    VocabularyError,
    check_dictionary_in_model,
    read_lab_dictionary,
    read_sentencepiece_pieces,
    wrap_lab_tokenizer,
)
from .lab_sentencepiece import build_altegrad_lab_raw_tokenizer

__all__ = [
    "COURSE_VOCABULARIES",
    "CourseCharTokenizer",
    "VocabularyError",
    "build_altegrad_lab_tokenizer",
    "build_course_tokenizer",
    "build_cs224n_char_tokenizer",
    "cs224n_char_vocabulary",
    "load_course_tokenizer",
    "unknown_characters",
]

# The vocabularies `build_course_tokenizer` makes, by name (the command line's `course` argument).
# `altegrad-lab-raw`: the same ids over raw text, through `sentencepiece.french.model` (`lab_sentencepiece`).
CS224N_CHAR, ALTEGRAD_LAB, ALTEGRAD_LAB_RAW = "cs224n-char", "altegrad-lab", "altegrad-lab-raw"
COURSE_VOCABULARIES = (CS224N_CHAR, ALTEGRAD_LAB, ALTEGRAD_LAB_RAW)
CS224N_PAD_CHAR = "\u25a1"  # □
CS224N_MASK_CHAR = "\u2047"  # ⁇


def unknown_characters(texts: Sequence[str], vocabulary, what: str = "the text", where=None) -> str | None:
    """None when every character of `texts` is in `vocabulary`; else one line naming the first unknown character,
    where it is (`where(i)` names text i, e.g. its `file:line`; without it, the text around it) and its column, and
    how many other characters are unknown."""
    known = set(vocabulary)
    unknown = sorted(set("".join(texts)) - known)
    if not unknown:
        return None
    index, text = next((i, t) for i, t in enumerate(texts) if not set(t) <= known)
    column = next(j for j, char in enumerate(text) if char not in known)
    char = text[column]
    if where is not None:
        location = f"{where(index)}, column {column + 1}"
    else:
        start = max(0, column - 30)
        location = f"{what}, column {column + 1} of {('…' if start else '') + text[start : column + 30]!r}"
    others = [c for c in unknown if c != char]
    more = f"; {len(others)} other unknown character(s): {others[:10]}" if others else ""
    return (
        f"{location}: the character {char!r} (U+{ord(char):04X}) is not in the course's character vocabulary (the "
        f"characters of the wiki.txt it was built from; the course has no unknown token){more}"
    )


class CourseCharTokenizer(PreTrainedTokenizerFast):
    """CS224N's character tokenizer: a `PreTrainedTokenizerFast` whose error for a character outside the vocabulary
    names it (tokenizers alone says `Missing [UNK] token from the vocabulary`). `load_course_tokenizer` returns
    one; `AutoTokenizer.from_pretrained` gives the plain class, with tokenizers' message."""

    def _encode_plus(self, text, text_pair=None, *args, **kwargs):
        try:
            return super()._encode_plus(text, text_pair, *args, **kwargs)
        except Exception as error:  # tokenizers raises a bare Exception
            message = unknown_characters(_strings(text) + _strings(text_pair), self.get_vocab())
            if message is None or "Missing [UNK]" not in str(error):
                raise
            raise VocabularyError(message) from None

    def save_pretrained(self, save_directory, *args, **kwargs):
        """Saved under the plain class's name, so that `AutoTokenizer` loads the files anywhere, without this
        package (transformers writes `self.__class__.__name__`)."""
        files = super().save_pretrained(save_directory, *args, **kwargs)
        config_file = Path(save_directory) / "tokenizer_config.json"
        config = json.loads(config_file.read_text(encoding="utf-8"))
        config["tokenizer_class"] = PreTrainedTokenizerFast.__name__
        config_file.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return files


def _strings(texts) -> list[str]:
    """The strings of a tokenizer input: one text, a batch, pre-split words, or pairs."""
    if texts is None:
        return []
    if isinstance(texts, str):
        return [texts]
    return [s for item in texts for s in _strings(item)]


def is_cs224n_char_tokenizer(tokenizer) -> bool:
    return tokenizer.pad_token == CS224N_PAD_CHAR and tokenizer.unk_token is None


def cs224n_char_vocabulary(text: str) -> list[str]:
    """The course's `itos`: `□`, `⁇`, then the sorted set of the text's characters."""
    chars = sorted(set(text))
    for special in (CS224N_PAD_CHAR, CS224N_MASK_CHAR):
        if special in chars:  # the course asserts the same
            raise VocabularyError(f"the corpus contains the special character {special!r}")
    return [CS224N_PAD_CHAR, CS224N_MASK_CHAR, *chars]


def build_cs224n_char_tokenizer(
    wiki_path: str | os.PathLike, output_dir: str | os.PathLike | None = None, model_max_length: int = 128
) -> PreTrainedTokenizerFast:
    """CS224N's character tokenizer, built from `wiki.txt` exactly as the course's `stoi`."""
    wiki_path = Path(wiki_path)
    text = read_text(wiki_path)  # as the loaders read it: no byte order mark, each line break a "\n"
    if not text.strip():
        raise VocabularyError(f"{wiki_path}: file is empty; the course vocabulary is built from its characters")
    try:
        vocabulary = cs224n_char_vocabulary(text)
    except VocabularyError as error:
        raise VocabularyError(f"{wiki_path}: {error}") from None
    tokenizer = Tokenizer(models.WordLevel({char: i for i, char in enumerate(vocabulary)}))
    # Every character, newlines included, is its own pre-token; decoding glues them back together.
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    hf_tokenizer = CourseCharTokenizer(
        tokenizer_object=tokenizer,
        model_max_length=model_max_length,
        clean_up_tokenization_spaces=False,
        pad_token=CS224N_PAD_CHAR,
        mask_token=CS224N_MASK_CHAR,
        sep_token=CS224N_MASK_CHAR,
    )
    if output_dir is not None:
        with staged_save(output_dir) as staging:
            hf_tokenizer.save_pretrained(str(staging))
    return hf_tokenizer


def build_altegrad_lab_tokenizer(
    dict_path: str | os.PathLike,
    sentencepiece_model: str | os.PathLike | None = None,
    output_dir: str | os.PathLike | None = None,
    model_max_length: int = 512,
) -> PreTrainedTokenizerFast:
    """The lab's vocabulary: `<s> <pad> </s> <unk>`, then `dict.txt`'s pieces, over space-separated pieces."""
    pieces = read_lab_dictionary(dict_path)
    if sentencepiece_model is not None:
        known = set(read_sentencepiece_pieces(sentencepiece_model))
        check_dictionary_in_model(dict_path, pieces, known, sentencepiece_model)
    vocabulary = {token: i for i, token in enumerate([*LAB_SPECIAL_TOKENS, *pieces])}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return wrap_lab_tokenizer(tokenizer, model_max_length, output_dir)


def is_course_tokenizer(path: str | os.PathLike) -> bool:
    """Whether a saved tokenizer folder holds a course's vocabulary: CS224N's characters, or the lab's ids (the
    fairseq specials first and no mask token)."""
    try:
        tokenizer = open_tokenizer(path)
    except (OSError, ValueError):
        return False
    if is_cs224n_char_tokenizer(tokenizer):
        return True
    return tokenizer.mask_token is None and tokenizer.convert_ids_to_tokens(list(range(4))) == list(LAB_SPECIAL_TOKENS)


def load_course_tokenizer(path: str | os.PathLike) -> PreTrainedTokenizerFast:
    """Load a saved course tokenizer (which lacks some of the special tokens `load_tokenizer` insists on)."""
    path = Path(path)
    tokenizer = open_tokenizer(path)
    if tokenizer.pad_token_id is None:
        raise UsageError(f"{path}: not a course tokenizer (no pad token)")
    if is_cs224n_char_tokenizer(tokenizer):  # the same files, with an error that names an unknown character
        tokenizer = CourseCharTokenizer.from_pretrained(str(path))
    return tokenizer


def build_course_tokenizer(
    course: str, data_dir: str | os.PathLike, output_dir: str | os.PathLike | None = None
) -> PreTrainedTokenizerFast:
    """A course's vocabulary built from its data folder: `cs224n-char` from `birthplace/wiki.txt`, `altegrad-lab`
    from `cls-books/dict.txt` (checked against `sentencepiece.french.model` when the folder has it), and
    `altegrad-lab-raw` from both files (raw text in, the lab's ids out)."""
    data_dir = Path(data_dir)
    if course == CS224N_CHAR:
        return build_cs224n_char_tokenizer(data_dir / "wiki.txt", output_dir)
    if course == ALTEGRAD_LAB:
        sentencepiece_model = data_dir / "sentencepiece.french.model"
        return build_altegrad_lab_tokenizer(
            data_dir / "dict.txt", sentencepiece_model if sentencepiece_model.is_file() else None, output_dir
        )
    if course == ALTEGRAD_LAB_RAW:
        return build_altegrad_lab_raw_tokenizer(
            data_dir / "dict.txt", data_dir / "sentencepiece.french.model", output_dir=output_dir
        )
    raise ValueError(f"unknown course vocabulary {course!r}; expected one of {COURSE_VOCABULARIES}")


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m hf_models.tokenization.courses",
        description="Save a course's own vocabulary as a tokenizer.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("course", choices=COURSE_VOCABULARIES, help="whose vocabulary: %(choices)s")
    parser.add_argument("--data_dir", required=True, help="birthplace/ (wiki.txt) or cls-books/ (dict.txt + .model)")
    parser.add_argument("--output_dir", required=True, help="where to save the tokenizer (refused if it holds one)")
    parser.add_argument(
        "--overwrite_output_dir",
        action="store_true",
        help="replace what --output_dir holds (a tokenizer, a model, a record); refused otherwise",
    )
    args = parser.parse_args(argv)
    data_files = sorted(Path(args.data_dir).iterdir()) if Path(args.data_dir).is_dir() else []
    inputs = [("--data_dir", args.data_dir), *(("--data_dir", f) for f in data_files)]
    check_output_dir(args.output_dir, overwrite=args.overwrite_output_dir, inputs=inputs)
    tokenizer = build_course_tokenizer(args.course, args.data_dir, args.output_dir)
    print(f"Saved a {len(tokenizer):,}-token tokenizer to {args.output_dir}")


if __name__ == "__main__":
    sys.exit(command_line(main))
