"""benchmarks/write_results.py reads the runs of a profile (benchmarks/profiles/*.yaml) from one bench folder: every
row from this folder, headline test predictions from it too, and an error naming any run that is missing or failed
(never a row kept from an earlier run). With --report it renders BENCHMARKS.md and docs/levers.md from results.json
and benchmarks/levers.json (benchmarks/report.py): every table's figures from the JSON, the committed files equal to
what the generator renders."""

from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import shutil
import sys
from pathlib import Path

import grid
import pytest
import report
from test_label_curve import write_fake_curve_runs, write_step_records

from hf_models.run_record import Evaluation, RunRecord

REPO_ROOT = Path(__file__).resolve().parent.parent


def _sentiment_run(folder: Path, accuracies: list[float], prediction: str) -> None:
    per_epoch = [{"epoch": float(i + 1), "accuracy": acc} for i, acc in enumerate(accuracies)]
    record = RunRecord(task="sentiment", objective="classification")
    record.add_evaluation(Evaluation("validation", {"accuracy": accuracies[-1]}, 400, per_epoch=per_epoch))
    record.save(folder)
    (folder / "test_predictions.txt").write_text(f"{prediction}\n{prediction}\n", encoding="utf-8")


def _birthplace_run(folder: Path, dev: float, tune: float, prediction: str) -> None:
    for where, accuracy, total in ((folder, dev, 500), (folder / "eval_tune", tune, 200)):
        record = RunRecord(task="birthplace", objective="qa")
        record.add_evaluation(Evaluation("validation", {"exact_match": accuracy}, total))
        record.save(where)
    (folder / "predictions_test.txt").write_text(f"{prediction}\n", encoding="utf-8")


# Dev and tuning-split accuracies of the birthplace rows (the course profiles' and the benchmark's): the finetuned
# span-corruption model is better on dev but worse on the tuning split (its headline is the pretrained one); the
# reciting vanilla model's two are equal on the tuning split (the course's finetuned model is kept).
BIRTHPLACE = {
    "london": (0.05, None, "London"),
    "vanilla_nopretrain": (0.04, 0.045, "Oslo"),
    "vanilla_finetuned": (0.32, 0.33, "London"),
    "synthesizer_finetuned": (0.09, 0.10, "Oslo"),
    "vanilla_recite_pretrain_only": (0.63, 0.60, "Lyon"),
    "vanilla_recite_finetuned": (0.628, 0.60, "Nice"),  # a tie on the tuning split: the finetuned model is kept
    "synthesizer_recite_pretrain_only": (0.12, 0.13, "Rome"),
    "synthesizer_recite_finetuned": (0.11, 0.14, "Rome"),
    "vanilla_span_corruption_pretrain_only": (0.03, 0.06, "Paris"),
    "vanilla_span_corruption_finetuned": (0.04, 0.05, "Oslo"),
}
SENTIMENT = {
    "scratch": [0.70, 0.74],
    "pretrained": [0.71, 0.76],
    "frozen": [0.68, 0.69],
    "frozen_linear_probe": [0.72],  # no epoch after the probe: one evaluation
    "scratch_lp_ft": [0.66, 0.75],
    "pretrained_lp_ft": [0.73, 0.755],
}  # the first seed's


def _bench(bench: Path, profile: str = "cpu") -> dict[str, int]:
    """A bench folder with a run for every row of the profile, and the records (command, seconds) of every timed step
    that Snakemake leaves (steps/<step>.done, benchmarks/<step>.tsv)."""
    for row in grid.load(profile).rows["birthplace"]:
        dev, tune, prediction = BIRTHPLACE[row.key]
        if tune is None:
            record = RunRecord(task="birthplace-evaluation", objective="qa")
            record.add_evaluation(Evaluation("validation", {"exact_match": dev}, 500, baseline="london_baseline"))
            record.save(bench / row.runs[0])
        else:
            _birthplace_run(bench / row.runs[0], dev, tune, prediction)
    for row in grid.load(profile).rows["sentiment"]:
        for i, run in enumerate(row.runs):  # the seeds after the first lose 0.02 at the end
            _sentiment_run(bench / run, [*SENTIMENT[row.key][:-1], SENTIMENT[row.key][-1] - 0.02 * i], str(i % 2))
    write_fake_curve_runs(bench, profile)  # the label-budget curve's own runs (its full budget: the rows above)
    steps = {step.name for step in grid.load(profile).steps.values() if step.timed}
    seconds = {name: 1 + i for i, name in enumerate(sorted(steps))}
    write_step_records(bench, seconds, profile)
    return seconds


def _write_results(monkeypatch, bench: Path, results: Path, predictions: Path, *extra: str) -> None:
    argv = [
        "write_results.py",
        "--bench_dir",
        str(bench),
        "--results",
        str(results),
        "--predictions_dir",
        str(predictions),
        "--hardware",
        "test machine",
        "--date",
        "2026-01-01",
        *extra,
    ]
    monkeypatch.setattr(sys, "argv", argv)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), pytest.raises(SystemExit) as exit_:  # the script's exit status
        runpy.run_path(str(REPO_ROOT / "benchmarks" / "write_results.py"), run_name="__main__")
    if exit_.value.code:  # its one `error: ...` line, as the SystemExit it was raised as
        raise SystemExit(stderr.getvalue())


