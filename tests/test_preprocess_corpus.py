"""Seeded split, scatter/gather shards, and Wikipedia extraction on a generated dump."""

from __future__ import annotations

import bz2
import itertools
from collections import Counter
from xml.sax.saxutils import escape

import pytest

from xling.base.errors import EmptyCorpusError, InputFileError
from xling.preprocess import (
    TextPipeline,
    concatenate_files,
    extract_wikipedia,
    shard_line_ranges,
    split_corpus,
    split_into_shards,
    tokenize_file,
)
from xling.preprocess.synthetic import synthetic_sentences


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _split(tmp_path, source, seed, name="split", valid=20, test=30):
    paths = [tmp_path / f"{name}.{part}.txt" for part in ("train", "valid", "test")]
    sizes = split_corpus(source, *paths, valid_size=valid, test_size=test, seed=seed)
    return sizes, [path.read_text(encoding="utf-8").splitlines() for path in paths]


def test_split_sizes_order_and_content(tmp_path) -> None:
    lines = [f"sentence {index}" for index in range(200)]
    source = _write(tmp_path / "corpus.txt", [*lines[:100], "", "   ", *lines[100:]])
    sizes, (train, valid, test) = _split(tmp_path, source, seed=7)
    assert (sizes.train, sizes.valid, sizes.test) == (150, 20, 30)
    assert (len(train), len(valid), len(test)) == (150, 20, 30)
    assert Counter(train + valid + test) == Counter(lines)  # empty lines dropped, nothing lost
    for part in (train, valid, test):  # corpus order kept inside each split
        assert part == sorted(part, key=lines.index)


def test_split_is_seeded(tmp_path) -> None:
    source = _write(tmp_path / "corpus.txt", [f"s {index}" for index in range(300)])
    _, first = _split(tmp_path, source, seed=1, name="a")
    _, again = _split(tmp_path, source, seed=1, name="b")
    _, other = _split(tmp_path, source, seed=2, name="c")
    assert first == again
    assert first[1] != other[1]


def test_split_rejects_empty_and_too_small_corpora(tmp_path) -> None:
    empty = _write(tmp_path / "empty.txt", ["", "  "])
    with pytest.raises(EmptyCorpusError, match=r"empty.txt"):
        _split(tmp_path, empty, seed=0)
    small = _write(tmp_path / "small.txt", [f"s {index}" for index in range(50)])
    with pytest.raises(InputFileError, match=r"50 non-empty lines.*lower the valid and test"):
        _split(tmp_path, small, seed=0)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty.txt", "small.txt"]


def test_shard_ranges_are_balanced_and_cover_everything() -> None:
    for n_lines, n_shards in [(10, 3), (2, 5), (1000, 7), (0, 2)]:
        ranges = shard_line_ranges(n_lines, n_shards)
        sizes = [end - start for start, end in ranges]
        assert len(ranges) == n_shards and sum(sizes) == n_lines
        assert max(sizes) - min(sizes) <= 1
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))


def test_shards_gather_back_to_the_original(tmp_path) -> None:
    data = "a\nb b\n\nc\nd\ne"  # an empty line, and no newline at the end
    source = tmp_path / "corpus.txt"
    source.write_text(data, encoding="utf-8")
    shards = [tmp_path / f"shard{index}.txt" for index in range(4)]
    assert split_into_shards(source, shards) == [1, 2, 1, 2]
    concatenate_files(shards, tmp_path / "gathered.txt")
    assert (tmp_path / "gathered.txt").read_text(encoding="utf-8") == data + "\n"


def test_the_split_does_not_depend_on_the_number_of_shards(tmp_path) -> None:
    source = _write(tmp_path / "raw.txt", synthetic_sentences(240, seed=3, raw=True))
    pipeline = TextPipeline("en", "moses", lowercase=True)
    splits = []
    for n_shards in (1, 3, 5):
        raw_shards = [tmp_path / f"raw.{n_shards}.{i}.txt" for i in range(n_shards)]
        split_into_shards(source, raw_shards)
        tokenized = [path.with_suffix(".tok") for path in raw_shards]
        for raw, out in zip(raw_shards, tokenized, strict=True):
            tokenize_file(raw, out, pipeline)
        splits.append(_split(tmp_path, tokenized, seed=11, name=f"n{n_shards}")[1])
    assert splits[0] == splits[1] == splits[2]
    assert splits[0][0][0] == pipeline(source.read_text(encoding="utf-8").split("\n")[0])


def test_shard_errors_name_the_original_file_and_line(tmp_path) -> None:
    with pytest.raises(EmptyCorpusError):
        split_into_shards(_write(tmp_path / "empty.txt", []), [tmp_path / "s0.txt"])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\nok\n\xff\xfe\n")
    with pytest.raises(InputFileError, match=r"bad.txt, line 3"):
        split_into_shards(bad, [tmp_path / "s0.txt", tmp_path / "s1.txt"])
    assert not (tmp_path / "s1.txt").exists()


