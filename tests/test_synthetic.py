"""The synthetic birthplace task: deterministic, in the real files' formats, with a meaningful baseline."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hf_models.data import load_birthplace, load_birthplace_corpus
from hf_models.data.synthetic import PLACES, write_synthetic_birthplace

FILES = ("wiki.txt", "birth_places_train.tsv", "birth_dev.tsv", "birth_test_inputs.tsv")


def test_same_seed_same_files(tmp_path: Path) -> None:
    a = write_synthetic_birthplace(tmp_path / "a", num_people=100, seed=7)
    b = write_synthetic_birthplace(tmp_path / "b", num_people=100, seed=7)
    c = write_synthetic_birthplace(tmp_path / "c", num_people=100, seed=8)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert (a / "wiki.txt").read_bytes() != (c / "wiki.txt").read_bytes()


def test_formats_match_the_real_files(synthetic_birthplace_dir: Path) -> None:
    d = synthetic_birthplace_dir
    for name in ("birth_places_train.tsv", "birth_dev.tsv"):
        lines = (d / name).read_text(encoding="utf-8").splitlines()
        assert all(re.fullmatch(r"Where was [^\t]+ born\?\t[^\t]+", line) for line in lines)
    assert all(
        re.fullmatch(r"Where was [^\t]+ born\?", q) for q in (d / "birth_test_inputs.tsv").read_text().splitlines()
    )
    paragraphs = (d / "wiki.txt").read_text(encoding="utf-8").splitlines()
    assert all(re.match(r"[A-Z][a-z]+ [A-Z][a-z]+\. ", p) and p.endswith(" .") for p in paragraphs)


def test_loaders_read_it_like_the_real_data(synthetic_birthplace_dir: Path) -> None:
    qa = load_birthplace(synthetic_birthplace_dir)
    corpus = load_birthplace_corpus(synthetic_birthplace_dir)["train"]["text"]
    assert {k: len(v) for k, v in qa.items()} == {"train": 240, "validation": 60, "test": 30}
    assert len(corpus) == 330

    def name(question: str) -> str:
        return question.removeprefix("Where was ").removesuffix(" born?")

    train, dev, test = ({name(q) for q in qa[s]["question"]} for s in ("train", "validation", "test"))
    assert len(train) == 240 and not train & dev and not (train | dev) & test  # unique, disjoint people
    by_name = {p.split(". ", 1)[0]: p for p in corpus}
    assert set(by_name) == train | dev | test  # every person has exactly one paragraph
    for split in ("train", "validation"):
        for row in qa[split]:
            assert row["answer"] in PLACES
            assert row["answer"] in by_name[name(row["question"])]  # the knowledge is in the corpus


def test_most_common_place_is_a_meaningful_baseline(tmp_path: Path) -> None:
    qa = load_birthplace(write_synthetic_birthplace(tmp_path, num_people=1000, seed=0))
    answers = list(qa["train"]["answer"]) + list(qa["validation"]["answer"])
    (top, top_count), (_, second_count) = Counter(answers).most_common(2)
    assert top == "London"
    assert 0.08 <= top_count / len(answers) <= 0.16
    assert top_count > 1.5 * second_count
    # Filler facts name other places too, so the birthplace is not simply the only place mentioned.
    wiki = load_birthplace_corpus(tmp_path)["train"]["text"]
    assert sum(sum(p in para for p in PLACES) > 1 for para in wiki) > len(wiki) // 2
