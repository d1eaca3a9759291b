"""Finetuning that keeps what pretraining learned (ULMFiT's toolbox, for any head on a `SmallEncoderModel`):
`discriminative_optimizer` (the backbone at its own learning rate, the new head at the main one) and
`GradualUnfreezingCallback` (the head alone first, then one more group of backbone layers each epoch, from the top).
"""

from __future__ import annotations

from torch import nn
from transformers import PreTrainedModel, Trainer, TrainerCallback, TrainingArguments

from ..textio import UsageError

__all__ = ["GradualUnfreezingCallback", "backbone_layer_groups", "discriminative_optimizer"]


def discriminative_optimizer(
    model: PreTrainedModel, training_args: TrainingArguments, backbone_lr: float
) -> tuple[type, dict]:
    """Trainer's AdamW with two parameter groups (its `optimizer_cls_and_kwargs`): the backbone at `backbone_lr`, the
    head at the main rate.

    Weight decay follows Trainer's rule (none on biases and LayerNorm weights). Frozen parameters are included: they
    get no gradient, so AdamW skips them until gradual unfreezing thaws them."""
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
