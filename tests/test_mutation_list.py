"""The mutation check's list stays runnable (`make mutation` is not part of `make test`): every planted bug's target
string is found exactly once in its file, and the tests named to catch it exist."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _run_mutations():
    spec = importlib.util.spec_from_file_location("run_mutations", REPO_ROOT / "tests/mutation/run_mutations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_mutant_has_one_target_and_existing_tests() -> None:
    mutation = _run_mutations()
    mutation.check_targets(mutation.MUTANTS)  # SystemExit naming a missing or ambiguous target, a missing test file
    assert all(mutant.old != mutant.new for mutant in mutation.MUTANTS)
