#!/usr/bin/env python
"""The benchmark plan: every run of both profiles, in one table, with the profile's values.

    python benchmarks/plan.py show --profile cpu                # the steps and their commands
    python benchmarks/plan.py run --profile cpu                 # what `make bench` (benchmarks/run_all.sh) does
    python benchmarks/plan.py run --profile gpu --pipeline birthplace
    python benchmarks/plan.py run --profile cpu --pipeline sentiment --resume   # after an interruption
    python benchmarks/plan.py run --profile cpu --pipeline sentiment --resume --rerun 'se_*lp_ft*'  # after a code change

`run` executes the pipelines (birthplace; sentiment, issue 18's rows; sentiment_lab, the lab's rows, which reads
sentiment's tokenizer and backbone: one after the other on the CPU, each on both cores; on a GPU machine birthplace
beside the two sentiment ones, and sentiment_lab from the end of sentiment's review stage on), then `write_results.py`,
then `throughput.py`. Within a pipeline, the steps of a group that the profile runs side by side
(`Profile.side_by_side`) share the machine: on the CPU two at a time, one core each. Consecutive side-by-side groups
form one pool: a step starts as soon as a worker is free and the steps that write what it reads (`step_dependencies`)
are done, so that one model's evaluations need not wait for another's training. Each step's output goes to
`$OUT/log_NAME.txt`, each pipeline's progress to `$OUT/NAME_run.log`, and `$OUT/timings.tsv` gets one line per step that
succeeded (`name, seconds, command`): a step that failed is not there, so `write_results.py` refuses its row. A run of
one pipeline replaces that pipeline's lines and keeps the other's. `run --resume` continues an interrupted run into the
same OUT: a timed step whose timings.tsv line has the same command is kept, not run again. The check compares commands,
not code: after a change to the code a step runs, name the step in `--rerun` (shell patterns). `write_results.py`,
`plot_birthplace.py` and `plot_sentiment.py` read the rows below (`birthplace_rows`, `sentiment_rows`,
`tune_split_choice`): no step or folder name is typed anywhere else.

Data come from DATA_ROOT (default ../shared/data), outputs go under OUT (default outputs/bench), and the steps run
with PY (default .venv/bin/python). The hyperparameters are the profiles' values below, and nowhere else.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path

import label_curve

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class BirthplaceProfile:
    pretrain_epochs: int  # the vanilla model's pretraining epochs (the headline row)
    synthesizer_pretrain_epochs: int
    batch_size: int
    opening_tokens: int
    vocab_size: int = 4000
    objective: str = "openings"  # or "span_corruption", the course's (BENCHMARKS.md)
    nopretrain_epochs: int = 10  # the finetuning of a model trained from scratch
    config_overrides: str | None = None
    # The augmented rows (issue 21): the same pretraining with `--augment` copies of each paragraph.
    augment: str = "name_first,opening"
    augmented_pretrain_epochs: int = 0
    synthesizer_augmented_pretrain_epochs: int = 0
    # The course's own objective as a row of its own: span corruption of whole paragraphs (no QA mixed in), then the
    # course's finetuning (10 epochs, lr 6e-4).
    span_corruption_pretrain_epochs: int = 0
    # Recite, then answer (issue 21): the augmented pretraining whose QA rows (mixed in, then finetuned and
    # evaluated) put the person's paragraph opening before the question (`--recite_tokens opening_tokens`).
    recite_pretrain_epochs: int = 0
    synthesizer_recite_pretrain_epochs: int = 0
    # Trainer's `--train_sampling_strategy` for every birthplace training: `group_by_length` batches rows of similar
    # length (on the CPU, 36 % of a random batch's positions are padding: an epoch costs 31 % less time).
    sampling: str = "random"
    # The reciting models answer with the span of their recitation they score highest instead of a generated answer
    # (`--answer_from_recitation` on their trainings, which keep it in their run records).
    answer_from_recitation: bool = False
    # The pretrained models the profile runs (of BIRTHPLACE_MODELS), in order: the first one is the headline.
    models: tuple[str, ...] = (
        "vanilla",
        "synthesizer",
        "vanilla_augmented",
        "synthesizer_augmented",
        "vanilla_recite",
        "synthesizer_recite",
        "vanilla_span_corruption",
    )


@dataclass(frozen=True)
class SentimentProfile:
    news_lines: int
    novel_lines: int
    pretrain_steps: int
    batch_size: int  # LM sequences a step, of `lm_block_size` tokens
    vocab_size: int = 8000
    domain_epochs: int = 2
    epochs: int = 4
    seeds: tuple[int, ...] = (42, 43, 44)
    pooling: str = "mean"
    model_config: str = "altegrad-lab"  # the preset of every sentiment model (`--model_config`)
    config_overrides: str | None = None  # of that preset, e.g. hidden_size=384
    # Every finetuning on batches of similar lengths in random order (`--length_buckets`): half the positions of a
    # random batch of 16 reviews are padding.
    length_buckets: bool = False
    # The LM's and the review stage's blocks of tokens (`--block_size`). The finetunings read 256 tokens of a review,
    # and an LM of 128-token blocks predicts worse past position 128 (5.3-5.6 nats on long validation reviews,
    # 4.9 before); blocks of 256 mend that and lose 3 points of pretrained LP-FT (BENCHMARKS.md, "Blocks of 256").
    lm_block_size: int = 128


@dataclass(frozen=True)
class Profile:
    name: str
    device_args: tuple[str, ...]
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

    @property
    def on_gpu(self) -> bool:
        return "--use_cpu" not in self.device_args


PROFILES = {
    # The 2-core CPU (fp32): birthplace 57.3 min (the run of 2026-11-26 answering from the recitation),
    # sentiment 61.5 min for issue 18's rows and 21.9 more for the lab's (`sentiment_lab`; the run of 2026-11-26,
    # evening; its finetunings one after the other on both cores: on one core a finetuning takes 2.1 times as
    # long, so two side by side gain nothing). Issues 18 and 21 ask 60.
    "cpu": Profile(
        "cpu",
        ("--use_cpu", "true"),
        "",
        ("--threads", "1", "--generation_repeats", "2"),
        # Birthplace: recite, then answer is the headline (BENCHMARKS.md, issue 21: 63.4 % of dev after 20
        # epochs in the pipeline run of 2026-11-25, where the augmented model answering directly got 40.4 %
        # after 32). An epoch holds 102,964 paragraph tokens + 41,428 (name_first) + 94,932 (opening) + 91,150
        # of QA rows with their 40-token recitations. Then the synthesizer reciting (16 epochs gave 51.8 %: its
        # attention mixes positions by the query alone, yet it reads the place out of its recitation) and the
        # course's span corruption (4 epochs: at 8 it answered 4.2 %, below "London", and took 13 minutes of a
        # core with its finetuning). For the hour: 17 and 12 epochs in batches grouped by length (186 s an epoch
        # on one core): 51.6 % and 27.4 % in the run of 2026-11-25 (late); 14 and 9 epochs recalled fewer facts
        # and answered 38.2 % and 16.6 %. Without dropout or the augmentation forms the models recall the facts
        # but answer less (42.8 % and 19.8 %): BENCHMARKS.md, "An hour's pipeline". The plain rows (76 and 16
        # epochs, 40.6 % and 8.2 %) and the augmented ones answering directly (32 and 7 epochs, 40.4 % and
        # 9.6 %) are the GPU profile's only, for time. Counterfactual twins of the QA rows gave 60.8 % after 16
        # epochs (56.4 % after 15, in 60.1 minutes). The models now answer with the best-scored span of their
        # recitation (`answer_from_recitation`): on the tuning split, a model of 20 plain epochs answered 79.5 %
        # (60.0 % generating), one of 17 epochs with twins 74.5 % (62.5 %), and the twins make an epoch 29 % longer:
        # so 17 plain epochs again, the run of 51.9 minutes.
        BirthplaceProfile(
            pretrain_epochs=76,
            synthesizer_pretrain_epochs=16,
            batch_size=32,
            opening_tokens=40,
            augmented_pretrain_epochs=32,
            synthesizer_augmented_pretrain_epochs=7,
            recite_pretrain_epochs=17,
            synthesizer_recite_pretrain_epochs=12,
            span_corruption_pretrain_epochs=4,
            sampling="group_by_length",
            models=("vanilla_recite", "synthesizer_recite", "vanilla_span_corruption"),
            answer_from_recitation=True,
        ),
        # Sentiment: a 16k BPE, whose LM sees 5.7M tokens (1,400 steps, 0.51 of a pass; the 16k softmax doubles a
        # step's cost). In the exploration of 2026-11-25 its frozen probe gained 2.25 points over the 8k BPE's with
        # 2,800 steps and LP-FT kept its mean (BENCHMARKS.md, "A 16k vocabulary": a choice made on validation).
        # Finetunings on length buckets: their training 36-48 % shorter, the final accuracy as good on 4 seed pairs,
        # epoch 1 lower for both rows (BENCHMARKS.md, "Length buckets"). The pipeline run of 2026-11-26: 80.6
        # minutes (LM 1,827 s at 1.27 s a step), pretrained LP-FT 79.83 %, scratch LP-FT 77.92 %; the same figures
        # from issue 18's rows alone in 61.5 minutes that evening (LM 2,009 s at 1.43 s a step), and in 61.9 that
        # night with the probe's faster cross-validation (LP-FT 120 s shorter, LM 2,119 s at 1.47 s a step).
        # An adaptive softmax on the LM (`lm_adaptive_softmax_head=2000`) made it 2.2 times faster and its backbone
        # worse for the reviews (3 seeds: frozen probe 69.67 % against 73.42 %, pretrained LP-FT 77.83 % against
        # 79.83 %): not kept (BENCHMARKS.md, "An adaptive softmax on the LM"). The preset's dropouts stay: the LM
        # without them is 10 % faster and transfers worse (pretrained LP-FT 78.08 %), and attention dropout at 0
        # alone (`config_overrides="attention_dropout=0"`) ran the pipeline in 57.9 minutes but lost the epoch-1 lead
        # (BENCHMARKS.md, "Attention dropout at 0"). The LM on blocks of 256 (`lm_block_size=256`, 1,260 steps of 16
        # sequences) ended pretrained LP-FT at 76.75 %: not kept (BENCHMARKS.md, "Blocks of 256 tokens").
        SentimentProfile(
            news_lines=10_000,
            novel_lines=110_000,
            pretrain_steps=1400,
            batch_size=32,
            vocab_size=16_000,
            length_buckets=True,
        ),
        side_by_side=("bp_training", "bp_after_training", "bp_after_finetuning"),
    ),
    # One GPU in bf16, both pipelines side by side: 7.7 minutes with throughput.py on an H100 (2026-11-26;
    # birthplace 233 s, sentiment 420 s). Sentiment: the whole French corpus (35M tokens) with the CPU profile's
    # 16k BPE, and 6,000 LM steps of 128 x 128 tokens (3 passes, 230 s), then the 18 finetunings all at once (92 s):
    # pretrained LP-FT 80.42 %, scratch LP-FT 77.42 %. Since the split the 6 LP-FT finetunings run at once, then the
    # lab's 9 (35 s): the same scores that evening, beside the gpu_large lever (BENCHMARKS.md). Since 2026-11-27 the
    # lab's 9 start beside the 6 once the review stage is done (`PIPELINE_STARTS_AFTER`).
    "gpu": Profile(
        "gpu",
        ("--bf16", "true"),
        "_gpu",
        ("--device", "cuda", "--dtype", "bf16", "--batch_size", "64"),
        # Birthplace: the CPU profile's rows (reciting, then answering; the course's span corruption) with 50 epochs
        # (the CPU's 15 and 12) in batches of 128, grouped by length (issue 22: larger batches, fewer launches), the
        # vanilla model with counterfactual twins: 70.2 % and 64.6 % (67.8 % and 62.2 % without twins, on an H200);
        # 100 epochs gave the vanilla model +1.2 points only. Now without twins and answering with spans of the
        # recitation, as the CPU profile: 81.0 % and 83.4 % on an H100 (2026-11-26, evening). The plain and
        # augmented rows of the 300-epoch profile of 2026-11-23 (50.2 % and 30.2 %) are in BENCHMARKS.md.
        BirthplaceProfile(
            pretrain_epochs=300,
            synthesizer_pretrain_epochs=300,
            batch_size=128,
            opening_tokens=40,
            augmented_pretrain_epochs=300,
            synthesizer_augmented_pretrain_epochs=300,
            recite_pretrain_epochs=50,
            synthesizer_recite_pretrain_epochs=50,
            span_corruption_pretrain_epochs=30,
            sampling="group_by_length",
            models=("vanilla_recite", "synthesizer_recite", "vanilla_span_corruption"),
            answer_from_recitation=True,
        ),
        SentimentProfile(
            news_lines=1_000_000,
            novel_lines=1_000_000,
            pretrain_steps=6000,
            batch_size=128,
            vocab_size=16_000,
            length_buckets=True,
        ),
        predictions_dir="benchmarks/predictions/gpu",
    ),
}
# Issue 18's GPU lever: the GPU profile's sentiment pipeline with a model of the lab's size (`altegrad-large`: 6
# pre-norm layers, d=384, 23M parameters with the 16k BPE) instead of 7.4M, its LM pretrained for about the GPU
# profile's LM time (4,000 steps of 128 x 128 tokens). Run beside the GPU profile (`dev/gpu_session.sh`, LEVER_PROFILE);
# its rows are `<row>_large` in benchmarks/predictions/gpu and `sentiment_valid_acc_gpu_large` in results.json. Its
# whole run on an H200 (2026-11-27, 489 s with the lab's rows beside LP-FT): every row but pretrained LP-FT gains about
# 3 points, so scratch LP-FT (80.25 %) ties pretrained LP-FT (79.75 %); the lab's rows: 78.42 % against 72.58 %.
PROFILES["gpu_large"] = replace(
    PROFILES["gpu"],
    name="gpu_large",
    suffix="_gpu_large",
    row_suffix="_large",
    sentiment=replace(PROFILES["gpu"].sentiment, model_config="altegrad-large", pretrain_steps=4000),
)


@dataclass(frozen=True)
class Step:
    name: str
    command: tuple[str, ...]
    # A timed step is a benchmark run: it runs under `nice` and its time goes to timings.tsv. The others prepare
    # data or draw figures.
    timed: bool = True
    may_fail: bool = False  # its failure does not stop the pipeline (an optional reference line, a figure)
    # Consecutive steps of one group are independent: they may run side by side (`Profile.side_by_side`). On a GPU
    # each is launch-bound, so they share it well; on the CPU each gets its share of the cores.
    group: str | None = None


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
# corruption. A profile runs some of them (`BirthplaceProfile.models`).
BIRTHPLACE_MODELS = (
    *((variant, f"{variant}{suffix}") for suffix in ("", "_augmented", "_recite") for variant in BIRTHPLACE_VARIANTS),
    ("vanilla", "vanilla_span_corruption"),
)
# The lab's three rows, then LP-FT (issue 18): the head first fitted as a logistic regression on the frozen features
# of every layer (mean and max), alone (`frozen_linear_probe`) or then finetuned with the whole model. The LP-FT rows
# and the probe are the `sentiment` pipeline, the lab's rows the `sentiment_lab` pipeline after it.
SENTIMENT_SETUPS = ("scratch", "pretrained", "frozen", "frozen_linear_probe", "scratch_lp_ft", "pretrained_lp_ft")
# The frozen backbone's probe is the one the pretrained LP-FT run fits before it finetunes, kept in its run folder
# (`--save_linear_probe`): the same features, C and predictions as a run of its own, without its minute of work.
PROBE_KEPT_BY = {"frozen_linear_probe": "pretrained_lp_ft"}


def birthplace_rows(profile: str) -> tuple[Row, ...]:
    """Each pretrained model of the profile alone, and after the course's finetuning stage; London and no
    pretraining besides."""
    rows = [
        Row("london", ("birthplace/london",), ("bp_london",), "London"),
        Row(
            "vanilla_nopretrain",
            ("birthplace/nopretrain_finetune",),
            ("bp_nopretrain_finetune", "bp_nopretrain_eval_dev"),
            "vanilla\nno pretrain",
            "bp_nopretrain_eval_tune",
        ),
    ]
    for model in PROFILES[profile].birthplace.models:
        pretrain, name = f"bp_{model}_pretrain", model.replace("_", "\n")
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
                f"bp_{model}_eval_tune",
            )
        )
    return tuple(rows)


def tune_split_choice(profile: str) -> dict[str, tuple[str, str]]:
    """The headline rows: of the course's pretrain-then-finetune model and the pretrained model alone, the one with
    the better accuracy on the tuning split (training questions held out of both stages; ties go to the course's
    finetuned model). The dev set never takes part in the choice. Each pretrained model of the profile gets one
    (`vanilla`, `vanilla_augmented`, ...)."""
    return {model: (f"{model}_finetuned", f"{model}_pretrain_only") for model in PROFILES[profile].birthplace.models}


def sentiment_rows(profile: str) -> tuple[Row, ...]:
    """One row per set-up, over its finetuning seeds; the pretrained ones count the LM stages too."""
    seeds = PROFILES[profile].sentiment.seeds
    scratch, pretrained = ("se_tokenizer",), ("se_tokenizer", "se_pretrain", "se_domain")
    rows = []
    for setup in SENTIMENT_SETUPS:
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
# The steps
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


def _common(profile: Profile) -> tuple[str, ...]:
    # A pipeline rerun into the same OUT replaces its own earlier runs: the recipes refuse a used output folder
    # without --overwrite_output_dir (README, "Safety").
    return (
        "--report_to",
        "none",
        "--save_strategy",
        "no",
        "--dataloader_num_workers",
        "0",
        "--disable_tqdm",
        "true",
        "--seed",
        "42",
        "--overwrite_output_dir",
        *profile.device_args,
    )


def _evaluate_common(profile: Profile) -> tuple[str, ...]:
    # `evaluate` trains nothing and takes only the few Trainer flags it reads; it decodes in fp32 on any device.
    device = ("--use_cpu", "true") if "--use_cpu" in profile.device_args else ()
    return ("--seed", "42", "--overwrite_output_dir", *device)


def _overrides(value: str | None) -> tuple[str, ...]:
    return ("--config_overrides", value) if value else ()


def _sampling(strategy: str) -> tuple[str, ...]:
    return ("--train_sampling_strategy", strategy) if strategy != "random" else ()


def _evaluate_all(name: str, model_dir: str, py: str, real: str, tune: str, common: tuple[str, ...]) -> list[Step]:
    """Score a model on the tuning split, the real dev set, and answer the test questions (in the format its run
    record names)."""
    evaluate = (py, "recipes/birthplace.py", "evaluate")
    batch = ("--per_device_eval_batch_size", "100", *common)
    return [
        Step(
            f"{name}_eval_tune",
            (
                *evaluate,
                "--data_dir",
                tune,
                "--eval_split",
                "validation",
                "--model_name_or_path",
                model_dir,
                "--output_dir",
                f"{model_dir}/eval_tune",
                *batch,
            ),
        ),
        Step(
            f"{name}_eval_dev",
            (
                *evaluate,
                "--data_dir",
                real,
                "--eval_split",
                "validation",
                "--model_name_or_path",
                model_dir,
                "--output_dir",
                model_dir,
                *batch,
            ),
        ),
        Step(
            f"{name}_eval_test",
            (
                *evaluate,
                "--data_dir",
                real,
                "--eval_split",
                "test",
                "--model_name_or_path",
                model_dir,
                "--output_dir",
                model_dir,
                *batch,
            ),
        ),
    ]


def _birthplace_folders(paths: Paths) -> tuple[str, str, str]:
    """The birthplace pipeline's run folder, the real data, and the copy of it with the tuning split."""
    return f"{paths.out}/birthplace", f"{paths.data_root}/birthplace", f"{paths.out}/data/birthplace-tune"


