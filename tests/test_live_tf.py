"""Our API's result messages against TensorFlow's own engine (skipped without TensorFlow).

Run with TensorFlow's interpreter and this checkout on the path, e.g.
``PYTHONPATH=. <tensorflow-python> -m pytest tests/test_live_tf.py``.
"""

from __future__ import annotations

import difflib

import pytest

from conftest import needs  # noqa: E402

needs("tensorflow")
pytestmark = pytest.mark.tensorflow

from google.protobuf import text_format  # noqa: E402
from tensorflow.core.profiler import tfprof_output_pb2 as tf_output  # noqa: E402
from tensorflow.python.profiler import model_analyzer, option_builder  # noqa: E402
from tensorflow.python.util import _pywrap_tfprof as engine  # noqa: E402

from conftest import sample  # noqa: E402
from tfprof_shell import compat  # noqa: E402
from tfprof_shell.api import Profile  # noqa: E402

MODELS = ("tiny_mlp", "convnet", "while_rnn", "synthetic_gpu")
VIEWS = ("scope", "graph", "op", "code")
Builder = option_builder.ProfileOptionBuilder
ALL_SELECT = ["bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros",
              "accelerator_micros", "cpu_micros", "params", "float_ops", "occurrence",
              "device", "op_types", "input_shapes"]


def _quiet(options: dict) -> dict:
    return dict(options, output="none")


OPTION_SETS = {
    "builder_default": lambda steps: _quiet(Builder().build()),
    "time_and_memory": lambda steps: _quiet(Builder.time_and_memory()),
    "trainable_params": lambda steps: _quiet(Builder.trainable_variables_parameter()),
    "float_ops": lambda steps: _quiet(Builder.float_operation()),
    "all_attributes_last_step": lambda steps: _quiet(
        Builder(Builder.time_and_memory(min_micros=0, min_bytes=0)).select(ALL_SELECT)
        .with_step(steps[-1]).build()),
    "filtered": lambda steps: _quiet(
        Builder().with_max_depth(4).with_accounted_types([".*Mat.*", ".*cpu.*", ".*Add.*"])
        .with_node_names(hide_name_regexes=[".*gradients.*"], trim_name_regexes=[".*Adam.*"])
        .order_by("micros").build()),
    "start_and_displayed_only": lambda steps: _quiet(
        Builder().with_node_names(start_name_regexes=[".*dense.*", ".*conv.*", ".*layer1.*"])
        .account_displayed_op_only(True).order_by("bytes").select(["bytes", "micros"]).build()),
    "missing_keys": lambda steps: {"output": "none", "max_depth": 3, "select": ["micros"],
                                   "show_name_regexes": [".*"], "account_type_regexes": [".*"]},
}


@pytest.fixture(scope="module", params=MODELS)
def loaded(request):
    path = sample(request.param, "profile")
    engine.DeleteProfiler()  # the engine allows one profiler per process
    engine.ProfilerFromFile(path.encode("utf-8"))
    try:
        yield Profile.load(profile_path=path)
    finally:
        engine.DeleteProfiler()


def _assert_same(ours, theirs) -> None:
    mine = type(theirs)()
    mine.ParseFromString(ours.SerializeToString())
    if mine != theirs:
        diff = difflib.unified_diff(text_format.MessageToString(theirs).splitlines(),
                                    text_format.MessageToString(mine).splitlines(),
                                    "tensorflow", "ours", lineterm="", n=2)
        pytest.fail("result messages differ:\n" + "\n".join(list(diff)[:60]))


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("option_set", sorted(OPTION_SETS))
def test_result_messages_equal_tensorflows(loaded, view, option_set):
    options = OPTION_SETS[option_set](loaded.steps)
    raw = engine.Profile(view.encode(), model_analyzer._build_options(options).SerializeToString())
    theirs = (tf_output.MultiGraphNodeProto if view in ("op", "code")
              else tf_output.GraphNodeProto)()
    theirs.ParseFromString(raw)
    _assert_same(loaded.profile(view, options, as_proto=True), theirs)


def test_advice_equals_tensorflows(loaded):
    opts = model_analyzer._build_advisor_options(model_analyzer.ALL_ADVICE)
    theirs = tf_output.AdviceProto()
    theirs.ParseFromString(engine.Profile(b"advise", opts.SerializeToString()))
    _assert_same(loaded.advise(as_proto=True), theirs)


@pytest.mark.parametrize("cmd", VIEWS)
@pytest.mark.parametrize("model", ["tiny_mlp", "synthetic_gpu"])
def test_one_shot_profile_matches_print_model_analysis(model, cmd, capfd):
    """compat.profile(graph, run_meta, op_log) vs tf.compat.v1.profiler.profile's engine call."""
    paths = [sample(model, name) for name in ("graph.pb", "run_meta_1", "op_log")]
    blobs = []
    for path in paths:
        with open(path, "rb") as fh:
            blobs.append(fh.read())
    options = Builder(Builder.time_and_memory()).select(["micros", "bytes", "params"]).build()
    raw = engine.PrintModelAnalysis(*blobs, cmd.encode(),
                                    model_analyzer._build_options(options).SerializeToString())
    theirs_text = capfd.readouterr().out
    theirs = (tf_output.MultiGraphNodeProto if cmd in ("op", "code")
              else tf_output.GraphNodeProto)()
    theirs.ParseFromString(raw)
    ours = compat.profile(*paths, cmd=cmd, options=options)
    ours_text = capfd.readouterr().out
    _assert_same(ours, theirs)
    assert "==================Model Analysis Report======================" in theirs_text
    assert ours_text == theirs_text
