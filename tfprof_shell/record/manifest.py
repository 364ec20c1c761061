"""``manifest.json``: the command, its times and exit status, and one entry per process.

The launcher builds it when the program has ended, from the process
folders (``process.json``) and the status files processes leave at exit
(which also name processes that imported a framework but recorded nothing).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from . import layout

#: How the summary names each framework.
NAMES = {"tensorflow": "TensorFlow", "torch": "PyTorch", "jax": "JAX"}
FRAMEWORKS = "TensorFlow, PyTorch or JAX"


def _read_json(path: str) -> Optional[dict]:
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def collect_processes(out_dir: str, status_dir: str = "") -> list[dict[str, Any]]:
    """One entry per process: its process.json, else its status file; ordered by rank, then name."""
    found: dict[tuple, dict[str, Any]] = {}
    if status_dir:
        for name in _names(status_dir):
            doc = _read_json(os.path.join(status_dir, name))
            if doc is not None and name.endswith(".json"):
                found[(doc.get("host"), doc.get("pid"))] = doc
    for name in _names(out_dir):
        doc = _read_json(os.path.join(out_dir, name, layout.PROCESS))
        if doc is not None and not name.startswith("."):
            doc["folder"] = name  # the name on disk, whatever the process wrote
            found[(doc.get("host"), doc.get("pid"))] = doc
    return sorted(found.values(), key=_order)


def _order(doc: dict[str, Any]) -> tuple:
    rank = doc.get("rank")
    return (rank is None, rank if isinstance(rank, int) else 0, str(doc.get("folder") or ""),
            str(doc.get("pid")))


def _names(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except OSError:
        return []


def build(command: list[str], cwd: str, settings: dict[str, Any], started: str, ended: str,
          seconds: float, returncode: int, processes: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest document (``returncode`` as subprocess gives it: -N for signal N)."""
    return {"format": layout.FORMAT, "version": layout.VERSION, "command": command, "cwd": cwd,
            "settings": settings, "started": started, "ended": ended,
            "seconds": round(seconds, 3),
            "exit_code": returncode if returncode >= 0 else None,
            "signal": -returncode if returncode < 0 else None,
            "processes": [_entry(p) for p in processes]}


def _entry(doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("folder", "pid", "host", "rank", "job", "argv", "kind", "route", "kinds", "steps",
            "steps_seen", "recorder_seconds", "status", "notes", "frameworks", "started",
            "updated")
    return {k: doc.get(k) for k in keys}


def summary(out_dir: str, processes: list[dict[str, Any]], warmup: int) -> str:
    """The one line the launcher prints at the end: where the recording is, or why there is none."""
    recorded = [p for p in processes if p.get("folder") and p.get("steps")]
    if recorded:
        steps = sum(len(p["steps"]) for p in recorded)
        return ("recorded %d step%s in %d process%s; open it with: tfprof --profile_path=%s"
                % (steps, "" if steps == 1 else "s", len(recorded),
                   "" if len(recorded) == 1 else "es", out_dir))
    if not processes:
        return "nothing recorded: no process of the program imported %s" % FRAMEWORKS
    seen = max((p.get("steps_seen") or 0) for p in processes)
    notes = sorted({n for p in processes for n in (p.get("notes") or [])})
    why = ("the most frequent training call ran %d time%s and tracing starts after --warmup %d"
           % (seen, "" if seen == 1 else "s", warmup))
    if notes:
        why += "; " + "; ".join(notes)
    used = sorted({NAMES.get(f, f) for p in processes for f in (p.get("frameworks") or {})})
    return "nothing recorded: %d process%s imported %s, %s" % (
        len(processes), "" if len(processes) == 1 else "es",
        " and ".join(used) or "a framework", why)
