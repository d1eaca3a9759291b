"""Each `Trainer` recipe end to end on tiny data with a tiny model: it runs, its loss falls, and it
writes its model, report and plots."""

from __future__ import annotations

import json
import random
from pathlib import Path

import plot_sentiment  # benchmarks/plot_sentiment.py (tests/conftest.py puts benchmarks/ on the path)
import pytest
import torch
from tiny import RECIPE as COMMON
from tiny import TINY, run_birthplace, run_pretraining, run_sentiment

from hf_models.metrics import read_scored_examples

pytestmark = pytest.mark.slow


def read_report(output_dir: Path, name: str = "report.json") -> dict:
    return json.loads((output_dir / name).read_text(encoding="utf-8"))


def logged_losses(output_dir: Path) -> list[float]:
    state = json.loads((output_dir / "trainer_state.json").read_text(encoding="utf-8"))
    return [entry["loss"] for entry in state["log_history"] if "loss" in entry]


def assert_loss_falls(output_dir: Path) -> None:
    # Mean of the first and last three logged losses: single batches are noisy.
    losses = logged_losses(output_dir)
    assert len(losses) >= 4, losses
    head, tail = losses[:3], losses[-3:]
    assert sum(tail) / len(tail) < sum(head) / len(head), f"loss did not fall: {losses}"


def read_results(output_dir: Path) -> dict:
    """The run's numbers: `all_results.json`, as Trainer's `save_metrics` writes it."""
    return read_report(output_dir, "all_results.json")


def assert_run_outputs(output_dir: Path, plots: tuple[str, ...] = ("loss.png",), loss_falls: bool = True) -> dict:
    """The run folder's files, one per purpose, and the run's numbers (returned: `all_results.json`)."""
    from hf_models.run_record import read_record

    for name in ("config.json", "model.safetensors", "tokenizer.json", "report.json", "README.md", *plots):
        assert (output_dir / name).is_file(), f"{name} missing in {output_dir}"
    record = read_record(output_dir)
    assert record.hardware["world_size"] == 1
    assert record.hardware["mixed_precision"] == "no"
    assert record.wall_time_s > 0
    results = assert_results_files(output_dir)
    if loss_falls:
        assert_loss_falls(output_dir)
        # The one training loss called final is the last logged, which the run's falling loss sets apart from
        # Trainer's mean over the run (under Trainer's name).
        assert results["final_train_loss"] == logged_losses(output_dir)[-1]
        assert results["train_loss"] > results["final_train_loss"]
        assert f"**Final training loss:** {results['final_train_loss']:.4g}." in (output_dir / "README.md").read_text()
    return results


def assert_results_files(output_dir: Path) -> dict:
    """One file per purpose: Trainer's `trainer_state.json` (the log) and `all_results.json` (the numbers of the
    training and of the evaluation, when the run evaluated, at the end or during training only); `report.json` the
    arguments alone; `run_record.json` none of what Trainer's files say. No `train_results.json`, `eval_results.json`
    (the same numbers again)."""
    state = read_report(output_dir, "trainer_state.json")
    results = read_results(output_dir)
    assert {"train_runtime", "train_samples", "epoch"} <= set(results)
    assert not (output_dir / "train_results.json").exists() and not (output_dir / "eval_results.json").exists()
    evaluated = any("eval_loss" in entry for entry in state["log_history"])
    assert evaluated == ("eval_loss" in results)
    report = read_report(output_dir)
    assert "TrainingArguments" in report["arguments"]
    assert not set(results) & set(report) and "world_size" not in report and "wall_time_s" not in report
    record = read_report(output_dir, "run_record.json")
    assert not set(record["train_metrics"]) & set(results), record["train_metrics"]
    for evaluation in record["evaluations"]:
        if (evaluation["split"], evaluation["baseline"]) == ("validation", None):
            assert not {f"eval_{name}" for name in evaluation["metrics"]} & set(results), evaluation
    assert "steps" not in record["trained"] and "epochs" not in record["trained"]  # trainer_state.json says them
    return results


