"""A packed model summary answers every view exactly as the loaded model does.

For each sample input route (ProfileProto, GraphDef + RunMetadata, TF2
xplane, ProfilerHook timelines, a PyTorch trace), every view's text and JSON
at ``-step -1`` and at each recorded step are byte-identical between the
loaded model and ``unpack_model(pack_model(model))``. What a loader left in
its file stays there: timelines and the advisor's detailed records, TF2
Python stacks, and a ProfileProto's per-step values and node details come
from one reload, which the default (averaged) views never need.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import sample
from tfprof_shell.errors import LoadError, UserError
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.model import ExecMemory, ExecStep, Frame, GraphNode, Model, Source
from tfprof_shell.model.summary import MAGIC, VERSION, pack_model, unpack_model
from tfprof_shell.session import Session

RUN_METAS = tuple("run_meta_%d" % i for i in range(3))

#: name -> Inputs (PyTorch is written by a fixture: see ``routes``).
ROUTES: dict[str, Inputs] = {
    "tiny_mlp/profile": Inputs(profile_path=sample("tiny_mlp", "profile")),
    "convnet/profile": Inputs(profile_path=sample("convnet", "profile")),
    "while_rnn/profile": Inputs(profile_path=sample("while_rnn", "profile")),
    "synthetic_gpu/profile": Inputs(profile_path=sample("synthetic_gpu", "profile")),
    "convnet/graph": Inputs(graph_path=sample("convnet", "graph.pbtxt"),
                            run_meta_paths=tuple(sample("convnet", r) for r in RUN_METAS),
                            op_log_path=sample("convnet", "op_log")),
    "synthetic_gpu/graph": Inputs(graph_path=sample("synthetic_gpu", "graph.pb"),
                                  run_meta_paths=tuple(sample("synthetic_gpu", r)
                                                       for r in RUN_METAS),
                                  op_log_path=sample("synthetic_gpu", "op_log")),
    "while_rnn/run_meta": Inputs(run_meta_paths=tuple(sample("while_rnn", r)
                                                      for r in RUN_METAS)),
    "tf2/custom_loop": Inputs(profile_path=sample("tf2", "custom_loop")),
    "tf2/custom_loop_py": Inputs(profile_path=sample("tf2", "custom_loop_py")),
    "tf2/keras_fit": Inputs(profile_path=sample("tf2", "keras_fit")),
    "timeline/mlp": Inputs(profile_path=sample("timeline", "mlp")),
    "timeline/mlp+graph": Inputs(profile_path=sample("timeline", "mlp"),
                                 graph_path=sample("timeline", "mlp", "graph.pbtxt")),
}

SELECT = ("micros,bytes,peak_bytes,residual_bytes,output_bytes,accelerator_micros,cpu_micros,"
          "params,float_ops,occurrence,device,op_types,input_shapes")
VIEWS = ("scope", "graph", "op", "code")


def pytorch_trace() -> dict:
    """A trace shaped like torch.profiler's export: two ProfilerStep windows,
    module scopes, a labelled region, a GPU kernel found by its correlation id."""
    events = []
    for i in range(2):
        t, ext = 1000.0 + 400 * i, 10 * (i + 1)

        def cpu(cat, name, ts, dur, **args):
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 77, "tid": 77,
                           "ts": ts, "dur": dur, "args": args})
        cpu("user_annotation", "ProfilerStep#%d" % (5 + i), t, 300.0)
        cpu("python_function", "nn.Module: Sequential_0", t + 10, 200.0)
        cpu("python_function", "nn.Module: Linear_0", t + 20, 100.0)
        cpu("cpu_op", "aten::linear", t + 30, 60.4 + i, **{"External id": ext})
        cpu("cpu_op", "aten::addmm", t + 40, 40.2, **{"External id": ext + 1})
        cpu("cuda_runtime", "cudaLaunchKernel", t + 50, 5.0, correlation=ext,
            **{"External id": ext + 1})
        cpu("user_annotation", "activation", t + 130, 50.0)
        cpu("cpu_op", "aten::relu", t + 140, 20.6 + 3 * i, **{"External id": ext + 2})
        events.append({"ph": "X", "cat": "kernel", "name": "void gemm_kernel", "pid": 0,
                       "tid": 7, "ts": t + 320.0, "dur": 12.0 + i,
                       "args": {"External id": ext + 1, "device": 0, "stream": 7,
                                "correlation": ext}})
    return {"schemaVersion": 1, "deviceProperties": [], "traceEvents": events}


@pytest.fixture(scope="module")
def routes(tmp_path_factory) -> dict[str, Inputs]:
    path = tmp_path_factory.mktemp("torch") / "worker0.1.pt.trace.json"
    path.write_text(json.dumps(pytorch_trace()))
    return dict(ROUTES, pytorch=Inputs(profile_path=str(path)))


def no_reload() -> Model:
    raise AssertionError("a view read a detailed record: it must not need the inputs")


def packed_counting_reloads(inputs: Inputs) -> tuple[Model, list[int]]:
    """A packed model of ``inputs`` whose reloads append to the returned list."""
    reloads: list[int] = []

    def reload() -> Model:
        reloads.append(1)
        return load_model(inputs)
    return unpack_model(pack_model(load_model(inputs)), reload), reloads


def run(model: Model, line: str) -> str:
    return Session(model).execute(line).text


def outcome(model: Model, line: str) -> str:
    """The command's text, or its one-line error (views refuse some models alike)."""
    try:
        return run(model, line)
    except UserError as exc:
        return "%s: %s" % (type(exc).__name__, exc.message)


