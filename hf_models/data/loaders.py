"""`datasets` loaders for the three tasks: birthplace QA (CS224N a5), CLS-FR books, and raw text corpora.

Every loader returns a `datasets.DatasetDict`. Bad input raises a short `DataError` (or
`FileNotFoundError`) that names the file, and the line when there is one; rows that can be repaired are
repaired and reported in one counted `DataWarning` per file. No row is dropped silently.
"""

from __future__ import annotations

import math
import os
import warnings
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from datasets import ClassLabel, Dataset, DatasetDict, Features, Value

from ..textio import (
    BOM,
    DataError,
    DataWarning,
    UsageError,
    check_not_empty,
    find_decode_error,
    iter_text_files,
    open_text,
    read_lines,
    warn_rows,
)

BIRTHPLACE_FILES = {
    "corpus": "wiki.txt",
    "train": "birth_places_train.tsv",
    "validation": "birth_dev.tsv",
    "test": "birth_test_inputs.tsv",
}
# split -> (reviews, labels or None)
CLS_BOOKS_FILES = {
    "train": ("train.review.spm", "train.label"),
    "validation": ("valid.review.spm", "valid.label"),
    "test": ("test.review.spm", None),
}
CLS_LABEL_NAMES = ["negative", "positive"]
_QUESTION_END = "born?"


# --------------------------------------------------------------------------------------------------
# Birthplace (CS224N a5)
# --------------------------------------------------------------------------------------------------
def _parse_birthplace_tsv(path: Path, with_answers: bool) -> dict[str, list[str]]:
    questions: list[str] = []
    answers: list[str] = []
    recovered: list[int] = []
    blank: list[int] = []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            blank.append(lineno)
            continue
        fields = line.split("\t")
        if not with_answers:
            if len(fields) != 1:
                raise DataError(
                    f"{path}:{lineno}: expected a question only, found {len(fields)} tab-separated fields: {line!r}"
                )
            questions.append(line.strip())
            continue
        if len(fields) == 2:
            question, answer = fields[0].strip(), fields[1].strip()
        elif len(fields) == 1:
            # Real-world noise (birth_dev.tsv lines 1, 2, 3, 6): spaces instead of the tab. The question
            # always ends with "born?", so the answer is whatever follows it.
            cut = line.rfind(_QUESTION_END)
            if cut < 0 or not line[cut + len(_QUESTION_END) :].strip():
                raise DataError(
                    f"{path}:{lineno}: expected 'QUESTION<TAB>ANSWER', found no tab and no answer after "
                    f"{_QUESTION_END!r}: {line!r}"
                )
            question, answer = line[: cut + len(_QUESTION_END)].strip(), line[cut + len(_QUESTION_END) :].strip()
            recovered.append(lineno)
        else:
            raise DataError(
                f"{path}:{lineno}: expected 2 tab-separated fields (question, answer), found {len(fields)}: {line!r}"
            )
        if not question or not answer:
            raise DataError(f"{path}:{lineno}: empty question or answer: {line!r}")
        questions.append(question)
        answers.append(answer)
    warn_rows(
        path, "row(s) had spaces instead of the tab", recovered, f"recovered by splitting after {_QUESTION_END!r}"
    )
    warn_rows(path, "blank line(s)", blank, "skipped")
    if not questions:
        raise DataError(f"{path}: no rows")
    return {"question": questions, "answer": answers} if with_answers else {"question": questions}


def load_birthplace(data_dir: str | os.PathLike) -> DatasetDict:
    """Load the CS224N birthplace QA splits: `train`, `validation` (birth_dev.tsv), `test`.

    Columns: `question` ("Where was NAME born?") and `answer` (the place); the test split has no answer
    column (the answers are not public). Rows with spaces instead of the tab are recovered and reported
    in one counted `DataWarning`.
    """
    data_dir, splits = Path(data_dir), {}
    for split in ("train", "validation", "test"):
        columns = _parse_birthplace_tsv(data_dir / BIRTHPLACE_FILES[split], with_answers=split != "test")
        splits[split] = Dataset.from_dict(columns, features=Features({name: Value("string") for name in columns}))
    return DatasetDict(splits)


def load_birthplace_corpus(data_dir: str | os.PathLike) -> DatasetDict:
    """Load `wiki.txt`, one paragraph (document) per row, as the `train` split with a `text` column.

    Blank lines are dropped and counted in a `DataWarning`.
    """
    path = Path(data_dir) / BIRTHPLACE_FILES["corpus"]
    docs, blank = [], []
    for lineno, line in enumerate(read_lines(path), start=1):
        if line.strip():
            docs.append(line)
        else:
            blank.append(lineno)
    warn_rows(path, "blank line(s)", blank, "dropped")
    return DatasetDict({"train": Dataset.from_dict({"text": docs}, features=Features({"text": Value("string")}))})


