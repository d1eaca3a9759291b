"""Nothing lost, nothing leaked: every user error is one line. Each command family (the recipes, the tokenizer
trainer, the course tokenizers, the data preparation, the conversion, the export, the benchmark tools), driven
in-process through `hf_models.safety.command_line` with one table of bad inputs (a used output folder, an output that
is an input or a link, arguments that their dataclasses or TrainingArguments refuse, damaged model, tokenizer and
checkpoint files, the machine's errors, numbers out of range, silent choices), answers with exactly one `error: ...`
line on stderr and exit status 2, without a traceback, and leaves every earlier file of its folder as it was and no
new file or folder (even an empty one) behind. A few run as the scripts themselves, for the exit status and the
stderr a shell sees; a real bug keeps its traceback; --overwrite_output_dir and --resume_from_checkpoint allow a used
folder; and a failed save or write leaves the old files."""

from __future__ import annotations

import builtins
import errno
import gzip
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grid
import pytest
import torch
import write_results
import yaml
from tiny import EVALUATE_QUIET, TINY, TINY_ONE_LAYER, TINY_SIZES, run_birthplace, run_pretraining, run_sentiment
from tiny import QUIET_ERRORS_ONLY as QUIET
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from hf_models import app, convert
from hf_models.run_record import read_record
from hf_models.safety import command_line, staged_save
from hf_models.textio import atomic_write, atomic_write_text, iter_text_lines
from hf_models.tokenization import courses, train_bpe_tokenizer

REPO_ROOT = Path(__file__).resolve().parent.parent
STEPS = ["--max_steps", "1", "--per_device_train_batch_size", "8", *QUIET]


def _script(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COMMANDS: dict[str, Callable] = {
    "pretrain": run_pretraining,
    "sentiment": run_sentiment,
    "birthplace": run_birthplace,
    "train_tokenizer": _script("tokenizer/train_tokenizer.py", "train_tokenizer_bad_inputs").main,
    "prepare_data": _script("recipes/prepare_data.py", "prepare_data_bad_inputs").main,
    "tfidf": _script("benchmarks/tfidf_baseline.py", "tfidf_bad_inputs").main,
    "plot_sentiment": _script("benchmarks/plot_sentiment.py", "plot_sentiment_bad_inputs").main,
    "plot_birthplace": _script("benchmarks/plot_birthplace.py", "plot_birthplace_bad_inputs").main,
    "course_table": _script("benchmarks/course_table.py", "course_table_bad_inputs").main,
    "push_to_hub": _script("push_to_hub.py", "push_to_hub_bad_inputs").main,
    "throughput": _script("benchmarks/throughput.py", "throughput_bad_inputs").main,
    "probe_facts": _script("benchmarks/probe_facts.py", "probe_facts_bad_inputs").main,
    "grid": grid.main,
    "write_results": write_results.main,
    "generate": _script("docs/generate.py", "generate_bad_inputs").main,
    "make": lambda argv: _make(argv),  # the grid's make targets, as a shell runs them
    "demo": _script("recipes/demo.py", "demo_bad_inputs").main,
    "convert": convert.main,
    "courses": courses.main,
    "app": app.main,
    "app_load": app.load_models,  # the app's models, loaded as it serves them (it would serve them next)
}


def _make(argv: list[str]) -> int:
    """`make -s TARGET VARIABLE=...` from the repository root (the install step taken as done): its stderr passed on,
    its exit status returned."""
    run = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", *argv], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    sys.stderr.write(run.stderr)
    return run.returncode


def _cls_books(folder: Path, one_class: bool = False) -> None:
    folder.mkdir()
    for split, n in (("train", 16), ("valid", 8), ("test", 4)):
        labels = [0 if one_class and split == "train" else i % 2 for i in range(n)]
        words = ["\u2581un \u2581livre \u2581" + ("superbe" if y else "ennuyeux") for y in labels]
        (folder / f"{split}.review.spm").write_text("".join(w + "\n" for w in words), encoding="utf-8")
        if split != "test":
            (folder / f"{split}.label").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")


def _copy(source: Path, target: Path, edit: Callable[[Path], None]) -> None:
    shutil.copytree(source, target)
    edit(target)


def _edit_json(name: str, **changes) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / name).write_text(json.dumps({**json.loads((folder / name).read_text()), **changes}))

    return edit


def _write(name: str, content: str | bytes) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())

    return edit


