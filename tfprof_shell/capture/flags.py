"""THE flags table of live capture: `tfprof capture`, `tfprof top` and the shell's `capture`.

Each flag is declared once in :data:`FLAGS` (name, kind, default, help, the
commands that take it); parsing, ``--help`` and the shell's `help capture`
are made from it. :func:`parse` splits a command line into the settings,
the addresses, and what is left for the session (starting ``--options`` and
view command words).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, fields, replace
from typing import Any, Sequence

from ..errors import UsageError

CAPTURE, TOP, SHELL = "capture", "top", "shell"

#: The most grpc can receive in one message (its limit is a signed 32-bit int).
GRPC_MAX_BYTES = 2 ** 31 - 1
#: The longest capture we ask a server for: a forgotten long capture keeps a job traced.
MAX_DURATION_S = 300.0

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30}
#: Folder and session names: no separators, no dot-dot, nothing a shell would trip on.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")


@dataclass(frozen=True)
class Settings:
    """Every capture/top setting, with its default."""

    duration: float = 2.0
    delay: float = 0.0
    python_tracer: bool = False
    host_tracer_level: int = 2
    device_tracer_level: int = 1
    max_size: int = GRPC_MAX_BYTES
    timeout: float = 10.0
    ssl: str = ""
    server_logdir: str = ""
    output: str = ""
    run: str = ""
    no_shell: bool = False
    interval: float = 2.0
    iterations: int = 0
    keep: str = ""


@dataclass(frozen=True)
class Flag:
    """One flag: its spelling, the Settings field it sets, how to read its value, its help."""

    name: str
    dest: str
    kind: str  # "bool", "seconds", "level", "count", "size", "path", "name"
    help: str
    commands: tuple[str, ...] = (CAPTURE, TOP, SHELL)
    hint: str = ""
    short: str = ""


FLAGS: tuple[Flag, ...] = (
    Flag("--duration", "duration", "seconds", "How long to trace, in seconds (default 2).",
         (CAPTURE, SHELL), "SECONDS"),
    Flag("--delay", "delay", "seconds", "Start tracing this many seconds from now "
         "(on the target's clock; default 0).", (CAPTURE, SHELL), "SECONDS"),
    Flag("--python_tracer", "python_tracer", "bool", "Also trace Python calls (feeds the code "
         "view; slows a busy target several times over)."),
    Flag("--host_tracer_level", "host_tracer_level", "level", "Host tracing: 0 off, 1 your "
         "TraceMe annotations only, 2 default, 3 verbose.", hint="N"),
    Flag("--device_tracer_level", "device_tracer_level", "level", "Device (GPU/TPU) tracing: "
         "0 off, 1 on (default).", hint="N"),
    Flag("--max_size", "max_size", "size", "Refuse a response larger than this (bytes, or "
         "with K, M, G; default and most: 2G).", hint="SIZE"),
    Flag("--timeout", "timeout", "seconds", "Give up on a target that does not answer within "
         "this many seconds (default 10).", hint="SECONDS"),
    Flag("--ssl", "ssl", "path", "Talk TLS, trusting the CA certificates in this PEM file "
         "(TF Serving set up with --ssl_config_file).", hint="CA_FILE"),
    Flag("--server_logdir", "server_logdir", "path", "For servers before TensorFlow 2.21 / "
         "jaxlib 0.8, which write captures on their own disk: a folder that the target and "
         "this machine both reach at this path; the capture is read back from it.",
         (CAPTURE, SHELL), "DIR"),
    Flag("--output", "output", "path", "Write the capture under DIR/plugins/profile/RUN/ "
         "(default: a new ./tfprof_capture_DATE_TIME).", (CAPTURE, SHELL), "DIR", "-o"),
    Flag("--run", "run", "name", "The run folder's name, also the server's session id "
         "(default: the date and time).", (CAPTURE, SHELL), "NAME"),
    Flag("--no-shell", "no_shell", "bool", "Write the capture and exit, without opening "
         "the shell.", (CAPTURE,)),
    Flag("--interval", "interval", "seconds", "Seconds between two snapshots (default 2).",
         (TOP,), "SECONDS"),
    Flag("--iterations", "iterations", "count", "Stop after this many snapshots "
         "(default: until q or Ctrl-C).", (TOP,), "N"),
    Flag("--keep", "keep", "path", "Save each snapshot as DIR/plugins/profile/RUN/HOST.xplane.pb "
         "(one run per snapshot).", (TOP,), "DIR"),
)
_BY_NAME = {spelling: f for f in FLAGS for spelling in (f.name, f.short) if spelling}
_DEFAULTS = Settings()


def flags_for(command: str) -> list[Flag]:
    """The flags ``command`` (capture, top, shell) accepts."""
    return [f for f in FLAGS if command in f.commands]


def check_name(value: str, what: str) -> str:
    """``value`` if it can name a folder or session: no separators, no `..`; else UsageError."""
    if not _SAFE_NAME.match(value) or ".." in value:
        raise UsageError("%s %r: use letters, digits and _ . + - only (no path separators, "
                         "no '..')" % (what, value))
    return value


def parse_size(text: str, flag: str = "--max_size") -> int:
    """Bytes from ``123``, ``64M``, ``1.5G``, ``512KiB``; at most grpc's 2G limit."""
    found = _SIZE.match(text)
    if not found:
        raise UsageError("%s: %r is not a size (bytes, or a number with K, M or G)"
                         % (flag, text))
    unit = (found.group(2) or "").lower()[:1]
    size = int(float(found.group(1)) * _SIZE_UNITS[unit])
    if size < 1:
        raise UsageError("%s must be at least 1 byte" % flag)
    return min(size, GRPC_MAX_BYTES)


