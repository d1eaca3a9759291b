"""The command line of every task, as run_clm.py: the task's own dataclass, `ModelArguments` and `TrainingArguments`,
from flags or one JSON file, then logging and the seed. `--help` shows each dataclass in a group of its own, the
task's first and Trainer's last, and a subcommand can take only the fields it uses (`FlagGroup`).

Parsing imports neither torch nor datasets (nor transformers' Trainer): `-h` and a refused flag answer at once, and
`TrainingArguments` itself is built only once the flags are accepted (`trainer_flags`)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import logging
import os
import sys
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from transformers.hf_argparser import HfArgumentParser  # transformers' lazy package, without torch

from ..safety import check_checkpoint, check_output_dir, one_line
from ..safety.ranges import (
    KEPT_SHARE,
    NON_NEGATIVE,
    POSITIVE,
    RANGE_KEY,
    SEED,
    Range,
    check_flag_ranges,
    check_paths_given,
    field_ranges,
)
from ..textio import TEXT_ENCODING, UsageError
from .trainer_flags import TrainingArgumentsFlags, training_arguments

if TYPE_CHECKING:
    from transformers import TrainingArguments

__all__ = [
    "FlagGroup",
    "HelpFormatter",
    "ModelArguments",
    "TRAINER_GROUP",
    "TRAINER_TITLE",
    "build_parser",
    "check_model_folder",
    "check_run_output",
    "check_training_arguments",
    "course_defaults",
    "expand_arguments_file",
    "merge_config_overrides",
    "help_sections",
    "model_group",
    "parse_args",
    "read_arguments_file",
    "run_task",
    "setup_run",
    "trainer_group",
]


@dataclass
class ModelArguments:
    """Which model to start from, or which config to build one from."""

    model_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A trained model folder to start from (none: scratch)."},
    )
    model_config: str | None = field(
        default=None,
        metadata={
            "help": "From scratch: a preset ('altegrad-lab', 'cs224n-mingpt', 'base': GPT-2 small's shape) or a "
            "config JSON file. Default: the recipe's preset, named in its --help."
        },
    )
    config_overrides: str | None = field(
        default=None,
        metadata={
            "help": "From scratch: config changes, e.g. 'hidden_size=64,dropout=0' (as run_clm.py; 'dropout' sets "
            "the four dropouts). Merged key by key with an arguments file's, the flag's winning."
        },
    )
    attention_type: str | None = field(
        default=None,
        metadata={
            "help": "From scratch: the attention (default: the preset's).",
            "choices": ["vanilla", "synthesizer", "random", "factorized"],
        },
    )
    tokenizer_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A tokenizer folder; default: the model's."},
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "Write into a used --output_dir (refused otherwise)."},
    )

    def __post_init__(self) -> None:
        # As transformers' run_clm: these describe a model to build; a loaded model keeps the config it was saved with.
        if self.model_name_or_path:
            given = [
                flag
                for flag, value in (
                    ("--model_config", self.model_config),
                    ("--config_overrides", self.config_overrides),
                    ("--attention_type", self.attention_type),
                )
                if value
            ]
            if given:
                raise UsageError(
                    f"{' and '.join(given)} describe a model built from scratch, but --model_name_or_path "
                    f"{self.model_name_or_path} loads one with its own config: drop {' and '.join(given)}"
                )

    @property
    def tokenizer_path(self) -> str | None:
        """`--tokenizer_name_or_path`, else the tokenizer saved with `--model_name_or_path` (None: neither given)."""
        return self.tokenizer_name_or_path or self.model_name_or_path


@dataclass(frozen=True)
class FlagGroup:
    """One dataclass of a command line, shown under `title` in --help; `names`: only these of its fields are flags
    (None: all of them), `helps`: help texts that replace the dataclass's for this command, `defaults`: the
    command's own defaults (shown by --help and used, from flags or a JSON file), `listed`: the flags that -h lists
    (None: all of them); the others still parse, and `--help_trainer` lists them. `build_with`: what builds the
    parsed object from the flags' values (default: `arguments`), `ranges`: the allowed values of flags whose
    dataclass is not ours (ours have them in their fields' metadata)."""

    title: str
    arguments: type
    names: tuple[str, ...] | None = None
    helps: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)
    listed: tuple[str, ...] | None = None
    build_with: Callable[..., object] | None = None
    ranges: dict[str, Range] = field(default_factory=dict)

    def flags(self) -> type:
        """The dataclass of the flags (a copy of the chosen fields, with the group's title for HfArgumentParser)."""
        types = typing.get_type_hints(self.arguments)
        chosen = []
        for spec in dataclasses.fields(self.arguments):
            if not spec.init or (self.names is not None and spec.name not in self.names):
                continue
            metadata = {**spec.metadata, **({"help": self.helps[spec.name]} if spec.name in self.helps else {})}
            metadata.pop(RANGE_KEY, None)  # checked after parsing (`check_flag_ranges`), not an argparse keyword
            default = {"default": spec.default} if spec.default is not dataclasses.MISSING else {}
            if spec.default_factory is not dataclasses.MISSING:
                default = {"default_factory": spec.default_factory}
            if spec.name in self.defaults:
                default = {"default": self.defaults[spec.name]}
            chosen.append((spec.name, types[spec.name], field(metadata=metadata, **default)))
        named = {*(self.names or ()), *self.defaults, *(self.listed or ())}
        unknown = named - {name for name, _, _ in chosen}
        if unknown:
            raise ValueError(f"{self.arguments.__name__} has no fields {sorted(unknown)}")
        name = f"{self.arguments.__name__}Flags"
        return dataclasses.make_dataclass(name, chosen, namespace={"_argument_group_name": self.title})

    def flag_ranges(self, flags) -> dict[str, Range]:
        """The ranges of the group's flags (`flags`, parsed): its dataclass's fields' and the group's `ranges`."""
        names = {spec.name for spec in dataclasses.fields(flags)}
        ranges = {**field_ranges(self.arguments), **self.ranges}
        return {name: allowed for name, allowed in ranges.items() if name in names}

    def build(self, flags) -> object:
        """The group's own dataclass from its parsed flags (the other fields keep their defaults)."""
        values = {spec.name: getattr(flags, spec.name) for spec in dataclasses.fields(flags)}
        return (self.build_with or self.arguments)(**values)


