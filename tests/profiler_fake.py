"""An in-process fake of the profiler service (gRPC ``tensorflow.ProfilerService``) for tests.

It behaves as the TensorFlow 2.21 / JAX 0.10 servers were measured to: one
profiler session at a time (``Another profiling session active.``),
``Profile`` waits ``opts.duration_ms`` or until ``Terminate`` names its
session, the XSpace comes back when ``emit_xspace`` is set, and continuous
profiling hands out snapshots. ``old=True`` plays a server before 2.21: it
ignores ``emit_xspace`` and writes ``<repository_root>/<session_id>/<host_name>.xplane.pb``
on its disk (failing under /dev/null, as a real one does). The XSpace it
returns is a real file's bytes.

Run as a program (``python tests/profiler_fake.py PORT_FILE [--exit-after S]``)
it serves on a free port, writes the port to PORT_FILE, and (with
``--exit-after``) exits abruptly that many seconds into a Profile call.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, Optional

import grpc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tfprof_shell.proto import profiler_service_pb2 as pb  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "sample_profiles", "tf2", "custom_loop", "plugins", "profile",
                      "2026_11_21_06_40_58", "localhost.xplane.pb")
SERVICE = "tensorflow.ProfilerService"


def sample_xspace() -> bytes:
    with open(SAMPLE, "rb") as fh:
        return fh.read()


@dataclass
class FakeProfiler:
    """Settings and a record of what was asked."""

    xspace: bytes = field(default_factory=sample_xspace)
    old: bool = False
    #: Profile answers empty_trace this many times first (an idle target; probes aside).
    empty_first: int = 0
    #: Return this many bytes instead (to go over a client's --max_size).
    pad_to: int = 0
    #: Seconds into a Profile call after which the process exits (os._exit).
    exit_after: float = 0.0
    requests: list = field(default_factory=list)
    terminated: list = field(default_factory=list)
    snapshots: int = 0
    stopped: int = 0
    written: list = field(default_factory=list)
    #: (start, end) monotonic times of each Profile call's wait.
    spans: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._busy = False
        self._continuous = False
        self._ends: dict[str, threading.Event] = {}

    # -- session lock --------------------------------------------------------

    def _take(self, context: Any) -> None:
        with self._lock:
            if self._busy or self._continuous:
                context.abort(grpc.StatusCode.INTERNAL, "Another profiling session active.")
            self._busy = True

    def _release(self) -> None:
        with self._lock:
            self._busy = False

    # -- methods ------------------------------------------------------------

    def profile(self, request: Any, context: Any) -> Any:
        self.requests.append(request)
        self._take(context)
        try:
            end = self._ends.setdefault(request.session_id, threading.Event())
            wait_s = request.opts.duration_ms / 1000.0  # the server reads the options' copy
            if request.opts.start_timestamp_ns:
                wait_s += max(0.0, request.opts.start_timestamp_ns / 1e9 - time.time())
            if self.exit_after:
                threading.Timer(self.exit_after, lambda: os._exit(3)).start()
            t0 = time.monotonic()
            end.wait(wait_s)
            self.spans.append((t0, time.monotonic()))
            self._ends.pop(request.session_id, None)
            if self.empty_first > 0 and request.opts.duration_ms > 1:  # not the 1 ms probe
                self.empty_first -= 1
                return pb.ProfileResponse(empty_trace=True, xspace=b"\n\x00")
            data = self.xspace if not self.pad_to else b"\x00" * self.pad_to
            if self.old or not request.emit_xspace:
                folder = os.path.join(request.repository_root, request.session_id)
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as exc:
                    context.abort(grpc.StatusCode.INTERNAL, "%s is not a directory (%s)"
                                  % (request.repository_root.split("/tfprof")[0], exc))
                path = os.path.join(folder, request.host_name.replace(":", "_") + ".xplane.pb")
                with open(path, "wb") as fh:
                    fh.write(data)
                self.written.append(path)
                return pb.ProfileResponse()
            return pb.ProfileResponse(xspace=data)
        finally:
            self._release()

    def terminate(self, request: Any, context: Any) -> Any:
        self.terminated.append(request.session_id)
        event = self._ends.get(request.session_id)
        if event is not None:
            event.set()
        return pb.TerminateResponse()

    def start_continuous(self, request: Any, context: Any) -> Any:
        if self.old:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "")
        self._take(context)
        with self._lock:
            self._busy = False
            self._continuous = True
        return pb.ContinuousProfilingResponse()

    def get_snapshot(self, request: Any, context: Any) -> Any:
        if not self._continuous:
            context.abort(grpc.StatusCode.NOT_FOUND, "No continuous profiling session found.")
        self.snapshots += 1
        return pb.ProfileResponse(xspace=self.xspace)

    def stop_continuous(self, request: Any, context: Any) -> Any:
        with self._lock:
            self._continuous = False
        self.stopped += 1
        return pb.StopContinuousProfilingResponse()

    def monitor(self, request: Any, context: Any) -> Any:
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "unimplemented.")

    def handler(self) -> Any:
        def method(fn: Any, request_class: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(
                fn, request_deserializer=request_class.FromString,
                response_serializer=lambda m: m.SerializeToString())
        return grpc.method_handlers_generic_handler(SERVICE, {
            "Profile": method(self.profile, pb.ProfileRequest),
            "Terminate": method(self.terminate, pb.TerminateRequest),
            "Monitor": method(self.monitor, pb.TerminateRequest),
            "StartContinuousProfiling": method(self.start_continuous, pb.ProfileRequest),
            "GetSnapshot": method(self.get_snapshot, pb.GetSnapshotRequest),
            "StopContinuousProfiling": method(self.stop_continuous,
                                              pb.StopContinuousProfilingRequest),
        })


class Served:
    """A FakeProfiler (or no service at all) behind a grpc server on a free local port."""

    def __init__(self, fake: Optional[FakeProfiler], host: str = "127.0.0.1",
                 port: int = 0, credentials: Any = None) -> None:
        self.fake = fake
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        if fake is not None:
            self.server.add_generic_rpc_handlers((fake.handler(),))
        if credentials is None:
            self.port = self.server.add_insecure_port("%s:%d" % (host, port))
        else:
            self.port = self.server.add_secure_port("%s:%d" % (host, port), credentials)
        self.server.start()

    @property
    def address(self) -> str:
        return "localhost:%d" % self.port

    def stop(self) -> None:
        self.server.stop(None)


def main(argv: list[str]) -> int:
    port_file = argv[0]
    exit_after = float(argv[argv.index("--exit-after") + 1]) if "--exit-after" in argv else 0.0
    served = Served(FakeProfiler(exit_after=exit_after))
    with open(port_file + ".tmp", "w") as fh:
        fh.write(str(served.port))
    os.replace(port_file + ".tmp", port_file)
    served.server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
