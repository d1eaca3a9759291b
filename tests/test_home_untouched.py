"""Nothing is written outside a run's folder and the caches of the libraries we use: a recipe's `-h` and a tiny run
leave the user's home as they found it (the libraries' caches sit where their own variables put them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiny import NO_NOISE, TINY

from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parent.parent
PRETRAIN = str(REPO_ROOT / "recipes" / "pretrain.py")


@pytest.mark.slow
def test_help_and_a_tiny_run_write_nothing_under_home(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir) -> None:
    home, caches = tmp_path / "home", tmp_path / "caches"
    home.mkdir()
    env = {name: value for name, value in os.environ.items() if not name.startswith("XDG_")}  # ~/.cache, ~/.config
    env.pop("HF_MODELS_CACHE", None)
    env |= {**OFFLINE_ENVIRONMENT, "HOME": str(home), "OMP_NUM_THREADS": "1"}
    # The libraries' own caches, by their own variables (by default, ~/.cache/huggingface and ~/.config/matplotlib).
    env |= {"HF_HOME": str(caches / "huggingface"), "MPLCONFIGDIR": str(caches / "matplotlib")}
    run = tmp_path / "run"
    commands = {
        "-h": [PRETRAIN, "-h"],
        "a tiny run": [PRETRAIN, "--objective", "clm", "--train_files", str(synthetic_birthplace_dir / "wiki.txt")]
        + ["--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--config_overrides", TINY, "--block_size", "32"]
        + ["--output_dir", str(run), "--max_steps", "2", "--per_device_train_batch_size", "4", "--use_cpu"]
        + [*NO_NOISE, "--log_level", "error"],
    }
    for name, command in commands.items():
        done = subprocess.run(
            [sys.executable, *command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (name, done.stdout[-2000:] + done.stderr[-2000:])
        assert sorted(str(path.relative_to(home)) for path in home.rglob("*")) == [], name
    assert (run / "model.safetensors").is_file()  # the run wrote its model, in its folder
