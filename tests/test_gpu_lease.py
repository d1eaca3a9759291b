"""`dev/gpu_lease.sh`, the one command for a lent GPU: its dry run prints each part with the time limit a real run
gives it, its make calls reach the course profiles through the Makefile, its throughput command parses, and a run
with stand-ins for make, nvidia-smi and python stops a part at its limit, keeps the next part's slot and packs
what comes back."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tarfile
from pathlib import Path

import pytest
import throughput
import torch

REPO_ROOT = Path(__file__).resolve().parent.parent
LEASE = REPO_ROOT / "dev" / "gpu_lease.sh"


def lease(env: dict[str, str], *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run the script with `env` over this environment (OUT removed unless given). The timeout only guards against a
    hang: no result depends on how long the script takes."""
    full = {k: v for k, v in os.environ.items() if k not in ("OUT", "DRYRUN", "PARTS", "LIMIT", "LEASE_CLOCK")} | env
    return subprocess.run(
        ["bash", str(LEASE), *args], env=full, capture_output=True, text=True, timeout=timeout, check=False
    )


def planned(stdout: str) -> dict[str, tuple[int, list[str]]]:
    """`[part] timeout SECONDS COMMAND...` lines of a dry run: part -> (seconds, command words)."""
    parts = {}
    for line in stdout.splitlines():
        if line.startswith("["):
            part, rest = line[1:].split("] ", 1)
            words = shlex.split(rest)
            if words[0] == "timeout":
                parts[part] = (int(words[1]), words[2:])
    return parts


def limits(stdout: str) -> dict[str, int]:
    """A dry run's parts and their limits."""
    return {part: seconds for part, (seconds, _) in planned(stdout).items()}


def notes(stdout: str) -> list[str]:
    """A dry run's other lines: the parts it does not start, and its summary."""
    return [line for line in stdout.splitlines() if not line.startswith("[")]


def test_the_dry_run_prints_each_part_with_its_limit_and_runs_nothing(tmp_path):
    result = lease({"DRYRUN": "1", "LIMIT": "560", "THROUGHPUT_S": "150", "RUNS": str(tmp_path / "runs")})
    assert result.returncode == 0, result.stderr
    # Both courses in one run until the throughput's slot, which ends at the limit.
    assert limits(result.stdout) == {"courses": 410, "throughput": 150}
    assert notes(result.stdout) == [
        "curve: not started, 0 s left (it starts with CURVE_MIN_S=300): PARTS=curve in a call of its own",
        "dry run: nothing ran; LIMIT=560 s, the courses for 410 s, then the rest in turn",
    ]
    courses = planned(result.stdout)["courses"][1]
    assert courses[3:5] == ["bench", "VENV=/tmp/site"] and "PROFILE=course" in courses
    assert not (tmp_path / "runs").exists() and not (REPO_ROOT / "outputs" / "lease_dry_run").exists()
    # A limit shorter than the throughput's slot: no part gets `timeout 0` (no limit at all) or more than the limit.
    short = lease({"DRYRUN": "1", "LIMIT": "100"}).stdout
    assert limits(short) == {"throughput": 100}
    assert notes(short) == [
        "courses: not started, no time left",
        "curve: not started, 0 s left (it starts with CURVE_MIN_S=300): PARTS=curve in a call of its own",
        "dry run: nothing ran; LIMIT=100 s",
    ]
    assert lease({"RUNS": str(tmp_path / "runs")}, "--dry-run").stdout == result.stdout  # the flag's spelling

    alone = lease({"DRYRUN": "1", "PARTS": "curve", "LIMIT": "500"}).stdout
    assert limits(alone) == {"curve": 500} and notes(alone) == ["dry run: nothing ran; LIMIT=500 s"]
    command = planned(alone)["curve"][1]
    assert command[:4] == ["make", "-o", "/tmp/site/.installed", "bench"]
    assert "PROFILE=gpu_large" in command and "PIPELINES=sentiment sentiment_curve" in command


def test_the_dry_runs_limits_do_not_depend_on_the_clock(tmp_path):
    """A dry run on a loaded machine may take seconds: a `date` that moves 100 s at each reading changes nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ticks = tmp_path / "ticks"
    ticks.write_text("1000000\n")
    (bin_dir / "date").write_text(f"#!/usr/bin/env bash\nt=$(($(cat {ticks}) + 100))\necho $t > {ticks}\necho $t\n")
    (bin_dir / "date").chmod(0o755)
    for env in ({"LIMIT": "560"}, {"LIMIT": "100"}, {"PARTS": "curve", "LIMIT": "500"}):
        still = lease({"DRYRUN": "1", **env})
        moving = lease({"DRYRUN": "1", **env, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
        assert moving.returncode == 0 and moving.stdout == still.stdout, moving.stdout + moving.stderr


def test_the_make_calls_reach_each_course_profile(tmp_path):
    """`make -n` (print, run nothing) with the dry run's words: the targets exist, the install step is skipped and
    the profile reaches the runner's command."""
    parts = {}
    for chosen in ("cs224n altegrad", "cs224n", "altegrad", "curve"):
        parts |= planned(lease({"DRYRUN": "1", "PARTS": chosen}).stdout)
    for part, profile in (("courses", "course"), ("cs224n", "course"), ("altegrad", "course"), ("curve", "gpu_large")):
        make = parts[part][1]
        assert make[0] == "make" and f"PROFILE={profile}" in make and "PY=python3" in make
        shown = subprocess.run(
            ["make", "-n", *make[1:]], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False
        )
        assert shown.returncode == 0, shown.stderr
        assert "pip install" not in shown.stdout and f"profile={profile}" in shown.stdout, shown.stdout
        assert "/tmp/site/bin/snakemake" in shown.stdout  # the wrapper the run writes there
        assert (f"course={part}" in shown.stdout) == (part in ("cs224n", "altegrad"))


