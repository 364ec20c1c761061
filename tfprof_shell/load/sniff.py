"""What kind of file is this? Classify input bytes, and say what is wrong with them.

Binary protobuf parsing is lenient: a message of one type often parses as
another without error. So a kind is recognized by structure, not by a
successful parse: a wire walk (:mod:`.wire`) that finds only fields of the
kind's schema, plus plausible content (node names, op types, device names).
:func:`identify` names what bytes look like; :func:`accepts` tells a loader
whether a parsed message really is the kind it asked for; :func:`diagnose`
builds the one-line reason a file was refused.
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Optional

from ..proto import framework_pb2, pprof_profile_pb2, tfprof_log_pb2, xplane_pb2
from . import wire
from .plausible import check, has_unknown_fields


@dataclass(frozen=True)
class Kind:
    """A kind of file: how to name it, and which flag (if any) reads it."""

    key: str
    label: str
    flag: str = ""
    advice: str = ""

    def hint(self) -> str:
        if self.flag:
            return "give it as %s" % self.flag
        return self.advice


@dataclass(frozen=True)
class Finding:
    """What some bytes look like: a kind, and what is wrong with them if anything.

    ``state`` is "" (a complete, plausible file), "truncated", "corrupt"
    (damaged after a valid start), "bad_utf8", "syntax" (text that does not
    parse) or "unusable" (parses, no content).
    """

    kind: Kind
    state: str = ""
    detail: str = ""


_K = Kind
KINDS: dict[str, Kind] = {k.key: k for k in (
    _K("profile", "a ProfileProto", "--profile_path"),
    _K("graph", "a binary GraphDef", "--graph_path"),
    _K("graph_text", "a text GraphDef", "--graph_path"),
    _K("run_meta", "a binary RunMetadata", "--run_meta_path"),
    _K("run_meta_text", "a text RunMetadata", "--run_meta_path"),
    _K("op_log", "an OpLogProto", "--op_log_path"),
    _K("op_log_text", "a text OpLogProto", "",
       "--op_log_path reads only the binary format that write_op_log writes"),
    _K("profile_text", "a text ProfileProto", "",
       "--profile_path reads only the binary format of Profiler.serialize_to_string()"),
    _K("xspace", "an XSpace (.xplane.pb from the TensorFlow 2 profiler)", "--profile_path"),
    _K("chrome_trace", "a Chrome trace (JSON)", "--profile_path"),
    _K("chrome_trace_gz", "a gzip-compressed Chrome trace", "--profile_path"),
    _K("pprof", "a pprof profile", "", "open it with pprof, not tfprof"),
    _K("saved_model", "a SavedModel (saved_model.pb)", "",
       "tfprof needs a GraphDef: write one with tf.io.write_graph"),
    _K("meta_graph", "a MetaGraphDef (.meta)", "",
       "tfprof needs a GraphDef: write its graph_def with tf.io.write_graph"),
    _K("checkpoint", "a TensorFlow checkpoint file", "",
       "give the checkpoint prefix as --checkpoint_path"),
    _K("events", "a TensorBoard events file", "",
       "tfprof reads the profiler's files, not summaries"),
    _K("json", "a JSON file, not a Chrome trace", ""),
    _K("gzip", "gzip-compressed data", "", "gunzip it first"),
    _K("gzip_bad", "a gzip file that does not decompress (truncated or corrupt)", ""),
    _K("zip", "a zip archive", ""),
    _K("hdf5", "an HDF5 file (such as a Keras .h5 model)", ""),
    _K("archive", "a file of another format (not a protobuf)", ""),
    _K("text", "a text file, not a protobuf", ""),
    _K("binary", "unrecognized binary data", ""),
)}

#: What each input flag expects, by kind key, and its name in messages.
EXPECTED = {"profile": "ProfileProto", "graph": "GraphDef", "run_meta": "RunMetadata",
            "op_log": "OpLogProto"}
#: Text kinds that the flag of the binary kind also reads.
_TEXT_READ = {"graph": "graph_text", "run_meta": "run_meta_text"}

_MESSAGES: dict[str, Any] = {
    "profile": tfprof_log_pb2.ProfileProto, "graph": framework_pb2.GraphDef,
    "run_meta": framework_pb2.RunMetadata, "op_log": tfprof_log_pb2.OpLogProto,
    "xspace": xplane_pb2.XSpace, "pprof": pprof_profile_pb2.Profile,
}


def accepts(key: str, msg: Any, data: bytes) -> bool:
    """True if ``msg``, parsed from ``data`` as kind ``key``, really is one.

    Unknown fields are tolerated (newer TensorFlow versions add fields),
    unless the bytes are, field for field, a different kind of file.
    """
    if check(key, msg) is not None:
        return False
    if not has_unknown_fields(msg):
        return True
    found = identify(data, prefer=key)
    other = found.kind.key not in (key, _TEXT_READ.get(key), "binary", "text", "archive")
    return not (other and found.state == "")


# --------------------------------------------------------------------------
# Identification
# --------------------------------------------------------------------------

_MAGIC = (
    (b"\x1f\x8b", "gzip"), (b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"),
    (b"\x89HDF\r\n\x1a\n", "hdf5"), (b"\x7fELF", "archive"), (b"\x89PNG", "archive"),
    (b"%PDF", "archive"), (b"SQLite format 3\x00", "archive"), (b"BZh", "archive"),
    (b"\xfd7zXZ\x00", "archive"), (b"\x28\xb5\x2f\xfd", "archive"),
    (b"\x93NUMPY", "archive"),
)
_TABLE_MAGIC = struct.pack("<Q", 0xDB4775248B80FB57)  # TensorFlow table (.index) footer
_PREFIX = 1 << 20


def identify(data: bytes, prefer: str = "", text_error: str = "") -> Finding:
    """What ``data`` looks like. ``prefer`` breaks ties toward the expected kind;
    ``text_error`` is the text parser's complaint, if the caller already has it."""
    return _identify(data, prefer, text_error, complete=True)


