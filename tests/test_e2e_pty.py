"""The installed `tfprof` in a real pseudo-terminal: Tab, mistakes, set, Ctrl-C, Ctrl-D,
the progress bar of a long load (and none in a pipe)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

PROFILE = Path(__file__).resolve().parent.parent / "sample_profiles" / "tiny_mlp" / "profile"
TFPROF = shutil.which("tfprof")
pytestmark = pytest.mark.skipif(TFPROF is None, reason="the tfprof console script is not installed")

#: The prompt is drawn with style codes between its characters.
PROMPT = r"tfprof>"
#: Pause before Tab/Enter: a person types slower than the completer answers.
BEAT = 0.4


@pytest.fixture
def shell(tmp_path):
    env = dict(os.environ, NO_COLOR="1", TFPROF_PAGER="", TERM="xterm",
               XDG_DATA_HOME=str(tmp_path / "data"))
    child = pexpect.spawn(TFPROF, ["--profile_path=%s" % PROFILE,
                                   "--history_file=%s" % (tmp_path / "history")],
                          env=env, cwd=str(tmp_path), dimensions=(50, 200),
                          encoding="utf-8", timeout=20)
    child.expect(PROMPT)
    yield child
    if child.isalive():
        child.terminate(force=True)


def type_keys(child, text: str) -> None:
    child.send(text)
    time.sleep(BEAT)


def tab(child) -> None:
    child.send("\t")
    time.sleep(BEAT)


def enter(child) -> None:
    child.send("\r")


def test_a_new_users_session(shell, tmp_path):
    # Build `op -select micros,bytes -order_by micros` with Tab.
    type_keys(shell, "o")
    tab(shell)
    type_keys(shell, " -se")
    tab(shell)
    type_keys(shell, " mic")
    tab(shell)
    type_keys(shell, ",by")
    tab(shell)
    type_keys(shell, " -ord")
    tab(shell)
    type_keys(shell, " micr")
    tab(shell)
    enter(shell)
    shell.expect_exact("node name | requested bytes | total execution time")
    shell.expect(r"\n(\S+) +\S+ \(100\.00%")
    assert shell.match.group(1) == "MatMul"  # ordered by micros, not by name
    shell.expect(PROMPT)

    # Three typing mistakes: each one line, and the prompt comes back.
    for line, message in [("scop", "did you mean scope?"),
                          ("op -slect micros", "did you mean -select?"),
                          ("scope -order_by tim", "valid: name, bytes")]:
        type_keys(shell, line)
        enter(shell)
        shell.expect_exact(message)
        shell.expect(PROMPT)

    type_keys(shell, "set -max_depth 3")
    enter(shell)
    shell.expect(PROMPT)
    enter(shell)  # an empty line shows the options
    shell.expect(r"-max_depth +3\s")
    shell.expect_exact("-output                     stdout:")
    shell.expect(PROMPT)

    type_keys(shell, "scope")
    enter(shell)
    shell.expect_exact("_TFProfRoot")
    shell.expect_exact("    layer1/weights (")  # depth 3 is shown...
    shell.expect(PROMPT)
    assert "layer1/weights/Read" not in shell.before  # ...depth 4 is not

    shell.sendcontrol("d")
    shell.expect(pexpect.EOF)
    shell.close()
    assert shell.exitstatus == 0
    history = (tmp_path / "history").read_text()
    assert "+op -select micros,bytes -order_by micros\n" in history
    assert "+scop\n" in history
    assert not (tmp_path / ".tfprof_history.txt").exists()


def test_ctrl_c_abandons_the_line_and_ctrl_d_leaves(shell):
    type_keys(shell, "scope -max_depth 9 -bogus")
    shell.sendcontrol("c")
    shell.expect(PROMPT)
    type_keys(shell, "op -max_depth 0")
    enter(shell)
    shell.expect_exact("Profile:")
    shell.expect(PROMPT)
    assert "bogus" not in shell.before
    shell.sendcontrol("d")
    shell.expect(pexpect.EOF)
    shell.close()
    assert shell.exitstatus == 0


def test_tab_lists_node_names_from_the_profile(shell):
    type_keys(shell, "scope -show_name_regexes layer1/")
    tab(shell)
    shell.expect_exact("everything below layer1")
    shell.expect(r"weights[^\n]*VarHandleOp, scope of \d+ nodes")
    shell.sendcontrol("c")
    shell.expect(PROMPT)
    type_keys(shell, "quit")
    enter(shell)
    shell.expect(pexpect.EOF)
    shell.close()
    assert shell.exitstatus == 0


# -- progress of long loads ------------------------------------------------------

#: The sample PyTorch trace, copied as the ranks of a large job.
TORCH_TRACE = PROFILE.parent.parent / "torch_cnn" / "worker0.1795426547943862326.pt.trace.json.gz"
#: Enough ranks that loading them one by one takes well over a second.
RANKS = 96


@pytest.fixture(scope="module")
def many_ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    data = TORCH_TRACE.read_bytes()
    for rank in range(RANKS):
        (folder / ("rank%d.1795426547943862326.pt.trace.json.gz" % rank)).write_bytes(data)
    return folder


def _load_ranks(folder, stderr_to_terminal: bool):
    """`tfprof` loading the ranks one by one in a terminal; its stderr in the terminal or
    piped to a file (then the terminal shows stdout only); returns (terminal text,
    piped stderr, seconds the whole process took)."""
    env = dict(os.environ, NO_COLOR="1", TERM="xterm")
    env.pop("TFPROF_PROGRESS", None)
    command = "%s --profile_path=%s --jobs 1 profiles" % (TFPROF, folder)
    err_file = folder.parent / ("stderr_%s.txt" % folder.name)
    if not stderr_to_terminal:
        command += " 2>%s" % err_file
    start = time.monotonic()
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, dimensions=(24, 200),
                          encoding="utf-8", timeout=120)
    seen = child.read()
    took = time.monotonic() - start
    child.close()
    assert child.exitstatus == 0, seen
    return seen, err_file.read_text() if not stderr_to_terminal else "", took


def test_a_long_load_shows_a_progress_bar_on_the_terminal(many_ranks):
    seen, _, took = _load_ranks(many_ranks, stderr_to_terminal=True)
    assert took > 1.0
    bars = re.findall(r"\rtfprof: loading %d profiles \[[#.]{20}\] (\d+)%%  (\d+)/%d profiles"
                      % (RANKS, RANKS), seen)
    assert bars, seen[:2000]
    shown = [int(percent) for percent, _ in bars]
    assert shown == sorted(shown) and shown[0] < 100  # it moved while loading
    # The bar is erased before the notes and the table.
    assert "\r\x1b[K" in seen
    assert seen.index("tfprof: %s: %d PyTorch workers" % (many_ranks, RANKS)) > seen.rindex(
        "\rtfprof: loading")


def test_a_long_load_draws_no_bar_into_a_pipe(many_ranks):
    seen, piped, took = _load_ranks(many_ranks, stderr_to_terminal=False)
    assert took > 1.0
    assert piped.startswith("tfprof: %s: %d PyTorch workers" % (many_ranks, RANKS))
    for output in (seen, piped):
        assert "loading" not in output and "\r" not in output.replace("\r\n", "\n")
        assert "\x1b" not in output
