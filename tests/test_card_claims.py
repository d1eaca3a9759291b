"""Every claim of a model card, checked against the files of the run it describes.

Two real, tiny runs: a sentiment classifier on a label budget of 24 reviews, stopped by `--max_steps` in its
second epoch, and a French language model on 16-token blocks; each is exported as `push_to_hub.py --dry_run` does.
With the real data beside the checkout, both use the lab's ids (the classifier through `--lab_raw_text`, the LM
through `--lab_vocabulary`, with no `--language`), else the tiny BPE and `--language fr`. Each number of the card is
read back from a run file (`trainer_state.json`, `all_results.json`, `tokenizer.json`), never
from the arguments: steps, epochs, examples seen, training time, final loss, data set, tokenizer, trained length,
language and the results; and no exported file names a local path."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest
from huggingface_hub import ModelCard
from tiny import QUIET, TINY_ONE_LAYER, run_pretraining, run_sentiment

from hf_models.hub import CardOptions, export_folder

TINY = TINY_ONE_LAYER  # 64 positions: more than either run trains on
LOGGED = [*QUIET, "--logging_steps", "1"]  # a loss logged each step: the last differs from the mean
LAB_FILES = ("dict.txt", "sentencepiece.french.model")
BUDGET, STEPS, BATCH, ACCUMULATION, REVIEW_TOKENS, BLOCK = 24, 3, 8, 2, 12, 16
FRENCH = "Le livre raconte une histoire de famille dans un village de montagne.\n" * 40


def _lab_files() -> Path | None:
    folder = Path(__file__).resolve().parents[2] / "shared" / "data" / "cls-books"
    return folder if all((folder / name).is_file() for name in LAB_FILES) else None


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, write_toy_cls_books, tiny_tokenizer_dir: Path) -> dict:
    """The two runs, started from their root folder with relative paths (as a user types them), and their exports."""
    root = tmp_path_factory.mktemp("card_claims")
    books = write_toy_cls_books(root / "data" / "books")
    (root / "data" / "corpus.txt").write_text(FRENCH, encoding="utf-8")
    lab = _lab_files()
    for name in LAB_FILES if lab else ():
        shutil.copyfile(lab / name, books / name)
    classifier_tokens = ["--lab_raw_text"] if lab else ["--tokenizer_name_or_path", str(tiny_tokenizer_dir)]
    lm_tokens = ["--lab_vocabulary", "data/books"] if lab else ["--tokenizer_name_or_path", str(tiny_tokenizer_dir)]
    start = os.getcwd()
    os.chdir(root)
    try:
        run_sentiment(
            ["--data_dir", "data/books", "--from_scratch", *classifier_tokens, "--output_dir", "runs/sentiment"]
            + ["--label_budget", str(BUDGET), "--max_steps", str(STEPS), "--per_device_train_batch_size", str(BATCH)]
            + ["--gradient_accumulation_steps", str(ACCUMULATION), "--max_seq_length", str(REVIEW_TOKENS)]
            + ["--config_overrides", TINY, "--max_eval_samples", "8", "--max_predict_samples", "4", *LOGGED]
        )
        run_pretraining(
            ["--objective", "clm", "--train_files", "data/corpus.txt", *lm_tokens, "--output_dir", "runs/lm"]
            + ["--block_size", str(BLOCK), "--max_steps", str(STEPS), "--per_device_train_batch_size", "4"]
            + ["--config_overrides", TINY, "--validation_split_percentage", "10", *LOGGED]
            + ([] if lab else ["--language", "fr"])
        )
        for name in ("sentiment", "lm"):
            export_folder(f"runs/{name}", f"exports/{name}", CardOptions(repo_id=f"me/{name}"))
    finally:
        os.chdir(start)
    return {"root": root, "books": books, "lab": lab is not None}


def _run(exported: dict, name: str) -> tuple[Path, ModelCard, dict]:
    run = exported["root"] / "runs" / name
    card = ModelCard.load(exported["root"] / "exports" / name / "README.md")
    files = {
        stem: json.loads((run / f"{stem}.json").read_text(encoding="utf-8"))
        for stem in ("trainer_state", "all_results", "run_record")
    }
    return run, card, files


def _claim(card: ModelCard, pattern: str) -> re.Match:
    found = re.search(pattern, card.text)
    assert found, f"the card makes no claim matching {pattern!r}:\n{card.text}"
    return found


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _examples_drawn(n_train: int, batch: int, accumulation: int, steps: int) -> int:
    """The examples the Trainer loop feeds in `steps` optimizer steps: each epoch is cut into DataLoader batches,
    `accumulation` of them a step, the epoch's last step taking what is left."""
    batches = [min(batch, n_train - start) for start in range(0, n_train, batch)]
    epoch_steps = [sum(batches[i : i + accumulation]) for i in range(0, len(batches), accumulation)]
    return sum(epoch_steps[i % len(epoch_steps)] for i in range(steps))