def test_rows_and_headline_predictions_come_from_this_bench_folder(tmp_path, monkeypatch):
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    seconds = _bench(bench)
    # An earlier run's row with a better mean, whose run is not in this bench folder: it must go.
    stale = {"value": 0.99, "std": 0.0, "date": "2025-01-01", "predictions_test": str(tmp_path / "gone.txt")}
    results.write_text(json.dumps({"sentiment_valid_acc": {"old_row": stale}, "throughput": {"kept": 1}}))

    _write_results(monkeypatch, bench, results, predictions)

    written = json.loads(results.read_text())
    assert set(written["sentiment_valid_acc"]) == {
        "scratch",
        "pretrained",
        "frozen",
        "frozen_linear_probe",
        "scratch_lp_ft",
        "pretrained_lp_ft",
    }  # no old_row
    scratch = written["sentiment_valid_acc"]["scratch"]
    assert scratch["value"] == pytest.approx(0.72)  # 0.74, 0.72 and 0.70 over the three seeds
    assert scratch["std"] == pytest.approx(0.02, abs=1e-4)
    assert scratch["per_epoch"] == [0.7, 0.72]
    assert scratch["wall_time_s"] == sum(
        seconds[s] for s in ("se_tokenizer", "se_scratch_seed42", "se_scratch_seed43", "se_scratch_seed44")
    )
    assert (
        scratch["command"]
        == "python se_tokenizer && python se_scratch_seed42 && python se_scratch_seed43 && python se_scratch_seed44"
    )
    assert written["throughput"] == {"kept": 1}  # other sections are kept as they are
    # The label-budget curve, its full budget the rows' own runs and predictions.
    assert written["sentiment_label_curve"]["rows"]["pretrained_lp_ft"]["1600"]["mean"] == pytest.approx(0.735)
    assert (predictions / "sentiment_curve" / "tfidf" / "n24_seed44.txt").read_text() == "tfidf 24 44\n"
    # The headline is the best row of this folder: pretrained, its first seed's predictions.
    assert (predictions / "sentiment_test_predictions.txt").read_text() == "0\n0\n"
    readme = (predictions / "README.md").read_text()
    assert "`sentiment_valid_acc.pretrained` row" in readme and "old_row" not in readme


def test_birthplace_headline_is_chosen_on_the_tune_split_never_on_dev(tmp_path, monkeypatch):
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    seconds = _bench(bench, "gpu")  # the first model, vanilla_recite, is the headline file's

    _write_results(monkeypatch, bench, results, predictions, "--profile", "gpu")

    rows = json.loads(results.read_text())["birthplace_dev_acc_gpu"]
    span = rows["vanilla_span_corruption"]
    assert span["value"] == 0.03 and span["chosen_row"] == "vanilla_span_corruption_pretrain_only"
    assert rows["vanilla_span_corruption_finetuned"]["value"] == 0.04  # the course's row is still reported
    assert span["std"] == pytest.approx((0.03 * 0.97 / 500) ** 0.5, abs=1e-4)
    # Both candidates and their tune-split scoring: the choice's cost.
    choice = (
        "bp_vanilla_span_corruption_pretrain",
        "bp_vanilla_span_corruption_finetune",
        "bp_vanilla_span_corruption_finetune_eval_dev",
        "bp_vanilla_span_corruption_finetune_eval_tune",
        "bp_vanilla_span_corruption_pretrain_eval_dev",
        "bp_vanilla_span_corruption_pretrain_eval_tune",
    )
    assert span["wall_time_s"] == sum(seconds[s] for s in choice)
    assert rows["vanilla_recite"]["chosen_row"] == "vanilla_recite_finetuned"  # a tie keeps the course's stage
    assert rows["synthesizer_recite"]["chosen_row"] == "synthesizer_recite_finetuned"
    assert rows["synthesizer_recite"]["value"] == 0.11  # better on the tuning split, worse on dev
    assert rows["london"]["value"] == 0.05 and "tune_split_acc" not in rows["london"]
    assert (predictions / "birthplace_test_predictions.txt").read_text() == "Nice\n"


def test_gpu_profile_writes_its_own_sections_and_leaves_the_cpu_rows(tmp_path, monkeypatch):
    bench, results, predictions = tmp_path / "bench_gpu", tmp_path / "results.json", tmp_path / "predictions_gpu"
    _bench(bench, "gpu")
    cpu_row = {"value": 0.75, "std": 0.01, "date": "2025-01-01"}
    results.write_text(json.dumps({"sentiment_valid_acc": {"pretrained": cpu_row}}))

    _write_results(monkeypatch, bench, results, predictions, "--profile", "gpu")

    written = json.loads(results.read_text())
    assert written["sentiment_valid_acc"] == {"pretrained": cpu_row}
    assert written["sentiment_valid_acc_gpu"]["pretrained"]["value"] == pytest.approx(0.74)
    assert set(written["birthplace_dev_acc_gpu"]) == {row.key for row in grid.load("gpu").rows["birthplace"]} | {
        "vanilla_recite",
        "synthesizer_recite",
        "vanilla_span_corruption",
    }
    assert "`sentiment_valid_acc_gpu.pretrained` row" in (predictions / "README.md").read_text()


