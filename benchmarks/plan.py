#!/usr/bin/env python
"""The benchmark plan: every run of every profile, in one table; the hyperparameters are the profile's config files.

    python benchmarks/plan.py show --profile cpu                # the steps and their commands
    python benchmarks/plan.py run --profile cpu                 # what `make bench` (benchmarks/run_all.sh) does
    python benchmarks/plan.py run --profile gpu --pipeline birthplace
    python benchmarks/plan.py run --profile course-cut --course cs224n   # `make cs224n PROFILE=course-cut`
    python benchmarks/plan.py run --profile cpu --pipeline sentiment --resume   # after an interruption
    python benchmarks/plan.py run --profile cpu --pipeline sentiment --resume --rerun 'se_*lp_ft*'  # code changed

Each recipe step reads an arguments file of `configs/<course>/<profile>/`
(`configs/cs224n/cpu/pretrain_vanilla_recite.json`, `configs/altegrad/gpu/lm.json`, ...): the hyperparameters are there
and nowhere else; the plan adds only paths and the step's identity (its seed, split and output folder). Profiles
`cpu` and `gpu` are the benchmark's; `gpu_large` the GPU profile's sentiment with a model of the lab's size; `course`
and `course-cut` the courses' own settings (docs/courses.md), with pipelines of their own (`COURSE_PIPELINES`).
`--course cs224n|altegrad` runs one course's pipelines, whose last step (`benchmarks/course_table.py`) writes the
course's reported numbers beside ours; `run` prints it at the end.

`run` executes the pipelines (birthplace; sentiment, the LP-FT rows; sentiment_lab, the lab's rows, which reads
sentiment's tokenizer and backbone: one after the other on the CPU, each on both cores; on a GPU machine birthplace
beside the two sentiment ones, and sentiment_lab from the end of sentiment's review stage on), then `write_results.py`,
then `throughput.py` (a whole run of a benchmark profile only). Within a pipeline, the steps of a group that the
profile runs side by side (`Profile.side_by_side`) share the machine: on the CPU two at a time, one core each
(`benchmarks/step_runner.py` runs them; each step's log is `$OUT/log_NAME.txt`, and `$OUT/timings.tsv` has a line for
each step that succeeded: a step that failed is not there, so `write_results.py` refuses its row). A run of one
pipeline replaces that pipeline's lines and keeps the other's.
At its end `run` writes `$OUT/run_time.json`: its command line and its whole wall time (steps run side by side, so
it is less than the sum of the rows' step times), which `write_results.py` records as the run's time.
`run --resume` continues an interrupted run into the same OUT: a timed step whose timings.tsv line has the same command
and config files is kept, not run again. The check compares commands and config files, not code: after a change to
the code a step runs, name the step in `--rerun` (shell patterns). `write_results.py`, `plot_birthplace.py`,
`plot_sentiment.py` and `course_table.py` read the rows below (`birthplace_rows`, `sentiment_rows`,
`tune_split_choice`): no step or folder name is typed anywhere else.

Data come from DATA_ROOT (default ../shared/data), outputs go under OUT (default outputs/bench), and the steps run
with PY (default .venv/bin/python).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import label_curve
from step_runner import (
    REPO_ROOT,
    Step,
    finished_steps,
    forget_timings,
    option_value,
    run_pipeline,
    step_environment,
    write_run_time,
)

CPU_THREADS = 2  # the CPU profile's machine: 2 cores


@dataclass(frozen=True)
class BirthplaceProfile:
    configs: str  # the folder of the profile's arguments files for recipes/birthplace.py (configs/cs224n/...)
    # The pretrained models the profile runs (of BIRTHPLACE_MODELS), in order: the first one is the headline.
    models: tuple[str, ...] = ("vanilla_recite", "synthesizer_recite", "vanilla_span_corruption")


@dataclass(frozen=True)
class SentimentProfile:
    configs: str  # the folder of the profile's arguments files (configs/altegrad/...)
    seeds: tuple[int, ...] = (42, 43, 44)


@dataclass(frozen=True)
class Profile:
    name: str
    on_gpu: bool  # the profile's machine: one GPU (every pipeline beside the others), or 2 CPU cores
    # Of the profile's figures and results.json sections, which sit beside the CPU profile's (*_gpu.png, *_gpu)
    suffix: str
    throughput_args: tuple[str, ...]
    birthplace: BirthplaceProfile
    sentiment: SentimentProfile
    # Which groups of steps run side by side (`Step.group`): every group on a GPU machine; on the CPU, the groups named,
    # each step on its share of the cores (BENCHMARKS.md: two runs on one core each do more than one on both).
    side_by_side: bool | tuple[str, ...] = True
    # Where write_results.py puts the test predictions, `<predictions_dir>/sentiment/<row><row_suffix>/seed<N>.txt`.
    # A lever's profile (a row_suffix) writes its rows beside its base profile's and no headline file.
    predictions_dir: str = "benchmarks/predictions"
    row_suffix: str = ""
    # The courses' own settings (CS224N's run.py, the lab's notebook; docs/courses.md): the course's chain of steps
    # (`COURSE_PIPELINES`) instead of the benchmark's rows; `write_results.py --profile course` records them.
    course: bool = False


CPU_SIDE_BY_SIDE = ("bp_training", "bp_after_training", "bp_after_finetuning")
PROFILES = {
    # The 2-core CPU (fp32): each course's pipelines in about an hour (BENCHMARKS.md has each run).
    "cpu": Profile(
        "cpu",
        False,
        "",
        ("--threads", "1", "--generation_repeats", "2"),
        BirthplaceProfile("configs/cs224n/cpu"),
        SentimentProfile("configs/altegrad/cpu"),
        side_by_side=CPU_SIDE_BY_SIDE,
    ),
    # One GPU in bf16, both courses side by side: minutes on an H100.
    "gpu": Profile(
        "gpu",
        True,
        "_gpu",
        ("--device", "cuda", "--dtype", "bf16", "--batch_size", "64"),
        BirthplaceProfile("configs/cs224n/gpu"),
        SentimentProfile("configs/altegrad/gpu"),
        predictions_dir="benchmarks/predictions/gpu",
    ),
}
# The GPU profile's sentiment pipelines with a model of the lab's size (altegrad-large), run beside it.
PROFILES["gpu_large"] = replace(
    PROFILES["gpu"],
    name="gpu_large",
    suffix="_gpu_large",
    row_suffix="_large",
    sentiment=SentimentProfile("configs/altegrad/gpu_large"),
)
# The courses' own settings: in full for a GPU machine, and cut to fewer epochs and steps for the 2-core CPU hour.
PROFILES["course"] = Profile(
    "course",
    True,
    "_course_gpu",
    (),
    BirthplaceProfile("configs/cs224n/course", ("vanilla", "synthesizer")),
    SentimentProfile("configs/altegrad/course"),
    predictions_dir="benchmarks/predictions/course",
    course=True,
)
PROFILES["course-cut"] = replace(
    PROFILES["course"],
    name="course-cut",
    on_gpu=False,
    suffix="_course_cut",
    birthplace=replace(PROFILES["course"].birthplace, configs="configs/cs224n/course-cut"),
    sentiment=replace(PROFILES["course"].sentiment, configs="configs/altegrad/course-cut"),
    predictions_dir="benchmarks/predictions/course-cut",
    side_by_side=CPU_SIDE_BY_SIDE,
)


@dataclass(frozen=True)
class Row:
    """One row of results.json: the run folders it reads (relative to the bench folder; one per seed for
    sentiment), the steps whose wall time it counts, and the step that scores it on the tuning split."""

    key: str
    runs: tuple[str, ...]
    steps: tuple[str, ...]
    label: str
    tune_step: str | None = None


BIRTHPLACE_VARIANTS = ("vanilla", "synthesizer")
# Each variant pretrained on the paragraphs, then on the paragraphs and their augmented copies (`--augment`), then
# the same answering after a recitation (`--recite_tokens`); and the vanilla model pretrained with the course's span
# corruption. A profile runs some of them (`BirthplaceProfile.models`), each with its `pretrain_<model>.json`.
BIRTHPLACE_MODELS = (
    *((variant, f"{variant}{suffix}") for suffix in ("", "_augmented", "_recite") for variant in BIRTHPLACE_VARIANTS),
    ("vanilla", "vanilla_span_corruption"),
)
# The lab's three rows, then LP-FT: the head first fitted as a logistic regression on the frozen features
# of every layer (mean and max), alone (`frozen_linear_probe`) or then finetuned with the whole model. The LP-FT rows
# and the probe are the `sentiment` pipeline, the lab's rows the `sentiment_lab` pipeline after it. The course
# profiles run the lab's three rows alone.
SENTIMENT_SETUPS = ("scratch", "pretrained", "frozen", "frozen_linear_probe", "scratch_lp_ft", "pretrained_lp_ft")
LAB_SETUPS = SENTIMENT_SETUPS[:3]
# The frozen backbone's probe is the one the pretrained LP-FT run fits before it finetunes, kept in its run folder
# (`--save_linear_probe`): the same features, C and predictions as a run of its own, without its minute of work.
PROBE_KEPT_BY = {"frozen_linear_probe": "pretrained_lp_ft"}


def birthplace_rows(profile: str) -> tuple[Row, ...]:
    """Each pretrained model of the profile alone, and after the course's finetuning stage; London and no
    pretraining besides. A course profile has no tuning split, and scores its models after finetuning only."""
    course = PROFILES[profile].course
    rows = [
        Row("london", ("birthplace/london",), ("bp_london",), "London"),
        Row(
            "vanilla_nopretrain",
            ("birthplace/nopretrain_finetune",),
            ("bp_nopretrain_finetune", "bp_nopretrain_eval_dev"),
            "vanilla\nno pretrain",
            None if course else "bp_nopretrain_eval_tune",
        ),
    ]
    for model in PROFILES[profile].birthplace.models:
        pretrain, name = f"bp_{model}_pretrain", model.replace("_", "\n")
        if not course:
            rows.append(
                Row(
                    f"{model}_pretrain_only",
                    (f"birthplace/{model}_pretrain",),
                    (pretrain, f"{pretrain}_eval_dev"),
                    f"{name}\npretrained",
                    f"{pretrain}_eval_tune",
                )
            )
        rows.append(
            Row(
                f"{model}_finetuned",
                (f"birthplace/{model}_finetune",),
                (pretrain, f"bp_{model}_finetune", f"bp_{model}_eval_dev"),
                f"{name}\n+ finetuned",
                None if course else f"bp_{model}_eval_tune",
            )
        )
    return tuple(rows)


def tune_split_choice(profile: str) -> dict[str, tuple[str, str]]:
    """The headline rows: of the course's pretrain-then-finetune model and the pretrained model alone, the one with
    the better accuracy on the tuning split (training questions held out of both stages; ties go to the course's
    finetuned model). The dev set never takes part in the choice. Each pretrained model of the profile gets one
    (`vanilla`, `vanilla_augmented`, ...); a course profile chooses nothing."""
    if PROFILES[profile].course:
        return {}
    return {model: (f"{model}_finetuned", f"{model}_pretrain_only") for model in PROFILES[profile].birthplace.models}


def sentiment_rows(profile: str) -> tuple[Row, ...]:
    """One row per set-up, over its finetuning seeds; the pretrained ones count the LM stages too. A course profile
    has the lab's three rows, its LM and no tokenizer step (the lab's vocabulary is read from the data)."""
    seeds, course = PROFILES[profile].sentiment.seeds, PROFILES[profile].course
    scratch = () if course else ("se_tokenizer",)
    pretrained = ("se_pretrain",) if course else ("se_tokenizer", "se_pretrain", "se_domain")
    rows = []
    for setup in LAB_SETUPS if course else SENTIMENT_SETUPS:
        run, kept = PROBE_KEPT_BY.get(setup, setup), "/linear_probe" if setup in PROBE_KEPT_BY else ""
        rows.append(
            Row(
                setup,
                tuple(f"sentiment/{run}_seed{seed}{kept}" for seed in seeds),
                (scratch if setup.startswith("scratch") else pretrained)
                + tuple(f"se_{run}_seed{seed}" for seed in seeds),
                setup,
            )
        )
    return tuple(rows)


# --------------------------------------------------------------------------------------------------
# The steps: each recipe reads the profile's arguments file (configs/<course>/<profile>/<step>.json) for its
# hyperparameters; the plan gives it only paths and the step's identity (its seed, split, output folder).
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Paths:
    data_root: str
    out: str
    python: str

    @classmethod
    def from_environment(cls) -> Paths:
        env = os.environ
        return cls(
            env.get("DATA_ROOT", "../shared/data"), env.get("OUT", "outputs/bench"), env.get("PY", ".venv/bin/python")
        )


# A pipeline rerun into the same OUT replaces its own earlier runs: the recipes refuse a used output folder without
# it (README, "Safety"). The plan's own choice, never a config file's: a command typed by hand keeps its safety.
RERUN = ("--overwrite_output_dir",)


def _birthplace_folders(paths: Paths) -> tuple[str, str, str]:
    """The birthplace pipeline's run folder, the real data, and the copy of it with the tuning split."""
    return f"{paths.out}/birthplace", f"{paths.data_root}/birthplace", f"{paths.out}/data/birthplace-tune"


