#!/usr/bin/env bash
# Bundle what the GPU profile needs on a GPU machine without network, into two git-ignored folders of the repo:
#   .whl/   the wheels that machine lacks (datasets, evaluate and their pure-Python needs; it has torch,
#           transformers, accelerate, tokenizers, pyarrow, pandas, matplotlib)
#   .data/  a copy of ../shared/data (about 54 MB; read there with DATA_ROOT=.data)
# Then, on the GPU machine (carry .whl and .data): `bash dev/gpu_session.sh` installs them, runs the GPU
# profile and packs what comes back. By hand:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD DATA_ROOT=.data PY=python3 PROFILE=gpu bash benchmarks/run_all.sh
# Carry no pyarrow: that machine's own (25.0.1 on 2026-11-26) works with these wheels, while a carried pyarrow 26
# made `datasets` fail to fingerprint a table under its Python 3.12 (PicklingError on MonthDayNano).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA_ROOT=${DATA_ROOT:-../shared/data}
version() { $PY -c "import importlib.metadata as m; print(m.version('$1'))"; }
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
    "datasets==$(version datasets)" "evaluate==$(version evaluate)" "dill==$(version dill)" "multiprocess==$(version multiprocess)"
mkdir -p .data && cp -r "$DATA_ROOT"/. .data/
du -sh .whl .data
