"""The web UI in Chromium on the GPU samples (PyTorch's torch_cnn, JAX's jax_gpt): the
timeline, the Steps and Kernels pages, the Overview's step chart, ranks.

Screenshots go to a temporary folder; with TFPROF_UI_SCREENSHOTS=DIR they go to DIR
(docs/images is made that way, see docs/web-ui.md).
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import needs, run_cli, sample

pytestmark = pytest.mark.browser
needs("playwright.sync_api", "browser")

from ui_tab import Tab, ui_server  # noqa: E402

TORCH = ["--profile_path=" + os.path.relpath(sample("torch_cnn"))]
JAX = ["--profile_path=" + os.path.relpath(sample("jax_gpt"))]


def _shot(tab, shots, name):
    tab.page.mouse.move(1, 1)  # no tooltip in the picture
    tab.page.wait_for_timeout(150)
    tab.page.screenshot(path=os.path.join(shots, name + ".png"))


@pytest.fixture(scope="module")
def torch_server():
    srv = ui_server(TORCH)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def jax_server():
    srv = ui_server(JAX)
    yield srv
    srv.stop()


@pytest.fixture
def torch_tab(browser, torch_server):
    t = Tab(browser, torch_server)
    yield t
    t.close()


def _steps(argv, extra=""):
    run = run_cli(argv + ("steps " + extra).split() + ["-output", "json"])
    assert run.code == 0, run.err
    return json.loads(run.out)


def _time(us):
    """The page's format.js time()."""
    def trim(v):
        return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v
    return trim(us / 1e6) + "sec" if us >= 1e6 else trim(us / 1e3) + "ms" if us >= 1e3 \
        else "%dus" % us


def test_the_overviews_step_chart_is_the_steps_tables(torch_tab, shots):
    torch_tab.open("overview")
    _shot(torch_tab, shots, "overview")
    doc = _steps(TORCH)
    titles = torch_tab.page.eval_on_selector_all("#ov-steps svg rect title",
                                                 "e => e.map(x => x.textContent)")
    for s in doc["steps"]:
        assert any(t.startswith("step %d: %s" % (s["step"], _time(s["wall"]))) for t in titles), \
            (s["step"], s["wall"], titles)


def _tl(tab, expression, arg=None):
    return tab.page.evaluate("(arg) => { const tl = window.tfprofApp.timeline; return %s; }"
                             % expression, arg)


@pytest.mark.parametrize("which,stream", [("torch", "gpu:0 stream 7"),
                                          ("jax", "gpu:0 stream 14 (Compute,Memset)")])
def test_the_timeline_has_stream_lanes_an_axis_and_flows_on_selection(
        browser, torch_server, jax_server, shots, which, stream):
    srv = torch_server if which == "torch" else jax_server
    tab = Tab(browser, srv, size=(1280, 800))
    tab.open("timeline")
    lanes = _tl(tab, "tl.data.lanes.map((l) => l.name)")
    assert stream in lanes
    ticks = _tl(tab, "tl.ticks.map((t) => t.label)")
    assert len(ticks) >= 4 and any(t.endswith("ms") for t in ticks)
    # zoom in, click a kernel on the stream's lane: the details pane names it, the flow
    # comes from its launch on a host thread
    for _ in range(4):
        tab.page.click("#tl-in")
    tab.page.wait_for_function("() => { const tl = window.tfprofApp.timeline, d = tl.data;"
                               " return !tl.busy() && (d.t1 - d.t0) * 10 < d.end - d.start; }")
    at = _tl(tab, "tl.locate(arg, 3)", stream)
    tab.page.mouse.click(at["x"], at["y"])
    tab.page.wait_for_selector("#tl-details .dname")
    flows = _tl(tab, "tl.flowsDrawn")
    assert len(flows) == 1
    assert flows[0]["to"]["lane"] == stream
    assert flows[0]["from"]["lane"] != stream
    assert tab.page.inner_text("#tl-details .dname") == flows[0]["to"]["name"]
    if which == "torch":
        _shot(tab, shots, "timeline")
    tab.close()


