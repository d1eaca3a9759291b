"""benchmarks/agreement_with_tfidf.py: every row's agreement with TF-IDF's test labels, its seeds' agreement with each
other, the estimate calibrated by outside scores, and clear errors for malformed predictions files."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

import agreement_with_tfidf  # benchmarks/agreement_with_tfidf.py  # noqa: E402
from tfidf_baseline import tfidf_test_predictions  # noqa: E402

from hf_models.data import load_cls_books  # noqa: E402
from hf_models.textio import DataError, UsageError  # noqa: E402

POSITIVE = ["excellent", "magnifique", "passionnant", "superbe"]
NEGATIVE = ["ennuyeux", "mauvais", "décevant", "médiocre"]
FILLER = ["le", "livre", "est", "un", "roman", "de", "la", "histoire"]


@pytest.fixture(scope="module")
def cls_books(tmp_path_factory, write_cls_books) -> tuple[Path, list[int]]:
    """Reviews whose sentiment words give the label away, and the test labels the project never sees."""
    rng, splits = random.Random(0), {}
    for split, n in (("train", 60), ("valid", 20), ("test", 40)):
        labels = [rng.randint(0, 1) for _ in range(n)]
        reviews = [rng.sample(FILLER, 4) + rng.sample(POSITIVE if y else NEGATIVE, 2) for y in labels]
        splits[split] = ([" ".join("\u2581" + w for w in r) for r in reviews], labels)
    return write_cls_books(tmp_path_factory.mktemp("cls_books"), splits), splits["test"][1]


def _write(path: Path, labels: list[int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{y}\n" for y in labels))
    return path


def test_rows_agreement_between_seeds_and_the_calibrated_estimate(cls_books, tmp_path):
    data_dir, labels = cls_books
    reference = list(tfidf_test_predictions(load_cls_books(data_dir)))
    assert reference == labels  # the sentiment words make TF-IDF right on every test review
    flipped = [1 - y for y in labels]
    half = flipped[:20] + labels[20:]
    predictions = tmp_path / "predictions"
    _write(predictions / "same" / "seed42.txt", labels)
    _write(predictions / "same" / "seed43.txt", labels)
    _write(predictions / "mixed" / "seed42.txt", labels)
    _write(predictions / "mixed" / "seed43.txt", half)
    _write(predictions / "gpu" / "flipped" / "seed42.txt", flipped)
    _write(predictions / "headline_test_predictions.txt", flipped)  # not a seed<N>.txt file: not a row
    scored = _write(tmp_path / "scored.txt", half)
    output = tmp_path / "agreement.json"
    report = agreement_with_tfidf.main(
        [
            "--data_dir",
            str(data_dir),
            "--predictions_dirs",
            str(predictions),
            "--scored",
            f"{scored}=0.6",
            "--output",
            str(output),
        ]
    )
    assert json.loads(output.read_text()) == report
    assert report["scored"] == [{"file": str(scored), "accuracy": 0.6, "agreement": 0.5, "offset": pytest.approx(0.1)}]
    rows = {Path(entry["row"]).relative_to(predictions).as_posix(): entry for entry in report["rows"]}
    assert [Path(entry["row"]).name for entry in report["rows"]] == ["same", "mixed", "flipped"]  # most agreeing first
    assert rows["same"] == {
        "row": str(predictions / "same"),
        "files": 2,
        "agreement": 1.0,
        "agreement_std": 0.0,
        "between_seeds": 1.0,
        "estimate": 1.0,
    }  # 1.1, kept to an accuracy
    assert rows["mixed"]["agreement"] == pytest.approx(0.75)
    assert rows["mixed"]["agreement_std"] == pytest.approx(0.3535534)
    assert rows["mixed"]["between_seeds"] == pytest.approx(0.5)
    assert rows["mixed"]["estimate"] == pytest.approx(0.85)
    assert rows["gpu/flipped"]["agreement"] == 0.0
    assert rows["gpu/flipped"]["agreement_std"] is rows["gpu/flipped"]["between_seeds"] is None  # one file
    assert rows["gpu/flipped"]["estimate"] == pytest.approx(0.1)
    with pytest.raises(UsageError, match="agreement.json exists: give --overwrite_output"):
        agreement_with_tfidf.main(
            ["--data_dir", str(data_dir), "--predictions_dirs", str(predictions), "--output", str(output)]
        )
    again = agreement_with_tfidf.main(
        [
            "--data_dir",
            str(data_dir),
            "--predictions_dirs",
            str(predictions),
            "--output",
            str(output),
            "--overwrite_output",
        ]
    )
    assert "estimate" not in again["rows"][0] and again["scored"] == []


def test_malformed_predictions_and_flags_get_clear_errors(cls_books, tmp_path):
    data_dir, labels = cls_books
    common = ["--data_dir", str(data_dir), "--predictions_dirs"]
    short = _write(tmp_path / "short" / "row" / "seed42.txt", labels[:3])
    with pytest.raises(DataError, match=re.escape(f"{short}: 3 lines, expected 40 (one label per test review")):
        agreement_with_tfidf.main([*common, str(tmp_path / "short")])
    bad = _write(tmp_path / "bad" / "row" / "seed42.txt", [0, 2, *labels[2:]])
    with pytest.raises(DataError, match=re.escape(f"{bad}:2: '2' is not a label (0 or 1)")):
        agreement_with_tfidf.main([*common, str(tmp_path / "bad")])
    with pytest.raises(UsageError, match="no folder of seed<N>.txt files there"):
        agreement_with_tfidf.main([*common, str(tmp_path / "empty")])
    for value in ("scored.txt", "scored.txt=77.65", "=0.7"):
        with pytest.raises(UsageError, match="give FILE=ACCURACY with an accuracy between 0 and 1"):
            agreement_with_tfidf.main([*common, str(tmp_path / "short"), "--scored", value])
