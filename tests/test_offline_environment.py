"""The offline environment is defined once (`hf_models.environment`): the Makefile's exports are the same variables
with the same values, and the scripts that set it import it."""

from __future__ import annotations

import re
from pathlib import Path

from hf_models.environment import OFFLINE_ENVIRONMENT, go_offline

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_the_makefile_exports_the_offline_environment() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    exported = dict(re.findall(r"^export (\w+) :?= *(\S*)$", makefile, re.M))
    offline = {name: value for name, value in exported.items() if name in OFFLINE_ENVIRONMENT or "OFFLINE" in name}
    assert offline == OFFLINE_ENVIRONMENT


def test_no_other_file_spells_the_offline_variables_out() -> None:
    """A second list of the variables, even a partial one (two of them), would drift from this one: the Python
    files import it."""
    own = {REPO_ROOT / "hf_models" / "environment.py", Path(__file__).resolve()}
    copies = []
    for path in [*REPO_ROOT.rglob("*.py"), REPO_ROOT / "benchmarks" / "Snakefile"]:
        if path in own or ".venv" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if sum(f'"{name}"' in text for name in OFFLINE_ENVIRONMENT) >= 2:
            copies.append(str(path.relative_to(REPO_ROOT)))
    assert not copies, f"import hf_models.environment.OFFLINE_ENVIRONMENT instead of a copy in {copies}"


def test_go_offline_keeps_a_value_the_user_set() -> None:
    environ = go_offline({"HF_HUB_OFFLINE": "0"})
    assert environ == {**OFFLINE_ENVIRONMENT, "HF_HUB_OFFLINE": "0"}