# --------------------------------------------------------------------------------------------------
# CLS-FR books (FLUE)
# --------------------------------------------------------------------------------------------------
def detokenize_spm(line: str) -> str:
    """Undo SentencePiece splitting: join the space-separated pieces, then `▁` marks a space."""
    return line.replace(" ", "").replace("\u2581", " ").strip()


def load_cls_books(data_dir: str | os.PathLike, detokenize: bool = True) -> DatasetDict:
    """Load CLS-FR books: `train`, `validation`, `test` with a `text` column and a `label` ClassLabel.

    `text` is detokenized from the SentencePiece pieces, or, with `detokenize=False`, kept as the lab's
    space-separated pieces (the input of `hf_models.tokenization.courses.build_altegrad_lab_tokenizer`). `label` has names negative (0) and positive (1);
    the test split has no label column (the labels are held back).
    """
    data_dir, splits = Path(data_dir), {}
    for split, (review_file, label_file) in CLS_BOOKS_FILES.items():
        review_path = data_dir / review_file
        texts = [detokenize_spm(line) if detokenize else line.strip() for line in read_lines(review_path)]
        # Empty reviews are kept (dropping them would shift the labels) but reported.
        warn_rows(review_path, "empty review(s)", [i for i, t in enumerate(texts, start=1) if not t], "kept as ''")
        columns: dict[str, list] = {"text": texts}
        features = {"text": Value("string")}
        if label_file is not None:
            label_path = data_dir / label_file
            label_lines = read_lines(label_path)
            if len(label_lines) != len(texts):
                raise DataError(
                    f"{review_path} has {len(texts)} reviews but {label_path} has {len(label_lines)} labels"
                )
            labels = []
            for lineno, value in enumerate(label_lines, start=1):
                value = value.strip()
                if value not in ("0", "1"):
                    raise DataError(f"{label_path}:{lineno}: expected label 0 or 1, found {value!r}")
                labels.append(int(value))
            if split == "train" and len(set(labels)) < 2:  # a classifier would learn to answer one class
                raise DataError(
                    f"{label_path}: every training label is {labels[0]}: a classifier needs reviews of both classes"
                )
            columns["label"] = labels
            features["label"] = ClassLabel(names=CLS_LABEL_NAMES)
        splits[split] = Dataset.from_dict(columns, features=Features(features))
    return DatasetDict(splits)


# A label budget: a class-balanced draw of the training examples, the one draw every reader of a budget shares
# (`recipes/finetune_sentiment.py --label_budget`, `benchmarks/tfidf_baseline.py --label_budget`), so that a
# classifier and its reference line learn from the very same reviews.
def balanced_subset(labels: Sequence[int], size: int, seed: int) -> list[int]:
    """The indices of `size` examples, `size / k` of each of the k labels present, drawn with `seed`, in the
    dataset's order (so that a budget of every example is the dataset itself, in its own order).

    The draws are nested: each label's examples are shuffled once by `seed`, and a budget takes the first
    `size / k` of each, so that for one seed the draw of a budget holds the draws of every smaller one (a curve over
    budgets adds reviews, it never swaps them). The same labels, size and seed give the same draw on any machine."""
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if not len(classes):
        raise UsageError(f"--label_budget {size}: the training set has no labelled example")
    if size < len(classes):
        raise UsageError(f"--label_budget {size}: give at least {len(classes)} examples, one of each label")
    if size % len(classes):
        raise UsageError(f"--label_budget {size}: give a multiple of {len(classes)}, the same number of each label")
    per_class = size // len(classes)
    rng = np.random.default_rng(seed)
    chosen = []
    for label in classes:
        members = np.flatnonzero(labels == label)
        if per_class > len(members):
            raise UsageError(
                f"--label_budget {size}: {per_class} examples of label {label} asked, the data have {len(members)}"
            )
        chosen.append(rng.permutation(members)[:per_class])
    return sorted(int(i) for i in np.concatenate(chosen))


# --------------------------------------------------------------------------------------------------
# Raw text corpora (plain or .gz) through the `datasets` text builder
# --------------------------------------------------------------------------------------------------
def _is_nonblank_batch(batch: dict[str, list[str]]) -> list[bool]:
    return [bool(text.strip()) for text in batch["text"]]