def _birthplace_training_data(profile: Profile, paths: Paths) -> tuple[str, ...]:
    """The data every birthplace training reads: the tuning split's copy; a course profile chooses nothing, so it
    trains on the real data."""
    _, real, tune = _birthplace_folders(paths)
    return ("--data_dir", real) if profile.course else ("--data_dir", tune)


def _kind(model: str) -> str:
    """The config file a model's finetuning shares with the models of its kind, `finetune<kind>.json` (a reciting
    model recites in its trainings; `evaluate.json` scores every model, in the format its run record names)."""
    return "_recite" if model.endswith("_recite") else "_span_corruption" if model.endswith("_span_corruption") else ""


def _evaluate_steps(name: str, model_dir: str, paths: Paths, config: str, tune: str | None) -> list[Step]:
    """Score a model on the tuning split (a course profile has none: `tune` None), the real dev set, and answer the
    test questions."""
    real = _birthplace_folders(paths)[1]
    runs = [("tune", tune, "validation", f"{model_dir}/eval_tune")] if tune else []
    runs += [("dev", real, "validation", model_dir), ("test", real, "test", model_dir)]
    evaluate = (paths.python, "recipes/birthplace.py", "evaluate", config)
    return [
        Step(
            f"{name}_eval_{split_name}",
            (*evaluate, "--data_dir", data, "--eval_split", split, "--model_name_or_path", model_dir)
            + ("--output_dir", output_dir, *RERUN),
        )
        for split_name, data, split, output_dir in runs
    ]


