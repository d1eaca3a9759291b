"""`TrainingArguments`' flags without importing torch: `transformers.training_args` imports torch, while `-h` and a
refused flag need only the flags' names, types, choices, defaults and help texts. They are read from the source of
the installed transformers (`ast`): TrainingArguments' fields, the enums their types name (from the modules
training_args.py imports them from) and the module's constants their metadata names, into a stand-in dataclass
that `HfArgumentParser` turns into the same flags. Nothing is cached or written. `TrainingArgumentsFlags` is a
dataclass of those flags, and `training_arguments` builds the real `TrainingArguments` from their parsed values
(torch is imported then, when a recipe runs).

A default that the class body computes (`optim`'s, from torch's version) is not read: the flag shows none and,
unless given, TrainingArguments' own applies (`UNREAD_DEFAULTS`). Nothing here is written by hand: a new
transformers release brings its own flags, and `tests/test_arguments_file.py` checks that the flags parse as
`TrainingArguments`' own."""

from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import importlib.util
from pathlib import Path
from typing import Any, Literal, Optional, Union

from transformers.utils import ExplicitEnum
from transformers.utils import logging as transformers_logging

__all__ = ["TrainingArgumentsFlags", "UNREAD_DEFAULTS", "describe_training_arguments", "training_arguments"]

# A field's kind, as HfArgumentParser makes its flag: the Python type of the light dataclass's field.
_KINDS = {"int": int, "float": float, "str": str, "bool": bool}
_PACKAGE = Path(importlib.util.find_spec("transformers").origin).parent  # found without importing transformers


def _module(dotted: str) -> ast.Module:
    """The syntax tree of transformers' module `dotted` (relative to the package: 'trainer_utils')."""
    base = _PACKAGE.joinpath(*dotted.split("."))
    path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    return ast.parse(path.read_text(encoding="utf-8"))


def _enums(module: ast.Module, names: set[str]) -> dict[str, type]:
    """The classes `names` of `module` whose body is string constants: transformers' `ExplicitEnum`s."""
    found = {}
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            members = [
                (target.id, statement.value.value)
                for statement in node.body
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
                for target in statement.targets
                if isinstance(target, ast.Name)
            ]
            if members:
                found[node.name] = ExplicitEnum(node.name, members)
    return found


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _namespace(module: ast.Module, used: set[str]) -> dict[str, Any]:
    """What the fields' types and metadata name (`used`): typing's names, the enums (training_args.py's own and
    those it imports from transformers' modules), and the module's constants, computed from transformers'
    logging levels alone."""
    namespace: dict[str, Any] = {"Any": Any, "Literal": Literal, "Optional": Optional, "Union": Union}
    namespace["logging"] = transformers_logging
    namespace.update(_enums(module, used))
    for node in module.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            wanted = {alias.name for alias in node.names} & used
            if wanted - namespace.keys():
                namespace.update(_enums(_module(node.module), wanted))
    constants = {
        node.targets[0].id: node
        for node in module.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    needed, order = set(used), set()
    while fresh := (needed & constants.keys()) - order:  # the constants named, and those they are computed from
        order |= fresh
        needed = set().union(*(_names(constants[name].value) for name in fresh))
    for name in sorted(order, key=lambda name: constants[name].lineno):  # e.g. trainer_log_levels
        exec(compile(ast.Module([constants[name]], []), "training_args.py", "exec"), namespace)
    return namespace


class _StandIns(dict):
    """The namespace of the fields' types, where a name that is not read (a class of another library:
    `ParallelismConfig`) is a class of that name, whose flag takes a text as HfArgumentParser makes it for the real
    class."""

    def __missing__(self, name: str) -> type:
        if hasattr(builtins, name):
            raise KeyError(name)
        return type(name, (), {})


def _stand_in() -> tuple[type, frozenset[str]]:
    """TrainingArguments' fields as a dataclass of the same types, defaults and metadata, read from its source;
    and the fields whose default the class computes (left to TrainingArguments)."""
    module = _module("training_args")
    (body,) = [node for node in module.body if isinstance(node, ast.ClassDef) and node.name == "TrainingArguments"]
    fields = [node for node in body.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)]
    namespace = _namespace(module, set().union(*(_names(node) for node in fields)))
    specs, unread = [], set()
    for node in fields:
        kind = eval(ast.unparse(node.annotation), {}, _StandIns(namespace))
        options: dict[str, Any] = {}
        call = node.value
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "field":
            for keyword in call.keywords:
                try:
                    options[keyword.arg] = eval(ast.unparse(keyword.value), dict(namespace))
                except NameError:  # a value of the class body (`default_optim`): TrainingArguments' own
                    if keyword.arg in ("default", "default_factory"):
                        unread.add(node.target.id)
                        options["default"] = None
        elif call is not None:
            options["default"] = ast.literal_eval(call)
        if options.get("init", True):
            specs.append((node.target.id, kind, dataclasses.field(**options)))
    return dataclasses.make_dataclass("TrainingArguments", specs, kw_only=True), frozenset(unread)


def _plain(value: Any) -> Any:
    """A default as JSON: an enum by its value."""
    value = getattr(value, "value", value)
    return value if isinstance(value, str | int | float | bool | list | dict | type(None)) else None


def describe_training_arguments(arguments: type) -> list[dict[str, Any]]:
    """Each flag of `arguments` (TrainingArguments, or its stand-in) as HfArgumentParser makes it: name, kind,
    choices, default, help."""
    from transformers import HfArgumentParser

    parser = HfArgumentParser(arguments)
    actions = {
        action.dest: action
        for action in parser._actions
        if action.option_strings and not isinstance(action, argparse._StoreFalseAction | argparse._HelpAction)
    }
    described = []
    for spec in dataclasses.fields(arguments):
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


_STAND_IN, UNREAD_DEFAULTS = _stand_in()
TrainingArgumentsFlags = _flags_dataclass(describe_training_arguments(_STAND_IN))
DEFAULTS = {
    spec.name: spec.default if spec.default is not dataclasses.MISSING else spec.default_factory()
    for spec in dataclasses.fields(TrainingArgumentsFlags)
}


def training_arguments(**values: Any):
    """The real `TrainingArguments` of parsed flag values: those that differ from Trainer's defaults are passed (the
    others keep the class's own defaults, enums and objects included)."""
    from transformers import TrainingArguments

    return TrainingArguments(**{name: value for name, value in values.items() if value != DEFAULTS.get(name)})
