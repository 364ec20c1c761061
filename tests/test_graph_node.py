"""GraphNode's statistics cache."""

from __future__ import annotations

from tfprof_shell.model import ExecMemory, ExecStep, GraphNode
from tfprof_shell.model.stats import CPU, EXEC, REQUESTED, RUN_COUNT

DEV = "/job:w/device:cpu:0"


def _record(micros: int, nbytes: int) -> ExecStep:
    return ExecStep(run_count=1, all_start_micros=1, latest_end_micros=2,
                    cpu_execs={DEV: [(1, micros)]},
                    memory_execs=[ExecMemory(requested_bytes=nbytes)])


def _node(name: str, steps: dict[int, tuple[int, int]]) -> GraphNode:
    node = GraphNode(name, "Op", 0)
    node.execs = {step: _record(*figures) for step, figures in steps.items()}
    return node


def test_each_step_gets_its_own_statistics_in_any_order() -> None:
    node = _node("a", {0: (10, 100), 1: (21, 300)})
    asked = [1, -1, 0, 5, -1, 1, 0]
    got = [node.stats(step) for step in asked]
    expected = {0: (10, 100), 1: (21, 300), -1: (15, 200), 5: (0, 0)}
    for step, stats in zip(asked, got):
        assert (stats[EXEC], stats[REQUESTED]) == expected[step], step
        assert stats[CPU] == stats[EXEC]
        assert stats[RUN_COUNT] == (0 if step == 5 else 1)
    assert node.stats(-1) is node.stats(-1)  # cached, whichever step came first


def test_new_records_replace_the_cached_statistics() -> None:
    node = _node("a", {0: (10, 100)})
    assert node.stats(0)[EXEC] == 10 and node.stats(-1)[EXEC] == 10
    node.execs = {0: _record(7, 1)}
    assert node.stats(0)[EXEC] == 7 and node.stats(-1)[EXEC] == 7
