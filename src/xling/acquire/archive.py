"""Unpack zip and tar archives without letting a member escape the target directory."""

from __future__ import annotations

import gzip
import lzma
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from xling.base.atomic import atomic_directory
from xling.base.errors import InputFileError

CHUNK = 1 << 20
# Errors of a file cut short or damaged (a download that stopped early, a bad disk), as raised
# by zipfile, tarfile and the decompressors; gzip.BadGzipFile is an OSError, the rest are not.
_TRUNCATED_OR_CORRUPT = (
    EOFError,
    zipfile.BadZipFile,
    tarfile.ReadError,
    gzip.BadGzipFile,
    lzma.LZMAError,
    zlib.error,
)
_MAGIC_NUMBERS = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
_TAR_MAGIC_END = 262  # a tar header holds "ustar" at bytes 257-261


class UnsafeArchiveError(ValueError):
    pass


class TruncatedArchiveError(InputFileError):
    """An archive that is cut short or damaged, most likely by an interrupted download."""

    def __init__(self, archive: Path, detail: str) -> None:
        super().__init__(
            archive,
            f"the archive is truncated or corrupt ({detail})",
            fix=(
                "delete it and run the workflow again: the download job fetches it again (pin "
                "its sha256 in data.downloads.<name>.sha256 to have the download verified)"
            ),
        )


def _check_member_name(archive: Path, name: str) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise UnsafeArchiveError(
            f"{archive}: member {name!r} would be written outside the target directory; "
            "refusing to unpack this archive"
        )


def _looks_compressed_or_archived(archive: Path) -> bool:
    """Whether the file starts like a zip, gzip, bzip2 or xz file, or has a tar header."""
    with open(archive, "rb") as handle:
        head = handle.read(_TAR_MAGIC_END)
    return head.startswith(_MAGIC_NUMBERS) or head[257:_TAR_MAGIC_END] == b"ustar"


def _is_tarfile(archive: Path) -> bool:
    try:
        return tarfile.is_tarfile(archive)
    except _TRUNCATED_OR_CORRUPT:  # a truncated .tar.gz already fails here
        return False


def _extract_zip(archive: Path, target: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            _check_member_name(archive, info.filename)
            # zip symlinks are stored as regular entries with a unix mode bit; reject them
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                raise UnsafeArchiveError(f"{archive}: member {info.filename!r} is a link")
        zf.extractall(target)


def _extract_tar(archive: Path, target: Path) -> None:
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            _check_member_name(archive, member.name)
        # The "data" filter (PEP 706) also rejects links leaving the target, device files.
        try:
            tf.extractall(target, filter="data")
        except tarfile.FilterError as error:
            raise UnsafeArchiveError(f"{archive}: {error}") from error
        # tarfile stops at the end-of-archive block; reading on checks the compressed stream's
        # end and checksum, so that a cut there is caught too.
        while tf.fileobj.read(CHUNK):
            pass


def safe_extract(archive: str | Path, dest_dir: str | Path) -> Path:
    """Unpack ``archive`` into ``dest_dir`` (which appears only when complete)."""
    archive = Path(archive)
    if zipfile.is_zipfile(archive):
        extract = _extract_zip
    elif _is_tarfile(archive):
        extract = _extract_tar
    elif _looks_compressed_or_archived(archive):
        raise TruncatedArchiveError(archive, "it cannot be read as a zip or tar archive")
    else:
        raise ValueError(f"{archive} is neither a zip nor a tar archive; cannot unpack it")
    try:
        with atomic_directory(dest_dir) as tmp:
            extract(archive, tmp)
    except _TRUNCATED_OR_CORRUPT as error:
        raise TruncatedArchiveError(archive, f"{type(error).__name__}: {error}") from error
    return Path(dest_dir)