def _birthplace_finetune_args(profile: Profile, paths: Paths) -> tuple[str, ...]:
    """What every birthplace finetuning shares (the course's stage after pretraining, and no pretraining)."""
    p, tune = profile.birthplace, _birthplace_folders(paths)[2]
    return (
        "--data_dir",
        tune,
        "--per_device_train_batch_size",
        "32",
        "--lr_scheduler_type",
        "cosine",
        "--warmup_steps",
        "20",
        "--weight_decay",
        "0.1",
        "--logging_steps",
        "20",
        "--block_size",
        "128",
        "--eval_strategy",
        "epoch",
        "--per_device_eval_batch_size",
        "100",
        *_sampling(p.sampling),
        *_common(profile),
    )


def _birthplace_optimiser_args(profile: Profile) -> tuple[str, ...]:
    """The optimiser and schedule of every birthplace pretraining."""
    p = profile.birthplace
    return (
        "--block_size",
        "128",
        "--per_device_train_batch_size",
        str(p.batch_size),
        "--learning_rate",
        "1e-3",
        "--adam_beta2",
        "0.95",
        "--weight_decay",
        "0.1",
        "--warmup_steps",
        "100",
        "--max_grad_norm",
        "1.0",
        "--lr_scheduler_type",
        "cosine_with_min_lr",
        "--lr_scheduler_kwargs",
        '{"min_lr_rate": 0.1}',
        "--logging_steps",
        "50",
        *_overrides(p.config_overrides),
        *_sampling(p.sampling),
        *_common(profile),
    )


