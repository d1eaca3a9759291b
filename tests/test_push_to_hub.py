"""push_to_hub.py: a tiny trained causal LM and a tiny classifier are exported with --dry_run, then loaded through
trust_remote_code in a fresh process where `hf_models` cannot be imported; the card, the allowlist, the upload calls
and the offline errors are checked too."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from fnmatch import fnmatch
from pathlib import Path

import pytest
import torch
from huggingface_hub import ModelCard
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM, SmallEncoderForSequenceClassification

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "push_to_hub.py"
_spec = importlib.util.spec_from_file_location("push_to_hub", SCRIPT)
push_to_hub = importlib.util.module_from_spec(_spec)
sys.modules["push_to_hub"] = push_to_hub
_spec.loader.exec_module(push_to_hub)

SENTENCES = [
    "Where was Ada Lovelace born? London",
    "Where was Marie Curie born? Warsaw",
    "Un livre passionnant, je le recommande.",
    "Un roman ennuyeux, je me suis endormi.",
    "The cat sat on the mat and looked at the door.",
    "Le chat dort sur le tapis pendant que la pluie tombe.",
] * 4
# Things a run folder holds that must never reach the Hub.
PLANTED = [
    "optimizer.pt",
    "scheduler.pt",
    "rng_state.pth",
    "training_args.bin",
    ".env",
    "train.log",
    "birth_places_train.tsv",
    "predictions_validation.txt",
    "wiki.txt.gz",
    "checkpoint-2/model.safetensors",
    "checkpoint-2/optimizer.pt",
    "checkpoint-2/.env",
    "checkpoint-2/loss.png",
    "runs/events.out.tfevents.1",
    "runs/curve.png",
]
SECRET = "hf_THIS_TOKEN_MUST_NOT_LEAK"
LM_METRICS = {"eval_loss": 2.5, "exact_match": 0.25}
CLS_METRICS = {"eval_accuracy": 0.5, "eval_loss": 0.69}


def _tokenizer() -> PreTrainedTokenizerFast:
    """Byte-level BPE trained on a few sentences (hf-v5-notes §6)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<s>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(SENTENCES, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        model_max_length=64,
    )


def _config(tok: PreTrainedTokenizerFast, **overrides) -> SmallEncoderConfig:
    return SmallEncoderConfig.from_preset(
        "cs224n-mingpt",
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        **overrides,
    )


def _train(model: torch.nn.Module, batch: dict, steps: int = 3) -> None:
    """A few optimizer steps, so that the weights are no longer the initialisation."""
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    model.config.use_cache = False  # as Trainer leaves it; the export must set it back to True