def packed_for_views(inputs: Inputs) -> Model:
    """A packed model that may reload only for what its loader deferred: TF2 stacks, a
    ProfileProto's per-step values and details."""
    model = load_model(inputs)
    if model.traces_deferred or model.source.kind == "profile":
        return unpack_model(pack_model(model), lambda: load_model(inputs))
    return unpack_model(pack_model(model), no_reload)


@pytest.mark.parametrize("route", sorted(ROUTES) + ["pytorch"])
def test_every_view_and_step_is_byte_identical(routes, route):
    loaded = load_model(routes[route])
    packed = packed_for_views(routes[route])
    assert packed.steps == loaded.steps and packed.steps
    assert sorted(packed.nodes) == sorted(loaded.nodes)
    assert (packed.has_trace, packed.miss_accelerator_stream, packed.notes, packed.source) == (
        loaded.has_trace, loaded.miss_accelerator_stream, loaded.notes, loaded.source)
    shown = 0
    for step in [-1] + loaded.steps:
        for view in VIEWS:
            for output in ("stdout", "json"):
                line = "%s -max_depth 100000 -select %s -order_by micros -step %d -output %s" % (
                    view, SELECT, step, output)
                expected = outcome(loaded, line)
                assert outcome(packed, line) == expected, line
                shown += not expected.startswith("RequestError")
    assert shown >= 2 * 3 * (1 + len(loaded.steps))


@pytest.mark.parametrize("route", ["convnet/profile", "tf2/custom_loop_py", "timeline/mlp"])
def test_filters_and_orders_are_identical(routes, route):
    loaded = load_model(routes[route])
    packed = packed_for_views(routes[route])
    for line in ("scope -max_depth 3 -min_micros 5 -order_by bytes -account_type_regexes .*Add.*",
                 "graph -max_depth 4 -start_name_regexes .*grad.* -select micros,occurrence",
                 "op -order_by occurrence -min_occurrence 2 -select micros,occurrence",
                 "code -max_depth 5 -select micros -order_by micros -output json",
                 "scope -account_displayed_op_only true -show_name_regexes .*Mat.* -step %d"
                 % loaded.steps[-1]):
        assert outcome(packed, line) == outcome(loaded, line), line


def test_code_view_pprof_is_identical(tmp_path):
    inputs = ROUTES["tiny_mlp/profile"]
    loaded = load_model(inputs)
    packed = unpack_model(pack_model(loaded), no_reload)
    for name, model in (("a", loaded), ("b", packed)):
        run(model, "code -max_depth 100 -select micros -output pprof:outfile=%s"
            % (tmp_path / name))
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


@pytest.mark.parametrize("route", ["synthetic_gpu/profile", "synthetic_gpu/graph",
                                   "tf2/custom_loop", "timeline/mlp"])