def _without_bom_in_first_row(batch: dict[str, list[str]], indices: list[int]) -> dict[str, list[str]]:
    return {
        "text": [text.removeprefix(BOM) if i == 0 else text for text, i in zip(batch["text"], indices, strict=True)]
    }


def _load_lines(files: list[Path], cache_dir: str | None) -> Dataset:
    """The lines of `files`, in order, through the `datasets` text builder, as `iter_text_lines` reads them.

    The builder opens each file in text mode, so a line ends at `\\n`, `\\r\\n` or a lone `\\r` (universal newlines)
    as in `iter_text_lines`. It keeps a byte order mark (`encoding="utf-8-sig"` would drop it from plain files only:
    a .gz is opened through fsspec, which leaves the encoding out), and its rows do not say which file they come from:
    each file that starts with a mark begins a part of its own, whose first row drops the mark.
    """
    import datasets

    parts: list[list[str]] = []
    marked: list[bool] = []
    for f in files:
        with open_text(f) as text:  # a corrupt gzip file is named by `load_text_corpus`
            mark = text.buffer.read(3) == BOM.encode()
        if mark or not parts:
            parts.append([])
            marked.append(mark)
        parts[-1].append(str(f))
    loaded = datasets.load_dataset(
        "text", data_files={f"part_{i}": part for i, part in enumerate(parts)}, cache_dir=cache_dir
    )
    pieces = [
        loaded[f"part_{i}"].map(_without_bom_in_first_row, batched=True, with_indices=True)
        if mark
        else loaded[f"part_{i}"]
        for i, mark in enumerate(marked)
    ]
    return datasets.concatenate_datasets(pieces) if len(pieces) > 1 else pieces[0]


def load_text_corpus(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    validation_fraction: float = 0.0,
    seed: int = 42,
    cache_dir: str | None = None,
) -> DatasetDict:
    """Load plain or `.gz` text files (or folders of them) with the `datasets` text builder, one line per row: the
    lines `iter_text_lines` reads (a line ends at `\\n`, `\\r\\n` or a lone `\\r`; a byte order mark at the start of a
    file is dropped).

    Empty lines are dropped and counted in one `DataWarning`. With `validation_fraction > 0` a shuffled
    `validation` split of that fraction of the lines is held out. The result is cached by `datasets`
    (Arrow files and fingerprints), so a second call with the same files is fast.
    """
    if not 0.0 <= validation_fraction < 1.0:
        raise ValueError(f"validation_fraction must be in [0, 1), got {validation_fraction}")
    files = iter_text_files(paths)
    for f in files:
        check_not_empty(f)
    try:
        raw = _load_lines(files, cache_dir)
    except Exception as err:
        # The text builder reports invalid UTF-8 or a corrupt .gz as a bare UnicodeDecodeError or EOFError deep
        # in a worker, without the file; locate it ourselves and say which file (and line).
        cause = err
        while cause is not None and not isinstance(cause, UnicodeDecodeError | EOFError | OSError | zlib.error):
            cause = cause.__cause__ or cause.__context__
        if cause is None:
            raise
        for f in files:
            error = find_decode_error(f)  # a corrupt .gz raises its own DataError here
            if error is not None:
                raise error from None
        if not isinstance(cause, UnicodeDecodeError):
            raise
        raise DataError(f"invalid UTF-8 in one of {', '.join(map(str, files))}") from None
    total = len(raw)
    corpus = raw.filter(_is_nonblank_batch, batched=True, desc="Dropping empty lines")
    dropped = total - len(corpus)
    if dropped:
        warnings.warn(
            f"{len(files)} file(s): dropped {dropped} empty line(s) out of {total}", DataWarning, stacklevel=2
        )
    if len(corpus) == 0:
        raise DataError(f"no text in {', '.join(map(str, files))}")
    if validation_fraction > 0:
        held_out = math.ceil(len(corpus) * validation_fraction)  # as `train_test_split` rounds
        if not 0 < held_out < len(corpus):
            raise DataError(
                f"{', '.join(map(str, files))}: {len(corpus)} line(s) of text (one document per line) cannot be "
                f"split into training and {validation_fraction:.0%} validation lines; give more lines, or "
                "--validation_files"
            )
        split = corpus.train_test_split(test_size=validation_fraction, seed=seed, shuffle=True)
        return DatasetDict({"train": split["train"], "validation": split["test"]})
    return DatasetDict({"train": corpus})
