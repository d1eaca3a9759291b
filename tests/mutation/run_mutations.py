#!/usr/bin/env python
"""Mutation check: plant plausible bugs in the library, one at a time, and expect the tests to catch each one.

Every mutant is an exact string replacement in one source file (under `hf_models/`, `benchmarks/` or `tokenizer/`).
For each mutant the tree is copied to a temporary folder (the working tree is never touched), the replacement is
applied there, and the tests run with `PYTHONPATH` pointing at the copy, in two stages: first the mutant's nearest
test files or node ids (`Mutant.tests`, seconds), then, only if the mutant survived them, the whole suite (minutes).
A mutant is *killed* when pytest reports failing tests (exit code 1) at either stage; the record says which. The
copies have the real data beside them, as the checkout has (`<tmp>/shared -> <repo>/../shared`), so that the tests
on the real files run there too.

A target string that is missing, or found more than once, stops the run before anything is executed: the list
cannot rot silently when the code changes. An unmutated copy runs every mutant's nearest tests first (one pytest
call) and must pass them; the whole suite runs on the unmutated copy once, the first time a mutant survives its
nearest tests, and a test that fails there is left out of every mutant's whole-suite run (it is printed).

The list is `MUTANTS` (a tuple of `Mutant`, importable: `tests/test_mutation_list.py` and the docs' generator load
this file with importlib); `--record FILE` writes each mutant's outcome, stage, first failing test and time as JSON.

    python tests/mutation/run_mutations.py            # all mutants
    python tests/mutation/run_mutations.py --list     # names and the bug each one models
    python tests/mutation/run_mutations.py --only synthesizer-ignores-b2 span-always-masks-the-start
    python tests/mutation/run_mutations.py --nearest-only   # no whole-suite stage for survivors
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parents[2]
# What the tests read; a name the checkout lacks (configs/ before it exists) is left out.
COPIED = (
    "hf_models",
    "tests",
    "recipes",
    "benchmarks",
    "tokenizer",
    "configs",
    "dev",
    "docs",
    "examples",
    "push_to_hub.py",
    "pyproject.toml",
    "README.md",  # the documents test_bad_inputs.py's table reads
    "TESTING.md",
    "BENCHMARKS.md",
)
# The real data sets, at `../shared` of the checkout as in CI: linked beside the copies, which sit in one folder.
SHARED = REPO_ROOT.parent / "shared"
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")

MODELING = "hf_models/small_encoder/modeling_small_encoder.py"
OBJECTIVES = "hf_models/data/objectives.py"
AUGMENTATION = "hf_models/data/augmentation.py"
LOADERS = "hf_models/data/loaders.py"
TEXTIO = "hf_models/textio.py"
PROCESSING = "hf_models/data/processing.py"
EXACT_MATCH = "hf_models/metrics/exact_match/exact_match.py"
F1 = "hf_models/metrics/f1/f1.py"
PERPLEXITY = "hf_models/metrics/perplexity/perplexity.py"
ACCURACY = "hf_models/metrics/accuracy/accuracy.py"
TRAINER = "hf_models/training/trainer.py"
PRETRAINING = "hf_models/tasks/pretraining.py"
FINISH = "hf_models/training/finish.py"
SENTIMENT = "hf_models/tasks/sentiment.py"
BIRTHPLACE = "hf_models/tasks/birthplace.py"
BIRTHPLACE_QA = "hf_models/tasks/birthplace_qa.py"
RUN_RECORD = "hf_models/run_record.py"
CARD = "hf_models/run_record.py"  # the card is built beside the record
CARD_TEMPLATE = "hf_models/model_card.md"  # and worded in its template
APP_PREDICTIONS = "hf_models/app/predictions.py"
WRITE_RESULTS = "benchmarks/write_results.py"
THROUGHPUT = "benchmarks/throughput.py"
SNAKEFILE = "benchmarks/Snakefile"
TRAIN_TOKENIZER = "tokenizer/train_tokenizer.py"
COURSES = "hf_models/tokenization/courses.py"
BPE = "hf_models/tokenization/bpe.py"
ARGUMENTS = "hf_models/training/arguments.py"

MODEL_TESTS = ("tests/test_synthesizer_reference.py", "tests/test_modeling.py")
SPAN_TESTS = ("tests/test_span_corruption.py", "tests/test_determinism.py")
LOADER_TESTS = ("tests/test_data_loaders.py",)
METRIC_TESTS = ("tests/test_metrics.py",)
# The gaps between a correct part and a correct whole: a test node id keeps a mutant's run short.
FLAGS = "tests/test_flag_plumbing.py"
PRETRAIN_FLAG_TESTS = (f"{FLAGS}::test_pretrain_flags_reach_what_they_control",)
SENTIMENT_FLAG_TESTS = (f"{FLAGS}::test_sentiment_flags_reach_what_they_control",)
BIRTHPLACE_FLAG_TESTS = (f"{FLAGS}::test_birthplace_pretrain_and_finetune_flags",)
BATCHED = "tests/test_batched_equals_single.py"
ANSWER_TESTS = (f"{BATCHED}::test_greedy_answers_batched_equal_one_at_a_time",)
CLASSIFY_TESTS = (f"{BATCHED}::test_classification_batched_equals_one_at_a_time",)
SPAN_EVAL_TESTS = (f"{BATCHED}::test_span_corruption_evaluation_batched_equals_one_at_a_time",)
LABEL_TESTS = ("tests/test_labels_end_to_end.py",)
SCORE_TESTS = ("tests/test_reported_score.py",)
TOKENIZER_FLAG_TESTS = (f"{FLAGS}::test_train_tokenizer_flags_reach_what_they_control",)
UNKNOWN_CHARACTER_TESTS = ("tests/test_course_settings.py::test_a_course_tokenizer_names_an_unknown_character",)
RESUME_TESTS = (
    "tests/test_bad_inputs.py::test_a_bad_input_is_one_line_exit_2_and_changes_nothing[resume-from-a-missing-checkpoint]",
)
WRITE_RESULTS_TEST = "tests/test_write_results.py"
WRITE_RESULTS_TESTS = (f"{WRITE_RESULTS_TEST}::test_a_baseline_in_a_models_folder_is_never_reported_as_the_model",)
TUNE_SPLIT_CHOICE_TESTS = (f"{WRITE_RESULTS_TEST}::test_birthplace_headline_is_chosen_on_the_tune_split_never_on_dev",)
HEADLINE_TESTS = (f"{WRITE_RESULTS_TEST}::test_rows_and_headline_predictions_come_from_this_bench_folder",)
INVALIDATION_TESTS = ("tests/test_workflow.py::test_a_changed_config_file_reruns_that_step_and_what_follows_it",)
PER_EPOCH_TESTS = ("tests/test_reported_score.py::test_one_evaluation_per_epoch_the_last_one",)
FINAL_LOSS_TESTS = ("tests/test_recipes.py::test_pretrain_objectives[clm-extra0]",)
CARD_LOSS_TESTS = ("tests/test_push_to_hub.py::test_card_reports_the_last_logged_training_loss",)
# Raw user text through the tokenizers and the readers.
RAW = "tests/test_raw_text_tokenizers.py"
CLEANING = "tests/test_raw_text_cleaning.py"
# GPU-only choices, on a faked device.
DEVICE = "tests/test_device_choices.py"
# Flags that touch the same rows, set together.
TOGETHER = "tests/test_flags_together.py"


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    bug: str


MUTANTS: tuple[Mutant, ...] = (
    # --- the dense synthesizer -----------------------------------------------------------------------------
    Mutant(
        "synthesizer-uniform-causal-average",
        MODELING,
        "return torch.matmul(synth, self.synth_weight) + self.synth_bias",
        "return torch.zeros_like(torch.matmul(synth, self.synth_weight))",
        MODEL_TESTS,
        "ignores A_i, b1, B_i and b2: uniform causal averaging of the values",
    ),
    Mutant(
        "synthesizer-ignores-b2",
        MODELING,
        "return torch.matmul(synth, self.synth_weight) + self.synth_bias",
        "return torch.matmul(synth, self.synth_weight)",
        MODEL_TESTS,
        "drops the bias b2",
    ),
    Mutant(
        "synthesizer-ignores-A-b1",
        MODELING,
        "synth = F.relu(self.synth_proj(hidden_states)).view(batch_size, query_length, self.num_heads, self.head_dim)",
        "synth = F.relu(hidden_states).view(batch_size, query_length, self.num_heads, self.head_dim)",
        MODEL_TESTS,
        "skips the projection X·A_i + b1",
    ),
    Mutant(
        "synthesizer-no-relu",
        MODELING,
        "synth = F.relu(self.synth_proj(hidden_states)).view(batch_size, query_length, self.num_heads, self.head_dim)",
        "synth = self.synth_proj(hidden_states).view(batch_size, query_length, self.num_heads, self.head_dim)",
        MODEL_TESTS,
        "forgets the ReLU",
    ),
    Mutant(
        "synthesizer-chunk-relative-key-positions",
        MODELING,
        "key_positions = position_ids[:, None, :, None]",
        "key_positions = torch.arange(query_length, device=hidden_states.device).expand(batch_size, -1)"
        "[:, None, :, None]",
        MODEL_TESTS,
        "cache position error: B_i columns indexed from 0 in every chunk, and left padding ignored",
    ),
    Mutant(
        "synthesizer-causal-mask-off-by-one",
        MODELING,
        ".tril(\n                key_length - query_length\n            )",
        ".tril(\n                key_length - query_length + 1\n            )",
        MODEL_TESTS,
        "each query also sees the next key",
    ),
    # --- vanilla attention ----------------------------------------------------------------------------------
    Mutant(
        "attention-no-scaling",
        MODELING,
        "self.scaling = self.head_dim**-0.5",
        "self.scaling = 1.0",
        MODEL_TESTS,
        "forgets the 1/sqrt(d_head) scaling",
    ),
    Mutant(
        "eager-wrong-scaling",
        MODELING,
        "            alpha=scaling,",
        "            alpha=scaling**2,",
        MODEL_TESTS,
        "the written-out attention scales by 1/d_head (only the eager path is wrong)",
    ),
    Mutant(
        "eager-causal-mask-off-by-one",
        MODELING,
        "bias = bias.triu_(key_length - query_length + 1)",
        "bias = bias.triu_(key_length - query_length + 2)",
        MODEL_TESTS,
        "the written-out causal mask lets each query see the next key",
    ),
    # --- the backbone ---------------------------------------------------------------------------------------
    Mutant(
        "mask-without-the-cache",
        MODELING,
        "mask = create_causal_mask(self.config, inputs_embeds, attention_mask, cache)",
        "mask = create_causal_mask(self.config, inputs_embeds, attention_mask, None)",
        MODEL_TESTS,
        "wrong mask: built without the cache, a new chunk's mask leaves out the past keys",
    ),
    Mutant(
        "mask-ignores-padding",
        MODELING,
        "mask = create_causal_mask(self.config, inputs_embeds, attention_mask, cache)",
        "mask = create_causal_mask(self.config, inputs_embeds, None, cache)",
        MODEL_TESTS,
        "wrong mask: padding keys are attended to",
    ),
    Mutant(
        "eager-empty-row-nan",
        MODELING,
        "bias = bias.masked_fill_(~attention_mask, min_value)",
        'bias = bias.masked_fill_(~attention_mask, float("-inf"))',
        MODEL_TESTS,
        "a left-padding query without keys is a NaN row in the written-out attention, read by the next layer",
    ),
    Mutant(
        "positions-ignore-left-padding",
        MODELING,
        "position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, -query_length:]",
        "position_ids = torch.arange(past_length, past_length + query_length, device=inputs_embeds.device)[None]",
        MODEL_TESTS,
        "off-by-n positions for left-padded rows",
    ),
    Mutant(
        "positions-ignore-cache",
        MODELING,
        "position_ids = torch.arange(past_length, past_length + query_length, device=inputs_embeds.device)",
        "position_ids = torch.arange(0, query_length, device=inputs_embeds.device)",
        MODEL_TESTS,
        "cache position error: a new chunk restarts at position 0",
    ),
    Mutant(
        "cache-length-ignored",
        MODELING,
        "past_length = cache.get_seq_length() if cache is not None else 0",
        "past_length = 0",
        MODEL_TESTS,
        "cache position error: past length taken as 0",
    ),
    Mutant(
        "pre-norm-post-norm-swapped",
        MODELING,
        "        if self.norm_first:\n",
        "        if not self.norm_first:\n",
        MODEL_TESTS,
        "post-norm and pre-norm swapped",
    ),
    Mutant(
        "post-norm-normalises-the-branch",
        MODELING,
        "hidden_states = self.attn_norm(hidden_states + self.dropout(attn_output))",
        "hidden_states = hidden_states + self.dropout(self.attn_norm(attn_output))",
        MODEL_TESTS,
        "post-norm block normalises the attention branch instead of the sum",
    ),
    Mutant(
        "embeddings-not-scaled",
        MODELING,
        "self.embed_scale = math.sqrt(config.hidden_size) if config.scale_embeddings else 1.0",
        "self.embed_scale = 1.0",
        MODEL_TESTS,
        "the lab's ×sqrt(d) embedding scale is lost",
    ),
    Mutant(
        "sinusoid-cos-as-sin",
        MODELING,
        "encoding[..., 1::2] = torch.cos(angles[..., : self.hidden_size // 2])",
        "encoding[..., 1::2] = torch.sin(angles[..., : self.hidden_size // 2])",
        MODEL_TESTS,
        "wrong positional table",
    ),
    Mutant(
        "pooling-last-assumes-right-padding",
        MODELING,
        "token = attention_mask.argmax(-1) if first else (attention_mask * positions).argmax(-1)",
        "token = attention_mask.argmax(-1) if first else attention_mask.sum(-1) - 1",
        MODEL_TESTS,
        "wrong pooling: 'last' reads a pad under left padding",
    ),
    Mutant(
        "pooling-mean-over-padding",
        MODELING,
        "pooled = (hidden_states * weights).sum(1) / weights.sum(1).clamp(min=1.0)",
        "pooled = hidden_states.mean(1)",
        MODEL_TESTS,
        "wrong pooling: the mean includes pads",
    ),
    Mutant(
        "classifier-ignores-pad-id",
        MODELING,
        "attention_mask = (input_ids != self.config.pad_token_id).long()",
        "attention_mask = None",
        MODEL_TESTS,
        "a batch padded without a mask pools pads",
    ),
    Mutant(
        "masked-lm-stays-causal",
        MODELING,
        "        if config.is_causal:\n            raise ValueError(\n"
        '                "SmallEncoderForMaskedLM needs a bidirectional config',
        "        if False:\n            raise ValueError(\n"
        '                "SmallEncoderForMaskedLM needs a bidirectional config',
        MODEL_TESTS,
        "a causal config builds a masked LM that keeps the causal mask, without a word",
    ),
    Mutant(
        "no-gradient-checkpointing",
        MODELING,
        "class SmallEncoderBlock(GradientCheckpointingLayer):",
        "class SmallEncoderBlock(nn.Module):",
        MODEL_TESTS,
        "gradient checkpointing is silently not engaged",
    ),
    # --- span corruption and QA encoding -------------------------------------------------------------------
    Mutant(
        "span-always-longest-truncation",
        OBJECTIVES,
        "length = min(_randint(rng, 4, max_len), len(ids))",
        "length = min(max_len, len(ids))",
        SPAN_TESTS,
        "always truncates to ⌊7/8·block⌋",
    ),
    Mutant(
        "span-truncation-off-by-one",
        OBJECTIVES,
        "length = min(_randint(rng, 4, max_len), len(ids))",
        "length = min(_randint(rng, 4, max_len - 1), len(ids))",
        SPAN_TESTS,
        "never truncates to the longest allowed length",
    ),
    Mutant(
        "span-always-masks-the-start",
        OBJECTIVES,
        "start = _randint(rng, 0, length - span)",
        "start = 0",
        SPAN_TESTS,
        "the masked span always starts the document",
    ),
    Mutant(
        "span-never-masks-the-end",
        OBJECTIVES,
        "start = _randint(rng, 0, length - span)",
        "start = _randint(rng, 0, max(0, length - span - 1))",
        SPAN_TESTS,
        "the span start range is one short",
    ),
    Mutant(
        "span-mean-too-long",
        OBJECTIVES,
        "m = max(1, (length - 2 + _randint(rng, 0, 1)) // 2)",
        "m = max(1, length // 2)",
        SPAN_TESTS,
        "masked length averages length/4 + 1/2",
    ),
    Mutant(
        "span-output-order",
        OBJECTIVES,
        "input_ids = prefix + [sep_id] + suffix + [sep_id] + masked + [sep_id]",
        "input_ids = prefix + [sep_id] + masked + [sep_id] + suffix + [sep_id]",
        SPAN_TESTS,
        "masked and suffix swapped in the output",
    ),
    Mutant(
        "span-labels-on-pads",
        OBJECTIVES,
        '"labels": input_ids + [IGNORE_INDEX] * n_pad,',
        '"labels": input_ids + [pad_id] * n_pad,',
        SPAN_TESTS,
        "wrong label masking: the loss trains on pads",
    ),
    Mutant(
        "span-max-length-ignores-separators",
        OBJECTIVES,
        "return min(7 * block_size // 8, block_size - 3)",
        "return 7 * block_size // 8",
        SPAN_TESTS,
        "tiny blocks overflow with the three separators",
    ),
    Mutant(
        "workers-replay-every-epoch",
        OBJECTIVES,
        "worker_seed = torch.initial_seed()",
        "worker_seed = torch.utils.data.get_worker_info().id",
        SPAN_TESTS,
        "data-loader workers are reseeded from their id only: the same draws every epoch",
    ),
    Mutant(
        "eval-set-corrupted-again",
        OBJECTIVES,
        'if all("labels" in ex for ex in examples):',
        "if False:",
        SPAN_TESTS,
        "the fixed eval set is re-corrupted by the training collator at every evaluation",
    ),
    Mutant(
        "eval-set-one-seed-for-all-rows",
        OBJECTIVES,
        'random.Random(f"{seed}-{index}")',
        "random.Random(seed)",
        SPAN_TESTS,
        "the eval corruption depends on the row's index no more",
    ),
    Mutant(
        "augment-name-first-keeps-pronouns",
        AUGMENTATION,
        '    if first in _SUBJECT_PRONOUNS:\n        return f"{name} {rest}"',
        '    if first in _SUBJECT_PRONOUNS:\n        return f"{name}: {sentence}"',
        ("tests/test_augmentation.py",),
        "a leading He/She is kept behind the name instead of replaced",
    ),
    Mutant(
        "augment-cost-ignores-the-opening-cut",
        AUGMENTATION,
        "len(x) if max_tokens is None else min(len(x), max_tokens) + 1",
        "len(x) + 1",
        ("tests/test_augmentation.py",),
        "the tokens reported for the openings objective are the whole copies'",
    ),
    Mutant(
        "qa-labels-on-question",
        OBJECTIVES,
        "labels = ([IGNORE_INDEX] * len(prompt) + target)[:block_size]",
        "labels = (prompt + target)[:block_size]",
        ("tests/test_span_corruption.py",),
        "wrong label masking: the QA loss includes the question",
    ),
    Mutant(
        "qa-truncates-the-answer-side",
        OBJECTIVES,
        "question = question[min(overflow, len(question)) :]",
        "question = question[: max(0, len(question) - overflow)]",
        ("tests/test_span_corruption.py",),
        "over-long questions lose their end instead of their start",
    ),
    Mutant(
        "evaluation-shifts-training-rng",
        TRAINER,
        "with torch.random.fork_rng(devices=devices):",
        "if devices is not None:",
        ("tests/test_determinism.py",),
        "evaluating during training changes the training's dropout masks",
    ),
    # --- loaders and packing -------------------------------------------------------------------------------
    Mutant(
        "loader-row-recovery-splits-wrongly",
        LOADERS,
        "question, answer = line[: cut + len(_QUESTION_END)].strip(), line[cut + len(_QUESTION_END) :].strip()",
        "question, answer = line[:cut].strip(), line[cut:].strip()",
        LOADER_TESTS,
        "loader row recovery: 'born?' lands in the answer",
    ),
    Mutant(
        "loader-row-recovery-silent",
        LOADERS,
        "            recovered.append(lineno)\n",
        "",
        LOADER_TESTS,
        "recovered rows are not reported",
    ),
    Mutant(
        "loader-keeps-crlf",
        TEXTIO,
        "encoding=TEXT_ENCODING, newline=None)",
        'encoding=TEXT_ENCODING, newline="")',
        LOADER_TESTS,
        "Windows line ends stay in the text",
    ),
    Mutant(
        "group-texts-keeps-short-remainder",
        PROCESSING,
        "total_length = (len(concatenated) // block_size) * block_size",
        "total_length = len(concatenated)",
        LOADER_TESTS,
        "the last block is shorter than block_size",
    ),
    # --- metrics -------------------------------------------------------------------------------------------
    Mutant(
        "exact-match-ignores-case",
        EXACT_MATCH,
        "return text.lower() if ignore_case else text",
        "return text.lower()",
        METRIC_TESTS,
        "exact match is case-insensitive (the course's comparison is case-sensitive)",
    ),
    Mutant(
        "exact-match-no-strip",
        EXACT_MATCH,
        'text = (text or "").strip()',
        'text = text or ""',
        METRIC_TESTS,
        "surrounding whitespace makes an answer wrong",
    ),
    Mutant(
        "f1-drops-false-negatives",
        F1,
        "denominator = 2 * tp + fp + fn",
        "denominator = 2 * tp + fp",
        METRIC_TESTS,
        "F1 computed as a precision-like score",
    ),
    Mutant(
        "perplexity-unweighted",
        PERPLEXITY,
        "/ sum(weights)",
        "/ len(weights)",
        METRIC_TESTS,
        "weighted mean divided by the count",
    ),
    Mutant(
        "accuracy-count-not-normalised",
        ACCURACY,
        'return {"accuracy": correct / len(references) if references else 0.0}',
        'return {"accuracy": correct}',
        METRIC_TESTS,
        "accuracy returns the count",
    ),
    # --- a flag that stops reaching what it controls ----------------------------------------------
    Mutant(
        "flag-mlm-probability-ignored",
        PRETRAINING,
        "mlm_probability=data_args.mlm_probability",
        "mlm_probability=0.15",
        PRETRAIN_FLAG_TESTS,
        "--mlm_probability silently stays 0.15",
    ),
    Mutant(
        "flag-max-eval-samples-ignored",
        PRETRAINING,
        "eval_dataset = eval_dataset.select(range(min(len(eval_dataset), data_args.max_eval_samples)))",
        "eval_dataset = eval_dataset",
        PRETRAIN_FLAG_TESTS,
        "--max_eval_samples does not truncate",
    ),
    Mutant(
        "flag-language-not-recorded",
        PRETRAINING,
        "language=data_args.language,",
        "language=None,",
        PRETRAIN_FLAG_TESTS,
        "--language never reaches the record (nor the card)",
    ),
    Mutant(
        "flag-validation-share-ignored",
        PRETRAINING,
        "data_args.validation_split_percentage / 100",
        "5.0 / 100",
        PRETRAIN_FLAG_TESTS,
        "--validation_split_percentage stays 5",
    ),
    Mutant(
        "flag-freeze-backbone-ignored",
        SENTIMENT,
        "if data_args.freeze_backbone:",
        "if False:",
        SENTIMENT_FLAG_TESTS,
        "--freeze_backbone trains the whole model",
    ),
    Mutant(
        "flag-classifier-pooling-dropped",
        SENTIMENT,
        '"classifier_pooling": data_args.classifier_pooling,',
        '"classifier_pooling": None,',
        SENTIMENT_FLAG_TESTS,
        "--classifier_pooling keeps the preset's",
    ),
    Mutant(
        "flag-backbone-learning-rate-ignored",
        SENTIMENT,
        "backbone_lr = data_args.backbone_learning_rate",
        "backbone_lr = None",
        SENTIMENT_FLAG_TESTS,
        "--backbone_learning_rate: one rate for all",
    ),
    Mutant(
        "flag-max-seq-length-ignored",
        SENTIMENT,
        "wanted = data_args.max_seq_length or model.config.max_position_embeddings",
        "wanted = model.config.max_position_embeddings",
        SENTIMENT_FLAG_TESTS,
        "--max_seq_length does not truncate the reviews",
    ),
    Mutant(
        "flag-opening-tokens-ignored",
        BIRTHPLACE,
        '"max_tokens": min(bp_args.opening_tokens, block_size - 1)',
        '"max_tokens": min(40, block_size - 1)',
        BIRTHPLACE_FLAG_TESTS,
        "--opening_tokens stays 40",
    ),
    Mutant(
        "flag-attention-type-ignored",
        TRAINER,
        'config_fields["attention_type"] = model_args.attention_type or config_fields.get("attention_type")',
        'config_fields["attention_type"] = config_fields.get("attention_type")',
        BIRTHPLACE_FLAG_TESTS,
        "--attention_type synthesizer builds vanilla",
    ),
    Mutant(
        "flag-tokenizer-vocab-size-ignored",
        BIRTHPLACE,
        'train_bpe_tokenizer(corpus["text"], bp_args.tokenizer_vocab_size,',
        'train_bpe_tokenizer(corpus["text"], 2000,',
        BIRTHPLACE_FLAG_TESTS,
        "--tokenizer_vocab_size stays 2000",
    ),
    # --- a batched path that differs from one item at a time ---------------------------------------
    Mutant(
        "batched-answers-keep-right-padding",
        BIRTHPLACE_QA,
        'padding_side, tokenizer.padding_side = tokenizer.padding_side, "left"',
        "padding_side = tokenizer.padding_side",
        ANSWER_TESTS,
        "greedy answers on the tokenizer's own (right) padding: prompts do not end where generation starts",
    ),
    Mutant(
        "batched-answers-padding-side-not-restored",
        BIRTHPLACE_QA,
        "tokenizer.padding_side = padding_side",
        "pass",
        ANSWER_TESTS,
        "answering leaves the tokenizer left-padding",
    ),
    Mutant(
        "batched-first-pooling-reads-padding",
        MODELING,
        "token = attention_mask.argmax(-1) if first else (attention_mask * positions).argmax(-1)",
        "token = torch.zeros_like(attention_mask[:, 0]) if first else (attention_mask * positions).argmax(-1)",
        CLASSIFY_TESTS,
        "'first' pooling reads position 0, a pad under left padding",
    ),
    Mutant(
        "batched-trim-cuts-a-real-column",
        PROCESSING,
        "length = int(used.max()) + 1 if len(used) else 1",
        "length = int(used.max()) if len(used) else 1",
        SPAN_EVAL_TESTS,
        "span-corruption evaluation batches lose the longest row's last token",
    ),
    # --- label semantics ---------------------------------------------------------------------------
    Mutant(
        "labels-id2label-reversed",
        SENTIMENT,
        "dict(enumerate(label_names))",
        "dict(enumerate(reversed(label_names)))",
        LABEL_TESTS,
        "class 1 is named negative in the config",
    ),
    Mutant(
        "labels-label2id-inverted",
        SENTIMENT,
        '"label2id": {name: i for i, name in id2label.items()}',
        '"label2id": {name: 1 - i for i, name in id2label.items()}',
        LABEL_TESTS,
        "label2id disagrees with id2label",
    ),
    Mutant(
        "labels-classlabel-names-swapped",
        LOADERS,
        'CLS_LABEL_NAMES = ["negative", "positive"]',
        'CLS_LABEL_NAMES = ["positive", "negative"]',
        LABEL_TESTS,
        "the label file's 1 is named negative",
    ),
    Mutant(
        "labels-test-predictions-flipped",
        SENTIMENT,
        '"".join(f"{int(label)}\\n" for label in test_predictions)',
        '"".join(f"{1 - int(label)}\\n" for label in test_predictions)',
        LABEL_TESTS,
        "the test predictions file writes the other class",
    ),
    Mutant(
        "labels-card-ids-and-names-swapped",
        CARD_TEMPLATE,
        "{% for id, label in id2label %}",
        "{% for label, id in id2label %}",
        LABEL_TESTS,
        "the card's label list swaps ids and names",
    ),
    # --- which score is reported ------------------------------------------------------------------
    Mutant(
        "score-record-prefers-baseline",
        RUN_RECORD,
        "key=lambda e: e.baseline is not None",
        "key=lambda e: e.baseline is None",
        SCORE_TESTS,
        "the record's score is a baseline's when both are there",
    ),
    Mutant(
        "score-record-evaluation-ignores-baseline",
        RUN_RECORD,
        "(e.split, e.baseline) == (split, baseline)",
        "e.split == split",
        SCORE_TESTS,
        "the model's and a baseline's scores merge on a split",
    ),
    Mutant(
        "score-evaluate-records-baseline-as-model",
        BIRTHPLACE,
        'baseline = source if source.endswith("_baseline") else None',
        "baseline = None",
        SCORE_TESTS,
        "evaluate records London's score as the model's",
    ),
    Mutant(
        "score-card-model-index-has-baselines",
        CARD,
        "if evaluation.baseline is None and hub_dataset",
        "if hub_dataset",
        SCORE_TESTS,
        "the card's model-index lists baselines as the model's results",
    ),
    Mutant(
        "score-card-baseline-unlabelled",
        CARD_TEMPLATE,
        "(baseline, not this model)",
        "",
        SCORE_TESTS,
        "the card's results table does not say a baseline row is not the model",
    ),
    Mutant(
        "flag-max-new-tokens-ignored",
        BIRTHPLACE,
        "answering_format(tokenizer, model_args.model_name_or_path, max_new_tokens=bp_args.max_new_tokens)",
        "answering_format(tokenizer, model_args.model_name_or_path)",
        BIRTHPLACE_FLAG_TESTS,
        "evaluate --max_new_tokens stays 16",
    ),
    Mutant(
        "flag-no-progress-ignored",
        TRAIN_TOKENIZER,
        "show_progress=not args.no_progress",
        "show_progress=True",
        TOKENIZER_FLAG_TESTS,
        "train_tokenizer.py --no_progress still shows the bars",
    ),
    Mutant(
        "safety-unknown-character-unnamed",
        COURSES,
        "    if is_cs224n_char_tokenizer(tokenizer):  # the same files",
        "    if False:  # the same files",
        UNKNOWN_CHARACTER_TESTS,
        "a loaded course tokenizer says tokenizers' 'Missing [UNK] token', not which character",
    ),
    Mutant(
        "safety-missing-checkpoint-found-late",
        "hf_models/safety/__init__.py",
        "    if not folder.is_dir():\n        problem",
        "    if False:\n        problem",
        RESUME_TESTS,
        "a missing --resume_from_checkpoint is found by Trainer, after the set-up",
    ),
    Mutant(
        "score-write-results-last-evaluation",
        WRITE_RESULTS,
        'scores = record_of(row, folder, metric="exact_match").scored("validation")',
        'scores = record_of(row, folder, metric="exact_match").evaluations[-1]',
        WRITE_RESULTS_TESTS,
        "the benchmark row reports the folder's last evaluation, a baseline's",
    ),
    Mutant(
        "score-write-results-tune-split-last-evaluation",
        WRITE_RESULTS,
        'tune = record_of(row, bench / row.tune, metric="exact_match").scored("validation")',
        'tune = record_of(row, bench / row.tune, metric="exact_match").evaluations[-1]',
        WRITE_RESULTS_TESTS,
        "the tuning-split score that picks the headline is the folder's last evaluation, a baseline's",
    ),
    # Not `files=list(step.files)` in the Snakefile: with no file inputs the step's record (checksums of its files)
    # still reruns it, so that mutant changes nothing a user sees. The record is what a copied run folder relies on.
    Mutant(
        "engine-changed-file-kept-by-its-record",
        "benchmarks/grid.py",
        'changed = [file for file, digest in expected["files"].items() if record.get("files", {}).get(file) != digest]',
        "changed = []",
        ("tests/test_workflow.py::test_a_step_is_kept_only_while_its_record_is_todays",),
        "a step whose config file changed (another checkout's run folder, file times current) is kept",
    ),
    Mutant(
        "engine-config-change-reruns-too-little",
        SNAKEFILE,
        "reads=[part.done(name) for name in step.reads] + SLICED,",
        "reads=SLICED,",
        INVALIDATION_TESTS,
        "a step no longer waits for the steps it reads: a rerun step leaves the steps after it as they were",
    ),
    Mutant(
        "engine-partial-target-writes-a-whole-runs-time",
        SNAKEFILE,
        "if len(finished) < len(part.steps()):",
        "if False:",
        ("tests/test_workflow.py::test_a_partial_target_ends_cleanly_with_only_its_steps",),
        "a partial target fails on the .done of a step it did not run (or records its time as a whole run's)",
    ),
    Mutant(
        "defaults-scheduler-arguments-outlive-their-scheduler",
        ARGUMENTS,
        "            if values[lead] != written_for:",
        "            if False:",
        ("tests/test_arguments_file.py",),
        "a config file of plain cosine inherits the course's min_lr_rate: TypeError in the scheduler",
    ),
    Mutant(
        "score-write-results-chosen-on-dev",
        WRITE_RESULTS,
        'chosen = max(candidates, key=lambda c: rows[c]["tune_split_acc"])',
        'chosen = max(candidates, key=lambda c: rows[c]["value"])',
        TUNE_SPLIT_CHOICE_TESTS,
        "the birthplace headline is chosen on the dev split it reports",
    ),
    Mutant(
        "score-write-results-worst-sentiment-headline",
        WRITE_RESULTS,
        'row = max(rows, key=lambda key: rows[key]["value"])',
        'row = min(rows, key=lambda key: rows[key]["value"])',
        HEADLINE_TESTS,
        "the sentiment headline predictions are another row's than the best",
    ),
    Mutant(
        "score-per-epoch-keeps-the-first-evaluation",
        RUN_RECORD,
        '        by_epoch[entry["epoch"]] = entry',
        '        by_epoch.setdefault(entry["epoch"], entry)',
        PER_EPOCH_TESTS,
        "the per-epoch curve keeps an epoch's first evaluation, not the final one of the model the run kept",
    ),
    Mutant(
        "score-final-train-loss-is-the-mean",
        TRAINER,
        'metrics["final_train_loss"] = next((e["loss"] for e in reversed(trainer.state.log_history) if "loss" in e), None)',
        'metrics["final_train_loss"] = result.training_loss',
        FINAL_LOSS_TESTS,
        "the final training loss is Trainer's mean over the run",
    ),
    Mutant(
        "score-report-repeats-the-results",
        FINISH,
        "    write_report(training_args, arguments)\n",
        "    write_report(training_args, arguments, metrics)\n",
        FINAL_LOSS_TESTS,
        "report.json repeats the run's numbers, both training losses among them, beside all_results.json",
    ),
    Mutant(
        "score-record-repeats-the-results",
        RUN_RECORD,
        "if k not in said[name] or said[name][k] != v}",
        "if True}",
        FINAL_LOSS_TESTS,
        "run_record.json repeats the numbers all_results.json and trainer_state.json hold",
    ),
    Mutant(
        "score-card-final-loss-is-the-mean",
        CARD_TEMPLATE,
        'final_loss, mean_loss = record.train_metrics.get("final_train_loss"), record.train_metrics.get("train_loss")',
        'final_loss, mean_loss = record.train_metrics.get("train_loss"), record.train_metrics.get("train_loss")',
        CARD_LOSS_TESTS,
        "the card's final training loss is Trainer's mean over the run",
    ),
    # --- the card's claims, each against the run's files (tests/test_card_claims.py) ---------------------------
    Mutant(
        "card-claim-steps-count-micro-batches",
        RUN_RECORD,
        "        steps = int(trainer.state.global_step)\n",
        "        steps = int(trainer.state.global_step) * args.gradient_accumulation_steps\n",
        ("tests/test_card_claims.py",),
        "the card's examples seen take each accumulated micro-batch for an optimizer step",
    ),
    Mutant(
        "card-claim-epochs-from-the-arguments",
        RUN_RECORD,
        '"epochs": round(float(state.get("epoch") or 0.0), 4)}',
        '"epochs": float(state.get("num_train_epochs") or 0.0)}',
        ("tests/test_card_claims.py",),
        "the card's epochs are those Trainer planned (trainer_state.json's num_train_epochs), not those --max_steps let run",
    ),
    Mutant(
        "card-claim-examples-seen-as-full-batches",
        RUN_RECORD,
        "seen = full_epochs * n_train + min(rest * batch, n_train)",
        "seen = steps * batch",
        ("tests/test_card_claims.py",),
        "the examples seen count every step as a full batch, past each epoch's short last one",
    ),
    Mutant(
        "card-claim-examples-seen-is-the-training-set",
        RUN_RECORD,
        '"examples_seen": seen,',
        '"examples_seen": n_train,',
        ("tests/test_card_claims.py",),
        "the examples seen are the training set's size, whatever ran",
    ),
    Mutant(
        "card-claim-hyperparameters-keep-unused-epochs",
        RUN_RECORD,
        'values.pop("num_train_epochs" if args.max_steps > 0 else "max_steps")',
        'values.pop("max_steps")',
        ("tests/test_card_claims.py",),
        "the card lists --num_train_epochs for a run that --max_steps stopped",
    ),
    Mutant(
        "card-claim-local-dataset-in-datasets",
        CARD,
        "datasets=list(record.hub_datasets) or None,",
        "datasets=[record.dataset] if record.dataset else None,",
        ("tests/test_card_claims.py",),
        "a local data set's name is given as a Hub data set in `datasets:`",
    ),
    Mutant(
        "card-claim-local-dataset-in-model-index",
        CARD,
        "hub_dataset = record.hub_datasets[0] if record.hub_datasets else None",
        "hub_dataset = record.hub_datasets[0] if record.hub_datasets else record.dataset",
        ("tests/test_card_claims.py",),
        "the model-index names a local data set as its Hub data set",
    ),
    Mutant(
        "card-claim-training-time-is-the-wall-time",
        CARD_TEMPLATE,
        '{% set runtime = record.train_metrics.get("train_runtime") -%}',
        "{% set runtime = record.wall_time_s -%}",
        ("tests/test_card_claims.py",),
        "the card's training time is the whole run's wall time, not train_runtime",
    ),
    Mutant(
        "card-claim-final-loss-is-the-first-logged",
        TRAINER,
        'next((e["loss"] for e in reversed(trainer.state.log_history) if "loss" in e), None)',
        'next((e["loss"] for e in trainer.state.log_history if "loss" in e), None)',
        ("tests/test_card_claims.py",),
        "the final training loss is the first logged one",
    ),
    Mutant(
        "card-claim-length-is-the-positions",
        PRETRAINING,
        "        max_length=block_size,\n",
        "        max_length=model.config.max_position_embeddings,\n",
        ("tests/test_card_claims.py",),
        "the card's input length is the model's positions, not the trained blocks",
    ),
    Mutant(
        "card-claim-prompt-in-english",
        CARD,
        'else PROMPTS.get(language or "", PROMPTS["en"])',
        'else PROMPTS["en"]',
        ("tests/test_card_claims.py",),
        "a French language model's usage example prompts it in English",
    ),
    Mutant(
        "card-claim-language-not-from-the-tokenizer",
        RUN_RECORD,
        "record.language = record.language or VOCABULARY_LANGUAGES.get(record.tokenizer)",
        "record.language = record.language",
        ("tests/test_card_claims.py",),
        "an LM on the lab's French ids with no --language has no language, so an English prompt (needs ../shared)",
    ),
    Mutant(
        "card-claim-tokenizer-flags-kept",
        RUN_RECORD,
        "left_out = (*not_applicable, *TOKENIZER_ARGUMENTS)",
        "left_out = tuple(not_applicable)",
        ("tests/test_card_claims.py",),
        "the card lists lab_vocabulary False for a model on the lab's ids (through --lab_raw_text)",
    ),
    Mutant(
        "card-claim-raw-text-tokenizer-as-pieces",
        "hf_models/tokenization/__init__.py",
        'return ALTEGRAD_LAB_RAW if pre_tokenizer == "Metaspace" else ALTEGRAD_LAB',
        "return ALTEGRAD_LAB",
        ("tests/test_card_claims.py",),
        "a tokenizer over raw text is described as the lab's pieces (needs ../shared)",
    ),
    Mutant(
        "card-claim-relative-path-published",
        RUN_RECORD,
        '"/" in value or "\\\\" in value or value.startswith',
        '"\\\\" in value or value.startswith',
        ("tests/test_push_to_hub.py::test_a_public_record_holds_no_local_path_and_keeps_how_the_model_answers",),
        "a relative path under a name that does not say so (--lab_vocabulary DIR) is published",
    ),
    # --- raw user text through the tokenizers and the readers ----------------------------------------------
    Mutant(
        "raw-lab-sentencepiece-strips-all-white-space",
        COURSES,
        'steps += [normalizers.Replace(Regex("^ +| +$"), ""), normalizers.Replace(Regex(" {2,}"), " ")]',
        'steps += [normalizers.Strip(), normalizers.Replace(Regex(" {2,}"), " ")]',
        (f"{RAW}::test_lab_raw_text_ids_are_sentencepiece_pieces_through_dict",),
        "the lab's tokenizer strips U+0085 at a text's ends, which SentencePiece keeps as <unk>",
    ),
    Mutant(
        "raw-lab-sentencepiece-no-nfkc-map",
        COURSES,
        "steps = [normalizers.Precompiled(spec.precompiled_charsmap)] if spec.precompiled_charsmap else []",
        "steps = []",
        (f"{RAW}::test_lab_raw_text_ids_are_sentencepiece_pieces_through_dict",),
        "the lab's tokenizer skips SentencePiece's nmt_nfkc map",
    ),
    Mutant(
        "raw-bpe-nfc-normalizer",
        BPE,
        "    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)",
        "    from tokenizers import normalizers\n\n"
        "    tok.normalizer = normalizers.NFC()\n"
        "    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)",
        (f"{RAW}::test_our_bpe_keeps_raw_text_byte_for_byte",),
        "our BPE silently composes combining accents",
    ),
    Mutant(
        "raw-course-chars-white-space-runs",
        COURSES,
        'pre_tokenizers.Split(Regex(r"[\\s\\S]"), behavior="isolated")',
        'pre_tokenizers.Split(Regex(r"\\S|\\s+"), behavior="isolated")',
        (f"{RAW}::test_course_characters_are_the_course_stoi",),
        "CS224N's character tokenizer makes a run of white space one token",
    ),
    Mutant(
        "raw-course-chars-crlf-in-vocabulary",
        TEXTIO,
        "encoding=TEXT_ENCODING, newline=None)",
        'encoding=TEXT_ENCODING, newline="\\n")',
        (f"{RAW}::test_course_characters_read_crlf_as_the_course_does",),
        "wiki.txt read without universal newlines: a CR in the course's vocabulary",
    ),
    Mutant(
        "raw-bom-kept",
        TEXTIO,
        'TEXT_ENCODING = "utf-8-sig"',
        'TEXT_ENCODING = "utf-8"',
        (f"{CLEANING}::test_a_byte_order_mark_at_the_start_of_a_file_is_dropped",),
        "a byte order mark at the start of a file is read as text",
    ),
    Mutant(
        "raw-gz-corpus-bom-kept",
        LOADERS,
        "if mark or not parts:",
        "if not parts:",
        (f"{CLEANING}::test_a_byte_order_mark_elsewhere_is_text",),
        "a later corpus file's byte order mark is read as text",
    ),
    Mutant(
        "app-accepts-invisible-text",
        APP_PREDICTIONS,
        "if not is_visible(text):",
        "if not text:",
        (f"{CLEANING}::test_app_refuses_text_that_does_not_show",),
        "a question of zero-width characters only is answered",
    ),
    Mutant(
        "raw-read-lines-strips-line-ends",
        TEXTIO,
        'line = line.removesuffix("\\n")',
        "line = line.rstrip()",
        (f"{CLEANING}::test_read_lines_removes_the_line_break_and_nothing_else",),
        "reading a line also removes its trailing tabs and no-break spaces",
    ),
    Mutant(
        "raw-text-lines-skip-only-empty",
        TEXTIO,
        "if skip_empty and not line.strip():",
        "if skip_empty and not line:",
        (f"{CLEANING}::test_iter_text_lines_skips_white_space_alone",),
        "lines of white space alone reach the tokenizer trainer",
    ),
    Mutant(
        "raw-birthplace-answer-strips-spaces-only",
        LOADERS,
        "question, answer = fields[0].strip(), fields[1].strip()",
        'question, answer = fields[0].strip(), fields[1].strip(" ")',
        (f"{CLEANING}::test_birthplace_rows_are_cut_at_the_tab_and_stripped",),
        "a birthplace answer keeps a no-break space at its end",
    ),
    Mutant(
        "raw-wiki-paragraphs-stripped",
        LOADERS,
        "            docs.append(line)",
        "            docs.append(line.strip())",
        (f"{CLEANING}::test_wiki_paragraphs_are_kept_as_they_are",),
        "wiki.txt paragraphs are stripped (the course keeps them as they are)",
    ),
    Mutant(
        "raw-text-corpus-keeps-blank-lines",
        LOADERS,
        'return [bool(text.strip()) for text in batch["text"]]',
        'return [bool(text) for text in batch["text"]]',
        (f"{CLEANING}::test_text_corpus_lines_as_datasets_reads_them",),
        "lines of no-break spaces stay in a text corpus",
    ),
    Mutant(
        "raw-app-strips-spaces-only",
        APP_PREDICTIONS,
        'text = (text or "").strip()',
        'text = (text or "").strip(" ")',
        (f"{CLEANING}::test_app_strips_typed_text_and_nothing_else",),
        "a pasted question keeps its tab, newline or no-break space",
    ),
    # --- GPU-only code, on a faked device -------------------------------------------------------------------
    Mutant(
        "gpu-peak-h100-before-its-variants",
        THROUGHPUT,
        '    ("H100 PCIe", 756.0),\n    ("H100 NVL", 835.0),\n    ("H100", 989.0),',
        '    ("H100", 989.0),\n    ("H100 PCIe", 756.0),\n    ("H100 NVL", 835.0),',
        (f"{DEVICE}::test_each_real_card_gets_its_own_data_sheet_peak",),
        "an H100 PCIe or NVL gets the SXM's bf16 peak (the first match wins)",
    ),
    Mutant(
        "gpu-peak-h200-nvl-sxm-number",
        THROUGHPUT,
        '("H200 NVL", 835.0),',
        '("H200 NVL", 989.0),',
        (f"{DEVICE}::test_each_real_card_gets_its_own_data_sheet_peak",),
        "the H200 NVL is given the SXM's bf16 peak",
    ),
    Mutant(
        "gpu-peak-for-an-fp32-run",
        THROUGHPUT,
        'if device.type != "cuda" or args.dtype != "bf16":',
        'if device.type != "cuda":',
        (f"{DEVICE}::test_peak_only_for_a_bf16_run_on_a_gpu_unless_given",),
        "an fp32 run's MFU is measured against the bf16 peak",
    ),
    Mutant(
        "gpu-evaluate-ignores-use-cpu",
        BIRTHPLACE,
        'return "cpu" if use_cpu or not torch.cuda.is_available() else "cuda"',
        'return "cpu" if not torch.cuda.is_available() else "cuda"',
        (f"{DEVICE}::test_birthplace_evaluates_on_the_gpu_unless_told_otherwise",),
        "evaluate --use_cpu still runs the model on the GPU",
    ),
    Mutant(
        "gpu-evaluation-leaves-cuda-rng",
        TRAINER,
        "devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []",
        "devices = []",
        (f"{DEVICE}::test_evaluation_forks_the_cuda_generator_of_the_current_device",),
        "evaluating during training draws from the training's CUDA generator",
    ),
    Mutant(
        "gpu-eager-attention-on-every-device",
        MODELING,
        'use_eager = output_attentions or (dropout > 0 and query.device.type == "cpu")',
        "use_eager = output_attentions or dropout > 0",
        (f"{DEVICE}::test_attention_kernel_choice_by_device",),
        "GPU training with attention dropout never uses SDPA",
    ),
    Mutant(
        "gpu-record-names-no-card",
        RUN_RECORD,
        "name = torch.cuda.get_device_name(device)",
        "name = device.type",
        (f"{DEVICE}::test_the_card_name_reaches_every_report",),
        "a GPU run's record says 'cuda', not which card",
    ),
    # --- flags that touch the same rows, set together ------------------------------------------------------
    Mutant(
        "flags-mixed-qa-rows-loss-on-answer-only",
        BIRTHPLACE,
        'qa = qa.map(lambda example: {"labels": example["input_ids"]}).cast(openings.features)',
        "qa = qa.cast(openings.features)",
        (f"{TOGETHER}::test_openings_with_qa_augment_and_recitations_from_the_original_paragraphs",),
        "openings + QA: the pretraining's QA rows keep the finetuning's -100 on the question",
    ),
    Mutant(
        "flags-openings-longer-than-the-block",
        BIRTHPLACE,
        '"max_tokens": min(bp_args.opening_tokens, block_size - 1)}',
        '"max_tokens": bp_args.opening_tokens}',
        (f"{TOGETHER}::test_openings_are_cut_to_the_block",),
        "--opening_tokens past --block_size: openings longer than a block",
    ),
    Mutant(
        "flags-qa-sentences-in-openings-too",
        BIRTHPLACE,
        'if qa_train is not None and bp_args.pretraining_objective == "span_corruption":',
        "if qa_train is not None:",
        (f"{TOGETHER}::test_openings_with_qa_in_the_plain_format",),
        "openings + QA also trains on the QA pairs as sentences",
    ),
    Mutant(
        "flags-lab-pieces-detokenized",
        SENTIMENT,
        "raw = data.load_cls_books(data_args.data_dir, detokenize=not data_args.lab_vocabulary)",
        "raw = data.load_cls_books(data_args.data_dir)",
        (f"{TOGETHER}::test_lab_vocabularies_with_max_seq_length",),
        "--lab_vocabulary gets detokenized text, not the lab's pieces",
    ),
    Mutant(
        "flags-max-length-past-positions",
        SENTIMENT,
        "max_length = min(wanted, model.config.max_position_embeddings)",
        "max_length = wanted",
        (f"{TOGETHER}::test_max_seq_length_is_cut_to_the_models_positions",),
        "--max_seq_length past the model's positions",
    ),
    Mutant(
        "flags-freeze-backbone-pretrained-only",
        SENTIMENT,
        "    if data_args.freeze_backbone:\n        model.freeze_backbone()",
        "    if data_args.freeze_backbone and model_args.model_name_or_path:\n        model.freeze_backbone()",
        (f"{TOGETHER}::test_from_scratch_with_a_frozen_backbone_trains_the_head_alone",),
        "--freeze_backbone from scratch trains everything",
    ),
    Mutant(
        "flags-freeze-backbone-with-gradual-unfreezing",
        SENTIMENT,
        "if data_args.freeze_backbone and data_args.gradual_unfreezing:",
        "if data_args.freeze_backbone and data_args.gradual_unfreezing < 0:",
        (f"{TOGETHER}::test_a_frozen_backbone_is_never_thawed_by_gradual_unfreezing",),
        "--gradual_unfreezing thaws a --freeze_backbone backbone",
    ),
    Mutant(
        "flags-lp-ft-optimizer-head-only",
        SENTIMENT,
        "backbone_lr = backbone_lr or training_args.learning_rate  # every group in the optimizer from the start",
        "backbone_lr = backbone_lr",
        (f"{TOGETHER}::test_linear_probe_head_then_gradual_unfreezing",),
        "LP-FT with gradual unfreezing builds the optimizer on the head alone: the thawed blocks never train",
    ),
    Mutant(
        "flags-lab-blocks-with-bos",
        PROCESSING,
        "out = tokenizer(batch[text_column], add_special_tokens=False, return_attention_mask=False, verbose=False)",
        "out = tokenizer(batch[text_column], return_attention_mask=False, verbose=False)",
        (f"{TOGETHER}::test_lab_vocabulary_blocks_have_no_bos",),
        "packed blocks of a lab vocabulary start each document with <s>",
    ),
    Mutant(
        "flags-default-block-128",
        PRETRAINING,
        "default_block = min(128, model.config.max_position_embeddings)",
        "default_block = 128",
        (f"{TOGETHER}::test_the_default_block_is_the_models_positions",),
        "no --block_size with fewer than 128 positions: refused",
    ),
    Mutant(
        "flags-span-corruption-documents-with-eos",
        PROCESSING,
        'fn_kwargs={"tokenizer": tokenizer, "text_column": text_column, "eos_token_id": eos_token_id},',
        'fn_kwargs={"tokenizer": tokenizer, "text_column": text_column, "eos_token_id": tokenizer.eos_token_id},',
        (f"{TOGETHER}::test_span_corruption_keeps_documents_whole",),
        "span-corruption documents end with </s>",
    ),
)

# Mutants that change no behaviour, each with the reason. None so far: every planted bug is observable.
EQUIVALENT: dict[str, str] = {}

# --- merges, boundaries both ways, the benchmark scripts' flags, the count beside a score (one block: other blocks
# join the list beside it) ---------------------------------------------------------------------------------------
RANGES = "hf_models/safety/ranges.py"
REPORT = "benchmarks/report.py"
GRID = "benchmarks/grid.py"
PRETRAINING_ARGUMENTS = "hf_models/tasks/pretraining.py"
SENTIMENT_ARGUMENTS = "hf_models/tasks/sentiment.py"
BIRTHPLACE_ARGUMENTS = "hf_models/tasks/birthplace.py"
PROBE_FACTS = "benchmarks/probe_facts.py"
TFIDF = "benchmarks/tfidf_baseline.py"
PLOT_BIRTHPLACE = "benchmarks/plot_birthplace.py"
COURSE_TABLE = "benchmarks/course_table.py"
MERGES = "tests/test_merges.py"
BOUNDARIES = "tests/test_boundaries.py"
BENCH_FLAGS = "tests/test_benchmark_flags.py"
COUNTS = "tests/test_reported_counts.py"
UPDATED_EVALUATION = (f"{MERGES}::test_updating_one_evaluation_lands_in_all_its_fields_and_keeps_its_neighbours",)

MERGE_BOUNDARY_FLAG_COUNT_MUTANTS: tuple[Mutant, ...] = (
    # a merge that keeps the older value of a field, or drops the entry beside it
    Mutant(
        "merge-evaluation-keeps-old-metric",
        RUN_RECORD,
        "earlier.metrics.update(evaluation.metrics)",
        "earlier.metrics.update({k: v for k, v in evaluation.metrics.items() if k not in earlier.metrics})",
        UPDATED_EVALUATION,
        "an updated evaluation keeps a metric's older value",
    ),
    Mutant(
        "merge-evaluation-keeps-old-count",
        RUN_RECORD,
        "earlier.num_examples = evaluation.num_examples or earlier.num_examples",
        "earlier.num_examples = earlier.num_examples or evaluation.num_examples",
        UPDATED_EVALUATION,
        "an updated evaluation keeps the count of the earlier one (exact match over 50 questions reported of 500)",
    ),
    Mutant(
        "merge-evaluation-update-erases-count",
        RUN_RECORD,
        "earlier.num_examples = evaluation.num_examples or earlier.num_examples",
        "earlier.num_examples = evaluation.num_examples",
        (f"{MERGES}::test_an_update_without_a_count_or_curve_keeps_the_earlier_ones",),
        "an update that carries no count erases the earlier one",
    ),
    Mutant(
        "merge-evaluation-keeps-old-curve",
        RUN_RECORD,
        "earlier.per_epoch = evaluation.per_epoch or earlier.per_epoch",
        "earlier.per_epoch = earlier.per_epoch or evaluation.per_epoch",
        UPDATED_EVALUATION,
        "an updated evaluation keeps the earlier per-epoch curve",
    ),
    Mutant(
        "merge-new-evaluation-replaces-its-split",
        RUN_RECORD,
        "            self.evaluations.append(evaluation)\n",
        "            self.evaluations = [e for e in self.evaluations if e.split != evaluation.split] + [evaluation]\n",
        (f"{MERGES}::test_a_new_split_or_baseline_is_added_beside_the_others",),
        "a baseline's evaluation replaces the model's (and the other baselines') on its split",
    ),
    Mutant(
        "merge-record-update-starts-afresh",
        RUN_RECORD,
        "record = read_record(folder) or start()",
        "record = start()",
        (f"{MERGES}::test_two_steps_updating_one_record_keep_each_others_scores",),
        "a step that adds scores to a record drops the record's earlier fields and scores",
    ),
    Mutant(
        "merge-whole-runs-keeps-one-command",
        WRITE_RESULTS,
        'results.setdefault("whole_runs", {})[command] = run',
        'results["whole_runs"] = {command: run}',
        (f"{MERGES}::test_a_later_whole_run_replaces_its_commands_entry_and_keeps_the_others",),
        "a whole run's entry replaces every other command's in results.json",
    ),
    Mutant(
        "merge-stopped-runs-drops-the-cpu-profile",
        REPORT,
        'if key.startswith("stopped_runs")}',
        'if key.startswith("stopped_runs_")}',
        (f"{MERGES}::test_the_stopped_runs_table_keeps_every_profiles_entries",),
        "the report's stopped-runs table drops the CPU profile's section",
    ),
    Mutant(
        "merge-stopped-runs-cpu-profile-unnamed",
        REPORT,
        "key.removeprefix('stopped_runs').removeprefix('_') or 'cpu'",
        "key.removeprefix('stopped_runs_') or 'cpu'",
        (f"{MERGES}::test_the_stopped_runs_table_keeps_every_profiles_entries",),
        "the CPU profile's stopped steps are labelled '(stopped_runs)' (the bug this test found)",
    ),
    # a range open at the wrong end: the degenerate boundary accepted, or the first good value refused
    Mutant(
        "range-nothing-masked-accepted",
        PRETRAINING_ARGUMENTS,
        '"range": Range(0, 1, low_open=True)}',
        '"range": Range(0, 1)}',
        (BOUNDARIES,),
        "--mlm_probability 0 (nothing masked, no loss) is accepted",
    ),
    Mutant(
        "range-everything-held-out-accepted",
        RANGES,
        "PERCENT = Range(0, 100, high_open=True)",
        "PERCENT = Range(0, 100)",
        (BOUNDARIES,),
        "--validation_split_percentage 100 (nothing left to train on) is accepted",
    ),
    Mutant(
        "range-classifier-dropout-one-accepted",
        SENTIMENT_ARGUMENTS,
        """Default: the model's.", "range": KEPT_SHARE}""",
        """Default: the model's.", "range": Range(0, 1)}""",
        (BOUNDARIES,),
        "a classifier dropout of 1 (the head trains on zeros) is accepted (the bug this test found)",
    ),
    Mutant(
        "range-label-smoothing-one-accepted",
        "hf_models/training/arguments.py",
        '"label_smoothing_factor": KEPT_SHARE,',
        '"label_smoothing_factor": Range(0, 1),',
        (BOUNDARIES,),
        "a label smoothing of 1 (every target uniform) is accepted (the bug this test found)",
    ),
    Mutant(
        "range-nothing-predicted-accepted",
        BIRTHPLACE_ARGUMENTS,
        '"range": POSITIVE,  # 0: nothing scored',
        '"range": NON_NEGATIVE,  # 0: nothing scored',
        (BOUNDARIES,),
        "--max_predict_samples 0 scores nothing: a division by zero (the bug this test found)",
    ),
    Mutant(
        "range-open-low-end-closed",
        RANGES,
        "value > allowed.low if allowed.low_open else value >= allowed.low",
        "value >= allowed.low",
        (BOUNDARIES,),
        "every range's low end is closed: 0 accepted where it is degenerate",
    ),
    Mutant(
        "range-closed-high-end-open",
        RANGES,
        "value < allowed.high if allowed.high_open else value <= allowed.high",
        "value < allowed.high",
        (BOUNDARIES,),
        "every range's high end is open: a share of 1 or the largest seed refused",
    ),
    Mutant(
        "range-one-fold-accepted",
        SENTIMENT_ARGUMENTS,
        '"range": Range(2)}',
        '"range": Range(1)}',
        (BOUNDARIES,),
        "--linear_probe_folds 1 (no held-out fold) is accepted",
    ),
    Mutant(
        "range-throughput-counts-unchecked",
        THROUGHPUT,
        "check_flag_ranges(args, ranges=THROUGHPUT_RANGES)",
        "check_flag_ranges(args)",
        (f"{BENCH_FLAGS}::test_throughput_refuses_a_value_that_measures_nothing",),
        "throughput.py takes --repeats 0 or --new_tokens 0 (nothing measured, or silently 512 tokens)",
    ),
    Mutant(
        "budget-one-of-each-refused",
        LOADERS,
        "if size < len(classes):",
        "if size <= len(classes):",
        (f"{BOUNDARIES}::test_the_label_budget_one_of_each_label_and_every_example_of_a_label",),
        "a label budget of one example of each label is refused",
    ),
    Mutant(
        "budget-every-example-refused",
        LOADERS,
        "if per_class > len(members):",
        "if per_class >= len(members):",
        (f"{BOUNDARIES}::test_the_label_budget_one_of_each_label_and_every_example_of_a_label",),
        "a label budget of every example of a label is refused",
    ),
    Mutant(
        "curve-steps-drop-the-last-batch",
        GRID,
        "max(epochs * math.ceil(budget / batch_size), min_steps)",
        "max(epochs * (budget // batch_size), min_steps)",
        (f"{BOUNDARIES}::test_a_curve_points_steps_at_the_minimum_and_just_past_it",),
        "a curve point's step count drops the last, partial batch of each epoch",
    ),
    Mutant(
        "probe-prefix-boundary-open",
        PROBE_FACTS,
        "if offset <= COURSE_PREFIX_CHARS",
        "if offset < COURSE_PREFIX_CHARS",
        (f"{COUNTS}::test_the_fact_probe_counts_its_prompts_and_the_course_prefix_both_ways",),
        "a fact at the 112th character is not counted within the course's prefix",
    ),
    Mutant(
        "probe-empty-prompt-kept",
        PROBE_FACTS,
        "if offset > 0:",
        "if offset >= 0:",
        (f"{COUNTS}::test_the_fact_probe_counts_its_prompts_and_the_course_prefix_both_ways",),
        "a paragraph that starts with its answer is probed from an empty prompt",
    ),
    # a flag that is checked, then changes nothing downstream
    Mutant(
        "flag-throughput-attention-dropout-ignored",
        THROUGHPUT,
        "config.embedding_dropout = config.attention_dropout = config.hidden_dropout = args.dropout",
        "config.embedding_dropout = config.hidden_dropout = args.dropout",
        (f"{BENCH_FLAGS}::test_throughput_shape_flags_reach_every_contender",),
        "--dropout leaves our attention dropout at the preset's",
    ),
    Mutant(
        "flag-throughput-gpt2-attention-dropout-fixed",
        THROUGHPUT,
        "attn_pdrop=config.attention_dropout,",
        "attn_pdrop=0.1,",
        (f"{BENCH_FLAGS}::test_throughput_shape_flags_reach_every_contender",),
        "--dropout never reaches GPT-2's attention dropout",
    ),
    Mutant(
        "flag-throughput-vocab-size-ignored",
        THROUGHPUT,
        "config.vocab_size = args.vocab_size",
        "config.vocab_size = config.vocab_size",
        (f"{BENCH_FLAGS}::test_throughput_shape_flags_reach_every_contender",),
        "--vocab_size keeps the preset's vocabulary",
    ),
    Mutant(
        "flag-throughput-no-results-json-ignored",
        THROUGHPUT,
        "write = args.results_json is not None and not args.no_results_json",
        "write = args.results_json is not None",
        (f"{BENCH_FLAGS}::test_throughput_writes_results_json_only_when_asked",),
        "--no_results_json still writes the trial's figures into results.json",
    ),
    Mutant(
        "flag-tfidf-seed-ignored",
        TFIDF,
        'balanced_subset(data["train"]["label"], args.label_budget, args.seed)',
        'balanced_subset(data["train"]["label"], args.label_budget, 42)',
        (f"{BENCH_FLAGS}::test_tfidf_budget_and_seed_reach_the_draw_and_the_fit",),
        "--seed never reaches the TF-IDF point's draw",
    ),
    Mutant(
        "flag-tfidf-budget-refit-on-validation",
        TFIDF,
        "if args.label_budget is None:  # the test labels",
        "if True:  # the test labels",
        (f"{BENCH_FLAGS}::test_tfidf_budget_and_seed_reach_the_draw_and_the_fit",),
        "a TF-IDF point's test predictions are refit on train + validation: more labels than its budget",
    ),
    Mutant(
        "flag-probe-recite-tokens-ignored",
        PROBE_FACTS,
        "RecitingQAFormat(args.recite_tokens)",
        "RecitingQAFormat(40)",
        (f"{COUNTS}::test_the_fact_probe_counts_its_prompts_and_the_course_prefix_both_ways",),
        "--recite_tokens is recorded but the recitation keeps 40 tokens",
    ),
    Mutant(
        "flag-figure-title-ignored",
        PLOT_BIRTHPLACE,
        "ax.set_title(args.title or ",
        "ax.set_title(",
        (f"{BENCH_FLAGS}::test_the_birthplace_figure_takes_its_title_and_counts_the_questions_scored",),
        "--title never reaches the birthplace figure",
    ),
    Mutant(
        "flag-course-table-profile-ignored",
        COURSE_TABLE,
        "(args.profile, bench)",
        '("cpu", bench)',
        (f"{BENCH_FLAGS}::test_the_course_table_flags_reach_the_table_and_its_file",),
        "--profile: the course table always reads the CPU profile's rows",
    ),
    # the count beside a score is another split's, or the whole split's when a part was scored
    Mutant(
        "count-row-total-of-the-tuning-split",
        WRITE_RESULTS,
        'extra["tune_split_acc"] = tune.metrics["exact_match"]',
        'extra["tune_split_acc"], extra["total"] = tune.metrics["exact_match"], tune.num_examples',
        (f"{COUNTS}::test_the_benchmark_row_counts_the_dev_questions_not_the_tuning_splits",),
        "a birthplace row's 'correct / total' takes the tuning split's count, scored after dev",
    ),
    Mutant(
        "count-evaluate-records-the-whole-split",
        BIRTHPLACE,
        'Evaluation(bp_args.eval_split, scores, metrics["total"], baseline=baseline)',
        "Evaluation(bp_args.eval_split, scores, len(load_birthplace(bp_args.data_dir)[bp_args.eval_split]), "
        "baseline=baseline)",
        (f"{COUNTS}::test_an_evaluation_counts_the_questions_it_scored_on_its_own_split",),
        "evaluate --max_predict_samples records the whole split's count beside the part's score",
    ),
    Mutant(
        "count-card-takes-a-baselines-count",
        CARD_TEMPLATE,
        '|selectattr("num_examples")|selectattr("baseline", "none")|list',
        '|selectattr("num_examples")|list',
        (f"{COUNTS}::test_the_cards_count_is_the_models_not_a_baselines_on_the_same_split",),
        "the card's example count of a split is a baseline's scored there (the bug this test found)",
    ),
    Mutant(
        "count-probe-prefix-facts-of-all",
        PROBE_FACTS,
        'f"facts_in_first_{COURSE_PREFIX_CHARS}_chars": len(early)',
        'f"facts_in_first_{COURSE_PREFIX_CHARS}_chars": len(prompts)',
        (f"{COUNTS}::test_the_fact_probe_counts_its_prompts_and_the_course_prefix_both_ways",),
        "the probe's facts within the prefix are counted over every fact",
    ),
    Mutant(
        "count-figure-title-fixed-500",
        PLOT_BIRTHPLACE,
        "questions.append(scores.num_examples)",
        "questions.append(500)",
        (f"{BENCH_FLAGS}::test_the_birthplace_figure_takes_its_title_and_counts_the_questions_scored",),
        "the birthplace figure says 500 questions whatever was scored (the bug this test found)",
    ),
    Mutant(
        "count-course-table-fixed-500",
        COURSE_TABLE,
        "questions = [_scored_examples(bench / row.runs[0]) for row in rows.values()]",
        "questions = [500]",
        (f"{BENCH_FLAGS}::test_the_course_table_counts_the_questions_its_rows_were_scored_on",),
        "the CS224N table says 500 questions whatever was scored (the bug this test found)",
    ),
)
MUTANTS = (*MUTANTS, *MERGE_BOUNDARY_FLAG_COUNT_MUTANTS)


