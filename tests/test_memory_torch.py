"""PyTorch memory recorded live (needs PyTorch): each op's bytes is key_averages' self
CPU memory, the peak is the trace's counter, and a leak of a fixed size per step is found.

Run with a Python that has PyTorch and this checkout, e.g.
``TFPROF_TEST_REQUIRE=torch .venv-torch/bin/python -m pytest -q -m torch tests/test_memory_torch.py``.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from conftest import needs

torch = needs("torch")
pytestmark = pytest.mark.torch

from tfprof_shell.load import Inputs, load_model  # noqa: E402
from tfprof_shell.model import stats as S  # noqa: E402
from tfprof_shell.views.memory import memory_result  # noqa: E402

LEAK = 32 * 256 * 4


def _record(path: str, leak: bool):
    """Train a small MLP for 4 profiled steps with memory on; the key_averages table."""
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(32, 64), torch.randint(0, 4, (32,))
    kept = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True,
                 schedule=schedule(wait=1, warmup=1, active=4)) as prof:
        for _ in range(6):
            opt.zero_grad()
            hidden = net[1](net[0](x))
            if leak:
                kept.append(hidden.detach())
            torch.nn.functional.cross_entropy(net[2](hidden), y).backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace(path)
    return {e.key: (e.count, e.self_cpu_memory_usage) for e in prof.key_averages()}


def test_op_bytes_equal_key_averages_and_the_peak_is_the_counter(tmp_path):
    path = str(tmp_path / "trace.pt.trace.json")
    table = _record(path, leak=False)
    model = load_model(Inputs(profile_path=path))
    ours, runs = Counter(), Counter()
    for node in model.nodes.values():
        for step in node.steps_run:
            ours[node.op] += node.stats(step)[S.REQUESTED]
            runs[node.op] += node.stats(step)[S.RUN_COUNT]
    compared = [k for k in table if k in runs]
    assert len(compared) > 10
    assert {k: (runs[k], ours[k]) for k in compared} == {k: table[k] for k in compared}
    with open(path) as fh:
        events = json.load(fh)["traceEvents"]
    counter = max(e["args"]["Total Allocated"] for e in events if e.get("name") == "[memory]")
    (cpu,) = memory_result(model, "op").devices
    assert cpu.peak.nbytes == counter
    assert cpu.suspects == []


def test_a_leak_is_named_by_op_and_line(tmp_path):
    path = str(tmp_path / "trace.pt.trace.json")
    _record(path, leak=True)
    model = load_model(Inputs(profile_path=path))
    (by_op,) = memory_result(model, "op").devices
    assert by_op.slope == pytest.approx(LEAK)
    assert [s.key for s in by_op.suspects] == ["aten::clamp_min"]
    (by_code,) = memory_result(model, "code").devices
    assert [s.key.split(":")[0] for s in by_code.suspects] == ["test_memory_torch.py"]
