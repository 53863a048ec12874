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
The worker dies with its parent however the parent ends (SIGTERM, SIGKILL, a crash), so a hanging solver never
outlives verify: on Linux the kernel kills it (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), elsewhere a watchdog thread
sees that it has been reparented within :data:`PARENT_POLL` seconds and exits.
An answer that cannot be pickled back (an instance of a local class) is sent as a plain namespace with
the attributes of the contract (:data:`svmref.verify.answers.ATTRIBUTES`), its type name and the names of
all its attributes (for the error message when it is unusable).

What the solver prints while it runs (its standard output and error, at the level of the file descriptors,
so C and numba code are caught too) goes to a temporary file that the runner reads after each call, also
after a timeout or a crash (the lines printed until then): :attr:`Outcome.output`, never the terminal. In
this process (``timeout=None``) the capture covers the whole process for the duration of the call, other
threads included. An exception keeps its traceback (:attr:`Outcome.traceback`).
"""
from __future__ import annotations

import collections
import contextlib
import ctypes
import functools
import multiprocessing as mp
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field

from .answers import ATTRIBUTES, PlainAnswer, attribute_names
from .loader import load_spec

__all__ = ["Runner", "Outcome"]

#: Seconds a worker may take to start (a spawn worker imports numpy, svmref and the solver's module).
_START_LIMIT = 300.0
#: Seconds between checks for a pending Ctrl-C while waiting for the solver's answer.
_POLL_SLICE = 0.1
#: Seconds between the worker's checks that its parent is alive (where the kernel cannot be asked to kill it).
PARENT_POLL = 0.5
#: Lines of a solver's output kept per call: the first and the last half of them (the count is exact).
OUTPUT_KEEP_LINES = 1000
#: Characters kept of one line of a solver's output.
OUTPUT_LINE_CHARS = 1000
#: Distinct warnings (category and message) recorded per call, each with its count; the others are only counted.
WARNINGS_KEEP = 20


@dataclass
class Outcome:
    """What one call of the solver gave.

    ``kind``: ``"ok"`` (``value`` is the answer), ``"raised"`` (``message`` "TypeName: text", ``traceback``
    the exception's traceback from the solver's frame down), ``"timeout"`` (killed after ``timeout`` s),
    ``"died"`` (the worker process ended without an answer: ``message`` has its exit code). ``warnings``:
    ``(category name, message, count)`` of the distinct warnings it issued (at most :data:`WARNINGS_KEEP`, in the
    order they first came), ``warnings_total`` how many it issued in all. ``output``: what it printed (standard output and
    error together; at most :data:`OUTPUT_KEEP_LINES` lines, the middle left out and said so), ``output_lines``
    how many lines it printed in all.
    """

    kind: str
    value: object = None
    message: str = ""
    time: float = float("nan")
    warnings: list = field(default_factory=list)
    warnings_total: int = 0
    traceback: str = ""
    output: str = ""
    output_lines: int = 0


@functools.cache
def _libc():
    """The C library of this process (None where it cannot be reached by name: Windows)."""
    try:
        return ctypes.CDLL(None)
    except (OSError, TypeError):
        return None


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers (what compiled code printed with printf), where it can be reached."""
    try:
        _libc().fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library by that route: Python's own streams only
        pass


def _flush_python_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed or replaced stream: nothing to flush
            pass


@contextlib.contextmanager
def _captured(path: str | None):
    """While the solver runs, send file descriptors 1 and 2 and ``sys.stdout``/``sys.stderr`` to the file ``path``.

    Python's streams are line-buffered into the same open file (appending), so lines keep their order and a
    process killed at the timeout leaves every finished line. ``path`` None: nothing is captured.
    """
    if path is None:
        yield
        return
    _flush_python_stdio()
    _flush_c_stdio()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    saved = []
    try:
        for target in (1, 2):
            try:
                saved.append((target, os.dup(target)))
                os.dup2(fd, target)
            except OSError:  # no such descriptor (a process without a console): Python's streams only
                pass
        stream = open(os.dup(fd), "w", buffering=1, encoding="utf-8", errors="backslashreplace")
        try:
            with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
                yield
        finally:
            stream.close()
    finally:
        _flush_c_stdio()
        for target, copy in saved:
            os.dup2(copy, target)
            os.close(copy)
        os.close(fd)


