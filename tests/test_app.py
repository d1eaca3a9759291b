"""The Gradio app (`recipes/app.py`, logic in `hf_models/app/`) on tiny trained runs: its functions against the
models' own outputs, the app served on 127.0.0.1 and driven with `gradio_client`, the Space that
`push_to_hub.py --space` writes, and a real headless Chromium that types a question and reads the answer (skipped
when no browser is installed; `make app-test` installs one)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from hf_models import app

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY = "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=64"
QUIET = [
    "--use_cpu",
    "--report_to",
    "none",
    "--save_strategy",
    "no",
    "--disable_tqdm",
    "true",
    "--log_level",
    "warning",
]
SCREENSHOTS = Path(os.environ.get("APP_SCREENSHOT_DIR", REPO_ROOT / "docs" / "images"))


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
    synthetic_birthplace_dir: Path,
    tiny_tokenizer_dir: Path,
    write_alternating_cls_books,
) -> dict:
    """Three tiny recipe runs: a pretrained-then-finetuned birthplace model, a synthesizer finetuned from scratch,
    and a review classifier."""
    from hf_models.tasks import birthplace, sentiment

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("app")
    data, tok = str(synthetic_birthplace_dir), str(tiny_tokenizer_dir)
    model = ["--tokenizer_name_or_path", tok, "--config_overrides", TINY]
    steps = ["--per_device_train_batch_size", "16", "--learning_rate", "5e-3", *QUIET]
    pre, finetuned, synth, cls = (
        root / "pretrain",
        root / "pretrained",
        root / "scratch-synthesizer",
        root / "sentiment",
    )
    birthplace.main(["pretrain", "--data_dir", data, "--output_dir", str(pre), "--max_steps", "6", *model, *steps])
    # 60 steps at 1e-2 (2 s) are enough for the answers to be place names.
    finetune = ["finetune", "--data_dir", data, "--max_steps", "60", *steps, "--learning_rate", "1e-2"]
    birthplace.main([*finetune, "--model_name_or_path", str(pre), "--output_dir", str(finetuned)])
    birthplace.main([*finetune, "--variant", "synthesizer", "--output_dir", str(synth), *model])
    sentiment.main(
        ["--data_dir", str(write_alternating_cls_books(root)), "--from_scratch", "--output_dir", str(cls), *model]
        + ["--max_steps", "30", *steps]
    )
    return {"root": root, "pretrained": finetuned, "synthesizer": synth, "sentiment": cls}


@pytest.fixture(scope="module")
def models(runs: dict) -> list[app.LoadedModel]:
    return app.load_models(
        [f"pretrained={runs['pretrained']}", f"scratch={runs['synthesizer']}", str(runs["sentiment"])]
    )


# --------------------------------------------------------------------------------------------------
# The functions
# --------------------------------------------------------------------------------------------------
def test_models_load_with_labels_and_heads(models: list[app.LoadedModel], runs: dict) -> None:
    assert [(m.label, m.kind, m.attention_type) for m in models] == [
        ("pretrained", "causal-lm", "vanilla"),
        ("scratch", "causal-lm", "synthesizer"),
        ("sentiment", "classifier", "vanilla"),
    ]
    assert all(not m.model.training for m in models)


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
        assert list(answers) == ["pretrained", "scratch", app.LONDON_LABEL]
        assert answers[app.LONDON_LABEL] == "London"
        for loaded in models[:2]:
            assert answers[loaded.label] == _greedy_answer(loaded, question)
    # The finetuned models answer with a place name.
    assert app.answer_birthplace(models, questions[0])["pretrained"] in places


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
        (lambda m: app.answer_birthplace(m[2:], "Where was Anna born?"), "no causal LM is loaded"),
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


def test_served_app_answers_like_the_functions(client, models: list[app.LoadedModel]) -> None:
    question = "Where was Anna Smith born?"
    answers = client.predict(question, api_name="/birthplace")
    assert list(answers) == list(app.answer_birthplace(models, question).values())
    assert answers[-1] == "London"

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
        (("scratch", "  ", 0, 0), "/attention", "type some text first"),
        (("scratch", "Hello", 7, 0), "/attention", "Value 7 is greater than maximum value 1"),  # Gradio's own check
    ):
        with pytest.raises(AppError) as error:
            client.predict(*args, api_name=api_name)
        assert message in str(error.value) and "\n" not in str(error.value)


def test_command_line_refuses_a_missing_run_in_one_line(tmp_path: Path, capsys) -> None:
    # In-process (the Space test runs the same launcher file in a fresh process).
    assert app.main([str(tmp_path / "missing")]) == 1
    assert (
        capsys.readouterr().err.strip()
        == f"app.py: {tmp_path / 'missing'}: no such run folder (and not a Hub id of the form USER/NAME)"
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
    from hf_models.hub import space

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
    assert json.loads((space_export / "space" / "app.json").read_text()) == {"models": ["pretrained=tester/tiny-bp"]}
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
    assert result.returncode == 1, result.stderr[-2000:]
    assert (
        Path(result.stdout.splitlines()[0]).resolve()
        == (space_export / "space" / "hf_models" / "__init__.py").resolve()
    )
    assert result.stderr.strip().splitlines()[-1].startswith("app.py: cannot load tester/tiny-bp from the Hub")


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
    from hf_models.hub import publish, space

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
@pytest.fixture
def browser():
    """Headless Chromium; skips, saying why, when Selenium, Chromium or chromedriver is missing."""
    pytest.importorskip("selenium", reason="selenium is not installed: pip install -e '.[dev]' (or make app-test)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        pytest.skip(
            "no Chromium or chromedriver on PATH: run `make app-test` (apt-get install chromium chromium-driver)"
        )
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


def _screenshot(driver, name: str, folder: Path) -> Path:
    """A small PNG of the page (256 colours)."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"app-{name}.png"
    driver.save_screenshot(str(path))
    Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)
    return path


