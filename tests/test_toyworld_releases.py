"""The toy world as the paper study's downloads: each file, in its real format and under its real
name, read by the study's own unpacker, importer or extractor (TINY_SPEC, generated once)."""

import bz2
import collections
import hashlib
import lzma
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from xling import study
from xling.acquire.archive import safe_extract
from xling.acquire.commoncrawl import sample_to_size, text_bytes
from xling.acquire.ner_import import import_ner
from xling.acquire.ud import import_ud
from xling.acquire.xnli import import_xnli
from xling.contracts import layout
from xling.contracts.muse import read_muse
from xling.contracts.ner import read_ner
from xling.preprocess import extract_wikipedia
from xling.study import keys
from xling.toyworld import TINY_SPEC, generate
from xling.toyworld.api import DATASET, dictionary_languages
from xling.toyworld.releases import (
    SECTION_HEADING,
    UD_TGZ,
    cc100_file,
    muse_dictionary,
    wikipedia_dump,
    wikipedia_sha1sums,
    write_releases,
)

REPO = Path(__file__).resolve().parents[1]
LANGS = TINY_SPEC["languages"]
OTHERS = [lang for lang in LANGS if lang != "en"]
DATE = "20261101"
SPLITS = ("train", "dev", "test")
MARKUP = ("[[", "]]", "''", "{{", "}}", "==", "<", "REDIRECT", "Marks articles")


@pytest.fixture(scope="module")
def paper_config():
    return study.load(REPO / "config/config.yaml", REPO / "config/schema.yaml")


@pytest.fixture(scope="module")
def treebanks(paper_config) -> dict[str, str]:
    return paper_config["data"]["ud"]["ud23"]["treebanks"]


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("toy")
    generate(TINY_SPEC, directory)
    return directory


