"""`--resume_from_checkpoint` continues a run exactly: same data order, dropout RNG and optimizer state.

A run is stopped at a checkpoint (its `checkpoint-6` is all a stopped run leaves behind), then resumed in
a new output folder; the resumed run must end with the same loss as an uninterrupted one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tiny import TINY as TINY_NO_DROPOUT
from tiny import run_pretraining

TINY = f"{TINY_NO_DROPOUT},hidden_dropout=0.1,attention_dropout=0.1,embedding_dropout=0.1"

# Dropout on, so that the test also covers the RNG states saved in the checkpoint.


def _args(data: Path, tokenizer: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--objective",
        "clm",
        "--train_files",
        str(data / "wiki.txt"),
        "--tokenizer_name_or_path",
        str(tokenizer),
        "--config_overrides",
        TINY,
        "--block_size",
        "32",
        "--output_dir",
        str(out),
        "--max_steps",
        "12",
        "--per_device_train_batch_size",
        "8",
        "--learning_rate",
        "5e-3",
        "--warmup_steps",
        "3",
        "--logging_steps",
        "1",
        "--save_strategy",
        "steps",
        "--save_steps",
        "6",
        "--seed",
        "0",
        "--use_cpu",
        "--report_to",
        "none",
        "--disable_tqdm",
        "true",
        "--log_level",
        "warning",
        *extra,
    ]


def _losses(out: Path) -> dict[int, float]:
    state = json.loads((out / "trainer_state.json").read_text())
    return {entry["step"]: entry["loss"] for entry in state["log_history"] if "loss" in entry}


@pytest.mark.slow
def test_resume_reaches_the_same_loss(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    full = tmp_path / "full"
    uninterrupted = run_pretraining(_args(synthetic_birthplace_dir, tiny_tokenizer_dir, full))

    # The state a run stopped after step 6 leaves: its output folder with checkpoint-6 only.
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    shutil.copytree(full / "checkpoint-6", stopped / "checkpoint-6")
    resumed = run_pretraining(
        _args(
            synthetic_birthplace_dir,
            tiny_tokenizer_dir,
            stopped,
            "--resume_from_checkpoint",
            str(stopped / "checkpoint-6"),
        )
    )

    full_losses, resumed_losses = _losses(full), _losses(stopped)
    assert sorted(resumed_losses) == list(range(1, 13))  # the checkpoint's history, then steps 7..12
    for step in range(7, 13):
        assert abs(resumed_losses[step] - full_losses[step]) <= 1e-6, (step, resumed_losses[step], full_losses[step])
    assert abs(resumed["final_train_loss"] - uninterrupted["final_train_loss"]) <= 1e-6
    assert abs(resumed["eval_loss"] - uninterrupted["eval_loss"]) <= 1e-6
