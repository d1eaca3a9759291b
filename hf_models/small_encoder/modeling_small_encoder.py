"""PyTorch SmallEncoder: the ALTeGraD lab's `nn.TransformerEncoder` LM and the CS224N minGPT as one model family.

This file imports only torch, transformers and its own folder, so that it can be shipped with a checkpoint and
loaded with `trust_remote_code=True`.
"""

import math
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn
from transformers import initialization as init
from transformers.activations import ACT2FN
from transformers.cache_utils import Cache, DynamicCache
from transformers.generation import GenerationMixin
from transformers.masking_utils import create_causal_mask
from transformers.modeling_layers import GradientCheckpointingLayer
from transformers.modeling_outputs import (
    BaseModelOutputWithPast,
    CausalLMOutputWithPast,
    MaskedLMOutput,
    SequenceClassifierOutput,
)
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel
from transformers.utils import can_return_tuple, logging

from .configuration_small_encoder import SmallEncoderConfig

logger = logging.get_logger(__name__)

# transformers 5.24 renamed the cache from `past_key_values` to `cache`, in forward arguments and output fields alike.
# The models take both names and fill the field that the installed version's outputs have.
CACHE_FIELD = "cache" if "cache" in BaseModelOutputWithPast.__dataclass_fields__ else "past_key_values"


class ChunkedLinearCrossEntropy(torch.autograd.Function):
    """`cross_entropy(hidden @ weight.T + bias, targets, reduction="sum")` a chunk of rows at a time: the logits of
    one chunk exist at once, never the whole (rows × vocabulary) matrix. The gradients are computed in the forward
    pass, chunk by chunk (as Liger's fused linear cross-entropy does), so the backward pass only scales them: no
    logits are kept for it and none are recomputed. Rows whose target is `ignore_index` count for nothing."""

    @staticmethod
    def forward(ctx, hidden, weight, bias, targets, chunk_size: int, ignore_index: int):
        needs = ctx.needs_input_grad
        grad_hidden = torch.zeros_like(hidden) if needs[0] else None
        grad_weight = torch.zeros_like(weight, dtype=torch.float32) if needs[1] else None
        grad_bias = torch.zeros_like(bias, dtype=torch.float32) if bias is not None and needs[2] else None
        loss = torch.zeros((), dtype=torch.float32, device=hidden.device)
        for start in range(0, hidden.shape[0], chunk_size):
            rows, chunk_targets = hidden[start : start + chunk_size], targets[start : start + chunk_size]
            # As the plain loss: the head's product in the autocast dtype, the softmax in fp32.
            logits = F.linear(rows, weight, bias).float()
            kept = chunk_targets != ignore_index
            safe_targets = chunk_targets.masked_fill(~kept, 0)
            log_probs = torch.log_softmax(logits, dim=-1)
            loss = loss - (log_probs.gather(1, safe_targets[:, None]).squeeze(1) * kept).sum()
            if grad_hidden is None and grad_weight is None and grad_bias is None:
                continue
            grad_logits = log_probs.exp_()  # d(sum of -log p[target]) / d logits = softmax - one_hot(target)
            grad_logits.scatter_add_(1, safe_targets[:, None], torch.full_like(grad_logits[:, :1], -1.0))
            grad_logits.mul_(kept[:, None])
            # The products in the dtype autocast gives them (as the plain loss's backward), summed in fp32.
            grad_logits = grad_logits.to(weight.dtype)
            if grad_hidden is not None:
                grad_hidden[start : start + chunk_size] = grad_logits @ weight
            if grad_weight is not None:
                grad_weight += grad_logits.t() @ rows
            if grad_bias is not None:
                grad_bias += grad_logits.sum(0)
        ctx.save_for_backward(grad_hidden, grad_weight, grad_bias)
        ctx.weight_dtype = weight.dtype
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        grad_hidden, grad_weight, grad_bias = ctx.saved_tensors
        scale = grad_output.float()
        return (
            grad_hidden * scale.to(grad_hidden.dtype) if grad_hidden is not None else None,
            (grad_weight * scale).to(ctx.weight_dtype) if grad_weight is not None else None,
            (grad_bias * scale).to(ctx.weight_dtype) if grad_bias is not None else None,
            None,
            None,
            None,
        )


