"""The sentiment benchmark's label-budget curve (the `sentiment_curve` pipeline of `benchmarks/plan.py`): what
pretraining buys is label efficiency, so each LP-FT row of the `sentiment` pipeline is run again on balanced draws
of the 1,600 training reviews, with its hyperparameters unchanged.

For every budget and finetuning seed, the draw is `hf_models.data.balanced_subset(labels, budget, seed)`: half
positive, half negative, nested (for one seed a budget holds every smaller budget's reviews), the same reviews for
every row. The rows: LP-FT from scratch and from the profile's review-stage LM (the one the `sentiment` pipeline
trained: never retrained per point), the frozen backbone's linear probe (the pretrained run's `--save_linear_probe`
output: free), and TF-IDF + logistic regression on the same draw. The budget of every review is the `sentiment`
pipeline's own LP-FT runs (the draw of all 1,600 is the training set in its order): reused, not run again.

This module does not import the plan (the plan imports it): `curve_steps` rewrites the plan's own LP-FT and TF-IDF
steps, so that a point's command is the profile's with a budget added; `benchmarks/write_results.py` and
`benchmarks/plot_label_curve.py` read the points where `curve_points` says they are.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

LABEL_BUDGETS = (24, 50, 100, 200, 400, 800, 1600)  # 24, not 25: a balanced draw has as many of each label
FULL_BUDGET = 1600  # every training review: the `sentiment` pipeline's LP-FT runs are this point
FINETUNED_ROWS = ("scratch_lp_ft", "pretrained_lp_ft")
# The rows in the order of the report and the figure; the probe is kept by the pretrained run.
CURVE_ROWS = ("pretrained_lp_ft", "scratch_lp_ft", "frozen_linear_probe", "tfidf")
PROBE_KEPT_BY = {"frozen_linear_probe": "pretrained_lp_ft"}
# The profile's step count at 1,600 reviews is its epochs (4 of 100 batches of 16): a run keeps that count of epochs
# over its draw, so that it sees each review as often as the full-data run does, but never fewer than MIN_STEPS
# optimizer steps. Four epochs of 24 reviews are 8 steps, fewer than the 20 of warm-up: the learning rate would
# never reach its peak, and a small budget would measure an unfinished schedule instead of too few labels. 50 steps
# (the rate at its peak after 20, then 30 steps of decay) train the small draws to a fit of the training reviews
# within the time the sweep is given; from 200 reviews on (52 steps) the epochs decide.
MIN_STEPS = 50


def training_steps(budget: int, epochs: int, batch_size: int) -> int:
    """The optimizer steps of a finetuning on `budget` reviews: the profile's epochs, at least MIN_STEPS."""
    return max(epochs * math.ceil(budget / batch_size), MIN_STEPS)


def run_folder(row: str, budget: int, seed: int) -> str:
    """A point's run folder, relative to the bench folder (the `sentiment` pipeline's own at the full budget)."""
    run = PROBE_KEPT_BY.get(row, row)
    kept = "/linear_probe" if row in PROBE_KEPT_BY else ""
    if budget == FULL_BUDGET and run != "tfidf":
        return f"sentiment/{run}_seed{seed}{kept}"
    return f"sentiment/curve/{run}_n{budget}_seed{seed}{kept}"


def step_name(row: str, budget: int, seed: int) -> str:
    """The step that makes a point (the `sentiment` pipeline's own LP-FT step at the full budget)."""
    run = PROBE_KEPT_BY.get(row, row)
    if budget == FULL_BUDGET and run != "tfidf":
        return f"se_{run}_seed{seed}"
    return f"se_curve_{run}_n{budget}_seed{seed}"


def curve_points(seeds: tuple[int, ...]) -> dict[str, dict[int, dict[int, tuple[str, str]]]]:
    """{row: {budget: {seed: (run folder, step name)}}}: every point of the curve, where it is and what made it."""
    return {
        row: {
            budget: {seed: (run_folder(row, budget, seed), step_name(row, budget, seed)) for seed in seeds}
            for budget in LABEL_BUDGETS
        }
        for row in CURVE_ROWS
    }


def _value(command: tuple[str, ...], flag: str) -> str:
    """The value of the last `flag` in `command` (a later flag wins, as in the recipes' parsers)."""
    index = len(command) - 1 - command[::-1].index(flag)
    return command[index + 1]


def _setting(command: tuple[str, ...], flag: str) -> str:
    """What a step runs with for `flag`: its command's value, else its arguments file's (`configs/...json`, read
    from the repository root, where the plan's steps run)."""
    if flag in command:
        return _value(command, flag)
    config = next(arg for arg in command if arg.endswith(".json"))
    return str(json.loads((REPO_ROOT / config).read_text(encoding="utf-8"))[flag.removeprefix("--")])


def _set(command: tuple[str, ...], flag: str, value: str) -> tuple[str, ...]:
    """`command` with its `flag`'s value replaced (every occurrence)."""
    return tuple(value if i and command[i - 1] == flag else arg for i, arg in enumerate(command))


def _in_curve_folder(command: tuple[str, ...], run: str) -> tuple[str, ...]:
    """`command` writing into `<its output folder's parent>/curve/<run>` instead."""
    parent = _value(command, "--output_dir").rsplit("/", 1)[0]
    return _set(command, "--output_dir", f"{parent}/curve/{run}")


def _finetuning_step(base, row: str, budget: int, seed: int):
    """The profile's LP-FT step of this seed, on a draw of `budget` reviews: the same flags, with the budget, the
    step count of `training_steps`, and one evaluation at the end (per epoch, a run of 24 reviews would score the
    validation reviews 33 times)."""
    epochs = int(float(_setting(base.command, "--num_train_epochs")))
    steps = str(training_steps(budget, epochs, int(_setting(base.command, "--per_device_train_batch_size"))))
    command = _in_curve_folder(base.command, f"{row}_n{budget}_seed{seed}")
    extra = ("--label_budget", str(budget), "--max_steps", steps, "--eval_strategy", "steps", "--eval_steps", steps)
    return replace(base, name=step_name(row, budget, seed), command=(*command, *extra), group="se_curve")


def curve_steps(sentiment_steps: list, seeds: tuple[int, ...]) -> list:
    """The curve's steps, from the `sentiment` pipeline's (`sentiment_steps`, the plan's `Step`s): TF-IDF on every
    draw (seconds each), then the two LP-FT rows on every draw short of the full budget, smallest first."""
    by_name = {step.name: step for step in sentiment_steps}
    tfidf = by_name["se_tfidf"]
    steps = []
    for budget in LABEL_BUDGETS:
        for seed in seeds:
            command = _in_curve_folder(tfidf.command, f"tfidf_n{budget}_seed{seed}")
            extra = ("--label_budget", str(budget), "--seed", str(seed))
            steps.append(replace(tfidf, name=step_name("tfidf", budget, seed), command=(*command, *extra)))
    for budget in LABEL_BUDGETS:
        if budget == FULL_BUDGET:
            continue
        for seed in seeds:
            for row in FINETUNED_ROWS:
                steps.append(_finetuning_step(by_name[f"se_{row}_seed{seed}"], row, budget, seed))
    return steps
