"""Raw, unnormalised user text through every tokenizer the project ships, checked against each one's reference.

- Our byte-level BPE (`hf_models/tokenization/bpe.py`, trained by `tokenizer/train_tokenizer.py`) declares no
  normalizer: text goes in as typed. So a no-break space stays a no-break space, a combining accent stays two code
  points, and every string comes back byte for byte: the tokens' bytes are the text's UTF-8 bytes.
- CS224N's characters (`courses.build_cs224n_char_tokenizer`): the course's `stoi`, one id per character of the
  text as read (`sorted(set(wiki.txt))` after `□` and `⁇`), no normalisation at all.
- The lab's SentencePiece over raw text (`courses.build_altegrad_lab_raw_tokenizer`, `altegrad-lab-raw`): SentencePiece's own encoding
  (`nmt_nfkc` and its whitespace rules) mapped through `dict.txt` as the lab numbered it. The pieces below were
  written by `sentencepiece.SentencePieceProcessor(model_file=...).encode(text, out_type=str)` on the lab's model;
  where the `sentencepiece` package is installed the comparison also runs live on more text.
"""

from __future__ import annotations

import importlib.util
import unicodedata
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from hf_models.tokenization import load_tokenizer
from hf_models.tokenization.courses import (
    VocabularyError,
    build_altegrad_lab_raw_tokenizer,
    build_cs224n_char_tokenizer,
    load_course_tokenizer,
    read_fairseq_dictionary,
)

REPO_ROOT = Path(__file__).resolve().parents[1]

# One of each oddity a user's text brings (name, text): written with escapes, since most are invisible.
ODD_TEXTS = [
    ("no-break space", "un\u00a0livre\u00a0superbe"),
    ("narrow no-break and ideographic spaces", "\u3000le\u202flivre\u3000"),
    ("full-width letters and digits", "\uff35\uff2e \uff4c\uff49\uff56\uff52\uff45 \uff11\uff12\uff13"),
    ("combining accents", "e\u0301te\u0301 a\u0300 Noe\u0308l"),
    ("precomposed accents", "\u00e9t\u00e9 \u00e0 No\u00ebl"),
    ("control characters", "le\u0000 li\u0007vre\u001f fin\u007f"),
    ("tabs and newlines", "un\tlivre\nsur\r\ndeux\x0blignes\x0c"),
    ("zero-width characters", "z\u00e9ro\u200blargeur\u200c\u200d\ufeffici"),
    ("runs of spaces", "  espaces   en   trop  "),
    ("ligatures and compatibility forms", "\ufb01n de l\u2019\u0153uvre \u2026 \u00bd \u338f"),
    ("next-line control at the edges", "\x85livre \x85"),
]
ODD_IDS = [name for name, _ in ODD_TEXTS]


# --------------------------------------------------------------------------------------------------
# Our byte-level BPE: no normalizer, so the tokens' bytes are the text's UTF-8 bytes
# --------------------------------------------------------------------------------------------------
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, character -> byte (what `pre_tokenizers.ByteLevel` writes each byte as)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1)]
    printable += range(ord("\u00ae"), ord("\u00ff") + 1)
    others = [b for b in range(256) if b not in printable]
    return {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}


@pytest.fixture(scope="module")
def bpe_dir(tmp_path_factory) -> Path:
    """A 300-token BPE trained with `tokenizer/train_tokenizer.py` on a corpus of the odd texts themselves."""
    spec = importlib.util.spec_from_file_location(
        "train_tokenizer_raw", REPO_ROOT / "tokenizer" / "train_tokenizer.py"
    )
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    folder = tmp_path_factory.mktemp("raw_bpe")
    # One text per line: the line breaks inside "tabs and newlines" split it, as the trainer reads lines.
    (folder / "corpus.txt").write_text("".join(f"{text}\n" for _, text in ODD_TEXTS) * 20, encoding="utf-8")
    out = folder / "tok"
    argv = ["--files", str(folder / "corpus.txt"), "--vocab_size", "300", "--output_dir", str(out), "--no_progress"]
    assert cli.main(argv) == 0
    return out


def test_our_bpe_declares_no_normalizer(bpe_dir):
    tokenizer = load_tokenizer(bpe_dir)
    assert tokenizer.backend_tokenizer.normalizer is None
    assert tokenizer.clean_up_tokenization_spaces is False


