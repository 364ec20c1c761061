"""``ProfileContext``: TensorFlow 1's ``tf.contrib.tfprof.ProfileContext`` on this package's engine.

    with ProfileContext("train_dir", trace_steps=range(100, 200, 3), dump_steps=[200]) as pctx:
        pctx.add_auto_profiling("op", ProfileOptionBuilder.time_and_memory(), [150, 200])
        train_loop()

Every ``Session.run`` call inside the context is one step (0, 1, 2, ...).
The chosen steps run with FULL_TRACE through :mod:`.record.session_run` (the
patch ``tfprof record`` uses) and are added to :attr:`ProfileContext.profiler`
(a :class:`~tfprof_shell.profiler.Profiler`); at a dump step the profile is
written to ``profile_dir/profile_<step>``; at an auto-profiling step its view
is printed and kept (:meth:`ProfileContext.get_profiles`). TensorFlow's
defaults apply: without ``trace_steps``, steps after the first 10 are traced
when their fetches are new (and now and then while coverage is low), at most
100; without ``dump_steps``, the profile is written at step 100.
"""

from __future__ import annotations

import os
import random
import sys
import threading
from typing import Any, Iterable, Mapping, Optional

from .errors import OptionError
from .option_dicts import options_from_dict
from .profiler import Profiler
from .record.session_run import SessionRunPatch, TracedCall, fetch_key, full_trace

WARMUP_STEPS = 10
MAX_TRACED_STEPS = 100
#: add_auto_profiling's commands -> the Profiler method that runs each.
COMMANDS = {"graph": "profile_graph", "scope": "profile_name_scope",
            "op": "profile_operations", "code": "profile_python"}

_active: list["ProfileContext"] = []