@pytest.fixture(scope="module")
def releases(toy, treebanks, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("releases")
    return write_releases(toy, out, languages=LANGS, ud_treebanks=treebanks, date=DATE)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _joiner(lang: str) -> str:
    return TINY_SPEC["profiles"][lang]["separator"]


def test_writes_the_real_file_names(releases):
    out = releases[UD_TGZ].parent
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert on_disk == sorted(releases)
    for name in (
        "zhwiki/20261101/zhwiki-20261101-pages-articles.xml.bz2",
        "zhwiki/20261101/zhwiki-20261101-sha1sums.txt",
        "cc-100/zh-Hans.txt.xz",
        "cc-100/en.txt.xz",
        "XNLI/XNLI-1.0.zip",
        "XNLI/XNLI-MT-1.0.zip",
        "ud-treebanks-v2.3.tgz",
        "dictionaries/en-fr.0-5000.txt",
        "dictionaries/en-fr.5000-6500.txt",
        "manual/wikiann/ru/dev",
        "manual/conll2003/eng.testb",
        "manual/levow2006/train.txt",
    ):
        assert name in releases


def test_same_toy_world_same_bytes(toy, treebanks, releases, tmp_path):
    again = write_releases(toy, tmp_path, languages=LANGS, ud_treebanks=treebanks, date=DATE)
    assert list(again) == list(releases)
    for name, path in releases.items():
        assert again[name].read_bytes() == path.read_bytes(), name


@pytest.mark.parametrize("lang", LANGS)
def test_wikipedia_dump_extracts_to_the_corpus_sentences(toy, releases, tmp_path, lang):
    dump = releases[wikipedia_dump(lang, DATE)]
    xml = bz2.decompress(dump.read_bytes()).decode("utf-8")
    assert all(mark in xml for mark in ("'''", "[[", "{{", "== ", "#REDIRECT", "noinclude"))
    root = ET.fromstring(xml)
    export = "{http://www.mediawiki.org/xml/export-0.10/}"
    assert root.tag == f"{export}mediawiki"
    assert root.find(f"{export}siteinfo/{export}namespaces") is not None
    pages = root.findall(f"{export}page")
    assert sum(page.find(f"{export}redirect") is not None for page in pages) == 1

    extract_wikipedia(dump, tmp_path / "text.txt")
    extracted = _lines(tmp_path / "text.txt")
    paragraphs = [line for line in extracted if line != f"{SECTION_HEADING}."]
    assert len(paragraphs) < len(extracted)  # the headings' text is kept, as wikiextractor does
    sentences = _lines(toy / layout.corpus("wiki", lang))
    assert _joiner(lang).join(paragraphs) == _joiner(lang).join(sentences)
    assert len(paragraphs) < len(sentences) / 2  # paragraphs of several sentences
    text = "\n".join(extracted)
    assert not [mark for mark in MARKUP if mark in text]


def test_sha1sums_list_the_dump_as_wikimedia_does(releases):
    for lang in LANGS:
        lines = _lines(releases[wikipedia_sha1sums(lang, DATE)])
        sums = dict(
            reversed(re.fullmatch(r"([0-9a-f]{40})  (\S+)", line).groups()) for line in lines
        )
        dump = releases[wikipedia_dump(lang, DATE)]
        assert sums[dump.name] == hashlib.sha1(dump.read_bytes()).hexdigest()
        assert len(sums) > 1


@pytest.mark.parametrize("lang", LANGS)
def test_cc100_file_samples_to_size(toy, releases, tmp_path, lang):
    source = releases[cc100_file(lang)]
    text = lzma.decompress(source.read_bytes()).decode("utf-8")
    documents = text.split("\n\n")
    assert documents[-1] == "" and len(documents) > 10  # an empty line after each document
    paragraphs = [line for line in text.splitlines() if line]
    sentences = _lines(toy / layout.corpus("cc", lang))
    assert _joiner(lang).join(paragraphs) == _joiner(lang).join(sentences)

    total = text_bytes(source)
    assert total == sum(len(p.encode("utf-8")) + 1 for p in paragraphs)
    assert sample_to_size(source, total, tmp_path / "all.txt", seed=1) == len(paragraphs)
    assert _lines(tmp_path / "all.txt") == paragraphs
    kept = sample_to_size(source, total // 2, tmp_path / "half.txt", seed=1)
    assert 0 < kept < len(paragraphs)
    assert set(_lines(tmp_path / "half.txt")) <= set(paragraphs)


def test_xnli_zips_import_as_the_toy_world_files(toy, releases, tmp_path):
    xnli = safe_extract(releases["XNLI/XNLI-1.0.zip"], tmp_path / "xnli")
    xnli_mt = safe_extract(releases["XNLI/XNLI-MT-1.0.zip"], tmp_path / "xnli_mt")
    outputs = {split: tmp_path / f"{split}.tsv" for split in SPLITS}
    import_xnli(xnli, xnli_mt, outputs["dev"], outputs["test"], outputs["train"])
    for split in ("dev", "test"):
        assert outputs[split].read_bytes() == (toy / layout.xnli(split)).read_bytes()
    assert outputs["train"].read_bytes() == (toy / layout.xnli_train()).read_bytes()


def test_ud_release_imports_each_treebank(toy, releases, paper_config, treebanks, tmp_path):
    release = safe_extract(releases[UD_TGZ], tmp_path / "unpacked" / "ud23")
    for lang in treebanks:
        source = keys.ud_source(paper_config, "ud23", lang)
        outputs = {split: tmp_path / lang / f"{split}.conllu" for split in source["splits"]}
        counts = import_ud(source, outputs, release)
        assert counts == {split: TINY_SPEC["sizes"]["ud"][split] for split in SPLITS}
        for split, path in outputs.items():
            assert path.read_bytes() == (toy / layout.ud(DATASET, lang, split)).read_bytes()


def test_muse_dictionaries_read_as_the_toy_world_ones(toy, releases):
    translated = dictionary_languages(TINY_SPEC)
    assert translated and set(translated) < set(OTHERS)  # en' writes English's words: none
    untranslated = [lang for lang in OTHERS if lang not in translated]
    assert not any(muse_dictionary(lang, "train") in releases for lang in untranslated)
    for lang in translated:
        for split in ("train", "test"):
            expected = read_muse(toy / layout.muse("en", lang, split))
            assert read_muse(releases[muse_dictionary(lang, split)]) == expected


@pytest.fixture(scope="module")
def manual_dir(releases) -> Path:
    return releases["manual/wikiann/en/train"].parents[2]


@pytest.mark.parametrize(("dataset", "lang"), [("wikiann", "ru"), ("wikiann", "zh"),
                                               ("conll2003", "en")])  # fmt: skip
def test_ner_files_import_as_the_toy_world_sentences(toy, manual_dir, tmp_path, dataset, lang):
    outputs = {split: tmp_path / f"{split}.txt" for split in SPLITS}
    counts = import_ner(dataset, lang, manual_dir, outputs)
    assert counts == TINY_SPEC["sizes"]["ner"]
    for split, path in outputs.items():  # IOB1 back to IOB2 gives the same tags
        assert path.read_bytes() == (toy / layout.ner(DATASET, lang, split)).read_bytes()


def test_conll2003_tags_are_iob1(manual_dir):
    """An entity starts with I-; B- only right after an entity of the same type."""
    starts = collections.Counter()
    previous = "O"
    for line in _lines(manual_dir / "conll2003/eng.train"):
        tag = line.split()[-1] if line else "O"
        if tag.startswith("B-"):
            assert previous[2:] == tag[2:], line
        if tag != "O" and previous[2:] != tag[2:]:
            starts[tag] += 1
        previous = tag
    assert starts.keys() == {"I-PER", "I-LOC", "I-ORG"}


def _entities(sentences) -> collections.Counter:
    return collections.Counter(tag[2:] for s in sentences for tag in s.tags if tag[:2] == "B-")


def test_levow2006_characters_import_realigned_to_words(toy, manual_dir, tmp_path):
    outputs = {split: tmp_path / f"{split}.txt" for split in SPLITS}
    counts = import_ner("levow2006", "zh", manual_dir, outputs)
    imported = {split: read_ner(path, "zh") for split, path in outputs.items()}
    expected = {split: read_ner(toy / layout.ner(DATASET, "zh", split), "zh") for split in SPLITS}
    # The release has no dev set: the importer takes dev from the end of train.
    assert counts["train"] + counts["dev"] == len(expected["train"]) > counts["dev"] > 0
    assert counts["test"] == len(expected["test"])
    for got, want in ((imported["train"] + imported["dev"], expected["train"]),
                      (imported["test"], expected["test"])):  # fmt: skip
        assert ["".join(s.words) for s in got] == ["".join(s.words) for s in want]
        assert _entities(got) == _entities(want)
