"""Text pipelines: segmenters, lowercasing, accent removal, serialization, tokenize_file."""

from __future__ import annotations

import json
import pickle
import unicodedata

import pytest
import regex
from sacremoses import MosesPunctNormalizer

from xling.base.errors import InputFileError, SettingsError
from xling.preprocess import (
    TextPipeline,
    available_segmenters,
    pipeline_for_language,
    read_user_dictionary,
    register_segmenter,
    remove_accents,
    tokenize_file,
)
from xling.preprocess.segmenters import MosesPunctuationNormalizer
from xling.preprocess.synthetic import synthetic_sentences


def test_moses_splits_punctuation_without_escaping() -> None:
    pipeline = TextPipeline("en", "moses")
    assert pipeline('He said "yes" & left (quickly).') == 'He said " yes " & left ( quickly ) .'
    assert pipeline("Mr. Smith's dog") == "Mr. Smith 's dog"


def test_moses_follows_the_language_rules() -> None:
    french = TextPipeline("fr", "moses")
    assert french("L'homme est là.") == "L' homme est là ."
    # The toy world's `enp` is English: rules_lang gives it the English apostrophe rules.
    assert TextPipeline("enp", "moses", rules_lang="en")("Smith's") == "Smith 's"
    assert TextPipeline("enp", "moses")("Smith's") != "Smith 's"


def test_moses_normalizes_unicode_punctuation() -> None:
    assert TextPipeline("fr", "moses")("« Oui » … c’est") == '" Oui " ... c\' est'


@pytest.mark.parametrize("lang", ["en", "fr", "de", "ru", "zh"])
def test_fast_punctuation_normalizer_matches_sacremoses_then_moses_non_printing(lang) -> None:
    sacremoses = MosesPunctNormalizer(lang=lang, pre_replace_unicode_punct=True)

    def reference(text: str) -> str:  # remove-non-printing-char.perl: s/\p{C}/ /g
        return regex.sub(r"\p{C}", " ", sacremoses.normalize(text)).strip()

    fast = MosesPunctuationNormalizer(lang)
    texts = [
        "Plain text , with spaces before ; punctuation : ok ?",
        "你好，世界。我们在“北京”！（１２３）【注】～…％",
        "« Guillemets » — “quotes” ‘single’ „low“ 1,000.5 10 %",
        "ctrl\x07char\u200bzero\ue000private\u0378unassigned\u00a0nbsp\u2028sep",
        "   padded   ",
        "",
        *synthetic_sentences(50, seed=2, raw=True),
    ]
    assert [fast(text) for text in texts] == [reference(text) for text in texts]


def test_jieba_segments_chinese_and_normalizes_punctuation() -> None:
    tokens = TextPipeline("zh", "jieba").tokenize("我们在北京工作，你好！New York 很大。")
    assert "北京" in tokens and "," in tokens and "!" in tokens
    assert all(token and not any(char.isspace() for char in token) for token in tokens)
    assert "".join(tokens) == "我们在北京工作,你好!NewYork很大."


def test_lowercase_is_applied_after_segmentation() -> None:
    pipeline = TextPipeline("en", "moses", lowercase=True)
    # Moses sees "Mr." (a nonbreaking prefix) before lowercasing turns it into "mr.".
    assert pipeline("Mr. Smith arrived.") == "mr. smith arrived ."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("café naïve Ä", "cafe naive A"),
        ("мой ёлка ЙЁ", "мой ёлка ЙЁ"),  # й and ё are letters, kept
        ("за\u0301мок", "замок"),  # a Cyrillic stress mark is an accent
        ("हिन्दी がぎ", "हिन्दी がぎ"),  # virama and dakuten are not accents
        ("й\u0301", "й"),
    ],
)
def test_remove_accents_keeps_letters_written_with_marks(text: str, expected: str) -> None:
    assert remove_accents(text) == expected


def test_xlm_accent_removal_would_change_russian_words() -> None:
    # Why the narrower rule: XLM's drop-every-Mn turns "мой" (my) into "мои" (my, plural).
    xlm = "".join(c for c in unicodedata.normalize("NFD", "мой") if unicodedata.category(c) != "Mn")
    assert xlm == "мои"
    assert TextPipeline("ru", "moses", lowercase=True, remove_accents=True)("Мой") == "мой"


def test_a_token_that_was_only_a_mark_disappears() -> None:
    assert TextPipeline("en", "moses", remove_accents=True).tokenize("a \u0301 b") == ["a", "b"]


def test_pipeline_round_trips_through_a_dict() -> None:
    pipeline = TextPipeline("ru", "moses", lowercase=True, remove_accents=True, rules_lang="ru")
    assert TextPipeline.from_dict(pipeline.to_dict()) == pipeline
    with pytest.raises(SettingsError, match=r"unknown text pipeline setting"):
        TextPipeline.from_dict({**pipeline.to_dict(), "casing": "lower"})


def test_settings_errors_name_the_problem() -> None:
    with pytest.raises(SettingsError, match=r"no segmenter configured for language 'ru'"):
        pipeline_for_language("ru", segmenters={"en": "moses"})
    with pytest.raises(SettingsError, match=r"unknown segmenter 'stanford'"):
        pipeline_for_language("zh", segmenters={"zh": "stanford"})
    pipeline = pipeline_for_language("zh", segmenters={"zh": "jieba"}, lowercase=True)
    assert pipeline == TextPipeline("zh", "jieba", lowercase=True)