class ProfileContext:
    """Traces chosen ``Session.run`` steps, dumps profiles and runs views at chosen steps.

    ``enabled=False`` makes every method a no-op (and :attr:`profiler` None);
    ``debug=True`` also writes each traced step's RunMetadata as text
    (``run_meta_<step>``) and says on stderr what it does.
    """

    def __init__(self, profile_dir: Any, trace_steps: Optional[Iterable[int]] = None,
                 dump_steps: Optional[Iterable[int]] = None, enabled: bool = True,
                 debug: bool = False) -> None:
        self._enabled = enabled
        self._debug = debug
        self._profiler: Optional[Profiler] = None
        self._views: dict[str, dict[int, Any]] = {}
        if not enabled:
            return
        if not profile_dir:
            raise OptionError("ProfileContext needs a directory for profiles")
        self._profile_dir = os.fsdecode(profile_dir)
        self._auto_tracing = trace_steps is None
        self._trace_steps = set() if trace_steps is None else set(trace_steps)
        if len(self._trace_steps) > MAX_TRACED_STEPS:
            raise OptionError("ProfileContext traces at most %d steps" % MAX_TRACED_STEPS)
        self._dump_steps = {MAX_TRACED_STEPS} if dump_steps is None else set(dump_steps)
        self._slow_steps = self._dump_steps | self._trace_steps
        self._rng = random.Random(111)
        self._fetched: set[Any] = set()
        self._trace_next = False
        self._dump_next = False
        self._step = 0
        self._traced = 0
        self._auto_profiles: list[tuple[str, Mapping[str, Any], set[int]]] = []
        self._lock = threading.Lock()
        self._patch: Optional[SessionRunPatch] = None

    # -- TensorFlow's public methods -----------------------------------------

    @property
    def profiler(self) -> Optional[Profiler]:
        """The Profiler the traced steps go to (made on first use, for the default graph)."""
        if not self._enabled:
            return None
        if self._profiler is None:
            self._profiler = Profiler(_default_graph())
        return self._profiler

    def add_auto_profiling(self, cmd: str, options: Mapping[str, Any],
                           profile_steps: Iterable[int]) -> None:
        """Run view ``cmd`` (scope, graph, op, code) with ``options`` at ``profile_steps``."""
        if not self._enabled:
            return
        if cmd not in COMMANDS:
            raise OptionError("add_auto_profiling: unknown cmd '%s' (use %s)"
                              % (cmd, ", ".join(COMMANDS)))
        options_from_dict(options)  # a mistake is reported now, not inside Session.run
        steps = set(profile_steps)
        self._auto_profiles.append((cmd, dict(options), steps))
        self._slow_steps |= steps
        self._trace_steps |= steps

    def trace_next_step(self) -> None:
        """Trace the next ``Session.run`` call and add it to the profiler."""
        if self._enabled:
            self._trace_next = True
            self._slow_steps.add(self._step)

    def dump_next_step(self) -> None:
        """Write the profile after the next ``Session.run`` call."""
        if self._enabled:
            self._dump_next = True
            self._slow_steps.add(self._step)

    def get_profiles(self, cmd: str) -> dict[int, Any]:
        """Step -> result message of each auto-profiling run of ``cmd`` so far."""
        if cmd not in self._views:
            raise OptionError("no auto-profiling of '%s' has run" % cmd)
        return self._views[cmd]

    def __enter__(self) -> "ProfileContext":
        if not self._enabled:
            return self
        if _active:
            raise OptionError("a ProfileContext is already active; they do not nest")
        try:
            import tensorflow  # noqa: F401  (the context traces TensorFlow's Session.run)
        except ImportError:
            raise OptionError("ProfileContext traces Session.run and needs TensorFlow; "
                              "without it, use Profiler on saved GraphDef and RunMetadata "
                              "files") from None
        self._patch = SessionRunPatch(self)
        self._patch.install()
        _active.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._enabled or self._patch is None:
            return
        self._patch.uninstall()
        self._patch = None
        _active.remove(self)

    # -- the tracer the Session.run patch calls --------------------------------

    def before_run(self, session: Any, fetches: Any, feed_dict: Any, options: Any,
                   run_metadata: Any) -> Optional[TracedCall]:
        """Count the step; decide whether it is traced, dumped or profiled."""
        step = self._step
        dump = step in self._dump_steps or self._dump_next
        locked = self._lock.acquire(False)
        try:
            if not locked or self._fast(step):
                return None
            if self._should_trace(step, session, fetches):
                if self._debug:
                    sys.stderr.write("debug: tracing step: %d\n" % step)
                traced_options, meta = full_trace(options, run_metadata)
                return TracedCall(traced_options, meta, (step, True, dump))
            return TracedCall(None, None, (step, False, dump))
        finally:
            self._step += 1
            self._trace_next = self._dump_next = False
            if locked:
                self._lock.release()

    def before_callable(self, session: Any, fetches: Any, options: Any,
                        run_metadata: Any) -> Optional[TracedCall]:
        """Callables are not steps (TensorFlow's ProfileContext patches ``run`` only)."""
        return None

    def after_run(self, session: Any, call: TracedCall) -> None:
        """Add the traced step to the profiler, then dump and profile as planned."""
        step, traced, dump = call.data
        profiler = self.profiler
        assert profiler is not None
        if traced:
            if self._debug:
                self._dump_text(call.run_metadata, "run_meta_%d" % step)
            profiler._graph = session.graph
            profiler.add_step(step, call.run_metadata)
        if dump:
            if self._debug:
                sys.stderr.write("debug: dumping file at step: %d\n" % step)
            os.makedirs(self._profile_dir, exist_ok=True)
            profiler._write_profile(os.path.join(self._profile_dir, "profile_%d" % step))
        for cmd, options, steps in self._auto_profiles:
            if step in steps:
                if self._debug:
                    sys.stderr.write("debug: profiling %s step: %d\n" % (cmd, step))
                views = self._views.setdefault(cmd, {})
                views[step] = getattr(profiler, COMMANDS[cmd])(options)

    # -- TensorFlow's step choice ------------------------------------------------

    def _fast(self, step: int) -> bool:
        if step in self._slow_steps:
            return False
        return not (self._auto_tracing and step > WARMUP_STEPS
                    and self._traced <= MAX_TRACED_STEPS)

    def _should_trace(self, step: int, session: Any, fetches: Any) -> bool:
        if self._traced > MAX_TRACED_STEPS:
            return False
        if step in self._trace_steps or self._trace_next:
            self._traced += 1
            return True
        if not (self._auto_tracing and step > WARMUP_STEPS):
            return False
        names = _fetch_names(session, fetches)
        if self._debug:
            sys.stderr.write("debug: trace fetches: %s\n" % (names,))
        if names not in self._fetched:
            self._fetched.add(names)
            self._traced += 1
            return True
        profiler = self.profiler
        if (profiler is not None and profiler._coverage < 0.5 and step < MAX_TRACED_STEPS
                and self._rng.randint(0, 10) < 2):
            self._traced += 1
            return True
        return False

    def _dump_text(self, message: Any, name: str) -> None:
        os.makedirs(self._profile_dir, exist_ok=True)
        with open(os.path.join(self._profile_dir, name), "w", encoding="utf-8") as fh:
            fh.write("%s" % message)


def _fetch_names(session: Any, fetches: Any) -> Any:
    """The fetched tensors' and ops' names, sorted and joined, as TensorFlow keys new fetches."""
    try:
        from tensorflow.python.client import session as tf_session  # type: ignore
        with session.graph.as_default():
            mapper = tf_session._FetchMapper.for_fetch(fetches)
            return "-".join(sorted(f.name for f in mapper.unique_fetches()))
    except Exception:  # a fetch TensorFlow's mapper cannot name: its structure will do
        return fetch_key(fetches)


def _default_graph() -> Any:
    """TensorFlow's default graph, as TensorFlow's ProfileContext gives its Profiler."""
    if "tensorflow" not in sys.modules:
        return None
    from tensorflow.python.framework import ops  # type: ignore
    return ops.get_default_graph()
