#!/usr/bin/env python
"""Mutation check: plant plausible bugs in the library, one at a time, and expect the tests to catch each one.

Every mutant is an exact string replacement in one source file (under `hf_models/`, or `benchmarks/write_results.py`,
`tokenizer/train_tokenizer.py`). For each mutant the tree is copied to a temporary folder (the working tree is never touched), the replacement is applied there, and the mutant's test files run with
`PYTHONPATH` pointing at the copy. A mutant is *killed* when pytest reports failing tests (exit code 1).

A target string that is missing, or found more than once, stops the run before anything is executed: the list
cannot rot silently when the code changes. An unmutated copy runs first and must pass.

    python tests/mutation/run_mutations.py            # all mutants (a few minutes on 2 cores)
    python tests/mutation/run_mutations.py --list     # names and the bug each one models
    python tests/mutation/run_mutations.py --only synthesizer-ignores-b2 --keep-going
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
COPIED = ("hf_models", "tests", "recipes", "benchmarks", "tokenizer", "push_to_hub.py", "pyproject.toml")
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
SENTIMENT = "hf_models/tasks/sentiment.py"
BIRTHPLACE = "hf_models/tasks/birthplace.py"
QA_FORMATS = "hf_models/tasks/qa_formats.py"
RUN_RECORD = "hf_models/run_record.py"
CARD = "hf_models/hub/card.py"
WRITE_RESULTS = "benchmarks/write_results.py"
TRAIN_TOKENIZER = "tokenizer/train_tokenizer.py"
COURSES = "hf_models/tokenization/courses.py"
ARGUMENTS = "hf_models/training/arguments.py"

MODEL_TESTS = ("tests/test_synthesizer_reference.py", "tests/test_modeling.py")
SPAN_TESTS = ("tests/test_span_corruption.py", "tests/test_determinism.py")
LOADER_TESTS = ("tests/test_data_loaders.py",)
METRIC_TESTS = ("tests/test_metrics.py",)
# Issue 25's four kinds (a test node id keeps a mutant's run short).
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
    "tests/test_safety.py::test_bad_input_is_one_line_exit_2_and_changes_nothing[resume-from-a-missing-checkpoint]",
)
WRITE_RESULTS_TESTS = (
    "tests/test_write_results.py::test_a_baseline_in_a_models_folder_is_never_reported_as_the_model",
)


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
        "return torch.matmul(synth.transpose(1, 2), self.synth_weight) + self.synth_bias",
        "return torch.zeros_like(torch.matmul(synth.transpose(1, 2), self.synth_weight))",
        MODEL_TESTS,
        "ignores A_i, b1, B_i and b2: uniform causal averaging of the values",
    ),
    Mutant(
        "synthesizer-ignores-b2",
        MODELING,
        "return torch.matmul(synth.transpose(1, 2), self.synth_weight) + self.synth_bias",
        "return torch.matmul(synth.transpose(1, 2), self.synth_weight)",
        MODEL_TESTS,
        "drops the bias b2",
    ),
    Mutant(
        "synthesizer-ignores-A-b1",
        MODELING,
        "synth = F.relu(self.synth_proj(hidden_states)).view(batch_size, query_length, self.num_heads, self.head_dim)\n"
        "        return torch.matmul(synth.transpose(1, 2)",
        "synth = F.relu(hidden_states).view(batch_size, query_length, self.num_heads, self.head_dim)\n"
        "        return torch.matmul(synth.transpose(1, 2)",
        MODEL_TESTS,
        "skips the projection X·A_i + b1",
    ),
    Mutant(
        "synthesizer-no-relu",
        MODELING,
        "synth = F.relu(self.synth_proj(hidden_states)).view(batch_size, query_length, self.num_heads, self.head_dim)\n"
        "        return torch.matmul(synth.transpose(1, 2)",
        "synth = self.synth_proj(hidden_states).view(batch_size, query_length, self.num_heads, self.head_dim)\n"
        "        return torch.matmul(synth.transpose(1, 2)",
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
        "mask-excludes-diagonal",
        MODELING,
        "mask = key_index <= query_index if self.config.is_causal",
        "mask = key_index < query_index if self.config.is_causal",
        MODEL_TESTS,
        "wrong mask: a query does not attend to itself",
    ),
    Mutant(
        "mask-ignores-padding",
        MODELING,
        "mask = mask & attention_mask[:, None, None, -key_length:].bool()",
        "mask = mask & torch.ones_like(attention_mask[:, None, None, -key_length:]).bool()",
        MODEL_TESTS,
        "wrong mask: padding keys are attended to",
    ),
    Mutant(
        "padding-query-without-own-key",
        MODELING,
        "            mask = mask | (key_index == query_index)\n",
        "",
        MODEL_TESTS,
        "a left-padding query attends to nothing: NaN rows",
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
        "table[:, 1::2] = torch.cos(position * div_term[: self.hidden_size // 2])",
        "table[:, 1::2] = torch.sin(position * div_term[: self.hidden_size // 2])",
        MODEL_TESTS,
        "wrong positional table",
    ),
    Mutant(
        "pooling-last-assumes-right-padding",
        MODELING,
        "last = hidden_states[rows, (attention_mask * positions).argmax(-1)]",
        "last = hidden_states[rows, attention_mask.sum(-1) - 1]",
        MODEL_TESTS,
        "wrong pooling: 'last' reads a pad under left padding",
    ),
    Mutant(
        "pooling-mean-over-padding",
        MODELING,
        "mean = (hidden_states * weights).sum(1) / weights.sum(1).clamp(min=1.0)\n        if pooling",
        "mean = hidden_states.mean(1)\n        if pooling",
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
        '"""Bidirectional masked LM: the causal mask is always off for this head."""\n\n'
        '    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}\n\n'
        "    def __init__(self, config: SmallEncoderConfig):\n"
        "        if config.is_causal:\n"
        "            config = copy.deepcopy(config)\n"
        "            config.is_causal = False\n",
        '"""Bidirectional masked LM: the causal mask is always off for this head."""\n\n'
        '    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}\n\n'
        "    def __init__(self, config: SmallEncoderConfig):\n"
        "        if config.is_causal:\n"
        "            config = copy.deepcopy(config)\n"
        "            config.is_causal = True\n",
        MODEL_TESTS,
        "the masked LM keeps the causal mask",
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
        "augment-permute-keeps-the-order",
        AUGMENTATION,
        "seen, out = {tuple(range(len(sentences)))}, []",
        "seen, out = set(), []",
        ("tests/test_augmentation.py",),
        "a permuted copy may be the paragraph itself",
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
        'return text.removesuffix("\\n").removesuffix("\\r")',
        'return text.removesuffix("\\n")',
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
    # --- issue 25: a flag that stops reaching what it controls ----------------------------------------------
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
        "max_length = min(data_args.max_seq_length, model.config.max_position_embeddings)",
        "max_length = model.config.max_position_embeddings",
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
        "flag-variant-ignored",
        BIRTHPLACE,
        "attention_type=bp_args.variant, is_causal=True",
        'attention_type="vanilla", is_causal=True',
        BIRTHPLACE_FLAG_TESTS,
        "--variant synthesizer builds vanilla",
    ),
    Mutant(
        "flag-tokenizer-vocab-size-ignored",
        BIRTHPLACE,
        'train_bpe_tokenizer(corpus["text"], bp_args.tokenizer_vocab_size,',
        'train_bpe_tokenizer(corpus["text"], 2000,',
        BIRTHPLACE_FLAG_TESTS,
        "--tokenizer_vocab_size stays 2000",
    ),
    # --- issue 25: a batched path that differs from one item at a time ---------------------------------------
    Mutant(
        "batched-answers-keep-right-padding",
        QA_FORMATS,
        'padding_side, tokenizer.padding_side = tokenizer.padding_side, "left"',
        "padding_side = tokenizer.padding_side",
        ANSWER_TESTS,
        "greedy answers on the tokenizer's own (right) padding: prompts do not end where generation starts",
    ),
    Mutant(
        "batched-answers-padding-side-not-restored",
        QA_FORMATS,
        "tokenizer.padding_side = padding_side",
        "pass",
        ANSWER_TESTS,
        "answering leaves the tokenizer left-padding",
    ),
    Mutant(
        "batched-first-pooling-reads-padding",
        MODELING,
        "return hidden_states[rows, attention_mask.argmax(-1)]",
        "return hidden_states[rows, torch.zeros_like(attention_mask[:, 0])]",
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
    # --- issue 25: label semantics ---------------------------------------------------------------------------
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
        CARD,
        'for k, v in sorted(config["id2label"].items()',
        'for v, k in sorted(config["id2label"].items()',
        LABEL_TESTS,
        "the card's label list swaps ids and names",
    ),
    # --- issue 25: which score is reported ------------------------------------------------------------------
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
        "        if evaluation.baseline is None\n",
        "",
        SCORE_TESTS,
        "the card's model-index lists baselines as the model's results",
    ),
    Mutant(
        "score-card-baseline-unlabelled",
        CARD,
        "(baseline, not this model)",
        "",
        SCORE_TESTS,
        "the card's results table does not say a baseline row is not the model",
    ),
    Mutant(
        "flag-rtd-weight-ignored",
        PRETRAINING,
        "data_args.generator_layers, data_args.rtd_weight)",
        "data_args.generator_layers, 1.0)",
        PRETRAIN_FLAG_TESTS,
        "--rtd_weight: the detection loss keeps weight 1",
    ),
    Mutant(
        "flag-average-last-epochs-ignored",
        SENTIMENT,
        "    if data_args.average_last_epochs:\n        callbacks.append",
        "    if False:\n        callbacks.append",
        SENTIMENT_FLAG_TESTS,
        "--average_last_epochs keeps the last weights",
    ),
    Mutant(
        "flag-max-new-tokens-ignored",
        BIRTHPLACE,
        "BPEQAFormat(bp_args.max_new_tokens)",
        "BPEQAFormat()",
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
        ARGUMENTS,
        "if checkpoint and not os.path.isdir(checkpoint):",
        "if False:",
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
)

# Mutants that change no behaviour, each with the reason. None so far: every planted bug is observable.
EQUIVALENT: dict[str, str] = {}


def check_targets(mutants: tuple[Mutant, ...]) -> None:
    """Fail loudly, before running anything, when a target string is missing or ambiguous."""
    problems = []
    names = [m.name for m in mutants]
    problems += [f"duplicate mutant name {n!r}" for n in sorted({n for n in names if names.count(n) > 1})]
    for mutant in mutants:
        source = (REPO_ROOT / mutant.path).read_text(encoding="utf-8")
        count = source.count(mutant.old)
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


def run_pytest(root: Path, tests: tuple[str, ...], timeout: float) -> tuple[int | None, str]:
    """Exit code (None on timeout) and the output of a quiet, single-process, fail-fast pytest run in `root`."""
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env[var] = "1"
    env["TOKENIZERS_PARALLELISM"] = "false"
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly"]
    command += ["-W", "ignore::DeprecationWarning", *tests]
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return done.returncode, done.stdout + done.stderr


def first_failure(output: str) -> str:
    match = re.search(r"^(?:FAILED|ERROR) (\S+)", output, flags=re.MULTILINE)
    return match.group(1) if match else ""


def check_copy_imports_itself(root: Path) -> None:
    """The copy's package, not an installed one, must be the one the tests import."""
    env = dict(os.environ, PYTHONPATH=str(root))
    probe = [sys.executable, "-c", "import hf_models; print(hf_models.__file__)"]
    where = subprocess.run(probe, cwd=root, env=env, capture_output=True, text=True, check=True).stdout.strip()
    if not Path(where).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"the copy in {root} imports hf_models from {where}: PYTHONPATH is not honoured")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument("--only", nargs="+", default=None, help="run these mutants only")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per pytest run")
    parser.add_argument("--skip-baseline", action="store_true", help="do not run the unmutated copy first")
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
        if not args.skip_baseline:
            baseline = copy_tree(tmp / "baseline")
            check_copy_imports_itself(baseline)
            for tests in sorted({m.tests for m in selected}):
                code, output = run_pytest(baseline, tests, args.timeout)
                if code != 0:
                    print(output[-3000:])
                    raise SystemExit(f"the unmutated tree fails {' '.join(tests)} (exit {code}): fix that first")
            print(f"baseline: the unmutated copy passes ({time.monotonic() - started:.0f} s)", flush=True)

        results = []
        for index, mutant in enumerate(selected):
            root = copy_tree(tmp / f"mutant-{index:03d}")
            target = root / mutant.path
            target.write_text(target.read_text(encoding="utf-8").replace(mutant.old, mutant.new), encoding="utf-8")
            tick = time.monotonic()
            code, output = run_pytest(root, mutant.tests, args.timeout)
            shutil.rmtree(root)
            if code == 1:
                status, detail = "killed", first_failure(output)
            elif code is None:
                status, detail = "killed", f"timeout after {args.timeout:.0f} s"
            elif code == 0:
                status, detail = (
                    ("equivalent", EQUIVALENT[mutant.name])
                    if mutant.name in EQUIVALENT
                    else (
                        "SURVIVED",
                        mutant.bug,
                    )
                )
            else:
                status, detail = "ERROR", f"pytest exit code {code}: {output.strip().splitlines()[-1:]}"
            results.append((mutant, status))
            print(f"{status:10s} {mutant.name:42s} {time.monotonic() - tick:5.1f} s  {detail}", flush=True)

    killed = sum(status == "killed" for _, status in results)
    equivalent = sum(status == "equivalent" for _, status in results)
    counted = len(results) - equivalent
    rate = 100.0 * killed / counted if counted else 100.0
    print(
        f"\n{killed}/{counted} mutants killed ({rate:.1f} %), {equivalent} equivalent, "
        f"{time.monotonic() - started:.0f} s in all"
    )
    return 0 if killed == counted else 1


if __name__ == "__main__":
    sys.exit(main())
