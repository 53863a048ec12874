"""The table runner: tasks, parallel execution (joblib or Dask), the CSV cache, resume, summaries.

A table module (see :mod:`svmref.figures.tables`) describes its work as two lists of small,
picklable task dicts:

1. *selection* tasks (optional): one cross-validation score per ``(dataset, model, cv_split, grid)``,
   written to ``DIR/NAME.cv.csv``; the module's ``choose`` turns them into the fixed
   hyperparameters of each ``(dataset, model)``;
2. *split* tasks: one ``(dataset, model, split)`` each, written to ``DIR/NAME.csv``: one row with
   at least ``dataset, model, split, error_pct, n_sv, n_iter, C, sigma``.

Each task runs :func:`_execute` (a module-level function, so loky and Dask can ship it) under one
BLAS thread (threadpoolctl), locally through joblib (``jobs``) or on a Dask cluster (``scheduler``
or ``client``). A row is appended to its CSV and flushed the moment its task finishes, so an
interrupted run (Ctrl-C, a killed worker) keeps every finished split; ``resume=True`` reads the CSVs
back (a half-written last line is dropped), computes only what is missing, and rewrites the CSV
sorted by its key. Floats are written with ``repr`` (shortest round-trip form), so a value read back
is the value computed, and the final CSV of a resumed run equals an uninterrupted run's byte for byte.
"""
from __future__ import annotations

import csv
import importlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._registry import get
from ._summary import edge_counts, plot_cells, render_markdown, summarize

__all__ = ["run_table", "TableRun", "SPLIT_COLUMNS", "SELECTION_COLUMNS", "summarize", "read_rows", "MAX_SPLITS",
           "TableInterrupted", "DaskWorkersLost", "settings"]

#: Most splits per data set a run accepts: the papers use 100 (000, 004) or 10 (001); each split's tasks are
#: listed up front, so an unbounded count would grow memory without limit before any work.
MAX_SPLITS = 1000
#: Seconds to wait for a Dask scheduler to answer before giving up with one line.
CONNECT_TIMEOUT_S = 10.0
#: Seconds with no Dask worker left (and tasks pending) after which the run stops instead of waiting forever.
WORKER_LOSS_TIMEOUT_S = 30.0
#: Bumped when the runner changes what a row means (its columns, how a task is run): part of the resume key.
PROTOCOL_VERSION = 3


class TableInterrupted(KeyboardInterrupt):
    """Ctrl-C (or a stop) during a run: ``phase`` (``"model selection"`` or ``"splits"``) and ``path``, the CSV
    that holds the work finished so far in that phase."""

    def __init__(self, phase: str, path: Path):
        super().__init__(f"interrupted during {phase}: the finished work is kept in {path}")
        self.phase, self.path = phase, path


class DaskWorkersLost(RuntimeError):
    """Every Dask worker is gone while tasks are pending (the run would otherwise wait forever)."""

#: columns of DIR/NAME.csv (one row per dataset, model, split)
SPLIT_COLUMNS = ("dataset", "model", "split", "error_pct", "mse", "n_sv", "n_iter", "C", "sigma", "gamma",
                 "epsilon", "converged", "n_train", "n_test", "solver", "at_edge")
SPLIT_KEY = ("dataset", "model", "split")
#: columns of DIR/NAME.cv.csv (one cross-validation score per dataset, model, cv_split, grid point)
SELECTION_COLUMNS = ("dataset", "model", "cv_split", "grid", "C", "sigma", "gamma", "cv_score")
SELECTION_KEY = ("dataset", "model", "cv_split", "grid")

_INT_FIELDS = {"split", "cv_split", "grid"}


# ------------------------------------------------------------------------------------------------
# execution
# ------------------------------------------------------------------------------------------------
_LIMITED = False


def _load_blas() -> None:
    """Load every BLAS the tasks use before limiting: threadpoolctl limits only the libraries already
    loaded, and scipy ships its own OpenBLAS, loaded by the first ``import scipy.linalg`` (measured: an
    LS-SVM fit of N = 150 took 0.65 s with scipy's pool left at 2 threads on the loaded machine, 0.4 ms
    limited)."""
    import numpy.linalg  # noqa: F401
    import scipy.linalg  # noqa: F401

    import svmref.solvers.linear  # noqa: F401


