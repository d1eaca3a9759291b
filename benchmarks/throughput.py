r"""Training and generation throughput: one of our presets against transformers' GPT-2 of the same shape.

All numbers come from one run, with the contenders interleaved (A, B, C, A, B, C, ...) so that a slower period of the
machine hits every contender alike. Medians over the repeats are reported, with the ratios.

    python benchmarks/throughput.py                       # CPU, fp32, the cs224n-mingpt preset
    python benchmarks/throughput.py --device cuda --dtype bf16 --batch_size 64
    python benchmarks/throughput.py --device cuda --dtype bf16 --preset base --batch_size 16 \
        --contenders ours_sdpa gpt2 --compile --max_batch_search

Contenders: `ours_sdpa` and `ours_eager` (our model with each attention path) and `gpt2` (`GPT2LMHeadModel` with
SDPA, built from the preset's width, depth, heads, feed-forward, block, vocabulary, dropouts and tying); `--compile`
adds a `torch.compile`d copy of each. `ours_chunked` (not run by default) is `ours_sdpa` with its LM loss computed
`--loss_chunk_size` tokens at a time (`config.loss_chunk_size`: no whole logits matrix), to time and size beside it:

    python benchmarks/throughput.py --preset altegrad-lab --contenders ours_sdpa ours_chunked --skip generation

Model FLOP utilisation (MFU) is PaLM's estimate (appendix B): 6·N + 12·L·H·Q·T
FLOPs per trained token, N the parameters that take part in matrix products (all but the embedding lookups; a
tied token table counts once, as the LM head), L layers, H heads of width Q, T tokens of context; against the
accelerator's dense bf16 peak (the table below, or `--peak_tflops`). The figures are printed; `--results_json
benchmarks/results.json` (what a whole `make bench` passes) also writes them there, under one key per device.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import torch
from torch import nn
from transformers import GPT2Config, GPT2LMHeadModel

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
from hf_models.safety import check_flag_ranges, command_line
from hf_models.safety.ranges import KEPT_SHARE, NON_NEGATIVE, POSITIVE, TOKEN_ID_LIMIT, Range
from hf_models.textio import UsageError, atomic_write_text
from hf_models.training import HelpFormatter

# Dense (not sparse) bf16 peak, in TFLOP/s, of the accelerators we may be lent, matched in order against
# torch.cuda.get_device_name() (NVIDIA's data sheets; "H100 80GB HBM3" is the SXM part).
PEAK_BF16_TFLOPS = (
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.0),
    ("H200 NVL", 835.0),
    ("H200", 989.0),
    ("A100", 312.0),
)
DEFAULT_PRESET = "cs224n-mingpt"  # the preset whose figures are `throughput` / `throughput_gpu` in results.json
BASE_CONTENDERS = ("ours_sdpa", "gpt2", "ours_eager")
CONTENDERS = (*BASE_CONTENDERS, "ours_chunked")
# This script's own counts: 0 measures nothing (a median of no time, a rate of no token).
MEASURED = ("seq_len", "steps", "repeats", "generation_repeats", "new_tokens", "prompt_len", "threads", "batch_size")
THROUGHPUT_RANGES = {
    **dict.fromkeys((*MEASURED, "max_batch_limit", "peak_tflops", "loss_chunk_size"), POSITIVE),
    "warmup_steps": NON_NEGATIVE,
    "vocab_size": Range(1, TOKEN_ID_LIMIT, high_open=True),
    "dropout": KEPT_SHARE,  # 1: the models train on zeros
}


def preset_config(args: argparse.Namespace, block_size: int | None = None) -> SmallEncoderConfig:
    """The preset with `--config_overrides`, `--vocab_size`, `--dropout` and the block size applied."""
    config = SmallEncoderConfig.from_preset(args.preset)
    if args.config_overrides:
        config.update_from_string(args.config_overrides)
    if args.vocab_size is not None:
        config.vocab_size = args.vocab_size
    config.embedding_dropout = config.attention_dropout = config.hidden_dropout = args.dropout
    if block_size is not None:
        config.max_position_embeddings = block_size
    config.validate()
    return config


def gpt2_config(config: SmallEncoderConfig) -> GPT2Config:
    """transformers' GPT-2 with our width, depth, heads, feed-forward, block, vocabulary, dropouts and tying."""
    return GPT2Config(
        vocab_size=config.vocab_size,
        n_positions=config.max_position_embeddings,
        n_embd=config.hidden_size,
        n_layer=config.num_hidden_layers,
        n_head=config.num_attention_heads,
        n_inner=config.intermediate_size,
        resid_pdrop=config.hidden_dropout,
        embd_pdrop=config.embedding_dropout,
        attn_pdrop=config.attention_dropout,
        layer_norm_epsilon=config.layer_norm_eps,
        tie_word_embeddings=config.tie_word_embeddings,
        bos_token_id=None,
        eos_token_id=None,
    )


