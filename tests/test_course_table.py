"""benchmarks/course_table.py: each course's reported numbers beside ours, read from a profile's run records; a row
not run says so. And the course profiles (benchmarks/profiles/course*.yaml): the courses' own chains, one command each."""

from __future__ import annotations

import json
from pathlib import Path

import course_table
import grid
import pytest
from test_write_results import _bench, _birthplace_run, _sentiment_run

from hf_models.run_record import Evaluation, RunRecord
from hf_models.safety import command_line

REPO_ROOT = Path(__file__).resolve().parent.parent


def _course_bench(bench: Path) -> None:
    """The course-cut profile's runs: London, the vanilla models, a synthesizer not run; the lab's rows, 2 seeds."""
    record = RunRecord(task="birthplace-evaluation", objective="qa")
    record.add_evaluation(Evaluation("validation", {"exact_match": 0.05}, 500, baseline="london_baseline"))
    record.save(bench / "birthplace/london")
    _birthplace_run(bench / "birthplace/nopretrain_finetune", 0.012, 0.0, "Oslo")
    _birthplace_run(bench / "birthplace/vanilla_finetune", 0.144, 0.0, "Paris")
    curves = {42: ([0.60, 0.77], [0.75, 0.80]), 43: ([0.62, 0.79], [0.77, 0.78])}
    for seed, (scratch, pretrained) in curves.items():
        _sentiment_run(bench / f"sentiment/scratch_seed{seed}", scratch, "1")
        _sentiment_run(bench / f"sentiment/pretrained_seed{seed}", pretrained, "0")


def test_the_course_tables_put_the_courses_numbers_beside_ours(tmp_path) -> None:
    _course_bench(tmp_path)
    table = course_table.cs224n_table("course-cut", tmp_path).splitlines()
    assert "| vanilla, no pretraining | far below 10 % | 1.2 % | vanilla_nopretrain |" in table
    assert "| vanilla, pretrained, then finetuned | ≥ 10 % (the bar) | 14.4 % | vanilla_finetuned |" in table
    assert "| synthesizer, pretrained, then finetuned | ≥ 5 % (the bar) | not run | synthesizer_finetuned |" in table
    assert '| London: "London" to every question | 5.0 % | 5.0 % | london |' in table
    assert not [line for line in table if "ours alone" in line]  # the course profile has the course's rows alone
    assert table[-1].startswith(f"Figure: {tmp_path}/figures/birthplace_dev_accuracy.png")  # the run's own

    lab = course_table.altegrad_table("course-cut", tmp_path).splitlines()
    assert "| from scratch | 65 % | 61.00 % | 78 % | 78.00 % ± 1.41 | 2 |" in lab
    assert "| pretrained, then finetuned | 76 % | 76.00 % | 80 % | 79.00 % ± 1.41 | 2 |" in lab
    assert "| pretrained, backbone frozen | — | — | — | not run | 0 |" in lab


def test_a_benchmark_profiles_table_names_its_headline_models(tmp_path) -> None:
    """Of the CPU profile, the course's vanilla row is our first vanilla model as its headline (on a tie of
    the tuning split, finetuned), and every other row of ours follows."""
    _bench(tmp_path)
    table = course_table.cs224n_table("cpu", tmp_path).splitlines()
    assert "| vanilla, pretrained, then finetuned | ≥ 10 % (the bar) | 62.8 % | vanilla_recite_finetuned |" in table
    synthesizer = (
        "| synthesizer, pretrained, then finetuned | ≥ 5 % (the bar) | 11.0 % | synthesizer_recite_finetuned |"
    )
    assert synthesizer in table
    assert "| ours alone | | 63.0 % | vanilla_recite_pretrain_only |" in table
    lab = "\n".join(course_table.altegrad_table("cpu", tmp_path).splitlines())
    assert "| pretrained_lp_ft (ours alone) | | 73.00 % | | 73.50 % ± 2.00 | 3 |" in lab


def test_the_course_profiles_run_the_courses_own_chains() -> None:
    profile = grid.load("course")
    assert list(profile.pipelines) == ["birthplace", "sentiment"]
    steps = {pipeline: [s for s in profile.steps.values() if s.pipeline == pipeline] for pipeline in profile.pipelines}
    birthplace = {step.name: step.command("py", "out", "data") for step in steps["birthplace"]}
    assert list(birthplace)[:1] == ["bp_london"] and "bp_tokenizer" not in birthplace  # the course's characters
    assert {name for name in birthplace if "_eval_" in name} == {
        f"bp_{model}_finetune_eval_{split}"
        for model in ("vanilla", "synthesizer", "nopretrain")
        for split in ("dev", "test")
    }  # no tuning split: the course chooses nothing
    # --course_vocabulary is pretrain's: the model without pretraining takes the characters the first pretraining built
    nopretrain = birthplace["bp_nopretrain_finetune"]
    assert nopretrain[nopretrain.index("--tokenizer_name_or_path") + 1] == "out/birthplace/vanilla_pretrain"
    assert birthplace["bp_synthesizer_pretrain"][3] == "configs/cs224n/course/pretrain_synthesizer.json"
    assert list(birthplace)[-1] == "bp_course_table"
    sentiment = [step.name for step in steps["sentiment"]]
    assert sentiment[0] == "se_pretrain" and sentiment[-1] == "se_course_table"
    assert len([name for name in sentiment if "_seed" in name]) == 3 * 3
    lm = steps["sentiment"][0].command("py", "out", "data")
    assert lm[lm.index("--lab_vocabulary") + 1] == "data/cls-books"
    assert profile.rows["sentiment"][1].steps[0] == "se_pretrain"
    assert grid.load("course-cut").rows == profile.rows  # the cut: the same chain and rows, its own config files


