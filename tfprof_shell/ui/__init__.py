"""`tfprof ui`: the shell's views in a web browser, served from this process.

The server (server.py, Werkzeug) is one more door on the session: the page
sends literal shell lines, runner.py runs them through the session's own
parser and engine and answers with compact columns (columns.py). guard.py
holds the safety rules (token cookie, Host allow-list, CSP, same-origin
POST). The page itself is plain JavaScript modules and CSS under static/.
"""

from __future__ import annotations

from ..errors import UsageError

#: What to run when the server's libraries are missing.
INSTALL_HINT = "pip install 'tfprof-shell[ui]'"


def require_server() -> None:
    """Raise UsageError with the install line unless the web server library is importable."""
    try:
        import werkzeug  # noqa: F401
    except ImportError:
        raise UsageError("the web UI needs Werkzeug: %s" % INSTALL_HINT) from None
