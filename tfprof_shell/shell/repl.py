"""The shell loops: a prompt_toolkit prompt in a terminal, plain line reading from a pipe.

Both loops hand each line to ``Session.execute`` and print the reply: text
on stdout, notes on stderr. A user error prints one ``tfprof: ...`` line and
the session is unchanged; any other exception is a bug, reported on one
line, and the shell goes on. A truly empty line prints the current options
(as the original did); a line of only whitespace is ignored (the original
crashed on it).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Protocol, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.buffer import Buffer, CompletionState
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output, create_output
from prompt_toolkit.styles import Style

from ..progress_bar import terminal_progress
from ..version import __version__
from ..errors import EXIT_INTERNAL, UserError, internal_error_line, print_debug_traceback
from . import pager as pagers
from .completer import ShellCompleter, engine_for
from .paths import history_path
from .toolbar import toolbar_text

if TYPE_CHECKING:
    from ..session import Session

PROMPT = "tfprof> "
STYLE = Style.from_dict({
    "prompt": "bold",
    "bottom-toolbar": "noreverse bg:#303030 #c0c0c0",
})


class Writer(Protocol):
    """Where text goes: a text stream, or the shell's capture buffer."""

    def write(self, text: str) -> int: ...

    def flush(self) -> None: ...


def run_shell(session: Session, history_file: Optional[str] = None, stdin: Optional[TextIO] = None,
              stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None, *,
              pager: Optional[bool] = None, input: Optional[Input] = None,
              output: Optional[Output] = None) -> int:
    """Run the shell on ``session`` until end of input, quit or Ctrl-D; returns the exit status.

    With a terminal on stdin (or a prompt_toolkit ``input``, as tests give)
    the interactive prompt runs; otherwise lines are read from ``stdin``.
    ``pager`` forces paging of long outputs on or off (default: on in a terminal).
    """
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    if session.progress is None:
        session.progress = _progress_to(stderr)
    if session.load_progress is None:
        session.load_progress = terminal_progress(stderr)
    if input is None and not _isatty(stdin):
        return run_pipe(session, stdin, stdout, stderr)
    repl = Repl(session, history_file, stdout, stderr, pager=pager, input=input, output=output)
    return repl.run()


def _progress_to(stream: Writer) -> Callable[[str], None]:
    """A progress callback writing ``tfprof: TEXT`` lines to ``stream``."""
    def say(text: str) -> None:
        stream.write("tfprof: %s\n" % text)
        stream.flush()
    return say


def run_pipe(session: Session, stdin: TextIO, stdout: Writer, stderr: Writer) -> int:
    """Run one command per line of ``stdin``, printing only results.

    A failing line prints its one-line error on stderr and the next line
    runs, as at the prompt; the end of input exits 0, like leaving the shell.
    """
    for raw in _lines(stdin):
        line = raw.rstrip("\n")
        if line.endswith("\r"):
            line = line[:-1]
        if line and not line.strip():
            continue
        _code, quit_ = run_line(session, line, stdout, stderr)
        if quit_:
            break
    return 0


def run_line(session: Session, line: str, stdout: Writer, stderr: Writer,
             color: bool = False) -> tuple[int, bool]:
    """Execute one line and print its reply; returns (status, quit requested)."""
    try:
        reply = session.execute(line)
    except UserError as exc:
        _error(stderr, "tfprof: %s" % exc.message, color)
        return exc.exit_code, False
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # a bug: report it, keep the session
        _internal_error(stderr, exc, color)
        return EXIT_INTERNAL, False
    for note in reply.notes:
        stderr.write(note + "\n")
    stderr.flush()
    stdout.write(reply.text)
    stdout.flush()
    return 0, reply.quit


