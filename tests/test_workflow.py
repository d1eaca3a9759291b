"""The benchmark grid on Snakemake (benchmarks/Snakefile): a dry run lists a course's steps and changes nothing; a
changed config file reruns exactly its step and the steps after it, shown with stand-in steps (each "recipe" is a
shell script that records its command line and environment, so nothing trains); the SLURM profile of docs/workflow.md
passes Snakemake's own checks; every script of benchmarks/ refuses a bad folder with one `error:` line."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import course_table
import grid
import plot_birthplace
import plot_label_curve
import plot_sentiment
import pytest
import write_results

from hf_models.safety import command_line

REPO_ROOT = Path(__file__).resolve().parent.parent
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
pytestmark = [
    pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake is not installed (pip install -e '.[bench]')"),
    # Snakemake's scheduler, run in this process, builds its plan with PuLP's deprecated names.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:pulp.*"),
]


def _snakemake_cli(arguments: list[str]) -> subprocess.CompletedProcess:
    """`snakemake ARGUMENTS` from this folder, through Snakemake's own command line (`snakemake.cli.main`) in this
    process: a fresh one spends seconds of CPU importing Snakemake and its plugins, and the tests make dozens of
    runs. What a run changes here (the folder, the environment the Snakefile sets, the path) is put back after it;
    the killed run of `test_a_run_killed_hard_resumes_with_its_finished_steps_kept` is the `snakemake` program."""
    from snakemake.cli import main

    cwd, environment, path = Path.cwd(), dict(os.environ), list(sys.path)
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(arguments)
        status = 0
    except SystemExit as exit:  # Snakemake's exit status, or the Snakefile's refusal (status 2)
        status = exit.code if isinstance(exit.code, int) else 1
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environment)
        sys.path[:] = path
        for number, handler in handlers.items():
            signal.signal(number, handler)
    return subprocess.CompletedProcess(["snakemake", *arguments], status, out.getvalue(), err.getvalue())


def _snakemake(workdir: Path, *arguments: str) -> subprocess.CompletedProcess:
    snakefile = str(REPO_ROOT / "benchmarks" / "Snakefile")
    return _snakemake_cli(["-s", snakefile, "-d", str(workdir), "--cores", "2", *arguments])


def _jobs(run: subprocess.CompletedProcess) -> set[str]:
    """The steps a run or dry run lists (Snakemake's `rule NAME:` lines; `all` is the target, not a step)."""
    assert run.returncode == 0, run.stdout + run.stderr
    return set(re.findall(r"^(?:local)?rule (\w+):", run.stdout + run.stderr, re.MULTILINE)) - {"all"}


@pytest.fixture
def stand_in_tree(tmp_path) -> Path:
    """A working folder with the course profile's config files and scripts, and a stand-in interpreter that records
    each command with the threads it was given and where hf_models comes from."""
    shutil.copytree(REPO_ROOT / "configs", tmp_path / "configs")
    for step in grid.load("course-cut").steps.values():
        script = tmp_path / step.files[0]
        script.parent.mkdir(parents=True, exist_ok=True)
        script.touch()
    stand_in = tmp_path / "stand_in.sh"
    stand_in.write_text('#!/bin/sh\necho "$OMP_NUM_THREADS ${PYTHONPATH%%:*} $*" >> "$(dirname "$0")/ran.txt"\n')
    stand_in.chmod(0o755)
    return tmp_path


def _course_run(tree: Path, *arguments: str) -> subprocess.CompletedProcess:
    config = ["profile=course-cut", "course=cs224n", "out=out", f"python={tree / 'stand_in.sh'}"]
    return _snakemake(tree, *arguments, "--config", *config)


def _edit(config: Path) -> None:
    values = json.loads(config.read_text(encoding="utf-8"))
    config.write_text(json.dumps({**values, "seed": values.get("seed", 42) + 1}), encoding="utf-8")


def test_a_changed_config_file_reruns_that_step_and_what_follows_it(stand_in_tree) -> None:
    """Edit one config file: the dry run lists that step and every step after it, nothing else; the run then reruns
    them and the next dry run lists nothing. The synthesizer's pretraining is followed by its own finetuning and
    scores, the figure and the table; the vanilla one's also by the model without pretraining (its characters)."""
    tree = stand_in_tree
    everything = {step.name for step in grid.load("course-cut").steps.values() if step.pipeline == "birthplace"}
    assert _jobs(_course_run(tree)) == everything
    lines = (tree / "ran.txt").read_text().splitlines()
    assert len(lines) == len(everything) and all(line.split()[1] == str(tree) for line in lines)  # this tree's code
    recorded = json.loads((tree / "out" / "run_time.json").read_text(encoding="utf-8"))["command"]
    assert recorded == "make cs224n PROFILE=course-cut"  # started by hand: the make command that reruns it
    threads = {
        line.split()[line.split().index("--output_dir") + 1]: line.split()[0]
        for line in lines
        if "--output_dir" in line
    }
    assert threads["out/birthplace/vanilla_pretrain"] == "1" and threads["out/birthplace/london"] == "2"
    assert _jobs(_course_run(tree, "-n")) == set()

    after = {"bp_plot", "bp_course_table"}
    synthesizer = {"bp_synthesizer_pretrain", "bp_synthesizer_finetune"}
    synthesizer |= {"bp_synthesizer_finetune_eval_dev", "bp_synthesizer_finetune_eval_test"}
    vanilla = {name.replace("synthesizer", "vanilla") for name in synthesizer}
    nopretrain = {"bp_nopretrain_finetune", "bp_nopretrain_finetune_eval_dev", "bp_nopretrain_finetune_eval_test"}
    cases = {
        "pretrain_synthesizer": synthesizer | after,
        "pretrain_vanilla": vanilla | nopretrain | after,
        "london": {"bp_london"} | after,
        "evaluate": {name for name in everything if "_eval_" in name} | after,
    }
    for config, expected in cases.items():
        _edit(tree / "configs" / "cs224n" / "course-cut" / f"{config}.json")
        assert _jobs(_course_run(tree, "-n")) == expected, config
        assert _jobs(_course_run(tree)) == expected, config
    assert _jobs(_course_run(tree, "-n")) == set()


def test_a_changed_command_reruns_the_steps_it_changes(stand_in_tree) -> None:
    """Another data folder changes the commands of the steps that read it (Snakemake's params trigger): they rerun,
    with what follows them, even though no file changed."""
    tree = stand_in_tree
    _jobs(_course_run(tree))
    config = ["profile=course-cut", "course=cs224n", "out=out", f"python={tree / 'stand_in.sh'}", "data=elsewhere"]
    rerun = _jobs(_snakemake(tree, "-n", "--config", *config))
    assert rerun == {step.name for step in grid.load("course-cut").steps.values() if step.pipeline == "birthplace"}


@pytest.mark.parametrize("course", ["cs224n", "altegrad"])
def test_a_dry_run_lists_a_courses_steps_and_changes_nothing(tmp_path, monkeypatch, course) -> None:
    """`make cs224n|altegrad PROFILE=course-cut DRYRUN=1`'s command, from the repository root: the course's steps,
    nothing run, no run folder made, and no tracked file changed."""
    before = subprocess.run(["git", "status", "--porcelain"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
    out = tmp_path / "out"
    monkeypatch.chdir(REPO_ROOT)
    run = _snakemake_cli(
        ["-s", "benchmarks/Snakefile", "--cores", "2", "--dry-run"]
        + ["--config", "profile=course-cut", f"course={course}", f"out={out}"]
    )
    profile = grid.load("course-cut")
    assert _jobs(run) == {step.name for step in profile.of_pipelines(profile.course_pipelines(course))}
    assert not out.exists()
    after = subprocess.run(["git", "status", "--porcelain"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
    assert after == before


def test_the_makefile_runs_the_snakefile_with_the_users_profile_and_dry_run() -> None:
    """`make -n` shows the commands: DRYRUN=1 adds --dry-run, the course and profile reach the Snakefile's config."""
    shown = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "cs224n", "PROFILE=course-cut", "DRYRUN=1"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    ).stdout
    assert "snakemake -s benchmarks/Snakefile" in shown and "--dry-run" in shown
    assert "profile=course-cut" in shown and "course=cs224n" in shown
    assert (
        "--dry-run"
        not in subprocess.run(
            ["make", "-n", "-o", ".venv/.installed", "bench"], cwd=REPO_ROOT, capture_output=True, text=True
        ).stdout
    )


def test_the_slurm_profile_passes_snakemakes_checks(tmp_path, monkeypatch) -> None:
    """docs/workflow.md's cluster profile: Snakemake reads it (its executor plugin, every option) and plans the
    course profile's jobs on it; no cluster is reached by a dry run."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    monkeypatch.chdir(REPO_ROOT)
    run = _snakemake_cli(
        ["-s", "benchmarks/Snakefile", "--profile", "benchmarks/cluster/slurm", "--dry-run"]
        + ["--config", "profile=course", f"out={tmp_path / 'out'}"]
    )
    assert _jobs(run) == set(grid.load("course").steps)


def test_an_unknown_profile_pipeline_or_config_folder_is_refused_before_anything_runs(tmp_path) -> None:
    cases = (
        (REPO_ROOT, "profile=nope", "unknown profile 'nope'"),
        (REPO_ROOT, "pipelines=sentiments", "the cpu profile has no pipeline sentiments"),
        (tmp_path, "profile=cpu", "configs/altegrad/cpu/scratch_lp_ft.json: no such config file"),  # not the root
    )
    for workdir, config, message in cases:
        run = _snakemake(workdir, "-n", "--config", config, f"out={tmp_path / 'out'}")
        assert run.returncode != 0 and message in run.stdout + run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("main", "arguments"),
    [
        (write_results.main, []),
        (course_table.main, ["cs224n"]),
        (plot_birthplace.main, []),
        (plot_sentiment.main, []),
        (plot_label_curve.main, []),
        (grid.main, ["figures"]),
    ],
    ids=["write_results", "course_table", "plot_birthplace", "plot_sentiment", "plot_label_curve", "grid"],
)
def test_every_benchmark_script_refuses_a_missing_run_folder_in_one_line(tmp_path, capsys, main, arguments) -> None:
    status = command_line(main, [*arguments, "--bench_dir", str(tmp_path / "absent")])
    error = capsys.readouterr().err
    assert status == 2 and error.startswith("error: --bench_dir") and error.count("\n") == 1, error
    assert list(tmp_path.iterdir()) == []


def test_a_runs_figures_go_into_the_committed_folder_under_their_profiles_names(tmp_path) -> None:
    """`grid.py figures`: the figures the run drew under its own folder, and its LM's loss, by the names the report
    links (the profile's suffix); a figure the run did not draw is not copied."""
    bench, figures = tmp_path / "bench", tmp_path / "figures"
    (bench / "figures").mkdir(parents=True)
    (bench / "figures" / "birthplace_dev_accuracy.png").write_bytes(b"bars")
    (bench / "birthplace" / "vanilla_pretrain").mkdir(parents=True)
    (bench / "birthplace" / "vanilla_pretrain" / "loss.png").write_bytes(b"loss")
    figures.mkdir()
    written = grid.copy_figures("course-cut", bench, figures)
    assert sorted(path.name for path in written) == [
        "birthplace_dev_accuracy_course_cut.png",
        "birthplace_pretrain_loss_course_cut.png",
    ]
    assert (figures / "birthplace_pretrain_loss_course_cut.png").read_bytes() == b"loss"


def _no_traceback(run: subprocess.CompletedProcess) -> str:
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in output and "Exception" not in output, output
    return output


@pytest.mark.parametrize("asked", [["out/steps/bp_london.done"], ["--until", "bp_synthesizer_pretrain"]])
def test_a_partial_target_ends_cleanly_with_only_its_steps(stand_in_tree, asked) -> None:
    """One step as Snakemake users ask for it (its output, or `--until` a step): the steps it needs run, the run
    ends with exit 0 and no traceback, and nothing of a whole run (run_time.json) is written."""
    tree = stand_in_tree
    output = _no_traceback(_course_run(tree, *asked))
    lines = [line.split() for line in (tree / "ran.txt").read_text().splitlines()]
    ran = {words[words.index("--output_dir") + 1].rsplit("/", 1)[-1] for words in lines}
    expected = {"london"} if "out/steps/bp_london.done" in asked else {"synthesizer_pretrain"}
    assert ran == expected and "steps done in out" in output
    assert not (tree / "out" / "run_time.json").exists()
    _no_traceback(_course_run(tree))  # then the whole run: every step, and its wall time
    assert (tree / "out" / "run_time.json").is_file()


def test_a_run_killed_hard_resumes_with_its_finished_steps_kept(stand_in_tree) -> None:
    """`kill -9` of Snakemake in the middle of a step leaves its lock: the same command refuses (Snakemake's
    LockException); `--unlock` (what `make ... UNLOCK=1` runs first), then the same command, runs the step that was
    cut and those after it, and none that had finished."""
    tree = stand_in_tree
    slow = tree / "stand_in.sh"
    slow.write_text(
        '#!/bin/sh\ncase "$*" in *finetune.json*synthesizer_pretrain*) [ -e "$(dirname "$0")/slow" ] && echo $$ > "$(dirname "$0")/'
        'pid" && exec sleep 60;; esac\necho "$OMP_NUM_THREADS ${PYTHONPATH%%:*} $*" >> "$(dirname "$0")/ran.txt"\n'
    )
    (tree / "slow").touch()
    config = ["profile=course-cut", "course=cs224n", "out=out", f"python={slow}"]
    command = [str(SNAKEMAKE), "-s", str(REPO_ROOT / "benchmarks" / "Snakefile"), "-d", str(tree), "--cores", "1"]
    engine = subprocess.Popen([*command, "--config", *config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = tree / "out" / "logs" / "bp_synthesizer_finetune.log"
    try:
        for _ in range(600):
            if (tree / "pid").exists():
                break
            time.sleep(0.2)
        assert log.exists() and (tree / "pid").exists(), "the slow step never started"
    finally:
        engine.kill()  # kill -9
        engine.wait()
    if (tree / "pid").exists():  # the step it left running
        os.kill(int((tree / "pid").read_text()), signal.SIGKILL)
    (tree / "slow").unlink()
    finished = {p.name for p in (tree / "out" / "steps").glob("*.done")}
    # The cut step comes after one it needs, whichever order Snakemake takes: some step has always finished.
    assert "bp_synthesizer_finetune.done" not in finished and "bp_synthesizer_pretrain.done" in finished
    locked = _course_run(tree)
    assert locked.returncode != 0 and "LockException" in locked.stdout + locked.stderr
    _no_traceback(_snakemake(tree, "--unlock", "--config", *config))
    before = (tree / "ran.txt").read_text().splitlines()
    resumed = _jobs(_course_run(tree))
    assert "bp_synthesizer_finetune" in resumed and not {name.removesuffix(".done") for name in finished} & resumed
    assert len((tree / "ran.txt").read_text().splitlines()) == len(before) + len(resumed)


def test_snakemake_arguments_and_unlock_pass_through_make() -> None:
    """`make bench SNAKEMAKE_ARGS=...` gives Snakemake its own arguments (before the config, which takes every word
    after it); UNLOCK=1 removes a killed run's lock first; the engine always reruns incomplete steps."""
    shown = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "bench", "PROFILE=smoke", "OUT=o", "UNLOCK=1"]
        + ["SNAKEMAKE_ARGS=--until bp_london o/steps/se_tfidf.done"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    ).stdout
    unlock, run = shown.split(" && ")
    assert "--unlock" in unlock and "profile=smoke" in unlock and "--unlock" not in run
    assert run.index("--until bp_london o/steps/se_tfidf.done") < run.index("--config")
    assert "--rerun-incomplete" in run


def test_the_smoke_profile_runs_every_pipeline_and_each_courses_chain_and_writes_only_its_folder(tmp_path) -> None:
    """`make bench PROFILE=smoke` with stand-in steps: every step of the cpu profile's pipelines and of each course's
    chain (in OUT/course, rules course_<step>), each reading the slice of the data made first, each training with
    the tiny flags after its config file; then results.json of each part into its own folder, never benchmarks/
    (and no throughput row)."""
    shutil.copytree(REPO_ROOT / "configs", tmp_path / "configs")
    smoke, course = grid.load("smoke"), grid.load("smoke-course")
    for step in [*smoke.steps.values(), *course.steps.values()]:
        (tmp_path / step.files[0]).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / step.files[0]).touch()
    (tmp_path / "benchmarks" / "slice_data.py").touch()
    stand_in = tmp_path / "stand_in.sh"
    stand_in.write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/ran.txt"\n')
    stand_in.chmod(0o755)
    run = _snakemake(tmp_path, "--config", "profile=smoke", "out=out", f"python={stand_in}", "data=real")
    jobs = _jobs(run)
    assert jobs == {"slice_data", *smoke.steps, *(f"course_{name}" for name in course.steps)}
    lines = (tmp_path / "ran.txt").read_text().splitlines()
    assert lines[0].startswith("benchmarks/slice_data.py --data_root real --out out/smoke_data")
    trainings = [line for line in lines if "--max_steps" in line]
    assert len(trainings) > 20 and all("--data_root real" not in line for line in lines[1:])
    assert all(" --max_steps 2 " in line or "curve" in line for line in trainings)
    results = [line for line in lines if line.startswith("benchmarks/write_results.py")]
    assert len(results) == 2 and not any("throughput" in line for line in lines)
    assert {line.split("--results ")[1].split()[0] for line in results} == {
        "out/results.json",
        "out/course/results.json",
    }
    assert not (tmp_path / "benchmarks" / "results.json").exists()


def test_a_step_is_kept_only_while_its_record_is_todays(stand_in_tree) -> None:
    """A run folder whose file times and Snakemake's own records say every step is current: the step whose record
    names another content of its config file (another checkout's) reruns, with the steps after it; a step whose
    .done holds no record (a bare command) too."""
    tree = stand_in_tree
    _jobs(_course_run(tree))
    london = tree / "out" / "steps" / "bp_london.done"
    record = json.loads(london.read_text())
    record["files"] = {file: "0" * 64 for file in record["files"]}  # its config file as another checkout had it
    london.write_text(json.dumps(record))
    table = tree / "out" / "steps" / "bp_course_table.done"
    table.write_text("python benchmarks/course_table.py\n")
    now = time.time()
    for i, step in enumerate(grid.load("course-cut").of_pipelines(["birthplace"])):
        os.utime(
            tree / "out" / "steps" / f"{step.name}.done", (now - 600 + i, now - 600 + i)
        )  # file times alone keep them all
    assert _jobs(_course_run(tree, "-n")) == {"bp_london", "bp_plot", "bp_course_table"}
    assert _jobs(_course_run(tree)) == {"bp_london", "bp_plot", "bp_course_table"}
    assert _jobs(_course_run(tree, "-n")) == set()


def test_a_figure_or_table_that_failed_is_retried(stand_in_tree) -> None:
    """A figure's step that fails stops nothing after it, and leaves no record of success: the next run retries it
    (and only it)."""
    tree = stand_in_tree
    failing = tree / "failing_plot.sh"  # the figure fails while the file `fail_plot` is there
    script = f'[ -e "{tree}/fail_plot" ] && case "$*" in *plot_birthplace*) exit 1;; esac\n'
    failing.write_text(f'#!/bin/sh\n{script}exec {tree / "stand_in.sh"} "$@"\n')
    failing.chmod(0o755)
    (tree / "fail_plot").touch()
    config = ["profile=course-cut", "course=cs224n", "out=out", f"python={failing}"]
    everything = {step.name for step in grid.load("course-cut").steps.values() if step.pipeline == "birthplace"}
    assert _jobs(_snakemake(tree, "--config", *config)) == everything
    assert json.loads((tree / "out" / "steps" / "bp_plot.done").read_text())["failed"] is True
    assert _jobs(_snakemake(tree, "-n", "--config", *config)) == {"bp_plot"}
    (tree / "fail_plot").unlink()
    assert _jobs(_snakemake(tree, "--config", *config)) == {"bp_plot"}
    assert _jobs(_snakemake(tree, "-n", "--config", *config)) == set()
