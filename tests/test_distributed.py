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
from tiny import TINY

from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_quiet_defaults_leave_out_what_only_makes_noise(tmp_path):
    """No pinned memory without an accelerator; no DDP search for unused parameters unless the model can skip some
    (an adaptive softmax) or the flag is given."""
    import torch
    from transformers import TrainingArguments

    from hf_models.training import train_model

    def defaults(model: torch.nn.Module, **flags) -> tuple:
        args = TrainingArguments(output_dir=str(tmp_path), report_to="none", num_train_epochs=0, **flags)
        trainer, _ = train_model(model, args, None, [], None)  # zero epochs: built, nothing trained
        return trainer.args.dataloader_pin_memory, trainer.args.ddp_find_unused_parameters

    accelerator = torch.accelerator.is_available()
    assert defaults(torch.nn.Linear(4, 2)) == (accelerator, False)
    adaptive = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs=[10])
    assert defaults(torch.nn.Sequential(torch.nn.Linear(4, 8), adaptive)) == (accelerator, True)
    assert defaults(torch.nn.Linear(4, 2), ddp_find_unused_parameters=True)[1] is True


@pytest.mark.slow
def test_pretrain_two_processes_on_cpu(tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    out = tmp_path / "ddp"
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(_free_port()),
        str(REPO_ROOT / "recipes" / "pretrain.py"),
        "--objective",
        "clm",
        "--train_files",
        str(synthetic_birthplace_dir / "wiki.txt"),
        "--tokenizer_name_or_path",
        str(tiny_tokenizer_dir),
        "--config_overrides",
        TINY,
        "--block_size",
        "32",
        "--output_dir",
        str(out),
        "--max_steps",
        "8",
        "--per_device_train_batch_size",
        "8",
        "--learning_rate",
        "5e-3",
        "--logging_steps",
        "2",
        "--use_cpu",
        "--report_to",
        "none",
        "--save_strategy",
        "no",
        "--disable_tqdm",
        "true",
    ]
    # One thread per rank: the two ranks share the machine's cores.
    env = {**os.environ, **OFFLINE_ENVIRONMENT, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # Quiet: DDP searches for no unused parameter (all are used), and the plateau of 8 steps is said once, by the main
    # process, not by each rank.
    output = result.stdout + result.stderr
    assert "find_unused_parameters" not in output and "pin_memory" not in output
    assert output.count("PLATEAU:") == 1, output[-3000:]

    report = json.loads((out / "report.json").read_text())
    hardware = json.loads((out / "run_record.json").read_text())["hardware"]
    assert hardware["world_size"] == 2
    assert json.loads((out / "all_results.json").read_text())["plateau"] is True
    assert hardware["mixed_precision"] == "no"
    assert report["arguments"]["TrainingArguments"]["per_device_train_batch_size"] == 8

    # The main process alone saved: one model file in the whole output tree, and no stray per-rank reports.
    assert [p.relative_to(out) for p in out.rglob("*.safetensors")] == [Path("model.safetensors")]
    assert [p.name for p in out.rglob("report*.json")] == ["report.json"]

    from transformers import AutoModelForCausalLM

    import hf_models.small_encoder  # noqa: F401  (registers the Auto classes)

    model = AutoModelForCausalLM.from_pretrained(out)
    assert type(model).__name__ == "SmallEncoderForCausalLM"
    assert model.config.hidden_size == 32


@pytest.mark.slow
def test_fsdp2_two_processes_on_cpu(tmp_path):
    """FSDP2 (`fully_shard`, gloo) on the CPU with torchrun: accelerate 1.15 falls back to DDP on a CPU (see the
    worker's docstring), so `tests/fsdp2_cpu_worker.py` shards the model itself, as accelerate's FSDP2 plugin does."""
    out = tmp_path / "fsdp"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(_free_port()),
        str(REPO_ROOT / "tests" / "fsdp2_cpu_worker.py"),
        str(out),
    ]
    env = {**os.environ, **OFFLINE_ENVIRONMENT, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    facts = json.loads((out / "fsdp_facts.json").read_text())
    # Really sharded: rank 0 held half of each weight's rows.
    assert facts["world_size"] == 2 and facts["sharded"] and 2 * facts["local_rows"] == facts["full_rows"]

    import torch
    from transformers import AutoModelForCausalLM

    import hf_models.small_encoder  # noqa: F401  (registers the Auto classes)

    probe = torch.load(out / "probe.pt")
    model = AutoModelForCausalLM.from_pretrained(out)
    assert (
        type(model).__name__ == "SmallEncoderForCausalLM" and model.lm_head.weight is model.model.embed_tokens.weight
    )
    with torch.no_grad():
        logits = model(input_ids=probe["probe"]).logits
    torch.testing.assert_close(logits, probe["logits"], rtol=0, atol=0)  # the trained sharded model's logits
    # Sharded training on two halves of each batch = unsharded training on the whole batch.
    torch.testing.assert_close(logits, probe["reference_logits"], rtol=1e-4, atol=1e-5)

    # The folder carries our code for trust_remote_code, not torch's FSDP wrapper class.
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["SmallEncoderForCausalLM"]
    assert config["auto_map"]["AutoModelForCausalLM"] == "modeling_small_encoder.SmallEncoderForCausalLM"
    assert sorted(p.name for p in out.glob("*.py")) == ["configuration_small_encoder.py", "modeling_small_encoder.py"]
