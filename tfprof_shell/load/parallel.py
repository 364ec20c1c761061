"""Load several profiles at once: in a pool of processes, or on a Dask cluster.

Each profile is independent work. :func:`load_summary` is that work, the
same on both routes: load one profile and return its compact summary
(:mod:`tfprof_shell.model.summary`) or its error as plain values, never an
exception object. The parent unpacks each summary into a Model whose
detailed per-step records, which only timelines and the accelerator advice
read, come from loading the profile again here, once, when first asked.
"""

from __future__ import annotations

import gc
import os
import signal
import traceback
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from .. import errors
from ..errors import LoadError, UsageError, UserError
from ..model import Model
from ..model.summary import pack_model, unpack_model
from . import Inputs, load_model
from .progress import PROFILES, JobShare, Progress, reporting

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

#: What :func:`load_summary` returns: (OK, summary bytes, 0, "") or
#: (FAILED, message, exit status, UserError subclass name) or (BUG, traceback, 1, "").
WorkerResult = tuple[str, Union[bytes, str], int, str]
OK, FAILED, BUG = "ok", "failed", "bug"

#: Seconds to wait for a Dask scheduler to answer.
DASK_CONNECT_TIMEOUT = 10
#: Modules the fork server imports once, so that each loading process starts warm.
PRELOAD = ["tfprof_shell.load.parallel", "tfprof_shell.load.detect",
           "tfprof_shell.load.profile", "tfprof_shell.load.graph", "tfprof_shell.load.xplane",
           "tfprof_shell.load.chrome_trace"]


@dataclass(frozen=True)
class LoadedJob:
    """One loaded profile: its name, its model and the loader's notes for stderr."""

    name: str
    model: Model
    notes: tuple[str, ...]


def load_many(jobs: Sequence[tuple[str, Inputs]], workers: int = 0,
              scheduler: Optional[str] = None,
              progress: Optional[Progress] = None) -> list[LoadedJob]:
    """Load every (name, inputs) job; the results in input order.

    ``workers`` processes at a time. One job, or one worker, loads here with
    :func:`load_model` (full detail, no summary). 0 means one per CPU for
    the jobs a pool speeds up (a --profile_path of any kind, whose parsing
    dominates); GraphDef and RunMetadata inputs load here.
    ``scheduler`` (``tcp://host:port``) sends the jobs to that Dask cluster
    instead, whose workers must see the same files. A failing job raises its
    UserError, the message prefixed with ``profile NAME:`` when there are
    several jobs; the jobs still running are cancelled.
    ``progress`` hears the bytes read of one job, the profiles done of several.
    """
    if workers < 0:
        raise ValueError("workers must be 0 (one per CPU) or more")
    jobs = list(jobs)
    if len(jobs) == 1 and not scheduler:
        try:
            with reporting(progress):
                return [_load_here(jobs[0][0], jobs[0][1], False)]
        finally:
            if progress is not None:
                progress.end()
    counter = _Counter(progress, len(jobs))
    try:
        if scheduler:
            return _load_on_dask(jobs, scheduler, counter)
        pooled = [i for i, (_, inputs) in enumerate(jobs) if workers or _pays_in_pool(inputs)]
        workers = min(workers or os.cpu_count() or 1, len(pooled))
        if workers <= 1:
            return [counter.here(name, inputs) for name, inputs in jobs]
        loaded = dict(zip(pooled, _load_in_processes([jobs[i] for i in pooled], workers,
                                                     counter)))
        return [loaded[i] if i in loaded else counter.here(name, inputs)
                for i, (name, inputs) in enumerate(jobs)]
    finally:
        counter.end()


