"""Every command line's `--help` reads well: it exits with status 0, fits a screen (120 lines of 80 columns), its
first group of flags is the command's own (a recipe's before the few Trainer flags it sets: `--help_trainer` lists
them all, and every one still parses), every flag has a help text, the defaults are shown (Trainer's own, or a course
recipe's: its handout's, read from the course's config file and said so), and the examples print as written; `-h`
imports neither datasets nor Trainer."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from transformers import TrainingArguments

from hf_models.tasks import birthplace, pretraining, sentiment
from hf_models.tasks.birthplace import EVALUATE_TRAINER_TITLE, subcommand_groups
from hf_models.training import TRAINER_TITLE, build_parser, parse_args
from hf_models.training.arguments import HANDOUT_FLAGS

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIGS = REPO_ROOT / "configs"  # what the course recipes read their defaults from
SCREEN_LINES = 120

# command (a script, or -m MODULE), its arguments before -h, and the title of its first group of flags.
COMMANDS = [
    ("recipes/pretrain.py", [], "Pretraining arguments"),
    ("recipes/finetune_sentiment.py", [], "Sentiment arguments"),
    ("recipes/birthplace.py", [], "subcommands (each has its own -h)"),
    ("recipes/birthplace.py", ["pretrain"], "Birthplace arguments (pretrain)"),
    ("recipes/birthplace.py", ["finetune"], "Birthplace arguments (finetune)"),
    ("recipes/birthplace.py", ["evaluate"], "Birthplace arguments (evaluate)"),
    ("recipes/demo.py", [], "options"),
    ("recipes/app.py", [], "positional arguments"),
    ("tokenizer/train_tokenizer.py", [], "options"),
    ("-m hf_models.convert", [], "positional arguments"),
    ("-m hf_models.tokenization.courses", [], "positional arguments"),
    ("push_to_hub.py", [], "positional arguments"),
    ("benchmarks/grid.py", [], "positional arguments"),
    ("recipes/prepare_data.py", [], "positional arguments"),
    ("benchmarks/probe_facts.py", [], "options"),
    ("benchmarks/tfidf_baseline.py", [], "options"),
    ("benchmarks/plot_birthplace.py", [], "options"),
    ("benchmarks/plot_sentiment.py", [], "options"),
    ("benchmarks/plot_label_curve.py", [], "options"),
    ("benchmarks/write_results.py", [], "options"),
    ("benchmarks/throughput.py", [], "options"),
    ("benchmarks/help_speed.py", [], "options"),
    ("docs/check_readme.py", [], "options"),
]
RECIPE_FIELDS = {  # the birthplace subcommands take only their own flags
    "pretrain": {"--pretraining_objective", "--augment", "--attention_type", "--model_config"},
    "finetune": {"--attention_type", "--model_config"},
    "evaluate": {"--london_baseline", "--eval_split", "--max_new_tokens"},
}


def _run_help(
    command: str, arguments: list[str], monkeypatch, help_flag: str = "-h"
) -> tuple[int, str, list[argparse.ArgumentParser]]:
    """Run `command arguments -h` (or another `help_flag`) in this process (imports are shared, so it is quick): its
    exit status, its output and the parsers that printed help."""
    printed: list[argparse.ArgumentParser] = []
    print_help = argparse.ArgumentParser.print_help

    def recording_print_help(parser, file=None):
        printed.append(parser)
        print_help(parser, file)

    monkeypatch.setattr(argparse.ArgumentParser, "print_help", recording_print_help)
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks"))  # the benchmark scripts import each other
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps to the terminal's width: a screen of 80 columns
    output, status = io.StringIO(), 0
    with contextlib.redirect_stdout(output):
        try:
            if command.startswith("-m "):
                module = command.removeprefix("-m ")
                monkeypatch.setattr(sys, "argv", [module, *arguments, help_flag])
                with pytest.MonkeyPatch.context() as patch:
                    patch.delitem(sys.modules, module, raising=False)  # runpy runs a fresh copy as __main__
                    runpy.run_module(module, run_name="__main__")
            else:
                monkeypatch.setattr(sys, "argv", [command, *arguments, help_flag])
                runpy.run_path(str(REPO_ROOT / command), run_name="__main__")
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return status, output.getvalue(), printed


def _groups(parser: argparse.ArgumentParser) -> list[argparse._ArgumentGroup]:
    """The parser's groups that hold flags or positionals other than -h, in the order --help prints them."""
    return [
        group
        for group in parser._action_groups
        if any(not isinstance(a, argparse._HelpAction) for a in group._group_actions)
    ]


