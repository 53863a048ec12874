r"""Fixed-size LS-SVM: the LS-SVM regression on the Nystrom approximation of the RBF kernel, fitted in the primal by
a stream over blocks of rows, so that N = 1 000 000 patterns fit in well under 1 GB.

The method of the fixed-size kernel models that 004 cites for large data (004 §1, its reference [7]: De Brabanter,
De Brabanter, Suykens & De Moor, "Optimized fixed-size kernel models for large data sets", Computational Statistics &
Data Analysis 54(6), 2010; Suykens, Van Gestel, De Brabanter, De Moor & Vandewalle, *Least Squares Support Vector
Machines*, World Scientific 2002, ch. 6), in three steps:

1. **Prototypes.** ``M`` rows of X chosen to maximise the quadratic Renyi entropy of the set,
   ``H_R = -log( (1/M^2) sum_ij k(p_i, p_j) )`` (the Parzen estimate of ``-log int p(x)^2 dx``; LS-SVMlab's
   ``kentropy``), by random swaps: a random prototype is replaced by a random row of X when that raises ``H_R``
   (:func:`select_prototypes`). Each swap costs one kernel row, ``O(M d)``.
2. **Features.** With ``K_MM = U diag(lam) U'`` (eigenvalues below ``M u lam_max`` dropped: the pseudo-inverse), the
   map ``phi(x) = k(x, P) T``, ``T = U diag(lam)^(-1/2)`` (``M x r``), has inner products
   ``phi(x)'phi(z) = k(x, P) K_MM^+ k(P, z)``: the Nystrom kernel. Any basis with that property gives the same fit
   below (the problem depends on the features through their Gram matrix only).
3. **Ridge with a free bias** on the features, the LS-SVM regression primal (004 eq. (1); 002's ``J_2`` with
   ``gamma = C``)::

       min_{w, b}  1/2 w'w + C/2 sum_i e_i^2,    e_i = y_i - w'phi(x_i) - b,

   whose optimality conditions are, with the features and targets centred by their means (``b`` eliminated by its
   own condition ``sum_i e_i = 0``, 004 eq. (2)'s first row),
   ``(I/C + Phi_c'Phi_c) w = Phi_c' y_c``, ``b = mean(y) - mean(phi)'w``. The sums are accumulated one block of
   rows at a time in the kernel's own basis (``A = sum_b K_b'K_b``, ``M x M``; the ``N x M`` feature matrix is never
   held, nor is ``K_NM``), each block shifted by the prototypes' mean kernel row so that centring does not cancel;
   ``Phi_c'Phi_c = T'(A - s s'/N)T`` at the end. Cost: one pass computing ``K_NM`` by blocks plus one ``M x M``
   rank-``b`` update per block (BLAS), then an ``r x r`` Cholesky solve.

The model is ``f(x) = sum_j beta_j k(x, p_j) + b`` with ``beta = T w``: an expansion over the ``M`` prototypes.
Classification (:class:`~svmref.solvers.estimators.FixedSizeLSSVC`) is the same fit on the targets ``+-1``: the
LS-SVM classifier's equality ``y_i (w'phi_i + b) = 1 - e_i`` is ``w'phi_i + b = y_i - y_i e_i`` since ``y_i^2 = 1``,
and ``sum_i (y_i e_i)^2 = sum_i e_i^2``.

The label. ``status == "optimal"`` says that the ridge problem *as accumulated* (the sums above, in floating point)
is solved: the objective error of ``(w, b)`` is at most ``C^2 ||r||^2 / 2`` for the residual ``r`` of the normal
equations (their matrix has smallest eigenvalue at least ``1/C``), and that is within ``gap_tol`` of the objective.
The rounding of the accumulation itself, about ``(block + N / block) u`` relative to the sums of ``|phi|`` terms,
is reported (``info["accumulation_rounding"]``, an order of magnitude) and not bounded; the test suite holds the fit
to the cvxpy primal of 004 eq. (1) on these features (``tests/test_fixed_size.py``).

A NumPy ``X`` is streamed in blocks of ``block_size`` rows (default: about 32 MB of kernel values per block),
``n_jobs`` blocks at a time on threads; a ``dask.array`` X (chunks over rows) is reduced chunk by chunk as Dask tasks
(on the active Dask client, if any) with the same per-block code. Each block's sums are rounded on one BLAS thread and
added in the blocks' order, and the ``M x M`` steps run on one thread: the coefficients do not depend on ``n_jobs`` or
on BLAS's thread count, and a Dask run whose chunks are the local blocks gives the local coefficients bit for bit.
Another block size moves them by the rounding of the accumulated sums (``info["accumulation_rounding"]`` times
``info["condition"]``).
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from svmref._validation import check_positive, check_targets, check_X
from svmref.kernels import kernel_matrix

from ._result import certified, relative_gap, warn_suboptimal

__all__ = ["renyi_entropy", "select_prototypes", "NystromMap", "FixedSizeResult", "fixed_size_ls_svm", "fixed_size_primal",
           "DEFAULT_BLOCK_BYTES"]

_U = 2.0 ** -53

#: The kernel values made per block (bytes): the rows per block are this over 8 M (at least 256).
DEFAULT_BLOCK_BYTES = 32 * 2**20


def _rbf(X, Z, sigma):
    return kernel_matrix(X, Z, kernel="rbf", sigma=sigma)


def renyi_entropy(P, sigma: float) -> float:
    """The quadratic Renyi entropy estimate ``-log( (1/M^2) sum_ij k(p_i, p_j) )`` of the rows of ``P`` under the RBF
    kernel of width ``sigma`` (module docstring, step 1; 004 reference [7])."""
    P = check_X(P, "P")
    K = _rbf(P, None, check_positive(sigma, "sigma"))
    return float(-np.log(np.sum(K) / P.shape[0] ** 2))


def _check_prototypes(n_prototypes, n: int) -> int:
    if isinstance(n_prototypes, bool) or not isinstance(n_prototypes, (int, np.integer)) or not 1 <= n_prototypes <= n:
        raise ValueError(f"n_prototypes must be an integer in [1, n_samples = {n}]; got {n_prototypes!r}")
    return int(n_prototypes)


def select_prototypes(X, n_prototypes: int, sigma: float, *, n_iter: int | None = None, random_state=None) -> np.ndarray:
    """Indices of ``n_prototypes`` rows of ``X`` whose quadratic Renyi entropy (:func:`renyi_entropy`) is raised by
    random swaps (module docstring, step 1; LS-SVMlab's fixed-size demo).

    Starting from a random subset, each of ``n_iter`` steps (default ``10 * n_prototypes``) draws a prototype and a
    row of X that is not one, and swaps them when the sum ``S = sum_ij k(p_i, p_j)`` falls (``H_R = -log(S / M^2)``
    rises). ``S`` is kept through the prototypes' kernel row sums, so a step costs one kernel row. The entropy never
    falls from step to step; the result is a local optimum of the swap moves, not the global one. Deterministic for
    an integer ``random_state``.
    """
    from sklearn.utils import check_random_state

    X = check_X(X, "X")
    sigma = check_positive(sigma, "sigma")
    n = X.shape[0]
    M = _check_prototypes(n_prototypes, n)
    n_iter = 10 * M if n_iter is None else int(n_iter)
    if n_iter < 0:
        raise ValueError(f"n_iter must be >= 0; got {n_iter}")
    rng = check_random_state(random_state)
    idx = rng.choice(n, M, replace=False)
    chosen = np.zeros(n, dtype=bool)
    chosen[idx] = True
    P = X[idx].copy()
    K = _rbf(P, None, sigma)
    rows = K.sum(axis=1)
    S = float(rows.sum())
    if M == n:
        return np.sort(idx)
    for _ in range(n_iter):
        j, c = int(rng.randint(M)), int(rng.randint(n))
        if chosen[c]:
            continue
        diff = P - X[c]                                  # one kernel row in the difference form (exact distances)
        kc = np.exp(-np.einsum("ij,ij->i", diff, diff) / (sigma * sigma))
        kcc, kc_others = 1.0, float(kc.sum() - kc[j])
        new = S - 2.0 * rows[j] + K[j, j] + 2.0 * kc_others + kcc
        if not new < S:
            continue
        rows += kc - K[:, j]
        rows[j] = kc_others + kcc
        kc[j] = kcc
        K[:, j], K[j, :] = kc, kc
        chosen[idx[j]], chosen[c] = False, True
        idx[j] = c
        P[j] = X[c]
        S = float(rows.sum())
    return np.sort(idx)


@dataclass(frozen=True, eq=False)
class NystromMap:
    """``phi(x) = k(x, P) T`` for the prototypes ``P`` (module docstring, step 2): ``phi(x)'phi(z)`` is the Nystrom
    kernel ``k(x, P) K_MM^+ k(P, z)``. ``rank`` is the number of eigenvalues of ``K_MM`` kept (those above
    ``M u lam_max``)."""

    prototypes: np.ndarray
    sigma: float
    T: np.ndarray

    @classmethod
    def fit(cls, prototypes, sigma: float) -> NystromMap:
        P = check_X(prototypes, "prototypes")
        sigma = check_positive(sigma, "sigma")
        lam, U = np.linalg.eigh(_rbf(P, None, sigma))
        keep = lam > P.shape[0] * _U * max(float(lam[-1]), 0.0)
        return cls(P, sigma, U[:, keep] / np.sqrt(lam[keep]))

    @property
    def rank(self) -> int:
        return int(self.T.shape[1])

    def kernel(self, X) -> np.ndarray:
        """``k(X, P)``, ``n x M``."""
        return _rbf(check_X(X, "X"), self.prototypes, self.sigma)

    def transform(self, X) -> np.ndarray:
        """``phi(X)``, ``n x rank``."""
        return self.kernel(X) @ self.T


@dataclass
class FixedSizeResult:
    """What :func:`fixed_size_ls_svm` returns: the primal ``w`` on the features of ``map`` and ``b``; ``beta = T w``,
    the coefficients of the prototypes' kernel expansion ``f(x) = sum_j beta_j k(x, p_j) + b``; ``objective`` the
    primal value ``1/2 w'w + C/2 sum_i e_i^2`` (from the accumulated sums); ``status``, ``duality_gap`` (here the
    certified bound on the objective error, relative), ``gap_floor``, ``gap_tol`` and ``message`` as
    :class:`~svmref.solvers._result.SolverResult`; ``n_blocks`` the blocks streamed."""

    w: np.ndarray
    b: float
    beta: np.ndarray
    map: NystromMap
    objective: float
    status: str
    n_samples: int
    n_blocks: int
    duality_gap: float
    gap_floor: float
    gap_tol: float
    message: str = ""
    time: float = 0.0
    info: dict = field(default_factory=dict)

    def decision_function(self, X) -> np.ndarray:
        """``f(x) = sum_j beta_j k(x, p_j) + b``."""
        return self.map.kernel(X) @ self.beta + self.b


def _block_sums(Kb: np.ndarray, yb: np.ndarray, k0: np.ndarray, y0: float) -> np.ndarray:
    """One block's sums in the kernel basis, shifted by ``k0`` and ``y0``, as one ``(M + 2) x (M + 2)`` matrix ``Z'Z``
    of ``Z = [Kb - k0, yb - y0, 1]`` (one BLAS rank-k update: ``A = Kc'Kc``, ``t = Kc'yc``, ``s = Kc'1``,
    ``q = yc'yc``, ``sy = 1'yc`` and the row count, :func:`_unpack`)."""
    m = Kb.shape[1]
    Z = np.empty((Kb.shape[0], m + 2))
    np.subtract(Kb, k0, out=Z[:, :m])
    np.subtract(yb, y0, out=Z[:, m])
    Z[:, m + 1] = 1.0
    return Z.T @ Z


def _unpack(S: np.ndarray) -> tuple:
    """``(n, s, A, t, q, sy)`` from the accumulated ``Z'Z`` of :func:`_block_sums`."""
    m = S.shape[0] - 2
    return S[m + 1, m + 1], S[:m, m + 1], S[:m, :m], S[:m, m], S[m, m], S[m, m + 1]


