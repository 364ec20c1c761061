"""A small JAX training loop that runs for SECONDS (for the live capture tests).

``python jax_loop.py PORT SECONDS``: with PORT > 0 it starts the profiler server
itself (jax.profiler.start_server); with 0 it is an unmodified program
(tfprof record --serve arms it). It prints "training" once the loop runs.
"""

import sys
import time

import jax
import jax.numpy as jnp

port, seconds = int(sys.argv[1]), float(sys.argv[2])
if port:
    server = jax.profiler.start_server(port)

w = jax.random.normal(jax.random.PRNGKey(0), (64, 64))
x = jax.random.normal(jax.random.PRNGKey(1), (32, 64))


@jax.jit
def step(w):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean(jax.nn.relu(x @ w) ** 2))(w)
    return w - 0.01 * grad, loss


w, _ = step(w)
print("training", flush=True)
end = time.monotonic() + seconds
steps = 0
while time.monotonic() < end:
    with jax.profiler.StepTraceAnnotation("train", step_num=steps):
        w, loss = step(w)
        loss.block_until_ready()
    steps += 1
    time.sleep(0.002)
print("steps", steps, flush=True)
