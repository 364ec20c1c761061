"""The seeds' model and helpers shared by the compat scripts (TF1 graph mode).

A small two-layer classifier under variable scopes, trained by
GradientDescent; one intra-op and one inter-op thread so runs repeat.
"""

import contextlib
import ctypes
import os
import sys

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
_LIBC = ctypes.CDLL(None)


def build_model():
    """(session, train_op, feed) on the default graph, variables initialised."""
    tf1.disable_eager_execution()
    tf1.set_random_seed(1)
    x = tf1.placeholder(tf.float32, [16, 20], name="x")
    labels = tf1.placeholder(tf.int32, [16], name="labels")
    with tf1.variable_scope("hidden"):
        w1 = tf1.get_variable("w", [20, 32], initializer=tf1.glorot_uniform_initializer(seed=1))
        b1 = tf1.get_variable("b", [32], initializer=tf1.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf1.variable_scope("logits"):
        w2 = tf1.get_variable("w", [32, 4], initializer=tf1.glorot_uniform_initializer(seed=2))
        logits = tf.matmul(hidden, w2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    sess = tf1.Session(config=config)
    sess.run(tf1.global_variables_initializer())
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(16, 20), labels: rng.randint(0, 4, 16)}
    return sess, train_op, feed


@contextlib.contextmanager
def stdout_to(path):
    """Send fd 1 (Python's and the C++ engine's printing) to ``path``."""
    sys.stdout.flush()
    _LIBC.fflush(None)
    saved = os.dup(1)
    with open(path, "wb") as fh:
        os.dup2(fh.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            _LIBC.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)


def save(path, message):
    with open(path, "wb") as fh:
        fh.write(message.SerializeToString())
