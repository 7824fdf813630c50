"""Downloads against a local HTTP server on 127.0.0.1: resume, retries, checksums."""

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from xling.acquire.download import ChecksumError, DownloadError, fetch

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB, not all one byte value


class Server:
    """Serves PAYLOAD at /file with Range support; can cut a response short or ignore Range."""

    def __init__(self):
        self.requests = []
        self.cut_next_after = None  # bytes sent before dropping the connection, once
        self.honour_range = True
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append(dict(self.headers))
                if self.path != "/file":
                    self.send_error(404)
                    return
                start = 0
                header = self.headers.get("Range")
                if header and server.honour_range:
                    start = int(header.removeprefix("bytes=").split("-")[0])
                    self.send_response(206)
                    self.send_header(
                        "Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}"
                    )
                else:
                    self.send_response(200)
                body = PAYLOAD[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if server.cut_next_after is not None:
                    cut, server.cut_next_after = server.cut_next_after, None
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def quiet(*args):
    pass


def test_download_writes_file_and_checksum(server, tmp_path):
    dest = tmp_path / "dl" / "file.bin"
    digest = fetch(f"{server.url}/file", dest, log=quiet)
    assert dest.read_bytes() == PAYLOAD
    assert digest == hashlib.sha256(PAYLOAD).hexdigest()
    assert (tmp_path / "dl" / "file.bin.sha256").read_text().startswith(digest)
    assert not (tmp_path / "dl" / "file.bin.part").exists()


def test_interrupted_transfer_is_resumed_with_a_range_request(server, tmp_path):
    server.cut_next_after = 300_000
    dest = tmp_path / "file.bin"
    fetch(f"{server.url}/file", dest, backoff_seconds=0, log=quiet)
    assert dest.read_bytes() == PAYLOAD
    assert len(server.requests) == 2
    assert server.requests[1]["Range"] == "bytes=300000-"


def test_partial_file_from_a_killed_run_is_continued(server, tmp_path):
    dest = tmp_path / "file.bin"
    (tmp_path / "file.bin.part").write_bytes(PAYLOAD[:123_456])
    fetch(f"{server.url}/file", dest, log=quiet)
    assert dest.read_bytes() == PAYLOAD
    assert server.requests[0]["Range"] == "bytes=123456-"


def test_server_without_range_support_restarts_cleanly(server, tmp_path):
    server.honour_range = False
    dest = tmp_path / "file.bin"
    (tmp_path / "file.bin.part").write_bytes(b"stale bytes from another version")
    fetch(f"{server.url}/file", dest, log=quiet)
    assert dest.read_bytes() == PAYLOAD


def test_checksum_mismatch_deletes_the_download(server, tmp_path):
    dest = tmp_path / "file.bin"
    with pytest.raises(ChecksumError, match="does not match the pinned"):
        fetch(f"{server.url}/file", dest, sha256="0" * 64, log=quiet)
    assert not dest.exists()
    assert not (tmp_path / "file.bin.part").exists()


def test_pinned_checksum_accepts_the_right_file(server, tmp_path):
    dest = tmp_path / "file.bin"
    fetch(f"{server.url}/file", dest, sha256=hashlib.sha256(PAYLOAD).hexdigest(), log=quiet)
    assert dest.exists()


def test_missing_resource_fails_after_retries(server, tmp_path):
    with pytest.raises(DownloadError, match="failed after 2 attempts"):
        fetch(f"{server.url}/nothing", tmp_path / "x", retries=2, backoff_seconds=0, log=quiet)
    assert len(server.requests) == 2