# --------------------------------------------------------------------------------------------------
# pretrain.py
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("objective", "extra"),
    [
        ("clm", []),
        ("span_corruption", ["--attention_type", "synthesizer"]),
        ("mlm", ["--mlm_probability", "0.3"]),
    ],
)
def test_pretrain_objectives(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, objective, extra):
    out = tmp_path / objective
    metrics = run_pretraining(
        ["--objective", objective, "--train_files", str(synthetic_birthplace_dir / "wiki.txt")]
        + ["--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--config_overrides", TINY, "--block_size", "32"]
        + ["--output_dir", str(out), "--max_steps", "16", "--per_device_train_batch_size", "16"]
        + ["--learning_rate", "5e-3"]
        + extra
        + COMMON
    )
    report = assert_run_outputs(out)
    assert json.loads((out / "run_record.json").read_text())["objective"] == objective
    assert report["eval_loss"] == pytest.approx(metrics["eval_loss"])
    assert report["perplexity"] == pytest.approx(2.718281828 ** report["eval_loss"], rel=1e-6)

    config = json.loads((out / "config.json").read_text())
    assert config["is_causal"] == (objective != "mlm")
    if objective == "span_corruption":
        assert config["attention_type"] == "synthesizer"
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    import hf_models.small_encoder  # noqa: F401  (registers the Auto classes)

    auto = AutoModelForMaskedLM if objective == "mlm" else AutoModelForCausalLM
    model = auto.from_pretrained(out)
    assert model.config.vocab_size == 600
    assert model.config.use_cache is True  # Trainer turns it off for training; the saved config has it back


def test_pretrain_from_json_file_and_gz(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    """All the arguments in one JSON file; the corpus read from a .gz file."""
    import gzip

    corpus = tmp_path / "wiki.txt.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as f:
        f.write((synthetic_birthplace_dir / "wiki.txt").read_text(encoding="utf-8"))
    out = tmp_path / "run"
    args = {
        "objective": "clm",
        "train_files": [str(corpus)],
        "tokenizer_name_or_path": str(tiny_tokenizer_dir),
        "model_config": "cs224n-mingpt",
        "config_overrides": TINY,
        "block_size": 32,
        "output_dir": str(out),
        "max_steps": 12,
        "per_device_train_batch_size": 16,
        "learning_rate": 5e-3,
        "use_cpu": True,
        "report_to": "none",
        "save_strategy": "no",
        "disable_tqdm": True,
        "logging_steps": 2,
    }
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps(args))
    run_pretraining([str(args_file)])
    assert_run_outputs(out)
    report = read_report(out)
    assert report["arguments"]["DataTrainingArguments"]["train_files"] == [str(corpus)]
    assert json.loads((out / "config.json").read_text())["norm_first"] is True  # the cs224n-mingpt preset


