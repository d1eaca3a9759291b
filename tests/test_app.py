"""The Gradio app (`recipes/app.py`, logic in `hf_models/app/`) on tiny trained runs: its functions against the
models' own outputs, the app served on 127.0.0.1 and driven with `gradio_client`, the Space that
`push_to_hub.py --space` writes, and a real headless Chromium that uses every tab (skipped when no browser is
installed, failed instead under CI=true; `make app-test` installs one). The screenshots go to a temporary folder,
or to $APP_SCREENSHOT_DIR (`make app-test SCREENSHOTS=docs/images` regenerates the documentation's)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny import QUIET, TINY, run_birthplace, run_pretraining, run_sentiment

from hf_models import app
from hf_models.environment import OFFLINE_ENVIRONMENT

REPO_ROOT = Path(__file__).resolve().parents[1]
# Control characters (C0 but tab and newline, DEL, C1): none may reach the page.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LM_PROMPT = "Anna Smith was born in"
NOT_A_BIRTHPLACE_QUESTION = "Hello?"
# Resolved now: the tests of the app run in the runs' folder (`in_runs_root`).
SCREENSHOT_DIR = Path(os.environ["APP_SCREENSHOT_DIR"]).resolve() if os.environ.get("APP_SCREENSHOT_DIR") else None


def _control_corpus(data_dir: Path, out: Path) -> Path:
    """The synthetic wiki.txt with a backspace after every sentence: a plain LM trained on it writes control
    characters, as a byte-level BPE model's gibberish can."""
    lines = (data_dir / "wiki.txt").read_text(encoding="utf-8").splitlines()
    out.write_text("".join(line.replace(". ", ".\x08 ") + "\n" for line in lines), encoding="utf-8")
    return out


# Trainer's own optimizer and schedule, not the recipes' defaults (the benchmark's): the tiny runs below are tuned on
# them (60 steps with no warmup and no decay answer with place names).
TRAINER_OWN_DEFAULTS = ["--lr_scheduler_type", "linear", "--lr_scheduler_kwargs", "{}", "--warmup_steps", "0"]
TRAINER_OWN_DEFAULTS += ["--weight_decay", "0", "--adam_beta2", "0.999", "--eval_strategy", "no"]


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
    synthetic_birthplace_dir: Path,
    tiny_tokenizer_dir: Path,
    write_alternating_cls_books,
) -> dict:
    """Five tiny recipe runs in `ROOT/runs/example-*` (the names the app and its screenshots show): a birthplace
    pretraining, the QA model finetuned from it, a synthesizer finetuned from scratch, a plain LM of
    `recipes/pretrain.py` (its corpus has control characters) and a review classifier."""

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("app")
    folders = {name: root / "runs" / f"example-{name}" for name in ("pretrain", "birthplace", "synthesizer", "lm")}
    folders["sentiment"] = root / "runs" / "example-sentiment"
    data, tok = str(synthetic_birthplace_dir), str(tiny_tokenizer_dir)
    model = ["--tokenizer_name_or_path", tok, "--config_overrides", TINY]
    steps = ["--per_device_train_batch_size", "16", "--learning_rate", "5e-3", *TRAINER_OWN_DEFAULTS, *QUIET]
    pre = ["pretrain", "--data_dir", data, "--output_dir", str(folders["pretrain"]), "--max_steps", "6"]
    run_birthplace([*pre, *model, *steps])
    # 60 steps at 1e-2 (2 s) are enough for the answers to be place names.
    finetune = ["finetune", "--data_dir", data, "--max_steps", "60", *steps, "--learning_rate", "1e-2"]
    run_birthplace(
        [*finetune, "--model_name_or_path", str(folders["pretrain"]), "--output_dir", str(folders["birthplace"])]
    )
    run_birthplace([*finetune, "--attention_type", "synthesizer", "--output_dir", str(folders["synthesizer"]), *model])
    corpus = _control_corpus(synthetic_birthplace_dir, root / "wiki-with-backspaces.txt")
    run_pretraining(
        ["--train_files", str(corpus), "--block_size", "32", "--output_dir", str(folders["lm"]), *model, *steps]
        + ["--max_steps", "60", "--learning_rate", "1e-2"]
    )
    books = write_alternating_cls_books(root)
    run_sentiment(
        ["--data_dir", str(books), "--from_scratch", "--output_dir", str(folders["sentiment"]), *model]
        + ["--max_steps", "30", *steps]
    )
    return {"root": root, **folders, "pretrained": folders["birthplace"]}


@pytest.fixture(scope="module")
def in_runs_root(runs: dict):
    """The module's working folder is the runs' root, so that the models are named `runs/example-*`, as a user
    starting the app next to their runs would (never a temporary path, in the screenshots too)."""
    before = Path.cwd()
    os.chdir(runs["root"])
    try:
        yield runs["root"]
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def models(in_runs_root: Path) -> list[app.LoadedModel]:
    return app.load_models(
        [
            "pretrained=runs/example-birthplace",
            "scratch=runs/example-synthesizer",
            "sentiment=runs/example-sentiment",
            "lm=runs/example-lm",
        ]
    )


