"""The courses' exact settings, as small functions the recipes call behind one flag.

- CS224N a5 with its character vocabulary (`recipes/birthplace.py --course_vocabulary`): QA examples are the
  course's `NameDataset` rows, `question⁇answer⁇`, with the loss on `⁇answer⁇` (the course pads with `□` and
  ignores pad targets); evaluation greedily generates 32 characters after `question⁇` and keeps the text between
  the first and second `⁇` of the completion, as the course's `run.py` does. Span corruption and block 128 are the
  project's defaults already (`SpanCorruptionCollator`, the `cs224n-mingpt` preset).
- The ALTeGraD lab (`recipes/finetune_sentiment.py --lab_vocabulary`): reviews stay SentencePiece pieces and go
  through the lab's 50,001-id tokenizer (`hf_models.course_tokenizers.build_altegrad_lab_tokenizer`).
"""

from __future__ import annotations

import os
from pathlib import Path

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from .course_tokenizers import (
    CS224N_MASK_CHAR,
    build_altegrad_lab_tokenizer,
    build_cs224n_char_tokenizer,
    load_course_tokenizer,
)
from .generation import greedy_completions

IGNORE_INDEX = -100
CS224N_ANSWER_CHARS = 32  # the course's evaluation samples 32 characters


def cs224n_char_tokenizer(data_dir: str | os.PathLike, tokenizer_path: str | os.PathLike | None = None):
    """The course's character tokenizer: loaded from `tokenizer_path`, else built from `DATA_DIR/wiki.txt`."""
    if tokenizer_path is not None:
        return load_course_tokenizer(tokenizer_path)
    return build_cs224n_char_tokenizer(Path(data_dir) / "wiki.txt")


def check_characters(texts: list[str], tokenizer: PreTrainedTokenizerBase, what: str) -> None:
    """The course's `stoi` has no unknown character: name the ones missing instead of failing inside tokenizers."""
    unknown = sorted(set("".join(texts)) - set(tokenizer.get_vocab()))
    if unknown:
        raise ValueError(
            f"{what}: {len(unknown)} character(s) are not in the character vocabulary (wiki.txt's characters): "
            f"{unknown[:20]}"
        )


def encode_char_qa(
    examples: dict[str, list[str]], tokenizer: PreTrainedTokenizerBase, block_size: int
) -> dict[str, list[list[int]]]:
    """Batched `datasets.map` function: CS224N's `NameDataset` rows on character ids.

    `input_ids` is `question⁇answer⁇`; `labels` are -100 on the question only, so that (after the causal shift) the
    model learns to emit `⁇`, the answer and the closing `⁇`, as the course's targets do. Rows are not padded (the
    collator pads with `□` and -100). A row longer than `block_size` loses the start of its question.
    """
    sep = tokenizer.sep_token_id
    check_characters(examples["question"] + examples["answer"], tokenizer, "birthplace QA rows")
    questions = tokenizer(examples["question"], add_special_tokens=False)["input_ids"]
    answers = tokenizer(examples["answer"], add_special_tokens=False)["input_ids"]
    out: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for question, answer in zip(questions, answers, strict=True):
        target = [sep, *answer, sep]
        question = question[max(0, len(question) + len(target) - block_size) :]
        out["input_ids"].append(question + target)
        out["attention_mask"].append([1] * (len(question) + len(target)))
        out["labels"].append([IGNORE_INDEX] * len(question) + target)
    return out


def answer_between_masks(completion: str) -> str:
    """The course's `completion.split('⁇')[1]`: the text between the first and second `⁇` ('' when absent)."""
    parts = completion.split(CS224N_MASK_CHAR)
    return parts[1] if len(parts) > 1 else ""


def predict_char_answers(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    questions: list[str],
    block_size: int | None = None,
    batch_size: int = 64,
    max_new_chars: int = CS224N_ANSWER_CHARS,
) -> list[str]:
    """Greedy-decode `max_new_chars` characters after `question⁇` (left-padded batches, no early stop), then keep
    the text between the first and second `⁇` of question + completion."""
    config = model.config
    # A converted course synthesizer spans ℓ = block - 1 positions only.
    usable = config.max_position_embeddings if config.attention_type == "vanilla" else config.synthesizer_length
    block_size = min(block_size or usable, usable)
    check_characters(questions, tokenizer, "questions")
    prompts = [ids[-(block_size - 1) :] for ids in tokenizer([q + CS224N_MASK_CHAR for q in questions])["input_ids"]]
    # min_new_tokens: never stop early, as the course samples a fixed number of characters.
    completions = greedy_completions(
        model, tokenizer, prompts, block_size, max_new_chars, batch_size, min_new_tokens=max_new_chars
    )
    return [answer_between_masks(tokenizer.decode(p + c)) for p, c in zip(prompts, completions, strict=True)]


def altegrad_lab_tokenizer(data_dir: str | os.PathLike, tokenizer_path: str | os.PathLike | None = None):
    """The lab's tokenizer: loaded from `tokenizer_path`, else built from `DATA_DIR/dict.txt` and the .model."""
    if tokenizer_path is not None:
        return load_course_tokenizer(tokenizer_path)
    data_dir = Path(data_dir)
    sentencepiece_model = data_dir / "sentencepiece.french.model"  # only checked against dict.txt
    return build_altegrad_lab_tokenizer(
        data_dir / "dict.txt", sentencepiece_model if sentencepiece_model.is_file() else None
    )
