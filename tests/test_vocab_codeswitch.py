"""Code-switching: the 30% replacement rate, the 15%-of-a-batch cap, weights, dictionary errors."""

from __future__ import annotations

import pytest

from xling.base.errors import InputFileError, SettingsError
from xling.vocab import BilingualDictionary, CodeSwitchSettings, codeswitch_file


def _dictionary(tmp_path, text, name="en-fr.txt", **kwargs) -> BilingualDictionary:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return BilingualDictionary.load(path, **kwargs)


def _switch(tmp_path, lines, dictionary, **settings):
    source = tmp_path / "in.txt"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out.txt"
    options = {"replace_prob": 0.3, "max_changed_share": 0.15, "batch_words": 100, "seed": 1}
    stats = codeswitch_file(source, out, dictionary, **{**options, **settings})
    return stats, out.read_text(encoding="utf-8").split("\n")[:-1]


def test_dictionary_words_are_replaced_about_30_percent_of_the_time(tmp_path) -> None:
    dictionary = _dictionary(tmp_path, "cat chat\n")
    lines = ["cat a b c d e f g h i"] * 2000  # 10% dictionary words: the cap never binds
    stats, out = _switch(tmp_path, lines, dictionary)
    assert len(out) == len(lines)
    replaced = sum(line.startswith("chat ") for line in out)
    assert replaced == stats.replaced
    assert stats.dictionary_words == 2000
    assert 0.26 < replaced / 2000 < 0.34
    assert all(line.split()[1:] == lines[0].split()[1:] for line in out)


def test_at_most_15_percent_of_the_words_of_a_batch_change(tmp_path) -> None:
    dictionary = _dictionary(tmp_path, "cat chat\ndog chien\n")
    lines = ["cat dog cat dog x"] * 400  # 80% dictionary words: 24% would be drawn
    stats, out = _switch(tmp_path, lines, dictionary, batch_words=50)
    assert stats.batches == 40
    assert stats.max_batch_share <= 0.15
    for start in range(0, 400, 10):  # 10 lines = one batch of 50 words
        changed = sum(
            old != new
            for before, after in zip(
                lines[start : start + 10], out[start : start + 10], strict=True
            )
            for old, new in zip(before.split(), after.split(), strict=True)
        )
        assert changed <= 7  # floor(0.15 * 50)
    assert stats.replaced > 0.9 * 7 * 40  # the cap binds in almost every batch
    # The cap keeps a random subset, not the first words of the batch.
    positions = {
        i
        for before, after in zip(lines, out, strict=True)
        for i, (a, b) in enumerate(zip(before.split(), after.split(), strict=True))
        if a != b
    }
    assert positions == {0, 1, 2, 3}


def test_code_switching_is_seeded(tmp_path) -> None:
    dictionary = _dictionary(tmp_path, "cat chat\n")
    lines = ["cat b c"] * 200
    first = _switch(tmp_path, lines, dictionary, seed=3)[1]
    assert _switch(tmp_path, lines, dictionary, seed=3)[1] == first
    assert _switch(tmp_path, lines, dictionary, seed=4)[1] != first


def test_translations_follow_their_weights_and_lowercase_lookup(tmp_path) -> None:
    dictionary = _dictionary(tmp_path, "cat chat 9\ncat minou 1\ncat cat\n")
    assert dictionary.lookup("Cat") is not None  # MUSE entries are lowercase
    assert dictionary.lookup("dog") is None
    lines = ["Cat a a a a a a a a a"] * 3000
    _, out = _switch(tmp_path, lines, dictionary, replace_prob=1.0)
    firsts = [line.split()[0] for line in out]
    assert set(firsts) == {"chat", "minou"}  # the identical pair `cat cat` is ignored
    assert 0.85 < firsts.count("chat") / len(firsts) < 0.95


def test_a_reversed_dictionary_translates_the_other_way(tmp_path) -> None:
    reverse = _dictionary(tmp_path, "cat chat\n", reverse=True)
    assert reverse.lookup("chat")[0] == ("cat",) and reverse.lookup("cat") is None
    settings = CodeSwitchSettings({"en-fr": tmp_path / "en-fr.txt"}, batch_words=10)
    assert settings.dictionary_for("fr", ["en", "fr"]).lookup("chat")[0] == ("cat",)
    assert settings.dictionary_for("en", ["en", "fr"]).lookup("cat")[0] == ("chat",)
    assert settings.dictionary_for("ru", ["ru", "zh"]) is None


def test_dictionary_errors_name_the_file_and_line(tmp_path) -> None:
    with pytest.raises(InputFileError, match=r"bad.txt, line 3: cannot parse 'one'"):
        _dictionary(tmp_path, "a b\n\none\n", name="bad.txt")
    with pytest.raises(InputFileError, match=r"weights.txt, line 1: the weight 'x'"):
        _dictionary(tmp_path, "a b x\n", name="weights.txt")
    with pytest.raises(InputFileError, match=r"same.txt: no dictionary entry"):
        _dictionary(tmp_path, "paris paris\n", name="same.txt")
    with pytest.raises(SettingsError, match=r"replace_prob"):
        CodeSwitchSettings({"en-fr": "x"}, batch_words=10, replace_prob=1.5)
