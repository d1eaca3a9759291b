"""Convert a checkpoint trained with the course code into a `small-encoder` `save_pretrained` folder.

    python -m hf_models.convert altegrad-lab CHECKPOINT.pt --output_dir DIR [--tokenizer TOKENIZER_DIR]
    python -m hf_models.convert cs224n-mingpt CHECKPOINT.pt --output_dir DIR [--attention_type vanilla|synthesizer]

In the spirit of transformers' `convert_*_original_pytorch_checkpoint_to_pytorch.py` scripts: the input is the state
dict the course code saves (`torch.save(model.state_dict(), path)`, or a dict holding it under `model_state_dict` or
`state_dict`); every key is checked (name and shape) before anything is written, and unknown, missing or mis-shaped
keys are reported together in one error.

- `altegrad-lab`: the lab's `Model` (`base.encoder`, `base.pos_encoder.pe`, `base.transformer_encoder.layers.N.*`,
  `classifier.decoder`). A decoder with one output per token gives `SmallEncoderForCausalLM`, any other width
  `SmallEncoderForSequenceClassification` (the lab's classifier reads the last position). Dropouts are 0, as in the lab.
- `cs224n-mingpt`: CS224N a5's minGPT (`tok_emb`, `pos_emb`, `blocks.N.{ln1,ln2,attn.*,mlp.0,mlp.2}`, `ln_f`, `head`),
  with vanilla attention or the course's synthesizer (`attn.w1`, `attn.w2`, `attn.b2`), as `SmallEncoderForCausalLM`
  with exact GELU. The course synthesizer spans ℓ = block − 1 key positions (its inputs are block − 1 characters long)
  while `pos_emb` has `block` rows, so the converted config has `max_position_embeddings=block` and
  `synthesizer_width=block-1`. Its single B and b2 are tiled across the heads (one B_i per head, the project's
  layout); `--share_synthesizer_heads` keeps them shared (`synthesizer_shared_heads=True`): the same logits, and
  exactly the course's parameter count.

Attention head counts are not stored in a state dict: `--num_heads` defaults to the course's (2 for the lab, 8 for
minGPT), and a synthesizer's is checked against the width of its B.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..run_record import RunRecord, model_size
from ..safety import check_output_dir, one_line, staged_save, used_files
from ..small_encoder import SmallEncoderForSequenceClassification
from ..textio import UsageError
from ..tokenization import config_token_ids, open_tokenizer
from ..training import HelpFormatter

__all__ = [
    "COURSES",
    "CheckpointError",
    "attach_tokenizer",
    "check_keys",
    "check_output",
    "conversion_record",
    "convert_checkpoint",
    "load_course_state_dict",
    "main",
    "parse_args",
]

# Here, converting and saving with the tokenizer and the run record, and the command line (`__main__.py` runs it);
# what the converters share in `checkpoint.py`, and one converter per course checkpoint beside it: `altegrad_lab.py`
# and `cs224n_mingpt.py`.

from .checkpoint import (
    CheckpointError,
    check_keys,
    load_course_state_dict,
)

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
    from .altegrad_lab import convert_altegrad_lab
    from .cs224n_mingpt import convert_cs224n_mingpt

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


# The command line `python -m hf_models.convert`: its --help is this module's docstring.
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hf_models.convert", description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("course", choices=COURSES, help="which course code saved the checkpoint")
    parser.add_argument("checkpoint", help="the .pt file (a state dict, or a dict with model_state_dict)")
    parser.add_argument("--output_dir", required=True, help="where to save_pretrained the model")
    parser.add_argument("--tokenizer", default=None, help="a tokenizer folder to save with the model")
    parser.add_argument(
        "--attention_type",
        choices=("vanilla", "synthesizer"),
        default=None,
        help="minGPT's attention (default: detected from the keys)",
    )
    parser.add_argument("--num_heads", type=int, default=None, help="attention heads (default: the course's)")
    parser.add_argument(
        "--overwrite_output_dir",
        action="store_true",
        help="replace what --output_dir holds (a model, a tokenizer, a record); refused otherwise",
    )
    parser.add_argument(
        "--share_synthesizer_heads",
        action="store_true",
        help="keep the course synthesizer's single B and b2 shared by the heads (exact parameter "
        "count) instead of tiling them",
    )
    return parser.parse_args(argv)


def check_output(args: argparse.Namespace) -> None:
    """Before converting: an --output_dir that is no input, holds no earlier output (unless allowed) nor an old
    tokenizer that would stay beside new weights."""
    inputs = [("the checkpoint", args.checkpoint), ("--tokenizer", args.tokenizer)]
    check_output_dir(args.output_dir, overwrite=args.overwrite_output_dir, inputs=inputs)
    old_tokenizer = {"tokenizer.json", "tokenizer_config.json", "vocab.json"} & set(used_files(args.output_dir))
    if old_tokenizer and args.tokenizer is None:
        raise UsageError(
            f"--output_dir {args.output_dir} holds an earlier tokenizer ({', '.join(sorted(old_tokenizer))}) that "
            "would stay beside the new weights; give --tokenizer, or pick a new folder"
        )


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m hf_models.convert`: check the output folder, convert, save, and say what was saved."""
    args = parse_args(argv)
    check_output(args)
    model = convert_checkpoint(
        args.course,
        args.checkpoint,
        args.output_dir,
        tokenizer_dir=args.tokenizer,
        variant=args.attention_type,
        num_heads=args.num_heads,
        share_synthesizer_heads=args.share_synthesizer_heads,
    )
    parameters = model.num_parameters()
    print(f"Saved {type(model).__name__} ({parameters:,} parameters) to {args.output_dir}")
