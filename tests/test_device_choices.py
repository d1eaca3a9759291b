"""The code that only runs on a GPU, run on the CPU with the device faked: what it chooses for each card.

`torch.cuda.is_available` / `get_device_name` are monkeypatched; tensors that must live off the CPU live on the
`meta` device (shapes only, no kernel). Each real card name NVIDIA's driver reports for the cards we may be lent
must find its own row of `benchmarks/throughput.py`'s peak table (a wrong order of the rows would give an H100 NVL
the H100 SXM's peak), and each row's number is the dense bf16 figure of NVIDIA's data sheet.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import throughput
import torch
import write_results

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
from hf_models.run_record import hardware
from hf_models.small_encoder import modeling_small_encoder
from hf_models.tasks.birthplace import evaluation_device
from hf_models.training.trainer import ReproducibleTrainer

# Dense (no sparsity) bf16 Tensor Core TFLOP/s in NVIDIA's data sheets, which print the sparse figure (twice the
# dense one) with an asterisk: H100 SXM 1,979*, H100 PCIe 1,513* (H100 data sheet), H100 NVL 1,671* (H100 NVL
# product brief), H200 SXM 1,979*, H200 NVL 1,671* (H200 data sheet), A100 312 (A100 data sheet, 40 and 80 GB,
# SXM and PCIe alike).
DATA_SHEET_DENSE_BF16 = {
    "H100 SXM": 1979 / 2,
    "H100 PCIe": 1513 / 2,
    "H100 NVL": 1671 / 2,
    "H200 SXM": 1979 / 2,
    "H200 NVL": 1671 / 2,
    "A100": 312.0,
}
# What `torch.cuda.get_device_name()` returns on each card (nvidia-smi's names): (table row it must match, card).
REAL_CARD_NAMES = {
    "NVIDIA H100 80GB HBM3": ("H100", "H100 SXM"),
    "NVIDIA H100 PCIe": ("H100 PCIe", "H100 PCIe"),
    "NVIDIA H100 NVL": ("H100 NVL", "H100 NVL"),
    "NVIDIA H200": ("H200", "H200 SXM"),
    "NVIDIA H200 NVL": ("H200 NVL", "H200 NVL"),
    "NVIDIA A100-SXM4-80GB": ("A100", "A100"),
    "NVIDIA A100-SXM4-40GB": ("A100", "A100"),
    "NVIDIA A100-PCIE-40GB": ("A100", "A100"),
    "NVIDIA A100 80GB PCIe": ("A100", "A100"),
}
# Cards with no row: no MFU is better than another card's peak.
UNKNOWN_CARDS = ("NVIDIA L4", "NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-16GB", "NVIDIA H800", "NVIDIA L40S")


@pytest.fixture
def fake_gpu(monkeypatch):
    """A CUDA machine as torch reports it; `fake_gpu(name)` sets the card's name."""

    def install(name: str = "NVIDIA H100 80GB HBM3") -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)

    return install


def _matched_row(name: str) -> str | None:
    return next((key for key, _ in throughput.PEAK_BF16_TFLOPS if key in name), None)


def test_every_row_of_the_peak_table_is_some_real_cards_row():
    rows = [key for key, _ in throughput.PEAK_BF16_TFLOPS]
    assert len(set(rows)) == len(rows)
    assert sorted(rows) == sorted({row for row, _ in REAL_CARD_NAMES.values()})


@pytest.mark.parametrize("name", sorted(REAL_CARD_NAMES))
def test_each_real_card_gets_its_own_data_sheet_peak(fake_gpu, name):
    fake_gpu(name)
    row, card = REAL_CARD_NAMES[name]
    assert _matched_row(name) == row  # the first row that matches, in the table's order
    args = argparse.Namespace(peak_tflops=None, dtype="bf16")
    peak = throughput.peak_flops(args, torch.device("cuda", 0))
    assert peak == pytest.approx(DATA_SHEET_DENSE_BF16[card] * 1e12, abs=0.5e12)


