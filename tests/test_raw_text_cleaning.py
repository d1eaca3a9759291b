"""What each reader and the app do to raw text, exactly, on each kind of oddity a user's file or typing brings.

The cleaning, reader by reader (asserted below):
- `textio.read_lines` / `iter_text_lines`: lines end at `\\n` only; the line break is removed (`\\n`, then one `\\r`
  before it), nothing else: no-break spaces, tabs, control and zero-width characters, U+2028, U+0085, a lone `\\r`
  stay where they are. `iter_text_lines` skips lines that are white space alone (`str.strip`: tabs, no-break and
  ideographic spaces, U+0085, U+2028 included); a zero-width space is no white space, so its line is kept.
- `loaders.load_birthplace`: a row is cut at its tab; the question and the answer are `str.strip`ped (so a no-break
  space or a tab at either end goes, inner ones stay); a row with spaces instead of the tab is cut after `born?`;
  blank rows are skipped and counted.
- `loaders.load_birthplace_corpus`: every non-blank line of wiki.txt as it is (not stripped: the course reads it so).
- `loaders.detokenize_spm` / `load_cls_books`: the pieces joined, `▁` made a space, the ends stripped; labels
  stripped before being read as 0 or 1.
- `loaders.load_text_corpus`: `datasets`' text builder, which ends lines at `\\n`, `\\r\\n` and a lone `\\r`
  (universal newlines) but not at U+2028, U+0085 or a form feed; lines of white space alone are dropped and counted.
- the app (`hf_models.app`): a typed question or review is `str.strip`ped, and refused when nothing is left.
"""

from __future__ import annotations

import importlib
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
from hf_models.textio import DataError, iter_text_lines, read_lines

# Raw lines as a user's editor may save them (each ends with its own line break in the file).
RAW_LINES = [
    "\u00a0no-break\u00a0space\u00a0",
    "\ttabs\tinside and at the ends\t",
    "control\x07characters\x1f\x7f",
    "zero\u200bwidth\u200d\ufeff",
    "line\u2028separator and next\x85line",
    "form\x0cfeed and vertical\x0btab",
    "full-width \uff21\uff22\uff23 and e\u0301 combining",
    "a lone\rcarriage return",
]


def _write(path, text: str):
    path.write_bytes(text.encode("utf-8"))
    return path


def test_read_lines_removes_the_line_break_and_nothing_else(tmp_path):
    path = _write(
        tmp_path / "raw.txt",
        "".join(line + "\n" for line in RAW_LINES[:4]) + "".join(line + "\r\n" for line in RAW_LINES[4:]),
    )
    assert read_lines(path) == RAW_LINES
    assert list(iter_text_lines(path)) == RAW_LINES
    # Only one \r goes with a \r\n; a file without a final line break keeps its last line whole.
    assert read_lines(_write(tmp_path / "cr.txt", "two\r\r\nlast\t")) == ["two\r", "last\t"]


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
    # The tokenizer trainer reads the same file line by line, with the lone \r inside its line.
    assert list(iter_text_lines(path))[-2:] == ["last", "\rcr only"]


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


@pytest.mark.parametrize("typed", [None, "", " ", "\t\n", "\u00a0", "\u3000\u2028", "\x1c\x1d\x1e\x1f\x85"])
def test_app_refuses_white_space_alone(typed):
    require_text, app_error = _app_function("_require_text"), _app_function("AppError")
    with pytest.raises(app_error, match="type a review first, for example 'Bien.'"):
        require_text(typed, "a review", "Bien.")