def build_model(name: str, args: argparse.Namespace, block_size: int) -> nn.Module:
    """A contender by name (`ours_sdpa`, `ours_eager`, `ours_chunked`, `gpt2`, each with an optional `_compiled` suffix), built
    under the current seed; a compiled contender is `torch.compile` of the same model."""
    base_name = name.removesuffix("_compiled")
    config = preset_config(args, block_size)
    if base_name == "gpt2":
        model = GPT2LMHeadModel(gpt2_config(config))
        model.set_attn_implementation("sdpa")
    else:
        model = SmallEncoderForCausalLM(config)
        model.set_attn_implementation("eager" if base_name == "ours_eager" else "sdpa")
        if base_name == "ours_chunked":
            model.config.loss_chunk_size = args.loss_chunk_size
    if name.endswith("_compiled"):
        # in place: parameters and .config stay where they are
        model.compile(backend=args.compile_backend, mode=args.compile_mode)
    return model


def contender_names(args: argparse.Namespace) -> list[str]:
    return list(args.contenders) + ([f"{name}_compiled" for name in args.contenders] if args.compile else [])


def matmul_parameters(model: nn.Module) -> int:
    """N of PaLM's estimate: the parameters that take part in matrix products, so all but the embedding lookups
    (token and position tables); a token table tied to the LM head counts once, as the head (nanoGPT's count)."""
    head = model.get_output_embeddings().weight
    lookups = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding) and m.weight is not head}
    return sum(p.numel() for p in model.parameters() if id(p) not in lookups)


def flops_per_token(model: nn.Module, seq_len: int) -> float:
    """PaLM's training FLOPs per token: 6·N for the weights (forward + backward) plus 12·L·H·Q·T for attention."""
    config = model.config
    return 6 * matmul_parameters(model) + 12 * config.num_hidden_layers * config.hidden_size * seq_len


def peak_flops(args: argparse.Namespace, device: torch.device) -> float | None:
    """`--peak_tflops`, else the dense bf16 peak of a known GPU in a bf16 run; None when unknown (CPU, fp32)."""
    if args.peak_tflops is not None:
        return args.peak_tflops * 1e12
    if device.type != "cuda" or args.dtype != "bf16":
        return None
    gpu_name = torch.cuda.get_device_name(device)
    return next((tflops * 1e12 for key, tflops in PEAK_BF16_TFLOPS if key in gpu_name), None)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_steps(model, optimizer, batch, steps: int, device: torch.device, autocast_dtype) -> float:
    """Seconds for `steps` forward + backward + AdamW steps."""
    synchronize(device)
    start = time.perf_counter()
    for _ in range(steps):
        if device.type == "cuda":  # a new step for CUDA graphs (reduce-overhead); a no-op otherwise
            torch.compiler.cudagraph_mark_step_begin()
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    synchronize(device)
    return time.perf_counter() - start


