"""The command-line arguments of `recipes/birthplace.py` (every subcommand), beside `hf_models.tasks.birthplace`."""

from __future__ import annotations

from dataclasses import dataclass, field

from hf_models.data import augment_forms


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
        default=2000, metadata={"help": "pretrain without --tokenizer_name_or_path: size of the BPE trained on wiki.txt."}
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
        default=None, metadata={"help": "evaluate: where to write the predictions (default OUTPUT_DIR/predictions_SPLIT.txt)."}
    )
    london_baseline: bool = field(default=False, metadata={"help": "evaluate: answer 'London' to every question."})
    most_common_baseline: bool = field(
        default=False, metadata={"help": "evaluate: answer the most common training birthplace to every question."}
    )
    max_new_tokens: int = field(default=16, metadata={"help": "evaluate: longest generated answer, in tokens."})
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