def _add(total, part):
    """The running sums plus one block's, in order."""
    return part if total is None else total + part


def _dask_block(Xb, yb, P, sigma, k0, y0):
    """One chunk's sums on a Dask worker, with one BLAS thread (as :func:`_stream_local` rounds each block: on workers
    of one thread each, the same numbers)."""
    with _one_thread_each():
        return _block_sums(_rbf(Xb, P, sigma), np.asarray(yb, dtype=float).ravel(), k0, y0)


def _stream_local(X, y, fmap, k0, y0, block, bar, n_jobs: int = 1):
    """The blocks' sums added in the blocks' order; ``n_jobs`` blocks at a time on threads, each with one BLAS thread
    (:func:`_one_thread_each`), so that every block's sums are rounded as on one thread and the total does not depend
    on ``n_jobs``, nor on how many threads BLAS would use: a Dask run with chunks of ``block`` rows, on workers of one
    BLAS thread, adds the same numbers in the same order."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    def one(s):
        return _block_sums(fmap.kernel(X[s:s + block]), y[s:s + block], k0, y0)

    total, pending = None, deque()
    with _one_thread_each(), ThreadPoolExecutor(max_workers=n_jobs) as pool:
        for s in range(0, X.shape[0], block):
            pending.append(pool.submit(one, s))
            if len(pending) > 2 * n_jobs:  # a window of blocks in flight, not all of them
                total = _add(total, pending.popleft().result())
                bar.update(1)
        while pending:
            total = _add(total, pending.popleft().result())
            bar.update(1)
    return total, -(-X.shape[0] // block)


def _one_thread_each():
    """BLAS limited to one thread (for the whole process) while the blocks run on threads of their own."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def _check_jobs(n_jobs) -> int:
    """``n_jobs``: None (every core this process may use) or a positive integer."""
    if n_jobs is None:
        import os

        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer or None (every core); got {n_jobs!r}")
    return int(n_jobs)