def test_advise_is_identical_and_reloads_at_most_once(routes, route):
    inputs = routes[route]
    loaded = load_model(inputs)
    packed, reloads = packed_counting_reloads(inputs)
    assert run(packed, "advise") == run(loaded, "advise")
    assert run(packed, "advise") == run(loaded, "advise")
    assert len(reloads) <= 1
    if route.startswith("synthetic_gpu"):  # the accelerator checker reads records
        assert reloads == [1]


@pytest.mark.parametrize("route", ["synthetic_gpu/profile", "tiny_mlp/profile", "tf2/keras_fit",
                                   "pytorch"])
def test_timelines_come_from_one_reload(routes, route, tmp_path):
    inputs = routes[route]
    loaded = load_model(inputs)
    packed, reloads = packed_counting_reloads(inputs)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for view in ("scope", "graph") + (("code",) if loaded.has_trace else ()):
        for step in loaded.steps[:2]:
            line = "%s -max_depth 100000 -step %d -output timeline:outfile=%s" % (
                view, step, tmp_path / "%s" / ("%s_%d.json" % (view, step)))
            assert run(packed, line % "b").replace("/b/", "/a/") == run(loaded, line % "a")
    written = sorted(os.listdir(tmp_path / "a"))
    assert written and sorted(os.listdir(tmp_path / "b")) == written
    for name in written:
        assert (tmp_path / "b" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()
    assert reloads == [1]


def test_a_record_without_reload_is_one_clear_load_error():
    inputs = ROUTES["synthetic_gpu/graph"]
    packed = unpack_model(pack_model(load_model(inputs)))
    assert run(packed, "scope -step 1")  # views need no records
    with pytest.raises(LoadError, match=r"^timelines .* need the full profile: .*synthetic_gpu/"
                                        r"\S+ cannot be read here"):
        run(packed, "graph -step 1 -output timeline:outfile=/dev/null")


def test_a_failing_reload_names_the_input_and_the_reason(tmp_path):
    path = tmp_path / "profile"
    path.write_bytes(open(sample("synthetic_gpu", "profile"), "rb").read())
    packed = unpack_model(pack_model(load_model(Inputs(profile_path=str(path)))),
                          lambda: load_model(Inputs(profile_path=str(path))))
    os.remove(path)
    with pytest.raises(LoadError) as err:
        run(packed, "advise")
    assert str(path) in err.value.message and "cannot be read here" in err.value.message
    assert "\n" not in err.value.message


def test_other_versions_and_damaged_summaries_are_refused():
    data = pack_model(load_model(ROUTES["tiny_mlp/profile"]))
    assert data.startswith(MAGIC)
    with pytest.raises(LoadError, match="format %d, this tfprof-shell reads %d"
                       % (VERSION + 1, VERSION)):
        unpack_model(MAGIC + bytes([VERSION + 1]) + data[len(MAGIC) + 1:])
    with pytest.raises(LoadError, match="damaged"):
        unpack_model(data[:len(data) // 2])
    with pytest.raises(LoadError, match="not a tfprof profile summary"):
        unpack_model(b"\x08\x01" + data)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_summary_is_much_smaller_than_the_input(route):
    model = load_model(ROUTES[route])
    raw = sum(os.path.getsize(p) for p in model.source.paths)
    if route.endswith("graph"):
        raw += os.path.getsize(ROUTES[route].graph_path or "")
    assert len(pack_model(model)) * 5 < raw


# -- property test on built models ---------------------------------------------

NAMES = st.text("abc/_", min_size=1, max_size=6)
FRAMES = st.builds(Frame, st.sampled_from(["a.py", "b.py", "é.py"]), st.integers(0, 99),
                   st.sampled_from(["f", "g", "<module>"]), st.integers(0, 99))
TIMES = st.dictionaries(st.sampled_from(["/gpu:0/stream:all", "/gpu:0/stream:7", "/cpu:0"]),
                        st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**31)),
                                 max_size=3), max_size=2)
MEMORY = st.builds(ExecMemory, *[st.integers(0, 2**33) for _ in range(10)])
RECORDS = st.builds(ExecStep, st.integers(0, 5), st.integers(0, 2**40), st.integers(0, 2**41),
                    TIMES, TIMES, st.sets(st.sampled_from(["/cpu:0", "/gpu:0"])),
                    st.lists(MEMORY, max_size=2),
                    st.lists(st.tuples(st.integers(0, 99), st.integers(0, 2**20)), max_size=2))


