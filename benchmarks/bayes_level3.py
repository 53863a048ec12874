"""Speed of the Bayesian LS-SVM's level 3 (002; Van Gestel et al. 2002) against one eigendecomposition.

    python benchmarks/bayes_level3.py              # N = 1000 and 2000
    python benchmarks/bayes_level3.py --quick      # N = 300
    python benchmarks/bayes_level3.py --sizes 500 --repeat 5

Prints, per N, the ratio ``BayesianLSSVC().fit(X, y)`` (level 3 over sigma, each sigma with its level 2)
/ one ``scipy.linalg.eigh`` of an N x N RBF kernel matrix of the same data, both measured in the same
run, the runs of the two interleaved, median of ``--repeat`` (default 3), under one BLAS thread
(``threadpoolctl``). The issue's target: ratio <= 10 at N = 1000 and 2000. Also prints the number of
sigma evaluations (eigendecompositions) the search made and the sigma found.
The data: two Gaussian classes in 2-D (Ripley-like, as ``benchmarks/linear_systems.py``).
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

from svmref.kernels import rbf_kernel
from svmref.solvers.bayes import BayesianLSSVC


def data(N, seed=0):
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal([-0.3, 0.7], 0.25, size=(h, 2)), rng.normal([0.4, 0.5], 0.25, size=(N - h, 2))]
    y = np.r_[np.zeros(h), np.ones(N - h)]
    return X, y


def _time(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def bench(N, repeat):
    X, y = data(N)
    K = rbf_kernel(X, sigma=0.5)
    fits, eighs, clf = [], [], None
    for _ in range(repeat):
        te, _ = _time(lambda: scipy.linalg.eigh(K))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tf, clf = _time(lambda: BayesianLSSVC().fit(X, y))
        eighs.append(te)
        fits.append(tf)
    fit, eig = statistics.median(fits), statistics.median(eighs)
    res = clf.result_
    n_eval = getattr(res, "n_evaluations", len(res.sigmas))
    print(f"N = {N:5d}: fit {fit:8.3f} s, eigh {eig:7.4f} s, ratio fit/eigh = {fit / eig:6.2f} "
          f"(target <= 10); sigma evaluations {n_eval}, sigma = {res.sigma:.6g}, "
          f"level-3 log evidence {res.log_evidence:.6f}, at_boundary {res.at_boundary}", flush=True)
    return fit / eig


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    p.add_argument("--quick", action="store_true", help="N = 300 only")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    sizes = [300] if a.quick else a.sizes
    with threadpool_limits(1):
        for N in sizes:
            bench(N, a.repeat)


if __name__ == "__main__":
    main()
