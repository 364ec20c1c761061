"""The web UI's server on the GPU samples (PyTorch's torch_cnn, JAX's jax_gpt): the
timeline is the trace's own threads and streams, the Steps and Kernels pages are the
`steps` and `kernels` documents, and the op view says what it leaves out."""

from __future__ import annotations

import json
import re

import pytest

from conftest import run_cli, sample
from test_ui_server import Browser

TORCH = ["--profile_path=" + sample("torch_cnn")]
JAX = ["--profile_path=" + sample("jax_gpt")]


@pytest.fixture(scope="module")
def torch_cnn():
    return Browser(TORCH)


@pytest.fixture(scope="module")
def jax_gpt():
    return Browser(JAX)


def _timeline(b, **body):
    r = b.post("/api/timeline", {"line": "graph", "width": 1000, **body})
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


def _shell_json(argv, line):
    run = run_cli(argv + line.split(" ") + ["-output", "json"])
    assert run.code == 0, run.err
    return json.loads(run.out)


# -- the timeline (issue: every stream folded into one lane, packing rows as lanes) ---

@pytest.mark.parametrize("which,stream,thread", [
    ("torch_cnn", "gpu:0 stream 7", "thread 415 (python3)"),
    ("jax_gpt", "gpu:0 stream 14 (Compute,Memset)", "python3")])
def test_a_gpu_timeline_has_a_lane_per_stream_and_per_thread(request, which, stream, thread):
    doc = _timeline(request.getfixturevalue(which))
    names = [lane["name"] for lane in doc["lanes"]]
    assert stream in names and thread in names
    assert not any("Op scheduling threads" in n or "/job:" in n or "stream:all" in n
                   for n in names), names
    assert not any(re.search(r" / \d+$", n) for n in names), names
    groups = {g["name"]: g for g in doc["groups"]}
    assert "gpu:0" in groups
    device_lane = names.index(stream)
    assert device_lane in groups["gpu:0"]["lanes"]
    assert doc["lanes"][device_lane]["kind"] == "device"


