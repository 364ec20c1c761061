"""The web UI's server for `memory`, `collectives` and `critpath`: their lines run in the
page as in the shell (documents, text, completion, one-line refusals), the Timeline's
critical-path marks are the path's own slices, its memory counters are the memory
profile's level, and the session's notes reach the page through the session."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, sample
from test_ui_server import Browser

TORCH = ["--profile_path=" + sample("torch_cnn")]
JAX = ["--profile_path=" + sample("jax_gpt")]
LEAK = ["--profile_path=" + sample("memory", "torch_leak")]
DDP = ["--profile_path=" + sample("torch_ddp", "delayed")]
TF1 = ["--profile_path=" + sample("tiny_mlp", "profile")]


@pytest.fixture(scope="module")
def torch_cnn():
    return Browser(TORCH)


@pytest.fixture(scope="module")
def jax_gpt():
    return Browser(JAX)


@pytest.fixture(scope="module")
def leak():
    return Browser(LEAK)


@pytest.fixture(scope="module")
def ddp():
    return Browser(DDP)


def _shell_json(argv, line):
    run = run_cli(argv + line.split(" ") + ["-output", "json"])
    assert run.code == 0, run.err
    return json.loads(run.out)


def _document(b, line):
    r = b.post("/api/run", {"line": line, "document": True})
    assert r.status_code == 200, r.get_data(as_text=True)
    answer = r.get_json()
    assert answer["kind"] == "document" and answer["command"] == line.split()[0]
    return answer


@pytest.mark.parametrize("which,argv,line", [
    ("leak", LEAK, "memory"), ("leak", LEAK, "memory -by code -step 4"),
    ("torch_cnn", TORCH, "memory -device gpu:0 -by category"),
    ("torch_cnn", TORCH, "critpath -step 2 -whatif cat:kernel=0.5"),
    ("torch_cnn", TORCH, "critpath -region forward"),
    ("ddp", DDP, "collectives"), ("ddp", DDP, "collectives -step 3")])
def test_the_pages_documents_are_the_shells_json(request, which, argv, line):
    answer = _document(request.getfixturevalue(which), line)
    assert answer["document"] == _shell_json(argv, line)


@pytest.mark.parametrize("which,line", [("leak", "memory -by scope"),
                                        ("torch_cnn", "critpath -step 3"),
                                        ("ddp", "collectives -step 2")])
def test_their_text_is_the_shells(request, which, line):
    b = request.getfixturevalue(which)
    answer = b.run(line)
    assert answer["kind"] == "text"
    assert answer["text"] == b.session.execute(line).text


@pytest.mark.parametrize("which,line,message", [
    ("leak", "memory -by nonsense", "-by"),
    ("leak", "memory -step 99", "no step 99"),
    ("torch_cnn", "critpath -step 99", "99"),
    ("torch_cnn", "critpath -whatif x", "whatif"),
    ("ddp", "collectives -step 99", "no collective is matched in step 99"),
    ("leak", "memory -output timeline:outfile=m.json", "-output: the web UI shows results"),
    ("torch_cnn", "critpath -output json", "-output: the web UI shows results")])
def test_a_bad_line_is_one_line_and_changes_nothing(request, which, line, message):
    b = request.getfixturevalue(which)
    before = (b.session.options, b.session.current, list(b.session.profiles))
    for body in ({"line": line}, {"line": line, "document": True}):
        r = b.post("/api/run", body)
        assert r.status_code == 400, r.get_data(as_text=True)
        error = r.get_json()["error"]
        assert message in error and "\n" not in error and "Traceback" not in error
    assert (b.session.options, b.session.current, list(b.session.profiles)) == before


def test_the_commands_are_offered_and_complete(leak):
    names = [c["name"] for c in leak.get("/api/state").get_json()["commands"]]
    assert {"memory", "collectives", "critpath"} <= set(names)
    found = leak.post("/api/complete", {"text": "memory -by "}).get_json()
    assert {"op", "scope", "code", "shape", "region", "category"} <= {c["text"] for c in found}
    assert "critpath" in [c["text"] for c in leak.post("/api/complete", {"text": "crit"}).get_json()]
    controls = leak.get("/api/controls").get_json()["options"]
    by = next(o for o in controls if o["name"] == "by")
    assert by["commands"][0] == "memory" and by["kind"] == "choice"
    assert {"region", "host_gaps", "whatif"} <= {o["name"] for o in controls
                                                 if "critpath" in o["commands"]}


# -- the critical path on the timeline -------------------------------------------------

def _marks(b, line):
    r = b.post("/api/timeline/critpath", {"line": line})
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


def _window(b, line):
    r = b.post("/api/timeline", {"line": line, "width": 1000})
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


@pytest.mark.parametrize("which,argv,line", [
    ("torch_cnn", TORCH, "critpath -step 2 -whatif aten::mm=0.5"),
    ("torch_cnn", TORCH, "critpath -region forward"),
    ("jax_gpt", JAX, "critpath -step 3")])
def test_each_path_event_is_marked_on_its_own_slice(request, which, argv, line):
    b = request.getfixturevalue(which)
    answer = _marks(b, line)
    assert answer["document"] == _shell_json(argv, line)
    window = _window(b, line)
    origin_ns = window["origin_us"] * 1000
    paths = answer["document"]["paths"]
    assert len(answer["marks"]) == len(paths)
    assert answer["found"] == answer["events"] == sum(len(p["events"]) for p in paths)
    for path, marks in zip(paths, answer["marks"]):
        chosen = [(path["events"], marks["events"])]
        if path.get("whatif"):
            chosen.append((path["whatif"]["events"], marks["whatif"]))
        for events, rows in chosen:
            assert len(rows) == len(events)
            for ev, (slice_id, lane, row, start, dur) in zip(events, rows):
                d = b.post("/api/timeline/event", {"line": line, "event": slice_id}).get_json()
                assert d["name"] == ev["name"] and (d["lane"], d["row"]) == (lane, row)
                assert (d["start"], d["dur"]) == (start, dur)
                # the same moment, to the ns the trace's µs floats keep
                assert abs(start + origin_ns - ev["ts"] * 1000) < 300
                assert abs(dur - ev["dur"] * 1000) < 300
                if ev["cat"] == "kernel":
                    assert window["lanes"][lane]["kind"] == "device"


def test_a_tf1_path_is_marked_on_the_graph_views_schedule():
    b = Browser(TF1)
    answer = _marks(b, "critpath -step 1")
    names = [e["name"] for e in answer["document"]["paths"][0]["events"]]
    assert answer["found"] == len(names) > 5
    marked = [b.post("/api/timeline/event", {"line": "critpath -step 1", "event": r[0]})
              .get_json()["name"] for r in answer["marks"][0]["events"]]
    assert marked == names


def test_the_marks_route_takes_critpath_lines_only(torch_cnn):
    r = torch_cnn.post("/api/timeline/critpath", {"line": "scope"})
    assert r.status_code == 400 and "critpath line" in r.get_json()["error"]
    r = torch_cnn.post("/api/timeline/critpath", {"line": "critpath -step 7"})
    assert r.status_code == 400 and "7" in r.get_json()["error"]


# -- memory as counters on the timeline ---------------------------------------------------

def _counters(window):
    return {lane["name"]: lane["counter"] for lane in window["lanes"] if lane["kind"] == "counter"}


def test_the_counters_are_the_memory_documents_level(leak):
    doc = _shell_json(LEAK, "memory")
    window = _window(leak, "graph")
    counters = _counters(window)
    assert list(counters) == ["%s memory" % d["name"] for d in doc["devices"]]
    assert window["groups"][0]["name"] == "memory"
    origin = round(window["origin_us"] * 1000)
    for d in doc["devices"]:
        c = counters["%s memory" % d["name"]]
        tl = d["timeline"]
        assert len(tl["time"]) == d["events"] <= 1000  # every event, at this width
        assert [t + origin for t in c["t"]] == [doc["start"] + t for t in tl["time"]]
        assert c["v"] == tl["allocated"] and c["r"] == tl["reserved"]
        assert c["peak"] == [doc["start"] + d["peak"]["time"] - origin, d["peak"]["bytes"]]


def test_xplane_counters_are_placed_by_the_step_markers(jax_gpt):
    doc = _shell_json(JAX, "memory")
    window = _window(jax_gpt, "graph")
    (name, c), = _counters(window).items()
    d = doc["devices"][0]
    assert name == "%s memory" % d["name"] and c["peak"][1] == d["peak"]["bytes"]
    # the peak falls in the step the memory command names, on the timeline's own steps
    step = next(s for s in window["steps"] if s["step"] == d["peak"]["step"])
    assert step["start"] <= c["peak"][0] <= step["end"]
    mem_step = next(s for s in doc["steps"] if s["step"] == d["peak"]["step"])
    # at the same place in it, to the ns the two readers' ps-to-ns roundings allow
    assert abs((c["peak"][0] - step["start"]) - (d["peak"]["time"] - mem_step["start"])) < 100


def test_a_narrow_window_keeps_each_pixels_highest_level(torch_cnn):
    full = _counters(_window(torch_cnn, "graph"))["gpu:0 memory"]
    r = torch_cnn.post("/api/timeline", {"line": "graph", "width": 200, "t0": 0,
                                         "t1": full["t"][-1] + 1})
    narrow = _counters(r.get_json())["gpu:0 memory"]
    assert len(narrow["t"]) <= 2 * 200 + 2 < len(full["t"])
    assert max(narrow["v"]) == max(full["v"]) == narrow["peak"][1]
    assert max(narrow["r"]) == max(full["r"])


def test_profiles_without_memory_have_no_counters():
    window = _window(Browser(["--profile_path=" + sample("synthetic_nccl")]), "graph")
    assert not _counters(window) and all(g["name"] != "memory" for g in window["groups"])


# -- notes ------------------------------------------------------------------------------

def test_a_profile_read_again_says_so_through_the_session(tmp_path):
    argv = ["--profile", "leak=" + sample("memory", "torch_leak"),
            "--profile", "base=" + sample("memory", "torch")]
    b = Browser(argv)
    answer = b.run("memory -base base")
    notes = answer["notes"]
    again = [n for n in notes if "again in full" in n]
    assert again and all(not n.startswith("tfprof:") for n in notes)
    assert any(n.startswith("leak: read ") and n.endswith("memory events need it")
               for n in again)
    shell = run_cli(argv + ["memory", "-base", "base"])
    assert ["tfprof: " + n for n in again] == [ln for ln in shell.err.splitlines()
                                                if "again in full" in ln]
    # each is said once: the next line has nothing more to say
    assert not [n for n in b.run("scope")["notes"] if "again in full" in n]
