"""The repetitions of a figure (its draws, seeds), run in parallel with a progress bar.

A figure's draws are independent: draw ``k`` depends on its own seed only. :func:`map_draws` runs them the way
``svmref table`` runs its tasks (:class:`svmref.figures.tables._runner._Executor`): in this process (``jobs=1``), on
``jobs`` local joblib workers (``-1``: every core), or on a Dask cluster (``scheduler``); each worker, and this
process while it computes, keeps one BLAS thread, so a draw's numbers do not depend on where it ran and the figure's
JSON is byte-identical for any ``jobs`` (``tests/test_figures.py``). The results come back in the draws' order.
The bar is tqdm's on stderr, one step per draw.
"""
from __future__ import annotations

from collections.abc import Sequence

from .tables._runner import _Executor, _progress_bar

__all__ = ["map_draws", "check_jobs"]


def check_jobs(jobs) -> int:
    """``jobs``: a positive integer or -1 (every core); ``ValueError`` naming it otherwise."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be a positive integer or -1 (all cores); got {jobs!r}")
    return jobs


def map_draws(module: str, fn: str, args: Sequence[tuple], *, jobs: int = 1, scheduler: str | None = None,
              progress: bool = False, desc: str = "draws") -> list:
    """``[module.fn(*a) for a in args]``, computed as the module docstring says; ``fn`` must be a module-level
    function of ``module`` (a worker imports it by name) whose arguments and result can be pickled."""
    tasks = [{"fn": fn, "args": tuple(a), "index": k} for k, a in enumerate(args)]
    out: list = [None] * len(tasks)
    with _Executor(check_jobs(jobs), scheduler) as ex, _progress_bar(desc, progress) as bar:
        bar.total = len(tasks)
        bar.refresh()
        for res in ex.map(module, "draw", tasks):
            out[res["index"]] = res["value"]
            bar.update(1)
    return out
