"""Training, shared by the tasks: the model a run starts from, `Trainer` and its callbacks, and what a run's
numbers say.

- Set-up: a trained folder (`load_pretrained`), or a new model built from a preset or config file, the overrides and
  the tokenizer's vocabulary and special-token ids (`build_config`, `load_or_build_model`); the block size it takes.
- `train_model`: a `ReproducibleTrainer`, whose evaluations leave the random stream alone and keep the dataset's
  order, with the plot callback (`loss.png`, `accuracy.png`, redrawn during training), batches of similar lengths in
  random order (`ShuffledLengthBuckets`), and the final loss.
- The plateau check of a pretraining run: its final loss against the unigram entropy of its data.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import numpy as np
import torch
from accelerate import PartialState
from huggingface_hub.errors import StrictDataclassError
from torch.utils.data import Sampler, SequentialSampler
from transformers import PreTrainedModel, PreTrainedTokenizerBase, Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_callback import ExportableState
from transformers.trainer_utils import get_last_checkpoint

from ..safety import check_json_files, one_line, reading, restoring_on_failure
from ..small_encoder import SmallEncoderConfig
from ..textio import UsageError, atomic_write
from ..tokenization import config_token_ids
from .arguments import ModelArguments

__all__ = [
    "PlotCallback",
    "ReproducibleTrainer",
    "ShuffledLengthBuckets",
    "build_config",
    "check_block_size",
    "check_plateau",
    "check_vocabulary",
    "finish_all_or_nothing",
    "last_or_mean_loss",
    "load_or_build_model",
    "load_pretrained",
    "plot_curves",
    "train_model",
    "unigram_entropy",
]

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------------------------------
# The model a run starts from
# ------------------------------------------------------------------------------------------------------------------


# The fields a tokenizer gives a new model: an override of one of them cannot apply.
TOKENIZER_FIELDS = ("vocab_size", *(f"{name}_token_id" for name in ("pad", "bos", "eos", "sep", "mask")))


def _check_model_type(found: object, where: str) -> None:
    """A config of another model family (GPT-2's, BERT's) would be read field by field as ours, the fields it does
    not share silently left at their defaults."""
    if found not in (None, SmallEncoderConfig.model_type):
        raise UsageError(
            f"{where} is a config of model_type {found!r}, not {SmallEncoderConfig.model_type!r}: this project builds "
            "and loads its own models only; give one of its presets, a config file or a folder it saved"
        )


# `dropout=X` in --config_overrides: every dropout of the model (the lab's nn.TransformerEncoder has one), in its place.
DROPOUT_SHORTHAND = "dropout"


def expand_dropout(config_overrides: str, config: SmallEncoderConfig) -> str:
    """`config_overrides` with each `dropout=X` written as every `*_dropout` field of the model but the classifier's
    (set by --classifier_dropout), in its place: the items apply in order."""
    fields = [name for name in config.to_dict() if name.endswith("_dropout") and name != "classifier_dropout"]
    items = []
    for item in (item.strip() for item in config_overrides.split(",") if item.strip()):
        key, _, value = item.partition("=")
        items += [f"{name}={value.strip()}" for name in fields] if key.strip() == DROPOUT_SHORTHAND else [item]
    return ",".join(items)


def build_config(
    model_config: str,
    config_overrides: str | None = None,
    tokenizer: PreTrainedTokenizerBase | None = None,
    **fields: Any,
) -> SmallEncoderConfig:
    """Build a `SmallEncoderConfig` from a preset name or a JSON file, then apply overrides.

    `config_overrides` is a 'key=value,...' string; `fields` are named overrides (None values are skipped).
    With a tokenizer, the vocabulary size and the special-token ids are copied from it, so that the
    model's embedding table and its pad/bos/eos/sep/mask ids always match the tokenizer.
    """
    # Overrides of the fields the tokenizer fixes (the vocabulary size, the special-token ids) cannot apply.
    keys = {item.split("=", 1)[0].strip() for item in (config_overrides or "").split(",") if item.strip()}
    fixed = sorted(keys & set(TOKENIZER_FIELDS)) if tokenizer is not None else []
    if fixed:
        raise UsageError(
            f"--config_overrides {', '.join(fixed)}: the tokenizer fixes these ({len(tokenizer)} tokens and its "
            "special-token ids); drop them from the overrides, or give another --tokenizer_name_or_path"
        )
    try:
        if os.path.isfile(model_config):
            folder, name = os.path.split(model_config)
            found = check_json_files(folder or ".", [name], "--model_config").get(name, {})
            _check_model_type(found.get("model_type"), f"--model_config {model_config}")
            config = SmallEncoderConfig.from_json_file(model_config)
        else:
            config = SmallEncoderConfig.from_preset(model_config)
    except UsageError:
        raise
    except (ValueError, StrictDataclassError) as error:  # a broken JSON file, an unknown preset, a bad field
        raise UsageError(f"--model_config {model_config}: {one_line(error)}") from None
    if config_overrides:
        try:
            config.update_from_string(expand_dropout(config_overrides, config))
        except TypeError:  # transformers takes only int, float, bool and text, never a list or a null setting
            raise UsageError(_not_overridable(config_overrides, config)) from None
        except (ValueError, StrictDataclassError) as error:
            raise UsageError(f"--config_overrides {config_overrides!r}: {one_line(error)}") from None
    for key, value in fields.items():
        if value is not None:
            setattr(config, key, value)
    if tokenizer is not None:
        config.vocab_size = len(tokenizer)
        for key, value in config_token_ids(tokenizer).items():
            setattr(config, key, value)
    # `@strict` checked each field as it was set; the constraints between fields are checked once all are set.
    try:
        config.validate()
    except (ValueError, StrictDataclassError) as error:
        source = f"{model_config}, {config_overrides or 'no overrides'}"
        raise UsageError(f"the model config ({source}): {one_line(error)}") from None
    return config


def _not_overridable(config_overrides: str, config: SmallEncoderConfig) -> str:
    """What to say of an override of a setting that holds a list, a mapping or nothing (None)."""
    settings = config.to_dict()
    keys = [item.split("=", 1)[0].strip() for item in config_overrides.split(",") if item.strip()]
    key = next((key for key in keys if not isinstance(settings.get(key), int | float | bool | str)), keys[0])
    held = "nothing (None)" if settings.get(key) is None else f"a {type(settings[key]).__name__}"
    return (
        f"--config_overrides {key}: the setting holds {held}, which key=value cannot set; give it in a "
        "--model_config JSON file"
    )


def load_or_build_model(
    model_class: type[PreTrainedModel],
    model_args: ModelArguments,
    tokenizer: PreTrainedTokenizerBase,
    default_preset: str,
    from_pretrained: dict[str, Any] | None = None,
    **config_fields: Any,
) -> PreTrainedModel:
    """`--model_name_or_path` loaded as `model_class` (with the `from_pretrained` overrides), or a new model built
    from `--model_config` (default: `default_preset`), the overrides, `config_fields` and the tokenizer's ids."""
    if model_args.model_name_or_path:
        overrides = {key: value for key, value in (from_pretrained or {}).items() if value is not None}
        causal = config_fields.get("is_causal")
        model = load_pretrained(model_class, model_args.model_name_or_path, causal=causal, **overrides)
        check_vocabulary(tokenizer, model.config.vocab_size, model_args.tokenizer_path, model_args.model_name_or_path)
        return model
    # --attention_type wins over the preset's.
    config_fields["attention_type"] = model_args.attention_type or config_fields.get("attention_type")
    config = build_config(
        model_args.model_config or default_preset, model_args.config_overrides, tokenizer, **config_fields
    )
    return model_class(config)


