#!/usr/bin/env python
"""The smoke profile's data: the first lines of each data set, in the layout of DATA_ROOT, so that every step of the
grid runs on a slice of the real data in seconds.

    python benchmarks/slice_data.py --data_root ../shared/data --out outputs/smoke/data --lines 200

birthplace/: the first LINES paragraphs of wiki.txt (and a line of every character of the whole file: the
course's character vocabulary) and LINES training, dev and test questions; cls-books/: LINES
training reviews and LINES of validation and test, half of each label where the split has labels (the files are in
label order), with the lab's vocabulary (dict.txt, sentencepiece.french.model) whole; french-corpus/: the first
LINES lines of each compressed file. Where DATA_ROOT has no birthplace folder, the synthetic birthplace set
(hf_models.data.synthetic) stands in for it; the other two have no stand-in: a step that reads them fails, naming
the folder.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BIRTHPLACE_FILES = ("wiki.txt", "birth_places_train.tsv", "birth_dev.tsv", "birth_test_inputs.tsv")
LAB_VOCABULARY = ("dict.txt", "sentencepiece.french.model")


def first_lines(path: Path, lines: int) -> list[str]:
    with open(path, encoding="utf-8", newline="") as file:
        return list(itertools.islice(file, lines))


def balanced(reviews: list[str], labels: list[str], lines: int) -> tuple[list[str], list[str]]:
    """The first `lines` reviews, half of each label (in the file's order)."""
    kept = []
    for label in sorted(set(labels)):
        kept += [i for i, value in enumerate(labels) if value == label][: lines // len(set(labels))]
    kept.sort()
    return [reviews[i] for i in kept], [labels[i] for i in kept]


def slice_birthplace(source: Path, target: Path, lines: int) -> str:
    target.mkdir(parents=True, exist_ok=True)
    if not source.is_dir():
        sys.path.insert(0, str(REPO_ROOT))
        from hf_models.data.synthetic import write_synthetic_birthplace

        write_synthetic_birthplace(target, num_people=lines, seed=0)
        return f"{target}: the synthetic birthplace set ({source} is absent)"
    for name in BIRTHPLACE_FILES:
        (target / name).write_text("".join(first_lines(source / name, lines)), encoding="utf-8")
    # The course's vocabulary is the characters of wiki.txt, the questions' among them: a last line keeps them all.
    characters = sorted(set((source / "wiki.txt").read_text(encoding="utf-8")) - {"\n", "\r"})
    with open(target / "wiki.txt", "a", encoding="utf-8") as file:
        file.write("".join(characters) + "\n")
    return f"{target}: the first {lines} lines of {source}"


def slice_cls_books(source: Path, target: Path, lines: int) -> str:
    if not source.is_dir():
        return f"{source} is absent: no cls-books slice"
    target.mkdir(parents=True, exist_ok=True)
    for split in ("train", "valid", "test"):
        reviews = (source / f"{split}.review.spm").read_text(encoding="utf-8").splitlines(keepends=True)
        label_file = source / f"{split}.label"
        if label_file.is_file():
            labels = label_file.read_text(encoding="utf-8").splitlines(keepends=True)
            reviews, labels = balanced(reviews, labels, lines)
            (target / label_file.name).write_text("".join(labels), encoding="utf-8")
        (target / f"{split}.review.spm").write_text("".join(reviews[:lines]), encoding="utf-8")
    for name in LAB_VOCABULARY:
        shutil.copyfile(source / name, target / name)
    return f"{target}: {lines} reviews of each split of {source}"


def slice_french_corpus(source: Path, target: Path, lines: int) -> str:
    if not source.is_dir():
        return f"{source} is absent: no french-corpus slice"
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.txt.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as file:
            kept = list(itertools.islice(file, lines))
        with gzip.open(target / path.name, "wt", encoding="utf-8") as file:
            file.writelines(kept)
    return f"{target}: the first {lines} lines of each file of {source}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_root", default="../shared/data", help="the folder of birthplace/, cls-books/, ...")
    parser.add_argument("--out", required=True, help="the folder to write the slices into")
    parser.add_argument("--lines", type=int, default=200, help="lines kept of each file")
    args = parser.parse_args(argv)
    if args.lines < 10:
        parser.error(f"--lines {args.lines}: give at least 10")
    root, out = Path(args.data_root), Path(args.out)
    print(slice_birthplace(root / "birthplace", out / "birthplace", args.lines))
    print(slice_cls_books(root / "cls-books", out / "cls-books", args.lines))
    print(slice_french_corpus(root / "french-corpus", out / "french-corpus", args.lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
