"""Reading input files: one clear LoadError for every way a path can be wrong."""

from __future__ import annotations

import mmap
import os
import re
import stat
import zlib
from typing import Any, Callable, Optional, Union

from ..errors import LoadError

#: Refuse larger inputs before reading: protobuf messages are at most 2 GiB.
MAX_INPUT_BYTES = (2 << 30) - 1
_CHUNK = 1 << 20
#: Files from this size on are mapped, not read (see map_bytes).
_MAP_FROM = 1 << 24


def shown_path(path: str) -> str:
    """``path`` printable on any terminal (undecodable bytes shown as U+FFFD)."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "replace")


def where(flag: str, path: str, entry: str = "") -> str:
    """How messages name an input: ``--flag PATH`` plus e.g. ``(entry 2 of 3)``."""
    return "--%s %s%s" % (flag, shown_path(path), " (%s)" % entry if entry else "")


def read_bytes(path: str, flag: str, entry: str = "", limit: int = MAX_INPUT_BYTES) -> bytes:
    """The whole content of ``path``, given with ``--flag``; LoadError if unreadable.

    Regular files and pipes are read; directories and devices are refused,
    and so is anything over ``limit`` bytes (checked before reading).
    """
    at = where(flag, path, entry)
    if not path:
        raise LoadError("--%s: empty path" % flag)
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise LoadError("%s: is a directory, expected a file" % at)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            raise LoadError("%s: is a device, expected a file" % at)
        if st.st_size > limit:
            raise LoadError("%s: file is too large (%d bytes; the limit is %d)"
                            % (at, st.st_size, limit))
        with open(path, "rb") as fh:
            if stat.S_ISREG(st.st_mode):
                # One read to the end: Python sizes the buffer from the file.
                data = fh.read()
                if len(data) > limit:  # it grew since the check
                    raise LoadError("%s: input is too large (over %d bytes)" % (at, limit))
            else:
                data = _read_limited(fh, limit, at)
    except FileNotFoundError:
        raise LoadError("%s: no such file" % at) from None
    except PermissionError:
        raise LoadError("%s: permission denied" % at) from None
    except ValueError:  # e.g. an embedded NUL byte
        raise LoadError("%s: not a valid path" % at) from None
    except OSError as exc:
        raise LoadError("%s: cannot read: %s" % (at, exc.strerror or exc)) from None
    if not data:
        raise LoadError("%s: file is empty" % at)
    return data


def map_bytes(path: str, flag: str, entry: str = "", limit: int = MAX_INPUT_BYTES
              ) -> Union[bytes, mmap.mmap]:
    """:func:`read_bytes`, as a read-only map of the file where it is a regular file of
    at least 16 MiB: no copy of it is made (a decoder reads it straight from the page
    cache, 0.1 s less on a 150 MB trace). Drop the map once read: a file truncated while
    mapped faults its reader."""
    try:
        st = os.stat(path)
        mapped = stat.S_ISREG(st.st_mode) and _MAP_FROM <= st.st_size <= limit
    except (OSError, ValueError):
        mapped = False
    if mapped:
        try:
            with open(path, "rb") as fh:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            pass
    return read_bytes(path, flag, entry, limit)


def read_unzipped(path: str, flag: str) -> bytes:
    """:func:`read_bytes`, decompressed if the file is gzip data; LoadError if it
    does not decompress."""
    data = read_bytes(path, flag)
    if data[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompress(data, 31)
        except zlib.error:
            raise LoadError("%s: gzip data does not decompress" % where(flag, path)) from None
    return data


def _read_limited(fh: Any, limit: int, at: str) -> bytes:
    # A pipe has no size to check up front: read in chunks and stop at the limit.
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = fh.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise LoadError("%s: input is too large (over %d bytes)" % (at, limit))


def parse_binary(cls: Callable[[], Any], data: bytes) -> Any:
    """Parse ``data`` as a binary message of type ``cls``; None if it does not parse."""
    msg = cls()
    try:
        msg.ParseFromString(data)
    except Exception:  # protobuf raises DecodeError or RuntimeError by backend
        return None
    return msg


def parse_text(cls: Callable[[], Any], data: bytes,
               skipped: Optional[list[str]] = None) -> tuple[Optional[Any], str]:
    """Parse ``data`` as a text-format message: (message, "") or (None, the error).

    Field names the schema does not have are skipped, so files from newer
    TensorFlow versions load; the first one (with its line) is appended to
    ``skipped``, as a misspelt field name looks the same.
    """
    from google.protobuf import text_format

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, "line %d is not valid UTF-8" % line
    try:
        return text_format.Parse(text, cls()), ""
    except text_format.ParseError as exc:
        unknown = _UNKNOWN_FIELD.search(str(exc))
        if unknown is None:
            return None, str(exc).replace(" : ", ": ", 1)
        first = "%s.%s (line %d)" % (unknown.group(1).rsplit(".", 1)[-1], unknown.group(2),
                                     exc.GetLine())
    except Exception as exc:  # deep nesting or odd encodings surface as other errors
        return None, type(exc).__name__
    msg = cls()
    try:
        text_format.Parse(text, msg, allow_unknown_field=True)
    except text_format.ParseError as exc:
        return None, str(exc).replace(" : ", ": ", 1)
    except Exception as exc:
        return None, type(exc).__name__
    if skipped is not None:
        skipped.append(first)
    return msg, ""


_UNKNOWN_FIELD = re.compile(r'type "([\w.]+)" has no field named "([^"]*)"')


def read_binary_message(path: str, flag: str, cls: Callable[[], Any], kind: str) -> Any:
    """Read ``path`` (given with ``--flag``) as a binary message of ``kind``.

    Returns the parsed message if it passes the sniffer's structural checks;
    otherwise raises the LoadError saying what the file looks like instead.
    """
    return read_binary_with_bytes(path, flag, cls, kind)[0]


def read_binary_with_bytes(path: str, flag: str, cls: Callable[[], Any],
                           kind: str) -> tuple[Any, bytes]:
    """:func:`read_binary_message`, also returning the file's bytes."""
    from .plausible import check
    from .sniff import accepts

    data = read_bytes(path, flag)
    msg = parse_binary(cls, data)
    if msg is not None and accepts(kind, msg, data):
        return msg, data
    reason = check(kind, msg) if msg is not None else None
    raise refuse(flag, path, data, kind, reason=reason or "")


def refuse(flag: str, path: str, data: bytes, expected: str, entry: str = "",
           text_error: str = "", reason: str = "") -> LoadError:
    """The LoadError for ``data`` that is not a usable file of kind ``expected``."""
    from .sniff import diagnose

    return LoadError("%s: %s" % (where(flag, path, entry),
                                 diagnose(data, expected, text_error, reason)))
