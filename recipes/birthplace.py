#!/usr/bin/env python
r"""CS224N assignment 5 with `Trainer`: knowledge access through pretraining, on the birthplace task.

Three subcommands, as in the course's `run.py`:

    # 1. pretrain on wiki.txt with span corruption (trains a BPE tokenizer first unless one is given)
    python recipes/birthplace.py pretrain --variant vanilla --data_dir ../shared/data/birthplace \
        --output_dir runs/birthplace/pretrain --num_train_epochs 200 --learning_rate 6e-3
    # 2. finetune on birth_places_train.tsv, from the pretrained model ...
    python recipes/birthplace.py finetune --data_dir ../shared/data/birthplace \
        --model_name_or_path runs/birthplace/pretrain --output_dir runs/birthplace/finetune
    #    ... or from scratch, with the same tokenizer
    python recipes/birthplace.py finetune --data_dir ../shared/data/birthplace --variant vanilla \
        --tokenizer_name_or_path runs/birthplace/pretrain --output_dir runs/birthplace/scratch
    # 3. greedy-decode the answers to the dev questions and score them
    python recipes/birthplace.py evaluate --data_dir ../shared/data/birthplace \
        --model_name_or_path runs/birthplace/finetune --output_dir runs/birthplace/finetune
    # the always-"London" baseline (5.0% on the real dev set)
    python recipes/birthplace.py evaluate --data_dir ../shared/data/birthplace --london_baseline

`--course_vocabulary` (on every subcommand) runs the course's own setting: its character vocabulary, built from
wiki.txt, with character span corruption, block 128 and 32-character answers (`hf_models/tasks/qa_formats.py`).

QA examples are `question ⁇ answer ⁇ </s>` with the loss on the answer only; `evaluate` generates after
`question ⁇` until the next `⁇` (or `</s>`), writes one prediction per line and prints
`Correct: X out of Y: Z%`.

The logic is library code: `hf_models.tasks.birthplace`.
"""

import sys
from functools import partial

from hf_models.safety import command_line
from hf_models.tasks.birthplace import main

if __name__ == "__main__":
    sys.exit(command_line(partial(main, doc=__doc__), sys.argv[1:]))
