"""The end of every run, as transformers' example scripts end one: Trainer saves the model and tokenizer
(`save_model`), its state (`save_state`: `trainer_state.json`) and the run's numbers (`log_metrics`,
`save_metrics`: `all_results.json`); the recipe adds the plots, the run record (`run_record.json`: what Trainer's
files do not say), the model card built from it (`README.md`) and `report.json`, the run's arguments.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transformers import Trainer, TrainingArguments

from ..run_record import EVAL_KEYS, RunRecord, hardware, model_reference, read_record, to_json, write_run_card
from ..small_encoder.configuration_small_encoder import PRESETS
from .arguments import ModelArguments
from .trainer import finish_all_or_nothing, plot_curves

__all__ = ["finish_run", "model_source", "write_report"]


def model_source(model_args: ModelArguments, default_preset: str) -> dict[str, str | None]:
    """The record's `preset`, `config_overrides` and `finetuned_from`: a new model's preset name (None for a config
    file) and overrides; a pretrained model's name, and the preset its own record names."""
    if model_args.model_name_or_path:
        parent = read_record(model_args.model_name_or_path) if os.path.isdir(model_args.model_name_or_path) else None
        return {
            "preset": parent.preset if parent else None,
            "finetuned_from": model_reference(model_args.model_name_or_path),
        }
    preset = model_args.model_config or default_preset
    return {
        "preset": preset if preset in PRESETS else None,
        "config_overrides": model_args.config_overrides,
        "finetuned_from": None,
    }


def write_report(
    training_args: TrainingArguments,
    arguments: Sequence[Any],
    metrics: dict[str, Any] | None = None,
    wall_time_s: float | None = None,
    path: str | os.PathLike | None = None,
) -> Path | None:
    """On the main process only, write `report.json` with `evaluate.save`: the run's arguments (each dataclass under
    its class name), and the `metrics`, processes, mixed precision and wall time of a step that has no run record of
    its own to hold them. Returns the report path, or None on the other processes."""
    import evaluate

    if training_args.process_index != 0:
        return None
    # TrainingArguments.to_dict() hides tokens and turns enums into strings.
    args_dict = {
        type(arg).__name__: arg.to_dict() if hasattr(arg, "to_dict") else dataclasses.asdict(arg) for arg in arguments
    }
    run = {**hardware(training_args), "wall_time_s": wall_time_s} if wall_time_s is not None else {}
    run.pop("device", None)
    path = Path(path) if path is not None else Path(training_args.output_dir) / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    # evaluate.save writes in place: it writes a temporary name here, moved over the report in one step.
    staging = path.with_name(f".{path.stem}.{os.getpid()}.tmp.json")
    try:
        evaluate.save(str(staging), arguments=to_json(args_dict), **to_json({**(metrics or {}), **run}))
        os.replace(staging, path)
    except OSError as error:  # a full disk: named by the report the user asked for, not evaluate's temporary files
        if error.errno is None:
            raise
        raise OSError(error.errno, error.strerror, str(path)) from None
    finally:
        staging.unlink(missing_ok=True)
    return path


@finish_all_or_nothing
def finish_run(
    trainer: Trainer,
    arguments: Sequence[Any],
    metrics: dict[str, Any],
    started: float,
    *,
    default_preset: str,
    **record_fields: Any,
) -> dict[str, Any]:
    """End of every task's training step: save the model and tokenizer, the trainer state, the results, the plots,
    the record, the card (README.md) and the arguments (report.json); share the run with `--push_to_hub`.

    `arguments` are the run's argument dataclasses (model, task, training); `record_fields` what the task knows for
    `RunRecord.from_trainer` (task, objective, dataset, split sizes, language, its own hyperparameters and the
    arguments that did not apply); the preset and the starting model come from the model arguments.
    `Trainer.save_model` already writes on the main process only (`args.should_save`); the model's `use_cache` is
    restored first because `Trainer` turns it off for training. The numbers are printed as run_clm.py prints them
    (`log_metrics`, training and evaluation apart) and saved once, whole, in `all_results.json` (`save_metrics` of
    each split would write the same numbers twice, and merge into an earlier run's file). For a run that evaluated
    during training only (the birthplace finetuning), the evaluation is the last one in the log history.
    """
    model_args, task_args, training_args = arguments
    unwrapped = trainer.accelerator.unwrap_model(trainer.model)
    if hasattr(unwrapped.config, "use_cache"):
        unwrapped.config.use_cache = True
    trainer.save_model()
    share = getattr(trainer, "share_on_hub", False)
    training_args.push_to_hub = share  # as asked, in report.json (`train_model` took it from Trainer: ours shares)
    wall_time_s = round(time.perf_counter() - started, 2)
    if trainer.is_world_process_zero():
        trainer.save_state()
        # Texts and lists (the objective, the per-epoch curves) are the record's: the results are numbers.
        numbers = {key: value for key, value in metrics.items() if isinstance(value, bool | int | float)}
        evaluation = {key: value for key, value in numbers.items() if key.startswith("eval_") or key in EVAL_KEYS}
        if not evaluation:
            last = next((entry for entry in reversed(trainer.state.log_history) if "eval_loss" in entry), {})
            evaluation = {key: value for key, value in last.items() if key not in ("step", "epoch")}
        train = {key: value for key, value in numbers.items() if key not in evaluation}
        for split, values in (("train", train), ("eval", evaluation)):
            if values:
                trainer.log_metrics(split, values)
        results = to_json(dict(sorted({**train, **evaluation}.items())))  # in the order save_metrics writes them
        trainer.save_metrics("all", results, combined=False)
        plot_curves(trainer.state.log_history, training_args.output_dir)
        record = RunRecord.from_trainer(
            trainer, task_args, wall_time_s, **model_source(model_args, default_preset), **record_fields
        )
        record.save(training_args.output_dir)
        write_run_card(training_args.output_dir, record)
    write_report(training_args, arguments)
    # The barrier keeps ranks from exiting before the report is written.
    trainer.accelerator.wait_for_everyone()
    if share and trainer.is_world_process_zero():
        from ..hub import share_run

        url = share_run(
            training_args.output_dir,
            training_args.hub_model_id,
            private=bool(training_args.hub_private_repo),
            revision=training_args.hub_revision,
        )
        print(f"The run is shared on the Hub: {url}")
    return metrics
