"""Perplexity from evaluation losses: exp of the (optionally weighted) mean cross-entropy in nats.

Unlike the Hub's `perplexity` module, this one does not load a model: it takes the losses a training run
already computed (for example Trainer's `eval_loss`, or one loss per batch with its token count as weight).
"""

import math

import datasets
import evaluate

_DESCRIPTION = "Perplexity = exp(mean cross-entropy loss), the loss being the natural-log token cross-entropy."
_KWARGS = """
Args:
    losses (`list[float]`): mean token cross-entropy losses (nats), e.g. one per evaluation batch.
    weights (`list[float]`, optional): a weight per loss (e.g. its number of tokens); uniform if omitted.
Returns:
    perplexity (`float`), mean_loss (`float`)
"""


class Perplexity(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS,
            features=datasets.Features({"losses": datasets.Value("float64")}),
        )

    def _compute(self, losses: list[float], weights: list[float] | None = None) -> dict:
        if not losses:
            raise ValueError("perplexity needs at least one loss")
        weights = [1.0] * len(losses) if weights is None else list(weights)
        mean_loss = sum(w * loss for w, loss in zip(weights, losses, strict=True)) / sum(weights)
        # Overflow guard: an untrained model's loss can be large; report inf rather than crash.
        perplexity = math.exp(mean_loss) if mean_loss < 700 else float("inf")
        return {"perplexity": perplexity, "mean_loss": mean_loss}
