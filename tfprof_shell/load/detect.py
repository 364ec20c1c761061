"""What ``--profile_path`` names: a ProfileProto, TF2 ``.xplane.pb`` files, or timelines.

It may be a file, a comma-separated list of files, a TensorBoard run
directory (``.../plugins/profile/<run>/`` holding one ``<host>.xplane.pb``
per host), a log directory (the newest run under ``plugins/profile/`` is
picked, or the one ``--run`` names), or a directory of ``timeline-<step>.json``
files written by ProfilerHook.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from ..errors import LoadError, UsageError
from .memory_pprof import is_pprof_name, looks_like_pprof
from .memory_snapshot import is_snapshot_name

PROFILE = "profile"
XPLANE = "xplane"
CHROME_TRACE = "chrome_trace"
#: JAX device memory profiles (pprof).
PPROF = "pprof"
#: PyTorch memory snapshots (pickles, read as plain data only).
SNAPSHOT = "snapshot"

XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")
RIEGELI_SUFFIXES = (".xplane.riegeli", ".riegeli")
JSON_SUFFIXES = (".json", ".json.gz")
_RUNS_DIR = os.path.join("plugins", "profile")
_STEP_IN_NAME = re.compile(r"(\d+)\D*$")


def host_name(path: str) -> str:
    """The host a ``<host>.xplane.pb`` file profiles, from its name (as TensorBoard names it)."""
    base = os.path.basename(path)
    for suffix in (".xplane.pb", ".xplane.pb.gz"):
        if base.lower().endswith(suffix):
            return base[:-len(suffix)]
    return base


@dataclass(frozen=True)
class Resolved:
    """The input files of one ``--profile_path``, their format and what was chosen."""

    kind: str
    paths: tuple[str, ...]
    note: str = ""


def kind_of_file(path: str) -> str:
    """A file's format, from its name, else from its first bytes."""
    low = path.lower()
    if low.endswith(RIEGELI_SUFFIXES):
        raise LoadError("--profile_path %s: .xplane.riegeli files are not supported; "
                        "use the .xplane.pb files of the same run" % path)
    if low.endswith(XPLANE_SUFFIXES):
        return XPLANE
    if low.endswith(JSON_SUFFIXES):
        return CHROME_TRACE
    if is_pprof_name(low):
        return PPROF
    if is_snapshot_name(low):
        return SNAPSHOT
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return PROFILE  # the ProfileProto loader words the error
    if head[:2] == b"\x1f\x8b":
        head = _gunzip_head(path)
        if head.lstrip()[:1] not in (b"{", b"[") and _is_pprof(path):
            return PPROF
    if head.lstrip()[:1] in (b"{", b"["):
        return CHROME_TRACE
    return PROFILE  # the ProfileProto loader says what else the file looks like


def _is_pprof(path: str) -> bool:
    """Whether a gzipped file that is no JSON holds a pprof profile."""
    try:
        with open(path, "rb") as fh:
            return looks_like_pprof(fh.read())
    except OSError:
        return False


def _gunzip_head(path: str) -> bytes:
    """The first decompressed bytes of a gzip file (b"" if it cannot be read)."""
    import gzip

    try:
        with gzip.open(path, "rb") as fh:
            return fh.read(64)
    except (OSError, EOFError):
        return b""


def resolve(profile_path: str, run: Optional[str] = None,
            hosts: Sequence[str] = ()) -> Resolved:
    """The files ``--profile_path`` names; LoadError or UsageError if none fit."""
    items = [p for p in profile_path.split(",") if p]
    if os.path.exists(profile_path):  # a name that itself contains a comma
        items = [profile_path]
    if len(items) > 1:
        kinds = {kind_of_file(p) for p in items}
        if kinds == {CHROME_TRACE}:
            return Resolved(CHROME_TRACE, tuple(items))
        if kinds == {XPLANE}:
            return Resolved(XPLANE, _pick_hosts(tuple(items), hosts))
        if kinds == {PPROF}:
            return Resolved(PPROF, tuple(items))
        if kinds == {SNAPSHOT}:
            return Resolved(SNAPSHOT, tuple(items))
        raise UsageError("--profile_path lists several files: give either Chrome-trace "
                         ".json files (one per step), .xplane.pb files (one per host) or "
                         "device memory profiles (.prof, one per step)")
    path = items[0] if items else profile_path
    if os.path.isdir(path):
        return _resolve_dir(path, run, hosts)
    if run:
        raise UsageError("--run needs --profile_path to be a log directory")
    kind = kind_of_file(path)
    if kind == XPLANE:
        return Resolved(XPLANE, _pick_hosts((path,), hosts))
    if hosts:
        raise UsageError("--host applies only to .xplane.pb profiles")
    return Resolved(kind, (path,))


