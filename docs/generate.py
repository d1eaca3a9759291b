#!/usr/bin/env python
"""Regenerate the documents' generated parts from the files that hold the facts, or check that none is stale and
that everything the documents point at exists.

    python docs/generate.py            # make docs: rewrite what is stale
    python docs/generate.py --check    # make docs-check (part of make test): exit 1, naming each problem

What is generated, and from what:
- BENCHMARKS.md and docs/levers.md, whole: `benchmarks/report.py` renders them from `benchmarks/results.json` and
  `benchmarks/levers.json`;
- the marked parts of README.md, docs/*.md and the notebooks' text cells: `<!-- generated: NAME -->...<!-- end -->`
  (a table or a phrase of results, docs/results_text.py; `whole-run PROFILE PIPELINE` a whole run's time;
  `lever FLAG` the measured effect of the lever of benchmarks/levers.json named with FLAG) and
  `<!-- value: PATH | FORMAT -->...<!-- end -->` (one number of results.json: PATH its keys joined by dots, FORMAT one
  of docs/results_text.py's FORMATS: percent, percent2, points, signed, minutes, seconds, loss, count);
- TESTING.md's mutant table and count: from the list of tests/mutation/run_mutations.py;
- with `--figures_from OUT --profile PROFILE`, the committed figures of benchmarks/figures/: the ones that run drew
  under OUT copied over them (`benchmarks/grid.py figures`: the runs never draw over the committed ones).
The prose around the marks stays hand-written. The check also fails on a percentage or a duration typed in
README.md, docs/ or a notebook's text outside a mark (but in the documents rendered whole), a relative link or `#anchor` that does not resolve, a git ref the documents name that
the repository lacks, and a file named in a comment of pyproject.toml or the Makefile that is gone.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO_ROOT = DOCS.parent
# The sibling modules, and benchmarks/report.py (the report's renderer) as its own scripts import it.
sys.path[:0] = [str(DOCS), str(REPO_ROOT / "benchmarks")]

from grid import ProfileError, copy_figures  # noqa: E402
from links import broken_links, missing_git_refs, missing_named_files  # noqa: E402
from report import read_json_object, read_levers, render_benchmarks, render_levers_doc  # noqa: E402
from results_text import FORMATS, PARTS, resolve  # noqa: E402

MARK = re.compile(r"<!-- (generated|value): (.*?) -->(.*?)<!-- end -->", re.S)
# Each opening mark, and each end mark: an opening must meet its end before the next opening.
MARK_EDGE = re.compile(r"<!-- (?:(?:generated|value): .*? |end )-->")
MUTATIONS = REPO_ROOT / "tests" / "mutation" / "run_mutations.py"
# Documents rendered whole from the JSON files (benchmarks/report.py): every number in them is generated.
GENERATED_WHOLE = (REPO_ROOT / "BENCHMARKS.md", DOCS / "levers.md")
TYPED_NUMBER = re.compile(r"\d[\d,.]* ?%|\b\d[\d,.]* ?(?:min|minutes|h|hours)\b")


@functools.cache
def mutants() -> tuple:
    """The mutation check's list (tests/mutation/run_mutations.py is a script: loaded by its path)."""
    spec = importlib.util.spec_from_file_location("run_mutations", MUTATIONS)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_mutations", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.MUTANTS


def mutant_table(_: dict) -> str:
    """The list of mutants: each one's file, the bug it models and the tests it runs first."""
    lines = ["| Mutant | File | Bug it models | Tests it runs first |", "|---|---|---|---|"]
    for mutant in mutants():
        tests = ", ".join(f"`{test.removeprefix('tests/')}`" for test in mutant.tests)
        bug = mutant.bug.replace("|", r"\|")
        lines.append(f"| `{mutant.name}` | `{mutant.path.removeprefix('hf_models/')}` | {bug} | {tests} |")
    return "\n".join(lines)


GENERATORS: dict[str, Callable[..., str]] = {
    **PARTS,
    "mutants": mutant_table,
    "mutant-count": lambda _: f"{len(mutants()):,}",
}


def lever_effect(levers: list[dict], flag: str) -> str:
    """`<!-- generated: lever FLAG -->`: the effect of the one lever of benchmarks/levers.json whose name holds FLAG,
    with the split it was measured on."""
    found = [lever for lever in levers if flag in lever["lever"]]
    if len(found) != 1:
        raise KeyError(f"{len(found)} levers named with {flag!r} in levers.json")
    return f"{found[0]['effect']} ({found[0]['measured_on']})"


def check_end_marks(text: str, where: str) -> None:
    """Every opening mark meets its `<!-- end -->` before the next opening mark: a lost end mark would make the next
    fill replace the hand-written text after it, up to the next mark's end. Refused, naming the mark and its line."""
    edges = list(MARK_EDGE.finditer(text))
    for edge, after in zip(edges, [*edges[1:], None][: len(edges)], strict=True):
        if edge.group(0) != "<!-- end -->" and (after is None or after.group(0) != "<!-- end -->"):
            line = text.count("\n", 0, edge.start()) + 1
            raise SystemExit(
                f"{where}:{line}: the mark `{edge.group(0)}` has no `<!-- end -->` before "
                f"{'the next mark' if after else 'the end of the file'}; put it back where its generated text ends "
                "(nothing was written)"
            )


