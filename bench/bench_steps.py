#!/usr/bin/env python3
"""What `steps` adds to loading a PyTorch trace: load time with and without
keeping the events steps reads, then the steps breakdown (intervals, every
step, the text)::

    python bench/bench_steps.py TRACE [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfprof_shell.load import Inputs, chrome_trace, load_model  # noqa: E402
from tfprof_shell.render.steps import steps_text  # noqa: E402
from tfprof_shell.views.steps import step_breakdowns  # noqa: E402


def _load(path: str, keep: bool) -> tuple[float, object]:
    real = chrome_trace.keep_events
    if not keep:
        chrome_trace.keep_events = lambda events: []
    try:
        gc.collect()
        gc.disable()
        t = time.process_time()
        model = load_model(Inputs(profile_path=path))
        return time.process_time() - t, model
    finally:
        chrome_trace.keep_events = real


def main() -> None:
    gc.disable()  # as the CLI does while it loads and runs a one-shot command
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    plain, kept, steps = [], [], []
    for i in range(args.repeat):
        for keep in ((False, True) if i % 2 == 0 else (True, False)):
            t, model = _load(args.trace, keep=keep)
            (kept if keep else plain).append(t)
            if not keep:
                del model
                continue
            saved = model
        model = saved
        del saved
        t0 = time.process_time()
        result = step_breakdowns(model.intervals())
        steps_text(result, "Steps")
        steps.append(time.process_time() - t0)
        n = len(result.steps)
        del model, result
    best = min(plain)
    print("trace: %s (%.0f MB), %d steps" % (args.trace, os.path.getsize(args.trace) / 1e6, n))
    print("load without steps' events: %.2f s CPU (best of %d)" % (best, args.repeat))
    print("load keeping them:          %.2f s (+%.1f%%)" % (min(kept), 100 * (min(kept) / best - 1)))
    print("steps (intervals + breakdown + text): %.2f s" % min(steps))
    print("load + steps vs load: +%.1f%%" % (100 * ((min(kept) + min(steps)) / best - 1)))


if __name__ == "__main__":
    main()