def test_a_lever_profile_writes_its_rows_beside_its_base_profiles_and_no_headline(tmp_path, monkeypatch):
    """`gpu_large` (issue 18's GPU lever): its own results section, its predictions as `<row>_large` in the GPU
    profile's folder, and the GPU profile's headline files and README left as they were."""
    bench, results, predictions = tmp_path / "bench_large", tmp_path / "results.json", tmp_path / "predictions_gpu"
    _bench(bench, "gpu_large")
    shutil.rmtree(bench / "birthplace")
    gpu_rows = {"sentiment_valid_acc_gpu": {"pretrained": {"value": 0.8}}}
    results.write_text(json.dumps(gpu_rows))
    predictions.mkdir()
    (predictions / "sentiment_test_predictions.txt").write_text("1\n")
    (predictions / "README.md").write_text("# the GPU profile's\n")

    _write_results(monkeypatch, bench, results, predictions, "--profile", "gpu_large", "--tasks", "sentiment")

    written = json.loads(results.read_text())
    assert written["sentiment_valid_acc_gpu"] == gpu_rows["sentiment_valid_acc_gpu"]
    assert written["sentiment_valid_acc_gpu_large"]["pretrained"]["value"] == pytest.approx(0.74)
    assert (predictions / "sentiment" / "pretrained_lp_ft_large" / "seed44.txt").read_text() == "0\n0\n"
    assert not (predictions / "sentiment" / "pretrained_lp_ft").exists()
    assert (predictions / "sentiment_test_predictions.txt").read_text() == "1\n"
    assert (predictions / "README.md").read_text() == "# the GPU profile's\n"
    large_lm = json.loads((REPO_ROOT / "configs/altegrad/gpu_large/lm.json").read_text())
    assert large_lm["model_config"] == "altegrad-large"


@pytest.mark.parametrize("what", ["failed step", "missing run"])
def test_a_missing_or_failed_run_stops_with_its_name(tmp_path, monkeypatch, what):
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)
    results.write_text(json.dumps({"birthplace_dev_acc": {"vanilla_finetuned": {"value": 0.5}}}))
    if what == "failed step":  # a failed step has no .done (Snakemake removes it), even when its record is there
        model = next(iter(grid.load("cpu").headline))
        (bench / "steps" / f"bp_{model}_finetune.done").unlink()
        expected = f"row '{model}_finetuned': step(s) bp_{model}_finetune missing or failed"
    else:
        (bench / "sentiment" / "frozen_seed43" / "run_record.json").unlink()
        expected = "row 'frozen': no validation scores in a run record in"

    with pytest.raises(SystemExit, match=re.escape(expected)):
        _write_results(monkeypatch, bench, results, predictions)
    # Nothing was written: the older row is not kept as if it were this run's, nor replaced by a partial section.
    assert json.loads(results.read_text()) == {"birthplace_dev_acc": {"vanilla_finetuned": {"value": 0.5}}}


def test_every_sentiment_row_and_seed_gets_its_test_predictions(tmp_path, monkeypatch):
    """The sentiment pipeline alone (--tasks sentiment) writes its section and one prediction file per row and seed;
    the birthplace section of an earlier run stays as it was."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)
    earlier = {"birthplace_dev_acc": {"vanilla": {"value": 0.4}}}
    results.write_text(json.dumps(earlier))
    predictions.mkdir()
    (predictions / "birthplace_test_predictions.txt").write_text("Paris\n")
    birthplace_line = "- `birthplace_test_predictions.txt` (1 lines): `birthplace_dev_acc.vanilla` row, an earlier run"
    (predictions / "README.md").write_text(f"# Test predictions\n\n{birthplace_line}\n")
    shutil.rmtree(bench / "birthplace")  # a sentiment-only bench folder

    _write_results(monkeypatch, bench, results, predictions, "--tasks", "sentiment")

    written = json.loads(results.read_text())
    assert written["birthplace_dev_acc"] == earlier["birthplace_dev_acc"]
    for row in grid.load("cpu").rows["sentiment"]:
        for i, seed in enumerate(grid.load("cpu").lists["seed"]):
            path = predictions / "sentiment" / row.key / f"seed{seed}.txt"
            assert path.read_text() == f"{i % 2}\n{i % 2}\n", path  # from that seed's own run
    readme = (predictions / "README.md").read_text().splitlines()
    assert birthplace_line in readme  # the other task's file keeps its line
    assert any(
        line.startswith("- `sentiment_test_predictions.txt` (2 lines): `sentiment_valid_acc.") for line in readme
    )
    assert any("sentiment/pretrained/seed43.txt" in line for line in readme)


@pytest.mark.parametrize("baseline_first", [True, False])
def test_a_baseline_in_a_models_folder_is_never_reported_as_the_model(tmp_path, monkeypatch, baseline_first):
    """Each birthplace run folder (and its tune-split folder) also holds a London and a most-common evaluation,
    better than the model's, written before or after it: every row still reports the model's scores."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)
    for row in grid.load("cpu").rows["birthplace"]:
        if BIRTHPLACE[row.key][1] is None:
            continue  # the London row itself
        for where in (bench / row.runs[0], bench / row.runs[0] / "eval_tune"):
            record = RunRecord.from_dict(json.loads((where / "run_record.json").read_text()))
            baselines = [
                Evaluation("validation", {"exact_match": 0.9}, 500, baseline=b)
                for b in ("london_baseline", "most_common_baseline")
            ]
            record.evaluations = (
                [*baselines, *record.evaluations] if baseline_first else [*record.evaluations, *baselines]
            )
            record.save(where)

    _write_results(monkeypatch, bench, results, predictions)

    rows = json.loads(results.read_text())["birthplace_dev_acc"]
    for row in grid.load("cpu").rows["birthplace"]:
        dev, tune, _ = BIRTHPLACE[row.key]
        assert rows[row.key]["value"] == dev, row.key
        assert rows[row.key].get("tune_split_acc") == tune, row.key
    for model, (finetuned, pretrained) in grid.load("cpu").headline.items():  # the better on the tune split
        assert rows[model]["chosen_row"] == max((finetuned, pretrained), key=lambda key: BIRTHPLACE[key][1])


