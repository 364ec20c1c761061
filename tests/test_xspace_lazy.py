"""An XSpace split into parts (load/xspace_lazy.py): host lines parsed one at a
time, the rest as the whole parse gives it; damage in a line still refused."""

from __future__ import annotations

import pytest

from tfprof_shell.errors import LoadError
from tfprof_shell.load.xplane import load_xplane
from tfprof_shell.load.xspace_lazy import HostPlane, LazyLine, SplitSpace, split_space
from tfprof_shell.proto import xplane_pb2
from xspace_builder import Space


def _space() -> Space:
    sp = Space()
    sp.plane("Task Environment")
    plane = sp.plane("/host:CPU")
    py = plane.line("python")
    py.event("train", 0, 1000, step_num=3)
    py.event("$train.py:10 main", 0, 500)
    py.event("FunctionRun", 20, 100, id=7)
    compute = plane.line("tf_Compute/1")
    compute.event("ExecutorState::Process", 30, 80, id=7)
    compute.event("dense/MatMul:MatMul", 40, 10)
    gpu = sp.plane("/device:GPU:0").line("Stream #7(Compute)")
    gpu.event("gemm", 45, 3, tf_op="dense/MatMul:MatMul")
    return sp


def test_split_space_holds_what_the_whole_parse_holds(tmp_path):
    path = _space().write(tmp_path / "h.xplane.pb")
    with open(path, "rb") as f:
        data = f.read()
    whole = xplane_pb2.XSpace.FromString(data)
    split = split_space(data)
    assert isinstance(split, SplitSpace)
    assert list(split.hostnames) == list(whole.hostnames)
    assert [p.name for p in split.planes] == [p.name for p in whole.planes]
    for mine, theirs in zip(split.planes, whole.planes):
        if not isinstance(mine, HostPlane):
            assert mine == theirs  # other planes: the parsed message itself
            continue
        assert dict(mine.event_metadata) == dict(theirs.event_metadata)
        assert dict(mine.stat_metadata) == dict(theirs.stat_metadata)
        assert len(mine.lines) == len(theirs.lines)
        for line, xline in zip(mine.lines, theirs.lines):
            assert isinstance(line, LazyLine)
            assert (line.id, line.name, line.timestamp_ns, line.duration_ps) == \
                (xline.id, xline.name, xline.timestamp_ns, xline.duration_ps)
            assert list(line.events) == list(xline.events)
            by_index = line.event_bytes()
            assert [by_index[i] for i in range(len(by_index))] == list(xline.events)


def test_loading_never_parses_the_whole_space(tmp_path, monkeypatch):
    from tfprof_shell.load import xspace_pick as XS

    path = _space().write(tmp_path / "h.xplane.pb")
    reference = load_xplane([path])

    def whole(cls, data):
        raise AssertionError("the whole XSpace was parsed")

    monkeypatch.setattr(XS, "parse_binary", whole)
    model = load_xplane([path])
    assert ({n: (v.execs, v.trace) for n, v in model.nodes.items()}
            == {n: (v.execs, v.trace) for n, v in reference.nodes.items()})
    assert model.nodes["dense/MatMul"].trace


def _with_line(line: bytes) -> bytes:
    """An XSpace whose host plane holds one line of these bytes."""
    plane = xplane_pb2.XPlane(name="/host:CPU").SerializeToString()
    plane += b"\x1a" + bytes([len(line)]) + line  # field 3 (lines)
    return b"\x0a" + bytes([len(plane)]) + plane  # field 1 (planes)


@pytest.mark.parametrize("line", [
    b"\x22\x03\x08\xff\xff",  # an event cut inside its metadata id
    b"\x22\x04\x22\x02\x08\x80",  # a stat cut inside its metadata id
    b"\x12\x02\xc3\x28",  # a line name that is not UTF-8
])
def test_a_damaged_host_line_is_still_refused(tmp_path, line):
    data = _with_line(line)
    with pytest.raises(Exception):
        xplane_pb2.XSpace.FromString(data)  # the whole parse refuses it too
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    with pytest.raises(LoadError, match="not an XSpace"):
        load_xplane([str(path)])


def test_ids_from_a_kept_space_are_those_read_from_the_file(tmp_path):
    from tfprof_shell.load.xspace import Host, time_origin
    from tfprof_shell.load.xspace_pick import read_xspace_picked

    path = _space().write(tmp_path / "h.xplane.pb")
    found = []
    for source in (path, ""):
        space, picked = read_xspace_picked(path)
        _, first = time_origin(space)
        host = Host(space, 0, "", -first, source, picked)
        host.read_ids()
        found.append([list(line.ids) for line in host.lines])
    assert found[0] == found[1]
    assert any(found[0])


@pytest.mark.parametrize("seed", range(30))
def test_eager_ops_read_as_columns_are_those_read_one_event_at_a_time(tmp_path, seed):
    import random

    from tfprof_shell.load.xspace import Host, time_origin
    from tfprof_shell.load.xspace_pick import read_xspace_picked
    from xspace_builder import U64

    rng = random.Random(seed)
    sp = Space()
    py = sp.plane("/host:CPU").line("python")
    shape = rng.choice(["plain", "func", "extra", "mixed", "ref-like int", "no op"])
    t = 1.0
    for k in range(rng.randrange(1, 40)):
        stats = {"eager_op": rng.choice(["AddV2", "MatMul", "Cast", ""])}
        if shape == "func":
            stats["is_func"] = rng.choice([0, 1, U64(1)]) if seed % 2 else rng.choice([0, 1])
        elif shape == "extra":
            stats = {"_r": k, **stats, "is_func": 0}
        elif shape == "mixed":
            stats = rng.choice([stats, {}, {"is_func": 1, **stats}, {"eager_op": 3}])
        elif shape == "ref-like int":
            stats["eager_op"] = k
        elif shape == "no op":
            stats = {"is_func": rng.choice([0, 1])}
        py.event("EagerExecute", t, rng.choice([3, 3, 0]) if shape == "mixed" else 3, **stats)
        py.event("EagerKernelExecute", t + 1, rng.choice([1, 1, 1, 0]))
        py.event("dense/MatMul:MatMul", t + 1.5, 0.2)
        t += rng.choice([4, 5])
    path = sp.write(tmp_path / "h.xplane.pb")
    found = []
    for pick in (True, False):
        space, picked = read_xspace_picked(path, pick)
        _, first = time_origin(space)
        host = Host(space, 0, "", -first, path, picked)
        found.append([(line.eagers, line.kernels, line.runs) for line in host.lines])
    assert found[0] == found[1]
    assert any(eagers or kernels for eagers, kernels, _ in found[0])