MAX_HELP_POSITION = 40  # the column of the help texts; a longer flag has its own line

# The allowed values of TrainingArguments' numeric flags (its fields are transformers'; our own dataclasses keep a
# flag's range in its field's metadata). Every name is a TrainingArguments field (`check_flag_ranges` refuses others).
TRAINER_RANGES: dict[str, Range] = {
    "learning_rate": NON_NEGATIVE,
    "weight_decay": NON_NEGATIVE,
    "max_grad_norm": NON_NEGATIVE,
    "adam_beta1": Range(0, 1, high_open=True),
    "adam_beta2": Range(0, 1, high_open=True),
    "adam_epsilon": NON_NEGATIVE,
    "label_smoothing_factor": KEPT_SHARE,  # 1: every target uniform, the labels say nothing
    "num_train_epochs": NON_NEGATIVE,
    "warmup_steps": NON_NEGATIVE,
    "per_device_train_batch_size": POSITIVE,
    "per_device_eval_batch_size": POSITIVE,
    "gradient_accumulation_steps": POSITIVE,
    "eval_accumulation_steps": POSITIVE,
    "logging_steps": POSITIVE,
    "eval_steps": POSITIVE,
    "save_steps": POSITIVE,
    "save_total_limit": POSITIVE,
    "seed": SEED,
    "data_seed": SEED,
    "dataloader_num_workers": NON_NEGATIVE,
}


def trainer_flags(title: str, **options) -> FlagGroup:
    """A group of `TrainingArguments` flags: parsed without torch, built as the real `TrainingArguments`."""
    return FlagGroup(title, TrainingArgumentsFlags, build_with=training_arguments, ranges=TRAINER_RANGES, **options)