def _stream_dask(X, y, fmap, k0, y0, bar):
    import dask
    import dask.array as da

    if not isinstance(y, da.Array):
        y = da.from_array(np.asarray(y, dtype=float), chunks=(X.chunks[0],))
    y = y.rechunk((X.chunks[0],))
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    parts = [dask.delayed(_dask_block)(xb, yb, fmap.prototypes, fmap.sigma, k0, y0)
             for xb, yb in zip(X.to_delayed().ravel(), y.to_delayed().ravel())]
    total = None
    with _one_thread_each():  # (a local scheduler's threads run in this process)
        done = dask.compute(*parts)
    for part in done:  # in the chunks' order, so the sums do not depend on which task ends first
        total = _add(total, part)
        bar.update(1)
    return total, len(parts)


def _progress(total: int, progress, what: str) -> object:
    """The bar counting the blocks (``progress``: True, False, or None for a terminal with more than one block),
    after one line on stderr saying ``what`` will run."""
    from tqdm import tqdm

    show = (sys.stderr.isatty() and total > 1) if progress is None else bool(progress)
    if show:
        print(f"fixed-size fit: {what}", file=sys.stderr)
    return tqdm(total=total, desc="fixed-size fit", unit="block", file=sys.stderr, disable=not show)


def _check_block(block_size, M: int) -> int:
    if block_size is None:
        return max(256, DEFAULT_BLOCK_BYTES // (8 * M))
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer (rows per block); got {block_size!r}")
    return int(block_size)


def _is_dask(X) -> bool:
    return type(X).__module__.startswith("dask.")


def _inputs(X, y):
    """``(X, y, n)`` checked: a NumPy X as :func:`check_X`; a dask array X left lazy (two dimensions, float)."""
    if _is_dask(X):
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_samples, n_features); got a dask array of shape {X.shape}")
        y = y if _is_dask(y) else check_targets(y, X.shape[0])
        return X.astype(float), y, int(X.shape[0])
    X = check_X(X, "X")
    return X, check_targets(y, X.shape[0]), X.shape[0]


