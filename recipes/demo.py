#!/usr/bin/env python
"""`make demo`: pretraining lets a small Transformer answer questions about people it was never finetuned on.

The CS224N birthplace pipeline, end to end, offline, on CPU:

  1. train a BPE tokenizer on the pretraining corpus (wiki.txt) and the training questions;
  2. pretrain on wiki.txt with span corruption;
  3. finetune question answering on the training people (`Where was X born?` -> place), twice:
     from the pretrained model, and from scratch;
  4. greedy-decode the answers for the held-out people (birth_dev.tsv, never seen in finetuning);
  5. print the accuracy with pretraining, without pretraining, and of always answering the most
     common training birthplace.

With no `--data_dir`, the data is a synthetic knowledge task from a seeded generator: a few hundred
fictional people, each with a paragraph stating the birthplace in one of several phrasings, among other
facts that name other places. `--data_dir ../shared/data/birthplace` runs the same pipeline on the real
CS224N data at a CPU-sized budget. `--quick` is the shortened version the test suite runs. Each setting is a file
of configs/demo/ (its README says why each value).

    python recipes/demo.py [--data_dir DIR] [--output_dir runs/demo] [--quick] [--seed 0]
"""

import argparse
import contextlib
import json
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from hf_models.environment import go_offline
from hf_models.safety import check_flag_ranges, command_line, used_files
from hf_models.safety.ranges import POSITIVE, SEED
from hf_models.textio import UsageError, atomic_write_text
from hf_models.training.arguments import HelpFormatter, ModelArguments, read_arguments_file

go_offline()  # before transformers and datasets read it (the demo runs everything in-process)

# The settings: configs/demo/NAME.json. torch, transformers and datasets are imported once the flags are accepted.
SETTINGS_DIR = Path(__file__).resolve().parents[1] / "configs" / "demo"


def read_setting(name: str) -> dict:
    """configs/demo/NAME.json: the tokenizer's size, the model, each training's Trainer arguments (and the synthetic
    task's number of people)."""
    return read_arguments_file(str(SETTINGS_DIR / f"{name}.json"))


def _correct(score: dict) -> str:
    # The line birthplace.py prints (CS224N's format), the percentage to one decimal.
    return f"Correct: {score['correct']} out of {score['total']}: {100.0 * score['correct'] / score['total']:.1f}%"


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"


