"""The profile loader's summing schema agrees with reading every record one by one."""

from __future__ import annotations

import pytest

from tfprof_shell.load.profile import load_profile
from tfprof_shell.model import stats as S
from tfprof_shell.model.node import ZERO_VALUES, LazyExecs
from tfprof_shell.proto import tfprof_log_pb2

from broken.wirebytes import field_bytes
from conftest import sample


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _expected_stats(node, step: int) -> tuple[int, ...]:
    """Statistics recomputed from the node's ExecStep records (the slow, exact route)."""
    execs = node.execs
    if not execs:
        values = ZERO_VALUES
    elif step >= 0:
        values = execs[step].values() if step in execs else ZERO_VALUES
    else:
        sums = [sum(col) for col in zip(*(rec.values() for rec in execs.values()))]
        values = tuple(_c_div(v, len(execs)) for v in sums)
    flops = node.float_ops * values[0] if execs else node.float_ops
    return values + (node.parameters, flops)


@pytest.mark.parametrize("name", ["tiny_mlp", "convnet", "while_rnn", "synthetic_gpu"])
def test_summed_statistics_match_the_records(name: str) -> None:
    lazy_model = load_profile(sample(name, "profile"))
    exact_model = load_profile(sample(name, "profile"))
    deferred = 0
    for node in lazy_model.sorted_nodes():
        deferred += node._lazy is not None
        exact = exact_model.nodes[node.name]
        for step in [-1, *lazy_model.steps]:
            assert node.stats(step) == _expected_stats(exact, step), (node.name, step)
    assert deferred > 0


def _profile_bytes(*node_parts: bytes) -> bytes:
    """A ProfileProto whose node 1 is the concatenation (protobuf merge) of ``node_parts``."""
    node = tfprof_log_pb2.ProfileNode()
    node.MergeFromString(b"".join(node_parts))
    assert len(node.execs) >= 1
    # nodes map entry {key: 1, value: the parts}, written by hand to keep duplicates.
    entry = b"\x08\x01" + field_bytes(2, b"".join(node_parts))
    return field_bytes(1, entry) + b"\x18\x00"  # steps: [0]


def _node(step: int, run_count: int, times: list[list[int]], requested: int) -> bytes:
    node = tfprof_log_pb2.ProfileNode(name="a/b", op="MatMul", id=1)
    node.op_types.append("MatMul")
    node.canonical_device = node.host_device = "/job:localhost/replica:0/task:0/device:CPU:0"
    ex = node.execs[step]
    ex.run_count = run_count
    ex.all_start_micros = 100
    for values in times:
        ex.cpu_execs[node.canonical_device].times.add().int64_values.extend(values)
    ex.memory_execs.add(requested_bytes=requested)
    return node.SerializeToString()


def _load(tmp_path, data: bytes):
    path = tmp_path / "profile"
    path.write_bytes(data)
    return load_profile(str(path)).nodes["a/b"]


def test_a_step_listed_twice_keeps_the_last_record(tmp_path) -> None:
    node = _load(tmp_path, _profile_bytes(_node(0, 1, [[100, 7]], 10),
                                          _node(0, 2, [[100, 30]], 40)))
    assert isinstance(node._lazy, LazyExecs)
    assert node.steps_run == (0,)
    assert node.stats(-1)[:S.PARAMS] == (2, 30, 0, 30, 40, 0, 0, 0)
    assert node.stats(0) == node.stats(-1)


def test_a_time_record_that_is_not_a_pair_is_read_record_by_record(tmp_path) -> None:
    node = _load(tmp_path, _profile_bytes(_node(0, 1, [[100, 7], [120]], 10)))
    # The single-value record has no duration: it adds nothing.
    assert node.stats(-1)[S.EXEC] == 7
    assert node.exec_step(0).cpu_execs == {
        "/job:localhost/replica:0/task:0/device:CPU:0": [(100, 7), (120, 0)]}


def test_records_are_built_only_for_the_step_asked(tmp_path) -> None:
    node = _load(tmp_path, _profile_bytes(_node(0, 1, [[100, 7]], 10),
                                          _node(3, 1, [[200, 9]], 10)))
    assert node.stats(3)[S.EXEC] == 9
    assert node._execs == {}
    assert node.exec_step(3).cpu_micros() == 9
    assert set(node._execs) == {3}
    assert set(node.execs) == {0, 3} and node._lazy is None


def test_a_map_entry_without_its_key_is_refused_when_the_inputs_are_read(tmp_path) -> None:
    from tfprof_shell.errors import LoadError

    node = _node(0, 1, [[100, 7]], 10)
    entry_without_key = b"\x10\x05"  # InputsEntry{value: 5}
    bad = node + field_bytes(2, entry_without_key)
    loaded = _load(tmp_path, _profile_bytes(bad))
    assert loaded.stats(0)[S.EXEC] == 7  # views without inputs (scope, op, code) answer
    with pytest.raises(LoadError, match="inputs map entry lacks its key or value"):
        loaded.inputs


def test_inputs_resolve_to_node_names_and_the_last_entry_wins(tmp_path) -> None:
    node = tfprof_log_pb2.ProfileNode.FromString(_node(0, 1, [[100, 7]], 10))
    node.inputs[0] = 1
    node.inputs[1] = 99  # no such node: dropped, as the engine does
    again = tfprof_log_pb2.ProfileNode()
    again.inputs[0] = 1
    loaded = _load(tmp_path, _profile_bytes(node.SerializeToString(),
                                            again.SerializeToString()))
    assert loaded.inputs == {0: "a/b"}