@pytest.mark.parametrize("which", ["torch", "jax"])
def test_a_dragged_range_lists_what_it_holds(browser, torch_server, jax_server, shots, which):
    torch_tab = Tab(browser, torch_server if which == "torch" else jax_server, size=(1280, 980))
    torch_tab.open("timeline")
    box = torch_tab.page.locator("#timeline canvas.tl-canvas").bounding_box()
    y = box["y"] + 40
    x0, x1 = box["x"] + box["width"] * 0.4, box["x"] + box["width"] * 0.6
    torch_tab.page.mouse.move(x0, y)
    torch_tab.page.mouse.down()
    torch_tab.page.mouse.move(x1, y, steps=5)
    torch_tab.page.mouse.up()
    torch_tab.page.wait_for_selector("#tl-range tr.agg")
    rows = torch_tab.page.eval_on_selector_all(
        "#tl-range tr.agg", "e => e.map(r => [...r.children].map(c => c.textContent))")
    assert len(rows) > 5
    names = [r[0] for r in rows]
    t0, t1 = _tl(torch_tab, "[tl.range.t0, tl.range.t1]")
    answer = torch_tab.page.evaluate(
        "([t0, t1]) => fetch('/api/timeline/range', {method: 'POST', headers: {'Content-Type':"
        " 'application/json'}, body: JSON.stringify({line: 'graph', t0: Math.round(t0),"
        " t1: Math.round(t1)})}).then((r) => r.json())", [t0, t1])
    assert names == [r["name"] for r in answer["rows"]]  # the server's aggregate, all of it
    if which == "torch":
        assert any("aten::" in n for n in names) and any("cuda" in n.lower() for n in names)
        _shot(torch_tab, shots, "timeline-range")
    else:
        assert any("fusion" in n for n in names) and "PjitFunction(train_step)" in names
    torch_tab.close()


def _segments(tab):
    return tab.page.eval_on_selector_all(
        "#steps-charts rect.seg", "e => e.map(r => [r.dataset.profile, r.dataset.step,"
        " r.dataset.device, r.dataset.part, +r.dataset.us])")


def _expected_segments(name, doc):
    out = []
    steps = [(str(s["step"]), s) for s in doc["steps"]] + [("avg", doc["average"])]
    for label, s in steps:
        for device, d in s["devices"].items():
            out += [[name, label, device, p, d[p]] for p in doc["device_parts"] if d[p]]
        out += [[name, label, "host", p, s["host"][p]] for p in doc["host_parts"]
                if s["host"][p]]
    return sorted(out)


@pytest.mark.parametrize("which", ["torch", "jax"])
def test_the_steps_page_draws_the_steps_document(browser, torch_server, jax_server, shots,
                                                which):
    srv, argv = (torch_server, TORCH) if which == "torch" else (jax_server, JAX)
    tab = Tab(browser, srv, "page=steps&line=steps")
    doc = _steps(argv)
    name = tab.page.evaluate("() => window.tfprofApp.state.current")
    got = _segments(tab)
    assert sorted(got) == _expected_segments(name, doc)
    bars = {(step, device) for _, step, device, *_ in got if device != "host"}
    assert len(bars) == (len(doc["steps"]) + 1) * len(doc["devices"])  # one per step and device
    # a compute segment lists the step's compute kernels, with the ops that launched them
    step = doc["steps"][0]["step"]
    tab.page.click("#steps-charts rect.seg[data-part=compute][data-step='%d']" % step)
    tab.page.wait_for_selector("#steps-segment tr.seg-row")
    listed = tab.page.eval_on_selector_all("#steps-segment tr.seg-row td:first-child",
                                           "e => e.map(c => c.title)")
    kernels = json.loads(run_cli(argv + ["kernels", "-step", str(step), "-output", "json"]).out)
    compute = {k["name"] for k in kernels["kernels"] if k["kind"] == "compute"}
    assert set(listed) == compute
    ops = tab.page.eval_on_selector_all("#steps-segment tr.seg-op td:first-child",
                                        "e => e.map(c => c.title)")
    assert ops and "(no launching op recorded)" not in ops
    if which == "torch":
        _shot(tab, shots, "steps")
    tab.close()


def test_ranks_steps_side_by_side(browser):
    argv = ["--profile_path=" + os.path.relpath(sample("torch_ranks"))]
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv, "page=steps&line=steps+-profiles+all")
        doc = _steps(argv, "-profiles all")
        assert sorted(_segments(tab)) == sorted(
            seg for name, d in doc["profiles"].items() for seg in _expected_segments(name, d))
        panels = tab.page.eval_on_selector_all(".steps-panel h3", "e => e.map(x => x.textContent)")
        assert panels == list(doc["profiles"])
        tab.close()
    finally:
        srv.stop()


@pytest.mark.parametrize("which", ["torch", "jax"])
def test_the_kernels_page_lists_what_kernels_lists(browser, torch_server, jax_server, shots,
                                                  which):
    srv, argv = (torch_server, TORCH) if which == "torch" else (jax_server, JAX)
    tab = Tab(browser, srv, "page=kernels&line=kernels")
    doc = json.loads(run_cli(argv + ["kernels", "-output", "json"]).out)
    rows = tab.page.eval_on_selector_all(
        "#k-table tr.k-row", "e => e.map(r => [r.querySelector('.k-name').title,"
        " ...[...r.children].slice(1).map(c => c.textContent)])")
    assert [r[0] for r in rows] == [k["name"] for k in doc["kernels"]]
    for r, k in zip(rows, doc["kernels"]):
        assert r[1:4] == [k["kind"], str(k["count"]), _time(k["total"])]
    # sorted by count, ascending on the second click; the order goes to the URL
    tab.page.click("#k-table th[data-col=count]")
    counts = tab.page.eval_on_selector_all("#k-table tr.k-row td:nth-child(3)",
                                           "e => e.map(c => +c.textContent)")
    assert counts == sorted(counts, reverse=True) and "sort=count" in tab.page.url
    # search, then a kernel's launch configuration and launching ops
    top = doc["kernels"][0]["name"]
    tab.page.fill("#k-search", top[:25])
    shown = tab.page.eval_on_selector_all("#k-table tr.k-row .k-name", "e => e.map(c => c.title)")
    assert top in shown and all(top[:25].lower() in n.lower() for n in shown)
    tab.page.click("#k-table tr.k-row >> nth=0")
    tab.page.wait_for_selector("#k-details table.config")
    config = tab.page.inner_text("#k-details table.config")
    assert "grid" in config and "block" in config and "registers" in config
    tab.page.wait_for_selector("#k-details tr.k-op")
    if which == "torch":
        tab.page.fill("#k-search", "")
        _shot(tab, shots, "kernels")
    tab.close()