def _truncate(folder: Path) -> None:
    weights = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(weights[: len(weights) // 2])


def _files(root: Path, data: Path) -> None:
    """The bad files: archives, a named pipe, links, argument files, a foreign config, one-class reviews."""
    good = gzip.compress((data / "wiki.txt").read_bytes())
    (root / "truncated.txt.gz").write_bytes(good[: len(good) // 2])
    (root / "garbage.txt.gz").write_bytes(b"\x1f\x8b" + b"not a deflate stream" * 20)
    os.mkfifo(root / "pipe.txt")
    (root / "dangling.txt").symlink_to(root / "nowhere.txt")
    (root / "dev_link.tsv").symlink_to(data / "birth_dev.tsv")
    (root / "model_link").symlink_to(root / "model")
    (root / "list.json").write_text('["--output_dir", "x"]')
    torch.save({"tok_emb.weight": torch.zeros(8, 4)}, root / "corrupt.pt")  # a course checkpoint, cut short
    (root / "corrupt.pt").write_bytes((root / "corrupt.pt").read_bytes()[:200])
    (root / "gpt2.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 32, "n_layer": 1, "vocab_size": 300}))
    _cls_books(root / "cls")
    _cls_books(root / "cls_one_class", one_class=True)
    (root / "cls_run").mkdir()  # a sentiment run's folder: its record and plot
    (root / "cls_run" / "run_record.json").write_text("{}")
    (root / "cls_run" / "loss.png").write_bytes(b"\x89PNG a run's own plot")
    (root / "out_with_link").mkdir()  # an output folder whose tokenizer.json is a link to the input tokenizer's
    (root / "out_with_link" / "tokenizer.json").symlink_to(root / "tok" / "tokenizer.json")


def _round4(root: Path, data: Path) -> None:
    """Earlier work for the last kinds: a run to overwrite (its plot included), a folder of no text, a corpus of one
    huge line, a dangling output link, a folder of code files only, arguments files with a switch as a string and
    a null value, a folder named like one, a prepared split, a model whose tokenizer outgrew its vocabulary, and a
    one-layer, one-head model; for the export, a run folder with a stray weight shard and one with a corrupt record."""
    shutil.copytree(root / "model", root / "old_run")
    shutil.copytree(root / "model", root / "stray_shard")
    shutil.copy(root / "model" / "model.safetensors", root / "stray_shard" / "model-00001-of-00002.safetensors")
    _copy(root / "model", root / "corrupt_record", _write("run_record.json", '{"task": "birthplace-qa",'))
    (root / "no_text").mkdir()
    (root / "no_text" / ".notes").write_text("hidden, not text to train on")
    (root / "one_line.txt").write_text(" ".join(["mot"] * 4000) + "\n")
    (root / "dangling_out").symlink_to(root / "nowhere_out")
    (root / "code_only").mkdir()
    for code in (root / "model").glob("*.py"):
        shutil.copy(code, root / "code_only")
    (root / "folder.json").mkdir()
    switch = {"files": [str(data / "wiki.txt")], "vocab_size": 300, "no_progress": "false", "output_dir": "x"}
    (root / "switch_as_string.json").write_text(json.dumps(switch))
    # A null for a flag with a default (a flag whose default is None takes null as "not given").
    (root / "null_fraction.json").write_text(json.dumps({"tune_fraction": None}))
    shutil.copytree(data, root / "prep_root" / "birthplace")
    prepare_data = COMMANDS["prepare_data"]
    prepare_data(["birthplace-tune", "--data_root", str(root / "prep_root"), "--out", str(root / "prepared")])
    shutil.copytree(root / "model", root / "tokenizer_past_vocab")
    tokenizer = AutoTokenizer.from_pretrained(root / "model")
    tokenizer.add_tokens([f"<extra_{i}>" for i in range(8)])
    tokenizer.save_pretrained(root / "tokenizer_past_vocab")
    one_head = ["--config_overrides", TINY_ONE_LAYER.replace("num_attention_heads=2", "num_attention_heads=1")]
    run_birthplace(
        ["pretrain", "--data_dir", str(data), "--output_dir", str(root / "one_head"), "--tokenizer_name_or_path"]
        + [str(root / "tok"), *one_head, *STEPS]
    )


# Another recipe's or subcommand's key in an arguments file, for every recipe: (file name, its one key and value)
CROSSED_KEYS = {
    "birthplace-pretrain-given-evaluates": ("london_baseline", True),
    "birthplace-finetune-given-pretrains": ("pretraining_objective", "openings"),
    "birthplace-finetune-given-evaluates": ("eval_split", "test"),
    "birthplace-evaluate-given-finetunes": ("num_train_epochs", 1),
    "birthplace-evaluate-given-pretrains": ("opening_tokens", 8),
    "sentiment-given-pretrains": ("objective", "clm"),
    "pretrain-given-sentiments": ("freeze_backbone", True),
    "pretrain-given-birthplaces": ("pretraining_objective", "openings"),
    "train_tokenizer-given-prepare_datas": ("news_lines", 10),
    "prepare_data-birthplace-tune-given-sentiment-corpuss": ("news_lines", 10),
    "prepare_data-sentiment-corpus-given-birthplace-tunes": ("seed", 1),
    "demo-given-any": ("seed", 1),
}


def _round5(root: Path, data: Path) -> None:
    """Earlier work for the leftovers: real checkpoint-N folders of a sentiment run and of a birthplace pretraining,
    an arguments file per crossed recipe or subcommand, and profiles of the grid with counts out of range."""
    save = ["--save_strategy", "steps", "--save_steps", "1"]
    model_args = ["--tokenizer_name_or_path", str(root / "tok"), "--config_overrides", TINY_ONE_LAYER]
    run_birthplace(
        ["pretrain", "--data_dir", str(data), "--output_dir", str(root / "bp_run"), *model_args, *STEPS, *save]
    )
    cls_args = [a.format(root=root).replace(NEW.format(root=root), str(root / "cls_ckpt_run")) for a in _cls()]
    run_sentiment([*cls_args, *STEPS, *save])
    shutil.copytree(root / "bp_run" / "checkpoint-1", root / "bp_unfinished" / "checkpoint-1")  # no run record
    (root / "crossed").mkdir()
    for name, (key, value) in CROSSED_KEYS.items():
        (root / "crossed" / f"{name}.json").write_text(json.dumps({key: value}))
    (root / "profiles").mkdir()
    cpu = (grid.PROFILES_DIR / "cpu.yaml").read_text(encoding="utf-8")
    for name, (old, new, _) in BAD_PROFILES.items():
        assert old in cpu
        (root / "profiles" / f"{name}.yaml").write_text(cpu.replace(old, new, 1), encoding="utf-8")
    _round6(root, data)


def _bench_of(bench: Path, profile: str, recorded_as: str) -> None:
    """A whole bench folder of `profile`'s rows (tests/test_write_results.py's), each step's record naming
    `recorded_as` as the profile that made it."""
    from test_write_results import _bench

    _bench(bench, profile)
    for done in (bench / "steps").glob("*.done"):
        done.write_text(json.dumps({**json.loads(done.read_text()), "profile": recorded_as}) + "\n")


def _round6(root: Path, data: Path) -> None:
    """Earlier work for round 6: bench folders (this profile's, another's), a damaged results.json, a copy of the
    documents (one with a lost end mark, results that make two stale), a file where a run's folder goes; a run whose
    checkpoint's weights a kill cut short, a folder of links to another run's files, a run holding its own config
    and arguments file, an arguments file with a null --output_dir, and a corpus with blank lines."""
    _bench_of(root / "cpu_bench", "cpu", "cpu")
    _bench_of(root / "other_bench", "cpu", "course-cut")
    (root / "damaged_results.json").write_text('{"birthplace_dev_acc": {\n  "london": 0.05,\n')
    shutil.copy(REPO_ROOT / "benchmarks" / "results.json", root / "results.json")
    shutil.copy(REPO_ROOT / "benchmarks" / "levers.json", root / "levers.json")
    docs = root / "docs_tree"
    docs.mkdir()
    for name in ("README.md", "TESTING.md", "BENCHMARKS.md"):
        shutil.copy(REPO_ROOT / name, docs / name)
    shutil.copytree(REPO_ROOT / "docs", docs / "docs", ignore=shutil.ignore_patterns("*.py", "__pycache__", "images"))
    results = json.loads((root / "results.json").read_text())
    results["demo"]["wall_time_s"] += 600  # README.md and BENCHMARKS.md stale
    (root / "stale_results.json").write_text(json.dumps(results))
    shutil.copytree(docs, root / "docs_no_end")
    readme = (docs / "README.md").read_text()
    end = readme.index("<!-- end -->")
    (root / "docs_no_end" / "README.md").write_text(readme[:end] + readme[end + len("<!-- end -->") :])
    (root / "a_file").write_text("not a folder")
    shutil.copytree(root / "bp_run", root / "bp_cut")
    weights = root / "bp_cut" / "checkpoint-1" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    (root / "links_run").mkdir()
    for file in (root / "model").iterdir():
        (root / "links_run" / file.name).symlink_to(file)
    shutil.copytree(root / "model", root / "run_with_inputs")
    (root / "run_with_inputs" / "all_results.json").write_text(json.dumps({"max_steps": 1}))  # kept as arguments
    (root / "null_output.json").write_text(json.dumps({"output_dir": None}))
    _used_work(root, data)


def _used_work(root: Path, data: Path) -> None:
    """Earlier work for the used folders: an evaluated model (its predictions beside it), tokenizers smaller and
    larger than the model, a run holding a link out of it, a folder that is no export, a zip that is no checkpoint
    and a text file named like one, a broken arguments file, and an empty wiki.txt."""
    shutil.copytree(root / "model", root / "evaluated")
    evaluate = ["--model_name_or_path", str(root / "evaluated"), "--output_dir", str(root / "evaluated")]
    run_birthplace(["evaluate", "--data_dir", str(data), *evaluate, "--max_new_tokens", "2", *EVALUATE_QUIET])
    for name, vocab_size in (("tok_small", 300), ("tok_large", 700)):
        lines = iter_text_lines(data / "wiki.txt")
        train_bpe_tokenizer(lines, vocab_size=vocab_size, output_dir=root / name, show_progress=False)
    _copy(root / "model", root / "linked", lambda folder: (folder / "notes.png").symlink_to("/etc/passwd"))
    (root / "not_an_export").mkdir()
    (root / "not_an_export" / "notes.txt").write_text("mine")
    (root / "bad.pt").write_bytes(b"PK\x03\x04 not a checkpoint" * 10)
    (root / "notes.pt").write_text("not a checkpoint, not a zip archive\n")
    (root / "args.json").write_text('{"output_dir": "x",\n  broken')
    (root / "empty_data").mkdir()
    (root / "empty_data" / "wiki.txt").write_text("")


# Profiles of the grid whose counts are out of range: the cpu profile with one line changed, and what is said.
BAD_PROFILES = {
    "cores_0": ("cores: 2", "cores: 0", "cores 0: give a whole number of at least 1"),
    "cores_negative": ("cores: 2", "cores: -2", "cores -2: give a whole number of at least 1"),
    "budget_0": ("budgets: [24,", "budgets: [0,", "curve budget 0: give a whole number of at least 1"),
    "min_steps_negative": ("min_steps: 50", "min_steps: -1", "curve min_steps -1: give a whole number of at least 0"),
    "gpu_a_word": ("gpu: false", "gpu: maybe", "gpu 'maybe': give true or false"),
    "may_fail_a_string": (
        "timed: false, may_fail: true}",
        'timed: false, may_fail: "no"}',
        "step bp_plot: may_fail 'no': give true or false",
    ),
    "not_yaml": ("cores: 2", "cores: [2", "not valid YAML"),
}


def _yaml_error_line(name: str) -> int:
    """The line yaml reports for the bad profile `name` (where the parser found the problem)."""
    old, new, _ = BAD_PROFILES[name]
    try:
        yaml.safe_load((grid.PROFILES_DIR / "cpu.yaml").read_text(encoding="utf-8").replace(old, new, 1))
    except yaml.YAMLError as error:
        return error.problem_mark.line + 1
    raise AssertionError(f"{name} parses")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, synthetic_birthplace_dir: Path, tiny_tokenizer_dir: Path) -> Path:
    """A folder of earlier work: data, a tokenizer, a causal and a masked LM, and damaged copies of them."""
    root = tmp_path_factory.mktemp("bad_inputs")
    data = Path(shutil.copytree(synthetic_birthplace_dir, root / "data"))
    tok = Path(shutil.copytree(tiny_tokenizer_dir, root / "tok"))
    model_args = ["--tokenizer_name_or_path", str(tok), "--config_overrides", TINY_ONE_LAYER]
    run_birthplace(["pretrain", "--data_dir", str(data), "--output_dir", str(root / "model"), *model_args, *STEPS])
    run_pretraining(
        ["--objective", "mlm", "--train_files", str(data / "wiki.txt"), "--output_dir", str(root / "mlm")]
        + [*model_args, *STEPS]
    )
    model = root / "model"
    _copy(model, root / "truncated", _truncate)
    _copy(model, root / "garbage", _write("model.safetensors", b"\x00" * 64))
    _copy(model, root / "broken_config", _write("config.json", '{"model_type": "small-encoder",'))
    _copy(model, root / "gpt2_model", _edit_json("config.json", model_type="gpt2"))
    _copy(
        model,
        root / "wrong_vocab",
        _edit_json("config.json", vocab_size=json.loads((model / "config.json").read_text())["vocab_size"] + 8),
    )
    _copy(tok, root / "bad_tokenizer", _write("tokenizer.json", '{"version": "1.0", "model": 3}'))
    _copy(tok, root / "broken_tokenizer_config", _write("tokenizer_config.json", "{broken"))
    _files(root, data)
    _round4(root, data)
    _round5(root, data)
    return root


@dataclass(frozen=True)
class Row:
    """A command, its arguments (`{root}`: the folder of earlier work), what its one line says, and the error the
    machine gives to writes under `{root}/new` or `failing_under` (`(errno, whether folders fail too)`), if any."""

    command: str
    argv: list[str]
    expected: str
    failing_writes: tuple[int, bool] | None = None
    # the folder under `{root}` whose writes fail, and the file names that fail there (all when empty): a disk that
    # fills half-way through a save
    failing_under: str = "new"
    failing_names: tuple[str, ...] = ()
    # the machine's answer that no write patch reaches (given the folder of earlier work)
    patch: Callable[[pytest.MonkeyPatch, Path], None] | None = None


NEW = "{root}/new"  # a fresh output folder: the error must come before anything is written there


def _throughput(*args: str) -> list[str]:
    """A throughput run of a tiny model, training only (what a count flag reaches first)."""
    tiny = ["--config_overrides", TINY_SIZES, "--vocab_size", "300", "--seq_len", "16", "--batch_size", "2"]
    return [*tiny, "--steps", "1", "--warmup_steps", "0", "--repeats", "1", "--skip", "generation", "memory", *args]


# Each count flag of benchmarks/throughput.py at an edge: 0, negative (argparse keeps the last of a repeated flag).
THROUGHPUT_EDGES = [
    ("steps", "0"),
    ("repeats", "0"),
    ("warmup_steps", "-1"),
    ("threads", "0"),
    ("threads", "-2"),
    ("batch_size", "0"),
    ("seq_len", "0"),
    ("vocab_size", "0"),
    ("loss_chunk_size", "0"),
    ("new_tokens", "0"),
    ("prompt_len", "-1"),
    ("generation_repeats", "0"),
    ("max_batch_limit", "0"),
    ("dropout", "1"),
]


def _pre(*args: str) -> list[str]:
    model = ["--tokenizer_name_or_path", "{root}/tok", "--config_overrides", TINY_ONE_LAYER]
    return ["--train_files", "{root}/data/wiki.txt", *model, "--output_dir", NEW, *args, *QUIET]


def _bp(step: str, *args: str) -> list[str]:
    return [step, "--data_dir", "{root}/data", *args, *(EVALUATE_QUIET if step == "evaluate" else QUIET)]


def _finetune(model: str, *args: str) -> list[str]:
    return _bp("finetune", "--model_name_or_path", model, "--output_dir", NEW, *args)


def _cls(*args: str, data: str = "{root}/cls") -> list[str]:
    model = ["--from_scratch", "--tokenizer_name_or_path", "{root}/tok", "--config_overrides", TINY_ONE_LAYER]
    return ["--data_dir", data, *model, "--output_dir", NEW, *args, *QUIET]


def _tok(*args: str, files: str = "{root}/data/wiki.txt", output: str = NEW) -> list[str]:
    return ["--files", files, "--vocab_size", "300", "--no_progress", "--output_dir", output, *args]


ROWS: dict[str, Row] = {
    # 0. a used output folder, an output that is an input, an export, a checkpoint, the model and its tokenizer
    "pretrain-into-a-trained-model": Row("pretrain", _pre("--output_dir", "{root}/model"), "--overwrite_output_dir"),
    "finetune-over-its-own-model": Row(
        "birthplace",
        _bp("finetune", "--model_name_or_path", "{root}/model", "--output_dir", "{root}/model"),
        "is also --model_name_or_path",
    ),
    "convert-into-a-trained-run": Row(
        "convert", ["cs224n-mingpt", "{root}/bad.pt", "--output_dir", "{root}/model"], "already holds earlier output"
    ),
    "tokenizer-into-a-model-folder": Row(
        "train_tokenizer",
        ["--files", "{root}/data/wiki.txt", "--vocab_size", "300", "--output_dir", "{root}/model"],
        "--overwrite_output_dir",
    ),
    "evaluate-again-over-its-predictions": Row(
        "birthplace",
        _bp("evaluate", "--model_name_or_path", "{root}/evaluated", "--output_dir", "{root}/evaluated"),
        "already exists",
    ),
    "london-over-the-model-predictions": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--predictions_file", "{root}/evaluated/predictions_validation.txt"),
        "already exists",
    ),
    "predictions-over-the-dev-data": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--predictions_file", "{root}/data/birth_dev.tsv"),
        "is also --data_dir",
    ),
    "push-overwrite-deletes-a-foreign-folder": Row(
        "push_to_hub",
        ["{root}/model", "--dry_run", "--local_dir", "{root}/not_an_export", "--overwrite"],
        "did not export",
    ),
    "push-follows-a-link": Row("push_to_hub", ["{root}/linked", "--dry_run", "--local_dir", NEW], "symbolic link"),
    "push-truncated-weights": Row("push_to_hub", ["{root}/truncated", "--dry_run", "--local_dir", NEW], "truncated"),
    "push-config-not-the-weights": Row(
        "push_to_hub", ["{root}/wrong_vocab", "--dry_run", "--local_dir", NEW], "do not match config.json"
    ),
    "tokenizer-smaller-than-the-model": Row(
        "birthplace",
        _finetune("{root}/model", "--tokenizer_name_or_path", "{root}/tok_small"),
        "has 300 tokens but the model",
    ),
    "tokenizer-larger-than-the-model": Row(
        "birthplace",
        _finetune("{root}/model", "--tokenizer_name_or_path", "{root}/tok_large"),
        "has 700 tokens but the model",
    ),
    "block-size-0": Row("pretrain", _pre("--block_size", "0", "--config_overrides", TINY), "--block_size 0"),
    "block-size-past-the-positions": Row(
        "birthplace",
        _bp("pretrain", "--tokenizer_name_or_path", "{root}/tok", "--config_overrides", TINY)
        + ["--block_size", "65", "--output_dir", NEW],
        "max_position_embeddings=64",
    ),
    "max-steps-negative": Row("pretrain", _pre("--max_steps", "-3"), "--max_steps -3"),
    "resume-from-a-missing-checkpoint": Row(
        "pretrain",
        _pre("--resume_from_checkpoint", "{root}/model/checkpoint-9"),
        "--resume_from_checkpoint {root}/model/checkpoint-9 does not exist",
    ),
    "sentiment-resume-from-a-file": Row(
        "sentiment",
        _cls("--resume_from_checkpoint", "{root}/bad.pt"),
        "--resume_from_checkpoint {root}/bad.pt is a file",
    ),
    "birthplace-resume-from-a-missing-checkpoint": Row(
        "birthplace",
        _finetune("{root}/model", "--resume_from_checkpoint", "{root}/nowhere"),
        "--resume_from_checkpoint {root}/nowhere does not exist",
    ),
    "max-seq-length-0": Row("sentiment", _cls("--max_seq_length", "0"), "--max_seq_length 0"),
    "course-tokenizer-on-an-empty-wiki": Row(
        "courses", ["cs224n-char", "--data_dir", "{root}/empty_data", "--output_dir", NEW], "wiki.txt: file is empty"
    ),
    "bad-config-override-value": Row(
        "pretrain", _pre("--config_overrides", "hidden_size=big"), "--config_overrides 'hidden_size=big'"
    ),
    "config-that-breaks-a-rule": Row(
        "pretrain", _pre("--config_overrides", "hidden_size=30,num_attention_heads=4"), "the model config"
    ),
    "broken-arguments-json": Row("pretrain", ["{root}/args.json"], "args.json:2: not valid JSON"),
    "corrupt-checkpoint": Row(
        "convert", ["cs224n-mingpt", "{root}/bad.pt", "--output_dir", NEW], "not a PyTorch state dict"
    ),
    # torch's message here is advice to unpickle with weights_only=False (running the file's code): never shown
    "text-file-as-checkpoint": Row(
        "convert",
        ["cs224n-mingpt", "{root}/notes.pt", "--output_dir", NEW],
        "never unpickled with weights_only=False",
    ),
    "missing-corpus": Row("pretrain", _pre("--train_files", "{root}/nowhere.txt"), "nowhere.txt"),
    "birthplace-no-subcommand": Row("birthplace", ["--data_dir", "{root}/data"], "usage: birthplace.py"),
    # 1. at the command-line boundary: the dataclasses' own checks, damaged files, the machine
    "bf16-and-fp16": Row("pretrain", _pre("--bf16", "--fp16"), "At most one of fp16 and bf16"),
    "best-model-without-matching-strategies": Row(
        "pretrain", _pre("--load_best_model_at_end", "--eval_strategy", "epoch"), "--load_best_model_at_end requires"
    ),
    "augment-copies-0": Row(
        "birthplace", _bp("pretrain", "--augment_copies", "0", "--output_dir", NEW), "--augment_copies"
    ),
    "arguments-file-holding-a-list": Row("pretrain", ["{root}/list.json"], "list.json holds a JSON list"),
    "a-float-flag-given-a-word": Row("pretrain", _pre("--learning_rate", "fast"), "invalid float value: 'fast'"),
    "an-unknown-choice": Row("pretrain", _pre("--objective", "gpt"), "invalid choice: 'gpt'"),
    "a-required-flag-missing": Row("train_tokenizer", ["--vocab_size", "300"], "required: --files"),
    "truncated-weights": Row("birthplace", _finetune("{root}/truncated"), "model.safetensors) cannot be read"),
    "garbage-weights-evaluated": Row(
        "birthplace", _bp("evaluate", "--model_name_or_path", "{root}/garbage"), "model.safetensors) cannot be read"
    ),
    "config-json-not-json": Row("birthplace", _finetune("{root}/broken_config"), "config.json:1: not valid JSON"),
    "config-vocab-not-the-weights": Row(
        "birthplace",
        _finetune("{root}/wrong_vocab", "--tokenizer_name_or_path", "{root}/tok"),
        "do not have the shapes its config.json gives",
    ),
    "tokenizer-json-not-a-tokenizer": Row(
        "pretrain", _pre("--tokenizer_name_or_path", "{root}/bad_tokenizer"), "tokenizer.json is not a tokenizers file"
    ),
    "tokenizer-config-not-json": Row(
        "pretrain",
        _pre("--tokenizer_name_or_path", "{root}/broken_tokenizer_config"),
        "tokenizer_config.json:1: not valid JSON",
    ),
    "read-only-output-folder": Row("train_tokenizer", _tok(), "new: read-only file system", (errno.EROFS, True)),
    "output-folder-not-permitted": Row("train_tokenizer", _tok(), "new: permission denied", (errno.EACCES, True)),
    "full-disk": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--output_dir", NEW),
        "predictions_validation_london_baseline.txt: no space left on the device",
        (errno.ENOSPC, False),
    ),
    "output-name-too-long": Row("train_tokenizer", _tok(output="{root}/" + "x" * 300), "file name too long"),
    "a-dangling-link-as-corpus": Row(
        "pretrain", _pre("--train_files", "{root}/dangling.txt"), "a symbolic link to {root}/nowhere.txt"
    ),
    "a-named-pipe-as-corpus": Row("train_tokenizer", _tok(files="{root}/pipe.txt"), "is a named pipe (FIFO)"),
    "dev-null-as-corpus": Row("pretrain", _pre("--train_files", "/dev/null"), "/dev/null is a character device"),
    "vocab-size-past-tokenizers-range": Row(
        "train_tokenizer", _tok("--vocab_size", str(2**40)), f"--vocab_size {2**40}"
    ),
    "negative-min-frequency": Row("train_tokenizer", _tok("--min_frequency", "-1"), "--min_frequency -1"),
    "a-corrupt-gz-corpus": Row(
        "pretrain", _pre("--train_files", "{root}/garbage.txt.gz"), "garbage.txt.gz: corrupt or truncated gzip"
    ),
    "a-truncated-gz-corpus": Row(
        "train_tokenizer", _tok(files="{root}/truncated.txt.gz"), "truncated.txt.gz: corrupt or truncated gzip"
    ),
    # 2. numeric flags, where they are parsed
    "learning-rate-nan": Row("pretrain", _pre("--learning_rate", "nan"), "--learning_rate nan"),
    "learning-rate-negative": Row(
        "birthplace", _finetune("{root}/model", "--learning_rate", "-0.001"), "--learning_rate -0.001"
    ),
    "learning-rate-inf": Row("sentiment", _cls("--learning_rate", "inf"), "--learning_rate inf"),
    "train-batch-0": Row("pretrain", _pre("--per_device_train_batch_size", "0"), "--per_device_train_batch_size 0"),
    "eval-batch-0": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--per_device_eval_batch_size", "0"),
        "--per_device_eval_batch_size 0",
    ),
    "gradient-accumulation-0": Row(
        "sentiment", _cls("--gradient_accumulation_steps", "0"), "--gradient_accumulation_steps 0"
    ),
    "epochs-nan": Row("pretrain", _pre("--num_train_epochs", "nan"), "--num_train_epochs nan"),
    "epochs-inf": Row("sentiment", _cls("--num_train_epochs", "inf"), "--num_train_epochs inf"),
    "seed-negative": Row("pretrain", _pre("--seed", "-1"), "--seed -1"),
    "warmup-negative": Row("pretrain", _pre("--warmup_steps", "-1"), "warmup_steps"),
    "logging-steps-negative": Row("pretrain", _pre("--logging_steps", "-5"), "--logging_steps -5"),
    "eval-steps-negative": Row("pretrain", _pre("--eval_strategy", "steps", "--eval_steps", "-2"), "eval_steps"),
    "max-eval-samples-0": Row("pretrain", _pre("--max_eval_samples", "0"), "--max_eval_samples 0"),
    "max-train-samples-0": Row("sentiment", _cls("--max_train_samples", "0"), "--max_train_samples 0"),
    "validation-split-100": Row(
        "pretrain", _pre("--validation_split_percentage", "100"), "--validation_split_percentage 100"
    ),
    "validation-split-negative": Row(
        "pretrain", _pre("--validation_split_percentage", "-5"), "--validation_split_percentage -5"
    ),
    "mlm-probability-past-1": Row(
        "pretrain", _pre("--objective", "mlm", "--mlm_probability", "1.5"), "--mlm_probability 1.5"
    ),
    "mlm-probability-nan": Row(
        "pretrain", _pre("--objective", "mlm", "--mlm_probability", "nan"), "--mlm_probability nan"
    ),
    "model-max-length-negative": Row("train_tokenizer", _tok("--model_max_length", "-1"), "--model_max_length -1"),
    "vocab-size-0": Row("train_tokenizer", _tok("--vocab_size", "0"), "--vocab_size 0"),
    "prepare-negative-line-count": Row(
        "prepare_data",
        ["sentiment-corpus", "--data_root", "{root}", "--out", NEW, "--news_lines", "-1"],
        "--news_lines -1",
    ),
    "prepare-corpus-of-no-size": Row(
        "prepare_data",
        ["sentiment-corpus", "--data_root", "{root}", "--out", NEW, "--news_lines", "3"],
        "sentiment-corpus needs --novel_lines",
    ),
    "prepare-fraction-past-1": Row(
        "prepare_data",
        ["birthplace-tune", "--data_root", "{root}", "--out", NEW, "--tune_fraction", "1.5"],
        "--tune_fraction 1.5",
    ),
    # 3. no silent choice
    "empty-output-dir": Row("pretrain", _pre("--output_dir", ""), "--output_dir is empty"),
    "empty-evaluate-output-dir": Row(
        "birthplace", _bp("evaluate", "--london_baseline", "--output_dir", ""), "--output_dir is empty"
    ),
    "gpt2-config-as-model-config": Row(
        "pretrain",
        _pre("--model_config", "{root}/gpt2.json", "--config_overrides", "hidden_size=32"),
        "model_type 'gpt2'",
    ),
    "gpt2-config-in-the-model-folder": Row("birthplace", _finetune("{root}/gpt2_model"), "model_type 'gpt2'"),
    "override-of-the-tokenizers-vocab-size": Row(
        "pretrain", _pre("--config_overrides", TINY_ONE_LAYER + ",vocab_size=999"), "--config_overrides vocab_size"
    ),
    "override-of-an-unknown-key": Row("pretrain", _pre("--config_overrides", "hiden_size=32"), "hiden_size"),
    "evaluate-a-model-and-a-baseline": Row(
        "birthplace",
        _bp("evaluate", "--model_name_or_path", "{root}/model", "--london_baseline"),
        "--model_name_or_path and --london_baseline",
    ),
    "evaluate-two-baselines": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--most_common_baseline"),
        "--london_baseline and --most_common_baseline",
    ),
    "masked-lm-finetuned-to-generate": Row("birthplace", _finetune("{root}/mlm"), "is a bidirectional model"),
    "masked-lm-evaluated-as-causal": Row(
        "birthplace", _bp("evaluate", "--model_name_or_path", "{root}/mlm"), "is a bidirectional model"
    ),
    "masked-lm-continued-as-causal-lm": Row(
        "pretrain",
        ["--train_files", "{root}/data/wiki.txt", "--model_name_or_path", "{root}/mlm", "--output_dir", NEW, *QUIET],
        "is a bidirectional model",
    ),
    "sentiment-with-one-class": Row("sentiment", _cls(data="{root}/cls_one_class"), "every training label is 0"),
    # 4. no write over an input, none through a link
    "predictions-through-a-link-to-the-dev-set": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--predictions_file", "{root}/dev_link.tsv"),
        "is a symbolic link",
    ),
    "output-folder-a-link-to-the-model": Row(
        "birthplace", _finetune("{root}/model", "--output_dir", "{root}/model_link"), "is also --model_name_or_path"
    ),
    "output-folder-holding-a-link-to-an-input": Row(
        "pretrain",
        _pre("--output_dir", "{root}/out_with_link", "--overwrite_output_dir"),
        "holds links to the command's inputs",
    ),
    "tfidf-over-a-runs-report": Row(
        "tfidf", ["--data_dir", "{root}/cls", "--output_dir", "{root}/model"], "already holds earlier output"
    ),
    "plot-over-a-runs-own-plot": Row(
        "plot_sentiment", ["--runs", "a={root}/cls_run", "--output", "{root}/cls_run/loss.png"], "is also --runs"
    ),
    # 5. the converter and the app
    "convert-a-corrupt-checkpoint": Row(
        "convert",
        ["cs224n-mingpt", "{root}/corrupt.pt", "--output_dir", NEW],
        "corrupt.pt: not a PyTorch state dict, or a corrupt one",
    ),
    "app-over-a-missing-model-folder": Row("app", ["{root}/no_such_run"], "no_such_run: no such run folder"),
    # 6. round 4: the last kinds, one row each
    "full-disk-half-way-through-an-overwrite": Row(
        "pretrain",
        _pre("--output_dir", "{root}/old_run", "--overwrite_output_dir", "--max_steps", "1"),
        "old_run/all_results.json: no space left on the device",
        (errno.ENOSPC, False),
        failing_under="old_run",
        failing_names=("all_results.json",),
    ),
    "full-disk-half-way-through-a-new-run": Row(
        "pretrain",
        _pre("--max_steps", "1"),
        "new/all_results.json: no space left on the device",
        (errno.ENOSPC, False),
        failing_names=("all_results.json",),
    ),
    "full-disk-in-the-tokenizers-library": Row(
        "train_tokenizer",
        _tok("--overwrite_output_dir", output="{root}/old_run"),
        "old_run: no space left on the device",
        patch=lambda patch, world: patch.setattr(PreTrainedTokenizerFast, "save_pretrained", _rust_full_disk),
    ),
    "output-dir-a-dangling-link": Row(
        "train_tokenizer", _tok(output="{root}/dangling_out"), "is a symbolic link to {root}/nowhere_out"
    ),
    "output-dir-a-link-to-the-corpus": Row(
        "train_tokenizer", _tok(output="{root}/dev_link.tsv", files="{root}/data/birth_dev.tsv"), "is also --files"
    ),
    "a-folder-of-no-text": Row("pretrain", _pre("--train_files", "{root}/no_text"), "no_text: the folder holds no"),
    "one-huge-line-to-split": Row(
        "pretrain", _pre("--train_files", "{root}/one_line.txt"), "one_line.txt: 1 line(s) of text"
    ),
    "app-over-truncated-weights": Row("app", ["{root}/truncated"], "model.safetensors) cannot be read"),
    "app-over-a-tokenizer-past-the-vocabulary": Row("app_load", ["{root}/tokenizer_past_vocab"], "its tokenizer has"),
    "resume-from-code-files-only": Row(
        "pretrain", _pre("--resume_from_checkpoint", "{root}/code_only"), "code_only holds no trainer_state.json"
    ),
    "resume-from-another-tasks-run-folder": Row(
        "birthplace",
        _finetune("{root}/model", "--resume_from_checkpoint", "{root}/mlm"),
        "mlm is a finished run's folder, not a checkpoint",
    ),
    "evaluate-into-another-models-record": Row(
        "birthplace",
        _bp("evaluate", "--model_name_or_path", "{root}/one_head", "--output_dir", "{root}/model"),
        "holds the run record",
    ),
    "evaluate-into-its-data-folder": Row(
        "birthplace",
        _bp("evaluate", "--london_baseline", "--output_dir", "{root}/data"),
        "evaluate never writes into its data folder",
    ),
    "prepare-again-with-another-seed": Row(
        "prepare_data",
        ["birthplace-tune", "--data_root", "{root}/prep_root", "--out", "{root}/prepared", "--seed", "1"],
        "holds another split",
    ),
    "prepare-into-an-empty-out": Row(
        "prepare_data", ["birthplace-tune", "--data_root", "{root}/prep_root", "--out", ""], "--out is empty"
    ),
    "arguments-file-a-folder": Row("pretrain", ["{root}/folder.json"], "folder.json is a folder"),
    "arguments-file-switch-as-a-string": Row(
        "train_tokenizer", ["{root}/switch_as_string.json", "--output_dir", NEW], "'no_progress' is a switch"
    ),
    "arguments-file-null-value": Row(
        "prepare_data",
        ["birthplace-tune", "{root}/null_fraction.json", "--data_root", "{root}", "--out", NEW],
        "'tune_fraction' is null",
    ),
    "export-a-stray-weight-shard": Row(
        "push_to_hub",
        ["{root}/stray_shard", "--dry_run", "--local_dir", NEW],
        "stray weight shards model-00001-of-00002.safetensors",
    ),
    "export-a-corrupt-run-record": Row(
        "push_to_hub", ["{root}/corrupt_record", "--dry_run", "--local_dir", NEW], "run_record.json: not a run record"
    ),
    "max-predict-samples-0": Row(
        "birthplace", _bp("evaluate", "--london_baseline", "--max_predict_samples", "0"), "--max_predict_samples 0"
    ),
    "max-predict-samples-negative": Row("sentiment", _cls("--max_predict_samples", "-1"), "--max_predict_samples -1"),
    "plot-a-pretraining-run-as-sentiment": Row(
        "plot_sentiment", ["--runs", "a={root}/model", "--output", "{root}/new/plot.png"], "not a sentiment one"
    ),
    "plot-a-missing-bench-folder": Row(
        "plot_birthplace",
        ["--bench_dir", "{root}/no_bench", "--output", "{root}/new/plot.png"],
        "no_bench: no such folder",
    ),
    "table-of-a-missing-bench-folder": Row(
        "course_table", ["cs224n", "--bench_dir", "{root}/no_bench"], "--bench_dir {root}/no_bench: no such folder"
    ),
}