def _small_results() -> dict:
    """One row or two of each section the report renders, with figures found nowhere else."""
    run = {"hardware": "test machine", "date": "2026-01-02", "std": 0.01, "wall_time_s": 1234}
    bp_command = "python recipes/birthplace.py pretrain --num_train_epochs 7 && python recipes/birthplace.py evaluate"
    birthplace = {
        "vanilla_recite_pretrain_only": {**run, "value": 0.612, "correct": 306, "total": 500, "tune_split_acc": 0.585},
        "vanilla_recite_finetuned": {**run, "value": 0.598, "correct": 299, "total": 500, "tune_split_acc": 0.57},
    }
    birthplace = {key: {**row, "command": bp_command} for key, row in birthplace.items()}
    birthplace["vanilla_recite"] = {
        **birthplace["vanilla_recite_pretrain_only"],
        "chosen_row": "vanilla_recite_pretrain_only",
    }
    sentiment = {
        "scratch": {**run, "value": 0.7117, "per_epoch": [0.6011, 0.7117], "per_seed": {"a": 0.7, "b": 0.7233}},
        "pretrained_lp_ft": {**run, "value": 0.7733, "per_epoch": [0.7022, 0.7733], "per_seed": {"a": 0.77}},
    }
    return {
        "birthplace_dev_acc_gpu": birthplace,
        "sentiment_valid_acc_gpu_large": sentiment,
        "sentiment_test_acc": {
            "profiles": {"gpu_large": {"scratch": 0.713, "scratch_lp_ft": 0.801, "pretrained_lp_ft": 0.799}},
            "pretrained_minus_scratch_points": {"gpu_large": 2.7},
            "pretrained_minus_scratch_note": "unrounded",
            "tfidf_logistic_regression": {"train_and_validation": 0.844, "train": 0.839},
        },
        "throughput": {
            **run,
            "dtype": "fp32",
            "train_tokens_per_s": 4321,
            "train_ratio_vs_gpt2": 1.234,
            "kv_cache_speedup": 9.87,
            "command": "python benchmarks/throughput.py",
        },
        "tokenizer_compression": {
            **run,
            "measure": "characters per token",
            "rows": [
                {
                    "files": "wiki.txt",
                    "characters": 1000,
                    "vocab_size": 800,
                    "actual_vocab_size": 799,
                    "chars_per_token": 3.21,
                }
            ],
        },
    }


LEVERS = [
    {
        "task": "sentiment",
        "lever": "L2-SP (`--decay_toward_start`)",
        "what": "decay toward the start",
        "effect": "−5.25 points",
        "measured_on": "validation",
        "decision": "removed",
    },
    {
        "task": "sentiment",
        "lever": "LP-FT (`--head_init linear_probe`)",
        "effect": "+2.3 points",
        "measured_on": "test",
        "decision": "kept",
    },
]


def _rows(text: str, label: str) -> list[str]:
    """The table lines of a row, by their first cell, in the order of the report."""
    return [line for line in text.splitlines() if line.startswith(f"| {label} |")]


def _row(text: str, label: str) -> str:
    (line,) = _rows(text, label)
    return line


def test_every_table_of_the_report_comes_from_results_json():
    results = _small_results()
    text = report.render_benchmarks(results, LEVERS)

    assert "## Birthplace (CS224N a5) on a GPU" in text and "## Birthplace (CS224N a5) on 2 CPU cores" not in text
    assert (
        _row(text, "**vanilla, reciting** (headline)")
        == "| **vanilla, reciting** (headline) | 7 | 61.2 % ± 1.0 % (306/500) | 58.5 % | 1,234 s |"  # no interval
    )
    assert "vanilla, reciting **61.2 %**" in text  # the headline line: the tune split's choice
    assert _rows(text, "scratch") == [
        "| scratch | 60.11 % | 71.17 % ± 1.00 | 70.00 / 72.33 | 1,234 s |",  # validation
        "| scratch | 71.3 % |",  # test
    ]
    assert "pretrained LP-FT **77.33 %**" in text
    assert 'make bench PROFILE=gpu_large PIPELINES="sentiment sentiment_lab"' in text and "Date: 2026-01-02" in text
    assert _row(text, "scratch LP-FT") == "| scratch LP-FT | 80.1 % |"  # the test table: a column per profile present
    assert _row(text, "frozen linear probe") == "| frozen linear probe | — |"
    assert "pretrained − scratch +2.7" in text and "**84.4 %** test" in text
    assert (
        _row(text, "`throughput`")
        == "| `throughput` | cs224n-mingpt | test machine, fp32 | — | 4,321 | 1.23× | — | 9.87× | 2026-01-02 |"
    )
    assert _row(text, "`wiki.txt`") == "| `wiki.txt` | 1,000 | 800 | 799 | 3.21 |"
    assert (
        _row(text, "L2-SP (`--decay_toward_start`)")
        == "| L2-SP (`--decay_toward_start`) | sentiment | −5.25 points | validation | removed |"
    )

    # Change a value in the JSON: the report changes with it.
    results["sentiment_test_acc"]["profiles"]["gpu_large"]["scratch_lp_ft"] = 0.555
    results["birthplace_dev_acc_gpu"]["vanilla_recite_pretrain_only"]["tune_split_acc"] = 0.432
    changed = report.render_benchmarks(results, LEVERS)
    assert _row(changed, "scratch LP-FT") == "| scratch LP-FT | 55.5 % |"
    assert "| 43.2 % |" in _row(changed, "**vanilla, reciting** (headline)")


