#!/usr/bin/env python
"""The experiment grid: each profile of `benchmarks/profiles/<name>.yaml` as its steps and rows.

    python benchmarks/grid.py show --profile cpu            # every step of the profile and its command
    python benchmarks/grid.py figures --profile course-cut --bench_dir outputs/bench   # a run's figures, committed

A profile file holds the facts of one profile once: its steps (recipe, config file, what each reads, seeds), its
rows (key, label, runs, tuning split) and its sections' titles; `base:` names a profile whose steps and rows it
keeps. `benchmarks/Snakefile` runs the steps (Snakemake: `make bench`, `make cs224n|altegrad`); `write_results.py`,
`report.py`, `course_table.py` and the plots read the rows. A step's name may name lists of the profile
(`bp_{model}_pretrain`: one step per model); `@step` is that step's output folder, and makes the step wait for it.
A label-curve point is its base step (`base:`) with a label budget, and the step count the budget implies.
`tiny:` flags appended to the steps of a run (`all`), and to those that build their model (`scratch`: no
`--model_name_or_path`), after the config file, so that they win: the smoke profile's tiny models and few steps
(`tiny: smoke` takes that profile's). `parts:` other profiles whose steps the same run makes, each in a folder of
the run's (the smoke profile's course chains). `data_slice: N`: the steps read the first N lines of each data file
(`benchmarks/slice_data.py`, a step of its own), not DATA_ROOT's whole files.

`figures` copies a run's figures (drawn under its output folder, never over the committed ones) into
benchmarks/figures/ with the profile's suffix: what `make docs` shows.
"""

from __future__ import annotations

import argparse
import copy
import functools
import hashlib
import itertools
import json
import math
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
FIGURES_DIR = Path(__file__).resolve().parent / "figures"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


class ProfileError(ValueError):
    """A profile file that names something it does not have: the message names the file and the entry."""


@dataclass(frozen=True)
class Step:
    name: str
    pipeline: str
    arguments: tuple[str, ...]  # the command without the interpreter and the output flags
    folder: str | None  # what it makes, relative to the run's folder
    flag: str = "--output_dir"
    reads: tuple[str, ...] = ()  # the steps it waits for
    files: tuple[str, ...] = ()  # the config file and the script it runs, relative to the repository
    timed: bool = True  # a benchmark run (its time counts in its rows), not data preparation or a figure
    may_fail: bool = False  # its failure stops nothing after it (a reference line, a figure, a table)
    group: str | None = None  # steps of a group the profile runs side by side share the cores

    def command(self, python: str, out: str, data: str = "../shared/data") -> tuple[str, ...]:
        """The step's command line, run from the repository root: its data under `data`, its outputs under `out`."""
        arguments = [argument.replace("{out}", out).replace("{data}", data) for argument in self.arguments]
        if self.folder is None:
            return (python, *arguments)
        rerun = ("--overwrite_output_dir",) if self.flag == "--output_dir" else ()  # the engine decides what reruns
        return (python, *arguments, self.flag, f"{out}/{self.folder}", *rerun)


@dataclass(frozen=True)
class Row:
    """One row of results.json: its run folders (one per seed), the steps its wall time counts, and where it is
    scored on the tuning split."""

    key: str
    label: str
    runs: tuple[str, ...]
    steps: tuple[str, ...]
    tune: str | None = None
    tune_step: str | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    suffix: str  # of its results.json sections and figures
    titles: dict
    column: str
    gpu: bool
    cores: int
    side_by_side: str | tuple[str, ...]
    throughput: tuple[str, ...]
    predictions: str
    row_suffix: str
    course: bool  # the courses' own settings: the courses' chains, nothing chosen on a tuning split
    configs: dict[str, str]  # course -> the folder of the profile's config files
    lists: dict
    steps: dict[str, Step]
    pipelines: dict[str, str | None]  # pipeline -> the course whose make target runs it
    rows: dict[str, tuple[Row, ...]]
    headline: dict[str, tuple[str, str]]
    curve: tuple[dict, ...]
    figures: dict[str, str]
    order: int = 0
    min_steps: int = 0
    budgets: tuple[int, ...] = field(default=())
    parts: dict[str, str] = field(default_factory=dict)  # folder of the run's -> profile, run with this one
    smoke: bool = False  # a smoke test: its results stay in the run's folder, its numbers mean nothing
    data_slice: int = 0  # lines of each data file its steps read (benchmarks/slice_data.py); 0: the data whole

    def threads(self, step: Step) -> int:
        """A step of a side-by-side group has one core, every other step all of them (a GPU profile's: one each)."""
        shared = self.side_by_side == "all" or step.group in self.side_by_side
        return 1 if self.gpu or shared else self.cores

    def of_pipelines(self, pipelines: list[str]) -> list[Step]:
        return [step for step in self.steps.values() if step.pipeline in pipelines]

    def course_pipelines(self, course: str) -> list[str]:
        return [name for name, owner in self.pipelines.items() if owner == course]


