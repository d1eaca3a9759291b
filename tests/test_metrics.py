"""The package's own `evaluate` metrics on hand-checked inputs."""

from __future__ import annotations

import math

import pytest

from hf_models.metrics import load_metric


@pytest.fixture(scope="module")
def exact_match():
    return load_metric("exact_match")


def test_exact_match_is_case_sensitive_like_the_course(exact_match):
    # CS224N's birthplace evaluation compares `pred == gold`: "london" is wrong for "London".
    scores = exact_match.compute(predictions=["london", "London", "Paris"], references=["London", "London", "Rome"])
    assert scores == {"exact_match": pytest.approx(1 / 3), "correct": 1, "total": 3}
    assert exact_match.compute(predictions=["PARIS"], references=["Paris"])["correct"] == 0


def test_exact_match_strips_surrounding_whitespace_only(exact_match):
    scores = exact_match.compute(
        predictions=["  London\n", "New  York", "New York"], references=["London"] * 1 + ["New York"] * 2
    )
    assert (scores["correct"], scores["total"]) == (2, 3)  # inner whitespace still counts


def test_exact_match_ignore_case_on_request(exact_match):
    scores = exact_match.compute(
        predictions=["london", "PARIS", "Rome"], references=["London", "Paris", "Oslo"], ignore_case=True
    )
    assert (scores["correct"], scores["total"]) == (2, 3)


def test_exact_match_of_nothing_is_zero(exact_match):
    assert exact_match.compute(predictions=[], references=[]) == {"exact_match": 0.0, "correct": 0, "total": 0}


def test_accuracy_counts_equal_labels():
    accuracy = load_metric("accuracy")
    assert accuracy.compute(predictions=[0, 1, 1, 0], references=[0, 1, 0, 0]) == {"accuracy": 0.75}
    assert accuracy.compute(predictions=[0, 1, 1, 0], references=[0, 1, 0, 0], normalize=False) == {"accuracy": 3}


def test_f1_binary_macro_micro():
    f1 = load_metric("f1")
    predictions, references = [1, 1, 0, 0, 1, 2], [1, 0, 0, 1, 1, 2]
    # Label 1: tp=2, fp=1, fn=1 -> 2/3. Label 0: tp=1, fp=1, fn=1 -> 1/2. Label 2: 1.
    assert f1.compute(predictions=predictions, references=references)["f1"] == pytest.approx(2 / 3)
    assert f1.compute(predictions=predictions, references=references, pos_label=0)["f1"] == pytest.approx(1 / 2)
    macro = f1.compute(predictions=predictions, references=references, average="macro")["f1"]
    assert macro == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    micro = f1.compute(predictions=predictions, references=references, average="micro")["f1"]
    assert micro == pytest.approx(4 / 6)  # micro F1 is accuracy for single-label classification
    assert f1.compute(predictions=[0, 0], references=[0, 0])["f1"] == 0.0  # no positive at all: 0 by convention


def test_perplexity_is_exp_of_the_weighted_mean_loss():
    perplexity = load_metric("perplexity")
    assert perplexity.compute(losses=[1.0, 3.0]) == {"perplexity": pytest.approx(math.e**2), "mean_loss": 2.0}
    weighted = perplexity.compute(losses=[1.0, 3.0], weights=[3.0, 1.0])
    assert weighted["mean_loss"] == pytest.approx(1.5) and weighted["perplexity"] == pytest.approx(math.exp(1.5))
    assert perplexity.compute(losses=[800.0])["perplexity"] == math.inf
