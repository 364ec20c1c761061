"""compat.Profiler and ProfileContext against TensorFlow's own API on the same runs (needs TF).

The seed scripts in tests/compat_scripts/ run in their own processes (the
C++ engine behind TensorFlow's Profiler is one per process, and deleting it
aborts any other). Each runs the pattern with TensorFlow and with compat on
the same RunMetadata, so everything, times included, must be equal: printed
text byte for byte, result messages parsed with TensorFlow's classes, output
files, and the serialized ProfileProto as a message (its map order is free).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT, needs  # noqa: E402

needs("tensorflow")
pytestmark = pytest.mark.tensorflow

from tensorflow.core.profiler import tfprof_log_pb2, tfprof_output_pb2  # noqa: E402

SCRIPTS = os.path.join(ROOT, "tests", "compat_scripts")
METHODS = ("profile_name_scope", "profile_graph", "profile_operations", "profile_python")
OPTION_SETS = ("time_and_memory", "params", "float_ops", "columns_step")


def _run(script: str, out) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, script), str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _message(path, cls):
    msg = cls()
    with open(path, "rb") as fh:
        msg.ParseFromString(fh.read())
    return msg


def _text(path) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    out = tmp_path_factory.mktemp("profiler_seed")
    _run("profiler_seed.py", out)
    return out


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    out = tmp_path_factory.mktemp("context_seed")
    _run("context_seed.py", out)
    return out


@pytest.mark.parametrize("option_set", OPTION_SETS)
@pytest.mark.parametrize("method", METHODS)
def test_profile_methods_print_and_return_what_tensorflow_does(seed, method, option_set):
    case = "%s_%s" % (method, option_set)
    cls = (tfprof_output_pb2.MultiGraphNodeProto if method in ("profile_operations",
                                                               "profile_python")
           else tfprof_output_pb2.GraphNodeProto)
    theirs = _message(seed / ("tf_%s.pb" % case), cls)
    ours = _message(seed / ("ours_%s.pb" % case), cls)
    assert ours == theirs and theirs.total_exec_micros + theirs.total_parameters > 0
    printed = _text(seed / ("ours_%s.txt" % case))
    assert printed == _text(seed / ("tf_%s.txt" % case))
    assert "==================Model Analysis Report======================" in printed


def test_file_timeline_and_pprof_outputs_are_tensorflows(seed):
    names = sorted(os.listdir(seed / "tf_outputs"))
    assert names == ["code.pprof", "scope.txt", "timeline_5"]
    assert sorted(os.listdir(seed / "ours_outputs")) == names
    for name in names:
        assert (seed / "ours_outputs" / name).read_bytes() == \
            (seed / "tf_outputs" / name).read_bytes(), name
    printed = _text(seed / "ours_outputs.txt").replace("ours_outputs", "tf_outputs")
    assert printed == _text(seed / "tf_outputs.txt")


def test_advise_returns_tensorflows_advice(seed):
    theirs = _message(seed / "tf_advise.pb", tfprof_output_pb2.AdviceProto)
    assert _message(seed / "ours_advise.pb", tfprof_output_pb2.AdviceProto) == theirs
    assert "ExpensiveOperationChecker" in theirs.checkers

    def blocks(text: str) -> dict[str, list[str]]:  # the engine prints checkers in any order
        found: dict[str, list[str]] = {}
        lines: list[str] = []
        for line in text.splitlines():
            if line.endswith("Checker:"):
                lines = found.setdefault(line, [])
            elif line:
                lines.append(line)
        return found

    assert blocks(_text(seed / "ours_advise.txt")) == blocks(_text(seed / "tf_advise.txt"))


def test_serialize_to_string_is_tensorflows_profile(seed):
    theirs = _message(seed / "tf_profile", tfprof_log_pb2.ProfileProto)
    ours = _message(seed / "ours_profile", tfprof_log_pb2.ProfileProto)
    assert list(theirs.steps) == [0, 2, 5] and len(theirs.nodes) > 50
    assert ours == theirs


@pytest.mark.parametrize("view", ["scope", "graph", "op", "code"])
def test_serialized_profile_round_trips_through_tensorflows_engine(seed, view):
    cls = (tfprof_output_pb2.MultiGraphNodeProto if view in ("op", "code")
           else tfprof_output_pb2.GraphNodeProto)
    theirs = _message(seed / ("rt_tf_%s.pb" % view), cls)
    assert theirs.children
    assert _message(seed / ("rt_ours_%s.pb" % view), cls) == theirs


def test_profile_context_traces_and_dumps_the_chosen_steps(context):
    names = sorted(os.listdir(context / "ours"))
    # trace_steps 1, 2, 4; auto profiling adds 2, 4, 6; trace_next_step adds 8
    assert names == ["profile_2", "profile_6", "profile_8", "run_meta_1", "run_meta_2",
                     "run_meta_4", "run_meta_6", "run_meta_8"]
    for name in ("profile_2", "profile_6", "profile_8"):
        theirs = _message(context / "tf" / name, tfprof_log_pb2.ProfileProto)
        assert _message(context / "ours" / name, tfprof_log_pb2.ProfileProto) == theirs
    last = _message(context / "ours" / "profile_8", tfprof_log_pb2.ProfileProto)
    assert list(last.steps) == [1, 2, 4, 6, 8]


def test_profile_context_auto_profiles_are_tensorflows(context):
    cases = sorted(n[len("tf_"):] for n in os.listdir(context) if n.startswith("tf_")
                   and n.endswith(".pb"))
    assert cases == ["code_6.pb", "op_4.pb", "op_6.pb", "scope_2.pb"]
    for case in cases:
        cls = (tfprof_output_pb2.GraphNodeProto if case.startswith("scope")
               else tfprof_output_pb2.MultiGraphNodeProto)
        assert _message(context / ("ours_" + case), cls) == _message(context / ("tf_" + case),
                                                                     cls), case
    printed = _text(context / "ours_stdout.txt")
    assert printed.count("==================Model Analysis Report======") == 4
    assert printed == _text(context / "tf_stdout.txt")


def test_profile_context_defaults_trace_after_the_warm_up(context):
    steps = [int(s) for s in _text(context / "auto_steps.txt").split()]
    assert steps and steps[0] == 11  # the first step after 10 warm-up steps, with new fetches
    assert sorted(os.listdir(context / "auto")) == ["run_meta_%d" % s for s in sorted(steps)]
    assert not os.path.exists(context / "off")  # enabled=False: nothing traced or written
