"""The seed pattern: a training loop in ProfileContext with auto profiling, and in TensorFlow.

``context_seed.py OUTDIR``: runs the loop inside ``compat.ProfileContext``
(profiles in ``OUTDIR/ours``, with ``debug=True`` so each traced step's
RunMetadata is saved as ``run_meta_<step>``; printed views in
``OUTDIR/ours_stdout.txt``; auto-profiling results as ``ours_<cmd>_<step>.pb``).
TensorFlow 2.21 has no ProfileContext, so TensorFlow's side replays
TensorFlow's schedule with its own ``Profiler``, fed those same RunMetadata:
dumps in ``OUTDIR/tf``, ``tf_stdout.txt``, ``tf_<cmd>_<step>.pb``.
A second context with TensorFlow's defaults (no trace or dump steps) runs
into ``OUTDIR/auto``; a disabled one must not trace at all.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from google.protobuf import text_format  # noqa: E402
from seed_model import build_model, save, stdout_to, tf1  # noqa: E402
from tensorflow.python.profiler import model_analyzer, option_builder  # noqa: E402

from tfprof_shell import compat  # noqa: E402

Builder = option_builder.ProfileOptionBuilder
TRACE_STEPS = [1, 2, 4]
DUMP_STEPS = [2, 6]
AUTO = [("op", Builder.time_and_memory(), [4, 6]),
        ("scope", Builder.trainable_variables_parameter(), [2]),
        ("code", Builder(Builder.time_and_memory()).with_max_depth(8).build(), [6])]
LOOP = 8  # steps 0..7, then step 8 with trace_next_step and dump_next_step
METHODS = {"graph": "profile_graph", "scope": "profile_name_scope", "op": "profile_operations",
           "code": "profile_python"}


def ours(out, sess, train_op, feed):
    with stdout_to(os.path.join(out, "ours_stdout.txt")):
        with compat.ProfileContext(os.path.join(out, "ours"), trace_steps=TRACE_STEPS,
                                   dump_steps=DUMP_STEPS, debug=True) as pctx:
            for cmd, options, steps in AUTO:
                pctx.add_auto_profiling(cmd, options, steps)
            for _ in range(LOOP):
                sess.run(train_op, feed)
            pctx.trace_next_step()
            pctx.dump_next_step()
            sess.run(train_op, feed)
    for cmd, _, _ in AUTO:
        for step, msg in pctx.get_profiles(cmd).items():
            save(os.path.join(out, "ours_%s_%d.pb" % (cmd, step)), msg)


def theirs(out):
    """TensorFlow's ProfileContext schedule, replayed on TensorFlow's own Profiler."""
    folder = os.path.join(out, "tf")
    os.makedirs(folder)
    profiler = model_analyzer.Profiler(tf1.get_default_graph())
    traced = set(TRACE_STEPS) | {s for _, _, steps in AUTO for s in steps} | {LOOP}
    with stdout_to(os.path.join(out, "tf_stdout.txt")):
        for step in range(LOOP + 1):
            if step in traced:
                run_meta = tf1.RunMetadata()
                with open(os.path.join(out, "ours", "run_meta_%d" % step)) as fh:
                    text_format.Parse(fh.read(), run_meta)
                profiler.add_step(step, run_meta)
            if step in DUMP_STEPS or step == LOOP:
                profiler._write_profile(os.path.join(folder, "profile_%d" % step))
            for cmd, options, steps in AUTO:
                if step in steps:
                    msg = getattr(profiler, METHODS[cmd])(options)
                    save(os.path.join(out, "tf_%s_%d.pb" % (cmd, step)), msg)


def defaults(out, sess, train_op, feed):
    """TensorFlow's defaults: trace after 10 warm-up steps, dump at step 100."""
    with compat.ProfileContext(os.path.join(out, "off"), enabled=False) as off:
        sess.run(train_op, feed)
        assert off.profiler is None
    with compat.ProfileContext(os.path.join(out, "auto"), debug=True) as pctx:
        for _ in range(14):
            sess.run(train_op, feed)
        with open(os.path.join(out, "auto_steps.txt"), "w") as fh:
            fh.write(" ".join(str(s) for s in pctx.profiler.steps))


def main(out):
    sess, train_op, feed = build_model()
    ours(out, sess, train_op, feed)
    theirs(out)
    defaults(out, sess, train_op, feed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
