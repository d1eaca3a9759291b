#!/usr/bin/env bash
# The GPU profile in one call of a lent GPU machine (the device tool; no network there). Here, first:
#   bash dev/gpu_bundle.sh                 # .whl/ and .data/, both git-ignored
# then, with the device tool, carrying .whl and .data, with a timeout that leaves time for a rerun:
#   bash dev/gpu_session.sh                # PIPELINES="birthplace" for one; LIMIT: seconds for the pipelines (570)
# PROFILE=course PIPELINES="birthplace sentiment" runs both courses' own settings side by side (8 min for CS224N's on an
# H100; the lab's LM alone needs over 9); PLAN_ARGS passes more plan.py flags, e.g. with a returned bench folder
# copied to outputs/bench: PLAN_ARGS="--resume --rerun bp_vanilla_*" reruns those steps and keeps the others.
# LEVER_PROFILE=gpu_large also runs that profile's sentiment pipeline beside, into outputs/bench_lever, for at most
# LEVER_LIMIT seconds (540): one GPU runs both, each step being launch-bound. Both in one call did not fit on
# 2026-11-26 (BENCHMARKS.md): the lever alone is `PROFILE=gpu_large PIPELINES="sentiment sentiment_lab"`, then here
# `write_results.py --profile gpu_large --tasks sentiment --bench_dir <unpacked outputs/bench>`: 489 s on an H200 on
# 2026-11-27 (about 520 s of device time with the start), the lab's rows beside LP-FT.
# It installs the carried wheels beside the machine's own torch and transformers, runs the GPU profile's pipelines
# into outputs/bench under the time limit (after both, plan.py also writes results.json and runs throughput.py),
# and puts in the device's $OUT what comes back, without weights: gpu.txt, run.txt (the plan's output),
# results.json, and bench.tgz (the run folder's logs, reports, predictions and timings, the GPU predictions and
# figures). Unpack it here with `tar xzf bench.tgz -C outputs/gpu_DATE`, then read BENCHMARKS.md's GPU sections.
set -uo pipefail
cd "$(dirname "$0")/.."
RETURN=${OUT:?"run this on the device machine: its tool sets OUT, the folder that comes back"}
unset OUT  # plan.py reads OUT as its own output folder (outputs/bench by default)
export PYTHONPATH=/tmp/site:$PWD DATA_ROOT=${DATA_ROOT:-.data} PY=${PY:-python3} PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" > /dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$RETURN/gpu.txt" 2>&1
read -r -a pipelines <<< "${PIPELINES:-birthplace sentiment sentiment_lab}"
start=$(date +%s)
lever=
if [[ -n "${LEVER_PROFILE:-}" ]]; then
    OUT=outputs/bench_lever timeout "${LEVER_LIMIT:-540}" $PY benchmarks/plan.py run --profile "$LEVER_PROFILE" \
        --pipeline sentiment > "$RETURN/lever.txt" 2>&1 &
    lever=$!
fi
# timeout signals the plan's whole process group: no step outlives the limit.
timeout "${LIMIT:-570}" $PY benchmarks/plan.py run --profile "${PROFILE:-gpu}" --pipeline "${pipelines[@]}" ${PLAN_ARGS:-} 2>&1 |
    tee "$RETURN/run.txt"
status=${PIPESTATUS[0]}
echo "plan.py exit status $status (124: stopped at the limit), $(( $(date +%s) - start )) s" | tee -a "$RETURN/run.txt"
if [[ -n "$lever" ]]; then
    wait "$lever"
    echo "lever plan.py exit status $?, $(( $(date +%s) - start )) s" | tee -a "$RETURN/lever.txt"
fi
cp benchmarks/results.json "$RETURN/"
shopt -s nullglob
tar czf "$RETURN/bench.tgz" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='outputs/bench*/data' \
    outputs/bench outputs/bench_lever* benchmarks/predictions/gpu benchmarks/figures/*_"${PROFILE:-gpu}"*.png
ls -l "$RETURN"
exit "$status"
