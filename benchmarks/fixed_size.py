"""Speed and memory of the fixed-size LS-SVM fit (svmref.solvers.fixed_size) against one pass over the kernel block.

    python benchmarks/fixed_size.py                  # N = 1 000 000, d = 10, M = 500, with a Dask run
    python benchmarks/fixed_size.py --quick          # N = 100 000, M = 200
    python benchmarks/fixed_size.py --no-dask --repeat 5

Prints, measured in the same run (the runs interleaved, median of ``--repeat``, default 3, all with the same number
of threads, ``--threads``, default every core: BLAS's for the anchor, the fit's ``n_jobs``):

* the anchor: one pass computing the N x M RBF kernel block ``exp(-(||x||^2 + ||p||^2 - 2 X P') / sigma^2)`` with
  BLAS, by blocks of the fit's own size (nothing else done with it);
* ``fixed_size_ls_svm`` with the prototypes given, and the ratio fit / anchor (the target: at most 3);
* the prototype selection (:func:`~svmref.solvers.fixed_size.select_prototypes`, ``10 M`` swaps), alone;
* the peak memory the fit allocates beyond X and y (``tracemalloc``, which sees NumPy's buffers; target: under
  1 GB) and the process's peak resident size;
* with dask installed (and not ``--no-dask``): the same fit with X as a ``dask.array`` (chunks of the fit's block
  size over rows) on a local cluster of ``--threads`` single-threaded worker processes, its time, and the largest
  differences of its coefficients from the local fit's, relative: of ``w`` on the features (target: 1e-10), of b, of
  the decision values, and of ``beta = T w`` over the prototypes, which ``||T||`` amplifies. The fit rounds each
  block's sums on one BLAS thread and adds them in order (its ``n_jobs`` blocks at a time on threads), so these are 0
  when the chunks are its blocks; the same fit with blocks of another size is printed beside them, its difference the
  rounding floor of the accumulated problem.

Data: X uniform on [-1, 1]^d, y = sin(pi x_1) cos(pi x_2) + 0.1 noise, sigma = sqrt(d), C = 10.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
import tracemalloc
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from svmref.solvers.fixed_size import DEFAULT_BLOCK_BYTES, fixed_size_ls_svm, select_prototypes


def data(N, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (N, d))
    y = np.sin(np.pi * X[:, 0]) * np.cos(np.pi * X[:, 1]) + 0.1 * rng.normal(size=N)
    return X, y


def kernel_pass(X, P, sigma, block):
    """The anchor: every block of the N x M RBF kernel made with one BLAS product each (in place: no temporary
    beyond the block), then dropped."""
    pp = np.einsum("ij,ij->i", P, P)
    total = 0.0
    for s in range(0, X.shape[0], block):
        Xb = X[s:s + block]
        D = Xb @ P.T
        D *= -2.0
        D += np.einsum("ij,ij->i", Xb, Xb)[:, None]
        D += pp[None, :]
        np.maximum(D, 0.0, out=D)
        D *= -1.0 / sigma ** 2
        np.exp(D, out=D)
        total += D[0, 0]
    return total


def _time(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def _peak_memory(f):
    tracemalloc.start()
    try:
        out = f()
        return tracemalloc.get_traced_memory()[1], out
    finally:
        tracemalloc.stop()


def _dask_run(X, y, P, sigma, C, block, threads, local, local1):
    try:
        import dask.array as da
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("dask: not installed (svmref[dask]); the Dask run is left out")
        return
    warnings.filterwarnings("ignore", message="Sending large graph")  # X goes into the graph: the benchmark's own data
    with LocalCluster(n_workers=threads, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            Client(lc):
        Xd, yd = da.from_array(X, chunks=(block, X.shape[1])), da.from_array(y, chunks=block)
        t, res = _time(lambda: fixed_size_ls_svm(Xd, yd, C, sigma=sigma, prototypes=P))
    def rel(a, b):
        return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))

    f_loc, f_dask = local.decision_function(X[:10_000]), res.decision_function(X[:10_000])
    print(f"dask ({threads} worker processes of one BLAS thread, {res.n_blocks} chunks): {t:.2f} s; its coefficients "
          f"differ from the local fit's ({threads} threads; the fit on one thread: w {rel(res.w, local1.w):.1e}) by:")
    print(f"    {rel(res.w, local.w):.1e} (w, on the features; target <= 1e-10), "
          f"{abs(res.b - local.b) / max(abs(local.b), 1.0):.1e} (b), {rel(f_dask, f_loc):.1e} (f on 10 000 rows), "
          f"{rel(res.beta, local.beta):.1e} (beta = T w over the prototypes, amplified by ||T||, the inverse square "
          f"root of K_MM's smallest kept eigenvalue: {np.linalg.norm(local.map.T, 2):.1e}), relative")
    other = fixed_size_ls_svm(X, y, C, sigma=sigma, prototypes=P, progress=False, block_size=block // 2 + 1,
                              n_jobs=threads)
    print(f"    the rounding floor: the local fit with blocks of {block // 2 + 1} rows moves w by "
          f"{rel(other.w, local.w):.1e} and f by {rel(other.decision_function(X[:10_000]), f_loc):.1e}, relative "
          f"(condition number {local.info['condition']:.1e})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 100 000, M = 200")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--m", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args(argv)
    N = args.n or (100_000 if args.quick else 1_000_000)
    M = args.m or (200 if args.quick else 500)
    X, y = data(N, args.d)
    sigma, C = float(np.sqrt(args.d)), 10.0
    block = max(256, DEFAULT_BLOCK_BYTES // (8 * M))
    print(f"N = {N}, d = {args.d}, M = {M}, block = {block} rows, {args.threads} BLAS thread(s), "
          f"median of {args.repeat}", flush=True)
    with threadpool_limits(args.threads):
        t_sel, idx = _time(lambda: select_prototypes(X, M, sigma, random_state=0))
        P = X[idx]
        anchors, fits, res = [], [], None
        for _ in range(args.repeat):
            anchors.append(_time(lambda: kernel_pass(X, P, sigma, block))[0])
            t, res = _time(lambda: fixed_size_ls_svm(X, y, C, sigma=sigma, prototypes=P, progress=False,
                                                     n_jobs=args.threads))
            fits.append(t)
        peak, _ = _peak_memory(lambda: fixed_size_ls_svm(X, y, C, sigma=sigma, prototypes=P, progress=False,
                                                         n_jobs=args.threads))
    anchor, fit = statistics.median(anchors), statistics.median(fits)
    print(f"one kernel pass (anchor): {anchor:.2f} s; fit: {fit:.2f} s; ratio fit / pass = {fit / anchor:.2f} "
          f"(target <= 3); status {res.status}, rank {res.map.rank}")
    print(f"prototype selection (10 M = {10 * M} swaps): {t_sel:.2f} s")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    print(f"peak memory allocated by the fit: {peak / 2**20:.0f} MB (target < 1024 MB; X and y take "
          f"{(X.nbytes + y.nbytes) / 2**20:.0f} MB); process peak resident {rss:.0f} MB")
    if not args.no_dask:
        with threadpool_limits(1):
            one = fixed_size_ls_svm(X, y, C, sigma=sigma, prototypes=P, progress=False, n_jobs=1)
        _dask_run(X, y, P, sigma, C, block, args.threads, res, one)


if __name__ == "__main__":
    main()
