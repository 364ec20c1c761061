"""The `advise` command: each checker on small hand-built models, the
command's options and outputs, and the engine's goldens on sample_profiles/.

The unit models are built from GraphNode/ExecStep objects directly; the
expected strings follow the engine's checkers (advisor/*.h in TensorFlow).
"""

from __future__ import annotations

import json
import os
import re
from typing import Optional

import pytest

from conftest import ROOT, golden_argv, run_cli
from tfprof_shell.advisor import CHECKER_NAMES
from tfprof_shell.advisor.advice import Advice
from tfprof_shell.advisor.runner import CHECKERS, advise
from tfprof_shell.errors import OptionError
from tfprof_shell.model import ExecStep, Frame, GraphNode, Model
from tfprof_shell.model.model import Source
from tfprof_shell.session import Session

GPU0 = "/job:localhost/replica:0/task:0/device:gpu:0"
GPU1 = "/job:localhost/replica:0/task:0/device:gpu:1"
CPU0 = "/job:localhost/replica:0/task:0/device:cpu:0"
ALL = ("AcceleratorUtilizationChecker", "OperationChecker", "ExpensiveOperationChecker")
#: Checkers of the step breakdown (tests/test_steps.py), after the engine's.
STEP_CHECKERS = ("InputBoundChecker", "StarvedDeviceChecker", "CommunicationChecker",
                 "CopiesChecker", "SyncStallChecker", "StragglerChecker", "CriticalPathChecker",
                 "MemoryChecker")


# -- builders ----------------------------------------------------------------

def record(cpu: int = 0, accel: int = 0, start: int = 100, end: Optional[int] = None,
           device: str = CPU0) -> ExecStep:
    """One step's record: ``cpu`` us on ``device``, ``accel`` us on its stream:all."""
    rec = ExecStep(run_count=1, all_start_micros=start,
                   latest_end_micros=start + cpu + accel if end is None else end)
    if cpu:
        rec.cpu_execs[device] = [(start, cpu)]
    if accel:
        rec.accelerator_execs[device + "/stream:all"] = [(start, accel)]
    rec.devices = set(rec.cpu_execs) | set(rec.accelerator_execs)
    return rec


def gnode(name: str, op: str, device: str = CPU0, execs: Optional[dict] = None,
          trace: Optional[list[Frame]] = None, **attrs: str) -> GraphNode:
    node = GraphNode(name, op)
    node.canonical_device = device
    node.op_types.add(device)
    node.execs = dict(execs or {})
    node.trace = trace
    node.attrs.update(attrs)
    return node


def session_of(*nodes: GraphNode, steps: tuple[int, ...] = (0,)) -> Session:
    model = Model(Source("test"), steps=list(steps))
    for node in nodes:
        model.nodes[node.name] = node
    model.has_trace = any(n.trace for n in nodes)
    return Session(model)


def run_one(session: Session, name: str):
    findings = CHECKERS[name].run(session)
    return findings.reports, findings.notes


# -- the checker table -------------------------------------------------------

def test_checkers_table_is_the_engines_open_source_checkers_in_fixed_order():
    assert tuple(CHECKERS) == ALL + STEP_CHECKERS == CHECKER_NAMES
    for name, checker in CHECKERS.items():
        assert checker.name == name
        assert checker.help.endswith(".") and "\n" not in checker.help


# -- AcceleratorUtilizationChecker --------------------------------------------

def test_accelerator_utilization_uses_each_nodes_last_step_per_device():
    session = session_of(
        # gpu:0 — step 0 is ignored (the node's highest step is 1).
        gnode("conv", "Conv2D", GPU0, {0: record(accel=900, start=10),
                                       1: record(accel=60, start=1000, end=1100)}),
        # A later end on another record of the node (e.g. stream:14) widens the span.
        gnode("mul", "Mul", GPU0, {1: record(accel=20, start=1050, end=1200)}),
        # gpu:1 — a node without a start time does not pin the start at 0.
        gnode("a1", "Add", GPU1, {1: record(start=0, end=0)}),
        gnode("a2", "Add", GPU1, {1: record(accel=50, start=500, end=600)}),
        # Not on an accelerator, or never ran: ignored.
        gnode("cpu_op", "MatMul", CPU0, {1: record(cpu=5000, start=1)}),
        gnode("idle", "Const", GPU0),
    )
    reports, notes = run_one(session, "AcceleratorUtilizationChecker")
    assert reports == [
        "device: %s low utilization: 0.40" % GPU0,   # 80us busy over 200us
        "device: %s utilization: 0.50" % GPU1,       # exactly 0.5 is not low
    ]
    assert notes == []


