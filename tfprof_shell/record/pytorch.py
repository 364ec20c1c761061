"""PyTorch: find the training steps without the program's help and profile a few of them.

Two routes, the first to reach a traced step keeps the process:

* training: every ``torch.optim`` optimizer's update ends in the global
  optimizer step hooks; the most frequently updated optimizer delimits the
  steps (a step runs from the end of one of its updates to the end of the
  next), so micro-batches, evaluation and rarer optimizers fall inside steps;
* inference (no optimizer yet): top-level calls of the largest ``nn.Module``
  (by parameter count) made from the main thread without gradients (under
  ``no_grad``/``inference_mode``, or in ``eval()`` mode); the route is dropped
  once an optimizer updates, and when ``torch._dynamo`` is imported. (Calls are
  seen through ``nn.Module._call_impl``, which ``__call__`` runs.)

One ``torch.profiler.profile`` (:mod:`.pytorch_session`) covers the traced
steps; each is wrapped in ``record_function("ProfilerStep#N")``, which the
loader reads as step N. ``torch._dynamo`` is never imported here: once the
program imports it, the optimizer hook is re-registered behind
``torch.compiler.disable`` so compiled code never traces into it.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from . import layout
from .marked_steps import MarkedSteps
from .process import ProcessRecording
from .pytorch_session import TorchSession
from .steps import Dominant

OPTIMIZER, MODULE = "optimizer", "nn.Module"


class TorchRecorder(MarkedSteps):
    """Step markers and the profiler, driven by optimizer updates or top-level module calls."""

    kind = layout.KIND_TORCH
    failure_label = "PyTorch step detection"
    session: TorchSession

    def __init__(self, recording: ProcessRecording) -> None:
        super().__init__(recording, TorchSession(recording))
        self.session.on_give_way = self.abandon_marker
        self.updates = Dominant()
        self.training = False
        self.module_calls: dict[int, int] = {}
        self.module_sizes: dict[int, int] = {}
        self.largest: Optional[int] = None
        self.largest_size = -1
        self._hook_handle: Any = None
        self._module_call: Any = None
        self.grad_enabled: Any = lambda: True
        recording.counters.append(lambda: max([0] + list(self.updates.counts.values())
                                              + list(self.module_calls.values())))

    # -- the marked-step lifecycle's PyTorch parts -------------------------------
    def may_begin(self, route: str, step: int) -> bool:
        if in_dataloader_worker():
            self.done = True
            return False
        if self.recording.rank is None:
            rank = distributed_rank()
            if rank is not None:
                self.recording.set_rank(rank)
        return True

    def open_marker(self, step: int) -> Any:
        import torch

        marker = torch.autograd.profiler.record_function("ProfilerStep#%d" % step)
        marker.__enter__()
        return marker

    def before_stop(self) -> bool:
        if in_dataloader_worker():  # a worker records nothing, and says nothing at exit
            self.recording.silent = True
            return False
        return True

    def abandon_marker(self) -> None:
        """Close the open marker without counting its step (it was not traced whole)."""
        marker, self.marker = self.marker, None
        if marker is not None:
            marker.__exit__(None, None, None)
        self.done = True

    # -- training: optimizer updates --------------------------------------------
    def optimizer_stepped(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        """The global optimizer post hook: one update of ``optimizer`` has ended."""
        if self.busy():
            return
        self.guard(self._update_done, optimizer)

    def _update_done(self, optimizer: Any) -> None:
        if not self.training:
            self.training = True
            self.drop_inference()
        step = self.updates.step_of(id(optimizer))
        if step is None:
            return
        if self.marker is not None and self.recording.route == OPTIMIZER:
            self.end()
        if self.begin(OPTIMIZER, step + 1):
            self.updates.lock(id(optimizer))

    # -- inference: top-level module calls ---------------------------------------
    def module_called(self, module: Any) -> bool:
        """A top-level call of ``module`` starts; whether it opened a traced step."""
        if module.training and self.grad_enabled():
            return False  # a training forward: its optimizer will say where steps end
        key = id(module)
        size = self.module_sizes.get(key)
        if size is None:
            size = self.module_sizes[key] = sum(p.numel() for p in module.parameters())
            if size > self.largest_size and self.recording.route != MODULE:
                self.largest, self.largest_size = key, size
        if key != self.largest:
            return False
        step = self.module_calls.get(key, 0)
        self.module_calls[key] = step + 1
        return bool(self.begin(MODULE, step))

    def drop_inference(self) -> None:
        """Stop watching module calls (training started, or torch.compile is in use)."""
        if self._module_call is None or self.recording.route == MODULE:
            return
        import torch

        torch.nn.Module._call_impl = self._module_call
        self._module_call = None

    # -- patches -----------------------------------------------------------------
    def install(self) -> None:
        """Register the optimizer hook, watch module calls, watch the program's profilers."""
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self.session.install()
        self.grad_enabled = torch.is_grad_enabled
        self._hook_handle = register_optimizer_step_post_hook(self.optimizer_stepped)
        module_call = self._module_call = torch.nn.Module._call_impl
        rec = self

        def tfprof_record_module_call(module: Any, *args: Any, **kwargs: Any) -> Any:
            if rec.busy():
                return module_call(module, *args, **kwargs)
            rec.inner = True
            try:
                opened = rec.guard(rec.module_called, module)
                try:
                    return module_call(module, *args, **kwargs)
                finally:
                    if opened:
                        rec.guard(rec.end)
            finally:
                rec.inner = False

        # _call_impl, not __call__: replacing a dunder updates the slots of every subclass
        torch.nn.Module._call_impl = tfprof_record_module_call

    def dynamo_imported(self) -> None:
        """The program imported ``torch._dynamo``: keep the hook out of compiled code."""
        import torch

        if self._hook_handle is not None:
            self._hook_handle.remove()
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._hook_handle = register_optimizer_step_post_hook(
            torch.compiler.disable(self.optimizer_stepped))
        self.drop_inference()


def in_dataloader_worker() -> bool:
    """Whether this process is a DataLoader worker (which records nothing)."""
    worker = sys.modules.get("torch.utils.data._utils.worker")
    return worker is not None and getattr(worker, "_worker_info", None) is not None


def distributed_rank() -> Optional[int]:
    """The ``torch.distributed`` rank, if the program has initialised a process group."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:
        return None
    return None
