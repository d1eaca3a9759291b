"""Training: `Trainer` whose evaluations leave the random stream alone and keep the dataset's order, with the plot
callback, batches of similar lengths in random order, and the final loss."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import Sampler, SequentialSampler
from transformers import PreTrainedModel, PreTrainedTokenizerBase, Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_callback import ExportableState
from transformers.trainer_pt_utils import LengthGroupedSampler
from transformers.trainer_utils import get_last_checkpoint

from ..safety import restoring_on_failure, staged_save
from ..textio import atomic_write
from .plots import PlotCallback

__all__ = [
    "ReproducibleTrainer",
    "ShuffledLengthBuckets",
    "last_logged",
    "last_or_mean_loss",
    "quiet_defaults",
    "finish_all_or_nothing",
    "train_model",
]

# Files of an earlier run that a new one in the same folder removes when it has none of its own (no evaluation).
STALE_RESULTS = ("train_results.json", "eval_results.json")
# The earlier model's evaluations (predictions, reports, the fact probe): a new run's folder keeps none that this run
# did not write, or they would pass for the new model's.
EARLIER_EVALUATIONS = ("predictions*.txt", "*_predictions.txt", "report_evaluate*.json", "fact_probe.json")


class ShuffledLengthBuckets(Sampler[int]):
    """Training order in batches of similar lengths, the batches in random order.

    Each bucket of `batches_per_bucket` random batches is sorted by length and cut into batches, then all the
    batches of the epoch are shuffled. Trainer's `group_by_length` keeps each bucket's batches longest first, so an
    epoch ends on the shortest examples and an evaluation after it sees a model just trained on them. Only the last
    batch of the epoch may be short: it stays last, so that the DataLoader cuts the same batches."""

    def __init__(self, lengths: Sequence[int], batch_size: int, batches_per_bucket: int = 50) -> None:
        self.lengths, self.batch_size, self.bucket_size = list(lengths), batch_size, batch_size * batches_per_bucket

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[int]:
        order = torch.randperm(len(self.lengths)).tolist()  # torch's global stream, as Trainer's RandomSampler
        batches = []
        for start in range(0, len(order), self.bucket_size):
            bucket = sorted(order[start : start + self.bucket_size], key=self.lengths.__getitem__, reverse=True)
            batches += [bucket[i : i + self.batch_size] for i in range(0, len(bucket), self.batch_size)]
        short = [batches.pop()] if batches and len(batches[-1]) < self.batch_size else []
        for batch in [batches[i] for i in torch.randperm(len(batches)).tolist()] + short:
            yield from batch


class ReproducibleTrainer(Trainer):
    """`Trainer` whose evaluations leave torch's random state as they found it, and whose predictions come in the
    dataset's order.

    Building an evaluation DataLoader draws its base seed from torch's global generator, which also drives
    dropout and the training sampler: without this, the training losses would depend on `eval_steps`.
    `--train_sampling_strategy group_by_length` also groups the evaluation batches by length, which shuffles what
    `predict` returns: predictions written one per line of the input file would then belong to other lines.
    `length_buckets=True` trains on `ShuffledLengthBuckets` of the `input_ids` lengths.

    What it saves (the model, its tokenizer and arguments, the trainer state) replaces the files of an earlier run
    one complete file at a time: `--overwrite_output_dir` never leaves a half-written model.
    """

    def __init__(self, *args: Any, length_buckets: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.length_buckets = length_buckets

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        if not self.args.should_save:  # the other processes join the gathers only
            return super()._save(output_dir, state_dict)
        with staged_save(output_dir) as staging:
            super()._save(str(staging), state_dict)

    def save_state(self) -> None:
        if self.is_world_process_zero():
            with atomic_write(Path(self.args.output_dir) / "trainer_state.json") as path:
                self.state.save_to_json(str(path))

    def _get_train_sampler(self, train_dataset=None):
        if not self.length_buckets:
            return super()._get_train_sampler(train_dataset)
        dataset = self.train_dataset if train_dataset is None else train_dataset
        batch_size = self.args.train_batch_size * self.args.gradient_accumulation_steps
        return ShuffledLengthBuckets([len(ids) for ids in dataset["input_ids"]], batch_size)

    def compute_loss(self, model, inputs, *args: Any, **kwargs: Any):
        if self.args.torch_compile_mode == "reduce-overhead":
            # CUDA graphs replay into the memory of their last run, and torch cannot tell where a step of this loop
            # begins (an evaluation may come between two trainings): mark it, so that no output still read is
            # overwritten and none is taken for one.
            torch.compiler.cudagraph_mark_step_begin()
        return super().compute_loss(model, inputs, *args, **kwargs)

    def evaluate(self, *args: Any, **kwargs: Any) -> dict[str, float]:
        devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
        with torch.random.fork_rng(devices=devices):
            return super().evaluate(*args, **kwargs)

    def _get_eval_sampler(self, *args: Any, **kwargs: Any):
        sampler = super()._get_eval_sampler(*args, **kwargs)
        if not isinstance(sampler, LengthGroupedSampler):
            return sampler
        eval_dataset = args[0] if args else kwargs["eval_dataset"]
        return SequentialSampler(eval_dataset) if self.args.world_size <= 1 else None  # Trainer's own order


class RunTask(TrainerCallback, ExportableState):
    """Names the task of the run in each checkpoint's trainer_state.json (`stateful_callbacks`), so that a resume
    from another task's checkpoint is refused before it loads (`safety.check_checkpoint`)."""

    def __init__(self, task: str) -> None:
        self.task = task

    def state(self) -> dict:
        return {"args": {"task": self.task}, "attributes": {}}


