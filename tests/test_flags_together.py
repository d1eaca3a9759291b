"""Flags that touch the same rows, labels or loss, set together: the rows each recipe trains on, exactly.

`tests/test_flag_plumbing.py` checks each flag where it lands; here pairs (and triples) of them meet. Each scenario
runs the recipe's own `main` in process up to `train_model`, which records what it was given and stops (a
`Captured` exception), so that no step is trained; the expected rows are built beside it from the data files with
the library's readers and tokenizers, and compared id for id. Only the LP-FT + gradual unfreezing scenario trains
(two tiny epochs), since what it checks is which weights moved.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from tiny import ONE_STEP as COMMON
from tiny import TINY, run_birthplace, run_pretraining, run_sentiment
from transformers.convert_slow_tokenizer import import_protobuf

from hf_models import training
from hf_models.data import (
    IGNORE_INDEX,
    augment_paragraph,
    detokenize_spm,
    load_birthplace,
    load_birthplace_corpus,
    span_corrupt,
)
from hf_models.tasks import birthplace, sentiment
from hf_models.tasks import pretraining as pretrain
from hf_models.textio import UsageError

# Each task's recipe, run in this process (tests/tiny.py: with Trainer's own defaults).
RECIPE_OF = {pretrain: run_pretraining, sentiment: run_sentiment, birthplace: run_birthplace}


class Captured(Exception):
    """Raised by the stand-in for `train_model`: what the recipe would have trained on."""

    def __init__(self, seen: dict) -> None:
        super().__init__("captured")
        self.seen = seen


def rows_before_training(monkeypatch, task_module, argv: list[str], out: Path) -> dict:
    """Run the recipe up to `train_model`: {model, training_args, tokenizer, train_dataset, collator, ...}."""

    def stop(model, training_args, tokenizer, train_dataset, data_collator, eval_dataset=None, **kwargs):
        raise Captured(
            dict(
                model=model,
                training_args=training_args,
                tokenizer=tokenizer,
                train_dataset=train_dataset,
                collator=data_collator,
                eval_dataset=eval_dataset,
                **kwargs,
            )
        )

    monkeypatch.setattr(training, "train_model", stop)
    with pytest.raises(Captured) as caught:
        RECIPE_OF[task_module]([*argv, "--output_dir", str(out), *COMMON])
    return caught.value.seen


def ids_of(tokenizer, texts: list[str]) -> list[list[int]]:
    return tokenizer(texts, add_special_tokens=False)["input_ids"]


# --------------------------------------------------------------------------------------------------
# recipes/birthplace.py pretrain: --augment, --pretrain_with_qa, --recite_tokens, the objective and the block
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def birthplace_texts(synthetic_birthplace_dir):
    """wiki.txt's paragraphs and the training questions and answers, as the recipe reads them."""
    paragraphs = list(load_birthplace_corpus(synthetic_birthplace_dir)["train"]["text"])
    train = load_birthplace(synthetic_birthplace_dir)["train"]
    return paragraphs, list(train["question"]), list(train["answer"])


def copies_of(paragraphs: list[str], form: str) -> list[str]:
    """`--augment FORM` with one copy: the form of every wiki.txt paragraph that has one, in their order."""
    return [copy for paragraph in paragraphs if (copy := augment_paragraph(paragraph, form)) is not None]


def birthplace_pretrain(monkeypatch, tmp_path, data_dir, tokenizer_dir, *flags: str) -> dict:
    argv = ["pretrain", "--data_dir", str(data_dir), "--tokenizer_name_or_path", str(tokenizer_dir)]
    return rows_before_training(monkeypatch, birthplace, [*argv, "--config_overrides", TINY, *flags], tmp_path / "run")


