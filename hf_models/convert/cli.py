"""The command line `python -m hf_models.convert`: its --help is the package's docstring (`__init__.py`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..safety import check_output_dir, used_files
from ..textio import UsageError
from ..training import HelpFormatter
from .export import COURSES, convert_checkpoint


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    usage = sys.modules[__package__].__doc__  # the package's docstring (imported first): no import circle
    parser = argparse.ArgumentParser(
        prog="python -m hf_models.convert", description=usage, formatter_class=HelpFormatter
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
