"""GraphNode's statistics cache and the scope view's lean ScopeNode."""

from __future__ import annotations

import pytest

from tfprof_shell.model import ExecMemory, ExecStep, GraphNode, Model, ScopeNode, Source
from tfprof_shell.model import node as node_module
from tfprof_shell.model.stats import CPU, EXEC, REQUESTED, RUN_COUNT, ZERO_SELF
from tfprof_shell.session import Session
from tfprof_shell.views.base import SCOPE_PARENT

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


def test_a_scope_node_sets_every_field_and_never_ran() -> None:
    scope = ScopeNode("a/b", SCOPE_PARENT)
    plain = GraphNode("a/b", SCOPE_PARENT)
    for slot in GraphNode.__slots__:
        assert getattr(scope, slot) == getattr(plain, slot), slot
    assert scope.stats(-1) == scope.stats(3) == ZERO_SELF
    assert not scope.has_run() and scope.exec_step(0) is None
    assert scope.parameters == 0 and scope.input_shapes({}) == {}


@pytest.mark.parametrize("line", [
    "scope -select micros,params,bytes,device,op_types,occurrence,input_shapes",
    "scope -output timeline:outfile={out}/t.json -step 0",
    "scope -account_type_regexes Op -account_displayed_op_only -order_by name -step 0",
    "scope -output json:outfile={out}/s.json",
])
def test_no_command_writes_what_scope_nodes_share(tmp_path, line) -> None:
    model = Model(Source("graph", ()))
    for name, steps in (("a/b/c", {0: (3, 10)}), ("a/d", {0: (4, 20)}), ("e/f/g", {})):
        model.nodes[name] = _node(name, steps)
    model.steps = [0]
    Session(model).execute(line.format(out=tmp_path))
    assert node_module._NO_ITEMS == {} and node_module._NO_DIMS == []
    assert node_module._TYPES.get(SCOPE_PARENT, {SCOPE_PARENT}) == {SCOPE_PARENT}


def test_the_scope_tree_does_not_depend_on_the_order_nodes_were_loaded() -> None:
    """A scope made as a parent before its own graph node came takes that node."""
    names = ["a/b/c", "a", "a/b-c", "a/b", "e/f/g", "a/b/c/d", "e"]
    outputs = set()
    for order in (names, sorted(names), sorted(names, reverse=True)):
        model = Model(Source("graph", ()))
        for name in order:
            model.nodes[name] = _node(name, {0: (len(name), 7)})
        model.steps = [0]
        text = Session(model).execute("scope -select micros,op_types -order_by name").text
        assert "_kTFScopeParent" in text and " e/f (" in text  # e/f has no node of its own
        outputs.add(text)
    assert len(outputs) == 1
