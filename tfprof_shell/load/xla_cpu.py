"""XLA programs run on the CPU: thunk events on host threads -> HLO instructions.

On CPU, XLA (JAX, ``jax.jit``, the PjRt CPU client) runs a compiled program
as a sequence of *thunks*, one per HLO instruction of its entry computation
(a fusion, a ``dot``, a custom call, a ``while`` ...), on host threads. The
profiler writes no device plane for them: everything is on ``/host:CPU``.
What a profile of jax 0.10.2 on CPU holds (``sample_profiles/jax_cpu``):

* lines ``tf_XLAPjRtCpuClient/<id>`` (generally ``tf_XLA*``: XLA's thread
  pools), one per worker thread that ran programs;
* on them, for each program run: ``ThreadpoolListener::StartRegion`` (a flow
  from the launching thread's ``ThreadpoolListener::Record``), then
  ``ThunkExecutor::Execute`` spanning the run, inside it one event per thunk
  named by its HLO instruction (``ynn_fusion.4``, ``dot.2``,
  ``broadcast_maximum_fusion``) with stats ``hlo_op`` and ``hlo_module``
  (references to stat names), ``program_id``, ``run_id``,
  ``device_ordinal``, each followed by a short ``end: <instruction>`` event
  (the thunk's completion, a flow consumer with no HLO stats), and
  ``ThunkExecutor::Execute (wait for completion)``;
* thunks that run other thunks (``while``, ``call``, ``conditional``) hold
  their inner thunks' events (inside a nested ``ThunkExecutor::Execute``)
  within their own span on the same thread; an inner thunk's ``hlo_op`` is
  its own instruction's name (``jax.lax.fori_loop``: ``while.13``, inside it
  ``ynn_fusion``, ``wrapped_tanh`` ... once per iteration);
* an instruction's ``op_name`` is the JAX op path
  (``jit(encoder)/while/body/closed_call/dot_general``); where XLA merged the
  instructions of two ops it joins both paths with ``;``, kept as given;
* the ``python`` line holds the step markers (``StepTraceAnnotation``: a
  ``step_num`` stat) and the dispatch (``PjitFunction(f)``,
  ``CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice``); the
  programs are in ``/host:metadata`` as for GPUs (see :mod:`.hlo`);
* TensorFlow 2.21's XLA on CPU (``jit_compile=True``) writes the same thunk
  events on the thread that runs the cluster (``python`` for a jitted
  function called eagerly, ``tf_Compute/<id>`` inside a graph), within
  ``CpuExecutable::ExecuteAsyncOnStream``, with ``run_id`` -1; its program
  has no ``program_id`` stat (it is keyed by its metadata id, which the
  thunks' ``program_id`` names).

A thunk event is one execution of its HLO instruction, accounted exactly as
a GPU kernel of that instruction is (:func:`.xla.map_kernel`): to the
framework op of the instruction's metadata, else to ``<module>/<hlo op>``.
Its time is its *self* time: its duration less the thunk events directly
inside it on the same thread, so the times of all thunks add up to the time
the host threads spent in XLA thunks, each nanosecond once. A TensorFlow op
event (``name:Type``) that holds thunks on its thread (an XLA cluster run
inline) loses their time from its own, for the same reason. A thunk is in
the step whose marker is open when it starts; thunks outside every marker
are left out (with a note), as host ops are. The thunks of one program run
(one ``run_id``; TensorFlow's XLA writes -1 for every run, which is none)
share the step open when the run's first thunk starts. JAX dispatches
asynchronously: a step marker that does not wait for the step's results may
end before its programs run. The ``ThreadpoolListener`` flows between the
dispatching thread and the XLA threads do not tell which step launched a
run (a region launched once goes on to run the runs queued after it), so
they are not used.

Events with no ``hlo_op`` stat on a ``tf_XLA*`` line count as thunks only
if their name is an instruction of a stored program (the program of the
line's previous thunk first, else the only program that has one of that
name); ``end: ...`` events, ``A::B`` runtime events and names no program
has are not XLA work.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any, Callable, NamedTuple, Optional

from .hlo import Programs
from .pystack import subtract_nested
from .xla import UNRESOLVED, KernelOp, map_kernel

#: Host lines of XLA's own thread pools.
XLA_LINE_PREFIX = "tf_XLA"
#: Stats of a thunk event.
_THUNK_STATS = ("hlo_op", "hlo_module", "program_id", "run_id")


class Thunk(NamedTuple):
    """One thunk execution: times in ps on the host's axis, what ran, and where."""

    start: int
    self_ps: int
    #: its end, and whether no other thunk holds it (on its line)
    end: int
    outermost: bool
    hlo_op: str
    module: str
    #: None where the event (and its line) named no program
    program_id: Optional[int]
    #: the event's own name (its HLO instruction, as XLA spelled it)
    name: str
    #: (plane index, line index)
    line: tuple[int, int]
    #: the program run it belongs to (None: not known)
    run_id: Optional[int] = None


