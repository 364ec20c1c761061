"""JAX: a jitted training step in a loop, with a jitted evaluation now and then; exits 4."""

import sys

import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    h = jax.nn.relu(x @ params["w1"])
    logits = h @ params["w2"]
    return jnp.mean((logits - y) ** 2)


@jax.jit
def train_step(params, x, y):
    grads = jax.grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


@jax.jit(static_argnames=["scale"])
def evaluate(params, x, scale):  # called now and then: not the training step
    return jnp.max(x @ params["w1"]) * scale


def main(steps):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"w1": jax.random.normal(k1, (32, 48)) * 0.1,
              "w2": jax.random.normal(k2, (48, 10)) * 0.1}
    x = jax.random.normal(k3, (64, 32))
    y = jnp.ones((64, 10))
    for step in range(steps):
        params = train_step(params, x, y)
        if step % 4 == 0:  # its value is read, so it runs before the next step is called
            score = float(evaluate(params, x, scale=2.0))
    print("final loss %.4f, last score %.2f" % (float(loss_fn(params, x, y)), score))
    return 4


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 12))
