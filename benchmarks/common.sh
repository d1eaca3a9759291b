# Sourced by the benchmark scripts: paths, offline mode, and a `step` helper that times each command.
set -euo pipefail
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
DATA_ROOT=${DATA_ROOT:-../shared/data}
OUT=${OUT:-outputs/bench}
PY=${PY:-.venv/bin/python}
NICE=${NICE:-nice -n 5}
PROFILE=${PROFILE:-cpu}   # cpu: the 60-minute 2-core profile (BENCHMARKS.md); gpu: the larger one
# bf16 on a GPU, fp32 on the CPU; the GPU profile's figures sit beside the CPU profile's (*_gpu.png).
if [ "$PROFILE" = gpu ]; then
    DEVICE_ARGS=(--bf16 true); FIGURE_SUFFIX=_gpu
else
    DEVICE_ARGS=(--use_cpu true); FIGURE_SUFFIX=
fi
# Torch threads per process; run_all.sh gives each CPU pipeline both cores.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$OUT"
TIMINGS="$OUT/timings.tsv"
COMMON_ARGS=(--report_to none --save_strategy no --dataloader_num_workers 0 --disable_tqdm true --seed 42 "${DEVICE_ARGS[@]}")

# step NAME CMD...: run CMD, log it, append "NAME<TAB>seconds<TAB>command" to $TIMINGS.
step() {
    local name=$1; shift
    local start=$SECONDS
    echo "=== [$(date -u +%H:%M:%S)] $name: $*"
    $NICE "$@" > "$OUT/log_$name.txt" 2>&1 || { echo "FAILED: $name (see $OUT/log_$name.txt)"; tail -20 "$OUT/log_$name.txt"; return 1; }
    local took=$((SECONDS - start))
    printf '%s\t%s\t%s\n' "$name" "$took" "$*" >> "$TIMINGS"
    grep -h "Correct:\|^Completed\|PLATEAU" "$OUT/log_$name.txt" || true
    echo "    done in ${took}s"
}