@pytest.mark.parametrize("text", [text for _, text in ODD_TEXTS], ids=ODD_IDS)
def test_our_bpe_keeps_raw_text_byte_for_byte(bpe_dir, text):
    tokenizer = load_tokenizer(bpe_dir)
    ids = tokenizer(text)["input_ids"]
    assert ids == tokenizer(text, add_special_tokens=False)["input_ids"]  # nothing added
    byte_of = _byte_decoder()
    token_bytes = bytes(byte_of[char] for token in tokenizer.convert_ids_to_tokens(ids) for char in token)
    assert token_bytes == text.encode("utf-8")
    assert tokenizer.decode(ids) == text
    assert AutoTokenizer.from_pretrained(bpe_dir)(text)["input_ids"] == ids


def test_our_bpe_tells_apart_what_a_normaliser_would_merge(bpe_dir):
    tokenizer = load_tokenizer(bpe_dir)

    def ids(text: str) -> list[int]:
        return tokenizer(text)["input_ids"]

    for text in ("e\u0301te\u0301", "un\u00a0livre", "\uff35\uff2e", "\ufb01n", "z\u00e9ro\u200bici"):
        for form in ("NFC", "NFKC"):
            normalised = unicodedata.normalize(form, text)
            if normalised != text:
                assert ids(text) != ids(normalised), (form, text)
    assert ids("un\u00a0livre") != ids("un livre")  # NFKC would make the no-break space a space


# --------------------------------------------------------------------------------------------------
# CS224N's characters: the course's stoi, one id per character as read
# --------------------------------------------------------------------------------------------------
CHAR_WIKI = (
    "Ann\u00a0Lee. Ann Lee was born in Paris.\tShe wrote e\u0301te\u0301 and \u00e9t\u00e9.\r\n"
    "\uff22\uff4f\uff42 Roe. Bob\u200bRoe\u200d was born in  Lyon\x07.\r\n"
)


def _course_stoi(wiki: Path) -> dict[str, int]:
    """CS224N's `CharCorruptionDataset`: `chars = sorted(list(set(data)))`, then `⁇` and `□` inserted at 0, of
    the file read as the course reads it (`open(path, encoding='utf-8').read()`, universal newlines)."""
    with open(wiki, encoding="utf-8") as f:
        chars = sorted(set(f.read()))
    chars.insert(0, "\u2047")
    chars.insert(0, "\u25a1")
    return {char: i for i, char in enumerate(chars)}


@pytest.fixture(scope="module")
def char_tokenizer_and_stoi(tmp_path_factory):
    folder = tmp_path_factory.mktemp("raw_chars")
    (folder / "wiki.txt").write_bytes(CHAR_WIKI.encode("utf-8"))
    build_cs224n_char_tokenizer(folder / "wiki.txt", folder / "tok")
    return load_course_tokenizer(folder / "tok"), _course_stoi(folder / "wiki.txt")


@pytest.mark.parametrize(
    "text",
    [
        "Ann\u00a0Lee",  # a no-break space is its own character
        "e\u0301te\u0301 \u00e9t\u00e9",  # combining and precomposed: different ids
        "\uff22\uff4f\uff42",  # full-width letters as they are
        "Bob\u200bRoe\u200d",  # zero-width characters are characters
        "in\tParis.\n",  # tabs and newlines
        "in  Lyon\x07",  # a run of spaces, a control character
        "  \t\n\n  ",  # white space alone
        "\u2047Paris\u2047",  # the course's mask character as the separator
    ],
)
def test_course_characters_are_the_course_stoi(char_tokenizer_and_stoi, text):
    tokenizer, stoi = char_tokenizer_and_stoi
    assert tokenizer(text)["input_ids"] == [stoi[char] for char in text]
    assert tokenizer.decode(tokenizer(text)["input_ids"]) == text


def test_course_characters_read_crlf_as_the_course_does(char_tokenizer_and_stoi):
    """The course reads wiki.txt with universal newlines: `\\r` is no character of its vocabulary, so a question
    with one is refused by name (the course's `stoi` raises KeyError), never silently changed."""
    tokenizer, stoi = char_tokenizer_and_stoi
    assert "\r" not in stoi and "\r" not in tokenizer.get_vocab()
    assert len(tokenizer) == len(stoi)
    with pytest.raises(VocabularyError, match=r"'\\r' \(U\+000D\)"):
        tokenizer("Paris\r\n")
    with pytest.raises(VocabularyError, match=r"'\\u3000' \(U\+3000\)"):  # NFKC would have made it a space
        tokenizer("Ann\u3000Lee")


