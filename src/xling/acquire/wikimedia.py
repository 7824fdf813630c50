"""Wikimedia's published sha1 of a dated Wikipedia dump, to verify the download against.

Every dump directory (``<wiki>/<date>/``) holds ``<wiki>-<date>-sha1sums.txt``, lines of
``<sha1>  <file name>``; its mirrors copy the directory as it is. A dump can thus be verified
without pinning anything in the config. The list is optional: where it is absent (a mirror that
leaves it out, a file served from elsewhere), the dump is verified by its pinned sha256 only.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from xling.acquire.download import DownloadError, Patience, fetch

# <anything>/<wiki>/<date>/<wiki>-<date>-<what> as dumps.wikimedia.org and its mirrors lay it out
_DUMP_NAME = re.compile(r"^(?P<dir>.*/)(?P<wiki>[a-z_-]+wiki)-(?P<date>\d{8})-[^/]+$")
_LINE = re.compile(r"^(?P<sha1>[0-9a-fA-F]{40}) [ *]?(?P<name>\S+)$")


def sha1_list_url(dump_url: str) -> str | None:
    """The URL of the sha1 list beside a dated dump, or None for a URL not named like a dump."""
    match = _DUMP_NAME.match(dump_url)
    if match is None:
        return None
    return f"{match['dir']}{match['wiki']}-{match['date']}-sha1sums.txt"


def parse_sha1_list(text: str, source: str) -> dict[str, str]:
    """File name -> sha1 from the text of a sha1sums list; a malformed line names its number."""
    sums = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _LINE.match(line.strip())
        if match is None:
            raise ValueError(
                f"{source}, line {number}: expected '<sha1>  <file name>', found {line!r}"
            )
        sums[match["name"]] = match["sha1"].lower()
    return sums


def published_sha1(
    dump_url: str, log=print, patience: Patience | None = None
) -> tuple[str, str] | None:
    """(sha1, list URL) of the dump as Wikimedia published it, or None (with a log line saying
    why) when the URL is not a dated dump, the list is absent or does not name the file. The list
    is fetched as ``patience`` says (default: :class:`~xling.acquire.download.Patience`'s)."""
    list_url = sha1_list_url(dump_url)
    if list_url is None:
        log(f"{dump_url}: not named like a dated Wikimedia dump; no sha1 list to check against")
        return None
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "sha1sums.txt"
        try:
            fetch(list_url, path, log=log, patience=patience or Patience())
        except DownloadError as error:
            status = getattr(error.__cause__, "code", None)
            if status not in (403, 404, 410):
                raise
            log(f"{list_url}: HTTP {status}; the dump is verified by its pinned sha256 only")
            return None
        sums = parse_sha1_list(path.read_text(encoding="utf-8"), list_url)
    name = dump_url.rsplit("/", 1)[-1]
    if name not in sums:
        log(f"{list_url} does not list {name}; the dump is verified by its pinned sha256 only")
        return None
    return sums[name], list_url
