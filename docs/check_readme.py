#!/usr/bin/env python
r"""Run every command of README.md in a fresh clone, as written but for its step counts, so that its paths agree,
each command works and nothing reads a folder that no command wrote.

    python docs/check_readme.py                      # the committed HEAD of this checkout
    python docs/check_readme.py --keep               # keep the clone (its path is printed) to look at the runs
    python docs/check_readme.py --print              # the plan: each command as it will run, and stop

In order, from the clone's root:
1. each command of the `bash` blocks, one at a time, with `--max_steps 2` appended to a training command (argparse
   keeps the last value of a flag; nothing else changes). `make` lines are skipped: the CI runs `make test` before
   this check, the test suite runs the demo, and `make` would install into the shared .venv. A `source` line stays
   in force for the commands after it, as in a shell;
2. each `python` block, from the repository's root and again from another folder;
3. `recipes/app.py` on the model folders the commands made, served on 127.0.0.1 as a subprocess: its page is
   fetched, then the app is stopped; with `--app_runs DIR` (a grid's output folder, such as the smoke grid's that
   the CI makes), the same again on one model folder of DIR per task.

Each step has a time limit; the first failure stops the check and names the README line and the command. The clone
sees the data where a checkout does, at `../shared` (a link to this checkout's `../shared`), and uses this
checkout's `.venv`. Several minutes on 2 cores; not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parent.parent
# (pattern of a command, flags appended to it): the first match applies. Step counts only.
OVERRIDES = [
    (r"recipes/birthplace\.py (pretrain|finetune)\b", "--max_steps 2"),
    (r"recipes/pretrain\.py\b", "--max_steps 2"),
    (r"recipes/finetune_sentiment\.py\b", "--max_steps 2"),
]
# Lines whose effect lasts for the rest of a shell session: repeated before each later command.
SHELL_STATE = re.compile(r"\s*(source|\.|export|cd)\s")
STEP_LIMIT_S = 1800  # one command, one Python block or the app's start (on 2 busy cores)
TOTAL_LIMIT_S = 5400


@dataclass
class Step:
    """One thing the check runs: a README command (`line` is its first line in README.md), or what it adds."""

    kind: str  # "bash", "skipped", "python" or "app"
    text: str  # the command as it runs; a Python block's source
    line: int
    where: str = "."  # the working folder: "." is the clone's root, "elsewhere" a folder outside it

    @property
    def title(self) -> str:
        where = "" if self.where == "." else " (from another folder)"
        return f"README.md:{self.line}: {self.text if self.kind != 'python' else 'the python block'}{where}"


def code_blocks(markdown: str, language: str) -> list[tuple[int, str]]:
    """The fenced blocks of `language`, in order, each with the README line of its first line."""
    return [
        (markdown[: match.start(1)].count("\n") + 1, match.group(1))
        for match in re.finditer(rf"^```{language}\n(.*?)^```", markdown, re.S | re.M)
    ]


def logical_lines(block: str, first_line: int) -> list[tuple[int, str]]:
    """The block's commands with backslash continuations joined, each with its first line's number; blank and
    comment lines dropped."""
    lines, current, start = [], "", first_line
    for number, line in enumerate(block.splitlines(), first_line):
        if not current:
            start = number
        if line.rstrip().endswith("\\"):
            current += (line.strip() if current else line.rstrip())[:-1].rstrip() + " "
            continue
        command = current + line.strip() if current else line
        current = ""
        if command.strip() and not command.lstrip().startswith("#"):
            lines.append((start, command))
    return lines


def with_overrides(line: str) -> str:
    """The command with its step-count override appended (before a trailing comment)."""
    command, hash_, comment = line.partition(" # ")
    for pattern, flags in OVERRIDES:
        if re.search(pattern, command):
            return f"{command.rstrip()} {flags}" + (f" {hash_.strip()} {comment}" if hash_ else "")
    return line


def output_dirs(commands: list[str]) -> list[str]:
    """The `--output_dir` of each command, in order, once each."""
    found = [match for command in commands for match in re.findall(r"--output_dir\s+(\S+)", command)]
    return list(dict.fromkeys(found))


def plan(markdown: str, app_runs: Path | None = None) -> list[Step]:
    steps = []
    for first, block in code_blocks(markdown, "bash"):
        for number, line in logical_lines(block, first):
            if re.match(r"\s*make\b", line):
                steps.append(Step("skipped", line, number))
            else:
                steps.append(Step("bash", with_overrides(line), number))
    for first, block in code_blocks(markdown, "python"):
        steps += [Step("python", block, first), Step("python", block, first, where="elsewhere")]
    commands = [step.text for step in steps if step.kind == "bash"]
    app_line = next((n for n, line in enumerate(markdown.splitlines(), 1) if "recipes/app.py" in line), 0)
    steps.append(Step("app", "python recipes/app.py " + " ".join(output_dirs(commands)), app_line))
    if app_runs is not None:
        grid_models = one_model_per_task(app_runs.resolve())
        steps.append(Step("app", "python recipes/app.py " + " ".join(grid_models), app_line))
    return steps


def _stop(process: subprocess.Popen) -> None:
    """Stop a process and its children (it leads its own session)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def run_command(argv: list[str], cwd: Path, env: dict[str, str], limit_s: float) -> str | None:
    """Run `argv` with its output shown as it comes; None when it ends with status 0, else why not, in words."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, start_new_session=True)
    try:
        status = process.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        _stop(process)
        return f"timed out after {limit_s:.0f} s"
    except KeyboardInterrupt:
        _stop(process)
        raise
    return None if status == 0 else f"exit status {status}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch_page(url: str, process: subprocess.Popen, limit_s: float) -> str:
    """The page at `url` once the server answers it (polled); raises RuntimeError when the server stops first or
    the time runs out."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app stopped (exit status {process.returncode}) before it served {url}")
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.read().decode("utf-8", "replace")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(2)
    raise RuntimeError(f"no answer from {url} within {limit_s:.0f} s")


