import pytest

from xling.acquire.paraphrases import import_paraphrases
from xling.base.errors import InputFileError


def test_paraphrases_are_copied_when_line_aligned(tmp_path):
    english = tmp_path / "en.txt"
    english.write_text("The cat sleeps .\nA dog runs .\n", encoding="utf-8")
    (tmp_path / "manual" / "parallel").mkdir(parents=True)
    (tmp_path / "manual/parallel/enp.txt").write_text("A cat is sleeping .\nA dog is running .\n")
    out = tmp_path / "out" / "enp.txt"
    assert import_paraphrases(tmp_path / "manual", "enp", english, out) == 2
    assert out.read_text() == "A cat is sleeping .\nA dog is running .\n"


def test_a_missing_file_says_where_and_what(tmp_path):
    english = tmp_path / "en.txt"
    english.write_text("one\ntwo\nthree\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"parallel/enp\.txt: missing.*3 English") as error:
        import_paraphrases(tmp_path, "enp", english, tmp_path / "out.txt")
    assert "back-translated" in str(error.value)


def test_a_wrong_line_count_or_an_empty_line_is_rejected(tmp_path):
    english = tmp_path / "en.txt"
    english.write_text("one\ntwo\n", encoding="utf-8")
    manual = tmp_path / "parallel"
    manual.mkdir()
    (manual / "enp.txt").write_text("only one\n")
    out = tmp_path / "out.txt"
    with pytest.raises(InputFileError, match="1 lines, but"):
        import_paraphrases(tmp_path, "enp", english, out)
    assert not out.exists()
    (manual / "enp.txt").write_text("first\n\n")
    with pytest.raises(InputFileError, match="line 2: empty line"):
        import_paraphrases(tmp_path, "enp", english, out)