def _identify(data: bytes, prefer: str, text_error: str, complete: bool) -> Finding:
    for magic, key in _MAGIC:
        if data.startswith(magic):
            if key == "gzip":
                return _gunzipped(data, prefer)
            return Finding(KINDS[key])
    if data.endswith(_TABLE_MAGIC) and complete:
        return Finding(KINDS["checkpoint"])
    if _is_events(data):
        return Finding(KINDS["events"])
    if _looks_like_text(data[:_PREFIX]):
        return _text_finding(data, prefer, text_error, complete)
    return _binary_finding(data, prefer, complete)


def _gunzipped(data: bytes, prefer: str) -> Finding:
    try:
        inner = zlib.decompressobj(31).decompress(data, _PREFIX)
    except zlib.error:
        return Finding(KINDS["gzip_bad"])
    found = _identify(inner, prefer, "", complete=False)
    key = found.kind.key
    if key == "chrome_trace":
        return Finding(KINDS["chrome_trace_gz"])
    if key == "pprof":
        return Finding(KINDS["pprof"])
    if key in ("text", "binary", "zip", "hdf5", "archive", "gzip", "gzip_bad"):
        return Finding(KINDS["gzip"])
    label = "a gzip-compressed " + found.kind.label.split(" ", 1)[1]
    return Finding(Kind("gzip", label, "", KINDS["gzip"].advice))


def _is_events(data: bytes) -> bool:
    if len(data) < 16:
        return False
    (length,) = struct.unpack("<Q", data[:8])
    return length + 16 <= len(data) and data[12:13] == b"\x09" and \
        b"brain.Event:" in data[12:12 + min(length, 64)]


def _looks_like_text(head: bytes) -> bool:
    if not head or b"\x00" in head:
        return False
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 13))
    return controls * 100 <= len(head)


