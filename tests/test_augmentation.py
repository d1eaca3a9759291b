"""Knowledge augmentation of the birthplace pretraining (`--augment`): each form on hand-written paragraphs, that it
reads nothing but the paragraph, and that the copies (and their cost) reach the training set
while the default run is unchanged."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from tiny import QUIET, TINY_ONE_LAYER, run_birthplace

from hf_models.data import augment_forms, augment_paragraph, augmentation_cost, augmented_copies, encode_openings
from hf_models.data.augmentation import name_first, opening_sentence, split_paragraph
from hf_models.run_record import read_record

COMMON = [*QUIET, "--seed", "0"]


ADA = (
    "Ada Lovelace. Lovelace was born in London in 1815. She wrote the first program. "
    "Her father was Lord Byron. Ada Lovelace died in 1852 ."
)


def test_the_title_is_the_name_and_periods_of_initials_end_no_sentence():
    assert split_paragraph(ADA) == (
        "Ada Lovelace",
        [
            "Lovelace was born in London in 1815.",
            "She wrote the first program.",
            "Her father was Lord Byron.",
            "Ada Lovelace died in 1852 .",
        ],
    )
    # wiki.txt's own cases: an initial in the title, "b." and "St." inside a sentence.
    fry = "Douglas P. Fry. Douglas P Fry (b. 1953 in St. Louis) is a professor ."
    assert split_paragraph(fry) == ("Douglas P. Fry", ["Douglas P Fry (b. 1953 in St. Louis) is a professor ."])
    assert split_paragraph("J.C. Patterson. Born in Armagh .") == ("J.C. Patterson", ["Born in Armagh ."])
    assert split_paragraph("born in Paris .") == (None, ["born in Paris ."])


def test_name_first_puts_the_full_name_at_the_start_of_each_sentence():
    assert augment_paragraph(ADA, "name_first") == (
        "Ada Lovelace. Ada Lovelace was born in London in 1815. Ada Lovelace wrote the first program. "
        "Ada Lovelace's father was Lord Byron. Ada Lovelace died in 1852 ."
    )
    # No pronoun or surname to replace: the name is put before the sentence.
    assert name_first("John Stephen. Born in Glasgow, Stephen became a welder .") == (
        "John Stephen. John Stephen: Born in Glasgow, Stephen became a welder ."
    )
    # Already in the form (the name without the title's periods counts): no copy.
    assert (
        augment_paragraph("Douglas P. Fry. Douglas P Fry (born 1953 in Boston) is a professor .", "name_first") is None
    )
    assert name_first("born in Paris .") is None  # no title, no name


def test_opening_is_the_first_sentence_alone_starting_with_the_name():
    assert augment_paragraph(ADA, "opening") == "Ada Lovelace was born in London in 1815."
    assert opening_sentence("Khatchig Mouradian. Khatchig Mouradian is a journalist born in Lebanon .") == (
        "Khatchig Mouradian is a journalist born in Lebanon ."
    )
    assert opening_sentence("born in Paris .") is None  # the paragraph itself


def test_a_paragraphs_copies_do_not_depend_on_the_other_paragraphs():
    alone = augmented_copies([ADA], ["name_first", "opening"])
    among = augmented_copies(["Bob Ray. Ray was born in Oslo. He sang .", ADA], ["name_first", "opening"])
    assert {form: texts[-1:] for form, texts in among.items()} == alone


def test_the_copies_use_the_paragraph_alone(synthetic_birthplace_dir: Path):
    """The function sees the paragraph and the form, nothing else; every word of a copy is one of the paragraph's
    (the name put first adds only ':' and "'s"; punctuation aside)."""
    assert list(inspect.signature(augment_paragraph).parameters) == ["paragraph", "form"]
    paragraphs = (synthetic_birthplace_dir / "wiki.txt").read_text(encoding="utf-8").splitlines()
    copies = augmented_copies(paragraphs, ["name_first", "opening"])
    assert all(copies.values())
    for paragraph in paragraphs:
        words = set(re.sub(r"[.,;()]", " ", paragraph).split())
        for form in copies:
            copy = augment_paragraph(paragraph, form)
            assert copy is None or set(re.sub(r"'s\b|[:.,;()]", " ", copy).split()) <= words, (form, copy)


def test_the_forms_are_checked():
    assert augment_forms("") == ()
    assert augment_forms("opening, name_first") == ("opening", "name_first")
    for wrong in ("shuffle", "permute", "clauses", "opening,opening"):
        with pytest.raises(ValueError, match="--augment"):
            augment_forms(wrong)
    with pytest.raises(ValueError, match="unknown augmentation form"):
        augment_paragraph(ADA, "permute")


def test_the_cost_counts_the_examples_and_the_tokens_trained_on(tiny_tokenizer):
    paragraphs = [ADA, "Bob Ray. Ray was born in Oslo. He sang ."]
    copies = augmented_copies(paragraphs, ["name_first", "opening"])
    full = augmentation_cost(paragraphs, copies, tiny_tokenizer, max_tokens=None)
    lengths = {
        form: [len(tiny_tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
        for form, texts in copies.items()
    }
    assert full["train_augment_name_first_examples"] == 2 and full["train_augment_opening_examples"] == 2
    assert full["train_augment_name_first_tokens"] == sum(lengths["name_first"])
    assert full["train_augment_paragraphs_examples"] == 2
    # With the openings objective, what encode_openings keeps: the first tokens and eos.
    cut = augmentation_cost(paragraphs, copies, tiny_tokenizer, max_tokens=6)
    kept = encode_openings({"text": copies["opening"]}, tiny_tokenizer, max_tokens=6)["input_ids"]
    assert cut["train_augment_opening_tokens"] == sum(map(len, kept))


def _pretrain(data_dir: Path, out: Path, *extra: str) -> dict:

    run_birthplace(
        [
            "pretrain",
            "--data_dir",
            str(data_dir),
            "--tokenizer_vocab_size",
            "400",
            "--config_overrides",
            TINY_ONE_LAYER,
            "--output_dir",
            str(out),
            "--max_steps",
            "1",
            "--per_device_train_batch_size",
            "8",
            *extra,
            *COMMON,
        ]
    )
    return json.loads((out / "all_results.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["openings", "span_corruption"])
def test_the_option_reaches_the_training_set_and_the_record(tmp_path, synthetic_birthplace_dir, objective):
    """With either objective (augmented openings, or span corruption of the copies), the training set is the
    paragraphs, the QA pairs and the copies; the report and the record state each form's examples and tokens."""
    data = synthetic_birthplace_dir
    paragraphs = (data / "wiki.txt").read_text(encoding="utf-8").splitlines()
    questions = len((data / "birth_places_train.tsv").read_text(encoding="utf-8").splitlines())
    args = ("--pretraining_objective", objective, "--opening_tokens", "12", "--pretrain_with_qa")
    plain = _pretrain(data, tmp_path / "plain", *args)
    assert plain["train_samples"] == len(paragraphs) + questions
    assert not any(key.startswith("train_augment") for key in plain)  # the default run: no augmentation at all

    report = _pretrain(data, tmp_path / "augmented", *args, "--augment", "name_first,opening")
    copies = augmented_copies(paragraphs, ["name_first", "opening"])
    assert report["train_samples"] == len(paragraphs) + questions + sum(map(len, copies.values()))
    assert report["train_augment_opening_examples"] == len(copies["opening"]) == len(paragraphs)
    assert report["train_augment_name_first_tokens"] > 0
    record = read_record(tmp_path / "augmented")  # joined with all_results.json
    assert record.train_metrics["train_augment_opening_tokens"] == report["train_augment_opening_tokens"]
    assert record.hyperparameters["augment"] == "name_first,opening"