def _recite(p: BirthplaceProfile, model: str) -> tuple[str, ...]:
    """A reciting model's flags, on its trainings (their run records keep them, and `evaluate` reads them there): it
    recites its paragraph's opening before it answers, and answers with a span of it where the profile says so."""
    if not model.endswith("_recite"):
        return ()
    recite = ("--recite_tokens", str(p.opening_tokens))
    return (*recite, "--answer_from_recitation") if p.answer_from_recitation else recite


def _birthplace_objective_args(p: BirthplaceProfile, tune: str, model: str) -> tuple[str, ...]:
    """A model's pretraining objective: the profile's (openings mixed with the QA rows, recited for a reciting
    model) or the course's span corruption."""
    if model.endswith("_span_corruption"):
        objective = ("--data_dir", tune, "--pretraining_objective", "span_corruption")
    else:
        objective = (
            "--data_dir",
            tune,
            "--pretraining_objective",
            p.objective,
            "--opening_tokens",
            str(p.opening_tokens),
            "--pretrain_with_qa",
        )
    return (*objective, *_recite(p, model))


def _birthplace_setup_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The tuning split, London, and the one tokenizer of every model."""
    py, (bp, real, _) = paths.python, _birthplace_folders(paths)
    return [
        Step(
            "bp_prepare_data",
            (
                py,
                "recipes/prepare_data.py",
                "birthplace-tune",
                "--data_root",
                paths.data_root,
                "--out",
                f"{paths.out}/data",
            ),
            timed=False,
        ),
        Step(
            "bp_london",
            (
                py,
                "recipes/birthplace.py",
                "evaluate",
                "--data_dir",
                real,
                "--london_baseline",
                "--output_dir",
                f"{bp}/london",
                *_evaluate_common(profile),
            ),
        ),
        # One tokenizer for every model, trained on wiki.txt alone (never on the copies or the questions): the very
        # tokenizer `pretrain --tokenizer_vocab_size` trains, so that the pretrainings can run side by side.
        Step(
            "bp_tokenizer",
            (
                py,
                "tokenizer/train_tokenizer.py",
                "--files",
                f"{real}/wiki.txt",
                "--vocab_size",
                str(profile.birthplace.vocab_size),
                "--output_dir",
                f"{bp}/tokenizer",
                "--no_progress",
                "--overwrite_output_dir",
            ),
            timed=False,
        ),
    ]


def _birthplace_pretrain_step(profile: Profile, paths: Paths, model: str) -> Step:
    """One model's pretraining, from the shared tokenizer: its variant, augmentation, epochs and objective."""
    p, (bp, _, tune) = profile.birthplace, _birthplace_folders(paths)
    epochs = {
        "vanilla": p.pretrain_epochs,
        "synthesizer": p.synthesizer_pretrain_epochs,
        "vanilla_augmented": p.augmented_pretrain_epochs,
        "synthesizer_augmented": p.synthesizer_augmented_pretrain_epochs,
        "vanilla_span_corruption": p.span_corruption_pretrain_epochs,
        "vanilla_recite": p.recite_pretrain_epochs,
        "synthesizer_recite": p.synthesizer_recite_pretrain_epochs,
    }
    variant = dict((model, variant) for variant, model in BIRTHPLACE_MODELS)[model]
    augment = ("--augment", p.augment) if model.endswith(("_augmented", "_recite")) else ()
    return Step(
        f"bp_{model}_pretrain",
        (
            paths.python,
            "recipes/birthplace.py",
            "pretrain",
            "--variant",
            variant,
            "--tokenizer_name_or_path",
            f"{bp}/tokenizer",
            *augment,
            "--output_dir",
            f"{bp}/{model}_pretrain",
            "--num_train_epochs",
            str(epochs[model]),
            *_birthplace_objective_args(p, tune, model),
            *_birthplace_optimiser_args(profile),
        ),
    )