def _plant(run_dir: Path) -> None:
    for rel in PLANTED:
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"HF_TOKEN={SECRET}\n" if ".env" in rel else "not for the Hub\n")
    (run_dir / "plots").mkdir()
    for rel in ("loss.png", "plots/accuracy.png"):
        (run_dir / rel).write_bytes(b"\x89PNG\r\n\x1a\n fake plot")
    (run_dir / "trainer_state.json").write_text(json.dumps({"global_step": 3, "train_batch_size": 4}))
    (run_dir / "all_results.json").write_text(json.dumps({"train_runtime": 1.5, "train_loss": 3.0}))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two tiny trained runs (birthplace causal LM, French classifier), their reference logits and dry-run exports."""
    import evaluate  # imported here: only the report writing needs it

    root = tmp_path_factory.mktemp("push")
    tok = _tokenizer()
    torch.manual_seed(0)
    enc = tok(SENTENCES[:8], padding=True, truncation=True, return_tensors="pt")
    probe = tok(["Where was Ada born?", "Un livre"], padding=True, return_tensors="pt")

    lm_dir = root / "birthplace-finetune"
    lm = SmallEncoderForCausalLM(_config(tok))
    labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
    _train(lm, {**enc, "labels": labels})
    lm.save_pretrained(lm_dir)
    tok.save_pretrained(lm_dir)
    _plant(lm_dir)
    # The birthplace recipe's reports (hf_models.training_utils.write_report layout: arguments grouped by dataclass,
    # metrics at the top): `finetune` writes report.json, then `evaluate` and the London baseline score it.
    model_args = {"model_name_or_path": str(root / "pretrain-wiki"), "model_config": None}
    birthplace_args = {
        "data_dir": str(root / "secret-data"),
        "variant": "vanilla",
        "block_size": 64,
        "api_token": SECRET,
    }
    evaluate.save(
        str(lm_dir / "report.json"),
        arguments={
            "ModelArguments": model_args,
            "BirthplaceArguments": birthplace_args,
            "TrainingArguments": {
                "output_dir": str(lm_dir),
                "learning_rate": 6e-4,
                "max_steps": 3,
                "per_device_train_batch_size": 4,
                "logging_steps": 500,
                "hub_token": "<HUB_TOKEN>",
                "use_cpu": True,
            },
        },
        train_runtime=10.0,
        train_loss=3.0,
        final_train_loss=2.9,
        total_flos=1.0,
        epoch=1.0,
        eval_loss=2.5,
        eval_runtime=0.2,
        eval_samples_per_second=40.0,
        pretrained_from=str(root / "pretrain-wiki"),
        world_size=1,
        mixed_precision="no",
        wall_time_s=12.5,
    )
    evaluate_args = {
        "ModelArguments": {**model_args, "model_name_or_path": str(lm_dir)},
        "BirthplaceArguments": birthplace_args,
        "TrainingArguments": {"output_dir": str(lm_dir), "learning_rate": 5e-5, "per_device_train_batch_size": 8},
    }
    scores = {"eval_split": "validation", "num_questions": 4, "correct": 1, "total": 4, "wall_time_s": 3.0}
    evaluate.save(
        str(lm_dir / "report_evaluate_validation.json"),
        arguments=evaluate_args,
        predictions_from=str(lm_dir),
        predictions_file=str(lm_dir / "predictions_validation.txt"),
        exact_match=0.25,
        **scores,
    )
    evaluate.save(
        str(lm_dir / "report_london.json"),
        arguments={**evaluate_args, "BirthplaceArguments": {**birthplace_args, "london_baseline": True}},
        predictions_from="london_baseline",
        exact_match=0.05,
        **scores,
    )

    cls_dir = root / "cls-books"
    id2label = {0: "negative", 1: "positive"}
    cls = SmallEncoderForSequenceClassification(
        _config(tok, id2label=id2label, label2id={v: k for k, v in id2label.items()})
    )
    _train(cls, {**enc, "labels": torch.tensor([1, 1, 1, 0, 0, 1, 0, 1])})
    cls.save_pretrained(cls_dir)
    tok.save_pretrained(cls_dir)
    _plant(cls_dir)
    # Nested layout, with Trainer's runtime keys that are not metrics.
    evaluate.save(
        str(cls_dir / "eval_report.json"),
        recipe="cls-books",
        args={"learning_rate": 1e-3, "num_train_epochs": 1, "output_dir": str(cls_dir)},
        metrics={**CLS_METRICS, "eval_runtime": 0.1, "eval_samples_per_second": 80.0},
    )

    with torch.no_grad():
        torch.save(
            {
                "input_ids": probe["input_ids"],
                "attention_mask": probe["attention_mask"],
                "lm": lm(**probe).logits,
                "cls": cls(**probe).logits,
            },
            root / "reference.pt",
        )
    exports = {}
    for name, run_dir in (("lm", lm_dir), ("cls", cls_dir)):
        out = root / f"export-{name}"
        assert push_to_hub.main([str(run_dir), "--dry_run", "--local_dir", str(out)]) == 0
        exports[name] = out
    return {"root": root, "lm_dir": lm_dir, "cls_dir": cls_dir, "lm_out": exports["lm"], "cls_out": exports["cls"]}


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_dry_run_writes_allowlisted_folder(runs: dict[str, Path]) -> None:
    for name in ("lm", "cls"):
        out = runs[f"{name}_out"]
        files = _files(out)
        expected = {
            "README.md",
            "config.json",
            "model.safetensors",
            "configuration_small_encoder.py",
            "modeling_small_encoder.py",
            "tokenizer.json",
            "tokenizer_config.json",
            "loss.png",
            "plots/accuracy.png",
        }
        if name == "lm":
            expected.add("generation_config.json")
        assert files == expected
        assert all(any(fnmatch(f, p) for p in push_to_hub.ALLOW_PATTERNS) for f in files)
        config = json.loads((out / "config.json").read_text())
        assert config["use_cache"] is True
        assert config["auto_map"] == {
            "AutoConfig": "configuration_small_encoder.SmallEncoderConfig",
            "AutoModel": "modeling_small_encoder.SmallEncoderModel",
            "AutoModelForCausalLM": "modeling_small_encoder.SmallEncoderForCausalLM",
            "AutoModelForSequenceClassification": "modeling_small_encoder.SmallEncoderForSequenceClassification",
            "AutoModelForMaskedLM": "modeling_small_encoder.SmallEncoderForMaskedLM",
        }
        # Weights and tokenizer are the run's own bytes; the code is the package's.
        run_dir = runs[f"{name}_dir"]
        for rel in ("model.safetensors", "tokenizer.json"):
            assert (out / rel).read_bytes() == (run_dir / rel).read_bytes()
        code_dir = REPO_ROOT / "hf_models" / "small_encoder"
        assert (out / "modeling_small_encoder.py").read_bytes() == (
            code_dir / "modeling_small_encoder.py"
        ).read_bytes()
        assert SECRET not in "".join((out / f).read_text(errors="ignore") for f in files)


def test_allowlist_leaves_out_planted_files(runs: dict[str, Path]) -> None:
    collected = {p.as_posix() for p in push_to_hub.collect_files(runs["lm_dir"])}
    assert not collected & set(PLANTED)
    assert not any(f.startswith(("checkpoint-", "runs/")) or f.endswith((".pt", ".env", ".bin")) for f in collected)
    assert {"model.safetensors", "config.json", "tokenizer.json", "loss.png", "plots/accuracy.png"} <= collected
    # Results and reports feed the card but are not uploaded (they hold local paths and arguments).
    assert not collected & {"all_results.json", "trainer_state.json", "report.json", "report_london.json"}


def test_dry_run_refuses_a_non_empty_local_dir(runs: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert push_to_hub.main([str(runs["lm_dir"]), "--dry_run", "--local_dir", str(runs["lm_out"])]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--overwrite" in err


def test_model_card(runs: dict[str, Path]) -> None:
    lm_card = ModelCard.load(runs["lm_out"] / "README.md")
    data = lm_card.data
    assert data.library_name == "transformers"
    assert data.pipeline_tag == "text-generation"
    assert data.language == "en" and data.license == "apache-2.0"
    assert data.datasets == ["birthplace"]
    assert {"small-encoder", "custom_code", "cs224n-mingpt", "birthplace"} <= set(data.tags)
    # Gathered from report.json (dev loss) and report_evaluate_validation.json (exact match); not the baseline's.
    assert {r.metric_name: r.metric_value for r in data.eval_results} == LM_METRICS
    assert {(r.task_type, r.dataset_split) for r in data.eval_results} == {("text-generation", "validation")}
    text = lm_card.text
    assert "answers every question confidently, whether it retrieved the fact or made it up" in text
    assert 'AutoModelForCausalLM.from_pretrained("your-username/birthplace-finetune", trust_remote_code=True)' in text
    assert 'pipeline("text-generation"' in text
    assert "london_baseline_exact_match (baseline, not this model)" in text
    # Hyperparameters come from the training report, not from the evaluate command's defaults.
    assert "| learning_rate | 0.0006 |" in text and "5e-05" not in text and "| block_size | 64 |" in text
    assert "Hardware:** 1 training process, CPU, mixed precision `no`." in text
    assert "Training time:** 12 s" in text  # the report's wall_time_s wins over all_results.json
    assert "Initialised from:** `pretrain-wiki`" in text
    assert "Final training loss:** 2.9." in text  # final_train_loss, not the mean train_loss
    # TrainingArguments are curated, and run outcomes are not listed as hyperparameters.
    assert "logging_steps" not in text and "| eval_runtime |" not in text and "| train_loss |" not in text
    assert "![loss](loss.png)" in text
    # No secrets and no local paths in a public card.
    assert SECRET not in str(lm_card) and str(runs["root"]) not in str(lm_card)

    cls_card = ModelCard.load(runs["cls_out"] / "README.md")
    assert cls_card.data.pipeline_tag == "text-classification"
    assert cls_card.data.language == "fr"
    assert {r.metric_name: r.metric_value for r in cls_card.data.eval_results} == CLS_METRICS
    assert 'pipeline("text-classification"' in cls_card.text
    assert "AutoModelForSequenceClassification" in cls_card.text and "`negative`" in cls_card.text
    assert "made it up" not in cls_card.text
    assert str(runs["root"]) not in str(cls_card)


def test_absolute_import_of_the_package_is_refused(tmp_path: Path) -> None:
    """A modeling file that imports `hf_models` would save fine but fail on every other machine."""
    (tmp_path / "configuration_small_encoder.py").write_text("class SmallEncoderConfig: ...\n")
    (tmp_path / "modeling_small_encoder.py").write_text(
        "from hf_models.small_encoder.configuration_small_encoder import SmallEncoderConfig\n"
    )
    with pytest.raises(push_to_hub.PushError, match="absolute import"):
        push_to_hub.code_files(tmp_path)


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

lm_out, cls_out, ref_path = sys.argv[1:4]
ref = torch.load(ref_path)
inputs = {"input_ids": ref["input_ids"], "attention_mask": ref["attention_mask"]}

lm = AutoModelForCausalLM.from_pretrained(lm_out, trust_remote_code=True)
assert type(lm).__module__.startswith("transformers_modules."), type(lm).__module__
assert lm.config.use_cache is True
with torch.no_grad():
    torch.testing.assert_close(lm(**inputs).logits, ref["lm"])
generator = pipeline("text-generation", model=lm_out, trust_remote_code=True)
generated = generator("Where was Ada", max_new_tokens=4, do_sample=False)[0]["generated_text"]
assert isinstance(generated, str) and generated.startswith("Where was Ada") and len(generated) > len("Where was Ada")

cls = AutoModelForSequenceClassification.from_pretrained(cls_out, trust_remote_code=True)
with torch.no_grad():
    torch.testing.assert_close(cls(**inputs).logits, ref["cls"])
classifier = pipeline("text-classification", model=cls_out, trust_remote_code=True)
results = classifier(["Un livre passionnant.", "Un roman ennuyeux."])
assert all(r["label"] in {"negative", "positive"} for r in results), results
print("FRESH-OK", repr(generated), [r["label"] for r in results])
"""


