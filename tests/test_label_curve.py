"""The sentiment label-budget curve: the balanced draw (`hf_models.data.balanced_subset`) that
`recipes/finetune_sentiment.py --label_budget` and `benchmarks/tfidf_baseline.py --label_budget` share, the profiles'
`sentiment_curve` pipeline (`benchmarks/profiles/cpu.yaml`, read by `benchmarks/grid.py`), its section of results.json
(`write_results.py`), its table in BENCHMARKS.md (`report.py`) and its figure (`plot_label_curve.py`)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import grid
import numpy as np
import plot_label_curve
import pytest
import report
import tfidf_baseline
import write_results

from hf_models.data import balanced_subset
from hf_models.run_record import Evaluation, RunRecord
from hf_models.safety import command_line
from hf_models.tasks.sentiment import SentimentArguments, load_reviews
from hf_models.textio import UsageError

LABELS = [0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0]  # 8 negative, 6 positive


# --------------------------------------------------------------------------------------------------
# The draw
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 42])
def test_a_draw_is_balanced_ordered_and_a_subset(seed):
    for size in (2, 6, 12):
        drawn = balanced_subset(LABELS, size, seed)
        assert len(drawn) == len(set(drawn)) == size and drawn == sorted(drawn)
        assert set(drawn) <= set(range(len(LABELS)))
        assert sum(LABELS[i] for i in drawn) == size // 2  # half positive, half negative


def test_a_draw_is_deterministic_per_seed_and_nested():
    assert balanced_subset(LABELS, 8, 3) == balanced_subset(list(LABELS), 8, 3)
    assert len({tuple(balanced_subset(LABELS, 4, seed)) for seed in range(10)}) > 1  # the seed draws
    for seed in range(5):  # a budget holds every smaller budget's examples of the same seed
        draws = [set(balanced_subset(LABELS, size, seed)) for size in (2, 4, 8, 12)]
        assert all(small <= large for small, large in zip(draws, draws[1:], strict=False))
    labels = np.array([0, 1] * 800)
    assert balanced_subset(labels, 1600, 42) == list(range(1600))  # every example: the dataset, in its order


@pytest.mark.parametrize(
    "size, message",
    [(7, "give a multiple of 2"), (1, "at least 2"), (0, "at least 2"), (14, "7 examples of label 1 asked")],
)
def test_a_budget_that_cannot_be_drawn_is_a_one_line_usage_error(size, message):
    with pytest.raises(UsageError, match=message) as error:
        balanced_subset(LABELS, size, 0)
    assert str(error.value).startswith(f"--label_budget {size}: ") and "\n" not in str(error.value)


def test_the_finetuning_and_tfidf_read_the_same_reviews(toy_cls_books, tmp_path, monkeypatch):
    """`load_reviews` keeps the budget's draw with the given seed (validation and test whole); the TF-IDF script
    fits on the same reviews, and predicts the test reviews with that fit."""
    raw = load_reviews(SentimentArguments(data_dir=str(toy_cls_books), label_budget=10), seed=7)
    everything = load_reviews(SentimentArguments(data_dir=str(toy_cls_books)), seed=7)
    expected = everything["train"].select(balanced_subset(everything["train"]["label"], 10, 7))
    assert list(raw["train"]["text"]) == list(expected["text"]) and sorted(raw["train"]["label"]) == [0] * 5 + [1] * 5
    assert len(raw["validation"]) == len(everything["validation"]) and len(raw["test"]) == len(everything["test"])

    fitted = []
    real = tfidf_baseline.tfidf_classifier

    def spy():
        classifier = real()
        fit = classifier.fit
        classifier.fit = lambda texts, labels: fitted.append(list(texts)) or fit(texts, labels)
        return classifier

    monkeypatch.setattr(tfidf_baseline, "tfidf_classifier", spy)
    out = tmp_path / "tfidf"
    argv = ["--data_dir", str(toy_cls_books), "--output_dir", str(out), "--label_budget", "10", "--seed", "7"]
    assert tfidf_baseline.main(argv) == 0
    assert fitted == [list(expected["text"])]  # one fit, no refit on validation
    written = json.loads((out / "report.json").read_text())
    assert (written["label_budget"], written["seed"], written["train_samples"]) == (10, 7, 10)
    assert len((out / "test_predictions.txt").read_text().splitlines()) == len(everything["test"])


def test_tfidf_refuses_a_budget_it_cannot_draw(toy_cls_books, tmp_path, capsys):
    argv = ["--data_dir", str(toy_cls_books), "--output_dir", str(tmp_path / "t"), "--label_budget", "9"]
    assert command_line(tfidf_baseline.main, argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --label_budget 9: give a multiple of 2, the same number of each label"
    ]


@pytest.fixture(scope="module")
def toy_cls_books(tmp_path_factory, write_toy_cls_books) -> Path:
    return write_toy_cls_books(tmp_path_factory.mktemp("toy_cls_books"))


# --------------------------------------------------------------------------------------------------
# The profile's pipeline
# --------------------------------------------------------------------------------------------------
def _flag(command: tuple[str, ...], flag: str) -> str:
    return command[len(command) - 1 - command[::-1].index(flag) + 1]


def test_the_curve_pipeline_runs_every_point_but_the_full_budget_and_draws_them():
    """A point is its base step (the profile's LP-FT run of that seed) with the budget and the step count it implies,
    into its own folder, reading what the base reads; TF-IDF draws every budget; the figure waits for every point."""
    profile = grid.load("cpu")
    steps = profile.steps
    curve = [step for step in steps.values() if step.pipeline == "sentiment_curve"]
    seeds, budgets = profile.lists["seed"], profile.budgets
    small = [n for n in budgets if n != 1600]
    expected = [f"se_curve_tfidf_n{n}_seed{s}" for n in budgets for s in seeds]
    expected += [
        f"se_curve_{row}_n{n}_seed{s}" for row in ("scratch_lp_ft", "pretrained_lp_ft") for n in small for s in seeds
    ]
    assert [step.name for step in curve] == [*expected, "se_curve_plot"]
    assert set(curve[-1].reads) == set(expected) | {
        f"se_{row}_seed{s}" for row in ("scratch_lp_ft", "pretrained_lp_ft") for s in seeds
    }
    for step in curve[len(seeds) * 7 : -1]:  # the finetunings: the profile's LP-FT command, the budget added
        row, budget, seed = step.name.removeprefix("se_curve_").rsplit("_", 2)
        base = steps[f"se_{row}_{seed}"]
        assert step.arguments[: len(base.arguments)] == base.arguments and set(base.reads) <= set(step.reads)
        assert step.folder == f"sentiment/curve/{row}_{budget}_{seed}" and step.group == "curve"
        steps_expected = {"n24": 50, "n50": 50, "n100": 50, "n200": 52, "n400": 100, "n800": 200}[budget]
        assert step.arguments[len(base.arguments) :] == (
            "--label_budget",
            budget[1:],
            "--max_steps",
            str(steps_expected),
            "--eval_strategy",
            "steps",
            "--eval_steps",
            str(steps_expected),
        )
    for step in curve[: len(seeds) * 7]:  # TF-IDF: the same draw as the finetunings (the seed)
        budget, seed = step.name.rsplit("_", 2)[1:]
        command = step.command("python", "OUT")
        assert _flag(command, "--label_budget") == budget[1:] and _flag(command, "--seed") == seed[4:]
    # The full budget is the sentiment pipeline's own runs: every point's folder is made by its step.
    for row, points in grid.curve_points("cpu").items():
        for budget, draws in points.items():
            for run, name in draws.values():
                assert run.removesuffix("/linear_probe") == steps[name].folder, (row, budget)
                assert (budget == 1600) == (steps[name].pipeline == "sentiment") or row == "tfidf"


def test_the_step_count_keeps_the_epochs_with_a_floor():
    steps = [grid.training_steps(n, 4, 16, 50) for n in grid.load("cpu").budgets]
    assert steps == [50, 50, 50, 52, 100, 200, 400]


# --------------------------------------------------------------------------------------------------
# results.json, BENCHMARKS.md and the figure
# --------------------------------------------------------------------------------------------------
def accuracy_of(row: str, budget: int, seed: int) -> float:
    """A made-up accuracy per point: rows apart, rising with the budget, a draw's seed moving it a little."""
    offset = {"pretrained_lp_ft": 0.1, "scratch_lp_ft": 0.0, "frozen_linear_probe": 0.05, "tfidf": 0.02}[row]
    return round(0.5 + offset + 0.02 * grid.load("cpu").budgets.index(budget) + 0.01 * (seed - 43), 4)


def write_fake_curve_runs(bench: Path, profile: str = "cpu") -> dict[str, int]:
    """A run folder for every curve point under `bench` (a record, or TF-IDF's report.json, and test predictions
    `row budget seed`), but those with a record already (the sentiment rows' runs, the full budget); returns the
    steps that made them, with made-up seconds (budget / 8)."""
    seconds = {}
    for row, budgets in grid.curve_points(profile).items():
        for budget, draws in budgets.items():
            for seed, (run, step) in draws.items():
                folder, accuracy = bench / run, accuracy_of(row, budget, seed)
                seconds[step] = budget // 8
                if (folder / "run_record.json").exists():
                    continue
                folder.mkdir(parents=True, exist_ok=True)
                if row == "tfidf":
                    report_json = {"eval_accuracy": accuracy, "label_budget": budget, "seed": seed}
                    (folder / "report.json").write_text(json.dumps(report_json))
                else:
                    record = RunRecord(task="sentiment", objective="classification")
                    record.add_evaluation(Evaluation("validation", {"accuracy": accuracy}, 400))
                    record.save(folder)
                (folder / "test_predictions.txt").write_text(f"{row} {budget} {seed}\n")
    return seconds


def write_step_records(bench: Path, seconds: dict[str, int], profile: str = "cpu") -> None:
    """What Snakemake leaves of each step of `profile` that succeeded: its .done (its record, the command here
    `python <step>`) and its benchmark file (the wall time in seconds)."""
    (bench / "steps").mkdir(parents=True, exist_ok=True)
    (bench / "benchmarks").mkdir(exist_ok=True)
    for step, s in seconds.items():
        record = grid.step_record(grid.load(profile), grid.load(profile).steps[step], f"python {step}")
        (bench / "steps" / f"{step}.done").write_text(json.dumps(record) + "\n")
        (bench / "benchmarks" / f"{step}.tsv").write_text(f"s\th:m:s\tmax_rss\n{s}.2\t0:00:{s}\t1.0\n")


def write_fake_curve(bench: Path) -> None:
    """The curve's runs and the records of each step that made one."""
    write_step_records(bench, write_fake_curve_runs(bench))


def test_the_curve_section_reads_every_point_and_copies_its_predictions(tmp_path):
    bench = tmp_path / "bench"
    write_fake_curve(bench)
    timings = write_results.read_timings(bench)
    curve = write_results.label_curve_of(bench, "cpu", timings, "test machine", "2026-01-01")
    rows = {row["key"] for row in grid.load("cpu").curve}
    assert curve["budgets"] == [24, 50, 100, 200, 400, 800, 1600] and set(curve["rows"]) == rows
    point = curve["rows"]["pretrained_lp_ft"]["100"]
    draws = [accuracy_of("pretrained_lp_ft", 100, seed) for seed in (42, 43, 44)]
    assert point["per_draw"] == {"seed42": draws[0], "seed43": draws[1], "seed44": draws[2]}
    assert point["mean"] == pytest.approx(statistics.mean(draws)) and point["std"] == pytest.approx(0.01)
    # Its own steps' time: every TF-IDF run and the finetunings short of the full budget (the probe is theirs).
    budgets = grid.load("cpu").budgets
    own = [n // 8 for n in budgets for _ in range(3)] + [n // 8 for n in budgets[:-1] for _ in range(6)]
    assert curve["wall_time_s"] == sum(own)

    written = write_results.copy_curve_predictions(curve, tmp_path / "predictions", "_large")
    assert len(written) == 4 * 7 * 3
    target = tmp_path / "predictions" / "sentiment_curve" / "frozen_linear_probe_large" / "n1600_seed43.txt"
    assert target.read_text() == "frozen_linear_probe 1600 43\n"  # the pretrained full-data run's kept probe


def test_a_missing_point_or_step_stops_the_curve_with_its_name(tmp_path):
    bench = tmp_path / "bench"
    write_fake_curve(bench)
    timings = write_results.read_timings(bench)
    del timings["se_curve_scratch_lp_ft_n50_seed43"]
    with pytest.raises(SystemExit, match="scratch_lp_ft at 50 labels: step se_curve_scratch_lp_ft_n50_seed43"):
        write_results.label_curve_of(bench, "cpu", timings, "", "")
    (bench / "sentiment" / "curve" / "tfidf_n200_seed44" / "report.json").unlink()
    with pytest.raises(SystemExit, match="tfidf at 200 labels: no report.json"):
        write_results.label_curve_of(bench, "cpu", write_results.read_timings(bench), "", "")


def _fake_results(tmp_path: Path) -> dict:
    bench = tmp_path / "bench"
    write_fake_curve(bench)
    timings = write_results.read_timings(bench)
    reference = {"25": 0.62, "50": 0.664, "1600": 0.839}
    return {
        "sentiment_label_curve": write_results.label_curve_of(bench, "cpu", timings, "test machine", "2026-01-02"),
        "sentiment_test_acc": {"profiles": {}, "tfidf_label_curve": reference},
    }


def test_the_report_renders_the_curve_table_when_the_section_is_there(tmp_path):
    results = _fake_results(tmp_path)
    text = report.render_benchmarks(results, [])
    assert "## Sentiment: accuracy against labels on 2 CPU cores" in text
    assert "| row (labels) | 24 | 50 | 100 | 200 | 400 | 800 | 1,600 |" in text
    mean_24 = statistics.mean(accuracy_of("pretrained_lp_ft", 24, s) for s in (42, 43, 44))
    assert f"| pretrained LP-FT | {100 * mean_24:.1f} ± 1.0 |" in text
    assert "| pretrained − scratch LP-FT (points) | +10.0 | +10.0 |" in text
    assert "scored outside the project: 25: 62.0 %, 50: 66.4 %, 1,600: 83.9 %" in text
    assert "sentiment_label_curve.png" in text and "Date: 2026-01-02" in text
    del results["sentiment_label_curve"]
    assert "accuracy against labels" not in report.render_benchmarks(results, [])


def test_the_figure_is_drawn_from_results_or_from_the_run_folders(tmp_path):
    results = _fake_results(tmp_path)
    (tmp_path / "results.json").write_text(json.dumps(results))
    common = ["--results", str(tmp_path / "results.json")]
    from_results = plot_label_curve.main(["--from_results", *common, "--output", str(tmp_path / "a.png")])
    from_runs = plot_label_curve.main(
        ["--bench_dir", str(tmp_path / "bench"), *common, "--output", str(tmp_path / "b.png")]
    )
    for path in (from_results, from_runs):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    with pytest.raises(SystemExit, match="no sentiment_label_curve_gpu section"):
        plot_label_curve.main(["--from_results", *common, "--profile", "gpu", "--output", str(tmp_path / "c.png")])


def test_the_figures_bands_are_the_intervals_where_recorded_else_the_draws():
    """A row whose every point has its 95 % interval is drawn with the interval as its band; a row of older runs
    (no interval) keeps the band from its lowest to its highest draw."""
    with_interval = {
        "24": {"per_draw": {"seed42": 0.6, "seed43": 0.7}, "mean": 0.65, "ci95": [0.55, 0.74]},
        "50": {"per_draw": {"seed42": 0.7, "seed43": 0.8}, "mean": 0.75, "ci95": [0.66, 0.83]},
    }
    assert plot_label_curve.band(with_interval, ["24", "50"]) == (
        pytest.approx([55.0, 66.0]),
        pytest.approx([74.0, 83.0]),
    )
    without = {key: {k: v for k, v in point.items() if k != "ci95"} for key, point in with_interval.items()}
    assert plot_label_curve.band(without, ["24", "50"]) == (pytest.approx([60.0, 70.0]), pytest.approx([70.0, 80.0]))
    assert plot_label_curve.has_intervals({"rows": {"a": with_interval}})
    assert not plot_label_curve.has_intervals({"rows": {"a": with_interval, "b": without}})
