"""`recipe [subcommand] CONFIG.json [--flag value ...]`: a config file's values, overridden by the flags after it;
its mistakes named in one line. And the flags that let a quick step stand alone: a finetuning from scratch that
makes its own tokenizer, and `--max_predict_samples`, which caps a smoke test's predictions."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import torch
from tiny import NO_NOISE, TINY_SIZES, run_birthplace, run_pretraining, run_sentiment
from transformers import TrainingArguments

from hf_models.tasks import pretraining
from hf_models.tasks.birthplace import DEFAULT_PRESET, subcommand_groups
from hf_models.textio import UsageError
from hf_models.training import ModelArguments, parse_args

CONFIGS = Path(__file__).resolve().parent.parent / "configs"  # the recipes' course files (their defaults)

QUIET = ["--use_cpu", *NO_NOISE, "--seed", "0"]


def _config(tmp_path, values, name: str = "config.json") -> str:
    path = tmp_path / name
    path.write_text(values if isinstance(values, str) else json.dumps(values), encoding="utf-8")
    return str(path)


def test_a_flag_beats_the_file_and_the_file_beats_the_default(tmp_path) -> None:
    config = _config(
        tmp_path,
        {
            "learning_rate": 6e-3,
            "num_train_epochs": 650,
            "attention_type": "synthesizer",
            "course_vocabulary": True,
            "max_steps": -1,
            "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
            "report_to": "none",
        },
    )
    groups = subcommand_groups("pretrain", DEFAULT_PRESET)
    task, model, training = parse_args(groups, [config, "--learning_rate", "1e-4", "--output_dir", "o"])
    assert isinstance(training, TrainingArguments)
    assert training.learning_rate == 1e-4  # the flag
    assert (training.num_train_epochs, training.max_steps, training.lr_scheduler_kwargs) == (
        650,
        -1,
        {"min_lr_rate": 0.1},
    )
    assert (model.attention_type, task.course_vocabulary, training.output_dir) == ("synthesizer", True, "o")
    _, _, defaults = parse_args(groups, ["--output_dir", "o"])
    assert training.weight_decay == defaults.weight_decay and task.block_size is None  # neither given: the defaults
    # A flag of the file turned off on the command line; the file alone is run_clm.py's arguments file.
    task, _, _ = parse_args(groups, [config, "--course_vocabulary", "false"])
    assert task.course_vocabulary is False
    _, _, training = parse_args(groups, [config])
    assert training.learning_rate == 6e-3
    # A list value, as nargs="+" reads it; a flag after the file replaces the whole list.
    lists = _config(tmp_path, {"train_files": ["a.txt", "b.txt"]}, "lists.json")
    data, _, _ = parse_args(pretraining.ARGUMENT_GROUPS, [lists])
    assert data.train_files == ["a.txt", "b.txt"]
    data, _, _ = parse_args(pretraining.ARGUMENT_GROUPS, [lists, "--train_files", "c.txt"])
    assert data.train_files == ["c.txt"]


def test_an_argparse_tool_reads_a_config_file(tmp_path) -> None:
    from test_flag_plumbing import load_script

    train_tokenizer = load_script("tokenizer/train_tokenizer.py")
    config = _config(tmp_path, {"vocab_size": 300, "no_progress": True, "min_frequency": 3})
    args = train_tokenizer.parse_args([config, "--files", "a.txt", "--output_dir", "o", "--min_frequency", "5"])
    assert (args.vocab_size, args.no_progress, args.min_frequency, args.files) == (300, True, 5, ["a.txt"])
    with pytest.raises(
        UsageError, match=r"config\.json: unknown key 'vocabulary_size': .* has no --vocabulary_size flag"
    ):
        train_tokenizer.parse_args([_config(tmp_path, {"vocabulary_size": 3}), "--files", "a", "--output_dir", "o"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"learning_rate": 1e-3, "num_train_epoch": 3}, r"config\.json: unknown key 'num_train_epoch': "),
        ({"london_baseline": True}, r"config\.json: unknown key 'london_baseline': .* has no --london_baseline flag"),
        ("[1, 2]", r"config\.json holds a JSON list; an arguments file holds one object"),
        ('"text"', r"config\.json holds a JSON str; an arguments file holds one object"),
        ('{"learning_rate": 1e-3,\n  oops', r"config\.json:2: not valid JSON"),
        (
            {"attention_type": "transformer"},
            r"config\.json: argument --attention_type\S*: invalid choice: 'transformer'",
        ),
        ({"variant": "synthesizer"}, r"config\.json: key 'variant' is now 'attention_type'"),
        ({"num_train_epochs": "many"}, r"config\.json: argument --num_train_epochs.*invalid float value: 'many'"),
    ],
)
def test_a_wrong_config_file_is_one_line_naming_the_file(tmp_path, content, message) -> None:
    groups = subcommand_groups("pretrain", DEFAULT_PRESET)
    with pytest.raises(UsageError, match=message) as error:
        parse_args(groups, [_config(tmp_path, content), "--output_dir", "o"])
    assert "\n" not in str(error.value)
    with pytest.raises(UsageError, match=r"nowhere\.json: arguments file not found"):
        parse_args(groups, [str(tmp_path / "nowhere.json")])


@pytest.mark.slow
def test_a_finetuning_from_scratch_makes_its_tokenizer_and_a_smoke_test_predicts_few(
    tmp_path, synthetic_birthplace_dir, capsys
) -> None:
    """No pretraining and no --tokenizer_name_or_path: the BPE that `pretrain` would train on wiki.txt, saved
    with the model; then `evaluate --max_predict_samples 7` answers the first 7 test questions only."""

    torch.set_num_threads(1)
    out, data = tmp_path / "nopretrain", str(synthetic_birthplace_dir)
    run_birthplace(
        ["finetune", "--data_dir", data, "--output_dir", str(out), "--tokenizer_vocab_size", "300"]
        + ["--config_overrides", TINY_SIZES, "--max_steps", "2", "--per_device_train_batch_size", "8", *QUIET]
    )
    tokenizer = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    assert len(tokenizer["model"]["vocab"]) == 300
    assert json.loads((out / "config.json").read_text())["vocab_size"] == 300
    metrics = run_birthplace(
        ["evaluate", "--data_dir", data, "--model_name_or_path", str(out), "--output_dir", str(out)]
        + ["--eval_split", "test", "--max_predict_samples", "7", "--use_cpu"]
    )
    assert metrics["num_questions"] == 7
    assert len((out / "predictions_test.txt").read_text(encoding="utf-8").splitlines()) == 7


@pytest.mark.slow
def test_max_predict_samples_caps_the_test_predictions(tmp_path, write_toy_cls_books, tiny_tokenizer_dir) -> None:
    torch.set_num_threads(1)
    books, out = write_toy_cls_books(tmp_path / "books"), tmp_path / "run"
    metrics = run_sentiment(
        ["--data_dir", str(books), "--from_scratch", "--tokenizer_name_or_path", str(tiny_tokenizer_dir)]
        + [
            "--config_overrides",
            TINY_SIZES,
            "--output_dir",
            str(out),
            "--max_steps",
            "3",
            "--max_predict_samples",
            "4",
        ]
        + ["--per_device_train_batch_size", "8", *QUIET]
    )
    assert len((out / "test_predictions.txt").read_text().splitlines()) == metrics["test_samples"] == 4


def test_a_yaml_file_reads_as_a_json_file(tmp_path) -> None:
    """As TRL's `TrlParser`: a YAML file of flags, overridden by the flags after it, its mistakes named as a JSON's."""
    groups = subcommand_groups("pretrain", DEFAULT_PRESET)
    values = "learning_rate: 0.006\nlr_scheduler_kwargs: {min_lr_rate: 0.1}\ncourse_vocabulary: true\nmax_steps: -1\n"
    config = _config(tmp_path, values, "config.yaml")
    task, _, training = parse_args(groups, [config, "--num_train_epochs", "2", "--output_dir", "o"])
    assert (training.learning_rate, training.num_train_epochs, training.max_steps) == (0.006, 2, -1)
    assert (training.lr_scheduler_kwargs, task.course_vocabulary) == ({"min_lr_rate": 0.1}, True)
    for content, message in [("num_train_epoch: 3", "unknown key 'num_train_epoch'"), ("a: [1", "not valid YAML")]:
        with pytest.raises(UsageError, match=rf"config\.yaml: {re.escape(message)}") as error:
            parse_args(groups, [_config(tmp_path, content, "config.yaml"), "--output_dir", "o"])
        assert "\n" not in str(error.value)


LAB_DROPOUTS = "embedding_dropout=0.0,attention_dropout=0.0,hidden_dropout=0.0,activation_dropout=0.0"


@pytest.mark.parametrize(
    ("command_line", "merged"),
    [
        (["--config_overrides", "hidden_size=64"], f"{LAB_DROPOUTS},hidden_size=64"),
        (  # a key of both: the flag's wins, the file's others stay
            ["--config_overrides=hidden_dropout=0.3,num_hidden_layers=1"],
            "embedding_dropout=0.0,attention_dropout=0.0,activation_dropout=0.0,hidden_dropout=0.3,num_hidden_layers=1",
        ),
        ([], LAB_DROPOUTS),
    ],
)
def test_config_overrides_of_the_flag_merge_with_the_files_key_by_key(tmp_path, command_line, merged) -> None:
    """The lab's file sets its dropouts to 0; `--config_overrides hidden_size=64` adds to them, not replaces them."""
    config = _config(tmp_path, {"model_config": "altegrad-lab", "config_overrides": LAB_DROPOUTS})
    _, model, _ = parse_args(
        subcommand_groups("pretrain", DEFAULT_PRESET), [config, *command_line, "--output_dir", "o"]
    )
    assert model.config_overrides == merged


