"""Training and generation throughput: our cs224n-mingpt preset against transformers' GPT-2 of the same size.

All numbers come from one run, with the contenders interleaved (A, B, C, A, B, C, ...) so that a slower period of the
machine hits every contender alike. Medians over the repeats are reported, with the ratios.

    python benchmarks/throughput.py                       # CPU, fp32
    python benchmarks/throughput.py --device cuda --dtype bf16
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
from transformers import GPT2Config, GPT2LMHeadModel

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM

# Dense bf16 peak of the accelerators we may be lent, for model FLOP utilisation.
PEAK_BF16_FLOPS = {"H100": 989e12, "H200": 989e12, "A100": 312e12}


def build_models(name: str, args: argparse.Namespace, block_size: int) -> torch.nn.Module:
    """The contenders: same width, depth, heads, block, vocabulary and dropouts."""
    if name == "gpt2":
        config = GPT2Config(
            vocab_size=args.vocab_size,
            n_positions=block_size,
            n_embd=256,
            n_layer=4,
            n_head=8,
            n_inner=1024,
            resid_pdrop=args.dropout,
            embd_pdrop=args.dropout,
            attn_pdrop=args.dropout,
            bos_token_id=None,
            eos_token_id=None,
        )
        return GPT2LMHeadModel(config)
    config = SmallEncoderConfig.from_preset(
        args.preset,
        vocab_size=args.vocab_size,
        max_position_embeddings=block_size,
        embedding_dropout=args.dropout,
        attention_dropout=args.dropout,
        hidden_dropout=args.dropout,
    )
    model = SmallEncoderForCausalLM(config)
    model.set_attn_implementation("eager" if name == "ours_eager" else "sdpa")
    return model


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_steps(model, optimizer, batch, steps: int, device: torch.device, autocast_dtype) -> float:
    """Seconds for `steps` forward + backward + AdamW steps."""
    synchronize(device)
    start = time.perf_counter()
    for _ in range(steps):
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    synchronize(device)
    return time.perf_counter() - start


def measure_training(args: argparse.Namespace, device: torch.device, autocast_dtype) -> dict:
    names = ["ours_sdpa", "gpt2", "ours_eager"]
    models, optimizers = {}, {}
    for name in names:
        torch.manual_seed(0)
        models[name] = build_models(name, args, args.seq_len).to(device).train()
        optimizers[name] = torch.optim.AdamW(models[name].parameters(), lr=3e-4, fused=True)
    batch = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len), device=device)
    for name in names:  # warm-up: allocator, kernels, lazy inits
        train_steps(models[name], optimizers[name], batch, args.warmup_steps, device, autocast_dtype)
    times = {name: [] for name in names}
    for _ in range(args.repeats):
        for name in names:
            times[name].append(train_steps(models[name], optimizers[name], batch, args.steps, device, autocast_dtype))
    tokens = args.batch_size * args.seq_len * args.steps
    result = {
        name: {
            "tokens_per_s": tokens / statistics.median(times[name]),
            "parameters": models[name].num_parameters(),
        }
        for name in names
    }
    result["train_ratio_vs_gpt2"] = result["ours_sdpa"]["tokens_per_s"] / result["gpt2"]["tokens_per_s"]
    result["sdpa_vs_eager"] = result["ours_sdpa"]["tokens_per_s"] / result["ours_eager"]["tokens_per_s"]
    if device.type == "cuda":
        result["mfu"] = model_flop_utilisation(
            result["ours_sdpa"]["tokens_per_s"], models["ours_sdpa"], args.seq_len, device
        )
    return result


def model_flop_utilisation(tokens_per_s: float, model, seq_len: int, device: torch.device) -> float | None:
    """PaLM's estimate: 6·N FLOPs per token for the weights, plus 12·layers·d·T for attention."""
    config = model.config
    flops_per_token = 6 * model.num_parameters() + 12 * config.num_hidden_layers * config.hidden_size * seq_len
    gpu_name = torch.cuda.get_device_name(device)
    peak = next((flops for key, flops in PEAK_BF16_FLOPS.items() if key in gpu_name), None)
    return tokens_per_s * flops_per_token / peak if peak else None