def _birthplace_after_pretraining(profile: Profile, paths: Paths, model: str) -> tuple[Step, list[Step], list[Step]]:
    """What follows one model's pretraining: its finetuning, the pretrained model's fact probe and scores, and the
    finetuned model's scores."""
    p, py, (bp, real, tune) = profile.birthplace, paths.python, _birthplace_folders(paths)
    # The course's finetuning stage: short and gentle after mixed pretraining; the course's after span corruption.
    epochs_and_rate = ("10", "6e-4") if model.endswith("_span_corruption") else ("2", "1e-4")
    pretrained, finetuned = f"{bp}/{model}_pretrain", f"{bp}/{model}_finetune"
    scoring = _evaluate_common(profile)
    finetune = Step(
        f"bp_{model}_finetune",
        (
            py,
            "recipes/birthplace.py",
            "finetune",
            "--model_name_or_path",
            pretrained,
            "--output_dir",
            finetuned,
            "--num_train_epochs",
            epochs_and_rate[0],
            "--learning_rate",
            epochs_and_rate[1],
            *_birthplace_finetune_args(profile, paths),
            *_recite(p, model),
        ),
    )
    probe = Step(
        f"bp_{model}_probe",
        (
            py,
            "benchmarks/probe_facts.py",
            "--data_dir",
            real,
            "--model_name_or_path",
            pretrained,
            "--recite_tokens",
            str(p.opening_tokens),
        ),
    )
    return (
        finetune,
        [probe, *_evaluate_all(f"bp_{model}_pretrain", pretrained, py, real, tune, scoring)],
        _evaluate_all(f"bp_{model}", finetuned, py, real, tune, scoring),
    )