def _birthplace_setup_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The tuning split, London, and the one tokenizer of every model (a course profile: London alone)."""
    py, configs, (bp, real, _) = paths.python, profile.birthplace.configs, _birthplace_folders(paths)
    london = Step(
        "bp_london",
        (py, "recipes/birthplace.py", "evaluate", f"{configs}/london.json", "--data_dir", real)
        + ("--output_dir", f"{bp}/london", *RERUN),
    )
    if profile.course:
        return [london]
    prepare = (py, "recipes/prepare_data.py", "birthplace-tune", "--data_root", paths.data_root)
    return [
        Step("bp_prepare_data", (*prepare, "--out", f"{paths.out}/data"), timed=False),
        london,
        # One tokenizer for every model, trained on wiki.txt alone (never on the copies or the questions): the very
        # tokenizer `pretrain --tokenizer_vocab_size` trains, so that the pretrainings can run side by side.
        Step(
            "bp_tokenizer",
            (py, "tokenizer/train_tokenizer.py", f"{configs}/tokenizer.json", "--files", f"{real}/wiki.txt")
            + ("--output_dir", f"{bp}/tokenizer", "--overwrite_output_dir"),
            timed=False,
        ),
    ]


def _birthplace_tokenizer(profile: Profile, paths: Paths) -> tuple[str, ...]:
    """The shared tokenizer of the trainings from scratch (a course profile builds its character vocabulary)."""
    return () if profile.course else ("--tokenizer_name_or_path", f"{_birthplace_folders(paths)[0]}/tokenizer")


def _birthplace_pretrain_step(profile: Profile, paths: Paths, model: str) -> Step:
    """One model's pretraining (its variant, augmentation, epochs and objective are its config file's)."""
    bp, configs = _birthplace_folders(paths)[0], profile.birthplace.configs
    return Step(
        f"bp_{model}_pretrain",
        (paths.python, "recipes/birthplace.py", "pretrain", f"{configs}/pretrain_{model}.json")
        + (*_birthplace_tokenizer(profile, paths), *_birthplace_training_data(profile, paths))
        + ("--output_dir", f"{bp}/{model}_pretrain", *RERUN),
    )


def _birthplace_after_pretraining(profile: Profile, paths: Paths, model: str) -> tuple[Step, list[Step], list[Step]]:
    """What follows one model's pretraining: its finetuning (the course's stage), the pretrained model's fact probe
    and scores, and the finetuned model's scores (a course profile: the finetuning and its scores alone)."""
    py, configs, (bp, real, tune) = paths.python, profile.birthplace.configs, _birthplace_folders(paths)
    pretrained, finetuned, kind = f"{bp}/{model}_pretrain", f"{bp}/{model}_finetune", _kind(model)
    evaluate, tune = f"{configs}/evaluate.json", None if profile.course else tune
    finetune = Step(
        f"bp_{model}_finetune",
        (py, "recipes/birthplace.py", "finetune", f"{configs}/finetune{kind}.json", "--model_name_or_path", pretrained)
        + (*_birthplace_training_data(profile, paths), "--output_dir", finetuned, *RERUN),
    )
    finetuned_scores = _evaluate_steps(f"bp_{model}", finetuned, paths, evaluate, tune)
    if profile.course:
        return finetune, [], finetuned_scores
    probe = Step(
        f"bp_{model}_probe",
        (py, "benchmarks/probe_facts.py", "--data_dir", real, "--model_name_or_path", pretrained),
    )
    return (
        finetune,
        [probe, *_evaluate_steps(f"bp_{model}_pretrain", pretrained, paths, evaluate, tune)],
        finetuned_scores,
    )


