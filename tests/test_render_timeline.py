"""Chrome-trace timelines: event shapes, durations against the view, naming, merging.

Byte equality with the engine's files is checked here for the engine's JSON
writer quirks (sorted keys, compact separators); whole-case equality with
the engine's goldens lives in test_golden.py.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import ROOT, run_cli, sample
from tfprof_shell.api import Profile
from tfprof_shell.errors import OutputError
from tfprof_shell.render import chrome_trace as ct
from tfprof_shell.render import timeline as tl

MODELS = ("tiny_mlp", "convnet", "while_rnn", "synthetic_gpu")
GOLDEN = os.path.join(ROOT, "tests", "golden")

# Fields chrome://tracing (Trace Event Format) needs per phase.
REQUIRED = {
    "M": {"name", "ph", "pid", "args"},
    "X": {"name", "ph", "pid", "tid", "ts", "dur"},
    "s": {"name", "ph", "pid", "tid", "ts", "id", "cat"},
    "t": {"name", "ph", "pid", "tid", "ts", "id", "cat"},
    "C": {"name", "ph", "pid", "ts", "args"},
}


@pytest.fixture(scope="module")
def profiles():
    return {m: Profile.load(profile_path=sample(m, "profile")) for m in MODELS}


def _events(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    assert list(doc) == ["traceEvents"]
    return doc["traceEvents"]


def _check_chrome_fields(events: list[dict]) -> None:
    named = {e["pid"] for e in events if e["ph"] == "M"}
    for e in events:
        assert e["ph"] in REQUIRED, e
        assert REQUIRED[e["ph"]] <= set(e), e
        for key in ("pid", "tid", "ts", "dur", "id"):
            if key in e:
                assert isinstance(e[key], int) and not isinstance(e[key], bool), e
        if e["ph"] == "X":
            assert e["dur"] >= 0
        if e["ph"] == "M":
            assert e["name"] == "process_name" and isinstance(e["args"]["name"], str)
        if e["ph"] != "M":
            assert e["pid"] in named, "pid %s has no process_name" % e["pid"]
    flows: dict[int, list[str]] = {}
    for e in events:
        if e["ph"] in "st":
            flows.setdefault(e["id"], []).append(e["ph"])
    assert all(phases == ["s", "t"] for phases in flows.values())


def _walk(node: dict):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n["children"]))


@pytest.mark.parametrize("model", MODELS)
def test_graph_timeline_durations_match_view(model, profiles, tmp_path):
    prof = profiles[model]
    for step in prof.steps:
        res = prof.profile("graph", "-max_depth 100000 -step %d -output timeline:outfile=%s"
                           % (step, tmp_path / "t"))
        assert res.files == [str(tmp_path / "t") + "_%d" % step]
        events = _events(res.files[0])
        _check_chrome_fields(events)
        durations: dict[str, int] = {}
        for e in events:
            if e["ph"] == "X":
                assert e["args"] == {"name": e["name"]}
                durations[e["name"]] = durations.get(e["name"], 0) + e["dur"]
        view = prof.profile("graph", "-max_depth 100000 -step %d -output none" % step)
        nodes = [n for n in _walk(view["root"]) if n["depth"] > 0]
        assert sum(1 for n in nodes if n["self"]["micros"] > 0) > 10
        for n in nodes:
            assert durations.get(n["name"], 0) == n["self"]["micros"], n["name"]


@pytest.mark.parametrize("view", ["scope", "code"])
@pytest.mark.parametrize("model", MODELS)
def test_tree_timeline_regions_are_view_totals(view, model, profiles, tmp_path):
    prof = profiles[model]
    res = prof.profile(view, "-max_depth 6 -output timeline:outfile=%s" % (tmp_path / "t"))
    assert res.files == [str(tmp_path / "t") + "_-1"]
    events = _events(res.files[0])
    _check_chrome_fields(events)
    regions = [e for e in events if e["ph"] == "X"]
    shown = [n for n in _walk(res["root"])
             if n["depth"] == 0 or n["total"]["micros"] > 0]
    # Same nodes in display order; pid = depth; duration = the node's total time.
    assert [(e["name"], e["pid"], e["dur"]) for e in regions] == [
        (n["name"], n["depth"], n["total"]["micros"]) for n in shown]
    # Children are laid end to end inside their parent.
    by_depth_end: dict[int, int] = {}
    for e in regions:
        assert e["ts"] >= by_depth_end.get(e["pid"], 0)
        by_depth_end[e["pid"]] = e["ts"] + e["dur"]


def test_gpu_timeline_has_flows_memory_and_peak_line(profiles, tmp_path):
    res = profiles["synthetic_gpu"].profile(
        "graph", "-max_depth 100000 -step 2 -output timeline:outfile=%s" % (tmp_path / "g"))
    events = _events(res.files[0])
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert any(n.startswith("Op execution threads: ") and "stream:all" in n for n in names)
    assert any(n.startswith("mem usage on:") for n in names)
    assert {e["ph"] for e in events} >= {"s", "t", "C"}
    assert res.text.startswith("generating trace file.\n")
    assert " peak memory: " in res.text
    assert res.text.endswith("Timeline file is written to %s_2.\nOpen a Chrome browser, "
                             "enter URL chrome://tracing and load the timeline file.\n"
                             "******************************************************\n"
                             % (tmp_path / "g"))


def test_graph_step_minus_one_writes_one_file_per_step(tmp_path):
    r = run_cli(["--profile_path=" + sample("tiny_mlp", "profile"), "graph",
                 "-output", "timeline:outfile=tl.json"], cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert sorted(os.listdir(tmp_path)) == ["tl.json_0", "tl.json_1", "tl.json_2"]
    assert r.out.count("generating trace file.\n") == 3


def test_graph_timeline_without_steps_writes_nothing(tmp_path):
    r = run_cli(["--graph_path=" + sample("tiny_mlp", "graph.pbtxt"), "graph",
                 "-output", "timeline:outfile=tl.json"], cwd=str(tmp_path))
    assert r.code == 0 and r.out == ""
    assert os.listdir(tmp_path) == []
    assert "no steps" in r.err


def test_engine_json_writer_bytes(tmp_path):
    """jsoncpp FastWriter layout: sorted keys, no spaces, one line, final newline."""
    case = os.path.join(GOLDEN, "tiny_mlp", "graph.timeline_step_1.files", "trace.json_1")
    if not os.path.exists(case):
        pytest.skip("golden not generated")
    r = run_cli(["--profile_path=" + sample("tiny_mlp", "profile"), "graph", "-step", "1",
                 "-output", "timeline:outfile=trace.json"], cwd=str(tmp_path))
    assert r.code == 0, r.err
    with open(case, "rb") as fh, open(tmp_path / "trace.json_1", "rb") as mine:
        assert mine.read() == fh.read()


def test_json_escapes_like_jsoncpp():
    trace = ct.Trace([ct.ProcessName(0, "Scope:0"), ct.Region("a\u00e9\U0001f600", 0, 0, 5, 7)])
    text = trace.to_json()
    assert text.endswith("}\n") and text.count("\n") == 1
    assert "\\u00e9" in text and "\\ud83d\\ude00" in text
    assert text.startswith('{"traceEvents":[{"args":{"name":"Scope:0"},"name":"process_name"')


@pytest.mark.parametrize("view", ["graph", "scope"])
def test_merged_timeline_lays_steps_end_to_end(view, profiles, tmp_path):
    prof = profiles["synthetic_gpu"]
    single = prof.profile(view, "-max_depth 100000 -output timeline:outfile=%s" % (tmp_path / "s")
                          if view == "graph" else "-max_depth 100000 -step 0 -output "
                          "timeline:outfile=%s" % (tmp_path / "s"))
    merged = prof.profile(view, "-max_depth 100000 -output timeline:outfile=%s,merge=true"
                          % (tmp_path / "m"))
    assert merged.files == [str(tmp_path / "m")]
    events = _events(merged.files[0])
    _check_chrome_fields(events)
    names = [e["args"]["name"] for e in events if e["ph"] == "M"]
    assert len(names) == len(set(names)) and names[0] == "Steps"
    labels = [e for e in events if e["ph"] == "X" and e["pid"] == 0]
    assert [e["args"]["step"] for e in labels] == prof.steps
    for before, after in zip(labels, labels[1:]):
        assert before["ts"] + before["dur"] < after["ts"]
    # Every step keeps its own events, shifted as a block into its label's span.
    first = _events(single.files[0])
    # (graph view: less the step category tracks merge=true adds, see test_steps.py)
    categories = {e["pid"] for e in events
                  if e["ph"] == "M" and e["args"]["name"].startswith("Step categories")}
    assert bool(categories) == (view == "graph")
    step0 = [e for e in events if e["ph"] == "X" and e["pid"] not in categories | {0}
             and e["args"]["step"] == 0]
    assert len(step0) == len([e for e in first if e["ph"] == "X"])
    lo = min(e["ts"] for e in first if e["ph"] == "X")
    assert sorted((e["name"], e["dur"], e["ts"] - labels[0]["ts"]) for e in step0) == sorted(
        (e["name"], e["dur"], e["ts"] - lo) for e in first if e["ph"] == "X")
    for e in events:
        if e["ph"] == "X" and e["pid"] != 0:
            label = labels[prof.steps.index(e["args"]["step"])]
            assert label["ts"] <= e["ts"] and e["ts"] + e["dur"] <= label["ts"] + label["dur"]


def test_large_trace_warns(profiles, tmp_path, monkeypatch):
    monkeypatch.setattr(tl, "LARGE_TRACE_BYTES", 100)
    res = profiles["tiny_mlp"].profile("scope", "-output timeline:outfile=%s" % (tmp_path / "x"))
    assert any("over 200MB" in n for n in res.notes)


def test_unwritable_timeline_is_an_error(profiles, tmp_path):
    with pytest.raises(OutputError):
        profiles["tiny_mlp"].profile("scope", "-output timeline:outfile=%s"
                                     % (tmp_path / "missing" / "t"))
    assert os.listdir(tmp_path) == []


def test_op_view_timeline_is_refused(tmp_path):
    r = run_cli(["--profile_path=" + sample("tiny_mlp", "profile"), "op",
                 "-output", "timeline:outfile=t"], cwd=str(tmp_path))
    assert r.code != 0 and r.out == "" and os.listdir(tmp_path) == []
