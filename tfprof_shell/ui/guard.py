"""The web UI's safety rules, as plain functions of a request's headers.

- a random token, given once in the printed URL and exchanged for an
  HttpOnly, SameSite=Strict cookie; every other request needs the cookie;
- a Host allow-list (the bound address and loopback names with the port),
  so a DNS-rebinding page cannot read the UI through another name;
- a strict Content-Security-Policy: only this server's own scripts, styles,
  images and connections; no inline script or style, no frames;
- requests that change anything are POSTs whose Origin is this server.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
from typing import Iterable, Mapping, Optional

COOKIE = "tfprof_ui"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
#: Headers sent with every answer.
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def new_token() -> str:
    """A fresh random token (URL-safe, 192 bits)."""
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """``host`` as written in a URL (IPv6 addresses in brackets)."""
    return "[%s]" % host if ":" in host and not host.startswith("[") else host


def allowed_hosts(bind: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """The Host header values accepted: loopback names and the bound address, with the port."""
    names = set(LOOPBACK_NAMES) | {url_host(bind)} | {url_host(e) for e in extra}
    if bind in ("0.0.0.0", "::", ""):
        names.discard(url_host(bind))
        names |= {url_host(n) for n in machine_names()}
    return frozenset("%s:%d" % (n, port) for n in names)


def machine_names() -> set[str]:
    """This machine's host names and addresses (for a server on all interfaces)."""
    names: set[str] = set()
    try:
        host = socket.gethostname()
        names |= {host, socket.getfqdn()}
        names |= set(socket.gethostbyname_ex(host)[2])
    except OSError:  # no resolver: the loopback names and the bound address remain
        pass
    return names


def token_matches(given: Optional[str], token: str) -> bool:
    """Constant-time comparison of a presented token with the server's."""
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def same_origin(headers: Mapping[str, str], host: str) -> bool:
    """True if a POST says it comes from this server's own page.

    Browsers send Origin on every cross-origin and same-origin POST made by
    fetch; Sec-Fetch-Site is checked too where the browser sends it.
    """
    origin = headers.get("Origin")
    if origin != "http://%s" % host:
        return False
    site = headers.get("Sec-Fetch-Site")
    return site in (None, "same-origin")


def cookie_header(token: str) -> str:
    """The Set-Cookie value that carries the token from then on."""
    return "%s=%s; HttpOnly; SameSite=Strict; Path=/" % (COOKIE, token)
