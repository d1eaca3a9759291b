"""The two courses' own vocabularies as `PreTrainedTokenizerFast` tokenizers that `AutoTokenizer` loads offline.

- `build_cs224n_char_tokenizer`: CS224N a5's character vocabulary. The course builds it in `CharCorruptionDataset` as
  `chars = sorted(set(wiki_text)); chars.insert(0, MASK_CHAR); chars.insert(0, PAD_CHAR)`, so `□` (pad) is id 0,
  `⁇` (mask, also the separator of span corruption and QA) is id 1, and every character of `wiki.txt` follows in
  code-point order. One token per character; decoding concatenates. A character outside the vocabulary is an error,
  as in the course (its `stoi` raises `KeyError`): there is no unknown token.
- The lab's 50,001 ids, shared by its two tokenizers: fairseq's `<s> <pad> </s> <unk>` (ids 0-3), then the pieces
  of `dict.txt` in file order. The SentencePiece `.model` is read with transformers' protobuf schema (no
  `sentencepiece` package needed). Both put `<s>` in front of every sequence, as the lab's data set does.
- `build_altegrad_lab_tokenizer` (`altegrad-lab`): the lab's data is already SentencePiece pieces separated by spaces
  (made with `sentencepiece.french.model`), so the tokenizer maps each space-separated piece to its id (`<unk>` when
  absent). The SentencePiece model is checked to contain every piece of the dictionary.
- `build_altegrad_lab_raw_tokenizer` (`altegrad-lab-raw`): the same ids over RAW text. The model's pieces and scores
  become a `tokenizers` BPE (merges ordered by score, as `transformers.convert_slow_tokenizer` does) or Unigram
  model whose ids are the lab's ids, so no second lookup is needed; SentencePiece's normalisation (the model's
  precompiled NFKC map, extra whitespace removed, and `▁` for every space with one in front: `add_dummy_prefix`);
  decoding turns `▁` back into spaces. A piece of the model that `dict.txt` lacks cannot be given the `<unk>` id
  inside a fast model (a BPE vocabulary with two pieces on one id loses one of them when saved), so it is an error
  that names the pieces; the lab's files have none. Consecutive characters the model does not know become one
  `<unk>`, as SentencePiece fuses them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast
from transformers.convert_slow_tokenizer import generate_merges

from ..safety import check_output_dir, command_line, staged_save
from ..textio import UsageError, iter_text_lines, read_text
from . import (
    ALTEGRAD_LAB,
    ALTEGRAD_LAB_RAW,
    COURSE_VOCABULARIES,
    CS224N_CHAR,
    CS224N_MASK_CHAR,
    CS224N_PAD_CHAR,
    LAB_SPECIAL_TOKENS,
    VOCABULARIES,
    is_cs224n_char_tokenizer,
    load_tokenizer,
    open_tokenizer,
    vocabulary_of,
)
from . import BPE as BPE_VOCABULARY

# SentencePiece's ModelProto: trainer_spec.model_type and SentencePiece.type values.
UNIGRAM, BPE = 1, 2
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6


class VocabularyError(UsageError):
    """A vocabulary file that cannot give the course's ids; the message names the file and line."""


# ------------------------------------------------------------------------------------------------------------------
# CS224N's characters
# ------------------------------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------------------------------
# The lab's ids: dict.txt and the SentencePiece model
# ------------------------------------------------------------------------------------------------------------------


def read_fairseq_dictionary(path: str | os.PathLike) -> list[str]:
    """The symbols of a fairseq `dict.txt` (`SYMBOL COUNT` per line), in file order: the lab's pieces, which must not
    list the special tokens fairseq puts in front of them."""
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
    clashes = [symbol for symbol in symbols if symbol in LAB_SPECIAL_TOKENS]
    if clashes:
        raise VocabularyError(f"{path}: lists the special tokens {clashes}, which fairseq adds itself")
    return symbols


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


def build_altegrad_lab_tokenizer(
    dict_path: str | os.PathLike,
    sentencepiece_model: str | os.PathLike | None = None,
    output_dir: str | os.PathLike | None = None,
    model_max_length: int = 512,
) -> PreTrainedTokenizerFast:
    """The lab's vocabulary: `<s> <pad> </s> <unk>`, then `dict.txt`'s pieces, over space-separated pieces."""
    pieces = read_fairseq_dictionary(dict_path)
    if sentencepiece_model is not None:
        known = {piece.piece for piece in read_sentencepiece_model(sentencepiece_model).pieces}
        check_dictionary_in_model(dict_path, pieces, known, sentencepiece_model)
    vocabulary = {token: i for i, token in enumerate([*LAB_SPECIAL_TOKENS, *pieces])}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return wrap_lab_tokenizer(tokenizer, model_max_length, output_dir)