def test_the_help_example_of_config_overrides_builds_a_model_config() -> None:
    """`--config_overrides hidden_size=64,dropout=0`, the flag's help example: `dropout` sets every dropout but the
    classifier's, in its place (a later key wins)."""
    from hf_models.training import build_config

    help_text = {spec.name: spec.metadata["help"] for spec in dataclasses.fields(ModelArguments)}["config_overrides"]
    assert "'hidden_size=64,dropout=0'" in help_text
    config = build_config("altegrad-lab", "hidden_size=64,dropout=0")
    dropouts = {name: value for name, value in config.to_dict().items() if name.endswith("_dropout")}
    assert config.hidden_size == 64 and len(dropouts) >= 5
    assert all(value == 0 for name, value in dropouts.items() if name != "classifier_dropout"), dropouts
    assert build_config("altegrad-lab", "dropout=0,hidden_dropout=0.2").hidden_dropout == 0.2
    assert build_config("altegrad-lab", "hidden_dropout=0.2,dropout=0").hidden_dropout == 0


def test_trainer_flags_are_training_arguments_own() -> None:
    """A recipe's Trainer flags are HfArgumentParser's own of TrainingArguments: the same flags, choices and defaults
    (an enum's shown as its value), and the same TrainingArguments from the same command line."""
    import argparse

    from transformers import HfArgumentParser

    from hf_models.training.arguments import TRAINER_RANGES, FlagGroup, build_parser

    def flags(parser):
        return {
            action.dest: (sorted(action.option_strings), action.nargs, action.choices and list(action.choices))
            for action in parser._actions
            if not isinstance(action, argparse._HelpAction)
        }

    every_flag = FlagGroup("Trainer arguments", TrainingArguments)
    real, ours = HfArgumentParser(TrainingArguments), build_parser([every_flag])
    assert flags(ours) == flags(real)
    real_defaults = {tuple(action.option_strings): action.default for action in real._actions}
    for action in ours._actions:
        default = real_defaults[tuple(action.option_strings)]
        assert action.default == getattr(default, "value", default), action.option_strings
    argv = [
        "--output_dir",
        "o",
        "--learning_rate",
        "3e-4",
        "--lr_scheduler_type",
        "cosine",
        "--eval_strategy",
        "epoch",
    ]
    argv += ["--lr_scheduler_kwargs", '{"num_cycles": 0.3}', "--no_dataloader_pin_memory", "--bf16", "false"]
    (expected,) = real.parse_args_into_dataclasses(argv)
    (training,) = parse_args([every_flag], argv)
    assert type(training) is TrainingArguments and training.to_dict() == expected.to_dict()
    assert set(TRAINER_RANGES) <= {spec.name for spec in dataclasses.fields(TrainingArguments)}


