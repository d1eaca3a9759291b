"""Render BENCHMARKS.md and docs/levers.md from benchmarks/results.json and benchmarks/levers.json.

    python benchmarks/write_results.py --report

Every figure of the two files is read from the JSON files, so that the report cannot drift from the results:
`results.json` is written by the runs (`make bench`, `benchmarks/throughput.py`) and holds the test
accuracies scored outside the project; `levers.json` is the list of every lever tried, with its measured effect and
what was decided. The sections' titles and row labels are the profiles' (benchmarks/profiles/*.yaml);
`profile_command` and COMMANDS say how each result is rerun.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import grid

HISTORY_COMMIT = "7fec6bc"  # the commit that keeps the dated diary of every run and every removed lever

# How to rerun each section of results.json that no profile writes (the profiles' sections: `profile_command`).
COMMANDS = {
    "tfidf": "python benchmarks/tfidf_baseline.py --data_dir ../shared/data/cls-books --output_dir OUTPUT_DIR",
    "throughput": "python benchmarks/throughput.py --threads 1 --generation_repeats 2",
    "throughput_gpu": "python benchmarks/throughput.py --device cuda --dtype bf16 --batch_size 64",
    "throughput_gpu_base": (
        "python benchmarks/throughput.py --device cuda --dtype bf16 --preset base --contenders ours_sdpa gpt2 "
        "--compile --dropout 0 --batch_size 32"
    ),
    "tokenizer": "python tokenizer/train_tokenizer.py --files FILES --vocab_size VOCABULARY --output_dir OUTPUT_DIR",
    "bench": "make bench",
    "report": "make docs",
}
# Each task's sections (<prefix><profile's suffix>): the pipelines that write it, and the course whose make target does.
TASKS = {
    "birthplace_dev_acc": ("birthplace", "cs224n"),
    "sentiment_valid_acc": ("sentiment sentiment_lab", "altegrad"),
    "sentiment_label_curve": ("sentiment sentiment_curve", None),
}
# The course's bars (its handout: dev accuracy after pretraining and finetuning), for the course profiles' sections.
BIRTHPLACE_COURSE_BARS = "the course's bars: vanilla ≥ 10 %, synthesizer ≥ 5 %, no pretraining far below 10 %"


def profile_command(section: str) -> str:
    """How a profile's section is rerun: its course's make target, else `make bench` with its pipelines."""
    for name in grid.names():
        for prefix, (pipelines, course) in TASKS.items():
            if section == prefix + grid.load(name).suffix:
                if grid.load(name).course and course:
                    return f"make {course} PROFILE={name}"
                shown = f'"{pipelines}"' if " " in pipelines else pipelines
                return f"make bench PROFILE={name} PIPELINES={shown}"
    return COMMANDS[section]


def titles(task: str) -> dict[str, str]:
    """{profile: the title of its section of `task`} for the profiles that have one, in the report's order."""
    return {name: grid.load(name).titles[task] for name in grid.names() if task in grid.load(name).titles}


def row_labels(task: str, profile: str | None = None) -> dict[str, str]:
    """{row: label} of one profile's rows of `task`, or of every profile's (the first profile's label of a key)."""
    labels: dict[str, str] = {}
    for name in [profile] if profile else grid.names():
        for row in grid.load(name).rows.get(task, ()):
            labels.setdefault(row.key, row.label)
    return labels


def percent(value: float, digits: int = 1) -> str:
    return f"{100 * value:.{digits}f} %"


def points(difference: float) -> str:
    """A difference of accuracies (fractions) in signed points, with a true minus sign."""
    return f"{100 * difference:+.1f}".replace("-", "−")


INTERVAL_PENDING = "interval pending a rerun"  # a difference of rows whose runs saved no scored examples


def comparison_key(section: str, first: str, second: str, budget: str | int | None = None) -> str:
    """`<section>/<first>-vs-<second>[/n<budget>]`: the key of a paired comparison in results.json's `comparisons`
    (written by benchmarks/write_results.py, read by the documents)."""
    return f"{section}/{first}-vs-{second}" + (f"/n{budget}" if budget else "")


