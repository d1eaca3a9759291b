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
import statistics
import subprocess
import sys
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
]
GOAL = 1.5


def timed(arguments: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of `python ARGUMENTS` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, **OFFLINE_ENVIRONMENT}
    subprocess.run([sys.executable, *arguments], cwd=REPO_ROOT, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="times each command runs (the median is shown)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more")
    everything = [BASELINE, *COMMANDS]
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