def _limit_blas_once() -> None:
    """One BLAS thread in this worker process for the rest of its life (threadpoolctl), and a watchdog that ends
    the worker when its parent is gone (:func:`_watch_parent`)."""
    global _LIMITED
    if not _LIMITED:
        from threadpoolctl import threadpool_limits

        _load_blas()
        threadpool_limits(limits=1)
        _watch_parent()
        _LIMITED = True


def _watch_parent(every_s: float = 0.5) -> None:
    """A daemon thread that exits this worker process once its parent has died (its parent id changes: the
    process was re-parented). A local joblib worker whose main process was killed (``kill -9``, an OOM kill) would
    otherwise go on computing rows nobody writes, for minutes, until loky's idle timeout."""
    import threading

    parent = os.getppid()
    if parent <= 1:
        return

    def watch():
        while True:
            time.sleep(every_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="svmref-parent-watchdog", daemon=True).start()


def _execute(module: str, kind: str, task: dict, in_worker: bool = True) -> dict:
    """Run one task of a table module, ``module.run_selection(task)`` or ``module.run_split(task)``, or a figure's
    draw (``kind="draw"``: ``module.<task["fn"]>(*task["args"])``, with the task's index).

    On a worker (a loky process, a Dask worker) the BLAS pool is limited to one thread for good:
    small fits on several threads of a shared machine are slower, never faster (see
    ``benchmarks/threads.py``), and one thread makes the rounding independent of the pool size.
    """
    if in_worker:
        _limit_blas_once()
    mod = importlib.import_module(module)
    if kind == "draw":  # a figure's draw (svmref.figures._draws): any module-level function, by name
        return {"index": task["index"], "value": getattr(mod, task["fn"])(*task["args"])}
    fn = mod.run_selection if kind == "selection" else mod.run_split
    return fn(task)


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:120] if text else "no message"


class _Executor:
    """``map(module, kind, tasks)`` yielding each task's row as soon as it finishes (any order)."""

    def __init__(self, jobs: int = 1, scheduler: str | None = None, client=None):
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
            raise ValueError(f"jobs must be a positive integer or -1 (all cores); got {jobs!r}")
        self.jobs, self.scheduler, self.client = jobs, scheduler, client
        self._own_client = False

    @property
    def where(self) -> str:
        if self.client is not None or self.scheduler:
            return f"dask ({self.scheduler or 'client'})"
        return "sequential" if self.jobs == 1 else f"joblib ({self.jobs} jobs)"

    def __enter__(self):
        if self.client is None and self.scheduler:
            try:
                from distributed import Client
            except ImportError as exc:  # pragma: no cover - dask is the optional extra svmref[dask]
                raise ImportError("--scheduler needs dask.distributed: python -m pip install 'svmref[dask]'") from exc
            try:
                self.client = Client(self.scheduler, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise ValueError(f"scheduler: no Dask scheduler answered at {self.scheduler!r} within "
                                 f"{CONNECT_TIMEOUT_S:g} s ({type(exc).__name__}: {_first_line(exc)}); "
                                 "start one (`dask scheduler`) or check the address (tcp://HOST:PORT)") from None
            except Exception as exc:  # noqa: BLE001 - e.g. MemoryError: a server that is not Dask's sent a garbage
                # frame length, which distributed tried to allocate (seen: 3 EiB)
                raise ValueError(f"scheduler: something answered at {self.scheduler!r} but not as a Dask scheduler "
                                 f"({type(exc).__name__}: {_first_line(exc)}); check the address and port") from None
            self._own_client = True
        return self

    def __exit__(self, *exc):
        if self._own_client:
            self.client.close()
            self.client = None
        return False

    def map(self, module: str, kind: str, tasks: list[dict]):
        if not tasks:
            return
        if self.client is not None:
            yield from self._map_dask(module, kind, tasks)
        elif self.jobs == 1:
            from threadpoolctl import threadpool_limits

            _load_blas()
            with threadpool_limits(limits=1):  # the caller's process: restored afterwards
                for t in tasks:
                    yield _execute(module, kind, t, in_worker=False)
        else:
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=self.jobs, return_as="generator_unordered")
            yield from par(delayed(_execute)(module, kind, t) for t in tasks)

    def _map_dask(self, module, kind, tasks, poll_s: float = 1.0):
        """The tasks on the cluster, each row as it finishes. Waits in steps of ``poll_s``; when no worker is left
        for :data:`WORKER_LOSS_TIMEOUT_S` with tasks pending, raises :class:`DaskWorkersLost` (Dask itself would
        wait for a worker forever); a task whose workers kept dying raises it too (Dask's ``KilledWorker``)."""
        from distributed import wait

        n = len(tasks)
        pending = set(self.client.map(_execute, [module] * n, [kind] * n, tasks, pure=False))
        no_worker_since = None
        try:
            while pending:
                try:
                    done, pending = wait(pending, timeout=poll_s, return_when="FIRST_COMPLETED")
                except TimeoutError:  # nothing finished within poll_s
                    done = set()
                for fut in done:
                    yield self._result(fut, len(pending))
                if done or self.client.scheduler_info().get("workers"):
                    no_worker_since = None
                    continue
                no_worker_since = time.monotonic() if no_worker_since is None else no_worker_since
                if time.monotonic() - no_worker_since >= WORKER_LOSS_TIMEOUT_S:
                    raise DaskWorkersLost(f"every Dask worker at {self.where} is gone ({len(pending)} tasks pending, "
                                          f"none for {WORKER_LOSS_TIMEOUT_S:g} s); the finished rows are kept: start "
                                          "workers and run again with --resume")
        finally:
            self.client.cancel([f for f in pending if not f.done()])

    def _result(self, fut, n_pending):
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - Dask's KilledWorker has no stable import path
            if type(exc).__name__ == "KilledWorker":
                raise DaskWorkersLost(f"a task's Dask workers kept dying ({exc}); {n_pending} tasks pending, the "
                                      "finished rows are kept: check the workers' memory and logs, then --resume") from None
            raise