def _value(st: Any, names: dict[int, str]) -> Any:
    which = st.WhichOneof("value")
    if which == "ref_value":
        return names.get(st.ref_value, "")
    if which == "bytes_value":
        return st.bytes_value.decode("utf-8", "replace")
    return getattr(st, which) if which else None


def _program_id(value: Any) -> Optional[int]:
    try:
        return int(value) if value is not None and value != "" else None
    except (TypeError, ValueError):
        return None


def _run_id(value: Any) -> Optional[int]:
    """A usable ``run_id`` (TensorFlow's XLA runs all write -1: not one)."""
    found = _program_id(value)
    return found if found is not None and found not in (-1, 0) else None


def step_times(thunks: list[Thunk]) -> list[int]:
    """The time whose step marker each thunk counts for: the start of the first
    thunk of its program run (one ``run_id`` of one program), so that a run is
    never split between steps; a thunk of no known run, its own start."""
    first: dict[tuple[int, Optional[int]], int] = {}
    for t in thunks:
        if t.run_id is not None:
            key = (t.run_id, t.program_id)
            known = first.get(key)
            if known is None or t.start < known:
                first[key] = t.start
    return [t.start if t.run_id is None else first[(t.run_id, t.program_id)]
            for t in thunks]


def may_hold_thunks(plane: Any) -> bool:
    """Whether a host plane can hold thunk events (cheap: metadata and line names)."""
    return (any(md.name == "hlo_op" for md in plane.stat_metadata.values())
            or any(line.name.startswith(XLA_LINE_PREFIX) for line in plane.lines))


def read_thunks(plane: Any, p: int, shift_ns: int,
                stat_counts: Callable[[int], Optional[dict[int, int]]],
                programs: Callable[[], Programs],
                skip_lines: frozenset[str] = frozenset()) -> list[Thunk]:
    """The thunk executions of host plane ``p`` (its index in the XSpace), self
    times computed. ``shift_ns`` moves line timestamps onto the host's axis;
    ``stat_counts(line index)`` is how many stats of each metadata id the
    line's events have, if known (lines known to have no ``hlo_op`` stat and
    not named ``tf_XLA*`` are not read); ``programs()`` gives the stored
    programs (asked only for events with no HLO stats). Lines named in
    ``skip_lines`` (derived from others) are not read."""
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    hlo_ids = {k for k, v in names.items() if v == "hlo_op"}
    wanted = {k: v for k, v in names.items() if v in _THUNK_STATS}
    md_stats: dict[int, dict[str, Any]] = {}
    for md_id, md in plane.event_metadata.items():
        found = {wanted[st.metadata_id]: _value(st, names) for st in md.stats
                 if st.metadata_id in wanted}
        if found:
            md_stats[md_id] = found
    hlo_mds = {k for k, st in md_stats.items() if st.get("hlo_op")}
    # Events not named like an instruction (``end: x``, ``A::B``) are never read.
    event_names = {k: md.name for k, md in plane.event_metadata.items()
                   if k in hlo_mds or _may_be_instruction(md.name)}
    by_name: Optional[_ByName] = None
    out: list[Thunk] = []
    for li, xline in enumerate(plane.lines):
        if xline.name in skip_lines:
            continue
        xla_line = xline.name.startswith(XLA_LINE_PREFIX)
        if not xla_line and not hlo_mds:
            counts = stat_counts(li)
            if counts is not None and not any(counts.get(k) for k in hlo_ids):
                continue
            if not hlo_ids:
                continue
        base = (shift_ns + xline.timestamp_ns) * 1000
        rows: list[list[Any]] = []
        last: tuple[str, Optional[int]] = ("", None)
        for ev in xline.events:
            event_name = event_names.get(ev.metadata_id)
            if event_name is None:
                continue
            st = md_stats.get(ev.metadata_id)
            if ev.stats:
                own = {wanted[s.metadata_id]: _value(s, names) for s in ev.stats
                       if s.metadata_id in wanted}
                if own:
                    st = {**st, **own} if st else own
            if st and st.get("hlo_op"):
                module = str(st.get("hlo_module") or "")
                pid = _program_id(st.get("program_id"))
                hlo_op = str(st["hlo_op"])
                last = (module, pid)
            elif xla_line:
                if by_name is None:
                    by_name = _ByName(programs())
                pid = by_name.program_of(event_name, last[1])
                if pid is None:
                    continue
                module, hlo_op = (last[0] if pid == last[1] else ""), event_name
            else:
                continue
            run_id = _run_id(st.get("run_id") if st else None)
            start = base + ev.offset_ps
            facts = (hlo_op, module, pid, event_name, run_id)
            rows.append([start, start + ev.duration_ps, facts, None, ev.duration_ps])
        subtract_nested(rows)
        reach = -1  # the latest end so far: a thunk ending by then is inside another
        for start, end, facts, _, self_ps in rows:
            hlo_op, module, pid, event_name, run_id = facts
            outer = not (start < reach and end <= reach)
            reach = max(reach, end)
            out.append(Thunk(start, self_ps, end, outer, hlo_op, module, pid,
                             event_name or hlo_op, (p, li), run_id))
    return out


