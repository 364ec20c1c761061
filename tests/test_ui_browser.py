"""The web UI in a real Chromium (Debian's, driven by Playwright): every page paints
on the sample profiles, what it shows is the shell's, and it never leaves 127.0.0.1.

Screenshots go to a temporary folder; with TFPROF_UI_SCREENSHOTS=DIR they go to
DIR (docs/images is made that way, see docs/web-ui.md).
"""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import needs, run_cli, sample
from hostile_names import HOSTILE, hostile_trace

pytestmark = pytest.mark.browser
needs("playwright.sync_api", "browser")

from ui_tab import Tab, ui_server  # noqa: E402


def _path(name: str) -> str:
    """A sample's path relative to the working directory (the page shows it)."""
    return os.path.relpath(sample(name, "profile"))


ARGV = ["--profile_path=" + _path("mlp_after"), "--profile", "before=" + _path("mlp_before"),
        "--profile", "w0=" + _path("mlp_worker0"), "--profile", "w1=" + _path("mlp_worker1")]
PAGES = ["overview", "views", "flame", "timeline", "steps", "kernels", "memory", "compare",
         "ranks", "advise"]
_server = ui_server


@pytest.fixture(scope="module")
def server():
    srv = _server(ARGV)
    yield srv
    srv.stop()


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


#: Pages whose screenshot in docs/images is of these profiles (the GPU pages' are made by
#: test_ui_browser_gpu.py on torch_cnn).
SHOTS = ("views", "compare", "advise")


def test_every_page_paints_offline(tab, shots):
    for name in PAGES:
        done = tab.open(name)
        assert done["ms"] < 10000
        if name in SHOTS:
            tab.page.wait_for_timeout(200)
            tab.page.screenshot(path=os.path.join(shots, "%s.png" % name))
    assert tab.page.inner_text("#profile-info").startswith("4 profiles")


def test_the_views_table_is_the_shells_view(tab):
    line = "scope -max_depth 3 -order_by micros"
    tab.type_line(line)
    tab.painted("views", line)
    tab.page.click("#views-expand")
    tab.frames()
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
    cells = tab.page.eval_on_selector_all(
        "#rk-heatmap rect.cell", "e => e.map(c => [c.dataset.rank, +c.dataset.step, +c.dataset.us])")
    assert len(cells) == 4 * 3  # four profiles, three steps each
    doc = json.loads(run_cli(ARGV + ["steps", "-profiles", "all", "-output", "json"]).out)
    assert sorted(cells) == sorted([name, s["step"], s["wall"]]
                                   for name, d in doc["profiles"].items() for s in d["steps"])
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
        t.frames()
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


# -- defects of issue 40 ---------------------------------------------------------

@pytest.mark.parametrize("page", ["views", "flame", "timeline"])
def test_a_bad_line_leaves_the_url_and_the_view(tab, page):
    good = "scope -max_depth 2" if page != "timeline" else "graph -step 1"
    tab.goto("page=%s&line=%s" % (page, good.replace(" ", "+")), page, good)
    url = tab.page.url
    tab.forget()
    tab.page.fill("#cmd", "scope -max_depth abc")
    tab.page.press("#cmd", "Enter")
    tab.page.wait_for_selector("#status.error")
    assert "max_depth" in tab.page.inner_text("#status")
    tab.page.wait_for_timeout(200)
    assert tab.page.url == url
    assert tab.page.input_value("#cmd") == good
    assert tab.page.evaluate("() => window.tfprofApp.line") == good
    assert tab.page.is_visible("#page-" + page)
    tab.page.reload()
    assert tab.painted(page, good)["line"] == good


def test_the_diff_flame_graph_gives_a_gone_frame_its_width_and_has_a_legend(tab, shots):
    line = "scope -base before -max_depth 3"
    tab.goto("page=flame&line=" + line.replace(" ", "+"), "flame", line)
    doc = json.loads(run_cli(ARGV + line.split(" ") + ["-output", "json"]).out)
    gone = next(c for c in doc["root"]["children"] if c["status"] == "-")
    widths = tab.page.evaluate(
        """(name) => { const f = window.tfprofApp.flame, t = f.tree;
             const w = (i) => f.frames.filter((x) => x[0] === i).map((x) => x[2] - x[1])[0] || 0;
             let row = -1; for (let i = 0; i < t.n; i++) if (t.name(i) === name) row = i;
             return [w(row), w(0)]; }""", gone["name"])
    root = doc["root"]
    base_root = root["base_total"]["micros"]
    biggest = max(root["total"]["micros"], base_root)
    assert widths[0] > 0
    assert abs(widths[0] / widths[1] - gone["base_total"]["micros"] / biggest) < 0.02
    legend = tab.page.inner_text("#flame-legend")
    assert "slower" in legend and "faster" in legend and "new" in legend and "gone" in legend
    tab.page.screenshot(path=os.path.join(shots, "flame.png"))


def test_back_and_forward_move_between_views(tab):
    tab.type_line("scope -max_depth 2")
    tab.painted("views", "scope -max_depth 2")
    tab.open("flame")
    tab.type_line("code -max_depth 4")
    tab.painted("flame", "code -max_depth 4")
    tab.open("timeline")
    for page, line in (("flame", "code -max_depth 4"), ("flame", "scope -max_depth 2"),
                       ("views", "scope -max_depth 2")):
        tab.forget()
        tab.page.go_back()
        assert tab.painted(page, line)["line"] == line
        assert tab.page.input_value("#cmd") == line
        assert tab.page.is_visible("#page-" + page)
    tab.forget()
    tab.page.go_forward()
    assert tab.painted("flame", "scope -max_depth 2")
    assert "127.0.0.1" in tab.page.url  # never out of the app


