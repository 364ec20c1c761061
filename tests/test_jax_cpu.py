"""XLA on the CPU (JAX): thunk events on host threads -> HLO instructions -> framework ops.

The rules are checked on the recorded sample (``sample_profiles/jax_cpu``)
against facts read from the file here with the bare protobuf schemas (not
our loader): which events are thunks, their programs' instruction metadata,
their times; and on small synthetic XSpaces for what the sample does not
hold (several threads and programs, nested thunks, missing HLO stats, thunks
outside the steps, a profile with nothing to show).
"""

from __future__ import annotations

import glob
import importlib.util
import io
import json
import os
import re

import pytest

from conftest import ROOT, SAMPLES, run_cli
from tfprof_shell.load.xplane import load_xplane
from tfprof_shell.model import stats as S
from tfprof_shell.options import DEFAULTS
from tfprof_shell.proto import hlo_pb2, xplane_pb2
from tfprof_shell.session import Session
from xspace_builder import U64, Space

ALL = DEFAULTS.replace(max_depth=1000)
CPU0 = "/job:localhost/replica:0/task:0/device:cpu:0"
SAMPLE_DIR = os.path.join(SAMPLES, "jax_cpu")


def _sample_file() -> str:
    (path,) = glob.glob(os.path.join(SAMPLE_DIR, "plugins", "profile", "*", "*.xplane.pb"))
    return path


def _us(ps: int) -> int:
    """Picoseconds to whole microseconds as profiles count them (0 rounds up to 1)."""
    return (ps + 500_000) // 1_000_000 or 1


# ---------------------------------------------------------------------------
# Facts of the sample, read with the bare schemas
# ---------------------------------------------------------------------------
class SampleFacts:
    """What the sample's bytes say, independently of the loader."""

    def __init__(self, path: str) -> None:
        space = xplane_pb2.XSpace()
        with open(path, "rb") as fh:
            space.ParseFromString(fh.read())
        self.programs: dict[int, dict[str, str]] = {}  # program id -> instruction -> op_name
        self.traced: set[tuple[int, str]] = set()  # (program id, instruction) with a stack
        self.module_names: dict[int, str] = {}
        self.markers: list[tuple[int, int, int]] = []  # (start ps, end ps, step)
        self.thunks: list[tuple[int, int, str, int, int]] = []  # start, dur, hlo op, pid, line
        for plane in space.planes:
            names = {k: v.name for k, v in plane.stat_metadata.items()}
            if plane.name == "/host:metadata":
                for md in plane.event_metadata.values():
                    st = {names[s.metadata_id]: s for s in md.stats}
                    proto = hlo_pb2.HloProto.FromString(st["Hlo Proto"].bytes_value)
                    pid = st["program_id"].uint64_value
                    self.module_names[pid] = proto.hlo_module.name
                    self.programs[pid] = {
                        i.name: i.metadata.op_name
                        for c in proto.hlo_module.computations for i in c.instructions}
                    self.traced.update(
                        (pid, i.name) for c in proto.hlo_module.computations
                        for i in c.instructions
                        if i.metadata.stack_frame_id > 0 or i.metadata.source_file)
            if plane.name != "/host:CPU":
                continue
            for li, line in enumerate(plane.lines):
                base = line.timestamp_ns * 1000
                for ev in line.events:
                    st = {names[s.metadata_id]: s for s in ev.stats}
                    start = base + ev.offset_ps
                    if "step_num" in st:
                        self.markers.append((start, start + ev.duration_ps,
                                             st["step_num"].int64_value))
                    if "hlo_op" in st:
                        hlo_op = names[st["hlo_op"].ref_value]
                        assert plane.event_metadata[ev.metadata_id].name == hlo_op
                        self.thunks.append((start, ev.duration_ps, hlo_op,
                                            st["program_id"].int64_value, li))

        self.self_ps = [self._self_time(t) for t in self.thunks]

    def _inside(self, a, b) -> bool:
        """Whether thunk a runs inside thunk b (same thread, within its span)."""
        return a is not b and a[4] == b[4] and b[0] <= a[0] and a[0] + a[1] <= b[0] + b[1]

    def _self_time(self, t) -> int:
        inner = [c for c in self.thunks if self._inside(c, t)]
        direct = [c for c in inner if not any(self._inside(c, d) for d in inner)]
        return t[1] - sum(c[1] for c in direct)

    def outermost(self):
        return [t for t in self.thunks if not any(self._inside(t, o) for o in self.thunks)]

    def step_of(self, t: int):
        inside = [m for m in self.markers if m[0] <= t < m[1]]
        return min(inside, key=lambda m: m[1] - m[0])[2] if inside else None