def test_pretrain_refuses_a_split_too_short_for_one_block(tmp_path, tiny_tokenizer_dir):
    """A validation split shorter than one block is named before training, not a KeyError after it."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"une phrase numéro {i} du corpus\n" for i in range(40)), encoding="utf-8")
    base = [
        "--train_files",
        str(corpus),
        "--tokenizer_name_or_path",
        str(tiny_tokenizer_dir),
        "--model_config",
        "cs224n-mingpt",
        "--config_overrides",
        TINY,
        "--max_steps",
        "2",
        *COMMON,
    ]
    with pytest.raises(ValueError, match=rf"the validation split of {corpus} holds no block of 64 tokens"):
        run_pretraining([*base, "--block_size", "64", "--output_dir", str(tmp_path / "short")])
    assert not (tmp_path / "short" / "model.safetensors").exists()
    run_pretraining(
        [*base, "--block_size", "4", "--output_dir", str(tmp_path / "fits")]
    )  # the same text, smaller blocks
    assert "eval_loss" in read_results(tmp_path / "fits")


# --------------------------------------------------------------------------------------------------
# finetune_sentiment.py, on a tiny CLS-books look-alike with an easy signal
# --------------------------------------------------------------------------------------------------
POSITIVE = ["excellent", "magnifique", "passionnant", "superbe", "émouvant"]
NEGATIVE = ["ennuyeux", "mauvais", "décevant", "médiocre", "lent"]
FILLER = ["le", "livre", "est", "un", "roman", "de", "la", "histoire", "auteur", "personnages", "style", "fin"]


def _spm(words: list[str]) -> str:
    # The SentencePiece look of the real files: ▁ marks a word start, pieces separated by spaces.
    return " ".join("\u2581" + w for w in words)


@pytest.fixture(scope="module")
def tiny_cls_books(tmp_path_factory, write_cls_books) -> Path:
    rng = random.Random(0)

    def review(label: int) -> str:
        words = rng.choices(FILLER, k=rng.randint(5, 15)) + rng.choices(POSITIVE if label else NEGATIVE, k=2)
        rng.shuffle(words)
        return _spm(words)

    splits = {}
    for split, n in (("train", 96), ("valid", 32), ("test", 40)):
        labels = [i % 2 for i in range(n)]
        splits[split] = ([review(y) for y in labels], labels)
    return write_cls_books(tmp_path_factory.mktemp("cls_books"), splits)


@pytest.fixture(scope="module")
def sentiment_tokenizer_dir(tmp_path_factory, tiny_cls_books) -> Path:
    from hf_models.data import detokenize_spm
    from hf_models.tokenization import train_bpe_tokenizer

    texts = [detokenize_spm(line) for line in (tiny_cls_books / "train.review.spm").read_text().splitlines()]
    out = tmp_path_factory.mktemp("sentiment_tokenizer")
    train_bpe_tokenizer(texts, vocab_size=300, output_dir=out, show_progress=False)
    return out


@pytest.fixture(scope="module")
def pretrained_lm_dir(tmp_path_factory, tiny_cls_books, sentiment_tokenizer_dir) -> Path:
    out = tmp_path_factory.mktemp("pretrained_lm")
    run_pretraining(
        ["--objective", "clm", "--train_files", str(tiny_cls_books / "train.review.spm")]
        + ["--tokenizer_name_or_path", str(sentiment_tokenizer_dir), "--config_overrides", TINY]
        + ["--block_size", "32", "--output_dir", str(out), "--max_steps", "8", "--per_device_train_batch_size", "8"]
        + COMMON
    )
    return out


def _finetune(tmp_path: Path, name: str, data_dir: Path, source: list[str], extra: list[str] = ()) -> Path:
    out = tmp_path / name
    run_sentiment(
        ["--data_dir", str(data_dir), "--output_dir", str(out), "--num_train_epochs", "4"]
        + ["--per_device_train_batch_size", "8", "--learning_rate", "1e-2", "--max_seq_length", "32"]
        + source
        + list(extra)
        + COMMON
    )
    return out


def test_finetune_sentiment_scratch_pretrained_frozen(
    tmp_path, tiny_cls_books, sentiment_tokenizer_dir, pretrained_lm_dir
):
    scratch = _finetune(
        tmp_path,
        "scratch",
        tiny_cls_books,
        ["--from_scratch", "--tokenizer_name_or_path", str(sentiment_tokenizer_dir), "--config_overrides", TINY],
        ["--causal_mask", "false"],
    )
    pretrained = _finetune(tmp_path, "pretrained", tiny_cls_books, ["--model_name_or_path", str(pretrained_lm_dir)])
    frozen = _finetune(
        tmp_path, "frozen", tiny_cls_books, ["--model_name_or_path", str(pretrained_lm_dir)], ["--freeze_backbone"]
    )

    from hf_models.run_record import read_record

    for out in (scratch, pretrained, frozen):
        # A linear head on a barely pretrained 32-dim LM learns too little to test its loss.
        assert_run_outputs(out, plots=("loss.png", "accuracy.png"), loss_falls=out != frozen)
        per_epoch = read_record(out).evaluation("validation").per_epoch
        # One entry an epoch: the final evaluation, at epoch 4 again, is not listed twice.
        assert [e["epoch"] for e in per_epoch] == [1.0, 2.0, 3.0, 4.0]
        assert all(0.0 <= e["accuracy"] <= 1.0 and 0.0 <= e["f1"] <= 1.0 for e in per_epoch)
        predictions = (out / "test_predictions.txt").read_text().splitlines()
        assert len(predictions) == 40 and set(predictions) <= {"0", "1"}
    # The easy signal is learned from scratch in 4 epochs.
    assert read_results(scratch)["eval_accuracy"] >= 0.75

    assert json.loads((scratch / "config.json").read_text())["is_causal"] is False
    assert json.loads((pretrained / "config.json").read_text())["is_causal"] is True  # kept from the LM
    # Frozen: only the classifier (hidden 32 x 2 labels + 2 biases) trains, and the backbone is unchanged.
    assert read_results(frozen)["trainable_parameters"] == 32 * 2 + 2
    from safetensors.torch import load_file

    lm, clf = load_file(pretrained_lm_dir / "model.safetensors"), load_file(frozen / "model.safetensors")
    assert all((lm[k] == clf[k]).all() for k in clf if k.startswith("model."))
    assert logged_losses(frozen)[0] != logged_losses(frozen)[-1]  # ... while the classifier trains

    figure = plot_sentiment.main(
        [
            "--runs",
            f"scratch={scratch}",
            f"pretrained={pretrained}",
            f"frozen={frozen}",
            "--output",
            str(tmp_path / "fig.png"),
        ]
    )
    assert figure.is_file() and figure.stat().st_size > 1000
    epochs, accuracies = plot_sentiment.accuracy_per_epoch(scratch)
    assert len(epochs) == 4 and len(accuracies) == 4


def test_frozen_backbone_read_at_every_layer(tmp_path, tiny_cls_books, pretrained_lm_dir):
    """--freeze_backbone --classifier_pooling all_layers: only the head trains, on the mean and max of every hidden
    state; the saved folder reloads with the same pooling and gives the run's test predictions."""
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = _finetune(
        tmp_path,
        "frozen_all_layers",
        tiny_cls_books,
        ["--model_name_or_path", str(pretrained_lm_dir)],
        ["--freeze_backbone", "--classifier_pooling", "all_layers"],
    )
    config = json.loads((out / "config.json").read_text())
    width = 2 * (config["num_hidden_layers"] + 1) * config["hidden_size"]
    assert config["classifier_pooling"] == "all_layers"
    assert read_results(out)["trainable_parameters"] == width * 2 + 2
    lm, clf = load_file(pretrained_lm_dir / "model.safetensors"), load_file(out / "model.safetensors")
    assert all(torch.equal(lm[k], clf[k]) for k in clf if k.startswith("model."))
    assert clf["classifier.weight"].shape == (2, width)

    from hf_models.data import load_cls_books

    model = AutoModelForSequenceClassification.from_pretrained(out, trust_remote_code=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)
    reviews = list(load_cls_books(tiny_cls_books)["test"]["text"])
    with torch.no_grad():
        batch = tokenizer(reviews, padding=True, truncation=True, max_length=32, return_tensors="pt")  # as trained
        reloaded = model(**batch).logits.argmax(-1).tolist()
    assert [str(label) for label in reloaded] == (out / "test_predictions.txt").read_text().splitlines()


