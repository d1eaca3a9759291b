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

from hf_models import lazy_namespace

# Each name and its module, imported when first used (a command line's checks need no datasets).
_MODULES = {
    name: module
    for module, names in {
        "loaders": (
            "BIRTHPLACE_FILES DataError DataWarning balanced_subset detokenize_spm load_birthplace "
            "load_birthplace_corpus load_cls_books load_text_corpus read_lines"
        ),
        "augmentation": "AUGMENT_FORMS augment_forms augment_paragraph augmentation_cost augmented_copies",
        "objectives": (
            "IGNORE_INDEX SpanCorruptionCollator check_characters corrupt_for_evaluation "
            "encode_birthplace_qa encode_char_qa encode_openings encode_reciting_qa person_name span_corrupt"
        ),
        "processing": "TrimPaddingCollator group_texts tokenize_and_group tokenize_documents",
        "synthetic": "write_synthetic_birthplace",
    }.items()
    for name in names.split()
}

__all__ = list(_MODULES)

__getattr__, __dir__ = lazy_namespace(__name__, _MODULES)