def test_the_levers_page_lists_the_removed_levers_for_users():
    text = report.render_levers_doc(LEVERS)

    assert _row(text, "L2-SP (`--decay_toward_start`)") == (
        "| L2-SP (`--decay_toward_start`) | decay toward the start | −5.25 points | validation |"
    )
    assert "linear_probe" not in text  # a kept lever is not listed
    assert "git checkout 7fec6bc" in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}|\bissue\b", text)  # a user document: no dates, no issue numbers


def test_report_mode_writes_both_files_from_the_given_json(tmp_path, monkeypatch):
    results, levers = tmp_path / "results.json", tmp_path / "levers.json"
    results.write_text(json.dumps(_small_results()), encoding="utf-8")
    levers.write_text(json.dumps({"levers": LEVERS}), encoding="utf-8")
    benchmarks_md, levers_md = tmp_path / "BENCHMARKS.md", tmp_path / "levers.md"
    argv = ["write_results.py", "--report", "--results", str(results), "--levers", str(levers)]
    argv += ["--benchmarks_md", str(benchmarks_md), "--levers_md", str(levers_md)]
    monkeypatch.setattr(sys, "argv", argv)

    with pytest.raises(SystemExit) as exit_status:  # the script's entry point exits with its status
        runpy.run_path(str(REPO_ROOT / "benchmarks" / "write_results.py"), run_name="__main__")
    assert exit_status.value.code in (0, None)
    assert benchmarks_md.read_text(encoding="utf-8") == report.render_benchmarks(_small_results(), LEVERS)
    assert levers_md.read_text(encoding="utf-8") == report.render_levers_doc(LEVERS)
    assert json.loads(results.read_text(encoding="utf-8")) == _small_results()  # the results are only read


