"""Every behaviour-changing flag reaches what it controls: one table per command line.

Each table row is one flag set to a non-default value and a check of its effect *where it lands*: the saved
config, the run record, the collator's masking rate measured on a batch, the optimizer's learning rates, the file
written. A scenario runs its command line once, in process, with all its rows' flags together (a one-step
Trainer run on a tiny model), then runs every row's check. Adding a flag is adding one row.

Rows still to add when their flags land (other issues): `--overwrite` (safety pass), `--classifier_dropout`,
`--gradual_unfreezing`, `--average_last_epochs`, `--selection_split_percentage`, `--classifier_pooling concat`
and `--objective rtd` (sentiment work).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from hf_models.run_record import read_record
from hf_models.tasks import birthplace, sentiment
from hf_models.tasks import pretraining as pretrain

TINY = "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=64"
COMMON = [
    "--use_cpu", "--report_to", "none", "--save_strategy", "no", "--disable_tqdm", "true",
    "--log_level", "warning", "--seed", "0", "--max_steps", "1", "--per_device_train_batch_size", "4",
]  # fmt: skip


@dataclass(frozen=True)
class Flag:
    """One table row: the flag (and value) and the check of its effect on the finished run."""

    args: tuple[str, ...]
    check: Callable[[Run], None]


@dataclass
class Run:
    """What a scenario left behind: its output folder, and the arguments `train_model` was called with."""

    out: Path
    trained: dict

    @property
    def config(self) -> dict:
        return json.loads((self.out / "config.json").read_text(encoding="utf-8"))

    @property
    def record(self):
        return read_record(self.out)


def spy_on_train_model(monkeypatch, task_module) -> dict:
    """Replace the task's `train_model` by one that records its arguments (the model, the datasets, the
    collator, the trainer) and then trains for real."""
    seen: dict = {}
    real = task_module.train_model

    def spy(model, training_args, tokenizer, train_dataset, data_collator, eval_dataset=None, **kwargs):
        seen.update(model=model, train_dataset=train_dataset, collator=data_collator, eval_dataset=eval_dataset)
        seen.update(kwargs)
        trainer, metrics = real(model, training_args, tokenizer, train_dataset, data_collator, eval_dataset, **kwargs)
        seen["trainer"] = trainer
        return trainer, metrics

    monkeypatch.setattr(task_module, "train_model", spy)
    return seen


def run_scenario(monkeypatch, task_module, base: list[str], rows: list[Flag], out: Path) -> Run:
    trained = spy_on_train_model(monkeypatch, task_module)
    flags = [arg for row in rows for arg in row.args]
    task_module.main([*base, *flags, "--output_dir", str(out), *COMMON])
    return Run(out, trained)


def check_all(run: Run, rows: list[Flag]) -> None:
    """Run every row's check; report all the flags that did not land, not just the first."""
    failures = []
    for row in rows:
        try:
            row.check(run)
        except AssertionError as err:
            failures.append(f"{' '.join(row.args)}: {err}")
    assert not failures, "flags that did not reach what they control:\n  " + "\n  ".join(failures)


def masked_share(collator, dataset, rows: int = 64) -> float:
    """Share of the tokens a collator puts into the loss (labels != -100), measured on one batch."""
    torch.manual_seed(0)
    batch = collator([dataset[i] for i in range(min(rows, len(dataset)))])
    return (batch["labels"] != -100).float().mean().item()


# --------------------------------------------------------------------------------------------------
# recipes/pretrain.py
# --------------------------------------------------------------------------------------------------
def _check_mlm(run: Run) -> None:
    assert run.config["is_causal"] is False and run.record.objective == "mlm"
    assert run.trained["collator"].mlm is True


PRETRAIN_MLM_ROWS = [
    Flag(("--objective", "mlm"), _check_mlm),
    Flag(("--mlm_probability", "0.4"), lambda r: _all(abs(masked_share(r.trained["collator"], r.trained["train_dataset"]) - 0.4) < 0.05)),
    Flag(("--block_size", "16"), lambda r: _all(r.record.hyperparameters["block_size"] == 16, {len(x) for x in r.trained["train_dataset"]["input_ids"]} == {16})),
    Flag(("--max_train_samples", "40"), lambda r: _all(r.record.split_sizes["train"] == 40)),
    Flag(("--max_eval_samples", "7"), lambda r: _all(r.record.split_sizes["validation"] == 7)),
    Flag(("--language", "de"), lambda r: _all(r.record.language == "de")),
    Flag(("--model_config", "cs224n-mingpt"), lambda r: _all(r.config["norm_first"] is True, r.record.preset == "cs224n-mingpt")),
    Flag(("--config_overrides", TINY), lambda r: _all(r.config["hidden_size"] == 32, r.config["num_hidden_layers"] == 2)),
]  # fmt: skip

