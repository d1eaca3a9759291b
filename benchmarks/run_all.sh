#!/usr/bin/env bash
# Rerun every benchmark from the repo root:  bash benchmarks/run_all.sh   (or: make bench)
# Data from DATA_ROOT (default ../shared/data); outputs (models, logs, predictions) under OUT (default
# outputs/bench, git-ignored). The birthplace and sentiment pipelines run side by side, one torch thread
# each (OMP_NUM_THREADS=1) on a 2-core machine; then the headline numbers go to benchmarks/results.json
# and the lead's throughput benchmark runs. CPU-sized defaults: about 60-70 min on a shared 2-core CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_ROOT=${DATA_ROOT:-../shared/data}
export OUT=${OUT:-outputs/bench}
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
rm -f "$OUT/timings.tsv"
start=$SECONDS
bash benchmarks/birthplace.sh > "$OUT/birthplace_run.log" 2>&1 & bp=$!
bash benchmarks/sentiment.sh > "$OUT/sentiment_run.log" 2>&1 & se=$!
status=0
wait $bp || { echo "birthplace.sh failed, see $OUT/birthplace_run.log"; status=1; }
wait $se || { echo "sentiment.sh failed, see $OUT/sentiment_run.log"; status=1; }
echo "quality benchmarks: $((SECONDS - start)) s"
$PY benchmarks/write_results.py --bench_dir "$OUT"
$PY benchmarks/throughput.py
echo "all benchmarks: $((SECONDS - start)) s"
exit $status