def test_frozen_backbone_with_a_linear_probe_head_and_no_epoch(tmp_path, tiny_cls_books, pretrained_lm_dir):
    """--freeze_backbone --head_init linear_probe --num_train_epochs 0: the probe is the classifier. The backbone is
    the LM's, the saved model scores on validation what the probe scored, and reloads to the run's test labels;
    zero epochs without a probe to fit is refused before any work."""
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from hf_models.data import load_cls_books

    out = _finetune(
        tmp_path,
        "probe",
        tiny_cls_books,
        ["--model_name_or_path", str(pretrained_lm_dir)],
        [
            "--freeze_backbone",
            "--classifier_pooling",
            "all_layers",
            "--head_init",
            "linear_probe",
            "--linear_probe_folds",
            "4",
            "--num_train_epochs",
            "0",
        ],
    )
    report = read_results(out)
    assert report["train_steps"] == 0 and report["linear_probe_folds"] == 4
    assert report["eval_accuracy"] == pytest.approx(report["linear_probe_validation_accuracy"])
    assert report["eval_accuracy"] >= 0.75  # the easy signal, from a barely trained LM's every layer
    lm, clf = load_file(pretrained_lm_dir / "model.safetensors"), load_file(out / "model.safetensors")
    assert all(torch.equal(lm[k], clf[k]) for k in clf if k.startswith("model."))
    model = AutoModelForSequenceClassification.from_pretrained(out, trust_remote_code=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)
    reviews = list(load_cls_books(tiny_cls_books)["test"]["text"])
    with torch.no_grad():
        batch = tokenizer(reviews, padding=True, truncation=True, max_length=32, return_tensors="pt")
        reloaded = model(**batch).logits.argmax(-1).tolist()
    assert [str(label) for label in reloaded] == (out / "test_predictions.txt").read_text().splitlines()

    with pytest.raises(ValueError, match="--num_train_epochs 0 trains nothing"):
        _finetune(
            tmp_path,
            "no_probe",
            tiny_cls_books,
            ["--model_name_or_path", str(pretrained_lm_dir)],
            ["--freeze_backbone", "--num_train_epochs", "0"],
        )


