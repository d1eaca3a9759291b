"""A tour of the model family: build both presets, print their parameter tables, save and reload them through the
Auto classes, and generate a few tokens. Runs offline on the CPU in seconds.

    python examples/model_tour.py
"""

import tempfile
from collections import Counter

import torch
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, PreTrainedModel
from transformers.utils import logging

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM, SmallEncoderForSequenceClassification


def parameter_table(model: PreTrainedModel) -> str:
    """Parameters per top-level part (embeddings, each block, norm, head), as the lab counts them."""
    counts: Counter[str] = Counter()
    for name, parameter in model.named_parameters():
        parts = name.split(".")
        key = ".".join(parts[:3]) if parts[1] == "layers" else ".".join(parts[:2])
        counts[key] += parameter.numel()
    width = max(len(key) for key in counts)
    rows = [f"  {key:<{width}}  {count:>12,}" for key, count in counts.items()]
    total, trainable = model.num_parameters(), model.num_parameters(only_trainable=True)
    rows.append(f"  {'total':<{width}}  {total:>12,}   (trainable {trainable:,})")
    return "\n".join(rows)


def round_trip(model: torch.nn.Module, auto_class, input_ids: torch.Tensor) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        reloaded = auto_class.from_pretrained(folder).eval()
    with torch.no_grad():
        return torch.equal(model(input_ids).logits, reloaded(input_ids).logits)


def main() -> None:
    logging.disable_progress_bar()  # the tour saves and loads small models many times
    torch.manual_seed(0)
    for preset in SmallEncoderConfig.available_presets():
        config = SmallEncoderConfig.from_preset(preset, pad_token_id=0)
        print(
            f"\n=== preset {preset!r}: {config.attention_type} attention, {config.position_embedding_type} positions, "
            f"{'pre' if config.norm_first else 'post'}-norm, d={config.hidden_size}, {config.num_attention_heads} heads, "
            f"{config.num_hidden_layers} layers, vocab {config.vocab_size:,}"
        )
        lm = SmallEncoderForCausalLM(config).eval()
        print("SmallEncoderForCausalLM\n" + parameter_table(lm))
        classifier = SmallEncoderForSequenceClassification(config).eval()
        classifier.freeze_backbone()
        print("SmallEncoderForSequenceClassification, backbone frozen\n" + parameter_table(classifier))

        input_ids = torch.randint(1, config.vocab_size, (2, 12))
        print(
            "save_pretrained -> AutoModelForCausalLM: identical logits =",
            round_trip(lm, AutoModelForCausalLM, input_ids),
        )
        print(
            "save_pretrained -> AutoModelForSequenceClassification: identical logits =",
            round_trip(classifier, AutoModelForSequenceClassification, input_ids),
        )
        with torch.no_grad():
            cached = lm.generate(input_ids[:1, :4], max_new_tokens=8, do_sample=False, pad_token_id=0)
            uncached = lm.generate(
                input_ids[:1, :4], max_new_tokens=8, do_sample=False, pad_token_id=0, use_cache=False
            )
        print(
            f"greedy generate (untrained weights): {cached[0].tolist()}; same without KV cache = {torch.equal(cached, uncached)}"
        )

    synthesizer = SmallEncoderForCausalLM(
        SmallEncoderConfig.from_preset("cs224n-mingpt", attention_type="synthesizer")
    )
    attention = synthesizer.model.layers[0].self_attn
    print("\n=== cs224n-mingpt with synthesizer attention")
    for name, parameter in attention.named_parameters():
        print(f"  layers.0.self_attn.{name:<20} {tuple(parameter.shape)}")
    print(f"  total parameters {synthesizer.num_parameters():,}")


if __name__ == "__main__":
    main()
