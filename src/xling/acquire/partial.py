"""What a partial download (``dest.part``) is a part of, so that a resume never splices two files.

The record (``dest.part.meta``, JSON) is written from the first response, before any byte reaches
the part: the URL, the validator the server gave (strong ETag, else Last-Modified) and the total
size when known. A resume sends the validator as ``If-Range``, and checks what comes back against
the record.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import asdict, dataclass
from email.message import Message
from pathlib import Path

from xling.base.atomic import write_json

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)")


@dataclass(frozen=True)
class PartRecord:
    url: str
    etag: str | None = None  # strong ETags only: If-Range may not carry a weak one (RFC 9110)
    last_modified: str | None = None
    total: int | None = None  # bytes of the whole file, when a response said

    @classmethod
    def from_response(cls, url: str, headers: Message, total: int | None) -> PartRecord:
        etag = headers.get("ETag")
        if etag is not None and etag.startswith("W/"):
            etag = None
        return cls(url, etag, headers.get("Last-Modified"), total)

    @property
    def validator(self) -> str | None:
        return self.etag or self.last_modified

    def same_version(self, headers: Message) -> bool | None:
        """Whether ``headers`` describe the recorded version; None when they cannot tell."""
        if self.etag is not None and headers.get("ETag") is not None:
            return headers["ETag"] == self.etag
        if self.last_modified is not None and headers.get("Last-Modified") is not None:
            return headers["Last-Modified"] == self.last_modified
        return None


def record_path(part: Path) -> Path:
    return part.with_name(part.name + ".meta")


def load_record(part: Path) -> PartRecord | None:
    """The record of ``part``; None when there is none or it cannot be read."""
    try:
        fields = json.loads(record_path(part).read_text(encoding="utf-8"))
        return PartRecord(**fields)
    except (OSError, ValueError, TypeError):
        return None


def save_record(part: Path, record: PartRecord) -> None:
    write_json(record_path(part), asdict(record))


def discard(part: Path) -> None:
    """Delete a partial download and its record."""
    for path in (part, record_path(part)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def parse_content_range(value: str | None) -> tuple[int, int, int | None] | None:
    """``bytes FIRST-LAST/TOTAL`` of a 206 as (first, last, total or None); None if unusable."""
    match = _CONTENT_RANGE.fullmatch((value or "").strip())
    if match is None or int(match[2]) < int(match[1]):
        return None
    return int(match[1]), int(match[2]), None if match[3] == "*" else int(match[3])


def parse_unsatisfied_range(value: str | None) -> int | None:
    """The total size in a 416's ``Content-Range: bytes */TOTAL``; None when absent."""
    match = _UNSATISFIED_RANGE.fullmatch((value or "").strip())
    return None if match is None else int(match[1])


def content_length(headers: Message) -> int | None:
    value = headers.get("Content-Length")
    return int(value) if value is not None and value.strip().isdigit() else None
