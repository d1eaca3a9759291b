"""The command line of every task, as run_clm.py: `ModelArguments`, the task's own dataclass and `TrainingArguments`,
from flags or one JSON file, then logging and the seed."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import datasets
import transformers
from transformers import HfArgumentParser, TrainingArguments, set_seed

from ..safety import check_output_dir
from ..textio import UsageError

__all__ = ["ModelArguments", "check_run_output", "check_training_arguments", "parse_args", "run_task", "setup_run"]


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
            "or a config JSON file. Each recipe has its own default preset."
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
        metadata={"help": "Override the attention type.", "choices": ["vanilla", "synthesizer", "random", "factorized"]},
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

    @property
    def tokenizer_path(self) -> str | None:
        """`--tokenizer_name_or_path`, else the tokenizer saved with `--model_name_or_path` (None: neither given)."""
        return self.tokenizer_name_or_path or self.model_name_or_path


def parse_args(dataclass_types: Sequence[type], args: Sequence[str] | None = None) -> tuple:
    """Parse flags into the dataclasses, or read them all from a single JSON file (as run_clm.py does)."""
    parser = HfArgumentParser(dataclass_types)
    args = list(sys.argv[1:] if args is None else args)
    if len(args) == 1 and args[0].endswith(".json"):
        path = os.path.abspath(args[0])
        if not os.path.isfile(path):
            raise UsageError(f"{args[0]}: arguments file not found")
        try:
            return parser.parse_json_file(json_file=path)
        except json.JSONDecodeError as error:
            where = f"{args[0]}:{error.lineno}"
            raise UsageError(f"{where}: not valid JSON ({error.msg}); fix the arguments file") from None
        except (TypeError, ValueError) as error:  # unknown keys, or a value of the wrong type
            raise UsageError(f"{args[0]}: {error}") from None
    return parser.parse_args_into_dataclasses(args=args)


def check_training_arguments(training_args: TrainingArguments) -> None:
    """Step counts that would save an untrained model, refused before any work."""
    if training_args.max_steps < -1:
        raise UsageError(f"--max_steps {training_args.max_steps}: give a positive number of steps, or -1 for epochs")
    if training_args.max_steps <= 0 and training_args.num_train_epochs <= 0:
        raise UsageError(
            f"--num_train_epochs {training_args.num_train_epochs} with no --max_steps trains nothing; give a "
            "positive number of epochs or steps"
        )


def check_run_output(
    model_args: ModelArguments,
    training_args: TrainingArguments,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
) -> None:
    """Before a training run's work: its step counts, and an `--output_dir` that is neither one of its inputs (the
    model, the tokenizer, `inputs`) nor a used folder, unless `--overwrite_output_dir` or
    `--resume_from_checkpoint`."""
    check_training_arguments(training_args)
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


def run_task(step: Callable[..., dict], task_arguments: type, args: Sequence[str] | None = None) -> dict:
    """A task's command line: parse (`ModelArguments`, `task_arguments`, `TrainingArguments`) from flags or one
    JSON file, set up logging and the seed, and run `step(model_args, task_args, training_args)`."""
    model_args, task_args, training_args = parse_args((ModelArguments, task_arguments, TrainingArguments), args)
    setup_run(training_args)
    return step(model_args, task_args, training_args)
