"""verify by certificate at N = 100 000: its time against one blockwise pass that computes K v, and its memory.

The target (docs/verify.md, "Judged by its certificate"): N = 100 000, d = 10, RBF, the whole check (the answer's KKT
residuals, duality gap and bounds, without a reference) within 3x the time of one pass over the kernel that computes
``K v`` by blocks of rows with BLAS (the anchor, timed in the same run), in memory ``O(N x block)``, never N x N.

The answer is an LS-SVM regression (004 eq. (2)) with ``sum_i alpha_i = 0``, drawn at random: the time of a check does
not depend on how good the answer is (the same residuals are computed for any answer). Both are timed ``--repeats``
times and the median ratio is printed; the peak of the memory numpy allocates during the check (``tracemalloc``) is
printed against the size of one block of kernel rows and against the N x N matrix it never forms.

    python benchmarks/certificate.py [--n 100000] [--d 10] [--repeats 3]
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--d", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        threadpool_limits = None

    from svmref.kernels import kernel_matrix
    from svmref.verify import check
    from svmref.verify.blockwise import blockwise
    from svmref.verify.data import Instance

    rng = np.random.default_rng(0)
    N, d = args.n, args.d
    X = rng.normal(size=(N, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=N)
    sigma = float(np.sqrt(d))
    inst = Instance(f"bench-N{N}", X, y, rng.normal(size=(100, d)), "rbf", {"sigma": sigma}, {"C": 10.0})
    alpha = rng.normal(size=N)
    alpha -= alpha.mean()
    answer = (alpha, 0.1)
    ctx = threadpool_limits(limits=None) if threadpool_limits else None
    anchors, checks, peaks = [], [], []
    with ctx if ctx is not None else _null():
        for _ in range(args.repeats):
            b = blockwise(inst)
            block = b.K.block
            t0 = time.perf_counter()
            for s in range(0, N, block):  # the anchor: K v by blocks, one BLAS product each
                kernel_matrix(X[s:s + block], X, kernel="rbf", sigma=sigma) @ alpha
            anchors.append(time.perf_counter() - t0)
            tracemalloc.start()
            t0 = time.perf_counter()
            rec = check(lambda *a, **k: answer, "ls_svm_regression", [b], certificate=True)[0]
            checks.append(time.perf_counter() - t0)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    ratio = statistics.median(c / a for c, a in zip(checks, anchors))
    print(f"N = {N}, d = {d}, RBF, block = {block} rows, {args.repeats} repeats")
    print(f"one blockwise pass computing K v (anchor): median {statistics.median(anchors):.1f} s")
    print(f"verify by certificate (ls_svm_regression): median {statistics.median(checks):.1f} s; verdict "
          f"{rec.verdict} ({rec.reason[:80]})")
    print(f"ratio certificate / anchor: {ratio:.2f} (target <= 3)")
    print(f"peak memory of the check: {max(peaks) / 2**20:.0f} MiB (one block of kernel rows: "
          f"{8 * block * N / 2**20:.0f} MiB; the N x N matrix: {8 * N * N / 2**30:.0f} GiB)")
    return 0 if ratio <= 3 else 1


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    raise SystemExit(main())
