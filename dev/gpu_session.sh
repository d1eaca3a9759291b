#!/usr/bin/env bash
# The GPU profile in one call of a lent GPU machine (the device tool; no network there). Here, first:
#   bash dev/gpu_bundle.sh                 # .whl/ and .data/, both git-ignored
# then, with the device tool, carrying .whl and .data, with a timeout that leaves time for a rerun:
#   bash dev/gpu_session.sh                # PIPELINES="birthplace" for one; LIMIT: seconds for the pipelines (570)
# PROFILE=course PIPELINES="birthplace sentiment" runs both courses' own settings side by side (8 min for CS224N's on an
# H100; the lab's LM alone needs over 9); SNAKEMAKE_ARGS passes more Snakemake flags, e.g. with a returned bench
# folder unpacked in place: SNAKEMAKE_ARGS="--rerun-triggers input params --forcerun bp_vanilla_pretrain" reruns that
# step and what follows it, and keeps the others (dev/README.md).
# LEVER_PROFILE=gpu_large also runs that profile's sentiment pipeline beside, into outputs/bench_lever, for at most
# LEVER_LIMIT seconds (540): one GPU runs both, each step being launch-bound. Both in one call did not fit on
# 2026-11-26 (BENCHMARKS.md): the lever alone is `PROFILE=gpu_large PIPELINES="sentiment sentiment_lab"`, then here
# `write_results.py --profile gpu_large --tasks sentiment --bench_dir <unpacked outputs/bench>`: 489 s on an H200 on
# 2026-11-27 (about 520 s of device time with the start), the lab's rows beside LP-FT.
# It installs the carried wheels (datasets, evaluate, the workflow engine) beside the machine's own torch and
# transformers, runs the GPU profile's pipelines on Snakemake (benchmarks/Snakefile) into outputs/bench under the
# time limit (after a whole run it also writes results.json and runs throughput.py), and puts in the device's $OUT
# what comes back, without weights: gpu.txt, run.txt (Snakemake's output), results.json, and bench.tgz (the run
# folder's logs, step records, reports, predictions and figures, and Snakemake's metadata). Unpack it here with
# `tar xzf bench.tgz -C outputs/gpu_DATE`, then read BENCHMARKS.md's GPU sections.
set -uo pipefail
cd "$(dirname "$0")/.."
RETURN=${OUT:?"run this on the device machine: its tool sets OUT, the folder that comes back"}
unset OUT  # the Makefile's name for the run's folder (outputs/bench here)
export PYTHONPATH=/tmp/site:$PWD DATA_ROOT=${DATA_ROOT:-.data} PY=${PY:-python3} PYTHONUNBUFFERED=1
# No PuLP is carried (dev/gpu_bundle.sh): Snakemake schedules greedily.
snakemake() { $PY -m snakemake -s benchmarks/Snakefile --cores all --scheduler greedy --show-failed-logs "$@"; }
if compgen -G ".whl/*.whl" > /dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$RETURN/gpu.txt" 2>&1
pipelines=${PIPELINES:-birthplace sentiment sentiment_lab}
config=(python="$PY" data="$DATA_ROOT" command="bash dev/gpu_session.sh PROFILE=${PROFILE:-gpu} PIPELINES=$pipelines")
start=$(date +%s)
lever=
if [[ -n "${LEVER_PROFILE:-}" ]]; then  # its own folder, and its own Snakemake state (another working folder's lock)
    timeout "${LEVER_LIMIT:-540}" $PY -m snakemake -s benchmarks/Snakefile --cores all --scheduler greedy --nolock \
        --config profile="$LEVER_PROFILE" pipelines=sentiment out=outputs/bench_lever python="$PY" data="$DATA_ROOT" \
        > "$RETURN/lever.txt" 2>&1 &
    lever=$!
fi
# timeout signals its whole process group: no step outlives the limit.
# shellcheck disable=SC2086  # SNAKEMAKE_ARGS is a list of flags
timeout "${LIMIT:-570}" snakemake ${SNAKEMAKE_ARGS:-} --config profile="${PROFILE:-gpu}" pipelines="$pipelines" "${config[@]}" 2>&1 |
    tee "$RETURN/run.txt"
status=${PIPESTATUS[0]}
echo "snakemake exit status $status (124: stopped at the limit), $(( $(date +%s) - start )) s" | tee -a "$RETURN/run.txt"
if [[ -n "$lever" ]]; then
    wait "$lever"
    echo "lever snakemake exit status $?, $(( $(date +%s) - start )) s" | tee -a "$RETURN/lever.txt"
fi
cp benchmarks/results.json "$RETURN/"
shopt -s nullglob
tar czf "$RETURN/bench.tgz" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='outputs/bench*/data' \
    outputs/bench outputs/bench_lever* benchmarks/predictions/gpu .snakemake/metadata
ls -l "$RETURN"
exit "$status"
