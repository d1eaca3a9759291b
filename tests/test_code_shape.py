"""The code base stays readable: no function longer than 80 lines, a standalone model folder,
imports that only go down the layers and never run in a circle, one course switch, and a thin push_to_hub.py."""

from __future__ import annotations

import ast
import graphlib
import sys
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


# The package's layers, lowest first: a module imports from its own layer or the ones below, never from above.
LAYERS = (
    "small_encoder",
    "environment",
    "textio",
    "safety",
    "metrics",
    "tokenization",
    "data",
    "run_record",
    "hub",  # the card and the export, from the record: what every run writes at its end (`training`)
    "training",
    "tasks",
    "convert",
    "app",  # with the Space export of the app (`app.space`), over `hub`'s
)
PACKAGE = REPO_ROOT / "hf_models"
MODELING_FILE = PACKAGE / "small_encoder" / "modeling_small_encoder.py"


def _package_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


def _imported_modules(path: Path) -> list[str]:
    """The absolute names of the modules `path` imports (relative imports resolved against its package)."""
    package = path.relative_to(REPO_ROOT).with_suffix("").parts[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            names.append(".".join([*base, *([node.module] if node.module else [])]))
    return names


def _layer(module: str) -> int:
    """The layer of an `hf_models.X...` module; the package root (the model classes) is the lowest."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 else 0


def test_the_model_folder_imports_only_torch_and_transformers() -> None:
    """It ships as remote code: a saved folder must load where `hf_models` is not installed."""
    # huggingface_hub is a dependency of transformers (its `@strict` dataclasses check the config).
    allowed = {"torch", "transformers", "huggingface_hub", *sys.stdlib_module_names}
    for path in (PACKAGE / "small_encoder").glob("*.py"):
        imported = _imported_modules(path)
        foreign = [
            m for m in imported if m.split(".")[0] not in allowed and not m.startswith("hf_models.small_encoder")
        ]
        assert not foreign, f"{path.name} imports {foreign}"


def test_no_import_runs_back_up_a_layer() -> None:
    upward = []
    for path in _package_modules():
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts == ("__init__",):
            continue  # the package root registers the model classes only
        own = LAYERS.index(parts[0])
        upward += [
            f"{path.relative_to(REPO_ROOT)} imports {module}"
            for module in _imported_modules(path)
            if module.startswith("hf_models") and _layer(module) > own
        ]
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)
    assert len(_package_modules()) > 30  # the walk found the package


def _module_name(path: Path) -> str:
    """`hf_models/a/b.py` -> `hf_models.a.b`; a package's `__init__.py` -> the package's name."""
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules `path` imports, at any depth of its code (a function's import counts too): `from X import
    Y` names the submodule X.Y when there is one, else the module X."""
    package = path.relative_to(REPO_ROOT).with_suffix("").parts[:-1]
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(
                [
                    *(package[: len(package) - node.level + 1] if node.level else ()),
                    *([node.module] if node.module else []),
                ]
            )
            imported |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names}
    return imported & modules


def test_no_import_circle_among_the_package_modules() -> None:
    """No module imports, directly or through others, a module that imports it back: the import graph of the
    package's modules (a package is its `__init__.py`) has no cycle, with imports inside functions counted."""
    paths = _package_modules()
    modules = {_module_name(path) for path in paths}
    graph = {_module_name(path): _package_imports(path, modules) - {_module_name(path)} for path in paths}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        raise AssertionError("an import circle: " + " -> ".join(error.args[1])) from None
    assert sum(map(len, graph.values())) > 30  # the walk found the imports


def test_the_birthplace_task_chooses_its_course_setting_once() -> None:
    """`--course_vocabulary` picks a QA format object (tokenizer vocabulary, encoding, prediction) in one place."""
    tests = 0
    for path in (PACKAGE / "tasks").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tests += sum(isinstance(node, ast.Attribute) and node.attr == "course_vocabulary" for node in ast.walk(tree))
    assert 1 <= tests <= 2
