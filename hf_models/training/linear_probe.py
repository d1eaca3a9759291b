"""Linear probing, then finetuning (LP-FT; Kumar et al., 2022, "Fine-Tuning can Distort Pretrained Features and
Underperform Out-of-Distribution").

A new classification head starts random, and its first gradients push the pretrained features around before the
head has learned to use them. `init_head_by_linear_probe` starts it instead as a logistic regression fitted to
convergence on the frozen backbone's features: what the head reads (`model.classifier`'s input, in eval mode), each
feature standardised on the training set, the L2 strength chosen by stratified k-fold cross-validation on the
training set alone. The standardisation is folded into the head's weights, so the model is an ordinary
`SmallEncoderForSequenceClassification`. With a frozen backbone and no training epochs after it, the probe *is*
the classifier: a head trained to convergence instead of for a few epochs of AdamW.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import torch
from torch import nn

from ..textio import UsageError

logger = logging.getLogger(__name__)

# sklearn's C (inverse regularisation): the loss is mean cross-entropy + ||W||^2 / (2 C n).
# Its lower end matters: 2,000 pooled features on 1,600 reviews want strong regularisation (C 0.001 on CLS-FR books).
PROBE_C_GRID = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
# The cross-validation's fits stop at a loss change of 1e-9 instead of the final fit's 1e-12: half the L-BFGS steps
# (its 45 fits took 54 s of a pretrained LP-FT run and 76 s of a scratch one on 2 cores, most of them at large C,
# where the reviews are nearly separable). Only held-out argmaxes are read from them; on the CPU profile's features
# one review of 1,600 flipped at one C, never the chosen one (BENCHMARKS.md, "The probe's cross-validation").
CV_TOLERANCE = 1e-9


@torch.no_grad()
def head_inputs(
    model: nn.Module, dataset, collator: Callable, batch_size: int = 64
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(features, labels): what `model.classifier` reads for each example of `dataset`, with dropout off, in float32
    on the CPU; the labels the collator gives (`labels`; None for a set without them, such as held-back test
    reviews). The examples go through shortest first, so that a batch is padded to about its own length; the rows
    come back in the dataset's order."""
    captured: list[torch.Tensor] = []
    labels: list[torch.Tensor] = []
    hook = model.classifier.register_forward_pre_hook(lambda module, args: captured.append(args[0].float().cpu()))
    was_training = model.training
    device = next(model.parameters()).device
    by_length = torch.tensor([len(dataset[i]["input_ids"]) for i in range(len(dataset))]).argsort(stable=True)
    model.eval()
    try:
        for start in range(0, len(dataset), batch_size):
            batch = collator([dataset[int(i)] for i in by_length[start : start + batch_size]])
            if "labels" in batch:
                labels.append(batch.pop("labels"))
            model(**{key: value.to(device) for key, value in batch.items()})
    finally:
        hook.remove()
        model.train(was_training)
    order = by_length.argsort()  # row k of the sorted pass is example by_length[k]
    return torch.cat(captured)[order], torch.cat(labels).long()[order] if labels else None


