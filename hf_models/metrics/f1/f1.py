"""F1 score for classification: binary (of `pos_label`) or macro / micro averaged over the labels."""

import datasets
import evaluate

_DESCRIPTION = "F1 = 2 * precision * recall / (precision + recall)."
_KWARGS = """
Args:
    predictions (`list[int]`): predicted labels.
    references (`list[int]`): gold labels.
    average (`str`, default "binary"): "binary" (F1 of `pos_label`), "macro" (unweighted mean over labels)
        or "micro" (global counts; equals accuracy for single-label classification).
    pos_label (`int`, default 1): the positive label when `average="binary"`.
Returns:
    f1 (`float`)
"""


def _f1(tp: int, fp: int, fn: int) -> float:
    # Convention of scikit-learn's zero_division=0: an undefined F1 counts as 0.
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


class F1(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS,
            features=datasets.Features(
                {"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}
            ),
        )

    def _compute(
        self, predictions: list[int], references: list[int], average: str = "binary", pos_label: int = 1
    ) -> dict:
        pairs = list(zip(predictions, references, strict=True))

        def counts(label: int) -> tuple[int, int, int]:
            tp = sum(p == label and r == label for p, r in pairs)
            fp = sum(p == label and r != label for p, r in pairs)
            fn = sum(p != label and r == label for p, r in pairs)
            return tp, fp, fn

        if average == "binary":
            return {"f1": _f1(*counts(pos_label))}
        labels = sorted(set(predictions) | set(references))
        if average == "macro":
            scores = [_f1(*counts(label)) for label in labels]
            return {"f1": sum(scores) / len(scores) if scores else 0.0}
        if average == "micro":
            totals = [sum(c) for c in zip(*(counts(label) for label in labels), strict=True)] if labels else [0, 0, 0]
            return {"f1": _f1(*totals)}
        raise ValueError(f"average must be 'binary', 'macro' or 'micro', got {average!r}")