def _with_a_default(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The flags shown with a default worth showing (not a switch's, off, nor None or nothing), whose help text does
    not say it in words of its own."""
    return [
        action
        for action in parser._actions
        if action.option_strings
        and action.help not in (None, argparse.SUPPRESS)
        and "default" not in action.help.lower()
        and action.default not in (None, False, "", [], argparse.SUPPRESS)
    ]


def _written_examples(command: str, arguments: list[str] = ()) -> list[str]:
    """The example lines of the command's docstring as they are written in its file (indented `python ...` lines
    and their continuation lines); for a birthplace subcommand, its own commands only."""
    if arguments:
        commands = ("\n" + "\n".join(_written_examples(command))).split("\n    python ")
        own = [c for c in commands if c.startswith(f"recipes/birthplace.py {arguments[0]} ")]
        return ("\n".join(f"    python {c}" for c in own)).splitlines()
    if command.startswith("-m "):
        module = REPO_ROOT / command.removeprefix("-m ").replace(".", "/")
        path = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")  # a package's docstring
    else:
        path = REPO_ROOT / command
    text = path.read_text(encoding="utf-8")
    match = re.search(r'^r?"""(.*?)"""', text.split("\n", 1)[1] if text.startswith("#!") else text, re.S | re.M)
    docstring = match.group(1) if match else ""
    return [line.rstrip() for line in docstring.splitlines() if re.match(r"\s{4}(python|    --|\s+--)", line)]


@pytest.mark.parametrize(("command", "arguments", "first_group"), COMMANDS, ids=lambda v: str(v) if v else "")
def test_help_exits_0_with_its_own_flags_first(command, arguments, first_group, monkeypatch) -> None:
    status, output, printed = _run_help(command, arguments, monkeypatch)
    assert status == 0, output
    assert printed, f"{command} -h printed no help"
    parser = printed[-1]
    groups = _groups(parser)
    assert groups[0].title == first_group, [group.title for group in groups]
    assert len(output.splitlines()) <= SCREEN_LINES, f"{command} -h: {len(output.splitlines())} lines"
    trainer_fields = {spec.name for spec in dataclasses.fields(TrainingArguments)}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            assert all(choice.help for choice in action._choices_actions)
        elif action.help == argparse.SUPPRESS:  # a Trainer flag left to --help_trainer
            assert action.dest in trainer_fields and "--help_trainer" in output, f"{command}: {action.option_strings}"
        elif not isinstance(action, argparse._HelpAction) and action.option_strings:
            assert action.help, f"{command}: {action.option_strings} has no help"
            assert action.option_strings[0] in output, f"{command} -h does not list {action.option_strings[0]}"
    flat = " ".join(output.split())  # the help texts as one line: a default may be wrapped
    for action in _with_a_default(parser):
        assert f"(default: {action.default})" in flat, f"{command} -h does not show the default of {action.dest}"
    assert issubclass(parser.formatter_class, argparse.ArgumentDefaultsHelpFormatter), command
    if parser.epilog or "\n" in (parser.description or ""):
        assert issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter), command
    for line in _written_examples(command, arguments):
        assert line in output.splitlines(), f"{command} -h does not print this example line as written:\n{line}"
    if command.startswith("recipes/") and groups[0].title.startswith(("Pretraining", "Sentiment", "Birthplace")):
        titles = [group.title for group in groups]
        trainer = EVALUATE_TRAINER_TITLE if arguments == ["evaluate"] else TRAINER_TITLE  # evaluate: the few it reads
        assert titles[-1].startswith(trainer[:-1]) and titles.index("Model arguments") < len(titles) - 1


def test_birthplace_help_lists_the_subcommands(monkeypatch) -> None:
    status, output, _ = _run_help("recipes/birthplace.py", [], monkeypatch)
    assert status == 0
    assert all(re.search(rf"^\s+{name}\s", output, re.M) for name in ("pretrain", "finetune", "evaluate"))


@pytest.mark.parametrize("subcommand", sorted(RECIPE_FIELDS))
def test_each_birthplace_subcommand_takes_only_its_own_flags(subcommand, monkeypatch) -> None:
    _, _, printed = _run_help("recipes/birthplace.py", [subcommand], monkeypatch)
    flags = {option for action in printed[-1]._actions for option in action.option_strings}
    others = set().union(*(fields for name, fields in RECIPE_FIELDS.items() if name != subcommand))
    assert RECIPE_FIELDS[subcommand] <= flags
    assert not (others - RECIPE_FIELDS[subcommand]) & flags, sorted((others - RECIPE_FIELDS[subcommand]) & flags)
    training = {"--learning_rate", "--num_train_epochs", "--report_to", "--save_strategy"}
    assert bool(training & flags) == (subcommand != "evaluate")  # evaluate trains nothing
    assert {"--output_dir", "--per_device_eval_batch_size", "--seed", "--use_cpu"} <= flags
    help_of = {action.dest: action.help for action in printed[-1]._actions}
    if "model_config" in help_of:
        assert "Default: cs224n-mingpt." in help_of["model_config"]


RECIPES = {  # the recipes with Trainer flags: their groups, and their command lines
    "pretrain": (pretraining.ARGUMENT_GROUPS, "recipes/pretrain.py", []),
    "finetune_sentiment": (sentiment.argument_groups(CONFIGS), "recipes/finetune_sentiment.py", []),
    "birthplace pretrain": (
        subcommand_groups("pretrain", birthplace.DEFAULT_PRESET, CONFIGS),
        "recipes/birthplace.py",
        ["pretrain"],
    ),
    "birthplace finetune": (
        subcommand_groups("finetune", birthplace.DEFAULT_PRESET, CONFIGS),
        "recipes/birthplace.py",
        ["finetune"],
    ),
}


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_help_trainer_lists_every_trainer_flag(recipe, monkeypatch) -> None:
    _, command, arguments = RECIPES[recipe]
    _, short, _ = _run_help(command, arguments, monkeypatch)
    status, output, _ = _run_help(command, arguments, monkeypatch, help_flag="--help_trainer")
    assert status == 0
    assert "--optim " not in short and "--adam_beta1" not in short
    for flag in ("--optim", "--adam_beta1", "--save_total_limit", "--learning_rate", "--model_name_or_path"):
        assert re.search(rf"^\s+{flag}\b", output, re.M), f"{recipe} --help_trainer does not list {flag}"


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_a_trainer_flag_left_out_of_help_still_parses(recipe, tmp_path) -> None:
    groups, _, _ = RECIPES[recipe]
    given = ["--train_files", "f"] if recipe == "pretrain" else ["--data_dir", "d"]
    flags = [*given, "--output_dir", "o", "--use_cpu", "--optim", "adafactor", "--adam_beta1", "0.8"]
    *_, training_args = parse_args(groups, flags)
    assert (training_args.optim, training_args.adam_beta1) == ("adafactor", 0.8)
    arguments = tmp_path / "arguments.json"  # the same from a JSON file
    arguments.write_text('{"output_dir": "o", "use_cpu": true, "optim": "adafactor", "adam_beta1": 0.8}')
    *_, training_args = parse_args(groups, [str(arguments)])
    assert (training_args.optim, training_args.adam_beta1) == ("adafactor", 0.8)


# The course recipes and the config file of their handout's Trainer settings (pretrain.py keeps Trainer's, as run_clm.py).
COURSE_FILES = {
    "finetune_sentiment": ("the lab's", "configs/altegrad/course/pretrained.json"),
    "birthplace pretrain": ("the course's", "configs/cs224n/course/pretrain_vanilla.json"),
    "birthplace finetune": ("the course's", "configs/cs224n/course/finetune.json"),
}


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_a_default_is_trainers_own_or_the_course_files_and_help_says_which(recipe) -> None:
    """A Trainer flag's default is TrainingArguments' own, or, in a course recipe, the value of the course's config file
    (its help says whose, the group's title names the file); no help text gives a benchmark profile's value; and what
    -h shows is what a run without the flag gets."""
    groups, _, _ = RECIPES[recipe]
    parser = build_parser(groups)
    source, config = COURSE_FILES.get(recipe, (None, None))
    course = json.loads((REPO_ROOT / config).read_text(encoding="utf-8")) if config else {}
    trainer_defaults = {spec.name: spec.default for spec in dataclasses.fields(TrainingArguments)}
    *_, training_args = parse_args(groups, ["--output_dir", "o", "--use_cpu"])
    for action in parser._actions:
        assert "benchmark" not in (action.help or "") and "profile" not in (action.help or ""), action.help
        if action.dest not in trainer_defaults or action.help == argparse.SUPPRESS:
            continue
        expected = trainer_defaults[action.dest]
        expected = getattr(expected, "value", expected)
        if action.dest in course and action.dest in HANDOUT_FLAGS:
            value = course[action.dest]
            expected = json.dumps(value) if isinstance(value, dict) else value
            assert action.help.endswith(f"({source}).") and config in groups[-1].title, (recipe, action.dest)
        else:
            assert "the lab's" not in action.help and "the course's" not in action.help, (recipe, action.help)
        if isinstance(expected, int | float | str | bool) and action.default is not None:
            assert action.default == expected, (recipe, action.dest, action.default, expected)
            used = getattr(training_args, action.dest)
            used = getattr(used, "value", used)  # an enum: its value
            if action.dest not in ("lr_scheduler_kwargs", "use_cpu"):  # given above; a JSON string parsed
                assert used == action.default, (recipe, action.dest, used)
    if recipe == "finetune_sentiment":  # the lab's 15 epochs, said to be the lab's
        (epochs,) = [a for a in parser._actions if a.dest == "num_train_epochs"]
        assert (epochs.default, epochs.help.endswith("(the lab's).")) == (15, True)


@pytest.mark.parametrize("recipe", sorted(COURSE_FILES))
def test_a_task_flags_number_is_the_course_files_where_the_file_sets_it(recipe) -> None:
    """A course recipe's own numeric flags (not Trainer's) that its course file sets default to the file's value and
    say whose: not a benchmark profile's (finetune_sentiment's --max_seq_length once gave the cpu profile's 256, where
    the lab reads 512)."""
    groups, _, _ = RECIPES[recipe]
    source, config = COURSE_FILES[recipe]
    course = json.loads((REPO_ROOT / config).read_text(encoding="utf-8"))
    trainer_flags = {spec.name for spec in dataclasses.fields(TrainingArguments)}
    checked = []
    for action in build_parser(groups)._actions:
        value = course.get(action.dest)
        if action.dest in trainer_flags or action.default is None or isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            assert (action.default, source in action.help) == (value, True), (recipe, action.dest, action.help)
            checked.append(action.dest)
    assert checked or recipe.startswith("birthplace"), recipe  # the lab's review length is one


RECIPE_SCRIPTS = ["recipes/pretrain.py", "recipes/finetune_sentiment.py", "recipes/birthplace.py"]
HEAVY_MODULES = ("datasets", "transformers.trainer", "transformers.modeling_utils", "hf_models.small_encoder")


def test_the_tasks_name_the_model_classes_they_train_as_the_model_does() -> None:
    """The tasks name their model classes, and the poolings --classifier_pooling offers, without importing the model
    (the test above): each copy is the model's own."""
    import hf_models
    from hf_models.small_encoder.configuration_small_encoder import CLASSIFIER_POOLINGS

    assert sentiment.CLASSIFIER_POOLINGS == CLASSIFIER_POOLINGS
    names = [sentiment.CLASSIFIER, birthplace.CAUSAL_LM, *pretraining.ARCHITECTURES.values()]
    assert [getattr(hf_models, name).__name__ for name in names] == names