def check_targets(mutants: tuple[Mutant, ...]) -> None:
    """Fail loudly, before running anything, when a target string is missing or ambiguous."""
    problems = []
    names = [m.name for m in mutants]
    problems += [f"duplicate mutant name {n!r}" for n in sorted({n for n in names if names.count(n) > 1})]
    for mutant in mutants:
        path = REPO_ROOT / mutant.path
        count = path.read_text(encoding="utf-8").count(mutant.old) if path.is_file() else 0
        if count != 1:
            problems.append(f"{mutant.name}: target found {count} times in {mutant.path}: {mutant.old!r}")
        problems += [
            f"{mutant.name}: no test file {t}" for t in mutant.tests if not (REPO_ROOT / t.split("::")[0]).is_file()
        ]
    problems += [f"EQUIVALENT names an unknown mutant {n!r}" for n in EQUIVALENT if n not in names]
    if problems:
        raise SystemExit("mutation list is out of date:\n  " + "\n  ".join(problems))


def copy_tree(destination: Path) -> Path:
    destination.mkdir(parents=True)
    for name in COPIED:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=IGNORED)
        elif source.is_file():
            shutil.copy2(source, destination / name)
    return destination


def run_pytest(
    root: Path, tests: tuple[str, ...], timeout: float, deselect: tuple[str, ...] = (), fail_fast: bool = True
) -> tuple[int | None, str]:
    """Exit code (None on timeout) and the output of a quiet, single-process (fail-fast) pytest run in `root`."""
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(OFFLINE_ENVIRONMENT)
    command = [sys.executable, "-m", "pytest", "-q", *(["-x"] if fail_fast else []), "-n", "0"]
    command += ["-p", "no:cacheprovider", "-p", "no:randomly", "-W", "ignore::DeprecationWarning", *tests]
    command += [f"--deselect={node}" for node in deselect]
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return done.returncode, done.stdout + done.stderr


