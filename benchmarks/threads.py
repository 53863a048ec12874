"""Small fits with the default BLAS thread pool against one BLAS thread (why the table runner pins it).

The table runner (:mod:`svmref.figures.tables`) runs every task under ``threadpool_limits(1)``. This
script shows why: it times the small fits that a table repeats thousands of times (an LS-SVM by its
KKT system, an ISLS-SVM, RLS, each with the kernel matrix, at the sizes of 004 Table 1 and 000 Table 2)
once with the BLAS pool as the process found it and once limited to one thread, alternating the two
(median of ``--repeats``), and prints the ratio ``default / one thread`` (> 1: the limit is faster).
The anchor is the one-thread time measured in the same run. On a loaded shared machine the default
pool oversubscribes the cores and the ratio is large; on an idle many-core machine it is near 1 for
these sizes (the matrices are too small for threading to pay).

Run: ``python benchmarks/threads.py [--repeats 7]``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from svmref.kernels import rbf_kernel
from svmref.solvers.isls import isls_svm
from svmref.solvers.linear import ls_svm, rls


def _cases(rng):
    for n in (89, 167, 700):
        X = rng.standard_normal((n, 2 if n < 700 else 20))
        y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
        yield f"ls_svm       N={n:4d}", lambda X=X, y=y: ls_svm(rbf_kernel(X, sigma=1.0), y, 10.0)
        yield f"rls          N={n:4d}", lambda X=X, y=y: rls(rbf_kernel(X, sigma=1.0), y, 1e-3)
        if n < 700:
            yield f"isls_svm     N={n:4d}", lambda X=X, y=y: isls_svm(rbf_kernel(X, sigma=1.0), y, 1.0)


def _time(fn, reps: int = 3) -> float:
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7, help="timings per setting (median reported)")
    args = p.parse_args(argv)
    pools = [(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()]
    print(f"BLAS/OpenMP pools as found: {pools}; cores: {os.cpu_count()}; load average: {os.getloadavg()}")
    print(f"{'fit':22s} {'default (ms)':>13s} {'1 thread (ms)':>14s} {'default / 1 thread':>19s}")
    rng = np.random.default_rng(0)
    for name, fn in _cases(rng):
        fn()  # warm up (imports, first-call costs)
        default, single = [], []
        for _ in range(args.repeats):  # alternate, so that a change of machine load hits both alike
            default.append(_time(fn))
            with threadpool_limits(limits=1):
                single.append(_time(fn))
        d, s = statistics.median(default), statistics.median(single)
        print(f"{name:22s} {1e3 * d:13.2f} {1e3 * s:14.2f} {d / s:19.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
