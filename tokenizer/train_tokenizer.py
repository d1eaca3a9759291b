r"""Train the project's byte-level BPE tokenizer on plain or .gz text files, or folders of them.

    python tokenizer/train_tokenizer.py --files ../shared/data/birthplace/wiki.txt --vocab_size 8000 \
        --output_dir outputs/tok-wiki-8k
    python tokenizer/train_tokenizer.py configs/cs224n/cpu/tokenizer.json --files ../shared/data/birthplace/wiki.txt \
        --output_dir outputs/tok-wiki

The result loads offline with `AutoTokenizer.from_pretrained(output_dir)`. The script prints the
compression (characters per token) on the training text; `--max_chars` trains and measures on a prefix
of the corpus only (documented in BENCHMARKS.md when used).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator

os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")


from hf_models.safety import check_flag_ranges, check_output_dir, command_line, staged_save
from hf_models.safety.ranges import POSITIVE, TOKEN_ID_LIMIT, Range
from hf_models.textio import UsageError, iter_text_files, iter_text_lines
from hf_models.tokenization import (
    DEFAULT_MODEL_MAX_LENGTH,
    SPECIAL_TOKENS,
    chars_per_token,
    config_token_ids,
    train_bpe_tokenizer,
)
from hf_models.training import HelpFormatter, expand_arguments_file

# The allowed values of the numeric flags below (`check_flag_ranges`).
FLAG_RANGES = {
    "vocab_size": Range(1, TOKEN_ID_LIMIT, high_open=True),
    "min_frequency": Range(0, 2**63 - 1),
    "model_max_length": POSITIVE,
    "max_chars": POSITIVE,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--files", nargs="+", required=True, help="text files (plain or .gz) or folders of them")
    parser.add_argument("--vocab_size", type=int, required=True, help="vocabulary size, special tokens included")
    parser.add_argument("--output_dir", required=True, help="where to save the tokenizer")
    parser.add_argument("--min_frequency", type=int, default=2, help="minimum count of a merged pair")
    parser.add_argument(
        "--model_max_length",
        type=int,
        default=DEFAULT_MODEL_MAX_LENGTH,
        help="the longest input, recorded in tokenizer_config.json",
    )
    parser.add_argument(
        "--max_chars", type=int, default=None, help="train and measure on the first N characters of the corpus only"
    )
    parser.add_argument("--no_progress", action="store_true", help="hide the progress bars")
    parser.add_argument(
        "--overwrite_output_dir",
        action="store_true",
        help="replace what --output_dir holds (a tokenizer, a model, a run record); refused otherwise",
    )
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The flags, or `CONFIG.json [--flag value ...]`: a config file's values (configs/*/*/tokenizer.json)."""
    parser = build_parser()
    return parser.parse_args(expand_arguments_file(parser, sys.argv[1:] if argv is None else argv))


def _take_chars(lines: Iterator[str], max_chars: int | None) -> Iterator[str]:
    if max_chars is None:
        yield from lines
        return
    total = 0
    for line in lines:
        if total >= max_chars:
            return
        total += len(line)
        yield line


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    check_flag_ranges(args, ranges=FLAG_RANGES)
    files = iter_text_files(args.files)
    inputs = [("--files", f) for f in [*args.files, *files]]
    check_output_dir(args.output_dir, overwrite=args.overwrite_output_dir, inputs=inputs)
    # A file with no line of text (empty, or only white space or a byte order mark) would train on nothing.
    empty = [str(f) for f in files if next(iter_text_lines(f), None) is None]
    if empty:
        raise UsageError(f"empty file(s), no line of text: {', '.join(empty)}; give files with text")

    def corpus() -> Iterator[str]:
        return _take_chars(iter_text_lines(files), args.max_chars)

    print(f"Training a byte-level BPE tokenizer (vocab {args.vocab_size}) on {len(files)} file(s)", flush=True)
    start = time.perf_counter()
    tok = train_bpe_tokenizer(
        corpus(),
        vocab_size=args.vocab_size,
        model_max_length=args.model_max_length,
        min_frequency=args.min_frequency,
        show_progress=not args.no_progress,
    )
    train_s = time.perf_counter() - start
    # A second pass over the text: the compression is measured on exactly what the tokenizer saw.
    n_chars = sum(len(line) for line in corpus())
    if n_chars == 0:
        raise UsageError(f"no text in {', '.join(map(str, files))}; give files with text")
    start = time.perf_counter()
    cpt = chars_per_token(tok, corpus())
    encode_s = time.perf_counter() - start
    # Saved last, each file in one step: a command that fails leaves no half-made tokenizer.
    with staged_save(args.output_dir) as staging:
        tok.save_pretrained(str(staging))
    ids = config_token_ids(tok)
    print(f"Saved to {args.output_dir} (vocab {len(tok)}), trained in {train_s:.1f} s")
    if len(tok) < args.vocab_size:
        print(
            f"note: the corpus supports only {len(tok)} tokens (no pair left with frequency >= {args.min_frequency}), "
            f"fewer than the {args.vocab_size} asked for"
        )
    print(
        "special tokens: "
        + ", ".join(f"{name}={tok.convert_tokens_to_ids(t)} {t!r}" for name, t in SPECIAL_TOKENS.items())
    )
    print(f"compression: {cpt:.3f} characters per token on {n_chars:,} characters (encoded in {encode_s:.1f} s)")
    summary = {
        "files": [str(f) for f in files],
        "vocab_size": len(tok),
        "max_chars": args.max_chars,
        "train_chars": n_chars,
        "chars_per_token": round(cpt, 4),
        "train_seconds": round(train_s, 1),
        **ids,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(command_line(main))