def measure_training(args: argparse.Namespace, device: torch.device, autocast_dtype) -> dict:
    names = contender_names(args)
    models, optimizers = {}, {}
    for name in names:
        torch.manual_seed(0)
        models[name] = build_model(name, args, args.seq_len).to(device).train()
        optimizers[name] = torch.optim.AdamW(models[name].parameters(), lr=3e-4, fused=True)
    batch = torch.randint(0, models[names[0]].config.vocab_size, (args.batch_size, args.seq_len), device=device)
    for name in names:  # warm-up: allocator, kernels, lazy inits, compilation
        train_steps(models[name], optimizers[name], batch, args.warmup_steps, device, autocast_dtype)
    times = {name: [] for name in names}
    for _ in range(args.repeats):
        for name in names:
            times[name].append(train_steps(models[name], optimizers[name], batch, args.steps, device, autocast_dtype))
    tokens = args.batch_size * args.seq_len * args.steps
    peak = peak_flops(args, device)
    result = {}
    for name in names:
        tokens_per_s = tokens / statistics.median(times[name])
        per_token = flops_per_token(models[name], args.seq_len)
        result[name] = {
            "tokens_per_s": tokens_per_s,
            "parameters": models[name].num_parameters(),
            "flops_per_token": per_token,
            "mfu": tokens_per_s * per_token / peak if peak else None,
        }
    ours, gpt2 = result.get("ours_sdpa"), result.get("gpt2")
    if ours and gpt2:
        result["train_ratio_vs_gpt2"] = ours["tokens_per_s"] / gpt2["tokens_per_s"]
    if ours and "ours_eager" in result:
        result["sdpa_vs_eager"] = ours["tokens_per_s"] / result["ours_eager"]["tokens_per_s"]
    if ours and "ours_chunked" in result:
        result["chunked_vs_plain"] = result["ours_chunked"]["tokens_per_s"] / ours["tokens_per_s"]
    if "ours_sdpa_compiled" in result and "gpt2_compiled" in result:
        result["compiled_ratio_vs_gpt2"] = (
            result["ours_sdpa_compiled"]["tokens_per_s"] / result["gpt2_compiled"]["tokens_per_s"]
        )
    if ours:
        result["mfu"] = ours["mfu"]  # the figure results.json has always carried
    return result


def measure_generation(args: argparse.Namespace, device: torch.device, dtype) -> dict:
    """Greedy decoding of `new_tokens` tokens after a short prompt, with and without the KV cache."""
    block_size = args.prompt_len + args.new_tokens
    torch.manual_seed(0)
    model = build_model("ours_sdpa", args, block_size).to(device=device, dtype=dtype).eval()
    prompt = torch.randint(0, model.config.vocab_size, (1, args.prompt_len), device=device)
    kwargs = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        # warm-up, within the block (8 tokens past a block of prompt + 2 overflowed it)
        model.generate(prompt, max_new_tokens=min(8, args.new_tokens), do_sample=False, pad_token_id=0)
        times = {"cache": [], "no_cache": []}
        outputs = {}
        for _ in range(args.generation_repeats):
            for mode in times:
                synchronize(device)
                start = time.perf_counter()
                outputs[mode] = model.generate(prompt, use_cache=(mode == "cache"), **kwargs)
                synchronize(device)
                times[mode].append(time.perf_counter() - start)
    result = {f"{mode}_tokens_per_s": args.new_tokens / statistics.median(t) for mode, t in times.items()}
    result["kv_cache_speedup"] = result["cache_tokens_per_s"] / result["no_cache_tokens_per_s"]
    # Same tokens either way, so the speed-up is not bought with a different answer (exact in fp32).
    result["same_tokens"] = bool(torch.equal(outputs["cache"], outputs["no_cache"]))
    return result


def saved_activation_bytes(model, batch: torch.Tensor) -> int:
    """Bytes of the tensors autograd keeps for the backward pass of one training forward (each storage once)."""
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(input_ids=batch, labels=batch).loss.backward()
    parameter_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    return sum(nbytes for ptr, nbytes in storages.items() if ptr not in parameter_ptrs)


