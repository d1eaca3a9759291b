"""The documents' generated parts (docs/generate.py, `make docs` / `make docs-check`): each number comes from
benchmarks/results.json, the mutant table from the mutation list, and the check fails when any of them is stale,
when a number is typed by hand, when a link, an anchor or a git ref does not resolve, and when a build comment names
a file that is gone. The Makefile's torch line asks for the CPU build where no GPU is found."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if not all((REPO_ROOT / name).is_file() for name in ("README.md", "BENCHMARKS.md", "TESTING.md", "Makefile")):
    pytest.skip("the documents are not in this tree (a partial copy, as a mutation run's)", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("docs_generate", REPO_ROOT / "docs" / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)
links = sys.modules["links"]  # docs/links.py, imported by generate.py beside it
results_text = sys.modules["results_text"]

RESULTS = json.loads((REPO_ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
LEVERS = generate.read_levers(REPO_ROOT / "benchmarks" / "levers.json")


def _changed(path: str, value: object) -> dict:
    """A copy of the results with the value at `path` replaced."""
    results = copy.deepcopy(RESULTS)
    *parents, last = path.split(".")
    target = results
    for key in parents:
        target = target[key]
    target[last] = value
    return results


def _stale(results: dict) -> set[str]:
    return {
        str(path.relative_to(REPO_ROOT))
        for path, text in generate.expected(results, LEVERS).items()
        if path.read_text(encoding="utf-8") != text
    }


def test_the_committed_documents_are_current_and_every_link_resolves() -> None:
    assert generate.problems(RESULTS, LEVERS) == []


@pytest.mark.parametrize(
    ("path", "value", "shown", "stale"),
    [
        ("birthplace_dev_acc.vanilla_recite.value", 0.123, "| 12.3 % (dev; interval not recorded) |", {"README.md"}),
        ("birthplace_dev_acc_course_cut.vanilla_nopretrain.value", 0.031, "3.1 %", {"README.md"}),
        ("sentiment_test_acc.profiles.gpu.frozen", 0.5, "50.0 % (test)", {"README.md", "BENCHMARKS.md"}),
        ("sentiment_test_acc.tfidf_logistic_regression.train", 0.5, "50.0 %", {"docs/glossary.md", "BENCHMARKS.md"}),
        ("demo.scores.without pretraining.exact_match", 0.25, "no pretraining 25.0 %", {"README.md", "BENCHMARKS.md"}),
        ("demo.wall_time_s", 1800, "-->30 min<!-- end --> on 2 CPU cores", {"README.md", "BENCHMARKS.md"}),
        ("sentiment_valid_acc_lm_draws.rows.lm_seed_44.value", 0.7, "-->70.00 %<!-- end -->", {"docs/courses.md"}),
        ("course_step_times_cpu.seconds_per_step.lab_lm", 12.5, "-->12.5 s<!-- end -->", {"docs/courses.md"}),
        (
            "birthplace_dev_acc_course_cut.synthesizer_finetuned.pretrain_final_loss",
            3.0,
            "-->3.00<!-- end -->",
            {"docs/courses.md"},
        ),
    ],
)
def test_one_changed_result_makes_its_documents_stale(path: str, value: object, shown: str, stale: set[str]) -> None:
    results = _changed(path, value)

    assert stale <= _stale(results)
    documents = "".join(generate.expected(results, LEVERS)[REPO_ROOT / name] for name in stale)
    assert shown in documents


def test_the_check_fails_on_a_changed_copy_of_results_json(tmp_path: Path) -> None:
    changed = tmp_path / "results.json"
    changed.write_text(json.dumps(_changed("birthplace_dev_acc_gpu.london.value", 0.061)), encoding="utf-8")
    command = [sys.executable, str(REPO_ROOT / "docs" / "generate.py"), "--check"]

    same = subprocess.run(command, capture_output=True, text=True)
    stale = subprocess.run([*command, "--results", str(changed)], capture_output=True, text=True)

    assert same.returncode == 0, same.stderr
    assert stale.returncode == 1
    assert "docs-check: README.md is stale: run `make docs`" in stale.stderr.splitlines()
    assert "docs-check: BENCHMARKS.md is stale: run `make docs`" in stale.stderr.splitlines()


def test_a_whole_run_time_is_shown_only_when_recorded() -> None:
    command = "make cs224n PROFILE=cpu"
    recorded = _changed("whole_runs", {command: {"profile": "cpu", "pipelines": ["birthplace"], "wall_time_s": 3420}})

    assert "`make cs224n PROFILE=cpu` (57 min) or `PROFILE=gpu` |" in results_text.cs224n_table(recorded)
    assert "`make cs224n PROFILE=cpu` or `PROFILE=gpu` |" in results_text.cs224n_table(_changed("whole_runs", {}))
    assert "`PROFILE=course-cut` (18 of the 650 epochs)" in results_text.cs224n_table(_changed("whole_runs", {}))


def test_the_label_curve_phrases_follow_the_curve() -> None:
    results = copy.deepcopy(RESULTS)
    rows = results["sentiment_label_curve"]["rows"]
    rows["frozen_linear_probe"]["100"]["mean"] = rows["scratch_lp_ft"]["100"]["mean"]  # a tie is not a lead
    rows["tfidf"]["800"]["mean"] = 0.0

    pending = " (by the means; intervals pending a rerun)"  # the committed curve's runs recorded no intervals
    assert results_text.curve_probe_lead(results) == "up to 50 labels" + pending
    assert results_text.curve_tfidf_lead(results) == "from 1,600 labels on" + pending
    gaps = results_text.curve_gaps(results)
    assert gaps.startswith("+4.6 points at 24, +5.8 at 50")
    assert gaps.endswith(" and +2.2 at 1,600 labels (differences of the means; intervals pending a rerun)")


def _with_comparisons(results: dict, low: float = 0.01, high: float = 0.05) -> dict:
    """`results` with a paired comparison, of interval [low, high], for every pair the documents compare."""
    results = copy.deepcopy(results)
    found = results.setdefault("comparisons", {})
    for first, second, section in [
        ("pretrained_lp_ft", "scratch_lp_ft", "sentiment_valid_acc"),
        ("pretrained", "scratch", "sentiment_valid_acc_course_cut"),
    ]:
        rows = results[section]
        diff = round(rows[first]["value"] - rows[second]["value"], 4)
        entry = {"section": section, "first": first, "second": second, "diff": diff, "ci95": [low, high]}
        found[f"{section}/{first}-vs-{second}"] = {**entry, "split": "validation", "n": 400, "method": "paired"}
    for budget in results["sentiment_label_curve"]["budgets"]:
        for first, second in [
            ("pretrained_lp_ft", "scratch_lp_ft"),
            ("frozen_linear_probe", "scratch_lp_ft"),
            ("tfidf", "best_neural"),
        ]:
            entry = {"section": "sentiment_label_curve", "first": first, "second": second, "budget": budget}
            entry |= {"split": "validation", "diff": 0.03, "ci95": [low, high], "n": 400, "method": "paired"}
            found[f"sentiment_label_curve/{first}-vs-{second}/n{budget}"] = entry
    return results


def test_a_comparison_sentence_says_no_measurable_difference_when_its_interval_holds_zero() -> None:
    """The sentences that compare two rows come from `comparisons`: an interval above zero is a difference, one that
    holds zero is said to be none, and without a comparison the interval is said to be pending."""
    measured = _with_comparisons(RESULTS)
    key = "sentiment_valid_acc/pretrained_lp_ft-vs-scratch_lp_ft"
    text = results_text.compare(measured, "sentiment_valid_acc", "pretrained_lp_ft", "scratch_lp_ft")
    assert text == "+1.9 points (95 % interval +1.0 to +5.0)"

    level = copy.deepcopy(measured)
    level["comparisons"][key]["ci95"] = [-0.004, 0.042]
    text = results_text.compare(level, "sentiment_valid_acc", "pretrained_lp_ft", "scratch_lp_ft")
    assert text == "+1.9 points, no measurable difference (95 % interval −0.4 to +4.2)"
    assert "docs/courses.md" in _stale(level)  # the document's sentence changes with it
    assert "no measurable difference" in generate.expected(level, LEVERS)[REPO_ROOT / "docs" / "courses.md"]

    pending = results_text.compare(RESULTS, "sentiment_valid_acc", "pretrained_lp_ft", "scratch_lp_ft")
    assert pending == "+1.9 points (interval pending a rerun)"


def test_the_label_curve_phrases_follow_the_intervals() -> None:
    """With the curve's comparisons recorded: each gap with its interval, the budgets whose interval holds zero
    named, and a lead only where the interval is above zero."""
    measured = _with_comparisons(RESULTS)
    assert results_text.curve_probe_lead(measured) == "up to 1,600 labels"
    assert results_text.curve_tfidf_lead(measured) == "from 24 labels on"
    assert results_text.curve_gaps(measured).endswith(
        "[+1.0, +5.0] at 1,600 labels (95 % paired intervals in brackets)"
    )

    measured["comparisons"]["sentiment_label_curve/frozen_linear_probe-vs-scratch_lp_ft/n100"]["ci95"] = [-0.01, 0.05]
    measured["comparisons"]["sentiment_label_curve/pretrained_lp_ft-vs-scratch_lp_ft/n800"]["ci95"] = [-0.01, 0.05]
    measured["comparisons"]["sentiment_label_curve/tfidf-vs-best_neural/n24"]["ci95"] = [-0.01, 0.05]
    assert results_text.curve_probe_lead(measured) == "up to 50 labels"
    assert results_text.curve_tfidf_lead(measured) == "from 50 labels on"
    assert results_text.curve_gaps(measured).endswith(
        "(95 % paired intervals in brackets; no measurable difference at 800)"
    )
    assert "no measurable difference at 800" in generate.expected(measured, LEVERS)[REPO_ROOT / "README.md"]


def test_the_mutant_table_is_the_mutation_list(monkeypatch: pytest.MonkeyPatch) -> None:
    mutants = generate.mutants()
    table = generate.mutant_table({}).splitlines()

    assert len(table) == 2 + len(mutants)
    assert all(f"| `{mutant.name}` |" in row for mutant, row in zip(mutants, table[2:], strict=True))
    monkeypatch.setattr(generate, "mutants", lambda: mutants[:-1])
    assert "TESTING.md" in _stale(RESULTS)


def test_marks_are_filled_inline_or_as_blocks_and_an_unknown_mark_is_an_error() -> None:
    text = (
        "a <!-- value: demo.wall_time_s | minutes -->?<!-- end --> b\n"
        "<!-- generated: best-neural-test -->\nold\n<!-- end -->\n"
    )

    filled = generate.fill(text, RESULTS, "x.md")

    assert filled.startswith("a <!-- value: demo.wall_time_s | minutes -->6 min<!-- end --> b\n")
    assert filled.endswith("<!-- generated: best-neural-test -->\n\n80.1 %\n\n<!-- end -->\n")
    with pytest.raises(SystemExit, match="error: x.md: the mark .* names nothing known"):
        generate.fill("<!-- value: demo.no_such_key | percent -->1<!-- end -->", RESULTS, "x.md")
    with pytest.raises(SystemExit, match="error: x.md"):
        generate.fill("<!-- generated: no-such-part -->1<!-- end -->", RESULTS, "x.md")


def test_a_key_may_hold_dots() -> None:
    data = {"whole_runs": {"python benchmarks/grid.py show": {"wall_time_s": 5}}}

    assert generate.resolve(data, "whole_runs.python benchmarks/grid.py show.wall_time_s") == 5


def test_a_notebook_is_rewritten_only_when_a_marked_cell_changes() -> None:
    cell = {
        "cell_type": "markdown",
        "metadata": {},
        "source": ["Pretrained: <!-- value: demo.wall_time_s | minutes -->"],
    }
    cell["source"].append("?<!-- end -->\n")
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=2)

    filled = json.loads(generate.fill_notebook(text, RESULTS, "n.ipynb"))

    assert "".join(filled["cells"][0]["source"]).endswith("-->6 min<!-- end -->\n")
    unmarked = json.dumps({**notebook, "cells": [{**cell, "source": ["75.2 %"]}]}, indent=2)
    assert generate.fill_notebook(unmarked, RESULTS, "n.ipynb") == unmarked


def test_a_number_typed_outside_the_marks_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "REPO_ROOT", tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(
        "ours <!-- value: a | percent -->75.2 %<!-- end --> (dev), in 57 min\n"
        "`Correct: X out of 500: 4.0%` and\n```bash\nmake test  # 10 min\n```\nthe lab: 78 % (validation)\n",
        encoding="utf-8",
    )

    found = generate.typed_numbers(readme)

    assert found == [
        "README.md:1: `57 min` typed by hand (generate it from results.json)",
        "README.md:4: `78 %` typed by hand (generate it from results.json)",
    ]


def test_only_the_documents_rendered_whole_may_hold_numbers_outside_marks() -> None:
    rendered = generate.expected(RESULTS, LEVERS)
    markless = {path for path in rendered if "<!-- " not in rendered[path]}

    assert set(generate.GENERATED_WHOLE) == {REPO_ROOT / "BENCHMARKS.md", REPO_ROOT / "docs" / "levers.md"}
    assert set(generate.GENERATED_WHOLE) <= markless
    # the typed-number check reads docs/courses.md like any other hand-written document
    assert generate.typed_numbers(REPO_ROOT / "docs" / "courses.md") == []
    assert generate.typed_numbers(REPO_ROOT / "docs" / "levers.md") != []


def test_a_number_typed_in_a_notebooks_text_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "REPO_ROOT", tmp_path)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["The full run: 75.2 % of dev,\n", "about 55 minutes."]},
        {"cell_type": "code", "metadata": {}, "source": ["print('40 %')"], "outputs": [], "execution_count": None},
    ]
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))

    found = [line.split(": ")[1].split(" (")[0] for line in generate.typed_numbers(notebook)]

    assert found == ["`75.2 %` typed by hand", "`55 minutes` typed by hand"]


def test_github_heading_slugs() -> None:
    markdown = "# Your course ↔ this project\n## `make demo` (synthetic)\n## run_all.sh\n## Notes\n## Notes\n"
    markdown += "```\n# not a heading\n```\n"

    assert links.anchors(markdown) == {
        "your-course--this-project",
        "make-demo-synthetic",
        "run_allsh",
        "notes",
        "notes-1",
    }


def test_broken_links_and_anchors_are_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Reproduce\n## Levers tried\n", encoding="utf-8")
    doc = tmp_path / "docs" / "a.md"
    doc.write_text(
        "[ok](../README.md#levers-tried) [self](#local) [web](https://x.org/#y) [gone](../NOPE.md)\n"
        "[bad anchor](../README.md#reproduce-the-courses) `[code](nope.md)`\n```\n[block](nope.md)\n```\n## Local\n",
        encoding="utf-8",
    )

    assert links.broken_links([doc], tmp_path) == [
        "docs/a.md: (../NOPE.md): ../NOPE.md does not exist",
        "docs/a.md: (../README.md#reproduce-the-courses): no heading #reproduce-the-courses in README.md",
    ]


def test_git_refs_the_documents_name_must_exist(tmp_path: Path) -> None:
    head = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    if head.returncode:
        pytest.skip("not a git checkout")
    doc = tmp_path / "doc.md"
    doc.write_text(
        f"kept by the commit `{head.stdout.strip()}`: `git show {head.stdout.strip()}:BENCHMARKS.md`;\n"
        "the git tag `no-such-tag-here`, `git checkout lab-levers-gone`, commit 0badc0ffee1\n",
        encoding="utf-8",
    )

    problems = links.missing_git_refs([doc], REPO_ROOT)

    assert [problem.split("'")[1] for problem in problems] == ["0badc0ffee1", "lab-levers-gone", "no-such-tag-here"]


def test_a_build_comment_naming_a_file_that_is_gone_is_found(tmp_path: Path) -> None:
    (tmp_path / "hf_models").mkdir()
    (tmp_path / "hf_models" / "kept.py").write_text("", encoding="utf-8")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '# reads it (hf_models/kept.py)\n"protobuf",  # hf_models/course_tokenizers.py\nname = "hf_models/x.py"\n',
        encoding="utf-8",
    )

    assert links.missing_named_files([pyproject], tmp_path) == [
        "pyproject.toml: names hf_models/course_tokenizers.py, which does not exist"
    ]


def _make_dry_run(target: str, path: str, *variables: str) -> str:
    env = dict(os.environ, PATH=path)
    done = subprocess.run(
        ["make", "-n", "-B", target, *variables], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_asks_for_the_cpu_torch_build_only_without_a_gpu(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    nvidia_smi = fake / "nvidia-smi"
    nvidia_smi.write_text("#!/bin/sh\n", encoding="utf-8")
    nvidia_smi.chmod(nvidia_smi.stat().st_mode | stat.S_IEXEC)
    plain = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "nvidia-smi").exists())

    torch_line = [line for line in _make_dry_run("install", plain).splitlines() if "torch==" in line]
    gpu_line = [
        line for line in _make_dry_run("install", f"{fake}{os.pathsep}{plain}").splitlines() if "torch" in line
    ]
    none_line = [line for line in _make_dry_run("install", plain, "TORCH_INDEX_URL=").splitlines() if "torch" in line]

    assert torch_line[0].endswith("torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu")
    assert gpu_line[0].endswith("torch==2.13.0 ") or gpu_line[0].endswith("torch==2.13.0")
    assert none_line == gpu_line
    assert "docs/generate.py --check" in _make_dry_run("test", plain)


def test_a_levers_effect_comes_from_levers_json() -> None:
    levers = copy.deepcopy(LEVERS)
    recite = next(lever for lever in levers if "`--recite_tokens 40`" in lever["lever"])
    recite["effect"] = "+1.0 point"

    assert "docs/courses.md" in {
        str(path.relative_to(REPO_ROOT))
        for path, text in generate.expected(RESULTS, levers).items()
        if path.read_text(encoding="utf-8") != text
    }
    filled = generate.fill("<!-- generated: lever --recite_tokens 40 -->x<!-- end -->", RESULTS, "x.md", levers)
    assert filled == "<!-- generated: lever --recite_tokens 40 -->+1.0 point (dev)<!-- end -->"
    with pytest.raises(SystemExit, match="levers named with '--augment'"):
        generate.fill("<!-- generated: lever --augment -->x<!-- end -->", RESULTS, "x.md", levers)


def test_a_gap_between_two_results_in_points() -> None:
    results = _changed("sentiment_test_acc.profiles.cpu.scratch_lp_ft", 0.7)
    mark = "<!-- generated: gap sentiment_test_acc.profiles.cpu.pretrained_lp_ft sentiment_test_acc.profiles.cpu.scratch_lp_ft -->"

    assert generate.fill(f"{mark}x<!-- end -->", results, "x.md") == f"{mark}7.3<!-- end -->"