PRETRAIN_SPAN_ROWS = [
    Flag(("--objective", "span_corruption"), lambda r: _all(r.record.objective == "span_corruption", type(r.trained["collator"].collator).__name__ == "SpanCorruptionCollator")),
    Flag(("--attention_type", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
    Flag(("--block_size", "24"), lambda r: _all(r.record.hyperparameters["block_size"] == 24, r.trained["collator"].collator.block_size == 24)),
]  # fmt: skip


def _all(*conditions: bool) -> None:
    assert all(conditions), conditions


def test_pretrain_flags_reach_what_they_control(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    wiki = str(synthetic_birthplace_dir / "wiki.txt")
    base = ["--train_files", wiki, "--tokenizer_name_or_path", str(tiny_tokenizer_dir)]
    mlm = run_scenario(monkeypatch, pretrain, base, PRETRAIN_MLM_ROWS, tmp_path / "mlm")
    check_all(mlm, PRETRAIN_MLM_ROWS)

    # The validation flags: a held-out file (one document per line) and, without it, the share held out.
    held_out = tmp_path / "held_out.txt"
    held_out.write_text("".join(wiki_line + "\n" for wiki_line in Path(wiki).read_text().splitlines()[:9]))
    span_rows = [*PRETRAIN_SPAN_ROWS, Flag(("--validation_files", str(held_out)), lambda r: _all(r.record.split_sizes["validation"] == 9))]
    span = run_scenario(monkeypatch, pretrain, [*base, "--config_overrides", TINY], span_rows, tmp_path / "span")
    check_all(span, span_rows)

    share_rows = [Flag(("--validation_split_percentage", "30"), lambda r: _all(0.2 < _held_out_share(r) < 0.4))]
    share = run_scenario(monkeypatch, pretrain, [*base, "--config_overrides", TINY, "--objective", "span_corruption"], share_rows, tmp_path / "share")
    check_all(share, share_rows)  # fmt: skip


def _held_out_share(run: Run) -> float:
    sizes = run.record.split_sizes
    return sizes["validation"] / (sizes["validation"] + sizes["train"])


# --------------------------------------------------------------------------------------------------
# recipes/finetune_sentiment.py, on a separable toy CLS-books folder
# --------------------------------------------------------------------------------------------------
POSITIVE = ["excellent", "magnifique", "passionnant", "superbe"]
NEGATIVE = ["ennuyeux", "mauvais", "décevant", "médiocre"]
FILLER = ["le", "livre", "est", "un", "roman", "de", "la", "histoire"]


def write_toy_cls_books(out: Path, seed: int = 0) -> Path:
    """CLS-books files (SentencePiece look, labels 0 negative / 1 positive) whose reviews differ in length."""
    rng = random.Random(seed)

    def review(label: int) -> str:
        words = rng.choices(FILLER, k=rng.randint(2, 12)) + rng.choices(POSITIVE if label else NEGATIVE, k=2)
        rng.shuffle(words)
        return " ".join("\u2581" + w for w in words)

    out.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 48), ("valid", 16), ("test", 10)):
        labels = [(i * 7 + 3) % 2 for i in range(n)]
        (out / f"{split}.review.spm").write_text("".join(review(y) + "\n" for y in labels), encoding="utf-8")
        if split != "test":
            (out / f"{split}.label").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def toy_cls_books(tmp_path_factory) -> Path:
    return write_toy_cls_books(tmp_path_factory.mktemp("toy_cls_books"))


@pytest.fixture(scope="module")
def toy_sentiment_tokenizer_dir(tmp_path_factory, toy_cls_books) -> Path:
    from hf_models.data import detokenize_spm
    from hf_models.tokenization import train_bpe_tokenizer

    texts = [detokenize_spm(line) for line in (toy_cls_books / "train.review.spm").read_text().splitlines()]
    out = tmp_path_factory.mktemp("toy_sentiment_tokenizer")
    train_bpe_tokenizer(texts, vocab_size=300, output_dir=out, show_progress=False)
    return out


def _head_only_trainable(run: Run) -> None:
    head = sum(p.numel() for p in run.trained["model"].classifier.parameters())
    assert run.record.model_size["trainable_parameters"] == head < run.record.model_size["num_parameters"]


SENTIMENT_ROWS = [
    Flag(("--freeze_backbone",), _head_only_trainable),
    Flag(("--causal_mask", "false"), lambda r: _all(r.config["is_causal"] is False)),
    Flag(("--classifier_pooling", "mean"), lambda r: _all(r.config["classifier_pooling"] == "mean")),
    Flag(("--max_seq_length", "6"), lambda r: _all(r.record.hyperparameters["max_length"] == 6, max(len(x) for x in r.trained["train_dataset"]["input_ids"]) == 6)),
    Flag(("--max_train_samples", "20"), lambda r: _all(r.record.split_sizes["train"] == 20)),
    Flag(("--max_eval_samples", "5"), lambda r: _all(r.record.split_sizes["validation"] == 5)),
    Flag(("--test_predictions_file", "answers.txt"), lambda r: _all(len((r.out / "answers.txt").read_text().splitlines()) == 10)),
    Flag(("--model_config", "cs224n-mingpt"), lambda r: _all(r.config["norm_first"] is True, r.record.preset == "cs224n-mingpt")),
]  # fmt: skip

SENTIMENT_LR_ROWS = [
    Flag(("--backbone_learning_rate", "1e-5"), lambda r: _all({g["initial_lr"] for g in r.trained["trainer"].optimizer.param_groups} == {1e-5, 3e-3})),
    Flag(("--causal_mask", "true"), lambda r: _all(r.config["is_causal"] is True)),
    Flag(("--classifier_pooling", "first"), lambda r: _all(r.config["classifier_pooling"] == "first")),
]  # fmt: skip


def test_sentiment_flags_reach_what_they_control(monkeypatch, tmp_path, toy_cls_books, toy_sentiment_tokenizer_dir):
    base = ["--data_dir", str(toy_cls_books), "--from_scratch", "--tokenizer_name_or_path", str(toy_sentiment_tokenizer_dir)]
    base += ["--config_overrides", TINY, "--learning_rate", "3e-3"]
    for name, rows in (("frozen", SENTIMENT_ROWS), ("two-rates", SENTIMENT_LR_ROWS)):
        run = run_scenario(monkeypatch, sentiment, base, rows, tmp_path / name)
        check_all(run, rows)  # fmt: skip


# --------------------------------------------------------------------------------------------------
# recipes/birthplace.py: pretrain, finetune, evaluate
# --------------------------------------------------------------------------------------------------
BIRTHPLACE_PRETRAIN_ROWS = [
    Flag(("--variant", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
    Flag(("--tokenizer_vocab_size", "300"), lambda r: _all(r.config["vocab_size"] == 300, r.record.hyperparameters["tokenizer_vocab_size"] == 300)),
    Flag(("--pretraining_objective", "openings"), lambda r: _all(r.record.objective == "openings", type(r.trained["collator"]).__name__ == "DataCollatorForSeq2Seq")),
    Flag(("--opening_tokens", "5"), lambda r: _all(max(len(x) for x in r.trained["train_dataset"][:50]["input_ids"]) == 6, r.record.hyperparameters["opening_tokens"] == 5)),
    Flag(("--pretrain_with_qa",), lambda r: _all(r.record.split_sizes["train"] > 300, r.record.hyperparameters["pretrain_with_qa"] is True)),
    Flag(("--block_size", "32"), lambda r: _all(r.record.hyperparameters["block_size"] == 32)),
]  # fmt: skip

BIRTHPLACE_FINETUNE_ROWS = [
    Flag(("--block_size", "20"), lambda r: _all(r.record.hyperparameters["block_size"] == 20, max(len(x) for x in r.trained["train_dataset"]["input_ids"]) <= 20)),
    Flag(("--variant", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
]  # fmt: skip


def test_birthplace_pretrain_and_finetune_flags(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    base = ["pretrain", "--data_dir", str(synthetic_birthplace_dir), "--config_overrides", TINY]
    run = run_scenario(monkeypatch, birthplace, base, BIRTHPLACE_PRETRAIN_ROWS, tmp_path / "pretrain")
    check_all(run, BIRTHPLACE_PRETRAIN_ROWS)

    base = ["finetune", "--data_dir", str(synthetic_birthplace_dir), "--config_overrides", TINY]
    base += ["--tokenizer_name_or_path", str(tiny_tokenizer_dir)]
    run = run_scenario(monkeypatch, birthplace, base, BIRTHPLACE_FINETUNE_ROWS, tmp_path / "finetune")
    check_all(run, BIRTHPLACE_FINETUNE_ROWS)


# --------------------------------------------------------------------------------------------------
# tokenizer/train_tokenizer.py (`--no_progress` only hides the bars: display, not behaviour)
# --------------------------------------------------------------------------------------------------
@dataclass
class TokenizerRun:
    out: Path
    summary: dict


def _saved_max_length(run: TokenizerRun) -> int:
    return json.loads((run.out / "tokenizer_config.json").read_text(encoding="utf-8"))["model_max_length"]


TRAIN_TOKENIZER_ROWS = [
    Flag(("--min_frequency", "400"), lambda r: _all(r.summary["vocab_size"] < 700)),
    Flag(("--model_max_length", "77"), lambda r: _all(_saved_max_length(r) == 77)),
    Flag(("--max_chars", "3000"), lambda r: _all(3000 <= r.summary["train_chars"] < 3400)),
]  # fmt: skip


def test_train_tokenizer_flags_reach_what_they_control(tmp_path, synthetic_birthplace_dir, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_tokenizer", Path(__file__).parents[1] / "tokenizer" / "train_tokenizer.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    flags = [arg for row in TRAIN_TOKENIZER_ROWS for arg in row.args]
    out = tmp_path / "tok"
    base = ["--files", str(synthetic_birthplace_dir / "wiki.txt"), "--vocab_size", "700", "--output_dir", str(out)]
    assert cli.main([*base, *flags, "--no_progress"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    check_all(TokenizerRun(out, summary), TRAIN_TOKENIZER_ROWS)  # fmt: skip