TRAINER_GROUP = trainer_flags("Trainer arguments (transformers.TrainingArguments: the usual Trainer flags)")
TRAINER_TITLE = "Trainer arguments (--help_trainer lists all of TrainingArguments)"
# Shorter help texts than TrainingArguments' own, for the Trainer flags a recipe lists.
TRAINER_HELPS = {
    "output_dir": "The run's folder (model, report, plots, checkpoints).",
    "num_train_epochs": "Passes over the training set (unless --max_steps).",
    "max_steps": "Optimizer steps in all, instead of --num_train_epochs (-1: by epochs).",
    "learning_rate": "Peak learning rate of AdamW.",
    "lr_scheduler_type": "Learning-rate schedule after the warmup: linear, cosine, cosine_with_min_lr (with "
    "--lr_scheduler_kwargs), constant, ... (transformers' SchedulerType).",
    "lr_scheduler_kwargs": "The schedule's own arguments, as JSON.",
    "warmup_steps": "Steps of linear warmup from 0 to --learning_rate (a float below 1: a share of the steps).",
    "weight_decay": "AdamW's decoupled weight decay (not on biases and LayerNorm weights).",
    "adam_beta2": "AdamW's beta2.",
    "per_device_train_batch_size": "Training examples per batch and device.",
    "per_device_eval_batch_size": "Evaluation examples per batch and device.",
    "gradient_accumulation_steps": "Batches whose gradients add up into one optimizer step.",
    "logging_steps": "Steps between two logged training losses (loss.png's points).",
    "eval_strategy": "When to evaluate on the validation set: no, steps or epoch.",
    "save_strategy": "When to save a checkpoint (for --resume_from_checkpoint): no, steps, epoch or best.",
    "seed": "Seed of the initialization and the data order.",
    "bf16": "bfloat16 mixed precision (on a GPU).",
    "use_cpu": "Train on the CPU, even with a GPU.",
    "report_to": "Where the logs also go: none, tensorboard, wandb, ...",
    "resume_from_checkpoint": "The checkpoint-N folder of an earlier run to continue.",
}


# The Trainer flags a course's handout sets (its optimization); a course config's other keys (precision, logging,
# data loading) are the machine's, not the course's.
HANDOUT_FLAGS = (
    "num_train_epochs",
    "max_steps",
    "learning_rate",
    "lr_scheduler_type",
    "lr_scheduler_kwargs",
    "warmup_steps",
    "weight_decay",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
    "max_grad_norm",
    "per_device_train_batch_size",
    "per_device_eval_batch_size",
    "gradient_accumulation_steps",
)


# Settings written for another: a value of the first holds only together with the second's value it was written
# beside. The values come in layers (the recipe's defaults, a course file's; an arguments file; the command line): a
# later layer that sets the second to another value, and not the first, starts the first from Trainer's own default.
TIED_FLAGS = {
    "lr_scheduler_kwargs": "lr_scheduler_type",  # a schedule's own arguments (cosine has no min_lr_rate)
    "max_steps": "num_train_epochs",  # a length given in epochs, not cut by a step count written for others
    "optim_args": "optim",  # an optimizer's own arguments
    "torch_compile_mode": "torch_compile",  # a mode turns compiling back on (TrainingArguments)
    "torch_compile_backend": "torch_compile",
}


def course_defaults(
    configs: str | os.PathLike, config: str, names: Iterable[str] = HANDOUT_FLAGS
) -> dict[str, object]:
    """The values of the flags `names` that a course's config file sets (`config`, e.g. 'altegrad/course/x.json',
    in the recipes' `configs` folder, which the recipe names when it runs: the package itself reads no file of the
    repository)."""
    values = read_arguments_file(os.path.join(configs, config))
    names = set(names)
    return {key: json.dumps(v) if isinstance(v, dict) else v for key, v in values.items() if key in names}