class Repl:
    """The interactive loop: a prompt with completion, history and a toolbar."""

    def __init__(self, session: Session, history_file: Optional[str], stdout: TextIO,
                 stderr: TextIO,
                 pager: Optional[bool] = None, input: Optional[Input] = None,
                 output: Optional[Output] = None) -> None:
        self.session = session
        self.stdout = stdout
        self.stderr = stderr
        self.terminal = input is None and _isatty(stdout)
        self.color = _isatty(stderr) and "NO_COLOR" not in os.environ
        self.pager_on = self.terminal if pager is None else pager
        self.engine = engine_for(session)
        self.history = _open_history(history_path(history_file), stderr)
        if output is None and input is None and not _isatty(sys.stdout) and _isatty(sys.stderr):
            output = create_output(stdout=sys.stderr)  # results redirected: prompt on stderr
        self.prompt: PromptSession[str] = PromptSession(
            self._message, history=self.history,
            completer=ShellCompleter(self.engine), complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(), bottom_toolbar=self._toolbar,
            key_bindings=self._bindings(), style=STYLE, enable_suspend=True,
            input=input, output=output)
        self._long_hint_shown = False
        #: The web UI serving this session once `ui` was typed (see _serve_ui).
        self.ui_server: Any = None
        self.ui_lock: Any = contextlib.nullcontext()
        session.serve_ui = self._serve_ui

    def _serve_ui(self) -> str:
        """`ui`: start the web UI on this session once; its URL."""
        if self.ui_server is None:
            from ..ui import require_server
            require_server()
            from ..ui.runner import LineRunner
            from ..ui.server import UiServer
            runner = LineRunner(self.session)
            self.ui_server = UiServer(runner, log=self.stderr).start()
            self.ui_lock = runner.lock  # the page and the prompt take turns on the session
        return self.ui_server.url

    def _message(self) -> list[tuple[str, str]]:
        """``tfprof> ``, or ``tfprof[NAME]> `` while several profiles are loaded."""
        label = self.session.label
        return [("class:prompt", "tfprof[%s]> " % label if label else PROMPT)]

    def run(self) -> int:
        """Prompt, run and print until Ctrl-D, quit or exit; returns 0."""
        threading.Thread(target=self._warm_index, daemon=True).start()
        self.stderr.write("tfprof-shell %s: type help for commands, Tab to complete, "
                          "Ctrl-D to leave.\n" % __version__)
        self.stderr.flush()
        while True:
            try:
                line = self.prompt.prompt()
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            if line and not line.strip():
                continue
            try:
                if self.one_line(line):
                    return 0
            except KeyboardInterrupt:
                self.stdout.flush()
                _error(self.stderr, "\ninterrupted" if self.terminal else "interrupted",
                       self.color)

    def one_line(self, line: str) -> bool:
        """Run one line; True if the shell should leave."""
        sink: Writer = _Capture() if self.terminal else self.stdout
        with self.ui_lock:
            _code, quit_ = run_line(self.session, line, sink, self.stderr, self.color)
        if isinstance(sink, _Capture):
            self.show(sink.text())
        return quit_

    def show(self, text: str) -> None:
        """Print a result, through the pager when it is taller than the terminal."""
        if not text:
            return
        tall = pagers.is_tall(text)
        if tall and self.pager_on:
            command = pagers.pager_command()
            if command and pagers.page(text, command):
                return
        self.stdout.write(text)
        self.stdout.flush()
        if tall and not self._long_hint_shown:
            self._long_hint_shown = True
            self.stderr.write("(long output: F3 toggles the pager; -output file:outfile=PATH "
                              "writes it to a file)\n")
            self.stderr.flush()

    def _toolbar(self) -> str:
        try:
            url = self.ui_server.url if self.ui_server is not None else ""
            return toolbar_text(self.session, self.pager_on, url)
        except Exception:  # the toolbar is a nicety; never let it break the prompt
            return ""

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()

        @kb.add("f3")
        def _toggle_pager(event: KeyPressEvent) -> None:
            self.pager_on = not self.pager_on
            event.app.invalidate()

        @kb.add("tab")
        def _complete(event: KeyPressEvent) -> None:
            complete_now(event.current_buffer)

        return kb

    def _warm_index(self) -> None:
        try:
            self.engine.index  # built now so the first Tab is instant
        except Exception:
            pass  # completion will retry and fail quietly


def complete_now(buffer: Buffer) -> None:
    """Tab: select the next completion, computing them now if none are listed yet.

    prompt_toolkit's own Tab asks the background completer, which drops the
    request while the completion started by typing is pending: a Tab typed
    within milliseconds of the last letter then showed the menu without
    completing. Our completer is fast enough to run in the key handler.
    """
    state = buffer.complete_state
    if state is None or not state.completions:
        completer = buffer.completer
        if completer is None:
            return
        found = list(completer.get_completions(buffer.document,
                                               CompleteEvent(completion_requested=True)))
        if not found:
            return
        buffer.complete_state = CompletionState(buffer.document, found)
        buffer.on_completions_changed.fire()
    buffer.complete_next()


class SafeFileHistory(FileHistory):
    """A FileHistory that skips blank lines and never lets a disk error escape."""

    def __init__(self, filename: str, stderr: TextIO) -> None:
        super().__init__(filename)
        self._stderr = stderr
        self._broken = False

    def load_history_strings(self) -> list[str]:
        try:
            return list(super().load_history_strings())
        except OSError:
            return []

    def store_string(self, string: str) -> None:
        if not string.strip() or self._broken:
            return
        try:
            super().store_string(string)
        except OSError as exc:
            self._broken = True
            self._stderr.write("tfprof: history not saved: %s\n" % (exc.strerror or exc))


def _open_history(path: str, stderr: TextIO) -> History:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        stderr.write("tfprof: history not saved: %s: %s\n" % (directory, exc.strerror or exc))
        return InMemoryHistory()
    return SafeFileHistory(path, stderr)


class _Capture:
    """Collects a reply's stdout text so the shell can decide how to show it."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def write(self, text: str) -> int:
        self._parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def text(self) -> str:
        return "".join(self._parts)


def _lines(stdin: TextIO) -> Iterator[str]:
    """Lines of ``stdin``; undecodable bytes become U+FFFD instead of an error."""
    binary = getattr(stdin, "buffer", None)
    if binary is None:
        yield from iter(stdin.readline, "")
        return
    for raw in iter(binary.readline, b""):
        yield raw.decode("utf-8", "replace")


def _error(stream: Writer, message: str, color: bool) -> None:
    if color:
        message = "\x1b[31m%s\x1b[0m" % message
    stream.write(message + "\n")
    stream.flush()


def _internal_error(stream: Writer, exc: BaseException, color: bool) -> None:
    print_debug_traceback(exc, stream)  # type: ignore[arg-type]
    _error(stream, internal_error_line(exc), color)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False
