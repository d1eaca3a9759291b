"""The shortened `make demo`: on the synthetic knowledge task, pretraining beats both baselines."""

from __future__ import annotations

import json

import demo  # recipes/demo.py (tests/conftest.py puts recipes/ on the path)
import pytest


@pytest.mark.slow
def test_quick_demo_pretraining_beats_both_baselines(tmp_path, capsys):
    scores = demo.run_demo(output_dir=str(tmp_path / "demo"), quick=True, seed=0)
    printed = capsys.readouterr().out
    assert "| pretrained (span corruption) + finetuned |" in printed
    assert "Wall time:" in printed

    pretrained = scores["with pretraining"]["exact_match"]
    scratch = scores["without pretraining"]["exact_match"]
    most_common = scores["most common place"]["exact_match"]
    assert scores["with pretraining"]["total"] == scores["most common place"]["total"] > 0
    assert pretrained > scratch and pretrained > most_common, scores
    # Not by a hair: the point of the demo is a clear gap.
    assert pretrained >= most_common + 0.05, scores
    written = json.loads((tmp_path / "demo" / "demo_results.json").read_text())  # what write_results.py records
    assert written["setting"] == "quick" and written["scores"]["with pretraining"] == {
        key: scores["with pretraining"][key] for key in ("correct", "total", "exact_match")
    }
    for name in ("pretrain", "finetune", "finetune_scratch"):
        assert (tmp_path / "demo" / name / "model.safetensors").is_file()
        assert (tmp_path / "demo" / name / "report.json").is_file()


def test_the_demo_prints_percentages_to_one_decimal():
    assert demo._correct({"correct": 13, "total": 30}) == "Correct: 13 out of 30: 43.3%"
    assert demo._correct({"correct": 1, "total": 2}) == "Correct: 1 out of 2: 50.0%"


def test_the_demo_runs_the_settings_of_its_config_file(tmp_path, monkeypatch):
    """`make demo`'s settings are configs/demo/*.json, read when it runs (not a copy in the script): a changed file
    is what the pretraining gets."""
    setting = demo.read_setting("quick")
    setting["pretrain"]["num_train_epochs"] = 7
    setting["config_overrides"] += ",num_hidden_layers=1"
    (tmp_path / "quick.json").write_text(json.dumps(setting), encoding="utf-8")
    monkeypatch.setattr(demo, "SETTINGS_DIR", tmp_path)
    given = {}

    def first_step(logs, name, step, model_args, bp_args, **training):
        given.update(training, config_overrides=model_args.config_overrides)
        raise KeyboardInterrupt  # the pretraining's arguments are all this test needs

    monkeypatch.setattr(demo, "_run", first_step)
    with pytest.raises(KeyboardInterrupt):
        demo.run_demo(output_dir=str(tmp_path / "demo"), quick=True, seed=0)
    assert given["num_train_epochs"] == 7 and given["config_overrides"].endswith(",num_hidden_layers=1")
    assert given["learning_rate"] == setting["pretrain"]["learning_rate"]


@pytest.mark.parametrize("name", ["synthetic", "quick", "real"])
def test_each_demo_setting_holds_a_model_and_trainer_arguments(name):
    """Every file of configs/demo/ builds what the demo builds from it: a model config and two TrainingArguments."""
    from transformers import TrainingArguments

    from hf_models.training import build_config

    setting = demo.read_setting(name)
    assert set(setting) <= {"num_people", "tokenizer_vocab_size", "config_overrides", "pretrain", "finetune"}
    assert build_config("cs224n-mingpt", setting["config_overrides"]).num_hidden_layers == 2
    for step in ("pretrain", "finetune"):
        TrainingArguments(output_dir="o", use_cpu=True, **setting[step])
    assert ("num_people" in setting) == (name != "real")  # the real data has its own people
