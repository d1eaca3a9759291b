"""The README's and docs' generated parts: each a function of `benchmarks/results.json` (and of the config files for
the courses' cuts), named by the marker that holds it (`<!-- generated: NAME -->...<!-- end -->`).

A number in a user document is one of these parts or a `<!-- value: PATH | FORMAT -->` marker (docs/generate.py):
the prose around them stays hand-written. A sentence that compares two rows takes its difference from the paired
comparisons of results.json (`comparisons`, written by benchmarks/write_results.py with each difference's 95 %
interval): it says "no measurable difference" when the interval holds zero, and that the interval is pending a rerun
when the rows' runs recorded none. The courses' own reported numbers are read from
`benchmarks/course_table.py` (parsed, not imported: it imports the benchmark plan), so that they are written once.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from report import INTERVAL_PENDING, comparison_key, difference_text, holds_zero

REPO_ROOT = Path(__file__).resolve().parent.parent
COURSE_TABLE = REPO_ROOT / "benchmarks" / "course_table.py"
ONE_VALUE = r"(\d+\.\d) % (?:\[[^]]*\] )?\((?:dev|test|validation)[^)]*\)"


def resolve(data: object, path: str) -> object:
    """The value at `path` (keys joined by dots; a key may itself hold dots, as a command does; a list's item by its
    index)."""
    if not path:
        return data
    if isinstance(data, list):
        index, _, rest = path.partition(".")
        if not index.isdigit() or int(index) >= len(data):
            raise KeyError(path)
        return resolve(data[int(index)], rest)
    if not isinstance(data, dict):
        raise KeyError(path)
    for key in sorted(data, key=len, reverse=True):
        if path == key or path.startswith(f"{key}."):
            return resolve(data[key], path[len(key) + 1 :])
    raise KeyError(path)


def percent(value: float, digits: int = 1) -> str:
    """A fraction as a percentage, rounded half up from its decimal digits (0.7525 is 75.3 %, not float's 75.2 %)."""
    shown = (Decimal(str(value)) * 100).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{shown} %"


def points(difference: float) -> str:
    """A difference of accuracies (fractions) in signed points, with a true minus sign."""
    return f"{100 * difference:+.1f}".replace("-", "−")


def duration(seconds: float) -> str:
    """A wall time as a reader says it: seconds, minutes, or hours past two hours."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


FORMATS: dict[str, Callable[[float], str]] = {
    "percent": percent,
    "percent2": lambda value: percent(value, 2),
    "points": points,
    "signed": lambda value: f"{value:+.1f}".replace("-", "−"),  # a number of points already
    "minutes": duration,
    "seconds": lambda value: f"{value:g} s",  # a short time measured to the tenth or hundredth
    "loss": lambda value: f"{value:.2f}",
    "count": lambda value: f"{value:,}",
}


def course_numbers() -> dict[str, tuple]:
    """`CS224N` and `ALTEGRAD` of benchmarks/course_table.py: the courses' own reported numbers."""
    tree = ast.parse(COURSE_TABLE.read_text(encoding="utf-8"))
    found = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        if node.targets[0].id in {"CS224N", "ALTEGRAD"}
    }
    if set(found) != {"CS224N", "ALTEGRAD"}:
        raise SystemExit(f"{COURSE_TABLE}: CS224N and ALTEGRAD (the courses' numbers) not found")
    return found


def config_value(path: str, key: str) -> int:
    """A setting of a config file under configs/ (the courses' epochs and steps)."""
    return json.loads((REPO_ROOT / "configs" / path).read_text(encoding="utf-8"))[key]


def whole_run(results: dict, profile: str, pipeline: str) -> str:
    """' (N min)' of the recorded whole run of `profile` that ran `pipeline`; '' when none is recorded."""
    for run in results.get("whole_runs", {}).values():
        if run.get("profile") == profile and pipeline in run.get("pipelines", ()):
            return f" ({duration(run['wall_time_s'])})"
    return ""