def take_from_enclosing(starts: list[int], ends: list[int], selfs: list[int],
                        spans: list[tuple[int, int]]) -> None:
    """Take each span's length off ``selfs`` of the innermost interval that holds it
    (``starts``/``ends``: intervals in start order, nested or disjoint, as the
    TF-op events of one thread): thunks that ran inside a TF op are XLA's time,
    not the op's own."""
    if not starts or not spans:
        return
    reach, top = [], -1
    for end in ends:
        top = max(top, end)
        reach.append(top)
    for start, end in spans:
        i = bisect_right(starts, start) - 1
        while i >= 0 and reach[i] >= end:
            if ends[i] >= end:
                selfs[i] -= end - start
                break
            i -= 1


_INSTRUCTION_NAME = re.compile(r"[^\s:]+")


def _may_be_instruction(name: str) -> bool:
    """Whether an event name can be an HLO instruction's (not XLA's runtime events:
    ``end: x``, ``ThunkExecutor::Execute``; HLO names hold no blank and no colon)."""
    return _INSTRUCTION_NAME.fullmatch(name) is not None


class _ByName:
    """Which stored program has an instruction of a given name."""

    def __init__(self, programs: Programs) -> None:
        self.programs = programs
        self._owners: dict[str, list[int]] = {}
        for pid in programs.ids():
            program = programs.program(pid)
            for name in (program.instruction_names() if program is not None else ()):
                self._owners.setdefault(name, []).append(pid)

    def program_of(self, name: str, hint: Optional[int]) -> Optional[int]:
        """The program of instruction ``name``: ``hint`` if it has one, else the only
        program that does; -1 if several do and none is ``hint``; None if none."""
        owners = self._owners.get(name)
        if not owners:
            return None
        if hint in owners:
            return hint
        return owners[0] if len(owners) == 1 else -1


def map_thunk(programs: Programs, thunk: Thunk) -> KernelOp:
    """Where a thunk execution is accounted: as :func:`.xla.map_kernel` accounts a
    GPU kernel of its HLO op, except that an HLO op the programs do not describe
    is node ``<module>/<hlo op>``, typed by the op's name less a ``.N`` suffix
    (``ynn_fusion.4`` -> ``ynn_fusion``): a thunk is no kernel inside the op."""
    pid = thunk.program_id if thunk.program_id is not None else -1
    if programs.program(pid) is None and thunk.module:
        pid = _program_named(programs, thunk.module, pid)
    op = map_kernel(programs, thunk.module, pid, thunk.hlo_op, thunk.name)
    if op.kind != UNRESOLVED:
        return op
    module = thunk.module or "XlaModule"
    head, dot, suffix = op.hlo_op.rpartition(".")
    op_type = head if dot and head and suffix.isdigit() else op.hlo_op
    return KernelOp("%s/%s" % (module, op.hlo_op), op_type, op.hlo_op, UNRESOLVED)


def _program_named(programs: Programs, module: str, default: int) -> int:
    """The id of the only stored program called ``module``, else ``default``."""
    found = []
    for pid in programs.ids():
        program = programs.program(pid)
        if program is not None and program.name == module:
            found.append(pid)
    return found[0] if len(found) == 1 else default
