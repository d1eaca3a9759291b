"""Package namespaces whose names are imported when first used: a command line's `-h` and its argument checks need
neither torch nor datasets, which most modules of a package import."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_namespace(package: str, modules: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, where each name of `modules` lives in the submodule it maps to;
    a name is imported on first use and then kept in the package's namespace."""

    def __getattr__(name: str) -> object:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{modules[name]}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *modules])

    return __getattr__, __dir__