def _xplanes_in(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if n.lower().endswith(XPLANE_SUFFIXES)]


def _resolve_dir(path: str, run: Optional[str], hosts: Sequence[str]) -> Resolved:
    files = _xplanes_in(path)
    if files:
        if run:
            raise UsageError("--run: %s is already a run directory" % path)
        return Resolved(XPLANE, _pick_hosts(tuple(files), hosts))
    runs = _runs_under(path)
    if runs:
        return _pick_run(path, runs, run, hosts)
    profiles = _pprofs_in(path)
    if profiles:
        if run or hosts:
            raise UsageError("--run and --host apply only to .xplane.pb profiles")
        return Resolved(PPROF, tuple(profiles),
                        "loaded %d device memory profiles as steps" % len(profiles))
    timelines = _timelines_in(path)
    if timelines:
        if run or hosts:
            raise UsageError("--run and --host apply only to .xplane.pb profiles")
        return Resolved(CHROME_TRACE, tuple(timelines),
                        "loaded %d timeline files as steps 0..%d"
                        % (len(timelines), len(timelines) - 1))
    raise LoadError("--profile_path %s: a directory with no .xplane.pb files, no "
                    "plugins/profile/<run>/ directories, no timeline .json files and no "
                    ".prof files" % path)


def _runs_under(path: str) -> dict[str, str]:
    """Run name -> run directory: ``path`` itself may hold runs, or plugins/profile/ may
    (directly below ``path`` or one level down, e.g. Keras's ``train/``)."""
    candidates = [path, os.path.join(path, _RUNS_DIR)]
    try:
        subdirs = sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))
    except OSError:
        subdirs = []
    candidates += [os.path.join(path, d, _RUNS_DIR) for d in subdirs]
    runs: dict[str, str] = {}
    for base in candidates:
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            run_dir = os.path.join(base, name)
            if os.path.isdir(run_dir) and _xplanes_in(run_dir):
                label = os.path.relpath(run_dir, path) if base != path else name
                runs.setdefault(label, run_dir)
    return runs


def _pick_run(path: str, runs: dict[str, str], run: Optional[str],
              hosts: Sequence[str]) -> Resolved:
    # Run directories are named by their start time (YYYY_MM_DD_HH_MM_SS):
    # the newest sorts last; the modification time breaks ties between layouts.
    def age(label: str) -> tuple[str, float]:
        return (os.path.basename(label), os.path.getmtime(runs[label]))

    ordered = sorted(runs, key=age)
    if run:
        matches = [r for r in ordered if r == run or os.path.basename(r) == run]
        if not matches:
            raise UsageError("--run %s: no such run in %s; runs: %s"
                             % (run, path, ", ".join(ordered)))
        chosen, how = matches[-1], "run"
    else:
        chosen, how = ordered[-1], ("newest of %d runs" % len(ordered)
                                    if len(ordered) > 1 else "the only run")
    files = _pick_hosts(tuple(_xplanes_in(runs[chosen])), hosts)
    note = "profile run %s (%s)" % (chosen, how)
    if len(ordered) > 1 and not run:
        note += "; pick another with --run=NAME"
    return Resolved(XPLANE, files, note)


def _pick_hosts(files: tuple[str, ...], hosts: Sequence[str]) -> tuple[str, ...]:
    if not hosts:
        return files
    known = [host_name(f) for f in files]
    missing = [h for h in hosts if h not in known]
    if missing:
        raise UsageError("--host %s: not in this run; hosts: %s"
                         % (",".join(missing), ", ".join(known)))
    return tuple(f for f, h in zip(files, known) if h in hosts)


def _pprofs_in(path: str) -> list[str]:
    """A directory's pprof files (``*.prof``), in step-number order."""
    try:
        names = [n for n in os.listdir(path) if is_pprof_name(n)]
    except OSError:
        return []

    def step(name: str) -> tuple[int, str]:
        m = _STEP_IN_NAME.search(name.split(".")[0])
        return (int(m.group(1)) if m else -1, name)

    return [os.path.join(path, n) for n in sorted(names, key=step)]


def _is_timeline_name(low: str) -> bool:
    return low.endswith(JSON_SUFFIXES) and (
        low.startswith("timeline") or low.endswith((".trace.json", ".trace.json.gz")))


def _timelines_in(path: str) -> list[str]:
    """The timelines of a directory (``timeline*.json``, ``*.trace.json``, either
    possibly gzipped), in step-number order."""
    try:
        names = [n for n in os.listdir(path) if _is_timeline_name(n.lower())]
    except OSError:
        return []

    def step(name: str) -> tuple[int, str]:
        stem = name.rsplit(".json", 1)[0]
        m = _STEP_IN_NAME.search(stem)
        return (int(m.group(1)) if m else -1, name)

    return [os.path.join(path, n) for n in sorted(names, key=step)]