def _open_tab(driver, wait, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.XPATH, f"//button[@role='tab' and normalize-space()='{name}']").click()
    wait.until(
        lambda d: (
            d.find_element(By.XPATH, f"//button[@role='tab' and normalize-space()='{name}']").get_attribute(
                "aria-selected"
            )
            == "true"
        )
    )


def test_browser_asks_a_question_and_reads_the_answers(
    browser, served: str, models, synthetic_birthplace_dir: Path, tmp_path: Path
) -> None:
    """Types a question, clicks, reads every answer from the page; then each tab, with a screenshot of each."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    from hf_models.data import load_birthplace

    folder = Path(os.environ.get("APP_SCREENSHOT_DIR") or tmp_path)
    wait = WebDriverWait(browser, 120)
    browser.get(served)

    def value(css: str) -> str:
        return browser.find_element(By.CSS_SELECTOR, css).get_attribute("value") or ""

    question = load_birthplace(str(synthetic_birthplace_dir))["validation"]["question"][0]
    expected = app.answer_birthplace(models, question)
    assert expected["pretrained"], "the finetuned model should answer something"
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#birthplace-question textarea")).send_keys(question)
    browser.find_element(By.CSS_SELECTOR, "#birthplace-button").click()
    wait.until(lambda d: value("#birthplace-london textarea") == "London")
    assert [value(f"#birthplace-answer-{i} textarea") for i in range(2)] == [
        expected["pretrained"],
        expected["scratch"],
    ]
    assert _screenshot(browser, "birthplace", folder).stat().st_size < 300_000

    _open_tab(browser, wait, "Sentiment")
    browser.find_element(By.CSS_SELECTOR, "#sentiment-review textarea").send_keys("un livre superbe")
    browser.find_element(By.CSS_SELECTOR, "#sentiment-button").click()
    scores = app.classify_review(models[2], "un livre superbe")
    best = max(scores, key=scores.get)
    wait.until(lambda d: best in d.find_element(By.CSS_SELECTOR, "#sentiment-label-0").text)
    _screenshot(browser, "sentiment", folder)

    _open_tab(browser, wait, "Attention")
    model = browser.find_element(By.CSS_SELECTOR, "#attention-model input")
    model.click()
    model.send_keys(Keys.CONTROL, "a")
    model.send_keys("scratch", Keys.ENTER)  # the synthesizer: its synthesized scores
    wait.until(lambda d: value("#attention-model input") == "scratch")
    browser.find_element(By.CSS_SELECTOR, "#attention-button").click()
    image = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#attention-image img"))
    wait.until(lambda d: image[0].get_attribute("naturalWidth") not in (None, "0"))
    browser.set_window_size(1100, 1500)  # the whole heatmap in the screenshot
    _screenshot(browser, "attention", folder)