def _birthplace_nopretrain_step(profile: Profile, paths: Paths) -> Step:
    """No pretraining: the same model shape and tokenizer, finetuned from random weights."""
    p, bp = profile.birthplace, _birthplace_folders(paths)[0]
    return Step(
        "bp_nopretrain_finetune",
        (
            paths.python,
            "recipes/birthplace.py",
            "finetune",
            "--variant",
            "vanilla",
            "--tokenizer_name_or_path",
            f"{bp}/tokenizer",
            *_overrides(p.config_overrides),
            "--output_dir",
            f"{bp}/nopretrain_finetune",
            "--num_train_epochs",
            str(p.nopretrain_epochs),
            "--learning_rate",
            "1e-3",
            *_birthplace_finetune_args(profile, paths),
        ),
    )


def _birthplace_figure_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The dev accuracy of every row, and the headline model's pretraining loss."""
    figures, bp, first = "benchmarks/figures", _birthplace_folders(paths)[0], profile.birthplace.models[0]
    return [
        Step(
            "bp_plot",
            (
                paths.python,
                "benchmarks/plot_birthplace.py",
                "--bench_dir",
                paths.out,
                "--profile",
                profile.name,
                "--output",
                f"{figures}/birthplace_dev_accuracy{profile.suffix}.png",
            ),
            timed=False,
            may_fail=True,
        ),
        Step(
            "bp_loss_figure",
            ("cp", f"{bp}/{first}_pretrain/loss.png", f"{figures}/birthplace_pretrain_loss{profile.suffix}.png"),
            timed=False,
        ),
    ]


def birthplace_steps(profile: Profile, paths: Paths) -> list[Step]:
    """London, then each variant pretrained (causal LM on paragraph openings mixed with the training QA pairs),
    probed, scored, finetuned and scored; and the vanilla model finetuned without pretraining. Nothing is chosen on
    the dev set: 10% of the training questions are held out as a tuning split, and every model is scored on it."""
    bp, real, tune = _birthplace_folders(paths)
    # Three stages of independent steps (side by side where the profile allows it), longest first: what needs only the
    # tokenizer, what needs a pretrained model (finetuning, probe, scores), and the finetuned models' scores.
    training, finetuning, scoring_pretrained, scoring_finetuned = [], [], [], []
    for model in profile.birthplace.models:
        training.append(_birthplace_pretrain_step(profile, paths, model))
        finetune, pretrained_scores, finetuned_scores = _birthplace_after_pretraining(profile, paths, model)
        finetuning.append(finetune)
        scoring_pretrained += pretrained_scores
        scoring_finetuned += finetuned_scores
    training.append(_birthplace_nopretrain_step(profile, paths))
    evaluate_common = _evaluate_common(profile)
    scoring_pretrained += _evaluate_all(
        "bp_nopretrain", f"{bp}/nopretrain_finetune", paths.python, real, tune, evaluate_common
    )
    steps = _birthplace_setup_steps(profile, paths)
    for group, stage in (
        ("bp_training", training),
        ("bp_after_training", finetuning + scoring_pretrained),
        ("bp_after_finetuning", scoring_finetuned),
    ):
        steps += [replace(step, group=group) for step in stage]
    return steps + _birthplace_figure_steps(profile, paths)


def _finetune_args(profile: Profile, paths: Paths) -> tuple[str, ...]:
    """What every sentiment finetuning of the profile shares (the seed and the set-up's flags follow)."""
    p = profile.sentiment
    return (
        "--data_dir",
        f"{paths.data_root}/cls-books",
        "--num_train_epochs",
        str(p.epochs),
        "--per_device_train_batch_size",
        "16",
        "--max_seq_length",
        "256",
        "--per_device_eval_batch_size",
        "64",
        "--lr_scheduler_type",
        "linear",
        "--warmup_steps",
        "20",
        "--weight_decay",
        "0.01",
        "--logging_steps",
        "25",
        *(("--length_buckets",) if p.length_buckets else ()),
        *_common(profile),
    )


def _accuracy_figure(profile: Profile, paths: Paths, name: str) -> Step:
    """The lab's figure: every sentiment row finished in OUT, validation accuracy per epoch."""
    return Step(
        name,
        (
            paths.python,
            "benchmarks/plot_sentiment.py",
            "--bench_dir",
            paths.out,
            "--profile",
            profile.name,
            "--output",
            f"benchmarks/figures/sentiment_valid_accuracy{profile.suffix}.png",
            "--title",
            f"CLS-FR books, validation ({profile.name} profile, mean ± std of seeds)",
        ),
        timed=False,
    )


def _sentiment_folders(paths: Paths) -> tuple[str, str, str]:
    """The sentiment pipelines' run folder, the labelled reviews, and the prepared LM corpus."""
    return f"{paths.out}/sentiment", f"{paths.data_root}/cls-books", f"{paths.out}/data/sentiment-corpus"