def fit_logistic_regression(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_labels: int,
    c: float,
    max_iter: int = 1000,
    tolerance: float = 1e-12,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(weight, bias) of a softmax regression minimising mean cross-entropy + ||weight||^2 / (2 c n), by L-BFGS
    from zero (the problem is convex: the start does not matter, and zero makes it deterministic), until a step
    changes the loss or the parameters by less than `tolerance`."""
    features = features.double()
    weight = torch.zeros(num_labels, features.shape[1], dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(num_labels, dtype=torch.float64, requires_grad=True)
    strength = 1.0 / (c * len(features))
    optimizer = torch.optim.LBFGS(
        [weight, bias],
        lr=1.0,
        max_iter=max_iter,
        tolerance_grad=1e-9,
        tolerance_change=tolerance,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = probe_objective(features, labels, weight, bias, strength)
        loss.backward()
        return loss

    optimizer.step(closure)
    return weight.detach(), bias.detach()


def probe_objective(
    features: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, strength: float
) -> torch.Tensor:
    """Mean cross-entropy + strength / 2 * ||weight||^2 (the bias is not penalised)."""
    logits = features @ weight.T + bias
    return nn.functional.cross_entropy(logits, labels) + strength / 2 * weight.pow(2).sum()


def stratified_folds(labels: torch.Tensor, folds: int, seed: int) -> torch.Tensor:
    """A fold number for each example: each label's examples shuffled (by `seed`) and dealt round-robin."""
    generator = torch.Generator().manual_seed(seed)
    fold_of = torch.empty(len(labels), dtype=torch.long)
    for label in labels.unique():
        members = (labels == label).nonzero().flatten()
        members = members[torch.randperm(len(members), generator=generator)]
        fold_of[members] = torch.arange(len(members)) % folds
    return fold_of


def standardise(features: torch.Tensor, reference: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(standardised features, mean, scale) with the mean and scale of `reference`; a constant feature keeps scale 1."""
    mean, scale = reference.mean(0), reference.std(0)
    scale = torch.where(scale > 1e-8, scale, torch.ones_like(scale))
    return (features - mean) / scale, mean, scale


def cross_validate(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_labels: int,
    folds: int,
    seed: int,
    c_grid: Sequence[float] = PROBE_C_GRID,
) -> dict[float, float]:
    """Mean held-out accuracy of each C over stratified folds (each fold standardised on its own training part)."""
    if folds < 2:
        raise UsageError(f"--linear_probe_folds needs at least 2 folds, not {folds}")
    smallest = min(int((labels == label).sum()) for label in labels.unique())
    if smallest < folds:
        raise UsageError(
            f"--linear_probe_folds {folds}: the rarest label has only {smallest} training examples; give fewer folds"
        )
    fold_of = stratified_folds(labels, folds, seed)
    scores = {}
    for c in c_grid:
        correct = 0
        for fold in range(folds):
            held_out = fold_of == fold
            train_x, mean, scale = standardise(features[~held_out], features[~held_out])
            weight, bias = fit_logistic_regression(train_x, labels[~held_out], num_labels, c, tolerance=CV_TOLERANCE)
            test_x = ((features[held_out] - mean) / scale).double()
            correct += int(((test_x @ weight.T + bias).argmax(-1) == labels[held_out]).sum())
        scores[c] = correct / len(labels)
    return scores


def init_head_by_linear_probe(
    model: nn.Module,
    train_dataset,
    collator: Callable,
    folds: int = 5,
    seed: int = 42,
    batch_size: int = 64,
    c_grid: Sequence[float] = PROBE_C_GRID,
) -> dict[str, float]:
    """Set `model.classifier` to the logistic regression on the frozen features of `train_dataset` whose C scores
    best in `folds`-fold cross-validation on that set (ties: the smaller C, the stronger regularisation).

    Returns what was chosen: `linear_probe_C`, its `linear_probe_train_cv_accuracy`, the number of folds, and the
    training accuracy of the final fit."""
    features, labels = head_inputs(model, train_dataset, collator, batch_size)
    num_labels = model.classifier.out_features
    scores = cross_validate(features, labels, num_labels, folds, seed, c_grid)
    best = max(scores, key=lambda c: (scores[c], -c))
    if len(scores) > 1 and best in (min(scores), max(scores)):
        logger.warning(
            "Linear probe: the cross-validation chose C=%s, at the edge of the grid %s; the best C may lie beyond it",
            best,
            sorted(scores),
        )
    standardised, mean, scale = standardise(features, features)
    weight, bias = fit_logistic_regression(standardised, labels, num_labels, best)
    # logits = W (x - mean) / scale + b = (W / scale) x + (b - (W / scale) . mean)
    folded_weight = weight / scale.double()
    folded_bias = bias - folded_weight @ mean.double()
    classifier = model.classifier
    with torch.no_grad():
        classifier.weight.copy_(folded_weight.to(classifier.weight.dtype))
        classifier.bias.copy_(folded_bias.to(classifier.bias.dtype))
    train_accuracy = float(((features.double() @ folded_weight.T + folded_bias).argmax(-1) == labels).double().mean())
    logger.info(
        "Linear probe of the head's %d features on %d training examples: %d-fold accuracy by C %s; chose C=%s "
        "(%.2f%%), %.2f%% on the whole training set",
        features.shape[1],
        len(labels),
        folds,
        {c: round(s, 4) for c, s in scores.items()},
        best,
        100 * scores[best],
        100 * train_accuracy,
    )
    return {
        "linear_probe_C": best,
        "linear_probe_train_cv_accuracy": scores[best],
        "linear_probe_folds": folds,
        "linear_probe_train_accuracy": train_accuracy,
    }