# ------------------------------------------------------------------------------------------------
# the CSV cache
# ------------------------------------------------------------------------------------------------
def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return "" if math.isnan(v) else repr(v)
    return str(v)


def _format_row(row: dict, columns) -> dict:
    missing = [c for c in columns if c not in row]
    if missing:
        raise KeyError(f"a task returned a row without the columns {missing}")
    return {c: _fmt(row[c]) for c in columns}


def _sort_key(key_cols):
    return lambda r: tuple(int(r[c]) if c in _INT_FIELDS else r[c] for c in key_cols)


#: Columns that hold text; every other column of a table CSV holds a number (or is empty).
_TEXT_FIELDS = {"dataset", "model", "solver", "at_edge"}


def read_rows(path, columns=SPLIT_COLUMNS) -> list[dict]:
    """The complete rows of a table CSV (strings), skipping a half-written last line.

    A row whose number does not parse (a corrupted file) raises ``ValueError`` naming the file, the line and the
    column, before anything is computed from it."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        text = fh.read()
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    lines = list(csv.reader(complete.splitlines()))
    if not lines:
        return []
    if tuple(lines[0]) != tuple(columns):
        raise ValueError(f"{path} has the columns {lines[0]}, expected {list(columns)}; use another --out")
    rows = []
    for lineno, r in enumerate(lines[1:], start=2):
        if len(r) != len(columns):
            raise ValueError(f"{path}:{lineno}: {len(r)} fields, expected {len(columns)}; delete that line (it is "
                             "recomputed with --resume) or start over with --force")
        row = dict(zip(columns, r))
        for c in columns:
            if c not in _TEXT_FIELDS and row[c] != "" and not _is_number(row[c], c in _INT_FIELDS):
                raise ValueError(f"{path}:{lineno}: column {c!r} holds {row[c]!r}, not a number; delete that line "
                                 "(it is recomputed with --resume) or start over with --force")
        rows.append(row)
    return rows


def _is_number(v: str, integer: bool) -> bool:
    try:
        x = int(v) if integer else float(v)
    except ValueError:
        return False
    return integer or not math.isinf(x) or v.lstrip("+-").lower() in ("inf", "infinity")


def _write_sorted(path: Path, columns, rows, key_cols) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, columns, lineterminator="\n")
        w.writeheader()
        w.writerows(sorted(rows, key=_sort_key(key_cols)))
    os.replace(tmp, path)


class _NoBar:
    """Stands in for a tqdm bar when tqdm is not installed (it is in the dev extra)."""

    total = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass

    def refresh(self):
        pass

    def set_postfix_str(self, s):
        pass


def _progress_bar(name: str, progress: bool):
    """A tqdm bar per phase of a table on stderr (tasks done / tasks to do in that phase: its total is known when the
    phase starts and does not change), or a silent stand-in."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; a broken install still runs, without a bar
        return _NoBar()
    return tqdm(total=0, desc=name, unit="task", file=sys.stderr, disable=not progress)


