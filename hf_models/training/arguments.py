"""The recipes' command lines, as run_classification.py: `HfArgumentParser` over the task's dataclass,
`ModelArguments` and `TrainingArguments`, each a group of --help. As TRL's `TrlParser`, a JSON or YAML file first
gives values that the flags after it override; a course recipe's defaults (its handout's, from a course file) come
before both. A flag's range and choices sit in its field's metadata and are checked here, in `parse_args`, before
any work; a refusal is one `UsageError` line naming the file or the flag."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import transformers
import yaml
from transformers import HfArgumentParser, TrainingArguments

from ..safety import check_checkpoint, check_output_dir, one_line
from ..safety.ranges import (
    KEPT_SHARE,
    NON_NEGATIVE,
    POSITIVE,
    RANGE_KEY,
    SEED,
    Range,
    check_flag_ranges,
)
from ..textio import TEXT_ENCODING, UsageError


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
        given = [flag for flag in ("model_config", "config_overrides", "attention_type") if getattr(self, flag)]
        if self.model_name_or_path and given:
            flags = " and ".join(f"--{flag}" for flag in given)
            raise UsageError(
                f"{flags} describe a model built from scratch, but --model_name_or_path {self.model_name_or_path} "
                f"loads one with its own config: drop {flags}"
            )

    @property
    def tokenizer_path(self) -> str | None:
        """`--tokenizer_name_or_path`, else the tokenizer saved with `--model_name_or_path` (None: neither given)."""
        return self.tokenizer_name_or_path or self.model_name_or_path


# The allowed values of TrainingArguments' numeric flags (transformers' fields; ours keep theirs in their metadata).
TRAINER_RANGES: dict[str, Range] = {
    "learning_rate": NON_NEGATIVE,
    "weight_decay": NON_NEGATIVE,
    "max_grad_norm": NON_NEGATIVE,
    "adam_beta1": Range(0, 1, high_open=True),
    "adam_beta2": Range(0, 1, high_open=True),
    "adam_epsilon": NON_NEGATIVE,
    "label_smoothing_factor": KEPT_SHARE,  # 1: every target uniform, the labels say nothing
    "num_train_epochs": NON_NEGATIVE,
    "max_steps": Range(-1),  # -1: by epochs
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


@dataclass(frozen=True)
class FlagGroup:
    """One dataclass of a command line, under `title` in --help. `names`: only these fields are flags (None: all),
    `helps`: this command's help texts, `defaults`: its own defaults (shown by --help, used unless given),
    `listed`: the flags -h lists (None: all; `--help_trainer` lists the others, which still parse)."""

    title: str
    arguments: type
    names: tuple[str, ...] | None = None
    helps: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)
    listed: tuple[str, ...] | None = None


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
    "logging_steps": "Steps between two logged training losses (loss.png's points).",
    "eval_strategy": "When to evaluate on the validation set: no, steps or epoch.",
    "seed": "Seed of the initialization and the data order.",
    "bf16": "bfloat16 mixed precision (on a GPU).",
    "use_cpu": "Train on the CPU, even with a GPU.",
    "resume_from_checkpoint": "The checkpoint-N folder of an earlier run to continue.",
}
# The Trainer flags a course's handout sets (its optimization); a course file's others are the machine's.
HANDOUT_FLAGS = (
    *("num_train_epochs", "max_steps", "learning_rate", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps"),
    *("weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm", "per_device_train_batch_size"),
    *("per_device_eval_batch_size", "gradient_accumulation_steps"),
)
# Settings written for another: a value of the first holds only beside the second's value it was written with. The
# values come in layers (a course's defaults; an arguments file; the command line): a later layer that sets the
# second to another value, and not the first, starts the first from Trainer's own default.
TIED_FLAGS = {
    "lr_scheduler_kwargs": "lr_scheduler_type",  # a schedule's own arguments (cosine has no min_lr_rate)
    "max_steps": "num_train_epochs",  # a length given in epochs, not cut by a step count written for others
    "optim_args": "optim",  # an optimizer's own arguments
    "torch_compile_mode": "torch_compile",  # a mode turns compiling back on (TrainingArguments)
    "torch_compile_backend": "torch_compile",
}
RENAMED_FLAGS = {"variant": "attention_type"}  # an error that names the new flag, not "unknown argument"


def trainer_group(
    listed: Sequence[str] | None,
    configs: str | os.PathLike | None = None,
    config: str | None = None,
    source: str = "the course's",
    title: str = TRAINER_TITLE,
    names: tuple[str, ...] | None = None,
    **helps: str,
) -> FlagGroup:
    """`TrainingArguments` as a recipe shows them (only `names`, if given): the flags -h lists (`listed`; None: all),
    their helps (`helps` over `TRAINER_HELPS`), and Trainer's defaults, or a course's: the handout's flags that the
    file `config` in the recipes' `configs` folder sets (named by the recipe: the package reads no file of the
    repository), said to be `source`'s, the title naming the file."""
    course = read_arguments_file(os.path.join(configs, config)) if configs is not None and config else {}
    shown = names or listed or ()
    handout = [name for name in HANDOUT_FLAGS if name in course and (names is None or name in names)]
    defaults = {name: json.dumps(course[name]) if isinstance(course[name], dict) else course[name] for name in handout}
    texts = {name: text for name in shown if (text := helps.get(name, TRAINER_HELPS.get(name)))}
    texts |= {name: f"{texts[name].removesuffix('.')} ({source})." for name in defaults if name in texts}
    title = f"{title[:-1]}; {source} values: {Path(configs).name}/{config})" if course else title
    listed = tuple(listed) if listed is not None else None
    return FlagGroup(title, TrainingArguments, names, helps=texts, defaults=defaults, listed=listed)


