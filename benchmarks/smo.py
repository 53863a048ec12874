"""Speed of the SMO engine against LIBSVM (scikit-learn's SVC), ratios measured in one run.

Instance: overlapping Gaussian blobs in d = 10 dimensions (see :func:`blobs`), RBF kernel
``exp(-||x - z||^2 / sigma^2)`` with ``sigma^2 = d``, labels +-1, tol = 1e-3 (LIBSVM's default).
BLAS is pinned to one thread (threadpoolctl) for both sides; each time is the median of ``--repeat`` runs.

Three tables:

* ``precomputed``: the kernel matrix is computed once per N and given to both solvers (so the times compare the
  optimisers): our L1 SMO (shrinking on and off) against ``SVC(kernel="precomputed")``, for each N and C;
* ``raw``: raw X through :class:`svmref.solvers.smo.RawKernel` (LRU column cache) against ``SVC(kernel="rbf")``
  with the same cache size in MB; with ``--rss`` each run is repeated in a subprocess to report its peak RSS;
  at N >= 30000 use ``benchmarks/smo_raw.py`` (every fit in its own subprocess, with the objective check);
* ``adapters``: the L2, LS and Least 1-Norm adapters on the same K, as ratios to our own L1 time.

Run::

    python benchmarks/smo.py                                 # N = 5000 10000 20000, C = 1 10 100 (long)
    python benchmarks/smo.py --n 5000 --C 1 10 --raw-n 5000 --repeat 3     # a reduced configuration
    python benchmarks/smo.py --datasets heart titanic german # 000 Table 2 sets, iterations only
    python benchmarks/smo.py --n 5000 --C 1 10 100 --raw-n --adapters-n 0 --clock cpu   # on a shared machine
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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


#: The clock of :func:`median_time`: wall time by default; ``--clock cpu`` uses the process's CPU time (both sides
#: run single-threaded, so on a shared machine it is the steadier measure of the same work).
CLOCK = time.perf_counter


def median_time(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = CLOCK()
        out = fn()
        times.append(CLOCK() - t)
    return float(np.median(times)), out


def _dual_of_svc(svc, K, y):
    a = np.zeros(len(y))
    a[svc.support_] = svc.dual_coef_[0] * y[svc.support_]
    v = a * y
    return 0.5 * float(v @ (K @ v)) - float(a.sum())


def _warm_up(d):
    from svmref.kernels import rbf_kernel
    from svmref.solvers import smo

    Xw, yw = blobs(60, d)
    Kw = rbf_kernel(Xw, sigma=np.sqrt(d))
    for name in ("l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"):
        getattr(smo, name)(Kw, yw, 1.0)
    smo.l1_svm(smo.RawKernel(Xw, "rbf", sigma=np.sqrt(d)), yw, 1.0)


def _raw_child(spec: str) -> None:
    """Subprocess body for ``--rss``: one fit, then print its time and peak RSS (MB) as JSON."""
    import resource

    p = json.loads(spec)
    X, y = blobs(p["n"], p["d"])
    t = time.perf_counter()
    if p["who"] == "ours":
        from svmref.solvers import smo

        smo.l1_svm(smo.RawKernel(X, "rbf", sigma=np.sqrt(p["d"]), cache_size=p["cache"]), y, p["C"], tol=p["tol"])
    else:
        from sklearn.svm import SVC

        SVC(kernel="rbf", gamma=1.0 / p["d"], C=p["C"], tol=p["tol"], cache_size=p["cache"]).fit(X, y)
    dt = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    try:  # VmHWM belongs to this process image (ru_maxrss can carry the parent's high-water mark across fork)
        with open("/proc/self/status") as fh:
            rss = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024.0
    except (OSError, StopIteration):
        pass
    print(json.dumps({"time": dt, "rss_mb": rss}))


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="*", default=[5000, 10000, 20000], help="N of the precomputed table")
    ap.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0, 100.0])
    ap.add_argument("--raw-n", type=int, nargs="*", default=[30000, 50000], help="N of the raw-X table")
    ap.add_argument("--raw-C", type=float, default=1.0)
    ap.add_argument("--cache", type=float, default=200.0, help="cache size in MB (both solvers, raw X)")
    ap.add_argument("--adapters-n", type=int, default=5000, help="N of the adapters table (0: skip)")
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--repeat", type=int, default=3, help="median of this many runs per timing")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall time, or CPU time of this process (steadier on a shared machine; every fit is single-threaded)")
    ap.add_argument("--rss", action="store_true", help="raw X: also peak RSS of each run, in a subprocess")
    ap.add_argument("--datasets", nargs="*", default=[],
                    help="000 Table 2 sets (e.g. heart titanic german breast): iterations of the four "
                         "duals x two rules, features standardised, RBF sigma^2 = d, C in --data-C")
    ap.add_argument("--data-C", type=float, nargs="+", default=[1.0, 10.0, 100.0])
    return ap.parse_args(argv)


def _precomputed_table(args, SVC, rbf_kernel, smo) -> None:
    print("\n## precomputed K: our L1 SMO vs SVC(kernel='precomputed') (ratio < 1: ours faster)")
    print("# ours: l1_svm(K, ...) including its check of K (finite, symmetric: one sketch pass over K, the "
          "exact tiled pass if it does not accept); checked-once: K wrapped in PrecomputedKernel before the "
          "clock starts, as a user fitting several C on one K does (the optimiser alone)")
    print(f"{'N':>6} {'C':>6} {'ours[s]':>9} {'noshrink[s]':>11} {'SVC[s]':>9} {'ratio':>7} {'ratio_ns':>8} "
          f"{'checked-once':>12} {'it(ours)':>9} {'it(SVC)':>9} {'D(ours)-D(SVC)':>15}")
    for n in args.n:
        X, y = blobs(n, args.d)
        K = rbf_kernel(X, sigma=np.sqrt(args.d))
        Kc = smo.PrecomputedKernel(K)
        for C in args.C:
            t_o, r = median_time(lambda: smo.l1_svm(K, y, C, tol=args.tol), args.repeat)
            t_n, _ = median_time(lambda: smo.l1_svm(K, y, C, tol=args.tol, shrinking=False), args.repeat)
            t_c, _ = median_time(lambda: smo.l1_svm(Kc, y, C, tol=args.tol), args.repeat)
            svc = SVC(kernel="precomputed", C=C, tol=args.tol, shrinking=True)
            t_s, _ = median_time(lambda: svc.fit(K, y), args.repeat)
            dd = r.objective - _dual_of_svc(svc, K, y)
            print(f"{n:>6} {C:>6g} {t_o:>9.3f} {t_n:>11.3f} {t_s:>9.3f} {t_o / t_s:>7.2f} {t_n / t_s:>8.2f} "
                  f"{t_c / t_s:>12.2f} {r.n_iter:>9d} {int(svc.n_iter_[0]):>9d} {dd:>15.3e}", flush=True)
        K = Kc = None


def _raw_rss(args, n) -> list:
    """Peak RSS of one raw-X fit of ours and of SVC's, each in a fresh subprocess."""
    rss = ["-", "-"]
    for k, who in enumerate(("ours", "svc")):
        spec = json.dumps({"who": who, "n": n, "d": args.d, "cache": args.cache, "C": args.raw_C, "tol": args.tol})
        out = subprocess.run([sys.executable, __file__, "--raw-child", spec], capture_output=True, text=True,
                             check=True, env={**_env(), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                                              "MKL_NUM_THREADS": "1"})
        rss[k] = f"{json.loads(out.stdout.strip().splitlines()[-1])['rss_mb']:.0f}MB"
    return rss