def test_lp_ft_keeps_its_probe_as_the_frozen_probe_run(tmp_path, tiny_cls_books, pretrained_lm_dir):
    """--save_linear_probe: an LP-FT run keeps its probe, before finetuning, in OUTPUT_DIR/linear_probe, and that
    folder holds what a --freeze_backbone --num_train_epochs 0 run of the same seed scores and predicts (the
    benchmark's frozen probe row comes from it); the flag is refused without a probe to keep."""
    from hf_models.data import load_cls_books
    from hf_models.run_record import read_record

    probe_args = ["--classifier_pooling", "all_layers", "--head_init", "linear_probe", "--linear_probe_folds", "4"]
    source = ["--model_name_or_path", str(pretrained_lm_dir)]
    alone = _finetune(
        tmp_path, "probe", tiny_cls_books, source, [*probe_args, "--freeze_backbone", "--num_train_epochs", "0"]
    )
    lp_ft = _finetune(
        tmp_path, "lp_ft", tiny_cls_books, source, [*probe_args, "--save_linear_probe", "--num_train_epochs", "1"]
    )
    kept = read_record(lp_ft / "linear_probe")
    scores = kept.evaluation("validation").metrics
    assert scores["accuracy"] == pytest.approx(read_results(alone)["eval_accuracy"])
    assert scores["f1"] == pytest.approx(read_results(alone)["eval_f1"])
    assert kept.accuracy_per_epoch() == ([0.0], [scores["accuracy"]])
    assert kept.hyperparameters["linear_probe_C"] == read_results(alone)["linear_probe_C"]
    predictions = (lp_ft / "linear_probe" / "test_predictions.txt").read_text()
    assert predictions == (alone / "test_predictions.txt").read_text() and predictions.count("\n") > 0
    assert read_results(lp_ft)["epoch"] == 1.0 and read_results(lp_ft)["final_train_loss"] > 0  # then finetuned
    # each run's scored validation reviews, in order, agree with its accuracy: the probe kept alone scores the
    # reviews as the zero-epoch run does, and the finetuned run's file is its last evaluation's
    probe_examples = read_scored_examples(lp_ft / "linear_probe" / "examples_validation.jsonl")
    assert probe_examples == read_scored_examples(alone / "examples_validation.jsonl")
    labels = load_cls_books(tiny_cls_books)["validation"]["label"]
    for folder, accuracy in (
        (lp_ft / "linear_probe", scores["accuracy"]),
        (lp_ft, read_results(lp_ft)["eval_accuracy"]),
    ):
        examples = read_scored_examples(folder / "examples_validation.jsonl")
        assert [e["index"] for e in examples] == list(range(len(labels)))
        assert [e["reference"] for e in examples] == labels
        assert sum(e["prediction"] == e["reference"] for e in examples) / len(labels) == pytest.approx(accuracy)

    with pytest.raises(ValueError, match="--save_linear_probe keeps the probe"):
        _finetune(tmp_path, "no_probe_kept", tiny_cls_books, source, ["--save_linear_probe"])
    assert not (tmp_path / "no_probe").exists()
    with pytest.raises(ValueError, match="--length_buckets orders the batches itself"):
        _finetune(
            tmp_path,
            "two_orders",
            tiny_cls_books,
            ["--model_name_or_path", str(pretrained_lm_dir)],
            ["--length_buckets", "--train_sampling_strategy", "group_by_length"],
        )
    assert not (tmp_path / "two_orders").exists()


def test_finetune_sentiment_transfer_flags_reach_the_model(tmp_path, tiny_cls_books, pretrained_lm_dir):
    """--classifier_pooling all_layers, --classifier_dropout and --gradual_unfreezing land in the saved config and the
    frozen layers."""
    from safetensors.torch import load_file

    out = _finetune(
        tmp_path,
        "transfer",
        tiny_cls_books,
        ["--model_name_or_path", str(pretrained_lm_dir)],
        [
            "--classifier_pooling",
            "all_layers",
            "--classifier_dropout",
            "0.2",
            "--gradual_unfreezing",
            "1",
            "--num_train_epochs",
            "3",
        ],
    )
    config = json.loads((out / "config.json").read_text())
    assert (config["classifier_pooling"], config["classifier_dropout"]) == ("all_layers", 0.2)
    lm, clf = load_file(pretrained_lm_dir / "model.safetensors"), load_file(out / "model.safetensors")
    assert clf["classifier.weight"].shape == (2, 2 * (2 + 1) * 32)  # mean and max of 3 hidden states
    # 3 epochs, one more group each after the first: the top block trained, the embeddings never thawed.
    assert torch.equal(lm["model.embed_tokens.weight"], clf["model.embed_tokens.weight"])
    assert not torch.equal(lm["model.layers.1.mlp.fc1.weight"], clf["model.layers.1.mlp.fc1.weight"])