@pytest.fixture(scope="module")
def facts():
    return SampleFacts(_sample_file())


@pytest.fixture(scope="module")
def model():
    return load_xplane([_sample_file()])


def test_the_sample_is_what_its_script_says(facts):
    assert sorted(m[2] for m in facts.markers) == [10, 11, 12]
    modules = {facts.module_names[t[3]] for t in facts.thunks}
    assert modules == {"jit_train_step", "jit_encoder"}
    assert len({t[4] for t in facts.thunks}) >= 1  # the XLA threads that ran thunks
    # the encoder's fori_loop is a while thunk with its body's thunks inside
    whiles = [t for t in facts.thunks if t[2].startswith("while")]
    assert whiles and all(any(facts._inside(c, w) for c in facts.thunks) for w in whiles)
    outside = [t for t in facts.thunks if facts.step_of(t[0]) is None]
    assert outside and {facts.module_names[t[3]] for t in outside} == {"jit_train_step"}


def test_every_thunk_in_a_step_is_one_execution_of_its_framework_op(facts, model):
    assert model.steps == [10, 11, 12]
    want: dict[tuple[str, int], list[int]] = {}
    for (start, _, hlo_op, pid, _), self_ps in zip(facts.thunks, facts.self_ps):
        step = facts.step_of(start)
        if step is None:
            continue
        op_name = facts.programs[pid][hlo_op] or "%s/%s" % (facts.module_names[pid], hlo_op)
        want.setdefault((op_name, step), []).append(_us(self_ps))
    got: dict[tuple[str, int], list[int]] = {}
    for name, node in model.nodes.items():
        for step, rec in node.execs.items():
            assert list(rec.cpu_execs) == [CPU0] and not rec.accelerator_execs
            got[(name, step)] = sorted(d for _, d in rec.cpu_execs[CPU0])
            assert rec.run_count == len(rec.cpu_execs[CPU0])
    assert got == {k: sorted(v) for k, v in want.items()}


