"""Every count reported beside a score ("correct / N", examples counted) is that of the split that was scored: not
of the whole split when a part was scored, not of another split the same run evaluated earlier, not of a baseline
scored beside the model, not of the training set before a draw."""

from __future__ import annotations

import json
import types
from pathlib import Path

import probe_facts
import pytest
import report
from test_write_results import _bench, _write_results
from tiny import EVALUATE_QUIET, run_birthplace

from hf_models.run_record import Evaluation, RunRecord, build_model_card, read_record


def _london(data_dir: Path, out: Path, split: str, *extra: str) -> dict:
    argv = ["evaluate", "--data_dir", str(data_dir), "--output_dir", str(out), "--eval_split", split]
    return run_birthplace([*argv, "--london_baseline", *extra, *EVALUATE_QUIET])


def test_an_evaluation_counts_the_questions_it_scored_on_its_own_split(tmp_path, synthetic_birthplace_dir) -> None:
    data, out = synthetic_birthplace_dir, tmp_path / "scores"
    dev_size = len((data / "birth_dev.tsv").read_text(encoding="utf-8").splitlines())
    assert dev_size > 7

    whole = _london(data, out, "validation")  # every dev question first
    part = _london(data, out, "train", "--max_predict_samples", "7")  # then 7 training questions
    assert (whole["total"], part["total"]) == (dev_size, 7)
    record = read_record(out)
    assert record.evaluation("validation", "london_baseline").num_examples == dev_size
    assert record.evaluation("train", "london_baseline").num_examples == 7

    # The dev split again, 5 questions: its count is the new one (the merge keeps the other split's).
    again = _london(data, out, "validation", "--max_predict_samples", "5", "--overwrite_output_dir")
    record = read_record(out)
    assert again["total"] == 5 and again["correct"] == round(again["exact_match"] * 5)
    assert record.evaluation("validation", "london_baseline").num_examples == 5
    assert record.evaluation("train", "london_baseline").num_examples == 7


def test_the_benchmark_row_counts_the_dev_questions_not_the_tuning_splits(tmp_path, monkeypatch) -> None:
    """A birthplace row is scored on dev (500 questions here) after the tuning split (200): its `correct / total`
    and its standard error are dev's."""
    bench, results, predictions = tmp_path / "bench", tmp_path / "results.json", tmp_path / "predictions"
    _bench(bench)
    _write_results(monkeypatch, bench, results, predictions, "--tasks", "birthplace")
    rows = json.loads(results.read_text())["birthplace_dev_acc"]
    row = rows["vanilla_recite_pretrain_only"]  # 0.63 on dev, 0.60 on the tuning split
    assert (row["correct"], row["total"]) == (315, 500)
    assert row["std"] == pytest.approx((0.63 * 0.37 / 500) ** 0.5, abs=1e-4)
    text = "\n".join(report.birthplace_section("cpu", rows))
    assert "63.0 % ± 2.2 % (315/500)" in text


def test_the_cards_count_is_the_models_not_a_baselines_on_the_same_split(tmp_path) -> None:
    record = RunRecord(task="birthplace-qa", objective="qa", dataset="birthplace")
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.3}, 500))
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.05}, 50, baseline="london_baseline"))
    record.add_evaluation(Evaluation("test", {"exact_match": 0.2}, 437))
    card = build_model_card(tmp_path, {"architectures": ["SmallEncoderForCausalLM"]}, record)
    assert "Evaluation on `birthplace` (examples: validation: 500, test: 437):" in card.text


def test_each_demo_row_counts_its_own_people() -> None:
    """The demo's rows, each beside its own count (a row scored on fewer people says so)."""
    scores = {
        "with pretraining": {"correct": 26, "total": 60, "exact_match": 26 / 60},
        "without pretraining": {"correct": 5, "total": 50, "exact_match": 5 / 50},
        "most common place": {"correct": 8, "total": 60, "exact_match": 8 / 60},
    }
    demo = {"seed": 0, "wall_time_s": 250, "scores": scores, "hardware": "h", "date": "d", "command": "make demo"}
    text = "\n".join(report.demo_section(demo))
    assert "| finetuned only, no pretraining | 10.0 % (5/50) |" in text
    assert "| pretrained (span corruption), then finetuned | 43.3 % (26/60) |" in text


