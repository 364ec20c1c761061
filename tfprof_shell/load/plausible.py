"""Is a parsed message really the kind of file a loader asked for?

Protobuf parses bytes of one message type as another without complaint,
so each kind has a plausibility check on a sample of its content: node
names, op types, device names. The loaders and the file sniffer use the
same checks, so they agree on what a file is.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from google.protobuf.unknown_fields import UnknownFieldSet

_SAMPLE = 64
_OP_TYPE = re.compile(r"[A-Za-z_][\w.>-]*")


def _printable(names: Any) -> bool:
    return all(n and n.isprintable() for n in names)


def _sample(items: Any) -> list[Any]:
    out = []
    for item in items:
        out.append(item)
        if len(out) >= _SAMPLE:
            break
    return out


def _entries(field: Any) -> Any:
    """(key, value) pairs of a map field, or of its entries declared as a repeated field."""
    return field.items() if hasattr(field, "items") else ((e.key, e.value) for e in field)


def _check_profile(p: Any) -> Optional[str]:
    if not p.nodes:
        return None if (p.steps or p.has_trace) else "it holds no nodes and no steps"
    pairs = _sample(_entries(p.nodes))
    if 2 * sum(key == node.id for key, node in pairs) < len(pairs):
        return "its node ids do not match"
    return None if _printable(n.name for _, n in pairs) else "its nodes have no names"


def _check_graph(g: Any) -> Optional[str]:
    if not g.node:
        return "it holds no nodes"
    nodes = _sample(g.node)
    if not _printable(n.name for n in nodes):
        return "its nodes have no names"
    if not all(_OP_TYPE.fullmatch(n.op) for n in nodes):
        return "its nodes have no op types"
    return None


def _check_run_meta(rm: Any) -> Optional[str]:
    if not rm.HasField("step_stats"):
        return "it has no step stats (record it with RunOptions(trace_level=FULL_TRACE))"
    devs = _sample(rm.step_stats.dev_stats)
    if not devs:
        return "its step stats list no devices"
    if not _printable(d.device for d in devs):
        return "its step stats have no device names"
    if not _printable(ns.node_name for d in devs for ns in _sample(d.node_stats)):
        return "its step stats have nameless records"
    return None


def _check_op_log(o: Any) -> Optional[str]:
    if not o.log_entries:
        return None if o.id_to_string else "it holds no entries"
    return None if _printable(e.name for e in _sample(o.log_entries)) else \
        "its entries have no names"


def _check_xspace(x: Any) -> Optional[str]:
    if not x.planes:
        return None if x.hostnames else "it holds no planes"
    return None if _printable(p.name for p in _sample(x.planes)) else "its planes have no names"


def _check_pprof(p: Any) -> Optional[str]:
    ok = p.string_table and p.string_table[0] == "" and p.sample_type
    return None if ok else "it is not a pprof profile"


_CHECKS: dict[str, Callable[[Any], Optional[str]]] = {
    "profile": _check_profile, "graph": _check_graph, "run_meta": _check_run_meta,
    "op_log": _check_op_log, "xspace": _check_xspace, "pprof": _check_pprof,
}


def check(key: str, msg: Any) -> Optional[str]:
    """Why a parsed message of kind ``key`` is not usable, or None if it is."""
    return _CHECKS[key](msg)


def has_unknown_fields(msg: Any, depth: int = 6) -> bool:
    """Unknown fields in ``msg`` or (a sample of) its submessages."""
    if len(UnknownFieldSet(msg)):
        return True
    if depth <= 0:
        return False
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        if fd.message_type.GetOptions().map_entry:
            vfd = fd.message_type.fields_by_name["value"]
            items = _sample(value.values()) if vfd.message_type is not None else []
        elif fd.is_repeated:
            items = _sample(value)
        else:
            items = [value]
        if any(has_unknown_fields(m, depth - 1) for m in items):
            return True
    return False