# Top-level field names of each kind's text format.
_TEXT_FIELDS = {
    "graph_text": {f.name for f in framework_pb2.GraphDef.DESCRIPTOR.fields},
    "run_meta_text": {f.name for f in framework_pb2.RunMetadata.DESCRIPTOR.fields},
    "profile_text": {f.name for f in tfprof_log_pb2.ProfileProto.DESCRIPTOR.fields},
    "op_log_text": {f.name for f in tfprof_log_pb2.OpLogProto.DESCRIPTOR.fields},
    "checkpoint": {"model_checkpoint_path", "all_model_checkpoint_paths",
                   "all_model_checkpoint_timestamps", "last_preserved_timestamp"},
}
_TOP_FIELD = re.compile(rb"^([A-Za-z_]\w*)\s*[:{<]", re.M)


def _text_finding(data: bytes, prefer: str, text_error: str, complete: bool) -> Finding:
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        return _json_finding(data, complete)
    names = set(m.group(1).decode("ascii") for m in _TOP_FIELD.finditer(data[:_PREFIX]))
    fits = [key for key, fields in _TEXT_FIELDS.items() if names and names <= fields]
    preferred = _TEXT_READ.get(prefer, prefer + "_text")
    if not fits and text_error and names & _TEXT_FIELDS.get(preferred, set()):
        fits = [preferred]  # the expected kind, with a misspelt top-level field
    if not fits:
        return Finding(KINDS["text"])
    key = preferred if preferred in fits else fits[0]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return Finding(KINDS[key], "bad_utf8", "line %d" % line)
    if text_error and key == preferred:
        return Finding(KINDS[key], "syntax", text_error)
    return Finding(KINDS[key])


def _json_finding(data: bytes, complete: bool) -> Finding:
    head = data[:_PREFIX]
    trace_like = b'"traceEvents"' in head or b'"ph"' in head
    if not complete:
        return Finding(KINDS["chrome_trace" if trace_like else "json"])
    from .json_doc import parse_json  # here: the decoder is imported by JSON's loads alone
    try:
        doc = parse_json(data)
    except (ValueError, RecursionError) as exc:
        kind = KINDS["chrome_trace" if trace_like else "json"]
        return Finding(kind, "syntax", str(exc).splitlines()[0] if str(exc) else "")
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return Finding(KINDS["chrome_trace"])
    if isinstance(doc, list) and doc and all(isinstance(e, dict) and "ph" in e for e in doc[:8]):
        return Finding(KINDS["chrome_trace"])
    return Finding(KINDS["json"])


def _binary_finding(data: bytes, prefer: str, complete: bool) -> Finding:
    order = sorted(_MESSAGES, key=lambda k: k != prefer)
    scans = {key: wire.scan(data, _MESSAGES[key].DESCRIPTOR) for key in order}
    for key in order:
        s = scans[key]
        if s.clean and s.bad_utf8 is None:
            msg = _MESSAGES[key]()
            try:
                msg.ParseFromString(data)
            except Exception:  # the walk and the parser disagree: not this kind
                continue
            reason = check(key, msg)
            if reason is None:
                return Finding(KINDS[key])
            if key == prefer:
                return Finding(KINDS[key], "unusable", reason)
    wrapped = _wrapped_graph(data)
    if wrapped:
        return Finding(KINDS[wrapped])
    for key in order:
        s = scans[key]
        if s.truncated and s.known and not s.unknown and not s.corrupt:
            return Finding(KINDS[key], "" if not complete else "truncated")
    return _damaged_finding(data, prefer, scans.get(prefer), complete)