def _birthplace_nopretrain_steps(profile: Profile, paths: Paths) -> tuple[Step, list[Step]]:
    """No pretraining: the same model shape and tokenizer, finetuned from random weights; and its scores. A course
    profile's tokenizer is the course's characters, which its first pretraining built from wiki.txt and saved."""
    bp, configs = _birthplace_folders(paths)[0], profile.birthplace.configs
    output_dir = f"{bp}/nopretrain_finetune"
    first = f"{bp}/{profile.birthplace.models[0]}_pretrain"
    tokenizer = ("--tokenizer_name_or_path", first) if profile.course else _birthplace_tokenizer(profile, paths)
    finetune = Step(
        "bp_nopretrain_finetune",
        (paths.python, "recipes/birthplace.py", "finetune", f"{configs}/finetune_nopretrain.json")
        + (*tokenizer, *_birthplace_training_data(profile, paths))
        + ("--output_dir", output_dir, *RERUN),
    )
    tune = None if profile.course else _birthplace_folders(paths)[2]
    return finetune, _evaluate_steps("bp_nopretrain", output_dir, paths, f"{configs}/evaluate.json", tune)


def _course_table_step(profile: Profile, paths: Paths, course: str, name: str) -> Step:
    """The course's reported numbers beside ours (benchmarks/course_table.py), which `run` prints at its end."""
    return Step(
        name,
        (paths.python, "benchmarks/course_table.py", course, "--bench_dir", paths.out, "--profile", profile.name)
        + ("--output", f"{paths.out}/{course}_table.md"),
        timed=False,
        may_fail=True,
    )