def _solve(sums, fmap: NystromMap, k0, y0, C: float):
    """``(w, b, objective, residual norm, sum of squared errors, condition number of the system, the negative
    eigenvalue of G clipped)`` from the accumulated sums (module docstring, 3)."""
    n, s, A, t, q, sy = _unpack(sums)
    T = fmap.T
    Ac = A - np.outer(s, s) / n
    G = T.T @ Ac @ T
    G = 0.5 * (G + G.T)
    ev, V = np.linalg.eigh(G)
    # G = Phi_c'Phi_c is a Gram matrix: its negative eigenvalues are rounding (of Ac, amplified by ||T||^2 where
    # K_MM is ill-conditioned), clipped here; the clipped size enters the floor (fixed_size_ls_svm)
    clipped = float(max(-ev[0], 0.0))
    if clipped > 0.0:
        G = (V * np.maximum(ev, 0.0)) @ V.T
    tc = T.T @ (t - s * sy / n)
    H = G + np.eye(G.shape[0]) / C
    w = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H, lower=True), tc)
    r = H @ w - tc
    mean_phi = (k0 + s / n) @ T
    b = y0 + sy / n - float(mean_phi @ w)
    sse = max(q - sy * sy / n - 2.0 * float(w @ tc) + float(w @ G @ w), 0.0)
    obj = 0.5 * float(w @ w) + 0.5 * C * sse
    cond = (max(float(ev[-1]), 0.0) + 1.0 / C) * C
    return w, b, obj, float(np.linalg.norm(r)), sse, cond, clipped