def load_pretrained(
    model_class: type[PreTrainedModel],
    path: str | os.PathLike,
    flag: str = "--model_name_or_path",
    causal: bool | None = None,
    **overrides: Any,
) -> PreTrainedModel:
    """`model_class.from_pretrained(path, **overrides)` for a folder this project saved, checked first: a missing
    folder, a config.json that is not valid JSON or of another model family, a bidirectional model (a masked LM)
    where `causal` asks for one that reads left to right; and, while loading, weights that are truncated, not
    safetensors or not of the config's shapes: each a `UsageError` naming the folder and the file."""
    if os.path.exists(path):  # else a Hub id: transformers says what it found
        if not os.path.isdir(path):
            raise UsageError(f"{flag} {path} is a file; give the folder a run saved (save_pretrained)")
        config = check_json_files(path, ["config.json"], flag).get("config.json")
        if config is None:
            raise UsageError(f"{flag} {path} has no config.json: give the folder a run saved (save_pretrained)")
        _check_model_type(config.get("model_type"), f"{flag} {path}/config.json")
        if causal and config.get("is_causal") is False:
            raise UsageError(
                f"{flag} {path} is a bidirectional model (is_causal false: a masked LM); this task reads and "
                "generates left to right: give a causal model (pretrained with --objective clm or span_corruption)"
            )
    with reading(path, flag):
        return model_class.from_pretrained(str(path), **overrides)


def check_vocabulary(tokenizer: PreTrainedTokenizerBase, vocab_size: int, tokenizer_path, model_path) -> None:
    """A tokenizer and a model must share their vocabulary: a larger tokenizer gives ids past the embedding table,
    a smaller one a mismatched pair. Checked before any work."""
    if len(tokenizer) != vocab_size:
        raise UsageError(
            f"the tokenizer {tokenizer_path} has {len(tokenizer)} tokens but the model {model_path} has a vocabulary "
            f"of {vocab_size}; pass the tokenizer the model was trained with (--tokenizer_name_or_path)"
        )


