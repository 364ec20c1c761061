"""A small TensorFlow 2 training loop that runs for SECONDS (for the live capture tests).

``python tf_loop.py PORT SECONDS``: with PORT > 0 it starts the profiler server
itself (tf.profiler.experimental.server.start); with 0 it is an unmodified
program (tfprof record --serve arms it). It prints "training" once the loop runs.
"""

import sys
import time

import tensorflow as tf

port, seconds = int(sys.argv[1]), float(sys.argv[2])
if port:
    tf.profiler.experimental.server.start(port)

w = tf.Variable(tf.random.normal([64, 64]))
x = tf.random.normal([32, 64])
opt = tf.keras.optimizers.SGD(0.01)


@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.relu(tf.matmul(x, w)) ** 2)
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    return loss


step()
print("training", flush=True)
end = time.monotonic() + seconds
steps = 0
while time.monotonic() < end:
    with tf.profiler.experimental.Trace("train", step_num=steps, _r=1):
        step()
    steps += 1
    time.sleep(0.002)
print("steps", steps, flush=True)
