"""The command line of every task, as run_clm.py: the task's own dataclass, `ModelArguments` and `TrainingArguments`,
from flags or one JSON file, then logging and the seed. `--help` shows each dataclass in a group of its own, the
task's first and Trainer's last, and a subcommand can take only the fields it uses (`FlagGroup`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import datasets
import transformers
from transformers import HfArgumentParser, TrainingArguments, set_seed

from ..safety import check_output_dir
from ..textio import UsageError

__all__ = [
    "FlagGroup",
    "HelpFormatter",
    "ModelArguments",
    "TRAINER_GROUP",
    "build_parser",
    "check_run_output",
    "check_training_arguments",
    "expand_arguments_file",
    "help_sections",
    "model_group",
    "parse_args",
    "read_arguments_file",
    "run_task",
    "setup_run",
]


@dataclass
class ModelArguments:
    """Which model to start from, or which config to build one from."""

    model_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A trained model folder (save_pretrained) to start from. Omit to train from scratch."},
    )
    model_config: str | None = field(
        default=None,
        metadata={
            "help": "From scratch: a preset name ('altegrad-lab', 'cs224n-mingpt', or 'base': GPT-2 small's shape) "
            "or a config JSON file. Default: the recipe's preset, named in its --help."
        },
    )
    config_overrides: str | None = field(
        default=None,
        metadata={
            "help": "Override config fields when training from scratch, e.g. "
            "'hidden_size=64,num_hidden_layers=2,num_attention_heads=4' (same syntax as run_clm.py)."
        },
    )
    attention_type: str | None = field(
        default=None,
        metadata={
            "help": "From scratch: the attention of the new model (default: the preset's).",
            "choices": ["vanilla", "synthesizer", "random", "factorized"],
        },
    )
    tokenizer_name_or_path: str | None = field(
        default=None,
        metadata={"help": "A tokenizer folder (tokenizer/train_tokenizer.py). Defaults to --model_name_or_path."},
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Write into an --output_dir that already holds a model, a tokenizer, a run record or predictions "
            "(refused otherwise; --resume_from_checkpoint continues a folder's checkpoint instead)."
        },
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
    (None: all of them), `helps`: help texts that replace the dataclass's for this command."""

    title: str
    arguments: type
    names: tuple[str, ...] | None = None
    helps: dict[str, str] = field(default_factory=dict)

    def flags(self) -> type:
        """The dataclass of the flags (a copy of the chosen fields, with the group's title for HfArgumentParser)."""
        types = typing.get_type_hints(self.arguments)
        chosen = []
        for spec in dataclasses.fields(self.arguments):
            if not spec.init or (self.names is not None and spec.name not in self.names):
                continue
            metadata = {**spec.metadata, **({"help": self.helps[spec.name]} if spec.name in self.helps else {})}
            default = {"default": spec.default} if spec.default is not dataclasses.MISSING else {}
            if spec.default_factory is not dataclasses.MISSING:
                default = {"default_factory": spec.default_factory}
            chosen.append((spec.name, types[spec.name], field(metadata=metadata, **default)))
        unknown = set(self.names or ()) - {name for name, _, _ in chosen}
        if unknown:
            raise ValueError(f"{self.arguments.__name__} has no fields {sorted(unknown)}")
        name = f"{self.arguments.__name__}Flags"
        return dataclasses.make_dataclass(name, chosen, namespace={"_argument_group_name": self.title})

    def build(self, flags) -> object:
        """The group's own dataclass from its parsed flags (the other fields keep their defaults)."""
        return self.arguments(**{spec.name: getattr(flags, spec.name) for spec in dataclasses.fields(flags)})


TRAINER_GROUP = FlagGroup(
    "Trainer arguments (transformers.TrainingArguments: the usual Trainer flags)", TrainingArguments
)


