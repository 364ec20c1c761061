#!/usr/bin/env python3
"""Record the JAX-on-CPU (.xplane.pb) samples with real JAX.

Usage (from the repository root, with ``jax`` and ``jaxlib`` installed; no GPU)::

    python sample_profiles/make_jax_cpu_samples.py               # every sample
    python sample_profiles/make_jax_cpu_samples.py jax_cpu       # only some
    python sample_profiles/make_jax_cpu_samples.py --out DIR     # elsewhere

Samples (each recorded in its own child process: JAX's profiler is one per
process, and the compiled programs it stores are those of the process):

* ``jax_cpu``    -- a jitted MLP training step (32-64-64-4, ReLU, mean
  squared error, SGD; ``jax.value_and_grad``) and a jitted two-layer
  encoder of one-head self-attention (scores, softmax, weighted values,
  residual), both called in
  each of the steps 10, 11, 12 under ``jax.profiler.StepTraceAnnotation
  ("train", step_num=N)``, each step waiting for its results; then one more
  training step outside any step marker. The attention block runs twice in
  a ``jax.lax.fori_loop`` (an XLA ``while``: its body's thunks run inside
  the while thunk). Parameters start from NumPy (no
  ``jax.random`` programs), so the profile stores only the programs the loop
  compiles. ``jax.profiler.start_trace``/``stop_trace`` write it.
* ``jax_cpu_py`` -- the same with the Python tracer on
  (``ProfileOptions.python_tracer_level = 1``). Not shipped (it is larger);
  the tests record their own.

Beside each run, ``compiled_hlo.json`` holds JAX's own account of the two
programs, from ``jax.jit(f).lower(...).compile().as_text()``: each
instruction's name and ``op_name`` metadata (the tests check the profile's
stored programs and our nodes against it without JAX). What such a profile
holds is written in ``tfprof_shell/load/xla_cpu.py``.

Run directories keep the layout the loader reads (``<logdir>/plugins/
profile/<run>/<host>.xplane.pb``). To keep the files portable the host is
renamed ``localhost`` (the file, and the XSpace's host names), the Chrome
trace JAX writes beside it is dropped, and file names in the stored HLO
programs' stack frames (and the Python tracer's ``$file:line`` events) lose
their machine prefix: site-packages files keep their package path
(``jax/_src/...``), this script becomes ``make_jax_cpu_samples.py``. The
script then checks that no machine path is left.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HOST = "localhost"
STEP_NUMS = (10, 11, 12)
SAMPLES = {"jax_cpu": 0, "jax_cpu_py": 1}
#: What JAX compiled (module -> instruction -> op_name), written beside the run.
COMPILED = "compiled_hlo.json"
#: Byte strings that must not appear in a recorded file.
MACHINE_MARKERS = (b"/tmp/", b"/home/", b"/root/", b"/usr/", b"/opt/", b"/work/",
                   b"site-packages", b"dist-packages")


# ---------------------------------------------------------------------------
# The program (runs in the child, which imports JAX into these globals)
# ---------------------------------------------------------------------------
jax = jnp = None


def mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)


def train_step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads), value


def attention(tokens, wq, wk, wv):
    q, k, v = tokens @ wq, tokens @ wk, tokens @ wv
    scores = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    return jax.nn.softmax(scores, axis=-1) @ v


def encoder(tokens, wq, wk, wv):
    def layer(i, h):
        return h + attention(h, wq, wk, wv)

    return jax.lax.fori_loop(0, 2, layer, tokens)


def run(logdir, python_tracer_level):
    """Train a few steps under the profiler, writing the run under ``logdir``."""
    global jax, jnp
    import numpy as np
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    sizes = (32, 64, 64, 4)
    params = [(jnp.asarray(rng.normal(0, 0.1, (a, b)), jnp.float32), jnp.zeros(b, jnp.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = jnp.asarray(rng.normal(size=(16, 32)), jnp.float32)
    y = jnp.asarray(rng.normal(size=(16, 4)), jnp.float32)
    tokens = jnp.asarray(rng.normal(size=(8, 16)), jnp.float32)
    wq, wk, wv = (jnp.asarray(rng.normal(0, 0.25, (16, 16)), jnp.float32) for _ in range(3))
    step, attend = jax.jit(train_step), jax.jit(encoder)

    # compile (and warm up) before tracing
    params, value = step(params, x, y)
    jax.block_until_ready((params, value, attend(tokens, wq, wk, wv)))

    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = python_tracer_level
    jax.profiler.start_trace(logdir, profiler_options=options)
    for n in STEP_NUMS:
        with jax.profiler.StepTraceAnnotation("train", step_num=n):
            params, value = step(params, x, y)
            out = attend(tokens, wq, wk, wv)
            jax.block_until_ready((params, value, out))
    params, value = step(params, x, y)  # outside any step marker
    jax.block_until_ready((params, value))
    jax.profiler.stop_trace()
    # JAX's own account of what it compiled, for the tests to check the profile against
    texts = [step.lower(params, x, y).compile().as_text(),
             attend.lower(tokens, wq, wk, wv).compile().as_text()]
    facts = {"jax": jax.__version__, "jaxlib": jax.lib.__version__,
             "programs": dict(map(compiled_instructions, texts))}
    with open(os.path.join(logdir, COMPILED), "w") as fh:
        json.dump(facts, fh, indent=1, sort_keys=True)
        fh.write("\n")


_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = (.*)$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')


def compiled_instructions(text):
    """(module name, {instruction name: its op_name or ""}) of an HLO module's text
    (``compile().as_text()``)."""
    module = text.split(None, 2)[1].rstrip(",")
    out = {}
    for line in text.splitlines():
        m = _INSTRUCTION.match(line)
        if m:
            op = _OP_NAME.search(m.group(2))
            out[m.group(1)] = op.group(1) if op else ""
    return module, out


# ---------------------------------------------------------------------------
# Making the files portable (runs in the parent; needs only protobuf)
# ---------------------------------------------------------------------------
def _portable_name(path):
    """A file name without the machine's prefix."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    if os.path.basename(path) == os.path.basename(__file__):
        return os.path.basename(path)
    return path