def _logging_steps(num_examples: int, options: dict) -> int:
    # About 15 loss lines per run: enough for the curves, few enough to read.
    steps = -(-num_examples // options["per_device_train_batch_size"]) * options["num_train_epochs"]
    return max(5, steps // 15)


def _run(
    logs: Path,
    name: str,
    step: Callable[..., dict],
    model_args: ModelArguments,
    bp_args,
    **training,
) -> dict:
    """One step of `hf_models.tasks.birthplace`; its printed metrics go to logs/NAME.log, while Trainer's progress
    bars (stderr) stay on screen and its per-step logs go to the run's trainer_state.json and loss.png."""
    from transformers import TrainingArguments

    from hf_models.training import setup_run

    training_args = TrainingArguments(**training)
    with open(logs / f"{name}.log", "w", encoding="utf-8") as log, contextlib.redirect_stdout(log):
        setup_run(training_args)
        return step(model_args, bp_args, training_args)


def _print_table(scores: dict[str, dict], place: str, elapsed: float) -> None:
    rows = [
        ("pretrained (span corruption) + finetuned", scores["with pretraining"]),
        ("finetuned only, no pretraining", scores["without pretraining"]),
        (f'always "{place}" (most common place)', scores["most common place"]),
    ]
    width = max(len(name) for name, _ in rows)
    print()
    print(f"Birthplace accuracy on {rows[0][1]['total']} held-out people (never seen in finetuning)")
    print(f"| {'model'.ljust(width)} | correct | accuracy |")
    print(f"|{'-' * (width + 2)}|---------|----------|")
    for name, score in rows:
        correct = f"{score['correct']}/{score['total']}"
        print(f"| {name.ljust(width)} | {correct:>7} | {100 * score['exact_match']:7.1f}% |")
    print(f"Wall time: {_minutes(elapsed)}")


def _finetune_and_score(out: Path, setting: dict, bp_args, num_questions: int, common: dict, overwrite: dict):
    """3. Finetuning, with and without pretraining (same tokenizer, architecture and budget), then 4. greedy
    decoding of the held-out people's answers, scored by exact match."""
    from hf_models.tasks.birthplace import evaluate_answers, finetune
    from hf_models.training import last_or_mean_loss

    runs = {
        "with pretraining": ("finetune", ModelArguments(model_name_or_path=str(out / "pretrain"), **overwrite)),
        "without pretraining": (
            "finetune_scratch",
            ModelArguments(
                tokenizer_name_or_path=str(out / "tokenizer"),
                config_overrides=setting["config_overrides"],
                **overwrite,
            ),
        ),
    }
    scores, options = {}, setting["finetune"]
    for label, (name, model_args) in runs.items():
        run_dir = str(out / name)
        steps = _logging_steps(num_questions, options)
        metrics = _run(
            out / "logs",
            name,
            finetune,
            model_args,
            bp_args,
            output_dir=run_dir,
            logging_steps=steps,
            **options,
            **common,
        )
        print(f"[demo] 3. finetuned {label}: final loss {last_or_mean_loss(metrics):.3f}")
        scores[label] = _run(
            out / "logs",
            f"evaluate_{name}",
            evaluate_answers,
            ModelArguments(model_name_or_path=run_dir, **overwrite),
            bp_args,
            output_dir=run_dir,
            log_level="warning",
        )
        print(f"[demo] 4. held-out people, {label}: {_correct(scores[label])}")
    return scores


def run_demo(
    data_dir: str | None = None,
    output_dir: str = "runs/demo",
    quick: bool = False,
    seed: int = 0,
    overwrite_output_dir: bool = False,
) -> dict[str, dict]:
    """Run the whole pipeline and return the three scores (`correct`, `total`, `exact_match` each). An earlier demo
    in `output_dir` is refused unless `overwrite_output_dir`."""
    from hf_models.data import DataWarning, load_birthplace
    from hf_models.data.synthetic import write_synthetic_birthplace
    from hf_models.tasks.birthplace import BirthplaceArguments, evaluate_answers, pretrain
    from hf_models.textio import iter_text_lines
    from hf_models.tokenization import train_bpe_tokenizer
    from hf_models.training import last_or_mean_loss

    start = time.perf_counter()
    out = Path(output_dir)
    earlier = [name for name in ("tokenizer", "pretrain", "finetune", "finetune_scratch") if used_files(out / name)]
    if earlier and not overwrite_output_dir:
        raise UsageError(
            f"--output_dir {out} holds an earlier demo ({', '.join(earlier)}); pick a new folder, or add "
            "--overwrite_output_dir to replace it"
        )
    setting_name = "real" if data_dir else "quick" if quick else "synthetic"
    setting = read_setting(setting_name)
    if data_dir is None:
        data_dir = str(write_synthetic_birthplace(out / "data", num_people=setting["num_people"], seed=seed))
        print(f"[demo] synthetic birthplace task (seed {seed}) written to {data_dir}")
    qa = load_birthplace(data_dir)  # reports the real dev file's tab-less rows, once: each step reloads the data
    warnings.filterwarnings("ignore", category=DataWarning)
    print(f"[demo] {len(qa['train'])} training people, {len(qa['validation'])} held-out people")

    # 1. Tokenizer: the pretraining corpus and the training questions (never the held-out ones).
    paragraphs = list(iter_text_lines(Path(data_dir) / "wiki.txt"))
    texts = paragraphs + list(qa["train"]["question"])
    vocab_size = setting["tokenizer_vocab_size"]
    tokenizer = train_bpe_tokenizer(texts, vocab_size, output_dir=out / "tokenizer", show_progress=False)
    print(f"[demo] 1. tokenizer: {len(tokenizer)} tokens ({_minutes(time.perf_counter() - start)})")
    print(f"[demo] pretraining corpus: {len(paragraphs)} wiki.txt paragraphs")
    (out / "logs").mkdir(parents=True, exist_ok=True)
    common = {"seed": seed, "use_cpu": True, "report_to": "none", "save_strategy": "no", "log_level": "warning"}
    bp_args = BirthplaceArguments(data_dir=data_dir)

    # 2. Pretraining with span corruption.
    overwrite = {"overwrite_output_dir": overwrite_output_dir}
    model_args = ModelArguments(
        tokenizer_name_or_path=str(out / "tokenizer"), config_overrides=setting["config_overrides"], **overwrite
    )
    steps = _logging_steps(len(paragraphs), setting["pretrain"])
    metrics = _run(
        out / "logs",
        "pretrain",
        pretrain,
        model_args,
        bp_args,
        output_dir=str(out / "pretrain"),
        logging_steps=steps,
        **setting["pretrain"],
        **common,
    )
    print(
        f"[demo] 2. pretrained on wiki.txt with span corruption: final loss {last_or_mean_loss(metrics):.3f} "
        f"({_minutes(time.perf_counter() - start)})"
    )
    scores = _finetune_and_score(out, setting, bp_args, len(qa["train"]), common, overwrite)
    most_common = BirthplaceArguments(data_dir=data_dir, most_common_baseline=True)
    scores["most common place"] = _run(out / "logs", "most_common", evaluate_answers, ModelArguments(), most_common)
    place = Counter(qa["train"]["answer"]).most_common(1)[0][0]
    print(f"[demo] always {place!r}: {_correct(scores['most common place'])}")
    elapsed = time.perf_counter() - start
    _print_table(scores, place, elapsed)
    _write_results(out, scores, place, elapsed, setting_name, seed)
    return scores


def _write_results(out: Path, scores: dict, place: str, elapsed: float, setting: str, seed: int) -> None:
    """`demo_results.json`, as run_clm's `all_results.json`: the three scores on the held-out people, the setting
    and the wall time (`benchmarks/write_results.py --tasks demo` records it)."""
    results = {
        "setting": setting,
        "seed": seed,
        "most_common_place": place,
        "wall_time_s": round(elapsed),
        "scores": {
            name: {key: score[key] for key in ("correct", "total", "exact_match")} for name, score in scores.items()
        },
    }
    atomic_write_text(out / "demo_results.json", json.dumps(results, indent=2, ensure_ascii=False) + "\n")


# The allowed values of the numeric flags below (`check_flag_ranges`).
FLAG_RANGES = {"seed": SEED, "threads": POSITIVE}


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--data_dir", default=None, help="real birthplace data; default: the synthetic task")
    parser.add_argument("--output_dir", default="runs/demo", help="where the demo writes its data, models and logs")
    parser.add_argument("--quick", action="store_true", help="the shortened run of the test suite (synthetic only)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic data and of training")
    parser.add_argument("--overwrite_output_dir", action="store_true", help="replace an earlier demo in --output_dir")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (these small models gain little from a second thread, and lose several times their "
        "speed when OpenMP threads compete with other processes for the cores)",
    )
    parsed = parser.parse_args(args)
    check_flag_ranges(parsed, ranges=FLAG_RANGES)
    import datasets
    import torch
    import transformers

    torch.set_num_threads(parsed.threads)
    # No datasets bars (tokenizing a few hundred lines); Trainer's own bars stay.
    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()  # weight loading; Trainer's own bars stay
    scores = run_demo(parsed.data_dir, parsed.output_dir, parsed.quick, parsed.seed, parsed.overwrite_output_dir)
    pretrained = scores["with pretraining"]["exact_match"]
    baselines = max(scores["without pretraining"]["exact_match"], scores["most common place"]["exact_match"])
    if pretrained > baselines:
        print(f"Pretraining lifts held-out accuracy {pretrained / max(baselines, 1e-9):.1f}x above the best baseline.")
        return 0
    print("Pretraining did NOT beat both baselines on this run.")
    # The synthetic demo is a check (make demo fails); on real data at CPU scale it is only a report.
    return 1 if parsed.data_dir is None else 0


if __name__ == "__main__":
    sys.exit(command_line(main))
