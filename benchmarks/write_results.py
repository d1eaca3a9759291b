#!/usr/bin/env python
"""Write the headline birthplace and sentiment numbers of one bench folder into benchmarks/results.json.

    python benchmarks/write_results.py --bench_dir outputs/bench
    python benchmarks/write_results.py --bench_dir outputs/bench_gpu --profile gpu

The rows are those of the profile (`benchmarks/profiles/<profile>.yaml`, read by `benchmarks/grid.py`), read from the
recipes' run records under BENCH_DIR and the steps' records (Snakemake's: BENCH_DIR/steps/<step>.done, written with
the step's command when it succeeded, and BENCH_DIR/benchmarks/<step>.tsv, its wall time). A row whose run is missing,
or one of whose steps failed (no .done), stops the script with an error naming it: a section is always written whole,
from this bench folder, never with a row kept from an earlier run. Only the `birthplace_dev_acc`,
`sentiment_valid_acc` and `sentiment_label_curve` sections are written, each with the profile's suffix (the profiles
never overwrite each other); every other key (for example `throughput`, written by benchmarks/throughput.py) is kept
as it is. Values are fractions in 0-1; each entry
carries a standard deviation, hardware, date, command and wall time. The birthplace headline rows (`vanilla`,
`synthesizer`) are the tuning split's choice between each pretrained model and its finetuned copy. The headline
runs' test predictions are copied to benchmarks/predictions/ (benchmarks/predictions/gpu/ for the GPU profile), with
every sentiment row's and seed's in sentiment/ and every curve point's in sentiment_curve/. The whole wall time of the
last successful run into BENCH_DIR (its run_time.json) goes to the `whole_runs` section, under its command line.

Each accuracy whose runs saved their scored validation examples (`examples_validation*.jsonl`) gets `n` (the examples
scored) and `ci95` (benchmarks/intervals.py: Wilson's interval for one run, a bootstrap over seeds and examples for a
row of seeds); the examples are copied to benchmarks/predictions/validation/<section>/ (so that the intervals can be
computed again once the run folders are gone), and the `comparisons` section gets each paired difference of the
sections written (`COMPARED`: the lab's rows, the LP-FT pair, CS224N's pretrained rows against no pretraining, and at
each budget of the label curve pretrained against scratch LP-FT, the probe against scratch LP-FT and TF-IDF against
the better neural row) with its paired 95 % interval. A row whose runs saved none (an older run) has neither.

    python benchmarks/write_results.py --report

renders BENCHMARKS.md and docs/levers.md from results.json and benchmarks/levers.json instead (benchmarks/report.py).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import grid
from grid import Row, curve_points
from intervals import ExamplesMismatch, accuracy_interval, correct_table, paired_difference
from report import LIBRARY_BARS, comparison_key, read_json_object, write_report

from hf_models.metrics import SCORED_EXAMPLES
from hf_models.run_record import RunRecord, read_record
from hf_models.safety import command_line
from hf_models.textio import atomic_write, atomic_write_text
from hf_models.training import HelpFormatter


def headline(profile: str) -> dict[str, tuple[str, str | None]]:
    """File in benchmarks/predictions -> (results section, row): birthplace's is the profile's first pretrained
    model (its tune split's choice), sentiment's the row with the best validation mean."""
    return {
        "birthplace_test_predictions.txt": ("birthplace_dev_acc", next(iter(grid.load(profile).headline), None)),
        "sentiment_test_predictions.txt": ("sentiment_valid_acc", None),
    }


class MissingRun(SystemExit):
    """A row of the profile whose run is missing, failed or damaged: the message names it."""


def default_hardware() -> str:
    hw = os.environ.get("BENCH_HARDWARE")
    if hw:
        return hw
    try:
        import torch

        if torch.cuda.is_available():
            return f"{torch.cuda.get_device_name(0)}, {os.cpu_count()} CPU cores"
    except ImportError:
        pass
    return f"{os.cpu_count()}-core {platform.machine()} CPU, no GPU"


class Timings(dict):
    """{step: (wall seconds, command)} of the steps kept, and `refused`: {step: why its record is not this profile's
    today} for a step whose .done is there but must not be trusted (another profile's, a changed config, a failure)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.refused: dict[str, str] = {}

    @staticmethod
    def refusing(timings: dict) -> Timings:
        """`timings` as `Timings` (a plain dict refuses nothing)."""
        return timings if isinstance(timings, Timings) else Timings(timings)


def read_timings(bench: Path, profile: str | None = None) -> Timings:
    """{step: (wall seconds, command)} of every step that succeeded in BENCH_DIR: its .done holds its record (its
    command), its Snakemake benchmark file its time. With `profile`, a step of that profile is kept only when its
    record is what the profile records today (`grid.record_problem`: its profile, arguments and files)."""
    timings, steps = Timings(), grid.load(profile).steps if profile else {}
    for done in sorted((bench / "steps").glob("*.done")):
        record = grid.read_step_record(done)
        if done.stem in steps:
            expected = grid.step_record(grid.load(profile), steps[done.stem], "")
            problem = grid.record_problem(record, expected, same_command=False)
            if problem is not None:
                timings.refused[done.stem] = f"{done}: {problem}"
                continue
        times = bench / "benchmarks" / f"{done.stem}.tsv"
        if times.is_file():
            seconds = float(times.read_text(encoding="utf-8").splitlines()[1].split("\t")[0])
            command = record["command"] if record else done.read_text(encoding="utf-8").strip()
            timings[done.stem] = (round(seconds), command)
    return timings


def check_kept(where: str, steps: list[str], timings: dict) -> None:
    """None of `steps` has a record this profile does not trust today (`Timings.refused`): else an error naming the
    first one, why, and what to do."""
    refused = [step for step in steps if step in Timings.refusing(timings).refused]
    if refused:
        raise MissingRun(
            f"{where}: step {refused[0]} is not this profile's today ({timings.refused[refused[0]]}): rerun the "
            "profile into this folder (make bench or make cs224n|altegrad with its PROFILE), or give its --profile"
        )


def check_steps(row: Row, steps: list[str], timings: dict) -> None:
    check_kept(f"row {row.key!r}", steps, timings)
    missing = [step for step in steps if step not in timings]
    if missing:
        raise MissingRun(f"row {row.key!r}: step(s) {', '.join(missing)} missing or failed (no steps/<step>.done)")


def wall_time(steps: list[str], timings: dict) -> int:
    return sum(timings[s][0] for s in steps)


def entry(value: float, std: float, steps: list[str], timings: dict, hardware: str, date: str, extra: dict) -> dict:
    return {
        "value": round(float(value), 4),
        "std": round(float(std), 4),
        "hardware": hardware,
        "date": date,
        "command": " && ".join(timings[s][1] for s in steps),
        "wall_time_s": wall_time(steps, timings),
        "commit": current_commit(),
        **extra,
    }


def read_json(path: Path, keys: Sequence[str] = ()) -> dict | None:
    """A run's JSON file (None when it is missing); a damaged one, or one without `keys`, stops with one line naming
    it, never json's traceback: a run folder is not under git, so the step that wrote it is what restores it."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        where = f":{error.lineno}" if isinstance(error, json.JSONDecodeError) else ""
        raise MissingRun(f"{path}{where}: not valid JSON ({error}); rerun the step that wrote it") from None
    missing = [key for key in keys if not isinstance(data, dict) or key not in data]
    if not isinstance(data, dict) or missing:
        raise MissingRun(f"{path}: not the file its step writes (no {', '.join(map(repr, missing or keys))})")
    return data


def scored_examples(folder: Path) -> Path | None:
    """The validation examples a run scored (`hf_models.metrics.write_scored_examples`), None when it saved none (a
    run older than them); two in one folder (a model's and a baseline's) is an error naming them."""
    found = sorted(folder.glob(SCORED_EXAMPLES.format(name="validation*")))
    if len(found) > 1:
        raise MissingRun(
            f"{folder}: {len(found)} files of scored validation examples ({found[0].name}, ...): one run, one file"
        )
    return found[0] if found else None


@functools.cache
def current_commit() -> str | None:
    """The commit of the code that writes the results (None outside a git checkout)."""
    found = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True
    )
    return found.stdout.strip() or None if found.returncode == 0 else None


def record_library_bar(results_path: Path, key: str, entry: dict) -> None:
    """Writes `entry` (with its `command`) as `key` of the library_bars section of `results_path`, with the hardware,
    date and commit that measured it."""
    results = read_json_object(results_path, "--results") if results_path.exists() else {}
    date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    stamp = {"hardware": default_hardware(), "date": date, "commit": current_commit()}
    results.setdefault(LIBRARY_BARS, {})[key] = {**entry, **stamp}
    atomic_write_text(results_path, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {LIBRARY_BARS}.{key} to {results_path}")


def with_interval(extra: dict, examples: list[Path | None]) -> dict:
    """`extra` with the runs' scored examples (`examples_validation`: one path, or one a seed) and the accuracy's `n`
    and `ci95`, when every run saved its examples; as it is otherwise (an older run's: no interval is made up)."""
    if not examples or any(path is None for path in examples):
        return extra
    interval = accuracy_interval(correct_table(examples))
    return {**extra, "examples_validation": [str(path) for path in examples], **interval}


def record_of(row: Row, folder: Path, split: str = "validation", metric: str | None = None) -> RunRecord:
    """The run record of one of a row's folders, with its evaluation on `split` (that has `metric`, if given)."""
    record = read_record(folder)
    scores = None if record is None else (record.scored(split, metric) if metric else record.evaluation(split))
    if scores is None:
        raise MissingRun(f"row {row.key!r}: no {split} scores in a run record in {folder}")
    return record


def birthplace_rows_of(bench: Path, profile: str, timings: dict, hardware: str, date: str) -> dict:
    """One run per row: `std` is the binomial standard error of the accuracy over the dev questions."""
    rows = {}
    for row in grid.load(profile).rows["birthplace"]:
        folder = bench / row.runs[0]
        check_steps(row, list(row.steps), timings)
        scores = record_of(row, folder, metric="exact_match").scored("validation")
        accuracy, total = scores.metrics["exact_match"], scores.num_examples
        extra = {"std_kind": "binomial standard error", "correct": round(accuracy * total), "total": total}
        if row.tune_step is not None:
            check_steps(row, [row.tune_step], timings)
            tune = record_of(row, bench / row.tune, metric="exact_match").scored("validation")
            extra["tune_split_acc"] = tune.metrics["exact_match"]
        probe = read_json(folder / "fact_probe.json")
        if probe is not None:
            extra["fact_probe"] = probe
        extra["predictions_test"] = str(folder / "predictions_test.txt")
        extra = with_interval(extra, [scored_examples(folder)])
        std = math.sqrt(accuracy * (1 - accuracy) / total)
        rows[row.key] = entry(accuracy, std, list(row.steps), timings, hardware, date, extra)
    by_key = {row.key: row for row in grid.load(profile).rows["birthplace"]}
    for key, candidates in grid.load(profile).headline.items():
        chosen = max(candidates, key=lambda c: rows[c]["tune_split_acc"])  # max keeps the first of equals
        # Both candidates were trained and scored on the tuning split to make the choice: all of it counts.
        steps = sorted({s for c in candidates for s in (*by_key[c].steps, by_key[c].tune_step)})
        rows[key] = {
            **rows[chosen],
            "chosen_row": chosen,
            "chosen_by": "tune split accuracy: "
            + ", ".join(f"{c} {rows[c]['tune_split_acc']:.3f}" for c in candidates),
            "wall_time_s": wall_time(steps, timings),
        }
    return rows


def _seed(record: RunRecord, run: Path) -> str:
    """A finetuning's seed: its record's, else the `seedN` in its folder's path."""
    found = re.search(r"seed(\d+)", run.as_posix())
    return str(record.hyperparameters.get("seed", found.group(1) if found else run.name))


def sentiment_rows_of(bench: Path, profile: str, timings: dict, hardware: str, date: str) -> dict:
    """One row per set-up, over its finetuning seeds: mean ± sample standard deviation of the final accuracy."""
    rows = {}
    for row in grid.load(profile).rows["sentiment"]:
        check_steps(row, list(row.steps), timings)
        records = {bench / run: record_of(row, bench / run) for run in row.runs}
        finals = [r.evaluation("validation").metrics["accuracy"] for r in records.values()]
        curves = [r.accuracy_per_epoch()[1] for r in records.values()]
        per_epoch = [round(statistics.mean(c[i] for c in curves), 4) for i in range(min(map(len, curves)))]
        extra = {
            "std_kind": f"sample standard deviation over {len(finals)} finetuning seeds",
            "per_seed": {
                f"{row.key}_seed{_seed(r, run)}": round(acc, 4)
                for (run, r), acc in zip(records.items(), finals, strict=True)
            },
            "per_epoch": per_epoch,
            "predictions_test": str(next(iter(records)) / "test_predictions.txt"),
            "predictions_test_per_seed": {
                _seed(r, run): str(run / "test_predictions.txt") for run, r in records.items()
            },
        }
        extra = with_interval(extra, [scored_examples(run) for run in records])
        std = statistics.stdev(finals) if len(finals) > 1 else 0.0
        rows[row.key] = entry(statistics.mean(finals), std, list(row.steps), timings, hardware, date, extra)
    return rows


def copy_file(source: str | Path, target: Path) -> None:
    """Copy a predictions file in one step (`atomic_write`: parent folders made, never half a file)."""
    with atomic_write(target) as staging:
        shutil.copyfile(source, staging)


def copy_headline_predictions(
    results: dict, predictions_dir: Path, profile: str = "cpu", written: set[str] | None = None
) -> None:
    """Copy the headline runs' test predictions and say in a README which run made each file. A file whose section
    was not written now (`written`: a run of one task only) or whose run is not in this bench folder keeps its
    earlier line: a later run into the same folder must not pass its files off as the earlier section's."""
    predictions_dir.mkdir(parents=True, exist_ok=True)
    readme = predictions_dir / "README.md"
    earlier = {
        line.split("`")[1]: line
        for line in (readme.read_text(encoding="utf-8").splitlines() if readme.exists() else [])
        if line.startswith("- `")
    }
    lines = [
        "# Test predictions of the headline benchmark runs",
        "",
        "Written by `benchmarks/write_results.py` after `make bench`; one line per test input."
        " Only the benchmark grid's runs, no exploration's.",
        "",
    ]
    for name, (section, row) in headline(profile).items():
        section += grid.load(profile).suffix
        rows = results.get(section, {})
        if row is None and rows:
            row = max(rows, key=lambda key: rows[key]["value"])
        source = rows.get(row, {}).get("predictions_test")
        if not source or not Path(source).exists() or (written is not None and section not in written):
            if name in earlier and (predictions_dir / name).exists():
                lines.append(earlier[name])
            continue
        copy_file(source, predictions_dir / name)
        n = len(Path(source).read_text(encoding="utf-8").splitlines())
        lines.append(
            f"- `{name}` ({n} lines): `{section}.{row}` row, {rows[row]['date']}, from `{source}`; "
            f"command: `{rows[row]['command']}`"
        )
    seeds = sorted(
        path.relative_to(predictions_dir).as_posix() for path in predictions_dir.glob("sentiment/*/seed*.txt")
    )
    if seeds:
        lines.append(f"- `sentiment/<row>/seed<N>.txt`: every sentiment row and finetuning seed ({', '.join(seeds)}).")
    if (predictions_dir / "validation").is_dir():
        lines.append(
            "- `validation/<section>/<row>[/seed<N>].jsonl` (a curve point's `<row>/n<budget>_seed<N>.jsonl`): each"
            " row's scored validation examples (index, prediction, reference), from which `benchmarks/intervals.py`"
            " computes the intervals and paired comparisons of results.json."
        )
    atomic_write_text(readme, "\n".join(lines) + "\n")


def copy_birthplace_predictions(rows: dict, predictions_dir: Path) -> list[Path]:
    """A course profile's birthplace test answers, one file per row: `birthplace/<row>.txt` (the rows' entries then
    name the copies, which the repository keeps; the run folders do not last)."""
    written = []
    for key, row in rows.items():
        source = Path(row["predictions_test"])
        if not source.exists():
            continue  # London answers the dev questions only
        target = predictions_dir / "birthplace" / f"{key}.txt"
        copy_file(source, target)
        row["predictions_test"] = target.as_posix()
        written.append(target)
    return written


def copy_seed_predictions(rows: dict, predictions_dir: Path, row_suffix: str = "") -> list[Path]:
    """Every sentiment row's test predictions, one file per finetuning seed: `sentiment/<row><row_suffix>/seed<N>.txt`
    (the test labels are held back and scored outside the project, so that each row and seed is scored on 2,000
    reviews)."""
    written = []
    for key, row in rows.items():
        for seed, source in row.get("predictions_test_per_seed", {}).items():
            target = predictions_dir / "sentiment" / f"{key}{row_suffix}" / f"seed{seed}.txt"
            copy_file(source, target)
            written.append(target)
    return written


def curve_point(bench: Path, row: str, budget: int, run: str) -> tuple[float, Path]:
    """One point of the label-budget curve: its validation accuracy and its test predictions file (a TF-IDF point's
    report.json, a finetuning's or probe's run record)."""
    folder, where = bench / run, f"label curve {row} at {budget} labels"
    if row == "tfidf":
        report = read_json(folder / "report.json")
        if report is None or report.get("label_budget") != budget:
            raise MissingRun(f"{where}: no report.json of a {budget}-label TF-IDF run in {folder}")
        return report["eval_accuracy"], folder / "test_predictions.txt"
    record = read_record(folder)
    scores = None if record is None else record.evaluation("validation")
    if scores is None:
        raise MissingRun(f"{where}: no validation scores in a run record in {folder}")
    return scores.metrics["accuracy"], folder / "test_predictions.txt"


def label_curve_of(bench: Path, profile: str, timings: dict, hardware: str, date: str) -> dict:
    """The label-budget curve (the profile's `curve` rows): each row's validation accuracy at each budget, one
    value per draw (the draw's seed is its finetuning seed) and their mean and sample standard deviation. Its wall
    time is the curve's own steps (the full budget's runs and the LM are the `sentiment` pipeline's)."""
    seeds, profile_grid = grid.load(profile).lists["seed"], grid.load(profile)
    rows, predictions, steps = {}, {}, set()
    examples: dict[tuple, Path | None] = {}
    for row, budgets in curve_points(profile).items():
        rows[row] = {}
        for budget, draws in budgets.items():
            per_draw = {}
            for seed, (run, step) in draws.items():
                if step not in timings:
                    check_kept(f"label curve {row} at {budget} labels", [step], timings)
                    raise MissingRun(f"label curve {row} at {budget} labels: step {step} missing or failed")
                per_draw[f"seed{seed}"], predictions[(row, budget, seed)] = curve_point(bench, row, budget, run)
                examples[(row, budget, seed)] = scored_examples(bench / run)
                steps.add(step)
            values = list(per_draw.values())
            std = statistics.stdev(values) if len(values) > 1 else 0.0
            point = {
                "per_draw": {key: round(value, 4) for key, value in per_draw.items()},
                "mean": round(statistics.mean(values), 4),
                "std": round(std, 4),
            }
            rows[row][str(budget)] = with_interval(point, [examples[(row, budget, seed)] for seed in draws])
    own = sorted(step for step in steps if step.startswith("se_curve_"))
    return {
        "budgets": list(profile_grid.budgets),
        "draws": "nested draws, one per finetuning seed: " + ", ".join(map(str, seeds)),
        "min_steps": profile_grid.min_steps,
        "rows": rows,
        "hardware": hardware,
        "date": date,
        "wall_time_s": wall_time(own, timings),
        "commit": current_commit(),
        "predictions_test": {f"{row}/n{n}_seed{seed}": str(path) for (row, n, seed), path in predictions.items()},
    }


def copy_curve_predictions(curve: dict, predictions_dir: Path, row_suffix: str = "") -> list[Path]:
    """The curve's test predictions, one file per row, budget and draw: `sentiment_curve/<row><row_suffix>/
    n<N>_seed<S>.txt` (scored outside the project, as the sentiment rows' are)."""
    written = []
    for point, source in curve["predictions_test"].items():
        row, name = point.split("/")
        target = predictions_dir / "sentiment_curve" / f"{row}{row_suffix}" / f"{name}.txt"
        copy_file(source, target)
        written.append(target)
    return written


def copy_validation_examples(section: str, points: dict[str, dict], predictions_dir: Path) -> list[Path]:
    """Each row's (or curve point's: `{"row/n24": point}`) scored validation examples, copied to
    `validation/<section>/<row>.jsonl` (one run) or `validation/<section>/<row>/seed<N>.jsonl` (one a seed, a curve
    point's `n<budget>_seed<N>.jsonl`), its entry then naming the copies: the run folders do not last, the
    intervals and comparisons must be computable again."""
    written = []
    for name, point in points.items():
        sources = point.get("examples_validation")
        if not sources:
            continue
        if len(sources) == 1 and "/" not in name:
            targets = [predictions_dir / "validation" / section / f"{name}.jsonl"]
        else:
            row, _, budget = name.partition("/")
            seeds = [re.search(r"seed(\d+)", Path(source).as_posix()) for source in sources]
            stems = [f"seed{found.group(1)}" if found else f"run{i}" for i, found in enumerate(seeds)]
            targets = [
                predictions_dir
                / "validation"
                / section
                / row
                / (f"{budget}_{stem}.jsonl" if budget else f"{stem}.jsonl")
                for stem in stems
            ]
        for source, target in zip(sources, targets, strict=True):
            if Path(source).resolve() != target.resolve():
                copy_file(source, target)
            written.append(target)
        point["examples_validation"] = [target.as_posix() for target in targets]
    return written


def curve_points_of(curve: dict) -> dict[str, dict]:
    """{"row/n<budget>": point} of a label-curve section (its points, the same objects)."""
    return {f"{row}/n{budget}": point for row, budgets in curve["rows"].items() for budget, point in budgets.items()}


# The rows each section compares (first − second), besides CS224N's pretrained rows against no pretraining
# (`birthplace_pairs`) and the label curve's at each budget (`curve_comparisons`).
SENTIMENT_PAIRS = (
    ("pretrained", "scratch"),
    ("frozen", "scratch"),
    ("pretrained", "frozen"),
    ("pretrained_lp_ft", "scratch_lp_ft"),
)
CURVE_PAIRS = (("pretrained_lp_ft", "scratch_lp_ft"), ("frozen_linear_probe", "scratch_lp_ft"))
NO_PRETRAINING = "vanilla_nopretrain"


def birthplace_pairs(profile: str, rows: dict) -> list[tuple[str, str]]:
    """CS224N's pretrained rows against no pretraining: the headline rows (the tune split's choice), or in a course
    profile each finetuned pretrained model."""
    pretrained = list(grid.load(profile).headline) or [key for key in rows if key.endswith("_finetuned")]
    return [(key, NO_PRETRAINING) for key in pretrained]


def comparison(section: str, split: str, first: str, second: str, points: tuple[dict, dict], **facts) -> dict | None:
    """One paired comparison of two rows' scored examples, or None when either saved none."""
    paths = [point.get("examples_validation") for point in points]
    if not all(paths):
        return None
    tables = [correct_table(found) for found in paths]
    try:
        difference = paired_difference(*tables)
    except ExamplesMismatch as mismatch:  # e.g. one row scored a part of the split: nothing to pair
        print(
            f"write_results.py: warning: no comparison of {first} against {second} in {section}: {mismatch}",
            file=sys.stderr,
        )
        return None
    return {"section": section, "first": first, "second": second, "split": split, **facts, **difference}


def curve_comparisons(section: str, curve: dict) -> dict:
    """At each budget of the curve: pretrained against scratch LP-FT, the probe against scratch LP-FT, and TF-IDF
    against the neural row with the better mean there (`second` names it)."""
    found, rows = {}, curve["rows"]
    for budget in map(str, curve["budgets"]):
        pairs = [pair for pair in CURVE_PAIRS if set(pair) <= set(rows)]
        neural = [key for key in rows if key != "tfidf" and budget in rows[key]]
        if "tfidf" in rows and neural:
            pairs.append(("tfidf", max(neural, key=lambda key: rows[key][budget]["mean"])))
        for first, second in pairs:
            key = comparison_key(section, first, "best_neural" if first == "tfidf" else second, budget)
            entry = comparison(
                section, "validation", first, second, (rows[first][budget], rows[second][budget]), budget=int(budget)
            )
            if entry is not None:
                found[key] = entry
    return found


def comparisons_of(fresh: dict, profile: str, date: str) -> dict:
    """The paired comparisons of the sections written now, each with its date and commit."""
    found = {}
    for section, rows in fresh.items():
        if section.startswith("sentiment_label_curve"):
            found.update(curve_comparisons(section, rows))
            continue
        if section.startswith("birthplace_dev_acc"):
            pairs, split = birthplace_pairs(profile, rows), "dev"
        elif section.startswith("sentiment_valid_acc"):
            pairs, split = list(SENTIMENT_PAIRS), "validation"
        else:
            continue
        for first, second in pairs:
            if first in rows and second in rows:
                entry = comparison(section, split, first, second, (rows[first], rows[second]))
                if entry is not None:
                    found[comparison_key(section, first, second)] = entry
    return {key: {**entry, "date": date, "commit": current_commit()} for key, entry in found.items()}


def demo_of(demo_dir: Path, hardware: str, date: str) -> dict:
    """`make demo`'s scores on its held-out people (recipes/demo.py's demo_results.json), with hardware and date."""
    demo = read_json(demo_dir / "demo_results.json")
    if demo is None:
        raise MissingRun(f"no demo_results.json in {demo_dir}: run `make demo` (or recipes/demo.py) first")
    if demo["setting"] != "synthetic":
        raise MissingRun(f"{demo_dir} holds a {demo['setting']!r} demo; the report records `make demo`'s (synthetic)")
    return {**demo, "hardware": hardware, "date": date, "command": "make demo"}


# The pipelines whose steps each task's section reads (a run of none of them says nothing of that section's time).
TASK_PIPELINES = {
    "birthplace": {"birthplace"},
    "sentiment": {"sentiment", "sentiment_lab"},
    "sentiment_curve": {"sentiment_curve"},
}


RUN_TIME_KEYS = ("command", "profile", "pipelines", "started", "wall_time_s", "resumed", "failed")


def whole_run_of(bench: Path, tasks: list[str], hardware: str, profile: str) -> tuple[str, dict] | None:
    """The last successful run into the bench folder (its run_time.json, written by benchmarks/Snakefile): its command
    and whole wall time, if it ran a pipeline of the sections written."""
    run = read_json(bench / "run_time.json", RUN_TIME_KEYS)
    pipelines = {name for task in tasks for name in TASK_PIPELINES.get(task, ())}
    if run is None or run["failed"] or not pipelines & set(run["pipelines"]) or run.get("profile") != profile:
        return None  # none, a failed one, or another profile's
    entry = {key: run[key] for key in ("profile", "pipelines", "wall_time_s", "resumed")}
    return run["command"], {**entry, "hardware": hardware, "date": run["started"][:10]}


def split_pairs(pairs: list[str]) -> list[tuple[str, str]]:
    """`NAME=TEXT` arguments as (name, text); one without `=` is refused."""
    split = [pair.split("=", 1) for pair in pairs]
    bad = [pair for pair, parts in zip(pairs, split, strict=True) if len(parts) != 2 or not parts[0]]
    if bad:
        raise SystemExit(f"error: expected NAME=TEXT, got {bad[0]!r}")
    return [(name, text) for name, text in split]


def add_notes(sections: dict, notes: list[str]) -> None:
    """Put each `ROW=TEXT` note on the row of that name in the sections written; a row not there is refused."""
    for row, text in split_pairs(notes):
        owners = [rows for rows in sections.values() if row in rows]
        if not owners:
            raise SystemExit(
                f"error: --note {row}=...: no row {row!r} in the sections written ({', '.join(sections)})"
            )
        for rows in owners:
            rows[row]["note"] = text


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument(
        "--bench_dir", default="outputs/bench", help="the OUT folder of `make bench` (or cs224n, altegrad)"
    )
    parser.add_argument("--results", default="benchmarks/results.json", help="file to update")
    parser.add_argument(
        "--predictions_dir", default=None, help="default: the profile's (benchmarks/predictions[/gpu])"
    )
    parser.add_argument(
        "--profile", choices=grid.names(), default=os.environ.get("PROFILE", "cpu"), help="which sections"
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        choices=["birthplace", "sentiment", "sentiment_curve", "demo"],
        default=["birthplace", "sentiment", "sentiment_curve"],
        help="the sections to write (a pipeline run alone writes its own; demo: `make demo`'s, from --demo_dir)",
    )
    parser.add_argument("--demo_dir", default="runs/demo", help="the output folder of `make demo` (--tasks demo)")
    parser.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="ROW=TEXT",
        help="a note on a row of the sections written (what the report must say beside its number); repeatable",
    )
    parser.add_argument(
        "--stopped",
        action="append",
        default=[],
        metavar="STEP=TEXT",
        help="a step of the run that the time limit stopped before its end, and how far it got; repeatable",
    )
    parser.add_argument("--hardware", default=None, help="default: $BENCH_HARDWARE or detected")
    parser.add_argument("--date", default=None, help="default: today (UTC)")
    report = parser.add_argument_group("--report: render the report from --results instead of reading runs")
    report.add_argument("--report", action="store_true", help="write BENCHMARKS.md and docs/levers.md")
    report.add_argument("--levers", default="benchmarks/levers.json", help="the levers tried")
    report.add_argument("--benchmarks_md", default="BENCHMARKS.md", help="the report to write")
    report.add_argument("--levers_md", default="docs/levers.md", help="the removed levers' page to write")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.report:
        write_report(Path(args.results), Path(args.levers), Path(args.benchmarks_md), Path(args.levers_md))
        return
    bench = Path(args.bench_dir)
    hardware = args.hardware or default_hardware()
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    if not bench.is_dir():
        raise MissingRun(f"--bench_dir {bench}: no such folder")
    timings = read_timings(bench, args.profile)
    results_path = Path(args.results)
    results = read_json_object(results_path, "--results") if results_path.exists() else {}

    profile = grid.load(args.profile)
    suffix = profile.suffix
    predictions_dir = Path(args.predictions_dir or profile.predictions)

    fresh = {}
    if "birthplace" in args.tasks:
        fresh[f"birthplace_dev_acc{suffix}"] = birthplace_rows_of(bench, args.profile, timings, hardware, date)
        if profile.course:  # no headline file: every row's test answers, to be scored outside
            copy_birthplace_predictions(fresh[f"birthplace_dev_acc{suffix}"], predictions_dir)
    if "sentiment" in args.tasks:
        fresh[f"sentiment_valid_acc{suffix}"] = sentiment_rows_of(bench, args.profile, timings, hardware, date)
        copy_seed_predictions(fresh[f"sentiment_valid_acc{suffix}"], predictions_dir, profile.row_suffix)
    if "sentiment_curve" in args.tasks:
        fresh[f"sentiment_label_curve{suffix}"] = label_curve_of(bench, args.profile, timings, hardware, date)
        copy_curve_predictions(fresh[f"sentiment_label_curve{suffix}"], predictions_dir, profile.row_suffix)
    if "demo" in args.tasks:
        fresh["demo"] = demo_of(Path(args.demo_dir), hardware, date)
    for section, rows in fresh.items():
        if section.startswith(("birthplace_dev_acc", "sentiment_valid_acc")):
            copy_validation_examples(section, rows, predictions_dir)
        elif section.startswith("sentiment_label_curve"):
            copy_validation_examples(section, curve_points_of(rows), predictions_dir)
    # a section written now replaces its comparisons whole, as it replaces its rows
    kept = {key: entry for key, entry in results.get("comparisons", {}).items() if entry["section"] not in fresh}
    results["comparisons"] = {**kept, **comparisons_of(fresh, args.profile, date)}
    add_notes(fresh, args.note)
    whole_run = whole_run_of(bench, args.tasks, hardware, args.profile)
    if whole_run is not None:  # one entry per command: a later run of the same command replaces it
        command, run = whole_run
        results.setdefault("whole_runs", {})[command] = run
    if args.stopped:
        fresh[f"stopped_runs{suffix}"] = {
            step: {"what": text, "hardware": hardware, "date": date} for step, text in split_pairs(args.stopped)
        }
    results.update(fresh)
    if (
        not profile.row_suffix and not profile.course
    ):  # a lever's profile: its rows beside its base profile's, the headline files stay
        copy_headline_predictions({**results, **fresh}, predictions_dir, args.profile, set(fresh))
    atomic_write_text(results_path, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    sections = tuple(fresh)
    summary = {
        k: {row: (v["value"], v["std"]) for row, v in results[k].items() if isinstance(v, dict) and "std" in v}
        for k in sections
    }
    print(json.dumps(summary, indent=1))
    print(f"{results_path} written; render the documents from it with: make docs")


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
