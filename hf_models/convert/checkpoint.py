"""What the course converters share: reading a course state dict, and checking its keys and shapes."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import torch

from ..textio import UsageError

STATE_DICT_WRAPPER_KEYS = ("model_state_dict", "state_dict")

StateDict = dict[str, torch.Tensor]


class CheckpointError(UsageError):
    """A course checkpoint that does not match the expected model: the message lists every bad key."""


def load_course_state_dict(path: str | os.PathLike) -> StateDict:
    """Read a state dict saved with `torch.save`, unwrapping `{"model_state_dict": ...}`-style checkpoints."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several types for a non-checkpoint file
        # Its first sentence says enough; never its advice to unpickle with weights_only=False (running the file).
        reason = f"{type(error).__name__}: {(str(error).strip() or '?').splitlines()[0].split('. ')[0][:200]}"
        if type(error).__name__ == "UnpicklingError" or "weights_only" in str(error):
            reason = "not a torch.save archive of tensors; it is never unpickled with weights_only=False"
        raise CheckpointError(f"{path}: not a PyTorch state dict, or a corrupt one ({reason})") from None
    for key in STATE_DICT_WRAPPER_KEYS:
        if isinstance(checkpoint, dict) and isinstance(checkpoint.get(key), dict):
            checkpoint = checkpoint[key]
            break
    if not isinstance(checkpoint, dict) or not all(isinstance(v, torch.Tensor) for v in checkpoint.values()):
        raise CheckpointError(f"{path}: expected a dict of tensors (a model's state_dict), got {type(checkpoint)}")
    return dict(checkpoint)


def check_keys(
    state_dict: StateDict, expected: dict[str, tuple[int, ...]], optional: Sequence[str] = (), source: str = ""
) -> None:
    """Raise one `CheckpointError` listing every missing, unknown and mis-shaped key."""
    missing = [key for key in expected if key not in state_dict and key not in optional]
    unknown = sorted(key for key in state_dict if key not in expected)
    misshaped = [
        f"{key}: {tuple(state_dict[key].shape)}, expected {shape}"
        for key, shape in expected.items()
        if key in state_dict and tuple(state_dict[key].shape) != shape
    ]
    problems = [
        (f"{len(items)} {what}", items)
        for what, items in (("missing keys", missing), ("unknown keys", unknown), ("mis-shaped keys", misshaped))
        if items
    ]
    if problems:
        lines = [f"{source or 'checkpoint'} does not match the expected model:"]
        for title, items in problems:
            lines.append(f"  {title}:")
            lines.extend(f"    {item}" for item in items)
        raise CheckpointError("\n".join(lines))


def require(state_dict: StateDict, key: str, ndim: int, source: str) -> torch.Tensor:
    """An anchor tensor whose shape gives the model's sizes."""
    if key not in state_dict or state_dict[key].dim() != ndim:
        found = tuple(state_dict[key].shape) if key in state_dict else "absent"
        raise CheckpointError(f"{source}: cannot read the model's sizes: {key} must be a {ndim}-d tensor ({found})")
    return state_dict[key]


def num_layers(state_dict: StateDict, prefix: str, source: str) -> int:
    """The number of blocks: one more than the highest index after `prefix` in the keys."""
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)\.")
    indices = {int(match.group(1)) for key in state_dict if (match := pattern.match(key))}
    if not indices:
        raise CheckpointError(f"{source}: no layer keys starting with {prefix!r}")
    return max(indices) + 1


def linear_shapes(prefix: str, out_features: int, in_features: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.weight": (out_features, in_features), f"{prefix}.bias": (out_features,)}


def layer_norm_shapes(prefix: str, size: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.weight": (size,), f"{prefix}.bias": (size,)}


# Converting and saving: the folder is saved as the recipes save theirs (`safety.staged_save`): each file replaces its
# old version only once the whole save has succeeded, so a failed conversion leaves the old folder as it was. A corrupt
# checkpoint is one `CheckpointError` line (`load_course_state_dict`), a broken tokenizer folder one `UsageError` line
# naming the file (`tokenization.open_tokenizer`).