def read_output(path: str) -> tuple[str, int]:
    """What the solver printed into ``path``: the text (at most :data:`OUTPUT_KEEP_LINES` lines) and the line count."""
    half = OUTPUT_KEEP_LINES // 2
    head: list[str] = []
    tail: collections.deque = collections.deque(maxlen=half)
    count = 0
    try:
        with open(path, encoding="utf-8", errors="backslashreplace") as fh:
            for line in fh:
                count += 1
                line = line.rstrip("\n")
                if len(line) > OUTPUT_LINE_CHARS:
                    line = line[:OUTPUT_LINE_CHARS] + f" [... {len(line) - OUTPUT_LINE_CHARS} more characters]"
                (head if len(head) < half else tail).append(line)
    except OSError:
        return "", 0
    left_out = count - len(head) - len(tail)
    lines = head + ([f"[... {left_out} lines left out ...]"] if left_out else []) + list(tail)
    return "\n".join(lines), count


class _Tally:
    """Counts the warnings of one call and keeps the first :data:`WARNINGS_KEEP` distinct ones with their counts.

    It replaces ``warnings.showwarning`` while the solver runs: a solver that warns in its inner loop (hundreds of
    thousands of times) costs a counter increment per warning, not a record kept and sent back."""

    def __init__(self):
        self.counts: dict = {}
        self.total = 0

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        self.total += 1
        key = (category.__name__, str(message))
        if key in self.counts:
            self.counts[key] += 1
        elif len(self.counts) < WARNINGS_KEEP:
            self.counts[key] = 1

    def items(self) -> list:
        return [(cat, msg, n) for (cat, msg), n in self.counts.items()]


def _call(solver, args, kwargs, output: str | None = None) -> Outcome:
    """Call the solver, its warnings counted (:class:`_Tally`) and its output captured into the file ``output``.

    ``SystemExit`` raised by the solver (``sys.exit``) is an error of the solver, not the end of verify."""
    tally = _Tally()
    with warnings.catch_warnings(), _captured(output):
        warnings.simplefilter("always")
        warnings.showwarning = tally
        t0 = time.perf_counter()
        try:
            out = solver(*args, **kwargs)
        except (Exception, SystemExit) as exc:  # the user's code: any exception is a verdict, not a crash
            elapsed = time.perf_counter() - t0
            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next))
            msg = (f"SystemExit: the solver called sys.exit({exc.code!r})" if isinstance(exc, SystemExit)
                   else f"{type(exc).__name__}: {exc}")
            return Outcome("raised", message=msg, time=elapsed, traceback=tb, warnings=tally.items(),
                           warnings_total=tally.total)
        elapsed = time.perf_counter() - t0
    return Outcome("ok", out, time=elapsed, warnings=tally.items(), warnings_total=tally.total)


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
    return PlainAnswer(type_name=type(out).__name__, attribute_names=attribute_names(out), **attrs)


def _watch_parent(parent: int) -> None:  # pragma: no cover - runs in the child process
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(PARENT_POLL)


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child process
    """Make this worker end when the verify process ``parent`` does (module docstring)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent ended before the request took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="svmref-verify-parent-watch", daemon=True).start()


def _worker_main(solver, spec, conn, parent=None) -> None:  # pragma: no cover - runs in the child process
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        _die_with_parent(parent)
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
        args, kwargs, output = msg
        res = _call(solver, args, kwargs, output)
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
            proc = ctx.Process(target=_worker_main, args=(solver, self.spec, child, os.getpid()), daemon=True,
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
        """Call the solver once; its output, captured into a temporary file, is in the outcome whatever happened."""
        fd, path = tempfile.mkstemp(prefix="svmref-verify-output-", suffix=".txt")
        os.close(fd)
        try:
            res = _call(self.solver, args, kwargs, path) if not self.isolated else self._call_isolated(args, kwargs, path)
            res.output, res.output_lines = read_output(path)
        finally:
            os.unlink(path)
        return res

    def _call_isolated(self, args, kwargs, path: str) -> Outcome:
        if self._proc is None or not self._proc.is_alive():
            why = self._start()
            if why:
                return Outcome("died", message=f"the solver's worker process could not start: {why}")
        t0 = time.perf_counter()
        try:
            self._conn.send((args, kwargs, path))
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
