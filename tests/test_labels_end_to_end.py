"""A review known to be positive is `positive` at every step: the label file (1), the `ClassLabel`, the saved
config's `id2label`/`label2id`, the test predictions file, `pipeline("text-classification")` and the model card.

A tiny classifier is trained on a separable toy set (the positive reviews carry positive words) in which label 1
is positive, as in CLS-books: a class id whose name is swapped anywhere on the way shows as a wrong name."""

from __future__ import annotations

import json

import pytest
from tiny import TINY, run_sentiment

from hf_models.data import load_cls_books
from hf_models.run_record import build_model_card, read_record

POSITIVE_REVIEW = "Un roman excellent, superbe et magnifique."
NEGATIVE_REVIEW = "Un livre ennuyeux, mauvais et médiocre."


@pytest.fixture(scope="module")
def trained_classifier(tmp_path_factory, write_toy_cls_books):
    from hf_models.tokenization import train_bpe_tokenizer

    data = write_toy_cls_books(tmp_path_factory.mktemp("labels_cls_books"), seed=1)
    texts = load_cls_books(data)["train"]["text"]
    tokenizer_dir = tmp_path_factory.mktemp("labels_tokenizer")
    train_bpe_tokenizer(texts, vocab_size=300, output_dir=tokenizer_dir, show_progress=False)
    out = tmp_path_factory.mktemp("labels_run")
    metrics = run_sentiment(
        ["--data_dir", str(data), "--from_scratch", "--tokenizer_name_or_path", str(tokenizer_dir)]
        + ["--config_overrides", TINY, "--causal_mask", "false", "--classifier_pooling", "mean"]
        + ["--output_dir", str(out), "--num_train_epochs", "8", "--learning_rate", "1e-2"]
        + ["--per_device_train_batch_size", "8", "--use_cpu", "--report_to", "none", "--save_strategy", "no"]
        + ["--disable_tqdm", "true", "--log_level", "warning", "--seed", "0"]
    )
    assert metrics["eval_accuracy"] >= 0.9, metrics  # separable: the model has learnt which reviews are which
    return data, out


def test_label_file_one_is_the_positive_class(trained_classifier):
    data, _ = trained_classifier
    raw = load_cls_books(data)
    label_file = (data / "train.label").read_text().split()
    first_positive = label_file.index("1")
    assert raw["train"][first_positive]["label"] == 1
    assert raw["train"].features["label"].int2str(1) == "positive"
    assert raw["train"].features["label"].int2str(0) == "negative"


def test_saved_config_pipeline_and_card_say_positive(trained_classifier):
    from transformers import pipeline

    import hf_models.small_encoder  # noqa: F401  (registers the Auto classes)

    data, out = trained_classifier
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["id2label"] == {"0": "negative", "1": "positive"}
    assert config["label2id"] == {"negative": 0, "positive": 1}

    classify = pipeline("text-classification", model=str(out), device="cpu")
    assert classify(POSITIVE_REVIEW)[0]["label"] == "positive"
    assert classify(NEGATIVE_REVIEW)[0]["label"] == "negative"

    # The test predictions file holds class ids: 1 for the test reviews with positive words.
    test_reviews = (data / "test.review.spm").read_text(encoding="utf-8").splitlines()
    predicted = (out / "test_predictions.txt").read_text().split()
    for review, label in zip(test_reviews, predicted, strict=True):
        positive = any(f"\u2581{w}" in review.split() for w in ("excellent", "magnifique", "passionnant", "superbe"))
        assert label == ("1" if positive else "0"), review

    card = build_model_card(out, config, read_record(out), repo_id="me/sentiment")
    assert "- **Labels:** 0 → `negative`, 1 → `positive`." in card.text
    assert "labels: `negative`, `positive`" in card.text