def trainer_group(
    listed: Sequence[str],
    configs: str | os.PathLike | None = None,
    defaults_file: str | None = None,
    source: str = "the course's",
    **helps: str,
) -> FlagGroup:
    """`TrainingArguments` as a recipe shows them: the flags it sets `listed` (every other still parses, and
    `--help_trainer` lists it), their help texts (`helps` replaces `TRAINER_HELPS`' for this recipe), and Trainer's
    own defaults, or a course recipe's: the handout's (`course_defaults(configs, defaults_file)`), whose help says
    `source` (the group's title names the file). Without `configs`, Trainer's own defaults."""
    course = configs is not None and defaults_file is not None
    defaults = course_defaults(configs, defaults_file) if course else {}
    texts = {name: helps.get(name, TRAINER_HELPS.get(name)) for name in listed}
    for name in defaults:
        if texts.get(name):
            texts[name] = f"{texts[name].removesuffix('.')} ({source})."
    shown = f"{Path(configs).name}/{defaults_file}" if course else None
    return trainer_flags(
        f"{TRAINER_TITLE[:-1]}; {source} values: {shown})" if course else TRAINER_TITLE,
        helps={name: text for name, text in texts.items() if text},
        defaults=defaults,
        listed=tuple(listed),
    )


def model_group(default_preset: str, names: tuple[str, ...] | None = None) -> FlagGroup:
    """`ModelArguments` as a recipe shows them: its default preset named."""
    help_text = f"A preset (altegrad-lab, cs224n-mingpt, base) or a config JSON file. Default: {default_preset}."
    return FlagGroup("Model arguments", ModelArguments, names, {"model_config": help_text})


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Examples print as written (line breaks kept); every flag shows its default (but a switch's, off, and None or
    nothing: the flag's help says what happens without it). Short: a flag shows one of its names (`--data_dir`; HfArgumentParser's `--data-dir`
    parses too) with a short value name (`N`, `X`, `BOOL`, or the last word of the flag: `DIR`), a true/false flag
    none (`--flag` is `--flag true`), and a long list of choices is left to the help text."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        switch_off = action.default is False and (action.nargs == 0 or action.const is True)  # `--flag` turns it on
        if switch_off or action.default in (None, "", []) or isinstance(action, argparse._StoreFalseAction):
            return action.help
        return super()._get_help_string(action)

    def _get_default_metavar_for_optional(self, action: argparse.Action) -> str:
        if action.type in (int, float):
            return {int: "N", float: "X"}[action.type]
        if getattr(action.type, "__name__", "") == "string_to_bool":
            return "BOOL"
        last = action.dest.rsplit("_", 1)[-1].upper()
        return last if len(last) > 2 else action.dest.upper()

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings:
            return super()._format_action_invocation(action)
        # HfArgumentParser's `--data-dir` beside `--data_dir` is left out (`--no-flag` of BooleanOptionalAction kept)
        strings = action.option_strings
        name = ", ".join(s for s in strings if _underscored(s) == s or _underscored(s) not in strings)
        if action.nargs == 0 or (action.nargs == "?" and action.const is True):
            return name
        if action.choices is not None and len(",".join(map(str, action.choices))) > 40:
            return f"{name} {action.dest.rsplit('_', 1)[-1].upper()}"
        return f"{name} {self._format_args(action, self._get_default_metavar_for_optional(action))}"


def _underscored(option: str) -> str:
    return option[:2] + option[2:].replace("-", "_")


class _ListTrainerFlags(argparse.Action):
    """`--help_trainer`: the help with every Trainer flag, those that -h leaves out (`hidden`) included."""

    def __init__(self, option_strings, dest, hidden: dict[argparse.Action, str], help: str) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help)
        self.hidden = hidden

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        for action, text in self.hidden.items():
            action.help = text
        parser.print_help()
        parser.exit()