# --------------------------------------------------------------------------------------------------
# The functions
# --------------------------------------------------------------------------------------------------
def test_models_load_with_labels_heads_and_tasks(models: list[app.LoadedModel]) -> None:
    assert [(m.label, m.kind, m.attention_type, m.task, m.view) for m in models] == [
        ("pretrained", "causal-lm", "vanilla", "birthplace-qa", "birthplace"),
        ("scratch", "causal-lm", "synthesizer", "birthplace-qa", "birthplace"),
        ("sentiment", "classifier", "vanilla", "sentiment", "sentiment"),
        ("lm", "causal-lm", "vanilla", "pretraining", "generate"),  # a plain LM: never in the QA tab
    ]
    assert all(not m.model.training for m in models)
    assert models[0].source == "runs/example-birthplace"


def test_a_birthplace_pretraining_is_a_plain_lm(in_runs_root: Path) -> None:
    loaded = app.load_model("runs/example-pretrain")
    assert (loaded.label, loaded.kind, loaded.task, loaded.view) == (
        "example-pretrain",
        "causal-lm",
        "birthplace-pretraining",
        "generate",
    )


@pytest.mark.parametrize(
    "kind, task, view",
    [
        ("causal-lm", "pretraining", "generate"),
        ("causal-lm", "birthplace-pretraining", "generate"),
        ("causal-lm", "birthplace-qa", "birthplace"),
        ("causal-lm", "birthplace-evaluation", "birthplace"),
        ("classifier", "sentiment", "sentiment"),
        ("classifier", "pretraining", "sentiment"),  # the head wins over a task it cannot do
        ("causal-lm", "sentiment", "generate"),
        # No task known (no run record, no card): a plain LM, or a classifier.
        ("causal-lm", None, "generate"),
        ("classifier", None, "sentiment"),
    ],
)
def test_each_task_has_its_tab(kind: str, task: str | None, view: str) -> None:
    assert app.model_view(kind, task) == view


def _greedy_answer(loaded: app.LoadedModel, question: str, max_new_tokens: int = 16) -> str:
    """The answer decoded independently of the app: `question ⁇` then greedy tokens until `⁇` or `</s>`."""
    tokenizer, model = loaded.tokenizer, loaded.model
    ids = tokenizer(question, add_special_tokens=False)["input_ids"] + [tokenizer.sep_token_id]
    with torch.no_grad():
        out = model.generate(
            torch.tensor([ids]),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            use_cache=False,
            pad_token_id=tokenizer.pad_token_id,
        )[0, len(ids) :].tolist()
    stops = {tokenizer.sep_token_id, tokenizer.eos_token_id}
    out = out[: next((i for i, t in enumerate(out) if t in stops), len(out))]
    return tokenizer.decode(out, skip_special_tokens=True).strip()


def test_birthplace_answers_side_by_side_with_london(
    models: list[app.LoadedModel], synthetic_birthplace_dir: Path
) -> None:
    from hf_models.data import load_birthplace

    questions = list(load_birthplace(str(synthetic_birthplace_dir))["validation"]["question"][:3])
    places = set(load_birthplace(str(synthetic_birthplace_dir))["train"]["answer"])
    for question in questions:
        answers = app.answer_birthplace(models, question)
        assert list(answers) == ["pretrained", "scratch", app.LONDON_LABEL]  # the QA models only
        assert answers[app.LONDON_LABEL] == "London"
        for loaded in models[:2]:
            assert answers[loaded.label] == _greedy_answer(loaded, question)
    # The finetuned models answer with a place name.
    assert app.answer_birthplace(models, questions[0])["pretrained"] in places


def test_an_empty_answer_says_why(models: list[app.LoadedModel]) -> None:
    answers = app.answer_birthplace(models, NOT_A_BIRTHPLACE_QUESTION)
    # The tiny finetuned models close the answer at once on a question of another form, as the user saw.
    assert answers["pretrained"] == answers["scratch"] == ""
    reason = app.empty_answer_reason(models[0], NOT_A_BIRTHPLACE_QUESTION)
    assert reason == "pretrained answered nothing: it was finetuned on questions of the form 'Where was X born?'."
    assert "ended its answer at once" in app.empty_answer_reason(models[0], "Where was Nobody Atall born?")


def _greedy_continuation(loaded: app.LoadedModel, prompt: str, max_new_tokens: int) -> str:
    """The text `generate` writes after the prompt, decoded as it is (control characters and all)."""
    tokenizer = loaded.tokenizer
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        out = loaded.model.generate(
            torch.tensor([ids]), max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )[0, len(ids) :].tolist()
    if tokenizer.eos_token_id in out:
        out = out[: out.index(tokenizer.eos_token_id)]
    return tokenizer.decode(out)


