"""The paper study in miniature: config/config.yaml's own acquisition path, from a local server on
127.0.0.1 serving toy-world files under the real names and formats, through Table 1, with faults
served on purpose; in the same run, the downloads of Wu et al. section 5 (MUSE, Tatoeba, fastText)
and Muller et al.'s PUD test sets, fetched and imported (tests/config/miniature.yaml says what is
scaled down)."""

import copy
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pytest
import yaml

from tests.fileserver import FileServer
from xling.analysis.fasttext_vectors import FASTTEXT_LINE_END, read_vec
from xling.contracts import layout
from xling.contracts.conllu import read_conllu
from xling.toyworld import TINY_SPEC, generate
from xling.toyworld.api import DATASET
from xling.toyworld.releases import muse_dictionary, write_releases
from xling.toyworld.releases_analysis import (
    UD24_TGZ,
    fasttext_file,
    tatoeba_file,
    write_analysis_releases,
)

REPO = Path(__file__).resolve().parents[1]
OVERLAY = REPO / "tests/config/miniature.yaml"
PLACEHOLDER = "http://127.0.0.1:8000"
UD_TREEBANKS = {"en": "UD_English-EWT", "zh": "UD_Chinese-GSD"}  # config/config.yaml data.ud.ud23

EN_DUMP = "enwiki/20261101/enwiki-20261101-pages-articles.xml.bz2"
ZH_DUMP = "zhwiki/20261101/zhwiki-20261101-pages-articles.xml.bz2"
XNLI = "XNLI/XNLI-1.0.zip"
UD = "ud-treebanks-v2.3.tgz"
CC_ZH = "cc-100/zh-Hans.txt.xz"
PAPER = yaml.safe_load((REPO / "config/config.yaml").read_text())
TATOEBA_ZH = {side: tatoeba_file("cmn", code) for side, code in (("en", "eng"), ("zh", "cmn"))}
MUSE_ZH = {split: muse_dictionary("zh", split) for split in ("train", "test")}
VOCABULARY = yaml.safe_load(OVERLAY.read_text())["analysis"]["word_alignment"]["vocabulary"]
# Downloaded and imported only, no model training: Wu section 5's and Muller's inputs of en-zh.
ANALYSIS_TARGETS = [
    *(f"data/{layout.muse('en', 'zh', split)}" for split in MUSE_ZH),
    *(f"data/{layout.tatoeba('en', 'zh', lang)}" for lang in ("en", "zh")),
    *(f"analysis/words/{lang}/fasttext.vec" for lang in ("en", "zh")),  # keep_fasttext_vocabulary
    *(f"data/{layout.ud('pud', lang, 'test')}" for lang in ("en", "zh")),  # import_ud_test
]

pytestmark = pytest.mark.e2e


def miniature_spec() -> dict:
    spec = copy.deepcopy(TINY_SPEC)
    spec["sizes"].update(
        corpus={"wiki": 1200, "cc": 1200},
        ner={"train": 200, "dev": 50, "test": 50},
        ud={"train": 100, "dev": 30, "test": 30},
        xnli={"train": 210, "dev": 60, "test": 60},
    )
    return spec


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def overlay_for(server: FileServer, site: Path) -> str:
    """The miniature config on the server's port, with the sha256 pins the paper config takes."""
    config = yaml.safe_load(OVERLAY.read_text().replace(PLACEHOLDER, server.url))
    config["data"]["downloads"]["ud23"]["sha256"] = sha256(site / UD)
    config["data"]["commoncrawl"]["sha256"] = {"zh-Hans.txt.xz": sha256(site / CC_ZH)}
    config["data"]["wikipedia"]["sha256"] = {Path(EN_DUMP).name: sha256(site / EN_DUMP)}
    config["data"]["downloads"]["ud24"]["sha256"] = sha256(site / UD24_TGZ)
    config["data"]["fasttext"]["sha256"] = {
        Path(fasttext_file(lang)).name: sha256(site / fasttext_file(lang)) for lang in ("en", "zh")
    }
    return yaml.safe_dump(config, sort_keys=False)


class Miniature(NamedTuple):
    results: Path  # R of the run
    requests: dict[str, list[dict]]  # served path -> the headers of each request
    output: str  # snakemake's stderr
    toy: Path  # the toy world the served files were written from
    site: Path  # the served files


