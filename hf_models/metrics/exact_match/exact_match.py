"""Exact match of predicted strings, as CS224N's birthplace evaluation counts it."""

import datasets
import evaluate

_DESCRIPTION = "Fraction of predictions identical to their reference after stripping surrounding whitespace."
_KWARGS = """
Args:
    predictions (`list[str]`): predicted strings.
    references (`list[str]`): gold strings.
    ignore_case (`bool`, default False): compare case-insensitively.
Returns:
    exact_match (`float`, in [0, 1]), correct (`int`), total (`int`)
"""


class ExactMatch(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions: list[str], references: list[str], ignore_case: bool = False) -> dict:
        def normalize(text: str | None) -> str:
            text = (text or "").strip()
            return text.lower() if ignore_case else text

        correct = sum(normalize(p) == normalize(r) for p, r in zip(predictions, references, strict=True))
        total = len(references)
        return {"exact_match": correct / total if total else 0.0, "correct": correct, "total": total}