def test_generate_continues_a_prompt_with_no_control_character(models: list[app.LoadedModel]) -> None:
    lm = models[3]
    raw = _greedy_continuation(lm, LM_PROMPT, 30)
    assert "\b" in raw, "the plain LM should write the backspaces of its corpus"
    text = app.generate_text(lm, LM_PROMPT, max_new_tokens=30)
    assert text == raw.replace("\b", app.text.REPLACEMENT)
    assert not CONTROL.search(text)
    sampled = []
    for seed in (0, 0, 1, 2):
        torch.manual_seed(seed)
        sampled.append(app.generate_text(lm, LM_PROMPT, max_new_tokens=8, sample=True))
    assert sampled[0] == sampled[1] and len(set(sampled)) > 1  # the seed decides; drawn, not the argmax
    assert not any(CONTROL.search(text) for text in sampled)
    # A prompt longer than the model: its start is cut, so that prompt and continuation fit in 64 positions.
    assert app.generate_text(lm, "word " * 200, max_new_tokens=10)
    assert app.empty_continuation_reason(lm) == "lm wrote nothing: its first token ended the text (</s>)."


@pytest.mark.parametrize(
    "text, keep_newlines, shown",
    [
        ("Par\x08is\x1b[31m", False, "Par\ufffdis\ufffd[31m"),
        ("a\tb\r\nc\x85d\x7f", False, "a b c\ufffdd\ufffd"),
        ("one\ntwo\rthree", True, "one\ntwo\nthree"),
        ("Zürich ⁇ 東京 😀", False, "Zürich ⁇ 東京 😀"),
    ],
)
def test_printable_shows_control_characters_as_replacement(text: str, keep_newlines: bool, shown: str) -> None:
    assert app.printable(text, keep_newlines=keep_newlines) == shown


def test_review_probabilities_are_the_models_softmax(models: list[app.LoadedModel]) -> None:
    classifier = models[2]
    for review in ("Un livre superbe.", "Un livre ennuyeux, ennuyeux."):
        scores = app.classify_review(classifier, review)
        encoded = classifier.tokenizer(review, return_tensors="pt")
        with torch.no_grad():
            probabilities = classifier.model(**encoded).logits.softmax(-1)[0]
        id2label = classifier.model.config.id2label
        assert scores == pytest.approx({id2label[i]: float(p) for i, p in enumerate(probabilities)}, abs=1e-6)
        assert sum(scores.values()) == pytest.approx(1.0)
    # Trained on one decisive word per review: the label follows it.
    superbe, ennuyeux = (app.classify_review(classifier, f"un livre {w}") for w in ("superbe", "ennuyeux"))
    assert max(superbe, key=superbe.get) != max(ennuyeux, key=ennuyeux.get)


def test_vanilla_attention_map_is_the_models_causal_softmax(models: list[app.LoadedModel]) -> None:
    loaded = models[0]
    attention = app.attention_map(loaded, "Where was Anna born?", layer=1, head=1)
    ids = loaded.tokenizer("Where was Anna born?")["input_ids"]
    assert len(attention.tokens) == len(ids) == attention.weights.shape[0] == attention.weights.shape[1]
    with torch.no_grad():
        expected = loaded.model(torch.tensor([ids]), output_attentions=True, use_cache=False).attentions[1][0, 1]
    np.testing.assert_allclose(attention.weights, expected.numpy(), atol=1e-6)
    np.testing.assert_allclose(attention.weights.sum(-1), 1.0, atol=1e-5)
    assert np.triu(attention.weights, 1).max() == 0.0  # a causal LM never looks ahead
    assert "vanilla attention" in attention.title


def _synthesized_attention(loaded: app.LoadedModel, text: str, layer: int, head: int) -> np.ndarray:
    """softmax of the layer's `synthesize_scores` (computed from the queries alone), causally masked."""
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]])
    block = loaded.model.model.layers[layer]
    with torch.no_grad():
        hidden = loaded.model(ids, output_hidden_states=True, use_cache=False).hidden_states[layer]
        inputs = block.attn_norm(hidden) if block.norm_first else hidden
        positions = torch.arange(ids.shape[1])[None]
        scores = block.self_attn.synthesize_scores(inputs, positions)[0, head, :, : ids.shape[1]]
    causal = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(-1).numpy()


def test_synthesizer_map_shows_its_synthesized_scores(models: list[app.LoadedModel]) -> None:
    loaded, text = models[1], "Where was Anna born?"
    attention = app.attention_map(loaded, text, layer=1, head=1)
    np.testing.assert_allclose(attention.weights, _synthesized_attention(loaded, text, 1, 1), atol=1e-5)
    assert "synthesizer" in attention.title and "no keys" in attention.title
    image = app.render_heatmap(attention)
    assert image.size[0] > 200 and image.size[1] > 200