@functools.lru_cache(maxsize=32)
def _parsed(text: str) -> object:
    """A profile file's text, parsed once: the report asks for every profile's order and titles again and again (a
    changed file is new text, parsed anew). `_yaml` copies it, since it and `load` change what they get."""
    return yaml.safe_load(text)


def _yaml(name: str) -> dict:
    path = PROFILES_DIR / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(names()) if PROFILES_DIR.is_dir() else "none"
        raise ProfileError(f"unknown profile {name!r}: no benchmarks/profiles/{name}.yaml (profiles: {known})")
    try:
        data = copy.deepcopy(_parsed(path.read_text(encoding="utf-8")))
    except yaml.YAMLError as error:  # the file and its line, not yaml's traceback
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or type(error).__name__
        raise ProfileError(
            f"benchmarks/profiles/{name}.yaml{line}: not valid YAML ({problem}); fix the file"
        ) from None
    if not isinstance(data, dict):
        raise ProfileError(f"benchmarks/profiles/{name}.yaml holds a YAML {type(data).__name__}, not a mapping")
    if "base" in data:  # the base profile's facts, this file's on top (its lists and curve: key by key)
        base = _yaml(data["base"])
        own = {key: value for key, value in data.items() if key != "base"}
        for key in ("lists", "curve"):
            if key in own and key in base:
                own[key] = {**base[key], **own[key]}
        data = {**base, "order": None, "parts": {}, "smoke": False, "data_slice": 0, **own}
    if isinstance(data.get("tiny"), str):  # another profile's tiny flags
        data["tiny"] = _yaml(data["tiny"]).get("tiny", {})
    return data


def names() -> list[str]:
    """The profiles, in the report's order."""
    found = [path.stem for path in PROFILES_DIR.glob("*.yaml")]
    return sorted(found, key=lambda name: (_yaml(name).get("order") or 99, name))


def fill(text: str, values: dict, where: str) -> str:
    """`text` with each `{name}` replaced by its value; a name with none is refused, naming `where`."""

    def value(match: re.Match) -> str:
        if match.group(1) not in values:
            raise ProfileError(f"{where}: no list or value named {{{match.group(1)}}}")
        return str(values[match.group(1)])

    return PLACEHOLDER.sub(value, str(text))


def expand(text: str, lists: dict, bound: dict, where: str) -> list[tuple[str, dict]]:
    """`text` once for each combination of the lists it names and `bound` does not (in order of appearance)."""
    free = [name for name in dict.fromkeys(PLACEHOLDER.findall(str(text))) if name in lists and name not in bound]
    result = []
    for combination in itertools.product(*(lists[name] for name in free)):
        values = {**bound, **dict(zip(free, combination, strict=True))}
        result.append((fill(text, values, where), values))
    return result