def chunked_causal_lm_loss(
    hidden_states: torch.Tensor,
    lm_head: nn.Linear,
    labels: torch.LongTensor,
    chunk_size: int,
    num_items_in_batch: torch.Tensor | int | None = None,
    ignore_index: int = -100,
    shift_labels: torch.LongTensor | None = None,
    **kwargs,
) -> torch.Tensor:
    """transformers' `ForCausalLMLoss` (labels shifted here, mean over the kept tokens, or the sum over
    `num_items_in_batch` when Trainer gives it) without the whole logits matrix: `ChunkedLinearCrossEntropy` over
    `chunk_size` tokens at a time."""
    if shift_labels is None:
        shift_labels = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
    hidden = hidden_states.reshape(-1, hidden_states.shape[-1])
    targets = shift_labels.reshape(-1).to(hidden.device)
    total = ChunkedLinearCrossEntropy.apply(hidden, lm_head.weight, lm_head.bias, targets, chunk_size, ignore_index)
    if num_items_in_batch is None:
        return total / (targets != ignore_index).sum()
    if torch.is_tensor(num_items_in_batch):
        num_items_in_batch = num_items_in_batch.to(total.device)
    return total / num_items_in_batch


class SmallEncoderSinusoidalPositions(nn.Module):
    """The fixed sin/cos encoding of "Attention is all you need" (the lab's `PositionalEncoding`), computed for the
    positions asked: no parameters, and no table to save or to initialise again after loading."""

    def __init__(self, config: SmallEncoderConfig):
        super().__init__()
        self.hidden_size = config.hidden_size

    def forward(self, position_ids: torch.LongTensor) -> torch.Tensor:
        steps = torch.arange(0, self.hidden_size, 2, device=position_ids.device).float()
        div_term = torch.exp(steps * (-math.log(10000.0) / self.hidden_size))
        angles = position_ids.unsqueeze(-1).float() * div_term
        encoding = torch.zeros(*position_ids.shape, self.hidden_size, device=position_ids.device)
        encoding[..., 0::2] = torch.sin(angles)
        encoding[..., 1::2] = torch.cos(angles[..., : self.hidden_size // 2])
        return encoding


def eager_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float = 0.0,
    is_causal: bool = False,
    **kwargs,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention written out, for `output_attentions` and dropout on the CPU. Inputs are [B, H, L, D]."""
    batch_size, num_heads, query_length, head_dim = query.shape
    key_length = key.shape[-2]
    min_value = torch.finfo(query.dtype).min
    bias = None
    if attention_mask is not None and attention_mask.dtype == torch.bool:
        bias = torch.zeros(attention_mask.shape, dtype=query.dtype, device=query.device)
        bias = bias.masked_fill_(~attention_mask, min_value)
    elif attention_mask is not None:
        bias = attention_mask
    elif is_causal and query_length > 1:
        bias = torch.full((query_length, key_length), min_value, dtype=query.dtype, device=query.device)
        bias = bias.triu_(key_length - query_length + 1)

    if bias is None:
        attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    else:
        if bias.dim() == 4:
            bias = bias.expand(batch_size, num_heads, query_length, key_length).reshape(-1, query_length, key_length)
        # One kernel for the scaling, QK^T and the mask.
        attn_weights = torch.baddbmm(
            bias,
            query.reshape(-1, query_length, head_dim),
            key.reshape(-1, key_length, head_dim).transpose(1, 2),
            alpha=scaling,
        ).view(batch_size, num_heads, query_length, key_length)
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = F.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value).transpose(1, 2).contiguous()
    return attn_output, attn_weights


class SmallEncoderAttention(nn.Module):
    """Multi-head scaled dot-product attention with one fused q/k/v projection (the layout of `nn.MultiheadAttention`)."""

    def __init__(self, config: SmallEncoderConfig, layer_idx: int):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.scaling = self.head_dim**-0.5
        self.attention_dropout = config.attention_dropout
        self.is_causal = config.is_causal
        self.qkv_proj = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        cache: Cache | None = None,
        output_attentions: bool = False,
        **kwargs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        input_shape = hidden_states.shape[:-1]
        qkv = self.qkv_proj(hidden_states).view(*input_shape, 3, self.num_heads, self.head_dim)
        query, key, value = qkv.permute(2, 0, 3, 1, 4).unbind(0)

        if cache is not None:
            key, value = cache.update(key, value, self.layer_idx)

        dropout = self.attention_dropout if self.training else 0.0
        # PyTorch's fused CPU kernels have no dropout: SDPA would fall back to its math path, slower than ours.
        use_eager = output_attentions or (dropout > 0 and query.device.type == "cpu")
        attention_interface = eager_attention_forward
        if not use_eager:
            attention_interface = ALL_ATTENTION_FUNCTIONS.get_interface(
                self.config._attn_implementation, eager_attention_forward
            )
        attn_output, attn_weights = attention_interface(
            self,
            query,
            key,
            value,
            attention_mask,
            dropout=dropout,
            scaling=self.scaling,
            is_causal=self.is_causal,
        )
        attn_output = self.o_proj(attn_output.reshape(*input_shape, -1))
        return attn_output, attn_weights


class SmallEncoderSynthesizerAttention(nn.Module):
    """The synthesizer variants of Tay et al. (2020): `Y = softmax(S)·(X·V_i)` over absolute key positions, where a
    query's scores S (one per key position up to ℓ = `config.synthesizer_length`) are synthesized without keys
    (`synthesize_scores`), as `config.attention_type` says:

    - `"synthesizer"`, CS224N's dense synthesizer: `S = ReLU(X·A_i + b1)·B_i + b2`. B_i (d/h × ℓ) has one column per
      key position. With `synthesizer_shared_heads`, one B and one b2 serve all heads, as in the course code.
    - `"random"`: `S = R_i`, an ℓ×ℓ matrix per head, row = query position. R is learned, or fixed at its random init
      (`synthesizer_random_trainable=False`: a buffer saved with the model).
    - `"factorized"`: the dense one, with a query's ℓ scores the outer product of `A = H·W_a + b_a` (a values) and
      `B = H·W_b + b_b` (b values), flattened and cut to ℓ, where `H = ReLU(X·A_i + b1)` per head.

    The cache therefore keeps the keys' positions (as "keys") and values.
    """

    def __init__(self, config: SmallEncoderConfig, layer_idx: int):
        super().__init__()
        self.variant = config.attention_type
        self.layer_idx = layer_idx
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.synthesizer_length = config.synthesizer_length
        self.attention_dropout = config.attention_dropout
        self.is_causal = config.is_causal
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size)
        if self.variant == "random":
            shape = (self.num_heads, self.synthesizer_length, self.synthesizer_length)
            if config.synthesizer_random_trainable:
                self.synth_random = nn.Parameter(torch.randn(shape))
            else:
                self.register_buffer("synth_random", torch.randn(shape))
            return
        self.synth_proj = nn.Linear(config.hidden_size, config.hidden_size)  # A_i and b1 of all heads
        if self.variant == "synthesizer":
            weight_heads = 1 if config.synthesizer_shared_heads else self.num_heads
            self.synth_weight = nn.Parameter(torch.empty(weight_heads, self.head_dim, self.synthesizer_length))
            self.synth_bias = nn.Parameter(torch.zeros(weight_heads, 1, self.synthesizer_length))
        else:
            self.factor_a, self.factor_b = config.synthesizer_factor_sizes
            self.synth_weight_a = nn.Parameter(torch.empty(self.num_heads, self.head_dim, self.factor_a))
            self.synth_bias_a = nn.Parameter(torch.zeros(self.num_heads, 1, self.factor_a))
            self.synth_weight_b = nn.Parameter(torch.empty(self.num_heads, self.head_dim, self.factor_b))
            self.synth_bias_b = nn.Parameter(torch.zeros(self.num_heads, 1, self.factor_b))

    def synthesize_scores(self, hidden_states: torch.Tensor, position_ids: torch.LongTensor) -> torch.Tensor:
        """Scores [B, H, Lq, ℓ] of each query over the absolute key positions 0..ℓ-1."""
        if self.variant == "random":
            # Rows of R at the query positions: [H, B, Lq, ℓ] -> [B, H, Lq, ℓ].
            return self.synth_random[:, position_ids].transpose(0, 1).to(hidden_states.dtype)
        batch_size, query_length = hidden_states.shape[:-1]
        synth = F.relu(self.synth_proj(hidden_states)).view(batch_size, query_length, self.num_heads, self.head_dim)
        synth = synth.transpose(1, 2)
        if self.variant == "synthesizer":
            return torch.matmul(synth, self.synth_weight) + self.synth_bias
        factor_a = torch.matmul(synth, self.synth_weight_a) + self.synth_bias_a  # [B, H, Lq, a]
        factor_b = torch.matmul(synth, self.synth_weight_b) + self.synth_bias_b  # [B, H, Lq, b]
        scores = factor_a.unsqueeze(-1) * factor_b.unsqueeze(-2)  # score of position i·b + j is A_i·B_j
        return scores.flatten(-2)[..., : self.synthesizer_length]

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        cache: Cache | None = None,
        output_attentions: bool = False,
        **kwargs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        batch_size, query_length = hidden_states.shape[:-1]
        position_ids = position_ids.expand(batch_size, -1)
        value = (
            self.v_proj(hidden_states).view(batch_size, query_length, self.num_heads, self.head_dim).transpose(1, 2)
        )
        key_positions = position_ids[:, None, :, None]
        if cache is not None:
            key_positions, value = cache.update(key_positions, value, self.layer_idx)

        key_length = value.shape[-2]
        if key_length > self.synthesizer_length:
            raise ValueError(
                f"Input length {key_length} exceeds synthesizer_width={self.synthesizer_length} (ℓ, the key "
                "positions the synthesizer spans): truncate the input."
            )
        scores = self.synthesize_scores(hidden_states, position_ids)  # [B, H, Lq, ℓ]
        scores = scores.gather(
            -1, key_positions.reshape(batch_size, 1, 1, key_length).expand(-1, self.num_heads, query_length, -1)
        )
        if attention_mask is None and self.is_causal and query_length > 1:
            attention_mask = torch.ones(query_length, key_length, dtype=torch.bool, device=scores.device).tril(
                key_length - query_length
            )
        if attention_mask is not None and attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
        elif attention_mask is not None:  # the eager implementation's additive mask
            scores = scores + attention_mask
        attn_weights = F.softmax(scores, dim=-1, dtype=torch.float32).to(value.dtype)
        attn_weights = F.dropout(attn_weights, p=self.attention_dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value).transpose(1, 2).reshape(batch_size, query_length, -1)
        return self.o_proj(attn_output), (attn_weights if output_attentions else None)


class SmallEncoderBlock(GradientCheckpointingLayer):
    """One Transformer block: post-norm exactly like `nn.TransformerEncoderLayer`, or the pre-norm GPT block."""

    def __init__(self, config: SmallEncoderConfig, layer_idx: int):
        super().__init__()
        self.norm_first = config.norm_first
        vanilla = config.attention_type == "vanilla"
        attention_class = SmallEncoderAttention if vanilla else SmallEncoderSynthesizerAttention
        self.self_attn = attention_class(config, layer_idx)
        self.attn_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        # Position-wise feed-forward: `linear2(dropout(act(linear1(x))))`, as in `nn.TransformerEncoderLayer`.
        self.mlp = nn.Sequential(
            OrderedDict(
                fc1=nn.Linear(config.hidden_size, config.intermediate_size),
                act=ACT2FN[config.hidden_act],
                dropout=nn.Dropout(config.activation_dropout),
                fc2=nn.Linear(config.intermediate_size, config.hidden_size),
            )
        )
        self.mlp_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        cache: Cache | None = None,
        output_attentions: bool = False,
        **kwargs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attn_kwargs = {
            "attention_mask": attention_mask,
            "position_ids": position_ids,
            "cache": cache,
            "output_attentions": output_attentions,
        }
        if self.norm_first:
            attn_output, attn_weights = self.self_attn(self.attn_norm(hidden_states), **attn_kwargs)
            hidden_states = hidden_states + self.dropout(attn_output)
            hidden_states = hidden_states + self.dropout(self.mlp(self.mlp_norm(hidden_states)))
        else:
            attn_output, attn_weights = self.self_attn(hidden_states, **attn_kwargs)
            hidden_states = self.attn_norm(hidden_states + self.dropout(attn_output))
            hidden_states = self.mlp_norm(hidden_states + self.dropout(self.mlp(hidden_states)))
        return hidden_states, attn_weights


class SmallEncoderPreTrainedModel(PreTrainedModel):
    config: SmallEncoderConfig
    config_class = SmallEncoderConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _no_split_modules = ["SmallEncoderBlock"]
    _skip_keys_device_placement = ["cache", "past_key_values"]
    _supports_sdpa = True
    # One folder loads as any head (`AUTO_MAP`): the backbone from a language model, a classifier from a pretrained
    # one. The weights of the folder's own head (the LM's `lm_head`, the classifier) are then
    # left out by design, not worth a load report.
    _keys_to_ignore_on_load_unexpected = [r"^lm_head\.", r"^classifier\."]

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        if isinstance(module, SmallEncoderSynthesizerAttention) and module.variant == "synthesizer":
            # CS224N's init for B; b2 starts at zero.
            init.uniform_(module.synth_weight, -0.001, 0.001)
            init.zeros_(module.synth_bias)
        elif isinstance(module, SmallEncoderSynthesizerAttention) and module.variant == "random":
            # N(0, 1): a fixed R must be far from uniform to mean anything.
            init.normal_(module.synth_random, std=1.0)
        elif isinstance(module, SmallEncoderSynthesizerAttention):  # factorized
            for weight in (module.synth_weight_a, module.synth_weight_b):
                init.normal_(weight, std=self.config.initializer_range)
            init.zeros_(module.synth_bias_a)
            init.ones_(module.synth_bias_b)  # so that the scores start as A alone, not as a product of two near-zeros

    def freeze_backbone(self) -> None:
        """Freeze the shared Transformer so that only the task head trains (the lab's "frozen" set-up)."""
        self.base_model.requires_grad_(False)

    def save_pretrained(self, save_directory, *args, **kwargs):
        # With the classes registered for the Auto classes (`register_for_auto_class`), `save_pretrained` copies this
        # file and the configuration file, but maps only the saved head in `auto_map`: map every head, so that any
        # `AutoModelFor*` loads the folder with `trust_remote_code=True`.
        if self._auto_class is not None:
            self.config.auto_map = {**(getattr(self.config, "auto_map", None) or {}), **AUTO_MAP}
        # FSDP2's `fully_shard` turns the model into an `FSDP<Class>` subclass that torch defines: saved as such,
        # `custom_object_save` would copy torch's FSDP files instead of this one and map that class in `auto_map`.
        # Save as the wrapped class (saving runs no forward, and the gathering of shards does not look at the class).
        sharded_class = type(self)
        if sharded_class.__name__.startswith("FSDP") and sharded_class.__module__.startswith("torch."):
            self.__class__ = sharded_class.__bases__[-1]
        try:
            return super().save_pretrained(save_directory, *args, **kwargs)
        finally:
            self.__class__ = sharded_class


class SmallEncoderModel(SmallEncoderPreTrainedModel):
    """The backbone: token and position embeddings, then the blocks (and a final norm when pre-norm)."""

    def __init__(self, config: SmallEncoderConfig):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        if config.position_embedding_type == "learned":  # minGPT's learned absolute positions
            self.embed_positions = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        else:
            self.embed_positions = SmallEncoderSinusoidalPositions(config)
        self.embed_scale = math.sqrt(config.hidden_size) if config.scale_embeddings else 1.0
        self.embed_dropout = nn.Dropout(config.embedding_dropout)
        self.layers = nn.ModuleList(
            [SmallEncoderBlock(config, layer_idx) for layer_idx in range(config.num_hidden_layers)]
        )
        # Post-norm blocks already end with a LayerNorm: nn.TransformerEncoder has no final norm.
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps) if config.norm_first else nn.Identity()
        self.gradient_checkpointing = False
        self.post_init()

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        cache: Cache | None = None,
        inputs_embeds: torch.Tensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        past_key_values: Cache | None = None,
        **kwargs,
    ) -> BaseModelOutputWithPast:
        r"""cache: the key/value cache of earlier steps (`past_key_values`, its name before transformers 5.24)."""
        if cache is not None and past_key_values is not None:
            raise ValueError("Pass the key/value cache once: as `cache` (`past_key_values` before transformers 5.24).")
        cache = cache if cache is not None else past_key_values
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds.")
        output_attentions = output_attentions if output_attentions is not None else self.config.output_attentions
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        if use_cache is None:
            use_cache = self.config.use_cache and not self.training

        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        query_length = inputs_embeds.shape[1]

        if use_cache and cache is None:
            cache = DynamicCache(config=self.config)
        past_length = cache.get_seq_length() if cache is not None else 0
        if past_length + query_length > self.config.max_position_embeddings:
            raise ValueError(
                f"Input length {past_length + query_length} exceeds max_position_embeddings="
                f"{self.config.max_position_embeddings} (the model's block size): truncate the input or build the "
                "model with a larger max_position_embeddings."
            )

        if position_ids is None:
            if attention_mask is not None:
                # Count real tokens only, so that a left-padded sequence gets the positions it would have alone.
                position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, -query_length:]
            else:
                position_ids = torch.arange(past_length, past_length + query_length, device=inputs_embeds.device)
                position_ids = position_ids.unsqueeze(0)

        hidden_states = inputs_embeds * self.embed_scale + self.embed_positions(position_ids).to(inputs_embeds.dtype)
        hidden_states = self.embed_dropout(hidden_states)
        # transformers' mask (causal or not, as the config), for every attention type: None where `is_causal` (or
        # nothing) suffices, else boolean (SDPA) or additive (eager). A padding query left with no key gets a finite
        # row (SDPA's zeros, eager's uniform weights). No position ids: this model packs no sequences.
        mask = create_causal_mask(self.config, inputs_embeds, attention_mask, cache)

        all_hidden_states = () if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layers:
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
            hidden_states, attn_weights = layer(
                hidden_states,
                attention_mask=mask,
                position_ids=position_ids,
                cache=cache,
                output_attentions=output_attentions,
            )
            if output_attentions:
                all_attentions += (attn_weights,)
        hidden_states = self.norm(hidden_states)
        if output_hidden_states:
            all_hidden_states += (hidden_states,)

        return BaseModelOutputWithPast(
            last_hidden_state=hidden_states,
            **{CACHE_FIELD: cache if use_cache else None},
            hidden_states=all_hidden_states,
            attentions=all_attentions,
        )