def _raw_table(args, SVC, smo) -> None:
    print(f"\n## raw X: our L1 SMO through RawKernel vs SVC(kernel='rbf'), cache {args.cache:g} MB each, "
          f"C={args.raw_C:g}")
    print(f"{'N':>6} {'ours[s]':>9} {'SVC[s]':>9} {'ratio':>7} {'cols':>9} {'rss_ours':>9} {'rss_SVC':>9}")
    for n in args.raw_n:
        X, y = blobs(n, args.d)
        raw = None

        def ours():
            nonlocal raw
            raw = smo.RawKernel(X, "rbf", sigma=np.sqrt(args.d), cache_size=args.cache)
            return smo.l1_svm(raw, y, args.raw_C, tol=args.tol)

        svc = SVC(kernel="rbf", gamma=1.0 / args.d, C=args.raw_C, tol=args.tol, cache_size=args.cache)
        t_o, _ = median_time(ours, args.repeat)
        t_s, _ = median_time(lambda: svc.fit(X, y), args.repeat)
        rss = _raw_rss(args, n) if args.rss else ["-", "-"]
        print(f"{n:>6} {t_o:>9.3f} {t_s:>9.3f} {t_o / t_s:>7.2f} {raw.cache_info()['columns_computed']:>9d} "
              f"{rss[0]:>9} {rss[1]:>9}", flush=True)


def _adapters_table(args, rbf_kernel, smo) -> None:
    n = args.adapters_n
    X, y = blobs(n, args.d)
    K = rbf_kernel(X, sigma=np.sqrt(args.d))
    print(f"\n## adapters on the same K (N={n}), time and iterations relative to our L1, C = {args.C[0]:g}")
    print(f"{'dual':>16} {'time[s]':>9} {'ratio':>7} {'iter':>9} {'newton':>7} {'#free':>6}")
    t1 = None
    for name in ("l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"):
        f = getattr(smo, name)
        tt, rr = median_time(lambda: f(K, y, args.C[0], tol=args.tol), args.repeat)
        t1 = tt if t1 is None else t1
        print(f"{name:>16} {tt:>9.3f} {tt / t1:>7.2f} {rr.n_iter:>9d} {rr.info['newton_steps']:>7d} "
              f"{rr.n_free:>6d}", flush=True)


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--raw-child":
        _raw_child(sys.argv[2])
        return
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from svmref.kernels import rbf_kernel
    from svmref.solvers import smo

    args = _parse(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.datasets:
        dataset_tables(args.datasets, args.data_C, args.tol)
        return
    with threadpool_limits(1):
        _warm_up(args.d)
        print(f"# blobs d={args.d}, RBF sigma^2={args.d}, tol={args.tol:g}, median of {args.repeat}, BLAS 1 thread, "
              f"{args.clock} clock; load {os.getloadavg()[0]:.2f}")
        if args.n:
            _precomputed_table(args, SVC, rbf_kernel, smo)
        if args.raw_n:
            _raw_table(args, SVC, smo)
        if args.adapters_n:
            _adapters_table(args, rbf_kernel, smo)


def _env():
    return dict(os.environ)


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