def _hide_unlisted(parser: HfArgumentParser, groups: Sequence[FlagGroup]) -> None:
    """Leave out of -h the flags of a group that are not `listed`, and add `--help_trainer`, which lists them."""
    hidden = {}
    for group in groups:
        if group.listed is None:
            continue
        (shown,) = [g for g in parser._action_groups if g.title == group.title]
        for action in shown._group_actions:
            if action.dest not in group.listed:
                hidden[action], action.help = action.help, argparse.SUPPRESS
        # As -h: the listed flags first, in the recipe's order (then the others, with --help_trainer).
        shown._group_actions.sort(key=lambda action: _listed_position(action, group.listed))
        text = "List every TrainingArguments flag and exit."
        shown.add_argument("--help_trainer", action=_ListTrainerFlags, hidden=hidden, help=text)


def _listed_position(action: argparse.Action, listed: tuple[str, ...]) -> int:
    return listed.index(action.dest) if action.dest in listed else len(listed)


def help_sections(doc: str | None) -> dict[str, str]:
    """A command's module docstring as --help's description (its first paragraph) and epilog (the rest: examples)."""
    if not doc:
        return {}
    description, _, epilog = doc.strip().partition("\n\n")
    return {"description": description, "epilog": epilog or None}


def build_parser(groups: Sequence[FlagGroup], **parser_kwargs) -> HfArgumentParser:
    """The `HfArgumentParser` of `groups`, in their order; a short usage line (the flags are listed below it)."""
    parser_kwargs.setdefault("usage", "%(prog)s [CONFIG.json] [--flag value ...]")
    parser = HfArgumentParser([group.flags() for group in groups], formatter_class=HelpFormatter, **parser_kwargs)
    _hide_unlisted(parser, groups)
    return parser


def read_arguments_file(path: str) -> dict:
    """The flags of an arguments file (`configs/...json`): one JSON object of flag names and values."""
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder, not an arguments file; give the JSON file of flags")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: arguments file not found")
    try:
        with open(path, encoding=TEXT_ENCODING) as file:  # a byte order mark at the start is dropped, as for data
            values = json.load(file)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}: not valid JSON ({error.msg}); fix the arguments file") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text ({error.reason}); fix the arguments file") from None
    if not isinstance(values, dict):
        raise UsageError(
            f'{path} holds a JSON {type(values).__name__}; an arguments file holds one object, {{"flag": value, ...}}'
        )
    return values


def _flag_tokens(action: argparse.Action, value, path: str) -> list[str]:
    """`value` of a file as the command line would give it to `action`; a switch takes true or false only."""
    flag = action.option_strings[0]
    if action.nargs == 0:  # store_true / store_false: the flag alone, when the file asks for its constant
        if not isinstance(value, bool):
            raise UsageError(f"{path}: {flag[2:]!r} is a switch: give true or false (JSON), not {json.dumps(value)}")
        return [flag] if value == action.const else []
    if isinstance(value, list):
        return [flag, *map(str, value)]
    if isinstance(value, bool):
        value = str(value).lower()
    elif isinstance(value, dict):
        value = json.dumps(value)
    return [f"{flag}={value}"]  # one token: a value such as -1 is never read as a flag


