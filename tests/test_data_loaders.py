"""`datasets` loaders on the real data and on bad inputs, and run_clm-style block packing."""

from __future__ import annotations

import gzip
import shutil
import warnings
from pathlib import Path

import pytest
from datasets import ClassLabel, Dataset

from hf_models.data import (
    DataError,
    DataWarning,
    detokenize_spm,
    load_birthplace,
    load_birthplace_corpus,
    load_cls_books,
    load_text_corpus,
    read_lines,
    tokenize_and_group,
)


# --------------------------------------------------------------------------------------------------
# Real data (skipped when ../shared/data is absent)
# --------------------------------------------------------------------------------------------------
def test_birthplace_real_splits_and_recovered_dev_rows(shared_data_dir: Path) -> None:
    with pytest.warns(DataWarning) as record:
        ds = load_birthplace(shared_data_dir / "birthplace")
    # One counted warning for the four noisy dev rows, not one per row.
    messages = [str(w.message) for w in record]
    assert len(messages) == 1
    assert "birth_dev.tsv: 4 row(s)" in messages[0] and "line(s) 1, 2, 3, 6" in messages[0]

    assert {k: len(v) for k, v in ds.items()} == {"train": 2000, "validation": 500, "test": 437}
    assert ds["train"].column_names == ["question", "answer"]
    assert ds["test"].column_names == ["question"]
    dev = ds["validation"]
    assert [dev[i]["answer"] for i in (0, 1, 2, 5)] == ["Atlanta", "Berlin", "England", "Geelong"]
    assert dev[1]["question"] == "Where was Ralf Wadephul born?"
    assert dev[3] == {"question": "Where was Sandhya Sanjana born?", "answer": "Mumbai"}
    assert ds["train"][0] == {"question": "Where was Khatchig Mouradian born?", "answer": "Lebanon"}
    assert all("\t" not in a and a == a.strip() for a in dev["answer"])


def test_birthplace_corpus_real(shared_data_dir: Path) -> None:
    corpus = load_birthplace_corpus(shared_data_dir / "birthplace")
    assert list(corpus) == ["train"]
    assert len(corpus["train"]) == 2937
    assert corpus["train"][0]["text"].startswith("Khatchig Mouradian. ")


def test_cls_books_real_splits(shared_data_dir: Path) -> None:
    ds = load_cls_books(shared_data_dir / "cls-books")
    assert {k: len(v) for k, v in ds.items()} == {"train": 1600, "validation": 400, "test": 2000}
    label = ds["train"].features["label"]
    assert isinstance(label, ClassLabel) and label.names == ["negative", "positive"]
    assert ds["validation"].features["label"].names == ["negative", "positive"]
    assert "label" not in ds["test"].column_names
    assert sum(ds["train"]["label"]) == 800  # balanced
    first = ds["train"][0]["text"]
    assert first.startswith("Que faire? en cas d?amour ? Au travers de huit récits")
    assert all("\u2581" not in t and t == t.strip() for t in ds["test"]["text"])


def test_detokenize_spm() -> None:
    assert detokenize_spm("▁Que ▁faire ? ▁en ▁cas ▁d ? amour ▁?") == "Que faire? en cas d?amour ?"
    assert detokenize_spm("▁Inv ari ablement ,") == "Invariablement,"


# --------------------------------------------------------------------------------------------------
# Bad inputs: clear errors naming file[:line], or one counted warning
# --------------------------------------------------------------------------------------------------
@pytest.fixture
def birthplace_copy(tmp_path: Path, synthetic_birthplace_dir: Path) -> Path:
    return Path(shutil.copytree(synthetic_birthplace_dir, tmp_path / "birthplace"))


@pytest.fixture
def cls_dir(tmp_path: Path, write_cls_books) -> Path:
    sizes = (("train", 4), ("valid", 2), ("test", 3))
    return write_cls_books(
        tmp_path / "cls",
        {split: ([f"▁Très ▁bon ▁livre ▁{i} ▁!" for i in range(n)], [i % 2 for i in range(n)]) for split, n in sizes},
    )