@pytest.mark.parametrize("name", UNKNOWN_CARDS)
def test_an_unknown_card_has_no_peak(fake_gpu, name):
    fake_gpu(name)
    assert throughput.peak_flops(argparse.Namespace(peak_tflops=None, dtype="bf16"), torch.device("cuda")) is None


def test_peak_only_for_a_bf16_run_on_a_gpu_unless_given(fake_gpu):
    fake_gpu("NVIDIA H100 80GB HBM3")
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    assert throughput.peak_flops(argparse.Namespace(peak_tflops=None, dtype="fp32"), cuda) is None
    assert throughput.peak_flops(argparse.Namespace(peak_tflops=None, dtype="bf16"), cpu) is None
    assert throughput.peak_flops(argparse.Namespace(peak_tflops=123.0, dtype="fp32"), cpu) == 123e12
    assert throughput.peak_flops(argparse.Namespace(peak_tflops=500.0, dtype="bf16"), cuda) == 500e12


@pytest.mark.parametrize("name", ["NVIDIA H100 NVL", "NVIDIA H200"])
def test_the_card_name_reaches_every_report(fake_gpu, monkeypatch, capsys, name):
    fake_gpu(name)
    cuda = torch.device("cuda", 0)
    assert throughput.hardware(cuda) == f"{name}, torch {torch.__version__}"
    assert throughput.results_key(argparse.Namespace(device="cuda", preset=throughput.DEFAULT_PRESET)) == (
        "throughput_gpu"
    )
    throughput.print_memory({"ours_sdpa_peak_mib": 1.0}, cuda)
    assert "CUDA allocator peak (torch.cuda.max_memory_allocated)" in capsys.readouterr().out
    monkeypatch.delenv("BENCH_HARDWARE", raising=False)
    assert write_results.default_hardware() == f"{name}, {os.cpu_count()} CPU cores"
    monkeypatch.setenv("BENCH_HARDWARE", "given by hand")
    assert write_results.default_hardware() == "given by hand"
    run = SimpleNamespace(device=cuda, world_size=2, mixed_precision="bf16")
    assert hardware(run) == {"world_size": 2, "mixed_precision": "bf16", "device": name}


def test_a_bf16_run_on_a_gpu_records_the_card_and_bf16(fake_gpu, monkeypatch, tmp_path):
    """`--bf16 true` on an Ampere-or-newer card: transformers' own check passes and the record says bf16."""
    import transformers.training_args as training_args_module
    from transformers import TrainingArguments

    fake_gpu("NVIDIA A100-SXM4-80GB")
    monkeypatch.setattr(training_args_module, "is_torch_bf16_gpu_available", lambda *args, **kwargs: True)
    monkeypatch.setattr(TrainingArguments, "device", property(lambda self: torch.device("cuda", 0)))
    monkeypatch.setattr(TrainingArguments, "world_size", property(lambda self: 1))
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)
    args = TrainingArguments(output_dir=str(tmp_path), bf16=True, report_to="none")
    assert hardware(args) == {"world_size": 1, "mixed_precision": "bf16", "device": "NVIDIA A100-SXM4-80GB"}
    plain = TrainingArguments(output_dir=str(tmp_path), report_to="none")
    assert hardware(plain)["mixed_precision"] == "no"


def test_on_a_cpu_the_reports_name_the_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("BENCH_HARDWARE", raising=False)
    assert write_results.default_hardware().endswith("CPU, no GPU")
    assert " CPU, " in throughput.hardware(torch.device("cpu"))
    assert hardware(SimpleNamespace(device=torch.device("cpu"), world_size=1))["device"] == "cpu"