def check_block_size(block_size: int | None, model: PreTrainedModel, flag: str = "--block_size") -> int:
    """`--block_size`, or the model's `max_position_embeddings` when not given; positive and never more than that."""
    max_positions = model.config.max_position_embeddings
    if block_size is not None and not 0 < block_size <= max_positions:
        raise UsageError(
            f"{flag} {block_size}: give a length from 1 to the model's max_position_embeddings={max_positions}"
        )
    return block_size or max_positions


# ------------------------------------------------------------------------------------------------------------------
# The curves of a run, from a `Trainer` log history
# ------------------------------------------------------------------------------------------------------------------


PLOT_NAMES = ("loss.png", "accuracy.png")


def plot_curves(log_history: list[dict], output_dir: str | os.PathLike) -> list[Path]:
    """Write `loss.png` (train and eval loss per step) and, when accuracy was evaluated, `accuracy.png`
    (eval accuracy and F1 per epoch) from a `Trainer` log history. Returns the written paths."""
    # A figure of its own, not pyplot's: no display needed, and the process's backend is left alone (a notebook's
    # figures still show after a run).
    from matplotlib.figure import Figure

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    # Each figure: its file, its curves (log key -> label) against its x key, whether every point is marked (else
    # only when few), and its axes.
    figures = [
        ("loss.png", {"loss": "train loss", "eval_loss": "eval loss"}, "step", False, {"ylabel": "cross-entropy loss"})
    ]
    if any("eval_accuracy" in entry for entry in log_history):
        scores = {"eval_accuracy": "validation accuracy", "eval_f1": "validation F1"}
        figures.append(("accuracy.png", scores, "epoch", True, {"ylim": (0, 1)}))
    written = []
    for name, curves, x_key, mark_all, axes in figures:
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        for key, label in curves.items():
            points = [(entry[x_key], entry[key]) for entry in log_history if key in entry and x_key in entry]
            if points:
                xs, ys = [x for x, _ in points], [y for _, y in points]
                ax.plot(xs, ys, marker="o" if mark_all or len(xs) < 30 else None, label=label)
        ax.set(xlabel=x_key, **axes)
        if ax.lines:
            ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = output_dir / name
        try:
            with atomic_write(path) as staging:  # a plot being redrawn is never seen half-written
                fig.savefig(staging, dpi=100, format="png")
        except OSError as error:  # Pillow's full disk names no file
            if error.filename is not None or error.errno is None:
                raise
            raise OSError(error.errno, error.strerror, str(path)) from error
        written.append(path)
    return written


@dataclass
class PlotCallback(TrainerCallback):
    """Redraw the curves after each evaluation (main process only), so that a long run can be watched and an
    interrupted one still leaves its plots; the run's end draws them once more (`finish_run`). An earlier run's plots,
    in a folder the user lets this run replace, are left as they are until the new run has ended well; plots drawn
    into a new folder go again if the run fails at its end (`discard`)."""

    new_folder: bool  # whether this run made the output folder
    live: bool  # whether the curves are redrawn during training: not over an earlier run's, unless resuming it
    drawn: set[str] = field(default_factory=set)

    def on_evaluate(self, args, state, control, **kwargs):
        if not (state.is_world_process_zero and self.live):
            return
        try:
            self.drawn.update(path.name for path in plot_curves(state.log_history, args.output_dir))
        except OSError as error:  # a plot to watch is not worth the run: the run's end draws it, or says why not
            logger.warning(f"the curves are not redrawn during this run: {error}")
            self.live = False
            self.discard(args.output_dir)

    def discard(self, output_dir: str | os.PathLike) -> None:
        """Remove the plots this run drew before a failure, unless the folder keeps checkpoints they go with."""
        folder = Path(output_dir)
        if not folder.is_dir() or any(folder.glob("checkpoint-*")):
            return
        for name in self.drawn:
            (folder / name).unlink(missing_ok=True)
        if self.new_folder and not any(folder.iterdir()):
            folder.rmdir()


