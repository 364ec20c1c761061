"""The web UI in a real Chromium (Debian's, driven by Playwright): every page paints
on the sample profiles, what it shows is the shell's, and it never leaves 127.0.0.1.

Screenshots go to a temporary folder; with TFPROF_UI_SCREENSHOTS=DIR they go to
DIR (docs/images is made that way, see docs/web-ui.md).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil

import pytest

from conftest import needs, run_cli, sample
from hostile_names import HOSTILE, hostile_trace

pytestmark = pytest.mark.browser
sync_api = needs("playwright.sync_api", "browser")

from tfprof_shell.cli import open_session, parse_invocation  # noqa: E402
from tfprof_shell.ui.server import start_server  # noqa: E402



def _path(name: str) -> str:
    """A sample's path relative to the working directory (the page shows it)."""
    return os.path.relpath(sample(name, "profile"))


ARGV = ["--profile_path=" + _path("mlp_after"), "--profile", "before=" + _path("mlp_before"),
        "--profile", "w0=" + _path("mlp_worker0"), "--profile", "w1=" + _path("mlp_worker1")]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PAGES = ["overview", "views", "flame", "timeline", "compare", "ranks", "advise"]


def _server(argv):
    return start_server(open_session(parse_invocation(argv), io.StringIO()), log=io.StringIO())


