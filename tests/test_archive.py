"""Safe unpacking: members may not escape the target; a refused archive leaves nothing behind;
a truncated one is named, with the fix."""

import io
import random
import tarfile
import zipfile

import pytest

from xling.acquire.archive import TruncatedArchiveError, UnsafeArchiveError, safe_extract


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


def make_tar_gz(path):
    data = random.Random(0).randbytes(100_000)  # incompressible: a cut lands inside the data
    with tarfile.open(path, "w:gz") as tf:
        for i in range(3):
            info = tarfile.TarInfo(f"ud/file{i}.conllu")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def cut(path, keep):
    data = path.read_bytes()
    path.write_bytes(data[: keep(len(data))])


@pytest.mark.parametrize(
    "keep", [lambda n: 20, lambda n: n // 2, lambda n: n - 4], ids=["header", "middle", "trailer"]
)
def test_truncated_tar_gz_names_the_archive_and_the_fix(tmp_path, keep):
    archive = tmp_path / "ud23"  # downloads are named by their config key, without a suffix
    make_tar_gz(archive)
    cut(archive, keep)
    with pytest.raises(TruncatedArchiveError) as failure:
        safe_extract(archive, tmp_path / "out")
    message = str(failure.value)
    assert message.startswith(f"{archive}: the archive is truncated or corrupt")
    assert "delete it" in message and "download job" in message
    assert not (tmp_path / "out").exists()


def test_truncated_zip_names_the_archive(tmp_path):
    archive = tmp_path / "xnli"
    make_zip(archive, {"XNLI-1.0/xnli.dev.tsv": random.Random(0).randbytes(50_000)})
    cut(archive, lambda n: n // 2)
    with pytest.raises(TruncatedArchiveError, match=f"^{archive}: the archive is truncated"):
        safe_extract(archive, tmp_path / "out")


def test_damaged_zip_member_names_the_archive(tmp_path):
    archive = tmp_path / "xnli"
    make_zip(archive, {"XNLI-1.0/xnli.dev.tsv": b"premise\thypothesis\n" * 1000})
    data = bytearray(archive.read_bytes())
    data[100] ^= 0xFF  # inside the member's data: the CRC check fails
    archive.write_bytes(bytes(data))
    with pytest.raises(TruncatedArchiveError, match="BadZipFile"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
