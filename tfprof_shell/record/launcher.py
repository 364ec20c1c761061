"""``tfprof record``: run a command with the recorder armed, then write ``manifest.json``.

The command runs as a child with the same stdin, stdout and stderr, and its
environment armed (:func:`.settings.armed_environment`). SIGTERM, SIGHUP,
SIGUSR1 and SIGUSR2 sent to ``tfprof record`` are passed on to it; Ctrl-C
and Ctrl-\\ reach it from the terminal directly. When it ends, the manifest
is written, one line on stderr says where the recording is, and
``tfprof record`` exits with the child's status, or dies of the signal that
killed it.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence, TextIO

from ..errors import EXIT_DATA, UsageError
from . import layout, manifest, serve
from .process import now, write_json
from .settings import (DEFAULT_EVERY, DEFAULT_MAX_STEPS, DEFAULT_WARMUP, ENV_VAR, Settings,
                       armed_environment, is_off)

USAGE = ("usage: tfprof record [-o DIR] [--warmup N] [--every N] [--max_steps N] "
         "[--python_tracer] [--shapes] [--memory] [--job NAME] -- COMMAND [ARGS...]\n"
         "       tfprof record --env [-o DIR] [options]\n"
         "       tfprof record --serve PORT -- COMMAND [ARGS...]\n")

HELP = USAGE + """
Run COMMAND (any program that starts Python processes) with the recorder armed,
unchanged: when a process imports TensorFlow, PyTorch or JAX, its training steps
are found and a few of them traced. Open the result with: tfprof --profile_path=DIR

options:
  -o, --output DIR   where to write (default: ./tfprof_record_<date>_<time>); must be new or empty
  --warmup N         untraced training steps first (default: 10)
  --every N          then trace every N-th step (default: 1)
  --max_steps N      and stop after N traced steps (default: 5)
  --python_tracer    also record Python calls (the code view; TF2, PyTorch, JAX)
  --shapes           PyTorch: also record each op's input shapes
  --memory           PyTorch: also record memory allocations
  --job NAME         the first part of each process folder's name
                     (default: TF_CONFIG's task type, else the script's name)
  --serve PORT       record nothing: start the profiler server on PORT when the program
                     imports TensorFlow or JAX, for tfprof capture / top at any time
  --env              print the two variables to export instead of running a command,
                     to arm a job from its spec (Kubernetes, SLURM, mpirun -x)
  -h, --help         show this help

