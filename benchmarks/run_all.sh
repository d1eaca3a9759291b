#!/usr/bin/env bash
# Rerun every benchmark from the repo root:  bash benchmarks/run_all.sh   (or: make bench)
# PROFILE=cpu (default): the 2-core CPU profile, at most 60 minutes per task; the birthplace and sentiment
# pipelines run one after the other, each on both cores (OMP_NUM_THREADS=2). PROFILE=gpu: the larger profile in
# bf16, both pipelines side by side (see BENCHMARKS.md for running it on a GPU machine), then the throughput
# benchmark's model FLOP utilisation.
# Data from DATA_ROOT (default ../shared/data); outputs (models, logs, predictions) under OUT (default
# outputs/bench, git-ignored). The headline numbers go to benchmarks/results.json and the headline test
# predictions to benchmarks/predictions/.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_ROOT=${DATA_ROOT:-../shared/data}
export OUT=${OUT:-outputs/bench}
export PROFILE=${PROFILE:-cpu}
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
rm -f "$OUT/timings.tsv"
start=$SECONDS
echo "profile $PROFILE, started $(date -u +%FT%TZ), outputs in $OUT"
pipeline() {  # run benchmarks/NAME.sh with its log in $OUT/NAME_run.log
    bash "benchmarks/$1.sh" > "$OUT/$1_run.log" 2>&1 || { echo "$1.sh failed, see $OUT/$1_run.log"; return 1; }
}
status=0
if [ "$PROFILE" = gpu ]; then  # the GPU machine has cores to spare: both pipelines side by side
    pipeline birthplace & bp=$!
    pipeline sentiment & se=$!
    wait $bp || status=1
    wait $se || status=1
else  # one pipeline at a time, each on both cores (1.5-1.9x the speed of one core)
    OMP_NUM_THREADS=2 pipeline birthplace || status=1
    echo "birthplace: $((SECONDS - start)) s"
    OMP_NUM_THREADS=2 pipeline sentiment || status=1
fi
grep -h "Correct:\|Completed" "$OUT/birthplace_run.log" || true
echo "quality benchmarks: $((SECONDS - start)) s"
$PY benchmarks/write_results.py --bench_dir "$OUT" --profile "$PROFILE"
if [ "$PROFILE" = gpu ]; then
    $PY benchmarks/throughput.py --device cuda --dtype bf16 --batch_size 64
else
    $PY benchmarks/throughput.py --threads 1 --generation_repeats 2
fi
echo "all benchmarks: $((SECONDS - start)) s"
exit $status