def test_filters_are_chips_that_come_off(tab):
    line = "scope -max_depth 3 -hide_name_regexes ^layer1$,^loss$ -show_name_regexes l.*"
    tab.goto("page=views&line=" + line.replace(" ", "+").replace(",", "%2C").replace("^", "%5E")
             .replace("$", "%24"), "views", line)
    chips = tab.page.eval_on_selector_all("#chips .chip", "e => e.map(c => c.title)")
    assert chips == ["-show_name_regexes l.*", "-hide_name_regexes ^layer1$",
                     "-hide_name_regexes ^loss$"]
    tab.forget()
    tab.page.click("#chips .chip:has-text('^layer1$') .chip-x")
    done = tab.painted("views")
    assert done["line"] == "scope -max_depth 3 -show_name_regexes l.* -hide_name_regexes ^loss$"
    tab.forget()
    tab.page.click("#chips .chip-reset")
    assert tab.painted("views")["line"] == "scope -max_depth 3"
    assert tab.page.is_hidden("#chips")


def test_the_table_order_and_the_threshold_are_in_the_url(tab):
    tab.type_line("scope -max_depth 2")
    tab.painted("views", "scope -max_depth 2")
    tab.page.click("#views-table .tt-h[data-col='total:micros']")
    tab.page.click("#views-table .tt-h[data-col='total:micros']")  # ascending
    assert "sort=total%3Amicros%3A1" in tab.page.url
    tab.frames()
    order = [r[0] for r in tab.rows()]
    tab.forget()
    tab.page.reload()
    tab.painted("views")
    assert [r[0] for r in tab.rows()] == order
    line = "scope -base before -max_depth 3"
    tab.goto("page=compare&line=" + line.replace(" ", "+"), "compare", line)
    tab.page.fill("#cmp-threshold", "100")
    tab.page.dispatch_event("#cmp-threshold", "change")
    assert "threshold=100" in tab.page.url
    tab.page.evaluate("""() => { window.tfprofApp.tables['cmp-table'].expandAll();
        return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }""")
    shown = tab.rows("#cmp-table")
    doc = json.loads(run_cli(ARGV + line.split(" ") + ["-output", "json"]).out)

    def kept(node):  # rows whose |delta| is at least the threshold, and their ancestors
        below = [k for c in node["children"] for k in kept(c)]
        mine = abs(node["delta_total"]["micros"]) >= 100
        return ([node["name"]] if mine or below else []) + below
    assert sorted(r[0] for r in shown[1:]) == sorted(kept(doc["root"])[1:])
    slower = tab.page.eval_on_selector_all("#cmp-slower li, #cmp-faster li", "e => e.length")
    tab.forget()
    tab.page.reload()
    tab.painted("compare", line)
    assert tab.page.input_value("#cmp-threshold") == "100"
    tab.page.evaluate("""() => { window.tfprofApp.tables['cmp-table'].expandAll();
        return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }""")
    assert len(tab.rows("#cmp-table")) == len(shown)
    assert tab.page.eval_on_selector_all("#cmp-slower li, #cmp-faster li", "e => e.length") \
        == slower


def test_compare_with_one_profile_is_the_last_step_against_the_one_before(browser):
    srv = _server(["--profile_path=" + _path("tiny_mlp")])
    try:
        t = Tab(browser, srv)
        t.open("compare")
        line = t.page.evaluate("() => window.tfprofApp.line")
        assert "-step 2" in line and "-base_step 1" in line and "-base tiny_mlp" in line
        t.close()
    finally:
        srv.stop()


def test_flame_in_time_order_with_a_sandwich_and_a_metric(tab):
    line = "scope -max_depth 100 -step 1"
    tab.goto("page=flame&line=" + line.replace(" ", "+"), "flame", line)
    tab.forget()
    tab.page.select_option("#flame-order", "time")
    tab.painted("flame")
    assert "sort=time" in tab.page.url
    order = tab.page.evaluate(
        """() => { const f = window.tfprofApp.flame, t = f.tree;
             return f.frames.filter((x) => t.parent[x[0]] === 0).sort((a, b) => a[1] - b[1])
               .map((x) => [t.name(x[0]), f.starts[x[0]]]); }""")
    starts = [s for _, s in order if s >= 0]
    assert len(starts) > 3 and starts == sorted(starts)
    # a click shows the frame's sandwich: callers above it, callees below it
    box = tab.page.locator("#flame canvas").bounding_box()
    tab.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + 18 * 1.5)
    tab.page.wait_for_selector("#flame-sandwich h3")
    assert tab.page.inner_text("#flame-sandwich h3").startswith("Sandwich of ")
    assert tab.page.eval_on_selector_all("#flame-sandwich canvas", "e => e.length") == 2
    tab.forget()
    tab.page.select_option("#flame-metric", "cpu_micros")
    done = tab.painted("flame")
    assert "-order_by cpu_micros" in done["line"] and "cpu_micros" in done["line"].split(
        "-select ")[1]
    assert tab.page.evaluate("() => window.tfprofApp.flame.attr") == "cpu_micros"


def test_tab_completes_node_names(tab):
    tab.page.fill("#cmd", "scope -hide_name_regexes ^lay")
    tab.page.press("#cmd", "Tab")
    tab.page.wait_for_selector("#completions li")
    items = tab.page.eval_on_selector_all("#completions .c-text", "e => e.map(x => x.textContent)")
    assert "layer1" in items
    tab.page.dispatch_event("#completions li >> nth=0", "mousedown")
    assert tab.page.input_value("#cmd").startswith("scope -hide_name_regexes ^layer")