def measure_peak_memory(args: argparse.Namespace, device: torch.device, autocast_dtype) -> dict:
    """Training memory: CUDA's allocator peak over two steps; on the CPU (no allocator statistics), the
    activations saved for backward plus weights, gradients and AdamW's two moments (None for a compiled
    contender, whose saved tensors live inside the compiled graph)."""
    result = {}
    for name in contender_names(args):
        torch.manual_seed(0)
        model = build_model(name, args, args.seq_len).to(device).train()
        batch = torch.randint(0, model.config.vocab_size, (args.batch_size, args.seq_len), device=device)
        if device.type == "cuda":
            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
            torch.cuda.reset_peak_memory_stats(device)
            train_steps(model, optimizer, batch, 2, device, autocast_dtype)
            result[name] = torch.cuda.max_memory_allocated(device) / 2**20
            del optimizer
        elif name.endswith("_compiled"):
            result[name] = None
        else:
            state_bytes = 4 * sum(p.numel() * p.element_size() for p in model.parameters())
            with torch.autocast("cpu", dtype=autocast_dtype, enabled=autocast_dtype is not None):
                result[name] = (state_bytes + saved_activation_bytes(model, batch)) / 2**20
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return {f"{name}_peak_mib": value for name, value in result.items()}


def fits(model, optimizer, batch_size: int, args: argparse.Namespace, device: torch.device, autocast_dtype) -> bool:
    """Whether one training step at `batch_size` fits in the GPU's memory."""
    batch = torch.randint(0, model.config.vocab_size, (batch_size, args.seq_len), device=device)
    try:
        train_steps(model, optimizer, batch, 1, device, autocast_dtype)
        return True
    except torch.OutOfMemoryError:
        return False
    finally:
        optimizer.zero_grad(set_to_none=True)
        del batch
        torch.cuda.empty_cache()


def largest_batch(args: argparse.Namespace, device: torch.device, autocast_dtype) -> dict:
    """The largest power-of-two batch (up to `--max_batch_limit`) whose training step fits, for each contender
    without compile (a compiled graph would be recompiled at each new batch size). CUDA only."""
    result = {}
    for name in contender_names(args):
        if name.endswith("_compiled"):
            continue
        torch.manual_seed(0)
        model = build_model(name, args, args.seq_len).to(device).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
        batch_size, largest = 1, None
        while batch_size <= args.max_batch_limit and fits(model, optimizer, batch_size, args, device, autocast_dtype):
            largest, batch_size = batch_size, batch_size * 2
        result[f"{name}_max_batch"] = largest
        del model, optimizer
        torch.cuda.empty_cache()
    return result


def hardware(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}"
    return f"{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} threads, torch {torch.__version__}"


def update_results_json(path: Path, key: str, throughput: dict) -> None:
    results = json.loads(path.read_text()) if path.is_file() else {}
    results[key] = throughput
    atomic_write_text(path, json.dumps(results, indent=2) + "\n")


def results_key(args: argparse.Namespace) -> str:
    """`throughput` (CPU) or `throughput_gpu` for the default preset, as always; other presets get their own
    key (`throughput_gpu_base`), so that no preset overwrites another's figures."""
    key = "throughput" if args.device == "cpu" else "throughput_gpu"
    return key if args.preset == DEFAULT_PRESET else f"{key}_{args.preset}"


