"""Time of the certified reference: every formulation at N = 1000, the L1 dual at N = 2000.

Targets (2 cores): the certified L1 dual at N = 2000 in <= 10 s; every formulation's reference at
N = 1000 in <= 5 s. Each time is build + solve + certificate (+ polish / cross-check when they run),
the median of ``--repeat`` runs, BLAS pinned to ``--threads`` threads. The anchor, measured in the same
run, is the uncertified reference the certified one replaced (the L1 dual through an eigen-factor that drops
eigenvalues below ``1e-9 max|eig|``, ``sum_squares(Phi' (y * alpha))``, CLARABEL, then the ECOS cross-check) at
``--anchor-size``; the ratio printed is anchor time / new time at that size. The ``strategy`` column is
``problem.info.strategy`` (docs/reference.md).

    python benchmarks/reference.py [--sizes 1000] [--big 2000] [--anchor-size 500] [--repeat 3] [--threads 2]
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import cvxpy as cp
import numpy as np
from threadpoolctl import threadpool_limits

import svmref.formulations as F
from svmref.formulations.reference import SOLVER_OPTIONS
from svmref.kernels import rbf_kernel

FORMS = {
    "l1_svm": ["dual", "primal"], "l2_svm": ["dual", "primal"], "ls_svm": ["dual", "primal"],
    "ls_svm_regression": ["dual", "primal"], "least_1norm_svm": ["dual", "primal"], "rls": ["dual", "primal"],
    "sparse_ls_svm": ["dual", "primal"], "support_features": ["dual", "primal", "qp"],
}


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


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def legacy_l1_dual(K, y, C=1.0):
    """The uncertified reference: factor with eigenvalues < 1e-9 lambda_max dropped, CLARABEL, ECOS cross-check."""
    w, V = np.linalg.eigh(K)
    keep = w > 1e-9 * np.max(np.abs(w))
    Phi = V[:, keep] * np.sqrt(w[keep])
    alpha = cp.Variable(len(y))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Phi.T @ cp.multiply(y, alpha)) - cp.sum(alpha)),
                      [y @ alpha == 0, alpha >= 0, alpha <= C])
    prob.solve(solver="CLARABEL", **SOLVER_OPTIONS["CLARABEL"])
    v1 = prob.value
    prob.solve(solver="ECOS", **SOLVER_OPTIONS["ECOS"])
    return v1


def new_reference(name, form, X, y, K):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.solve(build(name, form, X, y, K))


def describe(sol):
    form = sol.info.get("gram", sol.info.get("factor", {})).get("source", "-")
    return (f"{sol.info.strategy:13s} {sol.solver:26s} {('certified' if sol.certified else 'NOT certified'):13s} "
            f"{'yes' if sol.polished else 'no':8s} {('ECOS' if sol.cross_check else '-'):5s} {form}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000])
    ap.add_argument("--big", type=int, default=2000, help="size of the L1 dual target (0: skip)")
    ap.add_argument("--anchor-size", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--names", nargs="+", default=list(FORMS))
    args = ap.parse_args(argv)
    with threadpool_limits(args.threads):
        Na = args.anchor_size
        X, y, K = instance(Na)
        t_old, _ = timed(lambda: legacy_l1_dual(K, y), 1)
        t_new, sol = timed(lambda: new_reference("l1_svm", "dual", X, y, K), args.repeat)
        print(f"anchor (N = {Na}): uncertified L1 dual reference {t_old:.2f} s; certified {t_new:.2f} s; "
              f"ratio {t_old / t_new:.1f}x")
        print(f"{'formulation':18s} {'form':7s} {'N':>5s} {'median s':>9s} {'target':>7s}  "
              f"{'strategy':13s} {'solved by':26s} {'certificate':13s} {'polished':8s} {'check':5s} form of K")
        fails = 0
        for N in args.sizes:
            X, y, K = instance(N)
            for name in args.names:
                for form in FORMS[name]:
                    t, sol = timed(lambda: new_reference(name, form, X, y, K), args.repeat)
                    target = 5.0 if N <= 1000 else float("nan")
                    ok = not t > target
                    fails += not ok
                    print(f"{name:18s} {form:7s} {N:5d} {t:9.2f} {target:7.1f}{' ' if ok else '!'} {describe(sol)}", flush=True)
        if args.big:
            X, y, K = instance(args.big)
            t, sol = timed(lambda: new_reference("l1_svm", "dual", X, y, K), args.repeat)
            ok = t <= 10.0
            fails += not ok
            print(f"{'l1_svm':18s} {'dual':7s} {args.big:5d} {t:9.2f} {10.0:7.1f}{' ' if ok else '!'} {describe(sol)}")
        print(f"{fails} time target(s) missed ('!'); BLAS threads pinned to {args.threads}")


if __name__ == "__main__":
    main()
