"""The lab's 50,001 ids over raw text (`altegrad-lab-raw`): a SentencePiece model turned into a fast tokenizer."""

import pytest
from tiny import run_pretraining, run_sentiment
from transformers import AutoTokenizer
from transformers.convert_slow_tokenizer import import_protobuf

from hf_models.data import detokenize_spm
from hf_models.tokenization import resolve_tokenizer
from hf_models.tokenization.courses import (
    VocabularyError,
    build_altegrad_lab_raw_tokenizer,
    main,
    read_fairseq_dictionary,
)

# A tiny SentencePiece BPE model: scores rank the merges (higher first), single characters come last.
MERGED = ["▁l", "iv", "re", "▁liv", "ivre", "▁livre"]
CHARS = ["▁", "l", "i", "v", "r", "e", "s"]


def write_tiny_model(folder, pieces=None, model_type=2):
    model = import_protobuf().ModelProto()
    model.trainer_spec.model_type = model_type
    model.trainer_spec.unk_id = 0
    model.normalizer_spec.add_dummy_prefix = True
    model.normalizer_spec.remove_extra_whitespaces = True
    model.pieces.add(piece="<unk>", score=0.0, type=2)
    for control in ("<s>", "</s>"):
        model.pieces.add(piece=control, score=0.0, type=3)
    for rank, piece in enumerate(pieces or MERGED + CHARS):
        model.pieces.add(piece=piece, score=-float(rank), type=1)
    (folder / "spm.model").write_bytes(model.SerializeToString())
    return folder / "spm.model"


def write_dictionary(folder, pieces):
    (folder / "dict.txt").write_text("".join(f"{piece} 1\n" for piece in pieces), encoding="utf-8")
    return folder / "dict.txt"


