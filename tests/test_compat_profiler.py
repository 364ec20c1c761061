"""compat.Profiler without TensorFlow: GraphDef / RunMetadata / OpLogProto files and messages.

Every view a Profiler prints must be the CLI's output for the same files and
options (one engine behind both); serialize_to_string() must load back into
the same tables. The comparison with TensorFlow's own Profiler is in
test_compat_profiler_tf.py.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from conftest import run_cli, sample
from tfprof_shell import compat
from tfprof_shell.api import Profile
from tfprof_shell.errors import LoadError, OptionError
from tfprof_shell.proto import framework_pb2, tfprof_log_pb2, tfprof_output_pb2

MODELS = ("tiny_mlp", "convnet", "while_rnn", "synthetic_gpu")
METHODS = {"scope": "profile_name_scope", "graph": "profile_graph", "op": "profile_operations",
           "code": "profile_python"}
Builder = compat.ProfileOptionBuilder

#: option sets as TensorFlow dicts; each is also given to the CLI as tokens
OPTION_SETS = {
    "time_and_memory": Builder.time_and_memory(),
    "params": Builder.trainable_variables_parameter(),
    "all_columns_step_1": Builder(Builder.time_and_memory(min_micros=0, min_bytes=0))
    .select(["bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros",
             "accelerator_micros", "cpu_micros", "params", "float_ops", "occurrence",
             "device", "op_types", "input_shapes"]).with_step(1).with_max_depth(6).build(),
    "filtered": Builder().with_max_depth(4).with_accounted_types([".*Mat.*", ".*Add.*"])
    .with_node_names(hide_name_regexes=[".*gradients.*"]).order_by("micros").build(),
}


def _tokens(options: dict) -> list[str]:
    """CLI tokens giving exactly ``options`` (every key; empty lists are the CLI default)."""
    words = []
    for key, value in options.items():
        if key == "output":
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, list):
            if not value:
                continue
            value = ",".join(value)
        words += ["-" + key, str(value)]
    return words


def _files(model: str) -> tuple[str, list[str], str]:
    metas = sorted(n for n in os.listdir(sample(model)) if n.startswith("run_meta_"))
    return sample(model, "graph.pb"), [sample(model, n) for n in metas], sample(model, "op_log")


def _cli(model: str, words: list[str]) -> str:
    graph, metas, op_log = _files(model)
    run = run_cli(["--graph_path=" + graph, "--run_meta_path=" + ",".join(metas),
                   "--op_log_path=" + op_log] + words)
    assert run.code == 0, run.err
    return run.out


def _profiler(model: str) -> compat.Profiler:
    graph, metas, op_log = _files(model)
    profiler = compat.Profiler(graph, op_log=op_log)
    for step, path in enumerate(metas):
        profiler.add_step(step, path)
    return profiler


def _report(out: str) -> str:
    """The text between the Python API's report markers."""
    head = "\n==================Model Analysis Report======================\n"
    tail = "\n======================End of Report==========================\n"
    assert out.startswith("\n=========================Options=============================\n")
    assert head in out and out.endswith(tail)
    return out[out.index(head) + len(head):-len(tail)]


@pytest.fixture(scope="module", params=MODELS)
def model_profiler(request):
    return request.param, _profiler(request.param)


@pytest.mark.parametrize("option_set", sorted(OPTION_SETS))
@pytest.mark.parametrize("view", sorted(METHODS))
def test_each_view_prints_the_cli_output(model_profiler, view, option_set, capsys):
    model, profiler = model_profiler
    options = OPTION_SETS[option_set]
    node = getattr(profiler, METHODS[view])(options)
    printed = capsys.readouterr().out
    assert _report(printed) == _cli(model, [view] + _tokens(options))
    expected = Profile.load(*_load_args(model)).profile(view, options, as_proto=True)
    assert node == expected
    want = (tfprof_output_pb2.MultiGraphNodeProto if view in ("op", "code")
            else tfprof_output_pb2.GraphNodeProto)
    assert isinstance(node, want)


