#!/usr/bin/env python
r"""How much sentiment a backbone's frozen features hold: linear probes of each layer, fitted to convergence.

    python benchmarks/probe_sentiment_features.py --data_dir ../shared/data/cls-books \
        --model_name_or_path outputs/bench/sentiment/domain [--random_init]

Each review (cut to --max_length tokens, as the finetuning recipe does) goes once through the frozen backbone.
The probes are logistic regressions on the pooled hidden states: each layer's mean over the tokens (layer 0 is
the embeddings), all layers' means side by side, and all layers' mean and max side by side. Each probe's
regularisation is chosen by 5-fold cross-validation on the training reviews, and the probe is then scored once on
validation. The frozen-backbone row of the sentiment benchmark trains a head on the last layer's mean for a few
epochs: these probes say how far a better head on the same features could go, and `--random_init` gives the
same probes on an untrained model of the same shape (what the features owe to pretraining).
Prints a table and writes it to OUTPUT (default: MODEL/feature_probe.json, or
MODEL/feature_probe_random_init.json). With --test_predictions FILE, the probe with the best cross-validated
accuracy on train (chosen without validation) labels the test reviews, one label per line. Needs scikit-learn.
"""

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from transformers import AutoConfig, AutoModel

from hf_models.data import load_cls_books
from hf_models.safety import check_output_file, command_line
from hf_models.textio import atomic_write_text
from hf_models.tokenization import load_tokenizer

REGULARISATION = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


@torch.no_grad()
def pooled_layers(model, tokenizer, texts: list[str], max_length: int, batch_size: int = 32) -> np.ndarray:
    """(reviews, 2, layers, hidden): the mean and the max over the non-pad tokens of every hidden state."""
    pooled = []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(
            texts[start : start + batch_size],
            truncation=True,
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        batch.pop("token_type_ids", None)
        hidden = torch.stack(model(**batch, output_hidden_states=True).hidden_states, dim=1)  # (b, layers, t, h)
        mask = batch["attention_mask"][:, None, :, None].to(hidden.dtype)
        mean = (hidden * mask).sum(2) / mask.sum(2).clamp(min=1.0)
        largest = hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).amax(2)
        pooled.append(torch.stack([mean, largest], dim=1).float().numpy())
    return np.concatenate(pooled)


def probe(train_x: np.ndarray, train_y: np.ndarray, valid_x: np.ndarray, valid_y: np.ndarray, seed: int):
    """A standardised logistic regression, its C chosen by 5-fold cross-validation on train, scored on valid:
    (its scores, the fitted probe)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def model(c: float):
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000, random_state=seed))

    cross_validated = {c: float(cross_val_score(model(c), train_x, train_y, cv=5).mean()) for c in REGULARISATION}
    best = max(cross_validated, key=cross_validated.get)
    fitted = model(best).fit(train_x, train_y)
    scores = {
        "C": best,
        "train_cv_accuracy": cross_validated[best],
        "valid_accuracy": float(fitted.score(valid_x, valid_y)),
    }
    return scores, fitted


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", required=True, help="the cls-books folder")
    parser.add_argument("--model_name_or_path", required=True, help="a pretrained model folder (with its tokenizer)")
    parser.add_argument("--random_init", action="store_true", help="probe an untrained model of the same config")
    parser.add_argument("--max_length", type=int, default=256, help="reviews are cut to this many tokens")
    parser.add_argument("--seed", type=int, default=42, help="seed of the untrained weights and of the probes")
    parser.add_argument("--output", default=None, help="the JSON report (default: in the model folder)")
    parser.add_argument(
        "--test_predictions",
        default=None,
        help="write the test labels of the probe chosen by cross-validation on train to this file",
    )
    args = parser.parse_args(argv)
    if args.test_predictions and Path(args.test_predictions).exists():
        parser.error(f"{args.test_predictions} exists: remove it or name another file")
    suffix = "_random_init" if args.random_init else ""
    output = Path(args.output or Path(args.model_name_or_path) / f"feature_probe{suffix}.json")
    inputs = [("--data_dir", args.data_dir), ("--model_name_or_path", args.model_name_or_path)]
    model_files = [p for p in Path(args.model_name_or_path).glob("*") if not p.name.startswith("feature_probe")]
    for path, what in ((output, "--output"), (args.test_predictions, "--test_predictions")):
        if path:  # the model's earlier probe reports are outputs, its other files inputs
            check_output_file(path, [*inputs[:1], *(("--model_name_or_path", p) for p in model_files)], what)

    torch.manual_seed(args.seed)
    tokenizer = load_tokenizer(args.model_name_or_path)
    if args.random_init:
        model = AutoModel.from_config(AutoConfig.from_pretrained(args.model_name_or_path))
    else:
        model = AutoModel.from_pretrained(args.model_name_or_path)
    model.eval()
    data = load_cls_books(args.data_dir)
    train, valid = data["train"], data["validation"]
    train_x = pooled_layers(model, tokenizer, list(train["text"]), args.max_length)
    valid_x = pooled_layers(model, tokenizer, list(valid["text"]), args.max_length)
    train_y, valid_y = np.array(train["label"]), np.array(valid["label"])
    layers = train_x.shape[2]

    def flat(x: np.ndarray, statistics: slice, chosen: slice) -> np.ndarray:
        return x[:, statistics, chosen].reshape(len(x), -1)

    probes = {f"layer {layer} mean": (slice(0, 1), slice(layer, layer + 1)) for layer in range(layers)}
    probes["all layers, mean"] = (slice(0, 1), slice(None))
    probes["all layers, mean and max"] = (slice(None), slice(None))
    results, fitted = {}, {}
    print(f"{'features':26} {'C':>6} {'train 5-fold':>12} {'validation':>10}")
    for name, (statistics, chosen) in probes.items():
        result, fitted[name] = probe(
            flat(train_x, statistics, chosen), train_y, flat(valid_x, statistics, chosen), valid_y, args.seed
        )
        results[name] = result
        print(
            f"{name:26} {result['C']:>6} {result['train_cv_accuracy']:>12.2%} {result['valid_accuracy']:>10.2%}",
            flush=True,
        )
    report_extra = {}
    if args.test_predictions:
        chosen_probe = max(results, key=lambda name: results[name]["train_cv_accuracy"])
        test_x = pooled_layers(model, tokenizer, list(data["test"]["text"]), args.max_length)
        labels = fitted[chosen_probe].predict(flat(test_x, *probes[chosen_probe]))
        atomic_write_text(args.test_predictions, "".join(f"{int(label)}\n" for label in labels))
        report_extra = {"test_predictions": args.test_predictions, "test_probe": chosen_probe}
        print(f"{chosen_probe!r} (best on train, 5-fold) labelled {len(labels)} test reviews: {args.test_predictions}")
    report = {
        "model": args.model_name_or_path,
        "random_init": args.random_init,
        "max_length": args.max_length,
        "train_reviews": len(train_y),
        "valid_reviews": len(valid_y),
        "probes": results,
        **report_extra,
    }
    atomic_write_text(output, json.dumps(report, indent=2) + "\n")
    print(f"wrote {output}")


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
