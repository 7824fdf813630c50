"""Unpack zip and tar archives without letting a member escape the target directory."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from xling.atomic import atomic_directory


class UnsafeArchiveError(ValueError):
    pass


def _check_member_name(archive: Path, name: str) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise UnsafeArchiveError(
            f"{archive}: member {name!r} would be written outside the target directory; "
            "refusing to unpack this archive"
        )


def safe_extract(archive: str | Path, dest_dir: str | Path) -> Path:
    """Unpack ``archive`` into ``dest_dir`` (which appears only when complete)."""
    archive = Path(archive)
    with atomic_directory(dest_dir) as tmp:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    _check_member_name(archive, info.filename)
                    # zip symlinks are stored as regular entries with a unix mode bit; reject them
                    if (info.external_attr >> 16) & 0o170000 == 0o120000:
                        raise UnsafeArchiveError(f"{archive}: member {info.filename!r} is a link")
                zf.extractall(tmp)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                for member in tf.getmembers():
                    _check_member_name(archive, member.name)
                # The "data" filter (PEP 706) also rejects links leaving the target, device files.
                try:
                    tf.extractall(tmp, filter="data")
                except tarfile.FilterError as error:
                    raise UnsafeArchiveError(f"{archive}: {error}") from error
        else:
            raise ValueError(f"{archive} is neither a zip nor a tar archive; cannot unpack it")
    return Path(dest_dir)
