"""Every recipe command of the benchmark plan, in both profiles, parses with its recipe's own parser (each birthplace
subcommand takes only its own flags), without training anything."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from transformers import TrainingArguments

from hf_models.tasks import pretraining, sentiment
from hf_models.tasks.birthplace import DEFAULT_PRESET
from hf_models.tasks.birthplace_arguments import BirthplaceArguments, subcommand_groups
from hf_models.textio import UsageError
from hf_models.training import ModelArguments, build_parser, parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import plan  # noqa: E402

PATHS = plan.Paths(data_root="../shared/data", out="outputs/bench", python="python")


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


@pytest.mark.parametrize("profile", sorted(plan.PROFILES))
def test_every_plan_command_parses_for_its_recipe(profile) -> None:
    commands = _recipe_commands(profile)
    subcommands = {name.split("_")[-1] for name, _, _ in commands if name.startswith("bp_")}
    assert len(commands) > 20 and {"pretrain", "finetune"} <= subcommands
    for name, groups, arguments in commands:
        # The flags only (no TrainingArguments.__post_init__: the GPU profile's --bf16 needs a GPU to be checked).
        flags = build_parser(groups).parse_args_into_dataclasses(args=arguments, look_for_args_file=False)
        given = {argument[2:] for argument in arguments if argument.startswith("--")}
        parsed = {field for group in flags for field in vars(group)}
        assert given <= parsed, (name, sorted(given - parsed))


def test_the_cpu_profile_parses_into_the_recipes_arguments() -> None:
    """The CPU profile's commands give the real dataclasses, with the plan's values."""
    for name, groups, arguments in _recipe_commands("cpu"):
        task_args, _, training_args = parse_args(groups, arguments)
        assert isinstance(training_args, TrainingArguments) and training_args.use_cpu, name
        assert training_args.output_dir == arguments[arguments.index("--output_dir") + 1], name
        if name == "bp_vanilla_pretrain":
            assert isinstance(task_args, BirthplaceArguments)
            assert (task_args.pretraining_objective, task_args.pretrain_with_qa) == ("openings", True)
            assert training_args.num_train_epochs == plan.PROFILES["cpu"].birthplace.pretrain_epochs


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
            batches = plan.batches(steps, plan.PROFILES[profile].side_by_side)
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
                    "--save_linear_probe" in step.command
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
        batches = plan.batches(steps, plan.PROFILES[profile].side_by_side)
        trainings = [f"bp_{model}_pretrain" for model in plan.PROFILES[profile].birthplace.models]
        assert [step.name for step in batches[3]] == [*trainings, "bp_nopretrain_finetune"]  # after the tokenizer
        assert len(batches) == 3 + 3 + 2  # data, London, tokenizer; three stages; two figures
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

    def step(name: str, group: str | None) -> plan.Step:
        script = (
            f"import os; open({str(tmp_path / name)!r}, 'w').write(os.environ['OMP_NUM_THREADS'] + ' ' + "
            "os.environ['TOKENIZERS_PARALLELISM'])"
        )
        return plan.Step(name, (sys.executable, "-c", script), timed=False, group=group)

    steps = [step("alone", None), *(step(name, "pair") for name in "abc"), step("after", "other")]
    failed: list[str] = []
    env = {"OMP_NUM_THREADS": "2", "TOKENIZERS_PARALLELISM": "false"}
    plan.run_pipeline("cpu", steps, tmp_path, env, failed, ("pair",), threads=2)
    threads = {name: (tmp_path / name).read_text() for name in ("alone", "a", "b", "c", "after")}
    alone, shared = "2 true", "1 false"
    assert failed == [] and threads == {"alone": alone, "a": shared, "b": shared, "c": shared, "after": alone}


def _waiting_step(name: str, mine: Path, other: Path, code: int = 0) -> plan.Step:
    """A step that writes its file, then waits (at most 20 s) for the other's: both end only if they run together."""
    script = (
        f"import pathlib, sys, time; pathlib.Path({str(mine)!r}).touch()\n"
        f"for _ in range(200):\n    if pathlib.Path({str(other)!r}).exists(): sys.exit({code})\n    time.sleep(0.1)\n"
        "sys.exit(3)"
    )
    return plan.Step(name, (sys.executable, "-c", script), timed=False, group="pair")


