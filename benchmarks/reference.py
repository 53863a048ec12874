"""Reference solve time of every dual (and primal) at N = 200 and 500.

The cvxpy reference is ground truth, not a fast solver: this script says what it costs, so that
verify's suites and the tests can be sized. Anchor: the same problem's compile + solve split, and
the second (cross-check) solver, measured in the same run.

    python benchmarks/reference.py [--sizes 200 500] [--forms dual primal]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import svmref.formulations as F
from svmref.kernels import rbf_kernel


def instance(N: int, seed: int = 0, d: int = 10):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(N) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(N, d)) + 0.5 * y[:, None]
    return X, y, rbf_kernel(X, sigma=np.sqrt(d))


def build(name, form, X, y, K):
    f = F.get(name)
    if name == "support_features":
        return getattr(f, form)(X, y, C=1.0, mu=0.2)
    if name == "rls":
        return getattr(f, form)(K, y, gamma=1e-2)
    if name == "sparse_ls_svm":
        lam = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
        return getattr(f, form)(K, y, C=1.0, lam=lam)
    return getattr(f, form)(K, y, C=1.0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--forms", nargs="+", default=["dual", "primal"])
    args = ap.parse_args(argv)
    print(f"{'formulation':18s} {'form':7s} {'N':>5s} {'build s':>8s} {'CLARABEL s':>11s} {'ECOS s':>8s} {'rel diff':>9s}")
    for N in args.sizes:
        X, y, K = instance(N)
        for name in F.names():
            for form in args.forms + (["qp"] if name == "support_features" and "dual" in args.forms else []):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    prob = build(name, form, X, y, K)
                    tb = time.perf_counter() - t0
                    sol = F.solve(prob)
                print(f"{name:18s} {form:7s} {N:5d} {tb:8.3f} {sol.time:11.3f} {sol.cross_check.get('time', float('nan')):8.3f} "
                      f"{sol.disagreement:9.1e}", flush=True)


if __name__ == "__main__":
    main()
