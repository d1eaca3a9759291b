#!/usr/bin/env python
"""Mutation check: plant plausible bugs in the library, one at a time, and expect the tests to catch each one.

Every mutant is an exact string replacement in one source file (`hf_models/small_encoder/`, `hf_models/data/`,
`hf_models/textio.py`, `hf_models/metrics/`, `hf_models/training/`). For each mutant the tree is copied to a temporary folder
(the working tree is never touched), the replacement is applied there, and the mutant's test files run with
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
COPIED = ("hf_models", "tests", "recipes", "pyproject.toml")
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

MODEL_TESTS = ("tests/test_synthesizer_reference.py", "tests/test_modeling.py")
SPAN_TESTS = ("tests/test_span_corruption.py", "tests/test_determinism.py")
LOADER_TESTS = ("tests/test_data_loaders.py",)
METRIC_TESTS = ("tests/test_metrics.py",)


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
        "past_length = past_key_values.get_seq_length() if past_key_values is not None else 0",
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
        "index = (attention_mask * positions).argmax(-1)",
        "index = attention_mask.sum(-1) - 1",
        MODEL_TESTS,
        "wrong pooling: 'last' reads a pad under left padding",
    ),
    Mutant(
        "pooling-mean-over-padding",
        MODELING,
        "return (hidden_states * weights).sum(1) / weights.sum(1).clamp(min=1.0)",
        "return hidden_states.mean(1)",
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
        "            config.is_causal = False\n",
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
        "    if first in _SUBJECT_PRONOUNS:\n        return f\"{name} {rest}\"",
        "    if first in _SUBJECT_PRONOUNS:\n        return f\"{name}: {sentence}\"",
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
        problems += [f"{mutant.name}: no test file {t}" for t in mutant.tests if not (REPO_ROOT / t).is_file()]
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
                status, detail = ("equivalent", EQUIVALENT[mutant.name]) if mutant.name in EQUIVALENT else (
                    "SURVIVED",
                    mutant.bug,
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
