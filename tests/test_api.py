"""The Python API (tfprof_shell.Profile) and the TensorFlow stand-ins (tfprof_shell.compat)."""

from __future__ import annotations

import os

import pytest

from conftest import run_cli, sample
from tfprof_shell import Profile, Result, compat
from tfprof_shell.errors import CommandError, OptionError, RequestError
from tfprof_shell.proto import framework_pb2, tfprof_log_pb2, tfprof_output_pb2


@pytest.fixture(scope="module")
def mlp():
    return Profile.load(profile_path=sample("tiny_mlp", "profile"))


def _graph_route_files(model: str = "tiny_mlp"):
    return (sample(model, "graph.pbtxt"), [sample(model, "run_meta_%d" % i) for i in range(3)],
            sample(model, "op_log"))


def test_readme_example():
    # Keep in sync with the "Python API" example of docs/api.md.
    from tfprof_shell import Profile

    prof = Profile.load(profile_path=sample("tiny_mlp", "profile"))
    res = prof.run("scope -max_depth 2 -select micros,params -order_by micros")
    slowest = res.data["root"]["children"][0]
    assert slowest["total"]["micros"] >= res.data["root"]["children"][-1]["total"]["micros"]
    ops = prof.profile("op", {"select": ["micros"], "order_by": "micros",
                              "account_type_regexes": [".*"], "show_name_regexes": [".*"],
                              "max_depth": 5})
    assert [r["name"] for r in ops.data["root"]["children"]]
    node = prof.profile("scope", compat.ProfileOptionBuilder.trainable_variables_parameter(),
                        as_proto=True)
    assert node.total_parameters > 0
    assert "Profile:" in prof.run("code -max_depth 3", text=True).text


def test_run_matches_the_cli(mlp):
    line = "op -select micros,bytes -order_by micros -max_depth 5"
    cli = run_cli(["--profile_path=" + sample("tiny_mlp", "profile")] + line.split(" "))
    res = mlp.run(line, text=True)
    assert res.text == cli.out
    assert isinstance(res, Result) and res.view == "op"
    assert mlp.run(line).text == ""  # text only when asked


def test_set_persists_and_command_options_do_not(tmp_path):
    prof = Profile.load(profile_path=sample("tiny_mlp", "profile"))
    assert prof.run("scope -max_depth 2").data["root"]["children"]
    prof.run("set -max_depth 1")
    assert prof.options.max_depth == 1
    assert prof.run("scope").data["root"]["children"] == []
    assert prof.run("scope -max_depth 2").data["root"]["children"]
    assert prof.run("").text.startswith("-max_depth                  1\n")


def test_all_input_routes_agree():
    graph, metas, op_log = _graph_route_files()
    by_files = Profile.load(graph_path=graph, run_meta_paths=metas, op_log_path=op_log)
    by_comma_list = Profile.load(graph_path=graph, run_meta_paths=",".join(metas),
                                 op_log_path=op_log)
    with open(sample("tiny_mlp", "op_log"), "rb") as fh:
        op_log_bytes = fh.read()
    run_metas = []
    for path in metas:
        rm = framework_pb2.RunMetadata()
        with open(path, "rb") as fh:
            rm.ParseFromString(fh.read())
        run_metas.append(rm)
    in_memory = Profile.from_messages(graph, run_metas, op_log_bytes)
    profile = Profile.load(profile_path=sample("tiny_mlp", "profile"))
    assert by_files.steps == in_memory.steps == profile.steps == [0, 1, 2]
    for view in ("scope", "graph", "op", "code"):
        line = "%s -max_depth 100 -select micros,bytes,params,float_ops" % view
        expected = by_files.run(line).data
        assert by_comma_list.run(line).data == expected
        assert in_memory.run(line).data == expected
        assert profile.run(line).data == expected


def test_dict_options_use_tensorflow_defaults(mlp):
    # No show_name_regexes in a dictionary means "show nothing but the root".
    assert mlp.profile("scope", {}).data["root"]["children"] == []
    shown = mlp.profile("scope", {"show_name_regexes": [".*"], "account_type_regexes": [".*"],
                                  "start_name_regexes": [".*"]}).data
    assert shown["select"] == [] and shown["root"]["children"]
    opts, notes = compat.options_from_dict({})
    assert (opts.max_depth, opts.account_type_regexes, opts.select, opts.output.kind) == (
        10, (), frozenset(), "stdout")
    assert notes == []


def test_dict_options_validation():
    with pytest.raises(OptionError, match="unknown option key"):
        compat.options_from_dict({"max_dept": 3})
    with pytest.raises(OptionError, match="unknown attribute"):
        compat.options_from_dict({"select": ["microseconds"]})
    with pytest.raises(OptionError):
        compat.options_from_dict({"show_name_regexes": ["(unclosed"]})
    with pytest.raises(OptionError):
        compat.options_from_dict({"output": "html"})
    opts, notes = compat.options_from_dict({"dump_to_file": "x.txt", "output": "stdout"})
    assert opts.output.kind == "file" and opts.output.outfile == "x.txt"
    assert len(notes) == 2 and "deprecated" in notes[0]


