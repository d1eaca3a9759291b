"""Convert a course checkpoint and save it as a `save_pretrained` folder, with its tokenizer and its run record.

The folder is saved as the recipes save theirs (`safety.staged_save`): each file replaces its old version only once
the whole save has succeeded, so a failed conversion leaves the old folder as it was. A corrupt checkpoint is one
`CheckpointError` line (`load_course_state_dict`), a broken tokenizer folder one `UsageError` line naming the file
(`tokenization.open_tokenizer`)."""

from __future__ import annotations

import os
from pathlib import Path

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..run_record import RunRecord, model_size
from ..safety import one_line, staged_save
from ..small_encoder import SmallEncoderForSequenceClassification
from ..textio import UsageError
from ..tokenization import config_token_ids
from ..tokenization.bpe import open_tokenizer
from .altegrad_lab import convert_altegrad_lab
from .checkpoint import load_course_state_dict
from .cs224n_mingpt import convert_cs224n_mingpt

COURSES = ("altegrad-lab", "cs224n-mingpt")


def attach_tokenizer(model: PreTrainedModel, tokenizer_dir: str | os.PathLike) -> PreTrainedTokenizerBase:
    """Load the tokenizer, check that it fits the embedding table, and copy its special-token ids into the config."""
    try:
        tokenizer = open_tokenizer(tokenizer_dir)  # a damaged file is a one-line error naming it
    except (OSError, ValueError) as error:
        raise UsageError(f"--tokenizer {tokenizer_dir}: cannot load a tokenizer ({one_line(error)})") from None
    if len(tokenizer) != model.config.vocab_size:
        raise UsageError(
            f"{tokenizer_dir}: the tokenizer has {len(tokenizer)} tokens but the checkpoint's vocabulary has "
            f"{model.config.vocab_size}: pass the tokenizer the course model was trained with."
        )
    for key, token_id in config_token_ids(tokenizer).items():
        setattr(model.config, key, token_id)
        if model.can_generate() and hasattr(model.generation_config, key):
            setattr(model.generation_config, key, token_id)
    return tokenizer


def convert_checkpoint(
    course: str,
    checkpoint_path: str | os.PathLike,
    output_dir: str | os.PathLike,
    tokenizer_dir: str | os.PathLike | None = None,
    variant: str | None = None,
    num_heads: int | None = None,
    share_synthesizer_heads: bool = False,
) -> PreTrainedModel:
    """Convert, then `save_pretrained` the model (and the tokenizer when given) into `output_dir`, with its run
    record, in one step per file (`staged_save`)."""
    state_dict = load_course_state_dict(checkpoint_path)
    source = str(checkpoint_path)
    if course == "altegrad-lab":
        if variant not in (None, "vanilla"):
            raise UsageError(f"the lab's model has vanilla attention only, not --attention_type {variant}")
        model = convert_altegrad_lab(state_dict, num_heads=num_heads, source=source)
    elif course == "cs224n-mingpt":
        model = convert_cs224n_mingpt(state_dict, variant, num_heads, share_synthesizer_heads, source=source)
    else:
        raise ValueError(f"unknown course {course!r}; choose one of {COURSES}")
    tokenizer = attach_tokenizer(model, tokenizer_dir) if tokenizer_dir is not None else None
    with staged_save(output_dir) as staging:
        model.save_pretrained(staging)
        if tokenizer is not None:
            tokenizer.save_pretrained(staging)
        conversion_record(course, model, checkpoint_path).save(staging)
    return model


def conversion_record(course: str, model: PreTrainedModel, checkpoint_path: str | os.PathLike) -> RunRecord:
    """The run record of a converted checkpoint (what `push_to_hub.py` builds the model card from): the course's
    task, data and language, the preset the config follows, and the model's size; no training outcome."""
    classifier = isinstance(model, SmallEncoderForSequenceClassification)
    task, dataset, language = {
        "altegrad-lab": ("sentiment" if classifier else "pretraining", "cls-books" if classifier else None, "fr"),
        "cs224n-mingpt": ("birthplace-qa", "birthplace", "en"),
    }[course]
    return RunRecord(
        task=task,
        objective="course-checkpoint",
        dataset=dataset,
        language=language,
        preset=course,
        model_size=model_size(model),
        hyperparameters={"converted_from": Path(checkpoint_path).name},
    )
