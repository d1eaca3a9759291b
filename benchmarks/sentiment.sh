#!/usr/bin/env bash
# The sentiment pipeline of the benchmark plan (benchmarks/plan.py) alone, from the repo root:
#   DATA_ROOT=../shared/data bash benchmarks/sentiment.sh        (PROFILE=cpu | gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PY:-.venv/bin/python}" benchmarks/plan.py run --profile "${PROFILE:-cpu}" --pipeline sentiment
