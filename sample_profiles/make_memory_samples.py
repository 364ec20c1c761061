#!/usr/bin/env python3
"""Record the memory samples (``sample_profiles/memory/``) with real PyTorch, TensorFlow and JAX.

Each framework lives in its own environment, so run the script with a Python
that has the samples' framework (from the repository root)::

    python sample_profiles/make_memory_samples.py torch torch_leak   # PyTorch 2.x
    python sample_profiles/make_memory_samples.py tf2 tf2_leak tf1_timeline  # TensorFlow 2.x
    python sample_profiles/make_memory_samples.py jax jax_leak       # jax, jaxlib

Every sample trains a small MLP on the CPU for a few profiled steps; each
``*_leak`` variant is the same program keeping one activation of every step
alive in a Python list, a fixed amount per step (the leak ``memory`` and
``advise`` must find). Each is recorded in its own child process.

* ``torch``, ``torch_leak`` -- ``torch.profiler.profile(profile_memory=True,
  record_shapes=True, with_stack=True)`` over 4 active steps (schedule wait 1,
  warmup 1): ``trace.pt.trace.json.gz`` (``export_chrome_trace``, gzipped), and
  PyTorch's own references: ``key_averages.json`` (every row of
  ``prof.key_averages()``: count, self and total CPU memory) and
  ``memory_timeline.json`` (``prof.export_memory_timeline(device="cpu")``:
  ``[times, sizes]``, sizes by category); MLP 256-512-512-10, batch 64, SGD
  with momentum. The leak keeps the first hidden activation (64x512 floats,
  131,072 bytes) of every step. Beside the leak, ``snapshot.pickle``: PyTorch's
  own memory snapshot of the same profile (``torch.cuda._memory_viz.
  _profile_to_snapshot``, the format ``torch.cuda.memory._dump_snapshot`` writes).
* ``tf2``, ``tf2_leak`` -- a ``tf.function`` training step (GradientTape, SGD by
  ``assign_sub``) profiled with host tracer level 2 (oneDNN on, the x86
  default: TensorFlow then records allocations of 256 KiB or more), 4 steps in
  ``Trace("train", step_num=N)``; MLP 512-1024-1024-10, batch 256. The leak
  keeps the first hidden activation (256x1024 floats, 1 MiB) the step returns.
* ``jax``, ``jax_leak`` -- a jitted training step, 4 steps, with
  ``jax.profiler.device_memory_profile()`` written after each step as
  ``step_N.prof``; beside them ``live_arrays.json``, JAX's own count of the
  bytes of its live arrays at each of those moments (``jax.live_arrays()``).
  The leak keeps the first hidden activation (128x512 floats, 256 KiB).
* ``tf1_timeline`` -- TF1 Chrome timelines written with ``show_memory=True``
  (``tensorflow.python.client.timeline.Timeline(step_stats)
  .generate_chrome_trace_format(show_memory=True)``) from the run metadata of
  ``sample_profiles/tiny_mlp`` (``run_meta_0..2``): ``timeline-<i>.json.gz``.

To keep the files portable, hosts are renamed ``localhost`` and file names lose
the machine's prefix (site-packages files keep their package path; this script
becomes its base name); the script checks that no machine path is left.
"""

import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "memory")
HOST = "localhost"
STEPS = 4
#: Byte strings that must not appear in a recorded file.
MACHINE_MARKERS = (b"/tmp/", b"/home/", b"/root/", b"/usr/", b"/opt/", b"/work/",
                   b"site-packages", b"dist-packages")


