#!/usr/bin/env python
r"""Run every command of README.md in a fresh clone, with tiny step counts, so that its paths agree and nothing
reads a folder that no command wrote.

    python docs/check_readme.py                      # the committed HEAD of this checkout
    python docs/check_readme.py --keep               # keep the clone (its path is printed) to look at the runs

The `bash` blocks run in order in one shell (`set -euo pipefail`), then the `python` blocks. Training commands
get tiny overrides appended (argparse keeps the last value of a flag): a few steps, a few samples, a small corpus.
`make` lines are skipped (the test suite runs the demo, and `make` would install into the shared .venv). The clone
sees the data where a checkout does, at `../shared` (a link to this checkout's `../shared`), and uses this
checkout's `.venv`. Several minutes on 2 cores; not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parent.parent
# (pattern of a command, flags appended to it): the first match applies.
OVERRIDES = [
    (r"recipes/birthplace\.py (pretrain|finetune)\b", "--max_steps 2"),
    (r"recipes/pretrain\.py\b", "--max_steps 2 --max_train_samples 64 --max_eval_samples 16"),
    (r"recipes/finetune_sentiment\.py\b", "--max_steps 2 --label_budget 32 --max_eval_samples 32"),
    (r"recipes/prepare_data\.py sentiment-corpus\b", "--news_lines 200 --novel_lines 2000"),
    (r"tokenizer/train_tokenizer\.py\b", "--max_chars 2000000 --no_progress"),
]
# The run folders README's Python example reads that its bash blocks do not make (tiny runs, made before it).
PYTHON_RUNS = [
    "python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch --lab_raw_text "
    "--output_dir runs/sentiment/pretrained",
    "python recipes/pretrain.py --train_files ../shared/data/french-corpus/orangesum_news.txt.gz --lab_vocabulary "
    "../shared/data/cls-books --output_dir runs/lm-fr-reviews",
]


def code_blocks(markdown: str, language: str) -> list[str]:
    """The fenced blocks of `language`, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, re.S | re.M)


def logical_lines(block: str) -> list[str]:
    """The block's lines, with backslash continuations joined (a bash array's lines stay as they are)."""
    lines, current = [], ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            current += (line.strip() if current else line.rstrip())[:-1].rstrip() + " "
            continue
        lines.append(current + line.strip() if current else line)
        current = ""
    return lines


def with_overrides(line: str) -> str:
    """The command with its tiny overrides appended (before a trailing comment); `make` lines commented out."""
    if re.match(r"\s*make\b", line):
        return f"# skipped by check_readme.py: {line}"
    command, hash_, comment = line.partition(" # ")
    for pattern, flags in OVERRIDES:
        if re.search(pattern, command):
            return f"{command.rstrip()} {flags}" + (f" {hash_.strip()} {comment}" if hash_ else "")
    return line


def script(markdown: str) -> str:
    bash = [with_overrides(line) for block in code_blocks(markdown, "bash") for line in logical_lines(block)]
    python = code_blocks(markdown, "python")
    lines = ["set -euo pipefail", "set -x", "mkdir -p runs", *bash, *(with_overrides(line) for line in PYTHON_RUNS)]
    for number, block in enumerate(python, 1):
        lines += [
            f"cat > runs/readme_block_{number}.py <<'PYTHON'",
            block.rstrip(),
            "PYTHON",
            f"python runs/readme_block_{number}.py",
        ]
    return "\n".join(lines) + "\n"


def fresh_clone(workspace: Path, revision: str) -> Path:
    """A clone of `revision` in `workspace/repo`, beside a link to this checkout's ../shared, with its .venv."""
    clone = workspace / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", revision], check=True)
    (workspace / "shared").symlink_to((REPO_ROOT.parent / "shared").resolve())
    (clone / ".venv").symlink_to((REPO_ROOT / ".venv").resolve())
    return clone


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """-h prints the examples as written and every flag's default (as hf_models.training.HelpFormatter, which this
    script does not import)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--revision", default="HEAD", help="the commit of this checkout to clone and check")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its runs (the path is printed)")
    parser.add_argument("--print", action="store_true", help="print the script that would run, and stop")
    args = parser.parse_args(argv)
    revision = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", args.revision], capture_output=True, text=True, check=True
    ).stdout.strip()
    if args.print:
        print(script((REPO_ROOT / "README.md").read_text(encoding="utf-8")))
        return 0
    workspace = Path(tempfile.mkdtemp(prefix="check_readme_"))
    clone = fresh_clone(workspace, revision)
    text = script((clone / "README.md").read_text(encoding="utf-8"))
    env = {
        **os.environ,
        **OFFLINE_ENVIRONMENT,
        "PYTHONPATH": str(clone),
        "PATH": f"{clone / '.venv' / 'bin'}:{os.environ['PATH']}",
    }
    print(f"checking README.md of {revision[:12]} in {clone}", flush=True)
    status = subprocess.run(["bash", "-c", text], cwd=clone, env=env).returncode
    print(f"README check: {'passed' if status == 0 else f'FAILED (exit status {status})'}; clone: {clone}")
    if not args.keep and status == 0:
        shutil.rmtree(workspace)  # the links to ../shared and .venv go, never what they point to
    return status


if __name__ == "__main__":
    sys.exit(main())