def model_group(default_preset: str, names: tuple[str, ...] | None = None) -> FlagGroup:
    """`ModelArguments` as a recipe shows them: its default preset named."""
    help_text = (
        "From scratch: a preset name ('altegrad-lab', 'cs224n-mingpt', or 'base': GPT-2 small's shape) or a config "
        f"JSON file. Default: {default_preset}."
    )
    return FlagGroup("Model arguments", ModelArguments, names, {"model_config": help_text})


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Examples print as written (line breaks kept); every flag shows its default."""


def help_sections(doc: str | None) -> dict[str, str]:
    """A command's module docstring as --help's description (its first paragraph) and epilog (the rest: examples)."""
    if not doc:
        return {}
    description, _, epilog = doc.strip().partition("\n\n")
    return {"description": description, "epilog": epilog or None}


def build_parser(groups: Sequence[FlagGroup], **parser_kwargs) -> HfArgumentParser:
    """The `HfArgumentParser` of `groups`, in their order; a short usage line (the flags are listed below it)."""
    parser_kwargs.setdefault("usage", "%(prog)s [CONFIG.json] [--flag value ...]")
    return HfArgumentParser([group.flags() for group in groups], formatter_class=HelpFormatter, **parser_kwargs)


def read_arguments_file(path: str) -> dict:
    """The flags of an arguments file (`configs/...json`): one JSON object of flag names and values."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: arguments file not found")
    try:
        with open(path, encoding="utf-8") as file:
            values = json.load(file)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}: not valid JSON ({error.msg}); fix the arguments file") from None
    if not isinstance(values, dict):
        raise UsageError(
            f"{path}: an arguments file holds one JSON object of flag names and values, not a {type(values).__name__}"
        )
    return values


def _flag_tokens(action: argparse.Action, value) -> list[str]:
    """`value` of a file as the command line would give it to `action`."""
    flag = action.option_strings[0]
    if action.nargs == 0:  # store_true / store_false: the flag alone, when the file asks for its constant
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
    for key, value in read_arguments_file(path).items():
        action = actions.get(key)
        if action is None or action.dest != key or key == "help":
            raise UsageError(f"{path}: unknown key {key!r}: {parser.prog} has no --{key} flag ({parser.prog} -h)")
        if value is None:
            parser.set_defaults(**{key: None})
        else:
            tokens += _flag_tokens(action, value)

    def file_error(message: str):
        if not message.startswith("the following arguments are required"):  # the command line may give those
            raise UsageError(f"{path}: {message}")

    parser.error = file_error  # the file's values alone first, so that a wrong one is blamed on the file
    try:
        parser.parse_known_args(tokens)
    finally:
        del parser.error
    return [*args[:position], *tokens, *args[position + 1 :]]


def parse_args(groups: Sequence[FlagGroup], args: Sequence[str] | None = None, **parser_kwargs) -> tuple:
    """Parse `[CONFIG.json] [--flag value ...]` into the groups' dataclasses: an arguments file's values (run_clm.py
    reads one alone), overridden by the flags after it. A flag or key of no group is an error."""
    parser = build_parser(groups, **parser_kwargs)
    args = expand_arguments_file(parser, sys.argv[1:] if args is None else args)
    *flags, unknown = parser.parse_args_into_dataclasses(
        args=args, look_for_args_file=False, return_remaining_strings=True
    )
    if unknown:  # a typo, or a flag of another subcommand
        raise UsageError(f"{parser.prog}: unknown arguments {' '.join(unknown)}; {parser.prog} -h lists its flags")
    return tuple(group.build(parsed) for group, parsed in zip(groups, flags, strict=True))


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


def check_run_output(
    model_args: ModelArguments,
    training_args: TrainingArguments,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
    fitted_otherwise: bool = False,
) -> None:
    """Before a training run's work: its step counts, and an `--output_dir` that is neither one of its inputs (the
    model, the tokenizer, `inputs`) nor a used folder, unless `--overwrite_output_dir` or
    `--resume_from_checkpoint`. `fitted_otherwise`: zero training steps are allowed (`check_training_arguments`)."""
    check_training_arguments(training_args, fitted_otherwise)
    check_output_dir(
        training_args.output_dir,
        overwrite=model_args.overwrite_output_dir,
        resume=training_args.resume_from_checkpoint,
        inputs=[
            ("--model_name_or_path", model_args.model_name_or_path),
            ("--tokenizer_name_or_path", model_args.tokenizer_name_or_path),
            *inputs,
        ],
    )


def setup_run(training_args: TrainingArguments) -> None:
    """Logging (to stdout, at the process's level, for datasets and transformers too) and the seed, as run_clm.py."""
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)]
    )
    log_level = training_args.get_process_log_level()
    logging.getLogger("hf_models").setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    set_seed(training_args.seed)


def run_task(
    step: Callable[..., dict], groups: Sequence[FlagGroup], args: Sequence[str] | None = None, **parser_kwargs
) -> dict:
    """A task's command line: parse its groups (the task's dataclass, `ModelArguments`, `TrainingArguments`, in
    that order) from flags or one JSON file, set up logging and the seed, and run
    `step(model_args, task_args, training_args)`."""
    task_args, model_args, training_args = parse_args(groups, args, **parser_kwargs)
    setup_run(training_args)
    return step(model_args, task_args, training_args)