def holds_zero(interval: list[float]) -> bool:
    """Whether a difference's 95 % interval holds zero: no measurable difference."""
    return interval[0] <= 0 <= interval[1]


def difference_text(comparison: dict | None, difference: float) -> str:
    """A difference of two rows in points with what its paired interval says: `+4.6 points (95 % interval +1.2 to
    +8.0)`, `+1.1 points, no measurable difference (95 % interval −2.0 to +4.2)`, or without a recorded comparison
    (an older run's rows) the difference of the means, `+4.6 points (interval pending a rerun)`."""
    if comparison is None:
        return f"{points(difference)} points ({INTERVAL_PENDING})"
    low, high = comparison["ci95"]
    interval = f"95 % interval {points(low)} to {points(high)}"
    verdict = ", no measurable difference" if holds_zero(comparison["ci95"]) else ""
    return f"{points(comparison['diff'])} points{verdict} ({interval})"


def interval_cell(entry: dict) -> str:
    """A row's 95 % interval and its examples, `71.3–78.9 % (n = 400 × 3 seeds)`, or `not recorded`."""
    if "ci95" not in entry:
        return "not recorded"
    low, high = entry["ci95"]
    seeds = f" × {entry['seeds']} seeds" if entry.get("seeds", 1) > 1 else ""
    return f"{100 * low:.1f}–{100 * high:.1f} % (n = {entry['n']:,}{seeds})"


def interval_table(header: list[str], body: list[list[str]], column: int, rows: dict) -> list[str]:
    """A section's table with its interval column (`column`) when a row of it has an interval; without one, the
    table without the column and a line that says so (an older run's rows: no interval is made up)."""
    if any("ci95" in row for row in rows.values() if isinstance(row, dict)):
        return table(header, body)
    drop = [[cell for i, cell in enumerate(cells) if i != column] for cells in (header, *body)]
    return [
        *table(drop[0], drop[1:]),
        "",
        "No interval: these runs saved no scored examples.",
    ]


def table(header: list[str], rows: list[list[str]], right: int = 1) -> list[str]:
    """A markdown table; the columns from `right` on are right-aligned (numbers)."""
    rule = ["---" if i < right else "---:" for i in range(len(header))]
    return [f"| {' | '.join(cells)} |" for cells in (header, rule, *rows)]


def facts(entries: list[dict], command: str) -> list[str]:
    """The command, hardware and date of a section, from its rows (each kind listed once)."""
    hardware = " / ".join(dict.fromkeys(e["hardware"] for e in entries if "hardware" in e))
    dates = ", ".join(dict.fromkeys(e["date"] for e in entries if "date" in e))
    return [f"Command: `{command}`. Hardware: {hardware}. Date: {dates}.", ""]


def pretraining_epochs(command: str) -> str:
    """The pretraining's epochs, read from a birthplace row's command or the arguments file it names ("—" when the
    row has no pretraining)."""
    for part in command.split(" && "):
        if " pretrain " not in f"{part} ":
            continue
        found = re.search(r"--num_train_epochs (\d+)", part)
        if found:
            return found.group(1)
        config = re.search(r" pretrain (\S+\.json)", part)
        path = Path(__file__).resolve().parent.parent / config.group(1) if config else None
        if path is not None and path.exists():
            epochs = json.loads(path.read_text(encoding="utf-8")).get("num_train_epochs")
            return "—" if epochs is None else f"{epochs:g}"
    return "—"


