"""`benchmarks/throughput.py` on the CPU with a tiny `base` preset: the contenders, PaLM's FLOP count, MFU against
a given peak, memory, generation, and the results.json keys."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
LAYERS, WIDTH, SEQ_LEN, VOCAB = 1, 64, 32, 512
TINY = [
    "--preset",
    "base",
    "--config_overrides",
    f"num_hidden_layers={LAYERS},hidden_size={WIDTH},num_attention_heads=4,intermediate_size=128",
    "--vocab_size",
    str(VOCAB),
    "--seq_len",
    str(SEQ_LEN),
    "--batch_size",
    "4",
    "--steps",
    "1",
    "--warmup_steps",
    "1",
    "--repeats",
    "1",
    "--threads",
    "1",
]


@pytest.fixture(scope="module")
def throughput():
    spec = importlib.util.spec_from_file_location("throughput", REPO_ROOT / "benchmarks" / "throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_base_preset_against_gpt2_on_cpu(tmp_path, throughput):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"throughput": {"kept": 1}}))
    report = throughput.main(
        TINY + ["--new_tokens", "8", "--generation_repeats", "1", "--peak_tflops", "2", "--results_json", str(results)]
    )
    training = report["training"]
    ours, gpt2 = training["ours_sdpa"], training["gpt2"]
    # Same shape, tied in both: the same parameters, so the same FLOPs per token.
    assert ours["parameters"] == gpt2["parameters"] == training["ours_eager"]["parameters"]
    # PaLM: 6·N + 12·L·H·Q·T, N without the position table (the tied token table counts once, as the head).
    matmul_parameters = ours["parameters"] - SEQ_LEN * WIDTH
    assert ours["flops_per_token"] == gpt2["flops_per_token"] == 6 * matmul_parameters + 12 * LAYERS * WIDTH * SEQ_LEN
    assert ours["mfu"] == pytest.approx(ours["tokens_per_s"] * ours["flops_per_token"] / 2e12)
    assert training["train_ratio_vs_gpt2"] == pytest.approx(ours["tokens_per_s"] / gpt2["tokens_per_s"])
    assert report["generation"]["same_tokens"] is True
    assert set(report["memory"]) == {"ours_sdpa_peak_mib", "gpt2_peak_mib", "ours_eager_peak_mib"}
    assert all(value > 0 for value in report["memory"].values())

    written = json.loads(results.read_text())
    assert written["throughput"] == {"kept": 1}  # another preset never overwrites the default's figures
    entry = written["throughput_base"]
    assert entry["preset"] == "base" and entry["train_tokens_per_s"] == round(ours["tokens_per_s"])
    assert entry["mfu"] == round(ours["mfu"], 4) and entry["memory"]["gpt2_peak_mib"] > 0


def test_compiled_contenders_and_arguments(throughput):
    # aot_eager: dynamo and AOTAutograd capture the models without inductor's C++ build (minutes on this CPU).
    report = throughput.main(
        TINY
        + ["--contenders", "ours_sdpa", "--compile", "--compile_backend", "aot_eager"]
        + ["--skip", "generation", "memory", "--no_results_json"]
    )
    training = report["training"]
    assert set(training) >= {"ours_sdpa", "ours_sdpa_compiled"} and "gpt2" not in training
    assert training["ours_sdpa_compiled"]["mfu"] is None  # no peak known for a CPU
    assert training["ours_sdpa_compiled"]["parameters"] == training["ours_sdpa"]["parameters"]

    args = throughput.parse_args([])
    assert (args.preset, args.seq_len, args.new_tokens) == ("cs224n-mingpt", 128, 512)  # the CPU profile's defaults
    assert throughput.results_key(args) == "throughput"
    assert throughput.results_key(argparse.Namespace(device="cuda", preset="cs224n-mingpt")) == "throughput_gpu"
    assert throughput.results_key(argparse.Namespace(device="cuda", preset="base")) == "throughput_gpu_base"
    with pytest.raises(SystemExit):
        throughput.parse_args(["--max_batch_search"])  # CUDA only


def test_the_chunked_loss_contender_beside_the_plain_one(throughput):
    """`ours_chunked` is `ours_sdpa` with its loss in chunks: the same model and FLOPs, timed beside it, and less
    memory kept for the backward pass (the gradients of the head, V x d + T x d, instead of T x V logits)."""
    report = throughput.main(
        TINY
        + ["--contenders", "ours_sdpa", "ours_chunked", "--loss_chunk_size", "48"]
        + ["--skip", "generation", "--no_results_json"]
    )
    training, memory = report["training"], report["memory"]
    assert training["ours_chunked"]["parameters"] == training["ours_sdpa"]["parameters"]
    assert training["ours_chunked"]["flops_per_token"] == training["ours_sdpa"]["flops_per_token"]
    assert training["chunked_vs_plain"] == pytest.approx(
        training["ours_chunked"]["tokens_per_s"] / training["ours_sdpa"]["tokens_per_s"]
    )
    assert 0 < memory["ours_chunked_peak_mib"] < memory["ours_sdpa_peak_mib"]


def test_every_recorded_gpu_mfu_follows_from_its_tokens_per_second(throughput):
    """results.json's GPU sections: each MFU is its tokens/s times the preset's FLOPs per token over the card's
    peak, and each ratio its tokens/s over GPT-2's, so that a figure copied in by hand (the H200 section comes from
    an earlier report's printed figures) cannot drift from the figures it derives from."""
    import torch

    results = json.loads((REPO_ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    checked = 0
    for key, entry in results.items():
        if not key.startswith("throughput_gpu"):
            continue
        args = throughput.parse_args(["--preset", entry["preset"], "--seq_len", str(entry["seq_len"])])
        with torch.device("meta"):
            model = throughput.build_model("ours_sdpa", args, args.seq_len)
        per_token = throughput.flops_per_token(model, args.seq_len)
        card = entry["hardware"].split(",")[0]
        peak = next(tflops for row, tflops in throughput.PEAK_BF16_TFLOPS if row in card) * 1e12
        for tokens, mfu in (("train_tokens_per_s", "mfu"), ("compiled_train_tokens_per_s", "compiled_mfu")):
            if mfu in entry:
                assert entry[mfu] == pytest.approx(entry[tokens] * per_token / peak, abs=6e-5), (key, mfu)
                checked += 1
    assert checked >= 5
    h200 = results["throughput_gpu_base"]
    assert (h200["compiled_mfu"], h200["batch_size"], h200["dropout"]) == (0.4082, 32, 0.0)