def _load_args(model: str) -> tuple:
    graph, metas, op_log = _files(model)
    return (None, graph, metas, op_log)


def test_serialize_to_string_loads_back_into_the_same_tables(model_profiler, tmp_path, capsys):
    model, profiler = model_profiler
    path = tmp_path / "profile"
    path.write_bytes(profiler.serialize_to_string())
    loaded = Profile.load(profile_path=str(path))
    assert loaded.steps == profiler.steps == [0, 1, 2]
    for view in METHODS:
        for options in OPTION_SETS.values():
            quiet = dict(options, output="none")
            assert (loaded.profile(view, quiet, as_proto=True)
                    == getattr(profiler, METHODS[view])(quiet)), (view, options)
    words = ["op", "-select", "micros,bytes,occurrence", "-order_by", "micros"]
    run = run_cli(["--profile_path=" + str(path)] + words)
    assert run.code == 0 and run.out == _cli(model, words)
    assert capsys.readouterr().out == ""


def _resolved_traces(prof) -> dict:
    strings = prof.id_to_string
    return {pn.name: [(strings[t.file_id], t.lineno, strings[t.function_id],
                       strings.get(t.line_id), t.func_start_line) for t in pn.trace.traces]
            for pn in prof.nodes.values() if pn.HasField("trace")}


@pytest.mark.parametrize("model", MODELS)
def test_serialize_to_string_is_tensorflows_serialization(model):
    """Each sample's ``profile`` is TensorFlow's Profiler.serialize_to_string() of the
    same RunMetadata files, added with the same step ids."""
    with open(sample(model, "info.json")) as fh:
        info = json.load(fh)
    profiler = compat.Profiler(sample(model, "graph.pb"), op_log=sample(model, "op_log"))
    for step, name in zip(info["steps"], info["run_meta_files"]):
        profiler.add_step(step, sample(model, name))
    ours = tfprof_log_pb2.ProfileProto.FromString(profiler.serialize_to_string())
    with open(sample(model, "profile"), "rb") as fh:
        theirs = tfprof_log_pb2.ProfileProto.FromString(fh.read())
    # The samples' string tables were rewritten (installation-independent file
    # names), so call stacks are compared by their strings, not their ids.
    assert _resolved_traces(ours) == _resolved_traces(theirs) != {}
    for prof in (ours, theirs):
        prof.ClearField("id_to_string")
        for pn in prof.nodes.values():
            pn.ClearField("trace")
    assert len(ours.nodes) == info["profile_nodes"]
    assert ours == theirs


def test_serialized_profile_keeps_every_node_fact(tmp_path):
    profiler = _profiler("convnet")
    prof = tfprof_log_pb2.ProfileProto()
    prof.ParseFromString(profiler.serialize_to_string())
    graph = framework_pb2.GraphDef()
    with open(sample("convnet", "graph.pb"), "rb") as fh:
        graph.ParseFromString(fh.read())
    by_name = {pn.name: pn for pn in prof.nodes.values()}
    assert sorted(prof.steps) == [0, 1, 2] and prof.has_trace
    for key, pn in prof.nodes.items():
        assert pn.id == key
    for nd in graph.node:  # every NodeDef attribute is kept, as the engine keeps it
        assert set(by_name[nd.name].attrs) == set(nd.attr)
    conv = next(pn for pn in prof.nodes.values() if pn.op == "Conv2D")
    assert "_conv_ops" in conv.op_types and list(conv.op_types) == sorted(conv.op_types)
    assert conv.trace.traces and conv.float_ops > 0 and conv.canonical_device
    for idx, src in conv.inputs.items():
        assert prof.nodes[src].name == graph.node[[n.name for n in graph.node]
                                                  .index(conv.name)].input[idx].split(":")[0]
    ran = conv.execs[1]
    assert ran.run_count == 1 and ran.cpu_execs and ran.memory_execs
    for times in ran.cpu_execs.values():
        assert all(len(t.int64_values) == 2 for t in times.times)
    ids = {t.file_id for pn in prof.nodes.values() for t in pn.trace.traces}
    assert ids <= set(prof.id_to_string)


