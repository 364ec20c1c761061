"""The web UI's HTTP server: a Werkzeug WSGI application and its thread.

Routes: ``/`` (the page; ``?token=`` is exchanged for the cookie),
``/static/NAME`` (package files), ``GET /api/state|controls|trace|progress``
and ``POST /api/run|complete|details|timeline|timeline/event|timeline/range|kernel|
steps/segment``. While the profiles are still loading (no runner yet), ``/`` is the
loading page, ``/api/progress`` says how far loading got and the other routes answer
503. Every route needs the
cookie and an allowed Host (guard.py); POSTs also need a same-origin
Origin and a JSON body. A user mistake is a 400 with the shell's one-line
message; anything else is a 500 with one line, and the server goes on.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import threading
from typing import Any, Callable, Optional, TextIO
from urllib.parse import urlencode

from werkzeug.exceptions import HTTPException
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from ..errors import UserError
from . import guard
from .controls import controls_document
from .lookups import kernel_facts, step_segment
from .loading import LoadingState
from .runner import LineRunner
from .timeline import timeline_event, timeline_range, timeline_window, trace_json

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_STATIC_NAME = re.compile(r"[a-z_]+\.(js|css|svg|png|html)\Z")
_TYPES = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
          "svg": "image/svg+xml", "png": "image/png", "html": "text/html; charset=utf-8"}
#: Larger POST bodies are refused (a line and a few numbers are all the page sends).
MAX_BODY = 64 * 1024
_GZIP_OVER = 1400


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass


class UiApp:
    """The WSGI application: guard every request, then route it to the runner."""

    def __init__(self, runner: Optional[LineRunner], token: str, hosts: frozenset[str],
                 log: Optional[TextIO] = None, loading: Optional[LoadingState] = None) -> None:
        #: None while the profiles load (see :meth:`ready`).
        self.runner: Any = runner
        self.loading = loading
        self.token = token
        self.hosts = hosts
        self.log = log
        self._controls: Optional[dict[str, Any]] = None
        self._get: dict[str, Callable[[Request], Response]] = {
            "/api/state": lambda r: _json(r, self.runner.state()),
            "/api/controls": lambda r: _json(r, self.controls()),
            "/api/trace": self._trace,
        }
        self._post: dict[str, Callable[[Request, dict], Response]] = {
            "/api/run": lambda r, b: _json(r, self.runner.run(
                _str(b, "line"), bool(b.get("text")), bool(b.get("document")),
                bool(b.get("starts")))),
            "/api/kernel": lambda r, b: _json(r, kernel_facts(self.runner, _str(b, "name"))),
            "/api/steps/segment": lambda r, b: _json(r, step_segment(
                self.runner, _str(b, "profile"), _int(b, "step"), _str(b, "device"),
                _str(b, "part"))),
            "/api/complete": lambda r, b: _json(r, self.runner.complete(_str(b, "text"))),
            "/api/details": lambda r, b: _json(r, self.runner.details(_str(b, "line"),
                                                                      _int(b, "row"))),
            "/api/timeline": lambda r, b: _json(r, timeline_window(
                self.runner, _str(b, "line"), _num(b, "t0", None), _num(b, "t1", None),
                int(_num(b, "width", 1000)), _strs(b, "collapsed"))),
            "/api/timeline/event": lambda r, b: _json(r, timeline_event(
                self.runner, _str(b, "line"), _int(b, "event"))),
            "/api/timeline/range": lambda r, b: _json(r, timeline_range(
                self.runner, _str(b, "line"), _num(b, "t0", 0), _num(b, "t1", 0),
                _ints(b, "lanes"))),
        }

    def ready(self, runner: LineRunner) -> None:
        """The profiles are loaded: serve them through ``runner``."""
        self.runner = runner
        if self.loading is not None:
            self.loading.finish()

    def _progress(self, request: Request) -> Response:
        if self.loading is not None:
            return _json(request, self.loading.snapshot())
        return _json(request, {"ready": self.runner is not None, "error": None})

    def controls(self) -> dict[str, Any]:
        if self._controls is None:
            self._controls = controls_document()
        return self._controls

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        request = Request(environ)
        request.max_content_length = MAX_BODY
        try:
            response = self.dispatch(request)
        except UserError as exc:
            response = _error(400, exc.message)
        except HTTPException as exc:
            response = _error(exc.code or 400, exc.description or exc.name)
        except Exception as exc:  # a bug: say so in one line, keep serving
            if self.log is not None:
                self.log.write("tfprof ui: internal error on %s: %s: %s\n"
                               % (request.path, type(exc).__name__, exc))
            response = _error(500, "internal error: %s: %s" % (type(exc).__name__, exc))
        response.headers.update(guard.SECURITY_HEADERS)
        return response(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        host = request.headers.get("Host", "")
        if host not in self.hosts:
            return _error(403, "forbidden: unexpected Host header (open the URL tfprof printed)")
        token = request.args.get("token")
        if request.path == "/" and request.method == "GET" and token is not None:
            if not guard.token_matches(token, self.token):
                return _error(403, "forbidden: wrong token (open the URL tfprof printed)")
            kept = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
            response = Response("", 303, headers={
                "Location": "/" + ("?" + urlencode(kept) if kept else "")})
            response.headers["Set-Cookie"] = guard.cookie_header(self.token)
            return response
        if not guard.token_matches(request.cookies.get(guard.COOKIE), self.token):
            return _error(403, "forbidden: no valid session cookie (open the URL tfprof "
                               "printed, with its token)")
        if request.method == "POST":
            return self._dispatch_post(request, host)
        if request.method not in ("GET", "HEAD"):
            return _error(405, "method not allowed")
        if request.path == "/api/progress":
            return self._progress(request)
        if self.runner is None and not request.path.startswith("/static/"):
            if request.path == "/":
                return _static("loading.html")
            return _error(503, "the profiles are still loading")
        if request.path == "/":
            return _static("index.html")
        if request.path.startswith("/static/"):
            return _static(request.path[len("/static/"):])
        handler = self._get.get(request.path)
        if handler is None:
            return _error(404 if request.path not in self._post else 405,
                          "not found" if request.path not in self._post
                          else "method not allowed: %s takes POST" % request.path)
        return handler(request)

    def _dispatch_post(self, request: Request, host: str) -> Response:
        if not guard.same_origin(request.headers, host):
            return _error(403, "forbidden: cross-origin request")
        if self.runner is None and request.path in self._post:
            return _error(503, "the profiles are still loading")
        handler = self._post.get(request.path)
        if handler is None:
            return _error(404 if request.path not in self._get else 405, "not found")
        if request.mimetype != "application/json":
            return _error(415, "send JSON (Content-Type: application/json)")
        try:
            body = json.loads(request.get_data(cache=False) or b"{}")
        except ValueError:
            return _error(400, "the request body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the request body is not a JSON object")
        return handler(request, body)

    def _trace(self, request: Request) -> Response:
        line = request.args.get("line", "")
        data, name = trace_json(self.runner, line)
        return Response(data, 200, mimetype="application/json", headers={
            "Content-Disposition": 'attachment; filename="%s"' % name})


def _str(body: dict, key: str) -> str:
    value = body.get(key, "")
    if not isinstance(value, str):
        raise UserError("%s: expected a string" % key)
    return value


def _int(body: dict, key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise UserError("%s: expected an integer" % key)
    return value


def _strs(body: dict, key: str) -> list[str]:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError("%s: expected a list of strings" % key)
    return value


def _ints(body: dict, key: str) -> list[int]:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in value):
        raise UserError("%s: expected a list of integers" % key)
    return value


def _num(body: dict, key: str, default: Any) -> Any:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        raise UserError("%s: expected a number" % key)
    return value


def _json(request: Request, data: Any) -> Response:
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode()
    headers = {}
    if len(raw) > _GZIP_OVER and "gzip" in request.headers.get("Accept-Encoding", ""):
        raw = gzip.compress(raw, compresslevel=1)
        headers["Content-Encoding"] = "gzip"
    return Response(raw, 200, mimetype="application/json", headers=headers)


def _error(code: int, message: str) -> Response:
    return Response(json.dumps({"error": message}), code, mimetype="application/json")


def _static(name: str) -> Response:
    path = os.path.join(STATIC_DIR, name)
    if not _STATIC_NAME.match(name) or not os.path.isfile(path):
        return _error(404, "not found")
    with open(path, "rb") as f:
        data = f.read()
    return Response(data, 200, content_type=_TYPES[name.rsplit(".", 1)[1]])


class UiServer:
    """A running server: its URL (with the token) and a stop()."""

    def __init__(self, runner: Optional[LineRunner], host: str = "127.0.0.1", port: int = 0,
                 log: Optional[TextIO] = None, loading: Optional[LoadingState] = None) -> None:
        self.token = guard.new_token()
        self.app = UiApp(runner, self.token, frozenset(), log, loading)
        self.httpd = make_server(host, port, self.app, threaded=True,
                                 request_handler=_QuietHandler)
        self.host = host
        self.port = self.httpd.server_port
        self.app.hosts = guard.allowed_hosts(host, self.port)
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        """The URL to open: it carries the token."""
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return "http://%s:%d/?token=%s" % (guard.url_host(shown), self.port, self.token)

    def start(self) -> "UiServer":
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="tfprof-ui",
                                        daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self.httpd.serve_forever()

    def wait(self) -> None:
        """Wait (interruptibly) while the thread of :meth:`start` serves."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.5)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def start_server(session: Any, host: str = "127.0.0.1", port: int = 0,
                 log: Optional[TextIO] = sys.stderr) -> UiServer:
    """A server on ``session`` listening in a background thread."""
    return UiServer(LineRunner(session), host, port, log).start()
