"""Strict config reading: a YAML error or a repeated key names the file and the line."""

import pytest

from xling import study
from xling.base import yamlfile


def _write(tmp_path, text, name="study.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_repeated_key_names_both_lines(tmp_path):
    path = _write(tmp_path, "study: demo\nmodel:\n  dim: 64\n  heads: 4\n  dim: 128\n")
    with pytest.raises(yamlfile.ConfigFileError) as info:
        yamlfile.load(path)
    message = str(info.value)
    assert f"{path}, line 5" in message and "'dim' is repeated (first on line 3)" in message


def test_equal_keys_in_different_mappings_are_fine(tmp_path):
    path = _write(tmp_path, "a: {dim: 1}\nb: {dim: 2}\n")
    assert yamlfile.load(path) == {"a": {"dim": 1}, "b": {"dim": 2}}


def test_a_syntax_error_names_file_line_and_column(tmp_path):
    path = _write(tmp_path, "study: demo\npairs: [en-fr\nseed: 1\n")
    with pytest.raises(yamlfile.ConfigFileError, match=rf"{path}, line 3, column \d+: .*flow"):
        yamlfile.load(path)


def test_a_top_level_that_is_not_a_mapping_is_refused(tmp_path):
    with pytest.raises(yamlfile.ConfigFileError, match="must be a YAML mapping"):
        yamlfile.load(_write(tmp_path, "- en-fr\n"))


def test_later_files_override_key_by_key(tmp_path):
    base = _write(tmp_path, "model: {dim: 64, heads: 4}\nseed: 1\n", "a.yaml")
    override = _write(tmp_path, "model: {dim: 128}\n", "b.yaml")
    assert yamlfile.load_merged([base, override]) == {"model": {"dim": 128, "heads": 4}, "seed": 1}


def test_the_config_checker_names_the_problem_and_exits_nonzero(tmp_path, repo, capsys):
    assert study.main([str(repo / "config/demo.yaml")]) == 0
    assert "valid" in capsys.readouterr().out
    bad = _write(tmp_path, (repo / "config/demo.yaml").read_text() + "seed: 3\n")
    assert study.main([str(bad)]) == 1
    assert "'seed' is repeated" in capsys.readouterr().err
    assert study.main([]) == 2
