"""The recipes on the real data in ../shared/data (skipped when it is absent), at tiny scale."""

from __future__ import annotations

import json

import pytest
from tiny import TINY_SIZES, run_birthplace, run_sentiment

TINY = f"{TINY_SIZES},max_position_embeddings=128"


def test_london_baseline_is_five_percent(shared_data_dir, capsys):
    metrics = run_birthplace(["evaluate", "--data_dir", str(shared_data_dir / "birthplace"), "--london_baseline"])
    assert "Correct: 25 out of 500: 5.0%" in capsys.readouterr().out
    assert (metrics["correct"], metrics["total"]) == (25, 500)


@pytest.mark.slow
def test_birthplace_evaluate_counts_all_dev_questions(shared_data_dir, tmp_path, capsys):
    """An (untrained) model answers all 500 dev questions, the four tab-less rows included, and the 437 test ones."""
    from hf_models import SmallEncoderForCausalLM
    from hf_models.run_record import RunRecord
    from hf_models.textio import iter_text_lines
    from hf_models.tokenization import train_bpe_tokenizer
    from hf_models.training import build_config

    data = shared_data_dir / "birthplace"
    model_dir = tmp_path / "model"
    tokenizer = train_bpe_tokenizer(iter_text_lines(data / "wiki.txt"), vocab_size=600, show_progress=False)
    SmallEncoderForCausalLM(build_config("cs224n-mingpt", TINY, tokenizer)).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    # How it answers (directly, no recitation), as a training would have recorded it.
    RunRecord(task="birthplace-qa", objective="qa", hyperparameters={"recite_tokens": 0}).save(model_dir)

    with pytest.warns(Warning, match="4 row"):  # the loader reports the recovered rows
        metrics = run_birthplace(
            [
                "evaluate",
                "--data_dir",
                str(data),
                "--model_name_or_path",
                str(model_dir),
                "--output_dir",
                str(tmp_path),
            ]
            + ["--max_new_tokens", "4"]
        )
    assert "out of 500: " in capsys.readouterr().out
    assert metrics["total"] == 500
    assert len((tmp_path / "predictions_validation.txt").read_text(encoding="utf-8").splitlines()) == 500

    run_birthplace(
        ["evaluate", "--data_dir", str(data), "--model_name_or_path", str(model_dir), "--output_dir", str(tmp_path)]
        + ["--max_new_tokens", "4", "--eval_split", "test"]
    )
    assert len((tmp_path / "predictions_test.txt").read_text(encoding="utf-8").splitlines()) == 437


@pytest.mark.slow
def test_sentiment_writes_2000_test_predictions(shared_data_dir, tmp_path):
    from hf_models.data import load_cls_books
    from hf_models.tokenization import train_bpe_tokenizer

    data = shared_data_dir / "cls-books"
    tokenizer_dir = tmp_path / "tokenizer"
    train_bpe_tokenizer(
        load_cls_books(data)["train"]["text"][:400], vocab_size=600, output_dir=tokenizer_dir, show_progress=False
    )
    out = tmp_path / "sentiment"
    metrics = run_sentiment(
        ["--data_dir", str(data), "--from_scratch", "--tokenizer_name_or_path", str(tokenizer_dir)]
        + [
            "--config_overrides",
            TINY,
            "--max_seq_length",
            "64",
            "--label_budget",
            "64",
            "--max_eval_samples",
            "64",
        ]
        + ["--output_dir", str(out), "--num_train_epochs", "1", "--per_device_train_batch_size", "16"]
        + ["--per_device_eval_batch_size", "128", "--use_cpu", "--report_to", "none", "--save_strategy", "no"]
        + ["--disable_tqdm", "true", "--log_level", "warning"]
    )
    predictions = (out / "test_predictions.txt").read_text().splitlines()
    assert len(predictions) == 2000 and set(predictions) <= {"0", "1"}
    assert metrics["test_samples"] == 2000
    report = json.loads((out / "all_results.json").read_text())
    assert 0.0 <= report["eval_accuracy"] <= 1.0 and "eval_f1" in report