def one_model_per_task(folder: Path) -> list[str]:
    """`LABEL=FOLDER` for the first model folder (by path) of each task under `folder`, as its run record names it."""
    chosen: dict[str | None, Path] = {}
    for weights in sorted(folder.rglob("model.safetensors")):
        record = weights.parent / "run_record.json"
        task = json.loads(record.read_text(encoding="utf-8")).get("task") if record.is_file() else None
        chosen.setdefault(task, weights.parent)
    return [f"{path.relative_to(folder)}={path}" for path in chosen.values()]


def serve_app(step: Step, cwd: Path, env: dict[str, str], limit_s: float) -> str | None:
    """Start the app on the step's folders that hold a model (`[LABEL=]FOLDER`), fetch its page, stop it; None when
    the page is Gradio's, else why not."""
    sources = step.text.split()[2:]
    models = [source for source in sources if (cwd / source.rpartition("=")[2] / "model.safetensors").is_file()]
    if not models:
        return f"none of {' '.join(sources) or 'no folder'} holds a model to serve"
    port = _free_port()
    argv = [sys.executable, "recipes/app.py", *models, "--host", "127.0.0.1", "--port", str(port)]
    print(f"+ {' '.join(argv[1:])}", flush=True)
    process = subprocess.Popen(argv, cwd=cwd, env={**env, "GRADIO_ANALYTICS_ENABLED": "False"}, start_new_session=True)
    try:
        page = fetch_page(f"http://127.0.0.1:{port}/", process, limit_s)
    except RuntimeError as error:
        return str(error)
    finally:
        _stop(process)
    if "gradio" not in page.lower():
        return f"the page at 127.0.0.1:{port} is not the app's: {page[:200]!r}"
    print(f"the app served {len(models)} model(s) on 127.0.0.1:{port}: {', '.join(models)}", flush=True)
    return None


