"""The shell driven in-process: prompt_toolkit pipe input for the prompt, text streams for pipes."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tfprof_shell.cli import main as cli_main
from tfprof_shell.load import Inputs, load_model
from tfprof_shell.options import DEFAULTS, format_dump
from tfprof_shell.session import Session
from tfprof_shell.views.cache import ProfileViews
from tfprof_shell.shell import run_pipe, run_shell
from tfprof_shell.shell.repl import Repl

PROFILE = Path(__file__).resolve().parent.parent / "sample_profiles" / "tiny_mlp" / "profile"
ENTER = "\r"
CTRL_C = "\x03"
CTRL_D = "\x04"


@pytest.fixture(scope="module")
def model():
    return load_model(Inputs(profile_path=str(PROFILE)))


@pytest.fixture
def session(model):
    return Session(model)


def drive(session, keys: str, history: Path) -> tuple[int, str, str]:
    """Type ``keys`` at the prompt (then end of input); (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()
        code = run_shell(session, history_file=str(history), stdout=out, stderr=err,
                         input=inp, output=DummyOutput())
    return code, out.getvalue(), err.getvalue()


def one_shot(*words: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli_main(["--profile_path=%s" % PROFILE, *words], stdout=out, stderr=err) == 0
    return out.getvalue()


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("tfprof:")]


def test_view_output_is_the_one_shot_text(session, tmp_path):
    code, out, _ = drive(session, "op -select micros,bytes -order_by micros" + ENTER, tmp_path / "h")
    assert code == 0
    assert out == one_shot("op", "-select", "micros,bytes", "-order_by", "micros")


def test_set_persists_and_command_options_do_not(session, tmp_path):
    keys = ("set -max_depth 2" + ENTER + "scope -max_depth 1 -select bytes" + ENTER
            + "scope" + ENTER + ENTER)
    code, out, err = drive(session, keys, tmp_path / "h")
    assert code == 0 and not error_lines(err)
    expected = (one_shot("scope", "-max_depth", "1", "-select", "bytes")
                + one_shot("scope", "-max_depth", "2")
                + format_dump(DEFAULTS.replace(max_depth=2)))
    assert out == expected
    assert session.options == DEFAULTS.replace(max_depth=2)


@pytest.mark.parametrize("line, fragment", [
    ("scop", "did you mean scope"),
    ("op -slect micros", "did you mean -select"),
    ("scope -order_by time", "valid: name, bytes"),
    ("set -max_depth x", "-max_depth takes an integer"),
    ("set -select micros,bogus", "unknown value 'bogus'"),
    ("scope -show_name_regexes [", "invalid regular expression"),
    ("set -output file", "needs outfile"),
    ("scope -step 99", "available steps: 0 1 2"),
    ("help nothing", "no help for 'nothing'"),
], ids=["command", "option", "order_by", "int", "select", "regex", "output", "step", "help"])
def test_an_error_is_one_line_and_changes_nothing(session, tmp_path, line, fragment):
    keys = "set -max_depth 3" + ENTER + line + ENTER + ENTER
    code, out, err = drive(session, keys, tmp_path / "h")
    assert code == 0
    errors = error_lines(err)
    assert len(errors) == 1 and fragment in errors[0]
    assert "Traceback" not in err
    assert session.options == DEFAULTS.replace(max_depth=3)
    assert out == format_dump(DEFAULTS.replace(max_depth=3))


def test_empty_line_prints_the_option_dump(session, tmp_path):
    code, out, err = drive(session, ENTER, tmp_path / "h")
    assert out == format_dump(DEFAULTS)
    assert out.splitlines()[0] == "-max_depth                  10"


def test_line_of_spaces_is_ignored(session, tmp_path):
    code, out, err = drive(session, "     " + ENTER + "  " + ENTER, tmp_path / "h")
    assert (code, out, error_lines(err)) == (0, "", [])


@pytest.mark.parametrize("word", ["quit", "exit"])
def test_quit_and_exit_leave(session, tmp_path, word):
    code, out, err = drive(session, word + ENTER + "scope" + ENTER, tmp_path / "h")
    assert (code, out, error_lines(err)) == (0, "", [])


def test_ctrl_d_leaves(session, tmp_path):
    code, out, _ = drive(session, CTRL_D + "scope" + ENTER, tmp_path / "h")
    assert (code, out) == (0, "")


def test_ctrl_c_abandons_the_line(session, tmp_path):
    keys = "set -max_depth 7" + CTRL_C + "op -max_depth 1" + ENTER
    code, out, err = drive(session, keys, tmp_path / "h")
    assert code == 0 and not error_lines(err)
    assert out == one_shot("op", "-max_depth", "1")
    assert session.options == DEFAULTS


def test_ctrl_c_during_a_command_returns_to_the_prompt(session, tmp_path, monkeypatch):
    calls = []
    real = ProfileViews.show

    def interrupted_once(self, view, opts):
        calls.append(view)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(self, view, opts)

    monkeypatch.setattr(ProfileViews, "show", interrupted_once)
    code, out, err = drive(session, "scope" + ENTER + "op" + ENTER, tmp_path / "h")
    assert code == 0
    assert "interrupted" in err
    assert out == one_shot("op")


def test_a_bug_prints_one_line_and_the_shell_goes_on(session, tmp_path, monkeypatch):
    def broken(self, view, opts):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(ProfileViews, "show", broken)
    code, out, err = drive(session, "scope" + ENTER + "help scope" + ENTER, tmp_path / "h")
    assert code == 0
    assert error_lines(err) == ["tfprof: internal error: ZeroDivisionError: boom (please "
                                "report it; TFPROF_DEBUG=1 shows the traceback)"]
    assert out.startswith("scope: ")


def test_history_is_saved_without_blank_lines(session, tmp_path):
    history = tmp_path / "sub" / "history"
    drive(session, "op" + ENTER + "   " + ENTER + ENTER + "bogus" + ENTER, history)
    entries = [line[1:] for line in history.read_text().splitlines() if line.startswith("+")]
    assert entries == ["op", "bogus"]


def test_history_defaults_to_the_xdg_data_dir(session, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("op -max_depth 0" + ENTER)
        inp.close()
        run_shell(session, stdout=out, stderr=err, input=inp, output=DummyOutput())
    saved = tmp_path / "data" / "tfprof-shell" / "history"
    assert "+op -max_depth 0" in saved.read_text()
    assert sorted(os.listdir(tmp_path)) == ["data"]


def test_unwritable_history_is_reported_once_and_the_shell_goes_on(session, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = drive(session, "op -max_depth 0" + ENTER + ENTER, blocker / "history")
    assert code == 0
    assert err.count("history not saved") == 1
    assert out.endswith(format_dump(DEFAULTS))


def test_up_arrow_recalls_the_previous_line(session, tmp_path):
    # The prompt loads its history in the background: type the second line
    # only once the prompt had time to do so, as a person would.
    up = "\x1b[A"
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        def typist():
            inp.send_text("op -max_depth 1" + ENTER)
            deadline = time.monotonic() + 20  # a loaded machine answers late
            while not out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            inp.send_text(up + ENTER)
            time.sleep(0.3)
            inp.close()

        worker = threading.Thread(target=typist)
        worker.start()
        run_shell(session, history_file=str(tmp_path / "h"), stdout=out, stderr=err,
                  input=inp, output=DummyOutput())
        worker.join()
    assert out.getvalue() == one_shot("op", "-max_depth", "1") * 2


def test_f3_toggles_the_pager(session, tmp_path):
    f3 = "\x1bOR"
    with create_pipe_input() as inp:
        repl = Repl(session, str(tmp_path / "h"), io.StringIO(), io.StringIO(), pager=False,
                    input=inp, output=DummyOutput())
        inp.send_text(f3 + CTRL_D)
        assert repl.run() == 0
    assert repl.pager_on is True


# -- standard input is not a terminal -------------------------------------------

def pipe(session, text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_shell(session, stdin=io.StringIO(text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_pipe_prints_only_results(session):
    code, out, err = pipe(session, "op -select micros\nscope -max_depth 2\n")
    assert code == 0 and err == ""
    assert out == one_shot("op", "-select", "micros") + one_shot("scope", "-max_depth", "2")
    assert "tfprof>" not in out and "\x1b" not in out


def test_pipe_goes_on_after_an_error_and_exits_0_at_end_of_input(session):
    code, out, err = pipe(session, "scope -max_depth x\nop -max_depth 0\n")
    assert code == 0
    assert error_lines(err) == ["tfprof: -max_depth takes an integer, got 'x'"]
    assert out == one_shot("op", "-max_depth", "0")


def test_pipe_blank_lines_and_carriage_returns(session):
    code, out, err = pipe(session, "set -max_depth 4\r\n   \n\n")
    assert (code, err) == (0, "")
    assert out == format_dump(DEFAULTS.replace(max_depth=4))


def test_pipe_stops_at_quit(session):
    code, out, _ = pipe(session, "quit\nscope\n")
    assert (code, out) == (0, "")


def test_pipe_survives_undecodable_bytes(session):
    stdin = io.TextIOWrapper(io.BytesIO(b"op \xff\xfe\nop -max_depth 0\n"))
    out, err = io.StringIO(), io.StringIO()
    code = run_pipe(session, stdin, out, err)
    assert code == 0 and len(error_lines(err.getvalue())) == 1
    assert out.getvalue() == one_shot("op", "-max_depth", "0")


def test_cli_without_a_command_reads_lines_from_stdin():
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["--profile_path=%s" % PROFILE], stdin=io.StringIO("op -max_depth 1\n"),
                    stdout=out, stderr=err)
    assert (code, err.getvalue()) == (0, "")
    assert out.getvalue() == one_shot("op", "-max_depth", "1")


# -- history location, toolbar, pager ------------------------------------------

def test_history_path_follows_xdg_and_the_override(tmp_path):
    from tfprof_shell.shell.paths import history_path
    env = {"XDG_DATA_HOME": str(tmp_path)}
    assert history_path(env=env) == str(tmp_path / "tfprof-shell" / "history")
    home = os.path.expanduser("~")
    relative = history_path(env={"XDG_DATA_HOME": "rel"})
    assert relative == os.path.join(home, ".local", "share", "tfprof-shell", "history")
    assert history_path("~/h", env=env) == os.path.join(home, "h")


def test_toolbar_shows_the_profile_and_what_set_changed(session):
    from tfprof_shell.shell.toolbar import toolbar_text
    assert "tiny_mlp/profile: %d nodes, steps 0,1,2" % len(session.model.nodes) in toolbar_text(
        session, True)
    assert "set: defaults" in toolbar_text(session, True)
    session.execute("set -max_depth 3 -select bytes,micros")
    text = toolbar_text(session, False)
    assert "set: -max_depth 3 -select bytes,micros" in text and "pager off" in text


def test_pager_choice_from_the_environment(monkeypatch):
    from tfprof_shell.shell import pager
    assert pager.pager_command({"TFPROF_PAGER": "more", "PAGER": "less"}) == "more"
    assert pager.pager_command({"TFPROF_PAGER": "", "PAGER": "less"}) is None
    assert pager.pager_command({"PAGER": "cat"}) is None
    monkeypatch.setattr(pager.shutil, "which", lambda name: None)
    assert pager.pager_command({}) is None


def test_tall_counts_wrapped_lines():
    from tfprof_shell.shell.pager import is_tall
    assert not is_tall("a\n" * 20, (80, 24))
    assert is_tall("a\n" * 30, (80, 24))
    assert is_tall(("x" * 200 + "\n") * 10, (80, 24))  # 30 rows once wrapped


def test_page_feeds_the_text_to_the_pager(tmp_path):
    from tfprof_shell.shell.pager import page
    target = tmp_path / "paged"
    assert page("hello\n", "sh -c 'cat > %s'" % target)
    assert target.read_text() == "hello\n"
    assert not page("x", str(tmp_path / "no-such-pager"))


def test_tall_output_in_a_terminal_goes_to_the_pager(session, tmp_path, monkeypatch):
    from tfprof_shell.shell import repl as repl_module
    paged = []
    monkeypatch.setattr(repl_module.pagers, "is_tall", lambda text: True)
    monkeypatch.setattr(repl_module.pagers, "pager_command", lambda: "less")
    monkeypatch.setattr(repl_module.pagers, "page", lambda text, cmd: paged.append(text) or True)
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        repl = Repl(session, str(tmp_path / "h"), out, err, input=inp, output=DummyOutput())
        repl.terminal = repl.pager_on = True  # as when stdout is a terminal
        repl.one_line("op -max_depth 1")
        assert paged == [one_shot("op", "-max_depth", "1")] and out.getvalue() == ""
        repl.pager_on = False
        repl.one_line("op -max_depth 1")
    assert out.getvalue() == paged[0] and "F3 toggles the pager" in err.getvalue()


def test_a_tab_right_after_typing_completes_like_a_later_tab(session, tmp_path):
    # Typed and Tab in one burst (pasting, fast typists): the Tab must not be lost
    # to the completion that typing started.
    code, out, err = drive(session, "scope -max_de\t 1" + ENTER, tmp_path / "h")
    assert code == 0 and error_lines(err) == []
    assert out == one_shot("scope", "-max_depth", "1")
    # Several candidates: the first is chosen, as a later Tab chooses it.
    code, out, err = drive(session, "op -order_by accel\t" + ENTER, tmp_path / "h")
    assert error_lines(err) == []
    assert out == one_shot("op", "-order_by", "accelerator_micros")
