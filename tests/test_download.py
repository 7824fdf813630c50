"""Downloads against a local HTTP server on 127.0.0.1, each fault served on purpose: cut bodies,
wrong ranges, 416s, files that change between attempts, 5xx, 429, 404, bad checksums."""

import email.utils
import hashlib
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from xling.acquire.download import (
    RETRY_AFTER_CAP_SECONDS,
    ChecksumError,
    DownloadError,
    Patience,
    fetch,
)
from xling.acquire.partial import PartRecord, load_record, record_path, save_record

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB, not all one byte value
CHANGED = bytes(reversed(range(256))) * 4096  # the file after it changed (the same size)
ETAG = '"v1"'
LAST_MODIFIED = "Mon, 02 Nov 2026 10:00:00 GMT"


class Server:
    """Serves ``body`` at /file with Range and If-Range, like a good server, on 127.0.0.1.

    ``faults`` holds keyword arguments of :meth:`respond`, one entry per coming request, that
    make that response misbehave; once they are used up, it behaves. It serves at most
    ``max_requests`` requests, then closes its socket so that a runaway client fails fast.
    """

    def __init__(self, max_requests=20):
        self.body, self.etag, self.last_modified = PAYLOAD, ETAG, LAST_MODIFIED
        self.faults = []
        self.requests = []  # the headers of each request, in order
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append(dict(self.headers))
                fault = server.faults.pop(0) if server.faults else {}
                server.respond(self, **fault)

        class QuietServer(ThreadingHTTPServer):
            def server_bind(self):
                # HTTPServer's own looks up the host's name (getfqdn): seconds without DNS.
                socketserver.TCPServer.server_bind(self)
                self.server_name, self.server_port = self.server_address[:2]

            def handle_error(self, request, client_address):
                pass  # a client that timed out and left: expected in these tests

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.timeout = 0.05  # how often the loop notices close()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/file"
        self.stopping = threading.Event()

        def serve():
            while not self.stopping.is_set() and len(self.requests) < max_requests:
                self.httpd.handle_request()
            self.httpd.server_close()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()

    def close(self):
        self.stopping.set()
        self.thread.join(timeout=5)
        self.httpd.server_close()

    def respond(
        self,
        handler,
        *,
        status=None,  # send only this status (and `headers`), no body
        headers=(),
        ignore_range=False,
        ignore_if_range=False,  # serve the range even when the validator no longer matches
        range_start=None,  # send the bytes from here, whatever was asked (a wrong Content-Range)
        no_length=False,  # no Content-Length: the body ends when the connection closes
        chunked=False,
        cut_after=None,  # bytes of the body sent before the connection is dropped
        delay=0.0,
        then=None,  # called after the response, e.g. to change the file
    ):
        time.sleep(delay)
        if handler.path != "/file":
            status = 404
        if status is not None:
            handler.send_response(status)
            for name, value in headers:
                handler.send_header(name, value)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        start = None
        asked, condition = handler.headers.get("Range"), handler.headers.get("If-Range")
        current = condition in (None, self.etag, self.last_modified) or ignore_if_range
        if asked and current and not ignore_range:
            start = int(asked.removeprefix("bytes=").removesuffix("-"))
        if start is not None and start >= len(self.body):
            self.respond(
                handler, status=416, headers=[("Content-Range", f"bytes */{len(self.body)}")]
            )
            return
        if start is None:
            handler.send_response(200)
            data = self.body
        else:
            start = start if range_start is None else range_start
            handler.send_response(206)
            handler.send_header(
                "Content-Range", f"bytes {start}-{len(self.body) - 1}/{len(self.body)}"
            )
            data = self.body[start:]
        if self.etag:
            handler.send_header("ETag", self.etag)
        if self.last_modified:
            handler.send_header("Last-Modified", self.last_modified)
        sent = data if cut_after is None else data[:cut_after]
        if chunked:
            handler.protocol_version = "HTTP/1.1"
            handler.close_connection = True
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            step = 65536
            for offset in range(0, len(data), step):
                chunk, piece = data[offset : offset + step], sent[offset : offset + step]
                handler.wfile.write(b"%x\r\n" % len(chunk) + piece)
                if len(piece) < len(chunk):
                    break  # cut inside a chunk: the client reads IncompleteRead
                handler.wfile.write(b"\r\n")
            else:
                handler.wfile.write(b"0\r\n\r\n")
        else:
            if not no_length:
                handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(sent)
        handler.wfile.flush()
        if then is not None:
            then()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