def model_group(default_preset: str, names: tuple[str, ...] | None = None) -> FlagGroup:
    """`ModelArguments` as a recipe shows them: its default preset named."""
    help_text = f"A preset (altegrad-lab, cs224n-mingpt, base) or a config JSON file. Default: {default_preset}."
    return FlagGroup("Model arguments", ModelArguments, names, {"model_config": help_text})


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Examples print as written; every flag shows its default (but a switch's, off, and None or nothing). Short: one
    name per flag (`--data_dir`; `--data-dir` parses too), a short value name (`N`, `X`, `BOOL`, or the flag's last
    word), none for a switch, and a long list of choices left to the help text."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        switch_off = action.default is False and (action.nargs == 0 or action.const is True)
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
        strings = action.option_strings
        underscored = [s[:2] + s[2:].replace("-", "_") for s in strings]
        name = ", ".join(s for s, u in zip(strings, underscored, strict=True) if u == s or u not in strings)
        if action.nargs == 0 or (action.nargs == "?" and action.const is True):
            return name
        if action.choices is not None and len(",".join(map(str, action.choices))) > 40:
            return f"{name} {action.dest.rsplit('_', 1)[-1].upper()}"
        return f"{name} {self._format_args(action, self._get_default_metavar_for_optional(action))}"


def build_parser(groups: Sequence[FlagGroup], doc: str | None = None, **parser_kwargs) -> HfArgumentParser:
    """The `HfArgumentParser` of `groups`, in their order: a group's chosen fields (`names`), with its helps and
    defaults and no range in their metadata (no argparse keyword); its unlisted flags are left out of -h (listed
    first, in the recipe's order) and `--help_trainer` lists them; defaults shown as plain values (an enum's). `doc`,
    a command's docstring: its first paragraph is --help's description, the rest (the examples) its epilog."""
    dataclass_types = []
    for group in groups:
        types, chosen = typing.get_type_hints(group.arguments), []
        for spec in dataclasses.fields(group.arguments):
            if spec.init and (group.names is None or spec.name in group.names):
                metadata = {**spec.metadata, "help": group.helps.get(spec.name, spec.metadata.get("help"))}
                metadata.pop(RANGE_KEY, None)
                default = {"default": spec.default, "default_factory": spec.default_factory}
                if spec.name in group.defaults:
                    default = {"default": group.defaults[spec.name]}
                chosen.append((spec.name, types[spec.name], field(metadata=metadata, **default)))
        unknown = {*(group.names or ()), *group.defaults, *(group.listed or ())} - {name for name, _, _ in chosen}
        if unknown:
            raise ValueError(f"{group.arguments.__name__} has no fields {sorted(unknown)}")
        name, namespace = f"{group.arguments.__name__}Flags", {"_argument_group_name": group.title}
        dataclass_types.append(dataclasses.make_dataclass(name, chosen, namespace=namespace))
    if doc:
        description, _, epilog = doc.strip().partition("\n\n")
        parser_kwargs = {"description": description, "epilog": epilog or None, **parser_kwargs}
    parser_kwargs.setdefault("usage", "%(prog)s [CONFIG.json|CONFIG.yaml] [--flag value ...]")
    parser = HfArgumentParser(dataclass_types, formatter_class=HelpFormatter, **parser_kwargs)
    for action in parser._actions:
        action.default = getattr(action.default, "value", action.default)
    for group in (group for group in groups if group.listed is not None):
        (shown,) = [g for g in parser._action_groups if g.title == group.title]
        hidden = {a: a.help for a in shown._group_actions if a.dest not in group.listed}
        for action in hidden:
            action.help = argparse.SUPPRESS
        shown._group_actions.sort(key=lambda a: group.listed.index(a.dest) if a.dest in group.listed else 1e9)
        shown.add_argument("--help_trainer", action="store_true", help="List every TrainingArguments flag and exit.")
        parser.hidden = hidden  # for --help_trainer (`parse_args`)
    return parser


ARGUMENTS_FILE_SUFFIXES = (".json", ".yaml", ".yml")


def read_arguments_file(path: str) -> dict:
    """The flags of an arguments file (`configs/...json`, or YAML): one object of flag names and values."""
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder, not an arguments file; give the JSON file of flags")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: arguments file not found")
    kind = "JSON" if path.endswith(".json") else "YAML"
    try:
        with open(path, encoding=TEXT_ENCODING) as file:  # a byte order mark at the start is dropped, as for data
            values = json.load(file) if kind == "JSON" else yaml.safe_load(file)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}: not valid JSON ({error.msg}); fix the arguments file") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text ({error.reason}); fix the arguments file") from None
    except yaml.YAMLError as error:
        raise UsageError(f"{path}: not valid YAML ({one_line(error)}); fix the arguments file") from None
    if not isinstance(values, dict):
        raise UsageError(
            f'{path} holds a {kind} {type(values).__name__}; an arguments file holds one object, {{"flag": value, ...}}'
        )
    return values