def test_a_group_runs_together_and_its_failure_stops_the_pipeline(tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    after = plan.Step("after", (sys.executable, "-c", f"open({str(tmp_path / 'after')!r}, 'w')"), timed=False)
    failed: list[str] = []
    plan.run_pipeline("pair", [_waiting_step("a", a, b), _waiting_step("b", b, a), after], tmp_path, {}, failed, True)
    assert failed == [] and (tmp_path / "after").exists()

    for path in (a, b, tmp_path / "after"):
        path.unlink()
    steps = [_waiting_step("a", a, b), _waiting_step("b", b, a, code=1), after]
    plan.run_pipeline("pair", steps, tmp_path, {}, failed, True)
    assert failed == ["pair"] and not (tmp_path / "after").exists()  # one failed step of the group stops the rest
    assert "FAILED: b" in (tmp_path / "pair_run.log").read_text()


def test_a_run_of_one_pipeline_keeps_the_other_pipelines_timings(tmp_path) -> None:
    steps = plan.plan("cpu", PATHS)
    sentiment_step, birthplace_step = steps["sentiment"][-1].name, steps["birthplace"][0].name
    (tmp_path / "timings.tsv").write_text(f"{sentiment_step}\t60\tcmd\n{birthplace_step}\t9\told\n", encoding="utf-8")
    plan.forget_timings(tmp_path, steps["birthplace"])
    assert (tmp_path / "timings.tsv").read_text(encoding="utf-8") == f"{sentiment_step}\t60\tcmd\n"


def test_resume_keeps_the_steps_finished_with_the_same_command(tmp_path) -> None:
    steps = plan.plan("cpu", PATHS)["sentiment"]
    tokenizer, pretrain, domain = (
        next(step for step in steps if step.name == name) for name in ("se_tokenizer", "se_pretrain", "se_domain")
    )
    (tmp_path / "timings.tsv").write_text(
        f"se_tokenizer\t20\t{' '.join(tokenizer.command)}\n"
        f"se_pretrain\t900\t{' '.join(pretrain.command)}\n"
        f"se_domain\t60\t{' '.join(domain.command)} --learning_rate 1e-2\n",  # run with another command: not kept
        encoding="utf-8",
    )
    assert plan.finished_steps(tmp_path, steps) == {"se_tokenizer", "se_pretrain"}
    assert plan.finished_steps(tmp_path, steps, rerun=("se_pre*",)) == {"se_tokenizer"}  # the code changed
    assert plan.finished_steps(tmp_path / "elsewhere", steps) == set()


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


def test_steps_import_hf_models_from_the_plans_own_tree(tmp_path, monkeypatch) -> None:
    # A script run from its own folder, as a worktree's recipes are: PYTHONPATH decides where hf_models comes from,
    # and this tree's goes before any other on it.
    other, scripts = tmp_path / "other", tmp_path / "recipes"
    (other / "hf_models").mkdir(parents=True)
    (other / "hf_models" / "__init__.py").write_text("raise ImportError('the other tree')\n", encoding="utf-8")
    scripts.mkdir()
    (scripts / "where.py").write_text("import hf_models; print(hf_models.__file__)\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(other))
    env = plan.step_environment(OMP_NUM_THREADS="2")
    assert env["PYTHONPATH"].split(os.pathsep) == [str(plan.REPO_ROOT), str(other)]
    assert env["OMP_NUM_THREADS"] == "2" and env["HF_HUB_OFFLINE"] == "1"
    assert env["MALLOC_MMAP_MAX_"] == "0" and int(env["MALLOC_TRIM_THRESHOLD_"]) >= 1 << 30  # freed memory stays
    monkeypatch.setenv("MALLOC_MMAP_MAX_", "65536")
    assert plan.step_environment()["MALLOC_MMAP_MAX_"] == "65536"  # the caller's setting wins
    run = subprocess.run(
        [sys.executable, str(scripts / "where.py")], env=env, capture_output=True, text=True, check=True
    )
    assert Path(run.stdout.strip()) == plan.REPO_ROOT / "hf_models" / "__init__.py"


def test_the_profile_sampling_reaches_every_birthplace_training(monkeypatch) -> None:
    """The profile's `sampling` reaches every birthplace training, and nothing else; "random" adds no flag."""
    cpu = plan.PROFILES["cpu"]
    monkeypatch.setitem(plan.PROFILES, "random", replace(cpu, birthplace=replace(cpu.birthplace, sampling="random")))
    for profile, expected in (("cpu", "group_by_length"), ("gpu", "group_by_length"), ("random", None)):
        steps = [step for pipeline in plan.plan(profile, PATHS).values() for step in pipeline]
        trainings = [s for s in steps if s.name.endswith(("_pretrain", "_finetune")) and s.name.startswith("bp_")]
        assert len(trainings) == len(plan.PROFILES[profile].birthplace.models) * 2 + 1
        assert {_flag(step.command, "--train_sampling_strategy") for step in trainings} == {expected}
        others = [step for step in steps if step not in trainings]
        assert all("--train_sampling_strategy" not in step.command for step in others)


def test_a_pool_step_waits_for_what_it_reads_and_no_longer() -> None:
    """In the birthplace pool, each score and finetuning waits for the training that made its model, and for
    nothing else: a model's evaluations do not wait for another model's training."""
    for profile in ("cpu", "gpu"):
        steps = plan.plan(profile, PATHS)["birthplace"]
        pool = next(pool for pool in plan.pools(steps, plan.PROFILES[profile].side_by_side) if len(pool) > 1)
        assert pool[0].name == f"bp_{plan.PROFILES[profile].birthplace.models[0]}_pretrain"
        needs = plan.step_dependencies(pool)
        for model in plan.PROFILES[profile].birthplace.models:
            assert needs[f"bp_{model}_pretrain"] == set()
            assert needs[f"bp_{model}_finetune"] == needs[f"bp_{model}_probe"] == {f"bp_{model}_pretrain"}
            assert needs[f"bp_{model}_pretrain_eval_dev"] == {f"bp_{model}_pretrain"}
            assert needs[f"bp_{model}_eval_test"] == {f"bp_{model}_finetune"}
        assert needs["bp_nopretrain_eval_dev"] == {"bp_nopretrain_finetune"}


def _step_after(name: str, tmp_path: Path, group: str, reads: str | None = None) -> plan.Step:
    """A step of `group` that records when it starts and ends, and reads the folder of the step named `reads`."""
    script = (
        f"import pathlib, time; d = pathlib.Path({str(tmp_path)!r}); (d / '{name}.start').touch()\n"
        f"time.sleep(3.0 if {name!r} == 'slow' else 0.1); (d / '{name}.end').touch()"
    )
    source = ("--model_name_or_path", str(tmp_path / reads)) if reads else ()
    command = (sys.executable, "-c", script, *source, "--output_dir", str(tmp_path / name))
    return plan.Step(name, command, timed=False, group=group)


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
    plan.run_pipeline("pool", steps, tmp_path, {}, failed, True, threads=2)
    times = {path.name: path.stat().st_mtime for path in tmp_path.glob("*.*") if path.suffix in (".start", ".end")}
    assert failed == [] and len(times) == 8
    assert times["fast.end"] <= times["reads_fast.start"] < times["slow.end"]  # did not wait for the slow step
    assert times["slow.end"] <= times["reads_slow.start"]


def test_a_pipeline_starts_beside_the_rest_of_the_one_it_reads_once_its_step_is_done(tmp_path, monkeypatch) -> None:
    """On a GPU machine `sentiment_lab` needs only `sentiment`'s review stage: it starts once that step has ended,
    while `sentiment`'s finetunings still run; if the step fails, it does not run; resumed past the step, at once."""
    for profile in plan.PROFILES:  # every plan has the step the lab's rows wait for
        assert plan.PIPELINE_STARTS_AFTER["sentiment_lab"] in [
            step.name for step in plan.plan(profile, PATHS)["sentiment"]
        ]
    monkeypatch.setattr(plan, "PIPELINE_NEEDS", {"reader": "maker"})
    monkeypatch.setattr(plan, "PIPELINE_STARTS_AFTER", {"reader": "made"})

    def step(name: str, seconds: float = 0.1, code: int = 0) -> plan.Step:
        script = (
            f"import pathlib, sys, time; d = pathlib.Path({str(tmp_path)!r}); (d / '{name}.start').touch()\n"
            f"time.sleep({seconds}); (d / '{name}.end').touch(); sys.exit({code})"
        )
        return plan.Step(name, (sys.executable, "-c", script), timed=False)

    def run(maker: list[plan.Step]) -> tuple[list[str], dict[str, float]]:
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


def test_answers_from_the_recitation_reach_every_training_of_a_reciting_model(monkeypatch) -> None:
    """`BirthplaceProfile.answer_from_recitation` puts `--answer_from_recitation` in the trainings (pretraining and
    finetuning) of the reciting models, which keep it in their run records, and in no other step: `evaluate` reads
    how a model answers there."""
    for profile in ("cpu", "gpu"):
        base = plan.PROFILES[profile]
        for spans in (False, True):
            monkeypatch.setitem(
                plan.PROFILES, "x", replace(base, birthplace=replace(base.birthplace, answer_from_recitation=spans))
            )
            steps = plan.plan("x", PATHS)["birthplace"]
            reciting_trainings = {
                step.name
                for step in steps
                if step.name.endswith(("_pretrain", "_finetune")) and "--recite_tokens" in step.command
            }
            assert len(reciting_trainings) == 2 * sum(model.endswith("_recite") for model in base.birthplace.models)
            with_flag = {step.name for step in steps if "--answer_from_recitation" in step.command}
            assert with_flag == (reciting_trainings if spans else set())
            evaluations = [step for step in steps if "evaluate" in step.command]
            assert evaluations and not any("--recite_tokens" in step.command for step in evaluations)


def test_the_profile_length_buckets_reach_every_sentiment_finetuning(monkeypatch) -> None:
    """`SentimentProfile.length_buckets` puts `--length_buckets` in every finetuning of the profile, and nowhere else."""
    for profile in ("cpu", "gpu"):
        base = plan.PROFILES[profile]
        for buckets in (False, True):
            monkeypatch.setitem(
                plan.PROFILES, "x", replace(base, sentiment=replace(base.sentiment, length_buckets=buckets))
            )
            steps = [step for pipeline in ("sentiment", "sentiment_lab") for step in plan.plan("x", PATHS)[pipeline]]
            finetunings = [step for step in steps if "recipes/finetune_sentiment.py" in step.command]
            assert len(finetunings) == 5 * len(base.sentiment.seeds)
            assert all(("--length_buckets" in step.command) == buckets for step in finetunings)
            assert all("--length_buckets" not in step.command for step in steps if step not in finetunings)


def test_the_profile_lm_block_size_reaches_both_lm_stages_alone(monkeypatch) -> None:
    """`SentimentProfile.lm_block_size` is the `--block_size` of the LM and of the review stage; no finetuning reads it
    (they cut reviews at `--max_seq_length`)."""
    base = plan.PROFILES["cpu"]
    for tokens in (128, 256):
        monkeypatch.setitem(plan.PROFILES, "x", replace(base, sentiment=replace(base.sentiment, lm_block_size=tokens)))
        steps = [step for pipeline in ("sentiment", "sentiment_lab") for step in plan.plan("x", PATHS)[pipeline]]
        with_block = {
            step.name: _flag(step.command, "--block_size") for step in steps if "--block_size" in step.command
        }
        assert with_block == {"se_pretrain": str(tokens), "se_domain": str(tokens)}
        for step in steps:
            if step.name in with_block:
                parsed = parse_args(pretraining.ARGUMENT_GROUPS, list(step.command[2:]))
                assert [a.block_size for a in parsed if hasattr(a, "block_size")] == [tokens]


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