def test_totals_are_the_thunks_time_in_the_steps(facts, model):
    session = Session(model)
    for step in (10, 11, 12):
        root = session.show("scope", ALL.replace(step=step)).root
        want = sum(_us(d) for (s, *_), d in zip(facts.thunks, facts.self_ps)
                   if facts.step_of(s) == step)
        assert root.total[S.CPU] == want
        # each thunk nanosecond once: the self times add up to the outermost thunks' spans
        in_step = [t for t in facts.outermost() if facts.step_of(t[0]) == step]
        selfs = [d for t, d in zip(facts.thunks, facts.self_ps) if facts.step_of(t[0]) == step]
        assert sum(selfs) == sum(t[1] for t in in_step)
        assert root.total[S.ACCEL] == 0
    left = [t for t in facts.thunks if facts.step_of(t[0]) is None]
    assert ("%d XLA thunk executions (%d us) outside any step marker were left out"
            % (len(left), (sum(t[1] for t in left) + 500_000) // 1_000_000)) in model.notes


def test_nodes_carry_hlo_op_and_kernel_types_and_the_python_stack(facts, model):
    types: dict[str, set[str]] = {}
    for start, _, hlo_op, pid, _ in facts.thunks:
        if facts.step_of(start) is not None and facts.programs[pid][hlo_op]:
            types.setdefault(facts.programs[pid][hlo_op], set()).update(
                {"hlo_op:" + hlo_op, "kernel:" + hlo_op})
    for name, extra in types.items():
        node = model.nodes[name]
        assert extra <= node.op_types
        assert node.canonical_device == CPU0
        assert node.op == name.rsplit("/", 1)[-1]
    assert model.has_trace
    dot = model.nodes["jit(encoder)/while/body/closed_call/dot_general"]
    assert [f.function for f in dot.trace][-3:] == ["encoder", "encoder.<locals>.layer", "attention"]
    assert dot.trace[-1].file == "make_jax_cpu_samples.py"


def test_views_show_the_work(model):
    session = Session(model)
    scope = session.execute("scope -max_depth 2 -select micros").text
    assert "jit(train_step)" in scope and "jit(encoder)" in scope
    op = session.execute("op -select micros,occurrence").text
    assert "dot_general" in op
    code = session.execute("code -max_depth 6 -select micros").text
    assert "make_jax_cpu_samples.py" in code and ":train_step" in code
    picked = session.execute("op -select micros -account_type_regexes kernel:ynn_fusion.*").text
    assert "dot_general" in picked and "sub " not in picked


# ---------------------------------------------------------------------------
# Goldens (tests/golden/jax_cpu): made by tfprof-shell, every figure checked here
# against JAX's facts (the thunk events and JAX's compile().as_text())
# ---------------------------------------------------------------------------
GOLDEN = os.path.join(ROOT, "tests", "golden", "jax_cpu")
_spec = importlib.util.spec_from_file_location(
    "make_jax_cpu_goldens", os.path.join(GOLDEN, "make_jax_cpu_goldens.py"))
_maker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_maker)
CASES = _maker.CASES
_ROW = re.compile(r"^( *)(\S+) \((?:(\d+)us|--)/(\d+)us, [^)]*?"
                  r"(?:, (?:(\d+)|--)/(\d+)\|\S+)?\)$")


def _golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name + ".txt"), encoding="utf-8") as fh:
        return fh.read()


def _rows(text: str) -> dict[str, tuple[int, int, int]]:
    """Tree rows of a golden: name -> (self us, total us, self runs or -1)."""
    out = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            runs = int(m.group(5)) if m.group(5) is not None else -1
            out[m.group(2)] = (int(m.group(3) or 0), int(m.group(4)), runs)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_output(name):
    result = run_cli(["--profile_path=" + SAMPLE_DIR] + CASES[name].split())
    assert result.code == 0 and "Traceback" not in result.err
    assert result.out == _golden(name)


@pytest.fixture(scope="module")
def compiled():
    """JAX's own account of the programs: module -> instruction -> op_name."""
    with open(os.path.join(SAMPLE_DIR, "compiled_hlo.json"), encoding="utf-8") as fh:
        return json.load(fh)["programs"]


def _expected_nodes(facts, compiled, step):
    """node -> [self us of each thunk of the step], named from JAX's compiled programs."""
    out: dict[str, list[int]] = {}
    for t, self_ps in zip(facts.thunks, facts.self_ps):
        if facts.step_of(t[0]) != step:
            continue
        module = facts.module_names[t[3]]
        op_name = compiled[module][t[2]]
        out.setdefault(op_name or "%s/%s" % (module, t[2]), []).append(_us(self_ps))
    return out


def test_the_stored_programs_are_what_jax_compiled(facts, compiled):
    for pid, module in facts.module_names.items():
        if module in compiled:
            assert facts.programs[pid] == compiled[module]
    assert {facts.module_names[t[3]] for t in facts.thunks} <= set(compiled)