@st.composite
def models(draw) -> Model:
    steps = draw(st.lists(st.integers(-3, 2**40), min_size=1, max_size=4, unique=True))
    traces = draw(st.lists(st.lists(FRAMES, max_size=4), min_size=1, max_size=3))
    model = Model(Source(draw(st.sampled_from(["profile", "xplane"])), ("p",), "n"),
                  steps=sorted(steps), has_trace=draw(st.booleans()),
                  miss_accelerator_stream=draw(st.booleans()), notes=draw(st.lists(NAMES)))
    for i, name in enumerate(draw(st.lists(NAMES, min_size=1, max_size=6, unique=True))):
        node = GraphNode(name, draw(st.sampled_from(["", "MatMul", "Add"])), i - 1)
        node.op_types |= draw(st.sets(st.sampled_from(["/gpu:0", "_trainable_variables"])))
        node.shape = draw(st.lists(st.integers(-1, 9), max_size=3))
        node.inputs = draw(st.dictionaries(st.integers(0, 3), NAMES, max_size=3))
        node.output_shapes = draw(st.dictionaries(st.integers(0, 2), st.lists(st.integers(-1, 9),
                                                                             max_size=2)))
        node.src_output = {src: draw(st.integers(0, 2)) for src in node.inputs.values()}
        node.attrs = draw(st.dictionaries(st.sampled_from(["data_format", "T"]), NAMES))
        node.canonical_device = draw(st.sampled_from(["", "/gpu:0", "/cpu:0"]))
        node.host_device = draw(st.sampled_from(["", "/cpu:0"]))
        node.float_ops = draw(st.integers(0, 2**50))
        node.trace = draw(st.one_of(st.none(), st.sampled_from(traces)))
        node.execs = {s: draw(RECORDS) for s in draw(st.lists(st.sampled_from(steps),
                                                              unique=True))}
        model.nodes[name] = node
    return model


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_packed_nodes_match_built_nodes(model):
    reloads = []

    def reload() -> Model:
        reloads.append(1)
        return model
    packed = unpack_model(pack_model(model), reload)
    assert list(packed.nodes) == list(model.nodes)
    assert (packed.steps, packed.has_trace, packed.miss_accelerator_stream, packed.notes,
            packed.source) == (model.steps, model.has_trace, model.miss_accelerator_stream,
                               model.notes, model.source)
    for name, node in model.nodes.items():
        got = packed.nodes[name]
        assert (got.id, got.op, got.op_types, got.shape, got.inputs, got.output_shapes,
                got.src_output, got.attrs, got.canonical_device, got.host_device,
                got.float_ops, got.trace, got.steps_run, got.has_run()) == (
            node.id, node.op, node.op_types, node.shape, node.inputs, node.output_shapes,
            node.src_output, node.attrs, node.canonical_device, node.host_device,
            node.float_ops, node.trace, node.steps_run, node.has_run())
        for step in [-1, -2, 2**41] + model.steps:
            assert got.stats(step) == node.stats(step), (name, step)
    assert reloads == []
    for name, node in model.nodes.items():
        got = packed.nodes[name]
        assert got.accelerator_persistent_bytes() == node.accelerator_persistent_bytes()
        for step in model.steps:
            assert got.exec_step(step) == node.exec_step(step)
    assert len(reloads) <= 1
    # Equal frame lists are one list in the summary.
    by_content: dict[tuple, set[int]] = {}
    for node in packed.nodes.values():
        if node.trace is not None:
            by_content.setdefault(tuple(node.trace), set()).add(id(node.trace))
    assert all(len(ids) == 1 for ids in by_content.values())


@pytest.mark.parametrize("route", ["tiny_mlp/profile", "convnet/profile", "while_rnn/profile",
                                   "synthetic_gpu/profile"])
def test_a_profile_summary_defers_per_step_values_and_details_to_one_reload(route):
    inputs = ROUTES[route]
    loaded = load_model(inputs)
    packed, reloads = packed_counting_reloads(inputs)
    default = "%s -max_depth 100000 -select " + SELECT.replace(",input_shapes", "")
    for view in VIEWS:  # the averaged views read totals only
        assert run(packed, default % view) == run(loaded, default % view)
    assert reloads == []
    for step in loaded.steps:
        line = (default % "scope") + " -step %d" % step
        assert run(packed, line) == run(loaded, line)
    assert reloads == [1]
    for name, node in loaded.nodes.items():
        got = packed.nodes[name]
        assert (got.attrs, got.output_shapes, got.src_output, got.trace) == (
            node.attrs, node.output_shapes, node.src_output, node.trace)
    assert reloads == [1]


