"""Download one file: resume after an interruption, retry what can succeed, verify its sha256.

Written on urllib (standard library) rather than requests so the stage needs nothing extra; the
only features used are Range requests and streaming, which urllib has.

What a download trusts, so that it cannot be fooled into a wrong file:

* Bytes go to ``dest.part``, described by a record (:mod:`xling.acquire.partial`). A part without a
  record, or from another URL, is discarded rather than continued.
* A resume sends ``Range: bytes=N-`` with ``If-Range: <validator>``. A 206 is appended only when
  its Content-Range starts at N and its validator and total size agree with the record. A 200
  (range ignored, or the file changed) starts again from byte 0: two versions are never spliced.
* A 416 ("nothing after byte N") means complete only when N is the file's known size.
* A body shorter than its Content-Length, its Content-Range or the known total size is an
  interrupted transfer, retried like a network error, a timeout or a cut chunked response.
* 5xx, 408 and 429 are retried (after Retry-After when the server sends one); any other HTTP error
  fails at once, since asking again gets the same answer.

Every DownloadError message starts with the URL.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.message import Message
from pathlib import Path

from xling.acquire.partial import (
    PartRecord,
    content_length,
    discard,
    load_record,
    parse_content_range,
    parse_unsatisfied_range,
    record_path,
    save_record,
)
from xling.base.atomic import atomic_write, fsync_directory, fsync_file
from xling.base.digest import CHUNK, digests

RETRY_AFTER_CAP_SECONDS = 600.0  # a server asking for a longer wait gets this much
USER_AGENT = "xling-workflow"


@dataclass(frozen=True)
class Patience:
    """How long a download keeps trying: ``attempts`` in all, the n-th failure waited out for
    ``backoff_seconds`` x 2^(n-1) (or the server's Retry-After, capped at
    :data:`RETRY_AFTER_CAP_SECONDS`), an attempt given up after ``timeout`` seconds without a
    byte."""

    attempts: int = 5
    backoff_seconds: float = 2.0
    timeout: float = 60.0


class DownloadError(RuntimeError):
    """A download that failed; the message starts with the URL."""


class ChecksumError(DownloadError):
    pass


class _Interrupted(Exception):
    """The transfer stopped short or was refused for now: another attempt can succeed."""


class _StartOver(_Interrupted):
    """The partial file cannot be continued: discard it and download from byte 0."""


# What another attempt may cure; HTTP errors among them are sorted by status in _judge.
_TRANSIENT_ERRORS = (OSError, http.client.HTTPException, _Interrupted)


@contextlib.contextmanager
def _local_io(url: str, path: Path):
    """Make a disk error (full, read-only) a DownloadError: unlike a network error, it is not
    retried."""
    try:
        yield
    except OSError as error:
        raise DownloadError(f"{url}: cannot write {path}: {error}") from error


def _resume_point(url: str, part: Path, log) -> tuple[int, PartRecord | None]:
    """Bytes of ``part`` that may be continued, and their record; a part that may not is
    discarded."""
    size = part.stat().st_size if part.exists() else 0
    record = load_record(part) if size else None
    if size and record is None:
        problem = "has no record of what it is part of (no readable .meta file next to it)"
    elif record is not None and record.url != url:
        problem = f"is part of another URL, {record.url}"
    elif record is not None and record.total is not None and size > record.total:
        problem = f"holds {size} bytes, more than the whole file ({record.total})"
    else:
        return size, record
    log(f"{url}: {part} {problem}; discarding it and downloading from byte 0")
    with _local_io(url, part):
        discard(part)
    return 0, None


def _check_partial_content(
    url: str, offset: int, record: PartRecord | None, headers: Message
) -> tuple[PartRecord, int]:
    """The record after a 206, and the body length it announces; _StartOver when the body
    cannot be appended to the part."""
    content_range = parse_content_range(headers.get("Content-Range"))
    if content_range is None:
        raise _StartOver(
            f"a 206 response with no usable Content-Range ({headers['Content-Range']})"
        )
    first, last, total = content_range
    if first != offset:
        raise _StartOver(f"asked for the bytes from {offset}, the server sent them from {first}")
    if record is None:  # a 206 to a request without Range, starting at 0: nothing to compare
        return PartRecord.from_response(url, headers, total), last - first + 1
    if record.same_version(headers) is False:
        raise _StartOver(f"the file changed on the server ({_validators(record, headers)})")
    if total is not None and record.total is not None and total != record.total:
        raise _StartOver(f"the file changed on the server (from {record.total} to {total} bytes)")
    return replace(record, total=record.total if total is None else total), last - first + 1


def _full_content(
    url: str, offset: int, record: PartRecord | None, headers: Message, log
) -> tuple[PartRecord, int | None]:
    """The record after a 200 (the whole file), and the body length it announces."""
    same = None if record is None else record.same_version(headers)
    if offset:
        why = (
            f"the file changed on the server ({_validators(record, headers)})"
            if same is False
            else "the server sent the whole file instead of the rest (it ignored the range)"
        )
        log(f"{url}: {why}; not splicing: downloading again from byte 0")
    length = total = content_length(headers)
    if total is None and same:  # a size learnt earlier still tells a cut body of the same file
        total = record.total
    return PartRecord.from_response(url, headers, total), length


def _validators(record: PartRecord, headers: Message) -> str:
    now = headers.get("ETag") if record.etag is not None else headers.get("Last-Modified")
    return f"{record.validator} is now {now}"


def _accept_unsatisfiable_range(
    url: str, offset: int, record: PartRecord, headers: Message, log
) -> None:
    """A 416 to ``bytes=offset-`` says nothing lies after ``offset``: the part is complete only
    when that is the file's size, from the 416's ``Content-Range: bytes */size`` or the record."""
    sizes = {parse_unsatisfied_range(headers.get("Content-Range")), record.total} - {None}
    if sizes == {offset}:
        log(f"{url}: the partial file already holds all {offset} bytes")
        return
    known = " or ".join(str(size) for size in sorted(sizes)) or "not given"
    raise _StartOver(f"a 416 to a range from byte {offset}, while the file's size is {known}")


def _stream(url: str, response, part: Path, mode: str) -> int:
    """Copy the body to ``part``; a network error propagates (and is retried)."""
    received = 0
    with _local_io(url, part):
        out = open(part, mode)  # noqa: SIM115 (closed below; only open's errors are disk errors)
    with out:
        while True:
            try:
                block = response.read(CHUNK)
            except http.client.IncompleteRead as cut:
                # A chunked body cut mid-stream: keep the whole chunks read before the cut.
                with _local_io(url, part):
                    out.write(cut.partial)
                raise
            if not block:
                break
            with _local_io(url, part):
                out.write(block)
            received += len(block)
        with _local_io(url, part):
            out.flush()
            os.fsync(out.fileno())
    return received


def _transfer(url: str, part: Path, offset: int, record: PartRecord | None, timeout: float, log):
    """One request: continue ``part`` from ``offset`` (0: from scratch) to the end of the file."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
        if record.validator is not None:  # the server sends the whole file if it changed
            request.add_header("If-Range", record.validator)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and offset:
            error.close()
            _accept_unsatisfiable_range(url, offset, record, error.headers, log)
            return
        raise
    with response:
        if response.status == 206:
            record, expected = _check_partial_content(url, offset, record, response.headers)
            mode = "ab"
        else:  # 200, or a file: URL (no status): the whole file
            record, expected = _full_content(url, offset, record, response.headers, log)
            mode = "wb"
            offset = 0
            with _local_io(url, part):
                discard(part)  # before the new record: old bytes must never sit under it
        with _local_io(url, part):
            save_record(part, record)
        received = _stream(url, response, part, mode)
    if expected is not None and received < expected:
        raise _Interrupted(f"the connection closed after {received} of {expected} bytes")
    size = offset + received
    if record.total is not None and size > record.total:
        discard(part)
        raise _Interrupted(f"received {size} bytes of a {record.total}-byte file; discarded them")
    if record.total is not None and size < record.total:
        raise _Interrupted(f"the connection closed with {size} of {record.total} bytes received")