def _dump(path, pages):
    """A minimal MediaWiki export (the line layout of real dumps), bz2-compressed."""
    lines = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">',
        "  <siteinfo>",
        "    <sitename>Wikipedia</sitename>",
        "    <dbname>testwiki</dbname>",
        "    <base>https://test.wikipedia.org/wiki/Main_Page</base>",
        "    <generator>MediaWiki</generator>",
        "    <case>first-letter</case>",
        "    <namespaces>",
        '      <namespace key="0" case="first-letter" />',
        '      <namespace key="10" case="first-letter">Template</namespace>',
        "    </namespaces>",
        "  </siteinfo>",
    ]
    for page_id, (title, text) in enumerate(pages, start=1):
        namespace = 10 if title.startswith("Template:") else 0
        lines += [
            "  <page>",
            f"    <title>{escape(title)}</title>",
            f"    <ns>{namespace}</ns>",
            f"    <id>{page_id}</id>",
            "    <revision>",
            f"      <id>{100 + page_id}</id>",
            f'      <text xml:space="preserve">{escape(text)}</text>',
            "    </revision>",
            "  </page>",
        ]
    lines.append("</mediawiki>")
    path.write_bytes(bz2.compress("\n".join(lines).encode("utf-8")))
    return path


def test_extract_wikipedia_keeps_paragraphs_only(tmp_path) -> None:
    dump = _dump(
        tmp_path / "testwiki-pages-articles.xml.bz2",
        [
            ("Zorblat", "'''Zorblat''' is a [[town|small town]].\n\nIt has {{tpl|two}} mills."),
            ("Quimby", "'''Quimby''' follows.\n\n\nA ''second'' paragraph.<ref>cite</ref>"),
            ("Template:Tpl", "{{{1}}}"),  # dumps store titles with a capital first letter
        ],
    )
    out = tmp_path / "wiki.txt"
    assert extract_wikipedia(dump, out) == 4
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines == [
        "Zorblat is a small town.",
        "It has two mills.",
        "Quimby follows.",
        'A "second" paragraph.',  # wikiextractor renders italics as quotes
        "",
    ]
    extract_wikipedia(dump, out, expand_templates=False, processes=2)
    assert out.read_text(encoding="utf-8").split("\n")[1] == "It has mills."


def test_extract_wikipedia_writes_characters_not_html_entities(tmp_path) -> None:
    text = "'''Zorblat''' & Co is AT&amp;T's rival, 3 < 5 > 2."  # &amp;: an entity in wikitext
    dump = _dump(tmp_path / "testwiki-pages-articles.xml.bz2", [("Zorblat", text)])
    out = tmp_path / "wiki.txt"
    assert extract_wikipedia(dump, out) == 1
    assert out.read_text(encoding="utf-8") == "Zorblat & Co is AT&T's rival, 3 < 5 > 2.\n"


def test_extract_wikipedia_writes_half_a_surrogate_pair_as_a_replacement_character(tmp_path):
    text = "'''Zorblat''' &#xD83D; and &#xD83D;&#xDE00; and &#x1F600;."
    dump = _dump(tmp_path / "testwiki-pages-articles.xml.bz2", [("Zorblat", text)])
    out = tmp_path / "wiki.txt"
    assert extract_wikipedia(dump, out) == 1
    line = out.read_text(encoding="utf-8")
    assert line.startswith("Zorblat \ufffd and ") and line.endswith(" and \U0001f600.\n")


def test_extract_wikipedia_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no Wikipedia dump"):
        extract_wikipedia(tmp_path / "missing.xml.bz2", tmp_path / "out.txt")
    no_articles = _dump(tmp_path / "templates-only.xml.bz2", [("Template:x", "y")])
    with pytest.raises(EmptyCorpusError, match=r"templates-only.xml.bz2"):
        extract_wikipedia(no_articles, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("name", ["wiki_en", "enwiki-20190201-pages-articles"])
def test_a_dump_saved_without_its_suffix_is_still_decompressed(tmp_path, name) -> None:
    """A dump saved without its suffix (a url that lacks it, a file renamed by hand): wikiextractor
    picks decompression by suffix, so the compression is read from the file's first bytes."""
    dump = _dump(tmp_path / name, [("Zorblat", "'''Zorblat''' is a town.")])
    out = tmp_path / "wiki.txt"
    assert extract_wikipedia(dump, out) == 1
    assert out.read_text(encoding="utf-8") == "Zorblat is a town.\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "wiki.txt"])
