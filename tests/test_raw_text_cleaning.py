"""What each reader and the app do to raw text, exactly, on each kind of oddity a user's file or typing brings.

Every reader decodes a file the same way (asserted below, reader by reader): UTF-8; one byte order mark at the very
start of a file is dropped (a U+FEFF anywhere else is text and stays); a line ends at `\\n`, `\\r\\n` or a lone `\\r`
(universal newlines, as Python's text mode and `datasets`' text builder read), never at U+2028, U+0085 or a form
feed. The cleaning, reader by reader:
- `textio.read_lines` / `iter_text_lines`: the line break is removed, nothing else: no-break spaces, tabs, control
  and zero-width characters, U+2028, U+0085 stay where they are. `iter_text_lines` skips lines that are white space
  alone (`str.strip`: tabs, no-break and ideographic spaces, U+0085, U+2028 included); a zero-width space is no white
  space, so its line is kept.
- `loaders.load_birthplace`: a row is cut at its tab; the question and the answer are `str.strip`ped (so a no-break
  space or a tab at either end goes, inner ones stay); a row with spaces instead of the tab is cut after `born?`;
  blank rows are skipped and counted.
- `loaders.load_birthplace_corpus`: every non-blank line of wiki.txt as it is (not stripped: the course reads it so).
- `loaders.detokenize_spm` / `load_cls_books`: the pieces joined, `▁` made a space, the ends stripped; labels
  stripped before being read as 0 or 1.
- `loaders.load_text_corpus`: `datasets`' text builder, the lines `iter_text_lines` reads; lines of white space alone
  are dropped and counted.
- `courses.build_cs224n_char_tokenizer`: the characters of wiki.txt as read whole (each line break a `\\n`).
- the app (`hf_models.app`): a typed question or review is `str.strip`ped, and refused when no character of it shows
  (white space, control and format characters such as the zero-width space alone).
"""

from __future__ import annotations

import gzip
import importlib
import json
import pkgutil
import warnings

import pytest

from hf_models.data import DataWarning
from hf_models.data.loaders import (
    detokenize_spm,
    load_birthplace,
    load_birthplace_corpus,
    load_cls_books,
    load_text_corpus,
)
from hf_models.textio import DataError, iter_text_lines, read_lines, read_text
from hf_models.tokenization.courses import build_cs224n_char_tokenizer, read_fairseq_dictionary
from hf_models.training import read_arguments_file

BOM = "\ufeff"  # the byte order mark, as Windows editors write it at the start of a UTF-8 file

# Raw lines as a user's editor may save them (each ends with its own line break in the file).
RAW_LINES = [
    "\u00a0no-break\u00a0space\u00a0",
    "\ttabs\tinside and at the ends\t",
    "control\x07characters\x1f\x7f",
    "zero\u200bwidth\u200d\ufeff",
    "line\u2028separator and next\x85line",
    "form\x0cfeed and vertical\x0btab",
    "full-width \uff21\uff22\uff23 and e\u0301 combining",
]


def _write(path, text: str):
    """`text` as UTF-8 at `path`, gzip-compressed when the name ends with .gz."""
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def test_read_lines_removes_the_line_break_and_nothing_else(tmp_path):
    path = _write(
        tmp_path / "raw.txt",
        "".join(line + "\n" for line in RAW_LINES[:4]) + "".join(line + "\r\n" for line in RAW_LINES[4:]),
    )
    assert read_lines(path) == RAW_LINES
    assert list(iter_text_lines(path)) == RAW_LINES
    # A \r before a \r\n ends a line of its own; a file without a final line break keeps its last line whole.
    assert read_lines(_write(tmp_path / "cr.txt", "two\r\r\nlast\t")) == ["two", "", "last\t"]


def test_iter_text_lines_skips_white_space_alone(tmp_path):
    blank = ["", " ", "\t", "\u00a0", "\u3000", "\x85", "\u2028", "\x1c\x1d\x1e\x1f", " \t\u00a0\r"]
    kept = ["\u200b", "x"]  # a zero-width space is not white space: the line is text as typed
    path = _write(tmp_path / "blank.txt", "".join(line + "\n" for line in blank + kept))
    assert list(iter_text_lines(path)) == kept
    assert list(iter_text_lines(path, skip_empty=False)) == [*blank[:-1], " \t\u00a0", *kept]


def _birthplace_folder(tmp_path, train: str, dev: str, test: str):
    for name, text in (("birth_places_train.tsv", train), ("birth_dev.tsv", dev), ("birth_test_inputs.tsv", test)):
        _write(tmp_path / name, text)
    return tmp_path