class _Builder:
    """Turns a profile file's step templates into steps, resolving `@step` references in order."""

    def __init__(self, data: dict, profile: str, root: Path) -> None:
        self.data, self.root, self.steps = data, root, {}
        self.where = f"benchmarks/profiles/{profile}.yaml"
        self.base = {"data": "{data}", "out": "{out}", "profile": profile}

    def reference(self, token: str, reads: list[str], where: str) -> str:
        """`@step/sub` as the folder (relative to the run's) of that earlier step, which the step then reads."""
        name, _, sub = token[1:].partition("/")
        if name not in self.steps or self.steps[name].folder is None:
            raise ProfileError(f"{where}: {token} names no earlier step with an output folder")
        reads.append(name)
        return f"{self.steps[name].folder}/{sub}".rstrip("/")

    def arguments(self, text: str, values: dict, reads: list[str], where: str) -> list[str]:
        tokens = shlex.split(fill(text, values, where))
        return [f"{{out}}/{self.reference(t, reads, where)}" if t.startswith("@") else t for t in tokens]

    def add(self, pipeline: str, course: str | None, spec: dict, lists: dict) -> None:
        for name, values in expand(spec["name"], lists, self.base, self.where):
            where = f"{self.where}: step {name}"
            if name in self.steps:
                raise ProfileError(f"{where}: a second step of this name")
            values = {**values, "data": "{data}", "out": "{out}"}
            reads: list[str] = []
            for entry in spec.get("after", []):
                reads += [after for after, _ in expand(entry, lists, values, where) if after in self.steps]
            if "base" in spec:
                self.steps[name] = self._from_base(name, pipeline, spec, values, reads, where)
                continue
            run = shlex.split(spec["run"])
            arguments, files = list(run), [run[0]]
            if "config" in spec:
                config = f"{self.data['configs'][course]}/{fill(spec['config'], values, where)}.json"
                arguments.append(config)
                files.append(config)
            arguments += self.arguments(spec.get("args", ""), values, reads, where)
            arguments += self.tiny_flags(spec["run"], arguments)
            self.steps[name] = Step(
                name,
                pipeline,
                tuple(arguments),
                self.folder(spec, values, reads, where),
                spec.get("flag", "--output_dir"),
                tuple(dict.fromkeys(reads)),
                tuple(files),
                spec.get("timed", True),
                spec.get("may_fail", False),
                fill(spec["group"], values, where) if "group" in spec else None,
            )

    def tiny_flags(self, run: str, arguments: list[str]) -> list[str]:
        """The profile's `tiny` flags of the run `run`: `all` of them, and `scratch` where the step builds its model."""
        tiny = self.data.get("tiny", {})
        flags = shlex.split(tiny.get("all", {}).get(run, ""))
        if "--model_name_or_path" not in arguments:
            flags += shlex.split(tiny.get("scratch", {}).get(run, ""))
        return flags

    def folder(self, spec: dict, values: dict, reads: list[str], where: str) -> str | None:
        if "out" not in spec:
            return None
        out = fill(spec["out"], values, where)
        return self.reference(out, reads, where) if out.startswith("@") else out

    def _from_base(self, name: str, pipeline: str, spec: dict, values: dict, reads: list[str], where: str) -> Step:
        """A label-curve point: its base step's command with the budget (and, for a training, the step count of
        `training_steps` and one evaluation at its end), into its own folder."""
        base = self.steps.get(fill(spec["base"], values, where))
        if base is None:
            raise ProfileError(f"{where}: base {spec['base']} names no earlier step")
        extra = self.arguments(spec.get("args", ""), values, reads, where)
        config = next((file for file in base.files if file.endswith(".json")), None)
        if config is not None:
            if not (self.root / config).is_file():
                raise ProfileError(
                    f"{where}: {config}: no such config file in {self.root} (run from the repository root)"
                )
            settings = json.loads((self.root / config).read_text(encoding="utf-8"))
            budget = int(next(value for key, value in values.items() if key.endswith("budget")))
            steps = str(
                training_steps(
                    budget,
                    int(settings["num_train_epochs"]),
                    int(settings["per_device_train_batch_size"]),
                    self.data["curve"]["min_steps"],
                )
            )
            extra += ["--max_steps", steps, "--eval_strategy", "steps", "--eval_steps", steps]
        return Step(
            name,
            pipeline,
            (*base.arguments, *extra),
            self.folder(spec, values, reads, where),
            base.flag,
            tuple(dict.fromkeys([*base.reads, *reads])),
            base.files,
            base.timed,
            base.may_fail,
            fill(spec["group"], values, where) if "group" in spec else base.group,
        )


def training_steps(budget: int, epochs: int, batch_size: int, min_steps: int) -> int:
    """The optimizer steps of a finetuning on `budget` reviews: the profile's epochs over the draw, at least
    `min_steps` (four epochs of 24 reviews are 8 steps, fewer than the warm-up: the rate would never peak)."""
    return max(epochs * math.ceil(budget / batch_size), min_steps)


def _rows(data: dict, steps: dict[str, Step], lists: dict, where: str) -> dict[str, tuple[Row, ...]]:
    """Each task's rows: a row's runs are the folders its `run` names (one per seed), its steps those runs' steps
    and its `time` list, in running order."""
    order = list(steps)
    rows = {}
    for task in ("birthplace", "sentiment"):
        built = []
        for spec in data.get("rows", {}).get(task, []):
            row_where = f"{where}: row {spec['key']}"
            runs, names = [], list(spec.get("time", []))
            for run, _ in expand(spec["run"], lists, {}, row_where):
                name, _, sub = run[1:].partition("/")
                if name not in steps:
                    raise ProfileError(f"{row_where}: {run} names no step")
                runs.append(f"{steps[name].folder}/{sub}".rstrip("/"))
                names.append(name)
            unknown = [name for name in names if name not in steps]
            if unknown:
                raise ProfileError(f"{row_where}: no step {unknown[0]}")
            tune = spec.get("tune", "@")[1:] or None
            built.append(
                Row(
                    spec["key"],
                    spec["label"],
                    tuple(runs),
                    tuple(sorted(set(names), key=order.index)),
                    steps[tune].folder if tune else None,
                    tune,
                )
            )
        rows[task] = tuple(built)
    return rows


