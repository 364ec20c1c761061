"""Write the SYNTHETIC NCCL-shaped sample `synthetic_nccl/` (no framework needed).

    python sample_profiles/make_nccl_synthetic.py sample_profiles/synthetic_nccl

Four ranks of a data-parallel job on two hosts (ranks 0, 1 on ``hosta``;
2, 3 on ``hostb``), three steps, written the way PyTorch's profiler writes
NCCL traces: each collective is a ``c10d::allreduce_`` op holding a
``record_param_comms`` op (``Collective name``, ``Process Group Name``,
``Process Group Description``, ``Process Group Ranks``, ``Group size``,
``In msg nelems``, ``Out msg nelems``, ``dtype``, ``Seq``) holding an
``nccl:all_reduce`` annotation and the ``cudaLaunchKernel`` of an
``ncclDevKernel_*`` kernel that carries the same args. Per step: a
``load_batch`` region, a broadcast in group "1" (ranks 0 and 1 only), the
forward (an ``aten::linear`` launching a GEMM kernel), three backward ops each followed by a bucket's all-reduce in group
"0", a ``cudaStreamSynchronize`` until the last all-reduce ends, and the
optimizer step. Every collective kernel ends at the same true time on every
rank (the last rank's start plus the transfer); kernels on one stream run in
order.

Made-up facts to find: rank 2's ``load_batch`` takes 12 ms in step 0
(0.3 ms elsewhere); rank 1 spends 9 ms in no event at all (Python work
without ops) before its forward in step 1; step 2 has only jitter. hostb's
trace clock starts 3 s after hosta's and its ``baseTimeNanoseconds`` is off
by +400 µs (its wall clock is 400 µs ahead), so placed by their bases its
ranks look 400 µs late. The numbers are invented; the structure follows the
documented args.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys

WORLD = 4
HOST = {0: "hosta", 1: "hosta", 2: "hostb", 3: "hostb"}
#: hostb's trace clock (ts) starts this much later than hosta's (µs) ...
HOSTB_TS_BEHIND = 3_000_000
#: ... and its wall clock reads this much ahead (µs): the error to estimate.
HOSTB_CLOCK_ERROR = 400
BASE_NS = 1_790_000_000_000_000_000
BUCKETS = (4_194_304, 4_194_304, 1_048_576)
STEPS = 3
GROUP0 = {"Process Group Name": "0", "Process Group Description": "default_pg",
          "Process Group Ranks": "[0, 1, 2, 3]", "Group size": 4}
GROUP1 = {"Process Group Name": "1", "Process Group Description": "undefined",
          "Process Group Ranks": "[0, 1]", "Group size": 2}


class Rank:
    """One rank's events, in true time (µs); written on its host's clock."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.pid = 1000 + rank
        self.events: list[dict] = []
        self.ext = 100 * (rank + 1)
        self.corr = 5000 * (rank + 1)
        self.stream_free = 0.0
        #: the current step's start
        self.mark = 0.0

    def x(self, name: str, cat: str, ts: float, dur: float, tid: int = 0,
          args: dict | None = None, pid: int | None = None) -> None:
        self.ext += 1
        ev = {"ph": "X", "cat": cat, "name": name, "pid": self.pid if pid is None else pid,
              "tid": self.pid if tid == 0 else tid, "ts": ts, "dur": dur,
              "args": dict({"External id": self.ext}, **(args or {}))}
        self.events.append(ev)

    def launch(self, kernel: str, t: float, start: float, dur: float, stream: int) -> None:
        """The ``cudaLaunchKernel`` at ``t`` of a kernel of the op written last (its
        External id), and the kernel, linked by their correlation."""
        self.corr += 1
        ids = {"External id": self.ext, "correlation": self.corr}
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                            "pid": self.pid, "tid": self.pid, "ts": t, "dur": 20,
                            "args": dict(ids)})
        self.events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0,
                            "tid": stream, "ts": start, "dur": dur,
                            "args": dict(ids, device=0, stream=stream)})

    def collective(self, op: str, kernel: str, t: float, nelems: int, group: dict,
                   seq: int) -> tuple[float, dict]:
        """The host call at ``t``; returns the kernel's earliest start and its event."""
        comms = dict(group, **{"Collective name": op, "dtype": "Float",
                               "In msg nelems": nelems, "Out msg nelems": nelems,
                               "In split size": "[]", "Out split size": "[]", "Seq": seq})
        self.x("c10d::%s_" % op, "cpu_op", t, 60)
        self.x("record_param_comms", "cpu_op", t + 4, 50, args=comms)
        self.x("nccl:%s" % ("all_reduce" if op == "allreduce" else op), "user_annotation",
               t + 8, 40)
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                            "pid": self.pid, "tid": self.pid, "ts": t + 12, "dur": 20,
                            "args": {"External id": self.ext, "correlation": self.corr}})
        start = max(t + 27, self.stream_free)
        ev = {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 20, "ts": start,
              "dur": 0, "args": dict(comms, **{"External id": self.ext, "correlation":
                                               self.corr, "device": 0, "stream": 20})}
        self.events.append(ev)
        return start, ev