def results_entry(args: argparse.Namespace, report: dict, argv) -> dict:
    training = report["training"]
    entry = {
        "preset": args.preset,
        "train_ratio_vs_gpt2": round(training["train_ratio_vs_gpt2"], 3),
        "train_tokens_per_s": round(training["ours_sdpa"]["tokens_per_s"]),
        **({"mfu": round(training["mfu"], 4)} if training.get("mfu") is not None else {}),
        "kv_cache_speedup": round(report["generation"]["kv_cache_speedup"], 3),
        "batch_size": args.batch_size,
        "seq_len": args.seq_len,
        "hardware": report["hardware"],
        "dtype": args.dtype,
        "date": report["date"],
        "command": "python benchmarks/throughput.py " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    if "compiled_ratio_vs_gpt2" in training:
        entry["compiled_train_ratio_vs_gpt2"] = round(training["compiled_ratio_vs_gpt2"], 3)
        entry["compile_mode"] = args.compile_mode or "default"
        entry["compiled_train_tokens_per_s"] = round(training["ours_sdpa_compiled"]["tokens_per_s"])
        if training["ours_sdpa_compiled"]["mfu"] is not None:
            entry["compiled_mfu"] = round(training["ours_sdpa_compiled"]["mfu"], 4)
    for section in ("memory", "max_batch"):
        if section in report:
            entry[section] = {k: (round(v, 1) if isinstance(v, float) else v) for k, v in report[section].items()}
    return entry


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where to measure")
    parser.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"], help="fp32, or bf16 autocast")
    parser.add_argument(
        "--preset", default=DEFAULT_PRESET, choices=SmallEncoderConfig.available_presets(), help="our model's shape"
    )
    parser.add_argument("--config_overrides", default=None, help="e.g. 'num_hidden_layers=1,hidden_size=64'")
    parser.add_argument("--vocab_size", type=int, default=None, help="default: the preset's")
    parser.add_argument("--seq_len", type=int, default=None, help="default: the preset's block size")
    parser.add_argument("--dropout", type=float, default=0.1, help="all dropouts of both models (minGPT's is 0.1)")
    parser.add_argument(
        "--contenders", nargs="+", default=list(BASE_CONTENDERS), choices=CONTENDERS, help="models to time"
    )
    parser.add_argument(
        "--loss_chunk_size", type=int, default=4096, help="ours_chunked: tokens per chunk of its LM loss"
    )
    parser.add_argument("--compile", action="store_true", help="add a torch.compile'd copy of each contender")
    parser.add_argument("--compile_backend", default="inductor", help="torch.compile backend")
    parser.add_argument(
        "--compile_mode",
        default=None,
        choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
        help="torch.compile mode; reduce-overhead replays CUDA graphs (default: torch's)",
    )
    parser.add_argument("--peak_tflops", type=float, default=None, help="peak for MFU (default: the GPU's bf16)")
    parser.add_argument("--batch_size", type=int, default=16, help="sequences per training step")
    parser.add_argument("--steps", type=int, default=5, help="training steps per timed repeat")
    parser.add_argument("--warmup_steps", type=int, default=3, help="untimed steps first")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats per contender, interleaved")
    parser.add_argument("--max_batch_search", action="store_true", help="CUDA: the largest batch that fits")
    parser.add_argument("--max_batch_limit", type=int, default=1024, help="stop the doubling search here")
    parser.add_argument("--prompt_len", type=int, default=8, help="generation: prompt tokens")
    parser.add_argument(
        "--new_tokens", type=int, default=None, help="tokens to generate (default: 512 on the CPU, 128 on CUDA)"
    )
    parser.add_argument("--generation_repeats", type=int, default=3, help="generation: timed repeats")
    parser.add_argument("--threads", type=int, default=None, help="torch threads on the CPU (default: all cores)")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["training", "generation", "memory"], help="parts not to run"
    )
    parser.add_argument(
        "--results_json",
        type=Path,
        default=None,
        help="the results file to update with this run's figures (make bench gives benchmarks/results.json); "
        "without it the figures are printed only, so that a trial setting never replaces the published ones",
    )
    parser.add_argument(
        "--no_results_json", action="store_true", help="print only (the default without --results_json)"
    )
    parser.add_argument(
        "--merge_results",
        type=Path,
        default=None,
        help="measure nothing: copy the throughput sections of this file (a lent GPU's --results_json, "
        "dev/gpu_lease.sh) into --results_json",
    )
    args = parser.parse_args(argv)
    check_flag_ranges(args, ranges=THROUGHPUT_RANGES)  # --repeats 0, --dropout 1: one line naming the flag
    if args.merge_results is not None and args.results_json is None:
        parser.error("--merge_results needs --results_json, the file to copy the sections into")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    if args.max_batch_search and args.device != "cuda":
        parser.error("--max_batch_search needs --device cuda (there is no out-of-memory error to find on the CPU)")
    # A GPU run is mostly launch overhead at batch 1: 128 tokens give the same ratio and fit the device's time.
    args.new_tokens = args.new_tokens or (512 if args.device == "cpu" else 128)
    args.seq_len = args.seq_len or preset_config(args).max_position_embeddings
    return args