def birthplace_section(profile: str, rows: dict) -> list[str]:
    section, labels = f"birthplace_dev_acc{grid.load(profile).suffix}", row_labels("birthplace")
    chosen = {entry["chosen_row"] for entry in rows.values() if "chosen_row" in entry}
    headlines = "; ".join(
        f"{labels.get(rows[key]['chosen_row'], key)} **{percent(rows[key]['value'])}**"
        for key in rows
        if "chosen_row" in rows[key]
    )
    lines = [f"## Birthplace (CS224N a5) {titles('birthplace')[profile]}", ""]
    if headlines:
        choice = "each the tune split's choice between a pretrained model and its finetuned copy"
        lines += [f"Headline rows (dev; {choice}): {headlines}.", ""]
    else:
        lines += [f"Dev accuracy against {BIRTHPLACE_COURSE_BARS}.", ""]
    lines += facts(list(rows.values()), profile_command(section))
    body = []
    for key, label in labels.items():
        if key not in rows:
            continue
        row = rows[key]
        dev = f"{percent(row['value'])} ± {percent(row['std'])} ({row['correct']}/{row['total']})"
        tune = percent(row["tune_split_acc"]) if "tune_split_acc" in row else "—"
        name = f"**{label}** (headline)" if key in chosen else label
        cells = [pretraining_epochs(row["command"]), dev, interval_cell(row), tune, f"{row['wall_time_s']:,} s"]
        body.append([name, *cells])
    header = [
        "row",
        "pretraining epochs",
        "dev accuracy ± s.e.",
        "95 % interval",
        "tune split",
        "wall time of its steps",
    ]
    lines += interval_table(header, body, 3, rows)
    notes = [f"- {label}: {rows[key]['note']}" for key, label in labels.items() if "note" in rows.get(key, {})]
    lines += ["", *notes] if notes else []
    figure = f"benchmarks/figures/birthplace_dev_accuracy{section.removeprefix('birthplace_dev_acc')}.png"
    return [*lines, "", f"Figure: [{Path(figure).name}]({figure}).", ""]


DEMO_ROWS = {
    "with pretraining": "pretrained (span corruption), then finetuned",
    "without pretraining": "finetuned only, no pretraining",
    "most common place": "always the most common training birthplace",
}


def demo_section(demo: dict) -> list[str]:
    """`make demo`: the synthetic birthplace task's held-out people (its test), the three rows."""
    total = demo["scores"]["with pretraining"]["total"]
    lines = ["## `make demo` (synthetic birthplace task)", ""]
    lines += [f"Test: the {total} held-out people, never seen in finetuning (seed {demo['seed']}).", ""]
    lines += facts([demo], demo["command"])
    scores = [(label, demo["scores"][key]) for key, label in DEMO_ROWS.items()]
    body = [[label, f"{percent(s['exact_match'])} ({s['correct']}/{s['total']})"] for label, s in scores]  # its own N
    lines += table(["row", "test accuracy"], body)
    return [*lines, "", f"Wall time of the whole demo: {demo['wall_time_s']:,} s.", ""]


def whole_runs_section(runs: dict) -> list[str]:
    """Each recorded run's whole wall time, under its command: the time a user waits for that command."""
    lines = ["## Whole runs", ""]
    lines += [
        "The wall time of each command from its start to its end. Steps run side by side, so it is less than the",
        "sum of the rows' step times above. A run that kept steps of an earlier run counts its own time alone.",
        "",
    ]
    body = [
        [f"`{command}`", run["hardware"], run["date"], f"{run['wall_time_s']:,} s ({run['wall_time_s'] / 60:.0f} min)"]
        for command, run in runs.items()
    ]
    return [*lines, *table(["command", "hardware", "date", "wall time"], body, right=3), ""]


LIBRARY_BARS = "library_bars"  # results.json's section of the package's shape and speed


def library_section(bars: dict) -> list[str]:
    """The package's shape and speed, each against its goal: the files and functions a short run goes through, the
    package's lines (benchmarks/code_path.py), and how fast `-h` and a refusal answer (benchmarks/help_speed.py)."""
    lines = ["## The library's size and speed", ""]
    for key, entry in bars.items():
        lines.append(
            f"- `{key}`: `{entry['command']}`; {entry['hardware']}, {entry['date']}, commit `{entry['commit']}`."
        )
    lines.append("")
    body = []
    if path := bars.get("code_path"):
        goals = path["goals"]
        body.append(
            ["package files a 3-step sentiment finetune goes through", f"{path['files']}", f"{goals['files']}"]
        )
        body.append(["package functions it calls", f"{path['functions']}", f"{goals['functions']}"])
        body.append(["lines of Python in `hf_models`", f"{path['package_lines']:,}", f"{goals['package_lines']:,}"])
    if speed := bars.get("help_speed"):
        goal = f"{speed['goal']}"
        for command, ratio in speed["cpu_ratio_to_baseline"].items():
            body.append([f"`{command}`: CPU time / `import torch, transformers`", f"{ratio:.2f}", goal])
    return [*lines, *table(["measure", "measured", "goal (at most)"], body), ""]


