"""The courses' exact settings: CS224N's character QA rows and 32-character answers, the lab's pieces; and the
recipes that run them behind `--course_vocabulary` / `--lab_vocabulary`."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from tiny import RECIPE as COMMON
from tiny import TINY_SIZES, run_birthplace, run_sentiment

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM
from hf_models.data import encode_char_qa
from hf_models.tasks.birthplace_qa import answer_between_masks, predict_char_answers
from hf_models.tokenization.courses import build_cs224n_char_tokenizer


@pytest.fixture(scope="module")
def char_tokenizer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chars")
    (folder / "wiki.txt").write_text("Where was Ada Lovelace born? London, Paris.\n", encoding="utf-8")
    return build_cs224n_char_tokenizer(folder / "wiki.txt")


def test_qa_rows_are_the_course_name_dataset(char_tokenizer):
    stoi = char_tokenizer.get_vocab()
    rows = encode_char_qa({"question": ["Where was Ada born?"], "answer": ["Paris"]}, char_tokenizer, block_size=128)
    x = "Where was Ada born?⁇Paris⁇"
    assert rows["input_ids"] == [[stoi[c] for c in x]]
    # The course: y = PAD*(len(inp)-1) + x[len(inp):] against x[:-1], pad targets ignored. In transformers'
    # unshifted convention: -100 on the question, then ⁇ answer ⁇.
    question_length = len("Where was Ada born?")
    assert rows["labels"] == [[-100] * question_length + [stoi[c] for c in "⁇Paris⁇"]]
    short = encode_char_qa({"question": ["Where was Ada born?"], "answer": ["Paris"]}, char_tokenizer, block_size=10)
    assert char_tokenizer.decode(short["input_ids"][0]) == "born?⁇Paris⁇"[-10:]


def test_unknown_characters_are_named(char_tokenizer):
    with pytest.raises(
        ValueError,
        match=r"birthplace QA rows, column 1 of 'Zoé': the character 'Z' \(U\+005A\) is not in the course's character vocabulary .*1 other unknown character\(s\): \['é'\]",
    ):
        encode_char_qa({"question": ["Zoé"], "answer": ["Paris"]}, char_tokenizer, block_size=128)


def test_a_course_tokenizer_names_an_unknown_character(char_tokenizer, tmp_path):
    """Tokenizers alone says `Missing [UNK] token from the vocabulary`; the loaded course tokenizer names the
    character and where it is, for one text, a batch or a pair, and still encodes what it knows."""
    from transformers import PreTrainedTokenizerFast

    from hf_models.tokenization.courses import VocabularyError, load_course_tokenizer

    char_tokenizer.save_pretrained(tmp_path / "tok")
    saved = json.loads((tmp_path / "tok" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert saved["tokenizer_class"] == PreTrainedTokenizerFast.__name__  # AutoTokenizer loads it without this package
    tokenizer = load_course_tokenizer(tmp_path / "tok")
    assert tokenizer("Ada")["input_ids"] == char_tokenizer("Ada")["input_ids"]
    for call in (
        lambda: tokenizer("Ada Zoé"),
        lambda: tokenizer(["Ada", "Ada Zoé"], padding=True),
        lambda: tokenizer("Ada", "Ada Zoé"),
    ):
        with pytest.raises(VocabularyError, match=r"^the text, column 5 of 'Ada Zoé': the character 'Z' \(U\+005A\)"):
            call()


def test_answer_is_between_the_first_and_second_mask():
    assert answer_between_masks("Where was X born?⁇Paris⁇□□ London") == "Paris"
    assert answer_between_masks("Where was X born?⁇Paris, France") == "Paris, France"
    assert answer_between_masks("no mask at all") == ""


def test_predictions_follow_the_course_sampling_loop(char_tokenizer):
    torch.manual_seed(0)
    config = SmallEncoderConfig.from_preset(
        "cs224n-mingpt",
        vocab_size=len(char_tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    model = SmallEncoderForCausalLM(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.5)  # a model that says something other than one character
    questions = ["Where was Ada born?", "Where was Lovelace born?", "Ada?"]
    predictions = predict_char_answers(model, char_tokenizer, questions, batch_size=2)
    itos = {i: c for c, i in char_tokenizer.get_vocab().items()}
    for question, prediction in zip(questions, predictions, strict=True):
        x = torch.tensor([[char_tokenizer.get_vocab()[c] for c in question + "⁇"]])
        with torch.no_grad():
            for _ in range(32):  # utils.sample(model, x, 32, sample=False)
                x = torch.cat([x, model(x).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        completion = "".join(itos[int(i)] for i in x[0])
        assert prediction == completion.split("⁇")[1]


@pytest.mark.slow
def test_birthplace_course_vocabulary_end_to_end(tmp_path, synthetic_birthplace_dir, capsys):

    torch.set_num_threads(1)
    # The synthetic wiki.txt has no '?', which the questions have (the real one has every QA character).
    shutil.copytree(synthetic_birthplace_dir, tmp_path / "data")
    with open(tmp_path / "data" / "wiki.txt", "a", encoding="utf-8") as wiki:
        wiki.write("Where was the author of this line born?\n")
    data, pre, ft = str(tmp_path / "data"), tmp_path / "pretrain", tmp_path / "finetune"
    # The course's setting is chosen by the pretraining; finetune and evaluate take it from the model's tokenizer.
    common = [*COMMON, "--per_device_train_batch_size", "16", "--learning_rate", "3e-3"]
    run_birthplace(
        [
            "pretrain",
            "--data_dir",
            data,
            "--output_dir",
            str(pre),
            "--config_overrides",
            TINY_SIZES,
            "--max_steps",
            "4",
            "--course_vocabulary",
            *common,
        ]
    )
    config = json.loads((pre / "config.json").read_text())
    wiki = (tmp_path / "data" / "wiki.txt").read_text(encoding="utf-8")
    assert config["vocab_size"] == len(set(wiki)) + 2 and config["max_position_embeddings"] == 128
    assert (config["pad_token_id"], config["sep_token_id"]) == (0, 1)
    assert json.loads((pre / "all_results.json").read_text())["block_size"] == 128

    run_birthplace(
        [
            "finetune",
            "--data_dir",
            data,
            "--model_name_or_path",
            str(pre),
            "--output_dir",
            str(ft),
            "--max_steps",
            "4",
            *common,
        ]
    )
    capsys.readouterr()
    metrics = run_birthplace(
        [
            "evaluate",
            "--data_dir",
            data,
            "--model_name_or_path",
            str(ft),
            "--output_dir",
            str(ft),
        ]
    )
    assert json.loads((ft / "config.json").read_text())["vocab_size"] == config["vocab_size"]
    assert f"Correct: {metrics['correct']} out of 60: " in capsys.readouterr().out
    assert len((ft / "predictions_validation.txt").read_text(encoding="utf-8").splitlines()) == 60

    # A dev question with a character wiki.txt never had: one line naming it, its file, line and column.
    from hf_models.safety import command_line

    dev = tmp_path / "data" / "birth_dev.tsv"
    lines = dev.read_text(encoding="utf-8").splitlines()
    dev.write_text("\n".join([lines[0], "Where was Ωmar born?\tParis", *lines[2:]]) + "\n", encoding="utf-8")
    argv = ["evaluate", "--data_dir", data, "--model_name_or_path", str(ft)]
    assert command_line(run_birthplace, argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {dev}:2, column 11: the character 'Ω' (U+03A9) is not in the course's character vocabulary (the "
        "characters of the wiki.txt it was built from; the course has no unknown token)"
    ]


@pytest.mark.slow
def test_sentiment_lab_vocabulary(tmp_path, write_alternating_cls_books):

    torch.set_num_threads(1)
    # A tiny cls-books folder in the lab's format: .spm pieces, labels, and a fairseq dict.txt.
    good, bad = "▁un ▁livre ▁super be", "▁un ▁livre ▁nul ▁!"
    books = write_alternating_cls_books(tmp_path / "books", (24, 8, 6), positive=good, negative=bad)
    (books / "dict.txt").write_text("".join(f"{p} 1\n" for p in ["▁un", "▁livre", "▁super", "be", "▁nul"]))
    out = tmp_path / "run"
    run_sentiment(
        ["--data_dir", str(books), "--from_scratch", "--lab_vocabulary", "--model_config", "altegrad-lab"]
        + ["--config_overrides", "hidden_size=16,num_hidden_layers=1", "--output_dir", str(out)]
        + ["--num_train_epochs", "1", "--per_device_train_batch_size", "8", *COMMON]
    )
    config = json.loads((out / "config.json").read_text())
    assert config["vocab_size"] == 4 + 5 and (config["pad_token_id"], config["bos_token_id"]) == (1, 0)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    assert tokenizer("▁un ▁livre ▁nul ▁!")["input_ids"] == [0, 4, 5, 8, 3]  # '▁!' is not in dict.txt: <unk>


def test_predictions_fit_a_converted_synthesizer_width(char_tokenizer):
    config = SmallEncoderConfig.from_preset(
        "cs224n-mingpt",
        vocab_size=len(char_tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        attention_type="synthesizer",
        synthesizer_width=31,
    )
    model = SmallEncoderForCausalLM(config).eval()
    # 20 + 1 prompt characters, then 10 generated, not 11: position 31 is past ℓ = 31.
    predictions = predict_char_answers(model, char_tokenizer, ["Where was Ada born? "])
    assert len(predictions) == 1