def test_deferred_details_come_from_the_reload():
    loaded = load_model(ROUTES["convnet/profile"])
    packed, reloads = packed_counting_reloads(ROUTES["convnet/profile"])
    conv = next(n for n in loaded.nodes.values() if n.op == "Conv2D")
    assert packed.nodes[conv.name].trace == conv.trace and conv.trace
    assert reloads == []
    assert conv.attrs.get("data_format") == "NHWC"
    assert packed.nodes[conv.name].attrs == conv.attrs
    assert packed.nodes[conv.name].output_shapes == conv.output_shapes and conv.output_shapes
    assert reloads == [1]


def test_per_step_values_without_reload_are_one_clear_load_error():
    packed = unpack_model(pack_model(load_model(ROUTES["tiny_mlp/profile"])))
    assert run(packed, "scope -max_depth 3 -select micros,bytes")
    with pytest.raises(LoadError, match=r"^statistics of one step need the full profile: "
                                        r".*tiny_mlp/profile cannot be read here"):
        run(packed, "scope -max_depth 3 -select micros -step %d" % packed.steps[0])
    with pytest.raises(LoadError, match=r"^input shapes need the full profile"):
        run(packed, "scope -max_depth 3 -select input_shapes")


def test_deferred_traces_stay_deferred_until_the_code_view_asks():
    inputs = ROUTES["tf2/custom_loop_py"]
    assert load_model(inputs).traces_deferred  # the TF2 loader looks stacks up late
    packed, reloads = packed_counting_reloads(inputs)
    loaded = load_model(inputs)
    for line in ("scope -max_depth 4", "op -select micros,occurrence", "graph -max_depth 3"):
        assert run(packed, line) == run(loaded, line)
    assert reloads == []
    line = "code -max_depth 8 -select micros -order_by micros"
    assert run(packed, line) == run(loaded, line)
    assert run(packed, line + " -output json") == run(loaded, line + " -output json")
    assert reloads == [1]


def test_cheap_deferred_traces_travel_in_the_summary():
    """PyTorch frames are matched when first asked for, but a loading process matches
    them before packing (cheaper than the reload a code view would otherwise need)."""
    inputs = Inputs(profile_path=sample("torch_cnn"))
    assert load_model(inputs).traces_deferred
    packed, reloads = packed_counting_reloads(inputs)
    loaded = load_model(inputs)
    line = "code -max_depth 8 -select micros -order_by micros"
    assert run(packed, line) == run(loaded, line)
    assert reloads == []


def test_deferred_traces_without_reload_are_one_clear_load_error():
    packed = unpack_model(pack_model(load_model(ROUTES["tf2/custom_loop_py"])))
    assert run(packed, "op -select micros")
    with pytest.raises(LoadError, match=r"^code traces need the full profile: .*custom_loop_py"):
        run(packed, "code -max_depth 3")


def test_a_reload_is_announced_once_after_the_command_that_caused_it():
    inputs = ROUTES["tiny_mlp/profile"]
    packed, reloads = packed_counting_reloads(inputs)
    session = Session(packed, name="a")
    session.add("b", load_model(inputs))
    assert session.execute("scope -max_depth 2").notes == []
    step = packed.steps[0]
    notes = session.execute("scope -max_depth 2 -step %d" % step).notes
    assert notes == ["tfprof: a: read %s again in full: statistics of one step need it"
                     % inputs.profile_path]
    assert reloads == [1]
    assert session.execute("graph -max_depth 2 -step %d" % step).notes == []
    assert session.execute("use b").notes == []
    assert packed.take_notes() == []


def test_with_one_profile_the_reload_note_names_no_profile():
    packed, _ = packed_counting_reloads(ROUTES["tiny_mlp/profile"])
    notes = Session(packed).execute("scope -max_depth 2 -select input_shapes").notes
    assert notes == ["tfprof: read %s again in full: input shapes need it"
                     % ROUTES["tiny_mlp/profile"].profile_path]
