"""benchmarks/compare_sentiment_runs.py: pairs of sentiment runs compared on validation (epoch 1, final) and on the
test reviews (agreement with TF-IDF, changed predictions), the mean paired differences, and clear errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

import compare_sentiment_runs  # benchmarks/compare_sentiment_runs.py  # noqa: E402
from tfidf_baseline import tfidf_test_predictions  # noqa: E402

from hf_models.data import load_cls_books  # noqa: E402
from hf_models.run_record import Evaluation, RunRecord  # noqa: E402
from hf_models.textio import DataError, UsageError  # noqa: E402

POSITIVE, NEGATIVE = ["excellent", "superbe", "magnifique"], ["ennuyeux", "mauvais", "médiocre"]


@pytest.fixture(scope="module")
def cls_books(tmp_path_factory, write_cls_books) -> Path:
    """Reviews whose sentiment words give the label away: TF-IDF labels every test review right."""
    rng, splits = random.Random(1), {}
    for split, n in (("train", 60), ("valid", 20), ("test", 20)):
        labels = [rng.randint(0, 1) for _ in range(n)]
        reviews = [
            " ".join(["\u2581le", "\u2581livre"] + ["\u2581" + w for w in rng.sample(POSITIVE if y else NEGATIVE, 2)])
            for y in labels
        ]
        splits[split] = (reviews, labels)
    return write_cls_books(tmp_path_factory.mktemp("cls_books"), splits)


def _run(folder: Path, per_epoch: list[float], predictions: list[int]) -> str:
    """A run folder as finetune_sentiment.py leaves it: the record's validation curve and the test predictions."""
    folder.mkdir(parents=True)
    record = RunRecord(task="sentiment", objective="classification")
    points = [{"epoch": float(epoch), "accuracy": accuracy} for epoch, accuracy in enumerate(per_epoch, start=1)]
    record.add_evaluation(Evaluation("validation", {"accuracy": per_epoch[-1]}, 400, per_epoch=points))
    record.save(folder)
    (folder / "test_predictions.txt").write_text("".join(f"{y}\n" for y in predictions))
    return str(folder)


def test_pairs_their_differences_and_the_mean_with_its_standard_error(cls_books, tmp_path):
    truth = [int(y) for y in tfidf_test_predictions(load_cls_books(cls_books))]
    wrong = lambda k: [1 - y if i < k else y for i, y in enumerate(truth)]  # noqa: E731  first k flipped
    pairs = [
        _run(tmp_path / "a_ref", [0.70, 0.78], wrong(4)) + "=" + _run(tmp_path / "a_lever", [0.72, 0.80], wrong(2)),
        _run(tmp_path / "b_ref", [0.60, 0.75], wrong(2)) + "=" + _run(tmp_path / "b_lever", [0.64, 0.75], wrong(6)),
    ]
    output = tmp_path / "compare.json"
    report = compare_sentiment_runs.main(["--data_dir", str(cls_books), "--pairs", *pairs, "--output", str(output)])
    first, second = report["pairs"]
    assert first["reference"]["test_agreement"] == pytest.approx(16 / 20)
    assert first["lever"]["test_agreement"] == pytest.approx(18 / 20)
    assert first["changed_predictions"] == 2 and second["changed_predictions"] == 4
    assert first["difference"] == pytest.approx({"epoch_1": 0.02, "final": 0.02, "test_agreement": 0.10})
    assert second["difference"] == pytest.approx({"epoch_1": 0.04, "final": 0.0, "test_agreement": -0.20})
    mean = report["mean_difference"]
    assert mean["final"]["mean"] == pytest.approx(0.01) and mean["final"]["standard_error"] == pytest.approx(0.01)
    assert mean["test_agreement"]["mean"] == pytest.approx(-0.05)
    assert mean["test_agreement"]["standard_error"] == pytest.approx(0.15)
    assert json.loads(output.read_text())["mean_difference"] == json.loads(json.dumps(mean))
    with pytest.raises(UsageError, match="exists: give --overwrite_output"):
        compare_sentiment_runs.main(["--data_dir", str(cls_books), "--pairs", *pairs, "--output", str(output)])


def test_bad_pairs_and_run_folders_are_named(cls_books, tmp_path):
    truth = [int(y) for y in tfidf_test_predictions(load_cls_books(cls_books))]
    good = _run(tmp_path / "good", [0.7], truth)
    main = compare_sentiment_runs.main
    with pytest.raises(UsageError, match="give REFERENCE_DIR=LEVER_DIR"):
        main(["--data_dir", str(cls_books), "--pairs", good])
    with pytest.raises(UsageError, match="missing is not a folder"):
        main(["--data_dir", str(cls_books), "--pairs", f"{good}={tmp_path / 'missing'}"])
    (tmp_path / "no_record").mkdir()
    with pytest.raises(DataError, match="no_record: no run_record.json"):
        main(["--data_dir", str(cls_books), "--pairs", f"{good}={tmp_path / 'no_record'}"])
    short = _run(tmp_path / "short", [0.7], truth[:5])
    with pytest.raises(DataError, match="5 lines, expected 20"):
        main(["--data_dir", str(cls_books), "--pairs", f"{good}={short}"])
