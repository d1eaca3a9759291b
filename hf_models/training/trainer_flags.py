"""`TrainingArguments`' flags without importing torch: `transformers.training_args` imports torch, while `-h` and a
refused flag need only the flags' names, types, choices, defaults and help texts. They are read once from the
installed transformers (its own `HfArgumentParser(TrainingArguments)`) and kept in the user's cache, one file per
transformers version and install; `TrainingArgumentsFlags` is a dataclass of them that `HfArgumentParser` turns into
the same flags, and `training_arguments` builds the real `TrainingArguments` from their parsed values (torch is
imported then, when a recipe runs).

Nothing here is written by hand: a new transformers release brings its own flags (a new cache file, named by the
release, the install's path and training_args.py's time stamp, and holding the release it describes: a file that
does not is described again; `HF_MODELS_CACHE` names another folder), and
`tests/test_arguments_file.py` checks that the flags parse as `TrainingArguments`' own."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import zlib
from pathlib import Path
from typing import Any, Literal, Optional

from ..textio import atomic_write_text

__all__ = ["TrainingArgumentsFlags", "describe_training_arguments", "training_arguments"]

# A field's kind, as HfArgumentParser makes its flag: the Python type of the light dataclass's field.
_KINDS = {"int": int, "float": float, "str": str, "bool": bool}


def _transformers_file() -> Path:
    """transformers' training_args.py, found without importing transformers."""
    spec = importlib.util.find_spec("transformers")
    return Path(spec.origin).parent / "training_args.py"


def _transformers_version() -> str:
    return importlib.metadata.version("transformers")


def _cache_path() -> Path:
    source = _transformers_file()
    base = os.environ.get("HF_MODELS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "hf_models"
    )
    identity = f"{zlib.crc32(str(source).encode()):08x}-{source.stat().st_mtime_ns}"  # this install, this file
    return Path(base) / f"training_arguments-{_transformers_version()}-{identity}.json"


# What each described flag holds (`describe_training_arguments`): a cached file lacking one is described again.
_DESCRIPTION_KEYS = {"name", "kind", "many", "optional_value", "const", "choices", "default", "help"}


def _cached(path: Path) -> list[dict[str, Any]] | None:
    """The flags the cache file describes, if it was written for this transformers release and holds what a
    description holds; None otherwise (another release's file under the same name, a damaged one)."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("transformers") != _transformers_version():
        return None
    flags = cached.get("flags")
    valid = (
        isinstance(flags, list)
        and flags
        and all(isinstance(flag, dict) and set(flag) == _DESCRIPTION_KEYS and flag["kind"] in _KINDS for flag in flags)
    )
    return flags if valid and "output_dir" in {flag["name"] for flag in flags} else None


def _plain(value: Any) -> Any:
    """A default as JSON: an enum by its value."""
    value = getattr(value, "value", value)
    return value if isinstance(value, str | int | float | bool | list | dict | type(None)) else None


def describe_training_arguments() -> list[dict[str, Any]]:
    """Each `TrainingArguments` flag as HfArgumentParser makes it: name, kind, choices, default, help (imports
    torch: transformers' training_args does)."""
    from transformers import HfArgumentParser, TrainingArguments

    parser = HfArgumentParser(TrainingArguments)
    actions = {
        action.dest: action
        for action in parser._actions
        if action.option_strings and not isinstance(action, argparse._StoreFalseAction | argparse._HelpAction)
    }
    described = []
    for spec in dataclasses.fields(TrainingArguments):
        action = actions.get(spec.name)
        if not spec.init or action is None:
            continue
        type_name = getattr(action.type, "__name__", "")
        kind = {"int": "int", "float": "float", "string_to_bool": "bool"}.get(type_name, "str")
        described.append(
            {
                "name": spec.name,
                "kind": kind,
                "many": action.nargs == "+",
                # a text flag that may stand alone (`--fsdp`: its `const`)
                "optional_value": action.nargs == "?",
                "const": _plain(action.const),
                "choices": [_plain(choice) for choice in action.choices] if action.choices else None,
                "default": _plain(action.default),
                "help": action.help,
            }
        )
    return described


def _described() -> list[dict[str, Any]]:
    """`describe_training_arguments()`, from the cache when this transformers install has been described before."""
    path = _cache_path()
    cached = _cached(path)
    if cached is not None:
        return cached
    described = describe_training_arguments()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"transformers": _transformers_version(), "flags": described}) + "\n")
    except OSError:  # a read-only home: described again next time
        pass
    return described


def _flags_dataclass(described: list[dict[str, Any]]) -> type:
    fields = []
    for flag in described:
        kind = Literal[tuple(flag["choices"])] if flag["choices"] and flag["kind"] == "str" else _KINDS[flag["kind"]]
        kind = list[kind] if flag["many"] else kind
        default = flag["default"]
        switch = flag["kind"] == "bool" and flag["optional_value"]  # `--flag` alone is true, even with no default
        if default is None and not switch:
            kind = Optional[kind]  # noqa: UP045  (HfArgumentParser compares the type with Optional[bool])
        metadata = {"help": flag["help"]}
        if flag["optional_value"] and flag["kind"] == "str":
            metadata.update(nargs="?", const=flag["const"])
        if isinstance(default, list | dict):
            spec = dataclasses.field(default_factory=lambda value=default: type(value)(value), metadata=metadata)
        else:
            spec = dataclasses.field(default=default, metadata=metadata)
        fields.append((flag["name"], kind, spec))
    return dataclasses.make_dataclass("TrainingArgumentsFlags", fields)


TrainingArgumentsFlags = _flags_dataclass(_described())
DEFAULTS = {
    spec.name: spec.default if spec.default is not dataclasses.MISSING else spec.default_factory()
    for spec in dataclasses.fields(TrainingArgumentsFlags)
}


def training_arguments(**values: Any):
    """The real `TrainingArguments` of parsed flag values: those that differ from Trainer's defaults are passed (the
    others keep the class's own defaults, enums and objects included)."""
    from transformers import TrainingArguments

    return TrainingArguments(**{name: value for name, value in values.items() if value != DEFAULTS.get(name)})
