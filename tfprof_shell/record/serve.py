"""``tfprof record --serve PORT -- COMMAND``: profiling on demand, with no code change.

The launcher runs COMMAND with the armed folder first on PYTHONPATH and
``TFPROF_SERVE=PORT``. In each Python process, armed/sitecustomize.py calls
:func:`imported` when TensorFlow or JAX has finished importing; the first
call starts that framework's profiler server on PORT. Nothing is traced and
nothing written until someone captures (``tfprof capture localhost:PORT``,
``tfprof top``, TensorBoard's Capture button). Nothing here raises into the
program: a failure is one line on stderr. Only one process gets the port:
another one that imports a framework later says so in one line.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import os
import sys
from typing import Any, Mapping, Optional, Sequence, TextIO

from ..errors import EXIT_DATA
from .settings import ENV_VAR, armed_pythonpath

SERVE_VAR = "TFPROF_SERVE"
#: The framework modules whose import starts the server, and how each starts it.
FRAMEWORKS = ("tensorflow", "jax")

_server: Any = None


def served_environment(port: int, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` armed to start the profiler server on ``port`` (and not to record)."""
    env = dict(base)
    env["PYTHONPATH"] = armed_pythonpath(base.get("PYTHONPATH", ""))
    env[SERVE_VAR] = str(port)
    env.pop(ENV_VAR, None)
    return env


def parse_port(text: str) -> Optional[int]:
    """The port in ``text`` (1..65535), or None."""
    try:
        port = int(text)
    except ValueError:
        return None
    return port if 0 < port < 65536 else None


def launch(command: Sequence[str], port: int, environ: Mapping[str, str], stderr: TextIO,
           run: Any) -> int:
    """Run ``command`` armed to serve on ``port`` through ``run(command, env)``; its status."""
    if not any(importlib.util.find_spec(name) for name in FRAMEWORKS):
        stderr.write("tfprof record: neither TensorFlow nor JAX is installed in this Python "
                     "(%s); --serve starts their profiler server\n" % sys.executable)
        return EXIT_DATA
    stderr.write("tfprof record: the profiler server starts on port %d when the program "
                 "imports TensorFlow or JAX; capture with: tfprof capture localhost:%d\n"
                 % (port, port))
    stderr.flush()
    return run(list(command), served_environment(port, environ))


def imported(name: str) -> None:
    """``name`` finished importing in this process: start its profiler server once."""
    global _server
    if _server is not None or name not in FRAMEWORKS:
        return
    port = parse_port(os.environ.get(SERVE_VAR, ""))
    if port is None:
        _say("%s=%r is not a port; no profiler server" % (SERVE_VAR,
                                                          os.environ.get(SERVE_VAR)))
        _server = False
        return
    if _port_taken(port):
        _server = False
        _say("process %d: port %d is taken (another process serves it); no profiler server "
             "here" % (os.getpid(), port))
        return
    try:
        if name == "tensorflow":
            profiler = importlib.import_module("tensorflow.profiler.experimental.server")
            profiler.start(port)
            _server = True
        else:
            # requires_backend=False: starting the backend now would freeze the
            # program's jax.config choices made after its import.
            _server = importlib.import_module("jax.profiler").start_server(
                port, requires_backend=False)
    except Exception as exc:
        _server = False
        _say("process %d: could not start the profiler server on port %d: %s: %s"
             % (os.getpid(), port, type(exc).__name__, exc))
        return
    _say("process %d: %s profiler server on port %d" % (os.getpid(), name, port))


def _port_taken(port: int) -> bool:
    """Whether something listens on ``port`` already.

    gRPC servers bind with SO_REUSEPORT, so a second process's server would
    share the port and captures would reach either process at random; a
    plain bind, without that option, fails while another socket holds it.
    """
    import socket

    for family, address in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.bind((address, port))
            return False
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
    return False


def _say(text: str) -> None:
    try:
        sys.stderr.write("tfprof record: %s\n" % text)
        sys.stderr.flush()
    except Exception:
        pass
