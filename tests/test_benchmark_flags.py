"""The benchmark scripts' flags reach what they control (test_flag_plumbing.py's pattern, for the scripts under
benchmarks/): each flag set to a value that is not its default, and its effect checked where it lands (the models
measured, the file written or left alone, the draw trained on, the recitation, the figure, the table). The counts
each script reports beside its figures are checked with them."""

from __future__ import annotations

import json

import course_table
import plot_birthplace
import plot_sentiment
import pytest
import tfidf_baseline
import throughput
from test_course_table import _course_bench
from test_write_results import _bench

from hf_models.data import balanced_subset
from hf_models.run_record import read_record
from hf_models.textio import UsageError

SHAPE = ["--preset", "base", "--config_overrides", "num_hidden_layers=1,hidden_size=64,num_attention_heads=4"]
TINY = [*SHAPE, "--vocab_size", "300", "--seq_len", "16", "--batch_size", "2", "--threads", "1"]


# --- benchmarks/throughput.py ---------------------------------------------------------------------------------------
def test_throughput_shape_flags_reach_every_contender() -> None:
    args = throughput.parse_args([*TINY, "--dropout", "0.25"])
    for name in throughput.BASE_CONTENDERS:
        config = throughput.build_model(name, args, args.seq_len).config
        if name == "gpt2":
            shape = (config.n_layer, config.n_embd, config.vocab_size, config.n_positions)
            dropouts = (config.embd_pdrop, config.attn_pdrop, config.resid_pdrop)
        else:
            shape = (config.num_hidden_layers, config.hidden_size, config.vocab_size, config.max_position_embeddings)
            dropouts = (config.embedding_dropout, config.attention_dropout, config.hidden_dropout)
            assert config._attn_implementation == ("eager" if name == "ours_eager" else "sdpa")
        assert shape == (1, 64, 300, 16), name
        assert dropouts == (0.25, 0.25, 0.25), name


def test_throughput_writes_results_json_only_when_asked(tmp_path) -> None:
    results = tmp_path / "results.json"
    results.write_text('{"kept": 1}\n')
    measured = [*TINY, "--steps", "1", "--warmup_steps", "0", "--repeats", "1", "--skip", "memory"]
    measured += ["--new_tokens", "2", "--generation_repeats", "1", "--results_json", str(results)]
    throughput.main([*measured, "--no_results_json"])
    assert results.read_text() == '{"kept": 1}\n'
    throughput.main(measured)
    written = json.loads(results.read_text())
    assert written["kept"] == 1 and written["throughput_base"]["batch_size"] == 2
    assert written["throughput_base"]["seq_len"] == 16


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--repeats", "0"), ("--steps", "0"), ("--new_tokens", "0"), ("--generation_repeats", "0"), ("--dropout", "1")],
)
def test_throughput_refuses_a_value_that_measures_nothing(flag: str, value: str) -> None:
    with pytest.raises(UsageError, match=f"^{flag} {value}: give"):
        throughput.parse_args([*TINY, flag, value])
    throughput.parse_args([*TINY, flag, "0.5" if flag == "--dropout" else "1"])  # just past the boundary


# --- benchmarks/tfidf_baseline.py -----------------------------------------------------------------------------------
def test_tfidf_budget_and_seed_reach_the_draw_and_the_fit(tmp_path, monkeypatch, write_toy_cls_books) -> None:
    data = write_toy_cls_books(tmp_path / "cls-books")
    draws = []

    def spy(labels, size, seed):
        draws.append((size, seed))
        return balanced_subset(labels, size, seed)

    monkeypatch.setattr(tfidf_baseline, "balanced_subset", spy)
    fits = []  # the number of reviews each fit learns from
    classifier = tfidf_baseline.tfidf_classifier

    def counted_classifier():
        pipeline = classifier()
        fit = pipeline.fit
        pipeline.fit = lambda texts, labels: (fits.append(len(texts)), fit(texts, labels))[1]
        return pipeline

    monkeypatch.setattr(tfidf_baseline, "tfidf_classifier", counted_classifier)
    out = tmp_path / "budget"
    assert (
        tfidf_baseline.main(["--data_dir", str(data), "--output_dir", str(out), "--label_budget", "24", "--seed", "3"])
        == 0
    )
    assert draws == [(24, 3)]
    report = json.loads((out / "report.json").read_text())
    assert (report["label_budget"], report["seed"], report["train_samples"]) == (24, 3, 24)

    # The test predictions are the budget's own fit: no refit on the validation reviews.
    assert fits == [24]
    assert len((out / "test_predictions.txt").read_text().splitlines()) == 10  # the test reviews
    # each validation review scored by the budget's fit, in order, agreeing with its accuracy
    examples = [json.loads(line) for line in (out / "examples_validation.jsonl").read_text().splitlines()]
    assert [e["index"] for e in examples] == list(range(len(examples))) and examples
    right = sum(e["prediction"] == e["reference"] for e in examples)
    assert right / len(examples) == pytest.approx(report["eval_accuracy"])

    # Without a budget: every training review, then a refit on train + validation for the test predictions.
    fits.clear()
    out = tmp_path / "all"
    tfidf_baseline.main(["--data_dir", str(data), "--output_dir", str(out)])
    assert json.loads((out / "report.json").read_text())["train_samples"] == 48
    assert fits == [48, 48 + 16]

    # --overwrite_output_dir: refused without it, the earlier report kept; replaced with it.
    earlier = (out / "report.json").read_text()
    with pytest.raises(UsageError):
        tfidf_baseline.main(["--data_dir", str(data), "--output_dir", str(out), "--label_budget", "24"])
    assert (out / "report.json").read_text() == earlier
    tfidf_baseline.main(
        ["--data_dir", str(data), "--output_dir", str(out), "--label_budget", "24", "--overwrite_output_dir"]
    )
    assert json.loads((out / "report.json").read_text())["train_samples"] == 24


