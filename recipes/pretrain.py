#!/usr/bin/env python
r"""Pretrain a SmallEncoder language model on raw text with `Trainer`.

Objectives:
  clm              next-token prediction on packed blocks (run_clm.py)
  span_corruption  CS224N span corruption, `prefix ⁇ suffix ⁇ span ⁇`, trained as a causal LM
  mlm              BERT-style masked LM on packed blocks, with a bidirectional model

    python tokenizer/train_tokenizer.py --files ../shared/data/french-corpus --vocab_size 8000 --output_dir runs/tok-fr
    python recipes/pretrain.py --objective clm --train_files ../shared/data/french-corpus/eltec_novels.txt.gz \
        --tokenizer_name_or_path runs/tok-fr --model_config altegrad-lab --output_dir runs/lm-fr
    # the lab's exact model: its 50,001 ids over raw text (sentencepiece.french.model + dict.txt)
    python recipes/pretrain.py --objective clm --train_files ../shared/data/french-corpus \
        --lab_vocabulary ../shared/data/cls-books --model_config altegrad-lab --output_dir runs/lm-fr-lab

The same command runs under `accelerate launch recipes/pretrain.py ...` (one process, or data parallel
with `--multi_gpu --num_processes N`); a JSON file of arguments first (configs/) also works, flags after it
overriding it. The run reports the evaluation loss and perplexity in `OUTPUT_DIR/all_results.json`, with loss.png
beside it.

The logic is library code: `hf_models.tasks.pretraining`.
"""

import sys

from hf_models.safety import command_line
from hf_models.tasks import pretraining
from hf_models.training.arguments import parse_args, setup_run


def main(args: list[str]) -> dict:
    data_args, model_args, training_args = parse_args(pretraining.ARGUMENT_GROUPS, args, doc=__doc__, new_run=True)
    setup_run(training_args)
    return pretraining.pretrain(model_args, data_args, training_args)


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
