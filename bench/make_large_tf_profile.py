#!/usr/bin/env python3
"""Record a large ProfileProto of a TF1 training graph with TensorFlow itself.

Needs a Python with TensorFlow 2.x (graph mode through ``tf.compat.v1``).
The model is a multi-tower residual convnet with its own variables per
tower: nested name scopes (tower / block / layer), Conv2D, FusedBatchNorm,
MatMul, BiasAdd, Relu, squeeze-excite gates, a softmax loss with weight
decay, gradients clipped by global norm and a momentum optimizer; the
towers keep the longest input chain near a thousand nodes. Tensors are
tiny: on two CPU cores the whole run takes about two minutes, mostly the
profiler's own bookkeeping. Every step runs with FULL_TRACE and goes into
TensorFlow's profiler, which also records each op's Python call stack (the
code view's traces)::

    python bench/make_large_tf_profile.py OUT_DIR [--nodes 50000] [--steps 10]

Writes OUT_DIR/profile, then re-reads it with our schema and checks its
node count, traced steps and code traces.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tfprof_shell.proto import tfprof_log_pb2  # noqa: E402

v1 = tf.compat.v1
IMAGE, CHANNELS, CLASSES, PER_TOWER_BATCH = 8, 8, 10, 2


# -- the model -----------------------------------------------------------------

def conv_layer(x: tf.Tensor, size: int, out: int, name: str, relu: bool = True) -> tf.Tensor:
    """Conv2D + BiasAdd + fused batch norm (+ Relu), variables in scope `name`."""
    with v1.variable_scope(name):
        kernel = v1.get_variable("kernel", [size, size, x.shape[-1], out],
                                 initializer=v1.glorot_uniform_initializer())
        bias = v1.get_variable("bias", [out], initializer=v1.zeros_initializer())
        gamma = v1.get_variable("gamma", [out], initializer=v1.ones_initializer())
        beta = v1.get_variable("beta", [out], initializer=v1.zeros_initializer())
        v1.add_to_collection("weight_decay", kernel)
        y = tf.nn.bias_add(tf.nn.conv2d(x, kernel, strides=1, padding="SAME"), bias)
        y, _, _ = v1.nn.fused_batch_norm(y, gamma, beta, is_training=True)
        return tf.nn.relu(y) if relu else y


def dense_layer(x: tf.Tensor, out: int, name: str, act=tf.nn.relu) -> tf.Tensor:
    """MatMul + BiasAdd (+ activation), variables in scope `name`."""
    with v1.variable_scope(name):
        weights = v1.get_variable("weights", [x.shape[-1], out],
                                  initializer=v1.glorot_uniform_initializer())
        bias = v1.get_variable("bias", [out], initializer=v1.zeros_initializer())
        v1.add_to_collection("weight_decay", weights)
        y = tf.nn.bias_add(tf.matmul(x, weights), bias)
        return act(y) if act else y


def squeeze_excite(x: tf.Tensor, name: str) -> tf.Tensor:
    """Channel gate: global mean -> dense -> relu -> dense -> sigmoid -> scale."""
    with v1.variable_scope(name):
        pooled = tf.reduce_mean(x, axis=[1, 2])
        hidden = dense_layer(pooled, max(2, CHANNELS // 4), "reduce")
        gate = dense_layer(hidden, CHANNELS, "expand", act=tf.sigmoid)
        return x * tf.reshape(gate, [-1, 1, 1, CHANNELS])


def residual_block(x: tf.Tensor, name: str) -> tf.Tensor:
    """Two conv branches, concatenated, projected, gated, added to the input."""
    with v1.variable_scope(name):
        with v1.variable_scope("branch_a"):
            a = conv_layer(x, 1, CHANNELS // 2, "layer_0")
        with v1.variable_scope("branch_b"):
            b = conv_layer(x, 1, CHANNELS // 2, "layer_0")
            b = conv_layer(b, 3, CHANNELS // 2, "layer_1")
        y = tf.concat([a, b], axis=-1)
        y = conv_layer(y, 1, CHANNELS, "project", relu=False)
        y = squeeze_excite(y, "gate")
        return tf.nn.relu(tf.add(x, y, name="residual"))


def tower(images: tf.Tensor, labels: tf.Tensor, blocks: int, name: str) -> tf.Tensor:
    """One tower: stem, `blocks` residual blocks, a dense head; returns its loss."""
    with v1.variable_scope(name):
        x = conv_layer(images, 3, CHANNELS, "stem")
        for i in range(blocks):
            x = residual_block(x, "block_%d" % i)
            if i == blocks // 2:
                x = tf.nn.max_pool2d(x, 2, 1, "SAME", name="pool")
        with v1.variable_scope("head"):
            x = tf.reshape(x, [-1, IMAGE * IMAGE * CHANNELS])
            x = dense_layer(x, 16, "fc_0")
            logits = dense_layer(x, CLASSES, "logits", act=None)
            return tf.reduce_mean(v1.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits), name="loss")


def build_graph(towers: int, blocks: int) -> tuple[tf.Graph, dict]:
    """The whole training graph; returns it and the tensors a step needs."""
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(tf.float32, [towers * PER_TOWER_BATCH, IMAGE, IMAGE, 3],
                                name="images")
        labels = v1.placeholder(tf.int32, [towers * PER_TOWER_BATCH], name="labels")
        with tf.name_scope("input"):
            image_shards = tf.split(images, towers)
            label_shards = tf.split(labels, towers)
        losses = [tower(image_shards[t], label_shards[t], blocks, "tower_%d" % t)
                  for t in range(towers)]
        with tf.name_scope("total_loss"):
            decay = tf.add_n([tf.nn.l2_loss(w) for w in v1.get_collection("weight_decay")])
            loss = tf.add_n(losses) / towers + 1e-4 * decay
        with tf.name_scope("train"):
            step = v1.train.get_or_create_global_step()
            rate = v1.train.exponential_decay(0.01, step, 1000, 0.96)
            opt = v1.train.MomentumOptimizer(rate, 0.9)
            grads, tvars = zip(*opt.compute_gradients(loss))
            grads, _ = tf.clip_by_global_norm(grads, 5.0)
            train_op = opt.apply_gradients(zip(grads, tvars), global_step=step)
        init = v1.global_variables_initializer()
    return graph, {"images": images, "labels": labels, "train_op": train_op, "loss": loss,
                   "init": init}


def plan(nodes: int, towers: int) -> int:
    """Blocks per tower for at least `nodes` graph nodes (node count is linear)."""
    one = len(build_graph(towers, 1)[0].get_operations())
    two = len(build_graph(towers, 2)[0].get_operations())
    per_block = two - one
    return max(1, -(-(nodes - (one - per_block)) // per_block))


def longest_input_chain(graph: tf.Graph) -> int:
    """Nodes on the longest path along data and control inputs."""
    depth: dict[str, int] = {}
    for op in graph.get_operations():  # creation order is a topological order
        preds = [t.op.name for t in op.inputs] + [c.name for c in op.control_inputs]
        depth[op.name] = 1 + max((depth[p] for p in preds), default=0)
    return max(depth.values())


# -- recording -----------------------------------------------------------------

def record(graph: tf.Graph, ends: dict, steps: int) -> bytes:
    """Run `steps` fully traced training steps; return the profiler's ProfileProto."""
    rng = np.random.default_rng(0)
    batch = ends["images"].shape[0]
    options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
    with v1.Session(graph=graph) as sess:
        sess.run(ends["init"])
        profiler = v1.profiler.Profiler(graph)
        for step in range(steps):
            feed = {ends["images"]: rng.standard_normal((batch, IMAGE, IMAGE, 3), np.float32),
                    ends["labels"]: rng.integers(0, CLASSES, batch, np.int32)}
            meta = v1.RunMetadata()
            t = time.perf_counter()
            loss, _ = sess.run([ends["loss"], ends["train_op"]], feed, options=options,
                               run_metadata=meta)
            run = time.perf_counter() - t
            t = time.perf_counter()
            profiler.add_step(step, meta)
            print("  step %d: loss %.3f, run %.1f s, add_step %.1f s"
                  % (step, loss, run, time.perf_counter() - t), flush=True)
        return profiler.serialize_to_string()


