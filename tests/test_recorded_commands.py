"""Every command recorded in benchmarks/results.json reruns today: each `command` (a `&&` chain of steps) and each
`whole_runs` key parses with today's command lines: each recipe's or script's own parser, and for `make` the
Makefile's targets and variables and the profiles that exist. A renamed flag or a removed script fails here, not in
the shell of a user who copies the command."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import grid
import pytest
import throughput
import torch
from test_flag_plumbing import load_script

from hf_models.tasks import pretraining, sentiment
from hf_models.tasks.birthplace import DEFAULT_PRESET, SUBCOMMANDS, subcommand_groups
from hf_models.textio import UsageError
from hf_models.training import build_parser, expand_arguments_file

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results.json"
MAKEFILE = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
MAKE_TARGETS = set(re.search(r"^\.PHONY:(.*)$", MAKEFILE, re.MULTILINE).group(1).split())
MAKE_VARIABLES = set(re.findall(r"^([A-Z_]+) *[?:]?=", MAKEFILE, re.MULTILINE)) | set(
    re.findall(r"\$\(([A-Z_]+)\)", MAKEFILE)
)
CONFIGS = REPO_ROOT / "configs"  # the course files that give the course recipes their defaults
# The Trainer recipes: their flag groups, from the subcommand for birthplace.py.
RECIPES = {
    "recipes/birthplace.py": lambda words: (subcommand_groups(words[0], DEFAULT_PRESET, CONFIGS), words[1:]),
    "recipes/pretrain.py": lambda words: (pretraining.ARGUMENT_GROUPS, words),
    "recipes/finetune_sentiment.py": lambda words: (sentiment.argument_groups(CONFIGS), words),
}


def recorded_commands(results: dict) -> dict[str, str]:
    """{where: command} of every `command` at any depth of results.json, and of every `whole_runs` key."""
    found = {f"whole_runs[{command!r}]": command for command in results.get("whole_runs", {})}

    def walk(value, where: str) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "command":
                    found[where] = inner
                else:
                    walk(inner, f"{where}.{key}" if where else key)

    walk(results, "")
    return found


def steps(command: str) -> list[list[str]]:
    """A command's steps, the words of each: `&&` is the one operator a recorded command may hold (a `#` would cut
    off the steps after it, a `;` or `|` would change what fails)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.commenters = ""  # a `#` is reported, not silently dropped with the rest of the line
    lexer.whitespace_split = True
    chain: list[list[str]] = [[]]
    for word in lexer:
        if word == "&&":
            chain.append([])
        elif word.startswith("#") or (word and set(word) <= set("();<>|&")):
            raise UsageError(f"{word!r} in a recorded command: only `&&` between steps reruns every step")
        else:
            chain[-1].append(word)
    if not all(chain):
        raise UsageError("an empty step")
    return chain


def check_make(words: list[str]) -> None:
    targets = [word for word in words if "=" not in word]
    variables = dict(word.split("=", 1) for word in words if "=" in word)
    unknown = [target for target in targets if target not in MAKE_TARGETS] or not targets
    if unknown:
        raise UsageError(f"make: no target {unknown} in the Makefile ({' '.join(sorted(MAKE_TARGETS))})")
    if set(variables) - MAKE_VARIABLES:
        raise UsageError(f"make: the Makefile reads no variable {sorted(set(variables) - MAKE_VARIABLES)}")
    if "PROFILE" in variables:
        profile = grid.load(variables["PROFILE"])  # an unknown profile is a ProfileError naming the ones there are
        missing = set(variables.get("PIPELINES", "").split()) - set(profile.pipelines)
        if missing:
            raise UsageError(f"make: the {profile.name} profile has no pipeline {sorted(missing)}")


def check_python(words: list[str]) -> None:
    script, arguments = words[0], words[1:]
    if not (REPO_ROOT / script).is_file():
        raise UsageError(f"no script {script} in the repository")
    if script in RECIPES:
        if script == "recipes/birthplace.py" and (not arguments or arguments[0] not in SUBCOMMANDS):
            raise UsageError(f"{script}: a subcommand first ({', '.join(SUBCOMMANDS)})")
        groups, arguments = RECIPES[script](arguments)
        # The flags only: TrainingArguments would check a GPU profile's --bf16 against this machine.
        parser = build_parser(groups)
        parser.parse_args_into_dataclasses(args=expand_arguments_file(parser, arguments), look_for_args_file=False)
    elif script == "tokenizer/train_tokenizer.py":
        load_script(script).parse_args(arguments)
    elif script == "recipes/prepare_data.py":
        parser = load_script(script).build_parser()
        parser.parse_args(expand_arguments_file(parser, arguments, position=1))
    elif script == "benchmarks/throughput.py":
        throughput.parse_args(arguments)
    elif script == "benchmarks/tfidf_baseline.py":
        load_script(script).parse_args(arguments)
    elif script == "benchmarks/help_speed.py":
        load_script(script).build_parser().parse_args(arguments)
    elif script == "benchmarks/code_path.py":  # and the command it measures, after --
        measured = load_script(script).build_parser().parse_args(arguments).command
        check_python(measured[1:] if measured[:1] == ["--"] else measured)
    elif script == "benchmarks/grid.py" and arguments[:1] == ["show"]:
        grid.main(arguments)  # prints the steps; an unknown flag or profile stops it
    else:
        raise UsageError(f"no parser known for {shlex.join(words)}: add its script to this test")


