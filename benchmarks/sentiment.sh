#!/usr/bin/env bash
# The sentiment pipelines of the benchmark plan (benchmarks/plan.py) alone, from the repo root: `sentiment` (the
# tokenizer, the LM, LP-FT from scratch and pretrained, the frozen probe), then `sentiment_lab` (the lab's rows).
#   DATA_ROOT=../shared/data bash benchmarks/sentiment.sh        (PROFILE=cpu | gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PY:-.venv/bin/python}" benchmarks/plan.py run --profile "${PROFILE:-cpu}" --pipeline sentiment sentiment_lab