@pytest.fixture(scope="module")
def server():
    srv = _server(ARGV)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    path = shutil.which("chromium")
    if path is None:
        if "browser" in os.environ.get("TFPROF_TEST_REQUIRE", ""):
            pytest.fail("Debian's chromium is not installed")
        pytest.skip("chromium is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = os.environ.get("TFPROF_UI_SCREENSHOTS") or str(tmp_path_factory.mktemp("shots"))
    os.makedirs(folder, exist_ok=True)
    return folder


class Tab:
    """One browser page on a server, recording every request, error and dialog."""

    def __init__(self, browser, srv):
        self.srv = srv
        self.page = browser.new_page(viewport={"width": 1120, "height": 660})
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

    def painted(self, page=None, line=None):
        """Wait until the app says a page (and line) finished painting; its record."""
        self.page.wait_for_function(
            "([page, line]) => { const p = window.tfprofApp && window.tfprofApp.painted;"
            " return p && (!page || p.page === page) && (!line || p.line === line); }",
            arg=[page, line], timeout=30000)
        done = self.page.evaluate("() => window.tfprofApp.painted")
        assert "error" not in done, done
        return done

    def open(self, name):
        self.page.evaluate("() => { window.tfprofApp.painted = null; }")
        self.page.click("#tabs button[data-page=%s]" % name)
        return self.painted(name)

    def type_line(self, line):
        self.page.evaluate("() => { window.tfprofApp.painted = null; }")
        self.page.fill("#cmd", line)
        self.page.press("#cmd", "Enter")

    def rows(self, host="#views-table"):
        """The rows in sight, top to bottom: [name, cell, cell, ...]."""
        return self.page.evaluate(
            """(host) => [...document.querySelectorAll(host + ' .tt-row:not([hidden])')]
                 .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
                 .map((r) => [...r.children].map((c, k) => k ? c.textContent
                     : c.querySelector('.tt-name').textContent))""", host)

    def close(self):
        port = ":%d/" % self.srv.port
        assert all(u.startswith("http://127.0.0.1" + port) or u.startswith("data:")
                   for u in self.requests), [u for u in self.requests if "127.0.0.1" not in u]
        assert not self.errors and not self.dialogs, (self.errors, self.dialogs)
        self.page.close()


@pytest.fixture
def tab(browser, server):
    t = Tab(browser, server)
    yield t
    t.close()


def _shell_names(argv, line):
    """Node names in the order the shell prints them."""
    out = run_cli(argv + line.split(" ")).out
    body = out.split("node name |", 1)[1].split("\n")[1:]
    if line.startswith("op"):  # one row per op type, no root line
        return [ln.split()[0] for ln in body if ln.strip()]
    return [m.group(1) for m in (re.match(r"\s*(.*?) \(", ln) for ln in body if ln.strip()) if m]


def test_every_page_paints_offline(tab, shots):
    for name in PAGES:
        done = tab.open(name)
        assert done["ms"] < 10000
        tab.page.wait_for_timeout(200)
        tab.page.screenshot(path=os.path.join(shots, "%s.png" % name))
    assert tab.page.inner_text("#profile-info").startswith("4 profiles")


def test_the_views_table_is_the_shells_view(tab):
    line = "scope -max_depth 3 -order_by micros"
    tab.type_line(line)
    tab.painted("views", line)
    tab.page.click("#views-expand")
    tab.page.wait_for_timeout(100)
    shown = [r[0] for r in tab.rows()]
    assert shown == _shell_names(ARGV, line)[:len(shown)] and len(shown) > 10
    doc = json.loads(run_cli(ARGV + line.split(" ") + ["-output", "json"]).out)
    root_micros = doc["root"]["total"]["micros"]
    assert tab.rows()[0][1] == ("%dus" % root_micros if root_micros < 1000
                                else tab.rows()[0][1])


def test_sort_expand_and_collapse(tab):
    tab.type_line("scope -max_depth 2")
    tab.painted("views")
    before = [r[0] for r in tab.rows()]
    tab.page.click("#views-table .tt-h[data-col='total:micros']")
    tab.page.wait_for_timeout(100)
    rows = tab.rows()
    top = [r for r in rows[1:] if r[0] in before]
    doc = json.loads(run_cli(ARGV + ["scope", "-max_depth", "2", "-order_by", "micros",
                                     "-output", "json"]).out)
    expected = [c["name"] for c in doc["root"]["children"]]
    assert [r[0] for r in top][:5] == expected[:5]
    count = len(rows)
    tab.page.click("#views-table .tt-row:not([hidden]) .tt-toggle >> nth=0")  # the root
    tab.page.wait_for_timeout(100)
    assert len(tab.rows()) == 1
    tab.page.click("#views-table .tt-row:not([hidden]) .tt-toggle >> nth=0")
    tab.page.wait_for_timeout(100)
    assert len(tab.rows()) == count


def test_search_highlights_every_match(tab):
    tab.type_line("scope -max_depth 100")
    tab.painted("views")
    tab.page.fill("#views-search", "matmul")
    tab.page.press("#views-search", "Enter")
    found = int(tab.page.inner_text("#views-found").split()[0])
    names = _shell_names(ARGV, "scope -max_depth 100")
    assert found == sum("matmul" in n.lower() for n in names) > 0
    marks = tab.page.eval_on_selector_all("#views-table mark", "ms => ms.map(m => m.textContent)")
    assert marks and all(m.lower() == "matmul" for m in marks)


def test_the_row_menu_focuses_and_details_show_the_row(tab):
    tab.type_line("scope -max_depth 2")
    tab.painted("views")
    row = tab.page.locator("#views-table .tt-row:not([hidden])", has_text="layer1").first
    row.click()
    tab.page.wait_for_selector("#details .dname")
    assert tab.page.inner_text("#details .dname") == "layer1"
    row.click(button="right")
    tab.page.evaluate("() => { window.tfprofApp.painted = null; }")
    tab.page.click("#menu button:has-text('Focus')")
    done = tab.painted("views")
    assert done["line"] == "scope -max_depth 2 -start_name_regexes ^layer1$"
    assert tab.page.input_value("#cmd") == done["line"]
    assert "line=scope+-max_depth+2+-start_name_regexes" in tab.page.url
    assert [r[0] for r in tab.rows()][:1] == _shell_names(ARGV, done["line"])[:1]


def test_a_wrong_line_shows_the_shells_message(tab):
    tab.type_line("scope -max_depth 2")
    tab.painted("views")
    rows = tab.rows()
    for line in ("scope -max_depth x", "scpoe"):
        tab.page.evaluate("() => { window.tfprofApp.painted = null; }")
        tab.page.fill("#cmd", line)
        tab.page.press("#cmd", "Enter")
        tab.page.wait_for_selector("#status.error")
        expected = run_cli(ARGV + line.split(" ")).err.strip()[len("tfprof: "):]
        assert tab.page.inner_text("#status") == expected
    assert tab.rows() == rows  # the last good view stays


def test_completion_comes_from_the_shell(tab):
    tab.page.fill("#cmd", "scope -ord")
    tab.page.press("#cmd", "Tab")
    tab.page.wait_for_selector("#completions li")
    items = tab.page.eval_on_selector_all("#completions .c-text", "e => e.map(x => x.textContent)")
    assert items == ["-order_by"]
    tab.page.dispatch_event("#completions li >> nth=0", "mousedown")
    assert tab.page.input_value("#cmd") == "scope -order_by"


def test_the_line_in_the_url_reproduces_the_view(browser, server):
    t = Tab(browser, server)
    t.page.goto("http://127.0.0.1:%d/?page=views&line=op+-order_by+micros" % server.port)
    t.painted("views", "op -order_by micros")
    shown = [r[0] for r in t.rows()][1:]
    assert shown == _shell_names(ARGV, "op -order_by micros")[:len(shown)] and len(shown) > 5
    t.close()


def test_compare_shows_the_shells_diff(tab, shots):
    tab.page.goto("http://127.0.0.1:%d/?page=compare&line=scope+-base+before" % tab.srv.port)
    tab.painted("compare", "scope -base before")
    doc = json.loads(run_cli(ARGV + ["scope", "-base", "before", "-output", "json"]).out)
    rows = tab.rows("#cmp-table")
    delta = doc["root"]["delta_total"]["micros"]
    assert rows[0][0] == "_TFProfRoot"
    assert rows[0][4] == ("+" if delta > 0 else "-" if delta < 0 else "") + "%dus" % abs(delta) \
        or abs(delta) >= 1000
    slower = tab.page.eval_on_selector_all("#cmp-slower li", "e => e.length")
    faster = tab.page.eval_on_selector_all("#cmp-faster li", "e => e.length")
    assert slower + faster > 0
    tab.page.fill("#cmp-threshold", "1000000")
    tab.page.dispatch_event("#cmp-threshold", "change")
    tab.page.wait_for_timeout(100)
    assert len(tab.rows("#cmp-table")) < len(rows)


def test_ranks_switch_profiles(tab):
    tab.open("ranks")
    cells = tab.page.eval_on_selector_all("#rk-heatmap rect", "e => e.length")
    assert cells == 4 * 3  # four profiles, three steps each
    tab.page.evaluate("() => { window.tfprofApp.painted = null; }")
    tab.page.uncheck("#rk-profiles input[value=before]")
    done = tab.painted("ranks")
    assert "-profiles mlp_after,w0,w1" in done["line"]
    header = tab.page.eval_on_selector_all("#rk-table .tt-h", "e => e.map(x => x.textContent)")
    assert {"mlp_after", "w0", "w1"} <= set(header) and "before" not in header
    tab.page.evaluate("() => { window.tfprofApp.painted = null; }")
    tab.page.select_option("#rk-aggregate", "max")
    done = tab.painted("ranks")
    assert "-aggregate max" in done["line"]


def test_flame_and_timeline(tab):
    tab.type_line("code -max_depth 100")
    tab.painted("views")
    tab.open("flame")
    assert tab.page.input_value("#flame-view") == "code"
    tab.page.fill("#flame-search", "main")
    tab.page.press("#flame-search", "Enter")
    assert int(tab.page.inner_text("#flame-found").split()[0]) > 0
    tab.page.check("#flame-inverted")
    tab.type_line("scope")  # the command box runs the line on the page shown
    assert tab.painted("flame", "scope")
    tab.open("timeline")
    tab.page.wait_for_function("() => document.getElementById('tl-note').textContent.includes('lanes')")
    href = tab.page.get_attribute("#tl-download", "href")
    assert href.startswith("/api/trace?line=graph")
    note = tab.page.inner_text("#tl-note")
    tab.page.click("#tl-in")
    tab.page.wait_for_function("(n) => document.getElementById('tl-note').textContent !== n", arg=note)


def test_advise_links_ops_to_rows(tab):
    tab.open("advise")
    text = tab.page.inner_text("#advice")
    shell = run_cli(ARGV + ["advise"]).out
    for name in ("ExpensiveOperationChecker", "OperationChecker"):
        assert name in text and name in shell
    links = tab.page.eval_on_selector_all("#advice .line-link", "e => e.map(x => x.title)")
    assert links and all(link.startswith("op -show_name_regexes ^") for link in links)


def test_hostile_names_are_shown_as_text(browser, tmp_path):
    path = hostile_trace(tmp_path)
    srv = _server(["--profile_path=" + path])
    try:
        t = Tab(browser, srv)
        for name in PAGES:
            t.open(name)
        t.type_line("scope -max_depth 100")
        t.painted("views")
        t.page.click("#views-expand")
        t.page.wait_for_timeout(100)
        names = [r[0] for r in t.rows()]
        assert set(HOSTILE) <= set(names)
        t.page.locator(".tt-row", has_text="onerror").first.click()
        t.page.wait_for_selector("#details .dname")
        injected = t.page.evaluate(
            "() => document.querySelectorAll('#pages img, #pages script, #pages i, #pages b,"
            " #pages [onerror], #pages [onload], #pages [onmouseover]').length")
        assert injected == 0
        t.close()
    finally:
        srv.stop()
