"""The toy world as the downloads of Wu et al. section 5 and Muller et al.: each file, in its real
format and under the path of its real URL, read by the study's own importer or reader (TINY_SPEC,
generated once)."""

import collections
import re
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from xling import study
from xling.acquire.archive import safe_extract
from xling.acquire.ud import import_ud
from xling.analysis.fasttext_vectors import keep_first_words, read_vec
from xling.analysis.sentences import read_tatoeba
from xling.contracts import layout
from xling.preprocess import TextPipeline, tokenize_file
from xling.study import keys
from xling.toyworld import TINY_SPEC, generate
from xling.toyworld.api import DATASET
from xling.toyworld.releases_analysis import (
    FASTTEXT_DIM,
    FASTTEXT_LINE_END,
    FASTTEXT_MIN_COUNT,
    UD24_RELEASE,
    UD24_TGZ,
    fasttext_file,
    gold_words,
    tatoeba_file,
    tokens,
    write_analysis_releases,
)

REPO = Path(__file__).resolve().parents[1]
# The toy world's languages that have real releases: not en' (Wu 5.2's paraphrased English).
LANGS = [lang for lang in TINY_SPEC["languages"] if lang != "enp"]
SPLITS = ("train", "dev", "test")


@pytest.fixture(scope="module")
def paper_config():
    return study.load(REPO / "config/config.yaml", REPO / "config/schema.yaml")


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("toy")
    generate(TINY_SPEC, directory)
    return directory


def _write(toy, paper_config, out):
    data = paper_config["data"]
    return write_analysis_releases(toy, out, languages=LANGS, ud_datasets=data["ud"],
                                   tatoeba_codes=data["tatoeba"]["codes"])  # fmt: skip


