"""Raw X at large N: our L1 SMO through ``RawKernel`` against ``SVC(kernel="rbf")``, one subprocess per fit.

Instance: the blobs of :mod:`benchmarks/smo.py <smo>` (d = 10, overlapping Gaussians), RBF
``exp(-||x - z||^2 / sigma^2)`` with ``sigma^2 = d`` by default (SVC: ``gamma = 1/sigma^2``), C = 1, tol = 1e-3,
the same ``cache_size`` (MB) for both. Each fit runs in its own fresh Python process, so that its peak resident
memory (``VmHWM`` from ``/proc/self/status``, else ``ru_maxrss``) belongs to that solver alone; BLAS is pinned to
one thread (threadpoolctl, and the ``*_NUM_THREADS`` variables). Before the timed fit each child builds the data
and does a tiny warm-up fit (numba compilation is not timed); its resident size then is the ``base`` column.

Printed per N: both times and their ratio (ours / SVC, < 1: ours faster), both peak RSS, ``base`` (our child's
resident size before the fit: interpreter, numpy, numba, X), and our budget ``cache + O(N d)``, written as
``base + cache + 8 N (2 d + 26) bytes``: X once more, its transpose for the column loop, and the solver's
per-variable state, about 26 length-N vectors (alpha, gradient, bounds; the engine's compact layout: gradient,
masks, diagonal, pattern and position of each active variable, the cache's bookkeeping and its two working columns).
Besides the wall-clock ratio, ``cpu ratio`` compares the children's CPU times
(``time.process_time``; both fits are single-threaded), which a shared machine disturbs less.
The dual objectives ``D(alpha) = 1/2 v'Kv - sum alpha`` (``v = alpha * y``, 000 eq. (2)) of both answers are
recomputed the same way (blocks of K over the support vectors, after the peak is read) and their relative
difference is printed; at tol 1e-3 both stop on the same KKT rule, so they agree to about 1e-3 relative.

With ``--repeat k`` every fit is run ``k`` times (fresh process each) and the median time is used.

Run::

    python benchmarks/smo_raw.py --n 30000              # one N, one run each (several minutes on 2 cores)
    python benchmarks/smo_raw.py --n 30000 50000 --repeat 3
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from smo import blobs  # noqa: E402  (the same instance as benchmarks/smo.py)

_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def _mem_mb(key: str) -> float:
    """``VmHWM`` (peak) or ``VmRSS`` (now) of this process in MB; ``ru_maxrss`` if /proc is not there."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith(key + ":")) / 1024.0
    except (OSError, StopIteration):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def dual_objective(X, y, alpha, sigma, block=2000) -> float:
    """``1/2 v'Kv - sum alpha``, ``v = alpha * y``, with K over the support vectors only, in row blocks."""
    sv = np.flatnonzero(alpha != 0.0)
    Xs, v = X[sv], (alpha * y)[sv]
    ss = np.einsum("ij,ij->i", Xs, Xs)
    quad = 0.0
    for i in range(0, sv.size, block):
        D2 = ss[i:i + block, None] + ss[None, :] - 2.0 * (Xs[i:i + block] @ Xs.T)
        quad += float(v[i:i + block] @ (np.exp(-np.maximum(D2, 0.0) / sigma**2) @ v))
    return 0.5 * quad - float(np.sum(alpha))


