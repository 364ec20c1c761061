#!/usr/bin/env python3
"""PyTorch and JAX training loops for bench/record_overhead.py; prints timings as JSON.

``framework_workload.py KIND STEPS``: ``torch`` and ``jax`` train a 3-layer MLP
(784-512-512-10, batch 128) for STEPS steps (a ``torch.optim.SGD`` loop; a
``jax.jit`` step); ``torch_tiny`` and ``jax_tiny`` make STEPS calls of a
one-op step (an SGD update of one number; a jitted increment), so the cost of
watching each call shows. The loop's wall and CPU time are measured inside
the program, so the framework's start-up is left out.

``framework_workload.py per_call FRAMEWORK BATCHES`` times one watched call
in one process, wrapped and unwrapped taking turns (the fastest of BATCHES
batches of 100 calls): an optimizer update with and without the recorder's
step hook, a jitted call through the recorder's proxy and directly.
``framework_workload.py import FRAMEWORK`` prints how long importing it took,
and how long the recorder then took to arm itself for it (``hooks.imported``:
loading the recorder, registering its hooks and patches).
"""

import json
import os
import sys
import tempfile
import time

BATCH, SIZES = 128, (784, 512, 512, 10)


def torch_loop(steps):
    import torch
    from torch import nn

    torch.manual_seed(0)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(SIZES, SIZES[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.rand(BATCH, SIZES[0]), torch.randint(0, 10, (BATCH,))
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return time.perf_counter() - t0, time.process_time() - c0


def torch_tiny(steps):
    import torch

    p = torch.nn.Parameter(torch.zeros(1))
    p.grad = torch.ones(1)
    opt = torch.optim.SGD([p], lr=0.01)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        opt.step()
    return time.perf_counter() - t0, time.process_time() - c0


def _mlp_params(jax):
    keys = jax.random.split(jax.random.PRNGKey(0), len(SIZES) - 1)
    return [jax.random.normal(k, (a, b)) * 0.05 for k, a, b in zip(keys, SIZES, SIZES[1:])]


def jax_loop(steps):
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        h = x
        for i, w in enumerate(params):
            h = h @ w
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(h), y[:, None], axis=1))

    @jax.jit
    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return [p - 0.01 * g for p, g in zip(params, grads)]

    params = _mlp_params(jax)
    x = jax.random.uniform(jax.random.PRNGKey(1), (BATCH, SIZES[0]))
    y = jax.random.randint(jax.random.PRNGKey(2), (BATCH,), 0, 10)
    jax.block_until_ready(step(params, x, y))  # compile outside the loop
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        params = step(params, x, y)
    jax.block_until_ready(params)
    return time.perf_counter() - t0, time.process_time() - c0


def jax_tiny(steps):
    import jax
    import jax.numpy as jnp

    step = jax.jit(lambda v: v + 1)
    v = step(jnp.zeros(()))
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        v = step(v)
    v.block_until_ready()
    return time.perf_counter() - t0, time.process_time() - c0


def _recording():
    from tfprof_shell.record.process import ProcessRecording
    from tfprof_shell.record.settings import Settings

    return ProcessRecording(Settings(dir=tempfile.mkdtemp(), warmup=10 ** 9))


def _fastest(calls, batches):
    """{name: fastest seconds per call} over ``batches`` batches of 100 calls, taking turns."""
    best = {name: float("inf") for name in calls}
    for _ in range(batches):
        for name, call in calls.items():
            t0 = time.perf_counter()
            for _ in range(100):
                call()
            best[name] = min(best[name], (time.perf_counter() - t0) / 100)
    return best


def per_call(framework, batches):
    """Seconds per call of a one-op step, watched and not."""
    if framework == "torch":
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        from tfprof_shell.record.pytorch import TorchRecorder

        p = torch.nn.Parameter(torch.zeros(1))
        p.grad = torch.ones(1)
        opt = torch.optim.SGD([p], lr=0.01)
        recorder = TorchRecorder(_recording())
        state = {"handle": None}

        def watched():
            if state["handle"] is None:
                state["handle"] = register_optimizer_step_post_hook(recorder.optimizer_stepped)
            opt.step()

        def plain():
            if state["handle"] is not None:
                state["handle"].remove()
                state["handle"] = None
            opt.step()

        best = _fastest({"optimizer step plain": plain, "optimizer step watched": watched},
                        batches)
        return best
    import jax
    import jax.numpy as jnp

    from tfprof_shell.record.jax_trace import JaxRecorder, JitProxy

    recorder = JaxRecorder(_recording())
    from jax._src import core

    recorder.top_level = core.trace_ctx.is_top_level
    jitted = jax.jit(lambda v: v + 1)
    proxy = JitProxy(jitted, recorder)
    v = jitted(jnp.zeros(()))
    v.block_until_ready()
    return _fastest({"jitted call plain": lambda: jitted(v),
                     "jitted call watched": lambda: proxy(v)}, batches)


def import_seconds(framework):
    """(seconds to import ``framework``, CPU seconds the recorder then takes to arm itself)."""
    t0 = time.perf_counter()
    __import__(framework)
    t1 = time.perf_counter()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.environ["TFPROF_RECORD"] = json.dumps({"dir": tempfile.mkdtemp(), "warmup": 10 ** 9})
    c0 = time.thread_time()  # CPU time: what the machine's other load cannot inflate
    from tfprof_shell.record import hooks

    hooks.imported(framework)
    return t1 - t0, time.thread_time() - c0


KINDS = {"torch": torch_loop, "torch_tiny": torch_tiny, "jax": jax_loop, "jax_tiny": jax_tiny}

if __name__ == "__main__":
    if sys.argv[1] == "per_call":
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        print(json.dumps(per_call(sys.argv[2], int(sys.argv[3]))))
    elif sys.argv[1] == "import":
        imported, armed = import_seconds(sys.argv[2])
        print(json.dumps({"import_seconds": imported, "arm_seconds": armed}))
    else:
        wall, cpu = KINDS[sys.argv[1]](int(sys.argv[2]))
        print(json.dumps({"loop_seconds": wall, "loop_cpu_seconds": cpu}))
