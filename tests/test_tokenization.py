"""The byte-level BPE tokenizer: training, offline loading, special tokens, lossless round trip, CLI."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import pytest
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from hf_models.data import detokenize_spm
from hf_models.safety import command_line
from hf_models.textio import DataError, iter_text_files, iter_text_lines
from hf_models.tokenization import (
    SPECIAL_TOKENS,
    chars_per_token,
    config_token_ids,
    load_tokenizer,
    train_bpe_tokenizer,
)

REPO_ROOT = Path(__file__).resolve().parent.parent

TRICKY = [
    "Où est né Józef Piłsudski ? À Zułów, en Lituanie.",
    "d ? amour ? l ? été",
    "question⁇ answer⁇",
    "⁇⁇ double sep ⁇ and <mask> and <s>bos</s>",
    "   leading spaces, runs of     spaces, trailing spaces   ",
    "tabs\tand\u00a0non-breaking space",
    "emoji 🙂 and CJK 東京 and Cyrillic Москва",
    " ",
    "",
]


def _load_cli():
    spec = importlib.util.spec_from_file_location("train_tokenizer", REPO_ROOT / "tokenizer" / "train_tokenizer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_saved_tokenizer_loads_offline_with_special_tokens(tiny_tokenizer_dir: Path) -> None:
    tok = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    assert len(tok) == 600
    # Special tokens get the first ids, in the order of SPECIAL_TOKENS, and are recorded in the files.
    for i, (name, token) in enumerate(SPECIAL_TOKENS.items()):
        assert getattr(tok, f"{name}_token") == token
        assert getattr(tok, f"{name}_token_id") == i
    assert tok.sep_token == "⁇"
    assert config_token_ids(tok) == {
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "sep_token_id": 5,
        "mask_token_id": 4,
    }
    assert tok.clean_up_tokenization_spaces is False
    assert (tiny_tokenizer_dir / "tokenizer.json").is_file()


@pytest.mark.parametrize("text", TRICKY)
def test_round_trip_is_lossless(tiny_tokenizer, text: str) -> None:
    ids = tiny_tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tiny_tokenizer.decode(ids, skip_special_tokens=False) == text
    # Encoding adds no special token by design, so the default call round-trips too.
    assert tiny_tokenizer(text)["input_ids"] == ids
    assert tiny_tokenizer.decode(tiny_tokenizer(text)["input_ids"]) == text


def test_sep_is_one_token_and_bos_is_not_prepended(tiny_tokenizer) -> None:
    ids = tiny_tokenizer("born?⁇ Paris⁇")["input_ids"]
    assert ids.count(tiny_tokenizer.sep_token_id) == 2
    assert tiny_tokenizer.bos_token_id not in ids
    assert tiny_tokenizer.eos_token_id not in ids


def test_chars_per_token(tiny_tokenizer, synthetic_birthplace_dir: Path) -> None:
    lines = list(iter_text_lines(synthetic_birthplace_dir / "wiki.txt"))
    cpt = chars_per_token(tiny_tokenizer, lines)
    n_tokens = sum(len(tiny_tokenizer(line)["input_ids"]) for line in lines)
    assert cpt == pytest.approx(sum(map(len, lines)) / n_tokens)
    assert 1.0 < cpt < 10.0


def test_too_small_vocab_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        train_bpe_tokenizer(["abc"], vocab_size=100, show_progress=False)


def test_load_tokenizer_without_special_tokens(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(["hello world"] * 10, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    PreTrainedTokenizerFast(tokenizer_object=raw).save_pretrained(tmp_path)
    with pytest.raises(ValueError) as err:
        load_tokenizer(tmp_path)
    message = str(err.value)
    assert str(tmp_path) in message
    for name in ("pad_token", "bos_token", "eos_token", "unk_token", "mask_token", "sep_token"):
        assert name in message
    with pytest.raises(FileNotFoundError, match="not found"):
        load_tokenizer(tmp_path / "nope")


def test_iter_text_lines_plain_gz_folder_and_errors(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("un\n\ndeux\r\n", encoding="utf-8")
    with gzip.open(tmp_path / "corpus" / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write("trois é\nquatre")
    (tmp_path / "corpus" / ".hidden").write_text("skipped\n")
    assert list(iter_text_lines(tmp_path / "corpus")) == ["un", "deux", "trois é", "quatre"]
    assert list(iter_text_lines(tmp_path / "corpus", skip_empty=False)) == ["un", "", "deux", "trois é", "quatre"]

    with pytest.raises(FileNotFoundError, match="missing.txt"):
        iter_text_files([tmp_path / "missing.txt"])
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(ValueError, match="no text file"):
        iter_text_files(tmp_path / "empty_dir")

    bad = tmp_path / "bad.txt.gz"
    with gzip.open(bad, "wb") as f:
        f.write(b"ok\nok\nbad \xff byte\n")
    with pytest.raises(DataError, match=r"bad\.txt\.gz:3: invalid UTF-8"):
        list(iter_text_lines(bad))


def test_cli_trains_saves_and_reports_compression(tmp_path: Path, synthetic_birthplace_dir: Path, capsys) -> None:
    cli = _load_cli()
    gz = tmp_path / "wiki.txt.gz"
    with gzip.open(gz, "wb") as f:
        f.write((synthetic_birthplace_dir / "wiki.txt").read_bytes())
    out = tmp_path / "tok"
    args = ["--files", str(gz), str(synthetic_birthplace_dir), "--vocab_size", "700", "--output_dir", str(out)]
    assert cli.main([*args, "--no_progress"]) == 0
    printed = capsys.readouterr().out
    assert "characters per token" in printed
    tok = load_tokenizer(out)
    assert len(tok) == 700 and tok.sep_token == "⁇"


def _bad_input(directory: Path, kind: str) -> Path:
    if kind == "empty":
        (directory / "empty.txt").write_text("")
        return directory / "empty.txt"
    if kind == "invalid-utf8":
        (directory / "bad.txt").write_bytes(b"fine\nbad \xc3\x28\n")
        return directory / "bad.txt"
    return directory / "missing.txt"


@pytest.mark.parametrize(
    "kind, expected",
    [("missing", "missing.txt: no such file"), ("empty", "empty file"), ("invalid-utf8", "bad.txt:2: invalid UTF-8")],
)
def test_cli_bad_inputs_give_one_line_errors(tmp_path: Path, capsys, kind: str, expected: str) -> None:
    path = _bad_input(tmp_path, kind)
    argv = ["--files", str(path), "--vocab_size", "300", "--output_dir", str(tmp_path / "tok"), "--no_progress"]
    assert command_line(_load_cli().main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and expected in err and "Traceback" not in err


@pytest.mark.parametrize("content", ["\ufeff", "\ufeff \n\t\n", "\n\n"], ids=["bom", "bom-and-spaces", "newlines"])
def test_cli_refuses_a_file_without_a_line_of_text_beside_good_ones(tmp_path: Path, capsys, content: str) -> None:
    good, blank = tmp_path / "good.txt", tmp_path / "blank.txt"
    good.write_text("Ann Lee was born in Paris.\n", encoding="utf-8")
    blank.write_text(content, encoding="utf-8")
    argv = ["--files", str(good), str(blank), "--vocab_size", "300", "--output_dir", str(tmp_path / "tok")]
    assert command_line(_load_cli().main, [*argv, "--no_progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: empty file(s), no line of text: ") and "blank.txt" in err and "good.txt" not in err
    assert not (tmp_path / "tok").exists()


def test_round_trip_on_every_real_line(shared_data_dir: Path, tmp_path: Path) -> None:
    """Every line of wiki.txt and every detokenized CLS review survives encode + decode."""
    lines = list(iter_text_lines(shared_data_dir / "birthplace" / "wiki.txt"))
    reviews = [
        detokenize_spm(line)
        for split in ("train", "valid", "test")
        for line in iter_text_lines(shared_data_dir / "cls-books" / f"{split}.review.spm")
    ]
    assert len(lines) == 2937 and len(reviews) == 4000
    texts = lines + reviews
    tok = train_bpe_tokenizer(texts, vocab_size=2000, output_dir=tmp_path, show_progress=False)
    tok = load_tokenizer(tmp_path)  # the saved one, as the recipes use it
    encoded = tok(texts, add_special_tokens=False)["input_ids"]
    decoded = tok.batch_decode(encoded, skip_special_tokens=False)
    mismatches = [i for i, (a, b) in enumerate(zip(texts, decoded, strict=True)) if a != b]
    assert mismatches == []
    assert any("?" in r for r in reviews) and any("é" in r for r in reviews) and any("  " in t for t in lines)