def stopped_runs_section(results: dict) -> list[str]:
    """The courses' runs that a time limit stopped before their end: what they reached, on which hardware."""
    entries = {key: value for key, value in results.items() if key.startswith("stopped_runs")}
    if not entries:
        return []
    lines = ["## Runs stopped before their end", ""]
    lines += ["A lent machine's time limit stopped these steps; they have no result, only how far they got.", ""]
    body = [
        [
            f"`{step}` ({key.removeprefix('stopped_runs').removeprefix('_') or 'cpu'})",
            run["what"],
            run["hardware"],
            run["date"],
        ]
        for key, runs in entries.items()
        for step, run in runs.items()
    ]
    return [*lines, *table(["step (profile)", "how far it got", "hardware", "date"], body, right=4), ""]


def sentiment_section(profile: str, rows: dict, comparisons: dict | None = None) -> list[str]:
    suffix, comparisons = grid.load(profile).suffix, comparisons or {}
    section = f"sentiment_valid_acc{suffix}"
    lines = [f"## Sentiment (CLS-FR books) {titles('sentiment')[profile]}", ""]
    labels = row_labels("sentiment", profile)
    gaps = [
        f"{labels[p]} − {labels[s]} "
        + difference_text(comparisons.get(comparison_key(section, p, s)), rows[p]["value"] - rows[s]["value"])
        for p, s in (("pretrained", "scratch"), ("pretrained_lp_ft", "scratch_lp_ft"))
        if p in rows and s in rows and p in labels
    ]
    best = max(rows, key=lambda key: rows[key]["value"])
    summary = f"Best row (validation): {labels.get(best, best)} **{percent(rows[best]['value'], 2)}**"
    lines += [f"{summary}; {'; '.join(gaps)}." if gaps else f"{summary}.", ""]
    lines += facts(list(rows.values()), profile_command(section))
    body = []
    for key, label in labels.items():
        if key not in rows:
            continue
        row = rows[key]
        epoch_1 = percent(row["per_epoch"][0], 2) if len(row.get("per_epoch", [])) > 1 else "—"
        final = f"{percent(row['value'], 2)} ± {100 * row['std']:.2f}"
        seeds = " / ".join(f"{100 * v:.2f}" for v in row.get("per_seed", {}).values())
        body.append([label, epoch_1, final, interval_cell(row), seeds, f"{row['wall_time_s']:,} s"])
    header = [
        "row",
        "validation, epoch 1",
        "validation, final ± s.d.",
        "95 % interval",
        "per seed",
        "wall time of its steps",
    ]
    lines += interval_table(header, body, 3, rows)
    notes = [f"- {label}: {rows[key]['note']}" for key, label in labels.items() if "note" in rows.get(key, {})]
    lines += ["", *notes] if notes else []
    figure = f"benchmarks/figures/sentiment_valid_accuracy{suffix}.png"
    return [*lines, "", f"Figure: [{Path(figure).name}]({figure}).", ""]


