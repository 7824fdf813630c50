"""Safe unpacking: members may not escape the target; a refused archive leaves nothing behind."""

import io
import tarfile
import zipfile

import pytest

from xling.acquire.archive import UnsafeArchiveError, safe_extract


def make_zip(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def test_zip_is_unpacked(tmp_path):
    make_zip(tmp_path / "a.zip", {"XNLI-1.0/xnli.dev.tsv": "x\n", "XNLI-1.0/README": "r"})
    out = safe_extract(tmp_path / "a.zip", tmp_path / "out")
    assert (out / "XNLI-1.0" / "xnli.dev.tsv").read_text() == "x\n"


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt", "ok/../../evil.txt"])
def test_zip_traversal_is_refused(tmp_path, name):
    make_zip(tmp_path / "a.zip", {"fine.txt": "1", name: "2"})
    with pytest.raises(UnsafeArchiveError, match="outside the target"):
        safe_extract(tmp_path / "a.zip", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "evil.txt").exists()


def test_tar_with_link_outside_is_refused(tmp_path):
    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        data = b"hello"
        info = tarfile.TarInfo("data/file.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("data/link")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    with pytest.raises(UnsafeArchiveError):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_tar_is_unpacked(tmp_path):
    archive = tmp_path / "a.tgz"
    with tarfile.open(archive, "w:gz") as tf:
        data = b"# sent_id = 1\n"
        info = tarfile.TarInfo("ud/en.conllu")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "ud" / "en.conllu").read_bytes() == b"# sent_id = 1\n"


def test_not_an_archive(tmp_path):
    (tmp_path / "plain.txt").write_text("text")
    with pytest.raises(ValueError, match="neither a zip nor a tar"):
        safe_extract(tmp_path / "plain.txt", tmp_path / "out")
