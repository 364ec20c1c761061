"""The advisor's checker table: each checker's name and one line of help, in
display (and run) order. It imports nothing, so the options table, `help`
and completion can list the checkers without loading them."""

from __future__ import annotations

ACCELERATOR_UTILIZATION = "AcceleratorUtilizationChecker"
OPERATION = "OperationChecker"
EXPENSIVE_OPERATION = "ExpensiveOperationChecker"
INPUT_BOUND = "InputBoundChecker"
STARVED_DEVICE = "StarvedDeviceChecker"
COMMUNICATION = "CommunicationChecker"
COPIES = "CopiesChecker"
SYNC_STALL = "SyncStallChecker"
STRAGGLER = "StragglerChecker"
CRITICAL_PATH = "CriticalPathChecker"
MEMORY = "MemoryChecker"

#: Checker name -> one sentence of help, in display order.
CHECKER_HELP: dict[str, str] = {
    ACCELERATOR_UTILIZATION: "Reports how busy each GPU was during the last recorded step.",
    OPERATION: "Points out unfused batch normalization and NHWC data layout on GPU.",
    EXPENSIVE_OPERATION: "Lists the most time-consuming op types, top-level scopes and "
                         "call sites.",
    INPUT_BOUND: "Steps that spend a large share of their time waiting on the input "
                 "pipeline.",
    STARVED_DEVICE: "A device idle most of the step while the host had not launched its "
                    "work yet, or busy with many tiny kernels.",
    COMMUNICATION: "Steps bound by communication, and communication that overlaps "
                   "compute poorly.",
    COPIES: "Host-to-device copies in every step (the batch: pinned memory, prefetch).",
    SYNC_STALL: "Host synchronisation waits inside the step (device syncs, .item()).",
    STRAGGLER: "With several profiles loaded (ranks of a job): the rank the others wait "
               "for (by arrival at the collectives where traced, else by step wall) and "
               "why.",
    CRITICAL_PATH: "What bounds the steps: the category most of their critical paths "
                   "spend time in (host work, kernels, launches ...), and the work in it.",
    MEMORY: "Memory: a peak near capacity, fragmentation, reserved far above allocated, "
            "growth over the steps with its suspects, one allocation dominating the peak, "
            "and what the format does not record.",
}
#: The original engine's checkers: the only ones `advise` runs by default on the
#: inputs the engine reads (ProfileProto, graph + run metadata), as it does.
ENGINE_CHECKERS: tuple[str, ...] = (ACCELERATOR_UTILIZATION, OPERATION, EXPENSIVE_OPERATION)
CHECKER_NAMES: tuple[str, ...] = tuple(CHECKER_HELP)