def test_messages_bytes_text_and_paths_give_the_same_profile():
    graph, metas, op_log = _files("tiny_mlp")
    from_paths = compat.Profiler(graph, op_log=op_log)
    with open(graph, "rb") as fh:
        graph_bytes = fh.read()
    with open(sample("tiny_mlp", "graph.pbtxt"), "rb") as fh:
        graph_text = fh.read()
    log = tfprof_log_pb2.OpLogProto()
    with open(op_log, "rb") as fh:
        log.ParseFromString(fh.read())
    from_bytes = compat.Profiler(graph_bytes, op_log=log.SerializeToString())
    from_text = compat.Profiler(graph_text, op_log=log)
    msg = framework_pb2.GraphDef()
    msg.ParseFromString(graph_bytes)
    from_message = compat.Profiler(msg, op_log=log)
    for step, path in enumerate(metas):
        rm = framework_pb2.RunMetadata()
        with open(path, "rb") as fh:
            rm.ParseFromString(fh.read())
        from_paths.add_step(step, path)
        from_bytes.add_step(step, rm.SerializeToString())
        from_text.add_step(step, rm)
        from_message.add_step(step, rm)
    want = tfprof_log_pb2.ProfileProto.FromString(from_paths.serialize_to_string())
    assert len(want.nodes) == 126
    for other in (from_bytes, from_text, from_message):  # map order aside, the same message
        assert tfprof_log_pb2.ProfileProto.FromString(other.serialize_to_string()) == want


def test_steps_added_later_are_seen_by_the_next_view(capsys):
    graph, metas, op_log = _files("while_rnn")
    profiler = compat.Profiler(graph, op_log=op_log)
    opts = dict(Builder.time_and_memory(), output="none")
    profiler.add_step(7, metas[0])
    first = profiler.profile_operations(opts)
    profiler.add_step(9, metas[1])
    second = profiler.profile_operations(opts)
    assert profiler.steps == [7, 9] and first != second
    both = Profile.load(graph_path=graph, run_meta_paths=metas[:2], op_log_path=op_log)
    assert second == both.profile("op", opts, as_proto=True)
    one = Profile.load(graph_path=graph, run_meta_paths=metas[:1], op_log_path=op_log)
    assert first == one.profile("op", opts, as_proto=True)


def test_without_a_graph_nodes_come_from_run_metadata(capsys):
    _, metas, _ = _files("tiny_mlp")
    profiler = compat.Profiler(framework_pb2.GraphDef())
    profiler.add_step(0, metas[0])
    node = profiler.profile_operations(dict(Builder.time_and_memory(), output="none"))
    assert node.total_exec_micros > 0 and node.children
    assert profiler._coverage == 0.0  # no graph node to cover


def test_run_metadata_without_step_stats_is_reported_and_skipped(capsys):
    graph, metas, op_log = _files("tiny_mlp")
    profiler = compat.Profiler(graph, op_log=op_log)
    profiler.add_step(0, metas[0])
    coverage = profiler._coverage
    profiler.add_step(5, framework_pb2.RunMetadata())
    assert capsys.readouterr().err == "Invalid RunMetadata for step 5\n"
    assert profiler.steps == [0] and profiler._coverage == coverage > 0