def label_curve_section(profile: str, curve: dict, test: dict, comparisons: dict | None = None) -> list[str]:
    """The label-budget curve: validation accuracy (mean ± s.d. of the draws) of each row at each budget, and the
    gap pretrained − scratch LP-FT; the outside TF-IDF test line (`test["tfidf_label_curve"]`) when there is one."""
    suffix, title = grid.load(profile).suffix, titles("sentiment")[profile]
    section, budgets, rows = f"sentiment_label_curve{suffix}", [str(n) for n in curve["budgets"]], curve["rows"]
    curve_labels = {
        **row_labels("sentiment", profile),
        **{row["key"]: grid.label(profile, row["key"]) for row in grid.load(profile).curve},
    }
    lines = [f"## Sentiment: accuracy against labels {title}", ""]
    lines += [
        "What pretraining buys is label efficiency: the rows again on balanced draws of the 1,600 training reviews",
        f"(half of each label; {curve['draws']}), with the profile's hyperparameters; a finetuning keeps the",
        f"profile's epochs over its draw but takes at least {curve['min_steps']} optimizer steps. The 1,600 column is",
        "the profile's own LP-FT runs on every review, from the curve's run (its date; the rows above may be an",
        "earlier run's). Validation accuracy (%), mean ± sample s.d. over the draws, and in brackets its 95 % interval",
        "over the draws and the reviews where the runs recorded one; the gap's brackets are its paired interval:",
        "",
    ]
    lines += facts([curve], profile_command(section))
    body = [
        [label, *(curve_cell(rows[key][n]) for n in budgets)] for key, label in curve_labels.items() if key in rows
    ]
    if {"pretrained_lp_ft", "scratch_lp_ft"} <= set(rows):
        comparisons = comparisons or {}
        gaps = []
        for n in budgets:
            found = comparisons.get(comparison_key(section, "pretrained_lp_ft", "scratch_lp_ft", n))
            gap = rows["pretrained_lp_ft"][n]["mean"] - rows["scratch_lp_ft"][n]["mean"]
            shown = f" [{points(found['ci95'][0])}, {points(found['ci95'][1])}]" if found else ""
            gaps.append(f"{points(found['diff'] if found else gap)}{shown}")
        body.append(["pretrained − scratch LP-FT (points)", *gaps])
    lines += table(["row (labels)", *(f"{int(n):,}" for n in budgets)], body)
    lines += [
        "",
        f"The curve's own runs took {curve['wall_time_s']:,} s (the full budget's and the LM's not counted).",
    ]
    outside = test.get("tfidf_label_curve")
    if outside:
        shown = ", ".join(f"{int(n):,}: {percent(v)}" for n, v in outside.items())
        lines += ["", f"TF-IDF + logistic regression on the test reviews, scored outside the project: {shown}."]
    figure = f"benchmarks/figures/sentiment_label_curve{suffix}.png"
    return [*lines, "", f"Figure: [{Path(figure).name}]({figure}).", ""]


def curve_cell(point: dict) -> str:
    """A curve point: `75.0 ± 1.2`, with its 95 % interval when recorded: `75.0 ± 1.2 [71.0, 79.0]`."""
    shown = f"{100 * point['mean']:.1f} ± {100 * point['std']:.1f}"
    return f"{shown} [{100 * point['ci95'][0]:.1f}, {100 * point['ci95'][1]:.1f}]" if "ci95" in point else shown


def comparisons_section(comparisons: dict) -> list[str]:
    """Every paired comparison of results.json: the two rows, the split, the difference, its paired 95 % interval,
    the examples (and seeds) it is over, what it says, and the methods."""
    lines = ["## Paired comparisons", ""]
    if not comparisons:
        return [
            *lines,
            "None recorded yet: a comparison needs both rows' scored validation examples, which the runs save",
            "(`examples_validation.jsonl`) and `benchmarks/write_results.py` turns into paired intervals; the rows",
            f"above without an interval ({INTERVAL_PENDING}) predate them.",
            "",
        ]
    lines += [
        "Each difference is first − second, on the same examples (and the same finetuning seeds: a seed's draw of",
        "labels and data order is the same in both rows), with its paired 95 % interval; an interval that holds zero",
        "is no measurable difference.",
        "",
    ]
    body = []
    for entry in comparisons.values():
        budget = f" at {entry['budget']:,} labels" if "budget" in entry else ""
        seeds = f" × {entry['seeds']} seeds" if entry.get("seeds", 1) > 1 else ""
        verdict = "no measurable difference" if holds_zero(entry["ci95"]) else "measurable"
        body.append(
            [
                f"`{entry['first']}` − `{entry['second']}`{budget}",
                f"`{entry['section']}`",
                entry["split"],
                points(entry["diff"]),
                f"{points(entry['ci95'][0])} to {points(entry['ci95'][1])}",
                f"{entry['n']:,}{seeds}",
                verdict,
            ]
        )
    header = ["rows (first − second)", "section", "split", "difference (points)", "95 % interval", "n", "verdict"]
    lines += table(header, body, right=3)
    methods = dict.fromkeys(entry["method"] for entry in comparisons.values())
    return [*lines, "", *(f"- Method: {method}." for method in methods), ""]