@pytest.fixture(scope="module")
def miniature(tmp_path_factory):
    root = tmp_path_factory.mktemp("miniature")
    toy = root / "toyworld"
    generate(miniature_spec(), toy)
    site = root / "site"
    write_releases(toy, site, languages=["en", "zh"], ud_treebanks=UD_TREEBANKS)
    write_analysis_releases(toy, site, languages=["en", "zh"], ud_datasets=PAPER["data"]["ud"],
                            tatoeba_codes=PAPER["data"]["tatoeba"]["codes"])  # fmt: skip
    workdir = root / "work"
    shutil.copytree(site / "manual", workdir / "resources" / "manual")  # data.manual_dir
    with FileServer(site) as server:
        # Each fault once; the download's own retries or the rule's `retries` must recover.
        server.fault(XNLI, status=503)  # a server error, then success
        en_dump_size = (site / EN_DUMP).stat().st_size
        server.fault(EN_DUMP, cut_after=en_dump_size // 2)  # cut: must resume with Range
        zh_dump = (site / ZH_DUMP).read_bytes()
        server.fault(ZH_DUMP, body=zh_dump[: len(zh_dump) // 2])  # truncated, served as whole
        ud = (site / UD).read_bytes()
        server.fault(UD, body=ud[:-1] + bytes([ud[-1] ^ 1]))  # one byte off its pinned sha256
        configfile = workdir / "miniature.yaml"
        configfile.write_text(overlay_for(server, site))
        command = [
            str(Path(sys.executable).with_name("snakemake")),
            "--cores", "2", "--show-failed-logs", "--directory", str(workdir),
            "--snakefile", str(REPO / "Snakefile"),
            "--configfile", str(REPO / "config/config.yaml"), str(configfile),
            "--", "results/miniature/tables/table1.md",
            *(f"results/miniature/{target}" for target in ANALYSIS_TARGETS),
        ]  # fmt: skip
        env = dict(os.environ, OMP_NUM_THREADS="1")
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
        served = (XNLI, EN_DUMP, ZH_DUMP, UD, CC_ZH, UD24_TGZ, *TATOEBA_ZH.values(),
                  *MUSE_ZH.values(), *(fasttext_file(lang) for lang in ("en", "zh")))  # fmt: skip
        requests = {path: server.requested(path) for path in served}
    return Miniature(workdir / "results" / "miniature", requests, result.stderr, toy, site)


def test_table1_has_the_miniature_cells_and_nothing_else(miniature):
    table = pd.read_csv(miniature.results / "tables" / "table1.csv").set_index("variant")
    for variant in ("default", "wiki_cc"):
        for column in ("XNLI zh", "NER zh", "Parsing zh"):
            assert 0 <= table.loc[variant, column] <= 100, (variant, column)
    # other rows and targets are not computed: empty, never a number
    assert table.drop(index=["default", "wiki_cc"])["XNLI zh"].isna().all()
    assert table[["XNLI fr", "NER ru"]].isna().all().all()


def test_a_server_error_is_retried(miniature):
    assert len(miniature.requests[XNLI]) == 2


def test_a_cut_transfer_resumes_where_it_stopped(miniature):
    first, second = miniature.requests[EN_DUMP]
    assert "Range" not in first and second["Range"].startswith("bytes=") and second["If-Range"]
    # resumed into the file the url template names, and its pinned sha256 held
    dump = miniature.results / "raw/wikipedia/en" / Path(EN_DUMP).name
    assert sha256(dump) == sha256(miniature.site / EN_DUMP)


def test_a_dump_truncated_as_whole_fails_its_published_sha1_and_is_fetched_again(miniature):
    assert len(miniature.requests[ZH_DUMP]) == 2
    output = miniature.output
    assert re.search(r"zhwiki-20261101-pages-articles\.xml\.bz2: sha1 \w+ does not match \w+ "
                     r"published in \S+zhwiki-20261101-sha1sums\.txt", output)  # fmt: skip


def test_a_file_off_its_pinned_sha256_is_deleted_and_fetched_again(miniature):
    results, requests, output = miniature.results, miniature.requests, miniature.output
    assert len(requests[UD]) == 2
    assert re.search(r"ud-treebanks-v2\.3\.tgz: sha256 \w+ does not match the pinned", output)
    assert (results / "raw/downloads/ud23").exists()


def test_chinese_common_crawl_comes_from_cc100s_zh_hans_file(miniature):
    assert len(miniature.requests[CC_ZH]) == 1
    assert (miniature.results / "data/corpus/cc/zh.txt").stat().st_size > 0


# --- Wu section 5 and Muller: downloaded and imported, not trained on -----------------------------


def test_muse_dictionaries_of_the_pair_are_downloaded_as_published(miniature):
    for split, served in MUSE_ZH.items():
        assert len(miniature.requests[served]) == 1
        toy = (miniature.toy / layout.muse("en", "zh", split)).read_bytes()
        assert (miniature.results / "data" / layout.muse("en", "zh", split)).read_bytes() == toy


def test_tatoeba_sides_are_downloaded_line_aligned(miniature):
    lines = {}
    for lang, served in TATOEBA_ZH.items():
        assert len(miniature.requests[served]) == 1
        downloaded = miniature.results / "data" / layout.tatoeba("en", "zh", lang)
        toy = miniature.toy / layout.tatoeba("en", "zh", lang)
        assert downloaded.read_bytes() == toy.read_bytes()
        lines[lang] = downloaded.read_text(encoding="utf-8").splitlines()
    assert len(lines["en"]) == len(lines["zh"]) == miniature_spec()["sizes"]["tatoeba"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fasttext_keeps_the_first_words_of_the_published_vectors(miniature, lang):
    assert len(miniature.requests[fasttext_file(lang)]) == 1
    published, vectors = read_vec(miniature.site / fasttext_file(lang), limit=None)
    assert len(published) > VOCABULARY
    kept, kept_vectors = read_vec(miniature.results / f"analysis/words/{lang}/fasttext.vec", None)
    rows = [row for row, word in enumerate(published) if word != FASTTEXT_LINE_END][:VOCABULARY]
    assert FASTTEXT_LINE_END in published[:VOCABULARY]  # the case the rule must handle
    assert kept == [published[row] for row in rows]
    assert (kept_vectors == vectors[rows]).all()
    assert (miniature.results / f"raw/fasttext/{lang}.vec").read_bytes() == (
        miniature.site / fasttext_file(lang)
    ).read_bytes()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pud_test_sets_import_from_the_ud24_release(miniature, lang):
    """Muller's PUD (UD v2.4, test only); the toy world's test treebank stands in for it (it has
    no parallel treebank: the en and zh sentences are not translations of each other)."""
    assert len(miniature.requests[UD24_TGZ]) == 1
    imported = miniature.results / "data" / layout.ud("pud", lang, "test")
    assert imported.read_bytes() == (miniature.toy / layout.ud(DATASET, lang, "test")).read_bytes()
    assert len(read_conllu(imported)) == miniature_spec()["sizes"]["ud"]["test"]
    assert not (miniature.results / "data/ud/pud" / lang / "train.conllu").exists()
