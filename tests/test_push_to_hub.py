"""push_to_hub.py on the folders real, tiny recipe runs write: a birthplace model (pretrained, finetuned, scored,
with the London baseline), a sentiment classifier and a masked LM are exported with --dry_run, then loaded through
trust_remote_code in a fresh process where `hf_models` cannot be imported; the card (built from each run's record),
the public run record (no local path; a reciting birthplace model's export answers in the app and in `evaluate`
exactly as its run folder does), the allowlist, the upload calls and the offline errors are checked too."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from fnmatch import fnmatch
from pathlib import Path

import pytest
import torch
from huggingface_hub import ModelCard
from tiny import QUIET, TINY, run_birthplace, run_pretraining, run_sentiment

import hf_models
from hf_models import hub
from hf_models.environment import OFFLINE_ENVIRONMENT
from hf_models.hub.publish import EXPORT_MARKER
from hf_models.run_record import PIPELINE_TAGS, read_record
from hf_models.small_encoder import AUTO_MAP, HEADS, SmallEncoderPreTrainedModel, modeling_small_encoder

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "push_to_hub.py"
_spec = importlib.util.spec_from_file_location("push_to_hub", SCRIPT)
push_to_hub = importlib.util.module_from_spec(_spec)
sys.modules["push_to_hub"] = push_to_hub
_spec.loader.exec_module(push_to_hub)
# Things a run folder may hold that must never reach the Hub.
PLANTED = [
    ".env",
    "train.log",
    "birth_places_train.tsv",
    "wiki.txt.gz",
    "checkpoint-2/model.safetensors",
    "checkpoint-2/optimizer.pt",
    "checkpoint-2/.env",
    "checkpoint-2/loss.png",
    "runs/events.out.tfevents.1",
    "runs/curve.png",
]
SECRET = "hf_THIS_TOKEN_MUST_NOT_LEAK"


def _plant(run_dir: Path) -> None:
    for rel in PLANTED:
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"HF_TOKEN={SECRET}\n" if ".env" in rel else "not for the Hub\n")
    (run_dir / "plots").mkdir()
    (run_dir / "plots" / "accuracy.png").write_bytes(b"\x89PNG\r\n\x1a\n a plot in a sub-folder")


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
    synthetic_birthplace_dir: Path,
    tiny_tokenizer_dir: Path,
    write_alternating_cls_books,
) -> dict:
    """Real recipe runs (a few steps each), their reference logits and their dry-run exports."""
    from hf_models import SmallEncoderForCausalLM, SmallEncoderForSequenceClassification
    from hf_models.tokenization import load_tokenizer

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("push")
    data, tok = str(synthetic_birthplace_dir), str(tiny_tokenizer_dir)
    steps = ["--max_steps", "4", "--per_device_train_batch_size", "16", "--learning_rate", "5e-3", *QUIET]
    pre, lm_dir, cls_dir, mlm_dir = (
        root / "pretrain-wiki",
        root / "birthplace-finetune",
        root / "cls-books",
        root / "mlm",
    )
    model = ["--tokenizer_name_or_path", tok, "--config_overrides", TINY]
    run_birthplace(["pretrain", "--data_dir", data, "--output_dir", str(pre), *model, *steps])
    run_birthplace(
        ["finetune", "--data_dir", data, "--model_name_or_path", str(pre), "--output_dir", str(lm_dir)]
        + ["--eval_strategy", "steps", "--eval_steps", "4", *steps]
    )
    evaluate = ["evaluate", "--data_dir", data, "--output_dir", str(lm_dir), "--max_new_tokens", "4"]
    scores = run_birthplace([*evaluate, "--model_name_or_path", str(lm_dir)])
    london = run_birthplace([*evaluate, "--london_baseline"])
    books = write_alternating_cls_books(root, (32, 16, 8))
    run_sentiment(["--data_dir", str(books), "--from_scratch", "--output_dir", str(cls_dir), *model, *steps])
    run_pretraining(
        ["--objective", "mlm", "--train_files", f"{data}/wiki.txt", "--block_size", "32"]
        + ["--output_dir", str(mlm_dir), *model, *steps]
    )
    for run_dir in (lm_dir, cls_dir):
        _plant(run_dir)

    probe = {
        "input_ids": torch.tensor([[7, 8, 9, 10], [11, 12, 13, 0]]),
        "attention_mask": torch.tensor([[1] * 4, [1, 1, 1, 0]]),
    }
    lm = SmallEncoderForCausalLM.from_pretrained(lm_dir).eval()
    with torch.no_grad():
        reference = {
            **probe,
            "lm": lm(**probe).logits,
            "generated": lm.generate(**probe, max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0),
            "cls": SmallEncoderForSequenceClassification.from_pretrained(cls_dir).eval()(**probe).logits,
            "tokenized": load_tokenizer(pre)("Where was Ada born? ⁇")["input_ids"],
        }
    torch.save(reference, root / "reference.pt")
    exports = {}
    for name, run_dir in (("lm", lm_dir), ("cls", cls_dir)):
        exports[name] = root / f"export-{name}"
        assert push_to_hub.main([str(run_dir), "--dry_run", "--local_dir", str(exports[name])]) == 0
    return {
        "root": root,
        "scores": scores,
        "london": london,
        "pre_dir": pre,
        "lm_dir": lm_dir,
        "cls_dir": cls_dir,
        "mlm_dir": mlm_dir,
        "lm_out": exports["lm"],
        "cls_out": exports["cls"],
    }


@pytest.fixture(scope="module")
def reciting(runs: dict, synthetic_birthplace_dir: Path) -> dict[str, Path]:
    """A birthplace model that recites, then answers with a span of its recitation (`--recite_tokens 4
    --answer_from_recitation`), finetuned from the pretraining of `runs`, scored by `evaluate` and exported."""

    root, data = runs["root"], str(synthetic_birthplace_dir)
    run_dir, export = root / "birthplace-recite", root / "export-recite"
    run_birthplace(
        ["finetune", "--data_dir", data, "--model_name_or_path", str(runs["pre_dir"]), "--output_dir", str(run_dir)]
        + ["--recite_tokens", "4", "--answer_from_recitation", "--max_steps", "4", "--learning_rate", "5e-3", *QUIET]
    )
    run_birthplace(
        [*RECITING_EVALUATE, "--data_dir", data, "--model_name_or_path", str(run_dir), "--output_dir", str(run_dir)]
    )
    assert push_to_hub.main([str(run_dir), "--dry_run", "--local_dir", str(export)]) == 0
    return {"run_dir": run_dir, "export": export}


# `evaluate` of the reciting model: its run folder's (in the fixture) and its export's (in the test), alike.
RECITING_EVALUATE = ["evaluate", "--max_new_tokens", "4", "--per_device_eval_batch_size", "8", "--use_cpu"]


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_head_list_names_every_head_of_the_modeling_file() -> None:
    heads = {
        obj
        for obj in vars(modeling_small_encoder).values()
        if isinstance(obj, type)
        and issubclass(obj, SmallEncoderPreTrainedModel)
        and obj is not SmallEncoderPreTrainedModel
    }
    assert set(HEADS.values()) == heads and len(heads) == 4
    assert {head.__name__ for head in heads} <= set(hf_models.__all__)  # exported from the one list
    assert set(AUTO_MAP) == {"AutoConfig", *HEADS}
    assert set(PIPELINE_TAGS) == set(HEADS)  # a pipeline tag and an Auto class on the card for every head


def test_every_recipe_saves_its_remote_code_and_a_full_auto_map(runs: dict[str, Path]) -> None:
    code_dir = REPO_ROOT / "hf_models" / "small_encoder"
    for name in ("pre_dir", "lm_dir", "cls_dir", "mlm_dir"):
        run_dir = runs[name]
        assert json.loads((run_dir / "config.json").read_text())["auto_map"] == AUTO_MAP
        for code in ("configuration_small_encoder.py", "modeling_small_encoder.py"):
            assert (run_dir / code).read_bytes() == (code_dir / code).read_bytes()
        assert read_record(run_dir) is not None


def test_records_hold_what_the_recipes_knew(runs: dict[str, Path]) -> None:
    import dataclasses
    import math

    from hf_models.run_record import RunRecord

    pre, lm, cls, mlm = (read_record(runs[name]) for name in ("pre_dir", "lm_dir", "cls_dir", "mlm_dir"))
    assert (pre.task, pre.objective, pre.dataset, pre.language) == (
        "birthplace-pretraining",
        "span_corruption",
        "birthplace",
        "en",
    )
    assert pre.split_sizes == {"train": 330} and pre.preset == "cs224n-mingpt" and pre.finetuned_from is None
    assert (lm.task, lm.objective, lm.finetuned_from, lm.preset) == (
        "birthplace-qa",
        "qa",
        "pretrain-wiki",
        "cs224n-mingpt",
    )
    assert lm.split_sizes == {"train": 240, "validation": 60}
    # The evaluate step's exact match, and the London baseline's kept apart (same folder, same split).
    assert lm.evaluation("validation").metrics["exact_match"] == runs["scores"]["exact_match"]
    london = lm.evaluation("validation", baseline="london_baseline")
    assert london.metrics == {"exact_match": runs["london"]["exact_match"]} and london.num_examples == 60
    assert (cls.task, cls.dataset, cls.language, cls.split_sizes) == (
        "sentiment",
        "cls-books",
        "fr",
        {"train": 32, "validation": 16, "test": 8},
    )
    assert cls.model_size["trainable_parameters"] == cls.model_size["num_parameters"] > 0
    # One entry an epoch (the final evaluation, at epoch 2 again, is not listed twice), and the number of examples
    # scored, which Trainer does not count: the validation split's size.
    assert [entry["epoch"] for entry in cls.evaluation("validation").per_epoch] == [1.0, 2.0]
    assert "accuracy" in cls.evaluation("validation").per_epoch[0]
    assert cls.evaluation("validation").num_examples == 16
    assert (mlm.task, mlm.objective, mlm.dataset, mlm.language) == ("pretraining", "mlm", "wiki.txt", None)
    validation = mlm.evaluation("validation").metrics
    assert validation["perplexity"] == pytest.approx(math.exp(validation["loss"]), rel=1e-6)
    assert {"train_loss", "unigram_entropy", "plateau"} <= set(mlm.train_metrics)  # the plateau of the mean loss
    assert "final_train_loss" not in mlm.train_metrics  # 4 steps, none logged: no loss to call final
    for record in (pre, lm, cls, mlm):
        assert record.hardware == {"world_size": 1, "mixed_precision": "no", "device": "cpu"}
        assert record.wall_time_s > 0 and record.hyperparameters["seed"] == 42
        assert all(evaluation.num_examples for evaluation in record.evaluations)  # no null where a count is known
        assert RunRecord.from_dict(dataclasses.asdict(record)) == record
        assert str(runs["root"]) not in json.dumps(dataclasses.asdict(record))  # no local paths


def test_dry_run_writes_allowlisted_folder(runs: dict[str, Path]) -> None:
    for name in ("lm", "cls"):
        out = runs[f"{name}_out"]
        files = _files(out)
        expected = {
            "README.md",
            "run_record.json",
            "config.json",
            "model.safetensors",
            "configuration_small_encoder.py",
            "modeling_small_encoder.py",
            "tokenizer.json",
            "tokenizer_config.json",
            "loss.png",
            "plots/accuracy.png",
        }
        expected |= {"generation_config.json"} if name == "lm" else {"accuracy.png"}
        # The export's own marker (what `--overwrite` may delete) stays local: the upload's patterns leave it out.
        assert files == expected | {EXPORT_MARKER}
        assert all(any(fnmatch(f, p) for p in hub.ALLOW_PATTERNS) for f in expected)
        assert not any(fnmatch(EXPORT_MARKER, p) for p in hub.ALLOW_PATTERNS)
        config = json.loads((out / "config.json").read_text())
        assert config["use_cache"] is True
        assert config["auto_map"] == AUTO_MAP
        # Weights, tokenizer and code are the run's own bytes.
        run_dir = runs[f"{name}_dir"]
        for rel in ("model.safetensors", "tokenizer.json", "modeling_small_encoder.py"):
            assert (out / rel).read_bytes() == (run_dir / rel).read_bytes()
        assert SECRET not in "".join((out / f).read_text(errors="ignore") for f in files)
        # The record, in its public form: the card's source, and how the model answers.
        assert read_record(out) == read_record(run_dir).public()
        assert str(runs["root"]) not in (out / "run_record.json").read_text(encoding="utf-8")


def test_allowlist_leaves_out_planted_files(runs: dict[str, Path]) -> None:
    collected = {p.as_posix() for p in hub.collect_files(runs["lm_dir"])}
    assert not collected & set(PLANTED)
    assert not any(f.startswith(("checkpoint-", "runs/")) or f.endswith((".pt", ".env", ".bin")) for f in collected)
    assert {"model.safetensors", "config.json", "tokenizer.json", "loss.png", "plots/accuracy.png"} <= collected
    # Nothing is copied as it is but the model's files: the reports and the trainer state hold local paths and
    # arguments, and stay out; the record is exported in its public form (`RunRecord.public()`), never copied.
    reports = {"trainer_state.json", "report.json", "report_evaluate_validation.json"}
    assert not collected & {"run_record.json", *reports}
    exported = _files(runs["lm_out"])
    assert "run_record.json" in exported and not exported & reports


def test_a_public_record_holds_no_local_path_and_keeps_how_the_model_answers(tmp_path: Path) -> None:
    import dataclasses

    from hf_models.run_record import Evaluation, RunRecord

    home = Path.home()
    answering = {"recite_tokens": 5, "answer_words": 3, "capitalized_answers": True}
    record = RunRecord(
        task="birthplace-qa",
        objective="qa",
        dataset=f"{tmp_path}/wiki.txt, birthplace, owner/books",
        finetuned_from=str(tmp_path / "runs" / "pretrain"),
        evaluated_model="~/runs/finetune",
        train_metrics={"final_train_loss": 1.5, "log_file": "train.log"},
        evaluations=[Evaluation("validation", {"exact_match": 0.5}, 60)],
        hyperparameters={
            **answering,
            "learning_rate": 1e-3,
            "augment": "name_first",
            "data_dir": "data",  # names a folder: never published, relative or not
            "tokenizer_name_or_path": "tok",
            "cache": str(home / ".cache"),
            "windows_corpus": "C:\\Users\\me\\wiki.txt",
            "corpora": [str(tmp_path / "a.txt")],
            "init": "/models/base",
            "lab_corpus": "../shared/data/cls-books",  # a relative path, under a name that does not say so
            "model_config": "configs/altegrad/lm.json",
        },
        hardware={"world_size": 1, "mixed_precision": "no", "device": "cpu"},
    )
    public = record.public()
    text = json.dumps(dataclasses.asdict(public))
    for local in (str(tmp_path), str(home), "~", "C:\\", '"/'):
        assert local not in text, local
    assert public.hyperparameters == {**answering, "learning_rate": 1e-3, "augment": "name_first"}
    assert (public.finetuned_from, public.evaluated_model) == ("pretrain", "finetune")
    assert public.dataset == "wiki.txt, birthplace, owner/books"  # a Hub id stays one
    assert public.train_metrics == {"final_train_loss": 1.5} and public.evaluations == record.evaluations
    assert public.hardware == record.hardware and public.public() == public
    assert record.finetuned_from == str(tmp_path / "runs" / "pretrain")  # the run's own record is left as it was
    hub_model = RunRecord(
        task="birthplace-qa", objective="qa", finetuned_from="owner/base", evaluated_model="C:\\x\\m"
    )
    assert (hub_model.public().finetuned_from, hub_model.public().evaluated_model) == ("owner/base", "m")


def test_a_hub_copy_of_a_reciting_model_answers_as_its_run(
    reciting: dict[str, Path], synthetic_birthplace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The export holds the public record, so that the app and `evaluate` answer from it exactly as from the run
    folder: recite 4 tokens, then choose the answer among the recitation's spans."""
    from hf_models import app
    from hf_models.data import load_birthplace
    from hf_models.tasks import birthplace_qa

    run_dir, export = reciting["run_dir"], reciting["export"]
    answers = birthplace_qa.answer_format_of(run_dir)
    assert answers["recite_tokens"] == 4 and answers["answer_words"] > 0
    assert birthplace_qa.answer_format_of(export) == answers
    # From the Hub: `answer_format_of` downloads the repository's record (here, the export stands in for it).
    monkeypatch.setattr(birthplace_qa, "hf_hub_download", lambda repo_id, filename, **kwargs: str(export / filename))
    assert birthplace_qa.answer_format_of("tester/tiny-recite") == answers
    monkeypatch.undo()

    # The app, on the export and on the run folder.
    original, shared = app.load_model(str(run_dir), "model"), app.load_model(str(export), "model")
    assert shared.view == original.view == "birthplace"
    questions = list(load_birthplace(str(synthetic_birthplace_dir))["validation"]["question"][:4])
    for question in [*questions, "Where was Nobody Known born?"]:
        assert app.answer_birthplace([shared], question) == app.answer_birthplace([original], question)

    # `evaluate` on the export writes the predictions it wrote on the run folder.
    scored = tmp_path / "scored"
    data = ["--data_dir", str(synthetic_birthplace_dir)]
    run_birthplace([*RECITING_EVALUATE, *data, "--model_name_or_path", str(export), "--output_dir", str(scored)])
    predictions = (scored / "predictions_validation.txt").read_text(encoding="utf-8")
    assert predictions == (run_dir / "predictions_validation.txt").read_text(encoding="utf-8")
    assert len(predictions.splitlines()) == 60 and any(line.strip() for line in predictions.splitlines())


