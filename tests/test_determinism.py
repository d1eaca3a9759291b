"""Reproducible span-corruption pretraining: a fixed evaluation set, a training stream that evaluation does not
shift, and data-loader workers that draw new corruptions in every epoch."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from datasets import Dataset
from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
from hf_models.data import (
    SpanCorruptionCollator,
    TrimPaddingCollator,
    corrupt_for_evaluation,
    span_corrupt,
    tokenize_documents,
)
from hf_models.training import ReproducibleTrainer, ShuffledLengthBuckets

BLOCK = 32


@pytest.fixture(scope="module")
def documents(tiny_tokenizer, synthetic_birthplace_dir) -> Dataset:
    lines = (synthetic_birthplace_dir / "wiki.txt").read_text(encoding="utf-8").splitlines()[:48]
    return tokenize_documents(Dataset.from_dict({"text": lines}), tiny_tokenizer)


def tiny_model(tokenizer) -> SmallEncoderForCausalLM:
    torch.manual_seed(0)
    config = SmallEncoderConfig.from_preset(
        "cs224n-mingpt",
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=BLOCK,
        pad_token_id=tokenizer.pad_token_id,
    )  # the preset's dropout is on: training draws from torch's generator at every step
    return SmallEncoderForCausalLM(config)


def make_trainer(tmp_path, tokenizer, documents, **args) -> tuple[Trainer, SpanCorruptionCollator]:
    collator = SpanCorruptionCollator(tokenizer, BLOCK, seed=0)
    training_args = TrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
        **args,
    )
    trainer = ReproducibleTrainer(
        model=tiny_model(tokenizer),
        args=training_args,
        train_dataset=documents.select(range(32)),
        eval_dataset=corrupt_for_evaluation(documents.select(range(32, 48)), tokenizer, BLOCK, seed=0),
        data_collator=TrimPaddingCollator(collator),
    )
    return trainer, collator


def test_evaluation_set_is_corrupted_once_and_reproducibly(tiny_tokenizer, documents):
    fixed = corrupt_for_evaluation(documents, tiny_tokenizer, BLOCK, seed=0)
    assert fixed.column_names == ["input_ids", "attention_mask", "labels"]
    assert fixed[:] == corrupt_for_evaluation(documents, tiny_tokenizer, BLOCK, seed=0)[:]
    assert fixed["input_ids"] != corrupt_for_evaluation(documents, tiny_tokenizer, BLOCK, seed=1)["input_ids"]
    for document, row in zip(documents, fixed, strict=True):
        sep = tiny_tokenizer.sep_token_id
        assert row["input_ids"].count(sep) - document["input_ids"].count(sep) == 3 and len(row["input_ids"]) == BLOCK
    # The collator stacks such rows as they are (no second corruption).
    collator = SpanCorruptionCollator(tiny_tokenizer, BLOCK, seed=0)
    batch = collator([fixed[i] for i in range(4)])
    assert batch["input_ids"].tolist() == fixed["input_ids"][:4]
    assert batch["labels"].tolist() == fixed["labels"][:4]
    assert fixed[5] == span_corrupt(
        documents[5]["input_ids"],
        BLOCK,
        tiny_tokenizer.sep_token_id,
        tiny_tokenizer.pad_token_id,
        random.Random("0-5"),
    )


def test_evaluate_twice_gives_the_same_loss_and_leaves_training_stream(tmp_path, tiny_tokenizer, documents):
    trainer, collator = make_trainer(tmp_path, tiny_tokenizer, documents)
    state = collator._rng.getstate()
    first, second = trainer.evaluate()["eval_loss"], trainer.evaluate()["eval_loss"]
    assert first == second
    assert collator._rng.getstate() == state  # evaluation drew nothing from the training corruptions


def test_training_losses_do_not_depend_on_eval_steps(tmp_path, tiny_tokenizer, documents):
    def losses(**args) -> list[float]:
        trainer, _ = make_trainer(tmp_path, tiny_tokenizer, documents, max_steps=6, **args)
        trainer.train()
        return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]

    without_eval = losses(eval_strategy="no")
    assert len(without_eval) == 6
    assert losses(eval_strategy="steps", eval_steps=2) == without_eval
    assert losses(eval_strategy="steps", eval_steps=1) == without_eval


def loader_epochs(collator: SpanCorruptionCollator, documents: Dataset, epochs: int = 2) -> list[list[list[int]]]:
    loader = torch.utils.data.DataLoader(documents, batch_size=2, collate_fn=collator, num_workers=2)
    return [[batch["input_ids"].tolist() for batch in loader] for _ in range(epochs)]


def test_loader_workers_draw_distinct_corruptions_every_epoch(tiny_tokenizer):
    document = tiny_tokenizer("Vera Tamton was born in Oslo in 1901 and died in Rome in 1980 .")["input_ids"]
    documents = Dataset.from_dict({"input_ids": [document] * 8})
    torch.manual_seed(0)
    epochs = loader_epochs(SpanCorruptionCollator(tiny_tokenizer, BLOCK, seed=0), documents)
    rows = [tuple(row) for epoch in epochs for batch in epoch for row in batch]
    assert len(rows) == 16
    # Worker 0 makes batches 0 and 2, worker 1 batches 1 and 3; every draw is a new corruption.
    assert len(set(rows)) >= 14, "workers or epochs replay each other's corruptions"
    assert epochs[0][0] != epochs[0][1] and epochs[0] != epochs[1]
    # The stream is still reproducible from torch's seed (which Trainer sets).
    torch.manual_seed(0)
    assert loader_epochs(SpanCorruptionCollator(tiny_tokenizer, BLOCK, seed=0), documents) == epochs


def test_predictions_keep_the_dataset_order_when_training_groups_by_length(tmp_path, tiny_tokenizer, documents):
    """Grouping the training batches by length must not reorder what `predict` returns: the sentiment recipe writes
    its test predictions one per line of the test file."""
    rows = documents.map(lambda row: {"input_ids": row["input_ids"][:BLOCK], "labels": row["input_ids"][:BLOCK]})
    assert len(set(map(len, rows["input_ids"]))) > 4  # lengths that grouping would reorder
    collator = DataCollatorForSeq2Seq(tiny_tokenizer, label_pad_token_id=-100)
    outputs = {}
    for strategy in ("random", "group_by_length"):
        training_args = TrainingArguments(
            output_dir=str(tmp_path / strategy),
            per_device_eval_batch_size=4,
            report_to=[],
            use_cpu=True,
            disable_tqdm=True,
            train_sampling_strategy=strategy,
        )
        trainer = ReproducibleTrainer(tiny_model(tiny_tokenizer), training_args, data_collator=collator)
        outputs[strategy] = trainer.predict(rows).label_ids
    assert np.array_equal(outputs["group_by_length"], outputs["random"])
    first = np.asarray(rows[0]["input_ids"])
    assert np.array_equal(outputs["group_by_length"][0][: len(first)], first)


def test_length_buckets_batch_similar_lengths_in_random_order():
    """`ShuffledLengthBuckets`: every index once an epoch, batches far less padded than random ones, the batch order
    not longest first (so an epoch does not end on the shortest examples), the short batch last, and the order a
    function of torch's seed."""
    generator = torch.Generator().manual_seed(0)
    lengths = torch.randint(5, 300, (1606,), generator=generator).tolist()
    sampler = ShuffledLengthBuckets(lengths, batch_size=16)

    def epoch() -> list[list[int]]:
        order = list(sampler)
        return [order[i : i + 16] for i in range(0, len(order), 16)]

    def padding(batches: list[list[int]]) -> float:
        return sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in batches)

    torch.manual_seed(1)
    batches = epoch()
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [len(b) for b in batches] == [16] * 100 + [6]
    random_batches = [list(range(i, min(i + 16, len(lengths)))) for i in range(0, len(lengths), 16)]
    assert padding(batches) < padding(random_batches) / 5
    longest = [max(lengths[i] for i in b) for b in batches[:-1]]
    assert longest != sorted(longest, reverse=True)
    # The last full batches of the epoch are not all among its shortest.
    assert max(longest[-10:]) > sorted(longest)[len(longest) // 2]
    torch.manual_seed(1)
    assert epoch() == batches
    assert epoch() != batches  # a new order each epoch