# ------------------------------------------------------------------------------------------------------------------
# Trainer
# ------------------------------------------------------------------------------------------------------------------


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

    What it saves at the end of a run replaces an earlier run's files all or nothing (`finish_all_or_nothing`).
    """

    length_buckets = False  # `train_model` sets it per run

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

    def _get_eval_sampler(self, eval_dataset):
        return SequentialSampler(eval_dataset) if self.args.world_size <= 1 else None  # never grouped by length


@dataclass
class RunTask(TrainerCallback, ExportableState):
    """Names the task of the run in each checkpoint's trainer_state.json (`stateful_callbacks`), so that a resume
    from another task's checkpoint is refused before it loads (`safety.check_checkpoint`)."""

    task: str

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
    # Trainer's defaults that only make noise here: no pinned memory without an accelerator (pinning only speeds up
    # copies to one, and torch warns at every DataLoader); and, unless `--ddp_find_unused_parameters` is given, no DDP
    # search for unused parameters where the model uses all of them (the search costs a pass over the graph at each
    # step, and DDP warns when it finds none). An adaptive softmax skips the tail clusters that a batch's labels do
    # not reach: it keeps the search.
    if not torch.accelerator.is_available():
        training_args.dataloader_pin_memory = False
    if training_args.ddp_find_unused_parameters is None:
        skips = any(isinstance(module, torch.nn.AdaptiveLogSoftmaxWithLoss) for module in model.modules())
        training_args.ddp_find_unused_parameters = skips
    # Before the Trainer, which makes the output folder: whether this run made it, and holds an earlier run's plots.
    new_folder, folder = not os.path.lexists(training_args.output_dir), Path(training_args.output_dir)
    live_plots = bool(training_args.resume_from_checkpoint) or not any((folder / n).exists() for n in PLOT_NAMES)
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
        callbacks=[PlotCallback(new_folder, live_plots), *callbacks, *([RunTask(task)] if task else [])],
        **trainer_kwargs,
    )
    trainer.length_buckets, trainer.share_on_hub = length_buckets, share
    trainer.started_at = time.time()  # what the folder holds from before is an earlier run's (`finish_all_or_nothing`)
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
    # The last logged loss; None: no step logged (Trainer's mean: train_loss).
    metrics["final_train_loss"] = next((e["loss"] for e in reversed(trainer.state.log_history) if "loss" in e), None)
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
        # The evaluation files of the run's folder older than this run (`train_model` notes when it started).
        started, folder = getattr(trainer, "started_at", None), Path(trainer.args.output_dir)
        earlier = []
        if started is not None and folder.is_dir():
            earlier = [
                path.name
                for path in folder.iterdir()
                if any(fnmatch(path.name, pattern) for pattern in EARLIER_EVALUATIONS)
                and path.lstat().st_mtime < started
            ]
        try:
            discard = (*STALE_RESULTS, *earlier)
            with restoring_on_failure(trainer.args.output_dir, discard=discard):
                return finish(trainer, *args, **kwargs)
        except BaseException:
            for callback in trainer.callback_handler.callbacks:
                if isinstance(callback, PlotCallback):
                    callback.discard(trainer.args.output_dir)
            raise

    return wrapper


# ------------------------------------------------------------------------------------------------------------------
# The plateau check of a pretraining run
# ------------------------------------------------------------------------------------------------------------------


# A pretraining loss above this share of the data's unigram entropy means the model learned little more than
# token frequencies: a backbone that finetuning cannot profit from.
PLATEAU_RATIO = 0.9


def unigram_entropy(dataset, vocab_size: int, column: str = "input_ids") -> float:
    """Entropy, in nats, of the token frequencies of `dataset[column]`: the cross-entropy of the best model
    that ignores context. A language model's loss should end well below it."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for batch in dataset.iter(batch_size=1000):
        ids = np.fromiter((t for row in batch[column] for t in row), dtype=np.int64)
        counts += np.bincount(ids[(ids >= 0) & (ids < vocab_size)], minlength=vocab_size)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def check_plateau(loss: float | None, entropy: float, ratio: float = PLATEAU_RATIO) -> dict[str, Any]:
    """Compare a pretraining run's final loss with the unigram entropy of its data; warn (on the main process) when
    the run ended near it. Returns the figures for the run's report."""
    if loss is None or not math.isfinite(loss):
        return {"unigram_entropy": round(entropy, 4)}
    share = loss / entropy
    figures = {"unigram_entropy": round(entropy, 4), "loss_over_unigram_entropy": round(share, 4)}
    figures["plateau"] = plateau = share > ratio
    # Every process of a distributed run computes the figures; the main process alone says them, once per run.
    if not PartialState().is_main_process:
        return figures
    if plateau:
        logger.warning(
            f"PLATEAU: the final loss {loss:.3f} is {share:.0%} of the unigram entropy of the data ({entropy:.3f} "
            f"nats): the model learned little beyond token frequencies. Finetuning from it is unlikely to beat "
            "training from scratch; train longer, or lower the learning rate and lengthen the warm-up."
        )
    else:
        logger.info(f"final loss {loss:.3f} = {share:.0%} of the data's unigram entropy ({entropy:.3f} nats)")
    return figures
