"""The linear-probe head (LP-FT): a converged logistic regression, equal to scikit-learn's, folded into the model's
head so that the model's own forward pass gives the probe's logits, padding or not."""

from __future__ import annotations

import pytest
import torch

from hf_models import SmallEncoderConfig, SmallEncoderForSequenceClassification
from hf_models.tasks import sentiment
from hf_models.tasks.sentiment import (
    PROBE_C_GRID,
    cross_validate,
    fit_logistic_regression,
    head_inputs,
    init_head_by_linear_probe,
    probe_objective,
    stratified_folds,
)
from hf_models.textio import UsageError


def _separable_enough(n: int = 120, width: int = 6, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Two overlapping classes with features on different scales (as unstandardised hidden states are)."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % 2
    features = torch.randn(n, width, generator=generator) + labels[:, None] * torch.linspace(1.5, 0.0, width)
    return features * torch.logspace(-1, 1, width), labels


def test_the_fit_is_converged_and_equals_scikit_learn() -> None:
    sklearn = pytest.importorskip("sklearn.linear_model")
    features, labels = _separable_enough()
    c = 0.1
    weight, bias = fit_logistic_regression(features, labels, 2, c)
    # Converged: the gradient of the objective vanishes at the fit.
    weight.requires_grad_(True), bias.requires_grad_(True)
    probe_objective(features.double(), labels, weight, bias, 1.0 / (c * len(features))).backward()
    assert weight.grad.norm() < 1e-6 and bias.grad.norm() < 1e-6
    # Two softmax rows with ||W||^2 / (2 C n) are one logistic vector v = w1 - w0 with ||v||^2 / (4 C n), which is
    # scikit-learn's ||v||^2 / 2 + C' sum(loss) with C' = 2 C.
    reference = sklearn.LogisticRegression(C=2 * c, tol=1e-10, max_iter=10_000).fit(
        features.double().numpy(), labels.numpy()
    )
    ours = torch.softmax(features.double() @ weight.detach().T + bias.detach(), -1)[:, 1]
    theirs = torch.from_numpy(reference.predict_proba(features.double().numpy())[:, 1]).double()
    assert torch.allclose(ours, theirs, atol=1e-5)


def test_folds_are_stratified_and_seeded() -> None:
    labels = torch.tensor([0] * 10 + [1] * 5)
    folds = stratified_folds(labels, 5, seed=1)
    for fold in range(5):
        assert ((folds == fold) & (labels == 0)).sum() == 2 and ((folds == fold) & (labels == 1)).sum() == 1
    assert torch.equal(folds, stratified_folds(labels, 5, seed=1))
    assert not torch.equal(folds, stratified_folds(labels, 5, seed=2))
    with pytest.raises(UsageError, match="rarest label has only 5"):
        cross_validate(torch.randn(15, 3), labels, 2, folds=6, seed=0)
    with pytest.raises(UsageError, match="at least 2 folds"):
        cross_validate(torch.randn(15, 3), labels, 2, folds=1, seed=0)


@pytest.mark.parametrize(
    ("scores", "chosen", "warned"),
    [
        ({0.01: 0.6, 0.1: 0.8, 1.0: 0.7}, 0.1, False),
        ({0.01: 0.8, 0.1: 0.7, 1.0: 0.7}, 0.01, True),
        ({0.01: 0.6, 0.1: 0.7, 1.0: 0.8}, 1.0, True),
        ({0.01: 0.7, 0.1: 0.8, 1.0: 0.8}, 0.1, False),  # a tie goes to the smaller C
    ],
)
def test_the_choice_of_C_and_the_warning_at_the_grids_edge(
    scores: dict, chosen: float, warned: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sentiment, "cross_validate", lambda *args, **kwargs: scores)
    torch.manual_seed(0)
    config = SmallEncoderConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        pad_token_id=0,
    )
    model = SmallEncoderForSequenceClassification(config)
    with caplog.at_level("WARNING", logger=sentiment.__name__):
        metrics = sentiment.init_head_by_linear_probe(model, _Reviews(), _collate, folds=4, seed=0, batch_size=8)
    assert metrics["linear_probe_C"] == chosen and metrics["linear_probe_train_cv_accuracy"] == scores[chosen]
    edge = [record.getMessage() for record in caplog.records if "edge of the grid" in record.getMessage()]
    assert edge == (
        [
            f"Linear probe: the cross-validation chose C={chosen}, at the edge of the grid [0.01, 0.1, 1.0]; "
            "the best C may lie beyond it"
        ]
        if warned
        else []
    )


class _Reviews(torch.utils.data.Dataset):
    """Token-id sequences of different lengths; label 1 when token 7 occurs."""

    def __init__(self, n: int = 40, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.rows = []
        for i in range(n):
            ids = torch.randint(3, 30, (int(torch.randint(4, 12, (1,), generator=generator)),), generator=generator)
            ids[ids == 7] = 8
            if i % 2:
                ids[0] = 7
            self.rows.append({"input_ids": ids.tolist(), "attention_mask": [1] * len(ids), "label": i % 2})

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict:
        return self.rows[index]


def _collate(rows: list[dict]) -> dict[str, torch.Tensor]:
    """Right-padding with id 0, as DataCollatorWithPadding does."""
    width = max(len(row["input_ids"]) for row in rows)
    return {
        "input_ids": torch.tensor([row["input_ids"] + [0] * (width - len(row["input_ids"])) for row in rows]),
        "attention_mask": torch.tensor(
            [row["attention_mask"] + [0] * (width - len(row["input_ids"])) for row in rows]
        ),
        "labels": torch.tensor([row["label"] for row in rows]),
    }


@pytest.mark.parametrize("pooling", ["mean", "all_layers"])
def test_the_folded_head_gives_the_probes_logits_through_the_model(pooling: str) -> None:
    torch.manual_seed(0)
    config = SmallEncoderConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        pad_token_id=0,
        classifier_pooling=pooling,
        classifier_dropout=0.5,
    )
    model = SmallEncoderForSequenceClassification(config)
    model.freeze_backbone()
    reviews = _Reviews()
    before = {name: p.clone() for name, p in model.named_parameters() if name.startswith("model.")}

    metrics = init_head_by_linear_probe(model, reviews, _collate, folds=4, seed=0, batch_size=8)

    assert model.training  # left as found
    assert all(torch.equal(p, before[name]) for name, p in model.named_parameters() if name.startswith("model."))
    assert metrics["linear_probe_C"] in PROBE_C_GRID and metrics["linear_probe_folds"] == 4
    # The features are what the head reads, whatever the batch's padding: batch of 8 and one review at a time agree.
    features, labels = head_inputs(model, reviews, _collate, batch_size=8)
    single, _ = head_inputs(model, reviews, _collate, batch_size=1)
    assert torch.allclose(features, single, atol=1e-5)
    # Batched shortest first, returned in the dataset's order: row k is review k (its label, its own features).
    assert labels.tolist() == [row["label"] for row in reviews.rows]
    fifth, _ = head_inputs(model, torch.utils.data.Subset(reviews, [5]), _collate)
    assert torch.allclose(features[5], fifth[0], atol=1e-5)
    model.eval()
    with torch.no_grad():
        logits = torch.cat(
            [model(**{k: v for k, v in _collate([row]).items() if k != "labels"}).logits for row in reviews.rows]
        )
    accuracy = float((logits.argmax(-1) == labels).float().mean())
    assert accuracy == pytest.approx(metrics["linear_probe_train_accuracy"])
    assert accuracy > 0.5  # the probe learned something of the token-7 signal
