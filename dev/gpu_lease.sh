#!/usr/bin/env bash
# The runs still missing from a lent GPU, in one call of the device tool (600 s at most a call, 900 s of device time
# a session, the machine's start included). Here, first: `bash dev/gpu_bundle.sh` (.whl/ and .data/), then
#   DRYRUN=1 bash dev/gpu_lease.sh          # what it would run, with each part's time limit; runs nothing
# and, with the device tool, carrying .whl and .data, timeout_s 590:
#   bash dev/gpu_lease.sh                   # LIMIT=560 s for all the parts; PARTS to run some of them
#
# The parts, in the issue's order, through the make targets (so that they outlive any rewrite of the runner):
#   cs224n      CS224N's chain in the course's setting: vanilla (the row not yet measured against the course's 10 %)
#               to its end, with London, no pretraining and the synthesizer beside it. Eager on an H100: 469 s for
#               the chain with the synthesizer at batch 256; vanilla at batch 512 in fp32 reached epoch 600 of 650
#               after 240 s. Compiled with CUDA graphs the target is 650 epochs in 240 s.
#   altegrad    the lab's LM (its model, vocabulary 50,001, 6,000 steps of 128 x 128 tokens), then its three rows
#               with 3 seeds each (validation accuracy, test predictions). Eager on an H100 the LM alone reached step
#               5,850 after 530 s; compiled, with CUDA graphs and its loss in chunks, the target is 180 s. The 9
#               finetunings have never run on a GPU.
#               Both courses: `make bench PROFILE=course`, one Snakemake run, every step side by side on the GPU;
#               one of them alone: `make cs224n|altegrad PROFILE=course`.
#   throughput  alone on the GPU once the courses end (or are stopped THROUGHPUT_S seconds before LIMIT): the base
#               preset's MFU, written as `throughput_gpu_base` of results.json (the 2026-11-26 H200 call measured
#               40.8 % at batch 32 with every dropout 0, the settings used here). Its time was never recorded alone:
#               THROUGHPUT_S (150 s) is a budget, not a measurement.
#   curve       only when CURVE_MIN_S (300 s) are left: the label curve at the gpu_large size, `make bench
#               PROFILE=gpu_large PIPELINES="sentiment sentiment_curve"` (that profile's sentiment pipeline alone took
#               489 s on an H200, so in practice a call of its own: PARTS=curve LIMIT=560). The plan draws one
#               subset per finetuning seed (3 draws); make has no switch for fewer.
#
# What comes back in the device's $OUT, without weights: gpu.txt, hardware.txt, one log per part (<part>.txt),
# lease.txt (each part's exit status and time), throughput.json (results.json's throughput entry) and lease.tgz (the
# courses' and the curve's run folders: logs, metrics, predictions, timings). Then, here:
#   mkdir -p outputs/lease && tar xzf lease.tgz -C outputs/lease && HW="$(cat hardware.txt)"
#   python benchmarks/write_results.py --profile course --tasks birthplace sentiment --bench_dir outputs/lease/outputs/lease/course --hardware "$HW"
#   python benchmarks/throughput.py --merge_results throughput.json --results_json benchmarks/results.json
#   python benchmarks/write_results.py --profile gpu_large --tasks sentiment_curve --bench_dir outputs/lease/outputs/lease/curve --hardware "$HW"
#   python benchmarks/write_results.py --report
# (a part stopped by its limit: `--stopped STEP=TEXT` with its last logged step instead of its rows; dev/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
[[ "${1:-}" == "--dry-run" ]] && DRYRUN=1
DRYRUN=${DRYRUN:-}
LIMIT=${LIMIT:-560}
THROUGHPUT_S=${THROUGHPUT_S:-150}
CURVE_MIN_S=${CURVE_MIN_S:-300}
PARTS=" ${PARTS:-cs224n altegrad throughput curve} "
PY=${PY:-python3}
SITE=${SITE:-/tmp/site}  # where the carried wheels go (and snakemake's script, when the bundle carries it)
export DATA_ROOT=${DATA_ROOT:-.data} PY PYTHONUNBUFFERED=1 PYTHONPATH=$SITE:$PWD
if [[ -n "$DRYRUN" ]]; then
    RETURN=${OUT:-outputs/lease_dry_run}
else
    RETURN=${OUT:?"run this on the device machine (its tool sets OUT, the folder that comes back), or DRYRUN=1"}
fi
unset OUT  # the runner reads OUT as its own output folder: each part names its own below
RUNS=${RUNS:-outputs/lease}  # the parts' run folders (git-ignored), packed into lease.tgz
# The clock, in seconds. A dry run's stands still: it counts only the limits it assigns (each part's limit as spent),
# so that it prints the limits a real run would give however long it takes itself. LEASE_CLOCK names a file holding
# the time instead (tests play a run with it: a stand-in part moves it on).
clock() {
    if [[ -n "$DRYRUN" ]]; then
        echo 0
    elif [[ -n "${LEASE_CLOCK:-}" ]]; then
        cat "$LEASE_CLOCK"
    else
        date +%s
    fi
}
start=$(clock)
dry_spent=0
left() { echo $((start + LIMIT - dry_spent - $(clock))); }
has() { [[ "$PARTS" == *" $1 "* ]]; }

