"""The lab's 50,001 ids on RAW text (`altegrad-lab-raw`): `sentencepiece.french.model` as a fast `tokenizers` model.

The lab split its reviews with SentencePiece (`sentencepiece.french.model`, a BPE model of 50,000 pieces) and
numbered the pieces with fairseq's `dict.txt`: `<s> <pad> </s> <unk>` (ids 0-3), then the dictionary's pieces in
file order. `build_altegrad_lab_raw_tokenizer` does both steps in one `PreTrainedTokenizerFast`:

- the model file is parsed with transformers' protobuf schema (the `sentencepiece` package is not needed); its
  pieces and scores become a `tokenizers` BPE (merges ordered by score, as `transformers.convert_slow_tokenizer`
  does) or Unigram model whose ids are the lab's ids, so no second lookup is needed;
- SentencePiece's normalisation: the model's precompiled NFKC map, extra whitespace removed, and `▁` for every
  space with one in front (`add_dummy_prefix`); decoding turns `▁` back into spaces;
- `<s>` in front of every sequence, as the lab's data set does (and as `altegrad-lab`, the `.spm`-pieces tokenizer).

A piece of the model that `dict.txt` lacks cannot be given the `<unk>` id inside a fast model (a BPE vocabulary
with two pieces on one id loses one of them when saved), so it is an error that names the pieces; the lab's files
have none. Consecutive characters the model does not know become one `<unk>`, as SentencePiece fuses them.
"""

from __future__ import annotations

import os

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from transformers.convert_slow_tokenizer import generate_merges

from .lab_dictionary import (
    LAB_SPECIAL_TOKENS,
    VocabularyError,
    check_dictionary_in_model,
    read_lab_dictionary,
    read_sentencepiece_model,
    wrap_lab_tokenizer,
)

__all__ = ["build_altegrad_lab_raw_tokenizer", "lab_piece_ids"]

# SentencePiece's ModelProto: trainer_spec.model_type and SentencePiece.type values.
UNIGRAM, BPE = 1, 2
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6


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
    dict_pieces = read_lab_dictionary(dict_path)
    proto = read_sentencepiece_model(sentencepiece_model)
    ids = lab_piece_ids(proto, dict_pieces, sentencepiece_model)
    check_dictionary_in_model(dict_path, dict_pieces, ids, sentencepiece_model)  # the pieces encoding can give
    tokenizer = Tokenizer(_model(proto, ids, dict_pieces, sentencepiece_model))
    tokenizer.normalizer = _normalizer(proto.normalizer_spec)
    prepend = "always" if proto.normalizer_spec.add_dummy_prefix else "never"
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme=prepend)
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme=prepend)
    return wrap_lab_tokenizer(tokenizer, model_max_length, output_dir)