def expand_arguments_file(parser: argparse.ArgumentParser, args: Sequence[str], position: int = 0) -> list[str]:
    """`args` with the arguments file at `position` (if there is one) replaced by its flags, in front of the rest:
    the flags after it override the file's (argparse keeps the last value). A key that is no flag of `parser`, or a
    value the flag refuses, is a one-line `UsageError` naming the file."""
    args = list(args)
    if len(args) <= position or not args[position].endswith(ARGUMENTS_FILE_SUFFIXES):
        return args
    path, tokens = args[position], []
    actions = {option[2:]: action for action in parser._actions for option in action.option_strings}
    values = read_arguments_file(path)
    for key, value in values.items():
        action = actions.get(key)
        if key in RENAMED_FLAGS:
            raise UsageError(f"{path}: key {key!r} is now {RENAMED_FLAGS[key]!r} ({parser.prog} -h)")
        if action is None or action.dest != key or key == "help":
            raise UsageError(f"{path}: unknown key {key!r}: {parser.prog} has no --{key} flag ({parser.prog} -h)")
        flag = action.option_strings[0]
        if value is None:  # null: the flag's own "not given", where it has one
            if action.required or action.default is not None:
                raise UsageError(f"{path}: {key!r} is null; give it a value, or drop the key for its default")
            parser.set_defaults(**{key: None})
        elif action.nargs == 0:  # store_true / store_false: the flag alone, when the file asks for its constant
            if not isinstance(value, bool):
                raise UsageError(f"{path}: {key!r} is a switch: give true or false, not {json.dumps(value)}")
            tokens += [flag] if value == action.const else []
        elif isinstance(value, list):
            tokens += [flag, *map(str, value)]
        else:  # one token: a value such as -1 is never read as a flag
            if isinstance(value, bool | dict):
                value = json.dumps(value)
            tokens.append(f"{flag}={value}")

    def file_error(message: str):
        if not message.startswith("the following arguments are required"):  # the command line may give those
            raise UsageError(f"{path}: {message}")

    parser.error = file_error  # the file's values alone first, so that a wrong one is blamed on the file
    try:
        parser.parse_known_args(tokens)
    finally:
        del parser.error
    rest = args[position + 1 :]
    options = actions["config_overrides"].option_strings if "config_overrides" in actions else ()
    for i, token in enumerate(rest if values.get("config_overrides") else ()):  # key by key, the flag's winning
        if token in options and i + 1 < len(rest):
            rest[i + 1] = merge_config_overrides(values["config_overrides"], rest[i + 1])
        elif token.split("=", 1)[0] in options and "=" in token:
            flag, later = token.split("=", 1)
            rest[i] = f"{flag}={merge_config_overrides(values['config_overrides'], later)}"
    return [*args[:position], *tokens, *rest]


