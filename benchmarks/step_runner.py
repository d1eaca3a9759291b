"""How the benchmark plan's steps run (`benchmarks/plan.py` says which steps, with which commands).

A step is one command. `run_pipeline` runs a pipeline's steps in order, the steps of a side-by-side group together:
consecutive such groups form one pool, where a step starts as soon as a worker is free and the steps that make what
it reads (`step_dependencies`) are done. Each step's output goes to `OUT/log_NAME.txt`, the pipeline's progress to
`OUT/NAME_run.log`, and each timed step that succeeded gets a line in `OUT/timings.tsv` (`name, seconds, command
# configs DIGESTS`), which `finished_steps` reads back for `plan.py run --resume`. The steps run offline, with this
tree's `hf_models` (`step_environment`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import subprocess
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Step:
    name: str
    command: tuple[str, ...]
    # A timed step is a benchmark run: it runs under `nice` and its time goes to timings.tsv. The others prepare
    # data or draw figures.
    timed: bool = True
    may_fail: bool = False  # its failure does not stop the pipeline (an optional reference line, a figure)
    # Consecutive steps of one group are independent: they may run side by side (`Profile.side_by_side`). On a GPU
    # each is launch-bound, so they share it well; on the CPU each gets its share of the cores.
    group: str | None = None

    @property
    def record(self) -> str:
        """The command as timings.tsv keeps it, with a digest of each arguments file it reads: `run --resume` runs
        a step again when its command or one of its config files changed."""
        configs = [arg for arg in self.command if arg.startswith("configs/") and arg.endswith(".json")]
        digests = [hashlib.sha256((REPO_ROOT / arg).read_bytes()).hexdigest()[:12] for arg in configs]
        return " ".join(self.command) + (f"  # configs {' '.join(digests)}" if digests else "")


OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
# glibc hands every freed block over 32 MB back to the kernel, and the next step faults it in again page by page:
# the 16k LM's logits (4,096 x 16,000 floats) and their gradients made 135,000 page faults a second, a quarter of
# its CPU time in the kernel. Freed memory stays in the heap instead: an LM step 18 % faster (BENCHMARKS.md,
# "Allocator"). The caller's own settings win.
ALLOCATOR = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(64 << 30), "MALLOC_TOP_PAD_": str(1 << 30)}


def step_environment(**extra: str) -> dict[str, str]:
    """The steps' environment: offline, and `hf_models` imported from this tree. A script's own folder comes first
    on sys.path, not the working directory, so without PYTHONPATH a worktree that shares the main checkout's venv
    would run the main checkout's `hf_models` (the editable install points there), whose code may change mid-run.
    glibc's allocator keeps freed memory (`ALLOCATOR`) unless the caller set its variables."""
    paths = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**ALLOCATOR, **os.environ, **OFFLINE, "PYTHONPATH": os.pathsep.join(paths), **extra}


def _shown(line: str) -> bool:
    """The log lines a pipeline's log repeats after each step: scores, the end of a run, a plateau warning."""
    return "Correct:" in line or "PLATEAU" in line or line.startswith("Completed")


_timings_lock = threading.Lock()


def run_step(step: Step, out: Path, env: dict[str, str], log) -> bool:
    """Run one step with its output in OUT/log_NAME.txt; a timed step that succeeds gets its line in timings.tsv."""
    print(
        f"=== [{time.strftime('%H:%M:%S', time.gmtime())}] {step.name}: {' '.join(step.command)}", file=log, flush=True
    )
    step_log = out / f"log_{step.name}.txt"
    start = time.monotonic()
    with open(step_log, "w", encoding="utf-8") as output:
        command = ("nice", "-n", "5", *step.command) if step.timed else step.command
        code = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT).returncode
    took = int(time.monotonic() - start)
    lines = step_log.read_text(encoding="utf-8", errors="replace").splitlines()
    if code != 0:
        print(f"FAILED: {step.name} (see {step_log})", *lines[-20:], sep="\n", file=log, flush=True)
        return False
    if step.timed:
        with _timings_lock, open(out / "timings.tsv", "a", encoding="utf-8") as timings:
            timings.write(f"{step.name}\t{took}\t{step.record}\n")
    print(*filter(_shown, lines), sep="\n", file=log)
    print(f"    done in {took}s", file=log, flush=True)
    return True


def _side_by_side(step: Step, side_by_side: bool | tuple[str, ...]) -> bool:
    """Whether the profile runs `step`'s group side by side (`side_by_side`: every group, none, or the groups named)."""
    return bool(step.group) and (side_by_side if isinstance(side_by_side, bool) else step.group in side_by_side)


def batches(steps: list[Step], side_by_side: bool | tuple[str, ...]) -> list[list[Step]]:
    """The steps in running order: runs of consecutive steps of one group together when that group runs side by side."""
    result: list[list[Step]] = []
    for step in steps:
        if _side_by_side(step, side_by_side) and result and result[-1][0].group == step.group:
            result[-1].append(step)
        else:
            result.append([step])
    return result