def test_steps_epochs_and_examples_are_what_ran(exported: dict) -> None:
    """The issue's run: `--label_budget 24 --max_steps 3` is 3 steps, 5 of 3 batches an epoch, 40 reviews drawn, 24
    of them distinct; never `num_train_epochs` (4 by default) nor the 48 reviews of the training file."""
    _, card, files = _run(exported, "sentiment")
    state, results = files["trainer_state"], files["all_results"]
    claim = _claim(
        card,
        r"\*\*Trained for:\*\* ([\d,]+) optimizer steps \(([\d.]+) epochs?\), ([\d,]+) examples seen "
        r"\(([\d,]+) distinct of the ([\d,]+) training examples\)",
    )
    steps, epochs, seen, distinct, n_train = (_number(g) for g in claim.groups())
    assert steps == state["global_step"] == STEPS
    assert claim.group(2) == f"{state['epoch']:.4g}" and 1 < epochs < 2
    assert n_train == results["train_samples"] == BUDGET
    assert seen == _examples_drawn(BUDGET, state["train_batch_size"], ACCUMULATION, state["global_step"]) == 40
    assert distinct == min(seen, n_train) == BUDGET
    hyperparameters = card.text.split("Hyperparameters:")[1].split("##")[0]
    assert "| num_train_epochs |" not in hyperparameters  # --max_steps ran, not the epochs
    assert f"| max_steps | {STEPS} |" in hyperparameters and f"| label_budget | {BUDGET} |" in hyperparameters


def test_training_time_is_train_runtime_and_final_loss_the_last_logged(exported: dict) -> None:
    for name in ("sentiment", "lm"):
        _, card, files = _run(exported, name)
        runtime = files["all_results"]["train_runtime"]
        seconds = _number(_claim(card, r"\*\*Training time:\*\* ([\d.]+) s \(Trainer's `train_runtime`").group(1))
        assert seconds == round(runtime), (seconds, runtime, files["run_record"]["wall_time_s"])
        losses = [entry["loss"] for entry in files["trainer_state"]["log_history"] if "loss" in entry]
        assert len(losses) == STEPS and losses[-1] != files["all_results"]["train_loss"]  # the test can tell
        final = _claim(card, r"\*\*Final training loss:\*\* ([\d.]+)\.").group(1)
        assert final == f"{losses[-1]:.4g}"


def test_a_local_data_set_is_described_never_given_as_a_hub_id(exported: dict) -> None:
    for name, dataset in (("sentiment", "cls-books"), ("lm", "corpus.txt")):
        _, card, files = _run(exported, name)
        assert files["run_record"]["dataset"] == dataset and files["run_record"]["hub_datasets"] == []
        assert card.data.datasets is None and card.data.eval_results is None  # no `datasets:`, no model-index
        metadata = str(card).split("---")[1]
        assert "datasets:" not in metadata and "model-index" not in metadata and dataset not in metadata
        assert f"**Training data:** `{dataset}`, a local data set" in card.text
    _, card, _ = _run(exported, "sentiment")
    evaluation = json.loads((exported["root"] / "runs" / "sentiment" / "all_results.json").read_text())
    for metric in ("accuracy", "f1", "loss"):
        assert f"| {metric} | validation | {evaluation[f'eval_{metric}']:.4g} |" in card.text


def test_no_exported_file_names_a_local_path(exported: dict) -> None:
    root = exported["root"]
    local = [str(root), str(Path.home()), "data/books", "data/corpus.txt", "runs/", "../"]
    for name in ("sentiment", "lm"):
        for path in sorted((root / "exports" / name).iterdir()):
            if path.suffix in (".json", ".md", ".py"):
                text = path.read_text(encoding="utf-8")
                assert not [word for word in local if word in text], path


