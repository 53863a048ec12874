"""Speed of the linear-system solvers as ratios against anchors measured in the same run.

    python benchmarks/linear_systems.py                 # N = 2000 and 5000, ISLS at 2000
    python benchmarks/linear_systems.py --sizes 1000 --isls-n 1000 --repeat 3

Ratios (lower is better; the issue's targets in brackets):

* ``ls_svm`` (Cholesky path, input checks included) vs a bare ``scipy.linalg.cho_factor`` +
  two ``cho_solve`` on the same prebuilt ``Ktilde``                            [<= 1.10 at 2000, 5000]
* ``ls_svm(overwrite_K=True)`` vs the same anchor (no copy of K; a fresh K copy per run,
  made outside the timed region)
* ``rls`` vs scikit-learn ``KernelRidge(kernel="precomputed", alpha=m gamma).fit``   [<= 1.0]
* ``isls_svm`` total (LS-SVM start + all iterations) vs one ``ls_svm``         [<= 3 at N = 2000]
  on these 2-D data (the d = 10 case is in ``benchmarks/isls.py``)
* ``svmref.kernels.rbf_kernel`` vs a plain vectorised numpy build
  ``exp(-sum((X[:, None] - X[None]) ** 2, -1) / sigma^2)``

Each timing is the minimum over ``--repeat`` runs, the runs of the timed function and its anchor
interleaved so that a load change on a shared machine hits both.  The data: two Gaussian classes in
2-D (Ripley-like), RBF kernel (004 §4).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.linalg

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
    """min time of f and of g over ``repeat`` interleaved runs; ``setup()`` (untimed) gives f's argument."""
    tf, tg = [], []
    for _ in range(repeat):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        f(arg) if setup else f()
        tf.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        g()
        tg.append(time.perf_counter() - t0)
    return min(tf), min(tg)


def row(name, t, t_anchor, target=None):
    r = t / t_anchor
    tgt = "" if target is None else f"  target <= {target:g}: {'met' if r <= target else 'NOT met'}"
    print(f"{name:58s} {t:9.4f} s / {t_anchor:9.4f} s = {r:6.3f}{tgt}")
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2000, 5000])
    ap.add_argument("--isls-n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--C", type=float, default=1.0)
    a = ap.parse_args(argv)
    C, sigma = a.C, a.sigma
    print(f"RBF sigma = {sigma:g}, C = {C:g}; min of {a.repeat} interleaved runs\n")

    for N in a.sizes:
        X, y = data(N)
        K = rbf_kernel(X, sigma=sigma)
        Kt = K + np.eye(N) / C
        one = np.ones(N)

        def anchor():
            c = scipy.linalg.cho_factor(Kt, lower=True, check_finite=False)
            scipy.linalg.cho_solve(c, y, check_finite=False)
            scipy.linalg.cho_solve(c, one, check_finite=False)

        t, t0 = timed_pair(lambda: ls_svm(K, y, C), anchor, a.repeat)
        row(f"N={N}: ls_svm vs cho_factor + 2 cho_solve", t, t0, 1.10)
        t, t0 = timed_pair(lambda Kc: ls_svm(Kc, y, C, overwrite_K=True), anchor, a.repeat, setup=K.copy)
        row(f"N={N}: ls_svm(overwrite_K=True) vs the same", t, t0)

        gamma = 1e-3
        from sklearn.kernel_ridge import KernelRidge

        t, t0 = timed_pair(lambda: rls(K, y, gamma),
                           lambda: KernelRidge(alpha=N * gamma, kernel="precomputed").fit(K, y), a.repeat)
        row(f"N={N}: rls vs KernelRidge(precomputed).fit", t, t0, 1.0)

        def plain_kernel():
            D = X[:, None, :] - X[None, :, :]
            return np.exp(-np.sum(D * D, axis=-1) / sigma**2)

        t, t0 = timed_pair(lambda: rbf_kernel(X, sigma=sigma), plain_kernel, a.repeat)
        row(f"N={N}: rbf_kernel vs plain numpy broadcast build", t, t0)
        print()

    N = a.isls_n
    X, y = data(N)
    K = rbf_kernel(X, sigma=sigma)
    res = {}

    def run_isls():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res["r"] = isls_svm(K, y, C)

    t, t0 = timed_pair(run_isls, lambda: ls_svm(K, y, C), a.repeat)
    r = res["r"]
    row(f"N={N}: isls_svm vs one ls_svm", t, t0, 3.0)
    print(f"    {r.n_iter} iterations, {r.n_sv} SVs, status {r.status}, active set sizes {r.info['n_active']}")

if __name__ == "__main__":
    main()