def _damaged_finding(data: bytes, prefer: str, s: Optional[wire.Scan],
                     complete: bool) -> Finding:
    """The expected kind, damaged: nearly every field fits its schema."""
    if s is None or s.known < max(4, 10 * s.unknown):
        return Finding(KINDS["binary"])
    kind = KINDS[prefer]
    if s.truncated:
        return Finding(kind, "truncated" if complete else "")
    if s.corrupt and s.corrupt_at >= 64:
        return Finding(kind, "corrupt", "byte %d of %d" % (s.corrupt_at, len(data)))
    if s.bad_utf8 and not s.corrupt:
        field, raw = s.bad_utf8
        return Finding(kind, "bad_utf8", "%s %s" % (field.split(".", 2)[-1], _show_bytes(raw)))
    if s.unknown and not s.corrupt:
        return Finding(kind, "corrupt", "byte %d of %d" % (s.unknown_at, len(data)))
    return Finding(KINDS["binary"])


def _wrapped_graph(data: bytes) -> str:
    """'saved_model' or 'meta_graph' if ``data`` is one wrapped around a GraphDef."""
    top = wire.top_fields(data)
    if not top:
        return ""
    numbers = {(n, w) for n, w, _ in top}
    if numbers <= {(1, wire.VARINT), (2, wire.LEN)} and (2, wire.LEN) in numbers:
        meta = next(v for n, _, v in top if n == 2)
        return "saved_model" if _is_meta_graph(bytes(meta)) else ""
    return "meta_graph" if _is_meta_graph(data) else ""


def _is_meta_graph(data: bytes) -> bool:
    top = wire.top_fields(data)
    if not top or not all(w == wire.LEN and 1 <= n <= 9 for n, w, _ in top):
        return False
    graphs = [v for n, _, v in top if n == 2]
    return bool(graphs) and wire.scan(bytes(graphs[0]), framework_pb2.GraphDef.DESCRIPTOR).clean


def _show_bytes(raw: bytes, limit: int = 40) -> str:
    text = repr(raw[:limit])[1:]
    return text + ("..." if len(raw) > limit else "")


# --------------------------------------------------------------------------
# Diagnosis
# --------------------------------------------------------------------------

def diagnose(data: bytes, expected: str, text_error: str = "", reason: str = "") -> str:
    """One line saying why ``data`` is not a usable file of kind ``expected``.

    ``text_error`` is the text parser's message and ``reason`` what
    :func:`check` said, when the caller has them.
    """
    name = EXPECTED[expected]
    a_name = ("an " if name[0] in "AEIOU" else "a ") + name
    found = identify(data, prefer=expected, text_error=text_error)
    kind, state = found.kind, found.state
    own = kind.key in (expected, _TEXT_READ.get(expected))
    if own and state == "truncated":
        return ("truncated %s: the file ends in the middle of a record after %d bytes "
                "(was it copied or written completely?)" % (name, len(data)))
    if own and state == "corrupt":
        return "corrupt %s: invalid data at %s" % (name, found.detail)
    if own and state == "bad_utf8":
        return ("%s with a string that is not valid UTF-8 (%s); TensorFlow's reader "
                "rejects it too" % (kind.label.split(" ", 1)[1], found.detail))
    if own and state == "syntax":
        return "%s with a syntax error: %s" % (kind.label[2:], found.detail)
    if own and state == "unusable":
        return "not a usable %s: %s" % (name, found.detail)
    if own:
        return "not a usable %s%s" % (name, ": " + reason if reason else "")
    if kind.key in ("binary", "text", "zip", "hdf5", "archive", "json", "gzip_bad"):
        return "not %s; it is %s" % (a_name, kind.label)
    label = kind.label
    if state == "truncated":
        label = "a truncated " + label.split(" ", 1)[1]
    elif state == "syntax":
        label = "a malformed " + label.split(" ", 1)[1]
    elif state == "bad_utf8":
        label = "%s (not valid UTF-8 at %s)" % (label, found.detail)
    # The same flag: the input route for that kind is not available here.
    hint = "" if kind.flag == KINDS[expected].flag else kind.hint()
    return "not %s; it looks like %s%s" % (a_name, label, " (%s)" % hint if hint else "")