def _crossed(name: str) -> list[str]:
    """The command line of a crossed-keys row: the arguments file where the recipe takes one, and what it needs."""
    file = f"{{root}}/crossed/{name}.json"
    if name.startswith("birthplace-"):
        step = name.split("-")[1]
        flags = _bp(step, "--model_name_or_path", "{root}/model") if step == "evaluate" else _finetune("{root}/model")
        return (
            [step, file, *flags[1:]]
            if step != "pretrain"
            else ["pretrain", file, *_bp("pretrain", "--output_dir", NEW)[1:]]
        )
    if name.startswith("prepare_data-"):
        what = name.removeprefix("prepare_data-").split("-given-")[0]
        return [what, file, "--data_root", "{root}/prep_root", "--out", NEW]
    return {
        "sentiment": [file, *_cls()],
        "pretrain": [file, *_pre()],
        "train_tokenizer": [file, *_tok()],
        "demo": [file, "--output_dir", NEW],
    }[name.split("-")[0]]


def _crossed_expected(name: str) -> str:
    key = CROSSED_KEYS[name][0]
    if name.startswith("prepare_data-"):
        return f"{name}.json: key {key!r} is for"
    if name.startswith("demo-"):
        return f"unrecognized arguments: {{root}}/crossed/{name}.json"
    return f"{{root}}/crossed/{name}.json: unknown key {key!r}"


