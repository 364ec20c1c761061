"""``tfprof top ADDRESS [flags] [COMMAND [-option value ...]]``: a view of a running job, redrawn.

Starts a continuous profiling session on the target, takes a snapshot every
``--interval`` seconds (the trace since the previous one), loads it as a
profile and runs COMMAND (default ``op``) on it through a Session, then
redraws. ``q``, Ctrl-C or SIGTERM stop it, and the target's session is
always stopped on the way out (else the target would stay traced and refuse
every other capture). Without a terminal, each frame is printed below the last.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import tempfile
import time
from typing import Any, Callable, Optional, Sequence, TextIO

from ..errors import UsageError, UserError
from ..proto import profiler_service_pb2 as pb
from . import flags as F
from .client import CaptureError, Client, parse_target
from .grab import options_of, xspace_of

TOP_USAGE = ("usage: tfprof top ADDRESS [options] [--tfprof_option=VALUE ...] "
             "[COMMAND [-option value ...]]\n")
TOP_HELP = TOP_USAGE + """
A live view of a running job, like top: every --interval seconds the profiler
service of ADDRESS (host:port) hands over what it traced since the last
snapshot, and COMMAND is shown on it (default: op -order_by micros; also
scope, code, ... with the shell's -options, e.g. scope -max_depth 4). q or
Ctrl-C quits and ends the target's profiling session. Needs a server from
TensorFlow 2.21 or jaxlib 0.10 on (continuous profiling).

The service is plaintext and unauthenticated: reach remote jobs through a tunnel
(ssh -L 6009:localhost:6009 HOST, kubectl port-forward pod/NAME 6009).

options:
"""

_CLEAR = "\x1b[H\x1b[2J"
_POLL = 0.05  # seconds between checks for a stop asked by a signal
#: What top shows without a COMMAND: op types, the most time first.
DEFAULT_VIEW = ("op", "-order_by", "micros")


def main(argv: Sequence[str], starting_options: Callable[[list[str]], Any],
         stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout,
         stderr: TextIO = sys.stderr) -> int:
    """Run ``tfprof top ARGV``; the exit status.

    ``starting_options(flags)`` reads tfprof's starting-option flags (``--max_depth=3``).
    """
    from ..commands import parse_words

    try:
        parsed = F.parse(argv, F.TOP)
        if parsed.help:
            stdout.write(TOP_HELP + F.flag_help(F.TOP))
            return 0
        if len(parsed.addresses) != 1:
            raise UsageError("tfprof top watches one address: tfprof top HOST:PORT [COMMAND]")
        options = starting_options(parsed.session_flags)
        words = parsed.words or list(DEFAULT_VIEW)
        parse_words(words, options)  # a mistake in COMMAND is told before connecting
        target = parse_target(parsed.addresses[0])
        return Top(target, parsed.settings, words, options, stdin, stdout, stderr).run()
    except UserError as exc:
        stderr.write("tfprof top: %s\n" % exc.message)
        return exc.exit_code


class Top:
    """One `tfprof top` run: the target's continuous session and the redraw loop."""

    def __init__(self, target: Any, settings: F.Settings, words: list[str], options: Any,
                 stdin: TextIO, stdout: TextIO, stderr: TextIO) -> None:
        self.target, self.settings, self.words, self.options = target, settings, words, options
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.tty = _isatty(stdout)
        self.count = 0
        self.stopping = False

    def run(self) -> int:
        """Start, loop, always stop; 0 when the user quit, 1 on a failure."""
        client = Client(self.target, self.settings)
        request = pb.ProfileRequest(opts=options_of(self.settings, 0), emit_xspace=True,
                                    host_name=self.target.file_stem)
        # Ctrl-C and SIGTERM ask the loop to stop at its next check instead of breaking
        # into a gRPC call or a load: the server's session is then always stopped cleanly.
        # A second one while a call is slow interrupts it at once.
        previous = ({sig: signal.signal(sig, self._stop_asked)
                     for sig in (signal.SIGINT, signal.SIGTERM)} if _main_thread() else {})
        started = failed = False
        try:
            client.call("StartContinuousProfiling", request, pb.ContinuousProfilingResponse,
                        self.settings.timeout)
            started = True
            self._loop(client)
            return 0
        except KeyboardInterrupt:
            return 0
        except CaptureError as exc:
            failed = True
            if exc.code == "UNIMPLEMENTED" and not started:
                exc = CaptureError("%s: this server has no continuous profiling (it needs "
                                   "TensorFlow 2.21 or jaxlib 0.10 on); use tfprof capture"
                                   % self.target.given)
            self.stderr.write("tfprof top: %s\n" % exc.message)
            return exc.exit_code
        finally:
            if started:
                try:
                    client.call("StopContinuousProfiling", pb.StopContinuousProfilingRequest(),
                                pb.StopContinuousProfilingResponse, self.settings.timeout)
                except CaptureError as exc:
                    if not failed:  # after a lost connection, the one line already said it
                        self.stderr.write("tfprof top: could not stop the target's profiling "
                                          "session: %s\n" % exc.message)
            client.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop_asked(self, signum: int, frame: Any) -> None:
        if self.stopping:
            raise KeyboardInterrupt
        self.stopping = True

    def _loop(self, client: Client) -> None:
        last = time.monotonic()
        with _Keys(self.stdin, lambda: self.stopping) as keys:
            while True:
                if keys.quit_within(self.settings.interval) or self.stopping:
                    return
                response = client.call("GetSnapshot", pb.GetSnapshotRequest(), pb.ProfileResponse,
                                       self.settings.timeout + 60)
                now = time.monotonic()
                self.count += 1
                if self.stopping:
                    return
                self._draw(self.frame(xspace_of(response), now - last))
                last = now
                if self.settings.iterations and self.count >= self.settings.iterations:
                    return

    def frame(self, data: bytes, window: float) -> str:
        """The text of one redraw: a header line, then COMMAND's output on the snapshot."""
        head = ("tfprof top %s   snapshot %d at %s   window %.1f s   %d KB   %s\n"
                % (self.target.given, self.count, time.strftime("%H:%M:%S"), window,
                   len(data) // 1024, "q quits" if self.tty else ""))
        return head.rstrip() + "\n" + self._body(data)

    def _body(self, data: bytes) -> str:
        from ..load import Inputs, load_model
        from ..session import Session

        if not data:
            return "(no trace in this window)\n"
        keep = self.settings.keep
        scratch = None if keep else tempfile.mkdtemp(prefix="tfprof-top-")
        run = "%s_%03d" % (time.strftime("%Y_%m_%d_%H_%M_%S"), self.count)
        folder = os.path.join(keep or scratch or "", "plugins", "profile", run)
        path = os.path.join(folder, self.target.file_stem + ".xplane.pb")
        try:
            os.makedirs(folder, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            session = Session(load_model(Inputs(profile_path=path)), self.options,
                              self.target.file_stem)
            reply = session.execute_words(self.words)
            return reply.text + "".join(n + "\n" for n in reply.notes)
        except UserError as exc:
            return "(%s)\n" % exc.message
        except OSError as exc:
            raise CaptureError("--keep %s: %s" % (keep, exc.strerror or exc)) from None
        finally:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)

    def _draw(self, text: str) -> None:
        if self.tty:
            rows = shutil.get_terminal_size().lines
            lines = text.splitlines()
            text = _CLEAR + "\n".join(lines[: max(rows - 1, 3)]) + "\n"
        else:
            text += "\n"
        self.stdout.write(text)
        self.stdout.flush()


class _Keys:
    """Waits for the interval, or for `q` typed on a terminal (read one key at a time)."""

    def __init__(self, stdin: TextIO, stopping: Callable[[], bool]) -> None:
        self.stdin = stdin
        self.stopping = stopping
        self.saved: Optional[list] = None
        self.fd = -1

    def __enter__(self) -> "_Keys":
        if _isatty(self.stdin):
            import termios
            import tty
            self.fd = self.stdin.fileno()
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.saved is not None:
            import termios
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def quit_within(self, seconds: float) -> bool:
        """Wait ``seconds``; True as soon as q (or Q) is typed or a stop is asked."""
        end = time.monotonic() + seconds
        while not self.stopping():
            left = end - time.monotonic()
            if left <= 0:
                return False
            if self.saved is None:
                time.sleep(min(left, _POLL))
                continue
            ready, _, _ = select.select([self.fd], [], [], min(left, _POLL))
            if ready and os.read(self.fd, 1) in (b"q", b"Q"):
                return True
        return True


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()