class _Counter:
    """The profiles done of several, told to ``progress`` (each one loaded here by its bytes)."""

    def __init__(self, progress: Optional[Progress], total: int) -> None:
        self.progress = progress
        self.done = 0
        if progress is not None:
            progress.begin("%d profiles" % total, total, PROFILES)

    def here(self, name: str, inputs: Inputs) -> LoadedJob:
        """Load one job in this process, its bytes counted as part of a profile."""
        share = JobShare(self.progress, self.done) if self.progress is not None else None
        with reporting(share):
            job = _load_here(name, inputs, True)
        self.one_more()
        return job

    def one_more(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress.update(self.done)

    def end(self) -> None:
        if self.progress is not None:
            self.progress.end()


def _pays_in_pool(inputs: Inputs) -> bool:
    """Whether loading ``inputs`` in another process pays (a profile file's does)."""
    from .detect import resolve
    if not inputs.profile_path:
        return False
    try:
        resolve(inputs.profile_path, inputs.run, inputs.hosts)
    except UserError:
        return False  # loading it here gives the error
    return True


def load_summary(inputs: Inputs, keep: Optional[list[Model]] = None) -> WorkerResult:
    """The per-profile work of both routes: load, then pack (see :data:`WorkerResult`).

    ``keep`` gets the loaded model: a process about to exit spares freeing it.
    """
    try:
        model = load_model(inputs)
        if keep is not None:
            keep.append(model)
        return OK, pack_model(model), 0, ""
    except UserError as exc:
        return FAILED, exc.message, exc.exit_code, type(exc).__name__
    except Exception:  # a bug: the parent shows its traceback
        return BUG, traceback.format_exc(), 1, ""


def _load_here(name: str, inputs: Inputs, named: bool) -> LoadedJob:
    try:
        model = load_model(inputs)
    except UserError as exc:
        if not named:
            raise
        raise _error(name, FAILED, exc.message, exc.exit_code, type(exc).__name__) from None
    return LoadedJob(name, model, tuple(model.notes))


def _finish(name: str, inputs: Inputs, result: WorkerResult) -> LoadedJob:
    """The LoadedJob of a worker's result, or its error raised here."""
    status, payload, code, kind = result
    if status != OK:
        raise _error(name, status, str(payload), code, kind)
    model = unpack_model(bytes(payload), partial(load_model, _absolute(inputs, os.getcwd())))
    return LoadedJob(name, model, tuple(model.notes))


def _error(name: str, status: str, message: str, code: int, kind: str) -> Exception:
    if status == BUG:
        return RuntimeError("loading profile %s failed in a worker process:\n%s"
                            % (name, message))
    cls = getattr(errors, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, UserError)):
        cls = LoadError
    error = cls("profile %s: %s" % (name, message))
    error.exit_code = code
    return error


def _absolute(inputs: Inputs, cwd: str) -> Inputs:
    """``inputs`` with relative paths made absolute against ``cwd``."""
    def fix(path: Optional[str]) -> Optional[str]:
        return os.path.join(cwd, path) if path else path
    profile_path = inputs.profile_path
    if profile_path:  # one path, or else a comma-separated list (as detect.resolve reads it)
        whole = os.path.join(cwd, profile_path)
        profile_path = (whole if os.path.exists(whole) else
                        ",".join(fix(p) or p for p in profile_path.split(",")))
    return replace(inputs, profile_path=profile_path, graph_path=fix(inputs.graph_path),
                   run_meta_paths=tuple(fix(p) or p for p in inputs.run_meta_paths),
                   op_log_path=fix(inputs.op_log_path),
                   checkpoint_path=fix(inputs.checkpoint_path))


# -- local processes ----------------------------------------------------------

def _context() -> Any:
    """The start method of the loading processes.

    Not fork: the parent may already run threads (the shell does), and a
    forked child inherits their locks in whatever state they were. spawn
    starts a fresh interpreter per process, which then imports the package
    again: 120 to 150 ms per process on a 2-core machine. forkserver starts
    one such clean process once (140 to 280 ms, with :data:`PRELOAD`
    imported) and forks each loading process from it, single-threaded, in
    10 to 30 ms (bench/bench_parallel.py measures both). Where there is no
    fork server (Windows), spawn.
    """
    import multiprocessing  # here: one profile never needs a process (start-up time)
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def _child(conn: Connection, inputs: Inputs, cwd: str) -> None:
    """A loading process: one profile, its result sent back through ``conn``."""
    # Ctrl-C reaches the whole process group: the parent alone handles it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()  # it exits after one load: collecting would only cost time
    try:
        os.chdir(cwd)
    except OSError as exc:
        result: WorkerResult = (FAILED, "cannot enter the current directory %s: %s"
                                % (cwd, exc.strerror), errors.EXIT_DATA, "LoadError")
    else:
        loaded: list[Model] = []
        result = load_summary(inputs, loaded)
    try:
        conn.send(result)
    except OSError:  # the parent gave up on us
        pass
    os._exit(0)  # at once: the loaded model is not worth freeing object by object