def _sentiment_data_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The LM corpus, the TF-IDF reference line and the BPE tokenizer."""
    p, py, (se, cls, corpus) = profile.sentiment, paths.python, _sentiment_folders(paths)
    return [
        Step(
            "se_prepare_data",
            (
                py,
                "recipes/prepare_data.py",
                "sentiment-corpus",
                "--data_root",
                paths.data_root,
                "--out",
                f"{paths.out}/data",
                "--news_lines",
                str(p.news_lines),
                "--novel_lines",
                str(p.novel_lines),
            ),
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
            (
                py,
                "tokenizer/train_tokenizer.py",
                "--files",
                f"{corpus}/pretrain.txt",
                "--vocab_size",
                str(p.vocab_size),
                "--output_dir",
                f"{se}/tokenizer",
                "--no_progress",
                "--overwrite_output_dir",
            ),
        ),
    ]


def _sentiment_lm_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The causal LM on the French corpus, then its second stage on the training reviews alone."""
    p, (se, _, corpus) = profile.sentiment, _sentiment_folders(paths)
    lm_model = ("--model_config", p.model_config, *_overrides(p.config_overrides))
    lm_args = (
        "--objective",
        "clm",
        "--block_size",
        str(p.lm_block_size),
        "--per_device_train_batch_size",
        str(p.batch_size),
        "--per_device_eval_batch_size",
        "64",
        "--weight_decay",
        "0.01",
        "--logging_steps",
        "50",
        *_common(profile),
    )
    pretrain = (paths.python, "recipes/pretrain.py")
    return [
        Step(
            "se_pretrain",
            (
                *pretrain,
                "--train_files",
                f"{corpus}/pretrain.txt",
                "--validation_split_percentage",
                "1",
                "--max_eval_samples",
                "200",
                "--tokenizer_name_or_path",
                f"{se}/tokenizer",
                *lm_model,
                "--output_dir",
                f"{se}/pretrain",
                "--max_steps",
                str(p.pretrain_steps),
                "--learning_rate",
                "1e-3",
                "--lr_scheduler_type",
                "cosine",
                "--warmup_steps",
                "100",
                *lm_args,
            ),
        ),
        Step(
            "se_domain",
            (
                *pretrain,
                "--train_files",
                f"{corpus}/reviews.txt",
                "--validation_split_percentage",
                "5",
                "--model_name_or_path",
                f"{se}/pretrain",
                "--output_dir",
                f"{se}/domain",
                "--num_train_epochs",
                str(p.domain_epochs),
                "--learning_rate",
                "3e-4",
                "--lr_scheduler_type",
                "linear",
                "--warmup_steps",
                "20",
                *lm_args,
            ),
        ),
    ]


def _lp_ft_steps(profile: Profile, paths: Paths, seed: int) -> list[Step]:
    """LP-FT with one seed, from scratch and from the target-domain backbone (which keeps its probe)."""
    p, se = profile.sentiment, _sentiment_folders(paths)[0]
    model = ("--model_config", p.model_config, *_overrides(p.config_overrides))
    finetune = (paths.python, "recipes/finetune_sentiment.py")
    # LP-FT reads every layer (mean and max): a linear probe of those features gave 74.75 % on validation where
    # the last layer's mean gave 69.0 % (BENCHMARKS.md, "What the frozen features hold"); the L2 of the probe
    # is chosen by 5-fold cross-validation on the training reviews.
    probe_args = (
        *_finetune_args(profile, paths),
        "--seed",
        str(seed),
        "--classifier_pooling",
        "all_layers",
        "--head_init",
        "linear_probe",
    )
    return [
        Step(
            f"se_scratch_lp_ft_seed{seed}",
            (
                *finetune,
                "--from_scratch",
                "--tokenizer_name_or_path",
                f"{se}/tokenizer",
                *model,
                "--learning_rate",
                "5e-4",
                "--output_dir",
                f"{se}/scratch_lp_ft_seed{seed}",
                *probe_args,
            ),
            group="se_finetune",
        ),
        Step(
            f"se_pretrained_lp_ft_seed{seed}",
            (
                *finetune,
                "--model_name_or_path",
                f"{se}/domain",
                "--learning_rate",
                "3e-4",
                "--output_dir",
                f"{se}/pretrained_lp_ft_seed{seed}",
                *probe_args,
                "--save_linear_probe",
            ),
            group="se_finetune",
        ),
    ]


def sentiment_steps(profile: Profile, paths: Paths) -> list[Step]:
    """Issue 18's rows, ALTeGraD-lab style: a BPE tokenizer and a causal LM pretrained on French news and novels (+
    the unlabeled training reviews), a second LM stage on the training reviews alone (ULMFiT's target-domain stage;
    never a validation or test review), then LP-FT with the profile's seeds: the head fitted as a linear probe of
    the frozen features (every layer's mean and max), then the whole model finetuned, from scratch and pretrained.
    The pretrained run keeps its probe alone as the frozen backbone's row (`--save_linear_probe`). Then the figures.
    The lab's own three rows are the `sentiment_lab` pipeline."""
    steps = _sentiment_data_steps(profile, paths) + _sentiment_lm_steps(profile, paths)
    for seed in profile.sentiment.seeds:
        steps += _lp_ft_steps(profile, paths, seed)
    se = _sentiment_folders(paths)[0]
    return steps + [
        _accuracy_figure(profile, paths, "se_plot"),
        Step(
            "se_loss_figure",
            ("cp", f"{se}/pretrain/loss.png", f"benchmarks/figures/sentiment_pretrain_loss{profile.suffix}.png"),
            timed=False,
        ),
    ]


def sentiment_lab_steps(profile: Profile, paths: Paths) -> list[Step]:
    """The lab's three rows, from the `sentiment` pipeline's tokenizer and target-domain backbone (run it first):
    from scratch, pretrained, and the pretrained backbone frozen under a new head (4 epochs of AdamW), each read
    through the profile's pooling; then the figure again, with them."""
    p, se = profile.sentiment, f"{paths.out}/sentiment"
    model = ("--model_config", p.model_config, *_overrides(p.config_overrides))
    finetune, steps = (paths.python, "recipes/finetune_sentiment.py"), []
    for seed in p.seeds:
        seed_args = (*_finetune_args(profile, paths), "--seed", str(seed), "--classifier_pooling", p.pooling)
        steps += [
            Step(
                f"se_scratch_seed{seed}",
                (
                    *finetune,
                    "--from_scratch",
                    "--tokenizer_name_or_path",
                    f"{se}/tokenizer",
                    *model,
                    "--learning_rate",
                    "5e-4",
                    "--output_dir",
                    f"{se}/scratch_seed{seed}",
                    *seed_args,
                ),
                group="se_finetune",
            ),
            Step(
                f"se_pretrained_seed{seed}",
                (
                    *finetune,
                    "--model_name_or_path",
                    f"{se}/domain",
                    "--learning_rate",
                    "3e-4",
                    "--output_dir",
                    f"{se}/pretrained_seed{seed}",
                    *seed_args,
                ),
                group="se_finetune",
            ),
            Step(
                f"se_frozen_seed{seed}",
                (
                    *finetune,
                    "--model_name_or_path",
                    f"{se}/domain",
                    "--freeze_backbone",
                    "--learning_rate",
                    "3e-3",
                    "--output_dir",
                    f"{se}/frozen_seed{seed}",
                    *seed_args,
                ),
                group="se_finetune",
            ),
        ]
    return [*steps, _accuracy_figure(profile, paths, "se_lab_plot")]


