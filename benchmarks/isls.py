"""Speed of ISLS-SVM (004, Algorithm 1) as a ratio against one LS-SVM solve measured in the same run.

    python benchmarks/isls.py                      # N = 2000, RBF blobs in d = 10 and Ripley-like 2-D data
    python benchmarks/isls.py --n 1000 --repeat 3

Issue 13's target: one ``isls_svm`` fit (LS-SVM start + every iteration) <= 3 x one ``linear.ls_svm`` on the
same K, at N = 2000 on Gaussian blobs in d = 10 with an RBF kernel.  Each timing is the median of ``--repeat``
runs, the ISLS runs and the LS-SVM anchor interleaved so that a load change on the shared machine hits both;
BLAS threads are pinned (``--threads``, default 1) with threadpoolctl.  The anchor is ``linear.ls_svm(K, y, C)``
with K given, exactly the call ISLS makes for its start (same checks, same float64 Cholesky); neither timing
includes forming K.  The printout also gives the iteration count, the active-set sizes, which path solved each
iteration (``info["path"]``) and, for the mixed-precision CG, the (outer float64, inner float32) step counts, so
a ratio can be read against the work done.  Process CPU time is printed too: on a shared machine it moves far
less than wall-clock time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from svmref.kernels import rbf_kernel
from svmref.solvers.isls import isls_svm
from svmref.solvers.linear import ls_svm


def blobs(N, d=10, seed=0):
    """Two Gaussian classes in d dimensions, unit covariance, means 0 and 0.5 (overlapping)."""
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal(0.0, 1.0, size=(h, d)), rng.normal(0.5, 1.0, size=(N - h, d))]
    return X, np.r_[-np.ones(h), np.ones(N - h)]


def ripley_like(N, seed=0):
    """Two Gaussian classes in 2-D (the data of benchmarks/linear_systems.py)."""
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal([-0.3, 0.7], 0.25, size=(h, 2)), rng.normal([0.4, 0.5], 0.25, size=(N - h, 2))]
    return X, np.r_[-np.ones(h), np.ones(N - h)]


def interleaved(f, g, repeat):
    """Medians of wall-clock and of process CPU time for f and g, run alternately."""
    tf, tg, cf, cg = [], [], [], []
    for _ in range(repeat):
        for fn, tw, tc in ((f, tf, cf), (g, tg, cg)):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            tw.append(time.perf_counter() - t0)
            tc.append(time.process_time() - c0)
    med = statistics.median
    return med(tf), med(tg), med(cf), med(cg)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--C", type=float, default=1.0)
    a = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"N = {a.n}, C = {a.C:g}, BLAS threads = {a.threads}, median of {a.repeat} interleaved runs, "
          f"load average at start {load:.2f}\n")
    cases = [("blobs d=10, RBF sigma=3", blobs(a.n), 3.0), ("Ripley-like 2-D, RBF sigma=0.5", ripley_like(a.n), 0.5)]
    with threadpool_limits(a.threads):
        for name, (X, y), sigma in cases:
            K = rbf_kernel(X, sigma=sigma)
            out = {}

            def run_isls():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out["r"] = isls_svm(K, y, a.C)

            ls_svm(K, y, a.C)                           # warm-up (numba caches, BLAS)
            t, t0, c, c0 = interleaved(run_isls, lambda: ls_svm(K, y, a.C), a.repeat)
            r = out["r"]
            ratio = t / t0
            print(f"{name:34s} wall: isls {t:8.4f} s / ls_svm {t0:8.4f} s = {ratio:6.2f}   "
                  f"target <= 3: {'met' if ratio <= 3 else 'NOT met'}")
            print(f"{'':34s} CPU:  isls {c:8.4f} s / ls_svm {c0:8.4f} s = {c / c0:6.2f}   "
                  "(CPU time: steadier than wall time on a loaded machine)")
            print(f"    {r.n_iter} iterations, {r.n_sv} SVs, status {r.status}; active sets {r.info['n_active']}")
            print(f"    paths {r.info['path']}")
            print(f"    CG steps (outer, inner) {r.info['cg_steps']}\n")


if __name__ == "__main__":
    main()