def measure_generation(args: argparse.Namespace, device: torch.device, dtype) -> dict:
    """Greedy decoding of `new_tokens` tokens after a short prompt, with and without the KV cache."""
    block_size = args.prompt_len + args.new_tokens
    torch.manual_seed(0)
    model = build_models("ours_sdpa", args, block_size).to(device=device, dtype=dtype).eval()
    prompt = torch.randint(0, args.vocab_size, (1, args.prompt_len), device=device)
    kwargs = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        model.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)  # warm-up
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
    activations saved for backward plus weights, gradients and AdamW's two moments."""
    result = {}
    for name in ["ours_sdpa", "gpt2", "ours_eager"]:
        torch.manual_seed(0)
        model = build_models(name, args, args.seq_len).to(device).train()
        batch = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len), device=device)
        if device.type == "cuda":
            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
            torch.cuda.reset_peak_memory_stats(device)
            train_steps(model, optimizer, batch, 2, device, autocast_dtype)
            result[name] = torch.cuda.max_memory_allocated(device) / 2**20
            del optimizer
            torch.cuda.empty_cache()
        else:
            state_bytes = 4 * sum(p.numel() * p.element_size() for p in model.parameters())
            with torch.autocast("cpu", dtype=autocast_dtype, enabled=autocast_dtype is not None):
                result[name] = (state_bytes + saved_activation_bytes(model, batch)) / 2**20
        del model
    return {f"{name}_peak_mib": value for name, value in result.items()}


def hardware(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}"
    return f"{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} threads, torch {torch.__version__}"


def update_results_json(path: Path, key: str, throughput: dict) -> None:
    results = json.loads(path.read_text()) if path.is_file() else {}
    results[key] = throughput
    path.write_text(json.dumps(results, indent=2) + "\n")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--preset", default="cs224n-mingpt")
    parser.add_argument("--vocab_size", type=int, default=256)
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--dropout", type=float, default=0.1, help="all dropouts of both models (minGPT's is 0.1)")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5, help="training steps per timed repeat")
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--prompt_len", type=int, default=8)
    parser.add_argument("--new_tokens", type=int, default=512)
    parser.add_argument("--generation_repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch threads on the CPU (default: all cores)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["training", "generation", "memory"])
    parser.add_argument("--results_json", type=Path, default=Path(__file__).resolve().parent / "results.json")
    parser.add_argument("--no_results_json", action="store_true", help="print only; do not update results.json")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    args.threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    autocast_dtype = torch.bfloat16 if args.dtype == "bf16" else None
    report = {"hardware": hardware(device), "dtype": args.dtype, "date": date.today().isoformat()}
    print(
        f"# {report['hardware']}, {args.dtype}, batch {args.batch_size} x seq {args.seq_len}, vocab {args.vocab_size}"
    )

    if "training" not in args.skip:
        training = measure_training(args, device, autocast_dtype)
        report["training"] = training
        print("\ntraining tokens/s (forward + backward + AdamW), median of", args.repeats, "interleaved repeats")
        for name in ["ours_sdpa", "gpt2", "ours_eager"]:
            print(f"  {name:<11} {training[name]['tokens_per_s']:>10.0f}  ({training[name]['parameters']:,} params)")
        print(f"  ours / GPT-2     = {training['train_ratio_vs_gpt2']:.2f}x   (target >= 1.5x)")
        print(f"  SDPA / eager     = {training['sdpa_vs_eager']:.2f}x")
        if training.get("mfu") is not None:
            print(f"  model FLOP utilisation = {100 * training['mfu']:.1f}%")

    if "generation" not in args.skip:
        generation = measure_generation(args, device, torch.bfloat16 if autocast_dtype else torch.float32)
        report["generation"] = generation
        print(f"\ngreedy generation of {args.new_tokens} new tokens, batch 1")
        print(f"  with KV cache    {generation['cache_tokens_per_s']:>8.1f} tokens/s")
        print(f"  without cache    {generation['no_cache_tokens_per_s']:>8.1f} tokens/s")
        print(f"  speed-up         = {generation['kv_cache_speedup']:.1f}x   (target >= 5x)")
        print(f"  same tokens      = {generation['same_tokens']}")

    if "memory" not in args.skip:
        memory = measure_peak_memory(args, device, autocast_dtype)
        report["memory"] = memory
        print(
            "\ntraining memory (MiB): "
            + (
                "CUDA allocator peak"
                if device.type == "cuda"
                else "activations saved for backward + weights, gradients, AdamW moments"
            )
        )
        for key, value in memory.items():
            print(f"  {key:<20} {value:>8.1f}")

    if not args.no_results_json and "training" in report and "generation" in report:
        training = report["training"]
        entry = {
            "train_ratio_vs_gpt2": round(training["train_ratio_vs_gpt2"], 3),
            "train_tokens_per_s": round(training["ours_sdpa"]["tokens_per_s"]),
            **({"mfu": round(training["mfu"], 4)} if training.get("mfu") is not None else {}),
            "kv_cache_speedup": round(report["generation"]["kv_cache_speedup"], 3),
            "hardware": report["hardware"],
            "dtype": args.dtype,
            "date": report["date"],
            "command": "python benchmarks/throughput.py " + " ".join(sys.argv[1:] if argv is None else argv),
        }
        # One key per device, so that a GPU run never overwrites the CPU profile's figures.
        update_results_json(args.results_json, "throughput" if device.type == "cpu" else "throughput_gpu", entry)
        print(f"\nwrote {args.results_json}")
    return report


if __name__ == "__main__":
    main()
