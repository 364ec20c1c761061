"""The web UI's loading page in a real Chromium: progress while `tfprof ui` loads, then the
views; the error when loading fails."""

from __future__ import annotations

import io
import os
import shutil

import pytest

from conftest import needs, sample

pytestmark = pytest.mark.browser
sync_api = needs("playwright.sync_api", "browser")

from tfprof_shell.cli import open_session, parse_invocation  # noqa: E402
from tfprof_shell.load.progress import BYTES  # noqa: E402
from tfprof_shell.ui.loading import LoadingState  # noqa: E402
from tfprof_shell.ui.runner import LineRunner  # noqa: E402
from tfprof_shell.ui.server import UiServer  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


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
