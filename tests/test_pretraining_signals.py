"""Pretraining that can be trusted: the paragraph-openings objective, the unigram-entropy plateau check, and
the discriminative learning rate of the sentiment recipe."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import datasets
import pytest
from tiny import NO_NOISE, TINY_ONE_LAYER, run_birthplace

from hf_models.data import IGNORE_INDEX, encode_openings
from hf_models.training import check_plateau, unigram_entropy

# No --use_cpu: Trainer's defaults on a machine without an accelerator (which would pin memory, and warn).
COMMON = [*NO_NOISE, "--log_level", "warning", "--seed", "0"]

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_openings_keep_the_first_tokens_then_eos(tiny_tokenizer):
    texts = ["Alice Smith was born in Paris and studied law in Lyon.", "Bob"]
    out = encode_openings({"text": texts}, tiny_tokenizer, max_tokens=5)
    full = tiny_tokenizer(texts, add_special_tokens=False)["input_ids"]
    eos = tiny_tokenizer.eos_token_id
    assert len(full[0]) > 5
    assert out["input_ids"][0] == full[0][:5] + [eos]
    assert out["input_ids"][1] == full[1] + [eos]  # shorter documents are kept whole
    assert out["labels"] == out["input_ids"]  # the loss is on every token
    assert IGNORE_INDEX not in out["labels"][0]
    assert out["attention_mask"] == [[1] * len(x) for x in out["input_ids"]]
    with pytest.raises(ValueError, match="positive"):
        encode_openings({"text": texts}, tiny_tokenizer, max_tokens=0)


def test_unigram_entropy_matches_the_closed_form():
    uniform = datasets.Dataset.from_dict({"input_ids": [[0, 1, 2, 3]] * 5})
    assert unigram_entropy(uniform, vocab_size=10) == pytest.approx(math.log(4))
    skewed = datasets.Dataset.from_dict({"input_ids": [[7, 7, 7, 9]]})
    expected = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert unigram_entropy(skewed, vocab_size=10) == pytest.approx(expected)


def test_plateau_is_reported_and_warned(caplog):
    with caplog.at_level(logging.WARNING, logger="hf_models.training.trainer"):
        stuck = check_plateau(loss=6.0, entropy=6.2)
    assert stuck["plateau"] is True
    assert stuck["loss_over_unigram_entropy"] == pytest.approx(6.0 / 6.2, abs=1e-4)
    assert any("PLATEAU" in r.message and "6.200" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hf_models.training.trainer"):
        learned = check_plateau(loss=3.0, entropy=6.2)
    assert learned["plateau"] is False
    assert not caplog.records


@pytest.mark.slow
def test_birthplace_openings_pretraining_reports_its_plateau(tmp_path, synthetic_birthplace_dir, caplog):
    """Two steps of a tiny model end far above the data's unigram entropy: the report and the log say so, once; and
    the run pins no memory where there is no accelerator to copy to (torch would warn at each DataLoader)."""
    import warnings

    out = tmp_path / "pre"
    with (
        caplog.at_level(logging.WARNING, logger="hf_models.training.trainer"),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        run_birthplace(
            [
                "pretrain",
                "--data_dir",
                str(synthetic_birthplace_dir),
                "--pretraining_objective",
                "openings",
                "--opening_tokens",
                "12",
                "--pretrain_with_qa",
                "--tokenizer_vocab_size",
                "400",
                "--config_overrides",
                TINY_ONE_LAYER,
                "--output_dir",
                str(out),
                "--max_steps",
                "2",
                "--per_device_train_batch_size",
                "8",
                "--logging_steps",
                "1",
                *COMMON,
            ]
        )
    report = json.loads((out / "all_results.json").read_text())
    assert json.loads((out / "run_record.json").read_text())["objective"] == "openings"
    assert report["plateau"] is True
    assert report["loss_over_unigram_entropy"] > 1.0
    assert 0 < report["unigram_entropy"] < math.log(400)
    # 300 paragraph openings + the training QA pairs, each one example.
    people = len((synthetic_birthplace_dir / "wiki.txt").read_text().splitlines())
    questions = len((synthetic_birthplace_dir / "birth_places_train.tsv").read_text().splitlines())
    assert report["train_samples"] == people + questions
    assert [r.message.split(":")[0] for r in caplog.records if "PLATEAU" in r.message] == ["PLATEAU"]
    assert not [w for w in caught if "pin_memory" in str(w.message)]


def test_discriminative_learning_rate_groups(tiny_tokenizer):
    """The backbone trains at --backbone_learning_rate, the new head at --learning_rate; no parameter is lost."""
    from transformers import TrainingArguments

    from hf_models import SmallEncoderForSequenceClassification
    from hf_models.training import build_config
    from hf_models.training import discriminative_optimizer as _discriminative_optimizer

    config = build_config("altegrad-lab", TINY_ONE_LAYER, tiny_tokenizer)
    model = SmallEncoderForSequenceClassification(config)
    args = TrainingArguments(output_dir="unused", learning_rate=1e-3, weight_decay=0.01, use_cpu=True)
    _, kwargs = _discriminative_optimizer(model, args, 1e-4)
    groups = kwargs["params"]
    by_id = {id(p): g for g in groups for p in g["params"]}
    assert len(by_id) == sum(1 for p in model.parameters() if p.requires_grad)
    for name, param in model.named_parameters():
        group = by_id[id(param)]
        assert group["lr"] == (1e-4 if name.startswith("model.") else 1e-3), name
        assert group["weight_decay"] == (0.0 if ("bias" in name or "norm" in name.lower()) else 0.01), name