@pytest.mark.slow
def test_the_run_record_keeps_the_merged_config_overrides(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    """The file's dropouts and the flag's size, merged: the model is built from both, and the run record says so."""
    torch.set_num_threads(1)
    out = tmp_path / "run"
    config = _config(tmp_path, {"config_overrides": LAB_DROPOUTS, "block_size": 32, "max_steps": 1})
    run_pretraining(
        [config, "--train_files", str(synthetic_birthplace_dir / "wiki.txt"), "--output_dir", str(out)]
        + ["--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--config_overrides", f"{TINY_SIZES},hidden_act=gelu"]
        + ["--per_device_train_batch_size", "4", *QUIET]
    )
    record = json.loads((out / "run_record.json").read_text(encoding="utf-8"))
    assert record["config_overrides"] == f"{LAB_DROPOUTS},{TINY_SIZES},hidden_act=gelu"
    model_config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert (model_config["hidden_size"], model_config["hidden_act"], model_config["hidden_dropout"]) == (32, "gelu", 0)


def test_a_range_sits_beside_its_flag() -> None:
    """Our dataclasses keep a flag's range in its field's metadata (refused before any work); a range named apart
    from its flag (an argparse script's, TrainingArguments') must name an existing flag, or it is a bug."""
    import argparse

    from hf_models.safety import check_flag_ranges
    from hf_models.safety.ranges import POSITIVE
    from hf_models.tasks.pretraining import ARGUMENT_GROUPS

    with pytest.raises(UsageError, match=r"--mlm_probability 1\.5: give a number in \(0, 1\]"):
        parse_args(ARGUMENT_GROUPS, ["--train_files", "f", "--output_dir", "o", "--mlm_probability", "1.5"])
    with pytest.raises(UsageError, match=r"--per_device_train_batch_size 0: give a number > 0"):
        parse_args(ARGUMENT_GROUPS, ["--train_files", "f", "--output_dir", "o", "--per_device_train_batch_size", "0"])
    with pytest.raises(ValueError, match=r"ranges of flags that these arguments do not have: \['gone'\]"):
        check_flag_ranges(argparse.Namespace(kept=1), ranges={"kept": POSITIVE, "gone": POSITIVE})
    import hf_models.safety as safety

    assert not hasattr(safety, "FLAG_RANGES")  # no table of ranges apart from the flags


def _scheduler_of(training: TrainingArguments) -> torch.optim.lr_scheduler.LRScheduler:
    """The schedule Trainer builds from `training` (transformers' own `get_scheduler`, as `create_scheduler`)."""
    from transformers import get_scheduler

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=training.learning_rate)
    return get_scheduler(
        training.lr_scheduler_type,
        optimizer,
        num_warmup_steps=0,
        num_training_steps=10,
        scheduler_specific_kwargs=training.lr_scheduler_kwargs,
    )