def _birthplace_figure_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The dev accuracy of every row, the headline model's pretraining loss, and the course's table."""
    figures, bp, first = "benchmarks/figures", _birthplace_folders(paths)[0], profile.birthplace.models[0]
    return [
        Step(
            "bp_plot",
            (paths.python, "benchmarks/plot_birthplace.py", "--bench_dir", paths.out, "--profile", profile.name)
            + ("--output", f"{figures}/birthplace_dev_accuracy{profile.suffix}.png"),
            timed=False,
            may_fail=True,
        ),
        Step(
            "bp_loss_figure",
            ("cp", f"{bp}/{first}_pretrain/loss.png", f"{figures}/birthplace_pretrain_loss{profile.suffix}.png"),
            timed=False,
        ),
        _course_table_step(profile, paths, "cs224n", "bp_course_table"),
    ]


def birthplace_steps(profile: Profile, paths: Paths) -> list[Step]:
    """London, then each model pretrained (the benchmark's: causal LM on paragraph openings mixed with the training
    QA pairs; a course profile's: the course's span corruption), probed, scored, finetuned and scored; and the
    vanilla model finetuned without pretraining. Nothing is chosen on the dev set: 10% of the training questions
    are held out as a tuning split, and every model is scored on it (a course profile chooses nothing and has none)."""
    # Three stages of independent steps (side by side where the profile allows it), longest first: what needs only the
    # tokenizer, what needs a pretrained model (finetuning, probe, scores), and the finetuned models' scores.
    training, finetuning, scoring_pretrained, scoring_finetuned = [], [], [], []
    for model in profile.birthplace.models:
        training.append(_birthplace_pretrain_step(profile, paths, model))
        finetune, pretrained_scores, finetuned_scores = _birthplace_after_pretraining(profile, paths, model)
        finetuning.append(finetune)
        scoring_pretrained += pretrained_scores
        scoring_finetuned += finetuned_scores
    nopretrain, nopretrain_scores = _birthplace_nopretrain_steps(profile, paths)
    if profile.course:  # its tokenizer is the first pretraining's: a stage later
        finetuning.append(nopretrain)
        scoring_finetuned += nopretrain_scores
    else:
        training.append(nopretrain)
        scoring_pretrained += nopretrain_scores
    steps = _birthplace_setup_steps(profile, paths)
    for group, stage in (
        ("bp_training", training),
        ("bp_after_training", finetuning + scoring_pretrained),
        ("bp_after_finetuning", scoring_finetuned),
    ):
        steps += [replace(step, group=group) for step in stage]
    return steps + _birthplace_figure_steps(profile, paths)


def _accuracy_figure(profile: Profile, paths: Paths, name: str) -> Step:
    """The lab's figure: every sentiment row finished in OUT, validation accuracy per epoch."""
    return Step(
        name,
        (paths.python, "benchmarks/plot_sentiment.py", "--bench_dir", paths.out, "--profile", profile.name)
        + ("--output", f"benchmarks/figures/sentiment_valid_accuracy{profile.suffix}.png")
        + ("--title", f"CLS-FR books, validation ({profile.name} profile, mean ± std of seeds)"),
        timed=False,
    )


def _sentiment_folders(paths: Paths) -> tuple[str, str, str]:
    """The sentiment pipelines' run folder, the labelled reviews, and the prepared LM corpus."""
    return f"{paths.out}/sentiment", f"{paths.data_root}/cls-books", f"{paths.out}/data/sentiment-corpus"


def _sentiment_data_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The LM corpus, the TF-IDF reference line and the BPE tokenizer."""
    py, configs, (se, cls, corpus) = paths.python, profile.sentiment.configs, _sentiment_folders(paths)
    return [
        Step(
            "se_prepare_data",
            (py, "recipes/prepare_data.py", "sentiment-corpus", f"{configs}/corpus.json")
            + ("--data_root", paths.data_root, "--out", f"{paths.out}/data"),
            timed=False,
        ),
        # Reference line: TF-IDF + logistic regression (fails when scikit-learn is not installed).
        Step(
            "se_tfidf",
            (
                py,
                "benchmarks/tfidf_baseline.py",
                "--data_dir",
                cls,
                "--output_dir",
                f"{se}/tfidf",
                "--overwrite_output_dir",
            ),
            may_fail=True,
        ),
        Step(
            "se_tokenizer",
            (py, "tokenizer/train_tokenizer.py", f"{configs}/tokenizer.json", "--files", f"{corpus}/pretrain.txt")
            + ("--output_dir", f"{se}/tokenizer", "--overwrite_output_dir"),
        ),
    ]


def _sentiment_lm_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The causal LM on the French corpus, then its second stage on the training reviews alone."""
    pretrain, configs, (se, _, corpus) = (
        (paths.python, "recipes/pretrain.py"),
        profile.sentiment.configs,
        _sentiment_folders(paths),
    )
    return [
        Step(
            "se_pretrain",
            (*pretrain, f"{configs}/lm.json", "--train_files", f"{corpus}/pretrain.txt")
            + ("--tokenizer_name_or_path", f"{se}/tokenizer", "--output_dir", f"{se}/pretrain", *RERUN),
        ),
        Step(
            "se_domain",
            (*pretrain, f"{configs}/lm_domain.json", "--train_files", f"{corpus}/reviews.txt")
            + ("--model_name_or_path", f"{se}/pretrain", "--output_dir", f"{se}/domain", *RERUN),
        ),
    ]


def _finetune_step(profile: Profile, paths: Paths, setup: str, seed: int, start: tuple[str, ...]) -> Step:
    """One set-up's finetuning with one seed (its config file, `<setup>.json`), from `start`: the tokenizer of a
    model built from scratch, or the pretrained model."""
    se, cls = _sentiment_folders(paths)[:2]
    return Step(
        f"se_{setup}_seed{seed}",
        (paths.python, "recipes/finetune_sentiment.py", f"{profile.sentiment.configs}/{setup}.json")
        + ("--data_dir", cls, *start, "--output_dir", f"{se}/{setup}_seed{seed}", "--seed", str(seed), *RERUN),
        group="se_finetune",
    )


