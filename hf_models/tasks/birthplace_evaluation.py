"""`recipes/birthplace.py evaluate`: greedy-decode the answers to the questions of a split, in the format the model
was trained to answer in (`answering_format`: its tokenizer and its run record), or give a constant baseline's
(always "London", or the most common training birthplace); score them by exact match, write one prediction per line,
and add the score to the run record of the output folder.
"""

from __future__ import annotations

import os
from collections import Counter
from functools import partial
from pathlib import Path

import torch
from transformers import TrainingArguments

from hf_models import SmallEncoderForCausalLM
from hf_models.data import BIRTHPLACE_FILES, load_birthplace, read_lines
from hf_models.hub import write_run_card
from hf_models.metrics import load_metric, write_scored_examples
from hf_models.run_record import Evaluation, RunRecord, model_reference, read_record, updating_record
from hf_models.safety import check_count, check_output_file, removing_what_fails
from hf_models.textio import UsageError, atomic_write_text
from hf_models.tokenization import BPE, resolve_tokenizer
from hf_models.training import ModelArguments, RunTimer, check_block_size, load_pretrained, write_report
from hf_models.training.arguments import check_model_folder
from hf_models.training.setup import check_vocabulary

from .birthplace_arguments import (
    DATASET,
    LANGUAGE,
    BirthplaceArguments,
    check_answer_source,
    data_files,
    require_data_dir,
)
from .qa_formats import answering_format

__all__ = ["evaluate_answers"]


def evaluation_device(use_cpu: bool) -> str:
    """Where `evaluate` runs the model: the GPU when there is one, unless `--use_cpu`."""
    return "cpu" if use_cpu or not torch.cuda.is_available() else "cuda"


def _predictions(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args, qa) -> tuple[list, str]:
    """The answers to the questions of `--eval_split` and where they come from (a model, or a baseline)."""
    questions = list(qa[bp_args.eval_split]["question"])
    if baseline := _baseline_answer(bp_args, qa):
        return [baseline[0]] * len(questions), baseline[1]
    missing = "evaluate needs --model_name_or_path, or --london_baseline / --most_common_baseline"
    if model_args.model_name_or_path is None:
        raise UsageError(missing)
    tokenizer = resolve_tokenizer(model_args.tokenizer_path, BPE, missing=missing, accept_course=True)
    # A causal LM first (a masked LM is refused as such), then how it answers, as its training recorded it.
    model = load_pretrained(SmallEncoderForCausalLM, model_args.model_name_or_path, causal=True, dtype=torch.float32)
    answers = answering_format(tokenizer, model_args.model_name_or_path, max_new_tokens=bp_args.max_new_tokens)
    check_vocabulary(tokenizer, model.config.vocab_size, model_args.tokenizer_path, model_args.model_name_or_path)
    check_block_size(bp_args.block_size, model)
    model.to(evaluation_device(training_args.use_cpu))
    predictions = answers.predict(
        model,
        tokenizer,
        questions,
        bp_args.block_size,
        training_args.per_device_eval_batch_size,
        where=_question_lines(bp_args),
    )
    return predictions, model_args.model_name_or_path


def _baseline_answer(bp_args: BirthplaceArguments, qa) -> tuple[str, str] | None:
    """The constant answer of `--london_baseline` or `--most_common_baseline` (of the training answers), and the
    baseline's name; None to score the model."""
    if bp_args.london_baseline:
        return "London", "london_baseline"
    if bp_args.most_common_baseline:
        constant, _ = Counter(list(qa["train"]["answer"])).most_common(1)[0]
        return constant, "most_common_baseline"
    return None


def _question_lines(bp_args: BirthplaceArguments):
    """`where(i)`: the `file:line` of question i of `--eval_split` (the loader keeps every non-blank line, in order)."""
    path = Path(bp_args.data_dir) / BIRTHPLACE_FILES[bp_args.eval_split]
    lines = [number for number, line in enumerate(read_lines(path), start=1) if line.strip()]
    return lambda index: f"{path}:{lines[index]}"


def _record_evaluation(output_dir: str, bp_args: BirthplaceArguments, source: str, metrics: dict, timer) -> None:
    """Add the scores to the run record of `output_dir` (the model's own folder, usually), or start one there."""
    baseline = source if source.endswith("_baseline") else None
    start = partial(
        RunRecord,
        task="birthplace-evaluation",
        objective="qa",
        dataset=DATASET,
        language=LANGUAGE,
        evaluated_model=None if baseline else model_reference(source),
        wall_time_s=timer.seconds,
    )
    with updating_record(output_dir, start) as record:
        scores = {"exact_match": metrics["exact_match"]}
        record.add_evaluation(Evaluation(bp_args.eval_split, scores, metrics["total"], baseline=baseline))
        if os.path.isfile(os.path.join(output_dir, "config.json")):  # a model's folder: its card gains the scores
            record.save(output_dir)
            write_run_card(output_dir)