def lab_piece_ids(model, dict_pieces: list[str], model_path: str | os.PathLike) -> dict[str, int]:
    """Every piece of the SentencePiece `model` with its lab id: its unknown piece is `<unk>` (3), its control
    pieces (`<s>`, `</s>`) the fairseq ids of the same name, every other piece its `dict.txt` line + 3."""
    lab_ids = {token: i for i, token in enumerate([*LAB_SPECIAL_TOKENS, *dict_pieces])}
    ids: dict[str, int] = {}
    missing = []
    for piece in model.pieces:
        if piece.type == BYTE:
            raise VocabularyError(f"{model_path}: byte-fallback pieces ({piece.piece!r}) are not supported")
        if piece.type == UNKNOWN:
            ids[piece.piece] = lab_ids["<unk>"]
        elif piece.type == CONTROL:
            if piece.piece in LAB_SPECIAL_TOKENS:  # other control pieces are never produced by encoding
                ids[piece.piece] = lab_ids[piece.piece]
        elif piece.piece in LAB_SPECIAL_TOKENS:
            raise VocabularyError(
                f"{model_path}: {piece.piece!r} is an ordinary piece here, a special token in fairseq"
            )
        elif piece.piece in lab_ids:
            ids[piece.piece] = lab_ids[piece.piece]
        else:
            missing.append(piece.piece)
    if missing:
        raise VocabularyError(
            f"{model_path}: {len(missing)} pieces are not in the dictionary (first: {missing[:5]}); a fast tokenizer "
            "cannot give them the <unk> id, so the dictionary must list every piece of the model"
        )
    return ids


def _model(proto, ids: dict[str, int], dict_pieces: list[str], model_path) -> models.Model:
    """The tokenizers model, with the lab's ids: BPE merges ordered by the pieces' scores, or Unigram scores."""
    scores = {piece.piece: piece.score for piece in proto.pieces if piece.type in (NORMAL, USER_DEFINED)}
    model_type = proto.trainer_spec.model_type
    if model_type == BPE:
        vocabulary = {**{token: i for i, token in enumerate(LAB_SPECIAL_TOKENS)}, **ids}
        merges = generate_merges(vocabulary, [(piece, scores[piece]) for piece in dict_pieces if piece in scores])
        return models.BPE(vocabulary, merges, unk_token="<unk>", fuse_unk=True)
    if model_type == UNIGRAM:
        # Unigram ids are list positions: the lab's order, special tokens unscored.
        vocabulary = [(token, 0.0) for token in LAB_SPECIAL_TOKENS] + [(p, scores.get(p, 0.0)) for p in dict_pieces]
        return models.Unigram(vocabulary, unk_id=LAB_SPECIAL_TOKENS.index("<unk>"), byte_fallback=False)
    raise VocabularyError(f"{model_path}: model type {model_type} is neither BPE (2) nor Unigram (1)")


def _normalizer(spec) -> normalizers.Normalizer:
    """SentencePiece's normalisation: its precompiled (NFKC) map, then extra whitespace removed. Only the spaces
    the map leaves: `Strip()` would also drop other white space, such as U+0085, which SentencePiece keeps."""
    steps = [normalizers.Precompiled(spec.precompiled_charsmap)] if spec.precompiled_charsmap else []
    if spec.remove_extra_whitespaces:
        steps += [normalizers.Replace(Regex("^ +| +$"), ""), normalizers.Replace(Regex(" {2,}"), " ")]
    return normalizers.Sequence(steps)


def build_altegrad_lab_raw_tokenizer(
    dict_path: str | os.PathLike,
    sentencepiece_model: str | os.PathLike,
    output_dir: str | os.PathLike | None = None,
    model_max_length: int = 512,
) -> PreTrainedTokenizerFast:
    """The lab's vocabulary over raw text: SentencePiece's segmentation, `dict.txt`'s ids, `<s>` in front."""
    dict_pieces = read_fairseq_dictionary(dict_path)
    proto = read_sentencepiece_model(sentencepiece_model)
    ids = lab_piece_ids(proto, dict_pieces, sentencepiece_model)
    check_dictionary_in_model(dict_path, dict_pieces, ids, sentencepiece_model)  # the pieces encoding can give
    tokenizer = Tokenizer(_model(proto, ids, dict_pieces, sentencepiece_model))
    tokenizer.normalizer = _normalizer(proto.normalizer_spec)
    prepend = "always" if proto.normalizer_spec.add_dummy_prefix else "never"
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme=prepend)
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme=prepend)
    return wrap_lab_tokenizer(tokenizer, model_max_length, output_dir)


# ------------------------------------------------------------------------------------------------------------------
# Every course
# ------------------------------------------------------------------------------------------------------------------


def is_course_tokenizer(path: str | os.PathLike) -> bool:
    """Whether a saved tokenizer folder holds a course's vocabulary: CS224N's characters, or the lab's ids (the
    fairseq specials first and no mask token)."""
    try:
        tokenizer = open_tokenizer(path)
    except (OSError, ValueError):
        return False
    return vocabulary_of(tokenizer) in COURSE_VOCABULARIES


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


def resolve_tokenizer(
    path: str | os.PathLike | None,
    vocabulary: str = BPE_VOCABULARY,
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
    course = vocabulary != BPE_VOCABULARY
    if path:
        if not course:
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
