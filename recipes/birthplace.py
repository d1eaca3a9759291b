#!/usr/bin/env python
r"""CS224N assignment 5 with `Trainer`: knowledge access through pretraining, on the birthplace task.

Three subcommands, as in the course's `run.py` (each has its own -h; the README has the benchmark's settings):

    # 1. pretrain on wiki.txt (trains a BPE tokenizer first unless --tokenizer_name_or_path is given):
    #    the course's span corruption (the default), or ours: openings + the training QA pairs
    python recipes/birthplace.py pretrain --attention_type vanilla --data_dir ../shared/data/birthplace \
        --pretraining_objective openings --pretrain_with_qa --num_train_epochs 76 --learning_rate 1e-3 \
        --output_dir runs/bp/vanilla
    # 2. finetune on birth_places_train.tsv: from the pretrained model, or from scratch (no pretraining; its BPE
    #    trained on wiki.txt as pretrain's, unless --tokenizer_name_or_path is given)
    python recipes/birthplace.py finetune --data_dir ../shared/data/birthplace \
        --model_name_or_path runs/bp/vanilla --output_dir runs/bp/vanilla-finetuned
    python recipes/birthplace.py finetune --data_dir ../shared/data/birthplace --attention_type vanilla \
        --output_dir runs/bp/nopretrain
    # 3. greedy-decode the answers to the dev questions and score them: "Correct: X out of Y: Z%"
    python recipes/birthplace.py evaluate --data_dir ../shared/data/birthplace \
        --model_name_or_path runs/bp/vanilla --output_dir runs/bp/vanilla
    # the always-"London" baseline (5.0% on the real dev set)
    python recipes/birthplace.py evaluate --data_dir ../shared/data/birthplace --london_baseline
    # any subcommand from a config file (configs/), its flags after it overriding the file's values
    python recipes/birthplace.py finetune configs/cs224n/course/finetune_nopretrain.json \
        --data_dir ../shared/data/birthplace --output_dir runs/bp-course/nopretrain

`pretrain --course_vocabulary` runs the course's own setting: its character vocabulary, built from wiki.txt, with
character span corruption, block 128 and 32-character answers (`finetune` and `evaluate` take it from the model's
tokenizer). QA examples are
`question ⁇ answer ⁇ </s>` with the loss on the answer only; `evaluate` generates after `question ⁇` until the
next `⁇` (or `</s>`) and writes one prediction per line. The Trainer flags' defaults are the course's
(configs/cs224n/course/). The logic is library code: `hf_models.tasks.birthplace`, imported once the flags are
accepted.
"""

import sys
from functools import partial
from pathlib import Path

from hf_models.safety import command_line
from hf_models.tasks.birthplace_arguments import main

CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # the course's defaults: configs/cs224n/course/

if __name__ == "__main__":
    sys.exit(command_line(partial(main, doc=__doc__, configs=CONFIGS), sys.argv[1:]))
