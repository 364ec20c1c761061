"""`tfprof ui [INPUTS] [--port N] [--host ADDR] [--no-browser]`: load, serve, wait.

Inputs are parsed by cli.py exactly as `tfprof` parses them, except that
``--host`` here is the address to listen on; the xplane host filter that
`tfprof` calls ``--host`` is spelled ``--xplane_host`` after ``ui``.
"""

from __future__ import annotations

import argparse
import os
import time
import webbrowser
from typing import Any, Callable, Optional, Sequence, TextIO

from ..errors import UsageError, UserError
from ..load.progress import Progress
from . import INSTALL_HINT, guard, require_server

#: Seconds a failed load keeps serving, so that an open page can show the error.
_LAST_WORD = 1.5


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise UsageError("ui: " + message)


def _ui_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tfprof ui", add_help=False, allow_abbrev=False)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--no-browser", "--no_browser", dest="no_browser", action="store_true")
    p.add_argument("--xplane_host", default=None)
    p.add_argument("-h", "--help", action="store_true")
    return p


USAGE = """usage: tfprof ui [INPUTS] [--port N] [--host ADDR] [--no-browser]

Serve the loaded profiles to a web browser. INPUTS are tfprof's (see
tfprof --help): --profile_path, --profile NAME=PATH, --graph_path ...,
--base_profile_path, starting options such as --max_depth=4.

  --port N        port to listen on (default: a free one)
  --host ADDR     address to listen on (default 127.0.0.1; anything else
                  keeps the token and prints a warning)
  --no-browser    do not open a browser
  --xplane_host H with .xplane.pb profiles, load only these hosts
                  (tfprof's --host)

Needs %s.
""" % INSTALL_HINT


def ssh_hint(port: int, environ: Optional[dict] = None) -> str:
    """The `ssh -L` line that reaches the UI from the user's machine, or "" if not over SSH."""
    env = os.environ if environ is None else environ
    conn = env.get("SSH_CONNECTION", "").split()
    if len(conn) < 3:
        return ""
    user = env.get("USER") or env.get("LOGNAME") or ""
    server = conn[2]
    return ("over SSH: on your machine run  ssh -N -L %d:127.0.0.1:%d %s%s  then open the "
            "URL above" % (port, port, user + "@" if user else "", guard.url_host(server)))


def announce(url: str, host: str, port: int, out: TextIO) -> None:
    """Print the URL, the SSH line if any, and the warning for a non-loopback address."""
    out.write("tfprof ui: serving at %s\n" % url)
    hint = ssh_hint(port)
    if hint:
        out.write("tfprof ui: %s\n" % hint)
    if not guard.is_loopback(host):
        out.write("tfprof ui: warning: listening on %s, reachable from other machines; "
                  "anyone with the URL's token can read these profiles\n" % host)
    out.flush()


def parse_flags(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """Split `tfprof ui` arguments into the UI's flags and tfprof's own (inputs, options).

    ``--xplane_host H`` comes back as tfprof's ``--host=H``.
    """
    flags, rest = _ui_parser().parse_known_args(list(argv))
    if not 0 <= flags.port <= 65535:
        raise UsageError("ui: --port takes 0..65535, got %d" % flags.port)
    if flags.xplane_host is not None:
        rest = list(rest) + ["--host=" + flags.xplane_host]
    return flags, list(rest)


def serve(open_session: Callable[[Progress], Any], flags: argparse.Namespace,
          stdout: TextIO, stderr: TextIO) -> int:
    """Serve until Ctrl-C: print the URL, open a browser unless told not to, then load.

    The page shows the loading's progress (``open_session`` is given a
    Progress to report to and returns the Session) and the views once it is
    done. A failed load is raised here, after an open page had a moment to
    show it.
    """
    require_server()
    from .loading import LoadingState
    from .runner import LineRunner
    from .server import UiServer
    loading = LoadingState()
    try:
        server = UiServer(None, flags.host, flags.port, stderr, loading)
    except OSError as exc:
        raise UsageError("ui: cannot listen on %s:%d: %s"
                         % (flags.host, flags.port, exc.strerror or exc)) from None
    server.start()
    try:
        announce(server.url, flags.host, server.port, stdout)
        if not flags.no_browser and not os.environ.get("SSH_CONNECTION"):
            webbrowser.open(server.url)
        try:
            session = open_session(loading)
        except UserError as exc:
            loading.fail(exc.message)
            if loading.watched():
                time.sleep(_LAST_WORD)
            raise
        server.app.ready(LineRunner(session))
        server.wait()
    except KeyboardInterrupt:
        stdout.write("tfprof ui: stopped\n")
    finally:
        server.stop()
    return 0