def _child(spec: str) -> None:
    """One fit; prints JSON: time, peak RSS, base RSS, dual objective, iterations, support vectors."""
    from threadpoolctl import threadpool_limits

    p = json.loads(spec)
    n, d, sigma, C, tol, cache = p["n"], p["d"], p["sigma"], p["C"], p["tol"], p["cache"]
    X, y = blobs(n, d)
    with threadpool_limits(1):
        if p["who"] == "ours":
            from svmref.solvers import smo

            Xw, yw = blobs(60, d, seed=1)
            smo.l1_svm(smo.RawKernel(Xw, "rbf", sigma=sigma, cache_size=cache), yw, C, tol=tol)  # numba compile
            base = _mem_mb("VmRSS")
            t, c = time.perf_counter(), time.process_time()
            raw = smo.RawKernel(X, "rbf", sigma=sigma, cache_size=cache)
            r = smo.l1_svm(raw, y, C, tol=tol)
            dt, cpu = time.perf_counter() - t, time.process_time() - c
            peak = _mem_mb("VmHWM")
            alpha, n_iter, status = np.asarray(r.alpha, dtype=np.float64), int(r.n_iter), r.status
            extra = {"reported_objective": float(r.objective), "columns_computed": raw.cache_info()["columns_computed"]}
        else:
            from sklearn.svm import SVC

            Xw, yw = blobs(60, d, seed=1)
            SVC(kernel="rbf", gamma=1.0 / sigma**2, C=C, tol=tol, cache_size=cache).fit(Xw, yw)
            base = _mem_mb("VmRSS")
            t, c = time.perf_counter(), time.process_time()
            svc = SVC(kernel="rbf", gamma=1.0 / sigma**2, C=C, tol=tol, cache_size=cache).fit(X, y)
            dt, cpu = time.perf_counter() - t, time.process_time() - c
            peak = _mem_mb("VmHWM")
            alpha = np.zeros(n)
            alpha[svc.support_] = np.abs(svc.dual_coef_[0])  # dual_coef_ = y_i alpha_i
            n_iter, status, extra = int(svc.n_iter_[0]), "fit", {}
        D = dual_objective(X, y, alpha, sigma)
    print(json.dumps({"time": dt, "cpu": cpu, "peak_mb": peak, "base_mb": base, "objective": D, "n_iter": n_iter,
                      "n_sv": int(np.count_nonzero(alpha)), "status": status, **extra}))


def run_child(who: str, n: int, args) -> dict:
    spec = json.dumps({"who": who, "n": n, "d": args.d, "sigma": args.sigma, "C": args.C, "tol": args.tol,
                       "cache": args.cache})
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", spec], capture_output=True, text=True,
                         env={**os.environ, **_THREADS}, timeout=args.timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{who} at N = {n} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[30000, 50000])
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--sigma", type=float, default=None, help="RBF width (default sqrt(d)); SVC gets gamma = 1/sigma^2")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--cache", type=float, default=200.0, help="cache size in MB, both solvers")
    ap.add_argument("--repeat", type=int, default=1, help="fits per solver (fresh process each); median time")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per child process")
    args = ap.parse_args(argv)
    if args.sigma is None:
        args.sigma = float(np.sqrt(args.d))
    print(f"# blobs d={args.d}, RBF sigma={args.sigma:g} (SVC gamma={1 / args.sigma**2:g}), C={args.C:g}, "
          f"tol={args.tol:g}, cache {args.cache:g} MB each, one subprocess per fit, median of {args.repeat}, "
          f"BLAS 1 thread; load before: {os.getloadavg()[0]:.2f}")
    print(f"{'N':>6} {'ours[s]':>8} {'SVC[s]':>8} {'ratio':>6} {'cpu ratio':>9} {'peak_ours':>9} {'peak_SVC':>9} {'base':>6} "
          f"{'budget':>7} {'it(ours)':>9} {'it(SVC)':>9} {'#SV':>13} {'rel dD':>9}  [MB]")
    for n in args.n:
        res = {}
        for who in ("ours", "svc"):
            runs = [run_child(who, n, args) for _ in range(args.repeat)]
            r = runs[int(np.argsort([q["time"] for q in runs])[len(runs) // 2])]
            r["time"] = float(np.median([q["time"] for q in runs]))
            r["cpu"] = float(np.median([q["cpu"] for q in runs]))
            res[who] = r
        o, s = res["ours"], res["svc"]
        base = o["base_mb"]
        budget = base + args.cache + 8.0 * n * (2 * args.d + 26) / 2**20
        rel = abs(o["objective"] - s["objective"]) / abs(s["objective"])
        print(f"{n:>6} {o['time']:>8.2f} {s['time']:>8.2f} {o['time'] / s['time']:>6.2f} {o['cpu'] / s['cpu']:>9.2f} "
              f"{o['peak_mb']:>9.0f} "
              f"{s['peak_mb']:>9.0f} {base:>6.0f} {budget:>7.0f} {o['n_iter']:>9d} {s['n_iter']:>9d} "
              f"{o['n_sv']:>6d}/{s['n_sv']:<6d} {rel:>9.2e}", flush=True)
        print(f"#   D(ours)={o['objective']:.6f} (solver's own {o['reported_objective']:.6f}, status {o['status']}), "
              f"D(SVC)={s['objective']:.6f}; ours computed {o['columns_computed']} columns; "
              f"base RSS ours {o['base_mb']:.0f} MB, SVC {s['base_mb']:.0f} MB", flush=True)
    print(f"# load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
