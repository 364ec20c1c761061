"""TF2: find the training steps without the program's help and profile a few of them.

Three routes, the first to reach a traced step keeps the process:

* Keras ``fit``: a callback appended to ``fit``'s callbacks numbers the
  training batches (across epochs and ``fit`` calls) and marks them;
* custom ``tf.function`` loops: top-level calls (made eagerly, from the main
  thread, outside ``fit``) are counted per function; the most called one is
  the step, and each traced call is the step;
* eager loops: optimizer updates made eagerly are counted; the step is the
  work from the end of one update to the end of the next.

One profiler session covers the traced steps (from the first to the last,
with ``--every`` only the chosen ones marked); each is wrapped in
``tf.profiler.experimental.Trace("train", step_num=n, _r=1)``, which the
loader reads as step n.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from . import layout
from .marked_steps import MarkedSteps
from .process import ProcessRecording
from .profiler_session import Session
from .steps import Dominant

FIT, FUNCTION, OPTIMIZER = "keras fit", "tf.function", "optimizer"


class Tf2Recorder(MarkedSteps):
    """Step markers and the profiler session, driven by whichever route finds the steps."""

    kind = layout.KIND_TF2
    failure_label = "TF2 step detection"
    session: Session

    def __init__(self, recording: ProcessRecording) -> None:
        super().__init__(recording, Session(recording))
        self.session.on_give_way = self.close_marker
        self.functions = Dominant()
        self.updates = Dominant()
        self.updates_seen = False
        self.fit_batches = 0
        self.executing_eagerly: Callable[[], bool] = lambda: False
        recording.counters.append(lambda: max([self.fit_batches]
                                              + list(self.functions.counts.values())
                                              + list(self.updates.counts.values())))

    # -- the marked-step lifecycle's TF2 parts --------------------------------
    def may_begin(self, route: str, step: int) -> bool:
        return not (route == FUNCTION and self.updates_seen)  # eager updates delimit the steps

    def open_marker(self, step: int) -> Any:
        from tensorflow.python.profiler.trace import Trace

        marker = Trace("train", step_num=step, _r=1)
        marker.__enter__()
        return marker

    # -- custom tf.function loops ---------------------------------------------
    def function_called(self, function: Any) -> bool:
        if not self.executing_eagerly():
            return False
        step = self.functions.step_of(id(function))
        if step is None or not self.begin(FUNCTION, step):
            return False
        self.functions.lock(id(function))
        return True

    # -- eager loops -----------------------------------------------------------
    def update_done(self, optimizer: Any) -> None:
        if not self.executing_eagerly():
            return
        step = self.updates.step_of(id(optimizer))
        if step is None:
            return
        self.updates_seen = True
        if self.marker is not None and self.recording.route == OPTIMIZER:
            self.end()
        if self.begin(OPTIMIZER, step + 1):
            self.updates.lock(id(optimizer))

    # -- Keras fit ---------------------------------------------------------------
    def fit_batch_begins(self) -> None:
        step, self.fit_batches = self.fit_batches, self.fit_batches + 1
        self.begin(FIT, step)

    def fit_ended(self) -> None:
        if self.recording.route == FIT and (self.session.active or self.marker is not None):
            self.stop("fit ended")

    # -- patches -----------------------------------------------------------------
    def install(self) -> None:
        """Wrap ``tf.function`` calls, TF optimizers' updates and ``profiler.start``."""
        from tensorflow.python.eager import context
        from tensorflow.python.eager.polymorphic_function import polymorphic_function
        from tensorflow.python.training import optimizer as v1_optimizer

        self.executing_eagerly = context.executing_eagerly
        self.session.install()
        rec = self
        function_call = polymorphic_function.Function.__call__

        @functools.wraps(function_call)
        def tfprof_record_tf_function(function, *args, **kwargs):
            if rec.busy():
                return function_call(function, *args, **kwargs)
            rec.inner = True
            try:
                opened = rec.guard(rec.function_called, function)
                try:
                    return function_call(function, *args, **kwargs)
                finally:
                    if opened:
                        rec.guard(rec.end)
            finally:
                rec.inner = False

        polymorphic_function.Function.__call__ = tfprof_record_tf_function
        self.wrap_update(v1_optimizer.Optimizer, "apply_gradients")

    def install_keras(self) -> None:
        """Wrap Keras's ``fit`` and optimizer updates (TensorFlow backend only)."""
        import keras

        if keras.backend.backend() != "tensorflow":
            return
        from keras.src.backend.tensorflow import trainer
        from keras.src.optimizers import base_optimizer

        self.wrap_update(base_optimizer.BaseOptimizer, "apply")
        fit = trainer.TensorFlowTrainer.fit
        rec = self

        @functools.wraps(fit)
        def tfprof_record_fit(model, *args, **kwargs):
            if rec.busy():
                return fit(model, *args, **kwargs)
            added = rec.guard(with_callback, rec, args, kwargs)
            if added is not None:
                args, kwargs = added
            rec.inner = True
            try:
                return fit(model, *args, **kwargs)
            finally:
                rec.inner = False
                rec.guard(rec.fit_ended)

        trainer.TensorFlowTrainer.fit = tfprof_record_fit

    def wrap_update(self, cls: type, method: str) -> None:
        """Count calls of ``cls.method`` (an optimizer's update) made eagerly at top level."""
        original = getattr(cls, method)
        rec = self

        @functools.wraps(original)
        def tfprof_record_update(optimizer, *args, **kwargs):
            if rec.busy():
                return original(optimizer, *args, **kwargs)
            rec.inner = True
            try:
                result = original(optimizer, *args, **kwargs)
            finally:
                rec.inner = False
            rec.guard(rec.update_done, optimizer)
            return result

        setattr(cls, method, tfprof_record_update)


_CALLBACKS_POSITION = 5  # fit(x, y, batch_size, epochs, verbose, callbacks, ...)


def with_callback(rec: Tf2Recorder, args: tuple, kwargs: dict) -> Optional[tuple[tuple, dict]]:
    """``fit``'s arguments with our callback added to its callbacks."""
    import keras

    class TfprofRecordCallback(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            rec.guard(rec.fit_batch_begins)

        def on_train_batch_end(self, batch, logs=None):
            if rec.recording.route == FIT:
                rec.guard(rec.end)

        def on_train_end(self, logs=None):
            rec.guard(rec.fit_ended)

    callback = TfprofRecordCallback()
    if len(args) > _CALLBACKS_POSITION:
        given = args[_CALLBACKS_POSITION]
        return (args[:_CALLBACKS_POSITION] + (_added(given, callback),)
                + args[_CALLBACKS_POSITION + 1:], kwargs)
    return args, dict(kwargs, callbacks=_added(kwargs.get("callbacks"), callback))


def _added(callbacks: Any, callback: Any) -> Any:
    if callbacks is None:
        return [callback]
    if hasattr(callbacks, "callbacks") and hasattr(callbacks, "set_model"):  # a CallbackList
        callbacks.callbacks.append(callback)
        return callbacks
    return list(callbacks) + [callback]