def test_span_corruption_with_qa_and_augment_copies_only_wiki_paragraphs(
    monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, tiny_tokenizer, birthplace_texts
):
    """Span corruption + `--pretrain_with_qa` + `--augment`: the documents are the paragraphs, then the QA pairs as
    sentences, then the copies of the paragraphs (never of a QA sentence), each one whole and without `</s>`; the
    collator corrupts them in blocks of `--block_size`."""
    paragraphs, questions, answers = birthplace_texts
    flags = ["--pretraining_objective", "span_corruption", "--pretrain_with_qa", "--augment", "opening,name_first"]
    seen = birthplace_pretrain(
        monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, *flags, "--block_size", "48"
    )
    qa_sentences = [f"{q} {a}" for q, a in zip(questions, answers, strict=True)]
    documents = [*paragraphs, *qa_sentences, *copies_of(paragraphs, "opening"), *copies_of(paragraphs, "name_first")]
    assert seen["train_dataset"]["input_ids"] == ids_of(tiny_tokenizer, documents)
    # The collator: a fresh corruption of each document, seeded by --seed, in blocks of 48 (trimmed to the longest).
    examples = [seen["train_dataset"][i] for i in range(4)]
    batch = seen["collator"](examples)
    rng = random.Random(0)
    sep, pad = tiny_tokenizer.sep_token_id, tiny_tokenizer.pad_token_id
    expected = [span_corrupt(example["input_ids"], 48, sep, pad, rng) for example in examples]
    width = batch["input_ids"].shape[1]
    assert width <= 48
    assert batch["input_ids"].tolist() == [row["input_ids"][:width] for row in expected]
    assert batch["labels"].tolist() == [row["labels"][:width] for row in expected]


def test_openings_with_qa_augment_and_recitations_from_the_original_paragraphs(
    monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, tiny_tokenizer, birthplace_texts
):
    """Openings + `--pretrain_with_qa` + `--augment` + `--recite_tokens`: the openings of the paragraphs and of
    their copies, then one reciting QA row per training question whose recitation is the opening of the person's
    own wiki.txt paragraph (not of a copy), the loss on every token of every row."""
    paragraphs, questions, answers = birthplace_texts
    flags = ["--pretraining_objective", "openings", "--opening_tokens", "6", "--block_size", "40"]
    flags += ["--pretrain_with_qa", "--augment", "name_first", "--recite_tokens", "4"]
    seen = birthplace_pretrain(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, *flags)
    tok = tiny_tokenizer
    sep, eos = tok.sep_token_id, tok.eos_token_id
    openings = [ids[:6] + [eos] for ids in ids_of(tok, [*paragraphs, *copies_of(paragraphs, "name_first")])]

    def own_paragraph(question: str) -> str:
        name = question.removeprefix("Where was ").removesuffix(" born?")
        return next((p for p in paragraphs if p.startswith(f"{name}.")), f"{name}.")

    recitations = [ids[:4] for ids in ids_of(tok, [own_paragraph(q) for q in questions])]
    qa_rows = [
        (recitation + [eos] + question + [sep] + answer + [sep, eos])[:40]
        for recitation, question, answer in zip(
            recitations, ids_of(tok, questions), ids_of(tok, [f" {a}" for a in answers]), strict=True
        )
    ]
    rows = seen["train_dataset"]
    assert rows["input_ids"] == openings + qa_rows
    assert rows["labels"] == rows["input_ids"]  # mixed pretraining: the loss on every token, question included
    assert seen["collator"].label_pad_token_id == IGNORE_INDEX


def test_openings_are_cut_to_the_block(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir):
    """`--opening_tokens` longer than `--block_size`: each opening is cut to block - 1 tokens and `</s>`."""
    flags = ["--pretraining_objective", "openings", "--opening_tokens", "20", "--block_size", "8"]
    seen = birthplace_pretrain(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, *flags)
    tok = seen["tokenizer"]
    paragraphs = list(load_birthplace_corpus(synthetic_birthplace_dir)["train"]["text"])
    assert seen["train_dataset"]["input_ids"] == [ids[:7] + [tok.eos_token_id] for ids in ids_of(tok, paragraphs)]


def test_openings_with_qa_in_the_plain_format(
    monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, tiny_tokenizer, birthplace_texts
):
    """Openings + `--pretrain_with_qa` without a recitation: `question ⁇ answer ⁇ </s>` after the openings (no QA
    sentence among the documents: those are for span corruption), the loss on every token."""
    paragraphs, questions, answers = birthplace_texts
    flags = [
        "--pretraining_objective",
        "openings",
        "--opening_tokens",
        "5",
        "--block_size",
        "32",
        "--pretrain_with_qa",
    ]
    seen = birthplace_pretrain(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, *flags)
    tok = tiny_tokenizer
    sep, eos = tok.sep_token_id, tok.eos_token_id
    openings = [ids[:5] + [eos] for ids in ids_of(tok, paragraphs)]
    qa = [
        q + [sep] + a + [sep, eos]
        for q, a in zip(ids_of(tok, questions), ids_of(tok, [f" {a}" for a in answers]), strict=True)
    ]
    assert seen["train_dataset"]["input_ids"] == openings + qa
    assert seen["train_dataset"]["labels"] == openings + qa


