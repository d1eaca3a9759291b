"""The profiles (benchmarks/profiles/*.yaml, read by benchmarks/grid.py) and their config files: every config file
under configs/ parses with the recipe it is meant for and names only its flags; every recipe command of every profile
reads its profile's config file and parses with its recipe's own parser (each birthplace subcommand takes only its own
flags), without training anything; every step reads only what an earlier step makes, and waits for it."""

from __future__ import annotations

import json
from pathlib import Path

import grid
import pytest
from transformers import TrainingArguments

from hf_models.tasks import pretraining, sentiment
from hf_models.tasks.birthplace import DEFAULT_PRESET, SUBCOMMANDS, BirthplaceArguments, subcommand_groups
from hf_models.textio import UsageError
from hf_models.training import ModelArguments, build_parser, expand_arguments_file, parse_args

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIGS = REPO_ROOT / "configs"  # also where the course recipes read their defaults from


def _commands(profile: str) -> dict[str, tuple[str, ...]]:
    """Every step's command, as `make bench` would run it (data under data/, outputs under outputs/bench)."""
    return {step.name: step.command("python", "outputs/bench", "data") for step in grid.load(profile).steps.values()}


def _recipe_commands(profile: str) -> list[tuple[str, tuple, list[str]]]:
    """(step name, the recipe's flag groups, its arguments) of every recipe step of a profile."""
    commands = []
    for name, command in _commands(profile).items():
        script, arguments = command[1], list(command[2:])
        if script == "recipes/birthplace.py":
            commands.append((name, subcommand_groups(arguments[0], DEFAULT_PRESET, CONFIGS), arguments[1:]))
        elif script == "recipes/pretrain.py":
            commands.append((name, pretraining.ARGUMENT_GROUPS, arguments))
        elif script == "recipes/finetune_sentiment.py":
            commands.append((name, sentiment.argument_groups(CONFIGS), arguments))
    return commands


def expanded(command: tuple[str, ...]) -> tuple[str, ...]:
    """A step's command with the values of its config file written out as flags (`--flag value`; a true flag
    alone), as if typed: what the tests of a profile's settings read."""
    result = []
    for argument in command:
        if not (argument.startswith("configs/") and argument.endswith(".json")):
            result.append(argument)
            continue
        for key, value in json.loads((REPO_ROOT / argument).read_text(encoding="utf-8")).items():
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
        return (subcommand_groups(subcommand, DEFAULT_PRESET, CONFIGS),)
    return (pretraining.ARGUMENT_GROUPS if stem.startswith("lm") else sentiment.argument_groups(CONFIGS),)


# The courses' config files (configs/demo/ holds `make demo`'s settings: tests/test_demo.py reads them).
CONFIG_FILES = sorted(path for course in ("cs224n", "altegrad") for path in (CONFIGS / course).rglob("*.json"))


@pytest.mark.parametrize("path", CONFIG_FILES, ids=[str(p.relative_to(CONFIGS)) for p in CONFIG_FILES])
def test_every_config_file_parses_with_its_recipe(path) -> None:
    """Each file names only flags of its command line (an unknown key is a UsageError naming it) with values the
    flags take, and holds no machine's path; a recipe's file without --bf16 gives the recipe's real dataclasses,
    their own checks run."""
    values = json.loads(path.read_text(encoding="utf-8"))
    assert not {"output_dir", "data_dir", "model_name_or_path", "tokenizer_name_or_path", "train_files"} & set(values)
    relative, recipe = str(path.relative_to(REPO_ROOT)), _config_recipe(path)
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


def test_every_config_file_is_a_step_of_a_profile_and_every_step_reads_its_profiles() -> None:
    """No config file is left over, and each recipe step of a profile reads a config file of that profile's folder:
    the hyperparameters are in configs/ and nowhere else."""
    used = set()
    for name in grid.names():
        folders = set(grid.load(name).configs.values())
        for step in grid.load(name).steps.values():
            configs = [arg for arg in step.arguments if arg.startswith("configs/")]
            used.update(configs)
            if step.arguments[0].startswith(("recipes/", "tokenizer/")) and "birthplace-tune" not in step.arguments:
                assert len(configs) == 1 and str(Path(configs[0]).parent) in folders, (name, step.name)
    assert {str(path.relative_to(REPO_ROOT)) for path in CONFIG_FILES} == used


@pytest.mark.parametrize("profile", grid.names())
def test_every_command_parses_for_its_recipe(profile) -> None:
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
    """The CPU profile's commands give the real dataclasses, with the config files' values and the run's paths."""
    for name, groups, arguments in _recipe_commands("cpu"):
        task_args, model_args, training_args = parse_args(groups, arguments)
        assert isinstance(training_args, TrainingArguments) and training_args.use_cpu, name
        assert training_args.output_dir == arguments[arguments.index("--output_dir") + 1], name
        if name == "bp_vanilla_recite_pretrain":
            assert isinstance(task_args, BirthplaceArguments)
            assert (task_args.pretraining_objective, task_args.pretrain_with_qa) == ("openings", True)
            attention = model_args.attention_type
            assert (attention, task_args.recite_tokens, training_args.num_train_epochs) == ("vanilla", 40, 17)


