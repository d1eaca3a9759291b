#!/usr/bin/env python
r"""Prepare the benchmark data folders (under an ignored output folder; the real data is never copied into git).

    python recipes/prepare_data.py birthplace-tune --data_root ../shared/data --out outputs/bench/data
    python recipes/prepare_data.py sentiment-corpus --data_root ../shared/data --out outputs/bench/data \
        --news_lines 4000 --novel_lines 20000
    python recipes/prepare_data.py sentiment-corpus configs/altegrad/cpu/corpus.json --out outputs/bench/data

birthplace-tune: a copy of the birthplace folder in which `birth_places_train.tsv` keeps 90% of the
training questions (seeded shuffle) and `birth_dev.tsv` holds the other 10%: the tuning split. The real dev
set is never used to choose anything; wiki.txt and the test questions are symlinked.

sentiment-corpus: a pretraining subsample, sized by a profile (configs/altegrad/PROFILE/corpus.json) or by
--news_lines and --novel_lines: the first N lines (articles) of orangesum_news.txt.gz, the first M lines
(paragraphs) of eltec_novels.txt.gz, and the 1,600 unlabeled training reviews (detokenized; no labels, no
validation or test review), one document per line, in pretrain.txt; the training reviews alone in reviews.txt, for
the target-domain LM stage (ULMFiT).
"""

import argparse
import random
import sys
from pathlib import Path

from hf_models.data.loaders import detokenize_spm
from hf_models.safety import check_flag_ranges, check_output_file, command_line, removing_what_fails
from hf_models.safety.ranges import NON_NEGATIVE, SEED, Range
from hf_models.textio import UsageError, atomic_write, atomic_write_text, iter_text_lines, read_lines
from hf_models.training import HelpFormatter, expand_arguments_file, read_arguments_file


def birthplace_tune(data_root: Path, out: Path, fraction: float, seed: int) -> None:
    src, dst = data_root / "birthplace", out / "birthplace-tune"
    inputs = [("--data_root", src)]
    for name in ("birth_places_train.tsv", "birth_dev.tsv"):
        check_output_file(dst / name, inputs, "the prepared file")
    lines = [line for line in read_lines(src / "birth_places_train.tsv") if line.strip()]
    random.Random(seed).shuffle(lines)
    n_held = round(len(lines) * fraction)
    split = {"birth_places_train.tsv": lines[n_held:], "birth_dev.tsv": lines[:n_held]}
    for name, kept in split.items():  # run again, the same split is kept; another seed or fraction is refused
        if (dst / name).is_file() and (dst / name).read_text(encoding="utf-8") != "\n".join(kept) + "\n":
            raise UsageError(
                f"{dst / name} holds another split (another --seed or --tune_fraction): the runs tuned on it would "
                "no longer match; remove the folder to prepare it again, or pick another --out"
            )
    with removing_what_fails([dst]):  # a disk full at the second file leaves no first one
        for name, kept in split.items():
            atomic_write_text(dst / name, "\n".join(kept) + "\n")
        for name in ("wiki.txt", "birth_test_inputs.tsv"):
            link = dst / name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to((src / name).resolve())
    print(f"{dst}: {len(lines) - n_held} training questions, {n_held} held out for tuning (seed {seed})")


def sentiment_corpus(data_root: Path, out: Path, news_lines: int, novel_lines: int) -> None:
    dst = out / "sentiment-corpus"
    inputs = [("--data_root", data_root / "french-corpus"), ("--data_root", data_root / "cls-books")]
    for name in ("pretrain.txt", "reviews.txt"):
        check_output_file(dst / name, inputs, "the prepared file")
    counts, chars = {}, 0
    with atomic_write(dst / "pretrain.txt") as staging, open(staging, "w", encoding="utf-8") as f:
        for name, limit in (("orangesum_news.txt.gz", news_lines), ("eltec_novels.txt.gz", novel_lines)):
            n = 0
            for line in iter_text_lines(data_root / "french-corpus" / name):  # the non-blank lines
                if n >= limit:
                    break
                f.write(line.strip() + "\n")
                n += 1
                chars += len(line.strip())
            counts[name] = n
        lines = read_lines(data_root / "cls-books" / "train.review.spm")
        reviews = [text for text in map(detokenize_spm, lines) if text]
        f.writelines(text + "\n" for text in reviews)
        chars += sum(map(len, reviews))
        counts["cls-books/train.review.spm (unlabeled)"] = len(reviews)
    atomic_write_text(dst / "reviews.txt", "".join(text + "\n" for text in reviews))
    print(f"{dst / 'pretrain.txt'}: {chars:,} characters; lines per source: {counts}")


