"""ExecRows: executions kept as rows give every node what add_exec gives it, row by row."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tfprof_shell.load.records import (CPU_DEVICE, GPU_DEVICE, GPU_STREAM_ALL, ExecRows,
                                       add_exec)
from tfprof_shell.model import Model, Source

DEVICES = [CPU_DEVICE % 0, GPU_DEVICE % (0, 0), GPU_DEVICE % (0, 1), GPU_STREAM_ALL % (0, 0),
           "/job:localhost/replica:0/task:0/device:gpu:0/stream:7"]
rows = st.lists(st.tuples(st.integers(0, 4), st.sampled_from(DEVICES),
                          st.sampled_from(["a", "b", "b/c", "d"]),
                          st.sampled_from(["aten::mm", "aten::add"]),
                          st.integers(-3, 50), st.integers(0, 9)), max_size=40)


def add(kept, rows):
    """``rows`` (step, device, name, op, start, duration) given node by node, nodes in the
    order of their first row, as a loader gives them."""
    by_name = {}
    for step, device, name, op, start, dur in rows:
        by_name.setdefault(name, (op, []))[1].append((step, device, start, dur))
    for name, (op, node_rows) in by_name.items():
        kept.add_node(name, op, node_rows)


def facts(model):
    out = {"steps": list(model.steps)}
    for name, node in model.nodes.items():
        # the statistics first: read from the deferred rows, before execs makes records
        stats = [node.stats(s) for s in [-1] + list(model.steps)]
        execs = node.execs
        out[name] = (node.id, node.op, sorted(node.op_types), node.canonical_device,
                     node.host_device, list(execs), [execs[s] for s in execs],
                     [node.exec_step(s).values() for s in execs], stats)
    return out


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(rows=rows, before=rows, split=st.integers(0, 40))
def test_rows_make_the_records_add_exec_makes(rows, before, split):
    """Also with nodes that hold records already (added by add_exec first), and rows
    given in two batches (two files)."""
    eager, lazy = Model(Source("test")), Model(Source("test"))
    for model in (eager, lazy):
        for step, device, name, op, start, dur in before:
            add_exec(model, step, device, name, op, start, dur)
    for step, device, name, op, start, dur in rows:
        add_exec(eager, step, device, name, op, start, dur)
    kept = ExecRows(lazy)
    add(kept, rows[:split])
    add(kept, rows[split:])
    kept.finish()
    assert facts(lazy) == facts(eager)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(rows=rows)
def test_deferred_totals_are_the_sum_of_the_step_records(rows):
    model = Model(Source("test"))
    kept = ExecRows(model)
    add(kept, rows)
    kept.finish()
    for node in model.nodes.values():
        lazy = node._lazy  # noqa: SLF001 - the totals the default view reads
        if lazy is None:
            continue
        records = [kept.step_record(lazy.key, s).values() for s in lazy.steps]
        assert lazy.totals == tuple(map(sum, zip(*records)))
        assert kept.steps_values(lazy.key, lazy.steps) == records