def _value(flag: Flag, text: str) -> Any:
    if flag.kind == "seconds":
        try:
            number = float(text)
        except ValueError:
            raise UsageError("%s: %r is not a number of seconds" % (flag.name, text)) from None
        low = 0.0 if flag.dest == "delay" else 0.001
        if not low <= number <= (MAX_DURATION_S if flag.dest != "timeout" else 3600):
            raise UsageError("%s must be between %g and %g seconds"
                             % (flag.name, low, MAX_DURATION_S if flag.dest != "timeout"
                                else 3600))
        return number
    if flag.kind in ("level", "count"):
        try:
            number = int(text)
        except ValueError:
            raise UsageError("%s: %r is not a whole number" % (flag.name, text)) from None
        top = {"host_tracer_level": 3, "device_tracer_level": 1}.get(flag.dest, 1 << 30)
        if not (0 if flag.kind == "level" else 1) <= number <= top:
            raise UsageError("%s: %d is out of range" % (flag.name, number))
        return number
    if flag.kind == "size":
        return parse_size(text, flag.name)
    if flag.kind == "name":
        return check_name(text, flag.name)
    if not text:
        raise UsageError("%s needs a value" % flag.name)
    return text


@dataclass
class Parsed:
    """A capture/top command line: settings, addresses, and the words left for the session."""

    settings: Settings = field(default_factory=Settings)
    addresses: list[str] = field(default_factory=list)
    #: ``--option`` flags this table does not know, for the session's starting options.
    session_flags: list[str] = field(default_factory=list)
    #: A view command and its options, run on the result.
    words: list[str] = field(default_factory=list)
    help: bool = False


def parse(argv: Sequence[str], command: str, takes_session_flags: bool = True) -> Parsed:
    """Split ``argv``: our flags anywhere before the command words, the first plain word is
    the address list (comma separated), the next starts the view command.

    Flags of other tables (``--max_depth=3``) are kept for the session when
    ``takes_session_flags``; else they are a UsageError.
    """
    out = Parsed()
    values: dict[str, Any] = {}
    known = {f.name for f in flags_for(command)} | {f.short for f in flags_for(command) if f.short}
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-h", "--help"):
            out.help = True
            i += 1
            continue
        if out.addresses and not arg.startswith("--") and arg not in known:
            out.words = args[i:]
            break
        if not arg.startswith("-"):
            out.addresses = [a for a in arg.split(",") if a]
            if not out.addresses:
                raise UsageError("no address in %r" % arg)
            i += 1
            continue
        name, eq, inline = arg.partition("=")
        flag = _BY_NAME.get(name)
        if flag is None or name not in known:
            if flag is not None:
                raise UsageError("%s is not an option of %s" % (name, _shown(command)))
            if not takes_session_flags or not name.startswith("--"):
                raise UsageError("unknown option %s (see %s --help)" % (name, _shown(command)))
            out.session_flags.append(arg)
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("-"):
                out.session_flags.append(args[i + 1])
                i += 1
            i += 1
            continue
        if flag.kind == "bool":
            if eq:
                raise UsageError("%s takes no value" % name)
            values[flag.dest] = True
        else:
            if not eq:
                if i + 1 >= len(args):
                    raise UsageError("%s needs a value" % name)
                inline, i = args[i + 1], i + 1
            values[flag.dest] = _value(flag, inline)
        i += 1
    out.settings = replace(_DEFAULTS, **values)
    return out


def _shown(command: str) -> str:
    return "capture" if command == SHELL else "tfprof " + command


def flag_help(command: str) -> str:
    """The flags of ``command`` as help lines (two columns)."""
    rows = []
    for f in flags_for(command):
        spelled = ("%s, %s" % (f.short, f.name)) if f.short else f.name
        if f.hint:
            spelled += " " + f.hint
        rows.append((spelled, f.help))
    width = max(len(r[0]) for r in rows) + 2
    lines = []
    for spelled, text in rows:
        wrapped = textwrap.wrap(text, max(79 - 2 - width, 30))
        lines.append("  %-*s%s\n" % (width, spelled, wrapped[0]))
        lines += ["  %s%s\n" % (" " * width, more) for more in wrapped[1:]]
    return "".join(lines)


def defaults() -> Settings:
    """The default settings."""
    return _DEFAULTS


assert {f.dest for f in FLAGS} == {f.name for f in fields(Settings)}
