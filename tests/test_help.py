"""Every command line's `--help` reads well: it exits with status 0, its first group of flags is the command's own
(a recipe's before Trainer's), every flag has a help text, and the examples print as written."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import runpy
import sys
from pathlib import Path

import pytest

from hf_models.tasks.birthplace_arguments import EVALUATE_TRAINER_TITLE

REPO_ROOT = Path(__file__).resolve().parent.parent
TRAINER = "Trainer arguments (transformers.TrainingArguments: the usual Trainer flags)"

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
    ("benchmarks/plan.py", [], "positional arguments"),
    ("recipes/prepare_data.py", [], "positional arguments"),
    ("benchmarks/probe_facts.py", [], "options"),
    ("benchmarks/tfidf_baseline.py", [], "options"),
    ("benchmarks/plot_birthplace.py", [], "options"),
    ("benchmarks/plot_sentiment.py", [], "options"),
    ("benchmarks/plot_label_curve.py", [], "options"),
    ("benchmarks/write_results.py", [], "options"),
    ("benchmarks/throughput.py", [], "options"),
    ("docs/check_readme.py", [], "options"),
]
RECIPE_FIELDS = {  # the birthplace subcommands take only their own flags
    "pretrain": {"--pretraining_objective", "--augment", "--variant", "--model_config"},
    "finetune": {"--variant", "--model_config"},
    "evaluate": {"--london_baseline", "--eval_split", "--max_new_tokens"},
}


def _run_help(command: str, arguments: list[str], monkeypatch) -> tuple[int, str, list[argparse.ArgumentParser]]:
    """Run `command arguments -h` in this process (imports are shared, so it is quick): its exit status, its output
    and the parsers that printed help."""
    printed: list[argparse.ArgumentParser] = []
    print_help = argparse.ArgumentParser.print_help

    def recording_print_help(parser, file=None):
        printed.append(parser)
        print_help(parser, file)

    monkeypatch.setattr(argparse.ArgumentParser, "print_help", recording_print_help)
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks"))  # the benchmark scripts import each other
    monkeypatch.chdir(REPO_ROOT)
    output, status = io.StringIO(), 0
    with contextlib.redirect_stdout(output):
        try:
            if command.startswith("-m "):
                module = command.removeprefix("-m ")
                monkeypatch.setattr(sys, "argv", [module, *arguments, "-h"])
                with pytest.MonkeyPatch.context() as patch:
                    patch.delitem(sys.modules, module, raising=False)  # runpy runs a fresh copy as __main__
                    runpy.run_module(module, run_name="__main__")
            else:
                monkeypatch.setattr(sys, "argv", [command, *arguments, "-h"])
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


def _written_examples(command: str) -> list[str]:
    """The example lines of the command's docstring as they are written in its file (indented `python ...` lines
    and their continuation lines)."""
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
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            assert all(choice.help for choice in action._choices_actions)
        elif not isinstance(action, argparse._HelpAction) and action.option_strings:
            assert action.help and action.help != argparse.SUPPRESS, f"{command}: {action.option_strings} has no help"
    if parser.epilog or "\n" in (parser.description or ""):
        assert issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter), command
    for line in _written_examples(command):
        assert line in output.splitlines(), f"{command} -h does not print this example line as written:\n{line}"
    if command.startswith("recipes/") and groups[0].title.startswith(("Pretraining", "Sentiment", "Birthplace")):
        titles = [group.title for group in groups]
        trainer = EVALUATE_TRAINER_TITLE if arguments == ["evaluate"] else TRAINER  # evaluate: the few it reads
        assert titles[-1] == trainer and titles.index("Model arguments") < titles.index(trainer)


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
