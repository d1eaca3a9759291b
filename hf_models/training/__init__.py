"""Training, shared by the tasks in `hf_models.tasks`, one stage of a run per module:

- `arguments`: `ModelArguments`, parsing flags or one JSON or YAML file with `HfArgumentParser`, logging and the
  seed (`setup_run`);
- `trainer`: the model to start from (`load_or_build_model`, `build_config`) and `check_block_size`;
  `ReproducibleTrainer`, `ShuffledLengthBuckets` and `train_model`; `loss.png` and `accuracy.png`, redrawn during
  training; a pretraining loss against the unigram entropy of its data (`check_plateau`);
- `transfer`: finetuning that keeps the backbone (ULMFiT's discriminative rates and gradual unfreezing);
- `finish`: the end of a run (model, run_clm.py's result files, plots, run record, `report.json`).

The run's tokenizer comes from `hf_models.tokenization.resolve_tokenizer`, its metrics from
`hf_models.metrics.load_metric`.
"""

from hf_models import lazy_namespace

# Each name and its module, imported when first used: parsing a command line (`arguments`) needs no datasets, which
# the other stages import.
_MODULES = {
    "TRAINER_TITLE": "arguments",
    "trainer_group": "arguments",
    "FlagGroup": "arguments",
    "HelpFormatter": "arguments",
    "build_parser": "arguments",
    "model_group": "arguments",
    "GradualUnfreezingCallback": "transfer",
    "discriminative_optimizer": "transfer",
    "ModelArguments": "arguments",
    "ReproducibleTrainer": "trainer",
    "ShuffledLengthBuckets": "trainer",
    "build_config": "trainer",
    "check_block_size": "trainer",
    "check_run_output": "arguments",
    "expand_arguments_file": "arguments",
    "check_plateau": "trainer",
    "finish_run": "finish",
    "last_or_mean_loss": "trainer",
    "load_or_build_model": "trainer",
    "load_pretrained": "trainer",
    "model_source": "finish",
    "parse_args": "arguments",
    "read_arguments_file": "arguments",
    "setup_run": "arguments",
    "train_model": "trainer",
    "unigram_entropy": "trainer",
    "write_report": "finish",
}

__all__ = list(_MODULES)

__getattr__, __dir__ = lazy_namespace(__name__, _MODULES)