def failures(output: str) -> list[str]:
    """Every failing node id of a pytest run's summary (`-ra`)."""
    return re.findall(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, flags=re.MULTILINE)


def first_failure(output: str) -> str:
    # The whole node id: a parameter id may hold spaces; pytest puts ` - ` before the message.
    found = failures(output)
    return found[0] if found else ""


def check_copy_imports_itself(root: Path) -> None:
    """The copy's package, not an installed one, must be the one the tests import."""
    env = dict(os.environ, PYTHONPATH=str(root))
    probe = [sys.executable, "-c", "import hf_models; print(hf_models.__file__)"]
    where = subprocess.run(probe, cwd=root, env=env, capture_output=True, text=True, check=True).stdout.strip()
    if not Path(where).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"the copy in {root} imports hf_models from {where}: PYTHONPATH is not honoured")


# The whole suite, as a mutant's second stage: the list's own check reads the mutated file (its target is gone there).
WHOLE_SUITE = ("tests", "--ignore=tests/test_mutation_list.py")


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed, SURVIVED, equivalent, ERROR
    stage: str  # nearest, suite: where it was killed (or the last stage that ran)
    detail: str
    seconds: float


class WholeSuite:
    """The whole suite's second stage: the unmutated copy's run once, on first need; its failing tests (an
    environment's, not a mutant's) are left out of every mutant's run."""

    def __init__(self, tmp: Path, timeout: float):
        self.tmp, self.timeout, self.broken = tmp, timeout, None

    def known_failures(self) -> tuple[str, ...]:
        if self.broken is None:
            root, tick = copy_tree(self.tmp / "suite-baseline"), time.monotonic()
            code, output = run_pytest(root, WHOLE_SUITE, self.timeout, fail_fast=False)
            shutil.rmtree(root)
            if code is None:
                raise SystemExit(
                    f"the unmutated copy's whole suite ran past {self.timeout:.0f} s: raise --suite-timeout"
                )
            broken = failures(output)
            if code != 0 and not broken:
                print(output[-3000:])
                raise SystemExit(f"the unmutated copy's whole suite fails (exit {code}) without a failing test")
            self.broken = tuple(broken)
            print(
                f"suite baseline: the unmutated copy passes the whole suite ({time.monotonic() - tick:.0f} s)", end=""
            )
            print(f", less {len(broken)} failing test(s) left out: {' '.join(broken)}" if broken else "", flush=True)
        return self.broken


