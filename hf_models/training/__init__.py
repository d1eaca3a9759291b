"""Training, shared by the tasks in `hf_models.tasks`, one stage of a run per module:

- `arguments`: `ModelArguments`, parsing flags or one JSON file, logging and the seed (`run_task`);
- `setup`: the model to start from (`load_or_build_model`, `build_config`) and `check_block_size`;
- `trainer`: `ReproducibleTrainer`, `ShuffledLengthBuckets` and `train_model`;
- `plots`: `loss.png` and `accuracy.png`, redrawn during training;
- `plateau`: a pretraining loss against the unigram entropy of its data;
- `transfer`: finetuning that keeps the backbone (ULMFiT's discriminative rates and gradual unfreezing);
- `linear_probe`: a classification head started as a logistic regression on the frozen features (LP-FT);
- `finish`: the end of a run (model, run_clm.py's result files, plots, run record, `report.json`).

The run's tokenizer comes from `hf_models.tokenization.resolve_tokenizer`, its metrics from
`hf_models.metrics.load_metric`.
"""

from .arguments import (
    TRAINER_GROUP,
    TRAINER_TITLE,
    FlagGroup,
    HelpFormatter,
    ModelArguments,
    build_parser,
    check_run_output,
    check_training_arguments,
    expand_arguments_file,
    help_sections,
    model_group,
    parse_args,
    read_arguments_file,
    run_task,
    setup_run,
    trainer_group,
)
from .finish import RunTimer, finish_run, model_source, write_report
from .linear_probe import init_head_by_linear_probe
from .plateau import PLATEAU_KEYS, check_plateau, unigram_entropy
from .plots import PlotCallback, plot_curves
from .setup import build_config, check_block_size, load_or_build_model, load_pretrained
from .trainer import ReproducibleTrainer, ShuffledLengthBuckets, last_logged, train_model
from .transfer import (
    GradualUnfreezingCallback,
    discriminative_optimizer,
)

__all__ = [
    "TRAINER_GROUP",
    "TRAINER_TITLE",
    "trainer_group",
    "FlagGroup",
    "HelpFormatter",
    "build_parser",
    "help_sections",
    "model_group",
    "PLATEAU_KEYS",
    "GradualUnfreezingCallback",
    "discriminative_optimizer",
    "init_head_by_linear_probe",
    "ModelArguments",
    "PlotCallback",
    "ReproducibleTrainer",
    "ShuffledLengthBuckets",
    "RunTimer",
    "build_config",
    "check_block_size",
    "check_run_output",
    "check_training_arguments",
    "expand_arguments_file",
    "check_plateau",
    "finish_run",
    "last_logged",
    "load_or_build_model",
    "load_pretrained",
    "model_source",
    "parse_args",
    "read_arguments_file",
    "plot_curves",
    "run_task",
    "setup_run",
    "train_model",
    "unigram_entropy",
    "write_report",
]
