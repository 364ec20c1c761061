#!/usr/bin/env python3
"""Record a large TF2 profile (``<host>.xplane.pb``) with TensorFlow itself.

Needs a Python with TensorFlow 2.x. A small MLP is trained by a
``tf.function`` step in a custom loop; the profiler runs with the Python
tracer on (the code view's frames) and each step is marked with
``tf.profiler.experimental.Trace("train", step_num=n, _r=1)``, as a user
would do. With the defaults (600 steps) the file is about 100 MB, most of it
Python-tracer events; recording takes a minute or two on two cores::

    python bench/make_large_tf2_xplane.py OUT.xplane.pb [--steps 600] [--layers 4]

Other shapes of real profiles (``--shape``): ``deep``, a residual MLP of
``--layers`` blocks (two MatMuls each) in one ``tf.function``, so each step
runs hundreds of ops; ``keras``, a Keras ``Model.fit`` over a ``tf.data``
pipeline (one epoch of ``--steps`` batches). ``--host-level 3`` records the
host tracer's verbose events, host memory allocations among them, and
``--no-python-tracer`` leaves the Python tracer off.

The file is written only if OUT does not exist yet (delete it to re-record).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


class Level(int):
    """A tracer level pybind11 cannot read as a bool, so it arrives as an int.

    TensorFlow 2.21 otherwise drops ``python_tracer_level=1`` silently.
    """

    def __bool__(self) -> bool:
        raise TypeError("a profiler level is not a bool")


def profiler_options(host_level: int, python_tracer: bool):
    """ProfilerOptions with the given host tracer level and Python tracer on or off."""
    import tensorflow as tf
    return tf.profiler.experimental.ProfilerOptions(
        host_tracer_level=Level(host_level), python_tracer_level=Level(int(python_tracer)),
        device_tracer_level=Level(1))


def move_profile(logdir: str, out: str) -> None:
    """Move the one ``.xplane.pb`` the profiler wrote under ``logdir`` to ``out``."""
    found = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
    if len(found) != 1:
        raise SystemExit("expected one .xplane.pb under %s, found %d" % (logdir, len(found)))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    shutil.move(found[0], out)


def record_deep(out: str, steps: int, blocks: int, host_level: int, python_tracer: bool,
                width: int = 64, batch: int = 64) -> None:
    """A residual MLP of ``blocks`` blocks in one tf.function, fed by tf.data (``width``
    512 and ``batch`` 256 make its tensors large enough for TensorFlow to record their
    allocations on the CPU: 256 KiB or more)."""
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    tf.random.set_seed(11)
    inp = tf.Variable(tf.random.normal([32, width], stddev=0.1), name="inp")
    scale = 0.05 * (64 / width) ** 0.5  # keeps the residual sums finite when wide
    blocks_w = [(tf.Variable(tf.random.normal([width, width], stddev=scale), name="a%d" % i),
                 tf.Variable(tf.random.normal([width, width], stddev=scale), name="b%d" % i))
                for i in range(blocks)]
    out_w = tf.Variable(tf.random.normal([width, 10], stddev=0.1), name="out")
    params = [inp, out_w] + [w for pair in blocks_w for w in pair]

    @tf.function
    def train_step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            h = tf.matmul(x, inp)
            for i, (a, b) in enumerate(blocks_w):
                with tf.name_scope("block%d" % i):
                    h = h + tf.matmul(tf.nn.relu(tf.matmul(h, a)), b)
            logits = tf.matmul(h, out_w)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(0.01 * g)
        return loss

    x_all = tf.random.normal([batch * 8, 32])
    y_all = tf.random.uniform([batch * 8], maxval=10, dtype=tf.int32)
    batches = iter(tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(batch).repeat()
                   .map(lambda x, y: (x * 1.0, y)).prefetch(2))
    for _ in range(2):
        train_step(*next(batches))
    logdir = tempfile.mkdtemp(prefix="tf2_deep_")
    try:
        tf.profiler.experimental.start(logdir, options=profiler_options(host_level,
                                                                        python_tracer))
        for step in range(steps):
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                loss = train_step(*next(batches))
        tf.profiler.experimental.stop()
        move_profile(logdir, out)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    print("final loss %.4f" % float(loss.numpy()))


def record_keras(out: str, steps: int, layers: int, host_level: int, python_tracer: bool,
                 width: int = 64) -> None:
    """One epoch of Keras ``fit`` over ``steps`` tf.data batches, profiled whole."""
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    tf.random.set_seed(11)
    model = tf.keras.Sequential([tf.keras.Input((32,))]
                                + [tf.keras.layers.Dense(width, activation="relu")
                                   for _ in range(layers)]
                                + [tf.keras.layers.Dense(10)])
    model.compile(optimizer="sgd",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x_all = tf.random.normal([64 * steps, 32])
    y_all = tf.random.uniform([64 * steps], maxval=10, dtype=tf.int32)
    data = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(64).prefetch(2)
    model.fit(data.take(2), epochs=1, verbose=0)  # trace outside the profile
    logdir = tempfile.mkdtemp(prefix="tf2_keras_")
    try:
        tf.profiler.experimental.start(logdir, options=profiler_options(host_level,
                                                                        python_tracer))
        model.fit(data, epochs=1, verbose=0)
        tf.profiler.experimental.stop()
        move_profile(logdir, out)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def record(out: str, steps: int, layers: int, width: int = 64) -> None:
    """Train ``steps`` profiled steps and move the written ``.xplane.pb`` to ``out``."""
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    tf.random.set_seed(11)
    params = []
    sizes = [32] + [width] * layers + [10]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        params.append(tf.Variable(tf.random.normal([a, b], stddev=0.1), name="w%d" % i))
        params.append(tf.Variable(tf.zeros([b]), name="b%d" % i))

    @tf.function
    def train_step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            h = x
            for i in range(len(sizes) - 1):
                with tf.name_scope("layer%d" % i):
                    h = tf.matmul(h, params[2 * i]) + params[2 * i + 1]
                    if i < len(sizes) - 2:
                        h = tf.nn.relu(h)
            with tf.name_scope("loss"):
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        grads = tape.gradient(loss, params)
        with tf.name_scope("sgd"):
            for p, g in zip(params, grads):
                p.assign_sub(0.01 * g)
        return loss

    x_all = tf.random.normal([64 * 8, 32])
    y_all = tf.random.uniform([64 * 8], maxval=10, dtype=tf.int32)
    data = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(64).repeat()
    batches = iter(data)

    def metrics(logits_of: tf.Tensor, labels: tf.Tensor) -> float:
        """Eager bookkeeping a training loop typically does between steps."""
        predicted = tf.argmax(logits_of, axis=1, output_type=tf.int32)
        correct = tf.cast(tf.equal(predicted, labels), tf.float32)
        # per-variable summaries, as a weight-statistics logger would compute
        stats = [tf.stack([tf.reduce_mean(p), tf.reduce_max(p), tf.norm(p)]) for p in params]
        return float(tf.reduce_mean(correct).numpy()) + float(tf.add_n(stats)[0].numpy()) * 0.0

    @tf.function
    def predict(x: tf.Tensor) -> tf.Tensor:
        h = x
        for i in range(len(sizes) - 1):
            h = tf.matmul(h, params[2 * i]) + params[2 * i + 1]
        return h

    for _ in range(2):  # trace and warm up outside the profile
        x, y = next(batches)
        train_step(x, y)
        metrics(predict(x), y)
    logdir = tempfile.mkdtemp(prefix="tf2_large_")
    try:
        options = tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=Level(2), python_tracer_level=Level(1), device_tracer_level=Level(1))
        tf.profiler.experimental.start(logdir, options=options)
        for step in range(steps):
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                x, y = next(batches)
                loss = train_step(x, y)
                metrics(predict(x), y)
        tf.profiler.experimental.stop()
        found = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
        if len(found) != 1:
            raise SystemExit("expected one .xplane.pb under %s, found %d" % (logdir, len(found)))
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        shutil.move(found[0], out)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    print("final loss %.4f" % float(loss.numpy()))


def main(argv: list[str]) -> int:
    """Record the profile unless ``out`` exists; print its size."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--shape", choices=("mlp", "deep", "keras"), default="mlp")
    ap.add_argument("--host-level", type=int, default=2)
    ap.add_argument("--no-python-tracer", action="store_true")
    ap.add_argument("--width", type=int, default=64, help="the deep shape's width")
    ap.add_argument("--batch", type=int, default=64, help="the deep shape's batch size")
    args = ap.parse_args(argv)
    if not os.path.exists(args.out):
        t0 = time.perf_counter()
        if args.shape == "deep":
            record_deep(args.out, args.steps, args.layers, args.host_level,
                        not args.no_python_tracer, args.width, args.batch)
        elif args.shape == "keras":
            record_keras(args.out, args.steps, args.layers, args.host_level,
                         not args.no_python_tracer)
        else:
            record(args.out, args.steps, args.layers)
        print("recorded in %.1f s" % (time.perf_counter() - t0))
    print("%s: %.1f MB" % (args.out, os.path.getsize(args.out) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
