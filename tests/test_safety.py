"""Nothing lost, nothing leaked (issue 20): every command line, driven with a table of bad inputs, answers with one
line `error: ...` and exit status 2, and leaves every earlier file as it was; a used output folder is refused unless
the user allows it; writes are atomic; the Hub export never follows a link and checks its weights."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tiny import EVALUATE_QUIET, TINY
from tiny import QUIET_ERRORS_ONLY as QUIET

from hf_models import convert
from hf_models.safety import command_line
from hf_models.tasks import birthplace, pretraining, sentiment
from hf_models.textio import atomic_write_text, iter_text_lines
from hf_models.tokenization import courses, train_bpe_tokenizer

REPO_ROOT = Path(__file__).resolve().parent.parent
STEPS = ["--max_steps", "2", "--per_device_train_batch_size", "8", *QUIET]


def _script(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


train_tokenizer = _script("tokenizer/train_tokenizer.py", "train_tokenizer")
push_to_hub = _script("push_to_hub.py", "push_to_hub_safety")

COMMANDS: dict[str, Callable] = {
    "pretrain": pretraining.main,
    "sentiment": sentiment.main,
    "birthplace": birthplace.main,
    "train_tokenizer": train_tokenizer.main,
    "convert": convert.main,
    "courses": courses.main,
    "push_to_hub": push_to_hub.main,
}


def _tokenizer(folder: Path, corpus: Path, vocab_size: int) -> Path:
    train_bpe_tokenizer(iter_text_lines(corpus), vocab_size=vocab_size, output_dir=folder, show_progress=False)
    return folder


def _run_copy(model: Path, target: Path, edit: Callable[[Path], None]) -> Path:
    shutil.copytree(model, target)
    edit(target)
    return target


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory,
    synthetic_birthplace_dir: Path,
    tiny_tokenizer_dir: Path,
    write_alternating_cls_books,
) -> Path:
    """A folder of earlier work: data, tokenizers, a trained and evaluated model, and damaged copies of it."""
    root = tmp_path_factory.mktemp("safety")
    data = Path(shutil.copytree(synthetic_birthplace_dir, root / "data"))
    tok = Path(shutil.copytree(tiny_tokenizer_dir, root / "tok"))
    _tokenizer(root / "tok_small", data / "wiki.txt", 300)
    _tokenizer(root / "tok_large", data / "wiki.txt", 700)
    model = root / "model"
    model_args = ["--tokenizer_name_or_path", str(tok), "--config_overrides", TINY]
    birthplace.main(["pretrain", "--data_dir", str(data), "--output_dir", str(model), *model_args, *STEPS])
    birthplace.main(
        [
            "evaluate",
            "--data_dir",
            str(data),
            "--model_name_or_path",
            str(model),
            "--output_dir",
            str(model),
            "--max_new_tokens",
            "2",
            *EVALUATE_QUIET,
        ]
    )
    write_alternating_cls_books(root / "cls", (16, 8, 4))
    (root / "empty_data").mkdir()
    (root / "empty_data" / "wiki.txt").write_text("")
    (root / "bad.pt").write_bytes(b"PK\x03\x04 not a checkpoint" * 10)
    (root / "notes.pt").write_text("not a checkpoint, not a zip archive\n")
    (root / "args.json").write_text('{"output_dir": "x",\n  broken')
    (root / "not_an_export").mkdir()
    (root / "not_an_export" / "notes.txt").write_text("mine")
    _run_copy(model, root / "linked", lambda d: (d / "notes.png").symlink_to("/etc/passwd"))

    def truncate(folder: Path) -> None:
        weights = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(weights[: len(weights) // 2])

    def wrong_vocabulary(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "vocab_size": config["vocab_size"] + 8}))

    _run_copy(model, root / "truncated", truncate)
    _run_copy(model, root / "wrong_vocab", wrong_vocabulary)
    return root


def _bp(step: str, *args: str) -> list[str]:
    return [step, "--data_dir", "{root}/data", *args, *(EVALUATE_QUIET if step == "evaluate" else QUIET)]


def _pre(*args: str) -> list[str]:
    return ["--train_files", "{root}/data/wiki.txt", "--tokenizer_name_or_path", "{root}/tok", *args, *QUIET]


def _cls(*args: str) -> list[str]:
    return ["--data_dir", "{root}/cls", "--from_scratch", "--tokenizer_name_or_path", "{root}/tok", *args, *QUIET]


NEW = "{root}/new"  # a fresh output folder: the error must come before anything is written there
# (command, arguments, what the one line says). `{root}` is the folder of earlier work.
BAD_INPUTS = {
    "pretrain-into-a-trained-model": ("pretrain", _pre("--output_dir", "{root}/model"), "--overwrite_output_dir"),
    "finetune-over-its-own-model": (
        "birthplace",
        _bp("finetune", "--model_name_or_path", "{root}/model", "--output_dir", "{root}/model"),
        "is also --model_name_or_path",
    ),
    "convert-into-a-trained-run": (
        "convert",
        ["cs224n-mingpt", "{root}/bad.pt", "--output_dir", "{root}/model"],
        "already holds earlier output",
    ),
    "tokenizer-into-a-model-folder": (
        "train_tokenizer",
        ["--files", "{root}/data/wiki.txt", "--vocab_size", "300", "--output_dir", "{root}/model"],
        "--overwrite_output_dir",
    ),
    "evaluate-again-over-its-predictions": (
        "birthplace",
        _bp("evaluate", "--model_name_or_path", "{root}/model", "--output_dir", "{root}/model"),
        "already exists",
    ),
    "london-over-the-model-predictions": (
        "birthplace",
        _bp("evaluate", "--london_baseline", "--predictions_file", "{root}/model/predictions_validation.txt"),
        "already exists",
    ),
    "predictions-over-the-dev-data": (
        "birthplace",
        _bp("evaluate", "--london_baseline", "--predictions_file", "{root}/data/birth_dev.tsv"),
        "is also --data_dir",
    ),
    "push-overwrite-deletes-a-foreign-folder": (
        "push_to_hub",
        ["{root}/model", "--dry_run", "--local_dir", "{root}/not_an_export", "--overwrite"],
        "did not export",
    ),
    "push-follows-a-link": ("push_to_hub", ["{root}/linked", "--dry_run", "--local_dir", NEW], "symbolic link"),
    "push-truncated-weights": ("push_to_hub", ["{root}/truncated", "--dry_run", "--local_dir", NEW], "truncated"),
    "push-config-not-the-weights": (
        "push_to_hub",
        ["{root}/wrong_vocab", "--dry_run", "--local_dir", NEW],
        "do not match config.json",
    ),
    "tokenizer-smaller-than-the-model": (
        "birthplace",
        _bp(
            "finetune",
            "--model_name_or_path",
            "{root}/model",
            "--tokenizer_name_or_path",
            "{root}/tok_small",
            "--output_dir",
            NEW,
        ),
        "has 300 tokens but the model",
    ),
    "tokenizer-larger-than-the-model": (
        "birthplace",
        _bp(
            "finetune",
            "--model_name_or_path",
            "{root}/model",
            "--tokenizer_name_or_path",
            "{root}/tok_large",
            "--output_dir",
            NEW,
        ),
        "has 700 tokens but the model",
    ),
    "block-size-0": (
        "pretrain",
        _pre("--block_size", "0", "--config_overrides", TINY, "--output_dir", NEW),
        "--block_size 0",
    ),
    "block-size-past-the-positions": (
        "birthplace",
        _bp(
            "pretrain",
            "--tokenizer_name_or_path",
            "{root}/tok",
            "--config_overrides",
            TINY,
            "--block_size",
            "65",
            "--output_dir",
            NEW,
        ),
        "max_position_embeddings=64",
    ),
    "max-steps-negative": ("pretrain", _pre("--max_steps", "-3", "--output_dir", NEW), "--max_steps -3"),
    "resume-from-a-missing-checkpoint": (
        "pretrain",
        _pre("--resume_from_checkpoint", "{root}/model/checkpoint-9", "--output_dir", NEW),
        "--resume_from_checkpoint {root}/model/checkpoint-9 does not exist",
    ),
    "sentiment-resume-from-a-file": (
        "sentiment",
        _cls("--resume_from_checkpoint", "{root}/bad.pt", "--output_dir", NEW),
        "--resume_from_checkpoint {root}/bad.pt is a file",
    ),
    "birthplace-resume-from-a-missing-checkpoint": (
        "birthplace",
        _bp(
            "finetune",
            "--model_name_or_path",
            "{root}/model",
            "--resume_from_checkpoint",
            "{root}/nowhere",
            "--output_dir",
            NEW,
        ),
        "--resume_from_checkpoint {root}/nowhere does not exist",
    ),
    "max-seq-length-0": ("sentiment", _cls("--max_seq_length", "0", "--output_dir", NEW), "--max_seq_length 0"),
    "course-tokenizer-on-an-empty-wiki": (
        "courses",
        ["cs224n-char", "--data_dir", "{root}/empty_data", "--output_dir", NEW],
        "wiki.txt: file is empty",
    ),
    "bad-config-override-value": (
        "pretrain",
        _pre("--config_overrides", "hidden_size=big", "--output_dir", NEW),
        "--config_overrides 'hidden_size=big'",
    ),
    "unknown-config-override": (
        "pretrain",
        _pre("--config_overrides", "hiden_size=32", "--output_dir", NEW),
        "hiden_size",
    ),
    "config-that-breaks-a-rule": (
        "pretrain",
        _pre("--config_overrides", "hidden_size=30,num_attention_heads=4", "--output_dir", NEW),
        "the model config",
    ),
    "broken-arguments-json": ("pretrain", ["{root}/args.json"], "args.json:2: not valid JSON"),
    "corrupt-checkpoint": (
        "convert",
        ["cs224n-mingpt", "{root}/bad.pt", "--output_dir", NEW],
        "not a PyTorch state dict",
    ),
    # torch's message here is advice to unpickle with weights_only=False (running the file's code): never shown
    "text-file-as-checkpoint": (
        "convert",
        ["cs224n-mingpt", "{root}/notes.pt", "--output_dir", NEW],
        "never unpickled with weights_only=False",
    ),
    "missing-corpus": (
        "pretrain",
        _pre("--output_dir", NEW)[:1] + ["{root}/nowhere.txt"] + _pre("--output_dir", NEW)[2:],
        "nowhere.txt",
    ),
    "birthplace-no-subcommand": ("birthplace", ["--data_dir", "{root}/data"], "usage: birthplace.py"),
}


def _snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (links as their target), by content hash."""
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            files[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_and_changes_nothing(
    world: Path, case: str, capsys: pytest.CaptureFixture
) -> None:
    command, argv, expected = BAD_INPUTS[case]
    argv = [arg.format(root=world) for arg in argv]
    expected = expected.format(root=world)
    before = _snapshot(world)
    capsys.readouterr()
    status = command_line(COMMANDS[command], argv)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2, err
    assert len(errors) == 1 and expected in errors[0], err
    assert "Traceback" not in err and "Re-running `torch.load`" not in err
    assert _snapshot(world) == before, "an earlier file changed, or a new one appeared"
    shutil.rmtree(world / "new", ignore_errors=True)


def test_a_real_bug_keeps_its_traceback() -> None:
    def broken(argv):
        raise KeyError("a bug, not the user's")

    with pytest.raises(KeyError):
        command_line(broken, [])


def test_the_entry_point_exits_2_with_one_line(world: Path) -> None:
    """Through the script itself: the exit status and stderr a shell sees."""
    proc = subprocess.run(
        [sys.executable, "recipes/pretrain.py", *[a.format(root=world) for a in _pre("--output_dir", "{root}/model")]],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: --output_dir ") and "Traceback" not in proc.stderr


def test_overwrite_flag_and_resume_allow_a_used_folder(world: Path, tmp_path: Path) -> None:
    """run_clm.py's convention: --overwrite_output_dir replaces a trained run; a folder with a checkpoint resumes."""
    run = Path(shutil.copytree(world / "model", tmp_path / "run"))
    before = (run / "model.safetensors").read_bytes()
    args = [a.format(root=world) for a in _pre("--config_overrides", TINY, "--output_dir", str(run))]
    pretraining.main([*args, "--overwrite_output_dir", "--max_steps", "1", "--seed", "3"])
    assert (run / "model.safetensors").read_bytes() != before

    checkpointed = tmp_path / "checkpointed"
    steps = ["--max_steps", "2", "--save_strategy", "steps", "--save_steps", "1", "--config_overrides", TINY]
    pretraining.main([*args[:-2], "--output_dir", str(checkpointed), *steps])
    assert (checkpointed / "checkpoint-2").is_dir()
    more = ["--max_steps", "3", "--save_strategy", "no", "--config_overrides", TINY]
    with pytest.raises(ValueError, match="--overwrite_output_dir"):
        pretraining.main([*args[:-2], "--output_dir", str(checkpointed), *more])
    metrics = pretraining.main(
        [
            *args[:-2],
            "--output_dir",
            str(checkpointed),
            *more,
            "--resume_from_checkpoint",
            str(checkpointed / "checkpoint-2"),
        ]
    )
    assert (
        metrics["train_samples"] > 0
        and json.loads((checkpointed / "trainer_state.json").read_text())["global_step"] == 3
    )


def test_atomic_write_keeps_the_old_file_when_a_write_fails(tmp_path: Path) -> None:
    path = atomic_write_text(tmp_path / "predictions.txt", "good\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "half written \ud800 and never finished\n")
    assert path.read_text() == "good\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions.txt"]  # no temporary file left


def test_push_overwrite_replaces_only_its_own_export(world: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    assert push_to_hub.main([str(world / "model"), "--dry_run", "--local_dir", str(out)]) == 0
    assert (out / ".push_to_hub_export").is_file() and (out / "model.safetensors").is_file()
    (out / "stale.png").write_bytes(b"old")
    assert push_to_hub.main([str(world / "model"), "--dry_run", "--local_dir", str(out), "--overwrite"]) == 0
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