ROWS.update(
    {
        # 7. another recipe's or subcommand's key in an arguments file, for every recipe: refused, naming key and file
        **{
            f"arguments-file-{name}-key": Row(name.split("-")[0], _crossed(name), _crossed_expected(name))
            for name in CROSSED_KEYS
        },
        # 4. a resume from another task's real checkpoint-N folder: its model, or its finished run's record
        "resume-pretraining-from-a-sentiment-checkpoint": Row(
            "pretrain",
            _pre("--resume_from_checkpoint", "{root}/cls_ckpt_run/checkpoint-1", "--max_steps", "2"),
            "another task's checkpoint (a SmallEncoderForSequenceClassification",
        ),
        "resume-sentiment-from-a-birthplace-checkpoint": Row(
            "sentiment",
            _cls("--resume_from_checkpoint", "{root}/bp_run/checkpoint-1", "--max_steps", "2"),
            "another task's checkpoint (a SmallEncoderForCausalLM",
        ),
        "resume-finetuning-from-a-pretraining-checkpoint": Row(
            "birthplace",
            _finetune("{root}/model", "--resume_from_checkpoint", "{root}/bp_run/checkpoint-1", "--max_steps", "2"),
            "is a birthplace-pretraining run; this command is birthplace-qa",
        ),
        "resume-pretraining-from-a-birthplace-checkpoint": Row(
            "pretrain",
            _pre("--resume_from_checkpoint", "{root}/bp_run/checkpoint-1", "--max_steps", "2"),
            "is a birthplace-pretraining run; this command is pretraining",
        ),
        # nothing left behind: a disk that fills after evaluate's predictions, at its report, leaves no new folder
        "full-disk-at-evaluates-report": Row(
            "birthplace",
            _bp("evaluate", "--london_baseline", "--output_dir", NEW),
            "report_evaluate_validation_london_baseline.json: no space left on the device",
            (errno.ENOSPC, False),
            failing_names=("report_evaluate_validation_london_baseline.json",),
        ),
        "full-disk-at-tfidfs-report": Row(
            "tfidf",
            ["--data_dir", "{root}/cls", "--output_dir", NEW],
            "new/report.json: no space left on the device",
            (errno.ENOSPC, False),
            failing_names=("report.json",),
        ),
        "full-disk-at-the-second-prepared-file": Row(
            "prepare_data",
            ["birthplace-tune", "--data_root", "{root}/prep_root", "--out", NEW],
            "birth_dev.tsv: no space left on the device",
            (errno.ENOSPC, False),
            failing_names=("birth_dev.tsv",),
        ),
        "resume-pretraining-from-an-unfinished-birthplace-checkpoint": Row(
            "pretrain",
            _pre("--resume_from_checkpoint", "{root}/bp_unfinished/checkpoint-1", "--max_steps", "2"),
            "saved by a birthplace-pretraining run; this command is pretraining",
        ),
        # 8. the benchmark scripts' count flags: 0, negative, or past the data
        **{
            f"throughput-{flag}-{value}": Row("throughput", _throughput(f"--{flag}", value), f"--{flag} {value}: give")
            for flag, value in THROUGHPUT_EDGES
        },
        "tfidf-label-budget-0": Row(
            "tfidf", ["--data_dir", "{root}/cls", "--output_dir", NEW, "--label_budget", "0"], "--label_budget 0"
        ),
        "tfidf-label-budget-past-the-data": Row(
            "tfidf",
            ["--data_dir", "{root}/cls", "--output_dir", NEW, "--label_budget", "1000"],
            "--label_budget 1000: 500 examples of label",
        ),
        "tfidf-seed-negative": Row(
            "tfidf",
            ["--data_dir", "{root}/cls", "--output_dir", NEW, "--label_budget", "4", "--seed", "-1"],
            "--seed -1",
        ),
        "probe-facts-recite-tokens-0": Row(
            "probe_facts",
            ["--data_dir", "{root}/data", "--model_name_or_path", "{root}/model", "--recite_tokens", "0"],
            "--recite_tokens 0: give",
        ),
        "probe-facts-recite-tokens-negative": Row(
            "probe_facts",
            ["--data_dir", "{root}/data", "--model_name_or_path", "{root}/model", "--recite_tokens", "-4"],
            "--recite_tokens -4: give",
        ),
        "probe-facts-recite-tokens-past-the-block": Row(
            "probe_facts",
            ["--data_dir", "{root}/data", "--model_name_or_path", "{root}/model", "--recite_tokens", "1000"],
            "--recite_tokens 1000: the model reads at most 64 tokens",
        ),
        "demo-threads-0": Row("demo", ["--threads", "0", "--quick", "--output_dir", NEW], "--threads 0: give"),
        "demo-threads-negative": Row(
            "demo", ["--threads", "-1", "--quick", "--output_dir", NEW], "--threads -1: give"
        ),
        **{
            f"grid-profile-{name}": Row(
                "grid",
                ["show", "--profile", name],
                f"benchmarks/profiles/{name}.yaml:{_yaml_error_line(name)}: {expected}"
                if name == "not_yaml"
                else f"benchmarks/profiles/{name}.yaml: {expected}",
                patch=lambda patch, world: patch.setattr(grid, "PROFILES_DIR", world / "profiles"),
            )
            for name, (_, _, expected) in BAD_PROFILES.items()
        },
    }
)