def test_recitations_with_qa_need_the_openings_objective(
    monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir
):
    flags = ["--pretraining_objective", "span_corruption", "--pretrain_with_qa", "--recite_tokens", "4"]
    with pytest.raises(UsageError, match="--recite_tokens with --pretrain_with_qa needs --pretraining_objective"):
        birthplace_pretrain(monkeypatch, tmp_path, synthetic_birthplace_dir, tiny_tokenizer_dir, *flags)


# --------------------------------------------------------------------------------------------------
# The lab's vocabularies: a tiny SentencePiece model and its dict.txt, and reviews made of its pieces
# --------------------------------------------------------------------------------------------------
# Scores rank the merges (higher first); each word below is segmented into these pieces by the model.
MERGED = ["▁l", "iv", "re", "▁liv", "ivre", "▁livre"]
CHARS = ["▁", "l", "i", "v", "r", "e", "s"]
WORD_PIECES = {"le": "▁l e", "livre": "▁livre", "livres": "▁livre s"}
LAB_ID = {piece: 4 + i for i, piece in enumerate(MERGED + CHARS)}  # dict.txt's order, after <s> <pad> </s> <unk>


def write_lab_books(folder: Path) -> Path:
    """A cls-books folder: the reviews as the lab's pieces, labels, dict.txt and sentencepiece.french.model."""
    model = import_protobuf().ModelProto()
    model.trainer_spec.model_type = 2  # BPE
    model.trainer_spec.unk_id = 0
    model.normalizer_spec.add_dummy_prefix = True
    model.normalizer_spec.remove_extra_whitespaces = True
    model.pieces.add(piece="<unk>", score=0.0, type=2)
    for control in ("<s>", "</s>"):
        model.pieces.add(piece=control, score=0.0, type=3)
    for rank, piece in enumerate(MERGED + CHARS):
        model.pieces.add(piece=piece, score=-float(rank), type=1)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sentencepiece.french.model").write_bytes(model.SerializeToString())
    (folder / "dict.txt").write_text("".join(f"{piece} 1\n" for piece in MERGED + CHARS), encoding="utf-8")
    rng = random.Random(0)
    for split, n in (("train", 12), ("valid", 8), ("test", 4)):
        reviews = [
            " ".join(WORD_PIECES[w] for w in rng.choices(list(WORD_PIECES), k=rng.randint(1, 6))) for _ in range(n)
        ]
        (folder / f"{split}.review.spm").write_text("".join(f"{r}\n" for r in reviews), encoding="utf-8")
        if split != "test":
            (folder / f"{split}.label").write_text("".join(f"{i % 2}\n" for i in range(n)), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def lab_books(tmp_path_factory) -> Path:
    return write_lab_books(tmp_path_factory.mktemp("flags_together") / "books")


def lab_rows(books: Path, split: str, max_length: int) -> list[list[int]]:
    """The lab's rows: `<s>` then each piece's dict.txt id, cut to `max_length` tokens (`<s>` included)."""
    reviews = (books / f"{split}.review.spm").read_text(encoding="utf-8").splitlines()
    return [([0] + [LAB_ID[piece] for piece in review.split()])[:max_length] for review in reviews]


def sentiment_rows(monkeypatch, tmp_path, books: Path, *flags: str) -> dict:
    argv = ["--data_dir", str(books), "--from_scratch", "--config_overrides", TINY, *flags]
    return rows_before_training(monkeypatch, sentiment, argv, tmp_path / "run")


# --------------------------------------------------------------------------------------------------
# recipes/finetune_sentiment.py: the lab's vocabularies with the review length, freezing with unfreezing
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("vocabulary", ["--lab_vocabulary", "--lab_raw_text"])
def test_lab_vocabularies_with_max_seq_length(monkeypatch, tmp_path, lab_books, vocabulary):
    """The lab's pieces (`--lab_vocabulary`) and the raw reviews through its SentencePiece model (`--lab_raw_text`)
    give the same rows: `<s>` and the pieces' ids, cut to `--max_seq_length` tokens with `<s>` counted."""
    seen = sentiment_rows(monkeypatch, tmp_path, lab_books, vocabulary, "--max_seq_length", "5")
    assert seen["train_dataset"]["input_ids"] == lab_rows(lab_books, "train", 5)
    assert seen["train_dataset"]["label"] == [i % 2 for i in range(12)]
    assert seen["eval_dataset"]["input_ids"] == lab_rows(lab_books, "valid", 5)
    if vocabulary == "--lab_raw_text":  # the text the tokenizer was given: the reviews detokenized
        reviews = (lab_books / "train.review.spm").read_text(encoding="utf-8").splitlines()
        assert seen["tokenizer"]([detokenize_spm(r) for r in reviews])["input_ids"] == lab_rows(lab_books, "train", 99)


def test_max_seq_length_is_cut_to_the_models_positions(monkeypatch, tmp_path, lab_books):
    """`--max_seq_length` beyond a new model's `max_position_embeddings`: the rows are cut to the positions."""
    overrides = f"{TINY},max_position_embeddings=4"
    seen = sentiment_rows(
        monkeypatch, tmp_path, lab_books, "--lab_vocabulary", "--config_overrides", overrides, "--max_seq_length", "9"
    )
    assert seen["model"].config.max_position_embeddings == 4
    assert seen["train_dataset"]["input_ids"] == lab_rows(lab_books, "train", 4)


def test_from_scratch_with_a_frozen_backbone_trains_the_head_alone(monkeypatch, tmp_path, lab_books):
    seen = sentiment_rows(monkeypatch, tmp_path, lab_books, "--lab_vocabulary", "--freeze_backbone")
    trainable = {name for name, p in seen["model"].named_parameters() if p.requires_grad}
    assert trainable == {"classifier.weight", "classifier.bias"}
    assert seen["model"].config.hidden_size == 32  # the new model of --config_overrides, no checkpoint
    assert seen["optimizer_cls_and_kwargs"] is None  # Trainer's own AdamW, which leaves frozen weights out


def test_a_frozen_backbone_is_never_thawed_by_gradual_unfreezing(monkeypatch, tmp_path, lab_books):
    """`--gradual_unfreezing` would thaw, from the second epoch on, the backbone `--freeze_backbone` keeps."""
    with pytest.raises(UsageError, match="--freeze_backbone keeps the backbone that --gradual_unfreezing thaws"):
        sentiment_rows(
            monkeypatch, tmp_path, lab_books, "--lab_vocabulary", "--freeze_backbone", "--gradual_unfreezing", "1"
        )


def test_linear_probe_head_then_gradual_unfreezing(monkeypatch, tmp_path, lab_books):
    """LP-FT with gradual unfreezing: training starts from the probe's head with the whole backbone frozen; the
    first epoch trains the head alone, the second the top block too; the block below it and the embeddings never
    train."""
    seen: dict = {}
    real_probe, real_train = sentiment.init_head_by_linear_probe, training.train_model

    def probe(model, *args, **kwargs):
        metrics = real_probe(model, *args, **kwargs)
        seen["probe_head"] = model.classifier.weight.detach().clone()
        return metrics

    def train(model, *args, **kwargs):
        seen["start"] = {name: p.detach().clone() for name, p in model.named_parameters()}
        seen["trainable_at_start"] = {name for name, p in model.named_parameters() if p.requires_grad}
        seen["model"] = model
        return real_train(model, *args, **kwargs)

    monkeypatch.setattr(sentiment, "init_head_by_linear_probe", probe)
    monkeypatch.setattr(training, "train_model", train)
    flags = ["--lab_vocabulary", "--head_init", "linear_probe", "--linear_probe_folds", "2"]
    flags += ["--gradual_unfreezing", "1", "--learning_rate", "0.01", "--eval_strategy", "epoch"]
    argv = ["--data_dir", str(lab_books), "--from_scratch", "--config_overrides", TINY, *flags]
    run_sentiment(
        [*argv, "--output_dir", str(tmp_path / "run"), *COMMON, "--max_steps", "-1", "--num_train_epochs", "2"]
    )
    start = seen["start"]
    assert torch.equal(start["classifier.weight"], seen["probe_head"])
    assert seen["trainable_at_start"] == {"classifier.weight", "classifier.bias"}
    end = dict(seen["model"].named_parameters())
    moved = {name for name in start if not torch.equal(start[name], end[name].detach())}
    assert "classifier.weight" in moved and "model.layers.1.mlp.fc1.weight" in moved
    assert not moved & {"model.embed_tokens.weight", "model.layers.0.mlp.fc1.weight"}
    assert all(not name.startswith("model.layers.0.") for name in moved)


# --------------------------------------------------------------------------------------------------
# recipes/pretrain.py: the objective with the block size and the packing
# --------------------------------------------------------------------------------------------------
CORPUS_LINES = [f"line {i}: the book {'is good' if i % 3 else 'was long and dull'} and ends here." for i in range(30)]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("flags_together_corpus") / "corpus.txt"
    path.write_text("".join(f"{line}\n" for line in CORPUS_LINES), encoding="utf-8")
    return path


def packed(documents: list[list[int]], eos: int, block: int) -> list[list[int]]:
    """run_clm.py's packing: every document then `</s>`, concatenated, cut into whole blocks."""
    stream = [token for ids in documents for token in [*ids, eos]]
    return [stream[i : i + block] for i in range(0, len(stream) - block + 1, block)]


def pretrain_rows(monkeypatch, tmp_path, corpus: Path, *flags: str) -> dict:
    argv = ["--train_files", str(corpus), "--validation_split_percentage", "0", "--config_overrides", TINY, *flags]
    return rows_before_training(monkeypatch, pretrain, argv, tmp_path / "run")


@pytest.mark.parametrize("objective", ["clm", "mlm"])
def test_packed_objectives_with_the_block_size(
    monkeypatch, tmp_path, corpus_file, tiny_tokenizer_dir, tiny_tokenizer, objective
):
    flags = ["--tokenizer_name_or_path", str(tiny_tokenizer_dir), "--objective", objective, "--block_size", "16"]
    seen = pretrain_rows(monkeypatch, tmp_path, corpus_file, *flags)
    blocks = packed(ids_of(tiny_tokenizer, CORPUS_LINES), tiny_tokenizer.eos_token_id, 16)
    assert seen["train_dataset"]["input_ids"] == blocks
    torch.manual_seed(0)
    batch = seen["collator"]([seen["train_dataset"][i] for i in range(len(blocks))])
    labels, inputs, original = batch["labels"], batch["input_ids"], torch.tensor(blocks)
    if objective == "clm":
        assert torch.equal(inputs, original) and torch.equal(labels, original)  # the model shifts them
    else:
        masked = labels != IGNORE_INDEX
        assert masked.any() and torch.equal(labels[masked], original[masked])
        assert torch.equal(inputs[~masked], original[~masked])


def test_the_default_block_is_the_models_positions(
    monkeypatch, tmp_path, corpus_file, tiny_tokenizer_dir, tiny_tokenizer
):
    seen = pretrain_rows(
        monkeypatch,
        tmp_path,
        corpus_file,
        *[
            "--tokenizer_name_or_path",
            str(tiny_tokenizer_dir),
            "--config_overrides",
            f"{TINY},max_position_embeddings=24",
        ],
    )
    assert seen["train_dataset"]["input_ids"] == packed(ids_of(tiny_tokenizer, CORPUS_LINES), 2, 24)


def test_span_corruption_keeps_documents_whole(monkeypatch, tmp_path, corpus_file, tiny_tokenizer_dir, tiny_tokenizer):
    """Span corruption with `--block_size`: one row per document, not packed and without `</s>`; the collator
    corrupts each in blocks of that size."""
    flags = [
        "--tokenizer_name_or_path",
        str(tiny_tokenizer_dir),
        "--objective",
        "span_corruption",
        "--block_size",
        "24",
    ]
    seen = pretrain_rows(monkeypatch, tmp_path, corpus_file, *flags)
    assert seen["train_dataset"]["input_ids"] == ids_of(tiny_tokenizer, CORPUS_LINES)
    assert seen["collator"].collator.block_size == 24


def test_lab_vocabulary_blocks_have_no_bos(monkeypatch, tmp_path, lab_books):
    """`--lab_vocabulary` (raw text, the lab's ids) packed into blocks: the pieces' ids and `</s>` (2) between
    documents; the `<s>` its tokenizer puts in front of a review is no part of a pretraining block."""
    corpus = tmp_path / "lab_corpus.txt"
    words = [random.Random(i).choices(list(WORD_PIECES), k=1 + i % 5) for i in range(20)]
    corpus.write_text("".join(" ".join(w) + "\n" for w in words), encoding="utf-8")
    seen = pretrain_rows(monkeypatch, tmp_path, corpus, "--lab_vocabulary", str(lab_books), "--block_size", "8")
    documents = [[LAB_ID[piece] for word in line for piece in WORD_PIECES[word].split()] for line in words]
    assert seen["train_dataset"]["input_ids"] == packed(documents, 2, 8)
