"""Which score is reported when one folder holds both a model's evaluation and a baseline's (London, most common):
the run record, the model card and `benchmarks/write_results.py` report the model's, on each split, in whatever
order the evaluations were written. A baseline is never reported as the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tiny import run_birthplace

from hf_models import SmallEncoderForCausalLM
from hf_models.run_record import RunRecord, build_model_card, read_record
from hf_models.training import build_config

TINY = "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=64"
QUIET = ["--use_cpu", "--log_level", "warning"]  # the Trainer flags that evaluate takes


def evaluate(data_dir: Path, out: Path, split: str, *source: str) -> dict:
    return run_birthplace(
        [
            "evaluate",
            "--data_dir",
            str(data_dir),
            "--output_dir",
            str(out),
            "--eval_split",
            split,
            "--max_new_tokens",
            "3",
            *source,
            *QUIET,
        ]
    )


@pytest.fixture(scope="module")
def scored_folder(tmp_path_factory, synthetic_birthplace_dir, tiny_tokenizer):
    """A model's folder evaluated by the model and by the two baselines, on two splits, baseline first on one
    split and last on the other."""
    out = tmp_path_factory.mktemp("scored_model")
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(build_config("cs224n-mingpt", TINY, tiny_tokenizer, is_causal=True))
    model.save_pretrained(out)
    tiny_tokenizer.save_pretrained(out)
    # How it answers (directly), as its training would have recorded it.
    RunRecord(task="birthplace-qa", objective="qa", hyperparameters={"recite_tokens": 0}).save(out)
    data = synthetic_birthplace_dir
    scores = {}
    for split, order in (("validation", ("london", "model", "common")), ("train", ("model", "london", "common"))):
        for who in order:
            flags = {"london": ["--london_baseline"], "common": ["--most_common_baseline"]}.get(
                who, ["--model_name_or_path", str(out)]
            )
            scores[split, who] = evaluate(data, out, split, *flags)["exact_match"]
    return out, scores


def test_scores_are_told_apart(scored_folder):
    _, scores = scored_folder
    for split in ("validation", "train"):
        # The test means something only if the model's score differs from both baselines'.
        assert scores[split, "model"] not in (scores[split, "london"], scores[split, "common"]), scores


@pytest.mark.parametrize("split", ["validation", "train"])
def test_run_record_reports_the_models_evaluation(scored_folder, split):
    out, scores = scored_folder
    record = read_record(out)
    scored = record.scored(split)
    assert scored.baseline is None and scored.metrics["exact_match"] == scores[split, "model"]
    assert record.evaluation(split, "london_baseline").metrics["exact_match"] == scores[split, "london"]
    assert record.evaluation(split, "most_common_baseline").metrics["exact_match"] == scores[split, "common"]
    assert record.evaluation(split).metrics["exact_match"] == scores[split, "model"]


def test_model_card_reports_the_model_and_labels_each_baseline(scored_folder):
    out, scores = scored_folder
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    record = read_record(out)
    record.hub_datasets = ["someone/birthplace"]  # the model-index names a Hub data set only
    card = build_model_card(out, config, record, repo_id="me/model")
    index = {(r.dataset_split, r.metric_type): r.metric_value for r in card.data.eval_results}
    assert index == {(split, "exact_match"): scores[split, "model"] for split in ("validation", "train")}
    results = card.text.split("## Results")[1].split("##")[0]
    for split in ("validation", "train"):
        assert f"| exact_match | {split} | {scores[split, 'model']:.4g} |" in results
        for baseline, key in (("london_baseline", "london"), ("most_common_baseline", "common")):
            line = next(
                line
                for line in results.splitlines()
                if line.startswith(f"| {baseline}_exact_match") and f"| {split} |" in line
            )
            assert "(baseline, not this model)" in line and line.endswith(f"| {scores[split, key]:.4g} |")
    model_lines = [line for line in results.splitlines() if line.startswith("| exact_match |")]
    assert len(model_lines) == 2 and not any("baseline" in line for line in model_lines)


def test_one_evaluation_per_epoch_the_last_one(tmp_path):
    """A run's final evaluation logs at the epoch where training stopped, which an evaluation during training already
    has: the record's per-epoch curve (the one every report and plot reads) keeps one entry an epoch, the last (the
    model the run kept)."""
    from hf_models.run_record import RESULTS_FILE, STATE_FILE, RunRecord, one_per_epoch

    history = [
        {"epoch": 0.3, "eval_loss": 0.6, "eval_accuracy": 0.5, "eval_f1": 0.4, "step": 3},
        {"epoch": 0.3, "loss": 0.7, "step": 3},
        {"epoch": 0.3, "eval_loss": 0.5, "eval_accuracy": 0.75, "eval_f1": 0.7, "step": 3},  # the final evaluation
    ]
    record = RunRecord(task="sentiment", objective="classification")
    (tmp_path / RESULTS_FILE).write_text(json.dumps({"eval_loss": 0.5, "eval_accuracy": 0.75, "eval_f1": 0.7}))
    (tmp_path / STATE_FILE).write_text(json.dumps({"log_history": history}))
    record._join(tmp_path)
    assert record.evaluation().per_epoch == [{"epoch": 0.3, "loss": 0.5, "accuracy": 0.75, "f1": 0.7}]
    entries = [{"epoch": 1.0, "accuracy": 0.6}, {"epoch": 2.0, "accuracy": 0.7}, {"epoch": 2.0, "accuracy": 0.65}]
    assert one_per_epoch(entries) == [{"epoch": 1.0, "accuracy": 0.6}, {"epoch": 2.0, "accuracy": 0.65}]