def test_a_reciting_model_recites_its_opening_in_its_trainings() -> None:
    """`--recite_tokens`, equal to the pretraining's `--opening_tokens`, and `--answer_from_recitation` reach the
    trainings of a reciting model (their run records keep them); its scores read them there, and no other model
    recites."""
    for profile in ("cpu", "gpu"):
        steps = {
            name: command for name, command in _commands(profile).items() if command[1] == "recipes/birthplace.py"
        }
        for name, step_command in steps.items():
            command = expanded(step_command)
            model = name[3:].split("_pretrain")[0].split("_finetune")[0].split("_eval")[0]
            recites = model.endswith("_recite")
            pretrain = steps.get(f"bp_{model}_pretrain")
            training = recites and "_eval_" not in name
            opening = _flag(expanded(pretrain), "--opening_tokens") if training else None
            assert _flag(command, "--recite_tokens") == opening, name
            assert ("--answer_from_recitation" in command) == training, name


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


def test_steps_of_a_side_by_side_group_share_the_cpu_and_every_step_on_a_gpu_has_one() -> None:
    """On the CPU (2 cores) the birthplace stages run side by side, one core each, and a sentiment finetuning alone
    has both (two runs on one core each do more than one on both; one finetuning is faster on both); on a GPU
    machine every step has one core."""
    for name in ("cpu", "course-cut"):
        profile = grid.load(name)
        threads = {step.name: profile.threads(step) for step in profile.steps.values()}
        assert threads["bp_vanilla_finetune_eval_dev" if name == "course-cut" else "bp_vanilla_recite_pretrain"] == 1
        assert threads["se_pretrain"] == threads["se_scratch_seed42"] == profile.cores == 2
    for name in ("gpu", "course"):
        assert {grid.load(name).threads(step) for step in grid.load(name).steps.values()} == {1}


@pytest.mark.parametrize("profile", grid.names())
def test_every_step_reads_only_folders_that_the_steps_it_waits_for_make(profile) -> None:
    """A model, a tokenizer or a data folder a step reads is the output of a step it waits for (Snakemake runs it
    after them, and again after they change); the sentiment rows read what the profile's steps write."""
    steps = grid.load(profile).steps
    for step in steps.values():
        command = step.command("python", "OUT", "DATA")
        made = {f"OUT/{steps[name].folder}" for name in step.reads}
        for flag in ("--model_name_or_path", "--tokenizer_name_or_path", "--train_files", "--files"):
            source = _flag(command, flag)
            if source is not None and source.startswith("OUT/"):
                assert any(source == folder or source.startswith(f"{folder}/") for folder in made), (step.name, flag)
    folders = {step.folder for step in steps.values()}
    for row in grid.load(profile).rows["sentiment"]:
        assert all(run.removesuffix("/linear_probe") in folders for run in row.runs), row.key
        assert set(row.steps) <= set(steps)


def test_a_profile_that_names_what_it_lacks_is_refused_with_its_file(tmp_path, monkeypatch) -> None:
    """A step reading a step not made before it, or a placeholder of no list, is refused naming the file and step;
    so is an unknown profile."""
    cases = [
        ("{name: a, run: x.py, args: --model_name_or_path @b}", "step a: @b names no earlier step"),
        ('{name: "a_{size}", run: x.py}', "no list or value named {size}"),
    ]
    for step, message in cases:
        (tmp_path / "bad.yaml").write_text(
            "suffix: _bad\ntitle: {}\ncolumn: x\ngpu: false\ncores: 1\nside_by_side: all\nthroughput: []\n"
            f"predictions: p\nconfigs: {{}}\nlists: {{}}\npipelines: {{p: {{steps: [{step}]}}}}\n"
        )
        monkeypatch.setattr(grid, "PROFILES_DIR", tmp_path)
        grid.load.cache_clear()
        with pytest.raises(grid.ProfileError, match=f"benchmarks/profiles/bad.yaml: .*{message}"):
            grid.load("bad")
    with pytest.raises(grid.ProfileError, match="unknown profile 'nope'"):
        grid.load("nope")
    grid.load.cache_clear()


def _flag(command: tuple[str, ...], flag: str) -> str | None:
    return command[command.index(flag) + 1] if flag in command else None


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
        "finetune_sentiment": sentiment.argument_groups(CONFIGS),
        "birthplace finetune": subcommand_groups("finetune", DEFAULT_PRESET, CONFIGS),
    }
    for name, recipe in groups.items():
        with pytest.raises(UsageError, match=f"{flag[0]} describe a model built from scratch.*drop {flag[0]}"):
            parse_args(recipe, ["--model_name_or_path", "runs/lm", "--output_dir", "o", *flag])
        parsed = parse_args(recipe, ["--output_dir", "o", *flag])
        model_args = next(arguments for arguments in parsed if isinstance(arguments, ModelArguments))
        assert getattr(model_args, flag[0][2:]) == flag[1], name
