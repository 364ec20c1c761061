"""A timeline prepared for critical paths: what HTA's graph of any window needs, once.

Host events per thread in call-stack order (start, the longer first) with the
flags the walk reads; each device event's launch call; each cuda_sync record's
call; which device events got a launch delay by HTA's queue test; and the
kernels event records and stream waits point to.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from ..model.path_input import ANNOTATION, DATA, DEVICE, RUNTIME, SYNC, PathInput

# A host event's flags in the walk: a node; a runtime call; data loading; blocking.
NODE, IS_RUNTIME, IS_DATA, BLOCKING = 1, 2, 4, 8
_RECORD = "cudaEventRecord"
_WAIT = "cudaStreamWaitEvent"


def _key(value: Any) -> tuple[int, Any]:
    """A sort key for pids and tids, which may be numbers or names."""
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


class Timeline:
    """One PathInput, prepared once for any number of windows: host events in start
    order, each device event's launch, the launch-queue test, and the sync joins."""

    def __init__(self, inp: PathInput) -> None:
        self.input = inp
        ev = self.events = inp.events
        # per thread, its host events sorted by start, the longer first (HTA's
        # call-stack order), with their flags; the threads in (pid, tid) order
        by_thread: dict[tuple[Any, Any], list[tuple[int, int, int, int]]] = {}
        blocking = inp.blocking_names
        runtime_of: dict[Any, int] = {}
        linked: list[int] = []  # device events and sync records
        flag_of = (NODE, NODE | IS_RUNTIME, NODE | IS_DATA, 0)  # by kind
        rows: list[tuple[int, int, int, int]] = []
        pid = tid = None  # the thread of ``rows`` (events come in runs of one thread)
        for i, e in enumerate(ev):
            kind = e[2]
            if kind > ANNOTATION:
                linked.append(i)
                continue
            start, end = e[0], e[1]
            if kind == RUNTIME:
                if e[9] is not None:
                    runtime_of[e[9]] = i
                if end <= start:
                    continue
                flag = NODE | IS_RUNTIME | (BLOCKING if e[3] in blocking else 0)
            elif end <= start:
                continue
            else:
                flag = flag_of[kind]
            if e[6] != tid or e[5] != pid or not rows:
                pid, tid = e[5], e[6]
                got = by_thread.get((pid, tid))
                if got is None:
                    got = by_thread[(pid, tid)] = []
                rows = got
            rows.append((start, start - end, i, flag))
        #: per thread: its events' starts, and its events as (start, start - end,
        #: index, flags (NODE, ...)), in that order
        self.threads: list[tuple[list[int], list[tuple[int, int, int, int]]]] = []
        for key in sorted(by_thread, key=lambda k: (_key(k[0]), _key(k[1]))):
            rows = by_thread[key]
            rows.sort()
            self.threads.append(([r[0] for r in rows], rows))
        #: runtime call -> the device events it launched, in start order
        self.launched: dict[int, list[int]] = {}
        #: runtime call -> the cuda_sync records of it
        self.syncs: dict[int, list[int]] = {}
        #: device event -> its launch call; cuda_sync record -> its sync call
        self.launch_of: dict[int, int] = {}
        self.call_of_sync: dict[int, int] = {}
        #: runtime call -> what a window's device walk sorts: (start, 0, device event)
        #: of the work it launched, (end, 1, record) of its cuda_sync records
        self.linked_items: dict[int, list[tuple[int, int, int]]] = {}
        launched, syncs, items_of = self.launched, self.syncs, self.linked_items
        for i in linked:
            e = ev[i]
            r = runtime_of.get(e[9]) if e[9] is not None else None
            if r is None:
                continue
            if e[2] == DEVICE:
                got = launched.get(r)
                if got is None:
                    launched[r] = [i]
                else:
                    got.append(i)
                self.launch_of[i] = r
                item = (e[0], 0, i)
            else:
                got = syncs.get(r)
                if got is None:
                    syncs[r] = [i]
                else:
                    got.append(i)
                self.call_of_sync[i] = r
                item = (e[1], 1, i)
            got = items_of.get(r)
            if got is None:
                items_of[r] = [item]
            else:
                got.append(item)
        for devs in launched.values():
            if len(devs) > 1:
                devs.sort(key=lambda d: ev[d][0])
        #: device event name -> what bounds its time (kept as windows find them)
        self.end_bound: dict[Any, int] = {}
        self.launch_ok = self._queue_test()
        self.record_src, self.wait_dest = self._sync_joins(runtime_of, linked)

    def stream(self, d: int) -> tuple[Any, Any]:
        e = self.events[d]
        return (e[5], e[10])

    def _queue_test(self) -> set[int]:
        """The device events whose stream had nothing queued at their launch and
        nothing else queued until they started (HTA's queue length 1, then 0)."""
        ev, names = self.events, self.input.launch_names
        changes: dict[tuple[Any, Any], list[tuple[int, int, int]]] = {}
        one_to_many = self.input.one_to_many
        for r, devs in self.launched.items():
            call = ev[r]
            if call[3] not in names:
                continue
            for d in devs[:1] if one_to_many else devs:
                e = ev[d]
                key = (e[5], e[10])  # its stream
                rows = changes.get(key)
                if rows is None:
                    rows = changes[key] = []
                rows += ((call[0], 1, -1 - d), (e[0], 0, d))  # the launch: +1; the start: -1
        ok: set[int] = set()
        for rows in changes.values():
            rows.sort()
            queued = 0
            at_launch: dict[int, int] = {}
            for _, up, who in rows:
                if up:
                    queued += 1
                    at_launch[-1 - who] = queued
                else:
                    queued -= 1
                    if queued == 0 and at_launch.get(who) == 1:
                        ok.add(who)
        return ok

    def _sync_joins(self, runtime_of: dict[Any, int], linked: list[int]
                    ) -> tuple[dict[Any, int], dict[int, int]]:
        """(record correlation -> the device event launched last before it on the
        recorded stream; Stream Wait Event record -> the device event launched next
        after the wait call, by its thread, on the waiting stream)."""
        ev = self.events
        recorded: dict[Any, tuple[Any, Any]] = {}
        waits = []
        for i in linked:  # the device events and sync records
            e = ev[i]
            if e[2] == SYNC and e[12] is not None:
                on_stream, record = e[12]
                if on_stream is not None and record is not None and on_stream != -1:
                    recorded.setdefault(record, (e[5], on_stream))
                if e[3] == "Stream Wait Event":
                    waits.append(i)
        if not recorded and not waits:
            return {}, {}
        # launches per (gpu, stream), in start order: (start, launch, its last device event)
        launches: dict[tuple[Any, Any], list[tuple[int, int, int]]] = {}
        by_thread: dict[tuple[Any, Any, Any, Any], list[tuple[int, int, int]]] = {}
        names = self.input.launch_names
        for r, devs in self.launched.items():
            call = ev[r]
            if call[3] not in names:
                continue
            key = self.stream(devs[-1])
            launches.setdefault(key, []).append((call[0], r, devs[-1]))
            by_thread.setdefault((call[5], call[6]) + key, []).append((call[0], r, devs[0]))
        for rows in launches.values():
            rows.sort()
        for rows in by_thread.values():
            rows.sort()
        record_src: dict[Any, int] = {}
        for r_corr, key in recorded.items():
            r = runtime_of.get(r_corr)
            rows = launches.get(key)
            if r is None or ev[r][3] != _RECORD or not rows:
                continue
            k = bisect_right(rows, (ev[r][0], 1 << 62, 0)) - 1
            if k >= 0:
                record_src[r_corr] = rows[k][2]
        wait_dest: dict[int, int] = {}
        for s in waits:
            call = runtime_of.get(ev[s][9])
            if call is None or ev[call][3] != _WAIT:
                continue
            c = ev[call]
            rows = by_thread.get((c[5], c[6], ev[s][5], ev[s][10]))
            if rows:
                k = bisect_left(rows, (c[0], -1, -1))
                if k < len(rows):
                    wait_dest[s] = rows[k][2]
        return record_src, wait_dest
