"""SmallEncoder configuration: one config for the ALTeGraD lab model and the CS224N minGPT."""

import json
import math
from pathlib import Path
from typing import Literal, get_args

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig
from transformers.utils.type_validators import interval, probability

PRESETS_DIR = Path(__file__).resolve().parent / "presets"
PRESETS = tuple(sorted(path.stem for path in PRESETS_DIR.glob("*.json")))  # the names `from_preset` takes

AttentionType = Literal["vanilla", "synthesizer", "random", "factorized"]
PositionEmbeddingType = Literal["sinusoidal", "learned"]
ClassifierPooling = Literal["last", "mean", "first", "all_layers"]
ATTENTION_TYPES = get_args(AttentionType)
CLASSIFIER_POOLINGS = get_args(ClassifierPooling)


# transformers' field validators: `@strict` runs them whenever a field is set.
positive = interval(min=0, exclude_min=True)
non_negative = interval(min=0)  # 0 is off


@strict
class SmallEncoderConfig(PreTrainedConfig):
    r"""
    Configuration of a small Transformer language model: a stack of `nn.TransformerEncoderLayer`-style blocks that is
    causal by default (a decoder-only LM), bidirectional (`is_causal=False`) for masked LM.

    The two course models are presets, and `base` is GPT-2 small's shape (12 pre-norm layers, d=768, 12 heads,
    block 1024, learned positions, tanh GELU, tied embeddings: 124,439,808 parameters, as `GPT2LMHeadModel`):

    ```python
    >>> from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
    >>> config = SmallEncoderConfig.from_preset("altegrad-lab")  # 4 post-norm layers, d=200, vocab 50,001
    >>> config = SmallEncoderConfig.from_preset("cs224n-mingpt", vocab_size=256, attention_type="synthesizer")
    >>> model = SmallEncoderForCausalLM(config)
    ```

    Args:
        attention_type: `"vanilla"` (multi-head scaled dot-product) or `"synthesizer"` (CS224N dense synthesizer,
            `softmax(ReLU(X·A_i + b1)·B_i + b2)·(X·V_i)`, whose B_i spans ℓ key positions), or the other variants of
            Tay et al. (2020): `"random"` (`softmax(R_i)·(X·V_i)`, one ℓ×ℓ matrix R_i per head, input-independent)
            and `"factorized"` (dense, with the ℓ scores of a query made as the outer product of an a-vector and a
            b-vector, a·b ≥ ℓ). All are causal when `is_causal`.
        synthesizer_width: ℓ, the number of absolute key positions the synthesizer variants span. `None` means
            `max_position_embeddings`. CS224N's course code uses ℓ = block − 1 (its inputs are block − 1 characters
            long) with a position table of `block` rows: a converted course synthesizer has
            `max_position_embeddings=block, synthesizer_width=block-1`. Longer inputs are a clear error.
        synthesizer_shared_heads: one B and b2 shared by all heads (CS224N's layout, exact parameter parity with a
            course checkpoint) instead of one per head. Dense synthesizer only.
        synthesizer_random_trainable: `"random"`: learn R_i (`True`) or keep the random init fixed (a saved buffer).
        synthesizer_factors: `"factorized"`: `[a, b]` with a·b ≥ ℓ; `None` picks a = ⌈√ℓ⌉, b = ⌈ℓ/a⌉.
        is_causal: apply the square causal mask. `SmallEncoderForMaskedLM` requires `False`.
        position_embedding_type: `"sinusoidal"` (fixed, no parameters) or `"learned"`.
        norm_first: `False` is post-norm exactly like `nn.TransformerEncoderLayer` (no final norm); `True` is the
            pre-norm GPT block with a final LayerNorm.
        scale_embeddings: multiply token embeddings by sqrt(hidden_size), as the lab does.
        embedding_dropout, attention_dropout, hidden_dropout, activation_dropout: dropout after the embeddings, on
            the attention weights, on each residual branch, and inside the feed-forward (`nn.TransformerEncoderLayer`
            has one there, minGPT does not).
        hidden_act: the feed-forward activation. The `cs224n-mingpt` preset uses GELU in its tanh form
            (`gelu_pytorch_tanh`, GPT-2's GELU as one fused kernel): torch's exact-erf GELU is about 10x slower on
            the CPU and opens a thread pool even on tiny decoding tensors.
        lm_head_bias: bias on the (masked) LM head: the lab's `nn.Linear` has one, minGPT's head has none.
        classifier_pooling: which hidden state the classification head reads: `"last"` non-pad token (the lab's
            choice), `"mean"` over non-pad tokens, `"first"` non-pad token, or `"all_layers"`: the
            mean and max over non-pad tokens of every hidden state (the embeddings and each layer's output), each
            layer-normalised without parameters so that their scales match, side by side (the head is then
            2 * (num_hidden_layers + 1) times wider; a frozen backbone's word knowledge sits in its lower layers).
        classifier_dropout: dropout on the pooled vector, before the classification head.
        sep_token_id: the separator (CS224N's `⁇`) used by span corruption and birthplace QA.
        loss_chunk_size: `SmallEncoderForCausalLM` in training with labels: compute the LM loss this many tokens at a
            time, so that the (tokens × vocabulary) fp32 logits never exist whole (the lab's 50,001-id head: 3.3 GB
            for a batch of 128 × 128). 0 computes the logits and transformers' loss on them. The loss and gradients
            are the same either way (up to rounding); the training forward then returns no logits.
    """

    model_type = "small-encoder"
    keys_to_ignore_at_inference = ["cache", "past_key_values"]

    # Types, choices and ranges are checked by `@strict` whenever a field is set; `validate_architecture` checks
    # what ties fields together.
    vocab_size: int = positive(default=50001)
    hidden_size: int = positive(default=200)
    num_hidden_layers: int = positive(default=4)
    num_attention_heads: int = positive(default=2)
    intermediate_size: int = positive(default=200)
    max_position_embeddings: int = positive(default=512)
    attention_type: AttentionType = "vanilla"
    is_causal: bool = True
    position_embedding_type: PositionEmbeddingType = "sinusoidal"
    norm_first: bool = False
    scale_embeddings: bool = True
    hidden_act: str = "relu"
    embedding_dropout: int | float = probability(default=0.1)
    attention_dropout: int | float = probability(default=0.1)
    hidden_dropout: int | float = probability(default=0.1)
    activation_dropout: int | float = probability(default=0.1)
    layer_norm_eps: float = positive(default=1e-5)
    initializer_range: float = positive(default=0.02)
    lm_head_bias: bool = True
    tie_word_embeddings: bool = False
    loss_chunk_size: int = non_negative(default=0)
    classifier_pooling: ClassifierPooling = "last"
    classifier_dropout: int | float = probability(default=0.0)
    synthesizer_width: int | None = None
    synthesizer_shared_heads: bool = False
    synthesizer_random_trainable: bool = True
    synthesizer_factors: list[int] | None = None
    use_cache: bool = True
    pad_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    sep_token_id: int | None = None
    mask_token_id: int | None = None

    def validate_architecture(self):
        """Part of `@strict`-powered validation (run after `__init__`, by `validate()` and at save time): the
        constraints between fields, with the names of the fields at fault."""
        if self.hidden_size % self.num_attention_heads != 0:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be a multiple of num_attention_heads ({self.num_attention_heads})."
            )
        # Without synthesizer_width, ℓ is the block size itself: nothing to check.
        if self.synthesizer_width is not None and not 0 < self.synthesizer_width <= self.max_position_embeddings:
            raise ValueError(
                f"synthesizer_width ({self.synthesizer_width}) must be between 1 and max_position_embeddings "
                f"({self.max_position_embeddings})."
            )
        if self.synthesizer_factors is not None:
            factors = list(self.synthesizer_factors)
            if len(factors) != 2 or min(factors) < 1 or factors[0] * factors[1] < self.synthesizer_length:
                raise ValueError(
                    f"synthesizer_factors={factors} must be two positive integers [a, b] with a*b >= "
                    f"synthesizer_width ({self.synthesizer_length})."
                )

    @property
    def synthesizer_length(self) -> int:
        """ℓ: the key positions spanned by the synthesizer variants (`synthesizer_width`, else the block size)."""
        return self.synthesizer_width if self.synthesizer_width is not None else self.max_position_embeddings

    @property
    def synthesizer_factor_sizes(self) -> tuple[int, int]:
        """(a, b) of the factorized synthesizer: a·b ≥ ℓ, the outer product truncated to ℓ scores."""
        if self.synthesizer_factors is not None:
            return int(self.synthesizer_factors[0]), int(self.synthesizer_factors[1])
        first = math.isqrt(self.synthesizer_length - 1) + 1  # ⌈√ℓ⌉
        return first, -(-self.synthesizer_length // first)

    @classmethod
    def available_presets(cls) -> list[str]:
        return list(PRESETS)

    @classmethod
    def from_preset(cls, name: str, **overrides) -> "SmallEncoderConfig":
        """Build a config from a named preset shipped with the package, e.g. `from_preset("altegrad-lab")`."""
        if name not in PRESETS:
            raise ValueError(f"Unknown preset {name!r}; available presets: {', '.join(PRESETS)}.")
        values = json.loads((PRESETS_DIR / f"{name}.json").read_text(encoding="utf-8"))
        values.update(overrides)
        return cls(**values)


__all__ = ["SmallEncoderConfig"]
