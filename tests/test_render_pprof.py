"""pprof output: decoded with pprof's profile.proto schema and checked against the code view."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess

import pytest

from conftest import REQUIRED_FRAMEWORKS, ROOT, run_cli, sample
from tfprof_shell.api import Profile
from tfprof_shell.metrics import PPROF_ATTRIBUTES
from tfprof_shell.proto import pprof_profile_pb2

MODELS = ("tiny_mlp", "convnet", "while_rnn", "synthetic_gpu")


@pytest.fixture(scope="module")
def profiles():
    return {m: Profile.load(profile_path=sample(m, "profile")) for m in MODELS}


def _decode(path) -> pprof_profile_pb2.Profile:
    with open(path, "rb") as fh:
        data = fh.read()
    assert data[:2] == b"\x1f\x8b"
    prof = pprof_profile_pb2.Profile()
    prof.ParseFromString(gzip.decompress(data))
    return prof


def _write(prof: Profile, attr: str, tmp_path, extra: str = ""):
    path = tmp_path / ("%s.pb.gz" % attr)
    res = prof.profile("code", "-select %s %s -output pprof:outfile=%s" % (attr, extra, path))
    assert res.files == [str(path)]
    assert res.text == "\nRun pprof -png --nodecount=100 --sample_index=1 <%s>\n" % path
    return res, _decode(path)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("attr", PPROF_ATTRIBUTES)
def test_sample_totals_equal_code_view_totals(model, attr, profiles, tmp_path):
    res, prof = _write(profiles[model], attr, tmp_path)
    strings = list(prof.string_table)
    assert strings[0] == ""
    assert [(strings[v.type], strings[v.unit]) for v in prof.sample_type][0] == ("count", "count")
    assert strings[prof.sample_type[1].type] == attr
    assert all(len(s.value) == 2 and s.value[0] == 1 for s in prof.sample)
    assert sum(s.value[1] for s in prof.sample) == res["root"]["total"][attr]
    assert all(strings[s.label[0].key] == "graph node:" for s in prof.sample)


@pytest.mark.parametrize("model", MODELS)
def test_locations_follow_the_displayed_call_paths(model, profiles, tmp_path):
    res, prof = _write(profiles[model], "micros", tmp_path, "-max_depth 1000")
    strings = list(prof.string_table)
    functions = {f.id: (strings[f.name], strings[f.filename]) for f in prof.function}
    locations = {loc.id: loc for loc in prof.location}
    assert set(functions) == set(range(1, len(functions) + 1))
    # One sample per graph node under a displayed leaf; its stack depth is the
    # leaf's depth minus one (top-level frames have no caller location).
    leaves = {}
    stack = [res["root"]]
    while stack:
        node = stack.pop()
        stack.extend(node["children"])
        if not node["children"] and node["depth"] > 0:
            for name in node["graph_nodes"]:
                leaves[name] = node
    for s in prof.sample:
        node = leaves[strings[s.label[0].str]]
        assert len(s.location_id) == node["depth"] - 1
        innermost = locations[s.location_id[0]] if s.location_id else None
        if innermost is not None:
            func, filename = functions[innermost.line[0].function_id]
            label_file, _, label_func = node["name"].split(":", 2)
            assert os.path.basename(filename) == label_file
            base = label_file.rsplit(".", 1)[0]
            func_label = label_func.replace(" (gradient)", "")
            if func_label.endswith("..."):
                assert func.startswith(base + ":" + func_label[:-3])
            else:
                assert func.split(" (gradient)")[0] == base + ":" + func_label


def test_reproduces_the_engine_file_bytes(tmp_path):
    """zlib's gzip header (mtime 0, OS 3) and the engine's table order give identical bytes."""
    golden = os.path.join(ROOT, "tests", "golden", "tiny_mlp", "code.pprof_micros.files",
                          "profile.pb.gz")
    if not os.path.exists(golden):
        pytest.skip("golden not generated")
    r = run_cli(["--profile_path=" + sample("tiny_mlp", "profile"), "code", "-select", "micros",
                 "-output", "pprof:outfile=profile.pb.gz"], cwd=str(tmp_path))
    assert r.code == 0, r.err
    with open(golden, "rb") as fh, open(tmp_path / "profile.pb.gz", "rb") as mine:
        assert mine.read() == fh.read()


def test_no_displayed_leaf_gives_an_empty_profile(profiles, tmp_path):
    res, prof = _write(profiles["tiny_mlp"], "micros", tmp_path, "-start_name_regexes nomatch")
    assert list(prof.sample) == [] and list(prof.location) == []
    assert len(prof.comment) == 1


@pytest.mark.parametrize("command,message", [
    (["scope", "-output", "pprof:outfile=x.pb.gz"], "code view"),
    (["code", "-select", "micros,bytes", "-output", "pprof:outfile=x.pb.gz"], "exactly one"),
    (["code", "-select", "occurrence", "-output", "pprof:outfile=x.pb.gz"], "occurrence"),
])
def test_refused_requests_write_nothing(command, message, tmp_path):
    r = run_cli(["--profile_path=" + sample("tiny_mlp", "profile")] + command, cwd=str(tmp_path))
    assert r.code != 0 and r.out == ""
    assert os.listdir(tmp_path) == []
    assert message in r.err and len(r.err.strip().splitlines()) == 1


_TOP_LINE = re.compile(r"^\s*([0-9.]+)(\w+)\s+\S+\s+\S+\s+([0-9.]+)\w+\s+\S+\s+(.+)$")


@pytest.mark.pprof
@pytest.mark.skipif(shutil.which("go") is None and "pprof" not in REQUIRED_FRAMEWORKS,
                    reason="needs the Go toolchain's pprof")
@pytest.mark.parametrize("model", ["tiny_mlp", "convnet"])
def test_go_pprof_top_agrees_with_the_code_view(model, profiles, tmp_path):
    """`go tool pprof -top`: same total, and each function's flat = its leaves in the text."""
    res, _ = _write(profiles[model], "micros", tmp_path, "-max_depth 1000")
    out = subprocess.run(["go", "tool", "pprof", "-top", "-unit=us", "-nodecount=100000",
                          "-nodefraction=0", res.files[0]],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    total = int(re.search(r"of ([0-9]+)us total", out).group(1))
    assert total == res["root"]["total"]["micros"]
    flat_by_function = {}
    for line in out.splitlines():
        m = _TOP_LINE.match(line)
        if m and m.group(2) == "us" and float(m.group(1)) > 0:
            flat_by_function[m.group(4).strip()] = int(float(m.group(1)))
    leaves: dict[str, int] = {}
    stack = [res["root"]]
    while stack:
        node = stack.pop()
        stack.extend(node["children"])
        if not node["children"] and node["depth"] > 1:
            file, _, func = node["name"].split(":", 2)
            gradient = func.endswith(" (gradient)")
            func = func.replace(" (gradient)", "")
            key = "%s:%s%s" % (file.rsplit(".", 1)[0], func, " (gradient)" if gradient else "")
            leaves[key] = leaves.get(key, 0) + node["total"]["micros"]
    assert {k: v for k, v in leaves.items() if v > 0} == flat_by_function