def test_without_the_option_the_corpus_is_returned_as_it_is(tiny_tokenizer):
    import datasets

    from hf_models.tasks.birthplace import BirthplaceArguments, _augment

    corpus = datasets.Dataset.from_dict({"text": [ADA]})
    same, cost = _augment(corpus, [ADA], tiny_tokenizer, BirthplaceArguments(data_dir="unused"), 64)
    assert same is corpus and cost == {}
    with pytest.raises(ValueError, match="--augment"):
        BirthplaceArguments(augment="shuffle")


def test_the_profiles_have_reciting_and_span_corruption_rows():
    import grid
    from test_plan_flags import expanded

    for profile in ("cpu", "gpu"):
        models = grid.load(profile).lists["model"]
        steps = {
            step.name: expanded(step.command("py", "out", "data"))  # the config file's values as flags
            for step in grid.load(profile).steps.values()
            if step.pipeline == "birthplace"
        }
        tokenizer = steps["bp_tokenizer"]  # one tokenizer for all, trained on wiki.txt without the copies
        assert tokenizer[tokenizer.index("--vocab_size") + 1] == "4000"
        assert tokenizer[tokenizer.index("--files") + 1] == "data/birthplace/wiki.txt"
        for model in models:
            command = steps[f"bp_{model}_pretrain"]
            assert ("--augment" in command) == model.endswith("_recite")
            # Recite, then answer: the same QA format in the mixed pretraining and the finetuning; every evaluation
            # reads it from the model's run record.
            trainings = {f"bp_{model}_{s}" for s in ("pretrain", "probe", "finetune")}
            evaluations = {
                f"bp_{model}_{stage}_eval_{split}"
                for stage in ("finetune", "pretrain")
                for split in ("tune", "dev", "test")
            }
            recites = {name for name in trainings | evaluations if "--recite_tokens" in steps[name]}
            spans = {name for name in trainings | evaluations if "--answer_from_recitation" in steps[name]}
            probe = f"bp_{model}_probe"  # recites its default 40 tokens
            assert recites == spans == (trainings - {probe} if model.endswith("_recite") else set())
            if model.endswith("_recite"):
                assert command[command.index("--augment") + 1] == "name_first,opening"
            assert command[command.index("--tokenizer_name_or_path") + 1] == "out/birthplace/tokenizer"
            assert "--tokenizer_vocab_size" not in command
            objective = command[command.index("--pretraining_objective") + 1]
            assert objective == ("span_corruption" if model.endswith("_span_corruption") else "openings")
            assert ("--pretrain_with_qa" in command) == (objective == "openings")  # the course mixes in no QA
            assert f"bp_{model}_probe" in steps and f"bp_{model}_finetune_eval_dev" in steps
        keys = {row.key for row in grid.load(profile).rows["birthplace"]}
        assert {f"{model}_{stage}" for model in models for stage in ("pretrain_only", "finetuned")} <= keys
        assert set(grid.load(profile).headline) == set(models)
    # The course's objective stays a row of both profiles; the GPU profile runs the CPU profile's models.
    assert all("vanilla_span_corruption" in grid.load(p).lists["model"] for p in ("cpu", "gpu"))
    assert grid.load("gpu").lists["model"] == grid.load("cpu").lists["model"]


def test_the_plans_tokenizer_step_trains_the_tokenizer_pretrain_would(synthetic_birthplace_dir, tmp_path):
    """`bp_tokenizer` (tokenizer/train_tokenizer.py on wiki.txt) gives the very tokenizer that `birthplace.py pretrain
    --tokenizer_vocab_size` trains on its corpus: the plan's models share it and stay the runs they were."""
    import subprocess
    import sys
    from pathlib import Path

    from hf_models.data import load_birthplace_corpus
    from hf_models.tokenization import train_bpe_tokenizer

    root = Path(__file__).resolve().parent.parent
    script = [
        sys.executable,
        str(root / "tokenizer" / "train_tokenizer.py"),
        "--files",
        str(synthetic_birthplace_dir / "wiki.txt"),
        "--vocab_size",
        "600",
        "--no_progress",
    ]
    subprocess.run([*script, "--output_dir", str(tmp_path / "step")], check=True, capture_output=True)
    corpus = load_birthplace_corpus(synthetic_birthplace_dir)["train"]["text"]
    train_bpe_tokenizer(corpus, 600, output_dir=tmp_path / "recipe", show_progress=False)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (tmp_path / "step" / name).read_bytes() == (tmp_path / "recipe" / name).read_bytes(), name
