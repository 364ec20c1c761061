"""help, help COMMAND, help -OPTION: generated from the tables, so they cannot drift."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tfprof_shell import metrics
from tfprof_shell.advisor.catalog import CHECKER_HELP
from tfprof_shell.capture.flags import SHELL, flags_for
from tfprof_shell.cli import main as cli_main
from tfprof_shell.commands import COMMANDS
from tfprof_shell.errors import CommandError
from tfprof_shell.help import choice_descriptions, help_text
from tfprof_shell.options import DEFAULTS, OPTION_SPECS, format_value, names_for
from tfprof_shell.outputs import OUTPUT_KINDS


def test_overview_lists_every_command_and_option_with_its_default():
    text = help_text([])
    for cmd in COMMANDS.values():
        assert "%s  " % cmd.name in text and cmd.summary in text
    lines = text.splitlines()
    for spec in OPTION_SPECS.values():
        (line,) = [l for l in lines if l.strip().startswith(spec.repl_name + " ")]
        default = format_value(spec, getattr(DEFAULTS, spec.name)).rstrip(":") or "(none)"
        assert default in line.split() and spec.help in line


@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_help_shows_exactly_its_options(name):
    cmd = COMMANDS[name]
    text = help_text([name])
    assert text.startswith("%s: %s\n" % (name, cmd.summary))
    accepted = {s.repl_name for s in names_for(name)} if cmd.takes_options else set()
    if cmd.kind == "capture":  # its flags come from the capture flags table
        accepted = {f.short or f.name for f in flags_for(SHELL)}  # "-o, --output DIR"
    shown = {w.rstrip(",") for line in text.splitlines() for w in line.split()[:1]
             if w.startswith("-")}
    assert shown == accepted


def test_graph_help_is_not_scope_help():
    # The original printed scope's help for `help graph`.
    assert help_text(["graph"]) != help_text(["scope"])
    assert COMMANDS["graph"].summary in help_text(["graph"])


@pytest.mark.parametrize("name", list(OPTION_SPECS))
def test_option_help_has_meaning_default_and_values(name):
    spec = OPTION_SPECS[name]
    text = help_text([spec.repl_name])
    assert text.startswith(spec.repl_name)
    assert spec.help in text
    default = format_value(spec, getattr(DEFAULTS, name)).rstrip(":") or "(none)"
    assert "Default: %s\n" % default in text
    assert "Value: " in text
    for value, meaning in choice_descriptions(spec):
        assert any(l.split()[:1] == [value] and meaning in l for l in text.splitlines())


def test_choice_descriptions_come_from_the_tables():
    assert [v for v, _ in choice_descriptions(OPTION_SPECS["order_by"])] == list(metrics.ORDER_KEYS)
    assert dict(choice_descriptions(OPTION_SPECS["select"])) == {
        a.name: a.help for a in metrics.ATTRIBUTES.values()}
    assert [v for v, _ in choice_descriptions(OPTION_SPECS["output"])] == list(OUTPUT_KINDS)
    assert choice_descriptions(OPTION_SPECS["max_depth"]) == []


def test_output_help_shows_each_kinds_keys():
    text = help_text(["-output"])
    assert "file:outfile=PATH" in text
    assert "timeline:outfile=PATH,[merge=BOOL]" in text


def test_option_without_its_dash_and_attributes():
    assert help_text(["order_by"]) == help_text(["-order_by"])
    text = help_text(["micros"])
    assert metrics.ATTRIBUTES["micros"].help in text
    assert metrics.order_help("micros") in text


def test_several_topics():
    assert help_text(["op", "-step"]) == help_text(["op"]) + "\n" + help_text(["-step"])


@pytest.mark.parametrize("topic, hint", [("scoep", "scope"), ("-slect", "-select")])
def test_unknown_topic_suggests_the_closest(topic, hint):
    with pytest.raises(CommandError, match="did you mean %s\\?" % hint):
        help_text([topic])


def test_advise_lists_the_checkers_with_their_help():
    text = help_text(["advise"])
    for name, line in CHECKER_HELP.items():
        assert name in text
    assert choice_descriptions(OPTION_SPECS["checkers"]) == list(CHECKER_HELP.items())


def test_help_does_not_load_the_checkers():
    code = ("import sys; from tfprof_shell.help import help_text; help_text(['advise']); "
            "help_text(['-checkers']); "
            "print(sorted(m for m in sys.modules if m.startswith('tfprof_shell.advisor')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['tfprof_shell.advisor', 'tfprof_shell.advisor.catalog']"


def test_cli_help_without_a_profile():
    out, err = io.StringIO(), io.StringIO()
    assert cli_main(["help", "-select"], stdout=out, stderr=err) == 0
    assert out.getvalue() == help_text(["-select"])
    assert cli_main(["help", "bogus"], stdout=out, stderr=err) == 2
    assert err.getvalue().startswith("tfprof: no help for 'bogus'")


def test_help_and_dash_dash_help_name_every_input_kind_and_the_guide():
    out = io.StringIO()
    assert cli_main(["--help"], stdout=out) == 0
    for text in (help_text([]), out.getvalue()):
        for kind in ("TensorFlow 1 ProfileProto", "GraphDef", "TensorFlow 2", "JAX",
                     "timelines", "PyTorch", "tfprof record"):
            assert kind in text, kind
        assert "docs/index.md" in text and "docs/reference.md" in text


def _meaning(text: str, option: str) -> str:
    (line,) = [l for l in text.splitlines() if l.strip().startswith(option + " ")]
    return line


def test_step_help_says_what_minus_one_does_for_each_command():
    assert "averages over each node's steps" in _meaning(help_text(["scope"]), "-step")
    steps = _meaning(help_text(["steps"]), "-step")
    assert "every step" in steps and "averages over each node" not in steps
    kernels = _meaning(help_text(["kernels"]), "-step")
    assert "every step" in kernels and "averages over each node" not in kernels
    assert "ignored" in _meaning(help_text(["advise"]), "-step")
    assert "kernels whose name" in _meaning(help_text(["kernels"]), "-show_name_regexes")
    assert "timeline" in _meaning(help_text(["steps"]), "-output")
    assert "timeline" not in _meaning(help_text(["kernels"]), "-output")


def test_option_help_lists_the_command_specific_meanings():
    text = help_text(["-step"])
    assert "In steps: %s" % OPTION_SPECS["step"].help_for("steps") in text
    assert "In kernels: %s" % OPTION_SPECS["step"].help_for("kernels") in text
    for spec in OPTION_SPECS.values():  # only commands the option applies to
        assert set(spec.command_help or {}) <= set(spec.commands), spec.name


def test_profile_path_help_does_not_call_pytorch_files_one_per_step():
    out = io.StringIO()
    assert cli_main(["--help"], stdout=out) == 0
    text = " ".join(out.getvalue().split())
    assert "TensorFlow timelines (one per step) or PyTorch traces (steps from their " \
           "ProfilerStep#N)" in text