def cell(section: dict | None, key: str, split: str) -> str:
    """One of our numbers in a course table: `75.2 % [71.3, 78.9] (dev)` with its 95 % interval, `75.2 % (dev;
    interval not recorded)` for a row whose runs recorded none, `78.9 % (test)` for a test accuracy scored outside
    the project (no interval: the test labels stay outside)."""
    entry = (section or {}).get(key)
    if entry is None:
        return "not yet run"
    return f"{with_interval(entry)} ({split}{not_recorded([entry])})"


def with_interval(entry: dict | float) -> str:
    """`75.2 % [71.3, 78.9]`: an accuracy of results.json with its 95 % interval (in percent) when it has one."""
    if not isinstance(entry, dict):
        return percent(entry)
    if "ci95" not in entry:
        return percent(entry["value"])
    low, high = (percent(bound).removesuffix(" %") for bound in entry["ci95"])
    return f"{percent(entry['value'])} [{low}, {high}]"


def not_recorded(entries: list) -> str:
    """`; interval not recorded` when one of our rows (an entry of results.json, not an outside test score) has none."""
    missing = [entry for entry in entries if isinstance(entry, dict) and "ci95" not in entry]
    return f"; interval{'s' if len(entries) > 1 else ''} not recorded" if missing else ""


def bold_best(rows: list[list[str]], columns: tuple[int, ...]) -> list[list[str]]:
    """The best percentage of each column in bold (a cell of one value: `75.2 % (dev)`)."""
    for column in columns:
        values = {i: float(m.group(1)) for i, row in enumerate(rows) if (m := re.fullmatch(ONE_VALUE, row[column]))}
        best = max(values.values(), default=None)
        for i, value in values.items():
            if value == best:
                number, rest = rows[i][column].split(" % ", 1)
                rows[i][column] = f"**{number} %** {rest}"
    return rows


def markdown_table(header: list[str], rows: list[list[str]], right: tuple[int, ...]) -> str:
    rule = ["---:" if i in right else "---" for i in range(len(header))]
    return "\n".join(f"| {' | '.join(cells)} |" for cells in (header, rule, *rows))


# (our row key in the birthplace sections, our label, the course's row key in course_table.CS224N, the command;
# a quick row's command is followed by its steps' wall time)
CS224N_ROWS = (
    ("london", 'always "London"', "london", "the first command below"),
    ("vanilla_nopretrain", "vanilla, no pretraining", "vanilla_nopretrain", "the next two below"),
    (
        "vanilla_recite",
        "vanilla, pretrained (ours: openings + QA, recite then answer)",
        "vanilla",
        "`make cs224n PROFILE=cpu`{cpu} or `PROFILE=gpu`{gpu}",
    ),
    ("synthesizer_recite", "synthesizer, pretrained the same way", "synthesizer", "the same"),
    ("vanilla_span_corruption", "vanilla, the course's span corruption on our BPE", "vanilla", "the same"),
)
QUICK_ROWS = ("london", "vanilla_nopretrain")


def course_bar(reported: str) -> str:
    return reported.replace(" (the bar)", "")


def cs224n_table(results: dict) -> str:
    bars = {key: reported for _, reported, key in course_numbers()["CS224N"]}
    cpu, gpu = results.get("birthplace_dev_acc", {}), results.get("birthplace_dev_acc_gpu", {})
    times = {"cpu": whole_run(results, "cpu", "birthplace"), "gpu": whole_run(results, "gpu", "birthplace")}
    rows = []
    for key, label, course_key, command in CS224N_ROWS:
        quick = cpu.get(key, {}).get("wall_time_s") if key in QUICK_ROWS else None
        command = command.format(**times) + (f" ({duration(quick)})" if quick else "")
        rows.append([label, f"{course_bar(bars[course_key])} (dev)", cell(cpu, key, "dev"), cell(gpu, key, "dev")])
        rows[-1].append(command)
    epochs = config_value("cs224n/course/pretrain_vanilla.json", "num_train_epochs")
    cut_epochs = config_value("cs224n/course-cut/pretrain_vanilla.json", "num_train_epochs")
    own = [results.get(f"birthplace_dev_acc_course_{p}", {}) for p in ("cut", "gpu")]
    pair = [
        " / ".join(
            with_interval(s[key]) if key in s else "not yet run"
            for key in ("vanilla_finetuned", "synthesizer_finetuned")
        )
        + f" (dev{not_recorded([s[key] for key in ('vanilla_finetuned', 'synthesizer_finetuned') if key in s])})"
        for s in own
    ]
    cut_time = whole_run(results, "course-cut", "birthplace").strip(" ()")
    rows.append(
        [
            f"the course's own setting: characters, span corruption, {epochs} epochs (vanilla / synthesizer)",
            f"{course_bar(bars['vanilla'])} / {course_bar(bars['synthesizer'])} (dev)",
            f"cut: {pair[0]}",
            pair[1] if own[1] else "not yet run",
            f"`make cs224n PROFILE=course` (a GPU) or `PROFILE=course-cut` "
            f"({cut_time + ': ' if cut_time else ''}{cut_epochs} of the {epochs} epochs)",
        ]
    )
    header = ["row", "the course", "ours, 2 CPU cores", "ours, one GPU", "command"]
    return markdown_table(header, bold_best(rows, (2, 3)), right=(1, 2, 3))


