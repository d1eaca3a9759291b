#!/usr/bin/env python
"""Write the headline birthplace and sentiment numbers into benchmarks/results.json (read-modify-write).

    python benchmarks/write_results.py --bench_dir outputs/bench
    python benchmarks/write_results.py --bench_dir outputs/bench_gpu --profile gpu

Reads the recipes' run records under BENCH_DIR (birthplace/*/run_record.json,
sentiment/*_seed*/run_record.json) and the step timings (timings.tsv written by benchmarks/common.sh). Only the
`birthplace_dev_acc` and `sentiment_valid_acc` sections are touched (`*_gpu` for the GPU profile, so that the two
profiles never overwrite each other); every other key (for example `throughput`, written by
benchmarks/throughput.py) is kept as it is. Entries whose run is missing are left
unchanged. Values are fractions in 0-1; each entry carries a standard deviation, hardware, date, command and
wall time. The birthplace headline rows (`vanilla`, `synthesizer`) are the tuning split's choice between each
pretrained model and its finetuned copy. The headline runs' test predictions are copied to benchmarks/predictions/
(benchmarks/predictions/gpu/ for the GPU profile).
"""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
from pathlib import Path

from hf_models.run_record import Evaluation, read_record

BIRTHPLACE = {  # results key -> (run folder, steps whose wall time counts)
    "london": ("london", ["bp_london"]),
    "vanilla_nopretrain": ("nopretrain_finetune", ["bp_nopretrain_finetune", "bp_nopretrain_eval_dev"]),
    "vanilla_finetuned": ("vanilla_finetune", ["bp_vanilla_pretrain", "bp_vanilla_finetune", "bp_vanilla_eval_dev"]),
    "synthesizer_finetuned": (
        "synthesizer_finetune",
        ["bp_synthesizer_pretrain", "bp_synthesizer_finetune", "bp_synthesizer_eval_dev"],
    ),
    "vanilla_pretrain_only": ("vanilla_pretrain", ["bp_vanilla_pretrain", "bp_vanilla_pretrain_eval_dev"]),
    "synthesizer_pretrain_only": (
        "synthesizer_pretrain",
        ["bp_synthesizer_pretrain", "bp_synthesizer_pretrain_eval_dev"],
    ),
}
# The headline rows: of the course's pretrain-then-finetune model and the pretrained model alone, the one with
# the better accuracy on the tuning split (training questions held out of both stages; ties go to the course's
# finetuned model). The dev set never takes part in the choice.
TUNE_SPLIT_CHOICE = {
    "vanilla": ("vanilla_finetuned", "vanilla_pretrain_only"),
    "synthesizer": ("synthesizer_finetuned", "synthesizer_pretrain_only"),
}
SENTIMENT = {  # results key -> (run folder prefix, shared steps; each seed's own step is added)
    "scratch": ("scratch", ["se_tokenizer"]),
    "pretrained": ("pretrained", ["se_tokenizer", "se_pretrain", "se_domain"]),
    "frozen": ("frozen", ["se_tokenizer", "se_pretrain", "se_domain"]),
}
HEADLINE = {  # file in benchmarks/predictions -> (results section, row)
    "birthplace_test_predictions.txt": ("birthplace_dev_acc", "vanilla"),
    "sentiment_test_predictions.txt": ("sentiment_valid_acc", None),  # the row with the best validation mean
}


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


def read_timings(path: Path) -> dict[str, tuple[int, str]]:
    timings = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            name, seconds, command = line.split("\t", 2)
            timings[name] = (int(seconds), command)  # the last run of a step wins
    return timings


def wall_time(steps: list[str], timings: dict) -> int | None:
    """The summed seconds of the steps that were timed (None when none was)."""
    known = [s for s in steps if s in timings]
    return sum(timings[s][0] for s in known) if known else None


def entry(value: float, std: float, steps: list[str], timings: dict, hardware: str, date: str, extra: dict) -> dict:
    return {
        "value": round(float(value), 4),
        "std": round(float(std), 4),
        "hardware": hardware,
        "date": date,
        "command": " && ".join(timings[s][1] for s in steps if s in timings) or None,
        "wall_time_s": wall_time(steps, timings),
        **extra,
    }