def _count(value, key: str, where: str, least: int) -> None:
    """A profile's count (`cores: 2`): a whole number of at least `least` (a bool or "2" is none)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ProfileError(f"{where}: {key} {value!r}: give a whole number of at least {least}")


def _check_counts(data: dict, where: str) -> None:
    """The profile's numbers, as strictly as a flag's: its cores, and the label curve's budgets (increasing, each at
    least 1) and least step count."""
    _count(data.get("cores"), "cores", where, 1)
    curve = data.get("curve", {})
    for budget in curve.get("budgets", ()):
        _count(budget, "curve budget", where, 1)
    budgets = list(curve.get("budgets", ()))
    if budgets != sorted(set(budgets)):
        raise ProfileError(f"{where}: curve budgets {budgets}: give them increasing, each once")
    if "min_steps" in curve:
        _count(curve["min_steps"], "curve min_steps", where, 0)


def _switch(value, key: str, where: str) -> None:
    """A profile's switch (`gpu: false`): true or false, never a word ("no" in quotes is a true string)."""
    if not isinstance(value, bool):
        raise ProfileError(f"{where}: {key} {value!r}: give true or false")


def _check_switches(data: dict, where: str) -> None:
    """The profile's switches and its steps': each true or false, as a flag's."""
    _switch(data.get("gpu"), "gpu", where)
    if "course" in data:
        _switch(data["course"], "course", where)
    for pipeline in data.get("pipelines", {}).values():
        for spec in pipeline.get("steps", ()):
            for key in ("timed", "may_fail"):
                if key in spec:
                    _switch(spec[key], key, f"{where}: step {spec.get('name')}")


@functools.cache
def load(name: str, root: Path = REPO_ROOT, tiny: str | None = None) -> Profile:
    """A profile, its steps' folders relative to the run's folder (`Step.command` puts them under OUT); `tiny`: with
    that profile's tiny flags (`tiny="smoke"`: the steps of another profile at the smoke test's sizes)."""
    data, where = _yaml(name), f"benchmarks/profiles/{name}.yaml"
    if tiny is not None:
        data["tiny"] = _yaml(tiny).get("tiny", {})
    _check_counts(data, where)
    _check_switches(data, where)
    budgets = tuple(data.get("curve", {}).get("budgets", ()))
    lists = {**data["lists"], "budget": list(budgets[:-1]), "any_budget": list(budgets)}
    builder = _Builder(data, name, root)
    for pipeline, spec in data["pipelines"].items():
        for step in spec["steps"]:
            builder.add(pipeline, spec.get("course"), step, lists)
    steps = builder.steps
    return Profile(
        name=name,
        suffix=data["suffix"],
        titles=data["title"],
        column=data["column"],
        gpu=data["gpu"],
        cores=data["cores"],
        side_by_side=data["side_by_side"] if data["side_by_side"] == "all" else tuple(data["side_by_side"]),
        throughput=tuple(data["throughput"]),
        predictions=data["predictions"],
        row_suffix=data.get("row_suffix", ""),
        course=data.get("course", False),
        configs=data["configs"],
        lists=lists,
        steps=steps,
        pipelines={pipeline: spec.get("course") for pipeline, spec in data["pipelines"].items()},
        rows=_rows(data, steps, lists, where),
        headline={key: tuple(rows) for key, rows in data.get("rows", {}).get("headline", {}).items()},
        curve=tuple(data.get("rows", {}).get("curve", ())),
        figures=data.get("figures", {}),
        order=data.get("order") or 99,
        min_steps=data.get("curve", {}).get("min_steps", 0),
        budgets=budgets,
        parts=dict(data.get("parts") or {}),
        smoke=data.get("smoke", False),
        data_slice=data.get("data_slice", 0),
    )


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def step_record(profile: Profile, step: Step, command: str, root: Path = REPO_ROOT) -> dict:
    """What a step's `OUT/steps/<step>.done` records when it succeeded (benchmarks/Snakefile writes it): the profile,
    the step, its arguments, the contents of its config file and script, and the command run. A step is kept only
    while today's profile would record the same (`record_problem`), never by file times alone."""
    files = {file: _sha256(root / file) for file in step.files}
    return {
        "profile": profile.name,
        "step": step.name,
        "arguments": list(step.arguments),
        "files": files,
        "command": command,
    }


