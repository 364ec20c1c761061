#!/usr/bin/env python3
"""Time the web UI on large profiles: engine, wire, and request-to-painted view.

For each line (default: the scope and code views of the large synthetic
profile, bench/make_large_profile.py) it reports

- engine: the session running the line (``Session.run_view``, output none);
- to columns: the server turning the result into the page's gzipped JSON
  columns, in wall time and in CPU time (the machine may be shared);
- bytes: the answer as sent (gzip) and unzipped, beside ``-output json``;
- painted: in Chromium, from the page's request to the view painted (two
  animation frames after the table is filled): first with the engine, then
  again once the server holds the result, which is the time from the engine
  finishing to the view on screen (columns, JSON, gzip, wire, parse, paint),
  split into server, download and browser by the Resource Timing API;
- scroll: the table's paint per scroll step through the fully expanded view.

With ``--timeline`` it times the Timeline page instead, on a PyTorch trace (default:
bench/make_large_torch_trace.py's 240 steps, about 170 MB): from navigating to the
page to its lanes painted, cold (the trace's lanes read for the first time) and warm,
the bytes the browser received for it (the page's own files and every API answer,
as sent: gzipped), and a zoom (the window's answer and its repaint).

Needs Playwright and Debian's chromium (never `playwright install`)::

    python bench/bench_ui.py [PROFILE] [--line 'code -max_depth 100' ...]
    python bench/bench_ui.py --timeline [TRACE]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import shutil
import sys
import time
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tfprof_shell.cli import open_session, parse_invocation  # noqa: E402
from tfprof_shell.outputs import Output  # noqa: E402
from tfprof_shell.render.json_out import render_json  # noqa: E402
from tfprof_shell.ui.columns import view_columns  # noqa: E402
from tfprof_shell.ui.server import start_server  # noqa: E402

from bench import large_synthetic_profile  # noqa: E402  (bench/ is this script's folder)

LINES = ["scope -max_depth 100", "code -max_depth 100"]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def engine_numbers(session, line: str) -> dict:
    """Engine and column times, and the sizes of columns and of -output json."""
    from tfprof_shell import commands
    request = commands.parse_words(commands.split_line(line), session.options)
    session.execute("op -max_depth 1 -output none")  # drop the view the browser left cached
    t0 = time.perf_counter()
    result = session.run_view(request.command.name, request.options.replace(output=Output("none"))).result
    t1, c1 = time.perf_counter(), time.process_time()
    columns = json.dumps(view_columns(result), separators=(",", ":")).encode()
    zipped = gzip.compress(columns, 1)
    t2, c2 = time.perf_counter(), time.process_time()
    doc = render_json(result).encode()
    return {"rows": sum(1 for _ in result.root.walk()), "engine_s": t1 - t0,
            "columns_s": t2 - t1, "columns_cpu_s": c2 - c1, "columns_bytes": len(columns),
            "columns_gzip": len(zipped), "json_bytes": len(doc)}


def browser_numbers(srv, line: str) -> dict:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        wire = []
        page.on("response", lambda r: wire.append((r.url, r.headers.get("content-length"))))
        page.goto(srv.url.replace("/?", "/?page=views&line=scope+-max_depth+1&"))
        done = "() => window.tfprofApp && window.tfprofApp.painted && window.tfprofApp.painted.line"
        page.wait_for_function(done, timeout=600000)
        timings = []
        for _ in range(2):  # cold (engine runs), then warm (the server's cache)
            page.evaluate("() => { window.tfprofApp.painted = null; }")
            page.fill("#cmd", line)
            page.press("#cmd", "Enter")
            page.wait_for_function("(l) => { const p = window.tfprofApp.painted;"
                                   " return p && p.line === l; }", arg=line, timeout=600000)
            timings.append(page.evaluate("""() => {
                const runs = performance.getEntriesByType('resource')
                    .filter((e) => e.name.endsWith('/api/run'));
                const e = runs[runs.length - 1];
                return [window.tfprofApp.painted.ms, e.responseStart - e.requestStart,
                        e.responseEnd - e.responseStart];
            }"""))
        sent = [int(n) for url, n in wire if url.endswith("/api/run") and n][-1]
        page.click("#views-expand")
        frames = page.evaluate("""async () => {
            const body = document.querySelector('#views-table .tt-body');
            const out = [];
            for (let k = 0; k < 120; k++) {
              body.scrollTop += body.clientHeight * 3;
              const t = performance.now();
              window.tfprofApp.tables['views-table'].paint();
              out.push(performance.now() - t);
              await new Promise((r) => requestAnimationFrame(r));
            }
            return out;
        }""")
        rows = page.evaluate("() => window.tfprofApp.tables['views-table'].visible.length")
        browser.close()
    (cold, _, _), (warm, server, download) = timings
    return {"cold_s": cold / 1000, "warm_s": warm / 1000, "server_s": server / 1000,
            "download_s": download / 1000, "sent_bytes": sent,
            "expanded_rows": rows, "frame_mean_ms": sum(frames) / len(frames),
            "frame_max_ms": max(frames)}


#: The timeline benchmark's trace: this many steps of the torch_cnn template.
TIMELINE_STEPS = 240
_PAINTED = ("() => { const p = window.tfprofApp && window.tfprofApp.painted;"
            " return p && p.page === 'timeline' && !p.error; }")
_RECEIVED = """() => {
    const all = [...performance.getEntriesByType('navigation'),
                 ...performance.getEntriesByType('resource')];
    const lanes = all.filter((e) => e.name.includes('/api/timeline'));
    return {painted: performance.now(), bytes: all.reduce((s, e) => s + e.encodedBodySize, 0),
            requests: all.length, lanes_bytes: lanes.reduce((s, e) => s + e.encodedBodySize, 0),
            lanes_unzipped: lanes.reduce((s, e) => s + e.decodedBodySize, 0)};
}"""


def large_torch_trace() -> str:
    """The cached 240-step PyTorch trace (about 170 MB)."""
    path = os.path.join(HERE, ".cache", "ui_steps%d" % TIMELINE_STEPS,
                        "rank0.steps%d.pt.trace.json" % TIMELINE_STEPS)
    if not os.path.exists(path):
        import subprocess
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_torch_trace.py"), path,
                        "--steps", str(TIMELINE_STEPS)], check=True)
    return path


def timeline_numbers(srv) -> dict:
    """Navigation to the painted Timeline page, cold then warm; bytes; one zoom."""
    from playwright.sync_api import sync_playwright
    url = "http://127.0.0.1:%d/?page=timeline&line=graph" % srv.port
    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(srv.url.replace("/?", "/?page=views&line=scope+-max_depth+1&"))
        page.wait_for_function("() => window.tfprofApp && window.tfprofApp.painted",
                               timeout=600000)
        for run in ("cold", "warm"):
            cpu = time.process_time()  # this process serves: its CPU time is the server's
            page.goto(url)  # a new document: navigation start is time 0
            page.wait_for_function(_PAINTED, timeout=600000)
            out[run] = page.evaluate(_RECEIVED)
            out[run]["server_cpu"] = time.process_time() - cpu
        out["lanes"] = page.evaluate("() => window.tfprofApp.timeline.data.lanes.length")
        zoom = page.evaluate("""async () => {
            const tl = window.tfprofApp.timeline, before = tl.data;
            const t = performance.now();
            const span = before.end - before.start, mid = before.start + span / 2;
            tl.setWindow(mid, mid + span / 400);
            while (tl.data === before) await new Promise((r) => setTimeout(r, 5));
            await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
            const e = performance.getEntriesByType('resource').filter(
                (x) => x.name.includes('/api/timeline')).pop();
            return {ms: performance.now() - t, bytes: e.encodedBodySize,
                    unzipped: e.decodedBodySize, server_ms: e.responseStart - e.requestStart};
        }""")
        out["zoom"] = zoom
        browser.close()
    return out


def timeline_main(path: Optional[str]) -> None:
    path = path or large_torch_trace()
    t0 = time.perf_counter()
    session = open_session(parse_invocation(["--profile_path=" + path]), sys.stderr)
    print("loaded %s (%.0f MB) in %.1f s" % (path, os.path.getsize(path) / 1e6,
                                             time.perf_counter() - t0))
    srv = start_server(session, log=io.StringIO())
    print("load average %.1f on %d CPUs" % (os.getloadavg()[0], os.cpu_count() or 1))
    n = timeline_numbers(srv)
    srv.stop()
    print("| run | navigation to painted lanes | server CPU | received (gzipped) | of which "
          "lanes (unzipped) | requests |")
    print("|---|---|---|---|---|---|")
    for run in ("cold", "warm"):
        r = n[run]
        print("| %s | %.2f s | %.2f s | %.0f kB | %.0f kB (%.0f kB) | %d |"
              % (run, r["painted"] / 1000, r["server_cpu"], r["bytes"] / 1e3,
                 r["lanes_bytes"] / 1e3, r["lanes_unzipped"] / 1e3, r["requests"]))
    z = n["zoom"]
    print("zoom to 1/400 of the trace: %.0f ms to the repaint (server %.0f ms), %.0f kB "
          "(%.0f kB unzipped); %d lanes" % (z["ms"], z["server_ms"], z["bytes"] / 1e3,
                                            z["unzipped"] / 1e3, n["lanes"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profile", nargs="?", help="default: the large synthetic ProfileProto")
    ap.add_argument("--line", action="append", help="a view line (repeatable)")
    ap.add_argument("--timeline", action="store_true",
                    help="time the Timeline page on a PyTorch trace (PROFILE, default: "
                         "a 240-step, 170 MB trace)")
    args = ap.parse_args()
    if args.timeline:
        timeline_main(args.profile)
        return
    path = args.profile or large_synthetic_profile()
    t0 = time.perf_counter()
    session = open_session(parse_invocation(["--profile_path=" + path]), sys.stderr)
    print("loaded %s (%.0f MB) in %.1f s" % (path, os.path.getsize(path) / 1e6,
                                             time.perf_counter() - t0))
    srv = start_server(session, log=io.StringIO())
    print("load average %.1f on %d CPUs" % (os.getloadavg()[0], os.cpu_count() or 1))
    print("| line | rows | engine | to columns (CPU) | columns (sent gzipped) | -output json | "
          "painted, engine included | painted after the engine | of which server / download "
          "/ browser | paint per scroll mean/max |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for line in args.line or LINES:
        b = browser_numbers(srv, line)
        e = engine_numbers(session, line)
        browser = b["warm_s"] - b["server_s"] - b["download_s"]
        print("| `%s` | %d | %.2f s | %.2f s (%.2f s) | %.1f MB (%.2f MB) | %.1f MB | %.2f s | %.2f s "
              "| %.2f / %.2f / %.2f s | %.1f / %.1f ms |"
              % (line, e["rows"], e["engine_s"], e["columns_s"], e["columns_cpu_s"],
                 e["columns_bytes"] / 1e6,
                 b["sent_bytes"] / 1e6, e["json_bytes"] / 1e6, b["cold_s"], b["warm_s"],
                 b["server_s"], b["download_s"], browser, b["frame_mean_ms"],
                 b["frame_max_ms"]))
        sys.stdout.flush()
    srv.stop()


if __name__ == "__main__":
    main()
