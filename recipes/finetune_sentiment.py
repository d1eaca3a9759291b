#!/usr/bin/env python
r"""Finetune a SmallEncoder for book-review sentiment (CLS-FR books) with `Trainer`: the ALTeGraD lab.

    # from a pretrained model (its tokenizer is saved beside it)
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books \
        --model_name_or_path runs/pretrain-fr --output_dir runs/sentiment/pretrained --num_train_epochs 5
    # the same with the backbone frozen (only the classification head trains)
    python recipes/finetune_sentiment.py ... --freeze_backbone --output_dir runs/sentiment/frozen
    # from scratch, with a tokenizer and a config
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch \
        --tokenizer_name_or_path outputs/tok-fr --model_config altegrad-lab --output_dir runs/sentiment/scratch
    # the lab's exact setting: the .spm pieces and the lab's 50,001 ids (dict.txt), altegrad-lab preset
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --from_scratch --lab_vocabulary \
        --model_config altegrad-lab --output_dir runs/sentiment/lab-scratch
    # the same ids on the raw reviews (the lab's SentencePiece model), e.g. after pretrain.py --lab_vocabulary
    python recipes/finetune_sentiment.py --data_dir ../shared/data/cls-books --lab_raw_text \
        --model_name_or_path runs/pretrain-fr-lab --output_dir runs/sentiment/lab-raw-pretrained

Validation accuracy and F1 are reported every epoch (and drawn in accuracy.png); the held-back test
reviews get one predicted label per line in OUTPUT_DIR/test_predictions.txt. `--causal_mask false`
turns the causal mask off (a bidirectional encoder); by default a pretrained model keeps its own.
The lab's figure, validation accuracy per epoch for several runs on one plot:

    python recipes/plot_sentiment.py --runs scratch=runs/sentiment/scratch \
        pretrained=runs/sentiment/pretrained frozen=runs/sentiment/frozen --output sentiment.png

The logic is library code: `hf_models.tasks.sentiment`.
"""

import sys
from functools import partial

from hf_models.safety import command_line
from hf_models.tasks.sentiment import main

if __name__ == "__main__":
    sys.exit(command_line(partial(main, doc=__doc__), sys.argv[1:]))
