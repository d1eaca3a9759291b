#!/usr/bin/env python
r"""Finetune a SmallEncoder for French book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab.

    # from a pretrained language model (its tokenizer is saved beside it)
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books \
        --model_name_or_path runs/lm-fr-reviews --output_dir runs/sentiment/pretrained --num_train_epochs 4
    # the same with the backbone frozen (only the classification head trains)
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --freeze_backbone \
        --model_name_or_path runs/lm-fr-reviews --output_dir runs/sentiment/frozen --learning_rate 3e-3
    # from scratch, with a tokenizer and a config
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch \
        --tokenizer_name_or_path runs/tok-fr --model_config altegrad-lab --output_dir runs/sentiment/scratch
    # the lab's exact setting: the .spm pieces and the lab's 50,001 ids (dict.txt), altegrad-lab preset
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch --lab_vocabulary \
        --model_config altegrad-lab --output_dir runs/sentiment/lab-scratch
    # the lab's figure: validation accuracy per epoch of several runs
    python benchmarks/plot_sentiment.py --runs scratch=runs/sentiment/scratch \
        pretrained=runs/sentiment/pretrained frozen=runs/sentiment/frozen --output runs/sentiment/accuracy.png

Validation accuracy and F1 every epoch (accuracy.png), one predicted label per test review (test_predictions.txt);
the README has the benchmark's settings. The Trainer flags' defaults are the lab's (configs/altegrad/course/); a
JSON or YAML file of flags first (configs/) gives others, the flags after it overriding it. The logic is library
code: `hf_models.tasks.sentiment`.
"""

import sys
from pathlib import Path

from hf_models.safety import command_line
from hf_models.tasks import sentiment
from hf_models.training.arguments import parse_args, setup_run

CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # the lab's defaults: configs/altegrad/course/


def main(args: list[str], configs: Path | None = CONFIGS) -> dict:
    """Parse the flags, set up the run, finetune. `configs`: the folder of the lab's defaults (None: Trainer's)."""
    groups = sentiment.argument_groups(configs)
    data_args, model_args, training_args = parse_args(groups, args, doc=__doc__, new_run=True)
    setup_run(training_args)
    return sentiment.finetune(model_args, data_args, training_args)


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
