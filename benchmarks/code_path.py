#!/usr/bin/env python
"""How much of the package one command goes through: the files of `hf_models` it imports and the functions of
them it calls, counted by a profiler hook around the command run in this process (comprehensions, lambdas and the
methods that dataclasses generate are not counted). A measure of how many places a reader crosses to follow a run;
with the package's size in lines of Python. `--results FILE` records both (with the command, hardware, date and
commit) in FILE's library_bars section.

    python benchmarks/code_path.py [--list] [--results benchmarks/results.json] -- recipes/finetune_sentiment.py \
        --data_dir ../shared/data/cls-books --from_scratch --lab_vocabulary --model_config altegrad-lab \
        --output_dir /tmp/code-path --max_steps 3
"""

from __future__ import annotations

import argparse
import runpy
import shlex
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent / "hf_models"
# The library's goals: a reader follows a short run through few places, in a package of a size one can read.
GOALS = {"files": 20, "functions": 120, "package_lines": 8000}


def traced_calls(script: str, arguments: list[str]) -> set[tuple[str, int, str]]:
    """(file, first line, name) of every function of the package that `python SCRIPT ARGUMENTS` calls."""
    package = str(PACKAGE)
    calls: set[tuple[str, int, str]] = set()

    def hook(frame: FrameType, event: str, _: Any) -> None:
        code = frame.f_code
        if event == "call" and code.co_filename.startswith(package):
            calls.add((code.co_filename, code.co_firstlineno, code.co_name))

    sys.argv = [script, *arguments]
    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return calls


def package_lines() -> int:
    """Lines of Python in the package (as `find hf_models -name '*.py' | xargs cat | wc -l`)."""
    return sum(path.read_bytes().count(b"\n") for path in PACKAGE.rglob("*.py"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--list", action="store_true", help="print each file with the number of its functions called, and their names"
    )
    parser.add_argument("--results", type=Path, help="record the counts in this results file (library_bars)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the script and its arguments, after --")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    calls = traced_calls(command[0], command[1:])
    files = sorted({file for file, _, _ in calls})
    functions = [call for call in calls if not call[2].startswith("<")]
    if args.list:
        for file in files:
            count = sum(1 for call in functions if call[0] == file)
            print(f"{Path(file).relative_to(PACKAGE.parent)}: {count}", file=sys.stderr)
            for _, line, name in sorted(call for call in functions if call[0] == file):
                print(f"    {line}: {name}", file=sys.stderr)
    lines = package_lines()
    print(
        f"{len(files)} files and {len(functions)} functions of hf_models; hf_models: {lines:,} lines", file=sys.stderr
    )
    if args.results is not None:
        from write_results import record_library_bar  # after the run: its imports would hide the run's own

        entry = {"files": len(files), "functions": len(functions), "package_lines": lines, "goals": GOALS}
        command = shlex.join(["python", "benchmarks/code_path.py", *argv])
        record_library_bar(args.results, "code_path", {"command": command, **entry})
    return 0


if __name__ == "__main__":
    sys.exit(main())
