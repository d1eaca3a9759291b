"""Data for the three tasks: `datasets` loaders, LM-block packing, and pretraining objectives.

- Loaders (each returns a `datasets.DatasetDict`): `load_birthplace`, `load_birthplace_corpus`,
  `load_cls_books`, `load_text_corpus`.
- Packing: `tokenize_and_group` (run_clm-style blocks), `tokenize_documents` (one row per document), and
  `TrimPaddingCollator` (cuts the columns that are padding in a whole batch).
- Objectives: `span_corrupt` / `SpanCorruptionCollator` (CS224N), `corrupt_for_evaluation` (a fixed
  span-corrupted evaluation set), `encode_birthplace_qa` (our BPE) and `encode_char_qa` (CS224N's characters),
  `encode_openings` (causal LM on each document's first tokens), `encode_reciting_qa` (QA rows that answer
  after a recitation of the person's paragraph opening; `person_name` reads the name of a question). `IGNORE_INDEX` is the label every loss skips.
- Knowledge augmentation of birthplace paragraphs (more forms of each biography): `augment_paragraph`,
  `augmented_copies`, `augmentation_cost` (examples and tokens per form), `augment_forms`, `AUGMENT_FORMS`.
- A label budget: `balanced_subset` (a class-balanced, seeded, nested draw of the training examples).
- A synthetic birthplace task for demos: `write_synthetic_birthplace` (in `hf_models.data.synthetic`).
"""

from .augmentation import AUGMENT_FORMS, augment_forms, augment_paragraph, augmentation_cost, augmented_copies
from .errors import DataError, DataWarning
from .loaders import (
    BIRTHPLACE_FILES,
    detokenize_spm,
    load_birthplace,
    load_birthplace_corpus,
    load_cls_books,
    load_text_corpus,
    read_lines,
)
from .objectives import (
    IGNORE_INDEX,
    SpanCorruptionCollator,
    check_characters,
    corrupt_for_evaluation,
    encode_birthplace_qa,
    encode_char_qa,
    encode_openings,
    encode_reciting_qa,
    person_name,
    span_corrupt,
)
from .processing import TrimPaddingCollator, group_texts, tokenize_and_group, tokenize_documents
from .subsets import balanced_subset
from .synthetic import write_synthetic_birthplace

__all__ = [
    "BIRTHPLACE_FILES",
    "AUGMENT_FORMS",
    "IGNORE_INDEX",
    "DataError",
    "DataWarning",
    "augment_forms",
    "augment_paragraph",
    "augmentation_cost",
    "augmented_copies",
    "balanced_subset",
    "SpanCorruptionCollator",
    "TrimPaddingCollator",
    "check_characters",
    "corrupt_for_evaluation",
    "detokenize_spm",
    "encode_birthplace_qa",
    "encode_char_qa",
    "encode_openings",
    "encode_reciting_qa",
    "group_texts",
    "load_birthplace",
    "load_birthplace_corpus",
    "load_cls_books",
    "load_text_corpus",
    "person_name",
    "read_lines",
    "span_corrupt",
    "tokenize_and_group",
    "tokenize_documents",
    "write_synthetic_birthplace",
]