def test_committed_report_is_what_the_generator_renders_and_at_most_40_kb():
    """BENCHMARKS.md and docs/levers.md cannot drift from benchmarks/results.json and benchmarks/levers.json:
    after a change to either, run `python benchmarks/write_results.py --report`."""
    results = json.loads((REPO_ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    levers = report.read_levers(REPO_ROOT / "benchmarks" / "levers.json")
    committed = (REPO_ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")

    assert committed == report.render_benchmarks(results, levers)
    assert (REPO_ROOT / "docs" / "levers.md").read_text(encoding="utf-8") == report.render_levers_doc(levers)
    assert len(committed.encode("utf-8")) <= 40_000  # 30 KB, and room for the paired comparisons' table
    assert "agreement with tf-idf" not in committed.lower()  # the test accuracies replace those estimates
    assert not re.search(r"\bissue\b", committed, re.IGNORECASE)


def test_a_course_profile_records_its_rows_notes_stopped_steps_and_every_test_answer(tmp_path, monkeypatch):
    """`--profile course`: its own section, each row's test answers kept in the repository (no headline file), a note
    on a row and the steps a time limit stopped, both rendered in the report; a note on a row not written is refused."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench, "course")
    results.write_text(json.dumps({"birthplace_dev_acc": {"london": {"value": 0.05}}}))
    notes = ["--note", "vanilla_finetuned=it diverged", "--stopped", "se_pretrain=step 5,850 of 6,000"]

    _write_results(monkeypatch, bench, results, predictions, "--profile", "course", "--tasks", "birthplace", *notes)

    written = json.loads(results.read_text())
    assert written["birthplace_dev_acc"] == {"london": {"value": 0.05}}
    rows = written["birthplace_dev_acc_course_gpu"]
    assert set(rows) == {"london", "vanilla_nopretrain", "vanilla_finetuned", "synthesizer_finetuned"}
    assert rows["vanilla_finetuned"]["note"] == "it diverged" and "note" not in rows["synthesizer_finetuned"]
    assert written["stopped_runs_course_gpu"]["se_pretrain"]["what"] == "step 5,850 of 6,000"
    copied = predictions / "birthplace" / "synthesizer_finetuned.txt"
    assert rows["synthesizer_finetuned"]["predictions_test"] == copied.as_posix() and copied.read_text() == "Oslo\n"
    assert not (predictions / "README.md").exists() and not (predictions / "birthplace_test_predictions.txt").exists()
    text = report.render_benchmarks({key: written[key] for key in written if "course" in key}, LEVERS)
    assert "with the course's own setting, on a GPU" in text and "vanilla ≥ 10 %" in text
    assert "- vanilla, character span corruption, then finetuned: it diverged" in text
    assert "| `se_pretrain` (course_gpu) | step 5,850 of 6,000 | test machine | 2026-01-01 |" in text

    with pytest.raises(SystemExit, match="no row 'vanilla_recite_finetuned' in the sections written"):
        _write_results(
            monkeypatch,
            bench,
            results,
            predictions,
            "--profile",
            "course",
            "--tasks",
            "birthplace",
            "--note",
            "vanilla_recite_finetuned=x",
        )


def test_the_demo_is_recorded_from_its_results_file_and_rendered(tmp_path, monkeypatch):
    """`--tasks demo`: `make demo`'s demo_results.json (recipes/demo.py) becomes the `demo` section, with hardware
    and date, and the report's table; a quick (test-suite) demo is refused."""
    results, demo_dir = tmp_path / "results.json", tmp_path / "demo"
    demo_dir.mkdir()
    scores = {
        "with pretraining": {"correct": 26, "total": 60, "exact_match": 26 / 60},
        "without pretraining": {"correct": 5, "total": 60, "exact_match": 5 / 60},
        "most common place": {"correct": 8, "total": 60, "exact_match": 8 / 60},
    }
    demo = {"setting": "synthetic", "seed": 0, "most_common_place": "Lyon", "wall_time_s": 250, "scores": scores}
    (demo_dir / "demo_results.json").write_text(json.dumps(demo))
    results.write_text(json.dumps({"throughput": {"x": 1}}))

    _write_results(monkeypatch, tmp_path, results, tmp_path / "p", "--tasks", "demo", "--demo_dir", str(demo_dir))

    written = json.loads(results.read_text())
    assert written["throughput"] == {"x": 1}
    assert written["demo"] == {**demo, "hardware": "test machine", "date": "2026-01-01", "command": "make demo"}
    text = report.render_benchmarks({"demo": written["demo"]}, LEVERS)
    assert _row(text, "pretrained (span corruption), then finetuned") == (
        "| pretrained (span corruption), then finetuned | 43.3 % (26/60) |"
    )
    assert "Test: the 60 held-out people" in text and "Command: `make demo`. Hardware: test machine." in text

    (demo_dir / "demo_results.json").write_text(json.dumps({**demo, "setting": "quick"}))
    with pytest.raises(SystemExit, match="holds a 'quick' demo"):
        _write_results(monkeypatch, tmp_path, results, tmp_path / "p", "--tasks", "demo", "--demo_dir", str(demo_dir))


def test_a_curve_alone_leaves_the_headline_files_of_the_earlier_sections(tmp_path, monkeypatch):
    """`--tasks sentiment_curve` after a new run into the same bench folder: the `sentiment_valid_acc` section was
    not written now, so its headline file keeps the earlier run's answers even where that folder now holds others."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)
    _write_results(monkeypatch, bench, results, predictions)
    headline = predictions / "sentiment_test_predictions.txt"
    assert headline.read_text() == "0\n0\n"
    # A later run rewrites the headline row's predictions in the same folder; only the curve is recorded from it.
    (bench / "sentiment" / "pretrained_seed42" / "test_predictions.txt").write_text("1\n1\n")

    _write_results(monkeypatch, bench, results, predictions, "--tasks", "sentiment_curve")

    assert headline.read_text() == "0\n0\n"
    assert "`sentiment_valid_acc.pretrained` row" in (predictions / "README.md").read_text()


def test_the_labs_own_setting_is_recorded_and_rendered_with_its_rows(tmp_path, monkeypatch):
    """`--profile course-cut --tasks sentiment`: the lab's three rows in their own section, every seed's test
    predictions, no headline file, and the report's section with the lab's row names."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench, "course-cut")

    note = ["--note", "frozen=one label for every review"]
    _write_results(monkeypatch, bench, results, predictions, "--profile", "course-cut", "--tasks", "sentiment", *note)

    rows = json.loads(results.read_text())["sentiment_valid_acc_course_cut"]
    assert set(rows) == {"scratch", "pretrained", "frozen"}
    assert rows["pretrained"]["value"] == pytest.approx(0.74)
    assert (predictions / "sentiment" / "frozen" / "seed43.txt").read_text() == "1\n1\n"
    assert not (predictions / "sentiment_test_predictions.txt").exists()
    text = report.render_benchmarks({"sentiment_valid_acc_course_cut": rows}, LEVERS)
    assert "## Sentiment (CLS-FR books) with the lab's own setting cut to fewer LM steps and epochs" in text
    assert "Command: `make altegrad PROFILE=course-cut`." in text
    assert _row(text, "pretrained, backbone frozen").startswith("| pretrained, backbone frozen | 68.00 % | 67.00 %")
    assert "- pretrained, backbone frozen: one label for every review" in text


def _run_time(bench: Path, pipelines: list[str], failed: list[str], command: str = "make x"):
    run = {"command": command, "profile": "course-cut", "pipelines": pipelines, "started": "2026-01-02T03:04:05Z"}
    (bench / "run_time.json").write_text(json.dumps({**run, "wall_time_s": 3300, "resumed": False, "failed": failed}))


def test_the_last_runs_whole_wall_time_is_recorded_under_its_command_if_it_ran_what_is_written(tmp_path, monkeypatch):
    """The run's own time (its steps side by side), not a sum of step times: recorded under its command line when
    the run made a section written now and nothing of it failed, and rendered as a table."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench, "course-cut")
    arguments = ("--profile", "course-cut", "--tasks", "birthplace")

    _run_time(bench, ["sentiment", "sentiment_lab"], [])  # another task's run into the same folder
    _write_results(monkeypatch, bench, results, predictions, *arguments)
    assert "whole_runs" not in json.loads(results.read_text())
    _run_time(bench, ["birthplace"], ["birthplace"])  # a failed run
    _write_results(monkeypatch, bench, results, predictions, *arguments)
    assert "whole_runs" not in json.loads(results.read_text())

    _run_time(bench, ["birthplace"], [], "make cs224n PROFILE=course-cut")
    _write_results(monkeypatch, bench, results, predictions, *arguments)
    runs = json.loads(results.read_text())["whole_runs"]
    assert runs == {
        "make cs224n PROFILE=course-cut": {
            "profile": "course-cut",
            "pipelines": ["birthplace"],
            "wall_time_s": 3300,
            "resumed": False,
            "hardware": "test machine",
            "date": "2026-01-02",
        }
    }
    text = report.render_benchmarks({"whole_runs": runs}, LEVERS)
    assert "| `make cs224n PROFILE=course-cut` | test machine | 2026-01-02 | 3,300 s (55 min) |" in text


def _scored_examples(bench: Path, total: int = 400) -> None:
    """Every run folder of `bench` with a validation score gets scored examples (`examples_validation.jsonl`) that
    agree with it: the first round(accuracy × total) reviews right, the rest wrong."""
    from hf_models.metrics import write_scored_examples

    for record_file in [*bench.rglob("run_record.json"), *bench.rglob("report.json")]:
        folder = record_file.parent
        if record_file.name == "report.json":
            accuracy = json.loads(record_file.read_text())["eval_accuracy"]
        else:
            scores = RunRecord.from_dict(json.loads(record_file.read_text())).evaluation("validation")
            if scores is None:
                continue
            accuracy = scores.metrics.get("accuracy", scores.metrics.get("exact_match"))
        references = [i % 2 for i in range(total)]
        right = round(accuracy * total)
        predictions = [r if i < right else 1 - r for i, r in enumerate(references)]
        write_scored_examples(folder, predictions, references)


def test_every_accuracy_gets_n_and_an_interval_and_the_rows_are_compared_pairwise(tmp_path, monkeypatch):
    """Runs that saved their scored examples: each row, headline and curve point gets `n` and a `ci95` around its
    value, the examples are copied beside the predictions, and `comparisons` holds the paired differences, whose
    interval holds zero where two rows score the same examples alike."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)
    _scored_examples(bench)
    old = {"section": "old", "first": "a", "second": "b", "split": "dev", "diff": 0.1, "ci95": [0.05, 0.15], "n": 9}
    results.write_text(json.dumps({"comparisons": {"old/a-vs-b": {**old, "method": "paired bootstrap"}}}))

    _write_results(monkeypatch, bench, results, predictions)

    written = json.loads(results.read_text())
    scratch = written["sentiment_valid_acc"]["scratch"]
    assert scratch["n"] == 400 and scratch["seeds"] == 3
    low, high = scratch["ci95"]
    assert low < scratch["value"] < high and 0.03 < high - low < 0.2  # about ± 2 s.e. of 400 reviews, and the seeds
    assert "seeds and examples" in scratch["ci_method"]
    assert scratch["examples_validation"] == [
        (predictions / "validation" / "sentiment_valid_acc" / "scratch" / f"seed{seed}.jsonl").as_posix()
        for seed in (42, 43, 44)
    ]
    nopretrain = written["birthplace_dev_acc"]["vanilla_nopretrain"]  # one run: Wilson's interval
    assert nopretrain["n"] == 400 and "Wilson" in nopretrain["ci_method"]
    assert nopretrain["ci95"][0] < 0.04 < nopretrain["ci95"][1]
    headline = written["birthplace_dev_acc"]["vanilla_recite"]
    assert headline["ci95"] == written["birthplace_dev_acc"][headline["chosen_row"]]["ci95"]
    point = written["sentiment_label_curve"]["rows"]["pretrained_lp_ft"]["24"]
    assert point["n"] == 400 and point["ci95"][0] < point["mean"] < point["ci95"][1]

    comparisons = written["comparisons"]
    assert "old/a-vs-b" in comparisons  # a section not written keeps its comparisons
    lp_ft = comparisons["sentiment_valid_acc/pretrained_lp_ft-vs-scratch_lp_ft"]
    assert lp_ft["diff"] == pytest.approx(
        written["sentiment_valid_acc"]["pretrained_lp_ft"]["value"]
        - written["sentiment_valid_acc"]["scratch_lp_ft"]["value"],
        abs=1e-3,
    )
    assert lp_ft["n"] == 400 and lp_ft["split"] == "validation" and "paired" in lp_ft["method"]
    assert lp_ft["ci95"][0] < lp_ft["diff"] < lp_ft["ci95"][1]
    for first, second in [("pretrained", "scratch"), ("frozen", "scratch"), ("pretrained", "frozen")]:
        assert f"sentiment_valid_acc/{first}-vs-{second}" in comparisons
    for key in ("vanilla_recite", "synthesizer_recite", "vanilla_span_corruption"):
        assert comparisons[f"birthplace_dev_acc/{key}-vs-vanilla_nopretrain"]["split"] == "dev"
    for budget in grid.load("cpu").budgets[:-1]:  # the full budget's runs are the rows above
        gap = comparisons[f"sentiment_label_curve/pretrained_lp_ft-vs-scratch_lp_ft/n{budget}"]
        assert gap["diff"] == pytest.approx(0.1, abs=1e-3) and gap["ci95"][0] > 0  # 40 more reviews right of 400
        tfidf = comparisons[f"sentiment_label_curve/tfidf-vs-best_neural/n{budget}"]
        assert tfidf["second"] == "pretrained_lp_ft" and tfidf["budget"] == budget
    assert "sentiment_label_curve/tfidf-vs-best_neural/n1600" in comparisons
    # the headline's choice, the model alone (3 % of dev), against no pretraining (4 %): 4 questions of 400 apart
    span = comparisons["birthplace_dev_acc/vanilla_span_corruption-vs-vanilla_nopretrain"]
    assert span["diff"] == pytest.approx(-0.01) and span["ci95"][0] < -0.01 < span["ci95"][1] <= 0

    assert "`validation/<section>/<row>[/seed<N>].jsonl`" in (predictions / "README.md").read_text()
    # the report: each row with its interval, and the comparisons listed
    text = report.render_benchmarks(written, LEVERS)
    low, high = (f"{100 * bound:.1f}" for bound in scratch["ci95"])
    assert f"| {low}–{high} % (n = 400 × 3 seeds) |" in _rows(text, "scratch")[0]
    lp_ft_line = next(
        line for line in text.splitlines() if line.startswith("| `pretrained_lp_ft` − `scratch_lp_ft` |")
    )
    assert "| `sentiment_valid_acc` | validation |" in lp_ft_line


def test_rows_whose_runs_saved_no_examples_get_no_interval_and_no_comparison(tmp_path, monkeypatch):
    """An older run (no scored examples): its row keeps its number, and no interval is made up for it."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)

    _write_results(monkeypatch, bench, results, predictions)

    written = json.loads(results.read_text())
    assert (
        "ci95" not in written["sentiment_valid_acc"]["scratch"]
        and "n" not in written["sentiment_valid_acc"]["scratch"]
    )
    assert written["comparisons"] == {}


def test_rows_scored_on_other_examples_get_a_warning_not_a_comparison(tmp_path, capsys):
    """Two rows that did not score the same examples (one on a part of the split) cannot be paired: the comparison is
    left out with a one-line warning naming both rows, and the other results are still written."""
    from hf_models.metrics import write_scored_examples

    write_results = runpy.run_path(str(Path(__file__).resolve().parent.parent / "benchmarks" / "write_results.py"))
    whole = write_scored_examples(tmp_path / "whole", [1, 0, 1, 1], [1, 0, 0, 1])
    part = write_scored_examples(tmp_path / "part", [1, 0], [1, 0])
    same = write_scored_examples(tmp_path / "same", [1, 1, 1, 1], [1, 0, 0, 1])
    points = ({"examples_validation": [str(whole)]}, {"examples_validation": [str(part)]})
    assert write_results["comparison"]("sentiment_valid_acc", "validation", "tfidf", "pretrained", points) is None
    warning = capsys.readouterr().err
    assert warning.count("\n") == 1 and "warning: no comparison of tfidf against pretrained" in warning
    assert "1 × 4 against 1 × 2" in warning
    paired = ({"examples_validation": [str(whole)]}, {"examples_validation": [str(same)]})
    entry = write_results["comparison"]("sentiment_valid_acc", "validation", "a", "b", paired)
    assert entry["diff"] == pytest.approx(0.25) and entry["n"] == 4


@pytest.mark.parametrize("damage", ["not json", "no key"])
def test_a_damaged_run_time_file_stops_with_one_line_naming_it(tmp_path, monkeypatch, damage):
    """run_time.json cut short (a killed run) or from another tool: one line naming the file, never a traceback."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench, "course-cut")
    _run_time(bench, ["birthplace"], [])
    run_time = bench / "run_time.json"
    if damage == "not json":
        run_time.write_text(run_time.read_text()[:40])
    else:
        run_time.write_text(json.dumps({"command": "make x"}))
    with pytest.raises(SystemExit) as stop:
        _write_results(monkeypatch, bench, results, predictions, "--profile", "course-cut", "--tasks", "birthplace")
    message = str(stop.value.code)
    assert str(run_time) in message and len(message.strip().splitlines()) == 1
    assert ("not valid JSON" if damage == "not json" else "'profile'") in message
    assert not results.exists()


def test_a_library_bar_is_recorded_with_its_hardware_date_and_commit_and_reported_against_its_goal(tmp_path):
    """benchmarks/code_path.py and help_speed.py --results: one entry each in library_bars, the other sections kept;
    BENCHMARKS.md shows each measure beside its goal."""
    import write_results

    results = tmp_path / "results.json"
    results.write_text(json.dumps({"throughput": {"kept": 1}}))
    counts = {"files": 19, "functions": 118, "package_lines": 9321, "goals": {"files": 20, "functions": 120}}
    counts["goals"]["package_lines"] = 8000
    write_results.record_library_bar(
        results, "code_path", {"command": "python benchmarks/code_path.py -- x", **counts}
    )
    speed = {"command": "python benchmarks/help_speed.py", "goal": 1.5, "cpu_ratio_to_baseline": {"a.py -h": 1.23}}
    write_results.record_library_bar(results, "help_speed", speed)
    written = json.loads(results.read_text())
    assert written["throughput"] == {"kept": 1}
    entry = written[report.LIBRARY_BARS]["code_path"]
    assert entry["functions"] == 118 and entry["commit"] == write_results.current_commit()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", entry["date"]) and entry["hardware"]
    rendered = "\n".join(report.library_section(written[report.LIBRARY_BARS]))
    assert "| package functions it calls | 118 | 120 |" in rendered
    assert "| lines of Python in `hf_models` | 9,321 | 8,000 |" in rendered
    assert "| `a.py -h`: CPU time / `import torch, transformers` | 1.23 | 1.5 |" in rendered
