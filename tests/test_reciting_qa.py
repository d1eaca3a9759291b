"""Recite, then answer (`--recite_tokens`): the rows' layout, the openings they take from wiki.txt, batched
recitations equal to one-at-a-time ones, and the three birthplace steps with the option."""

import json
import shutil
from pathlib import Path

import pytest
import torch
from test_recipes import assert_run_outputs, read_results
from tiny import RECIPE as COMMON
from tiny import TINY, run_birthplace

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM, app
from hf_models.app import predictions as app_predictions
from hf_models.data import IGNORE_INDEX, encode_reciting_qa, load_birthplace, person_name
from hf_models.tasks import birthplace, birthplace_qa
from hf_models.tasks.birthplace_qa import RecitingQAFormat, answer_log_likelihoods, recitation_spans
from hf_models.textio import UsageError

PARAGRAPHS = (
    "Ada Lovelace. Ada Lovelace was born in London in 1815 .",
    "Ada Smith. Born in Paris, Smith became a painter .",
)


def test_person_name():
    assert person_name("Where was Ada Lovelace born?") == "Ada Lovelace"
    assert person_name("  Where was J. R. R. Tolkien born?\n") == "J. R. R. Tolkien"
    assert person_name("Who was Ada Lovelace?") is None
    assert person_name("Where was  born?") is None


def test_openings_come_from_the_persons_own_paragraph(tiny_tokenizer):
    qa = RecitingQAFormat(recite_tokens=6, paragraphs=PARAGRAPHS)
    questions = ["Where was Ada Smith born?", "Where was Ada Lovelace born?", "Where was Bob Nobody born?", "Why?"]
    openings = qa.openings(questions, tiny_tokenizer)
    encode = lambda text: tiny_tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    assert openings[0] == encode(PARAGRAPHS[1])[:6]  # not Ada Lovelace's, whose name also starts with "Ada"
    assert openings[1] == encode(PARAGRAPHS[0])[:6]
    assert openings[2] == encode("Bob Nobody.")[:6]  # no paragraph: the title alone
    assert openings[3] == []  # no name: no recitation
    # The title is the start of the paragraph's own tokens, as the model recites from it.
    assert encode(PARAGRAPHS[0])[: len(encode("Ada Lovelace."))] == encode("Ada Lovelace.")


def test_rows_put_the_recitation_before_the_question_and_the_loss_on_the_answer(tiny_tokenizer):
    tok = tiny_tokenizer
    examples = {"question": ["Where was Ada Lovelace born?"], "answer": ["London"]}
    recitation = [5, 6, 7]
    row = encode_reciting_qa(examples, tok, 64, [recitation])
    question = tok(examples["question"][0], add_special_tokens=False)["input_ids"]
    answer = tok(" London", add_special_tokens=False)["input_ids"]
    prompt = [*recitation, tok.eos_token_id, *question, tok.sep_token_id]
    target = [*answer, tok.sep_token_id, tok.eos_token_id]
    assert row["input_ids"] == [prompt + target]
    assert row["labels"] == [[IGNORE_INDEX] * len(prompt) + target]
    assert row["attention_mask"] == [[1] * len(prompt + target)]
    # Too long: the recitation's end goes first, the answer stays.
    short = encode_reciting_qa(examples, tok, len(question) + len(target) + 4, [list(range(10, 40))])
    assert short["input_ids"][0] == [10, 11, tok.eos_token_id, *question, tok.sep_token_id, *target]
    prompt_only = encode_reciting_qa(examples, tok, 64, [recitation], prompt_only=True)
    assert prompt_only["input_ids"] == [prompt]
    with pytest.raises(ValueError, match="2 recitations for 1 questions"):
        encode_reciting_qa(examples, tok, 64, [recitation, recitation])