def check_command(command: str) -> None:
    """Raises (UsageError, SystemExit from argparse, ValueError from HfArgumentParser, grid.ProfileError) when a step
    of `command` is not today's."""
    for words in steps(command):
        if words[0] == "make":
            check_make(words[1:])
        elif re.fullmatch(r"(\S*/)?python[\d.]*", words[0]) and len(words) > 1:
            check_python(words[1:])
        else:
            raise UsageError(f"{words[0]}: neither `make` nor a python script")


def problems(results: dict) -> dict[str, str]:
    """{where: what is wrong} of every recorded command that does not parse today."""
    found = {}
    for where, command in recorded_commands(results).items():
        try:
            check_command(command)
        except (UsageError, SystemExit, ValueError) as error:
            found[where] = f"{type(error).__name__}: {error}"
    return found


@pytest.fixture(autouse=True)
def _gpu_flags_parse(monkeypatch) -> None:
    """throughput.py refuses its CUDA-only flags where no GPU is: a recorded GPU run's flags parse as on its GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def test_every_recorded_command_parses_with_todays_command_lines(capsys) -> None:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    recorded = recorded_commands(results)
    assert len(recorded) >= 50 and any(where.startswith("whole_runs[") for where in recorded)
    assert problems(results) == {}


def test_the_predictions_readmes_name_todays_commands(capsys) -> None:
    """benchmarks/predictions/**/README.md say which run made each copied file, with its results.json command."""
    readmes = sorted((REPO_ROOT / "benchmarks" / "predictions").rglob("README.md"))
    commands = {
        f"{readme.relative_to(REPO_ROOT)}:{i}": command
        for readme in readmes
        for i, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), 1)
        for command in re.findall(r"; command: `([^`]+)`", line)
    }
    assert len(commands) >= 4
    assert problems({where: {"command": command} for where, command in commands.items()}) == {}


def test_an_entry_made_by_earlier_code_names_its_commit() -> None:
    """An entry recorded with a command that is no longer today's names the commit that recorded it, whose
    results.json holds that command, and says that a rerun will replace it."""
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    entries = [entry for section in results.values() if isinstance(section, dict) for entry in section.values()]
    stale = [entry for entry in [*entries, *results.values()] if isinstance(entry, dict) and "made_by_commit" in entry]
    assert len(stale) >= 22
    for entry in stale:
        assert re.fullmatch(r"[0-9a-f]{7,40}", entry["made_by_commit"]) and "rerun" in entry["made_by_note"]


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("python recipes/birthplace.py finetune --variant vanilla --output_dir o", "variant"),
        ("python benchmarks/plan.py run --profile course-cut --course cs224n", "no script benchmarks/plan.py"),
        (
            "python recipes/pretrain.py configs/altegrad/cpu/lm.json --train_files f --output_dir o  # configs 3a",
            "'#'",
        ),
        ("python recipes/birthplace.py evaluate --data_dir d --output_dir o --max_steps 3", "max_steps"),
        ("python recipes/birthplace.py score --data_dir d", "a subcommand first"),
        ("python tokenizer/train_tokenizer.py --files f --vocab_size 8 --output_dir o --lowercase", "2"),
        ("python benchmarks/throughput.py --preset nonesuch", "2"),
        ("make bench PROFILE=nonesuch", "unknown profile 'nonesuch'"),
        ("make bench PROFILE=cpu PIPELINES='birthplace sentiments'", "no pipeline ['sentiments']"),
        ("make benchmark PROFILE=cpu", "no target ['benchmark']"),
        ("make bench PROFILES=cpu", "no variable ['PROFILES']"),
        ("make demo; make bench", "';'"),
        ("snakemake -s benchmarks/Snakefile", "neither `make` nor a python script"),
        ("python benchmarks/help_speed.py --repeat 3", "2"),
        ("python benchmarks/code_path.py -- recipes/pretrain.py --variant x", "variant"),
    ],
)
def test_a_command_of_a_removed_flag_script_target_or_profile_is_refused(command, problem, capsys) -> None:
    found = problems({"x": {"command": command}})
    assert list(found) == ["x"] and problem in found["x"], found


def test_todays_commands_of_each_kind_pass(capsys) -> None:
    """The check refuses what is wrong only: the command of every row of every profile, as write_results.py records
    it from the steps the grid ran, and the make commands the Makefile records for a whole run."""
    commands = [
        " && ".join(shlex.join(profile.steps[step].command(".venv/bin/python", "outputs/bench")) for step in row.steps)
        for profile in map(grid.load, grid.names())
        for rows in profile.rows.values()
        for row in rows
    ]
    commands += [
        "make demo",
        "make cs224n PROFILE=course-cut",
        "make bench PROFILE=cpu PIPELINES='birthplace sentiment'",
    ]
    assert problems({str(i): {"command": command} for i, command in enumerate(commands)}) == {}


@pytest.mark.parametrize(
    "arguments",
    [
        ["bench", "PROFILE=cpu"],
        ["bench", "PROFILE=cpu", "PIPELINES=birthplace sentiment"],
        ["cs224n", "PROFILE=course-cut"],
    ],
    ids=" ".join,
)
def test_the_command_a_make_run_records_is_the_one_that_reruns_it(arguments) -> None:
    """What `make` passes to Snakemake as the run's command (recorded with its time: `whole_runs`), as Snakemake
    reads it (it strips a value's end quotes): the same make command, which parses today."""
    cli = pytest.importorskip("snakemake.cli", reason="snakemake is not installed (pip install -e '.[bench]')")
    shown = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", ".venv/.installed", *arguments],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    words = shlex.split(shown.strip().splitlines()[-1])
    recorded = cli.parse_config(words[words.index("--config") + 1 :])["command"]
    assert shlex.split(recorded)[0] == "make" and sorted(shlex.split(recorded)[1:]) == sorted(arguments)
    check_command(recorded)