def test_the_tokenizer_claim_is_the_tokenizer_the_run_used(exported: dict) -> None:
    """The lab's ids reached through `--lab_raw_text` (a `lab_vocabulary` flag left False) or `--lab_vocabulary`
    are the lab's ids on the card, as the saved tokenizer.json says, and no tokenizer flag contradicts it."""
    for name in ("sentiment", "lm"):
        run, card, files = _run(exported, name)
        tokenizer = json.loads((run / "tokenizer.json").read_text(encoding="utf-8"))
        first_ids = {token["id"]: token["content"] for token in tokenizer["added_tokens"]}
        lab = [first_ids.get(i) for i in range(4)] == ["<s>", "<pad>", "</s>", "<unk>"]
        assert lab == exported["lab"]
        claim = _claim(card, r"\*\*Tokenizer:\*\* ([^\n]+)").group(1)
        if lab:
            assert "lab's ids over raw text" in claim, claim  # a Metaspace over raw text, not the .spm pieces
            assert tokenizer["pre_tokenizer"]["type"] == "Metaspace"
        else:
            assert "byte-level BPE" in claim and tokenizer["pre_tokenizer"]["type"] == "ByteLevel"
        assert "lab_vocabulary" not in card.text and "lab_raw_text" not in card.text
        assert "lab_vocabulary" not in files["run_record"]["hyperparameters"]


def test_the_input_length_is_the_trained_one(exported: dict) -> None:
    for name, trained in (("sentiment", REVIEW_TOKENS), ("lm", BLOCK)):
        run, card, files = _run(exported, name)
        positions = json.loads((run / "config.json").read_text(encoding="utf-8"))["max_position_embeddings"]
        assert positions > trained and files["run_record"]["max_length"] == trained
        assert _number(_claim(card, r"\*\*Input length:\*\* trained on at most ([\d,]+) tokens").group(1)) == trained
        limit = _claim(card, r"in inputs of at most ([\d,]+) tokens").group(1)
        assert _number(limit) == trained and f"longer than {positions}" not in card.text


def test_the_usage_example_is_in_the_models_language(exported: dict) -> None:
    """A French LM is prompted in French (with the lab's ids, its language comes from its tokenizer); a French
    classifier is shown a French review."""
    for name, example in (("sentiment", "Un livre passionnant"), ("lm", "Il était une fois")):
        _, card, files = _run(exported, name)
        assert files["run_record"]["language"] == "fr" and card.data.language == "fr"
        usage = card.text.split("## How to use")[1].split("## Limitations")[0]
        assert example in usage and "'The'" not in usage and "Once upon a time" not in usage
        assert "It only saw French text" in card.text


def test_an_epoch_count_is_exact_for_a_short_last_batch() -> None:
    """The test's own count of the examples drawn: 24 reviews in batches of 8, two a step: 16 then 8 per epoch."""
    assert [_examples_drawn(24, 8, 2, steps) for steps in range(1, 5)] == [16, 24, 40, 48]
    assert _examples_drawn(5, 2, 1, 3) == 5 and _examples_drawn(5, 2, 1, 4) == 7
    assert math.ceil(24 / 16) == 2


def test_each_file_says_what_no_other_does(exported: dict) -> None:
    """One record per purpose: Trainer's `trainer_state.json` (steps, epochs, the log) and `all_results.json` (the
    numbers), `report.json` the arguments alone, `run_record.json` only what neither of Trainer's files says; the
    record read back (`read_record`) joins them, so that the card and the export still have every claim."""
    from hf_models.run_record import read_record

    for name in ("sentiment", "lm"):
        run, card, files = _run(exported, name)
        own, results, state = files["run_record"], files["all_results"], files["trainer_state"]
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        assert not [name for name in ("train_results.json", "eval_results.json") if (run / name).exists()]
        assert {"ModelArguments", "TrainingArguments"} <= set(report["arguments"])
        assert not set(report) & {*results, "trained", "world_size", "mixed_precision", "wall_time_s"}, report
        assert not set(own["train_metrics"]) & set(results) and not set(own["trained"]) & {"steps", "epochs"}
        validation = [e for e in own["evaluations"] if (e["split"], e["baseline"]) == ("validation", None)]
        assert all(not e["metrics"] and not e["per_epoch"] for e in validation), validation
        joined = read_record(run)
        assert joined.train_metrics["train_runtime"] == results["train_runtime"]
        assert joined.trained["steps"] == state["global_step"] and joined.trained["examples_seen"] > 0
        assert joined.evaluation("validation").metrics["loss"] == results["eval_loss"]
        exported_record = json.loads((exported["root"] / "exports" / name / "run_record.json").read_text())
        assert exported_record["train_metrics"]["train_runtime"] == results["train_runtime"]  # the Hub copy: whole