def test_dry_run_refuses_a_non_empty_local_dir(runs: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert push_to_hub.main([str(runs["lm_dir"]), "--dry_run", "--local_dir", str(runs["lm_out"])]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "--overwrite" in err


def test_birthplace_model_card(runs: dict[str, Path]) -> None:
    record = read_record(runs["lm_dir"])
    card = ModelCard.load(runs["lm_out"] / "README.md")
    data = card.data
    assert (data.library_name, data.pipeline_tag, data.language, data.license) == (
        "transformers",
        "text-generation",
        "en",
        "apache-2.0",
    )
    assert data.datasets is None and data.eval_results is None  # a local data set: described in the text only
    assert {"small-encoder", "custom_code", "cs224n-mingpt", "birthplace", "birthplace-qa"} <= set(data.tags)
    # The finetuning's dev loss and the evaluate step's exact match; never the London baseline's.
    validation = record.evaluation("validation")
    assert set(validation.metrics) == {"loss", "exact_match"} and validation.num_examples == 60
    for name, value in validation.metrics.items():
        assert f"| {name} | validation | {value:.4g} |" in card.text
    london = record.evaluation("validation", baseline="london_baseline").metrics["exact_match"]
    text = card.text
    assert f"| london_baseline_exact_match (baseline, not this model) | validation | {london:.4g} |" in text
    assert "Evaluation on `birthplace` (examples: validation: 60):" in text
    assert "answers every question confidently, whether it retrieved the fact or made it up" in text
    assert 'AutoModelForCausalLM.from_pretrained("your-username/birthplace-finetune", trust_remote_code=True)' in text
    assert 'pipeline("text-generation"' in text
    # The set-up, from the record: the training's hyperparameters, not the evaluate step's.
    assert "| learning_rate | 0.005 |" in text and "| block_size | 64 |" in text and "| max_steps | 4 |" in text
    assert "| per_device_eval_batch_size |" not in text and "| max_new_tokens |" not in text
    assert "| pretraining_objective |" not in text and "| london_baseline |" not in text
    assert "Hardware:** 1 training process, CPU, mixed precision `no`." in text
    runtime = record.train_metrics["train_runtime"]
    assert f"Training time:** {runtime:.0f} s (Trainer's `train_runtime`; the whole run took " in text
    assert "Initialised from:** `pretrain-wiki`." in text
    shape = (
        "num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64"
    )
    assert f"Preset:** `cs224n-mingpt` with overrides {shape}." in text
    assert f"built from the preset `cs224n-mingpt` with overrides {shape} of the `small-encoder` family" in text
    assert "final_train_loss" not in record.train_metrics  # too few steps to log one: the mean, named so
    assert f"Mean training loss:** {record.train_metrics['train_loss']:.4g} (Trainer's `train_loss`" in text
    assert f"{record.model_size['num_parameters']:,} parameters" in text
    assert "![loss](loss.png)" in text
    # No secrets and no local paths in a public card.
    assert SECRET not in str(card) and str(runs["root"]) not in str(card)


def test_sentiment_model_card(runs: dict[str, Path]) -> None:
    record = read_record(runs["cls_dir"])
    card = ModelCard.load(runs["cls_out"] / "README.md")
    assert card.data.pipeline_tag == "text-classification"
    assert card.data.language == "fr" and card.data.datasets is None and card.data.eval_results is None
    metrics = record.evaluation("validation").metrics
    assert set(metrics) == {"loss", "accuracy", "f1"}
    assert 'pipeline("text-classification"' in card.text
    assert "AutoModelForSequenceClassification" in card.text and "`negative`" in card.text
    assert (
        "Training data:** `cls-books`, a local data set: the ALTeGraD lab's copy of the CLS-FR book reviews"
        in card.text
    )
    assert "not on the Hub (train 32, validation 16, test 8 examples)." in card.text
    assert "Initialised from:** random weights" in card.text
    overrides = "num_hidden_layers=2, hidden_size=32, intermediate_size=64, max_position_embeddings=64"  # 2 heads kept
    assert f"Preset:** `altegrad-lab` with overrides {overrides}." in card.text
    assert "made it up" not in card.text
    assert str(runs["root"]) not in str(card)


def _before_provenance(card: str) -> str:
    """A card but its last section, which says who wrote it (the recipe, or push_to_hub.py's export)."""
    return card.split("## Provenance")[0]


def _card(tmp_path: Path, record, options=None, **config) -> ModelCard:
    """The card of a causal LM of the `cs224n-mingpt` preset (its shape unless `config` overrides it)."""
    from hf_models import SmallEncoderConfig
    from hf_models.run_record import SIZE_FIELDS

    preset = SmallEncoderConfig.from_preset("cs224n-mingpt").to_dict()
    shape = {key: preset[key] for key in SIZE_FIELDS}
    exported = {**shape, "architectures": ["SmallEncoderForCausalLM"], **config}
    return hub.build_model_card(tmp_path, exported, record, **(options or {"repo_id": "me/lm"}))


def test_card_metadata_lists_hub_datasets_only(tmp_path: Path) -> None:
    """`datasets:` and the model-index name the record's Hub data sets, never a local name (`cls-books`, a file):
    a local data set is described in the text, and a model-index without a Hub data set is left out."""
    from hf_models.run_record import Evaluation, RunRecord

    scores = [Evaluation("validation", {"accuracy": 0.75}, 16)]
    for dataset in ("small.txt", "cls-books"):
        card = _card(tmp_path, RunRecord(task="pretraining", objective="clm", dataset=dataset, evaluations=scores))
        metadata = str(card).split("---")[1]
        assert card.data.datasets is None and card.data.eval_results is None and dataset not in metadata
        assert f"Training data:** `{dataset}`, a local data set" in card.text
        assert "| accuracy | validation | 0.75 |" in card.text
    record = RunRecord(
        task="pretraining", objective="clm", dataset="owner/corpus", hub_datasets=["owner/corpus"], evaluations=scores
    )
    card = _card(tmp_path, record)
    assert card.data.datasets == ["owner/corpus"] and "Training data:** `owner/corpus`, on the Hub." in card.text
    assert [(r.dataset_type, r.metric_value) for r in card.data.eval_results] == [("owner/corpus", 0.75)]
    assert RunRecord(task="t", objective="clm", hub_datasets=["owner/corpus", "../data"]).public().hub_datasets == [
        "owner/corpus"
    ]


def test_a_card_over_the_labs_pieces_says_its_input_is_pieces(tmp_path: Path) -> None:
    """A model whose tokenizer reads the lab's pieces (`--lab_vocabulary`) turns raw text mostly into `<unk>`: its
    card says what to give it; a model over raw text (the lab's raw ids, a BPE) is not told so."""
    from hf_models.run_record import RunRecord

    said = {
        tokenizer: "Its tokenizer reads text already cut into the ALTeGraD lab's SentencePiece pieces"
        in _card(tmp_path, RunRecord(task="t", objective="clm", tokenizer=tokenizer)).text
        for tokenizer in ("altegrad-lab", "altegrad-lab-raw", "bpe")
    }
    assert said == {"altegrad-lab": True, "altegrad-lab-raw": False, "bpe": False}


def test_card_lists_the_hyperparameters_of_the_runs_objective(tmp_path: Path) -> None:
    from hf_models.run_record import RunRecord

    recorded = {"learning_rate": 0.001, "block_size": 32, "mlm_probability": 0.15, "opening_tokens": 40}
    clm = _card(tmp_path, RunRecord(task="pretraining", objective="clm", hyperparameters=recorded)).text
    assert "| learning_rate | 0.001 |" in clm and "| block_size | 32 |" in clm
    assert "| mlm_probability |" not in clm and "| opening_tokens |" not in clm
    mlm = _card(tmp_path, RunRecord(task="pretraining", objective="mlm", hyperparameters=recorded)).text
    assert "| mlm_probability | 0.15 |" in mlm and "| opening_tokens |" not in mlm
    openings = _card(
        tmp_path, RunRecord(task="birthplace-pretraining", objective="openings", hyperparameters=recorded)
    )
    assert "| opening_tokens | 40 |" in openings.text and "| mlm_probability |" not in openings.text


def test_card_reports_the_last_logged_training_loss(tmp_path: Path) -> None:
    """The card's final training loss is the last logged (`final_train_loss`), never Trainer's mean over the run
    (`train_loss`, which a falling loss keeps above it); a run of a few steps logs once, where the two are equal."""
    from hf_models.run_record import RunRecord

    losses = {"train_loss": 2.5, "final_train_loss": 1.25}
    text = _card(tmp_path, RunRecord(task="pretraining", objective="clm", train_metrics=losses)).text
    assert "Final training loss:** 1.25." in text and "Final training loss:** 2.5" not in text
    # No step logged (fewer steps than --logging_steps): the mean is said to be the mean, never called final.
    unlogged = {"train_loss": 2.5, "final_train_loss": None}
    text = _card(tmp_path, RunRecord(task="pretraining", objective="clm", train_metrics=unlogged)).text
    assert "Mean training loss:** 2.5 (Trainer's `train_loss`; no loss was logged)." in text
    assert "Final training loss" not in text


def test_the_run_folders_card_says_the_recipe_wrote_it_and_the_exports_card_push_to_hub(tmp_path: Path) -> None:
    """The README.md a recipe writes into its run folder (no export yet) says so; the export's says push_to_hub.py
    exported it."""
    from hf_models.run_record import RunRecord

    record = RunRecord(task="pretraining", objective="clm")
    written = _card(tmp_path, record).text
    exported = _card(tmp_path, record, options={"exported": True}).text
    assert "by the recipe that trained it" in written and "Exported from" not in written
    assert "Exported from the run folder" in exported and "by the recipe that trained it" not in exported


def test_card_names_the_preset_and_its_overrides(tmp_path: Path) -> None:
    from hf_models.run_record import RunRecord

    record = RunRecord(task="pretraining", objective="clm", preset="cs224n-mingpt")
    assert "Preset:** `cs224n-mingpt`." in _card(tmp_path, record).text  # the preset's own shape
    overridden = _card(tmp_path, record, hidden_size=64, num_hidden_layers=2, vocab_size=600).text
    assert "Preset:** `cs224n-mingpt` with overrides num_hidden_layers=2, hidden_size=64." in overridden
    assert "built from the preset `cs224n-mingpt` with overrides num_hidden_layers=2, hidden_size=64 of" in overridden
    custom = _card(tmp_path, RunRecord(task="pretraining", objective="clm")).text
    assert "Preset:** none (custom configuration)." in custom and "built from a custom configuration" in custom


def test_the_scripts_help_says_the_cards_default_license_and_name(capsys: pytest.CaptureFixture) -> None:
    """push_to_hub.py -h answers without importing hf_models.hub (test_help): what it says of the card's default
    license and of its own name is checked against the card's."""
    with pytest.raises(SystemExit):
        push_to_hub.parse_args(["-h"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default: the card's own, {hub.DEFAULT_LICENSE})" in help_text
    assert push_to_hub.PROG == hub.PROG and help_text.startswith(f"usage: {hub.PROG} ")
    assert hub.CardOptions().license == hub.DEFAULT_LICENSE  # what --license left out gives


def test_card_options_override_the_record(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "export"
    argv = [str(runs["cls_dir"]), "--dry_run", "--local_dir", str(out), "--language", "en", "--license", "mit"]
    assert push_to_hub.main([*argv, "--birthplace", "--repo_id", "me/cls"]) == 0
    card = ModelCard.load(out / "README.md")
    assert (card.data.language, card.data.license, card.data.model_name) == ("en", "mit", "cls")
    assert "made it up" in card.text


def test_absolute_import_of_the_package_is_refused(tmp_path: Path) -> None:
    """A modeling file that imports `hf_models` would save fine but fail on every other machine."""
    (tmp_path / "configuration_small_encoder.py").write_text("class SmallEncoderConfig: ...\n")
    (tmp_path / "modeling_small_encoder.py").write_text(
        "from hf_models.small_encoder.configuration_small_encoder import SmallEncoderConfig\n"
    )
    with pytest.raises(hub.PushError, match="absolute import"):
        hub.code_files(tmp_path)


FRESH_PROCESS = """
import sys
sys.modules["hf_models"] = None  # the export must load with transformers and torch only
try:
    import hf_models  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("hf_models is still importable")
import torch
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, pipeline

lm_out, cls_out, ref_path, pretrain_dir, mlm_dir = sys.argv[1:6]
ref = torch.load(ref_path)
inputs = {"input_ids": ref["input_ids"], "attention_mask": ref["attention_mask"]}

lm = AutoModelForCausalLM.from_pretrained(lm_out, trust_remote_code=True)
assert type(lm).__module__.startswith("transformers_modules."), type(lm).__module__
assert lm.config.use_cache is True
with torch.no_grad():
    torch.testing.assert_close(lm(**inputs).logits, ref["lm"])
generator = pipeline("text-generation", model=lm_out, trust_remote_code=True)
generated = generator("Where was Ada", max_new_tokens=4, do_sample=False)[0]["generated_text"]
assert isinstance(generated, str) and generated.startswith("Where was Ada")
# Greedy decoding through the remote code's KV cache gives the tokens the trained model gave in-process.
tokens = lm.generate(**inputs, max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0)
assert tokens.tolist() == ref["generated"].tolist(), (tokens, ref["generated"])

cls = AutoModelForSequenceClassification.from_pretrained(cls_out, trust_remote_code=True)
with torch.no_grad():
    torch.testing.assert_close(cls(**inputs).logits, ref["cls"])
classifier = pipeline("text-classification", model=cls_out, trust_remote_code=True)
results = classifier(["Un livre passionnant.", "Un roman ennuyeux."])
assert all(r["label"] in {"negative", "positive"} for r in results), results
# The run folders themselves load too, whatever recipe wrote them.
from transformers import AutoModelForMaskedLM
assert type(AutoModelForCausalLM.from_pretrained(pretrain_dir, trust_remote_code=True)).__name__ == "SmallEncoderForCausalLM"
assert type(AutoModelForMaskedLM.from_pretrained(mlm_dir, trust_remote_code=True)).__name__ == "SmallEncoderForMaskedLM"
# The tokenizer is a standard transformers class (no tokenizer code runs) and encodes as the run did; AutoTokenizer
# takes trust_remote_code too, since it reads config.json, whose auto_map names the shipped model code.
from transformers import AutoTokenizer
for folder in (pretrain_dir, lm_out):
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
    assert type(tokenizer).__module__.startswith("transformers."), type(tokenizer)
    assert tokenizer("Where was Ada born? ⁇")["input_ids"] == ref["tokenized"]
    # The tokenizer alone needs no flag (it never reads config.json), as the card and the README say.
    from transformers import PreTrainedTokenizerFast
    assert PreTrainedTokenizerFast.from_pretrained(folder)("Where was Ada born? ⁇")["input_ids"] == ref["tokenized"]
print("FRESH-OK", repr(generated), [r["label"] for r in results])
"""


def test_export_loads_with_remote_code_in_fresh_process(runs: dict[str, Path]) -> None:
    env = {
        **os.environ,
        **OFFLINE_ENVIRONMENT,
        "HF_HOME": str(runs["root"] / "hf_home"),  # remote-code module cache outside the user's home
    }
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FRESH_PROCESS), str(runs["lm_out"]), str(runs["cls_out"])]
        + [str(runs["root"] / "reference.pt"), str(runs["pre_dir"]), str(runs["mlm_dir"])],
        cwd=runs["root"],  # not the repository, so nothing is importable from the working directory
        env=env,
        stdin=subprocess.DEVNULL,  # a [y/N] prompt for remote code would read end-of-file here, and is checked below
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FRESH-OK" in proc.stdout
    assert "[y/N]" not in proc.stdout + proc.stderr


def test_loading_one_head_from_anothers_folder_prints_no_load_report(runs: dict[str, Path]) -> None:
    """The backbone or a new classifier from a language model's folder, the backbone from a classifier's: the other
    head's weights left out and the new head started fresh are the transfer workflow, not a load report. A real gap
    (a causal LM from a classifier's folder, with no trained output layer) is still reported."""
    import io
    import logging

    import transformers
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSequenceClassification

    transformers.utils.logging.set_verbosity_warning()
    logged = io.StringIO()
    handler = logging.StreamHandler(logged)
    transformers.utils.logging.get_logger("transformers").addHandler(handler)
    try:
        AutoModel.from_pretrained(runs["pre_dir"])
        AutoModelForSequenceClassification.from_pretrained(runs["pre_dir"])
        AutoModelForSequenceClassification.from_pretrained(runs["mlm_dir"])
        AutoModel.from_pretrained(runs["cls_dir"])
        assert "LOAD REPORT" not in logged.getvalue(), logged.getvalue()
        AutoModelForCausalLM.from_pretrained(runs["cls_dir"])
        assert "LOAD REPORT" in logged.getvalue() and "lm_head.weight" in logged.getvalue()
    finally:
        transformers.utils.logging.get_logger("transformers").removeHandler(handler)


class RecordingHfApi:
    """Stands in for `HfApi`: records the calls and what the staged folder holds when `upload_folder` runs."""

    calls: list[tuple[str, dict]] = []

    def __init__(self, token: str | None = None, **kwargs) -> None:
        self.calls.append(("__init__", {"token": token, **kwargs}))

    def whoami(self, **kwargs) -> dict:
        self.calls.append(("whoami", kwargs))
        return {"name": "tester"}

    def create_repo(self, **kwargs) -> str:
        self.calls.append(("create_repo", kwargs))
        return f"https://huggingface.co/{kwargs['repo_id']}"

    def create_branch(self, **kwargs) -> None:
        self.calls.append(("create_branch", kwargs))

    def upload_folder(self, **kwargs) -> object:
        folder = Path(kwargs["folder_path"])
        kwargs["_staged"] = {f: (folder / f).read_bytes() for f in _files(folder)}
        self.calls.append(("upload_folder", kwargs))
        return type("CommitInfo", (), {"commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"})()


def test_upload_calls_hfapi_with_repo_folder_and_allowlist(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    RecordingHfApi.calls = []
    monkeypatch.setattr(hub.publish, "HfApi", RecordingHfApi)
    monkeypatch.setattr(hub.publish, "get_token", lambda: "hf_fake_token")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    argv = [str(runs["lm_dir"]), "--repo_id", "tester/tiny-birthplace", "--private", "--revision", "dev"]
    assert push_to_hub.main([*argv, "--commit_message", "first upload"]) == 0
    assert "tester/tiny-birthplace" in capsys.readouterr().out

    names = [name for name, _ in RecordingHfApi.calls]
    assert names == ["__init__", "whoami", "create_repo", "create_branch", "upload_folder"]
    calls = dict(RecordingHfApi.calls)
    assert calls["__init__"]["token"] == "hf_fake_token"
    assert calls["create_repo"] == {
        "repo_id": "tester/tiny-birthplace",
        "repo_type": "model",
        "private": True,
        "exist_ok": True,
    }
    assert calls["create_branch"]["branch"] == "dev"
    upload = calls["upload_folder"]
    assert upload["repo_id"] == "tester/tiny-birthplace" and upload["revision"] == "dev"
    assert upload["commit_message"] == "first upload"
    assert upload["allow_patterns"] == hub.ALLOW_PATTERNS
    # The staged folder is the dry-run folder: same files, same bytes (the card differs only by the repo id).
    staged, dry = upload["_staged"], runs["lm_out"]
    assert set(staged) == _files(dry)
    for rel, content in staged.items():
        if rel != "README.md":
            assert content == (dry / rel).read_bytes(), rel
    assert "tester/tiny-birthplace" in staged["README.md"].decode()
    assert not Path(upload["folder_path"]).exists()  # the staging folder is cleaned up


def test_invalid_repo_id_is_one_line(runs: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert push_to_hub.main([str(runs["lm_dir"]), "--repo_id", "a/b/c"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: invalid --repo_id")


@pytest.mark.parametrize(
    ("env", "expected", "status"),
    [
        ({"HF_HUB_OFFLINE": "1", "HF_TOKEN": "hf_fake"}, "HF_HUB_OFFLINE", 2),
        ({"HF_HUB_OFFLINE": "0"}, "no Hugging Face token found", 2),
        ({"HF_HUB_OFFLINE": "0", "HF_TOKEN": "hf_fake", "HF_ENDPOINT": "http://127.0.0.1:9"}, "cannot reach", 1),
    ],
    ids=["offline", "no-token", "no-network"],
)
def test_offline_or_no_token_is_one_line(runs: dict[str, Path], env: dict, expected: str, status: int) -> None:
    """The user's to fix (offline mode, no token): status 2, as every command line; the network's: status 1."""
    base = {k: v for k, v in os.environ.items() if k not in {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"}}
    base["HF_HOME"] = str(runs["root"] / "empty_hf_home")  # no stored token
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(runs["lm_dir"]), "--repo_id", "tester/tiny"],
        env={**base, **env},
        capture_output=True,
        text=True,
        # The script imports hf_models (torch, transformers): seconds on an idle machine, much more on two busy cores.
        timeout=240,
    )
    assert proc.returncode == status
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and expected in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


# ----------------------------------------------------------------------------------------------------------------
# A run folder is Hub-ready: its own README.md card, and the recipes' --push_to_hub
# ----------------------------------------------------------------------------------------------------------------
def test_the_run_folders_card_is_the_exports_and_follows_the_evaluation(
    runs: dict[str, Path], tmp_path: Path, synthetic_birthplace_dir: Path
) -> None:
    """Every recipe writes the card `push_to_hub.py` exports into its run folder; `evaluate` into a model's folder
    rewrites it with the scores, and a folder that holds no model (a baseline's) gets no card."""
    for name in ("pre_dir", "mlm_dir"):  # nothing planted beside these: the export's card is the same file...
        export = hub.export_folder(runs[name], tmp_path / name)
        written, exported = (runs[name] / "README.md").read_text(encoding="utf-8"), str(export.card)
        assert _before_provenance(written) == _before_provenance(exported)
        # ... but for who wrote it: the recipe (before any export), or push_to_hub.py
        assert "by the recipe that trained it" in written and "Exported from" in exported
    card = ModelCard.load(runs["lm_dir"] / "README.md")
    assert f"| exact_match | validation | {runs['scores']['exact_match']:.4g} |" in card.text
    assert "| london_baseline_exact_match (baseline, not this model) | validation |" in card.text

    london = tmp_path / "london"
    run_birthplace(
        ["evaluate", "--data_dir", str(synthetic_birthplace_dir), "--output_dir", str(london)]
        + ["--london_baseline", "--use_cpu"]
    )
    assert (london / "run_record.json").is_file() and not (london / "README.md").exists()


def _sentiment_run(books: Path, tokenizer: Path, out: Path, *extra: str) -> list[str]:
    return [
        *("--data_dir", str(books), "--from_scratch", "--tokenizer_name_or_path", str(tokenizer)),
        *("--output_dir", str(out), "--config_overrides", TINY, "--max_steps", "1", *QUIET, *extra),
    ]


def test_push_to_hub_offline_is_one_line_before_training(
    tmp_path: Path,
    tiny_tokenizer_dir: Path,
    write_alternating_cls_books,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    from hf_models.safety import command_line

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    books, out = write_alternating_cls_books(tmp_path / "books", (8, 4, 2)), tmp_path / "run"
    assert command_line(run_sentiment, _sentiment_run(books, tiny_tokenizer_dir, out, "--push_to_hub")) == 2
    err = capsys.readouterr().err
    (error,) = err.strip().splitlines()  # refused before the data is read: no progress bar, no warning
    assert error.startswith("error: --push_to_hub: offline mode is on (HF_HUB_OFFLINE=1)")
    assert not (out / "model.safetensors").exists()  # refused before training


def test_push_to_hub_shares_the_export_with_our_card(
    tmp_path: Path, tiny_tokenizer_dir: Path, write_alternating_cls_books, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recipe's `--push_to_hub` uploads what `push_to_hub.py` would (the allowlist, the public record, our card
    for the token's user), never Trainer's own push of the whole folder with its card."""

    RecordingHfApi.calls = []
    monkeypatch.setattr(hub.publish, "HfApi", RecordingHfApi)
    monkeypatch.setattr(hub.publish, "get_token", lambda: "hf_fake_token")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    books, out = write_alternating_cls_books(tmp_path / "books", (8, 4, 2)), tmp_path / "tiny-sentiment"
    run_sentiment(_sentiment_run(books, tiny_tokenizer_dir, out, "--push_to_hub"))
    calls = dict(RecordingHfApi.calls)
    assert calls["create_repo"]["repo_id"] == calls["upload_folder"]["repo_id"] == "tester/tiny-sentiment"
    assert calls["upload_folder"]["allow_patterns"] == hub.ALLOW_PATTERNS
    staged = calls["upload_folder"]["_staged"]
    run_card = (out / "README.md").read_text(encoding="utf-8")
    shared = staged["README.md"].decode()
    assert _before_provenance(shared) == _before_provenance(run_card.replace("your-username/", "tester/"))
    assert "Exported from the run folder" in shared and "by the recipe that trained it" in run_card
    assert "training_args.bin" not in staged and "report.json" not in staged and "run_record.json" in staged
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["arguments"]["TrainingArguments"][
        "push_to_hub"
    ]


def _readme_python_block() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from Python")[1].split("\n## ")[0]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    return block


def _readme_runs_line(block: str) -> str:
    (line,) = [line for line in block.splitlines() if line.startswith("RUNS = ")]
    return line


def test_the_readmes_python_example_runs_on_run_folders(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """README's "Use it from Python", run as written on the recipes' tiny run folders, laid out as its quick rows lay
    out theirs (only `RUNS` points elsewhere): a sentiment label, a continuation of the prompt and a birthplace
    answer, with no `trust_remote_code`."""
    block = _readme_python_block()
    for name, run in {"altegrad/pretrained": "cls_dir", "altegrad/lm": "pre_dir", "bp/nopretrain": "lm_dir"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).symlink_to(runs[run])
    assert "trust_remote_code" not in block
    # Written, the block finds the repository's runs/ from the package, wherever Python starts.
    assert eval(_readme_runs_line(block).partition("=")[2], {"hf_models": hf_models, "Path": Path}) == (
        REPO_ROOT / "runs"
    )
    block = block.replace(_readme_runs_line(block), f"RUNS = Path({str(tmp_path)!r})")
    exec(compile(block, "README.md", "exec"), {})
    label, generated, answers = capsys.readouterr().out.strip().splitlines()[-3:]
    labels = json.loads((runs["cls_dir"] / "config.json").read_text(encoding="utf-8"))["id2label"].values()
    assert any(f"'label': '{name}'" in label for name in labels), label
    assert generated.startswith("Il était une fois"), generated  # a 4-step model may well end at once
    assert len(ast.literal_eval(answers)) == 1, answers


def test_the_readmes_python_example_names_a_missing_run_in_one_line(tmp_path: Path) -> None:
    """Without the quick rows' runs the block stops on one line naming the folder, never on a Hub lookup of a path."""
    (tmp_path / "altegrad" / "pretrained").mkdir(parents=True)  # a folder with no model in it
    block = _readme_python_block().replace(
        _readme_runs_line(_readme_python_block()), f"RUNS = Path({str(tmp_path)!r})"
    )
    with pytest.raises(SystemExit) as stopped:
        exec(compile(block, "README.md", "exec"), {})
    assert str(stopped.value) == (
        f"error: no run in {tmp_path / 'altegrad' / 'pretrained'}: run the quick rows first, or set RUNS to where "
        "they wrote"
    )


def test_a_run_folder_loads_its_tokenizer_with_no_prompt(runs: dict[str, Path]) -> None:
    """`AutoTokenizer` on a run folder, stdin closed: after `import hf_models.small_encoder` (which registers the
    model) no `[y/N]` and no flag; without it, `PreTrainedTokenizerFast` (the class `tokenizer_config.json` names)
    needs none."""
    code = (
        "import sys, hf_models.small_encoder\n"
        "from transformers import AutoTokenizer, PreTrainedTokenizerFast\n"
        "auto, fast = AutoTokenizer.from_pretrained(sys.argv[1]), PreTrainedTokenizerFast.from_pretrained(sys.argv[1])\n"
        "assert auto('Un livre')['input_ids'] == fast('Un livre')['input_ids']\n"
        "print('LOADED', type(auto).__name__)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(runs["cls_dir"])],
        env={**os.environ, **OFFLINE_ENVIRONMENT, "PYTHONPATH": str(REPO_ROOT)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0 and "LOADED" in proc.stdout, proc.stdout + proc.stderr
    assert "[y/N]" not in proc.stdout + proc.stderr
    config = json.loads((runs["cls_dir"] / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] in ("TokenizersBackend", "PreTrainedTokenizerFast")  # built into transformers