# (our row key in sentiment_test_acc and the course profiles, our label, shown in the lab's course row)
ALTEGRAD_ROWS = (
    ("scratch", "from scratch"),
    ("pretrained", "pretrained, then finetuned"),
    ("frozen", "pretrained, backbone frozen"),
    ("pretrained_lp_ft", "pretrained, a [linear probe](docs/glossary.md#linear-probe) then finetuned"),
    ("scratch_lp_ft", "from scratch, a linear probe then finetuned"),
)


def lab_number(lab: dict, key: str) -> str:
    reported = lab.get(key, "—")
    return reported if reported == "—" else f"{reported} (validation)"


def altegrad_table(results: dict) -> str:
    lab = {key: end for key, _, _, end in course_numbers()["ALTEGRAD"]}
    test = results.get("sentiment_test_acc", {}).get("profiles", {})
    times = {"cpu": whole_run(results, "cpu", "sentiment"), "gpu": whole_run(results, "gpu", "sentiment")}
    first = f"`make altegrad PROFILE=cpu`{times['cpu']} or `PROFILE=gpu`{times['gpu']}"
    rows = [
        [label, lab_number(lab, key), cell(test.get("cpu"), key, "test"), cell(test.get("gpu"), key, "test")]
        + [first if index == 0 else "the same"]
        for index, (key, label) in enumerate(ALTEGRAD_ROWS)
    ]
    own = [results.get(f"sentiment_valid_acc_course_{p}") for p in ("cut", "gpu")]
    keys = [key for key, _, _, _ in course_numbers()["ALTEGRAD"]]
    pair = [
        " / ".join(with_interval(s[k]) if k in s else "—" for k in keys)
        + f" (validation{not_recorded([s[k] for k in keys if k in s])})"
        if s
        else None
        for s in own
    ]
    steps = [config_value(f"altegrad/{p}/lm.json", "max_steps") for p in ("course-cut", "course")]
    epochs = [config_value(f"altegrad/{p}/scratch.json", "num_train_epochs") for p in ("course-cut", "course")]
    cut_time = whole_run(results, "course-cut", "sentiment_lab").strip(" ()")
    rows.append(
        [
            "the lab's own setting: its 21M-parameter model, its 50,001 ids, 3 seeds (scratch / pretrained / frozen)",
            f"{' / '.join(lab[k] for k in keys)} (validation)",
            f"cut: {pair[0]}" if pair[0] else "not yet run",
            pair[1] or "not yet run",
            f"`make altegrad PROFILE=course-cut` ({cut_time + ': ' if cut_time else ''}{steps[0]:,} of the "
            f"{steps[1]:,} LM steps, {epochs[0]} of the {epochs[1]} epochs) or `PROFILE=course` (a GPU)",
        ]
    )
    header = ["row", "the lab", "ours, 2 CPU cores", "ours, one GPU", "command"]
    return markdown_table(header, bold_best(rows, (2, 3)), right=(1, 2, 3))


DEMO_ROWS = {"with pretraining": "pretrained", "without pretraining": "no pretraining"}


