"""``tfprof capture`` and ``tfprof top``: the live front doors of the command line.

``tfprof capture ADDRESS[,ADDRESS...] [flags] [--option=value ...] [COMMAND ...]``
captures, writes a log folder, then opens it as ``tfprof --profile_path=FOLDER``
would (the shell, or COMMAND one-shot; ``--no-shell`` stops after writing).
``tfprof top ADDRESS [flags] [COMMAND [-option value ...]]`` is in top.py.
Errors are one line on stderr and a non-zero exit, as everywhere.
"""

from __future__ import annotations

import sys
from typing import Callable, Sequence, TextIO

from ..errors import UsageError, UserError
from . import flags as F
from .grab import capture

CAPTURE_USAGE = ("usage: tfprof capture ADDRESS[,ADDRESS...] [options] [--tfprof_option=VALUE ...] "
                 "[COMMAND [-option value ...]]\n")
CAPTURE_HELP = CAPTURE_USAGE + """
Capture a profile from running jobs' profiler services (TensorFlow 2:
tf.profiler.experimental.server.start(PORT); JAX: jax.profiler.start_server(PORT);
TF Serving: its gRPC port) at the same time, write
DIR/plugins/profile/RUN/HOST_PORT.xplane.pb, and open the shell on it (or run
COMMAND once). ADDRESS is host:port or grpc://host:port. Ctrl-C ends the capture
early and keeps what was traced. Starting options of tfprof (--max_depth=3 ...)
pass on to the shell.

The service is plaintext and unauthenticated: reach remote jobs through a tunnel
(ssh -L 6009:localhost:6009 HOST, kubectl port-forward pod/NAME 6009).

options:
"""


def main(argv: Sequence[str], open_profile: Callable[[list[str]], int],
         stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    """Run ``tfprof capture ARGV``; the exit status.

    ``open_profile(tfprof_argv)`` opens the written folder (the tfprof command line).
    """
    try:
        parsed = F.parse(argv, F.CAPTURE)
        if parsed.help:
            stdout.write(CAPTURE_HELP + F.flag_help(F.CAPTURE))
            return 0
        if not parsed.addresses:
            raise UsageError("no address: tfprof capture HOST:PORT (see tfprof capture --help)")
        done = capture(parsed.addresses, parsed.settings, say=_say_to(stderr))
        for note in done.notes:
            stderr.write("tfprof capture: %s\n" % note)
        for f in done.files:
            stderr.write("tfprof capture: %s: %s (%s) in %.2f s%s\n"
                         % (f.target.given, f.path, _size(f.size), f.seconds,
                            "" if f.attempts == 1 else " (attempt %d)" % f.attempts))
        stderr.flush()
    except UserError as exc:
        stderr.write("tfprof capture: %s\n" % exc.message)
        return exc.exit_code
    except KeyboardInterrupt:
        stderr.write("tfprof capture: interrupted; nothing written\n")
        return 130
    if parsed.settings.no_shell:
        if parsed.words:
            stderr.write("tfprof capture: --no-shell: the command %s was not run\n"
                         % parsed.words[0])
        stdout.write(done.folder + "\n")
        return 0
    # The run itself (not the log folder, whose newest run may be another): one
    # host's file is a profile named after the host; a run of several, one per host.
    opened = done.files[0].path if len(done.files) == 1 else done.run_dir
    return open_profile(["--profile_path", opened] + parsed.session_flags + parsed.words)


def _say_to(stream: TextIO) -> Callable[[str], None]:
    def say(text: str) -> None:
        stream.write("tfprof capture: %s\n" % text)
        stream.flush()
    return say


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return "%.1f %s" % (n / scale, unit)
    return "%d B" % n
