#!/usr/bin/env python
"""How fast a recipe's `-h` answers, beside `python -c "import torch, transformers"` (the imports of any run),
measured side by side in one run: each round times the baseline and every command once, in turn, in fresh
processes, so that a busy machine slows them alike. Prints the median wall and CPU seconds of each and the ratio to
the baseline's (the goal: at most 1.5).

    python benchmarks/help_speed.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hf_models.environment import OFFLINE_ENVIRONMENT
from hf_models.training.arguments import HelpFormatter

REPO_ROOT = Path(__file__).resolve().parent.parent
BASELINE = ("import torch, transformers", ["-c", "import torch, transformers"])
COMMANDS = [
    ("pretrain.py -h", ["recipes/pretrain.py", "-h"]),
    ("finetune_sentiment.py -h", ["recipes/finetune_sentiment.py", "-h"]),
    ("birthplace.py -h", ["recipes/birthplace.py", "-h"]),
    ("birthplace.py pretrain -h", ["recipes/birthplace.py", "pretrain", "-h"]),
    ("birthplace.py finetune -h", ["recipes/birthplace.py", "finetune", "-h"]),
    ("birthplace.py evaluate -h", ["recipes/birthplace.py", "evaluate", "-h"]),
    ("demo.py -h", ["recipes/demo.py", "-h"]),
    ("push_to_hub.py -h", ["push_to_hub.py", "-h"]),
    ("app.py -h", ["recipes/app.py", "-h"]),
    ("pretrain.py --no_such_flag (refused)", ["recipes/pretrain.py", "--no_such_flag", "1"]),
    # {folder}: an empty folder; {used}: a folder holding a file (an earlier run's)
    (
        "finetune_sentiment.py, no such model (refused)",
        ["recipes/finetune_sentiment.py", "--model_name_or_path", "{folder}/none", "--data_dir", "{folder}"]
        + ["--output_dir", "{folder}/run"],
    ),
    (
        "finetune_sentiment.py, a used output folder (refused)",
        ["recipes/finetune_sentiment.py", "--from_scratch", "--data_dir", "{folder}", "--output_dir", "{used}"],
    ),
]
GOAL = 1.5


def timed(arguments: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of `python ARGUMENTS` in a fresh process, which must answer as it should:
    exit 0 for `-h` and the baseline, 2 for a refusal (a crash would be timed as a quick answer)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, **OFFLINE_ENVIRONMENT}
    done = subprocess.run([sys.executable, *arguments], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    expected = 2 if arguments[-1] != "-h" and arguments[0] != "-c" else 0
    if done.returncode != expected:
        raise SystemExit(
            f"python {shlex.join(arguments)}: exit {done.returncode}, not {expected}\n{done.stderr[-2000:]}"
        )
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="times each command runs (the median is shown)")
    parser.add_argument("--results", type=Path, help="record the CPU ratios in this results file (library_bars)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more")
    with tempfile.TemporaryDirectory() as folder:
        used = Path(folder, "used")
        used.mkdir()
        (used / "config.json").write_text("{}\n", encoding="utf-8")
        everything = [
            (name, [word.replace("{used}", str(used)).replace("{folder}", folder) for word in words])
            for name, words in [BASELINE, *COMMANDS]
        ]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in everything}
        timed(BASELINE[1])  # warm the file cache before the first measured round
        for _ in range(args.rounds):
            for name, arguments in everything:
                times[name].append(timed(arguments))
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in times.items()}
    base = BASELINE[0]
    width = max(len(name) for name in times)
    print(f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, median of {args.rounds} rounds")
    print(f"| {'command'.ljust(width)} | wall s | CPU s | wall / baseline | CPU / baseline |")
    print(f"|{'-' * (width + 2)}|-------:|------:|----------------:|---------------:|")
    worst = 0.0
    for name in times:
        ratio, cpu_ratio = wall[name] / wall[base], cpu[name] / cpu[base]
        worst = max(worst, ratio) if name != base else worst
        print(f"| {name.ljust(width)} | {wall[name]:6.2f} | {cpu[name]:5.2f} | {ratio:15.2f} | {cpu_ratio:14.2f} |")
    print(f"Slowest -h / baseline: {worst:.2f} (goal: at most {GOAL})")
    if args.results is not None:
        from write_results import record_library_bar

        entry = {
            "command": shlex.join(["python", "benchmarks/help_speed.py", *argv]),
            "rounds": args.rounds,
            "baseline_cpu_s": round(cpu[base], 2),
            "cpu_ratio_to_baseline": {name: round(cpu[name] / cpu[base], 2) for name in times if name != base},
            "wall_ratio_to_baseline": {name: round(wall[name] / wall[base], 2) for name in times if name != base},
            "goal": GOAL,
        }
        record_library_bar(args.results, "help_speed", entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