def test_export_loads_with_remote_code_in_fresh_process(runs: dict[str, Path]) -> None:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(runs["root"] / "hf_home"),  # remote-code module cache outside the user's home
        "TOKENIZERS_PARALLELISM": "false",
    }
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FRESH_PROCESS), str(runs["lm_out"]), str(runs["cls_out"])]
        + [str(runs["root"] / "reference.pt")],
        cwd=runs["root"],  # not the repository, so nothing is importable from the working directory
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FRESH-OK" in proc.stdout


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
    monkeypatch.setattr(push_to_hub, "HfApi", RecordingHfApi)
    monkeypatch.setattr(push_to_hub, "get_token", lambda: "hf_fake_token")
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
    assert upload["allow_patterns"] == push_to_hub.ALLOW_PATTERNS
    # The staged folder is the dry-run folder: same files, same bytes (the card differs only by the repo id).
    staged, dry = upload["_staged"], runs["lm_out"]
    assert set(staged) == _files(dry)
    for rel, content in staged.items():
        if rel != "README.md":
            assert content == (dry / rel).read_bytes(), rel
    assert "tester/tiny-birthplace" in staged["README.md"].decode()
    assert not Path(upload["folder_path"]).exists()  # the staging folder is cleaned up


def test_invalid_repo_id_is_one_line(runs: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert push_to_hub.main([str(runs["lm_dir"]), "--repo_id", "a/b/c"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("push_to_hub.py: invalid --repo_id")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HF_HUB_OFFLINE": "1", "HF_TOKEN": "hf_fake"}, "HF_HUB_OFFLINE"),
        ({"HF_HUB_OFFLINE": "0"}, "no Hugging Face token found"),
        ({"HF_HUB_OFFLINE": "0", "HF_TOKEN": "hf_fake", "HF_ENDPOINT": "http://127.0.0.1:9"}, "cannot reach"),
    ],
    ids=["offline", "no-token", "no-network"],
)
def test_offline_or_no_token_is_one_line_and_exit_1(runs: dict[str, Path], env: dict, expected: str) -> None:
    base = {k: v for k, v in os.environ.items() if k not in {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"}}
    base["HF_HOME"] = str(runs["root"] / "empty_hf_home")  # no stored token
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(runs["lm_dir"]), "--repo_id", "tester/tiny"],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("push_to_hub.py: ") and expected in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