# Imports torch and transformers once (what any run imports first: help_speed.py's yardstick), then runs each
# command in a forked child and reports the heavy modules it imported and its exit status. A fork costs the command's
# own imports only, not a fresh interpreter's and torch's seconds again; where fork is missing, a fresh process each.
PROBE_SERVER = f"""
import json, os, runpy, sys
HEAVY = {HEAVY_MODULES!r}

def probe(argv, output):
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.argv = argv
    try:
        runpy.run_path(argv[0], run_name="__main__")
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    except BaseException as error:  # a traceback is no answer: the test shows it
        code = repr(error)
    sys.stdout.flush()
    sys.stderr.flush()
    return json.dumps({{"imported": sorted(name for name in HEAVY if name in sys.modules), "exit": code}})

answers = os.dup(1)
if sys.argv[1:] == ["fork"]:
    import torch, transformers
    for line in sys.stdin:
        read, write = os.pipe()
        if os.fork() == 0:
            try:
                os.write(write, probe(**json.loads(line)).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as answer:
            os.write(answers, ((answer.read() or "null") + "\\n").encode())
        os.wait()
else:
    os.write(answers, probe(**json.loads(sys.argv[1])).encode())
"""


def _probe_in_a_fresh_process(argv: list[str], output: Path) -> dict | None:
    command = [sys.executable, "-c", PROBE_SERVER, json.dumps({"argv": argv, "output": str(output)})]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout or "null")


