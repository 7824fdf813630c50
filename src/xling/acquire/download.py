"""Download one file: resume after an interruption, retry with backoff, verify its sha256.

Written on urllib (standard library) rather than requests so the stage needs nothing extra; the
only features used are Range requests and streaming, which urllib has.
"""

from __future__ import annotations

import hashlib
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

CHUNK = 1 << 20


class DownloadError(RuntimeError):
    pass


class ChecksumError(DownloadError):
    pass


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _fetch_once(url: str, part: Path, timeout: float) -> None:
    """Append the rest of ``url`` to ``part`` (resuming at its size when the server allows)."""
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "xling-workflow"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and offset:  # the partial file already holds everything
            return
        raise
    with response:
        status = getattr(response, "status", 200)
        resumed = offset and status == 206
        if offset and not resumed:
            offset = 0  # the server ignored the Range header: start again
        expected = response.headers.get("Content-Length")
        written = 0
        with open(part, "ab" if resumed else "wb") as out:
            for block in iter(lambda: response.read(CHUNK), b""):
                out.write(block)
                written += len(block)
            out.flush()
            os.fsync(out.fileno())
        if expected is not None and written != int(expected):
            raise DownloadError(f"{url}: connection closed after {written} of {expected} bytes")


def fetch(
    url: str,
    dest: str | Path,
    sha256: str | None = None,
    retries: int = 5,
    backoff_seconds: float = 2.0,
    timeout: float = 60.0,
    log=print,
) -> str:
    """Download ``url`` to ``dest`` and return its sha256.

    Bytes go to ``dest.part`` first; a rerun after a kill continues from there. ``dest`` appears
    only complete and, when ``sha256`` is given, verified. The checksum is also written to
    ``dest.sha256`` so that it can be pinned in the config.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    for attempt in range(1, retries + 1):
        try:
            _fetch_once(url, part, timeout)
            break
        except (urllib.error.URLError, OSError, DownloadError) as error:
            if attempt == retries:
                raise DownloadError(
                    f"{url}: failed after {retries} attempts ({error}); the partial file {part} is "
                    "kept and the next run resumes from it"
                ) from error
            wait = backoff_seconds * 2 ** (attempt - 1)
            log(f"attempt {attempt} of {retries} failed ({error}); retrying in {wait:.0f} s")
            time.sleep(wait)
    digest = sha256_of(part)
    if sha256 is not None and digest != sha256.lower():
        part.unlink()
        raise ChecksumError(
            f"{url}: sha256 {digest} does not match the pinned {sha256}; the corrupt download was "
            "deleted. If the source changed on purpose, update data.downloads.<name>.sha256."
        )
    os.replace(part, dest)
    dest.with_name(dest.name + ".sha256").write_text(f"{digest}  {dest.name}\n")
    log(f"downloaded {url} -> {dest} (sha256 {digest})")
    return digest