def _blank_rows_on_top(image) -> int:
    """How many rows at the top of an image are plain white."""
    pixels = np.asarray(image.convert("L"))
    drawn = np.flatnonzero((pixels < 250).any(axis=1))
    return int(drawn[0]) if drawn.size else pixels.shape[0]


@pytest.mark.parametrize("text", ["Hi", "The book was gripping and the ending moved me."])
def test_heatmap_has_no_blank_band_above(models: list[app.LoadedModel], text: str) -> None:
    # The long title of a synthesizer used to leave a blank band a quarter of the image high above the plot.
    image = app.render_heatmap(app.attention_map(models[1], text, layer=0, head=0))
    assert _blank_rows_on_top(image) <= 15


@pytest.mark.parametrize("attention_type", ["random", "factorized"])
def test_other_synthesizers_show_their_synthesized_scores(attention_type: str, tiny_tokenizer) -> None:
    from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM

    config = SmallEncoderConfig.from_preset("cs224n-mingpt")
    config.update_from_string(TINY)
    config.attention_type, config.vocab_size = attention_type, len(tiny_tokenizer)
    torch.manual_seed(0)
    loaded = app.LoadedModel(attention_type, "-", SmallEncoderForCausalLM(config).eval(), tiny_tokenizer, "causal-lm")
    attention = app.attention_map(loaded, "Where was Anna born?", layer=0, head=1)
    np.testing.assert_allclose(
        attention.weights, _synthesized_attention(loaded, "Where was Anna born?", 0, 1), atol=1e-5
    )
    assert attention_type in attention.title


def test_long_text_is_cut_to_what_the_synthesizer_spans(models: list[app.LoadedModel]) -> None:
    loaded = models[1]
    attention = app.attention_map(loaded, "word " * 500, layer=0, head=0)
    assert len(attention.tokens) == loaded.model.config.synthesizer_length


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: app.answer_birthplace(m, "   "), "type a question first"),
        (lambda m: app.answer_birthplace(m, "\u200b\u200c\u2060"), "type a question first"),  # zero-width alone
        (lambda m: app.answer_birthplace(m[2:], "Where was Anna born?"), "no birthplace QA model is loaded"),
        (lambda m: app.generate_text(m[3], " ", 5), "type a prompt first"),
        (lambda m: app.generate_text(m[0], "Hello", 5), "pretrained is not a plain language model"),
        (lambda m: app.classify_review(m[2], ""), "type a review first"),
        (lambda m: app.classify_review(m[0], "Bien."), "pretrained is not a classifier"),
        (lambda m: app.attention_map(m[0], "Hello", layer=5, head=0), "layers 0 to 1; layer 5 does not exist"),
        (lambda m: app.attention_map(m[0], "Hello", layer=0, head=2), "heads 0 to 1; head 2 does not exist"),
        (lambda m: app.load_models(["runs/no/such/run"]), "runs/no/such/run: no such run folder"),
        (lambda m: app.load_models(["someone/not-cached-model"]), "cannot load someone/not-cached-model from the Hub"),
        (lambda m: app.parse_source("label="), "empty model source"),
    ],
)
def test_errors_are_one_clear_line(models: list[app.LoadedModel], call, message: str) -> None:
    with pytest.raises(app.AppError) as error:
        call(models)
    assert message in str(error.value)
    assert "\n" not in str(error.value) and len(str(error.value)) < 300


def test_a_folder_without_a_model_and_duplicate_labels(tmp_path: Path, runs: dict) -> None:
    with pytest.raises(app.AppError, match="has no config.json"):
        app.load_models([str(tmp_path)])
    with pytest.raises(app.AppError, match="two models are labelled 'a'"):
        app.load_models([f"a={runs['sentiment']}", f"a={runs['sentiment']}"])
    broken = shutil.copytree(runs["sentiment"], tmp_path / "broken")
    (broken / "run_record.json").write_text("{not json")
    with pytest.raises(app.AppError, match="run_record.json: not a run record"):
        app.load_models([str(broken)])


def test_a_model_without_a_run_record_goes_by_its_model_card(runs: dict, space_export: Path, tmp_path: Path) -> None:
    from hf_models.run_record import read_record

    # The export of `push_to_hub.py` (what a Hub model holds): its public run record names the task.
    exported = space_export / "model"
    assert read_record(exported) == read_record(runs["pretrained"]).public()
    assert app.trained_task(str(exported)) == "birthplace-qa"
    # Without a record (a Hub model shared otherwise), the card's tags name the task.
    carded = shutil.copytree(exported, tmp_path / "carded", ignore=shutil.ignore_patterns("run_record.json"))
    assert app.trained_task(str(carded)) == "birthplace-qa"
    assert app.load_model(str(carded)).view == "birthplace"
    # Neither record nor card: the head and the config decide.
    bare = shutil.copytree(runs["lm"], tmp_path / "bare", ignore=shutil.ignore_patterns("run_record.json", "*.md"))
    assert app.trained_task(str(bare)) is None
    assert app.load_model(str(bare)).view == "generate"