CORPUS_CONFIGS = "configs/altegrad/PROFILE/corpus.json"
# The allowed values of the numeric flags below (`check_flag_ranges`).
FLAG_RANGES = {
    "tune_fraction": Range(0, 1, low_open=True, high_open=True),
    "news_lines": NON_NEGATIVE,
    "novel_lines": NON_NEGATIVE,
    "seed": SEED,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("what", choices=["birthplace-tune", "sentiment-corpus"], help="which data to prepare")
    parser.add_argument(
        "--data_root", default="../shared/data", help="the folder with birthplace/, cls-books/, french-corpus/"
    )
    parser.add_argument("--out", default="outputs/bench/data", help="where to write the prepared folder")
    parser.add_argument(
        "--tune_fraction", type=float, default=0.1, help="birthplace-tune: training questions held out"
    )
    parser.add_argument("--seed", type=int, default=0, help="birthplace-tune: seed of the held-out draw")
    parser.add_argument("--news_lines", type=int, help="sentiment-corpus (required): first news articles kept")
    parser.add_argument("--novel_lines", type=int, help="sentiment-corpus (required): first novel paragraphs kept")
    return parser


# The flags that only one kind of data takes: given to the other, they would be silently ignored.
FLAGS_OF = {"birthplace-tune": ("tune_fraction", "seed"), "sentiment-corpus": ("news_lines", "novel_lines")}


def check_flags_of(what: str, argv: list[str]) -> None:
    """Refuse a flag, or a key of the arguments file, that another kind of data than `what` takes."""
    foreign = {flag: other for other, flags in FLAGS_OF.items() if other != what for flag in flags}
    if len(argv) > 1 and argv[1].endswith(".json"):
        for key in read_arguments_file(argv[1]):
            if key in foreign:
                raise UsageError(f"{argv[1]}: key {key!r} is for {foreign[key]}, not {what}; drop it from the file")
    for token in argv[2:] if len(argv) > 1 and argv[1].endswith(".json") else argv[1:]:
        flag = token.split("=", 1)[0].removeprefix("--")
        if token.startswith("--") and flag in foreign:
            raise UsageError(f"--{flag} is for {foreign[flag]}, not {what}; drop it")


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # `sentiment-corpus CONFIG.json --data_root ...`: a config file's values (configs/altegrad/*/corpus.json)
    args = parser.parse_args(expand_arguments_file(parser, argv, position=1))
    check_flags_of(args.what, argv)
    check_flag_ranges(args, ranges=FLAG_RANGES)
    # No default size: a corpus's size is a profile's choice (its corpus.json), not this script's.
    missing = [f"--{flag}" for flag in ("news_lines", "novel_lines") if getattr(args, flag) is None]
    if args.what == "sentiment-corpus" and missing:
        raise UsageError(f"sentiment-corpus needs {' and '.join(missing)} (or a config file: {CORPUS_CONFIGS})")
    for flag in ("data_root", "out"):
        if not getattr(args, flag).strip():
            raise UsageError(f"--{flag} is empty: give a folder")
    if args.what == "birthplace-tune":
        birthplace_tune(Path(args.data_root), Path(args.out), args.tune_fraction, args.seed)
    else:
        sentiment_corpus(Path(args.data_root), Path(args.out), args.news_lines, args.novel_lines)


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