def expand_arguments_file(parser: argparse.ArgumentParser, args: Sequence[str], position: int = 0) -> list[str]:
    """`args` with the arguments file at `position` (if a `.json` file is there) replaced by its flags, in front of
    the rest: the file gives values, and a flag given on the command line after it overrides the file's (argparse
    keeps the last value). A key that is no flag of `parser`, or a value the flag refuses, is a one-line
    `UsageError` naming the file."""
    args = list(args)
    if len(args) <= position or not args[position].endswith(".json"):
        return args
    path = args[position]
    actions = {option[2:]: action for action in parser._actions for option in action.option_strings}
    tokens = []
    values = read_arguments_file(path)
    for key, value in values.items():
        action = actions.get(key)
        if key in RENAMED_FLAGS:
            raise UsageError(f"{path}: key {key!r} is now {RENAMED_FLAGS[key]!r} ({parser.prog} -h)")
        if action is None or action.dest != key or key == "help":
            raise UsageError(f"{path}: unknown key {key!r}: {parser.prog} has no --{key} flag ({parser.prog} -h)")
        if value is None:  # null: the flag's own "not given", where it has one
            if action.required or action.default is not None:
                raise UsageError(f"{path}: {key!r} is null; give it a value, or drop the key for its default")
            parser.set_defaults(**{key: None})
        else:
            tokens += _flag_tokens(action, value, path)

    def file_error(message: str):
        if not message.startswith("the following arguments are required"):  # the command line may give those
            raise UsageError(f"{path}: {message}")

    parser.error = file_error  # the file's values alone first, so that a wrong one is blamed on the file
    try:
        parser.parse_known_args(tokens)
    finally:
        del parser.error
    rest = args[position + 1 :]
    if values.get("config_overrides") and "config_overrides" in actions:
        rest = _merged_overrides(rest, actions["config_overrides"].option_strings, values["config_overrides"])
    return [*args[:position], *tokens, *rest]


def merge_config_overrides(earlier: str | None, later: str | None) -> str | None:
    """Two `--config_overrides` ('key=value,...') merged key by key: `earlier`'s keys that `later` does not set, then
    `later`'s (applied in order, so that a later `dropout` sets the four dropouts after an earlier one's)."""
    if not earlier or not later:
        return later or earlier
    items = [item.strip() for item in later.split(",") if item.strip()]
    later_keys = {item.split("=", 1)[0].strip() for item in items}
    kept = [
        item.strip() for item in earlier.split(",") if item.strip() and item.split("=", 1)[0].strip() not in later_keys
    ]
    return ",".join([*kept, *items])


def _merged_overrides(args: list[str], options: Sequence[str], from_file: str) -> list[str]:
    """`args` with each `--config_overrides` value merged with the arguments file's (`merge_config_overrides`)."""
    merged = list(args)
    for i, token in enumerate(merged):
        if token in options and i + 1 < len(merged):
            merged[i + 1] = merge_config_overrides(from_file, merged[i + 1])
        for option in options:
            if token.startswith(f"{option}="):
                merged[i] = f"{option}={merge_config_overrides(from_file, token.split('=', 1)[1])}"
    return merged


# Flags that were renamed: a one-line error that names the new flag, not "unknown argument".
RENAMED_FLAGS = {"variant": "attention_type"}


def parse_args(groups: Sequence[FlagGroup], args: Sequence[str] | None = None, **parser_kwargs) -> tuple:
    """Parse `[CONFIG.json] [--flag value ...]` into the groups' dataclasses: an arguments file's values (run_clm.py
    reads one alone), overridden by the flags after it. A flag or key of no group is an error; so are the checks of
    the dataclasses themselves (`__post_init__`, `TrainingArguments`' own, e.g. `--bf16` with `--fp16`), a numeric
    flag out of its range (`check_flag_ranges`) and a path flag given as an empty string: each a `UsageError`,
    before any work."""
    parser = build_parser(groups, **parser_kwargs)
    args = list(sys.argv[1:] if args is None else args)
    source = args[0] if args and args[0].endswith(".json") else "the flags"
    raw, args = args, expand_arguments_file(parser, args)
    try:
        *flags, unknown = parser.parse_args_into_dataclasses(
            args=args, look_for_args_file=False, return_remaining_strings=True
        )
        if unknown:  # a typo, or a flag of another subcommand
            for token in unknown:
                if (old := token.split("=", 1)[0].removeprefix("--")) in RENAMED_FLAGS:
                    raise UsageError(f"{parser.prog}: --{old} is now --{RENAMED_FLAGS[old]} ({parser.prog} -h)")
            raise UsageError(f"{parser.prog}: unknown arguments {' '.join(unknown)}; {parser.prog} -h lists its flags")
        from_file = read_arguments_file(source) if source != "the flags" else {}
        on_line = _given_flags(parser, raw[1:] if source != "the flags" else raw)
        flags = [_untie(group, flags_, from_file, on_line) for group, flags_ in zip(groups, flags, strict=True)]
        for group, flags_ in zip(groups, flags, strict=True):  # before building: TrainingArguments imports torch
            check_flag_ranges(dataclasses.asdict(flags_), ranges=group.flag_ranges(flags_))
        parsed = tuple(group.build(flags_) for group, flags_ in zip(groups, flags, strict=True))
    except UsageError:
        raise
    except (TypeError, ValueError) as error:  # a wrong type, a dataclass's own check
        raise UsageError(f"{source}: {one_line(error)}") from None
    check_paths_given(*parsed)
    if source != "the flags":
        _check_arguments_file_outside_output(source, parsed)
    return parsed


