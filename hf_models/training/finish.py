"""The end of every run: the model and tokenizer, the trainer state, run_clm.py's result files, the plots, the run
record and `report.json`.

The run record (`RunRecord.from_trainer`) is the one account of the run; the run folder's `README.md` is the model
card built from it (`hf_models.hub.write_run_card`: the card `push_to_hub.py` exports), as `run_clm.py`'s
`trainer.create_model_card()` writes one. `train_results.json`, `eval_results.json` and
`all_results.json` are what `Trainer.save_metrics` writes at the end of transformers' example scripts, and
`trainer_state.json` its `save_state`. `report.json` is `evaluate.save`'s metric report of the same metrics and
arguments, for `evaluate`'s tools.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import evaluate
from transformers import Trainer, TrainingArguments

from ..hub import share_run, write_run_card
from ..run_record import RunRecord, hardware, model_reference, read_record, to_json, training_run
from ..small_encoder import SmallEncoderConfig
from .arguments import ModelArguments
from .trainer import PLATEAU_KEYS, finish_all_or_nothing, plot_curves

__all__ = ["RunTimer", "finish_run", "model_source", "run_results", "write_report"]

# Metrics of the evaluation that do not start with `eval_` (run_clm.py puts the perplexity with them).
EVAL_KEYS = ("perplexity",)
# Trainer's mean training loss over the whole run: kept in train_results.json under Trainer's name; `report.json` holds
# the one training loss a reader expects, the last logged (`final_train_loss`).
MEAN_TRAIN_LOSS = "train_loss"


class RunTimer:
    """Wall time since construction; build it first thing in a task's step."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return round(time.perf_counter() - self.start, 2)


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
        "preset": preset if preset in SmallEncoderConfig.available_presets() else None,
        "config_overrides": model_args.config_overrides,
        "finetuned_from": None,
    }


def run_results(trainer: Trainer, metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The run's numbers as run_clm.py splits them: `{"train": ..., "eval": ...}`.

    The evaluation's are its `eval_*` metrics and the perplexity (for a run that evaluated during training only, the
    birthplace finetuning, the last evaluation in the log history); the training's are all the other numbers (Trainer's
    `train_*`, `final_train_loss`, the task's own: the plateau check, the parameter counts). Both hold the `epoch`.
    Texts and lists (the objective, the per-epoch curves) stay in the record and `report.json`. A split with no number
    is empty."""
    numbers = {key: value for key, value in metrics.items() if isinstance(value, bool | int | float)}
    evaluation = {key: value for key, value in numbers.items() if key.startswith("eval_") or key in EVAL_KEYS}
    train = {key: value for key, value in numbers.items() if key not in evaluation}
    if not evaluation:
        last = next((entry for entry in reversed(trainer.state.log_history) if "eval_loss" in entry), {})
        evaluation = {key: value for key, value in last.items() if key != "step"}
    if evaluation and "epoch" in train:
        evaluation.setdefault("epoch", train["epoch"])
    return {"train": train, "eval": evaluation}


def write_report(
    training_args: TrainingArguments,
    arguments: Sequence[Any],
    metrics: dict[str, Any],
    wall_time_s: float,
    path: str | os.PathLike | None = None,
) -> Path | None:
    """On the main process only, write `report.json` with `evaluate.save`: the run's arguments (each
    dataclass under its class name), its metrics, `world_size`, the mixed-precision mode and the wall time.
    Returns the report path, or None on the other processes."""
    if training_args.process_index != 0:
        return None
    # TrainingArguments.to_dict() hides tokens and turns enums into strings.
    args_dict = {
        type(arg).__name__: arg.to_dict() if hasattr(arg, "to_dict") else dataclasses.asdict(arg) for arg in arguments
    }
    run = hardware(training_args)
    path = Path(path) if path is not None else Path(training_args.output_dir) / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    # evaluate.save writes in place: it writes a temporary name here, moved over the report in one step.
    staging = path.with_name(f".{path.stem}.{os.getpid()}.tmp.json")
    try:
        evaluate.save(
            str(staging),
            arguments=to_json(args_dict),
            **to_json(metrics),
            world_size=run["world_size"],
            mixed_precision=run["mixed_precision"],
            wall_time_s=wall_time_s,
        )
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
    timer: RunTimer,
    *,
    default_preset: str,
    **record_fields: Any,
) -> dict[str, Any]:
    """End of every task's training step: save the model and tokenizer, the trainer state, the results, the plots,
    the record, the card (README.md) and the report.

    `arguments` are the run's argument dataclasses (model, task, training); `record_fields` what the task knows for
    `RunRecord.from_trainer` (task, objective, dataset, split sizes, language, its own hyperparameters and the
    arguments that did not apply); the preset and the starting model come from the model arguments.
    `Trainer.save_model` already writes on the main process only (`args.should_save`); the model's
    `use_cache` is restored first because `Trainer` turns it off for training. The results are printed and saved as
    run_clm.py does (`log_metrics`, `save_metrics`): `train_results.json`, `eval_results.json` (when the run
    evaluated) and `all_results.json`, written whole (`save_metrics` would merge into an earlier run's file).
    """
    model_args, task_args, training_args = arguments
    unwrapped = trainer.accelerator.unwrap_model(trainer.model)
    if hasattr(unwrapped.config, "use_cache"):
        unwrapped.config.use_cache = True
    trainer.save_model()
    share = getattr(trainer, "share_on_hub", False)
    training_args.push_to_hub = share  # as asked, in report.json (`train_model` took it from Trainer: ours shares)
    wall_time_s = timer.seconds
    if trainer.is_world_process_zero():
        trainer.save_state()
        results = run_results(trainer, metrics)
        for split, values in results.items():
            if not values:  # no evaluation: no eval_results.json, not even an earlier run's in a reused folder
                (Path(training_args.output_dir) / f"{split}_results.json").unlink(missing_ok=True)
                continue
            trainer.log_metrics(split, values)
            trainer.save_metrics(split, to_json(values), combined=False)
        trainer.save_metrics("all", to_json({**results["train"], **results["eval"]}), combined=False)
        plot_curves(trainer.state.log_history, training_args.output_dir)
        record = RunRecord.from_trainer(
            trainer,
            metrics,
            task_args,
            wall_time_s,
            train_metric_keys=PLATEAU_KEYS,
            **model_source(model_args, default_preset),
            **record_fields,
        )
        record.save(training_args.output_dir)
        write_run_card(training_args.output_dir)
    report_metrics = {key: value for key, value in metrics.items() if key != MEAN_TRAIN_LOSS}
    report_metrics["trained"] = training_run(trainer)  # what ran, as the record has it
    write_report(training_args, arguments, report_metrics, wall_time_s)
    # The barrier keeps ranks from exiting before the report is written.
    trainer.accelerator.wait_for_everyone()
    if share and trainer.is_world_process_zero():
        url = share_run(
            training_args.output_dir,
            training_args.hub_model_id,
            private=bool(training_args.hub_private_repo),
            revision=training_args.hub_revision,
        )
        print(f"The run is shared on the Hub: {url}")
    return metrics