def sentiment_test_section(test: dict) -> list[str]:
    """The test accuracies scored outside the project, a column per profile."""
    profiles = [p for p in titles("sentiment") if p in test["profiles"]]
    lines = ["## Sentiment on the test reviews (scored outside the project)", ""]
    lines += [
        "Test accuracy on the 2,000 held-out reviews, mean of the 3 finetuning seeds of each row above: the test",
        "labels stay outside the project, which scored the rows' prediction files",
        "(`benchmarks/predictions/[gpu/]sentiment/<row>[_large]/seed<N>.txt`).",
        "",
    ]
    body = [
        [label, *(percent(test["profiles"][p][key]) if key in test["profiles"][p] else "—" for p in profiles)]
        for key, label in row_labels("sentiment", "cpu").items()
    ]
    lines += table(["row (test)", *(grid.load(p).column for p in profiles)], body)
    tfidf = test.get("tfidf_logistic_regression")
    if tfidf:
        best = max(v for rows in test["profiles"].values() for v in rows.values())
        lines += [
            "",
            f"TF-IDF + logistic regression (`{COMMANDS['tfidf']}`): **{percent(tfidf['train_and_validation'])}** test",
            f"trained on train + validation, {percent(tfidf['train'])} on train alone; the best neural row: "
            f"{percent(best)}.",
        ]
    large = test["profiles"].get("gpu_large", {})
    gap = test.get("pretrained_minus_scratch_points", {}).get("gpu_large")
    if gap is not None and {"scratch_lp_ft", "pretrained_lp_ft"} <= set(large):
        lines += [
            "",
            f"At the lab's size the lab's plain recipe keeps the lab's gap on test: pretrained − scratch {points(gap / 100)}",
            f"points ({test.get('pretrained_minus_scratch_note', '')}); LP-FT closes it from scratch (scratch LP-FT "
            f"{percent(large['scratch_lp_ft'])}, pretrained LP-FT {percent(large['pretrained_lp_ft'])}).",
        ]
    return [*lines, ""]


def throughput_section(results: dict) -> list[str]:
    """Training tokens/s against transformers' GPT-2 of the same shape, per `throughput*` section."""
    lines = ["## Training throughput", ""]
    lines += [
        "`benchmarks/throughput.py`: forward + backward + fused AdamW of our model against `GPT2LMHeadModel` of the",
        "same shape, interleaved, medians; MFU is PaLM's estimate against the GPU's dense bf16 peak; the KV-cache",
        "speed-up is greedy generation with the cache over without it.",
        "",
    ]
    body, commands = [], []
    for key in sorted(k for k in results if k.startswith("throughput")):
        entry = results[key]
        shape = f"{entry['batch_size']} × {entry['seq_len']}" if "batch_size" in entry else "—"
        mfu = percent(entry["mfu"]) if "mfu" in entry else "—"
        cells = [entry.get("preset", "cs224n-mingpt"), f"{entry['hardware']}, {entry['dtype']}", shape]
        body.append(
            [
                f"`{key}`",
                *cells,
                f"{entry['train_tokens_per_s']:,}",
                f"{entry['train_ratio_vs_gpt2']:.2f}×",
                mfu,
                f"{entry['kv_cache_speedup']:.2f}×" if "kv_cache_speedup" in entry else "—",
                entry["date"],
            ]
        )
        if "compiled_train_tokens_per_s" in entry:
            compiled = [f"{entry['compiled_train_tokens_per_s']:,}", f"{entry['compiled_train_ratio_vs_gpt2']:.2f}×"]
            body.append(
                [f"`{key}`, `torch.compile`", *cells, *compiled, percent(entry["compiled_mfu"]), "—", entry["date"]]
            )
        source = f"; recorded from {entry['source']}" if "source" in entry else ""
        commands.append(f"- `{key}`: `{COMMANDS.get(key, entry['command'])}`{source}")
    header = [
        "section",
        "preset",
        "hardware, dtype",
        "batch × tokens",
        "tokens/s",
        "ours / GPT-2",
        "MFU",
        "KV cache",
        "date",
    ]
    return [*lines, *table(header, body, right=4), "", *commands, ""]