def test_accelerator_utilization_skips_devices_with_no_elapsed_time():
    session = session_of(gnode("x", "Add", GPU0, {0: record(accel=5, start=700, end=700)}))
    assert run_one(session, "AcceleratorUtilizationChecker") == ([], [])


def test_accelerator_utilization_low_below_one_fifth_has_the_same_text():
    session = session_of(gnode("x", "Add", GPU0, {0: record(accel=10, start=100, end=200)}))
    reports, _ = run_one(session, "AcceleratorUtilizationChecker")
    assert reports == ["device: %s low utilization: 0.10" % GPU0]


# -- OperationChecker --------------------------------------------------------

BN = "Maybe use faster FusedBatchNorm instead of BatchNorm"
NCHW = "Found operation using NHWC data_format on GPU. Maybe NCHW is faster."


@pytest.mark.parametrize("nodes, expected", [
    ([gnode("BatchNorm/mul", "Mul")], [BN]),
    ([gnode("BatchNorm/mul", "Mul"), gnode("bn", "FusedBatchNorm")], []),
    # Only the exact op type FusedBatchNorm counts, as in the engine.
    ([gnode("BatchNorm/mul", "Mul"), gnode("bn", "FusedBatchNormV3")], [BN]),
    ([gnode("conv", "Conv2D", GPU0, data_format="NHWC")], [NCHW]),
    ([gnode("conv", "Conv2D", CPU0, data_format="NHWC")], []),
    ([gnode("conv", "Conv2D", GPU0, data_format="NCHW")], []),
    ([gnode("conv", "Conv2D", GPU0, data_format="NHWC"), gnode("a/BatchNorm", "Mul"),
      gnode("b/BatchNorm", "Mul")], [BN, NCHW]),
    ([gnode("dense", "MatMul")], []),
], ids=["batchnorm", "fused", "fused_v3_not_counted", "nhwc_gpu", "nhwc_cpu", "nchw_gpu",
        "both_once_each", "nothing"])
def test_operation_checker(nodes, expected):
    assert run_one(session_of(*nodes), "OperationChecker") == (expected, [])


# -- ExpensiveOperationChecker ------------------------------------------------

def frame(file: str, line: int, func: str) -> Frame:
    return Frame(file, line, func, line - 1)


MAIN = frame("/lib/runner.py", 1, "main")
BUILD = frame("/src/model.py", 10, "build")
TRAIN = frame("/src/model.py", 20, "train")


def expensive_model() -> Session:
    """Times (us): net/* 5610 under build(), train/* 1100 under train(), 320 untraced."""
    def traced(name, op, cpu, frames, accel=0, device=CPU0):
        return gnode(name, op, device, {0: record(cpu=cpu, accel=accel)}, trace=[MAIN] + frames)

    return session_of(
        traced("net/MatMul", "MatMul", 1000, [BUILD], accel=2000, device=GPU0),
        traced("net/Relu", "Relu", 1500, [BUILD, frame("/src/model.py", 31, "relu_fn")]),
        traced("net/Bias", "BiasAdd", 1100, [BUILD, frame("/src/model.py", 32, "bias_fn")]),
        traced("net/Tiny", "Identity", 10, [BUILD, frame("/src/model.py", 33, "tiny_fn")]),
        traced("train/Apply", "ApplyGradientDescent", 600, [TRAIN]),
        traced("train/Step", "AssignAdd", 500, [TRAIN, frame("/src/model.py", 40, "step_fn")]),
        gnode("global_step", "VariableV2", execs={0: record(cpu=150)}),
        gnode("z_const", "Const", execs={0: record(cpu=120)}),
        gnode("init", "NoOp", execs={0: record(cpu=50)}),
    )


