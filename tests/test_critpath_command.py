"""The `critpath` command: its windows, -whatif, -host_gaps, -base, outputs and errors,
on the shipped samples (PyTorch on an H100, JAX on an H100, TF1, CPU-only)."""

from __future__ import annotations

import glob
import gzip
import json
import os

import pytest
from conftest import ROOT, run_cli, sample

CNN = "--profile_path=" + sample("torch_cnn")
MIXED = "--profile_path=" + os.path.join(ROOT, "tests", "critpath", "mixed")


def _json(*argv: str) -> dict:
    run = run_cli(list(argv) + ["-output", "json"])
    assert run.code == 0, run.err
    return json.loads(run.out)


def test_every_step_gets_its_path_with_htas_categories():
    run = run_cli([CNN, "critpath"])
    assert run.code == 0, run.err
    assert run.out.startswith("Critical path (HTA's definition, at the trace's ns precision)")
    lines = run.out.splitlines()
    assert lines[3].split()[:6] == ["ProfilerStep#2", "2", "2990.1", "9742.0", "30.7%", "389"]
    assert lines[4].split()[:6] == ["ProfilerStep#3", "3", "2508.9", "7548.7", "33.2%", "592"]
    assert "cpu_bound 98.7%, gpu_compute_bound 1.0%, gpu_kernel_launch_overhead 0.3%" in lines[3]
    assert "Where the path's time goes" in run.out


def test_the_json_is_the_issues_schema_with_the_traces_own_times():
    doc = _json(CNN, "critpath", "-step", "2")
    assert doc["mode"] == "critpath" and list(doc["definitions"]) == ["hta"]
    (path,) = doc["paths"]
    assert path["window"] == {"name": "ProfilerStep#2", "instance": 0,
                              "start": 4569521865579.161, "end": 4569521875321.158, "step": 2}
    assert path["length"] == 2990.104
    assert path["by_bound"] == {"cpu_bound": 2950.723, "gpu_compute_bound": 30.209,
                                "gpu_kernel_launch_overhead": 9.172}
    assert set(path["events"][0]) >= {"name", "ts", "dur", "cat", "pid", "tid"}
    assert len(path["events"]) == 389
    # the edges chain the events from the first to the last, and add up to the length
    edges = path["edges"]
    assert all(a["to"] == b["from"] and a["to_at"] == b["from_at"]
               for a, b in zip(edges, edges[1:]))
    assert sum(e["weight"] for e in edges) == pytest.approx(path["length"], abs=0.01)
    kinds = {e["type"] for e in edges}
    assert kinds <= {"operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay",
                     "sync_dependency"} and "kernel_launch_delay" in kinds
    # every event is the trace's own: its name and ts as the file writes them
    with gzip.open(glob.glob(os.path.join(sample("torch_cnn"), "*.pt.trace.json.gz"))[0]) as fh:
        trace = {(e.get("name"), e.get("ts")) for e in json.load(fh)["traceEvents"]}
    assert {(e["name"], e["ts"]) for e in path["events"]} <= trace


def test_regions_number_every_instance_in_order():
    doc = _json(CNN, "critpath", "-region", "forward")
    windows = [p["window"] for p in doc["paths"]]
    assert [(w["name"], w["instance"]) for w in windows] == [("forward", 0), ("forward", 1),
                                                            ("forward", 2)]
    assert windows[0]["start"] < windows[1]["start"] < windows[2]["start"]
    assert all(p["length"] <= p["wall"] for p in doc["paths"])


def test_host_gaps_weigh_the_host_time_between_ops():
    plain = _json(CNN, "critpath", "-step", "2")["paths"][0]
    gaps = _json(CNN, "critpath", "-step", "2", "-host_gaps")["paths"][0]
    assert gaps["length"] > 3 * plain["length"]
    assert gaps["length"] <= gaps["wall"]
    assert any(e["type"] == "dependency" and e["weight"] > 0 for e in gaps["edges"])


def test_whatif_scales_matching_work_and_estimates_the_window():
    doc = _json(CNN, "critpath", "-step", "2", "-whatif", "aten::mm=0.5",
                "-whatif", "cat:kernel=0.5")
    path = doc["paths"][0]
    w = path["whatif"]
    assert w["rules"] == ["aten::mm=0.5", "cat:kernel=0.5"]
    assert w["edges_scaled"] > 0
    assert w["length"] < path["length"]
    assert w["estimated_wall"] == pytest.approx(path["wall"] - (path["length"] - w["length"]),
                                                abs=0.01)
    # removing all host work leaves a path of device work and delays only
    gone = _json(CNN, "critpath", "-step", "2", "-whatif", "bound:cpu_bound=0")["paths"][0]
    assert "cpu_bound" not in gone["whatif"]["by_bound"]
    same = _json(CNN, "critpath", "-step", "2", "-whatif", "nothing_matches=0.1")["paths"][0]
    assert same["whatif"]["edges_scaled"] == 0 and same["whatif"]["length"] == path["length"]