def _load_in_processes(jobs: list[tuple[str, Inputs]], workers: int,
                       counter: _Counter) -> list[LoadedJob]:
    """One process per job, ``workers`` at a time; fails at the first error to arrive."""
    from multiprocessing.connection import wait
    ctx = _context()
    cwd = os.getcwd()
    results: list[Optional[LoadedJob]] = [None] * len(jobs)
    waiting = list(range(len(jobs)))[::-1]
    running: dict[Connection, tuple[int, Any]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                index = waiting.pop()
                reader, writer = ctx.Pipe(duplex=False)
                process = ctx.Process(target=_child, args=(writer, jobs[index][1], cwd),
                                      name="tfprof-load-%d" % index, daemon=True)
                running[reader] = (index, process)
                process.start()
                writer.close()
            for reader in wait(list(running)):
                index, process = running.pop(reader)
                try:
                    result: Optional[WorkerResult] = reader.recv()
                except (EOFError, OSError):
                    result = None
                reader.close()
                process.join()
                name, inputs = jobs[index]
                if result is None:
                    raise LoadError("profile %s: the process loading it %s"
                                    % (name, _death(process.exitcode)))
                results[index] = _finish(name, inputs, result)
                counter.one_more()
    finally:
        for reader, (_, process) in running.items():
            if process.pid is not None:
                process.terminate()
        for reader, (_, process) in running.items():
            if process.pid is not None:
                process.join()
            reader.close()
    return [r for r in results if r is not None]


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            how = signal.Signals(-exitcode).name
        except ValueError:
            how = "signal %d" % -exitcode
        return "was killed (%s; out of memory?)" % how
    return "ended without an answer (exit status %s)" % exitcode


# -- Dask -------------------------------------------------------------------

def _load_on_dask(jobs: list[tuple[str, Inputs]], address: str,
                  counter: _Counter) -> list[LoadedJob]:
    """The jobs on the Dask cluster whose scheduler is at ``address``."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("a Dask scheduler needs the distributed package: "
                         "pip install 'tfprof-shell[dask]'") from None
    from distributed.comm import parse_address
    from distributed.comm.registry import get_backend
    try:
        # Checked first: a Client that fails on a malformed address hangs when collected.
        scheme, location = parse_address(address)
        get_backend(scheme).resolve_address(location)
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise LoadError("cannot reach the Dask scheduler at %s: %s" % (address, reason)) from None
    cwd = os.getcwd()
    results: list[Optional[LoadedJob]] = [None] * len(jobs)
    try:
        futures = client.map(load_summary, [_absolute(inputs, cwd) for _, inputs in jobs],
                             pure=False)
        index_of = {future.key: i for i, future in enumerate(futures)}
        try:
            for future in as_completed(futures, loop=client.loop):
                index = index_of[future.key]
                name, inputs = jobs[index]
                try:
                    result = future.result()
                except Exception as exc:  # the cluster's failure, not the profile's
                    reason = (str(exc).strip().splitlines() or [""])[0]
                    raise LoadError("profile %s: the Dask worker failed (%s%s%s); is the same "
                                    "tfprof-shell installed on every worker?"
                                    % (name, type(exc).__name__, ": " if reason else "",
                                       reason)) from None
                results[index] = _finish(name, inputs, result)
                counter.one_more()
        finally:
            client.cancel([f for f in futures if not f.done()])
    finally:
        client.close()
    return [r for r in results if r is not None]