def _first_mark_without_its_end() -> str:
    """What docs/generate.py says of README.md with its first end mark deleted: the mark before it, by its line."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    opening = readme.rindex("<!-- ", 0, readme.index("<!-- end -->"))
    mark = readme[opening : readme.index("-->", opening) + 3]
    return f"README.md:{readme.count(chr(10), 0, opening) + 1}: the mark `{mark}` has no `<!-- end -->`"


def _docs_tree(folder: str) -> Callable[[pytest.MonkeyPatch, Path], None]:
    """docs/generate.py pointed at a copy of the documents (`{root}/<folder>`) instead of the repository's."""

    def patch(monkeypatch: pytest.MonkeyPatch, world: Path) -> None:
        generate = COMMANDS["generate"].__globals__
        tree = world / folder
        monkeypatch.setitem(generate, "REPO_ROOT", tree)
        monkeypatch.setitem(generate, "DOCS", tree / "docs")
        monkeypatch.setitem(generate, "GENERATED_WHOLE", (tree / "BENCHMARKS.md", tree / "docs" / "levers.md"))

    return patch


def _failing_training_step(monkeypatch: pytest.MonkeyPatch, world: Path) -> None:
    """A run that fails at its first step (the disk fills as it writes its logs): nothing is saved yet."""
    from hf_models.training import ReproducibleTrainer

    monkeypatch.setattr(ReproducibleTrainer, "training_step", _raise_enospc)