def _given_flags(parser: argparse.ArgumentParser, args: Sequence[str]) -> set[str]:
    """The fields that `args` (an arguments file's flags included) give a value."""
    given = set()
    for action in parser._actions:
        for option in action.option_strings:
            if any(token == option or token.startswith(f"{option}=") for token in args):
                given.add(action.dest)
    return given


def _untie(group: FlagGroup, flags, from_file: dict, on_line: set[str]):
    """`flags` with each setting of `TIED_FLAGS` back at its dataclass's own default where a later layer than its own
    (the group's defaults < the arguments file `from_file` < the command line's `on_line`) gives the setting it was
    written for another value (`lr_scheduler_type: cosine` under the course's `cosine_with_min_lr` and its
    `min_lr_rate`: cosine's own arguments; `--torch_compile false` over a file's compile mode: no compiling)."""
    names = {spec.name for spec in dataclasses.fields(flags)}

    def layer(name: str) -> int:
        return 2 if name in on_line else 1 if name in from_file else 0 if name in group.defaults else -1

    reset = {}
    for tied, lead in TIED_FLAGS.items():
        if tied not in names or lead not in names or layer(tied) < 0 or layer(lead) <= layer(tied):
            continue
        written_for = group.defaults.get(lead, _own_default(group.arguments, lead))
        if layer(tied) == 1:
            written_for = from_file.get(lead, written_for)
        if getattr(flags, lead) != written_for:
            reset[tied] = _own_default(group.arguments, tied)
    return dataclasses.replace(flags, **reset) if reset else flags


def _own_default(arguments: type, name: str) -> object:
    (spec,) = [spec for spec in dataclasses.fields(arguments) if spec.name == name]
    return spec.default_factory() if spec.default_factory is not dataclasses.MISSING else spec.default


def _check_arguments_file_outside_output(path: str, parsed: tuple) -> None:
    """An arguments file kept in the `--output_dir` that `--overwrite_output_dir` replaces would be written over."""
    output_dir = next(
        (getattr(group, "output_dir", None) for group in parsed if getattr(group, "output_dir", None)), None
    )
    overwrite = any(getattr(group, "overwrite_output_dir", False) is True for group in parsed)
    if overwrite and output_dir and Path(path).resolve().parent == Path(output_dir).resolve():
        raise UsageError(
            f"{path} lies in --output_dir {output_dir}, whose files --overwrite_output_dir replaces: a command never "
            "writes over its own input; move the arguments file out of the folder"
        )


def check_training_arguments(training_args: TrainingArguments, fitted_otherwise: bool = False) -> None:
    """Step counts that would save an untrained model, and a checkpoint to resume from that is not there, refused
    before any work (Trainer would find out only after loading the data and building the model). `fitted_otherwise`:
    the task fits the model another way (a linear probe), so zero epochs is allowed."""
    checkpoint = training_args.resume_from_checkpoint
    if checkpoint and not os.path.isdir(checkpoint):
        problem = "is a file" if os.path.exists(checkpoint) else "does not exist"
        raise UsageError(
            f"--resume_from_checkpoint {checkpoint} {problem}; give the checkpoint-N folder of an earlier run"
        )
    if training_args.max_steps < -1:
        raise UsageError(f"--max_steps {training_args.max_steps}: give a positive number of steps, or -1 for epochs")
    if training_args.max_steps <= 0 and training_args.num_train_epochs < 0:
        raise UsageError(f"--num_train_epochs {training_args.num_train_epochs}: give a positive number of epochs")
    if training_args.max_steps <= 0 and training_args.num_train_epochs <= 0 and not fitted_otherwise:
        raise UsageError(
            f"--num_train_epochs {training_args.num_train_epochs} with no --max_steps trains nothing; give a "
            "positive number of epochs or steps"
        )