@pytest.mark.parametrize("subcommand", ["pretrain", "finetune"])
def test_a_file_of_another_scheduler_starts_from_its_own_arguments(tmp_path, subcommand) -> None:
    # The course's file (the defaults) has cosine_with_min_lr and its min_lr_rate; plain cosine has no such argument.
    groups = subcommand_groups(subcommand, DEFAULT_PRESET, CONFIGS)
    _, _, course = parse_args(groups, ["--output_dir", "o"])
    assert course.lr_scheduler_type == "cosine_with_min_lr" and "min_lr_rate" in course.lr_scheduler_kwargs
    cosine = _config(tmp_path, {"lr_scheduler_type": "cosine"})
    for argv in ([cosine], ["--lr_scheduler_type", "cosine"], ["--lr_scheduler_type=cosine"]):
        _, _, training = parse_args(groups, [*argv, "--output_dir", "o"])
        assert training.lr_scheduler_type == "cosine"
        assert training.lr_scheduler_kwargs == TrainingArguments("o").lr_scheduler_kwargs  # Trainer's own
        _scheduler_of(training)  # was: TypeError, unexpected keyword argument 'min_lr_rate'
    # The same schedule keeps the file's arguments; arguments given with another schedule are that schedule's.
    same = _config(tmp_path, {"lr_scheduler_type": "cosine_with_min_lr"}, "same.json")
    _, _, training = parse_args(groups, [same, "--output_dir", "o"])
    assert training.lr_scheduler_kwargs == course.lr_scheduler_kwargs
    given = _config(tmp_path, {"lr_scheduler_type": "cosine", "lr_scheduler_kwargs": {"num_cycles": 0.25}}, "g.json")
    _, _, training = parse_args(groups, [given, "--output_dir", "o"])
    assert training.lr_scheduler_kwargs == {"num_cycles": 0.25}
    _, _, training = parse_args(groups, [cosine, "--lr_scheduler_kwargs", '{"num_cycles": 0.25}', "--output_dir", "o"])
    assert training.lr_scheduler_kwargs == {"num_cycles": 0.25}