# --- benchmarks/plot_birthplace.py ----------------------------------------------------------------------------------
def _titles(monkeypatch) -> list[str]:
    titles = []
    subplots = plot_birthplace.plt.subplots

    def kept(*args, **kwargs):
        fig, ax = subplots(*args, **kwargs)
        original = ax.set_title
        ax.set_title = lambda text, **kw: (titles.append(text), original(text, **kw))[1]
        return fig, ax

    monkeypatch.setattr(plot_birthplace.plt, "subplots", kept)
    return titles


def test_the_birthplace_figure_takes_its_title_and_counts_the_questions_scored(tmp_path, monkeypatch) -> None:
    bench = tmp_path / "bench"
    _bench(bench)
    titles = _titles(monkeypatch)
    plot_birthplace.main(["--bench_dir", str(bench), "--output", str(tmp_path / "a.png"), "--title", "My title"])
    assert titles == ["My title"] and (tmp_path / "a.png").read_bytes().startswith(b"\x89PNG")

    # The default title counts the questions of the scores drawn: one row scored on 50 of them says so.
    folder = bench / "birthplace/vanilla_recite_pretrain"
    record = read_record(folder)
    record.scored("validation").num_examples = 50
    record.save(folder)
    plot_birthplace.main(["--bench_dir", str(bench), "--output", str(tmp_path / "b.png")])
    assert titles[-1] == "Birthplace dev accuracy (50/500 questions)"


# --- benchmarks/plot_sentiment.py ----------------------------------------------------------------------------------
def test_the_sentiment_figure_draws_the_profiles_rows_or_the_runs_given_under_its_title(tmp_path, monkeypatch) -> None:
    bench = tmp_path / "bench"
    _bench(bench, "course-cut")
    drawn = []
    monkeypatch.setattr(plot_sentiment, "plot_runs", lambda runs, output, title: drawn.append((runs, title)))
    common = ["--bench_dir", str(bench), "--output", str(tmp_path / "a.png")]

    plot_sentiment.main([*common, "--profile", "course-cut", "--title", "My title"])
    runs, title = drawn[-1]
    assert title == "My title"
    rows = plot_sentiment.grid.load("course-cut").rows["sentiment"]
    assert runs == {row.label: [bench / run for run in row.runs] for row in rows}
    assert all(len(row.runs) > 1 for row in rows)  # every seed of every row

    plot_sentiment.main([*common, "--runs", f"a={bench}/x,{bench}/y", f"b={bench}/z"])
    default_title = "CLS-FR books, validation (cpu profile, mean ± std of seeds)"
    assert drawn[-1] == ({"a": [f"{bench}/x", f"{bench}/y"], "b": [f"{bench}/z"]}, default_title)
    with pytest.raises(SystemExit):
        plot_sentiment.main([*common, "--profile", "no-such-profile"])  # a choice, not a KeyError in the plan


# --- benchmarks/course_table.py -------------------------------------------------------------------------------------
def test_the_course_table_flags_reach_the_table_and_its_file(tmp_path, capsys) -> None:
    bench = tmp_path / "bench"
    _course_bench(bench)
    output = tmp_path / "tables" / "cs224n.md"
    course_table.main(["cs224n", "--bench_dir", str(bench), "--profile", "course-cut", "--output", str(output)])
    printed = capsys.readouterr().out
    assert output.read_text(encoding="utf-8") == printed
    assert printed.startswith("## CS224N a5, birthplace: dev accuracy (500 questions), profile course-cut")
    assert "| vanilla, pretrained, then finetuned | ≥ 10 % (the bar) | 14.4 % | vanilla_finetuned |" in printed

    course_table.main(["altegrad", "--bench_dir", str(bench), "--profile", "course-cut"])
    lab = capsys.readouterr().out
    assert lab.startswith("## ALTeGraD lab, CLS-FR books: validation accuracy (400 reviews), profile course-cut")
    assert "| from scratch | 65 % | 61.00 % | 78 % | 78.00 % ± 1.41 | 2 |" in lab


def test_the_course_table_counts_the_questions_its_rows_were_scored_on(tmp_path) -> None:
    bench = tmp_path / "bench"
    _course_bench(bench)
    folder = bench / "birthplace/vanilla_finetune"
    record = read_record(folder)
    record.scored("validation").num_examples = 50
    record.save(folder)
    header = course_table.cs224n_table("course-cut", bench).splitlines()[0]
    assert header == "## CS224N a5, birthplace: dev accuracy (50/500 questions), profile course-cut"
    assert course_table.cs224n_table("course-cut", tmp_path / "empty").splitlines()[0] == (
        "## CS224N a5, birthplace: dev accuracy, profile course-cut"
    )
