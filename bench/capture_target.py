#!/usr/bin/env python3
"""A training loop for bench/capture_overhead.py: a target to capture from.

``capture_target.py FRAMEWORK PORT SECONDS`` (FRAMEWORK: tf or jax) trains a
3-layer MLP (784-512-512-10, batch 128) for SECONDS; with PORT > 0 it starts
the framework's profiler server first. It prints "training" when the loop
starts, then at the end one JSON line: for the end of each step, the
monotonic time (CLOCK_MONOTONIC is shared by the processes of a machine, so
the harness can tell which steps ran during a capture) and the process's CPU
time (all threads, the profiler server's included).
"""

import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
BATCH, SIZES = 128, (784, 512, 512, 10)


def tf_step(port):
    import tensorflow as tf

    if port:
        tf.profiler.experimental.server.start(port)
    layers = [tf.Variable(tf.random.normal([a, b], stddev=0.05)) for a, b in zip(SIZES, SIZES[1:])]
    x = tf.random.normal([BATCH, SIZES[0]])
    y = tf.one_hot(tf.random.uniform([BATCH], 0, 10, tf.int32), 10)
    opt = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            h = x
            for w in layers[:-1]:
                h = tf.nn.relu(tf.matmul(h, w))
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, h @ layers[-1]))
        opt.apply_gradients(zip(tape.gradient(loss, layers), layers))
        return loss

    def run(n):
        with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
            step().numpy()
    return run


def jax_step(port):
    import jax
    import jax.numpy as jnp

    if port:
        jax.profiler.start_server(port)
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    params = [jax.random.normal(k, (a, b)) * 0.05 for k, a, b in zip(keys, SIZES, SIZES[1:])]
    x = jax.random.normal(keys[3], (BATCH, SIZES[0]))
    y = jax.nn.one_hot(jnp.arange(BATCH) % 10, 10)

    def loss_fn(params):
        h = x
        for w in params[:-1]:
            h = jax.nn.relu(h @ w)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h @ params[-1]), axis=-1))

    @jax.jit
    def update(params):
        grads = jax.grad(loss_fn)(params)
        return [p - 0.01 * g for p, g in zip(params, grads)]

    state = {"params": params}

    def run(n):
        with jax.profiler.StepTraceAnnotation("train", step_num=n):
            state["params"] = update(state["params"])
            state["params"][0].block_until_ready()
    return run


def main():
    framework, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    run = (tf_step if framework == "tf" else jax_step)(port)
    run(0)
    print("training", flush=True)
    ends = []
    stop = time.monotonic() + seconds
    n = 1
    while time.monotonic() < stop:
        run(n)
        ends.append((time.monotonic(), time.process_time()))
        n += 1
    print(json.dumps(ends), flush=True)


if __name__ == "__main__":
    main()
