"""benchmarks/write_results.py: rows from the run records of one bench folder, and headline test predictions
that always come from that folder (never from a row an earlier run left in results.json)."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

from hf_models.run_record import Evaluation, RunRecord

REPO_ROOT = Path(__file__).resolve().parent.parent


def _sentiment_run(folder: Path, accuracies: list[float], prediction: str) -> None:
    per_epoch = [{"epoch": float(i + 1), "accuracy": acc} for i, acc in enumerate(accuracies)]
    record = RunRecord(task="sentiment", objective="classification")
    record.add_evaluation(Evaluation("validation", {"accuracy": accuracies[-1]}, 400, per_epoch=per_epoch))
    record.save(folder)
    (folder / "test_predictions.txt").write_text(f"{prediction}\n{prediction}\n", encoding="utf-8")


def _write_results(monkeypatch, bench: Path, results: Path, predictions: Path, *extra: str) -> None:
    argv = ["write_results.py", "--bench_dir", str(bench), "--results", str(results),
            "--predictions_dir", str(predictions), "--hardware", "test machine", "--date", "2026-01-01", *extra]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(REPO_ROOT / "benchmarks" / "write_results.py"), run_name="__main__")


def test_rows_and_headline_predictions_come_from_this_bench_folder(tmp_path, monkeypatch):
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _sentiment_run(bench / "sentiment" / "scratch_seed42", [0.70, 0.74], "0")
    _sentiment_run(bench / "sentiment" / "scratch_seed43", [0.68, 0.72], "0")
    _sentiment_run(bench / "sentiment" / "pretrained_seed42", [0.71, 0.76], "1")
    (bench / "timings.tsv").write_text("se_scratch_seed42\t10\tpython a\nse_scratch_seed43\t12\tpython b\n")
    # An earlier run's row with a better mean, whose run is not in this bench folder.
    stale = {"value": 0.99, "std": 0.0, "date": "2025-01-01", "predictions_test": str(tmp_path / "gone.txt")}
    results.write_text(json.dumps({"sentiment_valid_acc": {"old_row": stale}, "throughput": {"kept": 1}}))

    _write_results(monkeypatch, bench, results, predictions)

    written = json.loads(results.read_text())
    scratch = written["sentiment_valid_acc"]["scratch"]
    assert scratch["value"] == pytest.approx(0.73)
    assert scratch["std"] == pytest.approx(0.0141, abs=1e-4)  # sample std of 0.74 and 0.72
    assert scratch["per_epoch"] == [0.69, 0.73]
    assert scratch["wall_time_s"] == 22
    assert scratch["command"] == "python a && python b"
    assert written["throughput"] == {"kept": 1}  # other sections are kept as they are
    # The headline is the best row *of this folder*: pretrained (0.76), not the stale 0.99.
    assert (predictions / "sentiment_test_predictions.txt").read_text() == "1\n1\n"
    readme = (predictions / "README.md").read_text()
    assert "`sentiment_valid_acc.pretrained` row" in readme and "old_row" not in readme


def test_gpu_profile_writes_its_own_sections_and_leaves_the_cpu_rows(tmp_path, monkeypatch):
    bench, results, predictions = tmp_path / "bench_gpu", tmp_path / "results.json", tmp_path / "predictions_gpu"
    _sentiment_run(bench / "sentiment" / "pretrained_seed42", [0.72, 0.77], "1")
    cpu_row = {"value": 0.75, "std": 0.01, "date": "2025-01-01"}
    results.write_text(json.dumps({"sentiment_valid_acc": {"pretrained": cpu_row}}))

    _write_results(monkeypatch, bench, results, predictions, "--profile", "gpu")

    written = json.loads(results.read_text())
    assert written["sentiment_valid_acc"] == {"pretrained": cpu_row}
    assert written["sentiment_valid_acc_gpu"]["pretrained"]["value"] == pytest.approx(0.77)
    assert written["birthplace_dev_acc_gpu"] == {}  # no birthplace runs in this folder
    assert (predictions / "sentiment_test_predictions.txt").read_text() == "1\n1\n"
    assert "`sentiment_valid_acc_gpu.pretrained` row" in (predictions / "README.md").read_text()


def _birthplace_run(folder: Path, dev: float, tune: float, prediction: str) -> None:
    for where, accuracy, total in ((folder, dev, 500), (folder / "eval_tune", tune, 200)):
        record = RunRecord(task="birthplace", objective="qa")
        record.add_evaluation(Evaluation("validation", {"exact_match": accuracy}, total))
        record.save(where)
    (folder / "predictions_test.txt").write_text(f"{prediction}\n", encoding="utf-8")


def test_birthplace_headline_is_chosen_on_the_tune_split_never_on_dev(tmp_path, monkeypatch):
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    # The finetuned model is better on dev but worse on the tuning split: the headline is the pretrained one.
    _birthplace_run(bench / "birthplace" / "vanilla_pretrain", dev=0.30, tune=0.36, prediction="Paris")
    _birthplace_run(bench / "birthplace" / "vanilla_finetune", dev=0.32, tune=0.33, prediction="London")
    # Equal on the tuning split: the course's finetuned model is kept.
    _birthplace_run(bench / "birthplace" / "synthesizer_pretrain", dev=0.08, tune=0.10, prediction="Rome")
    _birthplace_run(bench / "birthplace" / "synthesizer_finetune", dev=0.09, tune=0.10, prediction="Oslo")
    steps = {"bp_vanilla_pretrain": 100, "bp_vanilla_finetune": 10, "bp_vanilla_eval_dev": 1,
             "bp_vanilla_eval_tune": 2, "bp_vanilla_pretrain_eval_dev": 3, "bp_vanilla_pretrain_eval_tune": 4}  # fmt: skip
    (bench / "timings.tsv").write_text("".join(f"{name}\t{s}\tpython {name}\n" for name, s in steps.items()))

    _write_results(monkeypatch, bench, results, predictions)

    rows = json.loads(results.read_text())["birthplace_dev_acc"]
    assert rows["vanilla"]["value"] == 0.30 and rows["vanilla"]["chosen_row"] == "vanilla_pretrain_only"
    assert rows["vanilla_finetuned"]["value"] == 0.32  # the course's row is still reported
    assert rows["vanilla"]["std"] == pytest.approx((0.30 * 0.70 / 500) ** 0.5, abs=1e-4)
    assert rows["vanilla"]["wall_time_s"] == 120  # both candidates and their tune-split scoring: the choice's cost
    assert rows["synthesizer"]["chosen_row"] == "synthesizer_finetuned"
    assert (predictions / "birthplace_test_predictions.txt").read_text() == "Paris\n"
