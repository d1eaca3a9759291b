#!/usr/bin/env bash
# Rerun every benchmark from the repo root:  bash benchmarks/run_all.sh   (or: make bench)
# The runs, their commands and each profile's values are the plan in benchmarks/plan.py (`python benchmarks/plan.py
# show --profile cpu` lists them). PROFILE=cpu (default): the 2-core CPU profile, at most 60 minutes per task;
# PROFILE=gpu: the larger profile in bf16 (see BENCHMARKS.md for running it on a GPU machine).
# Data from DATA_ROOT (default ../shared/data); outputs (models, logs, predictions) under OUT (default
# outputs/bench, git-ignored). The headline numbers go to benchmarks/results.json and the headline test
# predictions to benchmarks/predictions/.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PY:-.venv/bin/python}" benchmarks/plan.py run --profile "${PROFILE:-cpu}"