class SmallEncoderForCausalLM(SmallEncoderPreTrainedModel, GenerationMixin):
    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}

    def __init__(self, config: SmallEncoderConfig):
        super().__init__(config)
        self.model = SmallEncoderModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=config.lm_head_bias)
        self.post_init()

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        cache: Cache | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        logits_to_keep: int | torch.Tensor = 0,
        past_key_values: Cache | None = None,
        skip_logits: bool | None = None,
        **kwargs,
    ) -> CausalLMOutputWithPast:
        r"""
        cache: the key/value cache of earlier steps. `past_key_values` is its name before transformers 5.24.
        labels: the HF convention: equal to `input_ids` (the shift happens here), with -100 on ignored positions.
        logits_to_keep: compute logits for the last N positions only (generation needs 1).
        skip_logits: with labels and `config.loss_chunk_size`, return the loss only (`logits=None`), computed chunk
            by chunk without the whole logits matrix. Default: skip them in training, keep them in evaluation.
        """
        outputs: BaseModelOutputWithPast = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            cache=cache,
            past_key_values=past_key_values,
            inputs_embeds=inputs_embeds,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        hidden_states = outputs.last_hidden_state
        if skip_logits is None:
            skip_logits = self.training
        logits = loss = None
        if labels is not None and skip_logits and self.config.loss_chunk_size:
            loss = chunked_causal_lm_loss(hidden_states, self.lm_head, labels, self.config.loss_chunk_size, **kwargs)
        else:
            slice_indices = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
            logits = self.lm_head(hidden_states[:, slice_indices, :])
            if labels is not None:
                loss = self.loss_function(logits=logits, labels=labels, vocab_size=self.config.vocab_size, **kwargs)

        return CausalLMOutputWithPast(
            loss=loss,
            logits=logits,
            **{CACHE_FIELD: getattr(outputs, CACHE_FIELD)},
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )


