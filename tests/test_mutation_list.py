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


def test_a_survivor_of_its_nearest_tests_meets_the_whole_suite_less_the_unmutated_failures(tmp_path, monkeypatch):
    """The runner's two stages, pytest faked: killed by the nearest tests, the suite never runs; a survivor runs the
    whole suite (without the list's own check, whose target the mutant removed), less what fails unmutated."""
    mutation = _run_mutations()
    mutant = mutation.Mutant("m", "lib.py", "a = 1", "a = 2", ("tests/test_near.py",), "a is 2")
    calls = []
    verdicts = {}  # (tests, fail_fast) -> (exit code, output)

    def fake_pytest(root, tests, timeout, deselect=(), fail_fast=True):
        calls.append((tests, tuple(deselect), fail_fast))
        return verdicts[tests, fail_fast]

    def fresh_copy(destination):
        destination.mkdir(parents=True, exist_ok=True)
        (destination / "lib.py").write_text("a = 1\n")
        return destination

    monkeypatch.setattr(mutation, "run_pytest", fake_pytest)
    monkeypatch.setattr(mutation, "copy_tree", fresh_copy)
    suite = mutation.WholeSuite(tmp_path, timeout=60)
    unmutated = "FAILED tests/test_env.py::test_needs_git - OSError\nFAILED tests/test_x.py::test_a[p q] - boom\n"
    verdicts[mutation.WHOLE_SUITE, False] = (1, unmutated)

    verdicts[mutant.tests, True] = (1, "FAILED tests/test_near.py::test_a - assert 2 == 1\n")
    outcome = mutation.run_mutant(mutant, fresh_copy(tmp_path / "one"), suite, 60)
    assert (outcome.status, outcome.stage, outcome.detail) == ("killed", "nearest", "tests/test_near.py::test_a")
    assert (tmp_path / "one" / "lib.py").read_text() == "a = 2\n" and len(calls) == 1

    verdicts[mutant.tests, True] = (0, "1 passed")
    verdicts[mutation.WHOLE_SUITE, True] = (1, "FAILED tests/test_far.py::test_b - assert False\n")
    outcome = mutation.run_mutant(mutant, fresh_copy(tmp_path / "two"), suite, 60)
    assert (outcome.status, outcome.stage, outcome.detail) == ("killed", "suite", "tests/test_far.py::test_b")
    broken = ("tests/test_env.py::test_needs_git", "tests/test_x.py::test_a[p q]")
    assert calls[1:] == [
        (mutant.tests, (), True),  # the nearest tests first, then the unmutated suite once, then the mutant's suite
        (mutation.WHOLE_SUITE, (), False),
        (mutation.WHOLE_SUITE, broken, True),
    ]
    assert "--ignore=tests/test_mutation_list.py" in mutation.WHOLE_SUITE

    verdicts[mutation.WHOLE_SUITE, True] = (0, "600 passed")
    outcome = mutation.run_mutant(mutant, fresh_copy(tmp_path / "three"), suite, 60)
    assert (outcome.status, outcome.stage) == ("SURVIVED", "suite")
    assert calls[-1] == (mutation.WHOLE_SUITE, broken, True)  # the unmutated suite ran once
    assert sum(call == (mutation.WHOLE_SUITE, (), False) for call in calls) == 1
