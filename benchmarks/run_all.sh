#!/usr/bin/env bash
# Rerun every benchmark from the repo root:  bash benchmarks/run_all.sh   (or: make bench)
# The runs, their commands and each profile's values are the plan in benchmarks/plan.py (`python benchmarks/plan.py
# show --profile cpu` lists them). PROFILE=cpu (default): the 2-core CPU profile, at most 60 minutes per task;
# PROFILE=gpu: the larger profile in bf16 (dev/README.md: running it on a GPU machine without network).
# PROFILE=course / course-cut: the courses' own settings, in full (a GPU machine) or cut to the CPU hour.
# Each step's hyperparameters are its config file, configs/<course>/<profile>/<step>.json.
# PIPELINES: some of the plan's pipelines alone (birthplace, sentiment, sentiment_lab, sentiment_curve;
# space-separated), e.g.
#   make bench PIPELINES=birthplace        make bench PIPELINES="sentiment sentiment_lab"
# results.json and the throughput rows come from a run of every pipeline only.
# Data from DATA_ROOT (default ../shared/data); outputs (models, logs, predictions) under OUT (default
# outputs/bench, git-ignored). The headline numbers go to benchmarks/results.json and the headline test
# predictions to benchmarks/predictions/.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2086  # PIPELINES is a list of names
exec "${PY:-.venv/bin/python}" benchmarks/plan.py run --profile "${PROFILE:-cpu}" ${PIPELINES:+--pipeline $PIPELINES}
