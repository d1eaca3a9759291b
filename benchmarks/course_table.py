#!/usr/bin/env python
"""A course's reported numbers beside ours: the table `make cs224n` and `make altegrad` print at their end.

    python benchmarks/course_table.py cs224n --bench_dir outputs/bench --profile course-cut
    python benchmarks/course_table.py altegrad --bench_dir outputs/bench --profile cpu --output table.md

The rows are the profile's (`benchmarks/profiles/<profile>.yaml`), read from the run records under `--bench_dir`; a
row not run yet says so. The course's numbers are those docs/courses.md quotes: CS224N's bars on dev, the lab's
validation accuracies after the first and the last epoch. Of a benchmark profile, the counterpart of a course row is
the profile's first model of that variant, scored as its headline (the better on the tuning split of pretrained alone
and finetuned); the profile's other rows follow as ours alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import grid
from grid import Row

from hf_models.run_record import read_record
from hf_models.safety import check_output_file, command_line
from hf_models.textio import atomic_write_text

# (the course's row, its reported number, our row of a course profile; None: the variant's model of a benchmark one)
CS224N = (
    ('London: "London" to every question', "5.0 %", "london"),
    ("vanilla, no pretraining", "far below 10 %", "vanilla_nopretrain"),
    ("vanilla, pretrained, then finetuned", "≥ 10 % (the bar)", "vanilla"),
    ("synthesizer, pretrained, then finetuned", "≥ 5 % (the bar)", "synthesizer"),
)
# (the lab's row, after epoch 1, after the last epoch): the lab's figure (docs/courses.md); no frozen row there
ALTEGRAD = (
    ("scratch", "from scratch", "65 %", "78 %"),
    ("pretrained", "pretrained, then finetuned", "76 %", "80 %"),
    ("frozen", "pretrained, backbone frozen", "—", "—"),
)


def counted(counts, noun: str) -> str:
    """The count of examples behind the scores shown, read from their evaluations, as ` (500 questions)`; several
    when the rows were scored on different numbers (` (50/500 questions)`), nothing when no row has one."""
    found = sorted({n for n in counts if n})
    return f" ({'/'.join(f'{n:,}' for n in found)} {noun})" if found else ""


def _scored_examples(folder: Path, split: str = "validation") -> int | None:
    record = read_record(folder)
    scores = record.scored(split) if record else None
    return None if scores is None else scores.num_examples


def _dev_accuracy(folder: Path, split: str = "validation") -> float | None:
    record = read_record(folder)
    scores = record.scored(split) if record else None
    return None if scores is None else 100 * scores.metrics["exact_match"]


def _percent(value: float | None) -> str:
    return "not run" if value is None else f"{value:.1f} %"


def _our_row(profile: str, bench: Path, key: str) -> str | None:
    """Our row for a course row: the row of that key, else the profile's first model of that variant, as its
    headline: of pretrained alone and finetuned, the better on the tuning split (the finetuned one without it)."""
    rows = {row.key: row for row in grid.load(profile).rows["birthplace"]}
    if key in rows:
        return key
    model = next((model for model in grid.load(profile).lists["model"] if model.startswith(key)), None)
    if model is None:
        return None
    candidates = grid.load(profile).headline.get(model, (f"{model}_finetuned",))  # a course profile: no choice
    return max(candidates, key=lambda c: _dev_accuracy(bench / (rows[c].tune or "-")) or -1.0)


def cs224n_table(profile: str, bench: Path) -> str:
    rows = {row.key: row for row in grid.load(profile).rows["birthplace"]}
    questions = [_scored_examples(bench / row.runs[0]) for row in rows.values()]
    lines = [
        f"## CS224N a5, birthplace: dev accuracy{counted(questions, 'questions')}, profile {profile}",
        "",
        "| | the course | ours | our row |",
        "| --- | ---: | ---: | --- |",
    ]
    shown = set()
    for label, reported, key in CS224N:
        ours = _our_row(profile, bench, key)
        value = _dev_accuracy(bench / rows[ours].runs[0]) if ours in rows else None
        lines.append(f"| {label} | {reported} | {_percent(value)} | {ours or '—'} |")
        shown.add(ours)
    for key, row in rows.items():
        if key not in shown:
            lines.append(f"| ours alone | | {_percent(_dev_accuracy(bench / row.runs[0]))} | {key} |")
    figure = f"{bench}/figures/birthplace_dev_accuracy.png"
    return "\n".join([*lines, "", f"Figure: {figure}; test predictions: predictions_test.txt in each run folder."])


def _sentiment_scores(bench: Path, row: Row) -> tuple[str, str, int]:
    """Mean validation accuracy after epoch 1, and mean ± std after the last, over the row's finished seeds."""
    records = [record for record in (read_record(bench / run) for run in row.runs) if record is not None]
    curves = [record.accuracy_per_epoch()[1] for record in records]
    finals = [evaluation.metrics["accuracy"] for r in records if (evaluation := r.evaluation("validation"))]
    first = [100 * curve[0] for curve in curves if curve]
    epoch_1 = f"{statistics.mean(first):.2f} %" if first else "—"
    if not finals:
        return epoch_1, "not run", 0
    spread = f" ± {100 * statistics.stdev(finals):.2f}" if len(finals) > 1 else ""
    return epoch_1, f"{100 * statistics.mean(finals):.2f} %{spread}", len(finals)


def altegrad_table(profile: str, bench: Path) -> str:
    rows = {row.key: row for row in grid.load(profile).rows["sentiment"]}
    records = [read_record(bench / run) for row in rows.values() for run in row.runs]
    reviews = [e.num_examples for r in records if r is not None and (e := r.evaluation("validation"))]
    lines = [
        f"## ALTeGraD lab, CLS-FR books: validation accuracy{counted(reviews, 'reviews')}, profile {profile}",
        "",
        "| | the lab, epoch 1 | ours, epoch 1 | the lab, end | ours, end (mean ± std) | seeds |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, label, lab_first, lab_end in ALTEGRAD:
        first, end, seeds = _sentiment_scores(bench, rows[key]) if key in rows else ("—", "not run", 0)
        lines.append(f"| {label} | {lab_first} | {first} | {lab_end} | {end} | {seeds} |")
    for key, row in rows.items():
        if key not in {key for key, *_ in ALTEGRAD}:
            first, end, seeds = _sentiment_scores(bench, row)
            lines.append(f"| {key} (ours alone) | | {first} | | {end} | {seeds} |")
    figure = f"{bench}/figures/sentiment_valid_accuracy.png"
    return "\n".join([*lines, "", f"Figure: {figure}; test predictions: test_predictions.txt in each run folder."])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("course", choices=["cs224n", "altegrad"], help="which course's table")
    parser.add_argument("--bench_dir", default="outputs/bench", help="the run's folder (make cs224n|altegrad's OUT)")
    parser.add_argument("--profile", choices=grid.names(), default="cpu", help="the run's profile")
    parser.add_argument("--output", help="also write the table to this Markdown file")
    args = parser.parse_args(argv)
    bench = Path(args.bench_dir)
    if not bench.is_dir():
        raise SystemExit(f"--bench_dir {bench}: no such folder")
    if args.output:  # never over a run's own files
        runs = [row.runs[0] for rows in grid.load(args.profile).rows.values() for row in rows]
        check_output_file(args.output, [("--bench_dir", bench / run) for run in runs], "--output", inside=True)
    table = (cs224n_table if args.course == "cs224n" else altegrad_table)(args.profile, bench)
    print(table)
    if args.output:
        atomic_write_text(Path(args.output), table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
