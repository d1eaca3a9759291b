"""`Trainer`'s `--torch_compile true` on our model, on the CPU: it trains, with the losses of eager mode, and the
saved model is the trained one (no `_orig_mod.` prefixes). The compiled run also computes its loss in chunks
(`loss_chunk_size`, as the lab's course preset does on a GPU) and the eager one on the whole logits: one compilation
checks both against the plain path."""

from __future__ import annotations

import pytest
import torch
from transformers import HfArgumentParser, TrainingArguments, default_data_collator

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
from hf_models.training import train_model

pytestmark = pytest.mark.slow
# Dropout off: compiled and eager draw different random masks, and the comparison is of the arithmetic.
TINY_BASE = dict(
    vocab_size=128,
    hidden_size=32,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=32,
    embedding_dropout=0.0,
    attention_dropout=0.0,
    hidden_dropout=0.0,
)


def cpp_compiler() -> str | None:
    """The C++ compiler inductor would build its CPU kernels with, or None."""
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        return get_cpp_compiler()
    except Exception:  # inductor raises its own errors when no compiler is found
        return None


def train(tmp_path, compile_model: bool, loss_chunk_size: int = 0):
    from datasets import Dataset

    ids = torch.randint(0, TINY_BASE["vocab_size"], (24, 32), generator=torch.Generator().manual_seed(1)).tolist()
    dataset = Dataset.from_dict({"input_ids": ids, "labels": ids})
    flags = ["--output_dir", str(tmp_path / f"compile_{compile_model}"), "--torch_compile", str(compile_model).lower()]
    # The course presets' mode: CUDA graphs on a GPU; on the CPU inductor skips them, and Trainer marks each step.
    flags += ["--torch_compile_mode", "reduce-overhead"] if compile_model else []
    flags += [
        "--max_steps",
        "3",
        "--per_device_train_batch_size",
        "8",
        "--learning_rate",
        "1e-2",
        "--logging_steps",
        "1",
    ]
    flags += ["--use_cpu", "--report_to", "none", "--save_strategy", "no", "--disable_tqdm", "true", "--seed", "0"]
    (training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(flags)
    torch.manual_seed(0)
    config = SmallEncoderConfig.from_preset("base", **TINY_BASE, loss_chunk_size=loss_chunk_size)
    model = SmallEncoderForCausalLM(config)
    trainer, _ = train_model(model, training_args, None, dataset, default_data_collator)
    return trainer


def test_trainer_torch_compile_matches_eager(tmp_path, monkeypatch):
    if cpp_compiler() is None:
        pytest.skip("torch.compile's inductor backend builds C++ kernels on the CPU and found no C++ compiler")
    eager = train(tmp_path, False)
    marks, mark = [], torch.compiler.cudagraph_mark_step_begin
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: marks.append(1) or mark())
    compiled = train(tmp_path, True, loss_chunk_size=100)  # 8 x 32 tokens a batch: chunks of 100, 100 and 56
    assert len(marks) == 3  # a new CUDA-graph step at each training step
    assert compiled.args.torch_compile and hasattr(compiled.model_wrapped, "_orig_mod")  # it did run compiled
    losses = {
        name: [e["loss"] for e in t.state.log_history if "loss" in e] for name, t in (("e", eager), ("c", compiled))
    }
    assert len(losses["c"]) == 3
    assert losses["c"] == pytest.approx(losses["e"], rel=1e-4)
    assert losses["c"][-1] != losses["c"][0]  # the weights moved

    compiled.save_model()
    reloaded = SmallEncoderForCausalLM.from_pretrained(compiled.args.output_dir)
    trained = compiled.accelerator.unwrap_model(compiled.model).state_dict()
    assert reloaded.state_dict().keys() == trained.keys()
    for key, value in reloaded.state_dict().items():
        torch.testing.assert_close(value, trained[key], rtol=0, atol=0)
    # ... and ended where eager training did (AdamW normalises each step: near-zero gradients differ by rounding).
    for key, value in eager.model.state_dict().items():
        torch.testing.assert_close(trained[key], value, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize(
    ("preset", "attention"),
    [("altegrad-lab", {}), ("cs224n-mingpt", {"attention_type": "synthesizer"})],
)
def test_a_training_step_compiles_to_one_graph_with_the_eager_loss(preset, attention):
    """CUDA graphs (`reduce-overhead`) replay whole graphs: a training forward with an attention mask (padded or
    all ones, as the collators give) and the chunked loss traces without a graph break, and gives eager's loss
    and gradients (aot_eager: dynamo and AOTAutograd, no C++ build)."""
    import torch._dynamo

    overrides = {**TINY_BASE, "activation_dropout": 0.0, **attention}
    config = SmallEncoderConfig.from_preset(preset, **overrides, loss_chunk_size=20)
    torch.manual_seed(0)
    model = SmallEncoderForCausalLM(config).train()
    ids = torch.randint(0, TINY_BASE["vocab_size"], (3, 32), generator=torch.Generator().manual_seed(2))
    padded = torch.ones_like(ids)
    padded[1, 20:] = 0
    for mask in (padded, torch.ones_like(ids)):
        labels = ids.masked_fill(mask == 0, -100)

        def step(ids, mask, labels):
            return model(input_ids=ids, attention_mask=mask, labels=labels).loss

        explained = torch._dynamo.explain(step)(ids, mask, labels)
        assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
        losses, grads = [], []
        for run in (step, torch.compile(step, backend="aot_eager")):
            model.zero_grad(set_to_none=True)
            loss = run(ids, mask, labels)
            loss.backward()
            losses.append(loss.detach())
            grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-6)
        for name, grad in grads[0].items():
            torch.testing.assert_close(grads[1][name], grad, rtol=1e-4, atol=1e-6, msg=name)