def run_mutant(mutant: Mutant, root: Path, suite: WholeSuite | None, timeout: float) -> Outcome:
    tick = time.monotonic()
    target = root / mutant.path
    target.write_text(target.read_text(encoding="utf-8").replace(mutant.old, mutant.new), encoding="utf-8")
    stage, (code, output) = "nearest", run_pytest(root, mutant.tests, timeout)
    if code == 0 and suite is not None and mutant.name not in EQUIVALENT:
        broken = suite.known_failures()
        stage, (code, output) = "suite", run_pytest(root, WHOLE_SUITE, suite.timeout, broken)
    if code == 1:
        status, detail = "killed", first_failure(output)
    elif code is None:
        status, detail = "killed", f"timeout after {timeout if stage == 'nearest' else suite.timeout:.0f} s"
    elif code == 0:
        status, detail = (
            ("equivalent", EQUIVALENT[mutant.name]) if mutant.name in EQUIVALENT else ("SURVIVED", mutant.bug)
        )
    else:
        status, detail = "ERROR", f"pytest exit code {code}: {output.strip().splitlines()[-1:]}"
    return Outcome(mutant, status, stage, detail, time.monotonic() - tick)


def tally(outcomes: list[Outcome]) -> tuple[int, int]:
    """(killed, counted): the mutants killed, of those that are not equivalent."""
    killed = sum(o.status == "killed" for o in outcomes)
    return killed, sum(o.status != "equivalent" for o in outcomes)


