"""What the browser tests of the web UI share: a server on some profiles, Debian's
Chromium driven by Playwright, and a tab that records every request, error and dialog."""

from __future__ import annotations

import io
import os
import shutil

import pytest

from tfprof_shell.cli import open_session, parse_invocation
from tfprof_shell.ui.server import start_server

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def ui_server(argv):
    """A UI server on a session opened from tfprof's argv (stop() it)."""
    return start_server(open_session(parse_invocation(argv), io.StringIO()), log=io.StringIO())


def launch_chromium(sync_api):
    """(playwright context manager, browser) on Debian's chromium; skip (or fail where
    TFPROF_TEST_REQUIRE names browser) without it."""
    path = shutil.which("chromium")
    if path is None:
        if "browser" in os.environ.get("TFPROF_TEST_REQUIRE", ""):
            pytest.fail("Debian's chromium is not installed")
        pytest.skip("chromium is not installed")
    manager = sync_api.sync_playwright()
    p = manager.__enter__()
    return manager, p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)


class Tab:
    """One browser page on a server, recording every request, error and dialog."""

    def __init__(self, browser, srv, query="", size=(1120, 660)):
        self.srv = srv
        self.page = browser.new_page(viewport={"width": size[0], "height": size[1]})
        self.requests, self.errors, self.dialogs = [], [], []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        # A Content-Security-Policy violation is reported as a console error; a 400 is
        # the server refusing a wrong line, which the tests type on purpose.
        self.page.on("console", lambda m: m.type == "error" and "status of 400" not in m.text
                     and self.errors.append(m.text))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(srv.url)
        self.painted()
        if query:
            self.goto(query)

    @property
    def base(self):
        return "http://127.0.0.1:%d/" % self.srv.port

    def goto(self, query, page=None, line=None):
        """Open ``/?query`` and wait for its view."""
        self.page.goto(self.base + "?" + query)
        return self.painted(page, line)

    def painted(self, page=None, line=None):
        """Wait until the app says a page (and line) finished painting; its record."""
        self.page.wait_for_function(
            "([page, line]) => { const p = window.tfprofApp && window.tfprofApp.painted;"
            " return p && (!page || p.page === page) && (!line || p.line === line); }",
            arg=[page, line], timeout=30000)
        done = self.page.evaluate("() => window.tfprofApp.painted")
        assert "error" not in done, done
        return done

    def frames(self):
        """Wait two animation frames: a table draws its rows in the next frame."""
        self.page.evaluate("() => new Promise((r) => requestAnimationFrame("
                           "() => requestAnimationFrame(r)))")

    def forget(self):
        self.page.evaluate("() => { window.tfprofApp.painted = null; }")

    def open(self, name):
        self.forget()
        self.page.click("#tabs button[data-page=%s]" % name)
        return self.painted(name)

    def type_line(self, line):
        self.forget()
        self.page.fill("#cmd", line)
        self.page.press("#cmd", "Enter")

    def rows(self, host="#views-table"):
        """The rows in sight, top to bottom: [name, cell, cell, ...]."""
        return self.page.evaluate(
            """(host) => [...document.querySelectorAll(host + ' .tt-row:not([hidden])')]
                 .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
                 .map((r) => [...r.children].map((c, k) => k ? c.textContent
                     : c.querySelector('.tt-name').title || c.querySelector('.tt-name').textContent))""", host)

    def close(self):
        port = ":%d/" % self.srv.port
        assert all(u.startswith("http://127.0.0.1" + port) or u.startswith("data:")
                   for u in self.requests), [u for u in self.requests if "127.0.0.1" not in u]
        assert not self.errors and not self.dialogs, (self.errors, self.dialogs)
        self.page.close()
