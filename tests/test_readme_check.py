"""`make readme-check` (docs/check_readme.py): its plan is README's commands as written, step counts shrunk and
nothing else; the Python block runs from the root and from another folder; the app serves the model folders the
commands made; a failed or slow step stops the check, named by its README line. (The check itself, minutes of real
runs, is `make readme-check`.)"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def check_readme():
    spec = importlib.util.spec_from_file_location("check_readme", REPO_ROOT / "docs" / "check_readme.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def readme() -> str:
    return (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _readme_commands(readme: str) -> list[str]:
    """Every command of README's bash blocks, continuations joined, comments dropped."""
    blocks = re.findall(r"^```bash\n(.*?)^```", readme, re.S | re.M)
    joined = "\n".join(blocks).replace("\\\n", " ")
    return [" ".join(line.split()) for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def test_the_plan_runs_every_readme_command_as_written_but_for_its_steps(check_readme, readme: str) -> None:
    steps = check_readme.plan(readme)
    commands = [" ".join(step.text.split()) for step in steps if step.kind in ("bash", "skipped")]
    assert len(commands) == len(_readme_commands(readme))
    for written, run in zip(_readme_commands(readme), commands, strict=True):
        if run.startswith("make "):
            continue
        trained = re.search(r"birthplace\.py (pretrain|finetune)|pretrain\.py|finetune_sentiment\.py", written)
        assert run == (f"{written} --max_steps 2" if trained else written)
    assert [step.text.split()[0] for step in steps if step.kind == "skipped"] == ["make", "make"]
    # Each line named is the README line the command starts on.
    lines = readme.splitlines()
    for step in steps:
        if step.kind in ("bash", "skipped"):
            assert lines[step.line - 1].strip().startswith(step.text.split()[0]), step


def test_the_python_block_runs_from_the_root_and_from_elsewhere_then_the_app(check_readme, readme: str) -> None:
    steps = check_readme.plan(readme)
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)
    assert [(s.text, s.where) for s in steps if s.kind == "python"] == [
        (block, where) for block in blocks for where in (".", "elsewhere")
    ]
    assert steps[-1].kind == "app"
    # The app is offered every folder a command wrote; it serves those that hold a model.
    for folder in ("runs/bp/nopretrain", "runs/altegrad/lm", "runs/altegrad/pretrained"):
        assert folder in steps[-1].text.split()
    assert [step.kind for step in steps[-3:]] == ["python", "python", "app"]


def test_a_failed_step_stops_the_check_and_names_its_line(check_readme, tmp_path: Path, capfd) -> None:
    Step = check_readme.Step
    steps = [Step("bash", "true", 3), Step("bash", "echo ran; exit 3", 7), Step("bash", "touch never", 9)]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert check_readme.run_plan(steps, tmp_path, elsewhere, {"PATH": "/usr/bin:/bin"}, 60) == 1
    out = capfd.readouterr().out
    assert "ran" in out and not (tmp_path / "never").exists()
    assert out.strip().splitlines()[-1] == "README check: FAILED (exit status 3) at README.md:7: echo ran; exit 3"


def test_a_source_line_stays_in_force_for_later_commands(check_readme, tmp_path: Path) -> None:
    (tmp_path / "env.sh").write_text("export CHECKED=yes\n")
    steps = [check_readme.Step("bash", "source env.sh", 1), check_readme.Step("bash", 'test "$CHECKED" = yes', 2)]
    assert check_readme.run_plan(steps, tmp_path, tmp_path, {"PATH": "/usr/bin:/bin"}, 60) == 0


def test_a_step_past_its_time_is_stopped_with_its_children(check_readme, tmp_path: Path) -> None:
    started = time.monotonic()
    problem = check_readme.run_command(
        ["bash", "-c", f"sleep 60 & echo $! > {tmp_path / 'child'}; wait"], tmp_path, {"PATH": "/usr/bin:/bin"}, 2
    )
    assert problem == "timed out after 2 s" and time.monotonic() - started < 30
    child = Path("/proc", (tmp_path / "child").read_text().strip(), "stat")
    deadline = time.monotonic() + 10  # the signal reaches the sleep as its shell goes; it may take a moment
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(child)  # the sleep went too


def _running(stat: Path) -> bool:
    """Whether the process of /proc/PID/stat runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return stat.read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_page_of_a_server_that_stops_is_named_in_one_line(check_readme) -> None:
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(2)"])
    process.wait()
    with pytest.raises(RuntimeError, match=r"^the app stopped \(exit status 2\) before it served http://127"):
        check_readme.fetch_page("http://127.0.0.1:9/", process, 30)


def test_the_app_serves_one_model_of_each_task_of_a_grids_runs(check_readme, tmp_path: Path) -> None:
    """`--app_runs OUT` (the CI's smoke grid): the first model folder of each task, by path, labelled by it."""
    for folder, task in [
        ("birthplace/b_finetune", "birthplace-qa"),
        ("birthplace/a_finetune", "birthplace-qa"),
        ("birthplace/pretrain", "birthplace-pretraining"),
        ("sentiment/scratch_seed42", "sentiment"),
        ("sentiment/tokenizer", None),  # no model in it
    ]:
        (tmp_path / folder).mkdir(parents=True)
        if task:
            (tmp_path / folder / "model.safetensors").write_bytes(b"")
            (tmp_path / folder / "run_record.json").write_text(f'{{"task": "{task}"}}')
    assert check_readme.one_model_per_task(tmp_path) == [
        f"birthplace/a_finetune={tmp_path / 'birthplace/a_finetune'}",
        f"birthplace/pretrain={tmp_path / 'birthplace/pretrain'}",
        f"sentiment/scratch_seed42={tmp_path / 'sentiment/scratch_seed42'}",
    ]
    steps = check_readme.plan((REPO_ROOT / "README.md").read_text(encoding="utf-8"), tmp_path)
    assert [step.kind for step in steps[-2:]] == ["app", "app"]
    assert steps[-1].text.split()[2:] == check_readme.one_model_per_task(tmp_path)