def check(data: bytes, nodes: int, steps: int) -> tuple[int, int, int]:
    """Re-read with our schema; return (nodes, steps with execs, nodes with traces)."""
    prof = tfprof_log_pb2.ProfileProto()
    prof.ParseFromString(data)
    executed = set()
    traced = 0
    for node in prof.nodes.values():
        executed.update(step for step, ex in node.execs.items() if ex.run_count)
        traced += bool(node.trace.traces)
    problems = []
    if len(prof.nodes) < nodes:
        problems.append("%d nodes < %d" % (len(prof.nodes), nodes))
    if len(executed) < steps:
        problems.append("%d steps with execs < %d" % (len(executed), steps))
    if not prof.has_trace or not traced:
        problems.append("no code traces")
    if problems:
        raise SystemExit("profile check failed: " + "; ".join(problems))
    return len(prof.nodes), len(executed), traced


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--nodes", type=int, default=50000, help="minimum graph nodes")
    ap.add_argument("--steps", type=int, default=10, help="fully traced steps")
    ap.add_argument("--towers", type=int, default=8,
                    help="parallel towers (more towers: shorter input chains)")
    args = ap.parse_args(argv)
    v1.disable_eager_execution()
    start = time.perf_counter()
    blocks = plan(args.nodes, args.towers)
    graph, ends = build_graph(args.towers, blocks)
    print("graph: %d towers x %d blocks, %d nodes, longest input chain %d (built in %.0f s)"
          % (args.towers, blocks, len(graph.get_operations()), longest_input_chain(graph),
             time.perf_counter() - start), flush=True)
    data = record(graph, ends, args.steps)
    n_nodes, n_steps, traced = check(data, args.nodes, args.steps)
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "profile")
    with open(path, "wb") as fh:
        fh.write(data)
    print("wrote %s: %d nodes (%d with code traces), %d traced steps, %.1f MB, in %.0f s"
          % (path, n_nodes, traced, n_steps, len(data) / 1e6, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