def write_record(path: Path, argv: list[str] | None, outcomes: list[Outcome], selected: int, wall: float) -> None:
    """The run so far as JSON: its command, wall time, CPUs, counts, and each mutant's outcome."""
    killed, counted = tally(outcomes)
    command = ["python", "tests/mutation/run_mutations.py", *(argv if argv is not None else sys.argv[1:])]
    record = {
        "command": " ".join(command),
        "wall_time_s": round(wall),
        "cpus": len(os.sched_getaffinity(0)),
        "selected": selected,
        "run": len(outcomes),
        "killed": killed,
        "counted": counted,
        "mutants": [
            {
                "name": o.mutant.name,
                "status": o.status,
                "stage": o.stage,
                "first_failing_test": o.detail if o.status == "killed" else "",
                "seconds": round(o.seconds, 1),
            }
            for o in outcomes
        ],
    }
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument("--only", nargs="+", default=None, help="run these mutants only")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per pytest run of the nearest tests")
    parser.add_argument("--suite-timeout", type=float, default=1800.0, help="seconds per whole-suite run")
    parser.add_argument("--skip-baseline", action="store_true", help="do not run the unmutated copy first")
    parser.add_argument("--nearest-only", action="store_true", help="no whole-suite stage for a survivor")
    parser.add_argument("--record", type=Path, default=None, help="write every mutant's outcome to this JSON file")
    args = parser.parse_args(argv)

    check_targets(MUTANTS)
    if args.list:
        for mutant in MUTANTS:
            print(f"{mutant.name:42s} {mutant.path}: {mutant.bug}")
        return 0
    selected = [m for m in MUTANTS if args.only is None or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        raise SystemExit(f"unknown mutant(s): {', '.join(sorted(unknown))}")

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        tmp = Path(tmp)
        if SHARED.is_dir():  # every copy's `../shared`: the tests on the real data run, as in the checkout
            (tmp / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
        else:
            print(f"no {SHARED}: the tests on the real data skip in the copies", flush=True)
        if not args.skip_baseline:
            baseline = copy_tree(tmp / "baseline")
            check_copy_imports_itself(baseline)
            nearest = tuple(dict.fromkeys(test for m in selected for test in m.tests))  # one pytest call for all
            code, output = run_pytest(baseline, nearest, args.timeout * 4)
            if code != 0:
                print(output[-3000:])
                raise SystemExit(f"the unmutated tree fails its nearest tests (exit {code}): fix that first")
            shutil.rmtree(baseline)
            print(
                f"baseline: the unmutated copy passes the nearest tests ({time.monotonic() - started:.0f} s)",
                flush=True,
            )

        suite = None if args.nearest_only else WholeSuite(tmp, args.suite_timeout)
        outcomes = []
        for index, mutant in enumerate(selected):
            root = copy_tree(tmp / f"mutant-{index:03d}")
            outcome = run_mutant(mutant, root, suite, args.timeout)
            shutil.rmtree(root)
            outcomes.append(outcome)
            if args.record is not None:  # after every mutant: a run stopped early is recorded as far as it got
                write_record(args.record, argv, outcomes, len(selected), time.monotonic() - started)
            print(
                f"{outcome.status:10s} {mutant.name:42s} {outcome.stage:7s} {outcome.seconds:6.1f} s  {outcome.detail}",
                flush=True,
            )

    killed, counted = tally(outcomes)
    equivalent = len(outcomes) - counted
    rate = 100.0 * killed / counted if counted else 100.0
    by_suite = sum(o.status == "killed" and o.stage == "suite" for o in outcomes)
    print(
        f"\n{killed}/{counted} mutants killed ({rate:.1f} %; {by_suite} only by the whole suite), "
        f"{equivalent} equivalent, {time.monotonic() - started:.0f} s in all"
    )
    return 0 if killed == counted else 1


if __name__ == "__main__":
    sys.exit(main())