def merge_config_overrides(earlier: str | None, later: str | None) -> str | None:
    """Two `--config_overrides` ('key=value,...') merged key by key: `earlier`'s keys that `later` does not set, then
    `later`'s (in order, so that a later `dropout` sets the four dropouts after an earlier one's)."""
    if not earlier or not later:
        return later or earlier
    items = [item.strip() for item in later.split(",") if item.strip()]
    later_keys = {item.split("=", 1)[0].strip() for item in items}
    kept = [
        item.strip() for item in earlier.split(",") if item.strip() and item.split("=", 1)[0].strip() not in later_keys
    ]
    return ",".join([*kept, *items])


def parse_args(
    groups: Sequence[FlagGroup],
    args: Sequence[str] | None = None,
    doc: str | None = None,
    new_run: bool = False,
    **parser_kwargs,
) -> tuple:
    """`[CONFIG.json|CONFIG.yaml] [--flag value ...]` as the groups' dataclasses: the file's values, overridden by
    the flags after it. Refused, as a one-line `UsageError` before any work: a flag or key of no group, a value out
    of its range or choices, a dataclass's own check (`__post_init__`, TrainingArguments': `--bf16` with `--fp16`),
    an empty path, and an arguments file in the --output_dir that --overwrite_output_dir replaces. `new_run` (a
    training run's command line): a missing model folder and a used --output_dir (`check_run_folder`) too."""
    parser = build_parser(groups, doc, **parser_kwargs)
    args = list(sys.argv[1:] if args is None else args)
    if "--help_trainer" in args:  # -h with the Trainer flags it leaves out
        for action, text in getattr(parser, "hidden", {}).items():
            action.help = text
        parser.print_help()
        parser.exit()
    source = args[0] if args and args[0].endswith(ARGUMENTS_FILE_SUFFIXES) else None
    on_line, from_file = (args[1:], read_arguments_file(source)) if source else (args, {})
    namespace, unknown = parser.parse_known_args(expand_arguments_file(parser, args) if source else args)
    for token in unknown:  # a typo, or a flag of another subcommand
        if (old := token.split("=", 1)[0].removeprefix("--")) in RENAMED_FLAGS:
            raise UsageError(f"{parser.prog}: --{old} is now --{RENAMED_FLAGS[old]} ({parser.prog} -h)")
    if unknown:
        raise UsageError(f"{parser.prog}: unknown arguments {' '.join(unknown)}; {parser.prog} -h lists its flags")
    values = vars(namespace)
    given = {a.dest for a in parser._actions for o in a.option_strings for t in on_line if t.split("=")[0] == o}
    defaults = {name: value for group in groups for name, value in group.defaults.items()}
    own = {spec.name: spec for group in groups for spec in dataclasses.fields(group.arguments) if spec.name in values}
    layer = {name: 2 if name in given else 1 if name in from_file else 0 if name in defaults else -1 for name in own}
    for tied, lead in TIED_FLAGS.items():  # a later layer's lead value starts the tied from its own default
        if tied in own and lead in own and 0 <= layer[tied] < layer[lead]:
            written_for = defaults[lead] if lead in defaults else _own_default(own[lead])
            written_for = from_file.get(lead, written_for) if layer[tied] == 1 else written_for
            if values[lead] != written_for:
                values[tied] = _own_default(own[tied])
    parsed = []
    for group in groups:  # each number checked against its range (field metadata, `TRAINER_RANGES`), then built
        mine = {spec.name: values[spec.name] for spec in dataclasses.fields(group.arguments) if spec.name in own}
        specs = dataclasses.fields(group.arguments)  # a range in the field's metadata, or TrainingArguments'
        ranges = {spec.name: spec.metadata[RANGE_KEY] for spec in specs if RANGE_KEY in spec.metadata}
        ranges = TRAINER_RANGES if group.arguments is TrainingArguments else ranges
        check_flag_ranges(mine, ranges={name: allowed for name, allowed in ranges.items() if name in mine})
        if group.arguments is TrainingArguments and new_run:
            # TrainingArguments' __post_init__ imports transformers' model stack (seconds of CPU): a run refused for
            # its paths is told before.
            model_args = next(built for built in parsed if isinstance(built, ModelArguments))
            check_run_folder(model_args, mine.get("output_dir"), mine.get("resume_from_checkpoint"))
        try:
            parsed.append(group.arguments(**mine))
        except UsageError:
            raise
        except (TypeError, ValueError) as error:  # a dataclass's own check
            raise UsageError(f"{source or 'the flags'}: {one_line(error)}") from None
    output_dir = next((group.output_dir for group in parsed if getattr(group, "output_dir", None)), None)
    overwrite = any(getattr(group, "overwrite_output_dir", False) is True for group in parsed)
    if source and overwrite and output_dir and Path(source).resolve().parent == Path(output_dir).resolve():
        raise UsageError(
            f"{source} lies in --output_dir {output_dir}, whose files --overwrite_output_dir replaces: a command "
            "never writes over its own input; move the arguments file out of the folder"
        )
    return tuple(parsed)


