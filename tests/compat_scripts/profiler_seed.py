"""The seed pattern: a Session.run loop with Profiler.add_step, with TensorFlow's and compat's.

``profiler_seed.py OUTDIR``: both profilers get the same RunMetadata of each
traced step; every profile_* (printed to stdout, and to file / timeline /
pprof outputs), advise and serialize_to_string is run on both, writing
``tf_<case>.*`` and ``ours_<case>.*`` into OUTDIR. Then, with TensorFlow's
profiler deleted (one engine per process), TensorFlow's engine loads each
serialized profile in turn and runs every view on it: ``rt_<who>_<view>.pb``.
"""

import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from seed_model import build_model, save, stdout_to, tf1  # noqa: E402
from tensorflow.core.profiler import tfprof_output_pb2  # noqa: E402
from tensorflow.python.profiler import model_analyzer, option_builder  # noqa: E402
from tensorflow.python.util import _pywrap_tfprof as engine  # noqa: E402

from tfprof_shell import compat  # noqa: E402

Builder = option_builder.ProfileOptionBuilder
METHODS = ("profile_name_scope", "profile_graph", "profile_operations", "profile_python")
OPTION_SETS = {
    "time_and_memory": Builder.time_and_memory(),
    "params": Builder.trainable_variables_parameter(),
    "float_ops": Builder.float_operation(),
    "columns_step": Builder(Builder.time_and_memory(min_micros=0, min_bytes=0))
    .select(["bytes", "peak_bytes", "micros", "params", "float_ops", "occurrence", "device",
             "op_types", "input_shapes"]).with_step(2).build(),
}
TRACED = (0, 2, 5)


def main(out):
    sess, train_op, feed = build_model()
    theirs = model_analyzer.Profiler(sess.graph)
    ours = compat.Profiler(sess.graph)
    for step in range(6):
        if step in TRACED:
            run_meta = tf1.RunMetadata()
            sess.run(train_op, feed, options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                     run_metadata=run_meta)
            theirs.add_step(step, run_meta)
            ours.add_step(step, run_meta)
        else:
            sess.run(train_op, feed)
    assert abs(theirs._coverage - ours._coverage) < 1e-9, (theirs._coverage, ours._coverage)
    for who, profiler in (("tf", theirs), ("ours", ours)):
        for name, options in OPTION_SETS.items():
            for method in METHODS:
                case = "%s_%s_%s" % (who, method, name)
                with stdout_to(os.path.join(out, case + ".txt")):
                    save(os.path.join(out, case + ".pb"), getattr(profiler, method)(options))
        folder = os.path.join(out, who + "_outputs")
        os.makedirs(folder)
        base = Builder(Builder.time_and_memory()).with_step(5)
        with stdout_to(os.path.join(out, who + "_outputs.txt")):
            profiler.profile_name_scope(base.with_file_output(os.path.join(folder, "scope.txt"))
                                        .build())
            profiler.profile_graph(base.with_timeline_output(os.path.join(folder, "timeline"))
                                   .build())
            profiler.profile_python(base.with_pprof_output(os.path.join(folder, "code.pprof"))
                                    .select(["micros"]).build())
        with stdout_to(os.path.join(out, who + "_advise.txt")):
            save(os.path.join(out, who + "_advise.pb"), profiler.advise(model_analyzer.ALL_ADVICE))
        with open(os.path.join(out, who + "_profile"), "wb") as fh:
            fh.write(profiler.serialize_to_string())
    del theirs  # deletes TensorFlow's engine: the next one may load a profile
    gc.collect()
    for who in ("tf", "ours"):
        engine.ProfilerFromFile(os.path.join(out, who + "_profile").encode())
        for view in ("scope", "graph", "op", "code"):
            options = dict(OPTION_SETS["columns_step"], output="none")
            raw = engine.Profile(view.encode(),
                                 model_analyzer._build_options(options).SerializeToString())
            msg = (tfprof_output_pb2.MultiGraphNodeProto if view in ("op", "code")
                   else tfprof_output_pb2.GraphNodeProto)()
            msg.ParseFromString(raw)
            save(os.path.join(out, "rt_%s_%s.pb" % (who, view)), msg)
        engine.DeleteProfiler()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
