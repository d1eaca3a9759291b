"""The code base stays readable: no function longer than 80 lines, and a thin push_to_hub.py."""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80
SKIPPED_FOLDERS = {".venv", "runs", "outputs", "build", ".git"}


def _python_files() -> list[Path]:
    return [
        path
        for path in sorted(REPO_ROOT.rglob("*.py"))
        if not SKIPPED_FOLDERS & set(path.relative_to(REPO_ROOT).parts)
    ]


def test_no_function_is_longer_than_80_lines() -> None:
    too_long = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert not too_long, "functions longer than 80 lines:\n" + "\n".join(too_long)
    assert len(_python_files()) > 20  # the walk found the project


def test_push_to_hub_is_a_thin_command_line() -> None:
    assert len((REPO_ROOT / "push_to_hub.py").read_text(encoding="utf-8").splitlines()) <= 200