# --- benchmarks/probe_facts.py: how many facts, of which people, within the course's prefix -----------------------
HEAD = "Bob Stone lived in a small town"
PEOPLE = [  # (name, answer, paragraph): the answer's first occurrence decides
    ("Ann Lee", "Paris", "Ann Lee was born in Paris in 1901."),  # offset 20
    ("Bob Stone", "Rome", HEAD + "." * (111 - len(HEAD)) + " Rome, then moved."),  # offset 112: the last one in
    ("Cy Dunn", "Oslo", "Cy Dunn lived" + "." * (112 - len("Cy Dunn lived")) + " Oslo was his birthplace."),  # 113
    ("Di Moss", "Lyon", "Di Moss was a painter."),  # the answer is not in the paragraph
    ("Paris Hilton", "Paris", "Paris Hilton was born in Paris."),  # offset 0: nothing before it to complete from
    ("Ed Nye", "Nice", None),  # no paragraph
]


def _probe_data(folder: Path) -> Path:
    folder.mkdir()
    wiki = [paragraph for _, _, paragraph in PEOPLE if paragraph]
    (folder / "wiki.txt").write_text("\n".join(wiki) + "\n", encoding="utf-8")
    dev = "".join(f"Where was {name} born?\t{answer}\n" for name, answer, _ in PEOPLE)
    (folder / "birth_dev.tsv").write_text(dev, encoding="utf-8")
    (folder / "birth_places_train.tsv").write_text("Where was Al Roe born?\tBern\n", encoding="utf-8")
    (folder / "birth_test_inputs.tsv").write_text("Where was Al Roe born?\n", encoding="utf-8")
    return folder


def test_the_fact_probe_counts_its_prompts_and_the_course_prefix_both_ways(tmp_path, monkeypatch) -> None:
    data, model_dir = _probe_data(tmp_path / "data"), tmp_path / "model"
    model_dir.mkdir()
    prompts = probe_facts.fact_prompts(str(data))
    assert [(answer, offset) for _, answer, offset, _ in prompts] == [("Paris", 20), ("Rome", 112), ("Oslo", 113)]

    recited = {}

    class FakeRecitation:
        def __init__(self, recite_tokens: int):
            recited["tokens"] = recite_tokens

        def recite(self, model, tokenizer, questions, batch_size):
            return [["Ann Lee, of Paris"] if "Ann" in q else ["nothing"] for q in questions]

    class FakeModel:
        config = types.SimpleNamespace(max_position_embeddings=64)  # a block longer than the 17-token recitation

        def eval(self):
            return self

    class FakeTokenizer:
        def decode(self, ids, skip_special_tokens=True):
            return " ".join(ids)

    def complete(model, tokenizer, texts):  # Ann's and Cy's facts completed, Bob's not
        return [" Paris" if t.startswith("Ann") else " Oslo" if t.startswith("Cy") else " Milan" for t in texts]

    monkeypatch.setattr(probe_facts, "load_pretrained", lambda *args, **kwargs: FakeModel())
    monkeypatch.setattr(probe_facts, "load_tokenizer", lambda *args: FakeTokenizer())
    monkeypatch.setattr(probe_facts, "complete", complete)
    monkeypatch.setattr(probe_facts, "RecitingQAFormat", FakeRecitation)
    probe_facts.main(["--data_dir", str(data), "--model_name_or_path", str(model_dir), "--recite_tokens", "17"])

    result = json.loads((model_dir / "fact_probe.json").read_text())
    assert recited["tokens"] == 17 and result["recite_tokens"] == 17  # the flag reaches the recitation
    assert result == {
        "facts_in_paragraph": 3,
        "completed": 2,
        "facts_in_first_112_chars": 2,  # Ann's (20) and Bob's (112), not Cy's (113)
        "completed_in_first_112_chars": 1,
        "recite_tokens": 17,
        "recalled_from_name": 1,
    }
