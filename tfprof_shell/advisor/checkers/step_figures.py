"""The step breakdown the step checkers read, made once per profile, in µs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from ...model import Model
from ...model.intervals import HAS_LAUNCH, HOST_OPS, HostEvent, Intervals
from ...views.step_values import device_values, host_values
from ...views.interval_math import intersect, length, subtract, union
from ...views.steps import StepBreakdown, StepsResult, device_segments, step_breakdowns


@dataclass
class StepFigures:
    """Every step's device (busiest device) and host figures, in µs."""

    result: StepsResult
    intervals: Intervals

    def device(self, s: StepBreakdown) -> Optional[dict[str, Optional[int]]]:
        """The figures of the step's busiest device, None without devices."""
        if not s.devices:
            return None
        name = self.busiest(s)
        return device_values(s.devices[name], self.result.has)

    def busiest(self, s: StepBreakdown) -> str:
        return max(s.devices, key=lambda n: s.devices[n].busy)

    def host(self, s: StepBreakdown) -> dict[str, Optional[int]]:
        return host_values(s.host, self.result.has)

    def host_ops_during(self, s: StepBreakdown, label: str, top: int = 3) -> list[str]:
        """The host ops that ran longest while the busiest device's time was ``label``."""
        return self.host_ops_over(self.device_spans(s, label), top)

    def device_spans(self, s: StepBreakdown, label: str) -> list[tuple[int, int]]:
        """The merged times within step ``s`` when its busiest device's time was
        ``label`` (e.g. "idle: host wait")."""
        name = self.busiest(s)
        events = [e for e in self.intervals.devices if e.step == s.step and e.device == name]
        syncs = [y for y in self.intervals.syncs if y.step == s.step and y.device == name]
        spans = union((a, b) for a, b, what in device_segments(
            events, HAS_LAUNCH in self.intervals.has, syncs) if what == label)
        return intersect(spans, [(s.start, s.end)])

    def host_ops_over(self, spans: list[tuple[int, int]], top: int = 3,
                      kind: str = HOST_OPS) -> list[str]:
        """``name (Nus)`` of the host events of ``kind`` that ran longest within the
        merged ``spans`` (ns), longest first."""
        if not spans:
            return []
        lo, hi = spans[0][0], spans[-1][1]
        time: dict[str, int] = {}
        for e in self.intervals.host:
            if e.kind == kind and e.end > lo and e.start < hi:
                t = length(intersect([(e.start, e.end)], spans))
                if t:
                    time[e.name] = time.get(e.name, 0) + t
        return _top(time, top)

    def host_ops_at(self, instants: list[int], top: int = 3) -> list[str]:
        """``name (N calls)`` of the host ops running at the most of ``instants`` (ns),
        e.g. the launch calls of some device events: where they came from."""
        calls: dict[str, int] = {}
        for e in self.intervals.host:
            if e.kind == HOST_OPS:
                n = sum(1 for t in instants if e.start <= t < e.end)
                if n:
                    calls[e.name] = calls.get(e.name, 0) + n
        best = sorted(calls.items(), key=lambda kv: -kv[1])[:top]
        return ["%s (%d call%s)" % (n, c, "s" if c != 1 else "") for n, c in best]

    def device_names_of(self, kind: str, top: int = 3) -> list[str]:
        """``name (Nus)`` of the device events of ``kind`` in the steps, longest first
        (summed durations)."""
        time: dict[str, int] = {}
        for e in self.intervals.devices:
            if e.kind == kind and e.step is not None:
                time[e.name] = time.get(e.name, 0) + e.end - e.start
        return _top(time, top)

    def host_spans(self, s: StepBreakdown, kind: str) -> list[tuple[int, int]]:
        """The merged host intervals of ``kind`` within step ``s`` (ns)."""
        return intersect(union((e.start, e.end) for e in self.intervals.host
                               if e.kind == kind and e.end > s.start and e.start < s.end),
                         [(s.start, s.end)])


    def python_lines_over(self, spans: list[tuple[int, int]], top: int = 3) -> list[str]:
        """``line (Nus)`` of the program's own Python frames that were innermost (of its
        own frames) during the merged ``spans``, longest first; none without stacks."""
        if not spans or not self.intervals.frames:
            return []
        lo, hi = spans[0][0], spans[-1][1]
        time: dict[str, int] = {}
        for name, own in _innermost(f for f in self.intervals.frames
                                    if f.end > lo and f.start < hi):
            t = length(intersect(own, spans))
            if t:
                time[name] = time.get(name, 0) + t
        return _top(time, top)


def _innermost(frames: Iterable[HostEvent]) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """(name, the parts of the frame not covered by a frame nested in it) per frame,
    frames nesting per thread."""
    by_thread: dict[object, list[HostEvent]] = {}
    for f in frames:
        by_thread.setdefault(f.thread, []).append(f)
    for group in by_thread.values():
        group.sort(key=lambda f: (f.start, -f.end))
        children: list[list[tuple[int, int]]] = [[] for _ in group]
        stack: list[int] = []
        for i, f in enumerate(group):
            while stack and group[stack[-1]].end <= f.start:
                stack.pop()
            if stack:
                children[stack[-1]].append((f.start, f.end))
            stack.append(i)
        for f, inner in zip(group, children):
            yield f.name, subtract([(f.start, f.end)], union(inner))


def _top(time: dict[str, int], top: int) -> list[str]:
    best = sorted(time.items(), key=lambda kv: -kv[1])[:top]
    return ["%s (%dus)" % (n, (t + 500) // 1000) for n, t in best]


def step_figures(model: Model) -> Optional[StepFigures]:
    """The figures of ``model``'s steps, or None when it has no steps."""
    iv = model.intervals()
    cached = getattr(iv, "_advice_figures", None)
    if cached is not None:
        return cached
    if not iv.marks:
        return None
    figures = StepFigures(step_breakdowns(iv), iv)
    setattr(iv, "_advice_figures", figures)
    return figures


def share(part: Optional[int], whole: Optional[int]) -> float:
    """part / whole, 0 when either is unknown or whole is 0."""
    return part / whole if part and whole else 0.0
