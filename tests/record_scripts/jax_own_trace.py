"""JAX: a jitted loop that runs its own jax.profiler trace twice (loop steps 1-2 and 6-7).

``jax_own_trace.py LOGDIR``: the program's own traces go to LOGDIR/first and LOGDIR/second;
it fails loudly if either start_trace is refused.
"""

import os
import sys

import jax
import jax.numpy as jnp


@jax.jit
def train_step(w, x):
    grad = jax.grad(lambda w: jnp.mean((x @ w) ** 2))(w)
    return w - 0.01 * grad


def main(logdir):
    w = jnp.ones((16, 16)) * 0.1
    x = jnp.ones((8, 16))
    for step in range(10):
        if step in (1, 6):
            jax.profiler.start_trace(os.path.join(logdir, "first" if step == 1 else "second"))
        if step in (3, 8):
            jax.profiler.stop_trace()
        w = train_step(w, x)
    w.block_until_ready()
    print("own traces written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
