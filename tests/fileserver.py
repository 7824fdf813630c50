"""A static file server on 127.0.0.1 for tests: serves a folder as a download site does (Range,
If-Range, a strong ETag per file), and misbehaves on purpose where a test scripts a fault."""

from __future__ import annotations

import hashlib
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote


class FileServer:
    """Serves the files under ``root`` at ``url + "/" + relative path``.

    ``fault(path, ...)`` queues a misbehaviour for the next request of that path, one per call:
    ``status=503`` (that status, no body), ``cut_after=N`` (N bytes of the body, then the
    connection closes), ``body=b"..."`` (these bytes instead of the file, e.g. a truncated copy,
    served as complete). Once a path's faults are used up it is served as it is.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.faults: dict[str, list[dict]] = {}
        self.requests: list[tuple[str, dict]] = []  # (path, headers) of each request, in order
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = unquote(self.path.split("?", 1)[0]).lstrip("/")
                with server._lock:
                    server.requests.append((path, dict(self.headers)))
                    queued = server.faults.get(path)
                    fault = queued.pop(0) if queued else {}
                server._respond(self, path, **fault)

        class QuietServer(ThreadingHTTPServer):
            daemon_threads = True

            def server_bind(self):
                # HTTPServer's own looks up the host's name (getfqdn): seconds without DNS.
                socketserver.TCPServer.server_bind(self)
                self.server_name, self.server_port = self.server_address[:2]

            def handle_error(self, request, client_address):
                pass  # a client that gave up on a cut response: expected here

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def fault(self, path: str, **misbehaviour) -> None:
        with self._lock:
            self.faults.setdefault(path, []).append(misbehaviour)

    def requested(self, path: str) -> list[dict]:
        """The headers of every request of ``path``, in order."""
        return [headers for requested, headers in self.requests if requested == path]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FileServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _respond(self, handler, path, *, status=None, cut_after=None, body=None):
        file = self.root / path
        if status is None and not file.is_file():
            status = 404
        if status is not None:
            handler.send_response(status)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        data = file.read_bytes() if body is None else body
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        asked, condition = handler.headers.get("Range"), handler.headers.get("If-Range")
        start = 0
        if asked and condition in (None, etag):
            start = int(asked.removeprefix("bytes=").split("-", 1)[0])
            if start >= len(data):
                handler.send_response(416)
                handler.send_header("Content-Range", f"bytes */{len(data)}")
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            handler.send_response(200)
        handler.send_header("ETag", etag)
        handler.send_header("Content-Length", str(len(data) - start))
        handler.end_headers()
        sent = data[start:] if cut_after is None else data[start : start + cut_after]
        handler.wfile.write(sent)
        handler.wfile.flush()
        if cut_after is not None:
            handler.close_connection = True