def test_birthplace_rows_are_cut_at_the_tab_and_stripped(tmp_path):
    train = (
        "\u00a0Where was Ann\u00a0Lee born?\t\u00a0Paris\u3000\r\n"  # no-break spaces at the ends go, the inner one stays
        "Where was Bob born? \t Lyon \n"
        "\u00a0\t\n"  # a blank row (a tab and a no-break space): skipped, counted
        "Where was Cy born?   Saint\u00a0Denis\r\n"  # spaces instead of the tab: cut after "born?"
        "Where was Dee\u200b born?\tNice\x07\n"  # zero-width and control characters are text: kept
    )
    folder = _birthplace_folder(tmp_path, train, "Where was Eve born?\tRome\n", " Where was Fay born?\u00a0\r\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qa = load_birthplace(folder)
    assert qa["train"]["question"] == [
        "Where was Ann\u00a0Lee born?",
        "Where was Bob born?",
        "Where was Cy born?",
        "Where was Dee\u200b born?",
    ]
    assert qa["train"]["answer"] == ["Paris", "Lyon", "Saint\u00a0Denis", "Nice\x07"]
    assert qa["test"]["question"] == ["Where was Fay born?"]
    messages = sorted(str(w.message) for w in caught if issubclass(w.category, DataWarning))
    assert len(messages) == 2
    assert "1 blank line(s) (skipped); line(s) 3" in messages[0]
    assert "1 row(s) had spaces instead of the tab" in messages[1] and "line(s) 4" in messages[1]


def test_birthplace_row_with_a_tab_inside_the_answer_is_refused(tmp_path):
    folder = _birthplace_folder(tmp_path, "Where was Ann born?\tParis\tFrance\n", "a\tb\n", "q\n")
    with pytest.raises(DataError, match=r"birth_places_train.tsv:1: expected 2 tab-separated fields"):
        load_birthplace(folder)


def test_wiki_paragraphs_are_kept_as_they_are(tmp_path):
    lines = ["\u00a0Ann Lee. Born\tin Paris.\t", "Bob\u200b Roe. Born in Lyon\x07.", "e\u0301te\u0301 \u00e9t\u00e9"]
    _write(tmp_path / "wiki.txt", f"{lines[0]}\r\n\u00a0\n{lines[1]}\n\t\n{lines[2]}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = load_birthplace_corpus(tmp_path)["train"]
    assert corpus["text"] == lines
    assert ["2 blank line(s) (dropped); line(s) 2, 4" in str(w.message) for w in caught] == [True]


@pytest.mark.parametrize(
    "pieces, text",
    [
        ("\u2581un \u2581livre \u2581super be", "un livre superbe"),
        ("\u2581l ' \u2581\u00e9t\u00e9 \u2581\u00e0", "l' \u00e9t\u00e9 \u00e0"),
        ("\u2581un\u00a0 \u2581livre\t", "un\u00a0 livre"),  # the ends are stripped (str.strip), inner text stays
        ("\u2581\u2581 \u2581", ""),
        ("\u2581e\u0301 t\u200b", "e\u0301t\u200b"),
    ],
)
def test_detokenize_spm(pieces, text):
    assert detokenize_spm(pieces) == text


def test_cls_books_reviews_and_labels_from_raw_files(tmp_path):
    reviews = "\u2581un \u2581livre \u2581super be\r\n\u2581e\u0301t\u00e9\u00a0 \u2581fin\n\u2581\n"
    for split in ("train", "valid", "test"):
        _write(tmp_path / f"{split}.review.spm", reviews)
    for split in ("train", "valid"):
        _write(tmp_path / f"{split}.label", "1\r\n 0\u00a0\n\t1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # the empty third review, reported
        books = load_cls_books(tmp_path)
        pieces = load_cls_books(tmp_path, detokenize=False)
    assert books["train"]["text"] == ["un livre superbe", "e\u0301t\u00e9\u00a0 fin", ""]
    assert books["train"]["label"] == [1, 0, 1]
    assert pieces["test"]["text"] == [
        "\u2581un \u2581livre \u2581super be",
        "\u2581e\u0301t\u00e9\u00a0 \u2581fin",
        "\u2581",
    ]


def test_text_corpus_lines_as_datasets_reads_them(tmp_path):
    raw = "a\u00a0b\tc\r\nsecond\u2028half\x0cff\x0bvt\x1cfs\x85nel\n\u00a0\n\t \n\u200b\nlast\r\n\rcr only\n\u3000\n"
    path = _write(tmp_path / "corpus.txt", raw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = load_text_corpus(path, cache_dir=str(tmp_path / "cache"))["train"]
    assert corpus["text"][:] == [
        "a\u00a0b\tc",
        "second\u2028half\x0cff\x0bvt\x1cfs\x85nel",
        "\u200b",
        "last",
        "cr only",
    ]
    assert [str(w.message) for w in caught if issubclass(w.category, DataWarning)] == [
        "1 file(s): dropped 4 empty line(s) out of 9"
    ]
    # The tokenizer trainer reads the same file line by line: the same lines.
    assert list(iter_text_lines(path)) == corpus["text"][:]


# --------------------------------------------------------------------------------------------------
# The rules every reader shares: line breaks and the byte order mark
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["corpus.txt", "corpus.txt.gz"])
def test_every_reader_ends_lines_at_lf_crlf_and_a_lone_cr(tmp_path, name):
    raw = "one\r\ntwo\rthree\n\r\nfour\r\rfive\u2028same\x85line\x0cstill\r"
    lines = ["one", "two", "three", "", "four", "", "five\u2028same\x85line\x0cstill"]
    path = _write(tmp_path / name, raw)
    assert read_lines(path) == lines
    assert list(iter_text_lines(path)) == [line for line in lines if line]
    assert read_text(path) == "".join(line + "\n" for line in lines)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = load_text_corpus(path, cache_dir=str(tmp_path / "cache"))["train"]
    assert corpus["text"][:] == list(iter_text_lines(path))
    assert [str(w.message) for w in caught if issubclass(w.category, DataWarning)] == [
        "1 file(s): dropped 2 empty line(s) out of 7"
    ]


def test_invalid_utf8_is_on_the_same_line_for_every_reader(tmp_path):
    path = _write(tmp_path / "bad.txt", "")
    path.write_bytes(b"one\rtwo\r\nthree \xff\n")
    with pytest.raises(DataError, match=r"bad\.txt:3: invalid UTF-8 \(byte b'\\xff' at column 7\)"):
        list(iter_text_lines(path))
    with pytest.raises(DataError, match=r"bad\.txt:3: invalid UTF-8"):
        read_text(path)
    with pytest.raises(DataError, match=r"bad\.txt:3: invalid UTF-8 \(byte b'\\xff' at column 7\)"):
        load_text_corpus(path, cache_dir=str(tmp_path / "cache"))


def _read_with_and_without_bom(tmp_path, files: dict[str, str], read):
    """What `read(folder)` gives on `files` written as they are, then each with a byte order mark in front."""
    results = []
    for folder, mark in ((tmp_path / "plain", ""), (tmp_path / "marked", BOM)):
        folder.mkdir()
        for name, text in files.items():
            _write(folder / name, mark + text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)
            results.append(read(folder))
    return results


def _corpus_lines(name: str):
    return lambda folder: (
        load_text_corpus(folder / name, cache_dir=str(folder / "cache"))["train"]["text"][:],
        list(iter_text_lines(folder / name)),
        read_lines(folder / name),
    )


def _splits(datasets) -> dict:
    return {split: dataset.to_dict() for split, dataset in datasets.items()}


def _wiki(folder):
    tokenizer = build_cs224n_char_tokenizer(folder / "wiki.txt")
    return _splits(load_birthplace_corpus(folder)), tokenizer.get_vocab()


_BIRTHPLACE = {
    "birth_places_train.tsv": "Where was Ann born?\tParis\nWhere was Bob born?\tLyon\n",
    "birth_dev.tsv": "Where was Cy born?\tNice\n",
    "birth_test_inputs.tsv": "Where was Dee born?\n",
}
_CLS_BOOKS = {
    **{f"{split}.review.spm": "\u2581un \u2581livre\n\u2581bien\n" for split in ("train", "valid", "test")},
    **{f"{split}.label": "1\n0\n" for split in ("train", "valid")},
}
# Each kind of user text file: its files, and what its readers give on them.
BOM_CASES = {
    "text corpus": ({"corpus.txt": "first line\nsecond\n"}, _corpus_lines("corpus.txt")),
    ".gz text corpus": ({"corpus.txt.gz": "first line\nsecond\n"}, _corpus_lines("corpus.txt.gz")),
    "birthplace TSV": (_BIRTHPLACE, lambda folder: _splits(load_birthplace(folder))),
    "wiki.txt": ({"wiki.txt": "Ann Lee. Born in Paris.\nBob.\n"}, _wiki),
    "cls-books reviews": (_CLS_BOOKS, lambda folder: _splits(load_cls_books(folder))),
    "fairseq dict.txt": (
        {"dict.txt": "\u2581un 9\n\u2581livre 3\n"},
        lambda f: read_fairseq_dictionary(f / "dict.txt"),
    ),
    "arguments file": (
        {"config.json": '{"learning_rate": 0.1}'},
        lambda f: read_arguments_file(str(f / "config.json")),
    ),
}


@pytest.mark.parametrize("kind", BOM_CASES)
def test_a_byte_order_mark_at_the_start_of_a_file_is_dropped(tmp_path, kind):
    files, read = BOM_CASES[kind]
    plain, marked = _read_with_and_without_bom(tmp_path, files, read)
    assert marked == plain
    assert BOM not in json.dumps(plain, ensure_ascii=False)


@pytest.mark.parametrize("name", ["corpus.txt", "corpus.txt.gz"])
def test_a_byte_order_mark_elsewhere_is_text(tmp_path, name):
    # Only the first of two marks at the start goes; one at the start of a later line (or a later file) stays.
    path = _write(tmp_path / name, f"{BOM}{BOM}one\n{BOM}two\n")
    later = _write(tmp_path / f"later-{name}", f"{BOM}three\n")
    lines = [f"{BOM}one", f"{BOM}two", "three"]
    assert list(iter_text_lines([path, later])) == lines
    assert read_text(path) == f"{BOM}one\n{BOM}two\n"
    corpus = load_text_corpus([path, later, path], cache_dir=str(tmp_path / "cache"))["train"]
    assert corpus["text"][:] == [*lines, *lines[:2]]


def test_a_byte_order_mark_alone_is_an_empty_file(tmp_path):
    path = _write(tmp_path / "empty.txt", f"{BOM} \n")
    with pytest.raises(DataError, match=r"empty\.txt: file is empty"):
        read_lines(path)
    with pytest.raises(DataError, match=r"empty\.txt: file is empty"):
        load_text_corpus(path, cache_dir=str(tmp_path / "cache"))


# --------------------------------------------------------------------------------------------------
# The app's typed input
# --------------------------------------------------------------------------------------------------
def _app_function(name: str):
    """`name` from `hf_models.app`, a module or a package (then from whichever of its modules defines it)."""
    app = importlib.import_module("hf_models.app")
    if hasattr(app, name):
        return getattr(app, name)
    for info in pkgutil.iter_modules(getattr(app, "__path__", [])):
        module = importlib.import_module(f"hf_models.app.{info.name}")
        if hasattr(module, name):
            return getattr(module, name)
    pytest.fail(f"hf_models.app has no {name}")


@pytest.mark.parametrize(
    "typed, cleaned",
    [
        ("  Where was Ann born?  ", "Where was Ann born?"),
        ("\u00a0Where was Ann\u00a0Lee born?\t\r\n", "Where was Ann\u00a0Lee born?"),
        ("\u3000Un livre\u2028superbe.\x85", "Un livre\u2028superbe."),
        ("\ufeffUn\u200blivre\u200b", "\ufeffUn\u200blivre\u200b"),  # zero-width characters are no white space
        ("e\u0301te\u0301 \uff21", "e\u0301te\u0301 \uff21"),  # no normalisation: the tokenizer gets what was typed
        ("\x07bell\x1f", "\x07bell"),  # U+001F is white space to Python, U+0007 is not
    ],
)
def test_app_strips_typed_text_and_nothing_else(typed, cleaned):
    require_text = _app_function("_require_text")
    assert require_text(typed, "a question", "Where was Albert Einstein born?") == cleaned


@pytest.mark.parametrize(
    "typed",
    [
        *(None, "", " ", "\t\n", "\u00a0", "\u3000\u2028", "\x1c\x1d\x1e\x1f\x85"),  # white space
        "\u200b\u200c\u2060",  # zero-width space, non-joiner, word joiner
        f"{BOM}\u200d \u00ad\t\u200e\u200f",  # byte order mark, zero-width joiner, soft hyphen, direction marks
        "\x07\x1b",  # control characters
    ],
)
def test_app_refuses_text_that_does_not_show(typed):
    """A text of white space, format characters (zero-width ones) and control characters alone is refused as an
    empty one: a model would otherwise answer a question nobody can see."""
    require_text, app_error = _app_function("_require_text"), _app_function("AppError")
    with pytest.raises(app_error, match="type a review first, for example 'Bien.'"):
        require_text(typed, "a review", "Bien.")