@pytest.fixture(scope="module")
def probe_command():
    """probe(argv, output_file) -> (heavy modules imported, exit status, what the command printed)."""
    server = None
    if hasattr(os, "fork") and sys.platform == "linux":  # macOS may not fork a process that loaded its frameworks
        command = [sys.executable, "-c", PROBE_SERVER, "fork"]
        server = subprocess.Popen(command, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def probe(argv: list[str], output: Path) -> tuple[list[str], object, str]:
        if server is not None:
            server.stdin.write(json.dumps({"argv": argv, "output": str(output)}) + "\n")
            server.stdin.flush()
            answer = json.loads(server.stdout.readline() or "null")
        else:
            answer = _probe_in_a_fresh_process(argv, output)
        printed = output.read_text(errors="replace")[-3000:] if output.is_file() else ""
        assert answer is not None, f"the probe of {argv} died: {printed}"
        return answer["imported"], answer["exit"], printed

    yield probe
    if server is not None:
        server.stdin.close()
        server.wait(timeout=60)


def test_a_forked_probe_sees_what_a_fresh_process_sees(probe_command, tmp_path) -> None:
    """The fork starts from torch and transformers only: a refusal and a run that imports datasets are probed alike
    in a fresh interpreter (the way on a machine that cannot fork)."""
    script = tmp_path / "imports_datasets.py"
    script.write_text("import sys\nimport datasets\nsys.exit(3)\n", encoding="utf-8")
    for argv in ([RECIPE_SCRIPTS[0], "--no_such_flag", "1"], [str(script)]):
        forked = probe_command(argv, tmp_path / "forked.txt")
        fresh = _probe_in_a_fresh_process(argv, tmp_path / "fresh.txt")
        assert list(forked[:2]) == [fresh["imported"], fresh["exit"]], (argv, forked, fresh)
    assert fresh == {"imported": ["datasets"], "exit": 3}


@pytest.mark.parametrize(
    "arguments",
    [
        [RECIPE_SCRIPTS[0], "-h"],
        [RECIPE_SCRIPTS[1], "-h"],
        [RECIPE_SCRIPTS[2], "-h"],
        [RECIPE_SCRIPTS[2], "pretrain", "-h"],
        [RECIPE_SCRIPTS[2], "evaluate", "-h"],
        [RECIPE_SCRIPTS[1], "--learning_rate", "nan", "--data_dir", "d"],  # refused: out of range
        [RECIPE_SCRIPTS[0], "--no_such_flag", "1"],  # refused: unknown
        [RECIPE_SCRIPTS[1], "--model_name_or_path", "no/such/model", "--data_dir", "d", "--output_dir", "o"],  # path
        [RECIPE_SCRIPTS[1], "--from_scratch", "--data_dir", "docs", "--output_dir", "{used}"],  # refused: used
        [RECIPE_SCRIPTS[2], "finetune", "--variant", "vanilla"],  # refused: renamed
        ["push_to_hub.py", "-h"],
        ["push_to_hub.py", "runs/x", "--dry_run"],  # refused: no --local_dir
        ["recipes/app.py", "-h"],
        ["recipes/app.py", "--port", "x"],  # refused: not a number
        ["tokenizer/train_tokenizer.py", "-h"],
        ["tokenizer/train_tokenizer.py", "--files", "f", "--vocab_size", "0", "--output_dir", "o"],  # refused: range
    ],
    ids=" ".join,
)
def test_help_and_a_refused_flag_import_neither_datasets_nor_trainer_nor_the_model(
    arguments, tmp_path, probe_command
) -> None:
    """`-h` and a refused flag answer without importing datasets, transformers' Trainer or the model (whose modeling
    imports transformers' masks and losses): seconds of CPU each, beyond torch, which TrainingArguments imports and any
    run needs. They are imported once a recipe runs. (How long it takes is benchmarks/help_speed.py's to measure.)"""
    (tmp_path / "config.json").write_text("{}\n", encoding="utf-8")  # {used}: a folder an earlier run wrote
    arguments = [word.replace("{used}", str(tmp_path)) for word in arguments]
    imported, code, output = probe_command(arguments, tmp_path / "output.txt")
    assert imported == [], output
    assert code == (0 if arguments[-1] == "-h" else 2), output
