"""Speed of the linear-system solvers as ratios against anchors measured in the same run.

    python benchmarks/linear_systems.py                          # N = 2000, 5000, 10000 at C = 1 and 100
    python benchmarks/linear_systems.py --sizes 1000 --isls-n 1000 --repeat 3
    python benchmarks/linear_systems.py --threads 2              # BLAS threads (default 1)

Ratios (lower is better; targets in brackets):

* ``ls_svm`` (Cholesky path, every check included: the scan for finiteness and symmetry, the condition estimate,
  the certified duality gap) vs a bare ``scipy.linalg.cho_factor`` + ``cho_solve`` of both right-hand sides on the
  same prebuilt ``Ktilde``                                                     [<= 1.0 at N = 2000 - 10000]
* ``ls_svm(overwrite_K=True)`` vs the same anchor (a fresh K copy per run, made outside the timed region)
* ``rls`` vs scikit-learn ``KernelRidge(kernel="precomputed", alpha=m gamma).fit``   [<= 1.0]
* ``isls_svm`` total (LS-SVM start + all iterations) vs one ``ls_svm``         [<= 3 at N = 2000]
  on these 2-D data (the d = 10 case and larger C are in ``benchmarks/isls.py``)
* ``svmref.kernels.rbf_kernel`` vs a plain vectorised numpy build
  ``exp(-sum((X[:, None] - X[None]) ** 2, -1) / sigma^2)``

Each ratio is the median over ``--repeat`` runs of process CPU time (steadier than wall-clock time on a shared
machine), the runs of the timed function and its anchor interleaved so that a load change hits both; BLAS threads
are pinned with threadpoolctl (``--threads``).  The line of ``ls_svm`` also says which precision solved
(``info["precision"]``: ``"mixed"`` is the float32 factor refined in float64, ``"float64"`` the float64 factor) and
how many refinement steps it took.  The data: two Gaussian classes in 2-D (Ripley-like), RBF kernel (004 §4).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

from svmref.kernels import rbf_kernel
from svmref.solvers.isls import isls_svm
from svmref.solvers.linear import ls_svm, rls


def data(N, seed=0):
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal([-0.3, 0.7], 0.25, size=(h, 2)), rng.normal([0.4, 0.5], 0.25, size=(N - h, 2))]
    y = np.r_[-np.ones(h), np.ones(N - h)]
    return X, y


def timed_pair(f, g, repeat, setup=None):
    """Median process CPU time of f and of g over ``repeat`` interleaved runs; ``setup()`` (untimed) gives f's
    argument."""
    tf, tg = [], []
    for _ in range(repeat):
        arg = setup() if setup else None
        t0 = time.process_time()
        f(arg) if setup else f()
        tf.append(time.process_time() - t0)
        t0 = time.process_time()
        g()
        tg.append(time.process_time() - t0)
    return statistics.median(tf), statistics.median(tg)


def row(name, t, t_anchor, target=None):
    r = t / t_anchor
    tgt = "" if target is None else f"  target <= {target:g}: {'met' if r <= target else 'NOT met'}"
    print(f"{name:58s} {t:9.4f} s / {t_anchor:9.4f} s = {r:6.3f}{tgt}")
    return r


def ls_svm_rows(N, X, y, K, Cs, repeat):
    """The ``ls_svm`` rows at each C: ours against ``cho_factor`` + ``cho_solve`` of ``[y, 1]``."""
    out = {}
    for C in Cs:
        Kt = K + np.eye(N) / C
        R = np.c_[y, np.ones(N)]
        res = {}

        def anchor():
            c = scipy.linalg.cho_factor(Kt, lower=True, check_finite=False)
            scipy.linalg.cho_solve(c, R, check_finite=False)

        def ours():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res["r"] = ls_svm(K, y, C)

        t, t0 = timed_pair(ours, anchor, repeat)
        r = res["r"]
        out[C] = row(f"N={N}, C={C:g}: ls_svm vs cho_factor + cho_solve", t, t0, 1.0)
        print(f"{'':58s} precision {r.info.get('precision')}, refinement steps {r.info.get('refinement_steps')}, "
              f"status {r.status}, certified relative gap {r.duality_gap:.2g}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2000, 5000, 10000])
    ap.add_argument("--isls-n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--C", type=float, nargs="*", default=[1.0, 100.0])
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    sigma = a.sigma
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"RBF sigma = {sigma:g}, C = {a.C}; median CPU time of {a.repeat} interleaved runs, BLAS threads = "
          f"{a.threads}, load average at start {load:.2f}\n")
    with threadpool_limits(a.threads):
        for N in a.sizes:
            X, y = data(N)
            K = rbf_kernel(X, sigma=sigma)
            ls_svm_rows(N, X, y, K, a.C, a.repeat)
            C = a.C[0]
            t, t0 = timed_pair(lambda Kc: ls_svm(Kc, y, C, overwrite_K=True),
                               lambda: scipy.linalg.cho_solve(
                                   scipy.linalg.cho_factor(K + np.eye(N) / C, lower=True, check_finite=False),
                                   np.c_[y, np.ones(N)], check_finite=False), a.repeat, setup=K.copy)
            row(f"N={N}: ls_svm(overwrite_K=True) vs the same (anchor forms Ktilde)", t, t0)
            gamma = 1e-3
            from sklearn.kernel_ridge import KernelRidge

            t, t0 = timed_pair(lambda: rls(K, y, gamma),
                               lambda: KernelRidge(alpha=N * gamma, kernel="precomputed").fit(K, y), a.repeat)
            row(f"N={N}: rls vs KernelRidge(precomputed).fit", t, t0, 1.0)
            if N <= 5000:
                def plain_kernel():
                    D = X[:, None, :] - X[None, :, :]
                    return np.exp(-np.sum(D * D, axis=-1) / sigma**2)

                t, t0 = timed_pair(lambda: rbf_kernel(X, sigma=sigma), plain_kernel, a.repeat)
                row(f"N={N}: rbf_kernel vs plain numpy broadcast build", t, t0)
            print()
        isls_row(a.isls_n, sigma, a.C[0], a.repeat)


def isls_row(N, sigma, C, repeat):
    X, y = data(N)
    K = rbf_kernel(X, sigma=sigma)
    res = {}

    def run_isls():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res["r"] = isls_svm(K, y, C)

    t, t0 = timed_pair(run_isls, lambda: ls_svm(K, y, C), repeat)
    r = res["r"]
    row(f"N={N}: isls_svm vs one ls_svm", t, t0, 3.0)
    print(f"    {r.n_iter} iterations, {r.n_sv} SVs, status {r.status}, active set sizes {r.info['n_active']}")


if __name__ == "__main__":
    main()
