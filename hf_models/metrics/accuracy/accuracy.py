"""Accuracy: the fraction of predictions equal to their reference."""

import datasets
import evaluate

_DESCRIPTION = "Accuracy = (number of correct predictions) / (number of predictions)."
_KWARGS = """
Args:
    predictions (`list[int]`): predicted labels.
    references (`list[int]`): gold labels.
    normalize (`bool`, default True): return a fraction; if False, the count of correct predictions.
Returns:
    accuracy (`float` or `int`)
"""


class Accuracy(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS,
            features=datasets.Features(
                {"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}
            ),
        )

    def _compute(self, predictions: list[int], references: list[int], normalize: bool = True) -> dict:
        correct = sum(int(p == r) for p, r in zip(predictions, references, strict=True))
        if not normalize:
            return {"accuracy": correct}
        return {"accuracy": correct / len(references) if references else 0.0}
