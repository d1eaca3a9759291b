"""What every recipe test shares: the tiny model it trains and the Trainer flags that keep a run quiet.

One place, so that a change of size or of noise reaches every test; a test file composes these with the flags
that are its own (a seed, a step count)."""

from functools import partial

import birthplace as birthplace_recipe
import finetune_sentiment
import pretrain

# Small enough to train in a second on one core; the size keys of `--config_overrides`.
TINY_SIZES = "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64"
TINY = f"{TINY_SIZES},max_position_embeddings=64"
TINY_ONE_LAYER = TINY.replace("num_hidden_layers=2", "num_hidden_layers=1")

# No report, no checkpoint, no progress bar: what a test never reads.
NO_NOISE = ["--report_to", "none", "--save_strategy", "no", "--disable_tqdm", "true"]
QUIET = ["--use_cpu", *NO_NOISE, "--log_level", "warning"]
QUIET_ERRORS_ONLY = ["--use_cpu", *NO_NOISE, "--log_level", "error"]
# `evaluate` takes no training flags.
EVALUATE_QUIET = ["--use_cpu", "--log_level", "error"]
# A seeded run of one step: what a test of plumbing needs.
ONE_STEP = [*QUIET, "--seed", "0", "--max_steps", "1", "--per_device_train_batch_size", "4"]
# A seeded run that logs its loss every two steps: what a recipe test reads.
RECIPE = [*QUIET, "--logging_steps", "2", "--seed", "0"]

# The recipes' mains (recipes/ is on sys.path: conftest.py), run with Trainer's own defaults rather than a course's
# (configs/): a test's flags are all that its run takes.
run_pretraining = pretrain.main
run_sentiment = partial(finetune_sentiment.main, configs=None)
run_birthplace = partial(birthplace_recipe.main, configs=None)