@pytest.fixture(scope="module")
def releases(toy, paper_config, tmp_path_factory) -> dict[str, Path]:
    return _write(toy, paper_config, tmp_path_factory.mktemp("releases"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _url_path(template: str, **fields) -> str:
    return urlsplit(template.format(**fields)).path.lstrip("/")


def test_writes_the_paths_of_the_real_urls(releases, paper_config):
    out = releases[UD24_TGZ].parent
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert on_disk == sorted(releases)
    data = paper_config["data"]
    for lang, code in data["tatoeba"]["codes"].items():
        for side in (code, "eng"):
            assert tatoeba_file(code, side) == _url_path(data["tatoeba"]["url"], code=code,
                                                         side=side)  # fmt: skip
            assert tatoeba_file(code, side) in releases, lang
    for lang in LANGS:
        assert fasttext_file(lang) == _url_path(data["fasttext"]["url"], lang=lang)
        assert fasttext_file(lang) in releases
    assert _url_path(data["downloads"]["ud24"]["url"]).endswith(f"/{UD24_TGZ}")
    for name in ("facebookresearch/LASER/main/data/tatoeba/v1/tatoeba.cmn-eng.cmn",
                 "facebookresearch/LASER/main/data/tatoeba/v1/tatoeba.cmn-eng.eng",
                 "fasttext/vectors-wiki/wiki.zh.vec", "ud-treebanks-v2.4.tgz"):  # fmt: skip
        assert name in releases
    assert not [name for name in releases if "enp" in name]


def test_same_toy_world_same_bytes(toy, paper_config, releases, tmp_path):
    again = _write(toy, paper_config, tmp_path)
    assert list(again) == list(releases)
    for name, path in releases.items():
        assert again[name].read_bytes() == path.read_bytes(), name


@pytest.mark.parametrize("lang", ["zh", "ru"])
def test_tatoeba_sides_tokenize_line_aligned_as_the_toy_world_pair(
    toy, releases, paper_config, tmp_path, lang
):
    """The download is the study's file (download_tatoeba); tokenize_tatoeba's pipeline keeps a
    line a sentence and read_tatoeba reads the tokenized sides."""
    code = paper_config["data"]["tatoeba"]["codes"][lang]
    read = {}
    for side, file_side in ((lang, code), ("en", "eng")):
        downloaded = releases[tatoeba_file(code, file_side)]
        assert downloaded.read_bytes() == (toy / layout.tatoeba("en", lang, side)).read_bytes()
        settings = {"lang": side, "segmenter": paper_config["languages"][side]["segmenter"],
                    "lowercase": False, "remove_accents": False}  # fmt: skip
        tokenized = tmp_path / f"{side}.txt"
        tokenize_file(downloaded, tokenized, TextPipeline.from_dict(settings))
        read[side] = read_tatoeba(tokenized)
    assert len(read["en"]) == len(read[lang]) == TINY_SPEC["sizes"]["tatoeba"]
    assert all(read["en"]) and all(read[lang])
    assert len(set(read["en"])) == len(read["en"])  # distinct: retrieval is well defined


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fasttext_vectors_read_as_fasttext_writes_them(toy, releases, tmp_path, lang):
    path = releases[fasttext_file(lang)]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    count, dim = map(int, lines[0].split())
    assert dim == FASTTEXT_DIM and count == len(lines) - 1
    assert all(line.endswith(" \n") for line in lines[1:])  # fastText's space after each value
    assert all(len(value.lstrip("-").replace(".", "").lstrip("0").split("e")[0]) <= 5
               for line in lines[1:20] for value in line.split()[1:])  # fmt: skip
    words, matrix = read_vec(path, limit=None)
    assert len(words) == count == len(set(words)) and matrix.shape == (count, dim)
    assert np.isfinite(matrix).all() and matrix.std() > 0

    # the corpus's words, most frequent first, the line end counted as fastText does
    sentences = _lines(toy / layout.corpus("wiki", lang))
    counts = collections.Counter({FASTTEXT_LINE_END: len(sentences)})
    lexicon = None if lang != "zh" else gold_words(toy, lang)
    for sentence in sentences:
        counts.update(tokens(sentence, lexicon))
    assert [counts[word] for word in words] == sorted((counts[w] for w in words), reverse=True)
    assert set(words) == {word for word, n in counts.items() if n >= FASTTEXT_MIN_COUNT}
    assert FASTTEXT_LINE_END in words[:5]
    if lang == "zh":  # segmented: words of the toy lexicon, rarely a stray character
        assert sum(word in lexicon for word in words) > 0.9 * len(words)
        assert max(map(len, words)) > 1
    else:
        assert "." in words[:5] and all(" " not in word for word in words)

    # keep_fasttext_vocabulary: the first N words and their vectors, unchanged, without </s>
    kept = tmp_path / "kept.vec"
    assert keep_first_words(path, kept, 50) == (50, [])
    kept_words, kept_matrix = read_vec(kept, limit=None)
    rows = [row for row, word in enumerate(words[:51]) if word != FASTTEXT_LINE_END]
    assert kept_words == [words[row] for row in rows] and FASTTEXT_LINE_END not in kept_words
    np.testing.assert_array_equal(kept_matrix, matrix[rows])


def test_vectors_differ_between_languages(releases):
    en = read_vec(releases[fasttext_file("en")], limit=10)[1]
    fr = read_vec(releases[fasttext_file("fr")], limit=10)[1]
    assert not np.allclose(en, fr)


def _ud24_sources(paper_config) -> list[dict]:
    return [
        keys.ud_source(paper_config, name, lang)
        for name, dataset in paper_config["data"]["ud"].items()
        if dataset.get("download") == "ud24"
        for lang in dataset["treebanks"]
        if lang in LANGS
    ]


def test_ud24_release_imports_each_treebank(toy, releases, paper_config, tmp_path):
    release = safe_extract(releases[UD24_TGZ], tmp_path / "unpacked" / "ud24")
    sources = _ud24_sources(paper_config)
    expected = {("pud", "en"), ("pud", "zh"), ("ewt", "en"), ("gsd", "ru")}
    assert {(source["dataset"], source["lang"]) for source in sources} >= expected
    for source in sources:
        lang = source["lang"]
        folder = tmp_path / source["dataset"] / lang
        outputs = {split: folder / f"{split}.conllu" for split in source["splits"]}
        counts = import_ud(source, outputs, release)
        assert counts == {split: TINY_SPEC["sizes"]["ud"][split] for split in source["splits"]}
        for split, path in outputs.items():
            assert path.read_bytes() == (toy / layout.ud(DATASET, lang, split)).read_bytes()
    folders = {path.name for path in (release / UD24_RELEASE).iterdir()}
    assert folders == {source["treebank"] for source in sources}  # no Arabic, no Slovenian


def test_pud_has_its_test_split_only_with_its_raw_text(releases, tmp_path):
    release = safe_extract(releases[UD24_TGZ], tmp_path / "ud24")
    for lang, folder in (("en", "UD_English-PUD"), ("zh", "UD_Chinese-PUD")):
        files = sorted(path.name for path in (release / UD24_RELEASE / folder).iterdir())
        assert files == ["README.md", f"{lang}_pud-ud-test.conllu", f"{lang}_pud-ud-test.txt"]
        conllu = (release / UD24_RELEASE / folder / f"{lang}_pud-ud-test.conllu").read_text()
        text = _lines(release / UD24_RELEASE / folder / f"{lang}_pud-ud-test.txt")
        assert text == re.findall(r"^# text = (.*)$", conllu, flags=re.MULTILINE)