def read_json(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def dev_scores(folder: Path) -> Evaluation | None:
    """The exact-match scores on the dev questions recorded in a run folder (a model's, or a baseline's)."""
    record = read_record(folder)
    return record.scored("validation") if record else None


def birthplace_rows(bench: Path, timings: dict, hardware: str, date: str) -> dict:
    """One run per row: `std` is the binomial standard error of the accuracy over the dev questions."""
    rows = {}
    for key, (folder, steps) in BIRTHPLACE.items():
        scores = dev_scores(bench / "birthplace" / folder)
        if scores is None:
            continue
        accuracy, total = scores.metrics["exact_match"], scores.num_examples
        extra = {"std_kind": "binomial standard error", "correct": round(accuracy * total), "total": total}
        tune = dev_scores(bench / "birthplace" / folder / "eval_tune")
        if tune is not None:
            extra["tune_split_acc"] = tune.metrics["exact_match"]
        probe = read_json(bench / "birthplace" / folder / "fact_probe.json")
        if probe is not None:
            extra["fact_probe"] = probe
        extra["predictions_test"] = str(bench / "birthplace" / folder / "predictions_test.txt")
        std = math.sqrt(accuracy * (1 - accuracy) / total)
        rows[key] = entry(accuracy, std, steps, timings, hardware, date, extra)
    for key, candidates in TUNE_SPLIT_CHOICE.items():
        scored = [c for c in candidates if "tune_split_acc" in rows.get(c, {})]
        if not scored:
            continue
        chosen = max(scored, key=lambda c: rows[c]["tune_split_acc"])  # max keeps the first of equals
        # Both candidates were trained and scored on the tuning split to make the choice: all of it counts.
        steps = {s for c in scored for s in BIRTHPLACE[c][1]}
        steps |= {s.replace("_eval_dev", "_eval_tune") for s in steps if s.endswith("_eval_dev")}
        rows[key] = {
            **rows[chosen],
            "chosen_row": chosen,
            "chosen_by": "tune split accuracy: " + ", ".join(f"{c} {rows[c]['tune_split_acc']:.3f}" for c in scored),
            "wall_time_s": wall_time(sorted(steps), timings),
        }
    return rows


def sentiment_rows(bench: Path, timings: dict, hardware: str, date: str) -> dict:
    """One row per set-up, over its finetuning seeds: mean ± sample standard deviation of the final accuracy."""
    rows = {}
    for key, (prefix, shared_steps) in SENTIMENT.items():
        records = {run: read_record(run) for run in sorted((bench / "sentiment").glob(f"{prefix}_seed*"))}
        records = {run: r for run, r in records.items() if r is not None and r.evaluation("validation")}
        if not records:
            continue
        finals = [r.evaluation("validation").metrics["accuracy"] for r in records.values()]
        curves = [r.accuracy_per_epoch()[1] for r in records.values()]
        per_epoch = [round(statistics.mean(c[i] for c in curves), 4) for i in range(min(map(len, curves)))]
        steps = shared_steps + [f"se_{run.name}" for run in records]
        extra = {
            "std_kind": f"sample standard deviation over {len(finals)} finetuning seeds",
            "per_seed": {run.name: round(acc, 4) for run, acc in zip(records, finals, strict=True)},
            "per_epoch": per_epoch,
            "predictions_test": str(next(iter(records)) / "test_predictions.txt"),
        }
        std = statistics.stdev(finals) if len(finals) > 1 else 0.0
        rows[key] = entry(statistics.mean(finals), std, steps, timings, hardware, date, extra)
    return rows


def copy_headline_predictions(results: dict, predictions_dir: Path, suffix: str = "") -> None:
    """Copy the headline runs' test predictions and say in a README which run made each file.

    `results` holds only the rows this call read from the bench folder: a row kept from an earlier run in
    results.json must never be picked, since its predictions are not in this bench folder."""
    predictions_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Test predictions of the headline benchmark runs",
        "",
        "Written by `benchmarks/write_results.py` after `benchmarks/run_all.sh`; one line per test input.",
        "",
    ]
    for name, (section, row) in HEADLINE.items():
        section += suffix
        rows = results.get(section, {})
        if row is None and rows:
            row = max(rows, key=lambda key: rows[key]["value"])
        source = rows.get(row, {}).get("predictions_test")
        if not source or not Path(source).exists():
            continue
        shutil.copyfile(source, predictions_dir / name)
        n = len(Path(source).read_text(encoding="utf-8").splitlines())
        lines.append(
            f"- `{name}` ({n} lines): `{section}.{row}` row, {rows[row]['date']}, from `{source}`; "
            f"command: `{rows[row]['command']}`"
        )
    (predictions_dir / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench_dir", default="outputs/bench")
    parser.add_argument("--results", default="benchmarks/results.json")
    parser.add_argument("--predictions_dir", default=None, help="default: benchmarks/predictions[/gpu]")
    parser.add_argument("--profile", choices=["cpu", "gpu"], default=os.environ.get("PROFILE", "cpu"))
    parser.add_argument("--hardware", default=None, help="default: $BENCH_HARDWARE or detected")
    parser.add_argument("--date", default=None, help="default: today (UTC)")
    args = parser.parse_args()
    bench = Path(args.bench_dir)
    hardware = args.hardware or default_hardware()
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    timings = read_timings(bench / "timings.tsv")
    results_path = Path(args.results)
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else {}

    suffix = "_gpu" if args.profile == "gpu" else ""
    default_predictions = "benchmarks/predictions/gpu" if suffix else "benchmarks/predictions"
    predictions_dir = Path(args.predictions_dir or default_predictions)

    fresh = {
        f"birthplace_dev_acc{suffix}": birthplace_rows(bench, timings, hardware, date),
        f"sentiment_valid_acc{suffix}": sentiment_rows(bench, timings, hardware, date),
    }
    for section, rows in fresh.items():
        results[section] = {**results.get(section, {}), **rows}
    copy_headline_predictions(fresh, predictions_dir, suffix)
    results_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    sections = tuple(fresh)
    summary = {k: {row: (v["value"], v["std"]) for row, v in results[k].items() if "std" in v} for k in sections}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