def train_model(
    model: PreTrainedModel,
    training_args: TrainingArguments,
    tokenizer: PreTrainedTokenizerBase,
    train_dataset,
    data_collator: Callable,
    eval_dataset=None,
    callbacks: Sequence[TrainerCallback] = (),
    length_buckets: bool = False,
    task: str | None = None,
    **trainer_kwargs: Any,
) -> tuple[Trainer, dict[str, Any]]:
    """Build a `ReproducibleTrainer` (with the plot callback and `callbacks`), so that evaluations do not shift the training's
    random stream, and train, resuming from `--resume_from_checkpoint` if given; `length_buckets`: batches of
    similar lengths in random order (`ShuffledLengthBuckets`); `task`: named in each checkpoint (`RunTask`).

    Returns the trainer and the training metrics, with `train_samples` and `final_train_loss`: the last logged
    loss, None for a run too short to log a step (Trainer's mean over the run is `train_loss`). Zero epochs and no `--max_steps` (a model
    fitted before, e.g. a linear-probe head on a frozen backbone) trains nothing: the trainer is returned to
    evaluate and save, with `train_steps` 0. `--push_to_hub` is checked here (offline: one line, before training)
    and left to `finish_run`, which shares the run as `push_to_hub.py` does (`trainer.share_on_hub`)."""
    quiet_defaults(training_args, model)
    new_folder = not os.path.lexists(training_args.output_dir)
    # `--push_to_hub`: `finish_run` shares the run folder as push_to_hub.py does, with our card and the public
    # record; Trainer's own push would upload the whole folder with its card. Refused now if it cannot succeed.
    share = training_args.push_to_hub
    if share:
        from ..hub.publish import check_push_to_hub

        check_push_to_hub()
        training_args.push_to_hub = False
    trainer = ReproducibleTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=data_collator,
        callbacks=[PlotCallback(training_args.output_dir), *callbacks, *([RunTask(task)] if task else [])],
        length_buckets=length_buckets,
        **trainer_kwargs,
    )
    trainer.share_on_hub = share
    trainer.started_at = time.time()  # what the folder holds from before is an earlier run's (`earlier_evaluations`)
    if training_args.max_steps <= 0 and training_args.num_train_epochs == 0:
        return trainer, {"train_samples": len(train_dataset), "train_steps": 0, "final_train_loss": None}
    try:
        result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    except KeyboardInterrupt:  # Ctrl-C: one line that says where to continue from (`safety.command_line`)
        if new_folder:
            remove_if_empty(training_args.output_dir)
        raise KeyboardInterrupt(interrupted_run(training_args.output_dir)) from None
    except BaseException:
        if new_folder:
            remove_if_empty(training_args.output_dir)
        raise
    metrics = {**result.metrics, "train_samples": len(train_dataset)}
    metrics["final_train_loss"] = last_logged(trainer, "loss")  # None: no step logged (Trainer's mean: train_loss)
    return trainer, metrics