def test_timeline_slices_nest_and_lanes_stay_put_under_zoom(torch_cnn):
    whole = _timeline(torch_cnn)
    host = next(lane for lane in whole["lanes"] if lane["name"] == "thread 415 (python3)")
    assert host["rows"] > 3  # python frames > ProfilerStep > aten ops > runtime calls
    assert len(host["blocks"]) == host["rows"]
    span = whole["end"] - whole["start"]
    zoomed = _timeline(torch_cnn, t0=whole["start"] + span // 2,
                       t1=whole["start"] + span // 2 + span // 1000)
    assert [(lane["name"], lane["rows"]) for lane in zoomed["lanes"]] == \
        [(lane["name"], lane["rows"]) for lane in whole["lanes"]]
    assert any(not any(row["ts"] for row in lane["blocks"]) for lane in zoomed["lanes"])


# -- the op view (issue: 11 of 129 op types with no word of the rest) ---------------

def test_the_op_view_says_what_it_leaves_out(torch_cnn):
    shown = torch_cnn.run("op -order_by micros")
    everything = torch_cnn.run("op -order_by micros -max_depth 100000")
    left = everything["rows"] - shown["rows"]
    assert left > 100
    more = shown["more"]
    assert more["rows"] == left
    a = "micros"
    assert more["total"][a] == sum(everything["self"][a][shown["rows"]:])


def test_an_op_rows_details_total_is_the_rows_own(torch_cnn):
    line = "op -order_by micros -max_depth 100000"
    answer = torch_cnn.run(line)
    names = [answer["strings"][i] for i in answer["name"]]
    row = names.index("aten::mm")
    details = torch_cnn.post("/api/details", {"line": line, "row": row}).get_json()
    assert details["total"]["micros"] == answer["self"]["micros"][row] \
        == answer["total"]["micros"][row]
    assert details["cumulative"]["micros"] == answer["cumulative"]["micros"][row] \
        > details["total"]["micros"]


def test_a_flame_rows_first_start_is_its_nodes_first_start_in_the_schedule(tmp_path):
    tiny = Browser(["--profile_path=" + sample("tiny_mlp", "profile")])
    line = "scope -max_depth 100 -step 1"
    answer = tiny.post("/api/run", {"line": line, "starts": True}).get_json()
    out = tmp_path / "t"
    run = run_cli(tiny.argv + ["graph", "-max_depth", "100", "-step", "1", "-output",
                               "timeline:outfile=%s" % out])
    assert run.code == 0, run.err
    first = {}
    for e in json.load(open(str(out) + "_1"))["traceEvents"]:
        if e["ph"] == "X":
            first[e["name"]] = min(first.get(e["name"], e["ts"]), e["ts"])
    names = [answer["strings"][i] for i in answer["name"]]
    checked = 0
    leaves = set(range(len(names))) - set(answer["parent"])
    for row, (name, start, parent) in enumerate(zip(names, answer["start"], answer["parent"])):
        if name in first and row in leaves:
            assert start == first[name], name
            checked += 1
        if parent >= 0 and start >= 0:
            assert 0 <= answer["start"][parent] <= start
    assert checked > 10


def test_a_range_is_the_traces_slices_overlapping_it(torch_cnn):
    import gzip
    path = next(p for p in __import__("glob").glob(sample("torch_cnn", "*.gz")))
    events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
    ns = [(int(e["ts"] * 1000 + 0.5), int(e["dur"] * 1000 + 0.5), e["name"]) for e in events]
    origin = min(t for t, _, _ in ns)
    whole = _timeline(torch_cnn)
    t0, t1 = whole["end"] * 45 // 100, whole["end"] * 46 // 100
    got = torch_cnn.post("/api/timeline/range", {"line": "graph", "t0": t0, "t1": t1}).get_json()
    lo, hi = origin + t0, origin + t1
    inside = [(name, min(t + d, hi) - max(t, lo)) for t, d, name in ns if t <= hi and t + d >= lo]
    assert got["slices"] == len(inside) > 10
    counts = {}
    for name, _ in inside:
        counts[name] = counts.get(name, 0) + 1
    listed = {}
    for r in got["rows"]:  # a name may be listed once per lane kind (host, device)
        listed[r["name"]] = listed.get(r["name"], 0) + r["count"]
    assert listed == counts
    assert sum(r["inside"] for r in got["rows"]) == sum(t for _, t in inside)


def test_a_kernels_flow_is_the_launch_with_its_correlation(torch_cnn):
    import gzip
    path = next(p for p in __import__("glob").glob(sample("torch_cnn", "*.gz")))
    events = json.load(gzip.open(path))["traceEvents"]
    launch = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime"
              and e.get("ph") == "X" and "correlation" in e.get("args", {})}
    whole = _timeline(torch_cnn, width=8000)
    lane = next(lane for lane in whole["lanes"] if lane["name"] == "gpu:0 stream 7")
    singles = [e for row in lane["blocks"] for e in row["ev"] if e >= 0][:20]
    assert singles
    for ev in singles:
        d = torch_cnn.post("/api/timeline/event", {"line": "graph", "event": ev}).get_json()
        want = launch[d["args"]["correlation"]]
        assert d["flow"]["name"] == want["name"] and d["flow"]["kind"] == "host"
        assert d["flow"]["lane_name"] == "thread %d (%s)" % (want["tid"], "python3") \
            or d["flow"]["lane_name"].startswith("thread %d " % want["tid"])
        ops = [s["name"] for s in d["flow"]["stack"] if s["category"] == "cpu_op"]
        assert ops  # the launch ran inside an op


def test_the_steps_documents_parts_add_up(torch_cnn, jax_gpt):
    for argv in (TORCH, JAX):
        doc = _shell_json(argv, "steps")
        for s in doc["steps"] + [doc["average"]]:
            for d in s["devices"].values():
                assert sum(d[p] for p in doc["device_parts"]) == d["span"]
            assert sum(s["host"][p] or 0 for p in doc["host_parts"]) == s["host"]["wall"]