TF1: tf.compat.v1.Session.run (also MonitoredTrainingSession, make_callable) in the
main thread. TF2: Keras fit, custom tf.function loops, eager loops with a Keras or
tf.compat.v1 optimizer. PyTorch: torch.optim optimizer steps (torchrun, mp.spawn,
Lightning, DDP, torch.compile), else calls of the largest nn.Module (inference).
JAX: top-level calls of the most called jax.jit function. TFPROF_RECORD=off in the
environment runs COMMAND unrecorded.
"""

#: The frameworks a program may record with (one must be importable here).
FRAMEWORK_MODULES = ("tensorflow", "torch", "jax")
_FORWARDED = ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")
_FROM_TERMINAL = ("SIGINT", "SIGQUIT")  # the terminal sends these to the child too


@dataclass
class Request:
    """A parsed ``tfprof record`` command line."""

    out_dir: str = ""
    warmup: int = DEFAULT_WARMUP
    every: int = DEFAULT_EVERY
    max_steps: int = DEFAULT_MAX_STEPS
    python_tracer: bool = False
    shapes: bool = False
    memory: bool = False
    job: str = ""
    env: bool = False
    serve: int = 0
    help: bool = False
    command: list[str] = field(default_factory=list)


def _count(flag: str, value: str, least: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise UsageError("%s: %r is not a whole number" % (flag, value)) from None
    if number < least:
        raise UsageError("%s must be at least %d" % (flag, least))
    return number


def parse(argv: Sequence[str]) -> Request:
    """The options before ``--`` (or before the first word that is not one), then the command."""
    req = Request()
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            req.command = args[i + 1:]
            break
        if not arg.startswith("-") or arg == "-":
            req.command = args[i:]
            break
        name, eq, inline = arg.partition("=")
        if name in ("-h", "--help", "--env", "--python_tracer", "--shapes", "--memory"):
            if eq:
                raise UsageError("%s takes no value" % name)
            setattr(req, {"-h": "help", "--help": "help"}.get(name, name[2:]), True)
            i += 1
            continue
        if name not in ("-o", "--output", "--warmup", "--every", "--max_steps", "--job",
                        "--serve"):
            raise UsageError("unknown option %s (see tfprof record --help)" % name)
        if not eq:
            if i + 1 >= len(args):
                raise UsageError("%s needs a value" % name)
            inline, i = args[i + 1], i + 1
        if name in ("-o", "--output"):
            req.out_dir = inline
        elif name == "--job":
            req.job = inline
        elif name == "--serve":
            req.serve = serve.parse_port(inline) or 0
            if not req.serve:
                raise UsageError("--serve: %r is not a port (1-65535)" % inline)
        else:
            setattr(req, name[2:], _count(name, inline, 0 if name == "--warmup" else 1))
        i += 1
    return req


def main(argv: Sequence[str], stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr,
         environ: Optional[Mapping[str, str]] = None) -> int:
    """Run ``tfprof record ARGV``; returns the exit status (or dies of the child's signal)."""
    environ = os.environ if environ is None else environ
    try:
        req = parse(argv)
        if req.help:
            stdout.write(HELP)
            return 0
        if req.env:
            stdout.write(env_lines(req, environ))
            return 0
        if not req.command:
            raise UsageError("no command to run: tfprof record [options] -- COMMAND [ARGS...]")
        if req.serve:
            status = serve.launch(req.command, req.serve, environ, stderr, _run)
        elif ENV_VAR in environ and is_off(environ[ENV_VAR]):
            status = _run(req.command, environ)
        elif not any(importlib.util.find_spec(m) is not None for m in FRAMEWORK_MODULES):
            stderr.write("tfprof record: none of TensorFlow, PyTorch or JAX is installed in "
                         "this Python (%s); recording needs one of them\n" % sys.executable)
            return EXIT_DATA
        else:
            status = record(req, _output_dir(req.out_dir), environ, stderr)
    except UsageError as exc:
        stderr.write("tfprof record: %s\n" % exc.message)
        return exc.exit_code
    if status < 0:
        _die_of(-status)
        return 128 - status
    return status


def _output_dir(given: str) -> str:
    """The absolute output folder: new, or existing and empty."""
    if not given:
        given = time.strftime("tfprof_record_%Y%m%d_%H%M%S")
        base, n = given, 1
        while os.path.exists(given):
            n += 1
            given = "%s_%d" % (base, n)
    path = os.path.abspath(given)
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise UsageError("-o %s: exists and is not an empty folder; give a new one" % given)
    return path


def settings_of(req: Request, out_dir: str, status_dir: str = "") -> Settings:
    """The Settings a request arms processes with."""
    return Settings(dir=out_dir, warmup=req.warmup, every=req.every, max_steps=req.max_steps,
                    python_tracer=req.python_tracer, shapes=req.shapes, memory=req.memory,
                    job=req.job, status_dir=status_dir)


def env_lines(req: Request, environ: Mapping[str, str]) -> str:
    """``export`` lines for PYTHONPATH and TFPROF_RECORD (``--env``)."""
    out_dir = os.path.abspath(req.out_dir or "tfprof_record")
    env = armed_environment(settings_of(req, out_dir), environ)
    return "".join("export %s=%s\n" % (k, shlex.quote(env[k])) for k in ("PYTHONPATH", ENV_VAR))


def record(req: Request, out_dir: str, environ: Mapping[str, str], stderr: TextIO) -> int:
    """Run the command armed; write the manifest; the child's return code (-N: signal N)."""
    status_dir = tempfile.mkdtemp(prefix="tfprof-record-")
    settings = settings_of(req, out_dir, status_dir)
    started, t0 = now(), time.monotonic()
    try:
        returncode = _run(req.command, armed_environment(settings, environ))
        processes = manifest.collect_processes(out_dir, status_dir)
        shown = settings._asdict()
        del shown["status_dir"]
        doc = manifest.build(req.command, os.getcwd(), shown, started, now(),
                             time.monotonic() - t0, returncode, processes)
        try:
            os.makedirs(out_dir, exist_ok=True)
            write_json(os.path.join(out_dir, layout.MANIFEST), doc)
            line = manifest.summary(out_dir, processes, req.warmup)
        except OSError as exc:
            line = "could not write %s: %s" % (layout.MANIFEST, exc.strerror or exc)
        stderr.write("tfprof record: %s\n" % line)
        stderr.flush()
        return returncode
    finally:
        shutil.rmtree(status_dir, ignore_errors=True)


class NotRun(UsageError):
    """The command could not be started (exit status as a shell gives it: 127 or 126)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _run(command: list[str], env: Mapping[str, str]) -> int:
    """Run ``command`` to its end, passing on the signals meant for it; its return code."""
    # The handlers go in before the child starts: a signal sent once the child is up
    # (it may already have printed) must never find this process with the default
    # action, which would end it and leave the child running. One that comes while
    # the child is being started is passed on as soon as it exists.
    children: list[subprocess.Popen] = []
    early: list[int] = []

    def forward(signum: int, frame: object) -> None:
        if not children:
            early.append(signum)
            return
        try:
            children[0].send_signal(signum)
        except OSError:
            pass

    def ignore(signum: int, frame: object) -> None:
        pass

    previous = {}
    for name, handler in [(n, forward) for n in _FORWARDED] + [(n, ignore) for n in _FROM_TERMINAL]:
        sig = getattr(signal, name, None)
        if sig is not None:
            previous[sig] = signal.signal(sig, handler)
    try:
        try:
            children.append(subprocess.Popen(command, env=dict(env)))
        except FileNotFoundError:
            raise NotRun("%s: command not found" % command[0], 127) from None
        except OSError as exc:
            raise NotRun("%s: %s" % (command[0], exc.strerror or exc), 126) from None
        for signum in early:
            forward(signum, None)
        return children[0].wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _die_of(signum: int) -> None:
    """End this process by ``signum``, as the child ended, so callers see the same death."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
