"""Finetuning that keeps what pretraining learned (ULMFiT's toolbox), for any head on a `SmallEncoderModel`:

- `discriminative_optimizer`: the backbone at its own learning rate, the new head at the main one;
- `GradualUnfreezingCallback`: the head alone first, then one more group of backbone layers each epoch, from the top;
- `WeightAveragingCallback`: the average of the weights at the end of the last epochs;
- `DecayTowardStartCallback`: weight decay toward the backbone's starting weights (L2-SP), not toward zero;
- `InterpolateWithStartCallback`: the finetuned weights mixed with the starting ones when training ends (WiSE-FT);
- `AuxiliaryLMLoss`: the causal LM loss of the task's own texts added to the task's loss while finetuning (SiATL).
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel, Trainer, TrainerCallback, TrainingArguments

from ..textio import UsageError


def discriminative_optimizer(
    model: PreTrainedModel, training_args: TrainingArguments, backbone_lr: float | None
) -> tuple[type, dict] | None:
    """Trainer's AdamW with two parameter groups: the backbone at `backbone_lr`, the head at the main rate.

    Weight decay follows Trainer's rule (none on biases and LayerNorm weights). None: Trainer's default. Frozen
    parameters are included: they get no gradient, so AdamW skips them until gradual unfreezing thaws them."""
    if backbone_lr is None:
        return None
    decay = set(Trainer.get_decay_parameter_names(None, model))
    groups = []
    for in_backbone, lr in ((True, backbone_lr), (False, training_args.learning_rate)):
        for with_decay in (True, False):
            params = [
                p
                for name, p in model.named_parameters()
                if name.startswith(f"{model.base_model_prefix}.") == in_backbone and (name in decay) == with_decay
            ]
            if params:
                groups.append({"params": params, "lr": lr, "weight_decay": training_args.weight_decay * with_decay})
    optimizer_cls, optimizer_kwargs = Trainer.get_optimizer_cls_and_kwargs(training_args, model)
    return optimizer_cls, {**optimizer_kwargs, "params": groups}


def backbone_layer_groups(model: PreTrainedModel) -> list[list[nn.Parameter]]:
    """The backbone's parameters in ULMFiT's unfreezing order: the last block (with the final norm) first, then
    each block below it, the embeddings last."""
    backbone = model.base_model
    blocks = list(backbone.layers)
    groups = [[*blocks[-1].parameters(), *backbone.norm.parameters()]]
    groups += [list(block.parameters()) for block in reversed(blocks[:-1])]
    groups.append([*backbone.embed_tokens.parameters(), *backbone.embed_positions.parameters()])
    return groups


class GradualUnfreezingCallback(TrainerCallback):
    """Epoch 1 trains the head alone; each later epoch thaws `groups_per_epoch` more backbone layer groups, from
    the top. The optimizer must hold every parameter from the start (`discriminative_optimizer` does)."""

    def __init__(self, model: PreTrainedModel, groups_per_epoch: int) -> None:
        if groups_per_epoch < 1:
            raise UsageError(f"--gradual_unfreezing needs at least 1 layer group per epoch, not {groups_per_epoch}")
        self.groups = backbone_layer_groups(model)
        self.groups_per_epoch = groups_per_epoch
        model.base_model.requires_grad_(False)

    def thawed_groups(self, epoch: int) -> int:
        """How many layer groups train during `epoch` (0-based)."""
        return min(len(self.groups), self.groups_per_epoch * epoch)

    def on_epoch_begin(self, args, state, control, **kwargs):
        thawed = self.thawed_groups(round(state.epoch or 0))
        for index, group in enumerate(self.groups):
            for parameter in group:
                parameter.requires_grad_(index < thawed)


class WeightAveragingCallback(TrainerCallback):
    """Average the weights at the end of the last `epochs` epochs, and load the average when training ends (a
    stochastic weight average with one snapshot per epoch)."""

    def __init__(self, model: nn.Module, epochs: int) -> None:
        if epochs < 1:
            raise UsageError(f"--average_last_epochs needs at least 1 epoch, not {epochs}")
        self.model, self.epochs = model, epochs
        self.total: dict[str, torch.Tensor] = {}
        self.count = 0

    def on_epoch_end(self, args, state, control, **kwargs):
        if round(state.epoch) <= args.num_train_epochs - self.epochs:
            return
        for name, tensor in self.model.state_dict().items():
            if tensor.is_floating_point():
                self.total[name] = self.total.get(name, 0) + tensor.detach().float()
        self.count += 1

    def on_train_end(self, args, state, control, **kwargs):
        if self.count:
            state_dict = self.model.state_dict()
            average = {name: (total / self.count).to(state_dict[name].dtype) for name, total in self.total.items()}
            self.model.load_state_dict(average, strict=False)


class DecayTowardStartCallback(TrainerCallback):
    """L2-SP (Li et al., 2018), decoupled as AdamW's decay: after each optimizer step every backbone weight moves
    back toward its value at the start by `learning rate x strength` of the distance, so finetuning keeps the
    pretrained weights within reach instead of shrinking them toward zero."""

    def __init__(self, model: PreTrainedModel, strength: float) -> None:
        if strength <= 0:
            raise UsageError(f"--decay_toward_start needs a positive strength, not {strength}")
        self.strength = strength
        self.parameters = [p for p in model.base_model.parameters() if p.is_floating_point()]
        self.start = [p.detach().clone() for p in self.parameters]

    def on_step_end(self, args, state, control, lr_scheduler=None, **kwargs):
        rate = lr_scheduler.get_last_lr()[0] if lr_scheduler is not None else args.learning_rate
        with torch.no_grad():
            for parameter, start in zip(self.parameters, self.start, strict=True):
                parameter.lerp_(start, min(1.0, rate * self.strength))


class InterpolateWithStartCallback(TrainerCallback):
    """WiSE-FT (Wortsman et al., 2022): when training ends, every weight becomes `(1 - alpha) x start + alpha x
    finetuned`, the start being the model as training begins (with LP-FT: the pretrained backbone under its
    linear-probe head). From a pretrained start the mix keeps what pretraining knew; from a random one it has
    nothing to keep."""

    def __init__(self, model: nn.Module, alpha: float) -> None:
        if not 0 <= alpha <= 1:
            raise UsageError(f"--wise_ft_alpha is the finetuned weights' share, from 0 to 1, not {alpha}")
        self.model, self.alpha = model, alpha
        self.start: dict[str, torch.Tensor] = {}

    def on_train_begin(self, args, state, control, **kwargs):
        # Here, not in __init__: a linear-probe head is fitted after the callbacks are made.
        self.start = {name: t.detach().clone() for name, t in self.model.state_dict().items() if t.is_floating_point()}

    def on_train_end(self, args, state, control, **kwargs):
        with torch.no_grad():
            for name, tensor in self.model.state_dict().items():
                if name in self.start:
                    tensor.copy_(torch.lerp(self.start[name].to(tensor.device), tensor, self.alpha))


class AuxiliaryLMLoss(TrainerCallback):
    """SiATL (Chronopoulou et al., 2019): while a classifier finetunes, its backbone also keeps predicting the next
    token of the task's own texts. The loss `ReproducibleTrainer` adds is `weight x decay ** epoch x` the LM loss
    at a random `share` of the positions (a draw of its own generator: torch's stream, which drives dropout and
    the batch order, is left alone; and all positions would make the vocabulary-wide softmax the step's cost).

    The LM head (`model.auxiliary_lm_head`) starts as `lm_head` (the pretrained model's) or at random, trains with
    the model, and is removed when training ends: the saved classifier has the weights it would have without it."""

    head_name = "auxiliary_lm_head"

    def __init__(
        self,
        model: PreTrainedModel,
        weight: float,
        decay: float,
        share: float,
        lm_head: tuple[torch.Tensor, torch.Tensor | None] | None,
        seed: int,
    ) -> None:
        if weight <= 0 or not 0 < decay <= 1 or not 0 < share <= 1:
            raise UsageError(
                f"--auxiliary_lm_weight {weight}, --auxiliary_lm_decay {decay}, --auxiliary_lm_positions "
                f"{share}: give a positive weight, a decay in (0, 1] and a share of positions in (0, 1]"
            )
        config = model.config
        # skip_init: nn.Linear's own initialisation would draw from torch's stream, which this loss leaves alone
        head = nn.utils.skip_init(nn.Linear, config.hidden_size, config.vocab_size, device=model.device)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            if lm_head is None:
                head.weight.copy_(torch.randn(head.weight.shape, generator=generator) * config.initializer_range)
                head.bias.zero_()
            else:
                head.weight.copy_(lm_head[0])
                head.bias.copy_(lm_head[1] if lm_head[1] is not None else torch.zeros_like(head.bias))
        model.add_module(self.head_name, head)
        self.model, self.weight, self.decay, self.share, self.generator = model, weight, decay, share, generator
        self.logged: list[float] = []

    def __call__(self, inputs: dict, outputs, epoch: float) -> torch.Tensor:
        """The weighted LM loss of one training batch, from the classifier's outputs with `hidden_states`."""
        ids = inputs["input_ids"]
        real = (
            inputs["attention_mask"].bool() if "attention_mask" in inputs else torch.ones_like(ids, dtype=torch.bool)
        )
        pairs = real[:, :-1] & real[:, 1:]  # a real token followed by a real token, whatever the padding side
        drawn = torch.rand(pairs.shape, generator=self.generator).to(pairs.device) < self.share
        picked = pairs & drawn
        hidden = outputs.hidden_states[-1][:, :-1][picked]
        loss = nn.functional.cross_entropy(getattr(self.model, self.head_name)(hidden), ids[:, 1:][picked])
        self.logged.append(loss.item())
        return self.weight * self.decay**epoch * loss

    def mean_since_last_log(self) -> float | None:
        mean = sum(self.logged) / len(self.logged) if self.logged else None
        self.logged = []
        return mean

    def on_train_end(self, args, state, control, **kwargs):
        # After Trainer has loaded the best checkpoint (whose weights hold the head too).
        if hasattr(self.model, self.head_name):
            delattr(self.model, self.head_name)


def pretrained_lm_head(model_name_or_path: str) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """The output projection of a saved language model (`lm_head.weight` and its bias, or the input embeddings of
    one that ties them), or None when the checkpoint has no LM head (a classifier)."""
    from safetensors import safe_open
    from transformers.utils import cached_file

    path = cached_file(model_name_or_path, "model.safetensors", _raise_exceptions_for_missing_entries=False)
    if path is None:
        return None
    with safe_open(path, "pt") as saved:
        names = set(saved.keys())
        weight_name = next((n for n in ("lm_head.weight", "model.embed_tokens.weight") if n in names), None)
        if weight_name is None or ("lm_head.weight" not in names and not _ties_embeddings(model_name_or_path)):
            return None
        bias = saved.get_tensor("lm_head.bias") if "lm_head.bias" in names else None
        return saved.get_tensor(weight_name), bias


def _ties_embeddings(model_name_or_path: str) -> bool:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model_name_or_path)
    return bool(getattr(config, "tie_word_embeddings", False))