def print_training(training: dict, args: argparse.Namespace) -> None:
    print(f"\ntraining (forward + backward + AdamW), median of {args.repeats} interleaved repeats")
    print(f"  {'contender':<20} {'tokens/s':>11} {'MFU':>7} {'parameters':>13}")
    for name in contender_names(args):
        row = training[name]
        mfu = f"{100 * row['mfu']:.1f}%" if row["mfu"] is not None else "n/a"
        print(f"  {name:<20} {row['tokens_per_s']:>11.0f} {mfu:>7} {row['parameters']:>13,}")
    print(f"  FLOPs per token (PaLM, 6N + 12LHQT): {training[contender_names(args)[0]]['flops_per_token']:.4g}")
    for key, label in (
        ("train_ratio_vs_gpt2", "ours / GPT-2"),
        ("compiled_ratio_vs_gpt2", "ours / GPT-2, compiled"),
        ("sdpa_vs_eager", "SDPA / eager"),
        ("chunked_vs_plain", "chunked loss / whole logits"),
    ):
        if key in training:
            print(f"  {label:<24} = {training[key]:.2f}x")


def print_generation(generation: dict, args: argparse.Namespace) -> None:
    print(f"\ngreedy generation of {args.new_tokens} new tokens, batch 1")
    print(f"  with KV cache    {generation['cache_tokens_per_s']:>8.1f} tokens/s")
    print(f"  without cache    {generation['no_cache_tokens_per_s']:>8.1f} tokens/s")
    print(f"  speed-up         = {generation['kv_cache_speedup']:.1f}x   (target >= 5x)")
    print(f"  same tokens      = {generation['same_tokens']}")


def print_memory(memory: dict, device: torch.device) -> None:
    if device.type == "cuda":
        kind = "CUDA allocator peak (torch.cuda.max_memory_allocated)"
    else:
        kind = "activations saved for backward + weights, gradients, AdamW moments"
    print(f"\ntraining memory (MiB): {kind}")
    for key, value in memory.items():
        print(f"  {key:<28} {value:>8.1f}" if value is not None else f"  {key:<28} {'n/a':>8}")


def merge_results(source: Path, target: Path) -> dict:
    """Copy the `throughput*` sections of `source` into `target`, each replacing the section of its name."""
    try:
        loaded = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise UsageError(f"{source}: not JSON ({error})") from None
    sections = {key: value for key, value in loaded.items() if key.startswith("throughput")}
    if not sections:
        raise UsageError(f"{source}: no throughput section to copy")
    for key, value in sections.items():
        update_results_json(target, key, value)
        print(f"wrote {key} ({value.get('hardware')}, {value.get('date')}) to {target}")
    return sections


def main(argv=None) -> dict:
    args = parse_args(argv)
    if args.merge_results is not None:
        return merge_results(args.merge_results, args.results_json)
    args.threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    autocast_dtype = torch.bfloat16 if args.dtype == "bf16" else None
    report = {
        "hardware": hardware(device),
        "dtype": args.dtype,
        "date": date.today().isoformat(),
        "preset": args.preset,
    }
    print(
        f"# {report['hardware']}, {args.dtype}, preset {args.preset}, batch {args.batch_size} x seq {args.seq_len}, "
        f"vocab {preset_config(args).vocab_size}"
    )

    if "training" not in args.skip:
        report["training"] = measure_training(args, device, autocast_dtype)
        print_training(report["training"], args)
    if "generation" not in args.skip:
        report["generation"] = measure_generation(args, device, torch.bfloat16 if autocast_dtype else torch.float32)
        print_generation(report["generation"], args)
    if "memory" not in args.skip:
        report["memory"] = measure_peak_memory(args, device, autocast_dtype)
        print_memory(report["memory"], device)
    if args.max_batch_search:
        report["max_batch"] = largest_batch(args, device, autocast_dtype)
        print(
            f"\nlargest batch that fits (powers of two up to {args.max_batch_limit}, without compile, seq {args.seq_len})"
        )
        for key, value in report["max_batch"].items():
            print(f"  {key:<28} {value}")

    has_both = "training" in report and "generation" in report
    write = args.results_json is not None and not args.no_results_json
    if write and has_both and "train_ratio_vs_gpt2" in report["training"]:
        # One key per device (and preset), so that a GPU run never overwrites the CPU profile's figures.
        update_results_json(args.results_json, results_key(args), results_entry(args, report, argv))
        print(f"\nwrote {results_key(args)} to {args.results_json}")
    return report


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
