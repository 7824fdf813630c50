"""SubwordTokenizer: encoding words, lines and raw text; language ids; save/load; errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xling.base.errors import InputFileError
from xling.preprocess import TextPipeline
from xling.vocab import SPECIAL_TOKENS, LanguageSetup, SubwordTokenizer

MERGES = [("a", "b"), ("ab", "c</w>"), ("д", "а</w>")]


def _tokenizer(prefixed: bool = False) -> SubwordTokenizer:
    en, ru = ("en:", "ru:") if prefixed else ("", "")
    en_pieces = ["abc", "ab@@", "x", "c", "a@@", "(", ")"]
    ru_pieces = ["да", "д@@", "а"]
    vocab = [*SPECIAL_TOKENS, *(en + p for p in en_pieces), *(ru + p for p in ru_pieces)]
    return SubwordTokenizer(
        scheme="per_language_prefixed" if prefixed else "joint",
        vocab=vocab,
        languages={
            "en": LanguageSetup(TextPipeline("en", "moses", lowercase=True), "joint", en),
            "ru": LanguageSetup(TextPipeline("ru", "moses", remove_accents=True), "joint", ru),
        },
        codes={"joint": MERGES},
        language_token_ranges={"en": [(5, 12)], "ru": [(12, 15)]},
    )


def test_special_ids_and_languages() -> None:
    tokenizer = _tokenizer()
    specials = (tokenizer.pad_id, tokenizer.unk_id, tokenizer.bos_id, tokenizer.eos_id)
    assert (*specials, tokenizer.mask_id) == (0, 1, 2, 3, 4)
    assert [tokenizer.vocab[i] for i in specials] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert tokenizer.vocab_size == 15 and tokenizer.languages == ("en", "ru")


def test_encode_tokenized_uses_bpe_and_unk_for_unknown_pieces() -> None:
    tokenizer = _tokenizer()
    index = tokenizer.token_to_id
    assert tokenizer.encode_tokenized("abc abx", "en") == [index("abc"), index("ab@@"), index("x")]
    assert tokenizer.encode_tokenized("zq", "en") == [1, 1]  # `z@@`, `q` are not in vocab
    assert tokenizer.encode_tokenized("да", "ru") == [index("да")]
    assert tokenizer.encode_tokenized("", "en") == []


def test_encode_words_applies_the_pipeline_to_each_word() -> None:
    tokenizer = _tokenizer()
    index = tokenizer.token_to_id
    words = ["ABC", "(abc)", "  ", "x"]
    assert tokenizer.encode_words(words, "en") == [
        [index("abc")],  # lowercased by the en pipeline
        [index("("), index("abc"), index(")")],  # split by Moses: every token's ids
        [tokenizer.unk_id],  # no subword at all
        [index("x")],
    ]
    assert tokenizer.encode_words(["\u0301"], "ru") == [[tokenizer.unk_id]]  # accent removed


def test_encode_line_runs_the_text_pipeline() -> None:
    tokenizer = _tokenizer()
    assert tokenizer.encode_line("(ABC)", "en") == tokenizer.encode_tokenized("( abc )", "en")


def test_prefixed_tokens_keep_languages_apart() -> None:
    tokenizer = _tokenizer(prefixed=True)
    assert tokenizer.encode_tokenized("abc", "en") == [tokenizer.token_to_id("en:abc")]
    assert tokenizer.encode_tokenized("abc", "ru") == [tokenizer.unk_id]
    assert tokenizer.decode(tokenizer.encode_tokenized("abx да", "en")) == "abx <unk>"
    assert tokenizer.decode([*tokenizer.encode_tokenized("да", "ru"), 3]) == "да </s>"


def test_language_token_ids() -> None:
    tokenizer = _tokenizer()
    assert tokenizer.language_token_ids("ru").tolist() == [12, 13, 14]
    with_special = tokenizer.language_token_ids("ru", include_special=True)
    assert with_special.tolist() == [0, 1, 2, 3, 4, 12, 13, 14]
    assert np.issubdtype(with_special.dtype, np.integer)
    assert tokenizer.language_token_ranges("en") == [(5, 12)]
    with pytest.raises(KeyError, match=r"'zh' is not in this tokenizer"):
        tokenizer.language_token_ids("zh")


def test_save_and_load_round_trip(tmp_path) -> None:
    tokenizer = _tokenizer(prefixed=True)
    tokenizer.save(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "joint.codes",
        "tokenizer.json",
        "vocab.txt",
    ]
    manifest = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert manifest["scheme"] == "per_language_prefixed"
    assert manifest["special_tokens"] == list(SPECIAL_TOKENS)
    assert manifest["languages"]["ru"]["text"]["remove_accents"] is True
    loaded = SubwordTokenizer.load(tmp_path)
    assert loaded.vocab == tokenizer.vocab and loaded.languages == tokenizer.languages
    assert loaded.pipeline("en") == tokenizer.pipeline("en")
    for lang, text in [("en", "(ABC) abx"), ("ru", "Да, да́!")]:
        assert loaded.encode_line(text, lang) == tokenizer.encode_line(text, lang)
        assert loaded.language_token_ranges(lang) == tokenizer.language_token_ranges(lang)


def test_load_errors_name_the_file(tmp_path) -> None:
    with pytest.raises(InputFileError, match=r"tokenizer.json: cannot read the tokenizer manifest"):
        SubwordTokenizer.load(tmp_path)
    _tokenizer().save(tmp_path)
    with open(tmp_path / "vocab.txt", "a", encoding="utf-8") as vocab:
        vocab.write("extra\n")
    with pytest.raises(InputFileError, match=r"vocab.txt: has 16 tokens, the manifest says 15"):
        SubwordTokenizer.load(tmp_path)


def test_the_vocabulary_must_start_with_the_special_tokens() -> None:
    with pytest.raises(ValueError, match=r"must start with"):
        SubwordTokenizer(
            scheme="joint",
            vocab=["<unk>", "<pad>", "<s>", "</s>", "<mask>"],
            languages={},
            codes={},
            language_token_ranges={},
        )
