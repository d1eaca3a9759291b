#!/usr/bin/env python
"""Write the headline birthplace and sentiment numbers into benchmarks/results.json (read-modify-write).

    python benchmarks/write_results.py --bench_dir outputs/bench

Reads the recipes' reports under BENCH_DIR (birthplace/*/report_evaluate_validation.json,
sentiment/*/report.json) and the step timings (timings.tsv written by benchmarks/common.sh). Only the
`birthplace_dev_acc` and `sentiment_valid_acc` sections are touched; every other key (for example
`throughput`, written by benchmarks/throughput.py) is kept as it is. Entries whose run is missing are left
unchanged. Values are fractions in 0-1; each entry carries hardware, date, command and wall time.
"""

import argparse
import datetime
import json
import os
import platform
from pathlib import Path

BIRTHPLACE = {  # results key -> (run folder, steps whose wall time counts)
    "london": ("london", ["bp_london"]),
    "vanilla_nopretrain": ("nopretrain_finetune", ["bp_nopretrain_finetune", "bp_nopretrain_eval_dev"]),
    "vanilla": ("vanilla_finetune", ["bp_vanilla_pretrain", "bp_vanilla_finetune", "bp_vanilla_eval_dev"]),
    "synthesizer": ("synthesizer_finetune", ["bp_synthesizer_pretrain", "bp_synthesizer_finetune", "bp_synthesizer_eval_dev"]),
}
SENTIMENT = {
    "scratch": ("scratch", ["se_tokenizer", "se_scratch"]),
    "pretrained": ("pretrained", ["se_tokenizer", "se_pretrain", "se_pretrained"]),
    "frozen": ("frozen", ["se_tokenizer", "se_pretrain", "se_frozen"]),
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


def entry(value: float, steps: list[str], timings: dict, hardware: str, date: str, extra: dict) -> dict:
    known = [s for s in steps if s in timings]
    return {
        "value": round(float(value), 4),
        "hardware": hardware,
        "date": date,
        "command": " && ".join(timings[s][1] for s in known) or None,
        "wall_time_s": sum(timings[s][0] for s in known) if known else None,
        **extra,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench_dir", default="outputs/bench")
    parser.add_argument("--results", default="benchmarks/results.json")
    parser.add_argument("--hardware", default=None, help="default: $BENCH_HARDWARE or detected")
    parser.add_argument("--date", default=None, help="default: today (UTC)")
    args = parser.parse_args()
    bench = Path(args.bench_dir)
    hardware = args.hardware or default_hardware()
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    timings = read_timings(bench / "timings.tsv")
    results_path = Path(args.results)
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else {}

    section = results.setdefault("birthplace_dev_acc", {})
    for key, (folder, steps) in BIRTHPLACE.items():
        report = bench / "birthplace" / folder / "report_evaluate_validation.json"
        if report.exists():
            r = json.loads(report.read_text(encoding="utf-8"))
            extra = {"correct": r["correct"], "total": r["total"]}
            tune = bench / "birthplace" / folder / "eval_tune" / "report_evaluate_validation.json"
            if tune.exists():
                extra["tune_split_acc"] = json.loads(tune.read_text(encoding="utf-8"))["exact_match"]
            section[key] = entry(r["exact_match"], steps, timings, hardware, date, extra)

    section = results.setdefault("sentiment_valid_acc", {})
    for key, (folder, steps) in SENTIMENT.items():
        report = bench / "sentiment" / folder / "report.json"
        if report.exists():
            r = json.loads(report.read_text(encoding="utf-8"))
            # The recipe's list also holds the final trainer.evaluate() (a repeat of the last epoch): one per epoch.
            per_epoch = list({e["epoch"]: round(e["accuracy"], 4) for e in r.get("eval_accuracy_per_epoch", [])}.values())
            section[key] = entry(r["eval_accuracy"], steps, timings, hardware, date, {"per_epoch": per_epoch})

    results_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: {kk: vv.get("value") for kk, vv in v.items()} for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
