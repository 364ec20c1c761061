"""The web UI's pages for `memory`, `collectives` and `critpath` in Chromium: each shows
what its command's JSON (and text) says, number for number; bad lines change nothing;
the Advise page shows the new checkers' advice.

Screenshots go to a temporary folder; with TFPROF_UI_SCREENSHOTS=DIR they go to DIR
(docs/images is made that way, see docs/web-ui.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import needs, run_cli, sample

pytestmark = pytest.mark.browser
needs("playwright.sync_api", "browser")

from ui_tab import Tab, ui_server  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEAK = ["--profile_path=" + os.path.relpath(sample("memory", "torch_leak"))]
TORCH = ["--profile_path=" + os.path.relpath(sample("torch_cnn"))]
DDP = ["--profile_path=" + os.path.relpath(sample("torch_ddp", "delayed"))]
NCCL = ["--profile_path=" + os.path.relpath(sample("synthetic_nccl"))]


def _server(argv):
    srv = ui_server(argv)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def leak_server():
    yield from _server(LEAK)


@pytest.fixture(scope="module")
def torch_server():
    yield from _server(TORCH)


@pytest.fixture(scope="module")
def ddp_server():
    yield from _server(DDP)


def _shot(tab, shots, name):
    tab.page.mouse.move(1, 1)
    tab.page.wait_for_timeout(150)
    tab.page.screenshot(path=os.path.join(shots, name + ".png"))


def _json(argv, line):
    run = run_cli(argv + line.split() + ["-output", "json"])
    assert run.code == 0, run.err
    return json.loads(run.out)


def _text(argv, line):
    run = run_cli(argv + line.split())
    assert run.code == 0, run.err
    return run.out


def _cells(tab, selector):
    return tab.page.eval_on_selector_all(
        selector, "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))")


def _table(text, header):
    """The rows of the text table under the first line ``header`` (a regex) matches at its
    start (cells split on runs of two or more spaces)."""
    lines = text.splitlines()
    at = next(k for k, ln in enumerate(lines) if re.match(header, ln))
    rows = []
    for ln in lines[at + 1:]:
        if not ln.strip():
            break
        rows.append(re.split(r"\s{2,}", ln.strip()))
    return rows


# -- Memory -------------------------------------------------------------------------------

def test_the_memory_page_is_the_memory_document(browser, leak_server, shots):
    tab = Tab(browser, leak_server, "page=memory&line=memory", size=(1180, 900))
    doc = _json(LEAK, "memory")
    text = _text(LEAK, "memory")
    (device,) = doc["devices"]
    box = "#page-memory .mem-device[data-device='%s'] " % device["name"]
    peak = tab.page.eval_on_selector(box + "circle.mem-peak",
                                     "c => [+c.dataset.bytes, +c.dataset.time]")
    assert peak == [device["peak"]["bytes"], device["peak"]["time"]]
    points = tab.page.eval_on_selector(box + "polyline.mem-allocated", "p => +p.dataset.points")
    assert points == len(device["timeline"]["time"]) == device["events"]
    steps_drawn = tab.page.eval_on_selector_all(box + "line.step-line", "e => e.map(l => +l.dataset.step)")
    assert steps_drawn == [s["step"] for s in doc["steps"]]
    # the facts, the live set, the steps and the growth say what the text says
    facts = tab.page.inner_text(box + ".mem-peak-facts")
    assert facts in text.splitlines()
    live = _cells(tab, box + ".mem-live tr.row")
    assert live == _table(text, "op ")
    assert [r["key"] for r in device["live"]["rows"]] == [r[0] for r in live]
    assert _cells(tab, box + ".mem-steps tr.row") == _table(text, "step ")
    growth = tab.page.inner_text(box + ".mem-growth")
    assert growth.replace(" (least squares over the steps' end levels)", "") in text.replace(
        " (least squares over the steps' end levels)", "")
    suspects = _cells(tab, box + ".mem-suspects tr.row")
    assert [(s[0], s[1], s[2]) for s in suspects] == [
        (s["key"], "%.2fKB" % (s["per_step"] / 1e3), "%d of %d" % (s["steps"], s["judged"]))
        for s in device["growth"]["suspects"]]
    _shot(tab, shots, "memory")
    # the -by control (from the options table) rewrites the line
    tab.forget()
    tab.page.select_option("#mem-by", "code")
    tab.painted("memory", "memory -by code")
    assert "line=memory+-by+code" in tab.page.url
    by_code = _json(LEAK, "memory -by code")
    assert [r[0] for r in _cells(tab, box + ".mem-live tr.row")] == \
        [r["key"] for r in by_code["devices"][0]["live"]["rows"]]
    # a step's peak
    tab.forget()
    tab.page.select_option("#mem-step", "4")
    tab.painted("memory", "memory -by code -step 4")
    assert tab.page.inner_text(box + ".mem-peak-facts") in \
        _text(LEAK, "memory -by code -step 4").splitlines()
    tab.close()


def test_reserved_bytes_are_drawn_where_the_format_has_them(browser, torch_server):
    tab = Tab(browser, torch_server, "page=memory&line=memory+-by+category")
    doc = _json(TORCH, "memory -by category")
    for d in doc["devices"]:
        box = "#page-memory .mem-device[data-device='%s'] " % d["name"]
        drawn = tab.page.eval_on_selector_all(box + "polyline.mem-reserved", "e => e.length")
        assert drawn == (1 if d["timeline"]["reserved"] else 0)
        assert [r[0] for r in _cells(tab, box + ".mem-live tr.row")] == \
            [r["key"] for r in d["live"]["rows"]]
    tab.close()


def test_memory_against_a_base_and_over_profiles(browser, shots):
    argv = ["--profile_path=" + os.path.relpath(sample("memory", "torch_leak")),
            "--base_profile_path=" + os.path.relpath(sample("memory", "torch"))]
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv, "page=memory&line=memory+-base+base")
        doc = _json(argv, "memory -base base")
        (d,) = doc["diff"]
        rows = _cells(tab, "#page-memory .mem-diff-live tr.row")
        assert [r[0] for r in rows] == [r["key"] for r in d["live"]]
        text = _text(argv, "memory -base base")
        assert rows == _table(text, "op ")
        facts = tab.page.inner_text("#page-memory .mem-diff .mem-facts")
        assert "%s: %s" % (d["device"], facts) in text.splitlines()
        series = tab.page.eval_on_selector_all("#page-memory circle.mem-peak",
                                               "e => e.map(c => [c.dataset.series, +c.dataset.bytes])")
        assert series == [["torch_leak", d["peak"]["current"]], ["base", d["peak"]["base"]]]
        tab.forget()
        tab.page.check("#mem-ranks")
        tab.painted("memory", "memory -profiles all")
        ranks = _json(argv, "memory -profiles all")
        rows = _cells(tab, "#page-memory .mem-ranks tr.row")
        assert [(r[1], r[2]) for r in rows] == [(x["profile"], x["device"]) for x in ranks["ranks"]]
        assert rows == _table(_text(argv, "memory -profiles all"), "rank ")
        tab.close()
    finally:
        srv.stop()


def test_a_profile_without_memory_says_why(browser):
    srv = ui_server(NCCL)
    try:
        tab = Tab(browser, srv)
        tab.open("memory")
        note = tab.page.inner_text("#page-memory .mem-none")
        assert note.startswith("memory: this profile has no memory events: a PyTorch trace")
        tab.close()
    finally:
        srv.stop()


def test_the_timeline_shows_memory_as_counters(browser, leak_server, shots):
    tab = Tab(browser, leak_server, size=(1280, 800))
    tab.open("timeline")
    doc = _json(LEAK, "memory")
    lanes = tab.page.evaluate("() => window.tfprofApp.timeline.data.lanes.filter(l => l.kind === 'counter')"
                              ".map(l => [l.name, l.counter.peak[1], l.counter.v.length])")
    assert lanes == [["%s memory" % d["name"], d["peak"]["bytes"], d["events"]] for d in doc["devices"]]
    groups = tab.page.evaluate("() => window.tfprofApp.timeline.headers.map(h => h.group.name)")
    assert groups[0] == "memory"
    # the pointer on the counter says the level there
    top = tab.page.evaluate("() => window.tfprofApp.timeline.tops[window.tfprofApp.timeline.data.lanes"
                            ".findIndex(l => l.kind === 'counter')]")
    box = tab.page.locator("#timeline canvas.tl-canvas").bounding_box()
    tab.page.mouse.move(box["x"] + box["width"] - 20, box["y"] + top + 20)
    tip = tab.page.inner_text("#timeline .flame-tip")
    assert tip.startswith("cpu memory at ") and "allocated" in tip and "peak 2.25MB" in tip
    tab.close()


# -- the critical path on the Timeline ------------------------------------------------------

def _tl(tab, expression, arg=None):
    return tab.page.evaluate("(arg) => { const tl = window.tfprofApp.timeline; return %s; }"
                             % expression, arg)


def test_the_timeline_marks_and_lists_the_critical_path(browser, torch_server, shots):
    tab = Tab(browser, torch_server, size=(1400, 900))
    tab.open("timeline")
    # the checkbox asks for the path of the step in view
    mid = _tl(tab, "(tl.t0 + tl.t1) / 2")
    (step,) = [s["step"] for s in _tl(tab, "tl.data.steps") if s["start"] <= mid <= s["end"]]
    tab.forget()
    tab.page.check("#tl-critpath")
    done = tab.painted("timeline")
    line = "critpath -step %d" % step
    assert done["line"] == line and "line=" + line.replace(" ", "+") in tab.page.url
    doc = _json(TORCH, line)
    (path,) = doc["paths"]
    listed = tab.page.eval_on_selector_all("#tl-path tr.cp-event", "e => e.map(r => r.title.split('\\n')[0])")
    assert listed == [e["name"] for e in path["events"]]
    assert tab.page.eval_on_selector_all("#tl-path tr.cp-event.missing", "e => e.length") == 0
    bounds = tab.page.eval_on_selector_all("#tl-path svg.bound-bar >> nth=0", "e => e.length")
    assert bounds == 1
    split = tab.page.eval_on_selector_all(
        "#tl-path #cp-window svg.bound-bar rect", "e => e.map(r => [r.dataset.bound, +r.dataset.us])")
    assert dict(split) == path["by_bound"]
    heading = tab.page.inner_text("#tl-path #cp-window h4")
    assert heading.startswith("ProfilerStep#%d: %.1fus of %.1fus" % (step, path["length"], path["wall"]))
    _shot(tab, shots, "critpath")
    # a listed event is selected on the timeline, with its details
    k = next(i for i, e in enumerate(path["events"]) if e["name"] == "cudaLaunchKernel")
    tab.page.click("#tl-path tr.cp-event[data-index='%d']" % k)
    tab.page.wait_for_selector("#tl-details .dname")
    assert tab.page.inner_text("#tl-details .dname") == "cudaLaunchKernel"
    chosen = _tl(tab, "tl.selected.event")
    row = tab.page.get_attribute("#tl-path tr.cp-event.selected", "data-slice")
    assert str(chosen) == row
    start = _tl(tab, "tl.selected.start + tl.data.origin_us * 1000")
    assert abs(start - path["events"][k]["ts"] * 1000) < 300
    assert _tl(tab, "tl.t0 <= tl.selected.start && tl.selected.start <= tl.t1")
    # unchecking goes back to the view the timeline showed before
    tab.forget()
    tab.page.uncheck("#tl-critpath")
    tab.painted("timeline", "graph")
    assert tab.page.is_hidden("#tl-path")
    tab.forget()
    tab.page.go_back()
    tab.painted("timeline", line)
    tab.close()


def test_what_if_results_are_shown_and_marked(browser, torch_server):
    line = "critpath -step 2 -whatif aten::.*=0.5"
    tab = Tab(browser, torch_server, "page=timeline&line=" + line.replace(" ", "+"))
    (path,) = _json(TORCH, line)["paths"]
    w = path["whatif"]
    assert tab.page.inner_text("#tl-path .cp-new-length") == "%.1fus" % w["length"]
    assert tab.page.inner_text("#tl-path .cp-est-wall") == "%.1fus" % w["estimated_wall"]
    assert "%d edges scaled" % w["edges_scaled"] in tab.page.inner_text("#tl-path .cp-whatif")
    tab.page.check("#cp-whatif")
    listed = tab.page.eval_on_selector_all("#tl-path tr.cp-event", "e => e.map(r => r.title.split('\\n')[0])")
    assert listed == [e["name"] for e in w["events"]]
    tab.close()


def test_a_window_per_region_instance(browser, torch_server):
    tab = Tab(browser, torch_server, "page=timeline&line=critpath+-region+forward")
    paths = _json(TORCH, "critpath -region forward")["paths"]
    rows = _cells(tab, "#tl-path tr.cp-window")
    assert [r[2] for r in rows] == ["%.1fus" % p["length"] for p in paths]
    tab.page.click("#tl-path tr.cp-window[data-window='1']")
    t0, t1 = _tl(tab, "[tl.t0 / 1000 + tl.data.origin_us, tl.t1 / 1000 + tl.data.origin_us]")
    w = paths[1]["window"]
    assert t0 <= w["start"] and w["end"] <= t1 and (t1 - t0) < 1.1 * (w["end"] - w["start"])
    tab.close()


def test_a_path_against_a_base_profile(browser):
    argv = ["--profile", "slow=" + os.path.relpath(os.path.join(ROOT, "tests", "critpath", "gpu_bound")),
            "--profile", "fast=" + os.path.relpath(os.path.join(ROOT, "tests", "critpath", "launch_bound"))]
    srv = ui_server(argv)
    try:
        line = "critpath -step 2 -base fast"
        tab = Tab(browser, srv, "page=timeline&line=" + line.replace(" ", "+"))
        doc = _json(argv, line)
        tables = tab.page.eval_on_selector_all(
            "#tl-path .cp-base table.cp-diff",
            "ts => ts.map(t => [...t.querySelectorAll('tr')].slice(1).map(r => r.firstChild.textContent))")
        assert tables[0] == [w["window"] for w in doc["diff"]["windows"]]
        assert tables[1] == [b["category"] for b in doc["diff"]["by_bound"]]
        # the lanes are the current profile's, marked with its own path
        listed = tab.page.eval_on_selector_all("#tl-path tr.cp-event",
                                               "e => e.map(r => r.title.split('\\n')[0])")
        assert listed == [e["name"] for e in doc["profiles"]["slow"]["paths"][0]["events"]]
        tab.close()
    finally:
        srv.stop()


# -- Ranks: the collectives -------------------------------------------------------------

@pytest.mark.parametrize("argv,name", [(DDP, "delayed"), (NCCL, "nccl")])
def test_the_ranks_page_shows_the_stragglers_and_instances(browser, shots, argv, name):
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv, "page=ranks&line=collectives", size=(1180, 900))
        doc = _json(argv, "collectives")
        text = _text(argv, "collectives")
        steps = _cells(tab, "#rk-collectives tr.coll-step")
        told = _table(text, r"step\s+straggler")
        assert told == [s[:8] for s in steps]
        assert [s[1] for s in steps] == [s["straggler"] for s in doc["steps"]]
        instances = _cells(tab, "#rk-collectives tr.coll-instance")
        assert instances == _table(text, r"step\s+#\s+op")
        cells = tab.page.eval_on_selector_all(
            "#rk-collectives tr.coll-instance td.rank-value", "e => e.map(c => [c.dataset.rank, c.dataset.us])")
        expected = [[r, "" if c["wait"].get(r) is None else c["wait"][r]] for c in doc["collectives"]
                    for r in doc["profiles"]]
        assert [[r, float(v) if v else ""] for r, v in cells] == expected
        if name == "delayed":
            assert {s[2] for s in steps} == {"load_batch"} and {s[1] for s in steps} == {"rank3"}
            _shot(tab, shots, "ranks-collectives")
        tab.close()
    finally:
        srv.stop()


def test_the_heatmap_outlines_the_straggler_by_arrival(browser, ddp_server):
    # the step walls come out nearly equal (the others wait): the outlined rank of each
    # step is the one `steps -profiles all` names by its arrival, not the longest wall
    tab = Tab(browser, ddp_server)
    tab.open("ranks")
    doc = _json(DDP, "steps -profiles all")
    outlined = tab.page.eval_on_selector_all(
        "#rk-heatmap rect.cell.slowest", "e => e.map(c => [+c.dataset.step, c.dataset.rank])")
    assert sorted(outlined) == sorted([s["step"], s["profile"]] for s in doc["stragglers"]
                                      if s["by"] == "arrival")
    walls = {(s["step"], n): s["wall"] for n, d in doc["profiles"].items() for s in d["steps"]}
    longest = {step: max((w, n) for (st, n), w in walls.items() if st == step)[1]
               for step, _ in walls}
    assert any(longest[step] != rank for step, rank in outlined)  # walls would say otherwise
    assert "the rank the others waited for" in tab.page.inner_text("#rk-heatmap .heatmap-box")
    tab.close()


def test_the_overview_paints_with_a_sticky_base(browser):
    # --base_profile_path makes -base sticky, and `steps` then answers with both profiles
    argv = ["--profile_path=" + os.path.relpath(sample("memory", "torch_leak")),
            "--base_profile_path=" + os.path.relpath(sample("memory", "torch"))]
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv)
        doc = _json(argv, "steps")["profiles"]["torch_leak"]
        bars = tab.page.eval_on_selector_all("#ov-steps g.step-bar", "e => e.map(g => [+g.dataset.step, +g.dataset.wall])")
        assert bars == [[s["step"], s["wall"]] for s in doc["steps"]]
        tab.close()
    finally:
        srv.stop()


def test_an_instance_is_shown_on_the_timeline(browser, ddp_server):
    tab = Tab(browser, ddp_server, "page=ranks&line=collectives+-step+3")
    doc = _json(DDP, "collectives -step 3")
    c = doc["collectives"][0]
    tab.forget()
    tab.page.click("#rk-collectives tr.coll-instance[data-instance='%d']" % c["instance"])
    tab.painted("timeline", "graph -step 3")
    marks = _tl(tab, "tl.overlays.map(o => o.marks || []).flat().map(m => [m.label, m.us, m.strong])")
    assert sorted(marks) == sorted([r, c["arrival"][r], r == c["last"]] for r in doc["profiles"])
    lo, hi = _tl(tab, "[tl.t0 / 1000 + tl.data.origin_us, tl.t1 / 1000 + tl.data.origin_us]")
    assert lo <= min(c["arrival"].values()) and max(c["arrival"].values()) <= hi
    assert "collective #%d" % c["instance"] in tab.page.inner_text("#tl-note")
    tab.close()


def test_sixty_four_ranks_stay_readable(browser, tmp_path, shots):
    folder = tmp_path / "ranks64"
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "make_rank_traces.py"), str(folder),
                    "--ranks", "64", "--blocks", "1", "--slow", "37"], check=True,
                   capture_output=True)
    argv = ["--profile_path=" + str(folder)]
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv, "page=ranks&line=collectives+-step+3", size=(1180, 900))
        doc = _json(argv, "collectives -step 3")
        steps = _cells(tab, "#rk-collectives tr.coll-step")
        assert [s[:2] for s in steps] == [[str(s["step"]), s["straggler"]] for s in doc["steps"]] \
            == [["3", "rank37"]]
        # one strip of 64 cells per instance, each the rank's wait
        strips = tab.page.eval_on_selector_all(
            "#rk-collectives tr.coll-instance svg.rank-strip",
            "e => e.map(s => [...s.querySelectorAll('rect')].map(r => [r.dataset.rank, +r.dataset.us]))")
        assert [dict(s) for s in strips] == [c["wait"] for c in doc["collectives"]]
        assert all(len(s) == 64 for s in strips)
        assert tab.page.eval_on_selector_all("#rk-collectives td.rank-value", "e => e.length") == 0
        width = tab.page.eval_on_selector("#rk-collectives table.coll-instances", "t => t.scrollWidth")
        assert width <= 1180 - 240  # beside the sidebar, no sideways scrolling
        _shot(tab, shots, "ranks-64")
        tab.close()
    finally:
        srv.stop()


# -- bad lines, advice -----------------------------------------------------------------

@pytest.mark.parametrize("page,line,bad", [
    ("memory", "memory", "memory -by nonsense"),
    ("timeline", "critpath -step 2", "critpath -step 99"),
    ("ranks", "collectives", "collectives -step 99")])
def test_a_bad_line_leaves_the_url_and_the_view(browser, torch_server, ddp_server, page, line, bad):
    srv = ddp_server if page == "ranks" else torch_server
    tab = Tab(browser, srv, "page=%s&line=%s" % (page, line.replace(" ", "+")))
    url = tab.page.url
    tab.forget()
    tab.page.fill("#cmd", bad)
    tab.page.press("#cmd", "Enter")
    tab.page.wait_for_selector("#status.error")
    error = tab.page.inner_text("#status")
    assert "\n" not in error and error
    assert tab.page.url == url and tab.page.input_value("#cmd") == line
    assert tab.page.is_visible("#page-" + page)
    tab.close()


@pytest.mark.parametrize("argv,checker,page", [(LEAK, "MemoryChecker", "memory"),
                                               (TORCH, "CriticalPathChecker", "timeline"),
                                               (DDP, "StragglerChecker", "ranks")])
def test_advise_shows_the_new_checkers(browser, argv, checker, page):
    srv = ui_server(argv)
    try:
        tab = Tab(browser, srv)
        tab.open("advise")
        reports = tab.page.eval_on_selector_all(
            "#advice section[data-checker=%s] .report pre" % checker, "e => e.map(p => p.textContent)")
        shell = _text(argv, "advise -checkers " + checker)
        assert reports and all(r in shell for r in reports)
        tab.forget()
        tab.page.click("#advice section[data-checker=%s] > a.line-link" % checker)
        tab.painted(page)
        tab.close()
    finally:
        srv.stop()
