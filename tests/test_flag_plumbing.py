"""Every behaviour-changing flag reaches what it controls: one table per command line.

Each table row is one flag set to a non-default value and a check of its effect *where it lands*: the saved
config, the run record, the collator's masking rate measured on a batch, the optimizer's learning rates, the file
written. A scenario runs its command line once, in process, with all its rows' flags together (a one-step
Trainer run on a tiny model), then runs every row's check. Adding a flag is adding one row.

`test_every_flag_has_a_row` keeps the tables complete: it lists each command line's own flags (what its `--help`
shows, Trainer's `TrainingArguments` left out) and fails on a flag with no row here, no test elsewhere that sets it
(`ELSEWHERE`), and no reason to have none (`INPUTS`: what every scenario reads).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from tiny import ONE_STEP as COMMON
from tiny import TINY, run_birthplace, run_pretraining, run_sentiment

from hf_models import data as data_package
from hf_models import training
from hf_models.run_record import read_record
from hf_models.tasks import birthplace, birthplace_qa, sentiment
from hf_models.tasks import pretraining as pretrain

EVALUATE_COMMON = ["--use_cpu", "--log_level", "warning", "--seed", "0"]  # evaluate takes no training flags


def _tiny(run) -> None:
    assert (run.config["hidden_size"], run.config["num_hidden_layers"]) == (32, 2)


@dataclass(frozen=True)
class Flag:
    """One table row: the flag (and value) and the check of its effect on the finished run."""

    args: tuple[str, ...]
    check: Callable[[Run], None]
    prepare: Callable[[Path], None] | None = None  # called on the output folder before the run


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


TINY_ROW = Flag(("--config_overrides", TINY), _tiny)


def spy_on_train_model(monkeypatch) -> dict:
    """Replace the task's `train_model` by one that records its arguments (the model, the datasets, the
    collator, the trainer) and then trains for real."""
    seen: dict = {}
    real = training.train_model

    def spy(model, training_args, tokenizer, train_dataset, data_collator, eval_dataset=None, **kwargs):
        seen.update(model=model, train_dataset=train_dataset, collator=data_collator, eval_dataset=eval_dataset)
        seen["initial"] = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
        seen.update(kwargs)
        trainer, metrics = real(model, training_args, tokenizer, train_dataset, data_collator, eval_dataset, **kwargs)
        seen["trainer"] = trainer
        return trainer, metrics

    monkeypatch.setattr(training, "train_model", spy)
    return seen


def spy_on_calls(monkeypatch, module, name: str, calls: list) -> None:
    """Record the arguments of every call to `module.name` (by parameter name), then make the call."""
    real = getattr(module, name)
    signature = inspect.signature(real)  # through an earlier spy too (`functools.wraps`)

    @functools.wraps(real)
    def spy(*args, **kwargs):
        calls.append(signature.bind(*args, **kwargs).arguments)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)


def run_scenario(
    monkeypatch, task_module, base: list[str], rows: list[Flag], out: Path, after: list[str] = (), spies: dict = None
) -> Run:
    """Run the command line once with every row's flags (`{tmp}` in a flag's value is the scenario's parent folder;
    `after` comes last, so it wins over `COMMON`). `spies`: {key: (module, function name)} whose calls are recorded
    in `run.trained[key]`."""
    trained = spy_on_train_model(monkeypatch)
    for key, (module, name) in (spies or {}).items():
        spy_on_calls(monkeypatch, module, name, trained.setdefault(key, []))
    for row in rows:
        if row.prepare is not None:
            row.prepare(out)
    flags = [arg.format(tmp=out.parent) for row in rows for arg in row.args]
    common = EVALUATE_COMMON if base[0] == "evaluate" else COMMON
    recipe = {pretrain: run_pretraining, sentiment: run_sentiment, birthplace: run_birthplace}[task_module]
    trained["metrics"] = recipe([*base, *flags, "--output_dir", str(out), *common, *after])
    return Run(out, trained)


def overwrite_row(earlier: str = "report.json") -> Flag:
    """`--overwrite_output_dir` into a used folder: a file `earlier` of an earlier run is there, and the new run
    replaces it (without the flag, the run is refused: `test_bad_inputs.py`)."""

    def prepare(out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / earlier).write_text('{"earlier": true}\n')

    def replaced(run) -> None:
        assert "earlier" not in (run.out / earlier).read_text(encoding="utf-8"), (
            f"the earlier {earlier} is still there"
        )

    return Flag(("--overwrite_output_dir",), replaced, prepare)


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
    Flag(
        ("--mlm_probability", "0.4"),
        lambda r: _all(abs(masked_share(r.trained["collator"], r.trained["train_dataset"]) - 0.4) < 0.05),
    ),
    Flag(
        ("--block_size", "16"),
        lambda r: _all(
            r.record.hyperparameters["block_size"] == 16,
            {len(x) for x in r.trained["train_dataset"]["input_ids"]} == {16},
        ),
    ),
    Flag(("--max_train_samples", "40"), lambda r: _all(r.record.split_sizes["train"] == 40)),
    Flag(("--max_eval_samples", "7"), lambda r: _all(r.record.split_sizes["validation"] == 7)),
    Flag(("--language", "de"), lambda r: _all(r.record.language == "de")),
    Flag(
        ("--model_config", "cs224n-mingpt"),
        lambda r: _all(r.config["norm_first"] is True, r.record.preset == "cs224n-mingpt"),
    ),
    Flag(
        ("--config_overrides", TINY), lambda r: _all(r.config["hidden_size"] == 32, r.config["num_hidden_layers"] == 2)
    ),
]

PRETRAIN_SPAN_ROWS = [
    Flag(
        ("--objective", "span_corruption"),
        lambda r: _all(
            r.record.objective == "span_corruption",
            type(r.trained["collator"].collator).__name__ == "SpanCorruptionCollator",
        ),
    ),
    Flag(("--attention_type", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
    Flag(
        ("--block_size", "24"),
        lambda r: _all(r.record.hyperparameters["block_size"] == 24, r.trained["collator"].collator.block_size == 24),
    ),
    Flag(("--validation_files", "{tmp}/held_out.txt"), lambda r: _all(r.record.split_sizes["validation"] == 9)),
]

PRETRAIN_SHARE_ROWS = [
    Flag(("--validation_split_percentage", "30"), lambda r: _all(0.2 < _held_out_share(r) < 0.4)),
    Flag(
        ("--preprocessing_num_workers", "2"),
        lambda r: _all([call["num_proc"] for call in r.trained["tokenization"]] == [2]),
    ),
    overwrite_row(),
]


def _started_from_the_mlm_run(run: Run) -> None:
    from safetensors.torch import load_file

    saved = load_file(run.out.parent / "mlm" / "model.safetensors")
    assert all(torch.equal(run.trained["initial"][name], saved[name]) for name in saved), "not the mlm run's weights"


PRETRAIN_CONTINUE_ROWS = [Flag(("--model_name_or_path", "{tmp}/mlm"), _started_from_the_mlm_run)]


def _all(*conditions: bool) -> None:
    assert all(conditions), conditions


def test_pretrain_flags_reach_what_they_control(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    wiki = str(synthetic_birthplace_dir / "wiki.txt")
    base = ["--train_files", wiki, "--tokenizer_name_or_path", str(tiny_tokenizer_dir)]
    mlm = run_scenario(monkeypatch, pretrain, base, PRETRAIN_MLM_ROWS, tmp_path / "mlm")
    check_all(mlm, PRETRAIN_MLM_ROWS)
    assert mlm.config["vocab_size"] == 600  # --tokenizer_name_or_path: the tokenizer's vocabulary

    # The validation flags: a held-out file (one document per line) and, without it, the share held out.
    held_out = tmp_path / "held_out.txt"
    held_out.write_text("".join(wiki_line + "\n" for wiki_line in Path(wiki).read_text().splitlines()[:9]))
    tiny = [*base, "--config_overrides", TINY]
    spies = {"tokenization": (data_package, "tokenize_documents")}
    scenarios = [
        ("span", tiny, PRETRAIN_SPAN_ROWS, None),
        ("share", [*tiny, "--objective", "span_corruption"], PRETRAIN_SHARE_ROWS, spies),
        ("continued", [*base, "--objective", "mlm"], PRETRAIN_CONTINUE_ROWS, None),
    ]
    for name, scenario_base, rows, spies in scenarios:
        check_all(run_scenario(monkeypatch, pretrain, scenario_base, rows, tmp_path / name, spies=spies), rows)


def _held_out_share(run: Run) -> float:
    sizes = run.record.split_sizes
    return sizes["validation"] / (sizes["validation"] + sizes["train"])


# --------------------------------------------------------------------------------------------------
# recipes/finetune_sentiment.py, on a separable toy CLS-books folder
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def toy_cls_books(tmp_path_factory, write_toy_cls_books) -> Path:
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


def _head_started_as_the_probe(run: Run) -> None:
    """The head `train_model` was given is the probe's fit: on the training reviews' (frozen) features it scores
    the training accuracy the probe reported; 3 folds reached the choice of C."""
    from hf_models.tasks.sentiment import head_inputs

    metrics, initial = run.trained["metrics"], run.trained["initial"]
    features, labels = head_inputs(run.trained["model"], run.trained["train_dataset"], run.trained["collator"])
    logits = features @ initial["classifier.weight"].T + initial["classifier.bias"]
    assert metrics["linear_probe_train_accuracy"] == pytest.approx(float((logits.argmax(-1) == labels).float().mean()))
    assert metrics["linear_probe_folds"] == 3 and 0.0 <= metrics["linear_probe_train_cv_accuracy"] <= 1.0


def _probe_kept_alone(run: Run) -> None:
    """The probe's own run folder: its record (the probe's C and folds) and a test label per review."""
    kept = read_record(run.out / "linear_probe")
    assert kept.objective == "linear_probe" and kept.hyperparameters["linear_probe_folds"] == 3
    assert kept.hyperparameters["linear_probe_C"] == run.trained["metrics"]["linear_probe_C"]
    assert len((run.out / "linear_probe" / "test_predictions.txt").read_text().splitlines()) == 10


def _trained_on_length_buckets(run: Run) -> None:
    from hf_models.training import ShuffledLengthBuckets

    sampler = run.trained["trainer"]._get_train_sampler()
    assert isinstance(sampler, ShuffledLengthBuckets) and sampler.batch_size == 4
    assert sampler.lengths == [len(ids) for ids in run.trained["train_dataset"]["input_ids"]]


def _trained_on_the_budget_draw(run: Run) -> None:
    """The rows `train_model` got are the reviews of the balanced draw of 20 with the run's seed (0), in order, as the
    tokenizer encodes them (at the scenario's --max_seq_length 6), 10 of each label."""
    from hf_models.data import balanced_subset, load_cls_books
    from hf_models.tokenization import load_tokenizer

    train = load_cls_books(run.trained["data_dir"])["train"]
    drawn = train.select(balanced_subset(train["label"], 20, seed=0))
    encoded = load_tokenizer(run.out)(list(drawn["text"]), truncation=True, max_length=6)["input_ids"]
    trained = run.trained["train_dataset"]
    assert trained["input_ids"] == encoded and list(trained["label"]) == list(drawn["label"])
    assert sorted(trained["label"]) == [0] * 10 + [1] * 10 and run.record.split_sizes["train"] == 20
    assert run.record.hyperparameters["label_budget"] == 20 and run.record.hyperparameters["label_budget_seed"] == 0


SENTIMENT_ROWS = [
    TINY_ROW,
    Flag(("--head_init", "linear_probe"), _head_started_as_the_probe),
    Flag(("--linear_probe_folds", "3"), lambda r: _all(r.trained["metrics"]["linear_probe_folds"] == 3)),
    Flag(("--save_linear_probe",), _probe_kept_alone),
    Flag(("--freeze_backbone",), _head_only_trainable),
    Flag(("--causal_mask", "false"), lambda r: _all(r.config["is_causal"] is False)),
    Flag(("--classifier_pooling", "mean"), lambda r: _all(r.config["classifier_pooling"] == "mean")),
    Flag(
        ("--max_seq_length", "6"),
        lambda r: _all(
            r.record.max_length == 6,
            max(len(x) for x in r.trained["train_dataset"]["input_ids"]) == 6,
        ),
    ),
    Flag(("--label_budget", "20"), _trained_on_the_budget_draw),
    Flag(("--max_eval_samples", "5"), lambda r: _all(r.record.split_sizes["validation"] == 5)),
    Flag(("--length_buckets",), _trained_on_length_buckets),
    Flag(
        ("--model_config", "cs224n-mingpt"),
        lambda r: _all(r.config["norm_first"] is True, r.record.preset == "cs224n-mingpt"),
    ),
]


SENTIMENT_LR_ROWS = [
    TINY_ROW,
    Flag(
        ("--backbone_learning_rate", "1e-5"),
        lambda r: _all({g["initial_lr"] for g in r.trained["trainer"].optimizer.param_groups} == {1e-5, 3e-3}),
    ),
    Flag(("--causal_mask", "true"), lambda r: _all(r.config["is_causal"] is True)),
    Flag(("--classifier_pooling", "first"), lambda r: _all(r.config["classifier_pooling"] == "first")),
]


def _thawed_from_the_top(run: Run) -> None:
    """Two epochs, one layer group thawed per epoch after the first: the top block trained, the block below it and
    the embeddings never did."""
    from safetensors.torch import load_file

    saved, initial = load_file(run.out / "model.safetensors"), run.trained["initial"]
    for frozen in ("model.embed_tokens.weight", "model.layers.0.mlp.fc1.weight"):
        assert torch.equal(saved[frozen], initial[frozen]), f"{frozen} trained"
    assert not torch.equal(saved["model.layers.1.mlp.fc1.weight"], initial["model.layers.1.mlp.fc1.weight"])


SENTIMENT_TRANSFER_ROWS = [
    TINY_ROW,
    Flag(
        ("--classifier_pooling", "all_layers"),
        lambda r: _all(
            r.config["classifier_pooling"] == "all_layers",
            r.trained["model"].classifier.in_features == 2 * (2 + 1) * 32,  # mean and max of 3 hidden states
        ),
    ),
    Flag(
        ("--classifier_dropout", "0.3"),
        lambda r: _all(r.config["classifier_dropout"] == 0.3, r.trained["model"].dropout.p == 0.3),
    ),
    Flag(("--gradual_unfreezing", "1"), _thawed_from_the_top),
    Flag(("--attention_type", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
    overwrite_row(),
]


def _started_from_the_frozen_run(run: Run) -> None:
    from safetensors.torch import load_file

    saved = load_file(run.out.parent / "frozen" / "model.safetensors")
    assert all(torch.equal(run.trained["initial"][name], saved[name]) for name in saved), (
        "not the frozen run's weights"
    )


SENTIMENT_CONTINUE_ROWS = [
    Flag(("--model_name_or_path", "{tmp}/frozen"), _started_from_the_frozen_run),
]
TWO_EPOCHS = ["--max_steps", "-1", "--num_train_epochs", "2", "--label_budget", "8", "--max_eval_samples", "4"]


def test_sentiment_flags_reach_what_they_control(monkeypatch, tmp_path, toy_cls_books, toy_sentiment_tokenizer_dir):
    data = ["--data_dir", str(toy_cls_books), "--learning_rate", "3e-3"]
    scratch = [*data, "--from_scratch", "--tokenizer_name_or_path", str(toy_sentiment_tokenizer_dir)]
    scenarios = (
        ("frozen", scratch, SENTIMENT_ROWS, []),
        ("two-rates", scratch, SENTIMENT_LR_ROWS, []),
        ("transfer", scratch, SENTIMENT_TRANSFER_ROWS, TWO_EPOCHS),
        ("continued", data, SENTIMENT_CONTINUE_ROWS, []),  # from the frozen run's model and tokenizer
    )
    for name, base, rows, after in scenarios:
        run = run_scenario(monkeypatch, sentiment, base, rows, tmp_path / name, after)
        run.trained["data_dir"] = toy_cls_books
        check_all(run, rows)


# --------------------------------------------------------------------------------------------------
# recipes/birthplace.py: pretrain, finetune, evaluate
# --------------------------------------------------------------------------------------------------
def _augmented(run: Run, form: str) -> int:
    return run.trained["metrics"].get(f"train_augment_{form}_examples", 0)


def _recited_rows(run: Run, longest: int) -> bool:
    """Every QA row (one with ⁇) is `recitation </s> question ⁇ ...`, the recitation at most `longest` tokens."""
    from hf_models.tokenization import load_tokenizer

    tokenizer = load_tokenizer(run.out)
    qa_rows = [row for row in run.trained["train_dataset"]["input_ids"] if tokenizer.sep_token_id in row]
    assert qa_rows, "no QA row"
    for row in qa_rows:
        end = row.index(tokenizer.eos_token_id) if tokenizer.eos_token_id in row else len(row)
        assert end < row.index(tokenizer.sep_token_id) and end <= longest, f"not a reciting row: {row}"
    return True


BIRTHPLACE_PRETRAIN_ROWS = [
    TINY_ROW,
    Flag(("--attention_type", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
    Flag(
        ("--tokenizer_vocab_size", "300"),
        lambda r: _all(r.config["vocab_size"] == 300, r.record.hyperparameters["tokenizer_vocab_size"] == 300),
    ),
    Flag(
        ("--pretraining_objective", "openings"),
        lambda r: _all(
            r.record.objective == "openings", type(r.trained["collator"]).__name__ == "DataCollatorForSeq2Seq"
        ),
    ),
    Flag(
        ("--opening_tokens", "5"),
        lambda r: _all(
            max(len(x) for x in r.trained["train_dataset"][:50]["input_ids"]) == 6,
            r.record.hyperparameters["opening_tokens"] == 5,
        ),
    ),
    Flag(
        ("--pretrain_with_qa",),
        lambda r: _all(
            r.record.split_sizes["train"] > 330 + _augmented(r, "name_first") + _augmented(r, "opening"),
            r.record.hyperparameters["pretrain_with_qa"] is True,
        ),
    ),
    Flag(("--block_size", "32"), lambda r: _all(r.record.hyperparameters["block_size"] == 32)),
    # 330 paragraphs (300 people with answers, 30 test people): their opening sentences alone
    Flag(
        ("--augment", "opening"),
        lambda r: _all(
            _augmented(r, "opening") == 330,
            _augmented(r, "name_first") == 0,
            r.record.hyperparameters["augment"] == "opening",
        ),
    ),
    Flag(
        ("--model_config", "altegrad-lab"),
        lambda r: _all(r.config["norm_first"] is False, r.record.preset == "altegrad-lab"),
    ),
    Flag(("--recite_tokens", "4"), lambda r: _recited_rows(r, 4)),
]

BIRTHPLACE_FINETUNE_ROWS = [
    TINY_ROW,
    Flag(
        ("--block_size", "20"),
        lambda r: _all(
            r.record.hyperparameters["block_size"] == 20,
            max(len(x) for x in r.trained["train_dataset"]["input_ids"]) <= 20,
        ),
    ),
    Flag(("--attention_type", "synthesizer"), lambda r: _all(r.config["attention_type"] == "synthesizer")),
    Flag(
        ("--recite_tokens", "5"), lambda r: _all(_recited_rows(r, 5), r.record.hyperparameters["recite_tokens"] == 5)
    ),
    # The record keeps how the model answers: with spans of its recitation shaped like the training answers (the
    # synthetic ones are capitalized places of one or two words: "Cape Town").
    Flag(
        ("--answer_from_recitation",),
        lambda r: _all(
            r.record.hyperparameters["answer_from_recitation"] is True,
            r.record.hyperparameters["answer_words"] == 2,
            r.record.hyperparameters["capitalized_answers"] is True,
        ),
    ),
    overwrite_row(),
]


def _predictions(run: Run, name: str) -> list[str]:
    """The lines of a predictions file, in the output folder or (`../NAME`) beside it."""
    folder, name = (run.out.parent, name[3:]) if name.startswith("../") else (run.out, name)
    return (folder / name).read_text(encoding="utf-8").splitlines()


# The pretrained model answers as its run record says: after a recitation of 4 tokens, then a generated answer.
BIRTHPLACE_EVALUATE_ROWS = [
    Flag(
        ("--model_name_or_path", "{tmp}/pretrain"),
        lambda r: _all(
            r.trained["metrics"]["predictions_from"] == str(r.out.parent / "pretrain"),
            r.trained["generation"][0]["max_new_tokens"] == 4,
            len(r.trained["generation"]) == 2,
        ),
    ),
    Flag(
        ("--eval_split", "test"),
        lambda r: _all(len(_predictions(r, "predictions_test.txt")) == r.trained["metrics"]["num_questions"] == 30),
    ),
    # Answers come last, after the recitations.
    Flag(("--max_new_tokens", "3"), lambda r: _all(r.trained["generation"][-1]["max_new_tokens"] == 3)),
]

# The finetuned model (`--recite_tokens 5 --answer_from_recitation`) answers as its run record says: every answer is
# one of the recitation spans the model scored (each recitation has the name's capitalized words), and none is
# generated: the one generation is the recitations'.
BIRTHPLACE_SPANS_ROWS = [
    Flag(
        ("--model_name_or_path", "{tmp}/finetune"),
        lambda r: _all(
            r.trained["generation"][0]["max_new_tokens"] == 5,
            len(r.trained["spans"]) == 1,
            set(_predictions(r, "predictions_test.txt")) <= set(r.trained["spans"][0]["answers"]),
            len(r.trained["generation"]) == 1,
        ),
    ),
]
SPANS_SCENARIO = ["--eval_split", "test"]

BIRTHPLACE_LONDON_ROWS = [
    Flag(
        ("--london_baseline",),
        lambda r: _all(
            set(_predictions(r, "../london.txt")) == {"London"},
            r.trained["metrics"]["predictions_from"] == "london_baseline",
        ),
    ),
    Flag(
        ("--predictions_file", "{tmp}/london.txt"),
        lambda r: _all(len(_predictions(r, "../london.txt")) == r.trained["metrics"]["num_questions"] > 0),
    ),
]


def _most_common_answer(run: Run) -> None:
    predictions = _predictions(run, "predictions_validation_most_common_baseline.txt")
    assert len(set(predictions)) == 1 and run.trained["metrics"]["predictions_from"] == "most_common_baseline"
    answers = [
        line.split("\t")[1] for line in (run.trained["data_dir"] / "birth_places_train.tsv").read_text().splitlines()
    ]
    assert answers.count(predictions[0]) == max(answers.count(a) for a in answers)


BIRTHPLACE_MOST_COMMON_ROWS = [
    Flag(("--most_common_baseline",), _most_common_answer),
    overwrite_row("report_evaluate_validation_most_common_baseline.json"),
]


def test_birthplace_pretrain_and_finetune_flags(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    """`pretrain`, `finetune`, then `evaluate` on the finetuned model and with the two baselines."""
    data = str(synthetic_birthplace_dir)
    base = ["pretrain", "--data_dir", data]
    run = run_scenario(monkeypatch, birthplace, base, BIRTHPLACE_PRETRAIN_ROWS, tmp_path / "pretrain")
    check_all(run, BIRTHPLACE_PRETRAIN_ROWS)

    base = [
        "finetune",
        "--data_dir",
        data,
        "--tokenizer_name_or_path",
        str(tiny_tokenizer_dir),
    ]
    run = run_scenario(monkeypatch, birthplace, base, BIRTHPLACE_FINETUNE_ROWS, tmp_path / "finetune")
    check_all(run, BIRTHPLACE_FINETUNE_ROWS)
    assert run.config["vocab_size"] == 600  # --tokenizer_name_or_path: the tokenizer's vocabulary

    generation = {
        "generation": (birthplace_qa, "greedy_completions"),
        "spans": (birthplace_qa, "answer_log_likelihoods"),
    }
    for name, rows, after in (
        ("evaluate", BIRTHPLACE_EVALUATE_ROWS, []),
        ("spans", BIRTHPLACE_SPANS_ROWS, [arg.format(tmp=tmp_path) for arg in SPANS_SCENARIO]),
        ("london", BIRTHPLACE_LONDON_ROWS, []),
        ("most_common", BIRTHPLACE_MOST_COMMON_ROWS, []),
    ):
        run = run_scenario(
            monkeypatch, birthplace, ["evaluate", "--data_dir", data], rows, tmp_path / name, after, spies=generation
        )
        run.trained["data_dir"] = synthetic_birthplace_dir
        check_all(run, rows)


# --------------------------------------------------------------------------------------------------
# tokenizer/train_tokenizer.py and `python -m hf_models.tokenization.courses`
# --------------------------------------------------------------------------------------------------
REPO_ROOT = Path(__file__).resolve().parents[1]


def load_script(path: str):
    """A command-line script that is not a module of the package (`tokenizer/train_tokenizer.py`, `push_to_hub.py`)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem + "_under_test", REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class TokenizerRun:
    out: Path
    summary: dict
    trained: dict


def _saved_max_length(run: TokenizerRun) -> int:
    return json.loads((run.out / "tokenizer_config.json").read_text(encoding="utf-8"))["model_max_length"]


TRAIN_TOKENIZER_ROWS = [
    Flag(("--min_frequency", "400"), lambda r: _all(r.summary["vocab_size"] < 700)),
    Flag(("--model_max_length", "77"), lambda r: _all(_saved_max_length(r) == 77)),
    Flag(("--max_chars", "3000"), lambda r: _all(3000 <= r.summary["train_chars"] < 3400)),
    Flag(("--no_progress",), lambda r: _all([call["show_progress"] for call in r.trained["training"]] == [False])),
    overwrite_row("tokenizer_config.json"),
]


def test_train_tokenizer_flags_reach_what_they_control(monkeypatch, tmp_path, synthetic_birthplace_dir, capsys):
    cli = load_script("tokenizer/train_tokenizer.py")
    trained = {"training": []}
    spy_on_calls(monkeypatch, cli, "train_bpe_tokenizer", trained["training"])
    out = tmp_path / "tok"
    for row in TRAIN_TOKENIZER_ROWS:
        if row.prepare is not None:
            row.prepare(out)
    flags = [arg for row in TRAIN_TOKENIZER_ROWS for arg in row.args]
    base = ["--files", str(synthetic_birthplace_dir / "wiki.txt"), "--vocab_size", "700", "--output_dir", str(out)]
    assert cli.main([*base, *flags]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    check_all(TokenizerRun(out, summary, trained), TRAIN_TOKENIZER_ROWS)


COURSES_ROWS = [
    # the course's character vocabulary of the synthetic wiki.txt (2 specials, then its characters) replaces it
    Flag(
        ("--overwrite_output_dir",),
        lambda r: _all(
            len(json.loads((r.out / "tokenizer.json").read_text())["model"]["vocab"]) == r.summary["characters"] + 2
        ),
        prepare=lambda out: overwrite_row("tokenizer.json").prepare(out),
    ),
]


def test_course_tokenizer_flags_reach_what_they_control(tmp_path, synthetic_birthplace_dir):
    from hf_models.tokenization import courses

    out = tmp_path / "chars"
    for row in COURSES_ROWS:
        row.prepare(out)
    flags = [arg for row in COURSES_ROWS for arg in row.args]
    courses.main(["cs224n-char", "--data_dir", str(synthetic_birthplace_dir), "--output_dir", str(out), *flags])
    characters = len(set((synthetic_birthplace_dir / "wiki.txt").read_text(encoding="utf-8")))
    check_all(TokenizerRun(out, {"characters": characters}, {}), COURSES_ROWS)


# --------------------------------------------------------------------------------------------------
# Every flag of every command line has a row
# --------------------------------------------------------------------------------------------------
# Flags whose row lives in another test file, next to the fixtures it needs: (the test, what it checks). The test
# must exist and its file must name the flag.
ELSEWHERE = {
    "--help_trainer": ("tests/test_help.py::test_help_trainer_lists_every_trainer_flag", "the flags it lists"),
    "--lab_vocabulary": (
        "tests/test_lab_sentencepiece.py::test_pretrain_on_raw_text_then_finetune_on_raw_reviews",
        "pretrain: the lab's ids over raw text, in the saved config's vocabulary; sentiment: "
        "tests/test_course_settings.py::test_sentiment_lab_vocabulary (the .spm pieces' ids)",
    ),
    "--lab_raw_text": (
        "tests/test_lab_sentencepiece.py::test_pretrain_on_raw_text_then_finetune_on_raw_reviews",
        "the saved tokenizer gives the raw review the pieces' ids",
    ),
    "--from_scratch": (
        "tests/test_recipes.py::test_finetune_sentiment_scratch_pretrained_frozen",
        "a new model from the preset, learning the toy signal",
    ),
    "--max_predict_samples": (
        "tests/test_arguments_file.py::test_max_predict_samples_caps_the_test_predictions",
        "finetune_sentiment: 4 test predictions; birthplace evaluate: "
        "test_a_finetuning_from_scratch_makes_its_tokenizer_and_a_smoke_test_predicts_few (7 answers)",
    ),
    "--course_vocabulary": (
        "tests/test_course_settings.py::test_birthplace_course_vocabulary_end_to_end",
        "the character vocabulary in the saved config, block 128, 60 predictions",
    ),
    "--birthplace": ("tests/test_push_to_hub.py::test_card_options_override_the_record", "the card"),
    "--language": ("tests/test_push_to_hub.py::test_card_options_override_the_record", "the card's language"),
    "--license": ("tests/test_push_to_hub.py::test_card_options_override_the_record", "the card's license"),
    "--repo_id": ("tests/test_push_to_hub.py::test_upload_calls_hfapi_with_repo_folder_and_allowlist", "the upload"),
    "--private": ("tests/test_push_to_hub.py::test_upload_calls_hfapi_with_repo_folder_and_allowlist", "the upload"),
    "--revision": ("tests/test_push_to_hub.py::test_upload_calls_hfapi_with_repo_folder_and_allowlist", "the upload"),
    "--commit_message": (
        "tests/test_push_to_hub.py::test_upload_calls_hfapi_with_repo_folder_and_allowlist",
        "the upload",
    ),
    "--dry_run": ("tests/test_push_to_hub.py::test_dry_run_writes_allowlisted_folder", "the folder written"),
    "--local_dir": ("tests/test_push_to_hub.py::test_dry_run_writes_allowlisted_folder", "the folder written"),
    "--overwrite": (
        "tests/test_bad_inputs.py::test_push_overwrite_replaces_only_its_own_export",
        "the export replaced",
    ),
    "--space": ("tests/test_app.py::test_space_upload_creates_a_gradio_space_after_the_model", "the Space upload"),
}
# What every scenario reads: a run without it has nothing to work on (the flags' errors: `test_bad_inputs.py`).
INPUTS = {"--data_dir", "--train_files", "--files", "--vocab_size", "--output_dir", "--tokenizer_name_or_path"}


def _own_flags(main: Callable, argv: list[str]) -> set[str]:
    """The flags of the parser whose `--help` a command line shows for `argv` (one name per flag)."""

    class HelpShown(Exception):
        pass

    shown = []

    def record_help(parser, file=None):
        shown.append(parser)
        raise HelpShown

    real = argparse.ArgumentParser.print_help
    argparse.ArgumentParser.print_help = record_help
    try:
        main(argv)
    except HelpShown:
        pass
    finally:
        argparse.ArgumentParser.print_help = real
    (parser,) = shown
    flags = {next(s for s in a.option_strings if s.startswith("--")) for a in parser._actions if a.option_strings}
    flags.discard("--help")
    return flags - {f"--no_{flag[2:]}" for flag in flags}  # HfArgumentParser's negation of a true-by-default flag


def _trainer_flags() -> set[str]:
    """Trainer's own `TrainingArguments` flags: out of scope here (the recipes give them no meaning of their own)."""
    from transformers import HfArgumentParser, TrainingArguments

    return _own_flags(HfArgumentParser(TrainingArguments).parse_args, ["--help"])


def _rows_flags(*tables: list[Flag]) -> set[str]:
    return {arg for rows in tables for row in rows for arg in row.args if arg.startswith("--")}


def test_every_flag_has_a_row():
    from test_convert import CONVERT_FLAG_ROWS

    from hf_models import convert
    from hf_models.tokenization import courses

    convert_rows = {arg for _, flags, _ in CONVERT_FLAG_ROWS for arg in flags if arg.startswith("--")}
    birthplace_rows = (
        BIRTHPLACE_PRETRAIN_ROWS,
        BIRTHPLACE_FINETUNE_ROWS,
        BIRTHPLACE_EVALUATE_ROWS,
        BIRTHPLACE_SPANS_ROWS,
        BIRTHPLACE_LONDON_ROWS,
        BIRTHPLACE_MOST_COMMON_ROWS,
    )
    commands = {
        "recipes/pretrain.py": (
            run_pretraining,
            [[]],
            _rows_flags(PRETRAIN_MLM_ROWS, PRETRAIN_SPAN_ROWS, PRETRAIN_SHARE_ROWS, PRETRAIN_CONTINUE_ROWS),
        ),
        "recipes/finetune_sentiment.py": (
            run_sentiment,
            [[]],
            _rows_flags(SENTIMENT_ROWS, SENTIMENT_LR_ROWS, SENTIMENT_TRANSFER_ROWS, SENTIMENT_CONTINUE_ROWS),
        ),
        "recipes/birthplace.py": (
            run_birthplace,
            [[step] for step in birthplace.SUBCOMMANDS],
            _rows_flags(*birthplace_rows),
        ),
        "tokenizer/train_tokenizer.py": (
            load_script("tokenizer/train_tokenizer.py").main,
            [[]],
            _rows_flags(TRAIN_TOKENIZER_ROWS),
        ),
        "hf_models.tokenization.courses": (courses.main, [[]], _rows_flags(COURSES_ROWS)),
        "hf_models.convert": (convert.main, [[]], convert_rows),
        "push_to_hub.py": (load_script("push_to_hub.py").main, [[]], set()),
    }
    missing, trainer = [], _trainer_flags()
    for command, (main, subcommands, rows) in commands.items():
        covered = rows | INPUTS | set(ELSEWHERE) | (trainer if command.startswith("recipes/") else set())
        for subcommand in subcommands:
            for flag in sorted(_own_flags(main, [*subcommand, "--help"]) - covered):
                missing.append(f"{command} {' '.join(subcommand)} {flag}".replace("  ", " "))
    assert not missing, "flags with no row (add one, or remove a flag that changes nothing):\n  " + "\n  ".join(
        missing
    )


@pytest.mark.parametrize("flag", sorted(ELSEWHERE))
def test_rows_elsewhere_exist_and_set_their_flag(flag):
    test, _ = ELSEWHERE[flag]
    path, name = test.split("::")
    source = (REPO_ROOT / path).read_text(encoding="utf-8")
    assert f"def {name}(" in source, f"{test} is gone"
    assert f'"{flag}"' in source, f"{path} never sets {flag}"
