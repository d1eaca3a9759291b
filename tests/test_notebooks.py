"""The course notebooks in `examples/`: each teaches its course's own setting from the course's config files, runs to
its end with `SMOKE=true` from `examples/` and from the repository root with its defaults (the real data at
../shared/data, outputs under the ignored runs/), ends with the course's table beside its numbers and the recorded
full setting's, and leaves the checkout's `git status` as it found it; the committed files carry no outputs."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
# notebook: (its course's config folder, its data folders, what its run must print: its steps' results, the table)
NOTEBOOKS = {
    "cs224n_birthplace.ipynb": (
        "configs/cs224n",
        ("birthplace",),
        (
            "pretrain_vanilla.json (configs/cs224n/course-cut), changed for this notebook: num_train_epochs",
            "pretrained: training loss",
            "Correct: ",
            "dev accuracy: finetuned",
            "| vanilla, pretrained, then finetuned | ≥ 10 % (the bar) |",
            "The course's setting in full, on a GPU (make cs224n PROFILE=course): ",
        ),
    ),
    "altegrad_sentiment.ipynb": (
        "configs/altegrad",
        ("cls-books", "french-corpus"),
        (
            "lm.json (configs/altegrad/course-cut), changed for this notebook: max_steps 80 → 2",
            "the rows: classifier pooling 'last', batch 8, learning rate 0.0001 (constant)",
            "language model: 21,018,401 parameters, validation perplexity",
            "scratch: validation accuracy",
            "pretrained: validation accuracy",
            "frozen: validation accuracy",
            "| from scratch | 65 % |",
            "The lab's setting cut to fewer LM steps and epochs, on 2 CPU cores (make altegrad PROFILE=course-cut",
        ),
    ),
}


def _code(name: str) -> list[str]:
    notebook = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def _setup(name: str, monkeypatch, cwd: Path, **environment: str) -> dict:
    """The notebook's first cell (where things are, and the switches), run here from `cwd` with `environment`."""
    for key in ("SMOKE", "DATA_DIR", "OUTPUT_DIR", "JPY_SESSION_NAME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the cell puts the checkout first
    namespace: dict = {}
    exec(_code(name)[0], namespace)
    return namespace


def test_every_notebook_is_tested() -> None:
    assert sorted(path.name for path in EXAMPLES.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_committed_notebooks_have_no_outputs(name) -> None:
    notebook = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"{name}: a cell keeps its outputs"


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebooks_use_their_courses_config_files(name) -> None:
    """Every recipe the notebook runs (the recipes' `pretrain.main`, `finetune_sentiment.main`, `birthplace.main`)
    reads a config file of the course's folder through `config(...)`, and no cell types a learning rate."""
    folder = NOTEBOOKS[name][0].split("/")[1]
    code = "\n".join(_code(name))
    assert f'CONFIGS = ROOT / "configs" / "{folder}" / PROFILE' in code
    runs = [
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "main"
    ]
    assert len(runs) >= 2
    for run in runs:
        calls = [n for n in ast.walk(run) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "config"]
        assert len(calls) == 1, ast.unparse(run)
    assert "learning_rate" not in code.replace("['learning_rate']", "")
    assert "<you>" not in (EXAMPLES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_paths_are_the_repository_roots_wherever_the_notebook_runs(name, monkeypatch, tmp_path) -> None:
    """From examples/ and from the root the same folders; SMOKE is on for 1, true or yes in any case, off for 0,
    false, no or nothing, and any other value is an error that names it."""
    places = {}
    for cwd in (EXAMPLES, REPO_ROOT):
        setup = _setup(name, monkeypatch, cwd)
        places[cwd] = (setup["ROOT"], setup["DATA"].resolve(), setup["WORK"])
    assert places[EXAMPLES] == places[REPO_ROOT]
    root, data, work = places[EXAMPLES]
    assert root == REPO_ROOT and data == (REPO_ROOT / "../shared/data").resolve()
    assert work.relative_to(REPO_ROOT).parts[0] == "runs"
    for value, smoke in {
        "1": True,
        "true": True,
        "TRUE": True,
        "Yes": True,
        "0": False,
        "false": False,
        "": False,
    }.items():
        assert _setup(name, monkeypatch, EXAMPLES, SMOKE=value)["SMOKE"] is smoke, value
    with pytest.raises(ValueError, match=r"^SMOKE='on': expected 1, true or yes"):
        _setup(name, monkeypatch, EXAMPLES, SMOKE="on")
    with pytest.raises(FileNotFoundError, match="no hf-models checkout at"):
        _setup(name, monkeypatch, tmp_path)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_a_missing_data_folder_is_named_as_given(name, monkeypatch) -> None:
    namespace = _setup(name, monkeypatch, EXAMPLES, DATA_DIR="no/such/data")
    data_cell = next(code for code in _code(name) if "no such folder" in code)
    first = NOTEBOOKS[name][1][0]
    with pytest.raises(FileNotFoundError, match=rf"^no/such/data/{first}: no such folder \(DATA_DIR='no/such/data'"):
        exec(data_cell, namespace)


def _tree() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_only_the_first_cell_reads_where_the_notebook_runs(name) -> None:
    """The run below starts each notebook from one place (examples/ or the root): what lets it stand for the other
    is that no later cell reads the working folder: every path is built on ROOT, DATA, WORK or CONFIGS."""
    for number, code in enumerate(_code(name)[1:], start=1):
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Attribute) and node.attr in {"chdir", "getcwd", "cwd"}:
                raise AssertionError(f"{name}, cell {number}: {ast.unparse(node)} reads the working folder")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in {"Path", "open"} and node.args:
                first = node.args[0]
                assert not isinstance(first, ast.Constant), f"{name}, cell {number}: {ast.unparse(node)}"


@pytest.mark.slow
# Each notebook runs once (a run is tens of seconds of CPU), from one of the two places: the first cell finds the same
# folders from both (test_paths_are_the_repository_roots_wherever_the_notebook_runs), no later cell reads the working
# folder (test_only_the_first_cell_reads_where_the_notebook_runs), and each place is where one notebook runs.
@pytest.mark.parametrize(
    ("name", "where"), [("altegrad_sentiment.ipynb", "root"), ("cs224n_birthplace.ipynb", "examples")]
)
def test_notebook_runs_to_the_end_with_smoke(name, where, shared_data_dir, monkeypatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # The kernel is a child process: this interpreter (`python` on the PATH), the smoke switch, one thread (the
    # small steps gain nothing from more), offline; the data and the outputs are the notebook's defaults.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for key in ("DATA_DIR", "OUTPUT_DIR", "PYTHONPATH", "JPY_SESSION_NAME"):
        monkeypatch.delenv(key, raising=False)  # the notebook finds its checkout itself
    monkeypatch.setenv("SMOKE", "true")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    tree = _tree()
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    cwd = EXAMPLES if where == "examples" else REPO_ROOT
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()  # a cell that raises fails the test with its traceback

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code), "not every cell ran"
    printed = "".join(
        output.get("text", "") for cell in code for output in cell.outputs if output.output_type == "stream"
    )
    for line in NOTEBOOKS[name][2]:
        assert line in printed, f"{name} did not print {line!r}:\n{printed[-3000:]}"
    table = "".join(output.get("text", "") for output in code[-1].outputs if output.output_type == "stream")
    assert table.startswith("| |"), "the last cell prints the course's table"
    assert _tree() == tree, "the notebook changed the checkout's git status"
    assert (REPO_ROOT / "runs" / Path(name).stem / "configs").is_dir()  # its outputs: under the ignored runs/