class Downloader:
    """Calls fetch with a short backoff, recording its log lines and the waits it asks for."""

    def __init__(self):
        self.logs, self.waits = [], []

    def __call__(self, url, dest, sha256=None, **patience):
        patience = Patience(**{"backoff_seconds": 0.01, "timeout": 5.0, **patience})
        log, sleep = self.logs.append, self.waits.append
        return fetch(url, dest, sha256, patience=patience, log=log, sleep=sleep)


@pytest.fixture
def download():
    return Downloader()


def leave_part(dest, data, record):
    """What a killed run leaves behind: ``dest.part`` and, when given, its record."""
    part = dest.with_name(dest.name + ".part")
    part.write_bytes(data)
    if record is not None:
        save_record(part, record)
    return part


def test_download_writes_file_and_checksum_and_leaves_nothing_else(server, download, tmp_path):
    dest = tmp_path / "dl" / "file.bin"
    digest = download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert digest == hashlib.sha256(PAYLOAD).hexdigest()
    assert (tmp_path / "dl" / "file.bin.sha256").read_text().startswith(digest)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["file.bin", "file.bin.sha256"]
    assert "Range" not in server.requests[0]


def test_cut_transfer_resumes_with_range_and_validator(server, download, tmp_path):
    server.faults = [dict(cut_after=300_000)]
    dest = tmp_path / "file.bin"
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 2
    assert server.requests[1]["Range"] == "bytes=300000-"
    assert server.requests[1]["If-Range"] == ETAG
    assert "300000 of 1048576 bytes" in download.logs[0] and server.url in download.logs[0]


def test_part_from_a_killed_run_is_continued(server, download, tmp_path):
    dest = tmp_path / "file.bin"
    leave_part(dest, PAYLOAD[:123_456], PartRecord(server.url, ETAG, LAST_MODIFIED, len(PAYLOAD)))
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert server.requests[0]["Range"] == "bytes=123456-"
    assert not record_path(dest.with_name("file.bin.part")).exists()


@pytest.mark.parametrize("etag", [None, 'W/"weak"'], ids=["no-etag", "weak-etag"])
def test_last_modified_is_the_validator_without_a_strong_etag(server, download, tmp_path, etag):
    server.etag = etag
    server.faults = [dict(cut_after=300_000)]
    download(server.url, tmp_path / "file.bin")
    assert server.requests[1]["If-Range"] == LAST_MODIFIED
    assert (tmp_path / "file.bin").read_bytes() == PAYLOAD


@pytest.mark.parametrize("recorded_url", [None, "http://127.0.0.1:9/other"], ids=["none", "other"])
def test_part_without_record_or_from_another_url_is_discarded(
    server, download, tmp_path, recorded_url
):
    dest = tmp_path / "file.bin"
    record = None if recorded_url is None else PartRecord(recorded_url, ETAG)
    leave_part(dest, b"bytes of who knows what", record)
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert "Range" not in server.requests[0]
    assert "discarding it" in download.logs[0]


def test_wrong_content_range_start_restarts_from_zero(server, download, tmp_path):
    dest = tmp_path / "file.bin"
    leave_part(dest, PAYLOAD[:300_000], PartRecord(server.url, ETAG, LAST_MODIFIED, len(PAYLOAD)))
    server.faults = [dict(range_start=1000)]
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 2 and "Range" not in server.requests[1]
    assert "from 300000, the server sent them from 1000" in download.logs[0]
    assert download.waits == []  # starting over is not a failure to wait after