# --------------------------------------------------------------------------------------------------
# birthplace.py: pretrain | finetune | evaluate
# --------------------------------------------------------------------------------------------------
def test_birthplace_pretrain_finetune_evaluate(tmp_path, synthetic_birthplace_dir, capsys):
    data = str(synthetic_birthplace_dir)
    pre, ft = tmp_path / "pretrain", tmp_path / "finetune"
    run_birthplace(
        ["pretrain", "--data_dir", data, "--attention_type", "vanilla", "--output_dir", str(pre)]
        + ["--tokenizer_vocab_size", "600", "--config_overrides", TINY, "--pretrain_with_qa"]
        + ["--max_steps", "16", "--per_device_train_batch_size", "32", "--learning_rate", "5e-3"]
        + COMMON
    )
    assert_run_outputs(pre)
    assert read_results(pre)["train_samples"] == 330 + 240  # wiki paragraphs + training QA pairs

    run_birthplace(
        ["finetune", "--data_dir", data, "--model_name_or_path", str(pre), "--output_dir", str(ft)]
        + ["--max_steps", "12", "--per_device_train_batch_size", "32", "--learning_rate", "3e-3"]
        + ["--eval_strategy", "steps", "--eval_steps", "6"]
        + COMMON
    )
    assert_run_outputs(ft)
    assert any("eval_loss" in e for e in json.loads((ft / "trainer_state.json").read_text())["log_history"])

    capsys.readouterr()
    metrics = run_birthplace(
        ["evaluate", "--data_dir", data, "--model_name_or_path", str(ft), "--output_dir", str(ft)]
    )
    assert f"Correct: {metrics['correct']} out of 60: " in capsys.readouterr().out
    assert len((ft / "predictions_validation.txt").read_text(encoding="utf-8").splitlines()) == 60
    assert read_report(ft, "report_evaluate_validation.json")["total"] == 60
    # each dev question's answer beside its gold place, in order, for the intervals
    examples = read_scored_examples(ft / "examples_validation.jsonl")
    predicted = (ft / "predictions_validation.txt").read_text(encoding="utf-8").splitlines()
    assert [e["prediction"] for e in examples] == predicted and [e["index"] for e in examples] == list(range(60))
    assert sum(e["prediction"].strip() == e["reference"] for e in examples) == metrics["correct"]

    run_birthplace(
        [
            "evaluate",
            "--data_dir",
            data,
            "--model_name_or_path",
            str(ft),
            "--output_dir",
            str(ft),
            "--eval_split",
            "test",
        ]
    )
    assert len((ft / "predictions_test.txt").read_text(encoding="utf-8").splitlines()) == 30
    assert "not scored" in capsys.readouterr().out


def test_birthplace_from_scratch_synthesizer_and_baselines(
    tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, capsys
):
    data = str(synthetic_birthplace_dir)
    out = tmp_path / "scratch"
    run_birthplace(
        ["finetune", "--data_dir", data, "--attention_type", "synthesizer", "--output_dir", str(out)]
        + ["--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--config_overrides", TINY]
        + ["--max_steps", "12", "--per_device_train_batch_size", "32", "--learning_rate", "5e-3"]
        + COMMON
    )
    assert_run_outputs(out)
    assert json.loads((out / "config.json").read_text())["attention_type"] == "synthesizer"
    # Greedy decoding works with the synthesizer too (no KV cache for it).
    metrics = run_birthplace(["evaluate", "--data_dir", data, "--model_name_or_path", str(out)])
    assert metrics["total"] == 60

    capsys.readouterr()
    london = run_birthplace(["evaluate", "--data_dir", data, "--london_baseline"])
    common = run_birthplace(["evaluate", "--data_dir", data, "--most_common_baseline"])
    printed = capsys.readouterr().out
    assert f"Correct: {london['correct']} out of 60: " in printed
    assert common["exact_match"] >= london["exact_match"]  # London is the synthetic task's most common place


