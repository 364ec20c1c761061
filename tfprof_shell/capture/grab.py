"""One capture from one or more profiler servers at once, written as a TensorBoard log folder.

:func:`capture` probes each target (a 1 ms capture that cannot write on the
target: see :func:`probe`), then asks every target for ``duration`` seconds
at the same time and writes ``OUT/plugins/profile/RUN/HOST_PORT.xplane.pb``
for each. Ctrl-C sends ``Terminate`` so each server returns what it traced
so far; a second Ctrl-C abandons the capture. An empty trace (idle target)
is retried up to three attempts in all, as TensorFlow's own client does.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

from ..proto import profiler_service_pb2 as pb
from .client import CaptureError, Client, Target, exited_mid_capture, parse_target
from .flags import Settings, check_name

#: A repository_root no POSIX server can create: a server that would write fails instead.
NO_WRITE_ROOT = "/dev/null/tfprof-capture-no-write"
#: Attempts in all when the target returns an empty trace.
ATTEMPTS = 3
#: What TensorFlow's client asks for; servers before 2.20 return the XSpace as this tool.
XPLANE_TOOL = "xplane.pb"
#: Kinds of server, as the probe finds them.
SENDS_BACK, WRITES_ON_DISK = "sends back", "writes on its own disk"

Say = Callable[[str], None]


@dataclass
class Captured:
    """One target's capture: where it was written, how big, how long the call took."""

    target: Target
    path: str
    size: int
    seconds: float
    attempts: int


@dataclass
class Capture:
    """A finished capture: the log folder, the run folder and each target's file."""

    folder: str
    run_dir: str
    files: list[Captured] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def options_of(settings: Settings, duration_ms: int, start_ns: int = 0) -> pb.ProfileOptions:
    """ProfileOptions for a capture (version 1: the server honours our tracer levels)."""
    return pb.ProfileOptions(host_tracer_level=settings.host_tracer_level,
                             device_tracer_level=settings.device_tracer_level,
                             python_tracer_level=int(settings.python_tracer), version=1,
                             start_timestamp_ns=start_ns, duration_ms=duration_ms)


def profile_request(settings: Settings, duration_ms: int, session_id: str, host_name: str,
                    repository_root: str = NO_WRITE_ROOT, start_ns: int = 0,
                    emit: bool = True) -> pb.ProfileRequest:
    """A Profile request; both duration fields are set (the server waits on the options')."""
    return pb.ProfileRequest(duration_ms=duration_ms, max_events=1000000, tools=[XPLANE_TOOL],
                             opts=options_of(settings, duration_ms, start_ns),
                             repository_root=repository_root, session_id=session_id,
                             host_name=host_name, emit_xspace=emit)


def xspace_of(response: pb.ProfileResponse) -> bytes:
    """The XSpace bytes a response carries (the 2.21 field, or the older tool), or b""."""
    if response.xspace:
        return response.xspace
    for tool in response.tool_data:
        if tool.name.endswith(XPLANE_TOOL) and tool.data:
            return tool.data
    return b""


def probe(client: Client) -> str:
    """Whether the server sends captures back (SENDS_BACK) or writes them (WRITES_ON_DISK).

    A 1 ms capture with ``emit_xspace`` and a repository_root under /dev/null:
    a server that honours emit_xspace answers with data and writes nothing;
    an older one tries to write there and fails. CaptureError otherwise
    (unreachable, busy, not a profiler service).
    """
    # Without the Python tracer: installing its hooks waits for the GIL of a busy target.
    request = profile_request(replace(client.settings, python_tracer=False), 1,
                              "tfprof-probe", "probe")
    try:
        client.call("Profile", request, pb.ProfileResponse, client.settings.timeout)
    except CaptureError as exc:
        text = exc.message.lower()
        if exc.code == "INTERNAL" and ("/dev/null" in text or "not a directory" in text):
            return WRITES_ON_DISK
        raise
    return SENDS_BACK


def new_folder(given: str) -> str:
    """``given``, or a new ./tfprof_capture_DATE_TIME folder name."""
    if given:
        return given
    base = time.strftime("tfprof_capture_%Y%m%d_%H%M%S")
    name, n = base, 1
    while os.path.exists(name):
        n += 1
        name = "%s_%d" % (base, n)
    return name