def test_ranks_with_equal_times_name_no_slowest(browser, shots):
    # the two sample ranks are copies of one trace: every step is a tie
    argv = ["--profile_path=" + os.path.relpath(sample("torch_ranks"))]
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv)
        tab.open("ranks")
        cells = tab.page.eval_on_selector_all(
            "#rk-heatmap rect.cell", "e => e.map(c => [c.dataset.rank, +c.dataset.step,"
            " +c.dataset.us, c.classList.contains('tie'), c.classList.contains('slowest')])")
        doc = _steps(argv, "-profiles all")
        assert sorted(c[:3] for c in cells) == sorted(
            [n, s["step"], s["wall"]] for n, d in doc["profiles"].items() for s in d["steps"])
        assert all(c[3] and not c[4] for c in cells)
        legend = tab.page.evaluate("() => document.querySelector('#rk-heatmap .heatmap-box').textContent")
        assert "ms" in legend and "slowest" in legend
        assert tab.page.eval_on_selector_all("#rk-table .slowest", "e => e.length") == 0
        slowest = tab.page.eval_on_selector_all(
            "#rk-table .tt-row:not([hidden]) .tt-c:last-child", "e => e.map(c => c.textContent)")
        assert slowest and not any(slowest)
        _shot(tab, shots, "ranks")
        tab.close()
    finally:
        srv.stop()


def test_pytorch_profiles_speak_pytorchs_names(torch_tab):
    torch_tab.goto("page=views&line=scope+-max_depth+100", "views")
    rows = torch_tab.rows()
    assert rows[0][0] == "total"
    torch_tab.page.click("#views-expand")
    torch_tab.frames()  # the expanded rows are drawn in the next frame
    row = torch_tab.page.locator("#views-table .tt-row:not([hidden])", has_text="aten::").first
    row.click()
    torch_tab.page.wait_for_selector("#details .dname")
    details = torch_tab.page.inner_text("#details")
    assert "/job:" not in details and ("cpu:0" in details or "gpu:0" in details)


@pytest.mark.parametrize("which", ["torch", "jax"])
def test_a_bad_line_changes_nothing_and_back_returns(browser, torch_server, jax_server, which):
    tab = Tab(browser, torch_server if which == "torch" else jax_server, "page=steps&line=steps")
    tab.open("kernels")
    tab.open("timeline")
    url, line = tab.page.url, tab.page.evaluate("() => window.tfprofApp.line")
    for bad in ("scope -max_depth abc", "steps -step 99", "kernels -device gpu:7"):
        tab.forget()
        tab.page.evaluate("() => { document.getElementById('status').className = ''; }")
        tab.page.fill("#cmd", bad)
        tab.page.press("#cmd", "Enter")
        tab.page.wait_for_selector("#status.error")
        tab.page.wait_for_timeout(100)
        assert tab.page.url == url and tab.page.input_value("#cmd") == line
        assert tab.page.is_visible("#page-timeline")
    for page, line in (("kernels", "kernels"), ("steps", "steps")):
        tab.forget()
        tab.page.go_back()
        assert tab.painted(page, line) and tab.page.is_visible("#page-" + page)
    tab.close()


def test_the_ranks_page_shows_each_ranks_steps_side_by_side(browser):
    argv = ["--profile_path=" + os.path.relpath(sample("torch_ranks"))]
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv)
        tab.open("ranks")
        tab.page.click("#rk-heatmap details.rk-steps summary")
        got = tab.page.eval_on_selector_all(
            "#rk-heatmap rect.seg", "e => e.map(r => [r.dataset.profile, r.dataset.step,"
            " r.dataset.device, r.dataset.part, +r.dataset.us])")
        doc = _steps(argv, "-profiles all")
        assert sorted(got) == sorted(
            seg for name, d in doc["profiles"].items() for seg in _expected_segments(name, d))
        tab.page.click("#rk-heatmap rect.seg[data-profile=rank1][data-part=compute] >> nth=0")
        tab.page.wait_for_selector("#rk-segment tr.seg-op")
        tab.close()
    finally:
        srv.stop()