def _own_default(spec: dataclasses.Field) -> object:
    return spec.default_factory() if spec.default_factory is not dataclasses.MISSING else spec.default


def check_model_folder(model_args: ModelArguments) -> None:
    """A `--model_name_or_path` that is not here, and that the tokenizer would be read from (no
    `--tokenizer_name_or_path`): the model folder is what is missing, and the error says so."""
    path = model_args.model_name_or_path
    if path and not model_args.tokenizer_name_or_path and not os.path.exists(path):
        raise UsageError(f"--model_name_or_path {path}: model folder not found; give the folder a run saved")


# Where TrainingArguments writes when --output_dir is not given: never chosen silently for a run.
TRAINER_DEFAULT_OUTPUT_DIR = "trainer_output"


def check_run_output(
    model_args: ModelArguments,
    training_args: TrainingArguments,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
    fitted_otherwise: bool = False,
    architecture: str | None = None,
    task: str | None = None,
) -> None:
    """Before a training run's work (Trainer would find out after loading the data and the model): step counts that
    would save an untrained model (`fitted_otherwise`: the task fits it another way, zero epochs allowed), a
    checkpoint to resume that is missing or of another `task`'s model (`architecture`), and an --output_dir that is
    one of its inputs (the model, the tokenizer, `inputs`) or a used folder, unless --overwrite_output_dir or
    --resume_from_checkpoint."""
    check_model_folder(model_args)
    check_checkpoint(training_args.resume_from_checkpoint, architecture, task)
    steps, epochs = training_args.max_steps, training_args.num_train_epochs  # neither negative: `TRAINER_RANGES`
    if steps <= 0 and epochs <= 0 and not fitted_otherwise:
        raise UsageError(
            f"--num_train_epochs {epochs} with no --max_steps trains nothing; give a positive number of epochs or steps"
        )
    if training_args.output_dir in (None, TRAINER_DEFAULT_OUTPUT_DIR):  # not given, or null in an arguments file
        raise UsageError("--output_dir is missing (or null): give the folder the run writes to")
    check_run_folder(model_args, training_args.output_dir, training_args.resume_from_checkpoint, inputs)


def check_run_folder(
    model_args: ModelArguments,
    output_dir: str | None,
    resume: str | bool | None,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
) -> None:
    """A missing model folder, and an --output_dir that is one of the inputs (the model, the tokenizer, its config,
    `inputs`) or holds an earlier run, unless --overwrite_output_dir or --resume_from_checkpoint."""
    check_model_folder(model_args)
    if output_dir in (None, TRAINER_DEFAULT_OUTPUT_DIR):
        return
    model_config = (
        model_args.model_config if model_args.model_config and os.path.isfile(model_args.model_config) else None
    )
    check_output_dir(
        output_dir,
        overwrite=model_args.overwrite_output_dir,
        resume=resume,
        inputs=[
            ("--model_name_or_path", model_args.model_name_or_path),
            ("--tokenizer_name_or_path", model_args.tokenizer_name_or_path),
            ("--model_config", model_config),
            *inputs,
        ],
    )


def setup_run(training_args: TrainingArguments) -> None:
    """As run_clm.py: logging (to stdout, at the process's level, for datasets and transformers too) and the seed;
    with --push_to_hub, offline or without a token is one line before any data is read."""
    if training_args.push_to_hub:
        from ..hub.publish import check_push_to_hub

        check_push_to_hub()
    import datasets  # not for -h

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)]
    )
    log_level = training_args.get_process_log_level()
    logging.getLogger("hf_models").setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    transformers.set_seed(training_args.seed)
