"""Shared test setup: offline Hugging Face, the real data folder, a tiny trained tokenizer, and writers of tiny
CLS-books look-alike folders."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from hf_models.environment import go_offline

# Everything must work without the Hub: set before transformers/datasets are imported by any test.
go_offline()
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
# The scripts `recipes/demo.py`, `benchmarks/grid.py` and `benchmarks/plot_sentiment.py` are imported by the tests
# as modules (and `benchmarks/write_results.py` imports the grid).
sys.path.insert(0, str(REPO_ROOT / "recipes"))
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """`<repo>/../shared/data` (the real data sets); skips the test when it is absent."""
    if not SHARED_DATA_DIR.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA_DIR}")
    return SHARED_DATA_DIR


@pytest.fixture(scope="session")
def synthetic_birthplace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic birthplace data set (same formats as the real one), written once per session."""
    from hf_models.data.synthetic import write_synthetic_birthplace

    return write_synthetic_birthplace(tmp_path_factory.mktemp("synthetic_birthplace"), num_people=300, seed=0)


@pytest.fixture(scope="session")
def tiny_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory, synthetic_birthplace_dir: Path) -> Path:
    """A 600-token byte-level BPE tokenizer trained on the synthetic wiki.txt, saved to a folder."""
    from hf_models.textio import iter_text_lines
    from hf_models.tokenization import train_bpe_tokenizer

    out = tmp_path_factory.mktemp("tiny_tokenizer")
    train_bpe_tokenizer(
        iter_text_lines(synthetic_birthplace_dir / "wiki.txt"), vocab_size=600, output_dir=out, show_progress=False
    )
    return out


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_tokenizer_dir: Path):
    """The tokenizer of `tiny_tokenizer_dir`, loaded with `hf_models.tokenization.load_tokenizer`."""
    from hf_models.tokenization import load_tokenizer

    return load_tokenizer(tiny_tokenizer_dir)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One intra-op thread per test: `make test` runs two pytest workers on two (shared) cores, and oversubscribed
    OpenMP threads spin: the tiny-model tests ran ten times slower with torch's default thread count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --------------------------------------------------------------------------------------------------
# CLS-books look-alikes: `SPLIT.review.spm` (one review a line, SentencePiece pieces separated by spaces, `▁` at a
# word's start) and `SPLIT.label` (0 negative, 1 positive; none for the test split, as in the real folder)
# --------------------------------------------------------------------------------------------------
def _write_cls_books(folder: Path, splits: Mapping[str, tuple[Sequence[str], Sequence[int]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split, (reviews, labels) in splits.items():
        (folder / f"{split}.review.spm").write_text("".join(r + "\n" for r in reviews), encoding="utf-8")
        if split != "test":
            (folder / f"{split}.label").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    return folder


def _write_alternating_cls_books(
    folder: Path,
    sizes: tuple[int, int, int] = (64, 16, 8),
    positive: str = "\u2581un \u2581livre \u2581superbe",
    negative: str = "\u2581un \u2581livre \u2581ennuyeux",
) -> Path:
    splits = {}
    for split, n in zip(("train", "valid", "test"), sizes, strict=True):
        labels = [i % 2 for i in range(n)]
        splits[split] = ([positive if y else negative for y in labels], labels)
    return _write_cls_books(folder, splits)


TOY_POSITIVE = ["excellent", "magnifique", "passionnant", "superbe"]
TOY_NEGATIVE = ["ennuyeux", "mauvais", "décevant", "médiocre"]
TOY_FILLER = ["le", "livre", "est", "un", "roman", "de", "la", "histoire"]


def _write_toy_cls_books(folder: Path, seed: int = 0) -> Path:
    rng = random.Random(seed)

    def review(label: int) -> str:
        filler = rng.choices(TOY_FILLER, k=rng.randint(2, 12))
        words = filler + rng.choices(TOY_POSITIVE if label else TOY_NEGATIVE, k=2)
        rng.shuffle(words)
        return " ".join("\u2581" + w for w in words)

    splits = {}
    for split, n in (("train", 48), ("valid", 16), ("test", 10)):
        labels = [(i * 7 + 3) % 2 for i in range(n)]
        splits[split] = ([review(y) for y in labels], labels)
    return _write_cls_books(folder, splits)


@pytest.fixture(scope="session")
def write_cls_books() -> Callable[[Path, Mapping[str, tuple[Sequence[str], Sequence[int]]]], Path]:
    """`write_cls_books(folder, {split: (reviews, labels)})` writes a CLS-books folder (made if missing) of these
    reviews (each a line of space-separated pieces) and labels (the test split's are not written)."""
    return _write_cls_books


@pytest.fixture(scope="session")
def write_alternating_cls_books() -> Callable[..., Path]:
    """`write_alternating_cls_books(folder, sizes=(train, valid, test), positive=..., negative=...)`: labels 0, 1,
    0, ... and every review of label 1 `positive`, of label 0 `negative`; by default `▁un ▁livre ▁superbe` and
    `▁un ▁livre ▁ennuyeux`, so that one word tells the label."""
    return _write_alternating_cls_books


@pytest.fixture(scope="session")
def write_toy_cls_books() -> Callable[..., Path]:
    """`write_toy_cls_books(folder, seed=0)`: 48/16/10 reviews of 2 to 12 filler words and two sentiment words
    (positive for label 1, negative for 0), shuffled, so that the reviews differ in length; separable by words."""
    return _write_toy_cls_books