def remove_if_empty(folder: str | os.PathLike) -> None:
    """A folder a failed run made holding nothing (empty sub-folders at most) is removed: nothing left behind."""
    folder = Path(folder)
    if (
        not folder.is_dir()
        or folder.is_symlink()
        or any(path.is_file() or path.is_symlink() for path in folder.rglob("*"))
    ):
        return
    for path in sorted(folder.rglob("*"), key=lambda path: len(path.parts), reverse=True):
        path.rmdir()
    folder.rmdir()


def interrupted_run(output_dir: str) -> str:
    """What an interrupted run leaves: its last checkpoint and how to continue from it, or that it saved none."""
    last = get_last_checkpoint(output_dir) if os.path.isdir(output_dir) else None
    if last is None:
        return "interrupted before any checkpoint was saved (--save_strategy steps or epoch saves some)"
    return f"interrupted; continue with the same flags and --resume_from_checkpoint {last}"


def quiet_defaults(training_args: TrainingArguments, model: torch.nn.Module) -> None:
    """Trainer's defaults that only make noise here: no pinned memory without an accelerator (pinning only speeds
    up copies to one, and torch warns at every DataLoader); and, unless `--ddp_find_unused_parameters` is given, no
    DDP search for unused parameters where the model uses all of them (the search costs a pass over the graph at
    each step, and DDP warns when it finds none). An adaptive softmax skips the tail clusters that a batch's labels
    do not reach: it keeps the search."""
    if not torch.accelerator.is_available():
        training_args.dataloader_pin_memory = False
    if training_args.ddp_find_unused_parameters is None:
        skips = any(isinstance(module, torch.nn.AdaptiveLogSoftmaxWithLoss) for module in model.modules())
        training_args.ddp_find_unused_parameters = skips


def last_logged(trainer: Trainer, key: str = "loss", default: float | None = None) -> float | None:
    """The last value of `key` in the trainer's log history (the final training loss), else `default`."""
    return next((entry[key] for entry in reversed(trainer.state.log_history) if key in entry), default)


def earlier_evaluations(trainer: Trainer) -> list[str]:
    """The evaluation files of the run's folder older than this run (`train_model` notes when it started)."""
    started, folder = getattr(trainer, "started_at", None), Path(trainer.args.output_dir)
    if started is None or not folder.is_dir():
        return []
    return [
        path.name
        for path in folder.iterdir()
        if any(fnmatch(path.name, pattern) for pattern in EARLIER_EVALUATIONS) and path.lstat().st_mtime < started
    ]


def last_or_mean_loss(metrics: dict[str, Any]) -> float | None:
    """The last logged training loss, else (a run too short to log a step) Trainer's mean over the run."""
    final = metrics.get("final_train_loss")
    return final if final is not None else metrics.get("train_loss")


def finish_all_or_nothing(finish: Callable[..., Any]) -> Callable[..., Any]:
    """Decorates `finish(trainer, ...)`, the writes that end a run, to make them all or nothing on the main process:
    a failure half-way (a full disk) leaves the folder as it was before them (`safety.restoring_on_failure`), an
    earlier run's files included, and no plot this run drew into a new folder."""

    @functools.wraps(finish)
    def wrapper(trainer: Trainer, *args: Any, **kwargs: Any) -> Any:
        if not trainer.is_world_process_zero():
            return finish(trainer, *args, **kwargs)
        try:
            discard = (*STALE_RESULTS, *earlier_evaluations(trainer))
            with restoring_on_failure(trainer.args.output_dir, discard=discard):
                return finish(trainer, *args, **kwargs)
        except BaseException:
            for callback in trainer.callback_handler.callbacks:
                if isinstance(callback, PlotCallback):
                    callback.discard(trainer.args.output_dir)
            raise

    return wrapper