def test_advise_runs_the_named_checkers(capsys):
    profiler = _profiler("synthetic_gpu")
    advice = profiler.advise()
    out = capsys.readouterr().out
    graph, metas, op_log = _files("synthetic_gpu")
    cli = Profile.load(graph_path=graph, run_meta_paths=metas, op_log_path=op_log)
    assert advice == cli.advise(as_proto=True)
    assert set(advice.checkers) == set(compat.ALL_ADVICE) - {"JobChecker"}
    assert "AcceleratorUtilizationChecker:" in out
    only = profiler.advise({"OperationChecker": {}})
    assert list(only.checkers) == ["OperationChecker"]
    assert profiler.advise({}) == tfprof_output_pb2.AdviceProto()  # as the engine: no checker


@pytest.mark.parametrize("kind", ["file", "timeline", "pprof"])
def test_file_outputs_match_the_cli(kind, tmp_path, capsys):
    view = "code" if kind == "pprof" else "scope"
    (tmp_path / "ours").mkdir()
    (tmp_path / "cli").mkdir()
    ours, cli = tmp_path / "ours" / "out", tmp_path / "cli" / "out"
    opts = dict(Builder.time_and_memory(), step=1, select=["micros"])
    profiler = _profiler("tiny_mlp")
    getattr(profiler, METHODS[view])(dict(opts, output="%s:outfile=%s" % (kind, ours)))
    printed = capsys.readouterr().out
    cli_out = _cli("tiny_mlp", [view] + _tokens(opts) + ["-output", "%s:outfile=%s" % (kind, cli)])
    assert printed == cli_out.replace(str(cli), str(ours))
    written = sorted(os.listdir(tmp_path / "ours"))  # a timeline is written per step: out_1
    assert written and written == sorted(os.listdir(tmp_path / "cli"))
    for name in written:
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_profilers_are_independent(capsys):
    a, b = _profiler("tiny_mlp"), _profiler("convnet")
    opts = dict(Builder.trainable_variables_parameter(), output="none")
    assert a.profile_name_scope(opts) != b.profile_name_scope(opts)
    del b
    assert a.profile_name_scope(opts).total_parameters > 0


def test_mistakes_raise_user_errors(tmp_path):
    with pytest.raises(LoadError, match="graph"):
        compat.Profiler(str(tmp_path / "missing.pb"))
    profiler = _profiler("tiny_mlp")
    with pytest.raises(LoadError, match="run_meta"):
        profiler.add_step(3, b"\xff\xfe not a message")
    with pytest.raises(OptionError):
        profiler.profile_operations({"order_by": "micros", "select": ["microseconds"]})
    assert profiler.steps == [0, 1, 2]


def test_profile_context_checks_its_arguments_at_once(tmp_path):
    with pytest.raises(OptionError, match="directory"):
        compat.ProfileContext("")
    with pytest.raises(OptionError, match="at most 100"):
        compat.ProfileContext(str(tmp_path), trace_steps=range(101))
    pctx = compat.ProfileContext(str(tmp_path), trace_steps=[1], dump_steps=[])
    with pytest.raises(OptionError, match="unknown cmd 'python'"):
        pctx.add_auto_profiling("python", Builder.time_and_memory(), [1])
    with pytest.raises(OptionError, match="select"):
        pctx.add_auto_profiling("op", {"select": ["microseconds"]}, [1])
    with pytest.raises(OptionError, match="no auto-profiling of 'op'"):
        pctx.get_profiles("op")


def test_a_disabled_profile_context_does_nothing(tmp_path):
    with compat.ProfileContext(str(tmp_path / "p"), enabled=False) as pctx:
        pctx.add_auto_profiling("op", Builder.time_and_memory(), [1])
        pctx.trace_next_step()
        pctx.dump_next_step()
        assert pctx.profiler is None
    assert not os.path.exists(tmp_path / "p")


def test_profile_context_without_tensorflow_says_so(tmp_path):
    if importlib.util.find_spec("tensorflow") is not None:
        pytest.skip("TensorFlow is installed")
    with pytest.raises(OptionError, match="needs TensorFlow"):
        with compat.ProfileContext(str(tmp_path)):
            pass