# In running order: `sentiment_lab` reads what `sentiment` made (`PIPELINE_NEEDS`): its tokenizer and the review
# stage's backbone. On a GPU machine it starts as soon as that stage has finished (`PIPELINE_STARTS_AFTER`), beside
# the LP-FT finetunings: both pipelines of the `gpu_large` profile in 489 s on an H200 (BENCHMARKS.md).
PIPELINES = {"birthplace": birthplace_steps, "sentiment": sentiment_steps, "sentiment_lab": sentiment_lab_steps}
PIPELINE_NEEDS = {"sentiment_lab": "sentiment"}
PIPELINE_STARTS_AFTER = {"sentiment_lab": "se_domain"}


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
    return {name: build(PROFILES[profile], paths) for name, build in PIPELINES.items()}


# --------------------------------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------------------------------
CPU_THREADS = 2  # the CPU profile's machine: 2 cores
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
# glibc hands every freed block over 32 MB back to the kernel, and the next step faults it in again page by page:
# the 16k LM's logits (4,096 x 16,000 floats) and their gradients made 135,000 page faults a second, a quarter of
# its CPU time in the kernel. Freed memory stays in the heap instead: an LM step 18 % faster (BENCHMARKS.md,
# "Allocator"). The caller's own settings win.
ALLOCATOR = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(64 << 30), "MALLOC_TOP_PAD_": str(1 << 30)}


def step_environment(**extra: str) -> dict[str, str]:
    """The steps' environment: offline, and `hf_models` imported from this tree. A script's own folder comes first
    on sys.path, not the working directory, so without PYTHONPATH a worktree that shares the main checkout's venv
    would run the main checkout's `hf_models` (the editable install points there), whose code may change mid-run.
    glibc's allocator keeps freed memory (`ALLOCATOR`) unless the caller set its variables."""
    paths = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**ALLOCATOR, **os.environ, **OFFLINE, "PYTHONPATH": os.pathsep.join(paths), **extra}


def _shown(line: str) -> bool:
    """The log lines a pipeline's log repeats after each step: scores, the end of a run, a plateau warning."""
    return "Correct:" in line or "PLATEAU" in line or line.startswith("Completed")


_timings_lock = threading.Lock()


def run_step(step: Step, out: Path, env: dict[str, str], log) -> bool:
    """Run one step with its output in OUT/log_NAME.txt; a timed step that succeeds gets its line in timings.tsv."""
    print(
        f"=== [{time.strftime('%H:%M:%S', time.gmtime())}] {step.name}: {' '.join(step.command)}", file=log, flush=True
    )
    step_log = out / f"log_{step.name}.txt"
    start = time.monotonic()
    with open(step_log, "w", encoding="utf-8") as output:
        command = ("nice", "-n", "5", *step.command) if step.timed else step.command
        code = subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT).returncode
    took = int(time.monotonic() - start)
    lines = step_log.read_text(encoding="utf-8", errors="replace").splitlines()
    if code != 0:
        print(f"FAILED: {step.name} (see {step_log})", *lines[-20:], sep="\n", file=log, flush=True)
        return False
    if step.timed:
        with _timings_lock, open(out / "timings.tsv", "a", encoding="utf-8") as timings:
            timings.write(f"{step.name}\t{took}\t{' '.join(step.command)}\n")
    print(*filter(_shown, lines), sep="\n", file=log)
    print(f"    done in {took}s", file=log, flush=True)
    return True


def _side_by_side(step: Step, side_by_side: bool | tuple[str, ...]) -> bool:
    """Whether the profile runs `step`'s group side by side (`side_by_side`: every group, none, or the groups named)."""
    return bool(step.group) and (side_by_side if isinstance(side_by_side, bool) else step.group in side_by_side)


def batches(steps: list[Step], side_by_side: bool | tuple[str, ...]) -> list[list[Step]]:
    """The steps in running order: runs of consecutive steps of one group together when that group runs side by side."""
    result: list[list[Step]] = []
    for step in steps:
        if _side_by_side(step, side_by_side) and result and result[-1][0].group == step.group:
            result[-1].append(step)
        else:
            result.append([step])
    return result


def finished_steps(out: Path, steps: list[Step], rerun: tuple[str, ...] = ()) -> set[str]:
    """The timed steps whose line in timings.tsv has the very command they would run now: done by an earlier,
    interrupted run of the same plan (`run --resume` skips them), less those matching a `rerun` pattern."""
    timings = out / "timings.tsv"
    if not timings.exists():
        return set()
    recorded = {}
    for line in timings.read_text(encoding="utf-8").splitlines():
        name, _, command = line.split("\t", 2)
        recorded[name] = command
    return {
        step.name
        for step in steps
        if step.timed
        and recorded.get(step.name) == " ".join(step.command)
        and not any(fnmatch.fnmatchcase(step.name, pattern) for pattern in rerun)
    }


def pools(steps: list[Step], side_by_side: bool | tuple[str, ...]) -> list[list[Step]]:
    """`batches`, with consecutive side-by-side groups joined into one pool; a step that runs alone stays alone."""
    result: list[list[Step]] = []
    joined = False
    for step in steps:
        together = _side_by_side(step, side_by_side)
        if together and joined:
            result[-1].append(step)
        else:
            result.append([step])
        joined = together
    return result


def _written(step: Step) -> str | None:
    """The folder a step makes (its `--output_dir`), unless it only adds its scores to the model it reads."""
    output = _value(step.command, "--output_dir")
    return None if output == _value(step.command, "--model_name_or_path") else output


def _value(command: tuple[str, ...], flag: str) -> str | None:
    return command[command.index(flag) + 1] if flag in command[:-1] else None


def step_dependencies(steps: list[Step]) -> dict[str, set[str]]:
    """For each step, the earlier steps of `steps` that make a folder it reads or writes into (a tokenizer, a model,
    the model folder an evaluation writes its scores to)."""
    needs: dict[str, set[str]] = {}
    for index, step in enumerate(steps):
        folders = {(earlier.name, _written(earlier)) for earlier in steps[:index]}
        needs[step.name] = {
            name
            for name, folder in folders
            if folder and any(arg == folder or arg.startswith(f"{folder}/") for arg in step.command)
        }
    return needs


