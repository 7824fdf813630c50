"""A Wikipedia dump is verified against the sha1 list Wikimedia publishes beside it."""

import hashlib

import pytest

from tests.fileserver import FileServer
from xling.acquire.download import ChecksumError, Patience, fetch
from xling.acquire.wikimedia import parse_sha1_list, published_sha1, sha1_list_url

DUMP = "frwiki/20261101/frwiki-20261101-pages-articles.xml.bz2"
SUMS = "frwiki/20261101/frwiki-20261101-sha1sums.txt"
BODY = b"BZh9" + bytes(range(256)) * 64
QUICK = Patience(backoff_seconds=0.01)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / DUMP).parent.mkdir(parents=True)
    (root / DUMP).write_bytes(BODY)
    other = hashlib.sha1(b"other").hexdigest()
    (root / SUMS).write_text(
        f"{other}  frwiki-20261101-stub-articles.xml.gz\n"
        f"{hashlib.sha1(BODY).hexdigest()}  frwiki-20261101-pages-articles.xml.bz2\n"
    )
    with FileServer(root) as server:
        yield server


def test_the_list_lies_beside_the_dump_on_any_host():
    assert sha1_list_url(
        "https://mirror.example/dumps/frwiki/20261101/" + DUMP.rsplit("/")[-1]
    ) == ("https://mirror.example/dumps/frwiki/20261101/frwiki-20261101-sha1sums.txt")
    assert sha1_list_url("https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip") is None


def test_a_malformed_line_names_the_list_and_line():
    with pytest.raises(ValueError, match=r"sums\.txt, line 2: expected"):
        parse_sha1_list(f"{'a' * 40}  x.bz2\nnot a checksum\n", "sums.txt")


def test_the_published_sha1_verifies_a_good_download(site, tmp_path):
    sha1 = published_sha1(f"{site.url}/{DUMP}", log=lambda line: None, patience=QUICK)
    assert sha1 == (hashlib.sha1(BODY).hexdigest(), f"{site.url}/{SUMS}")
    fetch(f"{site.url}/{DUMP}", tmp_path / "dump", sha1=sha1, log=lambda line: None)
    assert (tmp_path / "dump").read_bytes() == BODY


def test_a_dump_served_truncated_as_complete_is_deleted_naming_the_list(site, tmp_path):
    site.fault(DUMP, body=BODY[:1000])  # a server that believes the short file is whole
    sha1 = published_sha1(f"{site.url}/{DUMP}", log=lambda line: None)
    with pytest.raises(ChecksumError, match=r"sha1 .* published in .*sha1sums\.txt.*run again"):
        fetch(f"{site.url}/{DUMP}", tmp_path / "dump", sha1=sha1, log=lambda line: None)
    assert list(tmp_path.glob("dump*")) == []
    fetch(f"{site.url}/{DUMP}", tmp_path / "dump", sha1=sha1, log=lambda line: None)
    assert (tmp_path / "dump").read_bytes() == BODY


def test_without_a_list_or_an_entry_the_dump_is_not_checked_by_sha1(site):
    logs = []
    (site.root / SUMS).write_text(f"{'0' * 40}  frwiki-20261101-other.xml.bz2\n")
    assert published_sha1(f"{site.url}/{DUMP}", log=logs.append) is None
    assert "does not list frwiki-20261101-pages-articles.xml.bz2" in logs[-1]
    (site.root / SUMS).unlink()
    assert published_sha1(f"{site.url}/{DUMP}", log=logs.append) is None
    assert "HTTP 404" in logs[-1] and "pinned sha256 only" in logs[-1]