def test_every_tied_default_goes_with_the_setting_it_was_written_for() -> None:
    from hf_models.training.arguments import TIED_FLAGS, FlagGroup

    written_for = {"lr_scheduler_type": "cosine_with_min_lr", "num_train_epochs": 5.0, "optim": "adafactor"}
    written_for["torch_compile"] = True
    tied = {"lr_scheduler_kwargs": '{"min_lr_rate": 0.1}', "max_steps": 100, "optim_args": "scale_parameter=False"}
    tied |= {"torch_compile_mode": "reduce-overhead", "torch_compile_backend": "inductor"}
    assert set(tied) == set(TIED_FLAGS)
    group = FlagGroup("Trainer", TrainingArguments, defaults={**written_for, **tied})
    (training,) = parse_args([group], ["--output_dir", "o"])
    assert training.max_steps == 100 and training.torch_compile_mode == "reduce-overhead"  # kept together
    assert (training.optim_args, training.lr_scheduler_kwargs) == ("scale_parameter=False", {"min_lr_rate": 0.1})
    own = {"lr_scheduler_type": "linear", "num_train_epochs": "2", "optim": "adamw_torch", "torch_compile": "false"}
    for lead, value in own.items():
        (training,) = parse_args([group], [f"--{lead}", value, "--output_dir", "o"])
        reset = {name for name in tied if getattr(training, name) in (None, {}, -1)}
        assert reset == {name for name, of in TIED_FLAGS.items() if of == lead}, lead
    (training,) = parse_args([group], ["--num_train_epochs", "2", "--output_dir", "o"])
    assert (training.num_train_epochs, training.max_steps) == (2, -1)  # the epochs given are the run's length
    (training,) = parse_args([group], ["--torch_compile", "false", "--output_dir", "o"])
    assert training.torch_compile is False  # not turned back on by a mode written for compiling


def test_a_flag_over_a_file_drops_the_files_setting_written_for_the_other_value(tmp_path) -> None:
    # The course's GPU pretraining file compiles in a mode; `--torch_compile false` after it compiles nothing
    # (TrainingArguments turns compiling back on for a mode); its schedule's arguments go with its schedule.
    groups = subcommand_groups("pretrain", DEFAULT_PRESET, CONFIGS)
    config = str(Path(__file__).resolve().parent.parent / "configs/cs224n/course/pretrain_vanilla.json")
    _, _, training = parse_args(groups, [config, "--torch_compile", "false", "--output_dir", "o"])
    assert (training.torch_compile, training.torch_compile_mode) == (False, None)
    _, _, training = parse_args(groups, [config, "--lr_scheduler_type", "cosine", "--output_dir", "o"])
    assert training.lr_scheduler_kwargs == TrainingArguments("o").lr_scheduler_kwargs
    _scheduler_of(training)
    _, _, training = parse_args(groups, [config, "--lr_scheduler_type", "cosine_with_min_lr", "--output_dir", "o"])
    assert training.lr_scheduler_kwargs["min_lr_rate"] == 0.1  # the value it was written beside: kept


@pytest.mark.parametrize("task", ["pretrain", "sentiment", "birthplace finetune", "birthplace evaluate"])
def test_a_missing_model_folder_is_named_as_the_model_not_its_tokenizer(task, tmp_path, synthetic_birthplace_dir):
    """The tokenizer is read from `--model_name_or_path` when no `--tokenizer_name_or_path` is given: a missing
    folder there is a missing model, and the one-line error names the flag (it once said "tokenizer folder not
    found")."""

    missing = str(tmp_path / "no-such-run")
    model = ["--model_name_or_path", missing]
    output = ["--output_dir", str(tmp_path / "out"), "--use_cpu", *NO_NOISE]
    data = ["--data_dir", str(synthetic_birthplace_dir)]
    command = {
        "pretrain": lambda: run_pretraining(
            ["--train_files", str(synthetic_birthplace_dir / "wiki.txt"), *model, *output]
        ),
        "sentiment": lambda: run_sentiment([*data, *model, *output]),
        "birthplace finetune": lambda: run_birthplace(["finetune", *data, *model, *output]),
        "birthplace evaluate": lambda: run_birthplace(["evaluate", *data, *model, "--use_cpu"]),
    }[task]
    with pytest.raises(UsageError, match=r"^--model_name_or_path \S+no-such-run: model folder not found"):
        command()
