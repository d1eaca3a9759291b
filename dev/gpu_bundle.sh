#!/usr/bin/env bash
# Bundle what the GPU profile needs on a GPU machine without network, into two git-ignored folders of the repo:
#   .whl/   the wheels that machine lacks: datasets, evaluate and their pure-Python needs (it has torch,
#           transformers, accelerate, tokenizers, pyarrow, pandas, matplotlib), and the workflow engine (snakemake
#           and what it needs beyond that stack; no PuLP: its 16 MB solver would not fit the carry, and Snakemake
#           runs without it, scheduling greedily)
#   .data/  a copy of ../shared/data (about 54 MB; read there with DATA_ROOT=.data)
# Then, on the GPU machine (carry .whl and .data, 64 MiB in all): `bash dev/gpu_session.sh` installs them, runs the
# GPU profile and packs what comes back. By hand:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD python3 -m snakemake -s benchmarks/Snakefile --cores all --scheduler greedy \
#       --config profile=gpu data=.data python=python3
# Carry no pyarrow: that machine's own (25.0.1 on 2026-11-26) works with these wheels, while a carried pyarrow 26
# made `datasets` fail to fingerprint a table under its Python 3.12 (PicklingError on MonthDayNano).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA_ROOT=${DATA_ROOT:-../shared/data}
version() { $PY -c "import importlib.metadata as m; print(m.version('$1'))"; }
wheels=(--no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl)
$PY -m pip download -q "${wheels[@]}" \
    "datasets==$(version datasets)" "evaluate==$(version evaluate)" "dill==$(version dill)" "multiprocess==$(version multiprocess)"
# snakemake's needs, less those of the machine's own stack (transformers, accelerate, matplotlib, pandas) and PuLP
engine=$($PY - <<'PYTHON'
import importlib.metadata as metadata
import re

def closure(names):
    seen, todo = set(), list(names)
    while todo:
        name = re.split(r"[\s<>=!~;\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in seen:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo += [r for r in requires if "extra ==" not in r]
    return seen

have = closure(["transformers", "accelerate", "matplotlib", "pandas", "torch"])
print(" ".join(f"{n}=={metadata.version(n)}" for n in sorted(closure(["snakemake"]) - have - {"pulp"})))
PYTHON
)
for requirement in $engine; do  # a package with no wheel (connection_pool) is built here: pure Python
    $PY -m pip download -q "${wheels[@]}" "$requirement" 2>/dev/null || $PY -m pip wheel -q --no-deps -w .whl "$requirement"
done
mkdir -p .data && cp -r "$DATA_ROOT"/. .data/
du -sh .whl .data