class _Interrupt(KeyboardInterrupt):
    """Raised by the test hook ``_interrupt_after`` (a Ctrl-C after that many rows)."""


def _phase(executor, module, kind, tasks, path, columns, key_cols, resume, bar, counter):
    key = _sort_key(key_cols)
    done = {key(r): r for r in read_rows(path, columns)} if resume else {}
    _write_sorted(path, columns, done.values(), key_cols)  # drops a half-written line; new file otherwise
    todo = [t for t in tasks if key({c: str(t[c]) for c in key_cols}) not in done]
    bar.total = len(todo)
    bar.refresh()
    with open(path, "a", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, columns, lineterminator="\n")
        for row in executor.map(module, kind, todo):
            srow = _format_row(row, columns)
            writer.writerow(srow)
            fh.flush()
            done[key(srow)] = srow
            bar.update(1)
            counter["computed"] += 1
            if counter["interrupt_after"] is not None and counter["computed"] >= counter["interrupt_after"]:
                raise _Interrupt(f"interrupted after {counter['computed']} rows (test hook)")
    # Every row ever computed stays in the file (a smaller --splits never throws work away); the
    # rows of this run's tasks are what the summary uses.
    _write_sorted(path, columns, done.values(), key_cols)
    wanted = [key({c: str(t[c]) for c in key_cols}) for t in tasks]
    return [done[k] for k in wanted]


# ------------------------------------------------------------------------------------------------
# the entry point
# ------------------------------------------------------------------------------------------------
@dataclass
class TableRun:
    """What :func:`run_table` returns: the rows (strings, as in the CSV), the summary, the files."""

    name: str
    splits: int
    quick: bool
    seed: int
    rows: list = field(default_factory=list)
    selection_rows: list = field(default_factory=list)
    cells: list = field(default_factory=list)
    n_computed: int = 0
    runtime_s: float = 0.0
    csv_path: Path | None = None
    md_path: Path | None = None
    json_path: Path | None = None
    png_path: Path | None = None

    def summary(self) -> dict:
        """The JSON summary: the run, the cells (:func:`~svmref.figures.tables._summary.summarize`), the flag counts
        and the selections on a grid edge (rows at an edge, and per ``hyperparameter:edge``)."""
        flags = [c["flag"] for c in self.cells if c.get("flag")]
        return {"table": self.name, "splits": self.splits, "quick": self.quick, "seed": self.seed,
                "rows": len(self.rows), "computed": self.n_computed, "runtime_s": round(self.runtime_s, 3),
                "csv": str(self.csv_path), "markdown": str(self.md_path),
                "plot": None if self.png_path is None else str(self.png_path),
                "flags": {f: flags.count(f) for f in ("ok", ">2 SE", ">3 SE")},
                "at_edge": {"rows": sum(1 for r in self.rows if r.get("at_edge")), "of": len(self.rows),
                            "by_edge": edge_counts(self.rows)},
                "cells": self.cells}


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]


def settings(module, name: str, quick: bool, seed: int, splits: int, dsets) -> dict:
    """Everything a row of ``name`` depends on besides its key (the resume key, ``DIR/NAME.meta.json``): the table,
    ``quick`` (its grid), the seed, the runner's :data:`PROTOCOL_VERSION`, the svmref version, the table module's
    code, the shipped data, and per data set the model-selection tasks (their CV splits and grid: ``--splits``
    below the table's CV count changes them, so it changes the hyperparameters every split of that set uses)."""
    import svmref

    data_dir = Path(svmref.__file__).parent / "datasets" / "data"
    data = b"".join(f.name.encode() + f.read_bytes() for f in sorted(data_dir.glob("*.csv")))
    code = Path(module.__file__).read_bytes() + (Path(__file__).parent / "_common.py").read_bytes()
    by_set: dict = {}
    for t in module.selection_tasks(list(dsets), splits, quick, int(seed)):
        by_set.setdefault(t["dataset"], []).append(json.dumps(t, sort_keys=True, default=repr))
    return {"table": name, "quick": bool(quick), "seed": int(seed), "protocol": PROTOCOL_VERSION,
            "svmref": getattr(svmref, "__version__", "?"), "code": _digest(code), "data": _digest(data),
            "selection": {d: _digest("\n".join(sorted(v)).encode()) for d, v in sorted(by_set.items())}}