def _portable_xspace(path, out_path):
    """Rename the host and strip machine prefixes from file names."""
    sys.path.insert(0, ROOT)
    from tfprof_shell.proto import hlo_pb2, xplane_pb2

    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    del space.hostnames[:]
    space.hostnames.append(HOST)
    for plane in space.planes:
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for md in plane.event_metadata.values():
            if md.name.startswith("$"):  # a Python-tracer frame: "$file:line function"
                head, sep, rest = md.name[1:].partition(":")
                md.name = "$" + _portable_name(head) + sep + rest
                md.display_name = ""
            for st in md.stats:
                if names.get(st.metadata_id) in ("Hlo Proto", "hlo_proto"):
                    proto = hlo_pb2.HloProto()
                    proto.ParseFromString(st.bytes_value)
                    table = proto.hlo_module.stack_frame_index.file_names
                    table[:] = [_portable_name(name) for name in table]
                    st.bytes_value = proto.SerializeToString(deterministic=True)
    with open(out_path, "wb") as f:
        f.write(space.SerializeToString(deterministic=True))


def record(name, out_root):
    """Record sample ``name`` in a child process into ``out_root/name``."""
    out_dir = os.path.join(out_root, name)
    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "logdir")
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", logdir,
                        str(SAMPLES[name])], check=True, env=env, cwd=HERE)
        found = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
        if len(found) != 1:
            raise SystemExit("%s: expected one .xplane.pb, found %d" % (name, len(found)))
        run = os.path.basename(os.path.dirname(found[0]))
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        target = os.path.join(out_dir, "plugins", "profile", run)
        os.makedirs(target)
        out = os.path.join(target, HOST + ".xplane.pb")
        _portable_xspace(found[0], out)
        shutil.copy(os.path.join(logdir, COMPILED), os.path.join(out_dir, COMPILED))
    with open(out, "rb") as f:
        data = f.read()
    with open(os.path.join(out_dir, COMPILED), "rb") as f:
        data += f.read()
    left = [m.decode() for m in MACHINE_MARKERS if m in data]
    if left:
        raise SystemExit("%s: machine paths left in %s: %s" % (name, out, ", ".join(left)))
    print("%s: %s (%d bytes)" % (name, os.path.relpath(out, ROOT), len(data)))


def main(argv):
    if argv[:1] == ["--child"]:
        run(argv[1], int(argv[2]))
        return
    out_root = HERE
    if "--out" in argv:
        i = argv.index("--out")
        out_root = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    names = argv or list(SAMPLES)
    unknown = [n for n in names if n not in SAMPLES]
    if unknown:
        raise SystemExit("unknown sample(s): %s; choose from %s"
                         % (", ".join(unknown), ", ".join(SAMPLES)))
    for name in names:
        record(name, out_root)


if __name__ == "__main__":
    main(sys.argv[1:])
