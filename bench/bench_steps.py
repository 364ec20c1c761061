#!/usr/bin/env python3
"""What `steps` adds to loading a PyTorch trace: the load time (which keeps the
events steps reads), then the steps breakdown (intervals, every step, the
text), in CPU time::

    python bench/bench_steps.py TRACE [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfprof_shell.load import Inputs, load_model  # noqa: E402
from tfprof_shell.render.steps import steps_text  # noqa: E402
from tfprof_shell.views.steps import step_breakdowns  # noqa: E402


def _load(path: str) -> tuple[float, object]:
    gc.collect()
    gc.disable()
    t = time.process_time()
    model = load_model(Inputs(profile_path=path))
    return time.process_time() - t, model


def main() -> None:
    gc.disable()  # as the CLI does while it loads and runs a one-shot command
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    loads, steps = [], []
    for _ in range(args.repeat):
        t, model = _load(args.trace)
        loads.append(t)
        t0 = time.process_time()
        result = step_breakdowns(model.intervals())  # type: ignore[attr-defined]
        steps_text(result, "Steps")
        steps.append(time.process_time() - t0)
        n = len(result.steps)
        del model, result
    print("trace: %s (%.0f MB), %d steps" % (args.trace, os.path.getsize(args.trace) / 1e6, n))
    print("load: %.2f s CPU (best of %d)" % (min(loads), args.repeat))
    print("steps (intervals + breakdown + text): %.2f s (+%.1f%% of the load)"
          % (min(steps), 100 * min(steps) / min(loads)))


if __name__ == "__main__":
    main()
