"""A corrupt profile may hold negative times or sizes: the scope and code walks
skip the show checks only when no statistic is negative, so such nodes stay
hidden under the default bounds (as in the engine: a total below 0 < min)."""

from __future__ import annotations

from tfprof_shell.model import ExecMemory, ExecStep, Frame, GraphNode, Model, Source
from tfprof_shell.session import Session

CPU = "/job:w/device:cpu:0"


def _node(name: str, micros: int, nbytes: int, trace: list[Frame]) -> GraphNode:
    node = GraphNode(name, "Op", 0)
    node.execs[0] = ExecStep(run_count=1, all_start_micros=1, latest_end_micros=2,
                             cpu_execs={CPU: [(1, micros)]},
                             memory_execs=[ExecMemory(requested_bytes=nbytes)])
    node.trace = trace
    return node


def _session(negative: bool) -> Session:
    top, left, right = (Frame("m.py", n, "f%d" % n, n) for n in (1, 2, 3))
    model = Model(Source("graph", ()))
    for node in (_node("a", 3, 10, [top, left]),
                 _node("a/b", -5 if negative else 5, 4, [top, right]),
                 _node("c", 2, -7 if negative else 7, [right])):
        model.nodes[node.name] = node
    model.steps = [0]
    model.has_trace = True
    return Session(model)


def _shown(session: Session, line: str) -> list[str]:
    rows = session.execute(line).text.split("node name |", 1)[1].splitlines()[1:]
    return [row.strip().split(" ", 1)[0] for row in rows if row.strip()]


def test_negative_totals_are_hidden_by_the_default_bounds() -> None:
    session = _session(negative=True)
    # Every bound applies, selected or not: c's bytes (-7) hide it; a's total
    # time is 3 - 5.
    assert _shown(session, "scope -select micros") == ["_TFProfRoot"]
    # m.py:1 holds a (3) and a/b (-5); m.py:3 under it holds a/b, the top one c.
    assert _shown(session, "code -select micros") == ["_TFProfRoot", "m.py:2:f2"]
    assert _shown(session, "code -min_bytes -100") == ["_TFProfRoot", "m.py:2:f2", "m.py:3:f3"]


def test_without_negative_statistics_every_node_is_shown() -> None:
    session = _session(negative=False)
    assert _shown(session, "scope -select micros") == ["_TFProfRoot", "a", "a/b", "c"]
    assert _shown(session, "code -select micros") == [
        "_TFProfRoot", "m.py:1:f1", "m.py:2:f2", "m.py:3:f3", "m.py:3:f3"]
