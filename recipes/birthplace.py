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
(configs/cs224n/course/). The logic is library code: `hf_models.tasks.birthplace`.
"""

import argparse
import sys
from pathlib import Path

from hf_models.safety import command_line
from hf_models.tasks import birthplace
from hf_models.textio import UsageError
from hf_models.training.arguments import HelpFormatter, parse_args, setup_run

CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # the course's defaults: configs/cs224n/course/


def subcommand_examples(subcommand: str) -> str | None:
    """Of this docstring's epilog, the examples of `subcommand` (each with the comment lines above it) and the last
    paragraph: the paragraphs of indented lines are the examples, an example starts at its first comment line."""
    paragraphs = __doc__.strip().partition("\n\n")[2].split("\n\n")
    examples: list[list[str]] = []
    for paragraph in [p for p in paragraphs if p.startswith("    ")]:
        for line in paragraph.splitlines():
            starts = line.lstrip().startswith("#") and not (examples and examples[-1][-1].lstrip().startswith("#"))
            if starts or not examples:
                examples.append([])
            examples[-1].append(line)
    own = ["\n".join(lines) for lines in examples if any(f"birthplace.py {subcommand} " in line for line in lines)]
    closing = [paragraphs[-1]] if len(paragraphs) > 1 and not paragraphs[-1].startswith("    ") else []
    return "\n\n".join(["\n".join(own), *closing]) or None


def main(args: list[str], configs: Path | None = CONFIGS) -> dict | int:
    """Parse the subcommand's flags, set up the run, run its step. `configs`: the folder of the course's defaults
    (None: Trainer's)."""
    if args[:1] in (["-h"], ["--help"]):  # the subcommands and the examples; each subcommand has its own -h
        description, _, epilog = __doc__.strip().partition("\n\n")
        parser = argparse.ArgumentParser(
            prog="birthplace.py", description=description, epilog=epilog, formatter_class=HelpFormatter
        )
        subcommands = parser.add_subparsers(title="subcommands (each has its own -h)", metavar="SUBCOMMAND")
        for name, text in birthplace.SUBCOMMAND_HELP.items():
            subcommands.add_parser(name, help=text)
        parser.print_help()
        return 0
    if not args or args[0] not in birthplace.SUBCOMMANDS:
        raise UsageError(
            f"usage: birthplace.py {{{'|'.join(birthplace.SUBCOMMANDS)}}} [CONFIG.json] --data_dir DIR [options]; -h for help"
        )
    subcommand, groups = args[0], birthplace.subcommand_groups(args[0], birthplace.DEFAULT_PRESET, configs)
    texts = {"description": birthplace.SUBCOMMAND_HELP[subcommand], "epilog": subcommand_examples(subcommand)}
    bp_args, model_args, training_args = parse_args(
        groups, args[1:], new_run=subcommand != "evaluate", prog=f"birthplace.py {subcommand}", **texts
    )
    setup_run(training_args)
    step = {"pretrain": birthplace.pretrain, "finetune": birthplace.finetune, "evaluate": birthplace.evaluate_answers}
    return step[subcommand](model_args, bp_args, training_args)


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