def main(out_dir: str) -> None:
    rnd = random.Random(7)
    ranks = [Rank(r) for r in range(WORLD)]
    start = {r.rank: 5_000_000.0 + rnd.uniform(0, 30) for r in ranks}
    seq0 = seq1 = 0
    for step in range(STEPS):
        cursor = {}
        for r in ranks:
            t = start[r.rank]
            r.mark = t
            load = 12_000 if (step, r.rank) == (0, 2) else 300 + rnd.uniform(-20, 20)
            r.x("load_batch", "user_annotation", t + 5, load)
            t += 5 + load + 20
            cursor[r.rank] = t
        # the broadcast of group "1" (ranks 0 and 1)
        pending = []
        for r in ranks[:2]:
            t = cursor[r.rank]
            s, ev = r.collective("broadcast", "ncclDevKernel_Broadcast_RING_LL("
                                 "ncclDevKernelArgsStorage<4096ul>)", t, 1024, GROUP1, seq1)
            pending.append((r, s, ev))
            cursor[r.rank] = t + 80
        _finish(pending, 120, rnd)
        seq1 += 1
        for r in ranks:
            t = cursor[r.rank]
            if (step, r.rank) == (1, 1):
                t += 9_000  # Python work without ops: no event at all
            t += 50 + rnd.uniform(0, 40)
            r.x("DistributedDataParallel.forward", "user_annotation", t, 2000)
            r.x("aten::linear", "cpu_op", t + 50, 1800)
            r.launch("ampere_sgemm_128x64_nn", t + 60, t + 120, 1500, stream=7)
            cursor[r.rank] = t + 2000 + 30
        for bucket, nelems in enumerate(BUCKETS):
            pending = []
            for r in ranks:
                t = cursor[r.rank]
                back = 600 + rnd.uniform(-30, 30)
                r.x("autograd::engine::evaluate_function: AddmmBackward0", "cpu_op", t, back)
                t += back + 10
                s, ev = r.collective("allreduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL("
                                     "ncclDevKernelArgsStorage<4096ul>)", t, nelems, GROUP0,
                                     seq0)
                pending.append((r, s, ev))
                cursor[r.rank] = t + 80
            _finish(pending, 300 + nelems / 20_000, rnd)
            seq0 += 1
        for r in ranks:
            t = cursor[r.rank]
            until = r.stream_free
            r.corr += 1
            r.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                             "pid": r.pid, "tid": r.pid, "ts": t, "dur": max(until - t, 5) + 5,
                             "args": {"correlation": r.corr}})
            t = max(until, t + 5) + 10
            r.x("Optimizer.step#SGD.step", "user_annotation", t, 500)
            end = t + 520
            r.x("ProfilerStep#%d" % step, "user_annotation", r.mark, end - r.mark)
            start[r.rank] = end + rnd.uniform(0, 20)
    os.makedirs(out_dir, exist_ok=True)
    for r in ranks:
        behind = HOSTB_TS_BEHIND if HOST[r.rank] == "hostb" else 0
        base = BASE_NS + (behind + (HOSTB_CLOCK_ERROR if behind else 0)) * 1000
        events = []
        for ev in sorted(r.events, key=lambda e: e["ts"]):
            ev = dict(ev, ts=round(ev["ts"] - behind, 3), dur=round(ev["dur"], 3))
            events.append(ev)
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "synthetic GPU"}],
               "distributedInfo": {"backend": "nccl", "rank": r.rank, "world_size": WORLD,
                                   "pg_count": 2, "pg_config": [
                                       {"pg_name": "0", "pg_desc": "default_pg",
                                        "backend_config": "cuda:nccl", "pg_size": 4,
                                        "ranks": [0, 1, 2, 3]},
                                       {"pg_name": "1", "pg_desc": "undefined",
                                        "backend_config": "cuda:nccl", "pg_size": 2,
                                        "ranks": [0, 1]}]},
               "host_name": HOST[r.rank], "baseTimeNanoseconds": base,
               "traceEvents": events}
        path = os.path.join(out_dir, "rank%d.synthetic.pt.trace.json.gz" % r.rank)
        with open(path, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
                fh.write(json.dumps(doc).encode("utf-8"))


def _finish(pending: list, transfer: float, rnd: random.Random) -> None:
    """Every rank's kernel of one collective ends together: the last start + transfer."""
    end = max(s for _, s, _ in pending) + transfer
    for r, s, ev in pending:
        ev["dur"] = end + rnd.uniform(0, 3) - s
        r.stream_free = ev["ts"] + ev["dur"]


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sample_profiles/synthetic_nccl")
