"""2-process data-parallel pretraining on the CPU under `accelerate launch --multi_gpu --num_processes 2`.

(`accelerate launch --cpu --num_processes 2` would start a single process: see the v5 notes, §7.)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TINY = "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=64"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_pretrain_two_processes_on_cpu(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    out = tmp_path / "ddp"
    command = [
        sys.executable, "-m", "accelerate.commands.launch",
        "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
        "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
        str(REPO_ROOT / "recipes" / "pretrain.py"),
        "--objective", "clm", "--train_files", str(synthetic_birthplace_dir / "wiki.txt"),
        "--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--config_overrides", TINY, "--block_size", "32",
        "--output_dir", str(out), "--max_steps", "8", "--per_device_train_batch_size", "8",
        "--learning_rate", "5e-3", "--logging_steps", "2", "--use_cpu", "--report_to", "none",
        "--save_strategy", "no", "--disable_tqdm", "true", "--ddp_find_unused_parameters", "false",
    ]  # fmt: skip
    # One thread per rank: the two ranks share the machine's cores.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    report = json.loads((out / "report.json").read_text())
    assert report["world_size"] == 2
    assert report["mixed_precision"] == "no"
    assert report["arguments"]["TrainingArguments"]["per_device_train_batch_size"] == 8

    # The main process alone saved: one model file in the whole output tree, and no stray per-rank reports.
    assert [p.relative_to(out) for p in out.rglob("*.safetensors")] == [Path("model.safetensors")]
    assert [p.name for p in out.rglob("report*.json")] == ["report.json"]

    from transformers import AutoModelForCausalLM

    import hf_models  # noqa: F401  (registers the Auto classes)

    model = AutoModelForCausalLM.from_pretrained(out)
    assert type(model).__name__ == "SmallEncoderForCausalLM"
    assert model.config.hidden_size == 32
