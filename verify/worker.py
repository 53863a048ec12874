"""Run the solver under test in a worker process that is killed when it overruns its time limit.

:func:`svmref.verify.check` hands each instance to a :class:`Runner`:

* ``Runner(solver, timeout=None)`` calls the solver in this process (no time limit);
* with a ``timeout`` it starts one worker process per run (re-started after a kill) and waits at most
  ``timeout`` seconds for each answer. The worker is started with ``fork`` where the platform has it
  (Linux), so any callable works, a closure or a function of a file loaded by path included; elsewhere
  with ``spawn``, which needs a callable that can be imported by name (``spec``, as the command line
  gives it) or pickled. A callable that can be neither runs in this process, without a time limit, and
  the runner says so in ``note``.

The worker ignores SIGINT: Ctrl-C reaches the parent, which kills the worker and keeps what finished.
An answer that cannot be pickled back (an instance of a local class) is sent as a plain namespace with
the attributes of the contract (:data:`svmref.verify.answers.ATTRIBUTES`) and its type name.
"""
from __future__ import annotations

import multiprocessing as mp
import pickle
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

from .answers import ATTRIBUTES, PlainAnswer
from .loader import load_spec

__all__ = ["Runner", "Outcome"]

#: Seconds a worker may take to start (a spawn worker imports numpy, svmref and the solver's module).
_START_LIMIT = 300.0
#: Seconds between checks for a pending Ctrl-C while waiting for the solver's answer.
_POLL_SLICE = 0.1


@dataclass
class Outcome:
    """What one call of the solver gave.

    ``kind``: ``"ok"`` (``value`` is the answer), ``"raised"`` (``message`` "TypeName: text"),
    ``"timeout"`` (killed after ``timeout`` s), ``"died"`` (the worker process ended without an answer:
    ``message`` has its exit code). ``warnings``: ``(category name, message)`` of the warnings it issued.
    """

    kind: str
    value: object = None
    message: str = ""
    time: float = float("nan")
    warnings: list = field(default_factory=list)


def _call(solver, args, kwargs) -> Outcome:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            out = solver(*args, **kwargs)
        except Exception as exc:  # the user's code: any exception is a verdict, not a crash
            return Outcome("raised", message=f"{type(exc).__name__}: {exc}", time=time.perf_counter() - t0,
                           warnings=[(w.category.__name__, str(w.message)) for w in caught])
        elapsed = time.perf_counter() - t0
    return Outcome("ok", out, time=elapsed, warnings=[(w.category.__name__, str(w.message)) for w in caught])


def _portable(out):
    try:
        pickle.dumps(out)
        return out
    except Exception:
        pass
    if isinstance(out, (tuple, list)):
        return type(out)(_portable(x) for x in out) if isinstance(out, tuple) else [_portable(x) for x in out]
    if isinstance(out, dict):
        return {k: _portable(v) for k, v in out.items()}
    attrs = {k: getattr(out, k) for k in ATTRIBUTES if hasattr(out, k)}
    return PlainAnswer(type_name=type(out).__name__, **attrs)


def _worker_main(solver, spec, conn) -> None:  # pragma: no cover - runs in the child process
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if solver is None:
        try:
            solver = load_spec(spec)
        except Exception as exc:
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))
            return
    conn.send(("ready", ""))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        args, kwargs = msg
        res = _call(solver, args, kwargs)
        try:
            res.value = _portable(res.value)
            conn.send(res)
        except Exception as exc:
            conn.send(Outcome("raised", message=f"the answer cannot be sent back from the worker process: "
                                                f"{type(exc).__name__}: {exc}", time=res.time))
        except BaseException:
            traceback.print_exc()
            return


def _start_method(solver, spec) -> tuple[str | None, str]:
    if "fork" in mp.get_all_start_methods() and sys.platform.startswith("linux"):
        return "fork", ""
    if spec:
        return "spawn", ""
    try:
        pickle.dumps(solver)
        return "spawn", ""
    except Exception:
        return None, ("the solver cannot be pickled and this platform has no fork: it runs in the verify "
                      "process and --timeout is not enforced")


class Runner:
    """Calls the solver, in a killable worker process when ``timeout`` is given (see the module docstring)."""

    def __init__(self, solver, timeout: float | None = None, spec: str | None = None):
        self.solver, self.timeout, self.spec = solver, timeout, spec
        self.note = ""
        self.method: str | None = None
        if timeout is not None:
            self.method, self.note = _start_method(solver, spec)
        self._proc = None
        self._conn = None

    @property
    def isolated(self) -> bool:
        return self.method is not None

    def _start(self) -> str:
        """Start the worker; returns "" when it is ready, else why it is not."""
        ctx = mp.get_context(self.method)
        parent, child = ctx.Pipe()
        solver = None if (self.method == "spawn" and self.spec) else self.solver
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork of a multi-threaded process
            proc = ctx.Process(target=_worker_main, args=(solver, self.spec, child), daemon=True,
                               name="svmref-verify-solver")
            proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        # the clock of --timeout starts when the worker is ready (a spawn worker imports first)
        try:
            state, msg = parent.recv() if parent.poll(_START_LIMIT) else ("failed", f"not ready in {_START_LIMIT:g} s")
        except (EOFError, OSError):
            state, msg = "failed", f"the worker process ended while starting (exit code {proc.exitcode})"
        if state != "ready":
            self.kill()
            return msg
        return ""

    def call(self, args, kwargs) -> Outcome:
        if not self.isolated:
            return _call(self.solver, args, kwargs)
        if self._proc is None or not self._proc.is_alive():
            why = self._start()
            if why:
                return Outcome("died", message=f"the solver's worker process could not start: {why}")
        t0 = time.perf_counter()
        try:
            self._conn.send((args, kwargs))
            ready = self._wait(t0)
        except (BrokenPipeError, EOFError, OSError):
            ready = True
        if not ready:
            self.kill()
            return Outcome("timeout", message=f"no answer within {self.timeout:g} s (--timeout): the solver's "
                                              "process was killed", time=time.perf_counter() - t0)
        try:
            return self._conn.recv()
        except (EOFError, OSError, pickle.UnpicklingError, AttributeError, ImportError) as exc:
            code = None
            if self._proc is not None:
                self._proc.join(1.0)
                code = self._proc.exitcode
            self.kill()
            if isinstance(exc, (EOFError, OSError)):
                return Outcome("died", message=f"the solver's process ended without an answer (exit code {code})",
                               time=time.perf_counter() - t0)
            return Outcome("raised", message=f"the answer cannot be read back: {type(exc).__name__}: {exc}",
                           time=time.perf_counter() - t0)

    def _wait(self, t0: float) -> bool:
        """Wait for the answer until ``timeout``, in short slices: a Ctrl-C that the operating system delivers
        to another thread of this process (BLAS and numba start some) does not interrupt a blocking wait, and is
        only acted on when the main thread runs Python again; between slices it is, at once."""
        while True:
            left = self.timeout - (time.perf_counter() - t0)
            if left <= 0.0:
                return False
            if self._conn.poll(min(_POLL_SLICE, left)):
                return True

    def kill(self) -> None:
        """Kill the worker (now) and forget it; the next call starts a fresh one."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is not None and proc.is_alive():
            proc.terminate()
            proc.join(1.0)
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not."""
        if self._proc is not None and self._conn is not None:
            try:
                self._conn.send(None)
                self._proc.join(2.0)
            except (BrokenPipeError, OSError):
                pass
        self.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill() if exc[0] is not None else self.close()
        return False