def test_the_throughput_command_parses_on_a_gpu(monkeypatch):
    seconds, command = planned(lease({"DRYRUN": "1", "PARTS": "throughput"}).stdout)["throughput"]
    assert command[:2] == ["python3", "benchmarks/throughput.py"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    args = throughput.parse_args(command[2:])
    assert (args.device, args.dtype, args.preset, args.compile, args.dropout) == ("cuda", "bf16", "base", True, 0.0)
    assert args.batch_size == 32 and throughput.results_key(args) == "throughput_gpu_base"
    assert args.results_json.name == "throughput.json"  # a file of its own, merged here afterwards


def test_merging_the_returned_throughput_section(tmp_path):
    returned, results = tmp_path / "throughput.json", tmp_path / "results.json"
    returned.write_text(json.dumps({"throughput_gpu_base": {"mfu": 0.4, "hardware": "H", "date": "d"}}))
    results.write_text(json.dumps({"throughput_gpu_base": {"mfu": 0.3}, "other": 1}))
    throughput.main(["--merge_results", str(returned), "--results_json", str(results)])
    assert json.loads(results.read_text()) == {
        "throughput_gpu_base": {"mfu": 0.4, "hardware": "H", "date": "d"},
        "other": 1,
    }
    returned.write_text(json.dumps({"other": 2}))
    with pytest.raises(ValueError, match="no throughput section"):
        throughput.main(["--merge_results", str(returned), "--results_json", str(results)])


def test_a_run_stops_a_part_at_its_limit_and_keeps_the_next_parts_slot(tmp_path):
    """Stand-ins: `make` outlives the courses' limit; `nvidia-smi` names a card; the python writes the throughput
    file it is given. The run's clock is a file (LEASE_CLOCK): the stand-in make moves it on by the 3 s it runs
    before `timeout` stops it, so that each part's limit is exact however loaded the machine is."""
    bin_dir, out, runs, clock = tmp_path / "bin", tmp_path / "out", tmp_path / "runs", tmp_path / "clock"
    bin_dir.mkdir()
    out.mkdir()
    clock.write_text("1000000\n")
    (bin_dir / "make").write_text(
        '#!/usr/bin/env bash\necho "make $*"\nmkdir -p "$(printf "%s\\n" "$@" | sed -n "s/^OUT=//p")"\n'
        'echo $(($(cat "$LEASE_CLOCK") + 3)) > "$LEASE_CLOCK"\nsleep 30\n'
    )
    (bin_dir / "nvidia-smi").write_text('#!/usr/bin/env bash\necho "NVIDIA H100 80GB HBM3"\n')
    (bin_dir / "fakepython").write_text(
        '#!/usr/bin/env bash\nwhile [[ $# -gt 0 ]]; do [[ $1 == --results_json ]] && echo "{}" > "$2"; shift; done\n'
    )
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = {
        "OUT": str(out),
        "RUNS": str(runs),
        "SITE": str(tmp_path / "site"),
        "PY": "fakepython",
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "LEASE_CLOCK": str(clock),
        "LIMIT": "6",
        "THROUGHPUT_S": "3",
    }
    result = lease(env)
    assert result.returncode == 0, result.stderr
    # The courses stop at 6 - 3 s; the throughput gets the 3 s left; the curve, wanting 300 s, does not start.
    assert (out / "lease.txt").read_text().splitlines() == [
        "courses: exit status 124 (124: stopped at its limit of 3 s), 3 s",
        "throughput: exit status 0 (124: stopped at its limit of 3 s), 0 s",
        "curve: not started, 3 s left (it starts with CURVE_MIN_S=300): PARTS=curve in a call of its own",
        "lease: 3 s in all",
    ]
    wrapper = (tmp_path / "site" / "bin" / "snakemake").read_text()
    assert "-m snakemake --scheduler greedy" in wrapper  # what make's $(VENV)/bin/snakemake runs there
    assert (out / "throughput.json").read_text() == "{}\n"
    assert (out / "hardware.txt").read_text().startswith("NVIDIA H100 80GB HBM3, ")
    assert "bench" in (out / "courses.txt").read_text() and "PROFILE=course" in (out / "courses.txt").read_text()
    with tarfile.open(out / "lease.tgz") as packed:
        names = packed.getnames()
    assert any(name.endswith("runs/course") for name in names)