def test_birthplace_evaluates_on_the_gpu_unless_told_otherwise(fake_gpu, monkeypatch):
    assert evaluation_device(use_cpu=False) in ("cpu", "cuda")
    fake_gpu()
    assert (evaluation_device(use_cpu=False), evaluation_device(use_cpu=True)) == ("cuda", "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert (evaluation_device(use_cpu=False), evaluation_device(use_cpu=True)) == ("cpu", "cpu")


def test_evaluation_forks_the_cuda_generator_of_the_current_device(fake_gpu, monkeypatch):
    """An evaluation in the middle of training draws nothing from the training's random streams: on a GPU, the
    CUDA generator of the current device is forked too (the CPU one always is)."""
    from transformers import Trainer

    forked = []

    @contextlib.contextmanager
    def fork_rng(devices=None, **kwargs):
        forked.append(list(devices))
        yield

    monkeypatch.setattr(torch.random, "fork_rng", fork_rng)
    monkeypatch.setattr(Trainer, "evaluate", lambda self, *args, **kwargs: {"eval_loss": 1.0})
    trainer = object.__new__(ReproducibleTrainer)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert trainer.evaluate() == {"eval_loss": 1.0}
    fake_gpu()
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    assert trainer.evaluate() == {"eval_loss": 1.0}
    assert forked == [[], [3]]


def _attention_paths(device: str, dropout: float, training: bool, output_attentions: bool = False) -> list[str]:
    """Which attention each layer of a tiny model ran on `device`: 'eager' (ours) or the configured kernel."""
    config = SmallEncoderConfig.from_preset("cs224n-mingpt")
    config.update_from_string(
        "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=16"
    )
    config.vocab_size, config.attention_dropout = 40, dropout
    paths = []
    real = modeling_small_encoder.eager_attention_forward

    def eager(*args, **kwargs):
        paths.append("eager")
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(modeling_small_encoder, "eager_attention_forward", eager)
        with torch.device(device):
            model = SmallEncoderForCausalLM(config)
        model.train(training)
        ids = torch.zeros(2, 8, dtype=torch.long, device=device)
        model(input_ids=ids, output_attentions=output_attentions, use_cache=False)
    return paths + ["kernel"] * (config.num_hidden_layers - len(paths))


def test_attention_kernel_choice_by_device():
    """Dropout on the attention weights in training: our eager path on the CPU (torch's fused CPU kernels have
    none), the configured kernel (SDPA) on any other device; without dropout the kernel everywhere; weights asked
    for: eager everywhere."""
    assert _attention_paths("cpu", dropout=0.1, training=True) == ["eager", "eager"]
    assert _attention_paths("meta", dropout=0.1, training=True) == ["kernel", "kernel"]
    assert _attention_paths("cpu", dropout=0.1, training=False) == ["kernel", "kernel"]
    assert _attention_paths("cpu", dropout=0.0, training=True) == ["kernel", "kernel"]
    assert _attention_paths("meta", dropout=0.0, training=False, output_attentions=True) == ["eager", "eager"]


REPO_ROOT = Path(__file__).resolve().parent.parent
COURSE_CONFIGS = sorted(REPO_ROOT.glob("configs/*/course/*.json"))
# The course trainings whose batches keep one shape: the lab's LM reads packed blocks of 128 tokens, CS224N's
# pretrainings span-corrupted paragraphs padded to the block (then trimmed to the batch's longest, 115 of 128 at
# nearly every batch of 256 or 512). Dynamically padded batches (the finetunings) would recompile at each new length.
COMPILED_COURSE_STEPS = {"altegrad/lm.json", "cs224n/pretrain_vanilla.json", "cs224n/pretrain_synthesizer.json"}


def test_the_course_presets_compile_their_fixed_shape_trainings_with_cuda_graphs(fake_gpu, monkeypatch, tmp_path):
    """On a GPU, `Trainer` compiles what the course presets say: inductor with CUDA graphs (`reduce-overhead`), for
    the fixed-shape trainings only; the lab's LM also computes its loss in chunks."""
    import dataclasses
    import json

    import transformers.training_args as training_args_module
    from transformers import TrainingArguments

    fake_gpu("NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(training_args_module, "is_torch_bf16_gpu_available", lambda *args, **kwargs: True)
    monkeypatch.setattr(TrainingArguments, "device", property(lambda self: torch.device("cuda", 0)))
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)
    fields = {field.name for field in dataclasses.fields(TrainingArguments)}
    compiled = set()
    assert len(COURSE_CONFIGS) == 10
    for path in COURSE_CONFIGS:
        values = json.loads(path.read_text(encoding="utf-8"))
        args = TrainingArguments(output_dir=str(tmp_path), **{k: v for k, v in values.items() if k in fields})
        step = f"{path.parent.parent.name}/{path.name}"
        if args.torch_compile:
            compiled.add(step)
            assert (args.torch_compile_backend, args.torch_compile_mode) == ("inductor", "reduce-overhead"), step
            trainer = object.__new__(ReproducibleTrainer)  # what Trainer hands accelerate, without a model
            trainer.args, trainer.model = args, None
            plugin = trainer._build_accelerator_args()["dynamo_plugin"]
            assert (plugin.backend.value.lower(), plugin.mode) == ("inductor", "reduce-overhead"), step
            # An fp32 training stays fp32: Trainer turns TF32 on for a compiled run unless told not to.
            assert args.bf16 or args.tf32 is False, step
        overrides = dict(o.split("=") for o in values.get("config_overrides", "").split(",") if o)
        assert ("loss_chunk_size" in overrides) == (step == "altegrad/lm.json"), step
    assert compiled == COMPILED_COURSE_STEPS


def test_the_lab_lm_trains_on_its_chunked_loss_at_full_size(monkeypatch):
    """The lab's LM as its course preset builds it (vocabulary 50,001, a batch of 128 x 128), on the meta device
    (shapes only): the training step computes its loss in chunks and returns no logits; evaluation returns them."""
    import json

    values = json.loads((REPO_ROOT / "configs/altegrad/course/lm.json").read_text(encoding="utf-8"))
    config = SmallEncoderConfig.from_preset(values["model_config"])
    config.update_from_string(values["config_overrides"])
    assert config.loss_chunk_size == 4096 and config.vocab_size == 50001
    chunks = []
    real = modeling_small_encoder.F.linear

    def linear(input, weight, bias=None):
        if weight.shape[0] == config.vocab_size:
            chunks.append(tuple(input.shape))
        return real(input, weight, bias)

    monkeypatch.setattr(modeling_small_encoder.F, "linear", linear)
    with torch.device("meta"):
        model = SmallEncoderForCausalLM(config)
        batch = torch.zeros(values["per_device_train_batch_size"], values["block_size"], dtype=torch.long)
    outputs = model.train()(input_ids=batch, labels=batch)
    outputs.loss.backward()
    assert outputs.logits is None and model.lm_head.weight.grad.shape == (50001, 200)
    assert chunks == [(4096, 200)] * 4  # 16,384 tokens: at most 4,096 x 50,001 logits at once, never all
    chunks.clear()
    with torch.no_grad():
        logits = model.eval()(input_ids=batch[:2], labels=batch[:2]).logits
    assert logits.shape == (2, 128, 50001)


@pytest.mark.parametrize(("mode", "marks"), [("reduce-overhead", 1), (None, 0), ("default", 0)])
def test_each_loss_of_a_cuda_graphs_run_starts_a_new_step(monkeypatch, mode, marks):
    """With CUDA graphs (`--torch_compile_mode reduce-overhead`) every loss Trainer computes, in training or in an
    evaluation between two steps, tells torch that a new step begins; other modes leave torch alone."""
    from transformers import Trainer

    calls = []
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: calls.append("mark"))
    monkeypatch.setattr(Trainer, "compute_loss", lambda self, model, inputs, *a, **k: calls.append("loss") or 1.0)
    trainer = object.__new__(ReproducibleTrainer)
    trainer.args = SimpleNamespace(torch_compile_mode=mode)
    assert trainer.compute_loss(None, {}, return_outputs=False) == 1.0
    assert calls == ["mark"] * marks + ["loss"]
