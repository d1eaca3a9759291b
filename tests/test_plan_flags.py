"""The benchmark plan and its config files: every config file under configs/ parses with the recipe it is meant for
and names only its flags; every recipe command of every profile reads its profile's config file and parses with its
recipe's own parser (each birthplace subcommand takes only its own flags), without training anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from transformers import TrainingArguments

from hf_models.tasks import pretraining, sentiment
from hf_models.tasks.birthplace import DEFAULT_PRESET, SUBCOMMANDS
from hf_models.tasks.birthplace_arguments import BirthplaceArguments, subcommand_groups
from hf_models.textio import UsageError
from hf_models.training import ModelArguments, build_parser, expand_arguments_file, parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import plan  # noqa: E402
import step_runner  # noqa: E402

PATHS = plan.Paths(data_root="../shared/data", out="outputs/bench", python="python")
CONFIGS = plan.REPO_ROOT / "configs"


def _recipe_commands(profile: str) -> list[tuple[str, tuple, list[str]]]:
    """(step name, the recipe's flag groups, its arguments) of every recipe step of a profile."""
    commands = []
    for steps in plan.plan(profile, PATHS).values():
        for step in steps:
            script, arguments = step.command[1], list(step.command[2:])
            if script == "recipes/birthplace.py":
                commands.append((step.name, subcommand_groups(arguments[0], DEFAULT_PRESET), arguments[1:]))
            elif script == "recipes/pretrain.py":
                commands.append((step.name, pretraining.ARGUMENT_GROUPS, arguments))
            elif script == "recipes/finetune_sentiment.py":
                commands.append((step.name, sentiment.ARGUMENT_GROUPS, arguments))
    return commands


def expanded(command: tuple[str, ...]) -> tuple[str, ...]:
    """A plan step's command with the values of its config file written out as flags (`--flag value`; a true flag
    alone), as if typed: what the tests of a profile's settings read."""
    result = []
    for argument in command:
        if not (argument.startswith("configs/") and argument.endswith(".json")):
            result.append(argument)
            continue
        for key, value in json.loads((plan.REPO_ROOT / argument).read_text(encoding="utf-8")).items():
            if value is True:
                result.append(f"--{key}")
            elif value is not False and value is not None:
                values = (
                    value if isinstance(value, list) else [json.dumps(value) if isinstance(value, dict) else value]
                )
                result += [f"--{key}", *map(str, values)]
    return tuple(result)


def _config_recipe(path: Path) -> tuple:
    """The command line a config file is meant for, by its place: configs/<course>/<profile>/<step>.json, where
    <step> is `tokenizer` (tokenizer/train_tokenizer.py) or `corpus` (recipes/prepare_data.py sentiment-corpus):
    (an argparse parser, the config's position); else the flag groups of a recipe: of cs224n, the birthplace
    subcommand that starts its name (`pretrain_*`, `finetune_*`, `evaluate_*`; `london` evaluates); of altegrad,
    recipes/pretrain.py for `lm*` and recipes/finetune_sentiment.py for the rest."""
    from test_flag_plumbing import load_script

    course, stem = path.parent.parent.name, path.stem
    if stem == "tokenizer":
        return load_script("tokenizer/train_tokenizer.py").build_parser(), 0
    if stem == "corpus":
        return load_script("recipes/prepare_data.py").build_parser(), 1
    assert course in ("cs224n", "altegrad"), f"{path}: configs/<course>/<profile>/<step>.json, course cs224n|altegrad"
    if course == "cs224n":
        subcommand = "evaluate" if stem == "london" else stem.split("_")[0]
        assert subcommand in SUBCOMMANDS, f"{path}: name a birthplace subcommand first (pretrain_..., ...)"
        return (subcommand_groups(subcommand, DEFAULT_PRESET),)
    return (pretraining.ARGUMENT_GROUPS if stem.startswith("lm") else sentiment.ARGUMENT_GROUPS,)


CONFIG_FILES = sorted(CONFIGS.rglob("*.json"))


@pytest.mark.parametrize("path", CONFIG_FILES, ids=[str(p.relative_to(CONFIGS)) for p in CONFIG_FILES])
def test_every_config_file_parses_with_its_recipe(path) -> None:
    """Each file names only flags of its command line (an unknown key is a UsageError naming it) with values the
    flags take, and holds no machine's path; a recipe's file without --bf16 gives the recipe's real dataclasses,
    their own checks run."""
    values = json.loads(path.read_text(encoding="utf-8"))
    assert not {"output_dir", "data_dir", "model_name_or_path", "tokenizer_name_or_path", "train_files"} & set(values)
    relative, recipe = str(path.relative_to(plan.REPO_ROOT)), _config_recipe(path)
    if len(recipe) == 2:  # an argparse tool: its own parser reads the file, the required paths beside it
        parser, position = recipe
        arguments = expand_arguments_file(parser, ["sentiment-corpus", relative][1 - position :], position)
        namespace = parser.parse_args(
            [*arguments, "--files", "f.txt", "--output_dir", "o"] if not position else arguments
        )
        assert all(getattr(namespace, key) == value for key, value in values.items())
        return
    (groups,) = recipe
    if values.get("bf16"):  # the flags only: TrainingArguments checks --bf16 against the machine's GPU
        parser = build_parser(groups)
        flags = parser.parse_args_into_dataclasses(args=expand_arguments_file(parser, [relative]))
        parsed = {key: value for group in flags for key, value in vars(group).items()}
    else:
        parsed = {key: value for group in parse_args(groups, [relative]) for key, value in vars(group).items()}
    for key, value in values.items():
        assert _same(parsed[key], value), (key, parsed[key], value)


def _same(parsed, value) -> bool:
    """A parsed flag's value is the file's: an enum by its value, a number as a number, "none" as no reports."""
    parsed = getattr(parsed, "value", parsed)
    if isinstance(value, dict) and isinstance(parsed, str):  # the flags alone: Trainer has not read it yet
        parsed = json.loads(parsed)
    if isinstance(value, bool) or value is None:
        return parsed is value
    if isinstance(value, int | float):
        return float(parsed) == float(value)
    return parsed == value or (value == "none" and parsed == [])


def test_every_config_file_is_a_step_of_the_plan_and_every_step_reads_its_profiles() -> None:
    """No config file is left over, and each recipe step of a profile reads a config file of that profile's folder:
    the hyperparameters are in configs/ and nowhere else."""
    used = set()
    for name, profile in plan.PROFILES.items():
        folders = {profile.birthplace.configs, profile.sentiment.configs}
        for steps in plan.plan(name, PATHS).values():
            for step in steps:
                configs = [arg for arg in step.command if arg.startswith("configs/")]
                used.update(configs)
                if step.command[1].startswith(("recipes/", "tokenizer/")) and "birthplace-tune" not in step.command:
                    assert len(configs) == 1 and str(Path(configs[0]).parent) in folders, (name, step.name)
    assert {str(path.relative_to(plan.REPO_ROOT)) for path in CONFIG_FILES} == used


@pytest.mark.parametrize("profile", sorted(plan.PROFILES))
def test_every_plan_command_parses_for_its_recipe(profile) -> None:
    commands = _recipe_commands(profile)
    subcommands = {name.split("_")[-1] for name, _, _ in commands if name.startswith("bp_")}
    assert len(commands) >= 10 and {"pretrain", "finetune"} <= subcommands
    for name, groups, arguments in commands:
        # The flags only (no TrainingArguments.__post_init__: the GPU profile's --bf16 needs a GPU to be checked).
        parser = build_parser(groups)
        arguments = expand_arguments_file(parser, arguments)
        flags = parser.parse_args_into_dataclasses(args=arguments, look_for_args_file=False)
        given = {argument[2:].split("=")[0] for argument in arguments if argument.startswith("--")}
        parsed = {field for group in flags for field in vars(group)}
        assert given <= parsed, (name, sorted(given - parsed))


def test_the_cpu_profile_parses_into_the_recipes_arguments() -> None:
    """The CPU profile's commands give the real dataclasses, with the config files' values and the plan's paths."""
    for name, groups, arguments in _recipe_commands("cpu"):
        task_args, _, training_args = parse_args(groups, arguments)
        assert isinstance(training_args, TrainingArguments) and training_args.use_cpu, name
        assert training_args.output_dir == arguments[arguments.index("--output_dir") + 1], name
        if name == "bp_vanilla_recite_pretrain":
            assert isinstance(task_args, BirthplaceArguments)
            assert (task_args.pretraining_objective, task_args.pretrain_with_qa) == ("openings", True)
            assert (task_args.variant, task_args.recite_tokens, training_args.num_train_epochs) == ("vanilla", 40, 17)


def test_a_reciting_model_recites_its_opening_in_its_trainings() -> None:
    """`--recite_tokens`, equal to the pretraining's `--opening_tokens`, and `--answer_from_recitation` reach the
    trainings of a reciting model (their run records keep them); its scores read them there, and no other model
    recites."""
    for profile in ("cpu", "gpu"):
        steps = [
            step for step in plan.plan(profile, PATHS)["birthplace"] if step.command[1] == "recipes/birthplace.py"
        ]
        for step in steps:
            command = expanded(step.command)
            model = step.name[3:].split("_pretrain")[0].split("_finetune")[0].split("_eval")[0]
            recites = model.endswith("_recite")
            pretrain = next((s for s in steps if s.name == f"bp_{model}_pretrain"), None)
            training = recites and "_eval_" not in step.name
            opening = _flag(expanded(pretrain.command), "--opening_tokens") if training else None
            assert _flag(command, "--recite_tokens") == opening, step.name
            assert ("--answer_from_recitation" in command) == training, step.name


def test_a_flag_of_another_subcommand_is_refused() -> None:
    with pytest.raises(UsageError, match="unknown arguments --london_baseline"):
        parse_args(subcommand_groups("pretrain", DEFAULT_PRESET), ["--data_dir", "d", "--london_baseline"])
    with pytest.raises(UsageError, match="unknown arguments --pretraining_objective openings"):
        parse_args(
            subcommand_groups("evaluate", DEFAULT_PRESET), ["--data_dir", "d", "--pretraining_objective", "openings"]
        )
    # evaluate trains nothing: a training flag would change nothing there, so it is refused; what it reads is kept
    with pytest.raises(UsageError, match="unknown arguments --learning_rate 1e-3"):
        parse_args(subcommand_groups("evaluate", DEFAULT_PRESET), ["--data_dir", "d", "--learning_rate", "1e-3"])
    _, _, training_args = parse_args(
        subcommand_groups("evaluate", DEFAULT_PRESET),
        ["--data_dir", "d", "--output_dir", "o", "--per_device_eval_batch_size", "7", "--seed", "3", "--use_cpu"],
    )
    assert isinstance(training_args, TrainingArguments)
    assert (training_args.output_dir, training_args.per_device_eval_batch_size, training_args.seed) == ("o", 7, 3)
    assert training_args.use_cpu


def test_the_gpu_profile_runs_the_sentiment_finetunings_side_by_side() -> None:
    for profile, together in (("gpu", True), ("cpu", False)):
        for pipeline, rows in (("sentiment", 2), ("sentiment_lab", 3)):  # the probe row has no finetuning of its own
            steps = plan.plan(profile, PATHS)[pipeline]
            batches = step_runner.batches(steps, plan.PROFILES[profile].side_by_side)
            finetunes = [step.name for step in steps if step.group == "se_finetune"]
            assert len(finetunes) == rows * 3
            assert [step.name for batch in batches for step in batch] == [step.name for step in steps]  # order kept
            widest = max(batches, key=len)
            assert [step.name for step in widest] == (finetunes if together else [steps[0].name])


def test_every_sentiment_row_reads_what_a_step_of_the_two_pipelines_writes() -> None:
    """Issue 18's rows are the `sentiment` pipeline, the lab's the `sentiment_lab` one, which reads the first's
    tokenizer and backbone and so runs after it (in one chain on a GPU machine, in order on the CPU). The frozen
    probe row reads the probe that each pretrained LP-FT run keeps (`--save_linear_probe`)."""
    steps = plan.plan("cpu", PATHS)
    by_name = {step.name: (pipeline, step) for pipeline in ("sentiment", "sentiment_lab") for step in steps[pipeline]}
    for row in plan.sentiment_rows("cpu"):
        pipelines = {by_name[name][0] for name in row.steps}
        lab_row = row.key in ("scratch", "pretrained", "frozen")
        assert pipelines == ({"sentiment", "sentiment_lab"} if lab_row else {"sentiment"}), row.key
        finetunings = [
            by_name[name][1] for name in row.steps if name.startswith(("se_scratch", "se_pretrained", "se_frozen"))
        ]
        for run, step in zip(row.runs, finetunings, strict=True):
            written = f"{PATHS.out}/{run}"
            if row.key == "frozen_linear_probe":
                assert (
                    "--save_linear_probe" in expanded(step.command)
                    and written == f"{_flag(step.command, '--output_dir')}/linear_probe"
                )
            else:
                assert _flag(step.command, "--output_dir") == written
    lab = steps["sentiment_lab"]
    assert {
        _flag(step.command, "--tokenizer_name_or_path") or _flag(step.command, "--model_name_or_path")
        for step in lab
        if "recipes/finetune_sentiment.py" in step.command
    } == {f"{PATHS.out}/sentiment/tokenizer", f"{PATHS.out}/sentiment/domain"}
    assert plan.chains(["sentiment_lab", "birthplace", "sentiment"]) == [
        ["birthplace"],
        ["sentiment", "sentiment_lab"],
    ]


def _flag(command: tuple[str, ...], flag: str) -> str | None:
    return command[command.index(flag) + 1] if flag in command else None


def test_both_profiles_run_the_birthplace_trainings_side_by_side_and_read_only_finished_models() -> None:
    for profile in ("cpu", "gpu"):
        steps = plan.plan(profile, PATHS)["birthplace"]
        batches = step_runner.batches(steps, plan.PROFILES[profile].side_by_side)
        trainings = [f"bp_{model}_pretrain" for model in plan.PROFILES[profile].birthplace.models]
        assert [step.name for step in batches[3]] == [*trainings, "bp_nopretrain_finetune"]  # after the tokenizer
        assert len(batches) == 3 + 3 + 3  # data, London, tokenizer; three stages; two figures and the course's table
        # What a step reads (a model or a tokenizer) was trained by a step of an earlier batch.
        trained: set[str] = set()
        for batch in batches:
            for step in batch:
                for source in (
                    _flag(step.command, "--model_name_or_path"),
                    _flag(step.command, "--tokenizer_name_or_path"),
                ):
                    assert source is None or source in trained, (profile, step.name, source)
            trained |= {
                _flag(step.command, "--output_dir")
                for step in batch
                if step.name.endswith(("pretrain", "finetune", "tokenizer"))
            }


def test_on_the_cpu_a_side_by_side_batch_shares_the_cores(tmp_path) -> None:
    """Two steps side by side on 2 threads: one thread each, the tokenizers library in one; a step alone: both, and
    the tokenizers library's threads. Three: two at a time."""

    def step(name: str, group: str | None) -> step_runner.Step:
        script = (
            f"import os; open({str(tmp_path / name)!r}, 'w').write(os.environ['OMP_NUM_THREADS'] + ' ' + "
            "os.environ['TOKENIZERS_PARALLELISM'])"
        )
        return step_runner.Step(name, (sys.executable, "-c", script), timed=False, group=group)

    steps = [step("alone", None), *(step(name, "pair") for name in "abc"), step("after", "other")]
    failed: list[str] = []
    env = {"OMP_NUM_THREADS": "2", "TOKENIZERS_PARALLELISM": "false"}
    step_runner.run_pipeline("cpu", steps, tmp_path, env, failed, ("pair",), threads=2)
    threads = {name: (tmp_path / name).read_text() for name in ("alone", "a", "b", "c", "after")}
    alone, shared = "2 true", "1 false"
    assert failed == [] and threads == {"alone": alone, "a": shared, "b": shared, "c": shared, "after": alone}


def _waiting_step(name: str, mine: Path, other: Path, code: int = 0) -> step_runner.Step:
    """A step that writes its file, then waits (at most 20 s) for the other's: both end only if they run together."""
    script = (
        f"import pathlib, sys, time; pathlib.Path({str(mine)!r}).touch()\n"
        f"for _ in range(200):\n    if pathlib.Path({str(other)!r}).exists(): sys.exit({code})\n    time.sleep(0.1)\n"
        "sys.exit(3)"
    )
    return step_runner.Step(name, (sys.executable, "-c", script), timed=False, group="pair")


def test_a_group_runs_together_and_its_failure_stops_the_pipeline(tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    after = step_runner.Step("after", (sys.executable, "-c", f"open({str(tmp_path / 'after')!r}, 'w')"), timed=False)
    failed: list[str] = []
    step_runner.run_pipeline(
        "pair", [_waiting_step("a", a, b), _waiting_step("b", b, a), after], tmp_path, {}, failed, True
    )
    assert failed == [] and (tmp_path / "after").exists()

    for path in (a, b, tmp_path / "after"):
        path.unlink()
    steps = [_waiting_step("a", a, b), _waiting_step("b", b, a, code=1), after]
    step_runner.run_pipeline("pair", steps, tmp_path, {}, failed, True)
    assert failed == ["pair"] and not (tmp_path / "after").exists()  # one failed step of the group stops the rest
    assert "FAILED: b" in (tmp_path / "pair_run.log").read_text()


def test_a_run_of_one_pipeline_keeps_the_other_pipelines_timings(tmp_path) -> None:
    steps = plan.plan("cpu", PATHS)
    sentiment_step, birthplace_step = steps["sentiment"][-1].name, steps["birthplace"][0].name
    (tmp_path / "timings.tsv").write_text(f"{sentiment_step}\t60\tcmd\n{birthplace_step}\t9\told\n", encoding="utf-8")
    step_runner.forget_timings(tmp_path, steps["birthplace"])
    assert (tmp_path / "timings.tsv").read_text(encoding="utf-8") == f"{sentiment_step}\t60\tcmd\n"


def test_resume_keeps_the_steps_finished_with_the_same_command(tmp_path) -> None:
    steps = plan.plan("cpu", PATHS)["sentiment"]
    tokenizer, pretrain, domain = (
        next(step for step in steps if step.name == name) for name in ("se_tokenizer", "se_pretrain", "se_domain")
    )
    assert pretrain.record.startswith(" ".join(pretrain.command) + "  # configs ")  # the config file's digest
    (tmp_path / "timings.tsv").write_text(
        f"se_tokenizer\t20\t{tokenizer.record}\n"
        f"se_pretrain\t900\t{pretrain.record}\n"
        f"se_domain\t60\t{domain.record} --learning_rate 1e-2\n",  # run with another command: not kept
        encoding="utf-8",
    )
    assert step_runner.finished_steps(tmp_path, steps) == {"se_tokenizer", "se_pretrain"}
    assert step_runner.finished_steps(tmp_path, steps, rerun=("se_pre*",)) == {"se_tokenizer"}  # the code changed
    assert step_runner.finished_steps(tmp_path / "elsewhere", steps) == set()


def test_resume_runs_a_step_again_when_its_config_file_changed(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(step_runner, "REPO_ROOT", tmp_path)
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "lm.json"
    config.write_text('{"learning_rate": 1e-3}', encoding="utf-8")
    step = step_runner.Step("se_pretrain", ("py", "recipes/pretrain.py", "configs/lm.json", "--output_dir", "o"))
    (tmp_path / "timings.tsv").write_text(f"se_pretrain\t900\t{step.record}\n", encoding="utf-8")
    assert step_runner.finished_steps(tmp_path, [step]) == {"se_pretrain"}
    config.write_text('{"learning_rate": 3e-4}', encoding="utf-8")  # the same command, another rate
    assert step_runner.finished_steps(tmp_path, [step]) == set()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--rerun", "se_pretrain"], "within a --resume run"),
        (["--resume", "--rerun", "se_nothing*"], "matches se_nothing*"),
    ],
)
def test_rerun_names_existing_steps_of_a_resumed_run(tmp_path, monkeypatch, arguments, message) -> None:
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    with pytest.raises(SystemExit, match=message):
        plan.main(["run", "--profile", "cpu", "--pipeline", "sentiment", *arguments])
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_a_run_writes_its_command_and_whole_wall_time_and_never_keeps_an_earlier_runs(tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    monkeypatch.setenv("OUT", str(out))

    def steps_failing(profile, pipelines, steps, where, failed) -> None:
        failed.append("birthplace")

    monkeypatch.setattr(plan, "_run_pipelines", steps_failing)
    assert plan.main(["run", "--profile", "course-cut", "--course", "cs224n"]) == 1
    run = json.loads((out / "run_time.json").read_text(encoding="utf-8"))
    assert run["command"] == "python benchmarks/plan.py run --profile course-cut --course cs224n"
    assert run["profile"] == "course-cut" and run["pipelines"] == ["birthplace"] and run["failed"] == ["birthplace"]
    assert isinstance(run["wall_time_s"], int) and run["resumed"] is False and run["started"].endswith("Z")

    def interrupted(profile, pipelines, steps, where, failed) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(plan, "_run_pipelines", interrupted)
    with pytest.raises(KeyboardInterrupt):
        plan.main(["run", "--profile", "course-cut", "--course", "cs224n"])
    assert not (out / "run_time.json").exists()  # the earlier run's time would pass for this one's


def test_steps_import_hf_models_from_the_plans_own_tree(tmp_path, monkeypatch) -> None:
    # A script run from its own folder, as a worktree's recipes are: PYTHONPATH decides where hf_models comes from,
    # and this tree's goes before any other on it.
    other, scripts = tmp_path / "other", tmp_path / "recipes"
    (other / "hf_models").mkdir(parents=True)
    (other / "hf_models" / "__init__.py").write_text("raise ImportError('the other tree')\n", encoding="utf-8")
    scripts.mkdir()
    (scripts / "where.py").write_text("import hf_models; print(hf_models.__file__)\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(other))
    env = step_runner.step_environment(OMP_NUM_THREADS="2")
    assert env["PYTHONPATH"].split(os.pathsep) == [str(plan.REPO_ROOT), str(other)]
    assert env["OMP_NUM_THREADS"] == "2" and env["HF_HUB_OFFLINE"] == "1"
    assert env["MALLOC_MMAP_MAX_"] == "0" and int(env["MALLOC_TRIM_THRESHOLD_"]) >= 1 << 30  # freed memory stays
    monkeypatch.setenv("MALLOC_MMAP_MAX_", "65536")
    assert step_runner.step_environment()["MALLOC_MMAP_MAX_"] == "65536"  # the caller's setting wins
    run = subprocess.run(
        [sys.executable, str(scripts / "where.py")], env=env, capture_output=True, text=True, check=True
    )
    assert Path(run.stdout.strip()) == plan.REPO_ROOT / "hf_models" / "__init__.py"


def test_a_pool_step_waits_for_what_it_reads_and_no_longer() -> None:
    """In the birthplace pool, each score and finetuning waits for the training that made its model, and for
    nothing else: a model's evaluations do not wait for another model's training."""
    for profile in ("cpu", "gpu"):
        steps = plan.plan(profile, PATHS)["birthplace"]
        pool = next(pool for pool in step_runner.pools(steps, plan.PROFILES[profile].side_by_side) if len(pool) > 1)
        assert pool[0].name == f"bp_{plan.PROFILES[profile].birthplace.models[0]}_pretrain"
        needs = step_runner.step_dependencies(pool)
        for model in plan.PROFILES[profile].birthplace.models:
            assert needs[f"bp_{model}_pretrain"] == set()
            assert needs[f"bp_{model}_finetune"] == needs[f"bp_{model}_probe"] == {f"bp_{model}_pretrain"}
            assert needs[f"bp_{model}_pretrain_eval_dev"] == {f"bp_{model}_pretrain"}
            assert needs[f"bp_{model}_eval_test"] == {f"bp_{model}_finetune"}
        assert needs["bp_nopretrain_eval_dev"] == {"bp_nopretrain_finetune"}


def _step_after(name: str, tmp_path: Path, group: str, reads: str | None = None) -> step_runner.Step:
    """A step of `group` that records when it starts and ends, and reads the folder of the step named `reads`."""
    script = (
        f"import pathlib, time; d = pathlib.Path({str(tmp_path)!r}); (d / '{name}.start').touch()\n"
        f"time.sleep(3.0 if {name!r} == 'slow' else 0.1); (d / '{name}.end').touch()"
    )
    source = ("--model_name_or_path", str(tmp_path / reads)) if reads else ()
    command = (sys.executable, "-c", script, *source, "--output_dir", str(tmp_path / name))
    return step_runner.Step(name, command, timed=False, group=group)


def test_a_step_starts_when_its_inputs_are_ready_not_when_its_stage_ends(tmp_path) -> None:
    """Two stages side by side: a scoring step starts once the training it reads ends, not once every training
    has ended; and never before its own training ends."""
    steps = [
        _step_after("slow", tmp_path, "training"),
        _step_after("fast", tmp_path, "training"),
        _step_after("reads_slow", tmp_path, "scoring", "slow"),
        _step_after("reads_fast", tmp_path, "scoring", "fast"),
    ]
    failed: list[str] = []
    step_runner.run_pipeline("pool", steps, tmp_path, {}, failed, True, threads=2)
    times = {path.name: path.stat().st_mtime for path in tmp_path.glob("*.*") if path.suffix in (".start", ".end")}
    assert failed == [] and len(times) == 8
    assert times["fast.end"] <= times["reads_fast.start"] < times["slow.end"]  # did not wait for the slow step
    assert times["slow.end"] <= times["reads_slow.start"]


def test_a_pipeline_starts_beside_the_rest_of_the_one_it_reads_once_its_step_is_done(tmp_path, monkeypatch) -> None:
    """On a GPU machine `sentiment_lab` needs only `sentiment`'s review stage: it starts once that step has ended,
    while `sentiment`'s finetunings still run; if the step fails, it does not run; resumed past the step, at once."""
    for profile in [name for name, profile in plan.PROFILES.items() if not profile.course]:  # the step they wait for
        assert plan.PIPELINE_STARTS_AFTER["sentiment_lab"] in [
            step.name for step in plan.plan(profile, PATHS)["sentiment"]
        ]
    monkeypatch.setattr(plan, "PIPELINE_NEEDS", {"reader": "maker"})
    monkeypatch.setattr(plan, "PIPELINE_STARTS_AFTER", {"reader": "made"})

    def step(name: str, seconds: float = 0.1, code: int = 0) -> step_runner.Step:
        script = (
            f"import pathlib, sys, time; d = pathlib.Path({str(tmp_path)!r}); (d / '{name}.start').touch()\n"
            f"time.sleep({seconds}); (d / '{name}.end').touch(); sys.exit({code})"
        )
        return step_runner.Step(name, (sys.executable, "-c", script), timed=False)

    def run(maker: list[step_runner.Step]) -> tuple[list[str], dict[str, float]]:
        for path in tmp_path.glob("*.*"):
            path.unlink()
        failed: list[str] = []
        plan.run_chain(["maker", "reader"], {"maker": maker, "reader": [step("read")]}, tmp_path, {}, failed, True)
        return failed, {
            path.name: path.stat().st_mtime for path in tmp_path.glob("*.*") if path.suffix in (".start", ".end")
        }

    failed, times = run([step("first"), step("made"), step("slow", seconds=3.0)])
    assert failed == [] and len(times) == 8
    assert times["made.end"] <= times["read.start"] < times["slow.end"]  # after its step, beside the rest
    failed, times = run([step("first"), step("made", code=1), step("slow")])
    assert failed == ["maker", "reader"] and "read.start" not in times and "slow.start" not in times
    failed, times = run([step("slow", seconds=3.0)])  # `made` finished in an earlier, resumed run
    assert failed == [] and times["read.start"] < times["slow.end"]


@pytest.mark.parametrize(
    "flag",
    [("--config_overrides", "hidden_dropout=0"), ("--model_config", "base"), ("--attention_type", "synthesizer")],
)
def test_a_loaded_model_refuses_the_flags_that_build_one(flag) -> None:
    """--model_config, --config_overrides and --attention_type describe a new model: beside --model_name_or_path
    they would change nothing (the model keeps its saved config), so every recipe refuses them before any work, as
    transformers' run_clm refuses its overrides. From scratch they pass."""
    groups = {
        "pretrain": pretraining.ARGUMENT_GROUPS,
        "finetune_sentiment": sentiment.ARGUMENT_GROUPS,
        "birthplace finetune": subcommand_groups("finetune", DEFAULT_PRESET),
    }
    for name, recipe in groups.items():
        with pytest.raises(UsageError, match=f"{flag[0]} describe a model built from scratch.*drop {flag[0]}"):
            parse_args(recipe, ["--model_name_or_path", "runs/lm", "--output_dir", "o", *flag])
        parsed = parse_args(recipe, ["--output_dir", "o", *flag])
        model_args = next(arguments for arguments in parsed if isinstance(arguments, ModelArguments))
        assert getattr(model_args, flag[0][2:]) == flag[1], name
