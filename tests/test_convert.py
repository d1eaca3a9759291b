"""Converters: state dicts written by plain-torch re-implementations of the course models give the same logits."""

import math
import subprocess
import sys

import pytest
import torch
from course_reference import LabModel
from torch import nn
from torch.nn import functional as F
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from hf_models import SmallEncoderForCausalLM, SmallEncoderForSequenceClassification
from hf_models.convert import CheckpointError, convert_checkpoint

TOLERANCE = 1e-5


class CourseConfig:
    def __init__(self, vocab_size: int, block_size: int, n_layer: int, n_head: int, n_embd: int, synthesizer: bool):
        self.vocab_size, self.block_size = vocab_size, block_size
        self.n_layer, self.n_head, self.n_embd = n_layer, n_head, n_embd
        self.synthesizer = synthesizer


class CausalSelfAttention(nn.Module):
    def __init__(self, config: CourseConfig):
        super().__init__()
        self.key = nn.Linear(config.n_embd, config.n_embd)
        self.query = nn.Linear(config.n_embd, config.n_embd)
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        block = config.block_size
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))
        self.n_head = config.n_head

    def forward(self, x):
        B, T, C = x.size()
        k = self.key(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = self.query(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, -1e10)
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class SynthesizerAttention(nn.Module):
    def __init__(self, config: CourseConfig):
        super().__init__()
        self.w1 = nn.Linear(config.n_embd, config.n_embd)
        self.w2 = nn.Parameter(torch.zeros(config.n_embd // config.n_head, config.block_size - 1))
        self.b2 = nn.Parameter(torch.zeros(config.block_size - 1))
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        block = config.block_size
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))
        self.n_head = config.n_head
        nn.init.uniform_(self.w2, -0.001, 0.001)

    def forward(self, x):
        B, T, C = x.size()
        a = F.relu(self.w1(x)).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = a @ self.w2[:, :T] + self.b2[:T]
        v = self.value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, -1e10)
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class CourseBlock(nn.Module):
    def __init__(self, config: CourseConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.attn = SynthesizerAttention(config) if config.synthesizer else CausalSelfAttention(config)
        self.mlp = nn.Sequential(
            nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(), nn.Linear(4 * config.n_embd, config.n_embd)
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CourseGPT(nn.Module):
    def __init__(self, config: CourseConfig):
        super().__init__()
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.blocks = nn.Sequential(*[CourseBlock(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb[:, : idx.size(1), :]
        return self.head(self.ln_f(self.blocks(x)))


def randomize(module: nn.Module) -> nn.Module:
    """Non-trivial weights everywhere (the course zero-initialises pos_emb and b2, and nearly zeroes w2)."""
    torch.manual_seed(0)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.normal_(0.0, 0.5 if parameter.dim() > 1 else 0.1)
    return module.eval()


@pytest.fixture(scope="module")
def lab_checkpoints(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab")
    models = {}
    for head, nclasses in (("lm", 97), ("classifier", 2)):
        model = randomize(LabModel(ntoken=97, nhead=2, nhid=24, nlayers=2, nclasses=nclasses))
        # The lab saves a dict with the state dict under `model_state_dict`.
        torch.save({"model_state_dict": model.state_dict(), "epoch": 3}, out / f"{head}.pt")
        models[head] = model
    return out, models


@pytest.mark.parametrize("head", ["lm", "classifier"])
def test_lab_checkpoint_converts_to_equal_logits(lab_checkpoints, tmp_path, head):
    out, models = lab_checkpoints
    convert_checkpoint("altegrad-lab", out / f"{head}.pt", tmp_path / "hf")
    src = torch.randint(0, 97, (11, 3))  # [L, B], the lab's layout
    with torch.no_grad():
        expected = models[head](src)
        if head == "lm":
            ours = AutoModelForCausalLM.from_pretrained(tmp_path / "hf").eval()
            assert isinstance(ours, SmallEncoderForCausalLM)
            logits = ours(src.t().contiguous()).logits
            expected = expected.transpose(0, 1)
        else:
            ours = AutoModelForSequenceClassification.from_pretrained(tmp_path / "hf").eval()
            assert isinstance(ours, SmallEncoderForSequenceClassification) and ours.config.num_labels == 2
            logits = ours(src.t().contiguous()).logits
            expected = expected[-1]  # the lab reads the last position
    assert logits.shape == expected.shape
    assert (logits - expected).abs().max().item() <= TOLERANCE
    assert ours.config.hidden_dropout == 0.0 and ours.config.max_position_embeddings == 5000


def course_gpt(synthesizer: bool, block_size: int = 16) -> CourseGPT:
    config = CourseConfig(
        vocab_size=53, block_size=block_size, n_layer=2, n_head=4, n_embd=32, synthesizer=synthesizer
    )
    return randomize(CourseGPT(config))


@pytest.mark.parametrize(
    ("variant", "share_heads"), [("vanilla", False), ("synthesizer", False), ("synthesizer", True)]
)
def test_mingpt_checkpoint_converts_to_equal_logits(tmp_path, variant, share_heads):
    course = course_gpt(synthesizer=variant == "synthesizer")
    torch.save(course.state_dict(), tmp_path / "model.pt")
    # A state dict does not hold the head count: vanilla needs it (default 8), the synthesizer's B gives it.
    num_heads = 4 if variant == "vanilla" else None
    convert_checkpoint(
        "cs224n-mingpt",
        tmp_path / "model.pt",
        tmp_path / "hf",
        num_heads=num_heads,
        share_synthesizer_heads=share_heads,
    )
    ours = AutoModelForCausalLM.from_pretrained(tmp_path / "hf").eval()
    assert ours.config.attention_type == variant and ours.config.max_position_embeddings == 16
    assert ours.config.num_attention_heads == 4
    # The course feeds block - 1 characters (x = chunk[:-1]); its synthesizer cannot take more.
    idx = torch.randint(0, 53, (3, 15))
    with torch.no_grad():
        expected = course(idx)
        logits = ours(idx).logits
    assert (logits - expected).abs().max().item() <= TOLERANCE
    if variant == "synthesizer":
        assert ours.config.synthesizer_width == 15
        course_count = sum(p.numel() for p in course.parameters())
        our_count = sum(p.numel() for p in ours.parameters())
        tiled_extra = 2 * 3 * (32 // 4 + 1) * 15  # layers × (heads - 1) × (d/h + 1) × ℓ
        assert our_count == course_count + (0 if share_heads else tiled_extra)


def test_mingpt_greedy_generation_matches_the_course_loop(tmp_path):
    course = course_gpt(synthesizer=True)
    torch.save(course.state_dict(), tmp_path / "model.pt")
    ours = convert_checkpoint("cs224n-mingpt", tmp_path / "model.pt", tmp_path / "hf")
    idx = torch.randint(0, 53, (1, 5))
    with torch.no_grad():
        expected = idx
        for _ in range(8):  # the course's sample(): argmax of the last position, appended
            expected = torch.cat([expected, course(expected)[:, -1].argmax(-1, keepdim=True)], dim=1)
        generated = ours.generate(idx, max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert torch.equal(generated, expected)


def test_bad_checkpoint_lists_every_problem(tmp_path):
    state_dict = course_gpt(synthesizer=False).state_dict()
    del state_dict["blocks.1.attn.key.weight"]
    state_dict["blocks.0.extra.weight"] = torch.zeros(2)
    state_dict["blocks.0.mlp.2.bias"] = torch.zeros(7)
    torch.save(state_dict, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError) as error:
        convert_checkpoint("cs224n-mingpt", tmp_path / "bad.pt", tmp_path / "hf")
    message = str(error.value)
    assert str(tmp_path / "bad.pt") in message
    assert "1 missing keys" in message and "blocks.1.attn.key.weight" in message
    assert "1 unknown keys" in message and "blocks.0.extra.weight" in message
    assert "blocks.0.mlp.2.bias: (7,), expected (32,)" in message
    assert not (tmp_path / "hf").exists()


def test_wrong_variant_and_wrong_course_are_clear_errors(tmp_path):
    torch.save(course_gpt(synthesizer=True).state_dict(), tmp_path / "synth.pt")
    with pytest.raises(
        CheckpointError, match="--attention_type vanilla was asked, but the checkpoint holds synthesizer"
    ):
        convert_checkpoint("cs224n-mingpt", tmp_path / "synth.pt", tmp_path / "hf", variant="vanilla")
    with pytest.raises(CheckpointError, match="base.encoder.weight must be a 2-d tensor"):
        convert_checkpoint("altegrad-lab", tmp_path / "synth.pt", tmp_path / "hf")
    (tmp_path / "notes.pt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="not a PyTorch state dict"):
        convert_checkpoint("cs224n-mingpt", tmp_path / "notes.pt", tmp_path / "hf")


def test_command_line(tmp_path):
    torch.save(course_gpt(synthesizer=False).state_dict(), tmp_path / "model.pt")
    command = [sys.executable, "-m", "hf_models.convert", "cs224n-mingpt", str(tmp_path / "model.pt")]
    result = subprocess.run([*command, "--output_dir", str(tmp_path / "hf")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Saved SmallEncoderForCausalLM" in result.stdout and (tmp_path / "hf" / "config.json").is_file()
    bad = subprocess.run(
        [*command, "--output_dir", str(tmp_path / "x"), "--attention_type", "synthesizer"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0 and "error:" in bad.stderr and "Traceback" not in bad.stderr


def test_a_failed_save_leaves_the_old_folder_whole(tmp_path, monkeypatch):
    """The converter saves through `staged_save`: the model, tokenizer and record replace the old files only once
    all are written; a failure half-way (here, the record) leaves the old folder as it was, and no staging folder."""
    torch.save(course_gpt(synthesizer=False).state_dict(), tmp_path / "model.pt")
    out = tmp_path / "hf"
    convert_checkpoint("cs224n-mingpt", tmp_path / "model.pt", out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"config.json", "model.safetensors", "run_record.json"} <= set(before)
    torch.save(course_gpt(synthesizer=True).state_dict(), tmp_path / "model.pt")

    def failing_record(*args):
        raise OSError(28, "No space left on device", str(out / "run_record.json"))

    # In the converter's own module: test_help's `-m hf_models.convert` may leave another copy on the package.
    monkeypatch.setitem(convert_checkpoint.__globals__, "conversion_record", failing_record)
    with pytest.raises(OSError, match="No space left"):
        convert_checkpoint("cs224n-mingpt", tmp_path / "model.pt", out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_tokenizer_is_saved_and_its_special_ids_copied(tmp_path):
    from hf_models.tokenization.courses import build_cs224n_char_tokenizer

    (tmp_path / "wiki.txt").write_text("".join(chr(ord("A") + i) for i in range(51)), encoding="utf-8")
    build_cs224n_char_tokenizer(tmp_path / "wiki.txt", tmp_path / "tok")  # 2 + 51 = 53 characters
    torch.save(course_gpt(synthesizer=True).state_dict(), tmp_path / "model.pt")
    convert_checkpoint("cs224n-mingpt", tmp_path / "model.pt", tmp_path / "hf", tokenizer_dir=tmp_path / "tok")
    config = AutoModelForCausalLM.from_pretrained(tmp_path / "hf").config
    assert (config.pad_token_id, config.sep_token_id, config.mask_token_id) == (0, 1, 1)
    assert (tmp_path / "hf" / "tokenizer.json").is_file()
    (tmp_path / "wiki.txt").write_text("ABC", encoding="utf-8")
    build_cs224n_char_tokenizer(tmp_path / "wiki.txt", tmp_path / "small")
    with pytest.raises(ValueError, match="the tokenizer has 5 tokens but the checkpoint's vocabulary has 53"):
        convert_checkpoint("cs224n-mingpt", tmp_path / "model.pt", tmp_path / "x", tokenizer_dir=tmp_path / "small")


def test_converted_folder_has_a_record_and_exports_with_its_card(tmp_path):
    """The converted folder ships its remote code and a run record, so push_to_hub.py describes it without guessing."""
    from huggingface_hub import ModelCard

    from hf_models.hub import export_folder
    from hf_models.run_record import read_record
    from hf_models.tokenization.courses import build_cs224n_char_tokenizer

    (tmp_path / "wiki.txt").write_text("".join(chr(ord("A") + i) for i in range(51)), encoding="utf-8")
    build_cs224n_char_tokenizer(tmp_path / "wiki.txt", tmp_path / "tok")
    torch.save(course_gpt(synthesizer=True).state_dict(), tmp_path / "model.pt")
    model = convert_checkpoint("cs224n-mingpt", tmp_path / "model.pt", tmp_path / "hf", tokenizer_dir=tmp_path / "tok")
    record = read_record(tmp_path / "hf")
    assert (record.task, record.preset, record.language, record.dataset) == (
        "birthplace-qa",
        "cs224n-mingpt",
        "en",
        "birthplace",
    )
    assert record.model_size["num_parameters"] == sum(p.numel() for p in model.parameters())
    assert record.hyperparameters == {"converted_from": "model.pt"}
    assert (tmp_path / "hf" / "modeling_small_encoder.py").is_file()
    card = export_folder(tmp_path / "hf", tmp_path / "export").card
    assert card.data.language == "en" and "cs224n-mingpt" in card.data.tags
    text = " ".join(card.text.split())
    assert "converted with `python -m hf_models.convert`" in text
    assert "Preset:** `cs224n-mingpt` with overrides num_hidden_layers=2" in text  # the test's tiny shape
    assert str(tmp_path) not in str(ModelCard.load(tmp_path / "export" / "README.md"))


def test_bad_lab_checkpoint_lists_every_problem(lab_checkpoints, tmp_path):
    out, _ = lab_checkpoints
    state_dict = torch.load(out / "lm.pt", weights_only=True)["model_state_dict"]
    del state_dict["base.transformer_encoder.layers.1.norm2.bias"]
    state_dict["base.transformer_encoder.layers.0.linear1.weight"] = torch.zeros(24, 7)
    torch.save(state_dict, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError) as error:
        convert_checkpoint("altegrad-lab", tmp_path / "bad.pt", tmp_path / "hf")
    message = str(error.value)
    assert "1 missing keys" in message and "base.transformer_encoder.layers.1.norm2.bias" in message
    assert "base.transformer_encoder.layers.0.linear1.weight: (24, 7), expected (24, 24)" in message
    assert "unknown keys" not in message


# `python -m hf_models.convert`: every flag through `main`, checked on the saved folder (one row per flag; `{tmp}`
# is the test's folder, which holds a 53-character tokenizer `tok` and `hf`, the output, with an earlier config).
def _config(out):
    import json

    return json.loads((out / "config.json").read_text(encoding="utf-8"))


CONVERT_FLAG_ROWS = [
    (False, ("--num_heads", "4"), lambda out: _config(out)["num_attention_heads"] == 4),  # the default is 8
    (False, ("--attention_type", "vanilla"), lambda out: _config(out)["attention_type"] == "vanilla"),
    (False, ("--tokenizer", "{tmp}/tok"), lambda out: len(AutoTokenizer.from_pretrained(out)) == 53),
    (True, ("--attention_type", "synthesizer"), lambda out: _config(out)["attention_type"] == "synthesizer"),
    (True, ("--share_synthesizer_heads",), lambda out: _config(out)["synthesizer_shared_heads"] is True),
    (True, ("--overwrite_output_dir",), lambda out: "earlier" not in _config(out)),
]


@pytest.mark.parametrize("synthesizer", [False, True], ids=["vanilla", "synthesizer"])
def test_convert_command_line_flags_reach_the_saved_config(tmp_path, synthesizer):
    from hf_models.convert import main
    from hf_models.tokenization.courses import build_cs224n_char_tokenizer

    torch.save(course_gpt(synthesizer=synthesizer).state_dict(), tmp_path / "model.pt")
    (tmp_path / "wiki.txt").write_text("".join(chr(ord("A") + i) for i in range(51)), encoding="utf-8")
    build_cs224n_char_tokenizer(tmp_path / "wiki.txt", tmp_path / "tok")  # 2 + 51 = 53, the checkpoint's vocabulary
    rows = [(flags, check) for is_synth, flags, check in CONVERT_FLAG_ROWS if is_synth == synthesizer]
    if any("--overwrite_output_dir" in flags for flags, _ in rows):
        (tmp_path / "hf").mkdir()
        (tmp_path / "hf" / "config.json").write_text('{"earlier": true}')
    flags = [arg.format(tmp=tmp_path) for flags, _ in rows for arg in flags]
    main(["cs224n-mingpt", str(tmp_path / "model.pt"), "--output_dir", str(tmp_path / "hf"), *flags])
    assert [flags for flags, check in rows if not check(tmp_path / "hf")] == []
