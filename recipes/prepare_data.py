#!/usr/bin/env python
r"""Prepare the benchmark data folders (under an ignored output folder; the real data is never copied into git).

    python recipes/prepare_data.py birthplace-tune --data_root ../shared/data --out outputs/bench/data
    python recipes/prepare_data.py sentiment-corpus --data_root ../shared/data --out outputs/bench/data \
        --news_lines 4000 --novel_lines 20000
    python recipes/prepare_data.py sentiment-corpus configs/altegrad/cpu/corpus.json --out outputs/bench/data

birthplace-tune: a copy of the birthplace folder in which `birth_places_train.tsv` keeps 90% of the
training questions (seeded shuffle) and `birth_dev.tsv` holds the other 10%: the tuning split. The real dev
set is never used to choose anything; wiki.txt and the test questions are symlinked.

sentiment-corpus: the documented CPU-sized pretraining subsample: the first N lines (articles) of
orangesum_news.txt.gz, the first M lines (paragraphs) of eltec_novels.txt.gz, and the 1,600 unlabeled
training reviews (detokenized; no labels, no validation or test review), one document per line, in
pretrain.txt; the training reviews alone in reviews.txt, for the target-domain LM stage (ULMFiT).
"""

import argparse
import gzip
import random
import sys
from pathlib import Path

from hf_models.data.loaders import detokenize_spm
from hf_models.safety import command_line
from hf_models.training import expand_arguments_file


def birthplace_tune(data_root: Path, out: Path, fraction: float, seed: int) -> None:
    src, dst = data_root / "birthplace", out / "birthplace-tune"
    dst.mkdir(parents=True, exist_ok=True)
    lines = [
        line for line in (src / "birth_places_train.tsv").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    random.Random(seed).shuffle(lines)
    n_held = round(len(lines) * fraction)
    (dst / "birth_places_train.tsv").write_text("\n".join(lines[n_held:]) + "\n", encoding="utf-8")
    (dst / "birth_dev.tsv").write_text("\n".join(lines[:n_held]) + "\n", encoding="utf-8")
    for name in ("wiki.txt", "birth_test_inputs.tsv"):
        link = dst / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to((src / name).resolve())
    print(f"{dst}: {len(lines) - n_held} training questions, {n_held} held out for tuning (seed {seed})")


def sentiment_corpus(data_root: Path, out: Path, news_lines: int, novel_lines: int) -> None:
    dst = out / "sentiment-corpus"
    dst.mkdir(parents=True, exist_ok=True)
    counts, chars = {}, 0
    with open(dst / "pretrain.txt", "w", encoding="utf-8") as f:
        for name, limit in (("orangesum_news.txt.gz", news_lines), ("eltec_novels.txt.gz", novel_lines)):
            n = 0
            with gzip.open(data_root / "french-corpus" / name, "rt", encoding="utf-8") as g:
                for line in g:
                    if n >= limit:
                        break
                    line = line.strip()
                    if line:
                        f.write(line + "\n")
                        n += 1
                        chars += len(line)
            counts[name] = n
        lines = (data_root / "cls-books" / "train.review.spm").read_text(encoding="utf-8").splitlines()
        reviews = [text for text in map(detokenize_spm, lines) if text]
        f.writelines(text + "\n" for text in reviews)
        chars += sum(map(len, reviews))
        counts["cls-books/train.review.spm (unlabeled)"] = len(reviews)
    (dst / "reviews.txt").write_text("".join(text + "\n" for text in reviews), encoding="utf-8")
    print(f"{dst / 'pretrain.txt'}: {chars:,} characters; lines per source: {counts}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["birthplace-tune", "sentiment-corpus"], help="which data to prepare")
    parser.add_argument(
        "--data_root", default="../shared/data", help="the folder with birthplace/, cls-books/, french-corpus/"
    )
    parser.add_argument("--out", default="outputs/bench/data", help="where to write the prepared folder")
    parser.add_argument(
        "--tune_fraction", type=float, default=0.1, help="birthplace-tune: training questions held out"
    )
    parser.add_argument("--seed", type=int, default=0, help="birthplace-tune: seed of the held-out draw")
    parser.add_argument("--news_lines", type=int, default=4000, help="sentiment-corpus: first news articles kept")
    parser.add_argument("--novel_lines", type=int, default=20000, help="sentiment-corpus: first novel paragraphs kept")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    # `sentiment-corpus CONFIG.json --data_root ...`: a config file's values (configs/altegrad/*/corpus.json)
    args = parser.parse_args(expand_arguments_file(parser, sys.argv[1:] if argv is None else argv, position=1))
    if args.what == "birthplace-tune":
        birthplace_tune(Path(args.data_root), Path(args.out), args.tune_fraction, args.seed)
    else:
        sentiment_corpus(Path(args.data_root), Path(args.out), args.news_lines, args.novel_lines)


if __name__ == "__main__":
    sys.exit(command_line(main))