def finished_steps(out: Path, steps: list[Step], rerun: tuple[str, ...] = ()) -> set[str]:
    """The timed steps whose line in timings.tsv has the very command they would run now: done by an earlier,
    interrupted run of the same plan (`run --resume` skips them), less those matching a `rerun` pattern."""
    timings = out / "timings.tsv"
    if not timings.exists():
        return set()
    recorded = {}
    for line in timings.read_text(encoding="utf-8").splitlines():
        name, _, command = line.split("\t", 2)
        recorded[name] = command
    return {
        step.name
        for step in steps
        if step.timed
        and recorded.get(step.name) == step.record
        and not any(fnmatch.fnmatchcase(step.name, pattern) for pattern in rerun)
    }


def pools(steps: list[Step], side_by_side: bool | tuple[str, ...]) -> list[list[Step]]:
    """`batches`, with consecutive side-by-side groups joined into one pool; a step that runs alone stays alone."""
    result: list[list[Step]] = []
    joined = False
    for step in steps:
        together = _side_by_side(step, side_by_side)
        if together and joined:
            result[-1].append(step)
        else:
            result.append([step])
        joined = together
    return result


def _written(step: Step) -> str | None:
    """The folder a step makes (its `--output_dir`), unless it only adds its scores to the model it reads."""
    output = option_value(step.command, "--output_dir")
    return None if output == option_value(step.command, "--model_name_or_path") else output


def option_value(command: tuple[str, ...], flag: str) -> str | None:
    return command[command.index(flag) + 1] if flag in command[:-1] else None


def step_dependencies(steps: list[Step]) -> dict[str, set[str]]:
    """For each step, the earlier steps of `steps` that make a folder it reads or writes into (a tokenizer, a model,
    the model folder an evaluation writes its scores to)."""
    needs: dict[str, set[str]] = {}
    for index, step in enumerate(steps):
        folders = {(earlier.name, _written(earlier)) for earlier in steps[:index]}
        needs[step.name] = {
            name
            for name, folder in folders
            if folder and any(arg == folder or arg.startswith(f"{folder}/") for arg in step.command)
        }
    return needs


def _run_pool(pool: list[Step], out: Path, env: dict[str, str], log, threads: int | None) -> bool:
    """Run the steps of a pool, each as soon as a worker is free and its dependencies are done, in the pool's order
    otherwise. False when a step that may not fail failed: the running steps finish, no new one starts."""
    workers, step_env = len(pool), env
    if threads is not None:
        workers = min(len(pool), threads)
        # A step alone on the CPU has every core, for torch and for the tokenizers library (its BPE training and
        # batch encoding run in threads); steps side by side get one share each and encode in one thread.
        step_env = {
            **env,
            "OMP_NUM_THREADS": str(max(1, threads // workers)),
            "TOKENIZERS_PARALLELISM": "true" if workers == 1 else "false",
        }
    waiting, pending, running, ok = step_dependencies(pool), list(pool), {}, True
    with ThreadPoolExecutor(max_workers=workers) as executor:
        while running or (ok and pending):
            for step in [step for step in pending if not waiting[step.name]][: workers - len(running) if ok else 0]:
                pending.remove(step)
                running[executor.submit(run_step, step, out, step_env, log)] = step
            if not running:
                raise RuntimeError(f"no step of {[step.name for step in pending]} can start")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                step = running.pop(future)
                ok = ok and (future.result() or step.may_fail)
                for needs in waiting.values():
                    needs.discard(step.name)
    return ok


def run_pipeline(
    name: str,
    steps: list[Step],
    out: Path,
    env: dict[str, str],
    failed: list[str],
    side_by_side: bool | tuple[str, ...],
    threads: int | None = None,
) -> None:
    """Run the steps in order, each pool side by side. `threads`: the CPU threads the pipeline has; a pool then
    runs on at most that many workers, each step with its share (OMP_NUM_THREADS). None: all at once (a GPU)."""
    with open(out / f"{name}_run.log", "a", encoding="utf-8") as log:
        for pool in pools(steps, side_by_side):
            if not _run_pool(pool, out, env, log, threads):
                failed.append(name)
                print(f"{name} failed, see {out / f'{name}_run.log'}", flush=True)
                return


def forget_timings(out: Path, steps: list[Step]) -> None:
    """Drop the timings.tsv lines of the steps about to run, so that a run of one pipeline keeps the other's."""
    timings, names = out / "timings.tsv", {step.name for step in steps}
    if timings.exists():
        lines = timings.read_text(encoding="utf-8").splitlines(keepends=True)
        timings.write_text("".join(line for line in lines if line.split("\t", 1)[0] not in names), encoding="utf-8")


def write_run_time(out: Path, run: dict) -> None:
    """`OUT/run_time.json`, written whole or not at all (the plan imports nothing of hf_models, so no atomic_write)."""
    staging = out / "run_time.json.partial"
    staging.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    os.replace(staging, out / "run_time.json")