def test_scope_and_graph_goldens_hold_jax_facts(facts, compiled):
    want = _expected_nodes(facts, compiled, 11)
    for name in ("scope.step_11", "graph.step_11"):
        rows = _rows(_golden(name))
        assert rows["_TFProfRoot"][1] == sum(map(sum, want.values()))
        for node, selfs in want.items():
            assert rows[node][0] == sum(selfs), (name, node)
            assert rows[node][2] == len(selfs), (name, node)
        ran = {n for n, r in rows.items() if r[0] or r[2] > 0}
        assert ran == set(want), name


def test_op_golden_holds_jax_facts(facts, compiled):
    want = _expected_nodes(facts, compiled, 11)
    by_type: dict[str, list[int]] = {}
    for node, selfs in want.items():
        last = node.rsplit("/", 1)[-1]
        op_type = last.split(".")[0] if node.startswith("jit_") else last
        by_type.setdefault(op_type, []).extend(selfs)
    rows = {}
    for line in _golden("op.step_11").split("Profile:\n", 1)[1].splitlines()[1:]:
        m = re.match(r"^(\S+) +(\d+)us \(.*,\s+(\d+)\|\d+$", line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    assert rows == {t: (sum(v), len(v)) for t, v in by_type.items()}


def test_code_golden_holds_the_traced_instructions_time(facts):
    traced = sum(_us(d) for t, d in zip(facts.thunks, facts.self_ps)
                 if facts.step_of(t[0]) == 11 and (t[3], t[2]) in facts.traced)
    rows = _rows(_golden("code.step_11"))
    assert rows["_TFProfRoot"][1] == traced
    assert any(n.endswith(":train_step") for n in rows)
    assert any(n.endswith(":attention") for n in rows)


# ---------------------------------------------------------------------------
# Synthetic XSpaces
# ---------------------------------------------------------------------------
def _program(name: str, instructions: dict[str, str]) -> bytes:
    """An HloProto with an entry computation of ``instructions`` (name -> op_name)."""
    proto = hlo_pb2.HloProto()
    proto.hlo_module.name = name
    entry = proto.hlo_module.computations.add(name="main")
    for ins, op_name in instructions.items():
        added = entry.instructions.add(name=ins, opcode=ins.split(".")[0])
        if op_name:
            added.metadata.op_name = op_name
    return proto.SerializeToString()


def _thunk(line, name, start, dur, module, pid, **extra):
    return line.event(name, start, dur, hlo_op=name, hlo_module=module, program_id=pid,
                      **extra)


def cpu_space(tmp_path, markers=True):
    """Two programs on two XLA threads; a while thunk with its body's thunks inside;
    a thunk without HLO stats; XLA runtime events around them; a run outside the steps."""
    sp = Space()
    meta = sp.plane("/host:metadata")
    meta.metadata("jit_f(3)", **{"Hlo Proto": _program("jit_f", {
        "dot.1": "jit(f)/dot_general", "while.2": "jit(f)/while",
        "add_fusion": "jit(f)/add", "copy.4": ""}), "program_id": U64(3)})
    meta.metadata("jit_g(5)", **{"Hlo Proto": _program("jit_g", {
        "dot.1": "jit(g)/dot_general", "exp_fusion": "jit(g)/exp"}), "program_id": U64(5)})
    host = sp.plane("/host:CPU")
    py = host.line("python")
    a = host.line("tf_XLAPjRtCpuClient/1")
    b = host.line("tf_XLAEigen/2")
    for step, t in ((0, 0), (1, 1000)):
        if markers:
            py.event("train", t, 900, step_num=step)
        a.event("ThreadpoolListener::StartRegion", t + 5, 0)
        a.event("ThunkExecutor::Execute", t + 10, 200)
        _thunk(a, "dot.1", t + 10, 30, "jit_f", 3)
        a.event("end: dot.1", t + 40, 1)
        _thunk(a, "while.2", t + 50, 100, "jit_f", 3)  # its body: two thunks inside
        _thunk(a, "add_fusion", t + 60, 20, "jit_f", 3)
        a.event("add_fusion", t + 90, 10)  # no HLO stats: named as its instruction
        a.event("copy.4", t + 160, 5)  # no stats, no framework op
        a.event("mystery_event", t + 170, 5)  # no stats, no such instruction: not XLA
        _thunk(b, "dot.1", t + 20, 40, "jit_g", 5)  # same instruction name, other program
        _thunk(b, "exp_fusion", t + 70, 8, "jit_g", 5)
        _thunk(b, "fusion.77", t + 80, 2, "jit_g", 5)  # unknown to the program
    _thunk(a, "dot.1", 2500, 30, "jit_f", 3)  # after every step
    return sp.write(tmp_path / "cpu.xplane.pb")


def test_synthetic_thunks_land_on_their_framework_ops(tmp_path):
    model = load_xplane([cpu_space(tmp_path)])
    assert model.steps == [0, 1]
    cpu = {name: [n.execs[s].cpu_micros() for s in (0, 1)] for name, n in model.nodes.items()}
    assert cpu == {
        "jit(f)/dot_general": [30, 30],
        "jit(f)/while": [70, 70],  # 100 less the 20 + 10 inside it
        "jit(f)/add": [30, 30],  # one thunk with stats, one named by its instruction
        "jit_f/copy.4": [5, 5],  # an instruction with no framework op
        "jit(g)/dot_general": [40, 40],
        "jit(g)/exp": [8, 8],
        "jit_g/fusion.77": [2, 2],  # unknown to the program: module / HLO op
    }
    ops = {name: n.op for name, n in model.nodes.items()}
    assert ops["jit_f/copy.4"] == "copy" and ops["jit_g/fusion.77"] == "fusion"
    assert model.nodes["jit(f)/add"].execs[0].run_count == 2
    assert {"hlo_op:add_fusion", "kernel:add_fusion"} <= model.nodes["jit(f)/add"].op_types
    assert "1 XLA thunk executions (30 us) outside any step marker were left out" in model.notes
    notes = "\n".join(model.notes)
    assert ("2 XLA thunks ran HLO ops that the profile's HLO metadata does not describe "
            "(the profile stores 2 HLO programs)") in notes
    assert "2 XLA thunks ran HLO ops that name no framework op" in notes
    assert "kernels" not in notes


def test_synthetic_totals_count_each_thunk_nanosecond_once(tmp_path):
    session = Session(load_xplane([cpu_space(tmp_path)]))
    root = session.show("scope", ALL.replace(step=1)).root
    # thread a: dot 30 + while 100 (its body inside) + copy 5; thread b: 40 + 8 + 2
    assert root.total[S.CPU] == 30 + 100 + 5 + 40 + 8 + 2


def test_without_markers_every_thunk_is_step_zero(tmp_path):
    model = load_xplane([cpu_space(tmp_path, markers=False)])
    assert model.steps == [0]
    assert model.nodes["jit(f)/dot_general"].execs[0].cpu_micros() == 90


def test_a_thunk_whose_program_id_is_unknown_is_found_by_its_module(tmp_path):
    sp = Space()
    sp.plane("/host:metadata").metadata("jit_f", **{"Hlo Proto": _program(
        "jit_f", {"dot.1": "jit(f)/dot_general"})})  # keyed by its metadata id
    _thunk(sp.plane("/host:CPU").line("tf_XLACpu/1"), "dot.1", 10, 7, "jit_f", 99)
    model = load_xplane([sp.write(tmp_path / "m.xplane.pb")])
    assert model.nodes["jit(f)/dot_general"].execs[0].cpu_micros() == 7


@pytest.mark.parametrize("nested", [False, True], ids=["one_op", "nested_ops"])
def test_tf_ops_lose_the_time_of_thunks_inside_them(tmp_path, nested):
    sp = Space()
    sp.plane("/host:metadata").metadata("cluster_0(1)", **{"Hlo Proto": _program(
        "cluster_0", {"dot.1": "dense/MatMul"}), "program_id": U64(1)})
    host = sp.plane("/host:CPU")
    host.line("python").event("train", 0, 1000, step_num=4)
    line = host.line("tf_Compute/1")
    line.event("cluster_0/xla_run:_XlaRun", 10, 100)
    if nested:
        line.event("cluster_0/inner:_XlaRun", 20, 50)
    _thunk(line, "dot.1", 30, 30, "cluster_0", 1)
    line.event("other:AddV2", 200, 5)
    line.event("XLA Ops", 0, 0)  # a name only; derived lines are skipped
    derived = host.line("XLA Ops")
    _thunk(derived, "dot.1", 30, 30, "cluster_0", 1)
    model = load_xplane([sp.write(tmp_path / "tf.xplane.pb")])
    cpu = {name: n.execs[4].cpu_micros() for name, n in model.nodes.items()}
    want = {"dense/MatMul": 30, "cluster_0/xla_run": 70, "other": 5}
    if nested:
        want.update({"cluster_0/xla_run": 50, "cluster_0/inner": 20})
    assert cpu == want


def test_a_program_run_counts_for_the_step_its_first_thunk_starts_in(tmp_path):
    """Run 101 starts in step 1 and goes on after its marker ended, on two threads: all
    of it counts for step 1; run 102 starts between the markers and is left out; run 103
    starts in step 2."""
    sp = Space()
    sp.plane("/host:metadata").metadata("jit_f(3)", **{"Hlo Proto": _program(
        "jit_f", {"dot.1": "jit(f)/dot_general", "exp.2": "jit(f)/exp", "add.3": "jit(f)/add",
                  "sub.4": "jit(f)/sub"}), "program_id": U64(3)})
    host = sp.plane("/host:CPU")
    py, a, b = host.line("python"), host.line("tf_XLAPjRtCpuClient/1"), host.line("tf_XLA/2")
    py.event("train", 0, 100, step_num=1)
    py.event("train", 150, 150, step_num=2)
    _thunk(a, "dot.1", 90, 30, "jit_f", 3, run_id=101)
    _thunk(b, "exp.2", 160, 10, "jit_f", 3, run_id=101)
    _thunk(a, "sub.4", 130, 5, "jit_f", 3, run_id=102)
    _thunk(a, "sub.4", 140, 20, "jit_f", 3, run_id=102)
    _thunk(b, "add.3", 200, 4, "jit_f", 3, run_id=103)
    model = load_xplane([sp.write(tmp_path / "runs.xplane.pb")])
    steps = {name: sorted(n.execs) for name, n in model.nodes.items()}
    assert steps == {"jit(f)/dot_general": [1], "jit(f)/exp": [1], "jit(f)/add": [2]}
    assert "2 XLA thunk executions (25 us) outside any step marker were left out" in model.notes


def test_without_run_ids_thunks_count_where_they_start(tmp_path):
    sp = Space()
    host = sp.plane("/host:CPU")
    py, a = host.line("python"), host.line("tf_XLA/1")
    py.event("train", 0, 100, step_num=1)
    py.event("train", 150, 150, step_num=2)
    _thunk(a, "dot.1", 90, 5, "jit_f", 3, run_id=-1)  # TensorFlow's XLA writes -1
    _thunk(a, "dot.1", 170, 30, "jit_f", 3, run_id=-1)
    model = load_xplane([sp.write(tmp_path / "norun.xplane.pb")])
    assert sorted(model.nodes["jit_f/dot.1"].execs) == [1, 2]


def test_a_profile_with_nothing_to_show_says_so(tmp_path):
    sp = Space()
    line = sp.plane("/host:CPU").line("python")
    line.event("PjitFunction(f)", 0, 10)
    path = sp.write(tmp_path / "empty.xplane.pb")
    result = run_cli(["--profile_path=" + path, "op"])
    assert result.code == 0
    assert "no executions to show" in result.err
    assert sum("no executions to show" in x for x in result.err.splitlines()) == 1


def test_tf_ops_only_outside_the_steps_say_so(tmp_path):
    sp = Space()
    line = sp.plane("/host:CPU").line("python")
    line.event("train", 0, 10, step_num=1)
    line.event("dense/MatMul:MatMul", 20, 5)
    result = run_cli(["--profile_path=" + sp.write(tmp_path / "tf.xplane.pb"), "op"])
    assert "no executions to show: every one ran outside the step markers" in result.err


def test_thunks_only_outside_the_steps_say_so(tmp_path):
    sp = Space()
    host = sp.plane("/host:CPU")
    host.line("python").event("train", 0, 10, step_num=1)
    _thunk(host.line("tf_XLACpu/1"), "dot.1", 50, 7, "jit_f", 3)
    model = load_xplane([sp.write(tmp_path / "out.xplane.pb")])
    assert not model.nodes
    assert any("no executions to show: every one ran outside the step markers" in n
               for n in model.notes)


def test_gpu_profiles_read_no_thunks():
    from tfprof_shell.load.xspace import Host
    from tfprof_shell.load.xspace_pick import read_xspace_picked

    for name in ("jax_gpt", "jax_attention", "tf2"):
        for path in glob.glob(os.path.join(SAMPLES, name, "**", "*.xplane.pb"),
                              recursive=True):
            space, picked = read_xspace_picked(path)
            assert Host(space, 0, "", 0, path, picked).thunks == [], path


def test_cli_prints_the_left_out_note_once():
    out, err = io.StringIO(), io.StringIO()
    from tfprof_shell.cli import main

    assert main(["--profile_path=" + SAMPLE_DIR, "scope", "-max_depth", "2"],
                stdout=out, stderr=err) == 0
    assert err.getvalue().count("outside any step marker") == 1
    assert "jit(train_step)" in out.getvalue()


# ---------------------------------------------------------------------------
# Damaged thunk events: answered, never a traceback
# ---------------------------------------------------------------------------
def _damage(space, rng) -> None:
    """Change a few thunk events' stats or times in a way a broken writer might."""
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    names = {v.name: k for k, v in plane.stat_metadata.items()}
    events = [ev for line in plane.lines if line.name.startswith("tf_XLA")
              for ev in line.events if any(s.metadata_id == names["hlo_op"] for s in ev.stats)]
    for ev in rng.sample(events, 5):
        st = rng.choice(list(ev.stats))
        how = rng.randrange(7)
        if how == 0:
            st.str_value = "not a number"
        elif how == 1:
            st.ref_value = 999_999  # names no stat
        elif how == 2:
            st.int64_value = -rng.randrange(1 << 40)
        elif how == 3:
            st.bytes_value = b"\xff\xfe"
        elif how == 4:
            ev.duration_ps = rng.randrange(1 << 50)
        elif how == 5:
            ev.offset_ps = -rng.randrange(1 << 30)
        else:
            del ev.stats[:]


@pytest.mark.parametrize("seed", range(12))
def test_damaged_thunks_load_without_a_traceback(tmp_path, seed):
    import random

    from tfprof_shell.errors import LoadError

    space = xplane_pb2.XSpace()
    with open(_sample_file(), "rb") as fh:
        space.ParseFromString(fh.read())
    _damage(space, random.Random(seed))
    path = tmp_path / "damaged.xplane.pb"
    path.write_bytes(space.SerializeToString())
    try:
        session = Session(load_xplane([str(path)]))
    except LoadError:
        return
    for command in ("scope -max_depth 30", "op", "code -max_depth 30", "graph"):
        session.execute(command)