def fixed_size_ls_svm(X, y, C: float, *, sigma: float, n_prototypes: int | None = None, prototypes=None,
                      n_iter: int | None = None, random_state=None, block_size: int | None = None,
                      gap_tol: float = 1e-8, progress=None, n_jobs: int | None = None) -> FixedSizeResult:
    """The fixed-size LS-SVM regression (module docstring): prototypes, Nystrom features, blockwise primal ridge.

    Parameters
    ----------
    X : ndarray (n, d) or dask.array
        The patterns; a dask array is reduced chunk by chunk as Dask tasks.
    y : ndarray (n,) or dask.array
        Real targets (``+-1`` for the classifier).
    C : float > 0
        The penalty of the squared errors (004 eq. (1); LS-SVMlab's ``gam``).
    sigma : float > 0
        The RBF width, ``k(x, z) = exp(-||x - z||^2 / sigma^2)`` (000 §4; 002).
    n_prototypes : int, optional
        ``M``: select this many prototypes by :func:`select_prototypes` (from the rows of a NumPy X; from a dask X,
        its first chunk). Give it or ``prototypes``.
    prototypes : ndarray (M, d), optional
        The prototypes themselves.
    n_iter, random_state
        Of :func:`select_prototypes`.
    block_size : int, optional
        Rows per block of a NumPy X (default :data:`DEFAULT_BLOCK_BYTES` over ``8 M``, at least 256).
    gap_tol : float, default 1e-8
        The relative objective-error bound that ``"optimal"`` is held to (module docstring, "The label").
    progress : bool or None
        A tqdm bar on stderr counting the blocks; None: on a terminal, when there is more than one block.
    n_jobs : int or None
        Blocks of a NumPy X computed at a time, on threads of one BLAS thread each (None: every core). The
        coefficients do not depend on it: each block's sums are rounded as on one thread and added in the blocks'
        order (as a Dask run with chunks of ``block_size`` rows adds them).
    """
    t0 = time.perf_counter()
    C = check_positive(C, "C")
    gap_tol = check_positive(gap_tol, "gap_tol")
    n_jobs = _check_jobs(n_jobs)
    X, y, n = _inputs(X, y)
    if (n_prototypes is None) == (prototypes is None):
        raise ValueError("give exactly one of n_prototypes (to select them) and prototypes")
    if prototypes is None:
        head = np.asarray(X.blocks[0].compute() if _is_dask(X) else X, dtype=float)
        prototypes = head[select_prototypes(head, n_prototypes, sigma, n_iter=n_iter, random_state=random_state)]
    with _one_thread_each():  # K_MM's eigenvectors rounded the same way whatever BLAS's thread count
        fmap = NystromMap.fit(prototypes, sigma)
    if fmap.prototypes.shape[1] != X.shape[1]:
        raise ValueError(f"prototypes must have the {X.shape[1]} features of X; got {fmap.prototypes.shape[1]}")
    M = fmap.prototypes.shape[0]
    k0 = _rbf(fmap.prototypes, None, sigma).mean(axis=0)  # the shift: the prototypes' mean kernel row
    # the targets' shift: the mean of the first block's (chunk's), the same number on both paths (fsum: exactly rounded,
    # so it does not depend on the copy's alignment in memory, as NumPy's pairwise sum can)
    first = X.chunks[0][0] if _is_dask(X) else _check_block(block_size, M)
    head = np.asarray(y[:first].compute() if _is_dask(y) else y[:first], dtype=float)
    y0 = math.fsum(head) / max(head.size, 1)
    if _is_dask(X):
        with _progress(X.numblocks[0], progress, f"{n} rows in {X.numblocks[0]} Dask chunk(s), {M} prototypes "
                       f"(rank {fmap.rank})") as bar:
            sums, n_blocks = _stream_dask(X, y, fmap, k0, y0, bar)
    else:
        block = _check_block(block_size, M)
        with _progress(-(-n // block), progress, f"{n} rows in {-(-n // block)} block(s) of {block}, {M} prototypes "
                       f"(rank {fmap.rank})") as bar:
            sums, n_blocks = _stream_local(X, y, fmap, k0, y0, block, bar, n_jobs)
    return _finish(sums, fmap, k0, y0, C, gap_tol, n, n_blocks, M, t0)


def _finish(sums, fmap, k0, y0, C, gap_tol, n, n_blocks, M, t0) -> FixedSizeResult:
    """The solve of the accumulated sums, its certified bound and label (module docstring, "The label")."""
    with _one_thread_each():  # the M x M solve too: the coefficients do not depend on BLAS's thread count
        w, b, obj, rnorm, sse, cond, clipped = _solve(sums, fmap, k0, y0, C)
    gap = 0.5 * C * C * rnorm * rnorm
    floor = (fmap.rank + 8) * _U * (0.5 * float(w @ w) + 0.5 * C * (abs(float(_unpack(sums)[4])) + 2.0 * sse)) \
        + 0.5 * C * clipped * float(w @ w)  # clipping G's rounding moves the objective by at most this
    scale = max(obj - floor, 0.0)
    rel_gap, rel_floor = relative_gap(gap, floor, scale)
    if certified(gap, floor, scale, gap_tol):
        status, message = "optimal", "the normal equations of the accumulated sums are solved to rounding"
    else:
        status = "suboptimal"
        message = warn_suboptimal("fixed_size_ls_svm", "the Cholesky solve ended", rel_gap, rel_floor, gap_tol,
                                  "the system I/C + Phi_c'Phi_c is ill-conditioned at this C: lower C or sigma, or "
                                  "use fewer prototypes")
    return FixedSizeResult(w=w, b=b, beta=fmap.T @ w, map=fmap, objective=obj, status=status, n_samples=n,
                           n_blocks=n_blocks, duality_gap=rel_gap, gap_floor=rel_floor, gap_tol=gap_tol,
                           message=message, time=time.perf_counter() - t0,
                           info={"accumulation_rounding": (n / n_blocks + n_blocks) * _U,
                                 "residual_norm": rnorm, "condition": cond, "clipped_eigenvalue": clipped,
                                 "rank": fmap.rank, "M": M})


class _Identity:
    """The map of given features: ``phi(x) = x`` (``T = I``), for :func:`fixed_size_primal`."""

    prototypes = None
    sigma = None

    def __init__(self, d: int):
        self.T = np.eye(d)

    @property
    def rank(self) -> int:
        return self.T.shape[0]

    def kernel(self, X) -> np.ndarray:
        return check_X(X, "X")

    def transform(self, X) -> np.ndarray:
        return check_X(X, "X")


def fixed_size_primal(X, y, C: float, *, block_size: int | None = None, gap_tol: float = 1e-8,
                      progress=None, n_jobs: int | None = None) -> FixedSizeResult:
    """The fixed-size LS-SVM's primal on given features: ridge with a free bias, ``min 1/2 w'w + C/2 sum_i e_i^2``,
    ``e = y - X w - b`` (004 eq. (1) with ``Phi(x) = x``), by the blockwise accumulation and solve of
    :func:`fixed_size_ls_svm` (module docstring, step 3) with the identity map, so that verify can hold that step
    alone to its model (``svmref verify svmref.solvers.fixed_size:fixed_size_primal -f fixed_size_ls_svm``).

    ``X`` is ``n x d`` (the features; a NumPy array, streamed in blocks of ``block_size`` rows); returns a
    :class:`FixedSizeResult` with ``w`` (length d), ``b`` and ``beta = w``; ``M`` in its ``info`` is ``d``.
    """
    t0 = time.perf_counter()
    C = check_positive(C, "C")
    gap_tol = check_positive(gap_tol, "gap_tol")
    n_jobs = _check_jobs(n_jobs)
    X = check_X(X, "X")
    n, d = X.shape
    y = check_targets(y, n)
    fmap = _Identity(d)
    block = _check_block(block_size, d)
    k0 = X[:block].mean(axis=0)  # the shifts: the first block's mean row and target
    y0 = float(np.mean(y[:block]))
    with _progress(-(-n // block), progress, f"{n} rows in {-(-n // block)} block(s) of {block}, {d} features") as bar:
        sums, n_blocks = _stream_local(X, y, fmap, k0, y0, block, bar, n_jobs)
    return _finish(sums, fmap, k0, y0, C, gap_tol, n, n_blocks, d, t0)

