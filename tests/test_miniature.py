"""The paper study in miniature: config/config.yaml's own acquisition path, from a local server on
127.0.0.1 serving toy-world files under the real names and formats, through Table 1, with faults
served on purpose (tests/config/miniature.yaml says what is scaled down)."""

import copy
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.fileserver import FileServer
from xling.toyworld import TINY_SPEC, generate
from xling.toyworld.releases import write_releases

REPO = Path(__file__).resolve().parents[1]
OVERLAY = REPO / "tests/config/miniature.yaml"
PLACEHOLDER = "http://127.0.0.1:8000"
UD_TREEBANKS = {"en": "UD_English-EWT", "zh": "UD_Chinese-GSD"}  # config/config.yaml data.ud.ud23

EN_DUMP = "enwiki/20261101/enwiki-20261101-pages-articles.xml.bz2"
ZH_DUMP = "zhwiki/20261101/zhwiki-20261101-pages-articles.xml.bz2"
XNLI = "XNLI/XNLI-1.0.zip"
UD = "ud-treebanks-v2.3.tgz"
CC_ZH = "cc-100/zh-Hans.txt.xz"

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
    return yaml.safe_dump(config, sort_keys=False)


@pytest.fixture(scope="module")
def miniature(tmp_path_factory):
    root = tmp_path_factory.mktemp("miniature")
    generate(miniature_spec(), root / "toyworld")
    site = root / "site"
    write_releases(root / "toyworld", site, languages=["en", "zh"], ud_treebanks=UD_TREEBANKS)
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
        ]  # fmt: skip
        env = dict(os.environ, OMP_NUM_THREADS="1")
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
        requests = {path: server.requested(path) for path in (XNLI, EN_DUMP, ZH_DUMP, UD, CC_ZH)}
    return workdir / "results" / "miniature", requests, result.stderr


def test_table1_has_the_miniature_cells_and_nothing_else(miniature):
    results, _, _ = miniature
    table = pd.read_csv(results / "tables" / "table1.csv").set_index("variant")
    for variant in ("default", "wiki_cc"):
        for column in ("XNLI zh", "NER zh", "Parsing zh"):
            assert 0 <= table.loc[variant, column] <= 100, (variant, column)
    # other rows and targets are not computed: empty, never a number
    assert table.drop(index=["default", "wiki_cc"])["XNLI zh"].isna().all()
    assert table[["XNLI fr", "NER ru"]].isna().all().all()


def test_a_server_error_is_retried(miniature):
    _, requests, _ = miniature
    assert len(requests[XNLI]) == 2


def test_a_cut_transfer_resumes_where_it_stopped(miniature):
    _, requests, _ = miniature
    first, second = requests[EN_DUMP]
    assert "Range" not in first and second["Range"].startswith("bytes=") and second["If-Range"]


def test_a_dump_truncated_as_whole_fails_its_published_sha1_and_is_fetched_again(miniature):
    _, requests, output = miniature
    assert len(requests[ZH_DUMP]) == 2
    assert re.search(r"zhwiki-20261101-pages-articles\.xml\.bz2: sha1 \w+ does not match \w+ "
                     r"published in \S+zhwiki-20261101-sha1sums\.txt", output)  # fmt: skip


def test_a_file_off_its_pinned_sha256_is_deleted_and_fetched_again(miniature):
    results, requests, output = miniature
    assert len(requests[UD]) == 2
    assert re.search(r"ud-treebanks-v2\.3\.tgz: sha256 \w+ does not match the pinned", output)
    assert (results / "raw/downloads/ud23").exists()


def test_chinese_common_crawl_comes_from_cc100s_zh_hans_file(miniature):
    results, requests, _ = miniature
    assert len(requests[CC_ZH]) == 1
    assert (results / "data/corpus/cc/zh.txt").stat().st_size > 0