def _starts(paths: Paths, backbone: str) -> dict[str, tuple[str, ...]]:
    """Where each set-up starts: the BPE tokenizer from scratch, else the backbone."""
    se = _sentiment_folders(paths)[0]
    scratch, pretrained = ("--tokenizer_name_or_path", f"{se}/tokenizer"), ("--model_name_or_path", f"{se}/{backbone}")
    return {setup: scratch if setup.startswith("scratch") else pretrained for setup in SENTIMENT_SETUPS}


def sentiment_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The LP-FT rows, ALTeGraD-lab style: a BPE tokenizer and a causal LM pretrained on French news and novels (+
    the unlabeled training reviews), a second LM stage on the training reviews alone (ULMFiT's target-domain stage;
    never a validation or test review), then LP-FT with the profile's seeds: the head fitted as a linear probe of
    the frozen features (every layer's mean and max), then the whole model finetuned, from scratch and pretrained.
    The pretrained run keeps its probe alone as the frozen backbone's row (`--save_linear_probe`). Then the figures.
    The lab's own three rows are the `sentiment_lab` pipeline."""
    steps, starts = (
        _sentiment_data_steps(profile, paths) + _sentiment_lm_steps(profile, paths),
        _starts(paths, "domain"),
    )
    for seed in profile.sentiment.seeds:
        steps += [_finetune_step(profile, paths, setup, seed, starts[setup]) for setup in SENTIMENT_SETUPS[4:]]
    return steps + [
        _accuracy_figure(profile, paths, "se_plot"),
        Step(
            "se_loss_figure",
            ("cp", f"{paths.out}/sentiment/pretrain/loss.png")
            + (f"benchmarks/figures/sentiment_pretrain_loss{profile.suffix}.png",),
            timed=False,
        ),
    ]


def sentiment_lab_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The lab's three rows, from the `sentiment` pipeline's tokenizer and target-domain backbone (run it first):
    from scratch, pretrained, and the pretrained backbone frozen under a new head, for each seed; then the figure
    again, with them, and the course's table."""
    steps, starts = [], _starts(paths, "domain")
    for seed in profile.sentiment.seeds:
        steps += [_finetune_step(profile, paths, setup, seed, starts[setup]) for setup in LAB_SETUPS]
    return [
        *steps,
        _accuracy_figure(profile, paths, "se_lab_plot"),
        _course_table_step(profile, paths, "altegrad", "se_course_table"),
    ]


def course_sentiment_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The lab's own chain: its exact model and 50,001 ids, pretrained as a causal LM on the raw French corpus; then
    the lab's three rows with its finetuning settings, for each seed, each predicting the test reviews; then the
    lab's figure, the LM's loss and the course's table."""
    se, cls = _sentiment_folders(paths)[:2]
    lm = Step(
        "se_pretrain",
        (paths.python, "recipes/pretrain.py", f"{profile.sentiment.configs}/lm.json")
        + ("--train_files", f"{paths.data_root}/french-corpus", "--lab_vocabulary", cls)
        + ("--output_dir", f"{se}/pretrain", *RERUN),
    )
    steps, starts = [lm], {**_starts(paths, "pretrain"), "scratch": ()}  # the lab's ids come from the data
    for seed in profile.sentiment.seeds:
        steps += [_finetune_step(profile, paths, setup, seed, starts[setup]) for setup in LAB_SETUPS]
    return [
        *steps,
        _accuracy_figure(profile, paths, "se_plot"),
        Step(
            "se_loss_figure",
            ("cp", f"{se}/pretrain/loss.png", f"benchmarks/figures/sentiment_pretrain_loss{profile.suffix}.png"),
            timed=False,
        ),
        _course_table_step(profile, paths, "altegrad", "se_course_table"),
    ]


# In running order: `sentiment_lab` reads what `sentiment` made (`PIPELINE_NEEDS`): its tokenizer and the review
# stage's backbone. On a GPU machine it starts as soon as that stage has finished (`PIPELINE_STARTS_AFTER`), beside
# the LP-FT finetunings. A course profile has its own chain of each course (`COURSE_PIPELINES`, `birthplace` and
# `sentiment` by name), and each course its pipelines (`COURSES`: `plan.py run --course altegrad`).
PIPELINES = {"birthplace": birthplace_steps, "sentiment": sentiment_steps, "sentiment_lab": sentiment_lab_steps}
COURSE_PIPELINES = {"birthplace": birthplace_steps, "sentiment": course_sentiment_steps}
PIPELINE_NEEDS = {"sentiment_lab": "sentiment"}
PIPELINE_STARTS_AFTER = {"sentiment_lab": "se_domain"}
COURSES = {"cs224n": ("birthplace",), "altegrad": ("sentiment", "sentiment_lab")}


# The label-budget curve (`benchmarks/label_curve.py`): the LP-FT rows and TF-IDF again on balanced draws of the
# training reviews, from the `sentiment` pipeline's tokenizer and review-stage LM, its LP-FT runs the full budget.
def sentiment_curve_steps(profile: Profile, paths: Paths) -> list[Step]:
    figure = (paths.python, "benchmarks/plot_label_curve.py", "--bench_dir", paths.out, "--profile", profile.name)
    curve = label_curve.curve_steps(sentiment_steps(profile, paths), profile.sentiment.seeds)
    return [*curve, Step("se_curve_plot", figure, timed=False)]


PIPELINES["sentiment_curve"] = sentiment_curve_steps
PIPELINE_NEEDS["sentiment_curve"] = "sentiment"


def plan(profile: str, paths: Paths | None = None) -> dict[str, list[Step]]:
    """The steps of each pipeline of a profile, in order."""
    if profile not in PROFILES:
        raise SystemExit(f"unknown profile {profile!r}; expected one of {sorted(PROFILES)}")
    paths = paths or Paths.from_environment()
    builders = COURSE_PIPELINES if PROFILES[profile].course else PIPELINES
    return {name: build(PROFILES[profile], paths) for name, build in builders.items()}


# --------------------------------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------------------------------
def chains(pipelines: list[str]) -> list[list[str]]:
    """The pipelines as independent chains, each in running order: one that reads another's outputs
    (`PIPELINE_NEEDS`) runs after it in its chain; the chains may run side by side (on a GPU machine)."""
    result: list[list[str]] = []
    for name in [name for name in PIPELINES if name in pipelines]:
        chain = next((chain for chain in result if PIPELINE_NEEDS.get(name) in chain), None)
        if chain is None:
            result.append([name])
        else:
            chain.append(name)
    return result


def run_chain(
    chain: list[str],
    steps: dict[str, list[Step]],
    out: Path,
    env: dict[str, str],
    failed: list[str],
    side_by_side: bool | tuple[str, ...],
) -> None:
    """The pipelines of one chain in order; none after one that failed. A pipeline that reads only what a step of
    the one before it makes (`PIPELINE_STARTS_AFTER`) starts once that step has finished, beside the rest of it."""
    for index, name in enumerate(chain):
        if PIPELINE_NEEDS.get(name) in failed:
            failed.append(name)
            print(f"{name} not run: {PIPELINE_NEEDS[name]} failed", flush=True)
            continue
        start_after = PIPELINE_STARTS_AFTER.get(chain[index + 1]) if index + 1 < len(chain) else None
        if start_after is None:
            run_pipeline(name, steps[name], out, env, failed, side_by_side)
            continue
        names = [step.name for step in steps[name]]
        cut = names.index(start_after) + 1 if start_after in names else 0  # not there: a resumed run had finished it
        run_pipeline(name, steps[name][:cut], out, env, failed, side_by_side)
        if name in failed:
            continue  # the next pipeline is then marked as not run
        rest = threading.Thread(target=run_pipeline, args=(name, steps[name][cut:], out, env, failed, side_by_side))
        rest.start()
        run_chain(chain[index + 1 :], steps, out, env, failed, side_by_side)
        rest.join()
        return


def pipelines_of(profile: str) -> list[str]:
    """The pipelines a profile has, in running order."""
    return list(COURSE_PIPELINES if PROFILES[profile].course else PIPELINES)


def _check_rerun(steps: dict[str, list[Step]], pipelines: list[str], resume: bool, rerun: tuple[str, ...]) -> None:
    if not rerun:
        return
    if not resume:
        raise SystemExit("--rerun names steps to run again within a --resume run; without --resume every step runs")
    names = [step.name for name in pipelines for step in steps[name]]
    unmatched = [pattern for pattern in rerun if not fnmatch.filter(names, pattern)]
    if unmatched:
        raise SystemExit(
            f"--rerun: no step of {', '.join(pipelines)} matches {', '.join(unmatched)} "
            "(`plan.py show` lists the steps)"
        )


def _run_pipelines(profile: str, pipelines: list[str], steps: dict[str, list[Step]], out: Path, failed: list[str]):
    """On a GPU machine every chain of pipelines at once; on the CPU one pipeline after the other."""
    start, side_by_side = time.monotonic(), PROFILES[profile].side_by_side
    if PROFILES[profile].on_gpu:  # the GPU machine has cores to spare: tokenizers may use them all
        env = step_environment(OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), TOKENIZERS_PARALLELISM="true")
        threads = [
            threading.Thread(target=run_chain, args=(chain, steps, out, env, failed, side_by_side))
            for chain in chains(pipelines)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return
    # each pipeline on both cores (1.5-1.9x the speed of one core), its side-by-side groups on one core each
    env = step_environment(OMP_NUM_THREADS=str(CPU_THREADS))
    for name in [name for name in PIPELINES if name in pipelines]:
        if PIPELINE_NEEDS.get(name) in failed:
            failed.append(name)
            print(f"{name} not run: {PIPELINE_NEEDS[name]} failed", flush=True)
            continue
        began = time.monotonic()
        run_pipeline(name, steps[name], out, env, failed, side_by_side, threads=CPU_THREADS)
        print(f"{name}: {time.monotonic() - began:.0f} s ({time.monotonic() - start:.0f} s since the start)")


def _print_summary(out: Path, pipelines: list[str], steps: dict[str, list[Step]], since: float) -> None:
    """The scores of the birthplace log, and each course's table written by this run (`benchmarks/course_table.py`)."""
    if "birthplace" in pipelines and (out / "birthplace_run.log").exists():
        for line in (out / "birthplace_run.log").read_text(encoding="utf-8").splitlines():
            if "Correct:" in line or "Completed" in line:
                print(line)
    for step in [step for name in pipelines for step in steps[name] if step.name.endswith("_course_table")]:
        table = Path(option_value(step.command, "--output"))
        if table.exists() and table.stat().st_mtime >= since:
            print(f"\n{table.read_text(encoding='utf-8')}")


def run(
    profile: str,
    pipelines: list[str],
    resume: bool = False,
    rerun: tuple[str, ...] = (),
    command: str = "python benchmarks/plan.py run",
) -> int:
    """The pipelines (one at a time on both CPU cores, or side by side on a GPU machine), then the results file
    and the throughput benchmark. Exit status 1 when anything failed. `resume`: the timed steps an earlier run
    finished with the same command and config files are kept, not run again, except those matching a `rerun`
    pattern."""
    paths = Paths.from_environment()
    out, steps = Path(paths.out), plan(profile, paths)
    absent = [name for name in pipelines if name not in steps]
    if absent:
        raise SystemExit(f"the {profile} profile has no {', '.join(absent)} pipeline; it has {', '.join(steps)}")
    _check_rerun(steps, pipelines, resume, rerun)
    out.mkdir(parents=True, exist_ok=True)
    if resume:
        done = finished_steps(out, [step for name in pipelines for step in steps[name]], rerun)
        steps = {name: [step for step in pipeline if step.name not in done] for name, pipeline in steps.items()}
        print(f"resuming: {len(done)} finished steps kept ({', '.join(sorted(done)) or 'none'})")
    else:
        for name in pipelines:
            (out / f"{name}_run.log").unlink(missing_ok=True)
    forget_timings(out, [step for name in pipelines for step in steps[name]])
    start, began, failed = time.monotonic(), time.time(), []
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began))
    print(f"profile {profile}, started {started}, outputs in {out}")
    (out / "run_time.json").unlink(missing_ok=True)  # never an earlier run's time beside this run's steps
    _run_pipelines(profile, pipelines, steps, out, failed)
    seconds = round(time.monotonic() - start)
    run_time = {"command": command, "profile": profile, "pipelines": pipelines, "started": started}
    write_run_time(out, {**run_time, "wall_time_s": seconds, "resumed": resume, "failed": failed})
    _print_summary(out, pipelines, steps, began)
    print(f"quality benchmarks: {seconds} s")
    # results.json and the throughput rows come from a whole run of a benchmark profile only
    if PROFILES[profile].course or set(pipelines) != set(PIPELINES):
        return 1 if failed else 0
    env = step_environment(PROFILE=profile)
    results = [paths.python, "benchmarks/write_results.py", "--bench_dir", str(out), "--profile", profile]
    status = subprocess.run(results, cwd=REPO_ROOT, env=env).returncode
    throughput = [paths.python, "benchmarks/throughput.py", *PROFILES[profile].throughput_args]
    throughput += ["--results_json", "benchmarks/results.json"]  # the published figures: this run's
    status = subprocess.run(throughput, cwd=REPO_ROOT, env=env).returncode or status
    print(f"all benchmarks: {time.monotonic() - start:.0f} s")
    return 1 if failed or status else 0


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """-h prints the examples as written and every flag's default (as hf_models.training.HelpFormatter, which this
    script does not import)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument(
        "action", choices=("show", "run"), help="show: print the steps and their commands; run: run them"
    )
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=os.environ.get("PROFILE", "cpu"),
        help="cpu: 2 cores, about an hour per course; gpu: one GPU, bf16, larger runs; gpu_large: the lab's model "
        "size; course: the courses' own settings (a GPU machine); course-cut: the same, cut to the CPU hour",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--pipeline", nargs="+", choices=sorted(PIPELINES), help="which pipelines (default: all)")
    which.add_argument("--course", choices=sorted(COURSES), help="the pipelines of one course (make cs224n|altegrad)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="run: keep the steps an interrupted run into the same OUT finished with the same command",
    )
    parser.add_argument(
        "--rerun",
        nargs="+",
        default=[],
        metavar="PATTERN",
        help="with --resume: run these steps again (shell patterns, e.g. 'se_*lp_ft*'), for a code change "
        "that their commands do not show",
    )
    args = parser.parse_args(argv)
    available = pipelines_of(args.profile)
    pipelines = args.pipeline or [name for name in available if name in COURSES.get(args.course, available)]
    if args.action == "run":
        command = " ".join(["python benchmarks/plan.py", *(argv if argv is not None else sys.argv[1:])])
        return run(args.profile, pipelines, args.resume, tuple(args.rerun), command)
    try:
        for name, steps in plan(args.profile).items():
            if name in pipelines:
                print(f"# {name}", *(f"{step.name}\t{' '.join(step.command)}" for step in steps), sep="\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `plan.py show | head`: the reader has what it wanted (the Python docs' way out)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    from hf_models.safety import command_line  # here only: the plan itself needs neither torch nor transformers

    sys.exit(command_line(main, sys.argv[1:]))