def read_step_record(path: Path) -> dict | None:
    """A step's `.done` as its record; None for a file that holds none (an older run's bare command, damage)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def record_problem(record: dict | None, expected: dict, same_command: bool = True) -> str | None:
    """Why a step's record is not what today's profile would write (`expected`, of `step_record`), or None. With
    `same_command`, the whole command too (the interpreter, the run's and the data's folders: what the grid runs);
    without, the profile's arguments and files only (what `write_results.py` can check from anywhere)."""
    if record is None:
        return "it records no step (a run before step records, or a damaged file)"
    if record.get("failed"):
        return "the step failed"
    if record.get("profile") != expected["profile"]:
        return f"it was made by the {record.get('profile')} profile, not {expected['profile']}"
    if record.get("step") != expected["step"] or record.get("arguments") != expected["arguments"]:
        return "its command is not the profile's today"
    changed = [file for file, digest in expected["files"].items() if record.get("files", {}).get(file) != digest]
    if changed:
        return f"{changed[0]} changed since"
    if same_command and record.get("command") != expected["command"]:
        return "its command is not today's"
    return None


def label(profile: str, key: str) -> str:
    """A row's label: the profile's row of that key (a curve row's own label, else its sentiment row's)."""
    grid = load(profile)
    labels = {row.key: row.label for task in grid.rows.values() for row in task}
    labels.update({row["key"]: row["label"] for row in grid.curve if "label" in row})
    return labels.get(key, key)


def curve_points(profile: str) -> dict[str, dict[int, dict[int, tuple[str, str]]]]:
    """{row: {budget: {seed: (run folder, step)}}}: every point of the label curve, where it is and what made it
    (the full budget's finetunings and probe are the `sentiment` pipeline's own runs)."""
    grid = load(profile)
    points: dict = {}
    for spec in grid.curve:
        points[spec["key"]] = {}
        for budget in grid.budgets:
            template = spec.get("full") if budget == grid.budgets[-1] and "full" in spec else spec["point"]
            draws = {}
            for seed in grid.lists["seed"]:
                name, _, sub = fill(template, {"budget": budget, "seed": seed}, spec["key"])[1:].partition("/")
                draws[seed] = (f"{grid.steps[name].folder}/{sub}".rstrip("/"), name)
            points[spec["key"]][budget] = draws
    return points


def copy_figures(profile: str, bench: Path, figures: Path = FIGURES_DIR) -> list[Path]:
    """The run's figures into `figures` under their committed names (`<name><suffix>.png`): the ones it has."""
    grid, written = load(profile), []
    for name, source in grid.figures.items():
        step, _, sub = source[1:].partition("/")
        path = bench / f"{grid.steps[step].folder}/{sub}".rstrip("/")
        if path.is_file():
            target = figures / f"{name}{grid.suffix}.png"
            shutil.copyfile(path, target)
            written.append(target)
    return written


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """-h prints the examples as written and every flag's default (as hf_models.training.HelpFormatter, which the
    grid does not import: Snakemake reads it)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("action", choices=("show", "figures"), help="show: the steps; figures: copy a run's")
    parser.add_argument("--profile", default="cpu", help="a profile of benchmarks/profiles/")
    parser.add_argument("--bench_dir", default="outputs/bench", help="figures: the run's output folder")
    args = parser.parse_args(argv)
    try:
        grid = load(args.profile)
    except ProfileError as error:
        raise SystemExit(str(error)) from None
    if args.action == "figures":
        if not Path(args.bench_dir).is_dir():
            raise SystemExit(f"--bench_dir {args.bench_dir}: no such folder")
        written = copy_figures(args.profile, Path(args.bench_dir))
        print("\n".join(f"wrote {path.relative_to(REPO_ROOT)}" for path in written) or "no figure in the run")
        return 0
    for step in grid.steps.values():
        print(f"{step.pipeline}\t{step.name}\t{shlex.join(step.command('python', 'OUT'))}")
    return 0


if __name__ == "__main__":
    from hf_models.safety import command_line  # here only: the grid itself needs neither torch nor transformers

    sys.exit(command_line(main, sys.argv[1:]))