def demo_scores(results: dict) -> str:
    demo = results["demo"]
    scores, total = demo["scores"], demo["scores"]["with pretraining"]["total"]
    shown = [f"{label} {percent(scores[key]['exact_match'])}" for key, label in DEMO_ROWS.items()]
    shown.append(f'always "{demo["most_common_place"]}" {percent(scores["most common place"]["exact_match"])}')
    return f"(test: {total} held-out people): {', '.join(shown)}"


def cs224n_cut_epochs(results: dict) -> str:
    epochs = config_value("cs224n/course/pretrain_vanilla.json", "num_train_epochs")
    cut = config_value("cs224n/course-cut/pretrain_vanilla.json", "num_train_epochs")
    return f"{cut} of the course's {epochs} pretraining epochs"


def _curve(results: dict) -> tuple[list[str], dict]:
    curve = results["sentiment_label_curve"]
    return [str(n) for n in curve["budgets"]], curve["rows"]


CURVE = "sentiment_label_curve"
BY_THE_MEANS = f"by the means; {INTERVAL_PENDING.replace('interval', 'intervals')}"


def curve_comparison(results: dict, first: str, second: str, budget: str) -> dict | None:
    """The paired comparison of two curve rows at a budget (`second` "best_neural": TF-IDF's against the better
    neural row), None when the runs recorded none."""
    return results.get("comparisons", {}).get(comparison_key(CURVE, first, second, budget))


def curve_budgets(results: dict) -> str:
    budgets, rows = _curve(results)
    draws = len(next(iter(rows.values()))[budgets[0]]["per_draw"])
    return f"{int(budgets[0]):,} to {int(budgets[-1]):,} labelled reviews, {draws} draws each"


def _budget_gaps(results: dict, first: str, second: str) -> str:
    """`first` − `second` at each budget of the curve, in points: each with its paired 95 % interval in brackets and
    the budgets where it holds zero named, or the differences of the means with their intervals pending."""
    budgets, rows = _curve(results)
    shown, level, pending, found_any = [], [], False, False
    for i, n in enumerate(budgets):
        found = curve_comparison(results, first, second, n)
        if second == "best_neural":
            gap = rows[first][n]["mean"] - max(rows[key][n]["mean"] for key in rows if key != first)
        else:
            gap = rows[first][n]["mean"] - rows[second][n]["mean"]
        text = points(found["diff"] if found else gap) + (" points" if i == 0 else "")
        if found:
            text += f" [{points(found['ci95'][0])}, {points(found['ci95'][1])}]"
            level += [f"{int(n):,}"] if holds_zero(found["ci95"]) else []
        pending |= found is None
        found_any |= found is not None
        shown.append(f"{text} at {int(n):,}")
    notes = []
    if found_any:
        notes.append("95 % paired intervals in brackets")
    if level:
        notes.append(f"no measurable difference at {', '.join(level)}")
    if pending:
        notes.append("differences of the means; intervals pending a rerun")
    return f"{', '.join(shown[:-1])} and {shown[-1]} labels ({'; '.join(notes)})"


def curve_gaps(results: dict) -> str:
    """Pretrained − scratch LP-FT at each budget (validation), in points, with their paired intervals."""
    return _budget_gaps(results, "pretrained_lp_ft", "scratch_lp_ft")


def curve_tfidf_gaps(results: dict) -> str:
    """TF-IDF − the better neural row at each budget (validation), in points, with their paired intervals."""
    return _budget_gaps(results, "tfidf", "best_neural")


def _leads(results: dict, first: str, second: str, n: str) -> tuple[bool, bool]:
    """Whether `first` leads `second` at budget `n`, and whether that rests on an interval (above zero) rather than
    the means alone (no comparison recorded)."""
    found = curve_comparison(results, first, second, n)
    if found is not None:
        return found["ci95"][0] > 0, True
    _, rows = _curve(results)
    if second == "best_neural":
        return rows[first][n]["mean"] > max(rows[key][n]["mean"] for key in rows if key != first), False
    return rows[first][n]["mean"] > rows[second][n]["mean"], False


