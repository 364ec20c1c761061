"""The web UI's loading page in a real Chromium: progress while `tfprof ui` loads, then the
views; the error when loading fails."""

from __future__ import annotations

import io

import pytest

from conftest import needs, sample

pytestmark = pytest.mark.browser
needs("playwright.sync_api", "browser")

from tfprof_shell.cli import open_session, parse_invocation  # noqa: E402
from tfprof_shell.load.progress import BYTES  # noqa: E402
from tfprof_shell.ui.loading import LoadingState  # noqa: E402
from tfprof_shell.ui.runner import LineRunner  # noqa: E402
from tfprof_shell.ui.server import UiServer  # noqa: E402

@pytest.fixture
def pending():
    loading = LoadingState()
    server = UiServer(None, log=io.StringIO(), loading=loading).start()
    yield server, loading
    server.stop()


def test_the_page_shows_loading_progress_then_the_views(browser, pending):
    server, loading = pending
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    loading.begin("trace.pt.trace.json", 200e6, BYTES)
    loading.update(50e6)
    page.goto(server.url)
    page.locator("#loading-figures", has_text="25%").wait_for()
    assert "Loading trace.pt.trace.json" in page.inner_text("#loading-what")
    assert "50 of 200 MB" in page.inner_text("#loading-figures")
    assert page.eval_on_selector("#loading-bar", "b => b.value / b.max") == 0.25

    session = open_session(parse_invocation(["--profile_path=" + sample("tiny_mlp", "profile")]),
                           io.StringIO())
    server.app.ready(LineRunner(session))
    page.wait_for_selector("#tabs", timeout=10_000)  # the real page, opened by itself
    assert errors == []


def test_a_failed_load_is_shown_on_the_page(browser, pending):
    server, loading = pending
    page = browser.new_page()
    page.goto(server.url)
    page.wait_for_selector("#loading-figures")
    loading.fail("--profile_path x.json: not valid JSON: Expecting value")
    page.wait_for_selector("#loading-figures.error")
    assert page.inner_text("#loading-figures") == (
        "Loading failed: --profile_path x.json: not valid JSON: Expecting value")


def test_a_link_to_a_view_opens_that_view_once_loaded(browser, pending):
    # the URL the user opened (page and line) survives the loading page: the app it hands
    # over to shows that view, with no history entry for the loading page
    server, loading = pending
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    loading.begin("trace.pt.trace.json.gz", 10e6, BYTES)
    page.goto(server.url + "&page=memory&line=memory+-by+code")
    page.wait_for_selector("#loading-figures")
    length = page.evaluate("history.length")
    session = open_session(parse_invocation(["--profile_path=" + sample("memory", "torch_leak")]),
                           io.StringIO())
    server.app.ready(LineRunner(session))
    page.wait_for_function("() => window.tfprofApp && window.tfprofApp.painted", timeout=20_000)
    assert page.evaluate("window.tfprofApp.painted.page") == "memory"
    assert page.evaluate("window.tfprofApp.painted.line") == "memory -by code"
    assert "error" not in page.evaluate("window.tfprofApp.painted")
    assert page.url.endswith("/?page=memory&line=memory+-by+code")
    assert page.input_value("#cmd") == "memory -by code"
    assert page.evaluate("history.length") == length
    assert page.locator("#page-memory .mem-live tr.row").count() > 0
    assert errors == []