def _attempt(url: str, part: Path, timeout: float, log) -> None:
    offset, record = _resume_point(url, part, log)
    try:
        _transfer(url, part, offset, record, timeout, log)
    except _StartOver as reason:
        if not offset:
            raise
        log(f"{url}: cannot continue {part} ({reason}); downloading again from byte 0")
        with _local_io(url, part):
            discard(part)
        _transfer(url, part, 0, None, timeout, log)


def _retry_after(headers: Message | None) -> float | None:
    """Seconds a 429 or 503 asks the client to wait (``Retry-After``: seconds or a date), capped."""
    value = (headers.get("Retry-After") or "").strip() if headers is not None else ""
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_SECONDS)


def _http_error_message(url: str, error: urllib.error.HTTPError) -> str:
    status = f"HTTP {error.code} {error.reason}"
    if error.code in (404, 410):
        return (
            f"{url}: {status}: the URL is wrong or the file is gone from the server. Check the "
            "URL in its config key (data.downloads.<name>.url, or data.commoncrawl.url, "
            "data.muse.url, data.tatoeba.url, data.fasttext.url); Wikipedia keeps each dated dump "
            "for a few months only, so a dump that is gone needs a newer date in its URL"
        )
    if error.code in (401, 403):
        return f"{url}: {status}: the server refuses access; check the URL in the config"
    return f"{url}: {status}; retrying cannot change this answer: check the URL in the config"