def batch(config: dict) -> int:
    return config.get("per_device_train_batch_size", 8) * config.get("gradient_accumulation_steps", 1)


def optimizer_steps(config: dict) -> float | None:
    """A number proportional to the run's optimizer steps (its max_steps, or its epochs over its batch); None when
    it does not train."""
    if config.get("max_steps", -1) > 0:
        return config["max_steps"]
    return config["num_train_epochs"] / batch(config) if "num_train_epochs" in config else None


# What the GPU run (`course`) may change to fit the device time: the batch (with the rate, scaled by its square root
# or kept), bf16, the loader's workers, compilation (with CUDA graphs; `tf32 false` keeps an fp32 run in fp32, which
# Trainer's compilation would turn to TF32) and the model's chunked loss, which change no arithmetic beyond rounding.
# The cut (`course-cut`) keeps the course's own values.
GPU_SCALING = {
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "learning_rate",
    "bf16",
    "dataloader_num_workers",
    "dataloader_persistent_workers",
    "torch_compile",
    "torch_compile_mode",
    "tf32",
}
GPU_MODEL_OVERRIDES = ("loss_chunk_size",)


def without_gpu_overrides(config: dict) -> dict:
    """The config with the GPU's own model overrides (GPU_MODEL_OVERRIDES) taken out of `config_overrides`."""
    if "config_overrides" not in config:
        return config
    kept = [o for o in config["config_overrides"].split(",") if o.split("=")[0] not in GPU_MODEL_OVERRIDES]
    return {**config, "config_overrides": ",".join(kept)}


def test_the_cut_differs_from_the_course_in_its_epochs_steps_and_gpu_scaling_alone() -> None:
    """course-cut: the course's settings with fewer epochs or steps, and the schedule's cycles and warm-up steps
    that follow from them (the course's learning rate at a step is the same; docs/courses.md). course: the same
    epochs, with the GPU's scaling: a larger batch keeps the rate or scales it by the square root of the batch's
    ratio."""
    course = REPO_ROOT / "configs"
    for folder in ("cs224n", "altegrad"):
        full = {
            path.name: without_gpu_overrides(json.loads(path.read_text()))
            for path in (course / folder / "course").glob("*.json")
        }
        cut = {path.name: json.loads(path.read_text()) for path in (course / folder / "course-cut").glob("*.json")}
        assert set(full) == set(cut)
        for name, values in full.items():
            keys = set(values) | set(cut[name])
            changed = {key for key in keys if values.get(key) != cut[name].get(key)}
            allowed = {"num_train_epochs", "max_steps", "lr_scheduler_kwargs", "warmup_steps", *GPU_SCALING}
            assert changed <= allowed, (folder, name)
            if "lr_scheduler_kwargs" in changed:
                ratio = cut[name]["num_train_epochs"] / values["num_train_epochs"]
                cycles = values["lr_scheduler_kwargs"]["num_cycles"], cut[name]["lr_scheduler_kwargs"]["num_cycles"]
                assert abs(cycles[1] - cycles[0] * ratio) < 1e-4, (folder, name)
            # The warm-up is the same share of the run: scaled by the cut's ratio of optimizer steps, to the step
            # (the lab's LM: 100 of 6,000 steps, so 1 of the cut's 80, whose rate then peaks and decays).
            if optimizer_steps(values) is not None:
                steps = optimizer_steps(cut[name]) / optimizer_steps(values)
                warmup = values.get("warmup_steps", 0), cut[name].get("warmup_steps", 0)
                assert warmup[1] == round(warmup[0] * steps), (folder, name, warmup, steps)

            if "learning_rate" in values:
                growth, rate = batch(values) / batch(cut[name]), values["learning_rate"] / cut[name]["learning_rate"]
                assert min(abs(rate - 1), abs(rate - growth**0.5)) < 1e-3, (folder, name, growth, rate)


def test_one_course_runs_its_own_pipelines() -> None:
    """`make altegrad` runs the lab's pipelines of the profile (not the curve, which no course has), `make cs224n`
    the birthplace one."""
    assert grid.load("course-cut").course_pipelines("altegrad") == ["sentiment"]
    assert grid.load("cpu").course_pipelines("altegrad") == ["sentiment", "sentiment_lab"]
    assert grid.load("cpu").course_pipelines("cs224n") == ["birthplace"]


@pytest.mark.parametrize("output", ["birthplace/london/run_record.json", "birthplace/london"])
def test_a_table_never_goes_over_a_runs_files(tmp_path, capsys, output) -> None:
    _course_bench(tmp_path)
    before = (tmp_path / "birthplace/london/run_record.json").read_bytes()
    arguments = ["cs224n", "--bench_dir", str(tmp_path), "--profile", "course-cut", "--output", str(tmp_path / output)]
    assert command_line(course_table.main, arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --output") and error.count("\n") == 1
    assert (tmp_path / "birthplace/london/run_record.json").read_bytes() == before