def test_expensive_operation_reports_op_scope_and_code_parts():
    reports, notes = run_one(expensive_model(), "ExpensiveOperationChecker")
    assert reports == [
        # Own times; the share is of the grand total, 7030us.
        "top 1 operation type: MatMul, cpu: 1.00ms, accelerator: 2.00ms, total: 3.00ms (42.67%)\n"
        "top 2 operation type: Relu, cpu: 1.50ms, accelerator: 0us, total: 1.50ms (21.34%)\n"
        "top 3 operation type: BiasAdd, cpu: 1.10ms, accelerator: 0us, total: 1.10ms (15.65%)",
        # Top-level scope nodes of at least 100us total, with their *own* times;
        # the fourth (z_const) is cut and init (50us) is hidden.
        "top 1 graph node: net, cpu: 0us, accelerator: 0us, total: 0us\n"
        "top 2 graph node: train, cpu: 0us, accelerator: 0us, total: 0us\n"
        "top 3 graph node: global_step, cpu: 150us, accelerator: 0us, total: 150us",
        # Below the single runner.py frame: totals of at least 1ms, nested by two spaces.
        "model.py:10:build, cpu: 3.61ms, accelerator: 2.00ms, total: 5.61ms\n"
        "  model.py:31:relu_fn, cpu: 1.50ms, accelerator: 0us, total: 1.50ms\n"
        "  model.py:32:bias_fn, cpu: 1.10ms, accelerator: 0us, total: 1.10ms\n"
        "model.py:20:train, cpu: 1.10ms, accelerator: 0us, total: 1.10ms",
    ]
    assert notes == []


def test_expensive_operation_ignores_the_sessions_options():
    session = expensive_model()
    default = run_one(session, "ExpensiveOperationChecker")
    session.execute("set -max_depth 1 -min_micros 100000 -order_by name -step 0 "
                    "-account_type_regexes Relu -hide_name_regexes net.*")
    assert run_one(session, "ExpensiveOperationChecker") == default


def test_expensive_operation_code_part_is_an_empty_report_when_all_children_are_cheap():
    session = session_of(
        gnode("a", "Add", execs={0: record(cpu=300)}, trace=[MAIN, BUILD]),
        gnode("b", "Mul", execs={0: record(cpu=200)}, trace=[MAIN, TRAIN]))
    reports, _ = run_one(session, "ExpensiveOperationChecker")
    # op part, scope part (a: 300us, b: 200us), then the code part with no line.
    assert len(reports) == 3
    assert reports[1] == ("top 1 graph node: a, cpu: 300us, accelerator: 0us, total: 300us\n"
                          "top 2 graph node: b, cpu: 200us, accelerator: 0us, total: 200us")
    assert reports[2] == ""
    assert Advice({"ExpensiveOperationChecker": reports}).to_text().endswith("200us\n\n")


def test_expensive_operation_code_part_absent_when_the_chain_ends_in_a_leaf():
    session = session_of(gnode("a", "Add", execs={0: record(cpu=3000)}, trace=[MAIN, BUILD]))
    reports, notes = run_one(session, "ExpensiveOperationChecker")
    assert [r.split(",")[0] for r in reports] == ["top 1 operation type: Add",
                                                  "top 1 graph node: a"]
    assert notes == []


def test_expensive_operation_without_run_metadata_or_traces():
    session = session_of(gnode("a", "Add"), gnode("b", "Mul"), steps=())
    reports, notes = run_one(session, "ExpensiveOperationChecker")
    assert reports == []
    assert notes == ["Missing RunMetadata info. Skip ExpensiveOperationChecker",
                     "Missing run_meta for ExpensiveOperationChecker",
                     "Missing op_log (code traces) for ExpensiveOperationChecker"]


def test_expensive_operation_missing_traces_only():
    session = session_of(gnode("a", "Add", execs={0: record(cpu=150)}))
    reports, notes = run_one(session, "ExpensiveOperationChecker")
    assert reports == [
        "top 1 operation type: Add, cpu: 150us, accelerator: 0us, total: 150us (100.00%)",
        "top 1 graph node: a, cpu: 150us, accelerator: 0us, total: 150us"]
    assert notes == ["Missing op_log (code traces) for ExpensiveOperationChecker"]


# -- the command -------------------------------------------------------------

def test_advise_prints_every_checker_in_table_order_with_empty_headers():
    session = session_of(gnode("BatchNorm/mul", "Mul"), steps=())
    reply = session.execute("advise")
    assert reply.text == ("\nAcceleratorUtilizationChecker:\n"
                          "\nOperationChecker:\n" + BN + "\n"
                          "\nExpensiveOperationChecker:\n")
    assert reply.notes[0] == "Missing RunMetadata info. Skip ExpensiveOperationChecker"
    assert isinstance(reply.result, Advice)
    assert list(reply.result.checkers) == list(ALL)