_WHY = {"table": "another table", "quick": "--quick differs", "seed": "--seed differs",
        "protocol": "the runner's protocol changed", "svmref": "another svmref version",
        "code": "the table's code changed", "data": "the shipped data changed"}


def _prepare_out(out: Path, name: str, meta: dict, resume: bool, force: bool) -> None:
    """Check the stored run against ``meta`` and write the settings file (atomically), before any task runs.

    ``resume``: the stored settings must equal ``meta`` on every key (and on the model selection of each data set
    both runs cover), else one ``ValueError`` line saying what differs. Without ``resume``, results already in
    ``out`` are never overwritten silently: ``force`` deletes them first, otherwise ``ValueError``."""
    meta_path = out / f"{name}.meta.json"
    results = [p for p in (out / f"{name}.csv", out / f"{name}.cv.csv") if p.exists() and p.stat().st_size > 0]
    if resume:
        if not meta_path.exists():
            if results:
                raise ValueError(f"{results[0]} holds rows but {meta_path} is missing, so nothing says which run they "
                                 "belong to; start over with --force")
            old = {**meta, "selection": {}}
        else:
            old = json.loads(meta_path.read_text(encoding="utf-8"))
        diff = [f"{k}: {old.get(k)!r} stored, {v!r} now ({_WHY[k]})" for k, v in meta.items()
                if k != "selection" and old.get(k) != v]
        diff += [f"model selection of {d} (--splits or the grid differs)" for d, h in meta["selection"].items()
                 if d in old.get("selection", {}) and old["selection"][d] != h]
        if diff:
            raise ValueError(f"--resume: the run stored in {out} differs: {'; '.join(diff)}; use the stored settings, "
                             "another --out, or --force to start over")
        meta = {**meta, "selection": {**old.get("selection", {}), **meta["selection"]}}
    elif results and not force:
        n = len(read_rows(results[0], SPLIT_COLUMNS if results[0].name == f"{name}.csv" else SELECTION_COLUMNS))
        raise ValueError(f"{results[0]} already holds {n} rows of an earlier run; --resume continues it, --force "
                         "deletes it and starts over")
    elif force:
        for p in (out / f"{name}{ext}" for ext in (".csv", ".cv.csv", ".md", ".json", ".png")):
            p.unlink(missing_ok=True)
    tmp = meta_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, meta_path)