def tokenizer_section(compression: dict) -> list[str]:
    lines = ["## Tokenizer compression", ""]
    lines += [f"{compression['measure'][0].upper()}{compression['measure'][1:]}.", ""]
    lines += facts([compression], COMMANDS["tokenizer"])
    body = [
        [
            f"`{row['files']}`",
            f"{row['characters']:,}",
            f"{row['vocab_size']:,}",
            f"{row['actual_vocab_size']:,}",
            f"{row['chars_per_token']:.2f}",
        ]
        for row in compression["rows"]
    ]
    lines += table(
        ["training text (`--files`)", "characters", "vocabulary asked", "vocabulary", "characters per token"], body
    )
    held_out = "; ".join(
        f"{row['tokenizer']} on {row['text']}: {row['chars_per_token']:.2f}" for row in compression.get("held_out", [])
    )
    return [*lines, "", f"Held out (not training text): {held_out}.", ""] if held_out else [*lines, ""]


def levers_section(levers: list[dict]) -> list[str]:
    lines = ["## Levers tried", ""]
    lines += [
        "Each lever's effect is the change it made to the row it was tried on, on the split named. `kept`: in the",
        "code; `removed`: taken out of the code, listed in [docs/levers.md](docs/levers.md) and kept by the commit",
        f"`{HISTORY_COMMIT}`; `not adopted`: a setting measured and left at its value.",
        "",
    ]
    body = [
        [lever["lever"], lever["task"], lever["effect"], lever["measured_on"], lever["decision"]] for lever in levers
    ]
    return [*lines, *table(["lever", "task", "effect", "measured on", "decision"], body, right=5), ""]


def header() -> list[str]:
    return [
        "# Benchmarks",
        "",
        "The results of the two courses' tasks (CS224N a5 birthplace QA; the transfer-learning lab's book-review",
        "sentiment) and of the throughput benchmark, per task and hardware, with the levers tried. This file is",
        "generated: every table comes from `benchmarks/results.json` (written by the runs) and `benchmarks/levers.json`.",
        "",
        f"- Regenerate: `{COMMANDS['bench']}` (the CPU profile; `PROFILE=gpu` on a GPU machine) runs the pipelines and",
        f"  writes `results.json`; then `{COMMANDS['report']}` renders this file, `docs/levers.md` and the README's results.",
        "  The courses' own settings (`make cs224n|altegrad PROFILE=course|course-cut`) are recorded with",
        "  `python benchmarks/write_results.py --profile course|course-cut --bench_dir OUT`; `make demo` with `--tasks demo`.",
        "- Splits: birthplace **dev** is the course's 500 dev questions; the **tune split** is 200 training questions",
        "  held out to choose between a pretrained model and its finetuned copy. Sentiment **validation** is the 400",
        "  validation reviews (mean ± sample s.d. over 3 finetuning seeds); **test** is the 2,000 test reviews, scored",
        "  outside the project.",
        "- Intervals: a dev or validation accuracy whose runs saved their scored examples has its 95 % interval",
        "  (`benchmarks/intervals.py`: Wilson's for one run, a bootstrap over seeds and examples for a row of seeds),",
        "  and the rows compared in the text have their paired differences in [Paired comparisons](#paired-comparisons).",
        f"- History: the dated diary of every run and exploration is in git history at the commit `{HISTORY_COMMIT}`:",
        f"  `git show {HISTORY_COMMIT}:BENCHMARKS.md`.",
        "",
    ]