def test_advise_checkers_option_runs_only_those_in_table_order():
    session = session_of(gnode("BatchNorm/mul", "Mul"), steps=())
    reply = session.execute("advise -checkers OperationChecker,AcceleratorUtilizationChecker")
    assert reply.text == "\nAcceleratorUtilizationChecker:\n\nOperationChecker:\n" + BN + "\n"
    assert reply.notes == []  # ExpensiveOperationChecker did not run
    assert session.options.checkers == ()  # options on a command do not stick


def test_advise_unknown_checker_lists_the_valid_ones():
    session = session_of(gnode("a", "Add"))
    with pytest.raises(OptionError) as info:
        session.execute("advise -checkers OperationChecker,JobChecker")
    message = str(info.value)
    assert "JobChecker" in message
    for name in ALL:
        assert name in message


def test_advise_json_and_proto():
    session = session_of(gnode("BatchNorm/mul", "Mul"), steps=())
    reply = session.execute("advise -checkers OperationChecker -output json")
    assert json.loads(reply.text) == {"schema_version": 1,
                                      "checkers": {"OperationChecker": [BN]}}
    proto = reply.result.to_proto()
    assert list(proto.checkers) == ["OperationChecker"]
    assert list(proto.checkers["OperationChecker"].reports) == [BN]


def test_advise_json_to_a_file(tmp_path):
    session = session_of(gnode("BatchNorm/mul", "Mul"), steps=())
    path = str(tmp_path / "advice.json")
    reply = session.execute("advise -output json:outfile=" + path)
    assert reply.text == "" and reply.files == [path]
    with open(path) as fh:
        doc = json.load(fh)
    assert list(doc["checkers"]) == list(ALL)
    assert doc["checkers"]["OperationChecker"] == [BN]


def test_advise_function_returns_advice_and_notes():
    advice, notes = advise(session_of(gnode("a", "Add"), steps=()), ("OperationChecker",))
    assert advice == Advice({"OperationChecker": []}) and notes == []


# -- goldens made by the real engine ------------------------------------------

MANIFEST = os.path.join(ROOT, "tests", "golden", "cases.json")
_BLOCK = re.compile("\n(%s):\n" % "|".join(ALL))


def _advise_cases():
    if not os.path.exists(MANIFEST):
        return []
    with open(MANIFEST) as fh:
        cases = json.load(fh)["cases"]
    return [c for c in cases if c["command"].split(" ")[0] == "advise"]


def blocks(text: str) -> dict[str, str]:
    """checker name -> the exact text of its block after the header."""
    found = list(_BLOCK.finditer(text))
    ends = [m.start() for m in found[1:]] + [len(text)]
    return {m.group(1): text[m.end():end] for m, end in zip(found, ends)}


@pytest.mark.parametrize("case", _advise_cases(), ids=lambda c: c["id"])
def test_advise_golden(case, tmp_path):
    result = run_cli(golden_argv(case), cwd=str(tmp_path))
    assert result.code == 0, result.err
    with open(os.path.join(ROOT, case["expected"]), encoding="utf-8") as fh:
        expected = fh.read()
    ours = blocks(result.out)
    assert ours == blocks(expected)
    assert list(ours) == [n for n in ALL if n in ours]  # our fixed order
    assert result.out == "".join("\n%s:\n%s" % kv for kv in ours.items())
    engine_notes = case.get("engine_stderr", "")
    assert [n for n in result.err.splitlines() if n.startswith("Missing")] == \
        [n for n in engine_notes.splitlines() if n.startswith("Missing")]


def test_advise_goldens_cover_every_checker_and_a_gpu_profile():
    """The golden set exercises each checker's reports, including GPU utilization."""
    cases = _advise_cases()
    if not cases:
        pytest.skip("tests/golden/cases.json has no advise cases yet")
    texts = []
    for case in cases:
        with open(os.path.join(ROOT, case["expected"]), encoding="utf-8") as fh:
            texts.append(fh.read())
    reported = {name for text in texts for name, body in blocks(text).items() if body.strip()}
    assert reported == set(ALL)
    assert any("device:gpu" in blocks(t).get("AcceleratorUtilizationChecker", "")
               for t in texts)