def test_whatif_text_shows_the_new_path():
    run = run_cli([CNN, "critpath", "-step", "2", "-whatif", "aten::mm=0.5;cat:kernel=0.5"])
    assert run.code == 0, run.err
    assert "What if aten::mm=0.5, cat:kernel=0.5" in run.out
    assert "est. wall" in run.out


def test_the_timeline_marks_the_path_with_flow_arrows(tmp_path):
    out = tmp_path / "cp.json"
    run = run_cli([CNN, "critpath", "-step", "2", "-output", "timeline:outfile=%s" % out])
    assert run.code == 0, run.err
    events = json.loads(out.read_text())["traceEvents"]
    critical = [e for e in events if e.get("ph") == "X" and e["args"].get("critical") == 1]
    assert len(critical) == 389
    assert len([e for e in events if e.get("ph") == "X"]) > len(critical)
    starts = [e for e in events if e.get("ph") == "s"]
    ends = [e for e in events if e.get("ph") == "f"]
    assert starts and len(starts) == len(ends)
    assert {e["cat"] for e in starts} >= {"critical_path_kernel_launch_delay"}


def test_base_compares_each_step_of_two_profiles():
    run = run_cli(["--profile", "cnn=" + sample("torch_cnn"),
                   "--profile", "sim=" + os.path.join(ROOT, "tests", "critpath", "mixed"),
                   "critpath", "-step", "2", "-base", "sim"])
    assert run.code == 0, run.err
    assert run.out.startswith("Critical path of cnn against sim; times in us.")
    assert "ProfilerStep#2  2990.1  363.2  +2626.9" in run.out


def test_other_formats_say_what_their_path_is():
    gpt = run_cli(["--profile_path=" + sample("jax_gpt"), "critpath", "-step", "1"])
    assert gpt.code == 0, gpt.err
    assert "approximate: a TF2/JAX profile records no waits between streams" in gpt.out
    assert "gpu_compute_bound" in gpt.out
    tf1 = run_cli(["--profile_path=" + sample("convnet", "profile"), "critpath"])
    assert tf1.code == 0, tf1.err
    assert "TensorFlow 1: the longest dataflow chain of measured op times" in tf1.out
    assert "conv/Conv2D" in _json("--profile_path=" + sample("convnet", "profile"),
                                  "critpath", "-step", "20")["paths"][0]["events"][2]["name"]
    cpu = run_cli(["--profile_path=" + sample("torch_record"), "critpath"])
    assert cpu.code == 0, cpu.err
    assert "host only: the profile has no device events, so no device path" in cpu.out


@pytest.mark.parametrize("argv,fragment", [
    ([CNN, "critpath", "-step", "9"], "-step 9 not found; available steps: 2 3 4"),
    ([CNN, "critpath", "-region", "nothing"], "-region nothing matches no annotation"),
    ([CNN, "critpath", "-output", "pprof:outfile=x"], "critpath cannot write -output pprof"),
    ([CNN, "critpath", "-whatif", "aten::mm"], "-whatif takes REGEX=FACTOR"),
    ([CNN, "critpath", "-whatif", "aten::mm=-1"], "the factor must be a number, 0 or more"),
    ([CNN, "critpath", "-whatif", "(=1"], "invalid regular expression"),
    ([CNN, "critpath", "-base", "nope"], "-base nope: no such profile"),
    (["--profile_path=" + sample("timeline", "mlp")] + ["critpath"],
     "records no dependencies"),
])
def test_mistakes_are_one_line(argv, fragment):
    run = run_cli(argv)
    assert run.code != 0
    assert fragment in run.err
    assert "Traceback" not in run.err and len(run.err.strip().splitlines()) <= 2


def test_advise_names_what_bounds_the_steps():
    run = run_cli([CNN, "advise", "-checkers", "CriticalPathChecker"])
    assert run.code == 0, run.err
    assert ("critical path: 98% of the steps' critical path is host work (cpu_bound)"
            in run.out)
    assert "cudaLaunchKernel (runtime)" in run.out


def test_the_python_api_returns_the_json_document():
    from tfprof_shell.api import Profile

    result = Profile.load(sample("torch_cnn")).run("critpath -step 3")
    assert result["mode"] == "critpath"
    assert result["paths"][0]["length"] == 2508.921
    assert result.value.paths[0].window.step == 3


def test_a_cuda_graph_launch_delays_its_first_kernel_and_chains_the_rest():
    """jax_attention runs each step as one XLA command buffer (cuGraphLaunch, 1:N)."""
    path = _json("--profile_path=" + sample("jax_attention"), "critpath", "-step", "1")
    (p,) = path["paths"]
    ev = p["events"]
    kinds = [(e["type"], ev[e["from"]]["name"], ev[e["to"]]["kind"]) for e in p["edges"]
             if e["type"] in ("kernel_launch_delay", "kernel_kernel_delay")]
    assert kinds[0][:2] == ("kernel_launch_delay", "cuGraphLaunch (CudaGraph:20)")
    assert all(k == "kernel_kernel_delay" and to == "device" for k, _, to in kinds[1:])
    assert p["definition"] == "xplane" and len(kinds) > 20