def _evaluation_outputs(model_args: ModelArguments, bp_args: BirthplaceArguments, training_args) -> tuple:
    """The output folder (None: print only), predictions file and report of `evaluate`, checked before any work:
    they never replace an input file, and earlier predictions or reports are kept unless --overwrite_output_dir. A
    baseline's files carry its name (`predictions_validation_london_baseline.txt`), so that it never replaces a
    model's in the model's folder."""
    output_dir = training_args.output_dir if _output_dir_given(training_args) else None
    name = _output_name(bp_args)
    predictions_file = bp_args.predictions_file or (
        os.path.join(output_dir, f"predictions_{name}.txt") if output_dir else None
    )
    report = os.path.join(output_dir, f"report_evaluate_{name}.json") if output_dir else None
    check_count("--max_predict_samples", bp_args.max_predict_samples)
    if bp_args.max_new_tokens <= 0:
        raise UsageError(f"--max_new_tokens {bp_args.max_new_tokens}: give a positive number of tokens")
    model_files = []  # the model's own files; its earlier predictions and reports are outputs
    if model_args.model_name_or_path and os.path.isdir(model_args.model_name_or_path):
        model_files = [
            ("--model_name_or_path", str(p))
            for p in Path(model_args.model_name_or_path).iterdir()
            if not p.name.startswith(("predictions", "report"))
        ]
    if output_dir:
        _check_evaluation_folder(output_dir, model_args.model_name_or_path, bp_args.data_dir)
    for path in [p for p in (predictions_file, report) if p]:
        what = "--predictions_file" if path == predictions_file else "the report"
        check_output_file(path, [*data_files(bp_args), *model_files], what, inside=path == report)
        if os.path.exists(path) and not model_args.overwrite_output_dir:
            raise UsageError(
                f"{path} already exists; pick another --output_dir or --predictions_file, or add "
                "--overwrite_output_dir to replace it"
            )
    return output_dir, predictions_file, report


def _check_evaluation_folder(output_dir: str, model: str | None, data_dir: str | None) -> None:
    """`evaluate` writes a report and adds its scores to the run record of `output_dir`: never into the data folder,
    and never into the record of another model than the one evaluated (a baseline's scores may go beside a model's)."""
    folder = Path(output_dir).resolve()
    if data_dir and folder.is_relative_to(Path(data_dir).resolve()):
        raise UsageError(
            f"--output_dir {output_dir} is --data_dir {data_dir} or lies inside it: evaluate never writes into its "
            "data folder; pick another --output_dir (the model's own folder, say)"
        )
    if not model or (os.path.isdir(model) and folder == Path(model).resolve()):
        return
    record = read_record(folder) if folder.is_dir() else None
    if record is not None and record.evaluated_model != model_reference(model):
        whose = f"of {record.evaluated_model}" if record.evaluated_model else f"of another run ({record.task})"
        raise UsageError(
            f"--output_dir {output_dir} holds the run record {whose}: the scores of {model} would be added to it; "
            "give the model's own folder, or a new --output_dir"
        )


def _output_name(bp_args: BirthplaceArguments) -> str:
    """The split, and the baseline's name for a baseline: the stem of the predictions and report files."""
    baseline = "london" if bp_args.london_baseline else "most_common" if bp_args.most_common_baseline else None
    return f"{bp_args.eval_split}_{baseline}_baseline" if baseline else bp_args.eval_split


def evaluate_answers(
    model_args: ModelArguments, bp_args: BirthplaceArguments, training_args: TrainingArguments
) -> dict:
    timer = RunTimer()
    require_data_dir(bp_args)
    check_answer_source(model_args.model_name_or_path, bp_args)
    check_model_folder(model_args)
    output_dir, predictions_file, report = _evaluation_outputs(model_args, bp_args, training_args)
    qa = load_birthplace(bp_args.data_dir)
    if bp_args.max_predict_samples is not None:  # the first N questions, as the file orders them
        questions = qa[bp_args.eval_split]
        qa[bp_args.eval_split] = questions.select(range(min(bp_args.max_predict_samples, len(questions))))
    split = qa[bp_args.eval_split]
    predictions, source = _predictions(model_args, bp_args, training_args, qa)
    metrics: dict = {"eval_split": bp_args.eval_split, "predictions_from": source, "num_questions": len(predictions)}
    if "answer" in split.column_names:
        scores = load_metric("exact_match").compute(predictions=predictions, references=list(split["answer"]))
        correct, total = scores["correct"], scores["total"]
        print(f"Correct: {correct} out of {total}: {100.0 * correct / total}%")
        metrics.update(exact_match=scores["exact_match"], correct=correct, total=total)
    else:
        print(f"No answers for the {bp_args.eval_split} split: {len(predictions)} predictions written, not scored")

    if training_args.process_index == 0:
        with removing_what_fails([output_dir], [predictions_file]):  # a disk full at the report leaves nothing new
            if predictions_file:
                # One line per question; a newline inside a generated answer would shift every later line.
                atomic_write_text(predictions_file, "".join(p.replace("\n", " ") + "\n" for p in predictions))
                metrics["predictions_file"] = predictions_file
            if output_dir:
                write_report(training_args, (model_args, bp_args, training_args), metrics, timer.seconds, path=report)
                if "exact_match" in metrics:
                    _record_evaluation(output_dir, bp_args, source, metrics, timer)
                    write_scored_examples(output_dir, predictions, list(split["answer"]), _output_name(bp_args))
    return metrics


def _output_dir_given(training_args: TrainingArguments) -> bool:
    # TrainingArguments falls back to "trainer_output" when --output_dir is omitted.
    return bool(training_args.output_dir) and training_args.output_dir != "trainer_output"
