"""Speed of the SMO engine against LIBSVM (scikit-learn's SVC, precomputed kernel), in one run.

Instance (issue 3): overlapping Gaussian blobs in d = 10 dimensions (see :func:`blobs`), RBF kernel
``exp(-||x - z||^2 / sigma^2)`` with ``sigma^2 = d``, C = 1, labels +-1.
The kernel matrix is computed once per N and given to both
solvers, so the times compare the optimisers (plus their input checks), not the kernels.

Prints, for each N: our L1-SVM time, SVC's time at the same tol and their ratio (ours / SVC; < 1
means faster), both objectives; then the iterations and times of all four duals with both
working-set rules.  Run:

    python benchmarks/smo.py                    # N = 1000, 2000, 5000, 10000
    python benchmarks/smo.py --n 1000 2000 --repeat 3
    python benchmarks/smo.py --datasets heart titanic german   # 000 Table 2 sets, iterations only
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def blobs(n: int, d: int = 10, seed: int = 0):
    """Two overlapping Gaussian blobs: N(0, I) for y = -1 and N(mu, I), ``mu = (1, ..., 1)/sqrt(d) * 1.5``
    for y = +1 (a Bayes error of about 23%); half the points in each class."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((n, d))
    X[y > 0] += 1.5 / np.sqrt(d)
    return X, y


def best_time(fn, repeat: int):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv=None) -> None:
    from sklearn.svm import SVC

    from svmref.kernels import rbf_kernel
    from svmref.solvers import smo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs per timing")
    ap.add_argument("--no-duals", action="store_true", help="skip the four-duals x two-rules table")
    ap.add_argument("--datasets", nargs="*", default=[],
                    help="000 Table 2 sets (e.g. heart titanic german breast): iterations of the four "
                         "duals x two rules, features standardised, RBF sigma^2 = d, C in --data-C")
    ap.add_argument("--data-C", type=float, nargs="+", default=[1.0, 10.0, 100.0])
    args = ap.parse_args(argv)
    if args.datasets:
        dataset_tables(args.datasets, args.data_C, args.tol)
        return

    # warm-up: load (or compile, the first time on this machine) the numba loops
    Xw, yw = blobs(50, args.d)
    Kw = rbf_kernel(Xw, sigma=np.sqrt(args.d))
    for w in smo.WSS:
        smo.l1_svm(Kw, yw, args.C, wss=w)

    print(f"# blobs d={args.d}, RBF sigma^2={args.d}, C={args.C:g}, tol={args.tol:g}, best of {args.repeat}")
    print(f"{'N':>6} {'ours[s]':>9} {'SVC[s]':>9} {'ratio':>7} {'it(ours)':>9} {'it(SVC)':>9} "
          f"{'D(ours)':>14} {'D(SVC)':>14}")
    tables = []
    for n in args.n:
        X, y = blobs(n, args.d)
        K = rbf_kernel(X, sigma=np.sqrt(args.d))
        t_ours, r = best_time(lambda: smo.l1_svm(K, y, args.C, tol=args.tol), args.repeat)
        svc = SVC(kernel="precomputed", C=args.C, tol=args.tol, shrinking=True)
        t_svc, _ = best_time(lambda: svc.fit(K, y), args.repeat)
        a = np.zeros(n)
        a[svc.support_] = svc.dual_coef_[0] * y[svc.support_]
        v = a * y
        d_svc = 0.5 * float(v @ (K @ v)) - float(a.sum())
        print(f"{n:>6} {t_ours:>9.3f} {t_svc:>9.3f} {t_ours / t_svc:>7.2f} {r.n_iter:>9d} "
              f"{int(svc.n_iter_[0]):>9d} {r.objective:>14.6f} {d_svc:>14.6f}", flush=True)
        if not args.no_duals:
            rows = []
            for name in ("l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"):
                for w in smo.WSS:
                    f = getattr(smo, name)
                    tt, rr = best_time(lambda: f(K, y, args.C, tol=args.tol, wss=w), args.repeat)
                    rows.append((name, w, rr.n_iter, tt, rr.objective, rr.n_sv))
            tables.append((n, rows))
        K = None  # free the N x N matrix before the next size
    for n, rows in tables:
        print(f"\n# N={n}: four duals x two working-set rules (tol={args.tol:g})")
        print(f"{'dual':>16} {'wss':>7} {'iter':>9} {'time[s]':>9} {'D(alpha)':>14} {'#SV':>6}")
        for name, w, it, tt, obj, nsv in rows:
            print(f"{name:>16} {w:>7} {it:>9d} {tt:>9.3f} {obj:>14.6f} {nsv:>6d}")


def dataset_tables(names, C_values, tol) -> None:
    """Iterations and times of the four duals with both rules on the papers' data (000 Table 2 sets).

    000 Table 2 chose C in 10^[0, 2] and sigma in 10^[0, 4] by cross-validation and does not list
    the chosen values; here sigma^2 = d (features standardised) and C in ``C_values``.
    """
    from svmref.datasets import load_dataset
    from svmref.kernels import rbf_kernel
    from svmref.solvers import smo

    Kw = rbf_kernel(np.arange(20.0).reshape(10, 2), sigma=3.0)  # warm-up (load the compiled loops)
    yw = np.where(np.arange(10) % 2 == 0, 1.0, -1.0)
    for w in smo.WSS:
        smo.l1_svm(Kw, yw, 1.0, wss=w)
    for name in names:
        X, y = load_dataset(name, scale="standard")
        K = rbf_kernel(X, sigma=np.sqrt(X.shape[1]))
        print(f"\n# {name}: N={len(y)}, d={X.shape[1]}, RBF sigma^2=d, tol={tol:g}")
        print(f"{'C':>7} {'dual':>16} {'it(first)':>10} {'it(second)':>11} {'t1[s]':>8} {'t2[s]':>8} {'#SV':>6}")
        for C in C_values:
            for dual in ("l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"):
                f = getattr(smo, dual)
                r1 = f(K, y, C, tol=tol, wss="first")
                r2 = f(K, y, C, tol=tol, wss="second")
                print(f"{C:>7g} {dual:>16} {r1.n_iter:>10d} {r2.n_iter:>11d} {r1.time:>8.4f} {r2.time:>8.4f} "
                      f"{r2.n_sv:>6d}")


if __name__ == "__main__":
    main()