class SmallEncoderForSequenceClassification(SmallEncoderPreTrainedModel):
    # Loaded from a language model, the classifier starts fresh: the finetuning's starting point, not a load failure.
    _keys_to_ignore_on_load_missing = [r"^classifier\."]

    def __init__(self, config: SmallEncoderConfig):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.model = SmallEncoderModel(config)
        pooled_size = config.hidden_size * (
            2 * (config.num_hidden_layers + 1) if config.classifier_pooling == "all_layers" else 1
        )
        self.dropout = nn.Dropout(config.classifier_dropout)
        self.classifier = nn.Linear(pooled_size, config.num_labels)
        self.post_init()

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> SequenceClassifierOutput:
        if attention_mask is None and input_ids is not None and self.config.pad_token_id is not None:
            # Batches padded without a mask still read and attend to real tokens only.
            attention_mask = (input_ids != self.config.pad_token_id).long()
        all_layers = self.config.classifier_pooling == "all_layers"
        outputs: BaseModelOutputWithPast = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            use_cache=False,
            output_attentions=output_attentions,
            output_hidden_states=True if all_layers else output_hidden_states,
        )
        # One vector per sequence, padding on either side ignored: the last layer's `classifier_pooling` token or
        # mean; with "all_layers", the mean and max over real tokens of each hidden state, each normalised on its own
        # (the embeddings are scaled by sqrt(hidden_size) and a post-norm layer's output is not: unnormalised, the
        # widest would rule).
        hidden_states = outputs.last_hidden_state
        if attention_mask is None:
            attention_mask = torch.ones(hidden_states.shape[:2], dtype=torch.long, device=hidden_states.device)
        attention_mask = attention_mask.to(hidden_states.device).long()
        weights = attention_mask.unsqueeze(-1).to(hidden_states.dtype)
        if self.config.classifier_pooling == "all_layers":
            vectors = []
            for states in outputs.hidden_states:
                mean = (states * weights).sum(1) / weights.sum(1).clamp(min=1.0)
                maximum = states.masked_fill(weights == 0, torch.finfo(states.dtype).min).max(1).values
                vectors += [mean, maximum]
            pooled = torch.cat([nn.functional.layer_norm(vector, vector.shape[-1:]) for vector in vectors], dim=-1)
        elif self.config.classifier_pooling == "mean":
            pooled = (hidden_states * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        else:  # the first or the last real token
            positions = torch.arange(attention_mask.shape[1], device=hidden_states.device)
            first = self.config.classifier_pooling == "first"
            token = attention_mask.argmax(-1) if first else (attention_mask * positions).argmax(-1)
            pooled = hidden_states[torch.arange(hidden_states.shape[0], device=hidden_states.device), token]
        logits = self.classifier(self.dropout(pooled))

        loss = None
        if labels is not None:
            loss = self.loss_function(labels=labels, pooled_logits=logits, config=self.config)

        # Hidden states read by the pooling only are not returned: `Trainer` would gather them as predictions.
        wanted = output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        return SequenceClassifierOutput(
            loss=loss,
            logits=logits,
            hidden_states=outputs.hidden_states if wanted else None,
            attentions=outputs.attentions,
        )


class SmallEncoderForMaskedLM(SmallEncoderPreTrainedModel):
    """Bidirectional masked LM: a masked token is predicted from both sides, so the config must say
    `is_causal=False` (the config, not the head, decides the attention, as `is_decoder` does for BERT)."""

    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}

    def __init__(self, config: SmallEncoderConfig):
        if config.is_causal:
            raise ValueError(
                "SmallEncoderForMaskedLM needs a bidirectional config: build it with is_causal=False "
                "(`SmallEncoderConfig(..., is_causal=False)`, or `from_pretrained(path, is_causal=False)`)."
            )
        super().__init__(config)
        self.model = SmallEncoderModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=config.lm_head_bias)
        self.post_init()

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> MaskedLMOutput:
        r"""labels: the token ids at masked positions, -100 elsewhere (as `DataCollatorForLanguageModeling` makes)."""
        outputs: BaseModelOutputWithPast = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            use_cache=False,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        logits = self.lm_head(outputs.last_hidden_state)

        loss = None
        if labels is not None:
            loss = self.loss_function(logits=logits, labels=labels, vocab_size=self.config.vocab_size, **kwargs)

        return MaskedLMOutput(
            loss=loss, logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
        )


# The one list of the model classes: each head by the Auto class that loads it. The package exports them
# (`__all__`), `hf_models` registers them with the Auto classes, every saved config maps them all in its `auto_map`
# (so that any `AutoModelFor*` loads a saved folder with `trust_remote_code=True`), and the Hub card takes each head's
# pipeline tag from its Auto class.
HEADS: dict[str, type[SmallEncoderPreTrainedModel]] = {
    "AutoModel": SmallEncoderModel,
    "AutoModelForCausalLM": SmallEncoderForCausalLM,
    "AutoModelForSequenceClassification": SmallEncoderForSequenceClassification,
    "AutoModelForMaskedLM": SmallEncoderForMaskedLM,
}
AUTO_MAP = {
    "AutoConfig": "configuration_small_encoder.SmallEncoderConfig",
    **{auto_class: f"modeling_small_encoder.{head.__name__}" for auto_class, head in HEADS.items()},
}

__all__ = ["AUTO_MAP", "HEADS", "SmallEncoderPreTrainedModel", *(head.__name__ for head in HEADS.values())]
