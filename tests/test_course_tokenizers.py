"""The courses' own vocabularies: CS224N's characters and the lab's SentencePiece pieces with fairseq ids."""

import pytest
from transformers import AutoTokenizer

from hf_models.tokenization.courses import (
    VocabularyError,
    build_altegrad_lab_tokenizer,
    build_cs224n_char_tokenizer,
    read_fairseq_dictionary,
)


def course_stoi(text: str) -> dict[str, int]:
    """CS224N a5's CharCorruptionDataset, verbatim."""
    mask_char, pad_char = "\u2047", "\u25a1"
    chars = list(sorted(list(set(text))))
    assert mask_char not in chars and pad_char not in chars
    chars.insert(0, mask_char)
    chars.insert(0, pad_char)
    return {ch: i for i, ch in enumerate(chars)}


def test_char_tokenizer_is_the_course_vocabulary(tmp_path):
    text = "Khatchig Mouradian. Born in Lebanon\nZoë  Baird was born in Brooklyn?\n"
    (tmp_path / "wiki.txt").write_text(text, encoding="utf-8")
    build_cs224n_char_tokenizer(tmp_path / "wiki.txt", tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    stoi = course_stoi(text)
    assert tokenizer.get_vocab() == stoi and len(tokenizer) == len(stoi)
    assert (tokenizer.pad_token, tokenizer.pad_token_id) == ("\u25a1", 0)
    assert (tokenizer.sep_token_id, tokenizer.mask_token_id) == (1, 1)
    sample = "Zoë  Baird⁇Brooklyn⁇\u25a1\u25a1"
    ids = tokenizer(sample)["input_ids"]
    assert ids == [stoi[ch] for ch in sample]
    assert tokenizer.decode(ids) == sample


def test_char_tokenizer_refuses_a_corpus_with_its_special_characters(tmp_path):
    (tmp_path / "wiki.txt").write_text("a ⁇ b", encoding="utf-8")
    with pytest.raises(VocabularyError, match=r"wiki.txt: the corpus contains the special character '⁇'"):
        build_cs224n_char_tokenizer(tmp_path / "wiki.txt")


def test_char_tokenizer_on_the_real_wiki(shared_data_dir, tmp_path):
    wiki = shared_data_dir / "birthplace" / "wiki.txt"
    text = wiki.read_text(encoding="utf-8")
    build_cs224n_char_tokenizer(wiki, tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    stoi = course_stoi(text)
    assert len(tokenizer) == len(stoi) == 256  # the cs224n-mingpt preset's vocab_size
    ids = tokenizer(text)["input_ids"]
    assert ids == [stoi[ch] for ch in text]  # every character of wiki.txt, newlines included


def write_lab_files(folder):
    (folder / "dict.txt").write_text("▁d 90\nes 80\n▁l 70\n▁livre 3\n, 2\n", encoding="utf-8")
    return folder / "dict.txt"


def test_lab_tokenizer_ids_follow_the_fairseq_dictionary(tmp_path):
    build_altegrad_lab_tokenizer(write_lab_files(tmp_path), output_dir=tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    assert len(tokenizer) == 4 + 5
    assert tokenizer.convert_ids_to_tokens(list(range(9))) == [
        "<s>",
        "<pad>",
        "</s>",
        "<unk>",
        "▁d",
        "es",
        "▁l",
        "▁livre",
        ",",
    ]
    assert (tokenizer.bos_token_id, tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (
        0,
        1,
        2,
        3,
    )
    # The lab's data: pieces separated by spaces; <s> in front; an unknown piece is <unk>.
    assert tokenizer("▁l es ▁livre , ▁zzz")["input_ids"] == [0, 6, 5, 7, 8, 3]
    padded = tokenizer(["▁d", "▁d es"], padding=True)["input_ids"]
    assert padded == [[0, 4, 1], [0, 4, 5]]


def test_bad_dictionary_lines_name_the_file_and_line(tmp_path):
    (tmp_path / "dict.txt").write_text("▁d 9\nes 8\n▁d 7\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match=r"dict.txt:3: duplicate symbol '▁d' \(first on line 1\)"):
        read_fairseq_dictionary(tmp_path / "dict.txt")
    (tmp_path / "dict.txt").write_text("▁d 9\nnocount\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match=r"dict.txt:2: expected 'SYMBOL COUNT'"):
        read_fairseq_dictionary(tmp_path / "dict.txt")
    (tmp_path / "dict.txt").write_text("<unk> 9\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match="special tokens"):
        build_altegrad_lab_tokenizer(tmp_path / "dict.txt")


def test_lab_tokenizer_on_the_real_files(shared_data_dir, tmp_path):
    books = shared_data_dir / "cls-books"
    build_altegrad_lab_tokenizer(books / "dict.txt", books / "sentencepiece.french.model", tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    assert len(tokenizer) == 50_001  # the altegrad-lab preset's vocab_size
    pieces = read_fairseq_dictionary(books / "dict.txt")
    assert tokenizer.convert_ids_to_tokens([4, 5, 50_000]) == [pieces[0], pieces[1], pieces[-1]]
    known = set(pieces)
    for name in ("train.review.spm", "valid.review.spm", "test.review.spm"):
        reviews = (books / name).read_text(encoding="utf-8").splitlines()
        encoded = tokenizer(reviews)["input_ids"]
        for review, ids in zip(reviews, encoded, strict=True):
            expected = [piece if piece in known else "<unk>" for piece in review.split()]
            assert tokenizer.convert_ids_to_tokens(ids) == ["<s>", *expected]  # pieces -> ids -> pieces


def test_dictionary_is_checked_against_the_sentencepiece_model(tmp_path):
    from transformers.convert_slow_tokenizer import import_protobuf

    model = import_protobuf().ModelProto()
    for piece in ["<unk>", "<s>", "</s>", "▁d", "es", "▁l", "▁livre"]:
        model.pieces.add(piece=piece, score=0.0)
    (tmp_path / "spm.model").write_bytes(model.SerializeToString())
    dict_path = write_lab_files(tmp_path)  # also lists ',' which this model lacks
    with pytest.raises(VocabularyError, match=r"dict.txt: 1 pieces are not in .*spm.model \(first: \[','\]\)"):
        build_altegrad_lab_tokenizer(dict_path, tmp_path / "spm.model")
    model.pieces.add(piece=",", score=0.0)
    (tmp_path / "spm.model").write_bytes(model.SerializeToString())
    assert len(build_altegrad_lab_tokenizer(dict_path, tmp_path / "spm.model")) == 9
    (tmp_path / "broken.model").write_bytes(b"\xff\x00not a model")
    with pytest.raises(VocabularyError, match="broken.model: not a SentencePiece model"):
        build_altegrad_lab_tokenizer(dict_path, tmp_path / "broken.model")