def _results(*args: str, results: str = "{root}/results.json") -> list[str]:
    return ["--results", results, "--predictions_dir", NEW, "--hardware", "test", "--date", "2026-01-01", *args]


ROWS.update(
    {
        # 9. round 6: the grid's make targets, the results, the documents' generator, the overrides, the last edges
        "make-dryrun-an-unknown-value": Row(
            "make", ["bench", "PROFILE=course-cut", "DRYRUN=2", "OUT={root}/new"], "DRYRUN=2: give 1, true or yes"
        ),
        "make-out-a-file": Row(
            "make", ["cs224n", "PROFILE=course-cut", "DRYRUN=1", "OUT={root}/a_file"], "a_file is a file, not a folder"
        ),
        "make-another-profiles-run-folder": Row(
            "make",
            ["cs224n", "PROFILE=cpu", "DRYRUN=1", "OUT={root}/other_bench"],
            "holds a run of the course-cut profile",
        ),
        "results-report-over-its-own-input": Row(
            "write_results",
            ["--report", "--results", "{root}/results.json", "--levers", "{root}/levers.json"]
            + ["--benchmarks_md", "{root}/results.json", "--levers_md", "{root}/new/levers.md"],
            "--benchmarks_md {root}/results.json is also --results",
        ),
        "results-damaged-results-json": Row(
            "write_results",
            ["--bench_dir", "{root}/cpu_bench", *_results(results="{root}/damaged_results.json")],
            "damaged_results.json:3: not valid JSON",
        ),
        "results-another-profiles-run-folder": Row(
            "write_results",
            ["--bench_dir", "{root}/other_bench", *_results()],
            "step bp_london is not this profile's today",
        ),
        "docs-damaged-results-json": Row(
            "generate", ["--results", "{root}/damaged_results.json", "--check"], "damaged_results.json:3: not valid"
        ),
        "docs-a-mark-without-its-end": Row(
            "generate",
            ["--results", "{root}/results.json", "--levers", "{root}/levers.json"],
            _first_mark_without_its_end(),
            patch=_docs_tree("docs_no_end"),
        ),
        "docs-a-document-it-cannot-write": Row(
            "generate",
            ["--results", "{root}/stale_results.json", "--levers", "{root}/levers.json"],
            "README.md: read-only file system",
            (errno.EROFS, False),
            failing_under="docs_tree",
            failing_names=("README.md",),
            patch=_docs_tree("docs_tree"),
        ),
        "override-of-a-null-setting": Row(
            "pretrain",
            _pre("--config_overrides", TINY_ONE_LAYER + ",synthesizer_width=16"),
            "--config_overrides synthesizer_width: the setting holds nothing (None)",
        ),
        "override-of-a-mapping-setting": Row(
            "pretrain",
            _pre("--config_overrides", "id2label=3"),
            "--config_overrides id2label: the setting holds a dict",
        ),
        "resume-from-cut-short-weights": Row(
            "birthplace",
            _bp("pretrain", "--output_dir", "{root}/bp_cut", "--resume_from_checkpoint", "{root}/bp_cut/checkpoint-1")
            + ["--tokenizer_name_or_path", "{root}/tok", "--config_overrides", TINY_ONE_LAYER, "--max_steps", "2"],
            "checkpoint-1: model.safetensors cannot be read",
        ),
        "overwrite-a-folder-of-links-to-another-run": Row(
            "pretrain",
            _pre("--output_dir", "{root}/links_run", "--overwrite_output_dir", "--max_steps", "1"),
            "links_run holds links to files elsewhere",
        ),
        "null-output-dir-in-an-arguments-file": Row(
            "birthplace",
            ["finetune", "{root}/null_output.json", *_bp("finetune", "--model_name_or_path", "{root}/model")[1:]]
            + ["--max_steps", "1"],
            "--output_dir is missing (or null)",
        ),
        "no-output-dir": Row(
            "pretrain",
            [a for a in _pre("--max_steps", "1") if a != NEW and a != "--output_dir"],
            "--output_dir is missing (or null)",
        ),
        "overwrite-a-folder-holding-the-arguments-file": Row(
            "pretrain",
            ["{root}/run_with_inputs/all_results.json"]
            + _pre("--output_dir", "{root}/run_with_inputs", "--overwrite_output_dir"),
            "all_results.json lies in --output_dir",
        ),
        "overwrite-a-folder-holding-the-model-config": Row(
            "pretrain",
            _pre("--output_dir", "{root}/run_with_inputs", "--overwrite_output_dir", "--max_steps", "1")
            + ["--model_config", "{root}/run_with_inputs/config.json"],
            "--model_config {root}/run_with_inputs/config.json lies in --output_dir",
        ),
        "a-run-failing-at-its-first-step-into-a-new-folder": Row(
            "pretrain",
            _pre("--max_steps", "1"),
            "somewhere: no space left on the device",
            patch=_failing_training_step,
        ),
    }
)