def fill(text: str, results: dict, where: str, levers: list[dict] = ()) -> str:
    """`text` with every mark's content generated again; a block mark (its content on lines of its own, between blank
    lines) stays one. A mark without its end is refused (`check_end_marks`)."""
    check_end_marks(text, where)

    def generate(mark: re.Match) -> str:
        kind, spec, old = mark.groups()
        try:
            if kind == "generated":
                name, *arguments = spec.split()
                if name == "lever":
                    new = lever_effect(levers, " ".join(arguments))
                else:
                    new = GENERATORS[name](results, *arguments)
            else:
                path, _, form = (part.strip() for part in spec.rpartition("|"))
                new = FORMATS[form](resolve(results, path))
        except KeyError as error:
            raise SystemExit(
                f"error: {where}: the mark `{mark.group(0)[:60]}...` names nothing known ({error})"
            ) from None
        # a block between blank lines, so that Markdown ends a table before the closing mark
        new = f"\n\n{new}\n\n" if old.startswith("\n") else new
        return f"<!-- {kind}: {spec} -->{new}<!-- end -->"

    return MARK.sub(generate, text)


def fill_notebook(text: str, results: dict, where: str) -> str:
    """A notebook with its text cells' marks filled; unchanged (byte for byte) when no cell changes."""
    notebook, changed = json.loads(text), False
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and "<!-- " in source:
            new = fill(source, results, where)
            changed |= new != source
            cell["source"] = new.splitlines(keepends=True)
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n" if changed else text


def expected(results: dict, levers: list[dict]) -> dict[Path, str]:
    """Every generated document as it must read."""
    wanted = dict(zip(GENERATED_WHOLE, (render_benchmarks(results, levers), render_levers_doc(levers)), strict=True))
    marked = [REPO_ROOT / "README.md", REPO_ROOT / "TESTING.md", *sorted(DOCS.glob("*.md"))]
    for path in marked:
        if path not in wanted:
            wanted[path] = fill(path.read_text(encoding="utf-8"), results, str(path.relative_to(REPO_ROOT)), levers)
    for path in sorted((REPO_ROOT / "examples").glob("*.ipynb")):
        wanted[path] = fill_notebook(path.read_text(encoding="utf-8"), results, str(path.relative_to(REPO_ROOT)))
    return wanted


def typed_numbers(path: Path) -> list[str]:
    """Percentages and durations written by hand: outside the marks and the code (of a notebook: its text cells)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    text = re.sub(r"^```.*?^```", "", MARK.sub("", text), flags=re.S | re.M)
    return [
        f"{path.relative_to(REPO_ROOT)}:{number}: `{found}` typed by hand (generate it from results.json)"
        for number, line in enumerate(text.splitlines(), 1)
        for found in TYPED_NUMBER.findall(re.sub(r"`[^`]*`", "", line))
    ]


def problems(results: dict, levers: list[dict]) -> list[str]:
    found = [
        f"{path.relative_to(REPO_ROOT)} is stale: run `make docs`"
        for path, text in expected(results, levers).items()
        if path.read_text(encoding="utf-8") != text
    ]
    documents = [REPO_ROOT / name for name in ("README.md", "BENCHMARKS.md", "TESTING.md")]
    documents += sorted(DOCS.glob("*.md"))
    for path in [
        REPO_ROOT / "README.md",
        *sorted(DOCS.glob("*.md")),
        *sorted((REPO_ROOT / "examples").glob("*.ipynb")),
    ]:
        if path not in GENERATED_WHOLE:
            found += typed_numbers(path)
    found += broken_links(documents, REPO_ROOT)
    found += missing_git_refs(documents, REPO_ROOT)
    found += missing_named_files([REPO_ROOT / "pyproject.toml", REPO_ROOT / "Makefile"], REPO_ROOT)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when anything is stale or broken")
    parser.add_argument("--results", default=str(REPO_ROOT / "benchmarks/results.json"), help="the results")
    parser.add_argument("--levers", default=str(REPO_ROOT / "benchmarks/levers.json"), help="the levers tried")
    parser.add_argument("--figures_from", type=Path, help="a run's output folder: copy its figures over the committed")
    parser.add_argument("--profile", default="cpu", help="--figures_from: the run's profile (benchmarks/profiles/)")
    args = parser.parse_args(argv)
    if args.figures_from is not None and not args.figures_from.is_dir():
        parser.error(f"--figures_from {args.figures_from}: no such folder")
    results = read_json_object(Path(args.results), "--results")
    levers = read_levers(Path(args.levers))
    if args.check:
        found = problems(results, levers)
        for problem in found:
            print(f"docs-check: {problem}", file=sys.stderr)
        return 1 if found else 0
    if args.figures_from is not None:
        try:
            copied = copy_figures(args.profile, args.figures_from)
        except ProfileError as error:
            parser.error(str(error))
        for path in copied:
            print(f"{path.relative_to(REPO_ROOT)} copied from {args.figures_from}")
    stale = {
        path: text for path, text in expected(results, levers).items() if path.read_text(encoding="utf-8") != text
    }
    for path in stale:  # all or none: a document it cannot write stops it before the first write
        if not os.access(path, os.W_OK):
            raise SystemExit(f"{path.relative_to(REPO_ROOT)} is not writable: make it so (chmod u+w) and run again")
    staged = {}
    try:  # each document written beside itself first, then all moved over the old ones: none, or all of them
        for path, text in stale.items():
            handle, staged[path] = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            shutil.copymode(path, staged[path])
    except BaseException as error:
        for temporary in staged.values():
            Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError) and error.errno is not None:  # named by the document, not its temporary twin
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise
    for path, temporary in staged.items():
        os.replace(temporary, path)
        print(f"{path.relative_to(REPO_ROOT)} written")
    return 0


if __name__ == "__main__":
    from hf_models.safety import command_line  # here only: the tests load the module without running it

    sys.exit(command_line(main, sys.argv[1:]))