def render_benchmarks(results: dict, levers: list[dict]) -> str:
    """BENCHMARKS.md: a section per task and hardware present in `results`, then the levers."""
    lines = header()
    if "demo" in results:
        lines += demo_section(results["demo"])
    for profile in titles("birthplace"):
        if f"birthplace_dev_acc{grid.load(profile).suffix}" in results:
            lines += birthplace_section(profile, results[f"birthplace_dev_acc{grid.load(profile).suffix}"])
    for profile in titles("sentiment"):
        if f"sentiment_valid_acc{grid.load(profile).suffix}" in results:
            section = results[f"sentiment_valid_acc{grid.load(profile).suffix}"]
            lines += sentiment_section(profile, section, results.get("comparisons", {}))
    for profile in titles("sentiment"):
        if f"sentiment_label_curve{grid.load(profile).suffix}" in results:
            curve = results[f"sentiment_label_curve{grid.load(profile).suffix}"]
            test = results.get("sentiment_test_acc", {})
            lines += label_curve_section(profile, curve, test, results.get("comparisons", {}))
    lines += comparisons_section(results.get("comparisons", {}))
    if "whole_runs" in results:
        lines += whole_runs_section(results["whole_runs"])
    lines += stopped_runs_section(results)
    if "sentiment_test_acc" in results:
        lines += sentiment_test_section(results["sentiment_test_acc"])
    if any(key.startswith("throughput") for key in results):
        lines += throughput_section(results)
    if "tokenizer_compression" in results:
        lines += tokenizer_section(results["tokenizer_compression"])
    if LIBRARY_BARS in results:
        lines += library_section(results[LIBRARY_BARS])
    lines += levers_section(levers)
    return "\n".join(lines).rstrip("\n") + "\n"


def render_levers_doc(levers: list[dict]) -> str:
    """docs/levers.md: the levers removed from the code, for users (no dates)."""
    removed = [lever for lever in levers if lever["decision"] == "removed"]
    lines = [
        "# Levers removed",
        "",
        "These options, flags and scripts were measured on the two courses' tasks and taken out of the code: none",
        "helped enough to keep, or they served an exploration that is over. The commit",
        f"`{HISTORY_COMMIT}` keeps every one of them: `git checkout {HISTORY_COMMIT}` (or `git show {HISTORY_COMMIT}:PATH` for",
        "one file). The effect is the change each made to the row it was tried on, on the split named: validation",
        "(the 400 validation reviews), test (the 2,000 test reviews, scored outside the project), dev or the tune",
        "split (the birthplace questions). The levers kept are in [BENCHMARKS.md](../BENCHMARKS.md#levers-tried).",
        "",
    ]
    body = [[lever["lever"], lever.get("what", ""), lever["effect"], lever["measured_on"]] for lever in removed]
    lines += table(["lever", "what it did", "measured effect", "measured on"], body, right=4)
    return "\n".join(lines) + "\n"


def read_json_object(path: Path, what: str, key: str | None = None) -> dict:
    """The JSON object of `path` (with `key`: that key must be in it); a damaged file is one line naming it and its
    line (`SystemExit`, which the scripts print as `error: ...`), never json's traceback."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise SystemExit(
            f"{what} {path}:{error.lineno}: not valid JSON ({error.msg}); restore it (git checkout {path})"
        ) from None
    except UnicodeDecodeError:
        raise SystemExit(f"{what} {path}: not UTF-8 text; restore it (git checkout {path})") from None
    if not isinstance(data, dict) or (key is not None and key not in data):
        shown = f"an object with {key!r}" if key else "an object"
        raise SystemExit(f"{what} {path} holds a JSON {type(data).__name__}, not {shown}; restore it")
    return data


def read_levers(path: Path) -> list[dict]:
    return read_json_object(path, "--levers", "levers")["levers"]


def check_outputs_are_not_inputs(outputs: dict[str, Path], inputs: dict[str, Path]) -> None:
    """A command never writes over a file it reads, nor twice into one file: each of `outputs` ({flag: path}) is none
    of the `inputs` and none of the other outputs (links resolved)."""
    seen = {path.resolve(): flag for flag, path in inputs.items()}
    for flag, path in outputs.items():
        if path.resolve() in seen:
            raise SystemExit(
                f"{flag} {path} is also {seen[path.resolve()]}: a command never writes over a file it reads or writes; pick another"
            )
        seen[path.resolve()] = flag


def write_report(results_path: Path, levers_path: Path, benchmarks_md: Path, levers_md: Path) -> None:
    check_outputs_are_not_inputs(
        {"--benchmarks_md": benchmarks_md, "--levers_md": levers_md},
        {"--results": results_path, "--levers": levers_path},
    )
    results, levers = read_json_object(results_path, "--results"), read_levers(levers_path)
    benchmarks, levers_doc = render_benchmarks(results, levers), render_levers_doc(levers)
    benchmarks_md.write_text(benchmarks, encoding="utf-8")
    levers_md.write_text(levers_doc, encoding="utf-8")
