"""One process's recording: who it is, its folder (made on first write), what it recorded.

Runs inside the user's program: standard library only, every file written
atomically (a temporary file renamed into place), and nothing is created
before there is something to write.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

from . import layout
from .settings import Settings

#: Environment variables that give a process's rank, most specific first.
RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "RANK",
                  "HOROVOD_RANK")


def now() -> str:
    """The current time, ISO 8601 in UTC to the millisecond."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (int(t * 1000) % 1000)


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed into place."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(path: str, doc: Any) -> None:
    """Write ``doc`` as indented JSON, atomically."""
    write_atomic(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def tf_config_task(environ: Any) -> tuple[str, Optional[int]]:
    """The (type, index) of TF_CONFIG's task, ("", None) without one."""
    try:
        task = json.loads(environ.get("TF_CONFIG", "") or "{}").get("task") or {}
        index = task.get("index")
        return str(task.get("type") or ""), (int(index) if index is not None else None)
    except (ValueError, TypeError, AttributeError):
        return "", None


def identify(settings: Settings, environ: Any = os.environ,
             argv: Optional[list[str]] = None) -> tuple[str, str, Optional[int]]:
    """This process's (job, host, rank), as its folder name spells them.

    The job is ``--job``, else TF_CONFIG's task type, else the script's name; the
    rank comes from TF_CONFIG's task index or the launchers' rank variables.
    """
    task_type, rank = tf_config_task(environ)
    if rank is None:
        for var in RANK_VARIABLES:
            value = environ.get(var, "").strip()
            if value.isdigit():
                rank = int(value)
                break
    argv = sys.argv if argv is None else argv
    script = os.path.basename(argv[0]) if argv and argv[0] not in ("", "-c", "-m") else "python"
    if script.endswith(".py"):
        script = script[:-3]
    job = settings.job or task_type or script
    host = socket.gethostname().split(".", 1)[0]
    return job, host, rank


class ProcessRecording:
    """What this process recorded, and the one folder it writes into."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pid = os.getpid()
        self.job, self.host, self.rank = identify(settings)
        self.name = layout.folder_name(self.job, self.host, self.rank, self.pid)
        self.folder = os.path.join(settings.dir, self.name)
        self.started = now()
        self.kind = ""
        self.route = ""
        #: Framework family -> (kind, route) of the recorder that traced its steps.
        self.claims: dict[str, tuple[str, str]] = {}
        self.steps: list[int] = []
        self.status = "recording"
        self.notes: list[str] = []
        #: The frameworks the process imported, with their versions.
        self.frameworks: dict[str, str] = {}
        #: Set by a recorder when this process must leave no trace (a DataLoader worker).
        self.silent = False
        self.finishers: list[Callable[[str], None]] = []
        #: How many steps each detector has counted so far (the largest goes in process.json).
        self.counters: list[Callable[[], int]] = []
        #: Seconds the recorder spent on its own work (files, op log, profiler start and save).
        self.spent = 0.0
        self.lock = threading.RLock()
        self._made = False
        self._finished = False
        self.failed = False

    # -- the folder ------------------------------------------------------
    def path(self, *parts: str) -> str:
        """A path inside the folder, the folder made first (lazily)."""
        if not self._made:
            os.makedirs(self.folder, exist_ok=True)
            self._made = True
            self.save()
        return os.path.join(self.folder, *parts)

    def write(self, name: str, data: bytes) -> None:
        """Write one file of the recording, atomically."""
        write_atomic(self.path(name), data)

    @contextmanager
    def timed(self) -> Iterator[None]:
        """Count the time of a piece of the recorder's own work into ``spent``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.spent += time.perf_counter() - t0

    def claim(self, kind: str, route: str) -> bool:
        """Whether ``route`` may record: the first route of each framework to trace a step
        keeps it (a program using two frameworks has each record itself)."""
        with self.lock:
            if self.failed or self._finished:
                return False
            family = layout.FAMILY.get(kind, kind)
            held = self.claims.get(family)
            if held is None:
                self.claims[family] = (kind, route)
                if not self.kind:
                    self.kind, self.route = kind, route
                return True
            return held == (kind, route)

    def set_rank(self, rank: int) -> None:
        """Take the rank a framework gives (``torch.distributed``) before anything is written."""
        with self.lock:
            if self._made or self.rank is not None:
                return
            self.rank = rank
            self.name = layout.folder_name(self.job, self.host, self.rank, self.pid)
            self.folder = os.path.join(self.settings.dir, self.name)

    def adopt_runs(self, staging: str) -> None:
        """Move a profiler's ``plugins/profile/<run>`` folders from ``staging`` into the
        process folder, then remove ``staging``."""
        try:
            runs_from = os.path.join(staging, "plugins", "profile")
            runs_to = self.path("plugins", "profile")
            os.makedirs(runs_to, exist_ok=True)
            for run in os.listdir(runs_from):
                os.replace(os.path.join(runs_from, run), os.path.join(runs_to, run))
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def staging(self) -> str:
        """A folder beside the process folders for a profiler to write into before adoption."""
        return os.path.join(self.settings.dir, ".staging." + self.name)

    def add_step(self, step: int) -> None:
        """Note a recorded step (its files are written)."""
        with self.lock:
            if step not in self.steps:
                self.steps.append(step)
            self.save()

    def note(self, text: str) -> None:
        """Keep a remark for process.json (e.g. giving way to the program's own profiler)."""
        with self.lock:
            if text not in self.notes:
                self.notes.append(text)
            if self._made:
                self.save()

    # -- what it says about itself ---------------------------------------
    def describe(self) -> dict[str, Any]:
        """process.json's document (also the status file the launcher reads)."""
        return {"format": layout.FORMAT, "version": layout.VERSION, "pid": self.pid,
                "job": self.job, "host": self.host, "rank": self.rank,
                "argv": list(sys.argv), "frameworks": dict(self.frameworks),
                "kind": self.kind, "route": self.route,
                "kinds": [kind for kind, _ in self.claims.values()], "steps": sorted(self.steps),
                "steps_seen": self.steps_seen(), "recorder_seconds": round(self.spent, 4),
                "status": self.status, "notes": list(self.notes),
                "started": self.started, "updated": now(),
                "folder": self.name if self._made else None}

    def steps_seen(self) -> int:
        """The most calls any step detector has counted (0 if none could say)."""
        try:
            return max((count() for count in self.counters), default=0)
        except Exception:
            return 0

    def save(self) -> None:
        """Rewrite process.json (only once the folder exists)."""
        if self._made:
            write_json(os.path.join(self.folder, layout.PROCESS), self.describe())

    # -- the end ---------------------------------------------------------
    def finish(self, reason: str) -> None:
        """Flush what is being traced, then leave the final process.json and status file.

        Called at exit, on a default SIGTERM, or when the program's own
        profiler takes over; runs once and never raises.
        """
        with self.lock:
            if self._finished or os.getpid() != self.pid:
                return
            self._finished = True
            for flush in self.finishers:
                try:
                    flush(reason)
                except Exception as exc:  # keep what was already written
                    self.notes.append("could not save the last steps: %s: %s"
                                      % (type(exc).__name__, exc))
            if self.silent:
                return
            if self.status == "recording":
                self.status = reason
            try:
                self.save()
                if self.settings.status_dir and os.path.isdir(self.settings.status_dir):
                    write_json(os.path.join(self.settings.status_dir, "%d.json" % self.pid),
                               self.describe())
            except OSError:
                pass

    def fail(self, where: str, exc: BaseException) -> None:
        """Stop recording after an internal error, saying so once on stderr."""
        with self.lock:
            if self.failed:
                return
            self.failed = True
            self.note("stopped after an internal error in %s: %s: %s"
                      % (where, type(exc).__name__, exc))
        try:
            sys.stderr.write("tfprof record: stopped recording in process %d (%s: %s: %s)\n"
                             % (self.pid, where, type(exc).__name__, exc))
        except Exception:
            pass