def capture(addresses: Sequence[str], settings: Settings, say: Optional[Say] = None) -> Capture:
    """Capture from every address at once; write and return the files (CaptureError if not)."""
    tell = say or (lambda text: None)
    targets = [parse_target(a) for a in addresses]
    stems = [t.file_stem for t in targets]
    if len(set(stems)) != len(stems):
        raise CaptureError("the same target is named twice: %s" % ", ".join(addresses))
    run = check_name(settings.run or time.strftime("%Y_%m_%d_%H_%M_%S"), "--run")
    if settings.server_logdir and not os.path.isdir(settings.server_logdir):
        raise CaptureError("--server_logdir %s: no such folder here (it must be a folder "
                           "this machine and the target share)" % settings.server_logdir)
    folder = new_folder(settings.output)
    run_dir = os.path.join(folder, "plugins", "profile", run)
    if os.path.exists(run_dir):
        raise CaptureError("%s exists: give another --run or -o" % run_dir)
    _check_writable(run_dir)
    result = Capture(folder, run_dir)
    for target in targets:
        if not target.is_loopback() and not settings.ssl:
            note = ("%s: plaintext, unauthenticated gRPC; anyone who can reach this port can "
                    "profile the process; prefer a tunnel (ssh -L, kubectl port-forward)"
                    % target.given)
            if say is None:
                result.notes.append(note)
            else:  # before the capture, not after
                say(note)
    clients = [Client(t, settings) for t in targets]
    try:
        kinds = _each(clients, probe)
        old = [c.target.given for c, k in zip(clients, kinds) if k == WRITES_ON_DISK]
        if old and not settings.server_logdir:
            raise CaptureError("%s: this server (before TensorFlow 2.21 / jaxlib 0.8) writes "
                               "captures on its own disk; pass --server_logdir DIR, a folder "
                               "it and this machine share" % old[0])
        tell("capturing %.3g s from %s ..." % (settings.duration, ", ".join(addresses)))
        grabs = [_Grab(c, settings, run, k == WRITES_ON_DISK) for c, k in zip(clients, kinds)]
        datas = _run_all(grabs, tell)
        for grab, data in zip(grabs, datas):
            path = os.path.join(run_dir, grab.client.target.file_stem + ".xplane.pb")
            try:
                os.makedirs(run_dir, exist_ok=True)
                with open(path, "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise CaptureError("cannot write %s: %s (the capture is lost)"
                                   % (path, exc.strerror or exc)) from None
            result.files.append(Captured(grab.client.target, path, len(data), grab.seconds,
                                         grab.attempts))
    finally:
        for client in clients:
            client.close()
    return result


def _check_writable(path: str) -> None:
    """CaptureError now, before any capture, if ``path`` could not be created."""
    parent = os.path.abspath(path)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise CaptureError("cannot write %s: %s is not a writable folder" % (path, parent))


def _each(clients: list[Client], work: Callable[[Client], str]) -> list[str]:
    """``work`` on every client at once; the first CaptureError is raised."""
    if len(clients) == 1:
        return [work(clients[0])]
    with ThreadPoolExecutor(len(clients)) as pool:
        return list(pool.map(work, clients))


class _Grab:
    """One target's capture call, retried on an empty trace, stoppable by Terminate."""

    def __init__(self, client: Client, settings: Settings, run: str, on_disk: bool) -> None:
        self.client, self.settings, self.run, self.on_disk = client, settings, run, on_disk
        self.stopping = False
        self.attempts = 0
        self.seconds = 0.0

    def __call__(self) -> bytes:
        s = self.settings
        duration_ms = max(1, int(round(s.duration * 1000)))
        deadline = s.duration + s.delay + max(60.0, 4 * s.duration)
        while True:
            self.attempts += 1
            start_ns = time.time_ns() + int(s.delay * 1e9) if s.delay else 0
            if self.on_disk:
                request = profile_request(s, duration_ms, self.run, self.client.target.file_stem,
                                          os.path.abspath(s.server_logdir), start_ns, emit=False)
            else:
                request = profile_request(s, duration_ms, self.run,
                                          self.client.target.file_stem, start_ns=start_ns)
            t0 = time.monotonic()
            try:
                response = self.client.call("Profile", request, pb.ProfileResponse, deadline)
            except CaptureError as exc:
                clearer = exited_mid_capture(exc.message)
                raise CaptureError(clearer, exc.code) if clearer else exc from None
            self.seconds = time.monotonic() - t0
            data = self._read_back() if self.on_disk else xspace_of(response)
            if data and not response.empty_trace:
                return data
            if not data and not response.empty_trace and not self.on_disk:
                raise CaptureError("%s: the server sent no trace back (an older server may have "
                                   "written it on its own disk; try --server_logdir DIR)"
                                   % self.client.target.given)
            if self.stopping or self.attempts >= ATTEMPTS:
                raise CaptureError("%s: empty trace %d times: the target ran nothing traceable "
                                   "(idle?); capture while it works" % (self.client.target.given,
                                                                        self.attempts))

    def _read_back(self) -> bytes:
        path = os.path.join(self.settings.server_logdir, self.run,
                            self.client.target.file_stem + ".xplane.pb")
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise CaptureError("%s: the server wrote no %s here (%s): is --server_logdir the "
                               "same folder on both machines?"
                               % (self.client.target.given, path, exc.strerror or exc)) from None

    def terminate(self) -> str:
        """Ask the server to end this capture now; '' or a note on why it could not."""
        self.stopping = True
        try:
            self.client.call("Terminate", pb.TerminateRequest(session_id=self.run),
                             pb.TerminateResponse, self.client.settings.timeout)
        except CaptureError as exc:
            return exc.message
        return ""


def _run_all(grabs: list[_Grab], say: Say) -> list[bytes]:
    """Every grab at once; Ctrl-C terminates them and keeps what they return."""
    with ThreadPoolExecutor(len(grabs)) as pool:
        futures: list[Future] = [pool.submit(g) for g in grabs]
        terminated = False
        while True:
            try:
                done, pending = wait(futures, timeout=0.2, return_when=FIRST_EXCEPTION)
                failed = [f for f in done if f.exception() is not None]
                if failed or not pending:
                    break
            except KeyboardInterrupt:
                if terminated:  # a second Ctrl-C: give up on the capture
                    for g in grabs:
                        g.client.close()
                    raise
                terminated = True
                say("stopping early: asking the target(s) to end the capture (Ctrl-C again "
                    "abandons it) ...")
                for g in grabs:
                    note = g.terminate()
                    if note:
                        say(note)
        if failed:
            for g in grabs:  # the others would trace on for nothing
                if g is not grabs[futures.index(failed[0])]:
                    g.terminate()
            raise failed[0].exception()  # type: ignore[misc]
        return [f.result() for f in futures]

