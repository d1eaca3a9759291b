"""The command-line arguments of `recipes/birthplace.py`, beside `hf_models.tasks.birthplace`: one dataclass for the
three steps, of which each subcommand takes only the fields it uses (`subcommand_groups`)."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field

from transformers import TrainingArguments

from hf_models.data import augment_forms
from hf_models.training import TRAINER_GROUP, FlagGroup, HelpFormatter, help_sections, model_group


@dataclass
class BirthplaceArguments:
    data_dir: str = field(
        default=None,
        metadata={"help": "Folder with wiki.txt, birth_places_train.tsv, birth_dev.tsv, birth_test_inputs.tsv."},
    )
    variant: str = field(
        default="vanilla",
        metadata={"help": "Attention of a model built from scratch.", "choices": ["vanilla", "synthesizer"]},
    )
    block_size: int | None = field(
        default=None, metadata={"help": "Tokens per sequence. Defaults to the model's max_position_embeddings."}
    )
    tokenizer_vocab_size: int = field(
        default=2000,
        metadata={
            "help": "Without --tokenizer_name_or_path (pretrain; finetune from scratch): size of the BPE trained "
            "on wiki.txt."
        },
    )
    pretraining_objective: str = field(
        default="span_corruption",
        metadata={
            "help": "pretrain: 'span_corruption' (the course's), or 'openings': causal LM on the first "
            "--opening_tokens tokens of each wiki.txt paragraph, where the birth facts are.",
            "choices": ["span_corruption", "openings"],
        },
    )
    opening_tokens: int = field(default=40, metadata={"help": "pretrain with 'openings': tokens kept per paragraph."})
    pretrain_with_qa: bool = field(
        default=False,
        metadata={
            "help": "pretrain: mix the training QA pairs into the corpus (mixed training): 'question answer' "
            "lines with span corruption, `question ⁇ answer ⁇ </s>` examples with 'openings'."
        },
    )
    augment: str = field(
        default="",
        metadata={
            "help": "pretrain: comma-separated forms of each wiki.txt paragraph added to the corpus (knowledge "
            "augmentation, `hf_models.data.augmentation`): 'permute' (sentences in another order), 'name_first' "
            "(every sentence starts with the full name), 'opening' (the opening sentence alone). Built from the "
            "paragraph's own text only; the tokenizer is trained on the paragraphs without them."
        },
    )
    augment_copies: int = field(
        default=1, metadata={"help": "pretrain with --augment: most copies of a paragraph per form (distinct ones)."}
    )
    eval_split: str = field(
        default="validation",
        metadata={"help": "evaluate: which questions to answer.", "choices": ["validation", "test", "train"]},
    )
    predictions_file: str | None = field(
        default=None,
        metadata={"help": "evaluate: where to write the predictions (default OUTPUT_DIR/predictions_SPLIT.txt)."},
    )
    london_baseline: bool = field(default=False, metadata={"help": "evaluate: answer 'London' to every question."})
    most_common_baseline: bool = field(
        default=False, metadata={"help": "evaluate: answer the most common training birthplace to every question."}
    )
    max_new_tokens: int = field(default=16, metadata={"help": "evaluate: longest generated answer, in tokens."})
    max_predict_samples: int | None = field(
        default=None,
        metadata={"help": "evaluate: answer only the first N questions of --eval_split (debugging, a smoke test)."},
    )
    recite_tokens: int = field(
        default=0,
        metadata={
            "help": "Recite, then answer (our BPE; 0: off): QA rows become `recitation </s> question ⁇ answer ⁇ "
            "</s>`, where the recitation is the first N tokens of the person's wiki.txt paragraph in training and "
            "what the model writes from the name `Name.` when it answers. Use the pretraining's --opening_tokens, "
            "and give it to every subcommand (with --pretrain_with_qa, to the mixed QA rows too)."
        },
    )
    counterfactual_qa: float = field(
        default=0.0,
        metadata={
            "help": "With --recite_tokens (pretrain: with --pretrain_with_qa): the fraction of training QA rows "
            "that get a twin whose birthplace is another training answer, in the recitation and as the answer, so "
            "that the model learns to read the answer from its recitation rather than recall it from the name "
            "(0: off)."
        },
    )
    answer_from_recitation: bool = field(
        default=False,
        metadata={
            "help": "evaluate, with --recite_tokens: instead of generating the answer, choose the span of the "
            "model's own recitation that the model scores highest as the answer: a run of words within a clause, "
            "shaped like the training answers (no longer than the longest; capitalized if they all are). A "
            "question whose recitation has no such span is answered by generation."
        },
    )
    course_vocabulary: bool = field(
        default=False,
        metadata={
            "help": "CS224N's own setting: its character vocabulary (built from wiki.txt: □ pad = 0, ⁇ mask = 1, "
            "then the sorted characters), character span corruption, QA rows 'question⁇answer⁇', and answers read "
            "from 32 greedily generated characters, between the first and second ⁇. Give it to every subcommand."
        },
    )

    def __post_init__(self) -> None:  # a wrong --augment fails before the tokenizer and the model are built
        augment_forms(self.augment)
        if self.augment_copies < 1:
            raise ValueError(f"--augment_copies must be positive, got {self.augment_copies}")
        if self.recite_tokens < 0:
            raise ValueError(f"--recite_tokens must be 0 (off) or positive, got {self.recite_tokens}")
        if self.recite_tokens and self.course_vocabulary:
            raise ValueError(
                "--recite_tokens is for our BPE; the course's characters (--course_vocabulary) answer directly"
            )
        if not 0.0 <= self.counterfactual_qa <= 1.0:
            raise ValueError(f"--counterfactual_qa must be a fraction in [0, 1], got {self.counterfactual_qa}")
        if self.counterfactual_qa and not self.recite_tokens:
            raise ValueError("--counterfactual_qa swaps the birthplace in the recitation: it needs --recite_tokens")
        if self.answer_from_recitation and not self.recite_tokens:
            raise ValueError("--answer_from_recitation chooses the answer in the recitation: it needs --recite_tokens")


# What each subcommand does (its --help's first line), and the fields it takes.
SUBCOMMAND_HELP = {
    "pretrain": "Pretrain on wiki.txt: the course's span corruption, or causal LM on paragraph openings (ours).",
    "finetune": "Finetune on birth_places_train.tsv, from a pretrained model or from scratch.",
    "evaluate": "Answer the dev (or test) questions by greedy decoding and score them; or a baseline.",
}
_SHARED = ("data_dir", "course_vocabulary", "block_size", "recite_tokens")
SUBCOMMAND_FIELDS = {
    "pretrain": (
        *_SHARED,
        "variant",
        "tokenizer_vocab_size",
        "pretraining_objective",
        "opening_tokens",
        "pretrain_with_qa",
        "augment",
        "augment_copies",
        "counterfactual_qa",
    ),
    "finetune": (*_SHARED, "variant", "tokenizer_vocab_size", "counterfactual_qa"),
    "evaluate": (
        *_SHARED,
        "eval_split",
        "predictions_file",
        "london_baseline",
        "most_common_baseline",
        "max_new_tokens",
        "max_predict_samples",
        "answer_from_recitation",
    ),
}
# `evaluate` builds no model: no preset, overrides or attention type.
EVALUATE_MODEL_FIELDS = ("model_name_or_path", "tokenizer_name_or_path", "overwrite_output_dir")
# ... and no Trainer: of TrainingArguments it reads only these.
EVALUATE_TRAINER_FIELDS = ("output_dir", "per_device_eval_batch_size", "seed", "use_cpu", "log_level")
EVALUATE_TRAINER_TITLE = "Trainer arguments (the few of transformers.TrainingArguments that evaluate reads)"


def subcommand_groups(subcommand: str, default_preset: str) -> tuple[FlagGroup, ...]:
    """The flag groups of one subcommand: its own birthplace fields, the model's, then Trainer's (for `evaluate`,
    only the ones it reads: a Trainer flag there would change nothing, so it is refused)."""
    title = f"Birthplace arguments ({subcommand})"
    model_fields = EVALUATE_MODEL_FIELDS if subcommand == "evaluate" else None
    # "evaluate: which questions to answer." reads "Which questions to answer." under evaluate's own -h.
    prefix = f"{subcommand}: "
    helps = {}
    for spec in dataclasses.fields(BirthplaceArguments):
        if (text := spec.metadata.get("help", "")).startswith(prefix):
            text = text.removeprefix(prefix)
            helps[spec.name] = text[:1].upper() + text[1:]
    return (
        FlagGroup(title, BirthplaceArguments, SUBCOMMAND_FIELDS[subcommand], helps),
        model_group(default_preset, model_fields),
        FlagGroup(EVALUATE_TRAINER_TITLE, TrainingArguments, EVALUATE_TRAINER_FIELDS)
        if subcommand == "evaluate"
        else TRAINER_GROUP,
    )


def subcommand_help(subcommand: str, doc: str | None) -> dict[str, str]:
    """A subcommand's --help: what it does, then the recipe's examples."""
    return {
        "prog": f"birthplace.py {subcommand}",
        "description": SUBCOMMAND_HELP[subcommand],
        "epilog": help_sections(doc).get("epilog"),
    }


def top_level_parser(doc: str | None) -> argparse.ArgumentParser:
    """`birthplace.py -h`: the subcommands and the recipe's examples (each subcommand has its own -h)."""
    parser = argparse.ArgumentParser(prog="birthplace.py", formatter_class=HelpFormatter, **help_sections(doc))
    subcommands = parser.add_subparsers(title="subcommands (each has its own -h)", metavar="SUBCOMMAND")
    for name, text in SUBCOMMAND_HELP.items():
        subcommands.add_parser(name, help=text)
    return parser