def test_a_registered_segmenter_can_be_used() -> None:
    name = "test-characters"
    if name not in available_segmenters():

        @register_segmenter(name)
        def _characters(lang: str, user_words):
            return lambda text: [char for char in text if not char.isspace()]

    assert TextPipeline("th", name)("ab c") == "a b c"
    with pytest.raises(ValueError, match=r"already registered"):
        register_segmenter(name)(lambda lang, user_words: list)
    # It did not say it takes user words: a dictionary is refused, not ignored.
    with pytest.raises(SettingsError, match=r"takes no user dictionary"):
        TextPipeline("th", name, user_words=(("ab", None),))


def test_tokenize_file_keeps_lines_aligned(tmp_path) -> None:
    source = tmp_path / "raw.txt"
    source.write_text('Hello, world!\n\n"\u0301"\nLast line without newline', encoding="utf-8")
    out = tmp_path / "out" / "tok.txt"
    pipeline = TextPipeline("en", "moses", remove_accents=True)
    assert tokenize_file(source, out, pipeline) == 4
    assert out.read_text(encoding="utf-8").split("\n") == [
        "Hello , world !",
        "",
        '" "',
        "Last line without newline",
        "",
    ]


def test_tokenize_file_names_the_undecodable_line_and_leaves_nothing(tmp_path) -> None:
    source = tmp_path / "raw.txt"
    source.write_bytes(b"fine\nstill fine\n" + b"caf\xe9 latin-1\n")
    out = tmp_path / "tok.txt"
    with pytest.raises(InputFileError) as error:
        tokenize_file(source, out, TextPipeline("en", "moses"))
    assert "raw.txt, line 3" in str(error.value) and "UTF-8" in str(error.value)
    assert list(tmp_path.iterdir()) == [source]


# Characters no jieba dictionary joins: without user words jieba cuts them one by one.
UNKNOWN_WORDS = ("瑰谻", "鮪臁鎴", "瘻蔾")
UNKNOWN_SENTENCE = "黠秿瑰谻楿鮪臁鎴麒瘻蔾。"


def test_jieba_cuts_user_words_whole(tmp_path) -> None:
    plain = TextPipeline("zh", "jieba")
    assert not set(UNKNOWN_WORDS) & set(plain.tokenize(UNKNOWN_SENTENCE))
    dictionary = tmp_path / "zh.dict.txt"
    dictionary.write_text("瑰谻\n鮪臁鎴 40 n\n\n瘻蔾 3\n", encoding="utf-8")
    assert read_user_dictionary(dictionary) == (("瑰谻", None), ("鮪臁鎴", 40), ("瘻蔾", 3))
    pipeline = pipeline_for_language(
        "zh", segmenters={"zh": "jieba"}, user_dictionaries={"zh": str(dictionary)}
    )
    tokens = pipeline.tokenize(UNKNOWN_SENTENCE)
    assert set(UNKNOWN_WORDS) <= set(tokens)
    assert "".join(tokens) == UNKNOWN_SENTENCE.replace("。", ".")  # nothing lost or added


def test_user_words_travel_in_the_dict_not_the_path(tmp_path) -> None:
    dictionary = tmp_path / "zh.dict.txt"
    dictionary.write_text("瑰谻\n鮪臁鎴 40\n", encoding="utf-8")
    settings = {"lang": "zh", "segmenter": "jieba", "user_dictionary": str(dictionary)}
    pipeline = TextPipeline.from_dict(settings)
    stored = json.loads(json.dumps(pipeline.to_dict()))
    assert "user_dictionary" not in stored
    assert stored["user_words"] == [["瑰谻", None], ["鮪臁鎴", 40]]
    dictionary.unlink()  # the model no longer needs the file
    rebuilt = TextPipeline.from_dict(stored)
    assert rebuilt == pipeline
    assert rebuilt.tokenize(UNKNOWN_SENTENCE) == pipeline.tokenize(UNKNOWN_SENTENCE)
    assert "2 user words" in repr(rebuilt)
    copy = pickle.loads(pickle.dumps(rebuilt))  # after its segmenter was built and cached
    assert copy == rebuilt and copy.tokenize(UNKNOWN_SENTENCE) == rebuilt.tokenize(UNKNOWN_SENTENCE)


def test_moses_refuses_user_words() -> None:
    with pytest.raises(SettingsError, match=r"'fr'.*moses segmenter takes no user dictionary"):
        TextPipeline("fr", "moses", user_words=(("aujourd'hui", None),))


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        ("瑰谻\n鮪臁鎴 many\n", 2, "positive whole frequency"),
        ("瑰谻 0\n", 1, "positive whole frequency"),
        ("瑰谻 1 n extra\n", 1, "positive whole frequency"),
    ],
)
def test_a_malformed_user_dictionary_names_file_and_line(tmp_path, content, line, reason) -> None:
    dictionary = tmp_path / "zh.dict.txt"
    dictionary.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError, match=rf"zh.dict.txt, line {line}: expected.*{reason}"):
        read_user_dictionary(dictionary)


def test_an_empty_or_missing_user_dictionary_is_refused(tmp_path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"empty.txt: the user dictionary has no word"):
        read_user_dictionary(empty)
    with pytest.raises(InputFileError, match=r"missing.txt: the user dictionary does not exist"):
        read_user_dictionary(tmp_path / "missing.txt")


def test_non_printing_characters_become_spaces_as_in_moses() -> None:
    """remove-non-printing-char.perl: s/\\p{C}/ /g (sacremoses deletes them, gluing words)."""
    pipeline = TextPipeline("en", "moses")
    assert pipeline.tokenize("foo\tbar zero\u200bwidth") == ["foo", "bar", "zero", "width"]