def test_pretrain_span_corruption_is_reproducible_whatever_eval_steps(
    tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir
):
    """The eval set is corrupted once (same eval loss at every evaluation of the same model), and evaluating
    during training changes neither the corruptions nor the dropout masks the training steps draw."""

    def run(name: str, *eval_args: str) -> tuple[list[float], float]:
        metrics = run_pretraining(
            ["--objective", "span_corruption", "--train_files", str(synthetic_birthplace_dir / "wiki.txt")]
            + ["--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--config_overrides", TINY]
            + ["--block_size", "32", "--output_dir", str(tmp_path / name), "--max_steps", "6"]
            + ["--per_device_train_batch_size", "8", "--max_eval_samples", "16"]
            + COMMON
            + ["--logging_steps", "1", *eval_args]
        )
        return logged_losses(tmp_path / name), metrics["eval_loss"]

    losses, eval_loss = run("no_eval")
    assert len(losses) == 6
    assert run("eval_every_step", "--eval_strategy", "steps", "--eval_steps", "1") == (losses, eval_loss)


# --------------------------------------------------------------------------------------------------
# The `base` preset (GPT-2 small's shape) through every recipe, shrunk by --config_overrides
# --------------------------------------------------------------------------------------------------
def _base_preset_run(recipe: str, out: Path, data: dict[str, Path]) -> None:
    tiny_base = ["--model_config", "base", "--config_overrides", TINY]
    if recipe == "pretrain":
        run_pretraining(
            ["--objective", "clm", "--train_files", str(data["birthplace"] / "wiki.txt"), "--block_size", "32"]
            + ["--tokenizer_name_or_path", str(data["tokenizer"]), "--output_dir", str(out)]
            + ["--max_steps", "2", "--per_device_train_batch_size", "8"]
            + tiny_base
            + COMMON
        )
    elif recipe == "finetune_sentiment":
        run_sentiment(
            [
                "--data_dir",
                str(data["cls_books"]),
                "--from_scratch",
                "--tokenizer_name_or_path",
                str(data["sentiment"]),
            ]
            + ["--output_dir", str(out), "--max_steps", "2", "--per_device_train_batch_size", "8"]
            + ["--max_seq_length", "32"]
            + tiny_base
            + COMMON
        )
    else:
        run_birthplace(
            ["finetune", "--data_dir", str(data["birthplace"]), "--output_dir", str(out)]
            + ["--tokenizer_name_or_path", str(data["tokenizer"]), "--max_steps", "2"]
            + ["--per_device_train_batch_size", "8"]
            + tiny_base
            + COMMON
        )


@pytest.mark.parametrize("recipe", ["pretrain", "finetune_sentiment", "birthplace"])
def test_every_recipe_accepts_the_base_preset(
    tmp_path, recipe, synthetic_birthplace_dir, tiny_tokenizer_dir, tiny_cls_books, sentiment_tokenizer_dir
):
    data = {
        "birthplace": synthetic_birthplace_dir,
        "tokenizer": tiny_tokenizer_dir,
        "cls_books": tiny_cls_books,
        "sentiment": sentiment_tokenizer_dir,
    }
    out = tmp_path / recipe
    _base_preset_run(recipe, out, data)

    config = json.loads((out / "config.json").read_text())
    # The preset's architecture, with the override's size.
    assert (config["norm_first"], config["position_embedding_type"], config["hidden_act"]) == (
        True,
        "learned",
        "gelu_pytorch_tanh",
    )
    assert config["tie_word_embeddings"] is True and config["lm_head_bias"] is False
    assert (config["hidden_size"], config["num_hidden_layers"]) == (32, 2)
    assert json.loads((out / "run_record.json").read_text())["preset"] == "base"
    if recipe != "finetune_sentiment":  # the LM heads: tied, so the checkpoint holds the token table once
        from safetensors import safe_open
        from transformers import AutoModelForCausalLM

        import hf_models.small_encoder  # noqa: F401  (registers the Auto classes)

        with safe_open(out / "model.safetensors", "pt") as saved:
            assert "lm_head.weight" not in saved.keys() and "model.embed_tokens.weight" in saved.keys()
        model = AutoModelForCausalLM.from_pretrained(out)
        assert model.lm_head.weight is model.model.embed_tokens.weight