def test_batched_recitations_and_answers_equal_one_at_a_time(tiny_tokenizer):
    """Titles of different lengths share a left-padded batch: each recitation starts at position 0 all the same."""
    torch.manual_seed(0)
    config = SmallEncoderConfig.from_preset(
        "cs224n-mingpt",
        vocab_size=len(tiny_tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    model = SmallEncoderForCausalLM(config).eval()
    qa = RecitingQAFormat(recite_tokens=12, max_new_tokens=4)
    questions = ["Where was Ada Lovelace born?", "Where was Bo Li born?", "Where was Maria Anna Pelkin born?", "Why?"]
    together = qa.recite(model, tiny_tokenizer, questions, batch_size=4)
    alone = [qa.recite(model, tiny_tokenizer, [q], batch_size=1)[0] for q in questions]
    assert together == alone
    title = tiny_tokenizer("Ada Lovelace.", add_special_tokens=False)["input_ids"]
    assert together[0][: len(title)] == title and len(together[0]) <= 12
    assert tiny_tokenizer.eos_token_id not in together[0] and together[3] == []
    answers = qa.predict(model, tiny_tokenizer, questions, None, batch_size=4)
    assert answers == [qa.predict(model, tiny_tokenizer, [q], None, batch_size=1)[0] for q in questions]


def test_recitation_spans_stay_inside_a_clause():
    text = "Alfred Mele. Born in Detroit, Michigan, he studied at St. Louis (1968)."
    assert recitation_spans(text, 1) == [
        "Alfred",
        "Mele",
        "Born",
        "in",
        "Detroit",
        "Michigan",
        "he",
        "studied",
        "at",
        "St",
        "Louis",
    ]
    two = recitation_spans(text, 2)
    assert {"Alfred Mele", "Mele. Born", "St. Louis", "in Detroit"} <= set(two)
    assert "Detroit Michigan" not in two and "Louis 1968" not in two and "1968" not in two
    assert recitation_spans("", 3) == [] and recitation_spans("1815 , .", 2) == []
    assert recitation_spans(text, 2, capitalized=True) == [
        "Alfred",
        "Alfred Mele",
        "Mele",
        "Mele. Born",
        "Born",
        "Born in",
        "Detroit",
        "Michigan",
        "St",
        "St. Louis",
        "Louis",
    ]


def _tiny_model(tokenizer) -> SmallEncoderForCausalLM:
    torch.manual_seed(0)
    config = SmallEncoderConfig.from_preset(
        "cs224n-mingpt",
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return SmallEncoderForCausalLM(config).eval()


def test_answer_log_likelihoods_are_the_qa_loss_of_each_row(tiny_tokenizer):
    """Each score is minus the QA loss summed over the row's answer tokens, the same in a padded batch as alone."""
    model = _tiny_model(tiny_tokenizer)
    questions = ["Where was Ada Lovelace born?", "Where was Bo Li born?", "Where was Maria Anna Pelkin born?"]
    answers = ["London", "Saint-Denis sur Mer", "Paris"]
    recitations = [tiny_tokenizer(text, add_special_tokens=False)["input_ids"] for text in PARAGRAPHS + ("Bo.",)]
    together = answer_log_likelihoods(model, tiny_tokenizer, questions, answers, recitations, 64, batch_size=3)
    rows = encode_reciting_qa({"question": questions, "answer": answers}, tiny_tokenizer, 64, recitations)
    for i, score in enumerate(together):
        labels = torch.tensor([rows["labels"][i]])
        loss = model(input_ids=torch.tensor([rows["input_ids"][i]]), labels=labels).loss
        answer_tokens = int((labels[:, 1:] != IGNORE_INDEX).sum())
        assert score == pytest.approx(-loss.item() * answer_tokens, rel=1e-5)
        alone = answer_log_likelihoods(model, tiny_tokenizer, [questions[i]], [answers[i]], [recitations[i]], 64, 1)
        assert alone[0] == pytest.approx(score, rel=1e-5)


def test_answers_from_the_recitation_are_its_best_scored_spans(tiny_tokenizer):
    model = _tiny_model(tiny_tokenizer)
    qa = RecitingQAFormat(recite_tokens=12, max_new_tokens=4, answer_words=2)
    questions = ["Where was Ada Lovelace born?", "Where was Bo Li born?", "Why?"]
    answers = qa.predict(model, tiny_tokenizer, questions, None, batch_size=4)
    recitations = qa.recite(model, tiny_tokenizer, questions, batch_size=4)
    for question, answer, recitation in zip(questions[:2], answers, recitations, strict=False):
        spans = recitation_spans(tiny_tokenizer.decode(recitation, skip_special_tokens=True), 2)
        scores = answer_log_likelihoods(
            model, tiny_tokenizer, [question] * len(spans), spans, [recitation] * len(spans), 64
        )
        assert answer == spans[scores.index(max(scores))]
    # No name, no recitation, no span: that answer is generated, as without the option.
    assert (
        answers[2]
        == RecitingQAFormat(recite_tokens=12, max_new_tokens=4).predict(
            model, tiny_tokenizer, questions[2:], None, batch_size=1
        )[0]
    )
    assert answers == [qa.predict(model, tiny_tokenizer, [q], None, batch_size=1)[0] for q in questions]


def test_recite_tokens_with_the_course_vocabulary_or_span_corruption_is_refused(tmp_path, synthetic_birthplace_dir):
    data = str(synthetic_birthplace_dir)
    with pytest.raises(ValueError, match="--recite_tokens is for our BPE"):
        birthplace.BirthplaceArguments(data_dir=data, recite_tokens=8, course_vocabulary=True)
    with pytest.raises(ValueError, match="--recite_tokens must be 0"):
        birthplace.BirthplaceArguments(data_dir=data, recite_tokens=-1)
    with pytest.raises(ValueError, match="--answer_from_recitation chooses the answer in the recitation"):
        birthplace.BirthplaceArguments(data_dir=data, answer_from_recitation=True)
    # A finetuning of a course model: its tokenizer holds the course's characters.
    from hf_models.tokenization import build_course_tokenizer

    characters = build_course_tokenizer("cs224n-char", data)
    with pytest.raises(UsageError, match="a model of the course's characters answers directly"):
        birthplace.qa_format(birthplace.BirthplaceArguments(data_dir=data, recite_tokens=8), characters)
    assert type(birthplace.qa_format(birthplace.BirthplaceArguments(data_dir=data), characters)).__name__ == (
        "CourseQAFormat"
    )
    with pytest.raises(UsageError, match="needs --pretraining_objective openings"):
        run_birthplace(
            ["pretrain", "--data_dir", data, "--output_dir", str(tmp_path / "sc"), "--tokenizer_vocab_size", "600"]
            + ["--config_overrides", TINY, "--pretrain_with_qa", "--recite_tokens", "8", "--max_steps", "1", *COMMON]
        )


def test_birthplace_steps_with_recitation(tmp_path, synthetic_birthplace_dir, capsys, monkeypatch):
    """Mixed pretraining on openings and reciting QA rows, a reciting finetuning that answers from its recitation,
    then `evaluate` and the app answering as each run record says."""
    data = str(synthetic_birthplace_dir)
    pre, ft = tmp_path / "pretrain", tmp_path / "finetune"
    recite = ["--recite_tokens", "24"]
    run_birthplace(
        ["pretrain", "--data_dir", data, "--output_dir", str(pre), "--tokenizer_vocab_size", "600", *recite]
        + ["--config_overrides", TINY, "--pretrain_with_qa", "--pretraining_objective", "openings"]
        + ["--opening_tokens", "24", "--max_steps", "16", "--per_device_train_batch_size", "32"]
        + ["--learning_rate", "5e-3", *COMMON]
    )
    assert_run_outputs(pre)
    assert read_results(pre)["train_samples"] == 330 + 240  # openings + reciting QA rows
    run_birthplace(
        ["finetune", "--data_dir", data, "--model_name_or_path", str(pre), "--output_dir", str(ft), *recite]
        + ["--answer_from_recitation", "--max_steps", "8", "--per_device_train_batch_size", "32"]
        + ["--learning_rate", "3e-3", *COMMON]
    )
    assert_run_outputs(ft, loss_falls=False)

    # How each model answers is in its run record alone, never in its config.
    train_answers = load_birthplace(data)["train"]["answer"]
    spans_shape = {
        "answer_words": max(len(answer.split()) for answer in train_answers),
        "capitalized_answers": all(answer[:1].isupper() for answer in train_answers),
    }
    assert birthplace_qa.answer_format_of(ft) == {"recite_tokens": 24, **spans_shape}
    assert birthplace_qa.answer_format_of(pre) == {
        "recite_tokens": 24,
        "answer_words": 0,
        "capitalized_answers": False,
    }
    assert all("answer_format" not in json.loads((run / "config.json").read_text()) for run in (pre, ft))

    # evaluate takes no flag for it: the finetuned model answers with spans of its recitation, ...
    capsys.readouterr()
    predictions = tmp_path / "spans.txt"
    evaluate = ["evaluate", "--data_dir", data, "--predictions_file", str(predictions), "--overwrite_output_dir"]
    metrics = run_birthplace([*evaluate, "--model_name_or_path", str(ft)])
    assert metrics["total"] == 60 and f"Correct: {metrics['correct']} out of 60" in capsys.readouterr().out
    spans = RecitingQAFormat(24, **spans_shape)
    questions = load_birthplace(data)["validation"]["question"]
    assert predictions.read_text().splitlines() == spans.predict(*_loaded(ft), questions, None, 64)
    # ... and the app gives the same answers.
    assert app_predictions._answer(app.load_model(str(ft)), questions[0]) == predictions.read_text().splitlines()[0]

    # The pretrained model generates its answer after the recitation: two generations, in evaluate and in the app.
    generated = RecitingQAFormat(24).predict(*_loaded(pre), questions, None, 64)
    calls = []
    real = birthplace_qa.greedy_completions
    monkeypatch.setattr(birthplace_qa, "greedy_completions", lambda *a, **k: calls.append(k) or real(*a, **k))
    run_birthplace([*evaluate, "--model_name_or_path", str(pre)])
    assert len(calls) == 2 and predictions.read_text().splitlines() == generated
    answer = app_predictions._answer(app.load_model(str(pre)), questions[0])
    assert len(calls) == 4 and answer == generated[0]

    # A model folder whose record does not say how it answers is refused in one line.
    bare = Path(shutil.copytree(ft, tmp_path / "bare"))
    (bare / "run_record.json").unlink()
    with pytest.raises(UsageError, match=r"has no run record \(run_record.json\) to say how it answers"):
        run_birthplace(["evaluate", "--data_dir", data, "--model_name_or_path", str(bare)])
    record = json.loads((ft / "run_record.json").read_text())
    del record["hyperparameters"]["recite_tokens"]
    (bare / "run_record.json").write_text(json.dumps(record))
    with pytest.raises(UsageError, match="does not say how it answers"):
        run_birthplace(["evaluate", "--data_dir", data, "--model_name_or_path", str(bare)])
    with pytest.raises(UsageError, match="does not say how it answers"):  # the app shows it in one line
        app_predictions._answer(app.load_model(str(bare)), questions[0])


def test_a_hub_model_answers_as_the_run_record_it_ships_says(tmp_path, monkeypatch):
    """A Hub id's record is downloaded beside its files; a Hub model without one (or offline) is refused."""
    from hf_models.run_record import RunRecord

    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    RunRecord(task="birthplace-qa", objective="qa", hyperparameters={"recite_tokens": 40}).save(snapshot)
    monkeypatch.setattr(birthplace_qa, "hf_hub_download", lambda repo, name: str(snapshot / name))
    assert birthplace_qa.answer_format_of("user/birthplace")["recite_tokens"] == 40

    def missing(repo, name):
        raise OSError("offline")

    monkeypatch.setattr(birthplace_qa, "hf_hub_download", missing)
    with pytest.raises(UsageError, match="user/birthplace has no run record"):
        birthplace_qa.answer_format_of("user/birthplace")


def _loaded(folder):
    from hf_models.tokenization import load_tokenizer

    return SmallEncoderForCausalLM.from_pretrained(folder, dtype=torch.float32).eval(), load_tokenizer(folder)