def portable_name(path):
    """A file name without the machine's prefix."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    if os.path.basename(path) == os.path.basename(__file__):
        return os.path.basename(path)
    if path.startswith("/"):
        return os.path.basename(path)
    return path


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------
def record_torch(out_dir, leak):
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(0)
    kept = []

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(256, 512)
            self.fc2 = torch.nn.Linear(512, 512)
            self.out = torch.nn.Linear(512, 10)

        def forward(self, x):
            h = torch.relu(self.fc1(x))
            if leak:
                kept.append(h.detach())  # the leak: every step's activation stays alive
            h = torch.relu(self.fc2(h))
            return self.out(h)

    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))

    def train_step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                 with_stack=True, schedule=schedule(wait=1, warmup=1, active=STEPS)) as prof:
        for _ in range(2 + STEPS):
            train_step()
            prof.step()
    tmp = tempfile.mkdtemp(prefix="torch_memory_")
    try:
        trace = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            doc = json.load(f)
        doc["traceName"] = "trace.pt.trace.json"
        doc["host_name"] = HOST
        for ev in doc["traceEvents"]:
            name = ev.get("name")
            if ev.get("cat") == "python_function" and isinstance(name, str):
                m = re.match(r"(.+)\((\d+)\): (.+)", name)
                if m:
                    ev["name"] = "%s(%s): %s" % (portable_name(m.group(1)), m.group(2),
                                                 m.group(3))
        with open(os.path.join(out_dir, "trace.pt.trace.json.gz"), "wb") as f:
            f.write(gzip.compress(json.dumps(doc).encode(), mtime=0))
        timeline = os.path.join(tmp, "memory_timeline.json")
        prof.export_memory_timeline(timeline, device="cpu")
        shutil.copy(timeline, os.path.join(out_dir, "memory_timeline.json"))
        if leak:
            _snapshot(prof, os.path.join(out_dir, "snapshot.pickle"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = [{"key": e.key, "count": e.count, "self_cpu_memory_usage": e.self_cpu_memory_usage,
             "cpu_memory_usage": e.cpu_memory_usage}
            for e in prof.key_averages()]
    with open(os.path.join(out_dir, "key_averages.json"), "w") as f:
        json.dump({"torch": torch.__version__, "steps": STEPS, "leak_bytes_per_step":
                   64 * 512 * 4 if leak else 0, "key_averages": rows}, f, indent=1)
        f.write("\n")


def _snapshot(prof, path):
    """PyTorch's own memory snapshot of the profile (``_profile_to_snapshot``: the
    format of ``torch.cuda.memory._dump_snapshot``), frames made portable."""
    import pickle

    from torch.cuda._memory_viz import _profile_to_snapshot

    snapshot = _profile_to_snapshot(prof)
    entries = [e for trace in snapshot["device_traces"] for e in trace]
    entries += [b for seg in snapshot["segments"] for b in seg["blocks"]]
    for entry in entries:
        for frame in entry.get("frames", ()):
            m = re.match(r"(.+)\((\d+)\): (.+)", frame["name"])
            if m:
                frame["name"] = "%s(%s): %s" % (portable_name(m.group(1)), m.group(2),
                                                m.group(3))
    with open(path, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)


# ---------------------------------------------------------------------------
# TensorFlow 2
# ---------------------------------------------------------------------------
class Level(int):
    """A tracer level that pybind11 cannot read as a bool, so it arrives as an int."""

    def __bool__(self):
        raise TypeError("a profiler level is not a bool")


def record_tf2(out_dir, leak):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    tf.random.set_seed(0)
    sizes = (512, 1024, 1024, 10)
    params = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        params.append(tf.Variable(tf.random.normal([a, b], stddev=0.03), name="w%d" % i))
        params.append(tf.Variable(tf.zeros([b]), name="b%d" % i))

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            h = x
            first = None
            for i in range(len(sizes) - 1):
                with tf.name_scope("layer%d" % i):
                    h = tf.matmul(h, params[2 * i]) + params[2 * i + 1]
                    if i < len(sizes) - 2:
                        h = tf.nn.relu(h)
                    if first is None:
                        first = h
            with tf.name_scope("loss"):
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        grads = tape.gradient(loss, params)
        with tf.name_scope("sgd"):
            for p, g in zip(params, grads):
                p.assign_sub(0.01 * g)
        return loss, first

    x = tf.random.normal([256, 512])
    y = tf.random.uniform([256], maxval=10, dtype=tf.int32)
    kept = []
    train_step(x, y)  # trace and warm up outside the profile
    tmp = tempfile.mkdtemp(prefix="tf2_memory_")
    try:
        options = tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=Level(2), python_tracer_level=Level(0), device_tracer_level=Level(1))
        tf.profiler.experimental.start(tmp, options=options)
        for n in range(STEPS):
            with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
                loss, first = train_step(x, y)
                if leak:
                    kept.append(first)  # the leak: every step's activation stays alive
                del first
        tf.profiler.experimental.stop()
        found = glob.glob(os.path.join(tmp, "plugins", "profile", "*", "*.xplane.pb"))
        if len(found) != 1:
            raise SystemExit("expected one .xplane.pb, found %d" % len(found))
        run = os.path.basename(os.path.dirname(found[0]))
        run_dir = os.path.join(out_dir, "plugins", "profile", run)
        os.makedirs(run_dir)
        _portable_xspace(found[0], os.path.join(run_dir, HOST + ".xplane.pb"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("final loss %.4f" % float(loss))


def _portable_xspace(path, out_path):
    """Rename the host, drop the machine's log directory from profile_options."""
    from tensorflow.tsl.profiler.protobuf import profiler_options_pb2, xplane_pb2

    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    del space.hostnames[:]
    space.hostnames.append(HOST)
    for plane in space.planes:
        for stat in plane.stats:
            if plane.stat_metadata[stat.metadata_id].name == "profile_options":
                opts = profiler_options_pb2.ProfileOptions()
                opts.ParseFromString(stat.bytes_value)
                opts.repository_path = "logdir"
                stat.bytes_value = opts.SerializeToString(deterministic=True)
    with open(out_path, "wb") as f:
        f.write(space.SerializeToString(deterministic=True))