# --------------------------------------------------------------------------------------------------
# The lab's SentencePiece model over raw text: SentencePiece's own encoding, dict.txt's ids
# --------------------------------------------------------------------------------------------------
# sentencepiece 0.2.3, `encode(text, out_type=str)` with the lab's sentencepiece.french.model (nmt_nfkc,
# add_dummy_prefix, remove_extra_whitespaces), for each of ODD_TEXTS.
SENTENCEPIECE_PIECES = {
    "no-break space": ["\u2581un", "\u2581livre", "\u2581superbe"],
    "narrow no-break and ideographic spaces": ["\u2581le", "\u2581livre"],
    "full-width letters and digits": ["\u2581UN", "\u2581livre", "\u2581123"],
    "combining accents": ["\u2581\u00e9t\u00e9", "\u2581\u00e0", "\u2581No", "\u00eb", "l"],
    "precomposed accents": ["\u2581\u00e9t\u00e9", "\u2581\u00e0", "\u2581No", "\u00eb", "l"],
    "control characters": ["\u2581le", "\x00", "\u2581livre", "\u2581fin"],
    "tabs and newlines": ["\u2581un", "\u2581livre", "\u2581sur", "\u2581deux", "lig", "nes"],
    "zero-width characters": ["\u2581z\u00e9ro", "\u2581largeur", "\u2581ici"],
    "runs of spaces": ["\u2581espaces", "\u2581en", "\u2581trop"],
    "ligatures and compatibility forms": [
        *["\u2581fin", "\u2581de", "\u2581l", "\u2019", "\u0153uvre", "\u2581...", "\u25811", "\u2044", "2"],
        "\u2581kg",
    ],
    "next-line control at the edges": ["\u2581", "\x85", "livre", "\u2581", "\x85"],
}


@pytest.fixture(scope="module")
def lab_raw(shared_data_dir, tmp_path_factory):
    """The lab's raw-text tokenizer, saved and loaded back, and its dict.txt ids."""
    books = shared_data_dir / "cls-books"
    out = tmp_path_factory.mktemp("lab_raw") / "tok"
    build_altegrad_lab_raw_tokenizer(books / "dict.txt", books / "sentencepiece.french.model", out)
    lab_id = {piece: 4 + i for i, piece in enumerate(read_fairseq_dictionary(books / "dict.txt"))}
    return AutoTokenizer.from_pretrained(out), lab_id, books


def _lab_ids(pieces: list[str], lab_id: dict[str, int]) -> list[int]:
    """The lab's numbering of SentencePiece's pieces: `<s>` (0) first, a piece `dict.txt` lacks is `<unk>` (3)."""
    return [0] + [lab_id.get(piece, 3) for piece in pieces]


@pytest.mark.parametrize("name, text", ODD_TEXTS, ids=ODD_IDS)
def test_lab_raw_text_ids_are_sentencepiece_pieces_through_dict(lab_raw, name, text):
    tokenizer, lab_id, _ = lab_raw
    assert tokenizer(text)["input_ids"] == _lab_ids(SENTENCEPIECE_PIECES[name], lab_id)


def test_lab_raw_text_matches_live_sentencepiece(lab_raw):
    """The reference itself, where the package is installed: the odd texts, and each of many code points alone,
    inside a word and at a text's edges."""
    sentencepiece = pytest.importorskip("sentencepiece")
    tokenizer, lab_id, books = lab_raw
    reference = sentencepiece.SentencePieceProcessor(model_file=str(books / "sentencepiece.french.model"))
    assert reference.encode([text for _, text in ODD_TEXTS], out_type=str) == [
        SENTENCEPIECE_PIECES[name] for name, _ in ODD_TEXTS
    ]
    chars = [chr(c) for c in range(0x3400) if not 0xD800 <= c < 0xE000]
    texts = [form.format(c) for c in chars for form in ("{}livre", "le {} livre", "livre{}")]
    expected = [_lab_ids(pieces, lab_id) for pieces in reference.encode(texts, out_type=str)]
    wrong = [
        text for text, ids, want in zip(texts, tokenizer(texts)["input_ids"], expected, strict=True) if ids != want
    ]
    assert not wrong, f"{len(wrong)} texts differ from SentencePiece, first {wrong[:5]}"