def run_plan(steps: list[Step], clone: Path, elsewhere: Path, env: dict[str, str], total_limit_s: float) -> int:
    """Run the steps in order; the first failure stops the check, named with its README line. 0 when all pass."""
    deadline, preamble = time.monotonic() + total_limit_s, []
    for number, step in enumerate(steps, 1):
        print(f"\n=== [{number}/{len(steps)}] {step.title}", flush=True)
        limit_s = min(STEP_LIMIT_S, deadline - time.monotonic())
        if step.kind == "skipped":
            print("skipped: `make` runs in the CI before this check (make test) or in the test suite (the demo)")
            continue
        step_started = time.monotonic()
        if limit_s <= 0:
            problem = f"not started: the check's {total_limit_s:.0f} s are spent"
        elif step.kind == "bash":
            script = "\n".join(["set -euo pipefail", *preamble, "set -x", step.text])
            problem = run_command(["bash", "-c", script], clone, env, limit_s)
            if SHELL_STATE.match(step.text):
                preamble.append(step.text)
        elif step.kind == "python":
            source = elsewhere.parent / f"readme_block_line{step.line}.py"
            source.write_text(step.text, encoding="utf-8")
            problem = run_command(
                [sys.executable, str(source)], clone if step.where == "." else elsewhere, env, limit_s
            )
        else:
            problem = serve_app(step, clone, env, limit_s)
        if problem:
            print(f"\nREADME check: FAILED ({problem}) at {step.title}", flush=True)
            return 1
        print(f"=== [{number}/{len(steps)}] done in {time.monotonic() - step_started:.0f} s", flush=True)
    return 0


def fresh_clone(workspace: Path, revision: str) -> Path:
    """A clone of `revision` in `workspace/repo`, beside a link to this checkout's ../shared, with its .venv."""
    clone = workspace / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", revision], check=True)
    (workspace / "shared").symlink_to((REPO_ROOT.parent / "shared").resolve())
    (clone / ".venv").symlink_to((REPO_ROOT / ".venv").resolve())
    return clone


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """-h prints the examples as written and every flag's default (as hf_models.training.HelpFormatter, which this
    script does not import)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--revision", default="HEAD", help="the commit of this checkout to clone and check")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its runs (the path is printed)")
    parser.add_argument("--print", action="store_true", help="print the plan (each step as it will run), and stop")
    parser.add_argument("--time_limit", type=float, default=TOTAL_LIMIT_S, help="seconds for the whole check")
    parser.add_argument(
        "--app_runs",
        type=Path,
        default=os.environ.get("SMOKE_OUT") or None,
        help="a grid's output folder: the app serves one of its model folders per task too (default: $SMOKE_OUT)",
    )
    args = parser.parse_args(argv)
    revision = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", args.revision], capture_output=True, text=True, check=True
    ).stdout.strip()
    if args.app_runs is not None and not args.app_runs.is_dir():
        parser.error(f"--app_runs {args.app_runs}: no such folder")
    if args.print:
        for step in plan((REPO_ROOT / "README.md").read_text(encoding="utf-8"), args.app_runs):
            block = step.kind == "python" and step.where == "."
            print(f"{step.kind:8} {step.title}" + (f"\n{step.text}" if block else ""))
        return 0
    started = time.monotonic()
    workspace = Path(tempfile.mkdtemp(prefix="check_readme_"))
    clone = fresh_clone(workspace, revision)
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    env = {
        **os.environ,
        **OFFLINE_ENVIRONMENT,
        "PYTHONPATH": str(clone),
        "PATH": f"{clone / '.venv' / 'bin'}:{os.environ['PATH']}",
    }
    print(f"checking README.md of {revision[:12]} in {clone}", flush=True)
    steps = plan((clone / "README.md").read_text(encoding="utf-8"), args.app_runs)
    status = run_plan(steps, clone, elsewhere, env, args.time_limit)
    wall = time.monotonic() - started
    print(f"README check: {'passed' if status == 0 else 'FAILED'} in {wall:.0f} s; clone: {clone}")
    if not args.keep and status == 0:
        shutil.rmtree(workspace)  # the links to ../shared and .venv go, never what they point to
    return status


if __name__ == "__main__":
    sys.exit(main())
