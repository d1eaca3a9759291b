"""The course notebooks in `examples/`: each runs to its end with `SMOKE=1` (every step shrunk, offline, on the real
data at ../shared/data) and prints its results, and the committed files carry no outputs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
# notebook: what its run must print (the results of its last steps)
NOTEBOOKS = {
    "cs224n_birthplace.ipynb": ("pretrained: final training loss", "Correct: ", "dev accuracy: finetuned"),
    "altegrad_sentiment.ipynb": (
        "language model: validation perplexity",
        "scratch: validation accuracy",
        "pretrained: validation accuracy",
        "frozen: validation accuracy",
    ),
}


def test_every_notebook_is_tested() -> None:
    assert sorted(path.name for path in EXAMPLES.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_committed_notebooks_have_no_outputs(name) -> None:
    notebook = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"{name}: a cell keeps its outputs"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs_to_the_end_with_smoke(name, shared_data_dir, tmp_path, monkeypatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # The kernel is a child process: this interpreter (`python` on the PATH), this checkout's package, the smoke
    # switch, the data, a scratch folder, one thread (the tiny models gain nothing from more), offline.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("SMOKE", "1")
    monkeypatch.setenv("DATA_DIR", str(shared_data_dir))
    monkeypatch.setenv("OUTPUT_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO_ROOT)}}
    )
    client.execute()  # a cell that raises fails the test with its traceback

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code), "not every cell ran"
    printed = "".join(
        output.get("text", "") for cell in code for output in cell.outputs if output.output_type == "stream"
    )
    for line in NOTEBOOKS[name]:
        assert line in printed, f"{name} did not print {line!r}:\n{printed[-3000:]}"
    images = [o for o in code[-1].outputs if "image/png" in o.get("data", {})]
    assert images, f"{name}: its last cell draws no picture"