def test_a_fresh_process_loads_recipe_runs_with_no_remote_code_prompt(runs: dict) -> None:
    """`recipes/app.py RUN_DIR` starts in a process where nothing has registered the model family with the Auto
    classes (this test process has): the app's loading must do it, or transformers asks its `[y/N]` remote-code
    question and refuses the folder. Stdin closed, as when nobody answers."""
    code = (
        "import sys\n"
        "from transformers.models.auto.configuration_auto import CONFIG_MAPPING\n"
        "from hf_models.app import load_models\n"
        "assert 'small-encoder' not in CONFIG_MAPPING  # nothing registered the family yet\n"
        "for loaded in load_models(sys.argv[1:]):\n"
        "    print('LOADED', loaded.label, loaded.kind, loaded.view, type(loaded.model).__module__)\n"
    )
    sources = [f"qa={runs['birthplace']}", f"reviews={runs['sentiment']}"]
    result = subprocess.run(
        [sys.executable, "-c", code, *sources],
        env={**os.environ, **OFFLINE_ENVIRONMENT, "PYTHONPATH": str(REPO_ROOT)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[y/N]" not in result.stdout + result.stderr
    # The package's own classes, not a copy of the folder's remote code (transformers_modules.*).
    assert result.stdout.splitlines()[-2:] == [
        "LOADED qa causal-lm birthplace hf_models.small_encoder.modeling_small_encoder",
        "LOADED reviews classifier sentiment hf_models.small_encoder.modeling_small_encoder",
    ]


def test_app_config_file(tmp_path: Path) -> None:
    assert app.read_app_config(tmp_path) == []
    (tmp_path / "app.json").write_text('{"models": ["x=user/model"]}')
    assert app.read_app_config(tmp_path) == ["x=user/model"]
    (tmp_path / "app.json").write_text('{"model": "user/model"}')
    with pytest.raises(app.AppError, match="expected"):
        app.read_app_config(tmp_path)


# --------------------------------------------------------------------------------------------------
# The app, served on the loopback interface
# --------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served(models: list[app.LoadedModel]):
    """The app on 127.0.0.1 (a free port) in this process; closed, server and threads, when the module ends."""
    pytest.importorskip("gradio", reason="gradio is not installed: pip install -e '.[app]'")
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    demo = app.build_app(models)
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, share=False, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.fixture(scope="module")
def client(served: str):
    from gradio_client import Client

    return Client(served, verbose=False, httpx_kwargs={"timeout": 60})


def test_a_tab_shows_only_when_a_model_goes_in_it(models: list[app.LoadedModel]) -> None:
    pytest.importorskip("gradio", reason="gradio is not installed: pip install -e '.[app]'")
    demo = app.build_app(models[:1])  # the Space of one birthplace model
    tabs = {c["props"]["label"]: c["props"]["visible"] for c in demo.config["components"] if c["type"] == "tabitem"}
    assert tabs == {"Birthplace": True, "Generate": False, "Sentiment": False, "Attention": True}


def test_served_app_answers_like_the_functions(client, models: list[app.LoadedModel]) -> None:
    question = "Where was Anna Smith born?"
    *answers, notes = client.predict(question, api_name="/birthplace")
    assert answers == list(app.answer_birthplace(models, question).values())
    assert answers[-1] == "London"
    assert notes == "\n".join(
        f"- {app.empty_answer_reason(m, question)}"
        for m, answer in zip(models[:2], answers[:2], strict=True)
        if not answer
    )
    *answers, notes = client.predict(NOT_A_BIRTHPLACE_QUESTION, api_name="/birthplace")
    assert answers == ["", "", "London"]
    assert notes.splitlines() == [f"- {app.empty_answer_reason(m, NOT_A_BIRTHPLACE_QUESTION)}" for m in models[:2]]

    text, notes = client.predict(LM_PROMPT, "greedy", 30, api_name="/generate")
    assert (text, notes) == (app.generate_text(models[3], LM_PROMPT, 30), "")

    review = "un livre superbe"
    result = client.predict(review, api_name="/sentiment")
    expected = app.classify_review(models[2], review)
    assert result["label"] == max(expected, key=expected.get)
    assert {c["label"]: c["confidence"] for c in result["confidences"]} == pytest.approx(expected, abs=1e-6)

    from PIL import Image

    path = client.predict("scratch", "Where was Anna born?", 1, 1, api_name="/attention")
    assert Image.open(path).size == app.render_heatmap(app.attention_map(models[1], "Where was Anna born?", 1, 1)).size


def test_served_app_shows_one_line_errors(client) -> None:
    from gradio_client.exceptions import AppError

    for args, api_name, message in (
        (("  ",), "/birthplace", "type a question first"),
        (("  ", "sampled", 10), "/generate", "type a prompt first"),
        (("scratch", "  ", 0, 0), "/attention", "type some text first"),
        (("scratch", "Hello", 7, 0), "/attention", "Value 7 is greater than maximum value 1"),  # Gradio's own check
    ):
        with pytest.raises(AppError) as error:
            client.predict(*args, api_name=api_name)
        assert message in str(error.value) and "\n" not in str(error.value)


def test_command_line_refuses_a_missing_run_in_one_line(tmp_path: Path, capsys) -> None:
    # In-process, as `recipes/app.py` runs it (the Space test runs the same launcher file in a fresh process).
    from hf_models.safety import command_line

    assert command_line(app.main, [str(tmp_path / "missing")]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"error: {tmp_path / 'missing'}: no such run folder (and not a Hub id of the form USER/NAME)"
    )


# --------------------------------------------------------------------------------------------------
# The Space (`push_to_hub.py --space`)
# --------------------------------------------------------------------------------------------------
def _push_to_hub():
    import importlib.util

    spec = importlib.util.spec_from_file_location("push_to_hub_for_app", REPO_ROOT / "push_to_hub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def _distribution_name(requirement: str) -> str:
    import re

    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


@pytest.fixture(scope="module")
def space_export(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("gradio", reason="gradio is not installed: pip install -e '.[app]'")
    out = tmp_path_factory.mktemp("space-dry-run") / "out"
    argv = [str(runs["pretrained"]), "--repo_id", "tester/tiny-bp", "--space", "tester/tiny-bp-app"]
    assert _push_to_hub().main([*argv, "--dry_run", "--local_dir", str(out)]) == 0
    return out


def test_space_ships_the_projects_app_byte_for_byte(space_export: Path) -> None:
    from hf_models.app import space

    package = {p.relative_to(space.PACKAGE_DIR).as_posix() for p in space.PACKAGE_DIR.rglob("*.py")} - {
        p.relative_to(space.PACKAGE_DIR).as_posix() for p in space.PACKAGE_DIR.rglob("__pycache__/*.py")
    }
    files = _files(space_export / "space")
    assert {"README.md", "app.py", "app.json", "requirements.txt"} <= files
    assert {f"hf_models/{rel}" for rel in package} <= files
    assert "hf_models/small_encoder/presets/cs224n-mingpt.json" in files
    assert (space_export / "space" / "app.py").read_bytes() == (REPO_ROOT / "recipes" / "app.py").read_bytes()
    for rel in files - {"README.md", "app.py", "app.json", "requirements.txt"}:
        assert (space_export / "space" / rel).read_bytes() == (
            space.PACKAGE_DIR / rel[len("hf_models/") :]
        ).read_bytes()
    assert json.loads((space_export / "space" / "app.json").read_text()) == {
        "models": ["example-birthplace=tester/tiny-bp"]
    }
    # The model export sits beside it, as without --space.
    assert {"config.json", "model.safetensors", "README.md"} <= _files(space_export / "model")


def test_space_metadata_and_pinned_requirements(space_export: Path) -> None:
    from importlib import metadata

    from huggingface_hub import SpaceCard

    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")

    card = SpaceCard.load(space_export / "space" / "README.md")
    assert (card.data.sdk, card.data.app_file, card.data.models) == ("gradio", "app.py", ["tester/tiny-bp"])
    assert card.data.sdk_version == metadata.version("gradio")
    assert card.data.python_version == f"{sys.version_info.major}.{sys.version_info.minor}"
    lines = (space_export / "space" / "requirements.txt").read_text().splitlines()
    pins = dict(line.split("==") for line in lines if "==" in line)
    for name, version in pins.items():
        assert version == metadata.version(name).split("+")[0]
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    needed = {_distribution_name(r) for r in [*project["dependencies"], *project["optional-dependencies"]["app"]]}
    assert needed <= {_distribution_name(name) for name in pins}, "a dependency of the app is not pinned in the Space"


def test_exported_space_imports_its_own_package_and_fails_in_one_line_offline(space_export: Path) -> None:
    """In the Space folder, `python app.py` reads app.json and imports the shipped hf_models, not this checkout's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    code = "import runpy, sys, hf_models; print(hf_models.__file__); sys.argv = ['app.py']; runpy.run_path('app.py', run_name='__main__')"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=space_export / "space", timeout=300
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert (
        Path(result.stdout.splitlines()[0]).resolve()
        == (space_export / "space" / "hf_models" / "__init__.py").resolve()
    )
    assert result.stderr.strip().splitlines()[-1].startswith("error: cannot load tester/tiny-bp from the Hub")


class RecordingHfApi:
    """Stands in for `HfApi`: records the calls and what the staged folder holds when `upload_folder` runs."""

    calls: list[tuple[str, dict]] = []

    def __init__(self, token: str | None = None, **kwargs) -> None:
        self.calls.append(("__init__", {"token": token}))

    def whoami(self, **kwargs) -> dict:
        return {"name": "tester"}

    def create_repo(self, **kwargs) -> str:
        self.calls.append(("create_repo", kwargs))
        return kwargs["repo_id"]

    def upload_folder(self, **kwargs) -> object:
        kwargs["_staged"] = _files(Path(kwargs["folder_path"]))
        self.calls.append(("upload_folder", kwargs))
        return type("CommitInfo", (), {"commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"})()


def test_space_upload_creates_a_gradio_space_after_the_model(runs: dict, space_export: Path, monkeypatch) -> None:
    from hf_models.app import space
    from hf_models.hub import publish

    RecordingHfApi.calls = []
    monkeypatch.setattr(publish, "HfApi", RecordingHfApi)  # one client for the model and the Space
    monkeypatch.setattr(publish, "get_token", lambda: "hf_fake_token")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    argv = [str(runs["pretrained"]), "--repo_id", "tester/tiny-bp", "--space", "tester/tiny-bp-app"]
    assert _push_to_hub().main(argv) == 0
    uploads = [kwargs for name, kwargs in RecordingHfApi.calls if name == "upload_folder"]
    creates = [kwargs for name, kwargs in RecordingHfApi.calls if name == "create_repo"]
    assert [(c["repo_id"], c["repo_type"]) for c in creates] == [
        ("tester/tiny-bp", "model"),
        ("tester/tiny-bp-app", "space"),
    ]
    assert creates[1]["space_sdk"] == "gradio"
    assert [(u["repo_id"], u["repo_type"]) for u in uploads] == [
        ("tester/tiny-bp", "model"),
        ("tester/tiny-bp-app", "space"),
    ]
    assert uploads[1]["allow_patterns"] == space.SPACE_ALLOW_PATTERNS
    assert uploads[1]["_staged"] == _files(space_export / "space")


def test_space_needs_the_model_repository(runs: dict, capsys) -> None:
    with pytest.raises(SystemExit):
        _push_to_hub().main([str(runs["pretrained"]), "--space", "tester/app", "--dry_run", "--local_dir", "x"])
    assert "--space needs --repo_id" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# A real browser: headless Chromium (Debian's chromium + chromium-driver) through Selenium
# --------------------------------------------------------------------------------------------------
def _missing(reason: str) -> None:
    """Skip, saying why; under CI (CI=true) fail instead: there the browser test must run (.ci/run installs it)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true, and the browser test cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, one for the module; skips (fails under CI), saying why, when Selenium, Chromium or
    chromedriver is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed: pip install -e '.[dev]' (or make app-test)")
    binary = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        _missing("no Chromium or chromedriver on PATH: run `make app-test` (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1100,900",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: $APP_SCREENSHOT_DIR (`make app-test SCREENSHOTS=docs/images`), else a temporary
    folder, so that a test run never changes the tracked tree."""
    return SCREENSHOT_DIR or tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def page(browser, served: str):
    """The app freshly loaded in the browser, and a 2-minute `WebDriverWait` on it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1100, 900)
    browser.get(served)
    wait = WebDriverWait(browser, 120)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#birthplace-question textarea"))
    return browser, wait


def _screenshot(driver, name: str, folder: Path) -> Path:
    """A small PNG of the page (256 colours)."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"app-{name}.png"
    driver.save_screenshot(str(path))
    Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)
    return path


def _tab_names(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [tab.text.strip() for tab in driver.find_elements(By.XPATH, "//button[@role='tab']") if tab.is_displayed()]


def _open_tab(driver, wait, name: str) -> None:
    from selenium.webdriver.common.by import By

    tab = f"//button[@role='tab' and normalize-space()='{name}']"
    driver.find_element(By.XPATH, tab).click()
    wait.until(lambda d: d.find_element(By.XPATH, tab).get_attribute("aria-selected") == "true")


def _value(driver, css: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css).get_attribute("value") or ""


def _page_text(driver) -> str:
    """Everything the page shows as text: its visible text and the values of its text boxes."""
    from selenium.webdriver.common.by import By

    boxes = driver.find_elements(By.CSS_SELECTOR, "textarea, input")
    return "\n".join([driver.find_element(By.TAG_NAME, "body").text, *(b.get_attribute("value") or "" for b in boxes)])


def test_browser_answers_a_question_and_says_why_an_answer_is_empty(
    page, models, synthetic_birthplace_dir: Path, screenshots: Path
) -> None:
    """Each model in the tab of its task; answers read from the page; an empty answer's reason shown under it."""
    from selenium.webdriver.common.by import By

    from hf_models.data import load_birthplace

    browser, wait = page
    assert _tab_names(browser) == ["Birthplace", "Generate", "Sentiment", "Attention"]
    labels = [
        e.text for e in browser.find_elements(By.CSS_SELECTOR, "[id^=birthplace-answer-] [data-testid=block-info]")
    ]
    assert labels == ["pretrained", "scratch"]  # the QA models only: not the plain LM, not the classifier

    box = browser.find_element(By.CSS_SELECTOR, "#birthplace-question textarea")
    box.send_keys(NOT_A_BIRTHPLACE_QUESTION)
    browser.find_element(By.CSS_SELECTOR, "#birthplace-button").click()
    wait.until(lambda d: _value(d, "#birthplace-london textarea") == "London")
    notes = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#birthplace-notes").text)
    assert [_value(browser, f"#birthplace-answer-{i} textarea") for i in range(2)] == ["", ""]
    assert notes.splitlines() == [app.empty_answer_reason(m, NOT_A_BIRTHPLACE_QUESTION) for m in models[:2]]

    question = load_birthplace(str(synthetic_birthplace_dir))["validation"]["question"][0]
    expected = app.answer_birthplace(models, question)
    assert expected["pretrained"], "the finetuned model should answer something"
    box.clear()
    box.send_keys(question)
    browser.find_element(By.CSS_SELECTOR, "#birthplace-button").click()
    wait.until(lambda d: _value(d, "#birthplace-answer-0 textarea") == expected["pretrained"])
    assert _value(browser, "#birthplace-answer-1 textarea") == expected["scratch"]
    assert not CONTROL.search(_page_text(browser))
    assert _screenshot(browser, "birthplace", screenshots).stat().st_size < 300_000


def test_browser_generates_without_control_characters(page, models, screenshots: Path) -> None:
    from selenium.webdriver.common.by import By

    browser, wait = page
    _open_tab(browser, wait, "Generate")
    assert "\b" in _greedy_continuation(models[3], LM_PROMPT, 30)  # what the model writes has backspaces
    browser.find_element(By.CSS_SELECTOR, "#generate-prompt textarea").send_keys(LM_PROMPT)
    slider = browser.find_element(By.CSS_SELECTOR, "#generate-max-new-tokens input[type=number]")
    slider.clear()
    slider.send_keys("30")
    browser.find_element(By.CSS_SELECTOR, "#generate-button").click()
    expected = app.generate_text(models[3], LM_PROMPT, 30)
    wait.until(lambda d: _value(d, "#generate-text-0 textarea") == expected)
    assert not CONTROL.search(_page_text(browser)) and app.text.REPLACEMENT in expected
    _screenshot(browser, "generate", screenshots)


def test_browser_classifies_a_review(page, models, screenshots: Path) -> None:
    from selenium.webdriver.common.by import By

    browser, wait = page
    _open_tab(browser, wait, "Sentiment")
    browser.find_element(By.CSS_SELECTOR, "#sentiment-review textarea").send_keys("un livre superbe")
    browser.find_element(By.CSS_SELECTOR, "#sentiment-button").click()
    scores = app.classify_review(models[2], "un livre superbe")
    best = max(scores, key=scores.get)
    wait.until(lambda d: best in d.find_element(By.CSS_SELECTOR, "#sentiment-label-0").text)
    _screenshot(browser, "sentiment", screenshots)


def test_browser_shows_the_attention_plot_at_the_top_of_its_frame(page, screenshots: Path) -> None:
    from PIL import Image
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser, wait = page
    _open_tab(browser, wait, "Attention")
    model = browser.find_element(By.CSS_SELECTOR, "#attention-model input")
    model.click()
    model.send_keys(Keys.CONTROL, "a")
    model.send_keys("scratch", Keys.ENTER)  # the synthesizer: its synthesized scores, and the longest title
    wait.until(lambda d: _value(d, "#attention-model input") == "scratch")
    browser.find_element(By.CSS_SELECTOR, "#attention-button").click()
    image = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#attention-image img"))[0]
    wait.until(lambda d: image.get_attribute("naturalWidth") not in (None, "0"))
    browser.set_window_size(1100, 1650)  # the whole heatmap in the screenshot
    frame = browser.find_element(By.CSS_SELECTOR, "#attention-image")
    # The image sits at the top of its frame (under the frame's label), and the plot at the top of the image.
    assert image.rect["y"] - frame.rect["y"] < 50
    shown = Image.open(io.BytesIO(image.screenshot_as_png))
    assert _blank_rows_on_top(shown) < 0.05 * shown.height
    assert not CONTROL.search(_page_text(browser))
    _screenshot(browser, "attention", screenshots)
