"""Every file under configs/ runs: the smoke grid (`make bench PROFILE=smoke`, CI's second stage) runs each config
file of the cpu and course profiles at tiny size; this file runs each of the other profiles' files the same way, with
the command its profile's step gives it, for two optimizer steps on a slice of the data. And a config file that no
step of the smoke grid and no test reads fails here."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import grid
import pytest
import slice_data

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = REPO_ROOT.parent / "shared" / "data"
# The profiles whose config files this file runs (the smoke grid runs the others' and its own parts').
RUN_HERE = ("gpu", "gpu_large", "course-cut")
# The demo's settings: tests/test_demo.py runs `quick.json` whole, this file the other two at tiny size.
DEMO_SETTINGS = ("configs/demo/quick.json", "configs/demo/real.json", "configs/demo/synthetic.json")
pytestmark = pytest.mark.slow


def _config(step: grid.Step) -> str | None:
    return next((file for file in step.files if file.endswith(".json")), None)


def read_by_the_smoke_grid() -> set[str]:
    smoke = grid.load("smoke")
    profiles = [smoke, *(grid.load(name) for name in smoke.parts.values())]
    return {_config(step) for profile in profiles for step in profile.steps.values()} - {None}


def read_here(profile: str) -> set[str]:
    return {_config(step) for step in grid.load(profile).steps.values()} - {None}


def test_every_config_file_is_read_by_a_step_of_the_smoke_grid_or_a_test() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "configs"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked, "no config file tracked"
    documents = {path for path in tracked if path.endswith("README.md")}  # what the files of a folder mean
    run = read_by_the_smoke_grid() | {file for profile in RUN_HERE for file in read_here(profile)}
    assert "quick=True" in (REPO_ROOT / "tests" / "test_demo.py").read_text(encoding="utf-8")
    assert {f"configs/demo/{name}.json" for name in DEMO_RUN_HERE} | {"configs/demo/quick.json"} == set(DEMO_SETTINGS)
    unread = sorted(set(tracked) - documents - run - set(DEMO_SETTINGS))
    assert not unread, f"config files that no smoke step and no test runs: {unread}"
    assert not run - set(tracked), f"steps read files that git does not track: {sorted(run - set(tracked))}"


def steps_running_each_config(profile: grid.Profile, course: str) -> list[grid.Step]:
    """Of the course's steps, the first to read each config file and the steps it reads, in running order."""
    chosen: set[str] = set()

    def add(name: str) -> None:
        if name not in chosen:
            chosen.add(name)
            for read in profile.steps[name].reads:
                add(read)

    seen: set[str] = set()
    for step in profile.of_pipelines(profile.course_pipelines(course)):
        config = _config(step)
        if config is not None and config not in seen:
            seen.add(config)
            add(step.name)
    return [step for step in profile.steps.values() if step.name in chosen]


@pytest.fixture(scope="module")
def data_slice(tmp_path_factory) -> Path:
    """The smoke profile's slice of ../shared/data (the synthetic birthplace set where it is absent)."""
    out = tmp_path_factory.mktemp("data")
    slice_data.main(["--data_root", str(DATA_ROOT), "--out", str(out), "--lines", str(grid.load("smoke").data_slice)])
    return out


def _run(command: tuple[str, ...]) -> None:
    """A step's command in this process (the libraries imported once for all the steps): its script as __main__."""
    script, *arguments = command[1:]
    argv = sys.argv
    sys.argv = [script, *arguments]
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        assert stop.code in (0, None), f"{' '.join(command)}: exit {stop.code}"
    finally:
        sys.argv = argv


def profiles_and_courses() -> list[tuple[str, str]]:
    """Each folder of config files once: (the first profile of RUN_HERE that reads it, its course)."""
    folders = {}
    for name in RUN_HERE:
        for course, folder in grid.load(name).configs.items():
            folders.setdefault(folder, (name, course))
    return list(folders.values())


@pytest.mark.parametrize(("profile_name", "course"), profiles_and_courses())
def test_each_config_file_of_the_profile_runs_its_step_at_tiny_size(
    profile_name, course, data_slice, tmp_path, monkeypatch
) -> None:
    """Each config file of the profile's course runs once, with its step's command at the smoke profile's tiny sizes
    (after the steps it reads), and leaves its outputs."""
    if course == "altegrad" and not (DATA_ROOT / "cls-books").is_dir():
        pytest.skip(f"{DATA_ROOT}/cls-books is absent")
    profile = grid.load(profile_name, REPO_ROOT, tiny="smoke")
    steps = steps_running_each_config(profile, course)
    configs = {_config(step) for step in steps} - {None}
    assert configs == {_config(step) for step in profile.of_pipelines(profile.course_pipelines(course))} - {None}
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "out"
    for step in steps:
        _run(step.command(sys.executable, str(out), str(data_slice)))
        if step.folder is not None:
            made = out / step.folder
            assert made.exists() and any(made.iterdir()) if made.is_dir() else made.is_file(), step.name


DEMO_RUN_HERE = ("synthetic", "real")


@pytest.mark.parametrize("setting", DEMO_RUN_HERE)
def test_each_demo_setting_runs_at_tiny_size(setting, data_slice, tmp_path, monkeypatch) -> None:
    """`make demo`'s other settings (`quick` is tests/test_demo.py's whole run): the file's model and Trainer
    arguments, with the smoke profile's tiny model, two optimizer steps per training and fewer people."""
    import demo

    read = demo.read_setting
    tiny_model = grid.load("smoke").steps["bp_vanilla_recite_pretrain"].arguments[-1]  # its --config_overrides

    def tiny(name: str) -> dict:
        assert name == setting
        values = read(name)
        values["config_overrides"] += "," + tiny_model
        values["tokenizer_vocab_size"] = 300
        values |= {"num_people": 40} if "num_people" in values else {}
        for training in ("pretrain", "finetune"):
            values[training] = {**values[training], "max_steps": 2}
        return values

    monkeypatch.setattr(demo, "read_setting", tiny)
    data_dir = str(data_slice / "birthplace") if setting == "real" else None
    scores = demo.run_demo(data_dir=data_dir, output_dir=str(tmp_path / "demo"))
    written = json.loads((tmp_path / "demo" / "demo_results.json").read_text(encoding="utf-8"))
    assert written["setting"] == setting and set(written["scores"]) == set(scores) and len(scores) == 3