def test_option_builder_matches_tensorflows_dictionaries():
    b = compat.ProfileOptionBuilder
    assert b().build() == {
        "max_depth": 100, "min_bytes": 0, "min_micros": 0, "min_params": 0,
        "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
        "account_type_regexes": [".*"], "start_name_regexes": [".*"], "trim_name_regexes": [],
        "show_name_regexes": [".*"], "hide_name_regexes": [],
        "account_displayed_op_only": False, "select": ["micros"], "step": -1,
        "output": "stdout"}
    tv = b.trainable_variables_parameter()
    assert (tv["max_depth"], tv["account_type_regexes"], tv["select"],
            tv["account_displayed_op_only"]) == (10000, ["_trainable_variables"], ["params"], True)
    fo = b.float_operation()
    assert (fo["min_float_ops"], fo["order_by"], fo["select"]) == (1, "float_ops", ["float_ops"])
    tm = b.time_and_memory(min_micros=5)
    assert (tm["min_micros"], tm["min_bytes"], tm["order_by"], tm["select"]) == (
        5, 1, "micros", ["micros", "bytes"])
    built = (b(tm).with_max_depth(3).with_node_names(show_name_regexes=["a.*"])
             .select(["bytes"]).with_step(2).with_timeline_output("t.json")
             .account_displayed_op_only(False).build())
    assert (built["max_depth"], built["show_name_regexes"], built["start_name_regexes"],
            built["select"], built["step"], built["output"]) == (
        3, ["a.*"], [".*"], ["bytes"], 2, "timeline:outfile=t.json")
    assert tm["max_depth"] == 10000  # the builder copied its input


def test_protos_and_errors(mlp):
    scope = mlp.profile("scope", "-max_depth 3", as_proto=True)
    op = mlp.profile("op", "-max_depth 3", as_proto=True)
    assert isinstance(scope, tfprof_output_pb2.GraphNodeProto)
    assert isinstance(op, tfprof_output_pb2.MultiGraphNodeProto)
    assert scope.name == "_TFProfRoot" and scope.children
    # The op view's rows come back nested as a chain, as the engine returns them.
    assert len(op.children) == 1 and len(op.children[0].children) == 1
    with pytest.raises(RequestError):
        mlp.profile("scope", "-step 99")
    with pytest.raises(CommandError):
        mlp.profile("tree")


def test_api_writes_outputs(mlp, tmp_path):
    res = mlp.profile("graph", "-output timeline:outfile=%s" % (tmp_path / "t"))
    assert res.files == [str(tmp_path / ("t_%d" % s)) for s in mlp.steps]
    assert res.data is None and res.proto() == tfprof_output_pb2.GraphNodeProto()
    res = mlp.profile("code", "-select bytes -output pprof:outfile=%s" % (tmp_path / "p.gz"))
    assert res.files == [str(tmp_path / "p.gz")] and res.data["view"] == "code"
    res = mlp.profile("scope", {"output": "file:outfile=%s" % (tmp_path / "s.txt"),
                                "show_name_regexes": [".*"]})
    assert res.files == [str(tmp_path / "s.txt")] and res.text == ""
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["p.gz", "s.txt"] + ["t_%d" % s for s in mlp.steps])


def test_advise(mlp):
    res = mlp.advise()
    assert res.data["schema_version"] == 1
    assert "ExpensiveOperationChecker" in res.data["checkers"]
    assert res.text.startswith("\n")
    proto = mlp.advise(["OperationChecker"], as_proto=True)
    assert isinstance(proto, tfprof_output_pb2.AdviceProto)
    assert list(proto.checkers) == ["OperationChecker"]
    assert mlp.run("advise").data == res.data


def test_compat_profile_prints_the_python_frame(capsys):
    graph, metas, op_log = _graph_route_files()
    node = compat.profile(graph, metas[0], op_log, cmd="scope")
    out = capsys.readouterr().out
    assert out.startswith("\n=========================Options=============================\n"
                          "-max_depth                  10000\n")
    assert "-select                     params\n-output                     stdout:\n" in out
    assert "\n==================Model Analysis Report======================\n\nDoc:\n" in out
    assert out.endswith("\n======================End of Report==========================\n")
    assert isinstance(node, tfprof_output_pb2.GraphNodeProto) and node.total_parameters > 0


def test_compat_profile_accepts_messages_and_profiles(capsys, tmp_path):
    graph, metas, op_log = _graph_route_files()
    g = framework_pb2.GraphDef()
    with open(sample("tiny_mlp", "graph.pb"), "rb") as fh:
        g.ParseFromString(fh.read())
    log = tfprof_log_pb2.OpLogProto()
    with open(op_log, "rb") as fh:
        log.ParseFromString(fh.read())
    opts = dict(compat.ProfileOptionBuilder.time_and_memory(), output="none")
    from_messages = compat.profile(g, metas[0], log, cmd="op", options=opts)
    from_paths = compat.profile(graph, metas[0], op_log, cmd="op", options=opts)
    assert from_messages == from_paths and from_paths.children
    assert capsys.readouterr().out == ""
    from_profile = compat.profile(cmd="code", options=opts,
                                  profile_path=sample("tiny_mlp", "profile"))
    assert isinstance(from_profile, tfprof_output_pb2.MultiGraphNodeProto)
    advice = compat.advise(profile_path=sample("tiny_mlp", "profile"))
    assert "JobChecker" not in advice.checkers and "OperationChecker" in advice.checkers
    assert "ExpensiveOperationChecker:" in capsys.readouterr().out


def test_steps_and_kernels_give_their_json_document_as_data():
    import json
    prof = Profile.load(profile_path=sample("torch_cnn"))
    for line in ("steps -step 3", "kernels -step 3", "steps -output none"):
        res = prof.run(line)
        cli = run_cli(["--profile_path=" + sample("torch_cnn")]
                      + line.replace("-output none", "").split() + ["-output", "json"])
        assert res.data == json.loads(cli.out), line
    assert prof.run("steps")["mode"] == "steps" and prof.run("steps").text.startswith("Steps:")
