"""Every merge of records, sections and tables keeps what it should: two entries, one of them updated. The update
lands in every field it carries, a field it does not carry keeps its earlier value, and the entry beside it is kept
as it was (the run record's evaluations, a record updated by two steps, results.json's whole runs, the report's
tables)."""

from __future__ import annotations

import copy
import json

import report
from test_write_results import LEVERS, _bench, _run_time, _write_results

from hf_models.run_record import Evaluation, RunRecord, read_record, updating_record


def _record() -> RunRecord:
    """A finetuned birthplace model's record: the model's dev loss (500 questions, two epochs), London's dev score
    beside it, and the model's test score."""
    record = RunRecord(task="birthplace-qa", objective="qa", split_sizes={"train": 2000, "validation": 500})
    curve = [{"epoch": 1.0, "loss": 2.0}, {"epoch": 2.0, "loss": 1.5}]
    record.add_evaluation(Evaluation("validation", {"loss": 1.5}, 500, per_epoch=curve))
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.05}, 500, baseline="london_baseline"))
    record.add_evaluation(Evaluation("test", {"exact_match": 0.2}, 437))
    return record


def test_updating_one_evaluation_lands_in_all_its_fields_and_keeps_its_neighbours() -> None:
    record = _record()
    london, test = (
        copy.deepcopy(record.evaluation("validation", "london_baseline")),
        copy.deepcopy(record.evaluations[2]),
    )

    # The evaluate step scores 50 dev questions (--max_predict_samples) after the finetuning's dev loss on 500.
    curve = [{"epoch": 3.0, "loss": 1.2}]
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.3, "loss": 1.2}, 50, per_epoch=curve))

    model = record.evaluation("validation")
    assert model.metrics == {"loss": 1.2, "exact_match": 0.3}  # the new value wins, the new metric joins
    assert model.num_examples == 50  # the count of the evaluation that was scored last
    assert model.per_epoch == curve
    assert record.evaluations[1:] == [london, test]  # the baseline and the other split, untouched, in order
    assert len(record.evaluations) == 3


def test_an_update_without_a_count_or_curve_keeps_the_earlier_ones() -> None:
    record = _record()
    before = copy.deepcopy(record.evaluation("validation"))
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.3}))
    model = record.evaluation("validation")
    assert model.num_examples == 500 and model.per_epoch == before.per_epoch
    assert model.metrics == {"loss": 1.5, "exact_match": 0.3}


def test_a_new_split_or_baseline_is_added_beside_the_others() -> None:
    record = _record()
    before = copy.deepcopy(record.evaluations)
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.01}, 500, baseline="most_common_baseline"))
    record.add_evaluation(Evaluation("tune", {"exact_match": 0.25}, 200))
    assert record.evaluations[:3] == before
    assert [(e.split, e.baseline) for e in record.evaluations[3:]] == [
        ("validation", "most_common_baseline"),
        ("tune", None),
    ]
    assert record.evaluation("validation", "most_common_baseline").metrics == {"exact_match": 0.01}
    assert record.evaluation("tune").num_examples == 200
    assert len(record.evaluations) == 5


def test_two_steps_updating_one_record_keep_each_others_scores(tmp_path) -> None:
    """The benchmark's dev and test evaluations of one model: each `updating_record` reads the record the other
    saved, so that neither loses the other's scores, nor the training's own fields."""
    folder = tmp_path / "model"
    folder.mkdir()
    _record().save(folder)

    def start() -> RunRecord:
        return RunRecord(task="birthplace-evaluation", objective="qa")

    with updating_record(folder, start) as record:
        record.add_evaluation(Evaluation("validation", {"exact_match": 0.3}, 500))
    with updating_record(folder, start) as record:
        record.add_evaluation(Evaluation("test", {"exact_match": 0.25}, 437))

    saved = read_record(folder)
    assert saved.task == "birthplace-qa" and saved.split_sizes == {"train": 2000, "validation": 500}
    assert saved.evaluation("validation").metrics == {"loss": 1.5, "exact_match": 0.3}
    assert saved.evaluation("validation", "london_baseline").metrics == {"exact_match": 0.05}
    assert saved.evaluation("test").metrics == {"exact_match": 0.25}


def test_a_later_whole_run_replaces_its_commands_entry_and_keeps_the_others(tmp_path, monkeypatch) -> None:
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench, "course-cut")
    arguments = ("--profile", "course-cut", "--tasks", "birthplace")
    first, second = "make cs224n PROFILE=course-cut", "make bench PROFILE=course-cut PIPELINES=birthplace"
    for command in (first, second):
        _run_time(bench, ["birthplace"], [], command)
        _write_results(monkeypatch, bench, results, predictions, *arguments)
    runs = json.loads(results.read_text())["whole_runs"]
    assert set(runs) == {first, second}

    # The first command again, on another day and machine: its entry is replaced in every field, the other kept.
    kept = runs[second]
    run = {"command": first, "profile": "course-cut", "pipelines": ["birthplace"], "started": "2026-02-03T00:00:00Z"}
    (bench / "run_time.json").write_text(json.dumps({**run, "wall_time_s": 1200, "resumed": True, "failed": []}))
    _write_results(monkeypatch, bench, results, predictions, *arguments, "--hardware", "other machine")
    runs = json.loads(results.read_text())["whole_runs"]
    assert runs[second] == kept
    assert runs[first] == {
        "profile": "course-cut",
        "pipelines": ["birthplace"],
        "wall_time_s": 1200,
        "resumed": True,
        "hardware": "other machine",
        "date": "2026-02-03",
    }
    text = report.render_benchmarks({"whole_runs": runs}, LEVERS)
    assert f"| `{first}` | other machine | 2026-02-03 | 1,200 s (20 min) |" in text
    assert f"| `{second}` | test machine | 2026-01-02 | 3,300 s (55 min) |" in text


def test_the_stopped_runs_table_keeps_every_profiles_entries() -> None:
    """Each profile's `stopped_runs*` section: every step of every section gets its row, named with its profile."""
    results = {
        "stopped_runs": {"bp_a": {"what": "epoch 3 of 8", "hardware": "cpu box", "date": "2026-01-01"}},
        "stopped_runs_gpu": {
            "bp_b": {"what": "epoch 1 of 8", "hardware": "gpu box", "date": "2026-01-02"},
            "bp_c": {"what": "step 10 of 90", "hardware": "gpu box", "date": "2026-01-02"},
        },
    }
    text = "\n".join(report.stopped_runs_section(results))
    assert "| `bp_a` (cpu) | epoch 3 of 8 | cpu box | 2026-01-01 |" in text
    assert "| `bp_b` (gpu) | epoch 1 of 8 | gpu box | 2026-01-02 |" in text
    assert "| `bp_c` (gpu) | step 10 of 90 | gpu box | 2026-01-02 |" in text
