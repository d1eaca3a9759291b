"""The CLS-FR book reviews as the sentiment classifier reads them: the tokenizer of the chosen vocabulary, the
three splits, and each review's first tokens."""

from __future__ import annotations

from datasets import DatasetDict
from transformers import PreTrainedTokenizerBase, TrainingArguments

from hf_models.data import balanced_subset, load_cls_books
from hf_models.textio import UsageError
from hf_models.tokenization import resolve_tokenizer
from hf_models.training import ModelArguments

from .sentiment_arguments import SentimentArguments

DATASET = "cls-books"
LANGUAGE = "fr"


def review_tokenizer(model_args: ModelArguments, data_args: SentimentArguments) -> PreTrainedTokenizerBase:
    """`--tokenizer_name_or_path`, else the model's own; with neither, the lab's vocabulary (`--lab_vocabulary`,
    `--lab_raw_text`) is built from DATA_DIR."""
    if data_args.lab_vocabulary and data_args.lab_raw_text:
        raise UsageError("give at most one of --lab_vocabulary (.spm pieces) and --lab_raw_text (raw reviews)")
    vocabulary = (
        "altegrad-lab" if data_args.lab_vocabulary else "altegrad-lab-raw" if data_args.lab_raw_text else "bpe"
    )
    return resolve_tokenizer(
        model_args.tokenizer_path,
        vocabulary,
        data_dir=data_args.data_dir,
        missing="--from_scratch needs --tokenizer_name_or_path (train one with tokenizer/train_tokenizer.py)",
    )


def load_reviews(data_args: SentimentArguments, seed: int) -> DatasetDict:
    """The train, validation and test reviews (SentencePiece pieces with `--lab_vocabulary`, else the text): with
    `--label_budget`, the training reviews of its balanced draw with `seed`; with `--max_eval_samples` and
    `--max_predict_samples`, the first validation and test reviews."""
    raw = load_cls_books(data_args.data_dir, detokenize=not data_args.lab_vocabulary)
    if data_args.label_budget is not None:
        raw["train"] = raw["train"].select(balanced_subset(raw["train"]["label"], data_args.label_budget, seed))
    for split, limit in (("validation", data_args.max_eval_samples), ("test", data_args.max_predict_samples)):
        if limit is not None:
            raw[split] = raw[split].select(range(min(limit, len(raw[split]))))
    return raw


def encode_reviews(
    raw: DatasetDict, tokenizer: PreTrainedTokenizerBase, max_length: int, training_args: TrainingArguments
) -> DatasetDict:
    """Each review's `input_ids` and `attention_mask`: its first `max_length` tokens."""

    def encode(batch: dict) -> dict:
        return tokenizer(batch["text"], truncation=True, max_length=max_length)

    with training_args.main_process_first(desc="tokenization"):
        return raw.map(encode, batched=True, remove_columns=["text"], desc="Tokenizing reviews")