def test_raw_text_gets_sentencepiece_pieces_with_the_dictionary_ids(tmp_path):
    # The dictionary's order is not the model's: ids follow dict.txt, segmentation follows the model's scores.
    dict_order = list(reversed(MERGED + CHARS))
    build_altegrad_lab_raw_tokenizer(
        write_dictionary(tmp_path, dict_order), write_tiny_model(tmp_path), output_dir=tmp_path / "tok"
    )
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    assert len(tokenizer) == 4 + len(dict_order)
    assert (tokenizer.bos_token_id, tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (
        0,
        1,
        2,
        3,
    )
    lab_id = {piece: 4 + i for i, piece in enumerate(dict_order)}
    # BPE by score: ▁l, iv, re, then ▁liv (before ivre), then ▁livre; extra spaces are removed.
    ids = tokenizer("  le livre   livres ")["input_ids"]
    assert ids == [0] + [lab_id[p] for p in ["▁l", "e", "▁livre", "▁livre", "s"]]
    # Unknown characters in a row are one <unk>, as SentencePiece fuses them.
    assert tokenizer("xx livre")["input_ids"] == [0, lab_id["▁"], 3, lab_id["▁livre"]]
    assert tokenizer.decode(tokenizer("le livre livres")["input_ids"], skip_special_tokens=True) == "le livre livres"
    assert tokenizer(["livre", "le livre"], padding=True)["input_ids"] == [
        [0, lab_id["▁livre"], 1, 1],
        [0, lab_id["▁l"], lab_id["e"], lab_id["▁livre"]],
    ]


def test_a_unigram_model_gets_the_dictionary_ids_too(tmp_path):
    pieces = ["▁livre", "▁le", "s", *CHARS[:-1]]
    tokenizer = build_altegrad_lab_raw_tokenizer(
        write_dictionary(tmp_path, sorted(pieces)), write_tiny_model(tmp_path, pieces, model_type=1)
    )
    lab_id = {piece: 4 + i for i, piece in enumerate(sorted(pieces))}
    assert tokenizer("le livres")["input_ids"] == [0, lab_id["▁le"], lab_id["▁livre"], lab_id["s"]]


def test_dictionary_and_model_must_hold_the_same_pieces(tmp_path):
    model = write_tiny_model(tmp_path)
    with pytest.raises(VocabularyError, match=r"spm.model: 1 pieces are not in the dictionary \(first: \['s'\]\)"):
        build_altegrad_lab_raw_tokenizer(write_dictionary(tmp_path, MERGED + CHARS[:-1]), model)
    with pytest.raises(VocabularyError, match=r"dict.txt: 1 pieces are not in .*spm.model \(first: \['▁x'\]\)"):
        build_altegrad_lab_raw_tokenizer(write_dictionary(tmp_path, MERGED + CHARS + ["▁x"]), model)
    (tmp_path / "bad.model").write_bytes(b"\xff\x00not a model")
    with pytest.raises(VocabularyError, match="bad.model: not a SentencePiece model"):
        build_altegrad_lab_raw_tokenizer(write_dictionary(tmp_path, MERGED + CHARS), tmp_path / "bad.model")


def test_command_line_and_resolve_tokenizer(tmp_path, capsys):
    books = tmp_path / "books"
    books.mkdir()
    write_dictionary(books, MERGED + CHARS)
    (books / "sentencepiece.french.model").write_bytes(write_tiny_model(tmp_path).read_bytes())
    main(["altegrad-lab-raw", "--data_dir", str(books), "--output_dir", str(tmp_path / "tok")])
    assert "Saved a 17-token tokenizer" in capsys.readouterr().out
    saved = resolve_tokenizer(tmp_path / "tok", "altegrad-lab-raw")
    built = resolve_tokenizer(None, "altegrad-lab-raw", data_dir=books)
    assert saved("livres le")["input_ids"] == built("livres le")["input_ids"] == [0, 9, 16, 4, 15]  # ▁livre s ▁l e


def test_detokenized_reviews_encode_back_to_their_pieces_ids(shared_data_dir, tmp_path):
    """The lab's reviews, joined back into raw text as `load_cls_books` does, give the ids of their `.spm` pieces."""
    books = shared_data_dir / "cls-books"
    build_altegrad_lab_raw_tokenizer(books / "dict.txt", books / "sentencepiece.french.model", tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    assert len(tokenizer) == 50_001  # the altegrad-lab preset's vocab_size
    lab_id = {piece: 4 + i for i, piece in enumerate(read_fairseq_dictionary(books / "dict.txt"))}
    matched = total = 0
    for name in ("train.review.spm", "valid.review.spm"):
        reviews = (books / name).read_text(encoding="utf-8").splitlines()
        encoded = tokenizer([detokenize_spm(review) for review in reviews])["input_ids"]
        for review, ids in zip(reviews, encoded, strict=True):
            matched += ids == [0] + [lab_id.get(piece, 3) for piece in review.split()]
            total += 1
    assert (matched, total) == (2000, 2000)  # every review: 100 %


@pytest.mark.slow
def test_pretrain_on_raw_text_then_finetune_on_raw_reviews(tmp_path, write_alternating_cls_books):
    """`pretrain.py --lab_vocabulary BOOKS` builds the raw-text tokenizer and saves it beside the model;
    `finetune_sentiment.py --lab_raw_text` finetunes that model on the detokenized reviews with it."""
    import json

    import torch

    torch.set_num_threads(1)
    good, bad = "▁livre s", "▁l e ▁livre"
    books = write_alternating_cls_books(tmp_path / "books", (16, 8, 4), positive=good, negative=bad)
    write_dictionary(books, MERGED + CHARS)
    (books / "sentencepiece.french.model").write_bytes(write_tiny_model(tmp_path).read_bytes())
    (tmp_path / "corpus.txt").write_text("le livre livres\n" * 40, encoding="utf-8")
    tiny = ["--config_overrides", "hidden_size=16,num_hidden_layers=1,max_position_embeddings=32"]
    common = ["--per_device_train_batch_size", "4", "--report_to", "none", "--use_cpu", "--seed", "0"]
    run_pretraining(
        ["--train_files", str(tmp_path / "corpus.txt"), "--lab_vocabulary", str(books), "--model_config"]
        + ["altegrad-lab", *tiny, "--block_size", "8", "--max_steps", "2", "--output_dir", str(tmp_path / "lm")]
        + common
    )
    assert json.loads((tmp_path / "lm" / "config.json").read_text())["vocab_size"] == 4 + len(MERGED + CHARS)
    # The review stage: the LM continued from its folder keeps the lab's vocabulary without --lab_vocabulary.
    (tmp_path / "reviews.txt").write_text("le livre livres le livre\n" * 40, encoding="utf-8")
    run_pretraining(
        ["--train_files", str(tmp_path / "reviews.txt"), "--model_name_or_path", str(tmp_path / "lm")]
        + ["--block_size", "8", "--max_steps", "2", "--output_dir", str(tmp_path / "domain"), *common]
    )
    assert (
        AutoTokenizer.from_pretrained(tmp_path / "domain").get_vocab()
        == AutoTokenizer.from_pretrained(tmp_path / "lm").get_vocab()
    )
    with pytest.raises(ValueError, match="--lab_vocabulary has no mask token"):
        run_pretraining(
            ["--train_files", str(tmp_path / "corpus.txt"), "--lab_vocabulary", str(books)]
            + ["--objective", "mlm", "--output_dir", str(tmp_path / "mlm"), *common]
        )
    out = tmp_path / "sentiment"
    run_sentiment(
        ["--data_dir", str(books), "--model_name_or_path", str(tmp_path / "domain"), "--lab_raw_text"]
        + ["--num_train_epochs", "1", "--output_dir", str(out), *common]
    )
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert tokenizer(detokenize_spm(bad))["input_ids"] == [0, 4, 15, 9]  # ▁l e ▁livre: the pieces' ids
    assert len((out / "test_predictions.txt").read_text().splitlines()) == 4