# Where TrainingArguments writes when --output_dir is not given: never chosen silently for a run.
TRAINER_DEFAULT_OUTPUT_DIR = "trainer_output"


def check_model_folder(model_args: ModelArguments) -> None:
    """A `--model_name_or_path` that is not here, and that the tokenizer would be read from (no
    `--tokenizer_name_or_path`): the model folder is what is missing, and the error says so (a tokenizer is loaded
    from a folder only, so nothing that would load is refused)."""
    path = model_args.model_name_or_path
    if path and not model_args.tokenizer_name_or_path and not os.path.exists(path):
        raise UsageError(f"--model_name_or_path {path}: model folder not found; give the folder a run saved")


def check_run_output(
    model_args: ModelArguments,
    training_args: TrainingArguments,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
    fitted_otherwise: bool = False,
    architecture: str | None = None,
    task: str | None = None,
) -> None:
    """Before a training run's work: its step counts, a checkpoint to resume from of this `task`'s model
    (`architecture`, `check_checkpoint`), and an `--output_dir` that is neither one of its inputs (the model, the
    tokenizer, `inputs`) nor a used folder, unless `--overwrite_output_dir` or `--resume_from_checkpoint`.
    `fitted_otherwise`: zero training steps are allowed (`check_training_arguments`)."""
    check_model_folder(model_args)
    check_training_arguments(training_args, fitted_otherwise)
    if training_args.output_dir in (None, TRAINER_DEFAULT_OUTPUT_DIR):  # not given, or null in an arguments file
        raise UsageError("--output_dir is missing (or null): give the folder the run writes to")
    check_checkpoint(training_args.resume_from_checkpoint, architecture, task)
    model_config = (
        model_args.model_config if model_args.model_config and os.path.isfile(model_args.model_config) else None
    )
    check_output_dir(
        training_args.output_dir,
        overwrite=model_args.overwrite_output_dir,
        resume=training_args.resume_from_checkpoint,
        inputs=[
            ("--model_name_or_path", model_args.model_name_or_path),
            ("--tokenizer_name_or_path", model_args.tokenizer_name_or_path),
            ("--model_config", model_config),
            *inputs,
        ],
    )


def setup_run(training_args: TrainingArguments) -> None:
    """Logging (to stdout, at the process's level, for datasets and transformers too) and the seed, as run_clm.py."""
    import datasets
    import transformers

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)]
    )
    log_level = training_args.get_process_log_level()
    logging.getLogger("hf_models").setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    transformers.set_seed(training_args.seed)


def run_task(
    step: Callable[..., dict] | str, groups: Sequence[FlagGroup], args: Sequence[str] | None = None, **parser_kwargs
) -> dict:
    """A task's command line: parse its groups (the task's dataclass, `ModelArguments`, `TrainingArguments`, in
    that order) from flags or one JSON file, set up logging and the seed, and run
    `step(model_args, task_args, training_args)`. `step` may be named 'module:function', imported once the flags
    are accepted (a recipe's -h and its refused flags never import the task's torch and datasets)."""
    task_args, model_args, training_args = parse_args(groups, args, **parser_kwargs)
    if training_args.push_to_hub:
        from ..hub.publish import check_push_to_hub

        check_push_to_hub()  # offline or without a token: one line, before any data is read
    if isinstance(step, str):
        module, _, name = step.partition(":")
        step = getattr(importlib.import_module(module), name)
    setup_run(training_args)
    return step(model_args, task_args, training_args)