def test_birthplace_loads_synthetic_without_warning(birthplace_copy: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_birthplace(birthplace_copy)
    assert {k: len(v) for k, v in ds.items()} == {"train": 240, "validation": 60, "test": 30}


def test_windows_line_ends_are_removed(birthplace_copy: Path) -> None:
    wiki = birthplace_copy / "wiki.txt"
    paragraphs = wiki.read_text(encoding="utf-8").splitlines()
    wiki.write_bytes(("\r\n".join(paragraphs) + "\r\n").encode("utf-8"))
    assert read_lines(wiki) == paragraphs
    assert load_birthplace_corpus(birthplace_copy)["train"]["text"] == paragraphs


def test_missing_file_and_folder(birthplace_copy: Path, tmp_path: Path) -> None:
    (birthplace_copy / "birth_dev.tsv").unlink()
    with pytest.raises(FileNotFoundError, match=r"birth_dev\.tsv: no such file"):
        load_birthplace(birthplace_copy)
    with pytest.raises(FileNotFoundError, match=r"nowhere: no such folder"):
        load_cls_books(tmp_path / "nowhere")


def test_empty_file(birthplace_copy: Path) -> None:
    (birthplace_copy / "wiki.txt").write_text("")
    with pytest.raises(DataError, match=r"wiki\.txt: file is empty"):
        load_birthplace_corpus(birthplace_copy)


def test_invalid_utf8_names_file_and_line(birthplace_copy: Path) -> None:
    path = birthplace_copy / "birth_places_train.tsv"
    lines = path.read_bytes().split(b"\n")
    lines[6] = b"Where was Jos\xe9 born?\tLima"  # latin-1 byte on line 7
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(DataError, match=r"birth_places_train\.tsv:7: invalid UTF-8"):
        load_birthplace(birthplace_copy)


def test_three_field_row(birthplace_copy: Path) -> None:
    path = birthplace_copy / "birth_dev.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[9] += "\textra"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"birth_dev\.tsv:10: expected 2 tab-separated fields .* found 3"):
        load_birthplace(birthplace_copy)


def test_spaces_instead_of_tab_recovered_else_error(birthplace_copy: Path) -> None:
    path = birthplace_copy / "birth_dev.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    expected = lines[4].split("\t")
    lines[4] = lines[4].replace("\t", "    ")
    lines[7] = lines[7].replace("\t", " ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.warns(DataWarning, match=r"2 row\(s\) had spaces instead of the tab .* line\(s\) 5, 8"):
        ds = load_birthplace(birthplace_copy)
    assert [ds["validation"][4]["question"], ds["validation"][4]["answer"]] == expected
    assert len(ds["validation"]) == 60

    lines[2] = "Where was Nobody born?"  # no answer at all: cannot be recovered
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"birth_dev\.tsv:3: expected 'QUESTION<TAB>ANSWER'"):
        load_birthplace(birthplace_copy)


def test_blank_lines_are_counted(birthplace_copy: Path) -> None:
    path = birthplace_copy / "wiki.txt"
    n_docs = len(path.read_text(encoding="utf-8").splitlines())
    path.write_text("\n" + path.read_text(encoding="utf-8") + "\n  \n", encoding="utf-8")
    with pytest.warns(DataWarning, match=r"wiki\.txt: 3 blank line\(s\) \(dropped\); line\(s\) 1, 332, 333$"):
        corpus = load_birthplace_corpus(birthplace_copy)
    assert len(corpus["train"]) == n_docs


def test_cls_books_small_and_bad_labels(cls_dir: Path) -> None:
    ds = load_cls_books(cls_dir)
    assert ds["train"][1] == {"text": "Très bon livre 1 !", "label": 1}

    (cls_dir / "train.label").write_text("0\n1\n0\n")  # one label short
    with pytest.raises(DataError, match=r"train\.review\.spm has 4 reviews but .*train\.label has 3 labels"):
        load_cls_books(cls_dir)

    (cls_dir / "train.label").write_text("0\n1\npositive\n1\n")
    with pytest.raises(DataError, match=r"train\.label:3: expected label 0 or 1"):
        load_cls_books(cls_dir)


# --------------------------------------------------------------------------------------------------
# Raw text corpora through the datasets text builder
# --------------------------------------------------------------------------------------------------
def _write_corpus(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "a.txt").write_text("Première ligne.\n\nDeuxième ligne.\n   \n", encoding="utf-8")
    with gzip.open(d / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write("".join(f"Ligne compressée numéro {i}.\n" for i in range(18)))
    return d


def test_text_corpus_plain_and_gz_drops_empty_lines(tmp_path: Path) -> None:
    corpus_dir = _write_corpus(tmp_path / "corpus")
    with pytest.warns(DataWarning, match=r"dropped 2 empty line\(s\) out of 22"):
        ds = load_text_corpus(corpus_dir, cache_dir=str(tmp_path / "cache"))
    texts = list(ds["train"]["text"])
    assert len(texts) == 20
    assert texts[:2] == ["Première ligne.", "Deuxième ligne."] and texts[-1] == "Ligne compressée numéro 17."

    with pytest.warns(DataWarning):
        split = load_text_corpus(
            [corpus_dir / "a.txt", corpus_dir / "b.txt.gz"],
            validation_fraction=0.25,
            cache_dir=str(tmp_path / "cache"),
        )
    assert (len(split["train"]), len(split["validation"])) == (15, 5)
    assert sorted(list(split["train"]["text"]) + list(split["validation"]["text"])) == sorted(texts)


def test_text_corpus_bad_inputs(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_text_corpus(tmp_path / "nope.txt", cache_dir=cache)
    (tmp_path / "empty.txt.gz").write_bytes(gzip.compress(b"\n\n"))
    with pytest.raises(DataError, match=r"empty\.txt\.gz: file is empty"):
        load_text_corpus(tmp_path / "empty.txt.gz", cache_dir=cache)
    (tmp_path / "bad.txt").write_bytes("ligne un\nligne deux\nligne trois \xe9t\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"bad\.txt:3: invalid UTF-8"):
        load_text_corpus(tmp_path / "bad.txt", cache_dir=cache)
    with pytest.raises(ValueError, match="validation_fraction"):
        load_text_corpus(tmp_path / "bad.txt", validation_fraction=1.5)


# --------------------------------------------------------------------------------------------------
# Tokenize and group (run_clm.py)
# --------------------------------------------------------------------------------------------------
def test_tokenize_and_group_packs_exact_blocks(tiny_tokenizer) -> None:
    docs = [f"Document {i}: " + "quelques mots " * (i % 7 + 1) for i in range(50)]
    ds = Dataset.from_dict({"text": docs, "other": list(range(50))})
    blocks = tokenize_and_group(ds, tiny_tokenizer, block_size=16)
    assert blocks.column_names == ["input_ids", "attention_mask"]
    assert all(len(ids) == 16 for ids in blocks["input_ids"])
    assert all(mask == [1] * 16 for mask in blocks["attention_mask"])
    # The blocks are the concatenation of the documents, each followed by </s>, minus the remainder.
    stream = [t for doc in docs for t in tiny_tokenizer(doc)["input_ids"] + [tiny_tokenizer.eos_token_id]]
    flat = [t for ids in blocks["input_ids"] for t in ids]
    assert flat == stream[: len(flat)] and len(stream) - len(flat) < 16


def test_tokenize_and_group_num_proc_and_cache(tiny_tokenizer, tmp_path: Path) -> None:
    corpus_dir = _write_corpus(tmp_path / "corpus")
    with pytest.warns(DataWarning):
        ds = load_text_corpus(corpus_dir, cache_dir=str(tmp_path / "cache"))
    one = tokenize_and_group(ds, tiny_tokenizer, block_size=8)
    two = tokenize_and_group(ds, tiny_tokenizer, block_size=8, num_proc=2)
    assert one["train"]["input_ids"] == two["train"]["input_ids"]
    # Same data, tokenizer and block size: same fingerprint, so the cached Arrow file is reused.
    again = tokenize_and_group(ds, tiny_tokenizer, block_size=8)
    assert again["train"]._fingerprint == one["train"]._fingerprint
    assert again["train"].cache_files == one["train"].cache_files
    other = tokenize_and_group(ds, tiny_tokenizer, block_size=4)
    assert other["train"]._fingerprint != one["train"]._fingerprint
