"""The package as a user installs it: `pip install .` (not editable) gives a package whose every module imports from
any folder. Nothing of the repository (configs/, the recipes) is read at import: a course's defaults are read by the
recipe that runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = REPO_ROOT / "hf_models"
# What a build of the package reads (pyproject.toml names the readme and the license file).
BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE")

PROBE = """
import importlib, json, pkgutil, sys
import hf_models
failed = {}
imported = []
for module in pkgutil.walk_packages(hf_models.__path__, "hf_models."):
    try:
        importlib.import_module(module.name)
        imported.append(module.name)
    except BaseException as error:
        failed[module.name] = f"{type(error).__name__}: {error}"
from hf_models.run_record import CARD_TEMPLATE  # package data: the model card's template
shipped = {"card_template": CARD_TEMPLATE.is_file()}
print(json.dumps({"file": hf_models.__file__, "imported": imported, "failed": failed, "shipped": shipped}))
"""


def _modules(package: Path) -> set[str]:
    """The modules of the package's source tree: every .py file of a folder with an __init__.py."""
    return {
        ".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__")
        for path in package.rglob("*.py")
        if "__pycache__" not in path.parts and (path.parent / "__init__.py").is_file()
    }


def _pip(*arguments: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *arguments, "--no-deps", "--no-index", "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_a_plain_install_imports_every_module_from_another_folder(tmp_path) -> None:
    # Built from a copy, so that the build's own folders (build/, *.egg-info) are written there, not in the checkout.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source / "hf_models", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in BUILD_FILES:
        shutil.copy(REPO_ROOT / name, source / name)
    _pip("wheel", "--no-build-isolation", "-w", str(tmp_path / "wheel"), str(source))
    (wheel,) = (tmp_path / "wheel").glob("hf_models-*.whl")
    site = tmp_path / "site"
    _pip("install", "--target", str(site), str(wheel))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The installed copy first on the path, before the editable install of the checkout.
    env = {**os.environ, **OFFLINE_ENVIRONMENT, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(found["file"]).is_relative_to(site), found["file"]  # the wheel's package, not the checkout's
    assert found["failed"] == {}
    assert found["shipped"] == {"card_template": True}  # the card renders from an installed package
    assert set(found["imported"]) == _modules(PACKAGE) - {"hf_models"}  # every module of the source is shipped