def _check_out(out) -> Path:
    """``out`` as a folder this process can write to (created), or ``ValueError`` naming ``--out``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".svmref-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--out {str(out)!r}: cannot write there ({exc.strerror or exc})") from None
    return out


def run_table(name: str, *, splits: int | None = None, jobs: int = 1, scheduler: str | None = None, client=None,
              out="tables", resume: bool = False, quick: bool = False, seed: int = 0, datasets=None,
              progress: bool = True, force: bool = False, plot: bool = False,
              _interrupt_after: int | None = None) -> TableRun:
    """Compute table ``name`` and write ``out/NAME.csv``, ``out/NAME.md`` and ``out/NAME.json``.

    Parameters
    ----------
    name : str
        One of :func:`svmref.figures.tables.names` (``000-table2``, ``004-table1``, ``001-table1``, ``001-table2``).
    splits : int, optional
        Random training/test splits per data set, at most :data:`MAX_SPLITS` (default: the table's, e.g. 100 for
        000 Table 2).
    jobs : int
        joblib workers (loky processes); 1 runs in this process, -1 uses every core.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:port``); the same tasks run there.
    client : distributed.Client, optional
        An existing Dask client (instead of ``scheduler``).
    out : path
        Output folder (created).
    resume : bool
        Keep the rows already in ``out/NAME.csv`` (and ``NAME.cv.csv``) and compute only the missing ones; refused
        (``ValueError``, one line saying what differs) when the stored run's settings (:func:`settings`) differ.
    force : bool
        Delete the results already in ``out`` and start over. Without ``resume`` or ``force``, existing results are
        never overwritten: ``ValueError``.
    quick : bool
        The table's small setting (few splits, a small grid) for tests and CI.
    seed : int
        Base seed; split ``s`` of data set ``d`` draws from ``SeedSequence(seed, spawn_key=(table, d, s))``.
    datasets : sequence of str, optional
        A subset of the table's data sets.
    progress : bool
        A tqdm bar on stderr.
    plot : bool
        Also write ``out/NAME.png``: per cell our mean ± SE against the paper's number (matplotlib, Agg).
    """
    module = get(name)
    if splits is None:
        splits = module.QUICK_SPLITS if quick else module.DEFAULT_SPLITS
    if isinstance(splits, bool) or not isinstance(splits, (int, np.integer)) or not 1 <= splits <= MAX_SPLITS:
        raise ValueError(f"--splits must be an integer from 1 to {MAX_SPLITS}; got {splits!r}")
    splits = int(splits)
    dsets = _check_datasets(module, name, quick, datasets)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"--seed must be a non-negative integer; got {seed!r}")
    out = _check_out(out)
    meta = settings(module, name, quick, int(seed), splits, dsets)

    t0 = time.perf_counter()
    counter = {"computed": 0, "interrupt_after": _interrupt_after}
    executor = _Executor(jobs, scheduler, client)
    mod_name = module.__name__
    with executor:  # a scheduler that does not answer fails here, before any file is touched
        _prepare_out(out, name, meta, resume, force)
        sel_rows = _run_phase(executor, mod_name, "selection", module.selection_tasks(dsets, splits, quick, int(seed)),
                              out / f"{name}.cv.csv", resume, name, progress, counter)
        tasks = module.split_tasks(dsets, splits, quick, int(seed), sel_rows)
        rows = _run_phase(executor, mod_name, "split", tasks, out / f"{name}.csv", resume, name, progress, counter)
    runtime = time.perf_counter() - t0
    run = TableRun(name, splits, bool(quick), int(seed), rows, sel_rows, summarize(module, rows), counter["computed"],
                   runtime, out / f"{name}.csv", out / f"{name}.md", out / f"{name}.json")
    run.md_path.write_text(render_markdown(module, run.cells, splits=splits, quick=quick, seed=seed, runtime_s=runtime,
                                           where=executor.where), encoding="utf-8")
    if plot:
        run.png_path = out / f"{name}.png"
        plot_cells(module, run.cells, run.png_path)
    run.json_path.write_text(json.dumps(run.summary(), indent=1) + "\n", encoding="utf-8")
    return run


def _check_datasets(module, name, quick, datasets) -> list:
    all_sets = list(module.datasets(quick))
    if datasets is None:
        return all_sets
    dsets = list(datasets)
    if not dsets:
        raise ValueError(f"--datasets names no data set; choose among {all_sets} for {name}")
    bad = [d for d in dsets if d not in all_sets]
    if bad:
        raise ValueError(f"--datasets must be among {all_sets} for {name}; got {bad}")
    return dsets


def _run_phase(executor, mod_name, kind, tasks, path, resume, name, progress, counter) -> list:
    """One phase (``"selection"``: the CV scores, ``"split"``: the rows) with its own progress bar; Ctrl-C becomes
    :class:`TableInterrupted` naming this phase's CSV."""
    if not tasks:
        return []
    phase = "model selection" if kind == "selection" else "splits"
    columns, key_cols = (SELECTION_COLUMNS, SELECTION_KEY) if kind == "selection" else (SPLIT_COLUMNS, SPLIT_KEY)
    try:
        with _progress_bar(f"{name} ({phase})", progress) as bar:
            return _phase(executor, mod_name, kind, tasks, path, columns, key_cols, resume, bar, counter)
    except TableInterrupted:
        raise
    except KeyboardInterrupt as exc:
        raise TableInterrupted(phase, path) from exc
