# Two commands on a fresh machine: `make test` and `make demo`. Both create .venv when it is missing, install torch
# first, then the project.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_EVALUATE_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
DATA_DIR ?=
# make app-test: SCREENSHOTS=docs/images to regenerate the app's screenshots there
# make bench / cs224n / altegrad run the benchmark grid on Snakemake (benchmarks/Snakefile; docs/workflow.md).
# PROFILE: a file of benchmarks/profiles/: cpu|gpu|gpu_large (the benchmark's), course (the courses' own settings; a
# GPU machine), course-cut (the same settings, fewer epochs and steps: the 2-core CPU hour; docs/courses.md).
# smoke: every pipeline of cpu and each course's chain at tiny sizes, in minutes; its numbers mean nothing, its
# results.json and figures stay in OUT (CI runs it: `make bench PROFILE=smoke OUT=...`).
# make bench: PIPELINES="birthplace sentiment sentiment_lab sentiment_curve" (default: all). DRYRUN=1 lists the steps
# that would run and runs none. A step reruns, with the steps after it, when its config file, script or command changed.
# OUT (outputs/bench): the run's folder, its figures in OUT/figures; DATA_ROOT (../shared/data); CORES (all).
# SNAKEMAKE_ARGS: Snakemake's own arguments, passed as given (a target `OUT/steps/STEP.done`, `--until STEP`,
# `--forcerun STEP`). UNLOCK=1: first remove the lock a killed run left (Snakemake's --unlock: every lock of this
# checkout, so only with no other run going), then run: after a `kill -9`, the same command with UNLOCK=1 resumes the
# run, its finished steps kept.
PROFILE ?= cpu
PIPELINES ?=
OUT ?= outputs/bench
DATA_ROOT ?= ../shared/data
CORES ?= all
SNAKEMAKE_ARGS ?=
UNLOCK ?=
# A switch is 1, true or yes, or 0, false, no or nothing; another value is refused before anything runs.
SWITCH_ON := 1 true yes
SWITCH_OFF := 0 false no
comma := ,
check_switch = $(if $(filter-out $(SWITCH_ON) $(SWITCH_OFF),$($(1))),echo 'error: $(1)=$($(1)): give 1$(comma) true or yes$(comma) or 0$(comma) false or no' >&2; exit 2;)
SNAKEMAKE_CONFIG = --config profile=$(PROFILE) out=$(OUT) data=$(DATA_ROOT) python=$(PY)
SNAKEMAKE = $(call check_switch,DRYRUN) $(call check_switch,UNLOCK) \
	$(if $(filter $(SWITCH_ON),$(UNLOCK)),$(VENV)/bin/snakemake -s benchmarks/Snakefile --unlock $(SNAKEMAKE_CONFIG) && )\
	$(VENV)/bin/snakemake -s benchmarks/Snakefile --cores $(CORES) --show-failed-logs --rerun-incomplete \
	$(if $(filter $(SWITCH_ON),$(DRYRUN)),--dry-run --quiet rules) $(SNAKEMAKE_ARGS) $(SNAKEMAKE_CONFIG)
# torch, installed before the project. On a machine without `nvidia-smi` the CPU build: PyTorch's CPU index is added,
# whose `2.13.0+cpu` wheel pip prefers to the plain one (PyPI's Linux wheel is the CUDA build, GBs of libraries).
# Where that index cannot be reached pip says so and takes what the other indexes have (a local CPU wheel, or PyPI's).
# On a GPU machine the index's default build. TORCH_INDEX_URL= (empty) keeps pip's own indexes alone.
TORCH_VERSION ?= 2.13.0
TORCH_INDEX_URL ?= $(if $(shell command -v nvidia-smi 2>/dev/null),,https://download.pytorch.org/whl/cpu)

.PHONY: install test lint docs docs-check mutation demo tour bench cs224n altegrad app-test readme-check clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==$(TORCH_VERSION) $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL))
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: lint docs-check
	$(PY) -m pytest -n 2 --dist loadfile

# The documents' generated parts (docs/generate.py): the README's and docs' results from benchmarks/results.json,
# BENCHMARKS.md, docs/levers.md, TESTING.md's mutant table. `docs` rewrites what is stale (FIGURES_FROM=OUT with the
# run's PROFILE: and copies the figures that run drew under OUT over the committed ones); `docs-check` changes nothing
# and fails on a stale part, a typed result, a broken link or anchor, or a git ref that does not exist.
FIGURES_FROM ?=
docs: $(STAMP)
	$(PY) docs/generate.py $(if $(FIGURES_FROM),--figures_from $(FIGURES_FROM) --profile $(PROFILE))

docs-check: $(STAMP)
	$(PY) docs/generate.py --check

# Plants each bug of the list one at a time in a temporary copy of the tree and expects the tests to catch it
# (TESTING.md).
mutation: $(STAMP)
	nice -n 5 $(PY) tests/mutation/run_mutations.py

# The app's tests, the browser one included: the app extra, Selenium and (as root, on Debian) Chromium and its
# driver (.ci/install_chromium.sh). The screenshots of the tabs go to a temporary folder; SCREENSHOTS=docs/images
# regenerates the documentation's.
SCREENSHOTS ?=
app-test: $(STAMP)
	$(PY) -m pip install -q -e '.[app,dev]'
	bash .ci/install_chromium.sh || echo "app-test: the browser test will skip"
	$(if $(SCREENSHOTS),APP_SCREENSHOT_DIR=$(SCREENSHOTS) )$(PY) -m pytest -rs tests/test_app.py

demo: $(STAMP)
	$(PY) recipes/demo.py --overwrite_output_dir $(if $(DATA_DIR),--data_dir $(DATA_DIR),)

tour: $(STAMP)
	$(PY) examples/model_tour.py

# Every pipeline of the profile (a whole benchmark run also writes benchmarks/results.json and the throughput rows; a
# smoke run its results.json in OUT, and the course chains in OUT/course).
# The command recorded with the run's time quotes PIPELINES before PROFILE: Snakemake strips a value's end quotes.
bench: $(STAMP)
	$(SNAKEMAKE) pipelines="$(PIPELINES)" command="make bench$(if $(PIPELINES), PIPELINES=\"$(PIPELINES)\") PROFILE=$(PROFILE)"

# One course's whole chain of the profile (config files: configs/<course>/<profile>/), outputs under OUT; at its end
# the course's reported numbers beside ours (benchmarks/course_table.py, also OUT/<course>_table.md) and its figures in
# OUT/figures (`make docs FIGURES_FROM=OUT PROFILE=...` copies them into benchmarks/figures).
cs224n altegrad: $(STAMP)
	$(SNAKEMAKE) course=$@ command="make $@ PROFILE=$(PROFILE)"

# Every command of README.md, run in a fresh clone of HEAD with tiny step counts (docs/check_readme.py; minutes).
readme-check: $(STAMP)
	nice -n 10 $(PY) docs/check_readme.py

clean:
	rm -rf $(VENV) runs outputs .pytest_cache .ruff_cache .snakemake