def record_tf1_timeline(out_dir):
    """TF1 timelines with show_memory from tiny_mlp's run metadata."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.client import timeline

    for i in range(3):
        rm = config_pb2.RunMetadata()
        with open(os.path.join(HERE, "tiny_mlp", "run_meta_%d" % i), "rb") as f:
            rm.ParseFromString(f.read())
        text = timeline.Timeline(rm.step_stats).generate_chrome_trace_format(show_memory=True)
        with open(os.path.join(out_dir, "timeline-%d.json.gz" % i), "wb") as f:
            f.write(gzip.compress(text.encode(), mtime=0))


# ---------------------------------------------------------------------------
# JAX
# ---------------------------------------------------------------------------
def record_jax(out_dir, leak):
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    sizes = (256, 512, 512, 10)
    params = [(jnp.asarray(rng.normal(0, 0.05, (a, b)), jnp.float32), jnp.zeros(b, jnp.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = jnp.asarray(rng.normal(size=(128, 256)), jnp.float32)
    y = jnp.asarray(rng.normal(size=(128, 10)), jnp.float32)

    def forward(params, x):
        hidden = []
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
            hidden.append(x)
        w, b = params[-1]
        return x @ w + b, hidden[0]

    def loss(params, x, y):
        out, first = forward(params, x)
        return jnp.mean((out - y) ** 2), first

    @jax.jit
    def train_step(params, x, y):
        (value, first), grads = jax.value_and_grad(loss, has_aux=True)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads), value, first

    params, value, first = train_step(params, x, y)  # compile outside the profiles
    jax.block_until_ready((params, value, first))
    del first
    kept = []
    live = []
    for n in range(STEPS):
        params, value, first = train_step(params, x, y)
        jax.block_until_ready((params, value, first))
        if leak:
            kept.append(first)  # the leak: every step's activation stays alive
        del first
        with open(os.path.join(out_dir, "step_%d.prof" % n), "wb") as f:
            f.write(_portable_pprof(jax.profiler.device_memory_profile()))
        live.append(sum(a.nbytes for a in jax.live_arrays()))
    with open(os.path.join(out_dir, "live_arrays.json"), "w") as f:
        json.dump({"jax": jax.__version__, "live_array_bytes": live,
                   "leak_bytes_per_step": 128 * 512 * 4 if leak else 0}, f, indent=1)
        f.write("\n")


def _portable_pprof(data):
    """The pprof (gzipped) with machine prefixes dropped from its file names."""
    sys.path.insert(0, ROOT)
    from tfprof_shell.proto import pprof_profile_pb2

    profile = pprof_profile_pb2.Profile.FromString(gzip.decompress(data))
    files = {f.filename for f in profile.function}
    for i in files:
        profile.string_table[i] = portable_name(profile.string_table[i])
    return gzip.compress(profile.SerializeToString(deterministic=True), mtime=0)


# ---------------------------------------------------------------------------
SAMPLES = {
    "torch": lambda d: record_torch(d, False),
    "torch_leak": lambda d: record_torch(d, True),
    "tf2": lambda d: record_tf2(d, False),
    "tf2_leak": lambda d: record_tf2(d, True),
    "tf1_timeline": record_tf1_timeline,
    "jax": lambda d: record_jax(d, False),
    "jax_leak": lambda d: record_jax(d, True),
}


def check_portable(root):
    """Paths of files under ``root`` that still mention a machine path."""
    bad = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            path = os.path.join(dirpath, n)
            with open(path, "rb") as f:
                data = f.read()
            if path.endswith(".gz") or data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            if any(m in data for m in MACHINE_MARKERS):
                bad.append(path)
    return bad


def main(argv):
    """Record the samples named in argv, each in its own process."""
    if len(argv) == 3 and argv[1] == "--record":
        out_dir = os.path.join(OUT, argv[2])
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        SAMPLES[argv[2]](out_dir)
        return 0
    names = argv[1:]
    unknown = [n for n in names if n not in SAMPLES]
    if not names or unknown:
        raise SystemExit("usage: make_memory_samples.py SAMPLE... (samples: %s)"
                         % ", ".join(SAMPLES))
    for name in names:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--record", name], check=True)
        bad = check_portable(os.path.join(OUT, name))
        if bad:
            raise SystemExit("machine paths left in: %s" % ", ".join(bad))
        print("recorded %s" % os.path.relpath(os.path.join(OUT, name), ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
