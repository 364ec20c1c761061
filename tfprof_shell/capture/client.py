"""A client of the profiler service (gRPC ``tensorflow.ProfilerService``) run by TF2, JAX, TF Serving.

Plain unary calls through grpc's generic API with our own message classes
(proto/src/profiler_service.proto): no generated stubs, no TensorFlow.
Every failure becomes a :class:`CaptureError` of one line that names the
address; nothing here waits without a deadline.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import EXIT_DATA, UserError
from .flags import Settings

SERVICE = "/tensorflow.ProfilerService/"
INSTALL_HINT = "live capture needs grpcio: pip install 'tfprof-shell[capture]'"
#: The server's message when its one profiler session is taken.
BUSY = "Another profiling session active"


class CaptureError(UserError):
    """A capture failed; the message is one line naming the target."""

    exit_code = EXIT_DATA

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        #: The gRPC status name when a call failed ("UNAVAILABLE", ...), else "".
        self.code = code


def grpc_module() -> Any:
    """The grpc module, or CaptureError saying how to install it."""
    # gRPC's C core logs handshake and connection failures on stderr; we say them in one line.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    try:
        import grpc
    except ImportError:
        raise CaptureError(INSTALL_HINT) from None
    return grpc


@dataclass(frozen=True)
class Target:
    """One address as the user gave it, split into the host and port to dial."""

    given: str
    host: str
    port: int

    @property
    def dial(self) -> str:
        """host:port for grpc (IPv6 literals bracketed)."""
        return "[%s]:%d" % (self.host, self.port) if ":" in self.host else \
            "%s:%d" % (self.host, self.port)

    @property
    def file_stem(self) -> str:
        """host_port, safe as a file name (what TensorFlow's own client writes)."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", "%s_%d" % (self.host, self.port)).strip("._")

    def is_loopback(self) -> bool:
        """Whether the address is this machine (no one else can listen in)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_target(text: str) -> Target:
    """``grpc://host:port``, ``host:port`` or ``[v6]:port`` -> Target (CaptureError if not)."""
    rest = text[len("grpc://"):] if text.startswith("grpc://") else text
    found = re.match(r"^\[([0-9A-Fa-f:.]+)\]:(\d+)$", rest) or \
        re.match(r"^([A-Za-z0-9_.-]+):(\d+)$", rest)
    if not found or not 0 < int(found.group(2)) < 65536:
        raise CaptureError("%r is not an address: give host:port (or grpc://host:port), "
                           "e.g. localhost:6009" % text)
    return Target(text, found.group(1), int(found.group(2)))


class Client:
    """One target's channel; :meth:`call` runs one method with a deadline."""

    def __init__(self, target: Target, settings: Settings) -> None:
        self.grpc = grpc_module()
        self.target = target
        self.settings = settings
        options = [("grpc.max_receive_message_length", settings.max_size),
                   ("grpc.max_send_message_length", 1 << 20),
                   ("grpc.enable_retries", 0)]
        if settings.ssl:
            try:
                with open(settings.ssl, "rb") as fh:
                    roots = fh.read()
            except OSError as exc:
                raise CaptureError("--ssl %s: %s" % (settings.ssl, exc.strerror or exc)) from None
            creds = self.grpc.ssl_channel_credentials(root_certificates=roots)
            self.channel = self.grpc.secure_channel(target.dial, creds, options)
        else:
            self.channel = self.grpc.insecure_channel(target.dial, options)

    def close(self) -> None:
        """Close the channel (calls in flight are cancelled)."""
        self.channel.close()

    def call(self, method: str, request: Any, response_class: Any, timeout: float) -> Any:
        """Run ``method``; its response, or CaptureError describing the failure."""
        stub = self.channel.unary_unary(SERVICE + method,
                                        request_serializer=_serialize,
                                        response_deserializer=response_class.FromString)
        try:
            return stub(request, timeout=timeout)
        except self.grpc.RpcError as exc:
            code = getattr(exc.code(), "name", "") if hasattr(exc, "code") else ""
            raise CaptureError(self.explain(method, exc, timeout), code) from None

    def explain(self, method: str, exc: Any, timeout: float) -> str:
        """One line for a failed call: what happened, in the user's terms."""
        code = exc.code() if hasattr(exc, "code") else None
        name = getattr(code, "name", str(code))
        detail = (exc.details() if hasattr(exc, "details") else "") or ""
        where = self.target.given
        if name == "UNAVAILABLE":
            return "%s: %s" % (where, _unavailable(detail, self.settings))
        if name == "DEADLINE_EXCEEDED":
            return ("%s: no answer within %.3g s (deadline passed; is the address right and "
                    "the job running? --timeout waits longer)" % (where, timeout))
        if name == "UNIMPLEMENTED":
            return ("%s: not a profiler service, or one without %s (the server answered "
                    "UNIMPLEMENTED)" % (where, method))
        if name == "RESOURCE_EXHAUSTED" and "larger than max" in detail:
            size = re.search(r"\((\d+) vs\. (\d+)\)", detail)
            got = " (%s bytes)" % size.group(1) if size else ""
            return ("%s: the response%s is over --max_size %d bytes; raise --max_size or "
                    "capture for less time" % (where, got, self.settings.max_size))
        if BUSY.lower() in detail.lower():
            return ("%s: another profiling session is active in the target (a capture, "
                    "tfprof top, or the program's own profiler); try again when it ends"
                    % where)
        if name == "CANCELLED":
            return "%s: the call was cancelled" % where
        return "%s: %s: %s" % (where, name, _first_line(detail) or "no details")


def _unavailable(detail: str, settings: Settings) -> str:
    low = detail.lower()
    if "connection refused" in low:
        return "connection refused: nothing listens on this port (is the profiler server started?)"
    if "http/2" in low or "http2" in low:
        return "not a profiler service (the port does not speak gRPC)"
    if "handshake" in low or "ssl" in low or "tls" in low:
        if settings.ssl:
            return "TLS handshake failed: the server is not set up for TLS, or --ssl is not its CA"
        return "TLS handshake problem: %s" % _first_line(detail)
    if "socket closed" in low or "stream removed" in low or "connection reset" in low \
            or "eof" in low:
        return "the target closed the connection (it exited, or is not a profiler service%s)" \
            % ("" if settings.ssl else ", or expects TLS: --ssl CA_FILE")
    if "dns" in low or "resolve" in low or "name or service not known" in low:
        return "cannot resolve the host name"
    return "unreachable: %s" % _first_line(detail)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _serialize(message: Any) -> bytes:
    return message.SerializeToString()


def exited_mid_capture(message: str) -> Optional[str]:
    """A clearer line when a long call lost its connection: the target exited."""
    start = message.find("the target closed the connection (")
    if start < 0:
        return None
    return message[:start] + ("the target exited (or closed the connection) during the "
                              "capture; what it traced is lost")