def _judge(url: str, error: Exception) -> tuple[str, float | None]:
    """What went wrong, and how long the server asked us to wait; raises DownloadError when
    another attempt cannot succeed."""
    if isinstance(error, urllib.error.HTTPError):
        error.close()
        if error.code in (408, 429) or 500 <= error.code < 600:
            return f"HTTP {error.code} {error.reason}", _retry_after(error.headers)
        raise DownloadError(_http_error_message(url, error)) from error
    if isinstance(error, urllib.error.URLError):
        if isinstance(error.reason, FileNotFoundError):  # a file: URL to nothing
            raise DownloadError(f"{url}: no such file; check the URL in the config") from error
        return str(error.reason), None
    if isinstance(error, _Interrupted):
        return str(error), None
    if isinstance(error, http.client.IncompleteRead):
        return f"the response was cut mid-stream ({error!r})", None
    return f"{type(error).__name__}: {error}", None


def pinned_sha256(data: dict, section: str, name: str) -> str | None:
    """The sha256 pinned in config ``data`` for a download: ``data.downloads.<name>.sha256`` when
    ``section`` is ``downloads``, else ``data.<section>.sha256.<file name>`` (template sources
    such as ``muse``); None where nothing is pinned."""
    if section == "downloads":
        return data["downloads"][name].get("sha256")
    return (data[section].get("sha256") or {}).get(name)


def fetch(
    url: str,
    dest: str | Path,
    sha256: str | None = None,
    sha1: tuple[str, str] | None = None,
    *,
    patience: Patience = Patience(),
    log=print,
    sleep=time.sleep,
) -> str:
    """Download ``url`` to ``dest`` and return its sha256.

    Bytes go to ``dest.part`` first; a rerun after a kill continues from there. ``dest`` appears
    only complete and, when ``sha256`` is given, verified. The checksum is also written to
    ``dest.sha256`` so that it can be pinned in the config. ``sha1`` is (expected sha1, where it
    was published), e.g. Wikimedia's list beside a dump; it is verified the same way. A failure
    that another attempt may cure is retried as ``patience`` says.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    attempts = patience.attempts
    for attempt in range(1, attempts + 1):
        try:
            _attempt(url, part, patience.timeout, log)
            break
        except _TRANSIENT_ERRORS as error:
            failure, server_wait = _judge(url, error)
            if attempt == attempts:
                size = part.stat().st_size if part.exists() else 0
                kept = (
                    f"the {size} bytes received are kept in {part} and the next run resumes "
                    "from them"
                    if size
                    else "nothing was kept"
                )
                raise DownloadError(
                    f"{url}: failed after {attempts} attempts (last: {failure}); {kept}"
                ) from error
            backoff = patience.backoff_seconds * 2 ** (attempt - 1)
            wait = backoff if server_wait is None else server_wait
            log(
                f"{url}: attempt {attempt} of {attempts} failed ({failure}); retrying in {wait:g} s"
            )
            sleep(wait)
    found = digests(part, ("sha256", "sha1") if sha1 else ("sha256",))
    digest = found["sha256"]
    if sha256 is not None and digest != sha256.lower():
        discard(part)
        raise ChecksumError(
            f"{url}: sha256 {digest} does not match the pinned {sha256}; the download was "
            "deleted. If the source changed on purpose, update data.downloads.<name>.sha256; "
            "otherwise run again to download it again."
        )
    if sha1 is not None and found["sha1"] != sha1[0].lower():
        discard(part)
        raise ChecksumError(
            f"{url}: sha1 {found['sha1']} does not match {sha1[0]} published in {sha1[1]}; the "
            "download was deleted (a truncated or damaged transfer): run again to download it "
            "again."
        )
    fsync_file(part)  # the bytes on disk before the name says the download is whole
    os.replace(part, dest)
    fsync_directory(dest.parent)
    record_path(part).unlink(missing_ok=True)
    # the digest to pin (data.downloads.<name>.sha256), never read back half written
    atomic_write(dest.with_name(dest.name + ".sha256"), [f"{digest}  {dest.name}\n"])
    log(f"downloaded {url} -> {dest} (sha256 {digest})")
    return digest