def curve_probe_lead(results: dict) -> str:
    """The budgets, from the smallest, at which the frozen backbone's probe leads scratch LP-FT: measurably (its
    paired interval above zero), or by the means while the intervals are pending."""
    budgets, _ = _curve(results)
    leading, measured = 0, []
    for n in budgets:
        lead, by_interval = _leads(results, "frozen_linear_probe", "scratch_lp_ft", n)
        measured.append(by_interval)
        if not lead:
            break
        leading = int(n)
    shown = f"up to {leading:,} labels" if leading else "at no budget"
    return shown if all(measured) else f"{shown} ({BY_THE_MEANS})"


def curve_tfidf_lead(results: dict) -> str:
    """The smallest budget from which TF-IDF leads every neural row at every larger budget: measurably (its paired
    interval against the better neural row above zero), or by the means while the intervals are pending."""
    budgets, _ = _curve(results)
    lead_from, measured = None, []
    for n in reversed(budgets):
        lead, by_interval = _leads(results, "tfidf", "best_neural", n)
        measured.append(by_interval)
        if not lead:
            break
        lead_from = int(n)
    shown = f"from {lead_from:,} labels on" if lead_from else "at no budget"
    return shown if all(measured) else f"{shown} ({BY_THE_MEANS})"


def compare(results: dict, section: str, first: str, second: str) -> str:
    """`<!-- generated: compare SECTION FIRST SECOND -->`: FIRST − SECOND of a section's rows, in points, with what
    its paired 95 % interval says (`report.difference_text`), or its interval pending when none is recorded."""
    rows = results[section]
    found = results.get("comparisons", {}).get(comparison_key(section, first, second))
    return difference_text(found, rows[first]["value"] - rows[second]["value"])


def best_neural_test(results: dict) -> str:
    """The best test accuracy of a neural row, over every profile scored."""
    profiles = results["sentiment_test_acc"]["profiles"]
    return percent(max(value for rows in profiles.values() for value in rows.values()))


def whole_run_time(results: dict, profile: str, pipeline: str) -> str:
    """`<!-- generated: whole-run PROFILE PIPELINE -->`: the recorded whole run's wall time."""
    shown = whole_run(results, profile, pipeline)
    if not shown:
        raise KeyError(f"no whole run of the {profile} profile with the {pipeline} pipeline in results.json")
    return shown.strip(" ()")


def gap(results: dict, first: str, second: str) -> str:
    """`<!-- generated: gap PATH PATH -->`: how far apart two accuracies of results.json are, in points."""
    return f"{abs(100 * (resolve(results, first) - resolve(results, second))):.1f}"


def cs224n_bar(results: dict, key: str) -> str:
    """`<!-- generated: cs224n-bar KEY -->`: the course's bar for a row of course_table.CS224N."""
    return next(course_bar(reported) for _, reported, row in course_numbers()["CS224N"] if row == key)


def lab_reported(results: dict) -> str:
    """The lab's validation accuracies after its first and last epoch, as course_table.ALTEGRAD holds them."""
    lab = {key: (first, end) for key, _, first, end in course_numbers()["ALTEGRAD"]}
    scratch, pretrained = lab["scratch"], lab["pretrained"]
    return (
        f"from scratch {scratch[0]} after the first epoch and {scratch[1]} at the end, "
        f"pretrained {pretrained[0]} and {pretrained[1]}"
    )


def interval_note(results: dict) -> str:
    """What the brackets of the course tables are, and why the test accuracies have none."""
    return (
        "Each of our dev and validation numbers is followed by its 95 % interval in brackets (over the questions or "
        "reviews scored, and the finetuning seeds) where its runs recorded one; the test accuracies are scored "
        "outside the project, the test labels held back, and have none."
    )


PARTS: dict[str, Callable[..., str]] = {
    "interval-note": interval_note,
    "cs224n-bar": cs224n_bar,
    "lab-reported": lab_reported,
    "gap": gap,
    "whole-run": whole_run_time,
    "best-neural-test": best_neural_test,
    "cs224n-table": cs224n_table,
    "altegrad-table": altegrad_table,
    "demo-scores": demo_scores,
    "cs224n-cut-epochs": cs224n_cut_epochs,
    "curve-budgets": curve_budgets,
    "curve-gaps": curve_gaps,
    "curve-probe-lead": curve_probe_lead,
    "curve-tfidf-lead": curve_tfidf_lead,
    "curve-tfidf-gaps": curve_tfidf_gaps,
    "compare": compare,
}