def _run_pool(pool: list[Step], out: Path, env: dict[str, str], log, threads: int | None) -> bool:
    """Run the steps of a pool, each as soon as a worker is free and its dependencies are done, in the pool's order
    otherwise. False when a step that may not fail failed: the running steps finish, no new one starts."""
    workers, step_env = len(pool), env
    if threads is not None:
        workers = min(len(pool), threads)
        # A step alone on the CPU has every core, for torch and for the tokenizers library (its BPE training and
        # batch encoding run in threads); steps side by side get one share each and encode in one thread.
        step_env = {
            **env,
            "OMP_NUM_THREADS": str(max(1, threads // workers)),
            "TOKENIZERS_PARALLELISM": "true" if workers == 1 else "false",
        }
    waiting, pending, running, ok = step_dependencies(pool), list(pool), {}, True
    with ThreadPoolExecutor(max_workers=workers) as executor:
        while running or (ok and pending):
            for step in [step for step in pending if not waiting[step.name]][: workers - len(running) if ok else 0]:
                pending.remove(step)
                running[executor.submit(run_step, step, out, step_env, log)] = step
            if not running:
                raise RuntimeError(f"no step of {[step.name for step in pending]} can start")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                step = running.pop(future)
                ok = ok and (future.result() or step.may_fail)
                for needs in waiting.values():
                    needs.discard(step.name)
    return ok


def run_pipeline(
    name: str,
    steps: list[Step],
    out: Path,
    env: dict[str, str],
    failed: list[str],
    side_by_side: bool | tuple[str, ...],
    threads: int | None = None,
) -> None:
    """Run the steps in order, each pool side by side. `threads`: the CPU threads the pipeline has; a pool then
    runs on at most that many workers, each step with its share (OMP_NUM_THREADS). None: all at once (a GPU)."""
    with open(out / f"{name}_run.log", "a", encoding="utf-8") as log:
        for pool in pools(steps, side_by_side):
            if not _run_pool(pool, out, env, log, threads):
                failed.append(name)
                print(f"{name} failed, see {out / f'{name}_run.log'}", flush=True)
                return


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


def forget_timings(out: Path, steps: list[Step]) -> None:
    """Drop the timings.tsv lines of the steps about to run, so that a run of one pipeline keeps the other's."""
    timings, names = out / "timings.tsv", {step.name for step in steps}
    if timings.exists():
        lines = timings.read_text(encoding="utf-8").splitlines(keepends=True)
        timings.write_text("".join(line for line in lines if line.split("\t", 1)[0] not in names), encoding="utf-8")


def run(profile: str, pipelines: list[str], resume: bool = False, rerun: tuple[str, ...] = ()) -> int:
    """The pipelines (one at a time on both CPU cores, or side by side on a GPU machine), then the results file
    and the throughput benchmark. Exit status 1 when anything failed. `resume`: the timed steps an earlier run
    finished with the same command are kept, not run again, except those matching a `rerun` pattern."""
    paths = Paths.from_environment()
    out, steps = Path(paths.out), plan(profile, paths)
    if rerun:
        if not resume:
            raise SystemExit(
                "--rerun names steps to run again within a --resume run; without --resume every step runs"
            )
        names = [step.name for name in pipelines for step in steps[name]]
        unmatched = [pattern for pattern in rerun if not fnmatch.filter(names, pattern)]
        if unmatched:
            raise SystemExit(
                f"--rerun: no step of {', '.join(pipelines)} matches {', '.join(unmatched)} "
                "(`plan.py show` lists the steps)"
            )
    out.mkdir(parents=True, exist_ok=True)
    if resume:
        done = finished_steps(out, [step for name in pipelines for step in steps[name]], rerun)
        steps = {name: [step for step in pipeline if step.name not in done] for name, pipeline in steps.items()}
        print(f"resuming: {len(done)} finished steps kept ({', '.join(sorted(done)) or 'none'})")
    else:
        for name in pipelines:
            (out / f"{name}_run.log").unlink(missing_ok=True)
    forget_timings(out, [step for name in pipelines for step in steps[name]])
    start, failed = time.monotonic(), []
    print(f"profile {profile}, started {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, outputs in {out}")
    if PROFILES[profile].on_gpu:  # the GPU machine has cores to spare: tokenizers may use them all
        env = step_environment(OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), TOKENIZERS_PARALLELISM="true")
        side_by_side = PROFILES[profile].side_by_side
        threads = [
            threading.Thread(target=run_chain, args=(chain, steps, out, env, failed, side_by_side))
            for chain in chains(pipelines)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:  # each pipeline on both cores (1.5-1.9x the speed of one core), its side-by-side groups on one core each
        env, side_by_side = step_environment(OMP_NUM_THREADS=str(CPU_THREADS)), PROFILES[profile].side_by_side
        for name in [name for name in PIPELINES if name in pipelines]:
            if PIPELINE_NEEDS.get(name) in failed:
                failed.append(name)
                print(f"{name} not run: {PIPELINE_NEEDS[name]} failed", flush=True)
                continue
            began = time.monotonic()
            run_pipeline(name, steps[name], out, env, failed, side_by_side, threads=CPU_THREADS)
            print(f"{name}: {time.monotonic() - began:.0f} s ({time.monotonic() - start:.0f} s since the start)")
    if "birthplace" in pipelines:
        log = (out / "birthplace_run.log").read_text(encoding="utf-8").splitlines()
        for line in log:
            if "Correct:" in line or "Completed" in line:
                print(line)
    print(f"quality benchmarks: {time.monotonic() - start:.0f} s")
    if set(pipelines) != set(PIPELINES):  # results.json and the throughput rows come from a whole run only
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
        help="cpu: 2 cores, about an hour per course; gpu: one GPU, bf16, larger runs",
    )
    parser.add_argument(
        "--pipeline", nargs="+", choices=sorted(PIPELINES), default=list(PIPELINES), help="which courses"
    )
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
    if args.action == "run":
        return run(args.profile, args.pipeline, args.resume, tuple(args.rerun))
    for name, steps in plan(args.profile).items():
        if name in args.pipeline:
            print(f"# {name}", *(f"{step.name}\t{' '.join(step.command)}" for step in steps), sep="\n")
    return 0


if __name__ == "__main__":
    from hf_models.safety import command_line  # here only: the plan itself needs neither torch nor transformers

    sys.exit(command_line(main, sys.argv[1:]))
