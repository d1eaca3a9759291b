"""benchmarks/probe_sentiment_features.py: linear probes of a frozen backbone's pooled layers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import probe_sentiment_features  # noqa: E402

pytest.importorskip("sklearn")


def test_the_probes_read_every_layer_and_find_the_word_that_tells_the_label(
    tmp_path, tiny_tokenizer, monkeypatch, write_alternating_cls_books
):
    config = SmallEncoderConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        pad_token_id=tiny_tokenizer.pad_token_id,
    )
    model_dir = tmp_path / "model"
    SmallEncoderForCausalLM(config).save_pretrained(model_dir)
    tiny_tokenizer.save_pretrained(model_dir)
    data = write_alternating_cls_books(tmp_path / "cls", (40, 20, 4))
    for extra, report_name in (([], "feature_probe.json"), (["--random_init"], "feature_probe_random_init.json")):
        argv = ["probe", "--data_dir", str(data), "--model_name_or_path", str(model_dir), *extra]
        monkeypatch.setattr(sys, "argv", argv)
        probe_sentiment_features.main()
        report = json.loads((model_dir / report_name).read_text(encoding="utf-8"))
        probes = report["probes"]
        # the embeddings and the 2 blocks, then the two joined probes
        assert list(probes) == [
            "layer 0 mean",
            "layer 1 mean",
            "layer 2 mean",
            "all layers, mean",
            "all layers, mean and max",
        ]
        assert report["random_init"] == bool(extra) and report["valid_reviews"] == 20
        # the mean of the embeddings already separates the two words
        assert probes["layer 0 mean"]["valid_accuracy"] == 1.0
        assert all(p["C"] in probe_sentiment_features.REGULARISATION for p in probes.values())

    predictions = tmp_path / "frozen_probe" / "seed42.txt"
    argv = [
        "probe",
        "--data_dir",
        str(data),
        "--model_name_or_path",
        str(model_dir),
        "--test_predictions",
        str(predictions),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    probe_sentiment_features.main()
    # the test reviews alternate like the others: the chosen probe labels them all
    assert predictions.read_text(encoding="utf-8") == "0\n1\n0\n1\n"
    report = json.loads((model_dir / "feature_probe.json").read_text(encoding="utf-8"))
    best = max(report["probes"].values(), key=lambda p: p["train_cv_accuracy"])
    assert report["probes"][report["test_probe"]] == best
    with pytest.raises(SystemExit):  # an earlier prediction file is never overwritten
        probe_sentiment_features.main()
