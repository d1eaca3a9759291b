"""Shared test setup: offline Hugging Face, the real data folder, and a tiny trained tokenizer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Everything must work without the Hub: set before transformers/datasets are imported by any test.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
# The scripts `recipes/demo.py`, `benchmarks/plan.py` and `benchmarks/plot_sentiment.py` are imported by the tests
# as modules (and `benchmarks/write_results.py` imports the plan).
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
    from hf_models.tokenization import iter_text_lines, train_bpe_tokenizer

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