def test_server_ignoring_the_range_restarts_cleanly(server, download, tmp_path):
    dest = tmp_path / "file.bin"
    leave_part(dest, b"stale bytes from another version", PartRecord(server.url, ETAG))
    server.faults = [dict(ignore_range=True)]
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 1
    assert "ignored the range" in download.logs[0]


@pytest.mark.parametrize("recorded_total", [None, len(PAYLOAD)])
def test_416_with_the_full_size_is_complete(server, download, tmp_path, recorded_total):
    dest = tmp_path / "file.bin"
    leave_part(dest, PAYLOAD, PartRecord(server.url, ETAG, total=recorded_total))
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 1 and server.requests[0]["Range"] == f"bytes={len(PAYLOAD)}-"


@pytest.mark.parametrize(
    "content_range",
    [f"bytes */{len(PAYLOAD)}", "bytes */5000", None],
    ids=["other", "same", "none"],
)
def test_416_without_a_matching_size_restarts(server, download, tmp_path, content_range):
    # The part holds 5000 bytes; "part-size" is a 416 that agrees, but the record knows better.
    dest = tmp_path / "file.bin"
    total = len(PAYLOAD) if content_range == "bytes */5000" else None
    leave_part(dest, b"x" * 5000, PartRecord(server.url, ETAG, total=total))
    headers = [] if content_range is None else [("Content-Range", content_range)]
    server.faults = [dict(status=416, headers=headers)]
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 2 and "Range" not in server.requests[1]
    assert "416" in download.logs[0]


@pytest.mark.parametrize(
    "second_response, validators, requests",
    [({}, True, 2), (dict(ignore_if_range=True), True, 3), ({}, False, 3)],
    ids=["if-range-honoured", "if-range-ignored", "size-only"],
)
def test_file_changed_between_attempts_is_not_spliced(
    server, download, tmp_path, second_response, validators, requests
):
    # With validators, the new version has the same size, so that only they can tell; without
    # them, only its size can.
    new_body = CHANGED if validators else CHANGED + b"version 2"
    if not validators:
        server.etag = server.last_modified = None

    def change():
        server.body = new_body
        if validators:
            server.etag, server.last_modified = '"v2"', "Tue, 03 Nov 2026 10:00:00 GMT"

    server.faults = [dict(cut_after=300_000, then=change), second_response]
    dest = tmp_path / "file.bin"
    download(server.url, dest)
    assert dest.read_bytes() == new_body
    assert any("changed on the server" in line for line in download.logs)
    assert len(server.requests) == requests


def test_close_without_content_length_is_retried_when_the_total_is_known(
    server, download, tmp_path
):
    dest = tmp_path / "file.bin"
    leave_part(dest, PAYLOAD[:300_000], PartRecord(server.url, ETAG, LAST_MODIFIED, len(PAYLOAD)))
    server.faults = [dict(no_length=True, cut_after=100_000)]  # a 206: Content-Range has the total
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert server.requests[1]["Range"] == "bytes=400000-"
    assert len(download.waits) == 1


def test_whole_body_without_length_is_checked_against_the_recorded_total(
    server, download, tmp_path
):
    dest = tmp_path / "file.bin"
    leave_part(dest, PAYLOAD[:300_000], PartRecord(server.url, ETAG, LAST_MODIFIED, len(PAYLOAD)))
    server.faults = [dict(ignore_range=True, no_length=True, cut_after=500_000)]  # same ETag
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert server.requests[1]["Range"] == "bytes=500000-"


def test_chunked_response_cut_mid_stream_is_retried(server, download, tmp_path):
    server.faults = [dict(chunked=True, cut_after=300_000), dict(chunked=True)]
    dest = tmp_path / "file.bin"
    download(server.url, dest)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 2
    assert "cut mid-stream" in download.logs[0]