# `make TARGET PROFILE=...` without the install step ($(STAMP) is taken as done: the GPU machine has no network),
# with this machine's python and the part's own output folder.
course_make() {  # TARGET PROFILE OUT [make variables...]
    local target=$1 profile=$2 out=$3
    shift 3
    echo make -o "$SITE/.installed" "$target" VENV="$SITE" PY="$PY" PROFILE="$profile" OUT="$out" \
        DATA_ROOT="$DATA_ROOT" "$@"
}

note() {  # a line for the log that comes back (printed only in a dry run)
    if [[ -n "$DRYRUN" ]]; then echo "$1"; else echo "$1" | tee -a "$RETURN/lease.txt"; fi
}

# Runs a part's command under `timeout SECONDS` with its output in $RETURN/<part>.txt; in a dry run, prints it.
run_part() {  # PART SECONDS COMMAND...
    local part=$1 seconds=$2
    shift 2
    if ((seconds < 1)); then  # `timeout 0` would mean no limit at all
        note "$part: not started, no time left"
        return 0
    fi
    if [[ -n "$DRYRUN" ]]; then
        echo "[$part] timeout $seconds $(printf '%q ' "$@")"
        return 0
    fi
    local began status
    began=$(clock)
    timeout "$seconds" "$@" > "$RETURN/$part.txt" 2>&1
    status=$?
    note "$part: exit status $status (124: stopped at its limit of $seconds s), $(($(clock) - began)) s"
    return "$status"
}

if [[ -z "$DRYRUN" ]]; then
    mkdir -p "$SITE" "$RUNS"
    if compgen -G ".whl/*.whl" > /dev/null; then
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl || exit 1
    fi
    # The Makefile runs $(VENV)/bin/snakemake: here, Snakemake's greedy scheduler (no PuLP is carried).
    mkdir -p "$SITE/bin"
    printf '#!/usr/bin/env bash\nexec %q -m snakemake --scheduler greedy "$@"\n' "$PY" > "$SITE/bin/snakemake"
    chmod +x "$SITE/bin/snakemake"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$RETURN/gpu.txt" 2>&1
    echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) CPU cores" > "$RETURN/hardware.txt"
fi

# 1 and 2: both courses side by side (one Snakemake run of the course profile), stopped in time to leave the
# throughput its slot; or one course alone.
reserve=0
has throughput && reserve=$THROUGHPUT_S
courses_s=$(($(left) - reserve))
courses=()
if has cs224n && has altegrad; then
    courses=(courses "$(course_make bench course "$RUNS/course")")
elif has cs224n || has altegrad; then
    course=$(has cs224n && echo cs224n || echo altegrad)
    courses=("$course" "$(course_make "$course" course "$RUNS/course")")
fi
if ((${#courses[@]})); then
    # shellcheck disable=SC2086  # the make command's words
    run_part "${courses[0]}" "$courses_s" ${courses[1]}
    [[ -n "$DRYRUN" ]] && dry_spent=$((courses_s > 0 ? courses_s : 0))
fi

# 3: the base preset's MFU, alone on the GPU (the settings of the 40.8 % measurement). No memory part: it would
# compile both compiled contenders a second time.
if has throughput; then
    run_part throughput "$(left)" "$PY" benchmarks/throughput.py --device cuda --dtype bf16 --preset base \
        --contenders ours_sdpa gpt2 --compile --dropout 0 --batch_size 32 --skip memory \
        --results_json "$RETURN/throughput.json"
    [[ -n "$DRYRUN" ]] && dry_spent=$((dry_spent + ($(left) < THROUGHPUT_S ? $(left) : THROUGHPUT_S)))
fi

# 4: the label curve at the gpu_large size, when enough time is left.
if has curve; then
    if [[ $(left) -ge $CURVE_MIN_S ]]; then
        # shellcheck disable=SC2046
        run_part curve "$(left)" $(course_make bench gpu_large "$RUNS/curve") PIPELINES="sentiment sentiment_curve"
    else
        note "curve: not started, $(left) s left (it starts with CURVE_MIN_S=$CURVE_MIN_S): PARTS=curve in a call of its own"
    fi
fi

if [[ -n "$DRYRUN" ]]; then
    planned="LIMIT=$LIMIT s"
    ((${#courses[@]} && courses_s > 0)) && planned+=", the courses for $courses_s s, then the rest in turn"
    echo "dry run: nothing ran; $planned"
    exit 0
fi
records=()  # Snakemake's records too, so that a later call can resume (dev/README.md)
[[ -d .snakemake/metadata ]] && records=(.snakemake/metadata)
tar czf "$RETURN/lease.tgz" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='*/data' "$RUNS" \
    "${records[@]}"
note "lease: $(($(clock) - start)) s in all"
ls -l "$RETURN"
