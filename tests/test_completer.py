"""The completion engine: derived from the tables, names from the profile, instant."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import re2
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from tfprof_shell import metrics
from tfprof_shell.commands import COMMANDS, parse_words
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.options import DEFAULTS, OPTION_SPECS, names_for
from tfprof_shell.outputs import OUTPUT_KINDS
from tfprof_shell.shell.completer import CompletionEngine, ShellCompleter
from tfprof_shell.shell.names import NameIndex, escape_name

PROFILE = Path(__file__).resolve().parent.parent / "sample_profiles" / "tiny_mlp" / "profile"


@pytest.fixture(scope="module")
def model():
    return load_model(Inputs(profile_path=str(PROFILE)))


@pytest.fixture(scope="module")
def engine(model):
    return CompletionEngine(lambda: NameIndex.from_model(model), model.steps)


def texts(engine, line):
    return [c.text for c in engine.complete(line)]


def test_command_names_with_their_summaries(engine):
    found = engine.complete("s")
    assert [(c.text, c.length, c.meta) for c in found] == [
        ("scope", 1, COMMANDS["scope"].summary), ("steps", 1, COMMANDS["steps"].summary),
        ("set", 1, COMMANDS["set"].summary)]
    assert texts(engine, "") == list(COMMANDS)


def test_option_names_are_those_the_command_accepts(engine):
    assert texts(engine, "op -") == [s.repl_name for s in names_for("op")]
    assert "-checkers" not in texts(engine, "scope -")
    assert texts(engine, "advise -ch") == ["-checkers"]
    found = engine.complete("scope -se")
    assert [(c.text, c.length, c.meta) for c in found] == [
        ("-select", 3, OPTION_SPECS["select"].help)]


def test_an_option_name_can_be_typed_without_its_dash(engine):
    assert [(c.text, c.length) for c in engine.complete("scope ord")] == [("-order_by", 3)]


def test_options_already_given_are_not_offered_again(engine):
    found = texts(engine, "scope -max_depth 3 -select micros -")
    assert "-max_depth" not in found and "-select" not in found
    assert "-order_by" in found


def test_order_by_values(engine):
    assert texts(engine, "op -order_by ") == list(metrics.ORDER_KEYS)
    assert texts(engine, "op -order_by m") == ["micros"]


def test_select_completes_after_a_comma_and_skips_listed_attributes(engine):
    assert [(c.text, c.length) for c in engine.complete("op -select micros,b")] == [("bytes", 1)]
    after = texts(engine, "op -select bytes,micros,")
    assert "bytes" not in after and "micros" not in after
    assert sorted(after + ["bytes", "micros"]) == sorted(metrics.ATTRIBUTES)
    assert [(c.text, c.length) for c in engine.complete("op -select 'mic")] == [("micros", 3)]


def test_output_kinds_keys_and_booleans(engine):
    kinds = engine.complete("scope -output ")
    assert [c.display for c in kinds] == list(OUTPUT_KINDS)
    assert "timeline:outfile=" in [c.text for c in kinds]
    assert texts(engine, "scope -output timeline:") == ["outfile=", "merge="]
    assert texts(engine, "scope -output timeline:outfile=t,") == ["merge="]
    assert texts(engine, "scope -output timeline:outfile=t,merge=") == ["true", "false"]


def test_outfile_completes_paths(engine, tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    (tmp_path / "report.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    assert texts(engine, "scope -output file:outfile=r") == ["report.txt", "runs/"]
    assert texts(engine, "scope -output file:outfile=%s/ru" % tmp_path) == ["%s/runs/" % tmp_path]


def test_booleans_and_a_bare_boolean_followed_by_an_option(engine):
    assert texts(engine, "scope -account_displayed_op_only ") == ["true", "false"]
    found = texts(engine, "scope -account_displayed_op_only -se")
    assert found == ["-select"]


def test_step_offers_the_recorded_steps(engine, model):
    assert texts(engine, "scope -step ") == ["-1"] + [str(s) for s in model.steps]


def test_name_regexes_complete_one_scope_level_at_a_time(engine, model):
    below = sorted({n.split("/")[1] for n in model.nodes if n.startswith("layer1/")})
    found = texts(engine, "scope -show_name_regexes layer1/")
    assert found == ["layer1/.*"] + ["layer1/" + s for s in below]
    top = sorted({n.split("/")[0] for n in model.nodes if n.startswith("lay")})
    assert texts(engine, "graph -hide_name_regexes x,lay") == top


def test_an_anchored_regex_completes_the_name_after_the_anchor(engine):
    plain = engine.complete("scope -hide_name_regexes a,layer1/")
    anchored = engine.complete("scope -hide_name_regexes a,^layer1/")
    assert [c.text for c in anchored] == ["^" + c.text for c in plain] and plain
    assert {c.length for c in anchored} == {len("^layer1/")}


def test_scope_entries_say_how_many_nodes_they_hold(engine, model):
    (entry,) = [c for c in engine.complete("scope -trim_name_regexes layer") if c.text == "layer1"]
    count = sum(1 for n in model.nodes if n.startswith("layer1/"))
    assert "scope of %d nodes" % count in entry.meta


def test_op_view_name_regexes_complete_op_types(engine, model):
    ops = sorted({n.op for n in model.nodes.values() if n.op.startswith("Ma")})
    assert ops and texts(engine, "op -show_name_regexes Ma") == ops


def test_account_type_regexes_complete_every_type(engine, model):
    types = sorted({t for n in model.nodes.values() for t in n.op_types if t.startswith("_t")})
    assert texts(engine, "scope -account_type_regexes _t") == types == ["_trainable_variables"]


def test_code_view_name_regexes_complete_code_locations(engine):
    found = engine.complete("code -start_name_regexes ")
    assert found and all(c.text.count(":") >= 2 for c in found)


def test_help_completes_commands_and_options(engine):
    assert texts(engine, "help sc") == ["scope"]
    assert texts(engine, "help -order") == ["-order_by"]


def test_nothing_to_complete(engine):
    assert engine.complete("bogus -") == []
    assert engine.complete("quit ") == []
    assert engine.complete("scope -max_depth ") == []
    assert engine.complete("op -select micros") == []  # already complete


def test_every_offered_value_parses(engine):
    for cmd in ("scope", "op", "advise", "set"):
        for spec in names_for(cmd):
            if spec.kind == "output":
                continue
            for c in engine.complete("%s %s " % (cmd, spec.repl_name))[:20]:
                request = parse_words([cmd, spec.repl_name, c.text], DEFAULTS)
                assert request.command.name == cmd


def test_names_are_escaped_as_regexes():
    index = NameIndex({"a(b)/c+d": "Add", "a(b)/e": "Mul"}, {})
    engine = CompletionEngine(lambda: index)
    assert texts(engine, "scope -show_name_regexes a") == [r"a\(b\)"]
    found = texts(engine, r"scope -show_name_regexes a\(b\)/c")
    assert found == [r"a\(b\)/c\+d"]
    assert re2.fullmatch(found[0], "a(b)/c+d")
    assert escape_name("x.y") == "x.y"


def test_the_index_is_built_once(model):
    builds = []

    def build():
        builds.append(1)
        return NameIndex.from_model(model)

    engine = CompletionEngine(build)
    assert builds == []
    for line in ("scope -show_name_regexes ", "op -hide_name_regexes M", "scope -select "):
        engine.complete(line)
    assert builds == [1]


def test_completion_stays_instant_on_a_large_profile():
    node_ops = {"block%03d/unit%03d/op%02d" % (b, u, o): "Op%d" % o
                for b in range(100) for u in range(100) for o in range(20)}
    index = NameIndex(node_ops, {"Op%d" % o: 1 for o in range(20)})
    engine = CompletionEngine(lambda: index)
    lines = ["scope -show_name_regexes ", "scope -show_name_regexes block05",
             "scope -show_name_regexes block050/unit0", "op -show_name_regexes O"]
    start = time.perf_counter()
    for line in lines * 25:
        assert engine.complete(line)
    per_call = (time.perf_counter() - start) / (len(lines) * 25)
    assert per_call < 0.02, "%.1f ms per completion" % (per_call * 1000)


def test_prompt_toolkit_adapter(engine):
    completer = ShellCompleter(engine)
    (c,) = completer.get_completions(Document("op -order_by mi"), CompleteEvent())
    assert (c.text, c.start_position, c.display_meta_text) == (
        "micros", -2, metrics.order_help("micros"))


def test_adapter_swallows_a_completion_bug():
    def broken():
        raise RuntimeError("index failed")

    completer = ShellCompleter(CompletionEngine(broken))
    assert list(completer.get_completions(Document("scope -show_name_regexes a"),
                                          CompleteEvent())) == []


def test_capture_flags_come_from_the_capture_table(engine):
    from tfprof_shell.capture.flags import SHELL, flags_for
    assert texts(engine, "capture live localhost:6009 -") == [f.name for f in flags_for(SHELL)]
    assert texts(engine, "capture live localhost:6009 --dur") == ["--duration"]
    assert texts(engine, "capture live") == []


def test_option_descriptions_are_those_of_the_command(engine):
    (steps,) = engine.complete("steps -ste")
    (scope,) = engine.complete("scope -ste")
    assert steps.meta == OPTION_SPECS["step"].help_for("steps") != OPTION_SPECS["step"].help
    assert scope.meta == OPTION_SPECS["step"].help


def test_device_values_are_the_current_profiles_devices():
    from tfprof_shell.session import Session
    from tfprof_shell.shell.completer import engine_for
    gpu = Path(__file__).resolve().parent.parent / "sample_profiles" / "torch_cnn"
    session = Session(load_model(Inputs(profile_path=str(gpu))), name="cnn")
    found = engine_for(session).complete("steps -device ")
    assert [(c.text, c.meta) for c in found] == [("gpu:0", "device with events"),
                                                 ("all", "every device")]
    assert texts(engine_for(session), "kernels -device g") == ["gpu:0"]
    session.add("cpu", load_model(Inputs(profile_path=str(PROFILE))))
    session.execute("use cpu")
    assert texts(engine_for(session), "steps -device ") == ["all"]  # CPU only


def test_minus_one_step_is_described_as_the_command_uses_it(engine):
    (steps,) = [c for c in engine.complete("steps -step ") if c.text == "-1"]
    (scope,) = [c for c in engine.complete("scope -step ") if c.text == "-1"]
    assert steps.meta == "every step" and "average" in scope.meta


def test_kernels_name_regexes_complete_kernel_names():
    from tfprof_shell.session import Session
    from tfprof_shell.shell.completer import engine_for
    gpu = Path(__file__).resolve().parent.parent / "sample_profiles" / "torch_cnn"
    engine = engine_for(Session(load_model(Inputs(profile_path=str(gpu)))))
    found = engine.complete("kernels -show_name_regexes Mem")
    assert [(c.text, c.display) for c in found] == [
        (r"Memcpy\x20DtoD\x20\(Device\x20->\x20Device\)", "Memcpy DtoD (Device -> Device)"),
        (r"Memset\x20\(Device\)", "Memset (Device)")]
    (memset,) = engine.complete(r"kernels -hide_name_regexes Memset\x20")
    assert re2.fullmatch(memset.text, "Memset (Device)")


def test_names_with_spaces_and_commas_complete_to_one_word_the_shell_reads():
    """A PyTorch scope name has a space; a kernel name has commas: the completed regex
    must stay one word and one list item, and match the name."""
    from tfprof_shell.session import Session
    from tfprof_shell.shell.completer import engine_for
    gpu = Path(__file__).resolve().parent.parent / "sample_profiles" / "torch_cnn"
    session = Session(load_model(Inputs(profile_path=str(gpu))))
    engine = engine_for(session)
    line = "scope -show_name_regexes autograd::engine::evaluate_function:"
    (addmm,) = [c for c in engine.complete(line) if c.display.endswith("AddmmBackward0")]
    assert " " not in addmm.text
    typed = line[:len(line) - addmm.length] + addmm.text
    assert "autograd::engine::evaluate_function: AddmmBackward0 (" in session.execute(typed).text
    kernel = next(c for c in engine.complete("kernels -show_name_regexes void")
                  if "," in c.display)
    assert "," not in kernel.text and " " not in kernel.text
    assert re2.fullmatch(kernel.text, kernel.display)
    rows = session.execute("kernels -show_name_regexes " + kernel.text).text
    assert rows.startswith("1 kernel name on all devices, all steps;")