def _rust_full_disk(self, save_directory, *args, **kwargs):
    """The tokenizers library on a full disk: a first file written, then its Rust error (no errno, no file)."""
    (Path(save_directory) / "tokenizer.json").write_text("{half a tokenizer")
    raise Exception("No space left on device (os error 28)")


def _snapshot(root: Path) -> dict[str, str]:
    """Every path under `root`: a file by content hash, a link as its target (never followed), a folder as such,
    so that a failed command that changes a file, or leaves a new file or a new (even empty) folder, is seen."""
    paths = {}
    for folder, names, file_names in os.walk(root):
        for name in [*names, *file_names]:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                paths[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                paths[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                paths[rel] = "folder" if path.is_dir() else "other"
    return paths


def _failing_writes(
    monkeypatch: pytest.MonkeyPatch, under: Path, code: int, folders: bool, names: tuple[str, ...] = ()
) -> None:
    """The machine's answer to every write under `under` (a full disk, a read-only or forbidden folder), or with
    `names` to the writes of those file names only (a disk that fills half-way): opening a file for writing, and
    with `folders` making a folder, raise `OSError(code)`."""
    under = under.resolve()

    def inside(path) -> bool:
        if isinstance(path, int):
            return False
        path = Path(os.fsdecode(path))
        # a file of `names`, or the temporary twin written first and moved over it (".NAME.XXXX.tmp", ".STEM.PID.tmp")
        named = path.name in names or any(path.name.startswith(f".{Path(name).stem}.") for name in names)
        return path.resolve().is_relative_to(under) and (not names or named)

    def fail(path):
        raise OSError(code, os.strerror(code), os.fsdecode(path))

    real_open, real_os_open, real_mkdir = builtins.open, os.open, os.mkdir

    def open_(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+") and inside(file):
            fail(file)
        return real_open(file, mode, *args, **kwargs)

    def os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and inside(path):
            fail(path)
        return real_os_open(path, flags, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        if inside(path):
            fail(path)
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(io, "open", open_)
    monkeypatch.setattr(os, "open", os_open)
    if folders:
        monkeypatch.setattr(os, "mkdir", mkdir)


def test_the_table_covers_every_kind() -> None:
    assert len(ROWS) >= 40
    assert {row.command for row in ROWS.values()} == set(COMMANDS)


@pytest.mark.parametrize("case", list(ROWS))
def test_a_bad_input_is_one_line_exit_2_and_changes_nothing(
    world: Path, case: str, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = ROWS[case]
    argv = [arg.format(root=world) for arg in row.argv]
    expected = row.expected.format(root=world)
    shutil.rmtree(world / "new", ignore_errors=True)  # what a failed row before left, so that it fails alone
    before = _snapshot(world)
    capsys.readouterr()
    with monkeypatch.context() as patch:
        if row.failing_writes:
            _failing_writes(patch, world / row.failing_under, *row.failing_writes, names=row.failing_names)
        if row.patch:
            row.patch(patch, world)
        status = command_line(COMMANDS[row.command], argv)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2, err
    assert len(errors) == 1 and expected in errors[0], err
    assert "Traceback" not in err and "Re-running `torch.load`" not in err
    after = _snapshot(world)
    assert after == before, f"changed or new: {sorted(set(after.items()) ^ set(before.items()))}"
    shutil.rmtree(world / "new", ignore_errors=True)


def _run_script(world: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *(arg.format(root=world) for arg in argv)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["recipes/pretrain.py", *_pre("--output_dir", "{root}/model")], "error: --output_dir {root}/model already"),
        (["tokenizer/train_tokenizer.py", *_tok("--min_frequency", "-1")], "error: --min_frequency -1"),
        (["recipes/prepare_data.py", "birthplace-tune", "--out", NEW, "--bogus"], "error: "),
        (["benchmarks/tfidf_baseline.py", "--data_dir", "{root}/cls", "--output_dir", "{root}/model"], "error: "),
        (["-m", "hf_models.convert", "cs224n-mingpt", "{root}/corrupt.pt", "--output_dir", NEW], "error: {root}"),
        (["recipes/app.py", "{root}/no_such_run"], "error: {root}/no_such_run: no such run folder"),
        (["docs/generate.py", "--results", "{root}/damaged_results.json", "--check"], "error: --results {root}"),
        (
            ["benchmarks/write_results.py", "--bench_dir", "{root}/cpu_bench", *_results(results="{root}/a_file")],
            "error: --results {root}/a_file:1: not valid JSON",
        ),
    ],
    ids=[
        "pretrain",
        "train_tokenizer",
        "prepare_data-argparse",
        "tfidf_baseline",
        "convert",
        "app",
        "generate",
        "write_results",
    ],
)
def test_the_script_itself_exits_2_with_a_single_line(world: Path, argv: list[str], expected: str) -> None:
    """What a shell sees: exit status 2, and stderr is that one line, nothing else (no usage, no traceback)."""
    before = _snapshot(world)
    proc = _run_script(world, *argv)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(expected.format(root=world)), proc.stderr
    assert _snapshot(world) == before


def test_a_full_disk_during_an_overwrite_leaves_the_old_run_whole(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """--overwrite_output_dir: the old files stay until each new one is complete; a full disk while the new run
    saves leaves them as they were, and no staging folder."""
    run = Path(shutil.copytree(world / "model", tmp_path / "run"))
    before = _snapshot(run)
    argv = [a.format(root=world) for a in _pre("--output_dir", str(run), "--overwrite_output_dir", "--max_steps", "1")]
    _failing_writes(monkeypatch, run, errno.ENOSPC, folders=False)
    assert command_line(run_pretraining, argv) == 2
    assert "no space left on the device" in capsys.readouterr().err
    assert _snapshot(run) == before


def test_a_failed_tokenizer_run_leaves_no_half_made_tokenizer(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """train_tokenizer.py saves last, in one step per file: failing before or during the save leaves nothing."""
    train_tokenizer = COMMANDS["train_tokenizer"]
    out = tmp_path / "tok"
    monkeypatch.setitem(train_tokenizer.__globals__, "chars_per_token", _raise_enospc)
    assert command_line(train_tokenizer, [a.format(root=world) for a in _tok(output=str(out))]) == 2
    assert not out.exists()
    monkeypatch.undo()
    _failing_writes(monkeypatch, out, errno.ENOSPC, folders=False)
    assert command_line(train_tokenizer, [a.format(root=world) for a in _tok(output=str(out))]) == 2
    assert not out.exists()


def _raise_enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "somewhere")


def test_a_failed_save_keeps_every_old_file(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.json").write_text("old config")
    (folder / "model.safetensors").write_text("old weights")
    with pytest.raises(RuntimeError), staged_save(folder) as staging:
        (staging / "config.json").write_text("new config")
        raise RuntimeError("the save failed half-way")
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        "config.json": "old config",
        "model.safetensors": "old weights",
    }
    with staged_save(folder) as staging:
        (staging / "config.json").write_text("new config")
        (staging / "sub").mkdir()
        (staging / "sub" / "x.txt").write_text("x")
    assert (folder / "config.json").read_text() == "new config" and (folder / "sub" / "x.txt").read_text() == "x"
    assert (folder / "model.safetensors").read_text() == "old weights"
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "sub"]


def test_a_write_replaces_a_link_never_writes_through_it(tmp_path: Path) -> None:
    target = tmp_path / "input.txt"
    target.write_text("an input")
    link = tmp_path / "loss.png"
    link.symlink_to(target)
    with atomic_write(link) as staging:
        staging.write_bytes(b"a plot")
    assert target.read_text() == "an input" and not link.is_symlink() and link.read_bytes() == b"a plot"


def test_throughput_writes_results_json_only_when_asked() -> None:
    throughput = _script("benchmarks/throughput.py", "throughput_bad_inputs")
    assert throughput.parse_args([]).results_json is None  # a trial setting prints only
    assert throughput.parse_args(["--results_json", "r.json"]).results_json == Path("r.json")


def test_ctrl_c_prints_one_line_and_leaves_a_checkpoint_that_resumes(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Ctrl-C at the third step: one line that names the last checkpoint (exit 130, the shell's for Ctrl-C), and
    the same command with --resume_from_checkpoint ends the run from there."""
    from hf_models.training import ReproducibleTrainer

    run = tmp_path / "run"
    argv = [a.format(root=world) for a in _pre("--output_dir", str(run), "--max_steps", "3")]
    argv += ["--save_strategy", "steps", "--save_steps", "1"]
    real_step, steps = ReproducibleTrainer.training_step, []

    def interrupted_step(self, *args, **kwargs):
        steps.append(1)
        if len(steps) == 3:
            raise KeyboardInterrupt
        return real_step(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(ReproducibleTrainer, "training_step", interrupted_step)
        assert command_line(run_pretraining, argv) == 130
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: interrupted; continue with the same flags and --resume_from_checkpoint {run / 'checkpoint-2'}"
    ], err
    assert "Traceback" not in err
    assert command_line(run_pretraining, [*argv, "--resume_from_checkpoint", str(run / "checkpoint-2")]) == 0
    assert json.loads((run / "trainer_state.json").read_text())["global_step"] == 3


def test_a_one_layer_one_head_model_is_shown_in_the_app(world: Path) -> None:
    """Gradio refuses a slider from 0 to 0: the app still builds, and draws the one head's attention."""
    pytest.importorskip("gradio")
    models = app.load_models([str(world / "one_head")])
    assert (models[0].model.config.num_hidden_layers, models[0].model.config.num_attention_heads) == (1, 1)
    app.build_app(models)
    attention = app.attention_map(models[0], "Where was Ada born?", 0, 0)
    assert attention.weights.shape == (len(attention.tokens), len(attention.tokens))


def test_a_new_run_over_an_evaluated_models_folder_keeps_none_of_its_evaluations(world: Path, tmp_path: Path) -> None:
    """An evaluated model's folder (its predictions and reports beside it) replaced by a new run with
    --overwrite_output_dir: the old model's evaluations go, none is left to pass for the new model's."""
    run = Path(shutil.copytree(world / "model", tmp_path / "run"))
    evaluate = _bp("evaluate", "--model_name_or_path", str(run), "--output_dir", str(run), "--overwrite_output_dir")
    assert command_line(run_birthplace, [a.format(root=world) for a in evaluate]) == 0
    evaluations = {"predictions_validation.txt", "report_evaluate_validation.json"}
    assert evaluations <= {path.name for path in run.iterdir()}
    (run / "fact_probe.json").write_text("{}")  # benchmarks/probe_facts.py's, of the old model
    again = _pre("--output_dir", str(run), "--overwrite_output_dir", "--max_steps", "1")
    assert command_line(run_pretraining, [a.format(root=world) for a in again]) == 0
    assert not (evaluations | {"fact_probe.json"}) & {path.name for path in run.iterdir()}
    evaluations = read_record(run).evaluations  # joined with the new run's all_results.json
    assert [evaluation.metrics.keys() for evaluation in evaluations] == [{"loss", "perplexity"}]  # its own only
    assert (run / "model.safetensors").is_file()


def test_an_evaluation_in_a_folder_of_the_model_is_run_again_with_overwrite(world: Path, tmp_path: Path) -> None:
    """The grid's `eval_tune` step writes into a folder inside the model's: run again (a step rerun after the model
    changed), its earlier predictions are replaced with --overwrite_output_dir (they are outputs, not the model's
    files), and kept without it."""
    run = Path(shutil.copytree(world / "model", tmp_path / "run"))
    evaluate = _bp("evaluate", "--model_name_or_path", str(run), "--output_dir", str(run / "eval_tune"))
    evaluate = [a.format(root=world) for a in evaluate]
    assert command_line(run_birthplace, evaluate) == 0
    predictions = run / "eval_tune" / "predictions_validation.txt"
    predictions.write_text("an earlier model's answers\n")
    assert command_line(run_birthplace, evaluate) == 2  # kept: no --overwrite_output_dir
    assert predictions.read_text() == "an earlier model's answers\n"
    assert command_line(run_birthplace, [*evaluate, "--overwrite_output_dir"]) == 0
    assert predictions.read_text() != "an earlier model's answers\n"


def test_the_data_loaders_counted_warning_is_one_line(world: Path, tmp_path: Path, capsys) -> None:
    """A corpus with blank lines: the counted warning is one `warning: ...` line, without Python's warning header
    and source line (which read like a traceback)."""
    corpus = tmp_path / "blank_lines.txt"
    corpus.write_text("\n\n".join((world / "data" / "wiki.txt").read_text().splitlines()[:40]) + "\n")
    argv = _pre("--train_files", str(corpus), "--output_dir", str(tmp_path / "run"), "--max_steps", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as a fresh process shows it (an earlier test may have shown it once)
        assert command_line(run_pretraining, [a.format(root=world) for a in argv]) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "empty line(s)" in line]
    assert warned == ["warning: 1 file(s): dropped 39 empty line(s) out of 79"], err
    assert "DataWarning" not in err and "warnings.warn" not in err


def test_a_real_bug_keeps_its_traceback() -> None:
    def broken(argv):
        raise KeyError("a bug, not the user's")

    with pytest.raises(KeyError):
        command_line(broken, [])


def test_overwrite_flag_and_resume_allow_a_used_folder(world: Path, tmp_path: Path) -> None:
    """run_clm.py's convention: --overwrite_output_dir replaces a trained run; a folder with a checkpoint resumes."""
    run = Path(shutil.copytree(world / "model", tmp_path / "run"))
    before = (run / "model.safetensors").read_bytes()
    args = [a.format(root=world) for a in _pre("--config_overrides", TINY)]
    run_pretraining([*args, "--output_dir", str(run), "--overwrite_output_dir", "--max_steps", "1", "--seed", "3"])
    assert (run / "model.safetensors").read_bytes() != before

    checkpointed = ["--output_dir", str(tmp_path / "checkpointed")]
    run_pretraining([*args, *checkpointed, "--max_steps", "2", "--save_strategy", "steps", "--save_steps", "1"])
    assert (tmp_path / "checkpointed" / "checkpoint-2").is_dir()
    more = [*args, *checkpointed, "--max_steps", "3", "--save_strategy", "no"]
    with pytest.raises(ValueError, match="--overwrite_output_dir"):
        run_pretraining(more)
    metrics = run_pretraining([*more, "--resume_from_checkpoint", str(tmp_path / "checkpointed" / "checkpoint-2")])
    state = json.loads((tmp_path / "checkpointed" / "trainer_state.json").read_text())
    assert metrics["train_samples"] > 0 and state["global_step"] == 3


def test_atomic_write_keeps_the_old_file_when_a_write_fails(tmp_path: Path) -> None:
    path = atomic_write_text(tmp_path / "predictions.txt", "good\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "half written \ud800 and never finished\n")
    assert path.read_text() == "good\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions.txt"]  # no temporary file left


def test_push_overwrite_replaces_only_its_own_export(world: Path, tmp_path: Path) -> None:
    push_to_hub, out = COMMANDS["push_to_hub"], tmp_path / "export"
    assert push_to_hub([str(world / "model"), "--dry_run", "--local_dir", str(out)]) == 0
    assert (out / ".push_to_hub_export").is_file() and (out / "model.safetensors").is_file()
    (out / "stale.png").write_bytes(b"old")
    assert push_to_hub([str(world / "model"), "--dry_run", "--local_dir", str(out), "--overwrite"]) == 0
    assert not (out / "stale.png").exists() and (out / "config.json").is_file()


_ADD_SCORES = """
import sys
from hf_models.run_record import Evaluation, RunRecord, updating_record
folder, name = sys.argv[1], sys.argv[2]
for i in range(40):
    with updating_record(folder, lambda: RunRecord(task="t", objective="qa")) as record:
        record.add_evaluation(Evaluation(f"{name}{i}", {"exact_match": i / 40}, 40))
"""


def test_scores_added_side_by_side_to_one_record_are_all_kept(tmp_path) -> None:
    """The benchmark scores one model's dev and test splits side by side: each evaluation adds its scores to the
    model's run record, and none may lose the other's (a lock serialises the read, the change and the save)."""
    from hf_models.run_record import read_record

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    writers = [subprocess.Popen([sys.executable, "-c", _ADD_SCORES, str(tmp_path), name], env=env) for name in "ab"]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    splits = {evaluation.split for evaluation in read_record(tmp_path).evaluations}
    assert splits == {f"{name}{i}" for name in "ab" for i in range(40)}
    assert [path.name for path in tmp_path.iterdir()] == ["run_record.json"]  # no lock file beside the model