def test_chunked_response_cut_every_time_fails_naming_the_url(server, download, tmp_path):
    server.faults = [dict(chunked=True, cut_after=300_000)] * 3
    with pytest.raises(DownloadError) as failure:
        download(server.url, tmp_path / "file.bin", attempts=3)
    message = str(failure.value)
    assert message.startswith(server.url) and "failed after 3 attempts" in message
    assert "cut mid-stream" in message and "the next run resumes" in message
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [500, 503, 408])
def test_server_error_then_success(server, download, tmp_path, status):
    server.faults = [dict(status=status)]
    download(server.url, tmp_path / "file.bin", backoff_seconds=0.25)
    assert (tmp_path / "file.bin").read_bytes() == PAYLOAD
    assert download.waits == [0.25]
    assert f"HTTP {status}" in download.logs[0]


@pytest.mark.parametrize(
    "retry_after, wait",
    [("7", 7.0), ("99999", RETRY_AFTER_CAP_SECONDS), ("soon", 0.01)],
    ids=["seconds", "capped", "unreadable"],
)
def test_429_waits_as_retry_after_asks(server, download, tmp_path, retry_after, wait):
    server.faults = [dict(status=429, headers=[("Retry-After", retry_after)])]
    download(server.url, tmp_path / "file.bin")
    assert (tmp_path / "file.bin").read_bytes() == PAYLOAD
    assert download.waits == [wait]


def test_retry_after_as_a_date(server, download, tmp_path):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.faults = [dict(status=503, headers=[("Retry-After", when)])]
    download(server.url, tmp_path / "file.bin")
    assert 25 <= download.waits[0] <= 30


@pytest.mark.parametrize("path", ["/nothing", "/file"])
def test_404_fails_at_once_naming_the_url(server, download, tmp_path, path):
    url = server.url.removesuffix("/file") + path
    if path == "/file":
        server.faults = [dict(status=404)]
    with pytest.raises(DownloadError) as failure:
        download(url, tmp_path / "x", attempts=5)
    message = str(failure.value)
    assert message.startswith(url) and "HTTP 404" in message and "config" in message
    assert "partial" not in message and "resume" not in message
    assert len(server.requests) == 1 and download.waits == []
    assert not (tmp_path / "x.part").exists()


@pytest.mark.parametrize("status", [400, 403, 410])
def test_other_client_errors_are_not_retried(server, download, tmp_path, status):
    server.faults = [dict(status=status)]
    with pytest.raises(DownloadError, match=f"^{server.url}: HTTP {status}"):
        download(server.url, tmp_path / "x", attempts=5)
    assert len(server.requests) == 1


def test_timeout_is_retried(server, download, tmp_path):
    server.faults = [dict(delay=0.3)]
    download(server.url, tmp_path / "file.bin", timeout=0.1)
    assert (tmp_path / "file.bin").read_bytes() == PAYLOAD
    assert len(download.waits) == 1


def test_refused_connection_fails_after_retries_naming_the_url(download, tmp_path):
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/file"
    with pytest.raises(DownloadError) as failure:
        download(url, tmp_path / "x", attempts=2)
    message = str(failure.value)
    assert message.startswith(url) and "failed after 2 attempts" in message
    assert "nothing was kept" in message


def test_checksum_mismatch_deletes_the_download(server, download, tmp_path):
    dest = tmp_path / "file.bin"
    with pytest.raises(ChecksumError) as failure:
        download(server.url, dest, sha256="0" * 64)
    message = str(failure.value)
    assert message.startswith(server.url) and "does not match the pinned" in message
    assert "data.downloads.<name>.sha256" in message
    assert not dest.exists()
    assert not (tmp_path / "file.bin.part").exists()
    assert load_record(tmp_path / "file.bin.part") is None


def test_pinned_checksum_accepts_the_right_file(server, download, tmp_path):
    dest = tmp_path / "file.bin"
    download(server.url, dest, sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert dest.exists()


def test_file_url_is_copied_and_a_missing_one_fails_at_once(download, tmp_path):
    source = tmp_path / "source.bin"
    source.write_bytes(PAYLOAD)
    download(source.as_uri(), tmp_path / "copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == PAYLOAD
    missing = (tmp_path / "missing.bin").as_uri()
    with pytest.raises(DownloadError, match=f"^{missing}: no such file"):
        download(missing, tmp_path / "x", attempts=5)
    assert download.waits == []
