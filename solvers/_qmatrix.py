"""The kernel seam of the SMO engines (LIBSVM's ``QMatrix``): a column of K on demand and the diagonal.

Two implementations of one small interface:

* :class:`PrecomputedKernel` -- a dense K the caller holds: column ``p`` is the row ``K[p]`` (K is
  symmetric), read in place (no copy of a float64 C-contiguous K);
* :class:`RawKernel` -- the data ``X`` and a kernel (linear, polynomial, RBF, the Gaussian of 001), with
  columns computed on demand into a cache of at most ``cache_size`` megabytes, least recently used
  column evicted first (LIBSVM's ``Cache``; ``SVC(cache_size=...)``). The full K is never formed.

The compiled loops see both through one tuple (:meth:`PrecomputedKernel.numba_q`) and one function,
:func:`get_col`; the Python side uses :meth:`matvec` (``K v``, for exact gradients), :meth:`block`
(``K[rows][:, cols]``, for the Newton step on the free variables) and :meth:`diag`.

Kernel conventions are those of :mod:`svmref.kernels` (each cited there to its paper):
``linear`` ``x'z``; ``poly`` ``(1 + x'z / c)^d`` (002); ``rbf`` ``exp(-||x - z||^2 / sigma^2)`` (000 §4,
002, 004); ``gaussian`` ``exp(-||x - z||^2 / (2 sigma^2))`` (001 §3).
"""
from __future__ import annotations

import math
import numbers
import os

import numpy as np
from numba import njit

from svmref import kernels as _kernels
from svmref._thresholds import SYM_RTOL
from svmref._validation import asymmetric, check_cache_size, check_gram, check_positive, check_X

__all__ = ["gram_scan", "scan_gram", "sketch_symmetric", "PrecomputedKernel", "RawKernel", "as_qmatrix", "get_col",
           "RAW_KERNELS", "available_memory"]

KIND_DENSE = 0
KIND_RAW = 1

#: Kernels a :class:`RawKernel` computes in the compiled loop (name -> code).
RAW_KERNELS = {"linear": 0, "poly": 1, "polynomial": 1, "rbf": 2, "gaussian": 2}


def available_memory() -> int | None:
    """Bytes of physical memory available now (Linux ``MemAvailable``), or ``None`` if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _check_alloc(nbytes: int, what: str) -> None:
    """Raise a clear MemoryError if the solver's own allocation of ``nbytes`` cannot fit."""
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise MemoryError(f"{what} needs {nbytes / 1024**3:.1f} GiB but only {avail / 1024**3:.1f} GiB "
                          "of memory is available")


#: Absolute accuracy of the RBF/Gaussian column values (:data:`svmref.kernels.EXPANSION_ATOL`).
_ATOL = _kernels.EXPANSION_ATOL
#: ``kappa u`` of :func:`svmref.kernels.expansion_bound` is ``(2 d + 8) _UNIT``: the unit roundoff of float64.
_UNIT = _kernels.expansion_bound(1) / 10.0


@njit(cache=True)
def _exact_sq(X, t, p):
    """``||x_t - x_p||^2`` in the difference form from the rows of the raw ``X`` (relative error ``(d + 2) u``)."""
    s = 0.0
    for k in range(X.shape[1]):
        v = X[t, k] - X[p, k]
        s += v * v
    return s


@njit(cache=True)
def _rbf_exponents(xx, xxmax, X, gamma, cbound, p, out):
    """``out[t] = -gamma ||x_t - x_p||^2`` from the inner products ``out[t] = a_t'a_p`` of the shifted points and their
    squared norms ``xx`` (the expansion), with the rule of :func:`svmref.kernels.rbf_kernel`: an entry whose bound
    ``T = cbound (xx_t + xx_p)`` on ``gamma`` times the expansion's error (``cbound = gamma kappa u``,
    :func:`svmref.kernels.expansion_bound`) gives ``T exp(-max(gamma D - T, 0)) > _ATOL``, or whose value is NaN, is
    recomputed in the difference form from the raw ``X``. Only entries with ``gamma D`` below
    :func:`svmref.kernels.exponent_threshold` of the column's largest ``T`` are tested (none, for well-scaled data),
    after the plain loop, which counts them and stays vectorised; ``xxmax = max(xx)``."""
    xp = xx[p]
    n = out.shape[0]
    tmax = cbound * (xxmax + xp)
    ethr = -np.inf  # exponent_threshold(tmax): below it an entry is a candidate (none where tmax <= _ATOL)
    if tmax > _ATOL:
        ethr = (tmax + math.log(tmax / _ATOL)) * (1.0 + 2.0 ** -40)
    nc = 0
    for t in range(n):
        r = xx[t] + xp - 2.0 * out[t]
        if r < 0.0:
            r = 0.0
        e = gamma * r
        out[t] = -e
        nc += 0 if e >= ethr else 1  # a select, not a branch: the loop stays vectorised
    nc -= 0 if -out[p] >= ethr else 1
    out[p] = 0.0
    if nc == 0:
        return
    for t in range(n):
        e = -out[t]
        if not (e >= ethr) and t != p:
            T = cbound * (xx[t] + xp)
            if e != e or (T > _ATOL and not (e - T >= math.log(T / _ATOL))):
                out[t] = -gamma * _exact_sq(X, t, p)


@njit(cache=True)
def _kernel_col(XT, xx, xxmax, X, kcode, gamma, c, deg, p, out):
    """``out[t] = k(x_t, x_p)`` for every pattern t (the kernel conventions of :mod:`svmref.kernels`).

    ``XT`` is ``X`` transposed (``d x N``, C order): the dot products are accumulated feature by feature over
    contiguous rows, a loop the compiler vectorises (1.5x faster than row-wise dot products at d = 10); the
    additions are in the same order, so the values are the same to the bit. For the RBF/Gaussian kernels ``XT``
    and ``xx`` are those of the shifted points ``X - m`` (:class:`RawKernel`), and the raw ``X`` (rows) serves the
    difference form where the expansion is not accurate enough (:func:`_rbf_exponents`).
    """
    d, N = XT.shape
    for t in range(N):
        out[t] = 0.0
    for k in range(d):
        xk = XT[k, p]
        row = XT[k]
        for t in range(N):
            out[t] += row[t] * xk
    if kcode == 1:
        for t in range(N):
            out[t] = (1.0 + out[t] / c) ** deg
    elif kcode == 2:
        _rbf_exponents(xx, xxmax, X, gamma, gamma * ((2.0 * d + 8.0) * _UNIT), p, out)
        for t in range(N):
            out[t] = math.exp(out[t])


@njit(cache=True)
def get_col(Q, p):
    """Column ``p`` of K (length N, indexed by pattern): LIBSVM's ``get_Q``; the only way the loops read K.

    Dense: the row ``K[p]`` in place. Raw X: from the cache, or computed into the least recently used slot.
    The returned array stays valid until two further columns have been requested (the cache keeps at least 2).
    """
    kind, K, XT, xx, kcode, gamma, c, deg, buf, slot_of, owner, stamp, ctr, X, xxmax = Q
    if kind == KIND_DENSE:
        return K[p]
    ctr[0] += 1
    s = slot_of[p]
    if s >= 0:
        stamp[s] = ctr[0]
        ctr[1] += 1
        return buf[s]
    ns = buf.shape[0]
    best = 0
    bst = stamp[0]
    for q in range(1, ns):
        if stamp[q] < bst:
            bst = stamp[q]
            best = q
    old = owner[best]
    if old >= 0:
        slot_of[old] = -1
    owner[best] = p
    slot_of[p] = best
    stamp[best] = ctr[0]
    ctr[2] += 1
    _kernel_col(XT, xx, xxmax, X, kcode, gamma, c, deg, p, buf[best])
    return buf[best]


@njit(cache=True, inline="always")
def _pair(K, r, c, maxasym, maxabs):
    x = K[r, c]
    z = K[c, r]
    if not (np.isfinite(x) and np.isfinite(z)):
        return False, maxasym, maxabs
    return True, max(maxasym, abs(x - z)), max(maxabs, max(abs(x), abs(z)))


@njit(cache=True)
def _first_bad(K, r0, r1, c):
    # a non-finite entry among K[r, c] and K[c, r], r0 <= r < r1, as a flat index
    n = K.shape[0]
    for r in range(r0, r1):
        if not np.isfinite(K[r, c]):
            return r * n + c
        if not np.isfinite(K[c, r]):
            return c * n + r
    return -1


@njit(cache=True, nogil=True)
def _scan_sym(K, block, rows):  # noqa: C901
    """``(flat index of a non-finite entry or -1, max_ij |K_ij - K_ji|, max_ij |K_ij|)`` in one pass over the
    tiles of the upper triangle, for :func:`scan_gram`; when ``rows`` has N entries (zeros), the row sums of ``|K|``
    are added into it in the same pass (``rows[r] += |K_rc|``, ``rows[c] += |K_cr|``, the diagonal once).

    Off the diagonal tiles, eight rows at a time: for each column c the eight entries ``K[r:r+8, c]`` (eight
    forward streams) meet ``K[c, r:r+8]`` (one cache line), in straight-line code with one finiteness branch
    per eight pairs: 0.101 s against 0.128 s for the pair-by-pair loop at N = 10000, one core. A loop the
    compiler vectorises is slower still, because it reads the transposed side with gather instructions.
    With the row sums: 4.5 ms at N = 2000 against 9 ms for the pair-by-pair loop that gave them before.
    """
    n = K.shape[0]
    with_rows = rows.shape[0] == n
    maxabs = 0.0
    maxasym = 0.0
    for ib in range(0, n, block):
        ie = min(ib + block, n)
        for r in range(ib, ie):  # the diagonal tile, pair by pair
            for c in range(r, ie):
                ok, maxasym, maxabs = _pair(K, r, c, maxasym, maxabs)
                if not ok:
                    return _first_bad(K, r, r + 1, c), maxasym, maxabs
                if with_rows:
                    rows[r] += abs(K[r, c])
                    if c != r:
                        rows[c] += abs(K[c, r])
        for jb in range(ie, n, block):
            je = min(jb + block, n)
            r = ib
            while r + 8 <= ie:
                s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
                for c in range(jb, je):
                    x0 = K[r, c]
                    x1 = K[r + 1, c]
                    x2 = K[r + 2, c]
                    x3 = K[r + 3, c]
                    x4 = K[r + 4, c]
                    x5 = K[r + 5, c]
                    x6 = K[r + 6, c]
                    x7 = K[r + 7, c]
                    z0 = K[c, r]
                    z1 = K[c, r + 1]
                    z2 = K[c, r + 2]
                    z3 = K[c, r + 3]
                    z4 = K[c, r + 4]
                    z5 = K[c, r + 5]
                    z6 = K[c, r + 6]
                    z7 = K[c, r + 7]
                    d0 = abs(x0 - z0)
                    d1 = abs(x1 - z1)
                    d2 = abs(x2 - z2)
                    d3 = abs(x3 - z3)
                    d4 = abs(x4 - z4)
                    d5 = abs(x5 - z5)
                    d6 = abs(x6 - z6)
                    d7 = abs(x7 - z7)
                    # a NaN or an infinity among the sixteen makes some d NaN or infinite, and the sum with it
                    # (max() would drop a NaN); a finite difference that overflows is a false alarm, then
                    # _first_bad finds nothing and the pass goes on
                    w = ((d0 + d1) + (d2 + d3)) + ((d4 + d5) + (d6 + d7))
                    if not (w < np.inf):
                        bad = _first_bad(K, r, r + 8, c)
                        if bad >= 0:
                            return bad, maxasym, maxabs
                    a = max(max(max(abs(x0), abs(x1)), max(abs(x2), abs(x3))),
                            max(max(abs(x4), abs(x5)), max(abs(x6), abs(x7))))
                    b = max(max(max(abs(z0), abs(z1)), max(abs(z2), abs(z3))),
                            max(max(abs(z4), abs(z5)), max(abs(z6), abs(z7))))
                    maxabs = max(maxabs, max(a, b))
                    maxasym = max(maxasym, max(max(max(d0, d1), max(d2, d3)), max(max(d4, d5), max(d6, d7))))
                    if with_rows:
                        s0 += abs(x0)
                        s1 += abs(x1)
                        s2 += abs(x2)
                        s3 += abs(x3)
                        s4 += abs(x4)
                        s5 += abs(x5)
                        s6 += abs(x6)
                        s7 += abs(x7)
                        rows[c] += ((abs(z0) + abs(z1)) + (abs(z2) + abs(z3))) + ((abs(z4) + abs(z5))
                                                                                  + (abs(z6) + abs(z7)))
                if with_rows:
                    rows[r] += s0
                    rows[r + 1] += s1
                    rows[r + 2] += s2
                    rows[r + 3] += s3
                    rows[r + 4] += s4
                    rows[r + 5] += s5
                    rows[r + 6] += s6
                    rows[r + 7] += s7
                r += 8
            for rr in range(r, ie):  # the rows left over (fewer than eight)
                for c in range(jb, je):
                    ok, maxasym, maxabs = _pair(K, rr, c, maxasym, maxabs)
                    if not ok:
                        return _first_bad(K, rr, rr + 1, c), maxasym, maxabs
                    if with_rows:
                        rows[rr] += abs(K[rr, c])
                        rows[c] += abs(K[c, rr])
    return -1, maxasym, maxabs


@njit(cache=True, nogil=True)
def scan_gram(K, block, with_rows=True):
    """One tiled pass over the upper triangle of K (blocks of ``block``): ``(flat index of a non-finite entry or
    -1, max_ij |K_ij - K_ji|, max_ij |K_ij|, row sums of |K|)``.

    The checks of :func:`svmref._validation.check_gram` without its ``N x N`` temporaries (at N = 10,000
    ``check_gram`` needs 2.7 s and 2.4 GB; this pass one read of K), plus the row sums that give the 1-norm
    of a symmetric K (the condition estimate of :mod:`svmref.solvers.linear` needs it; ``with_rows=False``
    returns an empty array instead), both from :func:`_scan_sym`. The one compiled scan of K for every solver.
    On a non-finite entry it stops at once (the other values are then partial).
    """
    n = K.shape[0]
    rows = np.zeros(n) if with_rows else np.zeros(0)
    bad, maxasym, maxabs = _scan_sym(K, block, rows)
    return bad, maxasym, maxabs, rows


def gram_scan(K, rtol):
    """``(flat index of a non-finite entry or -1, asymmetric)`` by :func:`scan_gram`, with the symmetry test of
    :func:`svmref._validation.check_gram` (:func:`svmref._validation.asymmetric`); the exact ``fast`` path of
    ``check_gram`` for a float64 C-contiguous K."""
    bad, asym, big, _ = scan_gram(K, 64, False)
    return int(bad), asymmetric(asym, big, rtol)


def _sketch_then_scan(K, rtol):
    """The ``fast`` path of ``check_gram`` for a K the caller holds: from ``N = SKETCH_MIN_N`` on,
    :func:`sketch_symmetric` first; whatever it does not accept, :func:`gram_scan`."""
    if K.shape[0] >= SKETCH_MIN_N and sketch_symmetric(K, rtol):
        return -1, False
    return gram_scan(K, rtol)


def _exact_scan(K, rtol):
    return gram_scan(K, rtol)


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _sketch_pass(K, V, U, W):
    """``U = K V'`` and ``W = K' V'`` for the two rows of ``V``, in one forward pass over the rows of K, eight
    rows at a time (each ``W`` entry is updated once per eight rows). No ``nnan``/``ninf`` flags: a NaN or an
    infinity in K reaches ``U`` or ``W``."""
    n = K.shape[0]
    v0 = V[0]
    v1 = V[1]
    w0 = W[0]
    w1 = W[1]
    r = 0
    while r + 8 <= n:
        x0, x1, x2, x3, x4, x5, x6, x7 = K[r], K[r + 1], K[r + 2], K[r + 3], K[r + 4], K[r + 5], K[r + 6], K[r + 7]
        a = v0[r:r + 8]
        b = v1[r:r + 8]
        p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = 0.0
        q0 = q1 = q2 = q3 = q4 = q5 = q6 = q7 = 0.0
        for c in range(n):
            e0, e1, e2, e3, e4, e5, e6, e7 = x0[c], x1[c], x2[c], x3[c], x4[c], x5[c], x6[c], x7[c]
            f = v0[c]
            g = v1[c]
            p0 += e0 * f
            p1 += e1 * f
            p2 += e2 * f
            p3 += e3 * f
            p4 += e4 * f
            p5 += e5 * f
            p6 += e6 * f
            p7 += e7 * f
            q0 += e0 * g
            q1 += e1 * g
            q2 += e2 * g
            q3 += e3 * g
            q4 += e4 * g
            q5 += e5 * g
            q6 += e6 * g
            q7 += e7 * g
            w0[c] += (a[0] * e0 + a[1] * e1 + a[2] * e2 + a[3] * e3) + (a[4] * e4 + a[5] * e5 + a[6] * e6 + a[7] * e7)
            w1[c] += (b[0] * e0 + b[1] * e1 + b[2] * e2 + b[3] * e3) + (b[4] * e4 + b[5] * e5 + b[6] * e6 + b[7] * e7)
        U[0, r], U[0, r + 1], U[0, r + 2], U[0, r + 3] = p0, p1, p2, p3
        U[0, r + 4], U[0, r + 5], U[0, r + 6], U[0, r + 7] = p4, p5, p6, p7
        U[1, r], U[1, r + 1], U[1, r + 2], U[1, r + 3] = q0, q1, q2, q3
        U[1, r + 4], U[1, r + 5], U[1, r + 6], U[1, r + 7] = q4, q5, q6, q7
        r += 8
    for rr in range(r, n):
        x = K[rr]
        f = v0[rr]
        g = v1[rr]
        p = 0.0
        q = 0.0
        for c in range(n):
            e = x[c]
            p += e * v0[c]
            q += e * v1[c]
            w0[c] += f * e
            w1[c] += g * e
        U[0, rr] = p
        U[1, rr] = q


#: Below this order the exact pass (:func:`gram_scan`) alone checks K; from it on the sketch goes first.
SKETCH_MIN_N = 2000
#: The sketch accepts K when ``max|K v - K' v| <= SKETCH_ACCEPT * rtol * max(1, max_i |K_ii|)`` for both vectors.
SKETCH_ACCEPT = 1e-2
_SKETCH_SEED = 20261123


def sketch_symmetric(K, rtol) -> bool:
    """``True`` if K (float64, C-contiguous, square) is finite and, with overwhelming probability, symmetric to
    ``rtol``; ``False`` means "not shown": the exact pass :func:`gram_scan` decides then.

    One forward pass computes ``K v`` and ``K' v`` for two fixed Gaussian vectors ``v`` (3x faster than the
    exact tiled pass, which must pair ``K_rc`` with ``K_cr``: 0.033 s against 0.101 s at N = 10000, one core).
    Any NaN or infinity in K makes them non-finite. Let ``D = K - K'`` and ``delta = |D_rc|`` its largest entry,
    above the tolerance ``tau = rtol max(1, max|K|) >= tau0 = rtol max(1, max|K_ii|)``. Given the other
    coordinates of v, ``(D v)_r = delta v_c + const`` and ``(D v)_c = -delta v_r + const`` (``D_rr = D_cc = 0``),
    so each lies within ``rho = SKETCH_ACCEPT tau0`` of zero with probability at most
    ``2 rho / (delta sqrt(2 pi)) <= 0.008``, independently: K passes both vectors with probability below
    ``(0.008^2)^2 = 4.1e-9`` (smaller as ``(rho/delta)^4`` for larger asymmetries). The rounding of the two
    products (about ``sqrt(N) eps max|K|``: 4e-13 at N = 10000 with ``max|K| = 1``) is far below ``rho``
    (1e-10 there); when it is not, the sketch fails and the exact pass runs. The vectors are seeded, so the
    verdict for a given K is reproducible.
    """
    n = K.shape[0]
    V = np.random.default_rng(_SKETCH_SEED).standard_normal((2, n))
    U = np.zeros((2, n))
    W = np.zeros((2, n))
    _sketch_pass(K, V, U, W)
    D = U - W
    if not np.all(np.isfinite(D)):
        return False
    tau0 = rtol * max(1.0, float(np.max(np.abs(np.diagonal(K)))))
    return bool(np.max(np.abs(D)) <= SKETCH_ACCEPT * tau0)


_EMPTY2 = np.empty((1, 1))
_EMPTY1 = np.empty(1)
_EMPTYI = np.empty(1, dtype=np.int64)


class PrecomputedKernel:
    """A dense, symmetric kernel matrix ``K`` the caller already holds (LIBSVM's ``kernel="precomputed"``).

    ``K`` is checked once by :func:`svmref._validation.check_gram` (finite, square, symmetric to
    ``SYM_RTOL max(1, max|K|)``, :data:`svmref._thresholds.SYM_RTOL`) and used without a copy when it is a
    float64 C-contiguous array; otherwise one copy is made, after checking that it fits in memory.

    The check runs on the compiled passes of this module (``check_gram``'s ``fast`` path): from
    ``N = SKETCH_MIN_N`` on, a float64 C-contiguous K is first checked by :func:`sketch_symmetric` (one forward
    pass; an asymmetry above the tolerance passes it with probability below 4.1e-9); whatever it does not
    accept goes through the exact pass :func:`gram_scan`, and what that flags through ``check_gram``'s numpy
    test, which raises. ``exact_check=True`` always runs the exact pass (3x slower at N = 10000).
    """

    kind = "precomputed"

    def __init__(self, K, name: str = "K", *, exact_check: bool = False):
        if not isinstance(exact_check, (bool, np.bool_)):
            raise TypeError(f"exact_check must be True or False, got {exact_check!r}")
        if isinstance(K, PrecomputedKernel):
            K = K.K
        shape = np.shape(K)
        ok = (isinstance(K, np.ndarray) and K.dtype == np.float64 and K.ndim == 2 and K.shape[0] == K.shape[1]
              and K.size > 0 and K.flags.c_contiguous)
        if not ok and len(shape) == 2:
            _check_alloc(8 * int(shape[0]) * int(shape[1]), f"a float64 copy of the {shape[0]} x {shape[1]} {name}")
        K = check_gram(K, name, rtol=SYM_RTOL, fast=_sketch_then_scan if ok and not exact_check else _exact_scan)
        self.K = K
        self.n = K.shape[0]
        self._diag = np.ascontiguousarray(np.diagonal(K), dtype=np.float64)

    def diag(self) -> np.ndarray:
        """``K_ii`` (LIBSVM's ``get_QD``), read once."""
        return self._diag

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``K v``."""
        return self.K @ v

    def block(self, rows, cols) -> np.ndarray:
        """``K[rows][:, cols]``."""
        return self.K[np.ix_(rows, cols)]

    def column(self, p: int) -> np.ndarray:
        """Column ``p`` of K (a copy)."""
        return self.K[p].copy()

    def numba_q(self):
        """The tuple :func:`get_col` reads."""
        return (KIND_DENSE, self.K, _EMPTY2, _EMPTY1, 0, 0.0, 1.0, 1.0, _EMPTY2, _EMPTYI, _EMPTYI, _EMPTYI,
                np.zeros(3, dtype=np.int64), _EMPTY2, 0.0)

    def cache_info(self) -> dict:
        return {"kind": self.kind}

    def __repr__(self) -> str:
        return f"PrecomputedKernel(n={self.n})"


class RawKernel:
    """Raw data ``X`` and a kernel; the SMO computes the columns of K it needs into an LRU cache.

    Parameters
    ----------
    X : (N, d) array
        Patterns in rows (finite).
    kernel : {"linear", "poly", "polynomial", "rbf", "gaussian"}
        Conventions of :mod:`svmref.kernels`: ``poly`` is ``(1 + x'z/c)^d`` (002), ``rbf``
        ``exp(-||x-z||^2/sigma^2)`` (000 §4), ``gaussian`` ``exp(-||x-z||^2/(2 sigma^2))`` (001 §3).
    sigma : float > 0
        Width of ``rbf`` / ``gaussian``.
    c : float > 0, d : int >= 1
        Scale and degree of ``poly``.
    cache_size : float > 0
        Megabytes for cached columns (as ``sklearn.svm.SVC(cache_size=200)``). At least two columns are
        always kept (the working pair), whatever the size; a 1 MB cache is slow, never wrong.

    Notes
    -----
    The full ``N x N`` K is never formed; memory is ``cache_size`` plus ``O(N d)``. The ``rbf`` and ``gaussian``
    columns are accurate to 1e-12 (absolute) whatever the offset of the data, as :func:`svmref.kernels.rbf_kernel`
    is: the compiled loop works on ``X`` shifted by its mean and recomputes in the difference form what the
    expansion cannot give to that accuracy (:func:`_rbf_exponents`); ``sigma`` whose square under- or overflows
    (``1e-200``) is refused naming sigma.
    """

    kind = "raw"

    def __init__(self, X, kernel: str = "rbf", *, sigma: float = 1.0, c: float = 1.0, d: int = 2,
                 cache_size: float = 200.0):
        if not isinstance(kernel, str) or kernel not in RAW_KERNELS:
            raise ValueError(f"kernel must be one of {sorted(RAW_KERNELS)} for raw X; got {kernel!r} "
                             "(for another kernel, pass its Gram matrix K)")
        cache_size = check_cache_size(cache_size)
        X = check_X(X, "X")
        self.X = X
        self.n, self.d_features = X.shape
        self.kernel = kernel
        self.sigma = check_positive(sigma, "sigma")
        self.c = check_positive(c, "c")
        if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)) or int(d) < 1:
            raise ValueError(f"d (polynomial degree) must be an integer >= 1; got {d!r}")
        self.d = int(d)
        self.cache_size = cache_size
        self._code = RAW_KERNELS[kernel]
        self._prepare(X)
        if self._code == 0:
            self._diag = self._xx.copy()
        elif self._code == 1:
            self._diag = (1.0 + self._xx / self.c) ** self.d
        else:
            self._diag = np.ones(self.n)
        if not np.all(np.isfinite(self._diag)):
            raise ValueError("X is too large in scale for the polynomial kernel: k(x, x) overflows; rescale X")
        n_slots = int(cache_size * 1024**2 // (8 * self.n))
        self.n_slots = min(self.n, max(2, n_slots))
        _check_alloc(8 * self.n_slots * self.n, f"the column cache ({self.n_slots} columns of {self.n})")
        self._buf = np.empty((self.n_slots, self.n))
        self._slot_of = np.full(self.n, -1, dtype=np.int64)
        self._owner = np.full(self.n_slots, -1, dtype=np.int64)
        self._stamp = np.zeros(self.n_slots, dtype=np.int64)
        self._ctr = np.zeros(3, dtype=np.int64)

    def _prepare(self, X) -> None:
        """What the compiled column loop reads: ``_XT`` (d x N, C order: it reads features contiguously), the
        squared norms ``_xx`` and the rate ``_gamma``. For ``rbf``/``gaussian`` these are of the shifted points
        ``X - m``, ``m = `` :func:`svmref.kernels.distance_shift` ``(X)`` (``_shift``), so that the expansion
        ``||a||^2 + ||b||^2 - 2 a'b`` has nothing to cancel for a feature with a large offset (the column values are
        then accurate to 1e-12 absolute, as :func:`svmref.kernels.rbf_kernel`'s); linear and poly read X itself."""
        rbf = self._code == 2
        if rbf:
            self._gamma = _kernels.rbf_gamma(self.sigma, 1.0 if self.kernel == "rbf" else 0.5)
            self._shift = _kernels.distance_shift(X)
        else:
            self._gamma = 0.0
            self._shift = np.zeros(self.d_features)
        with np.errstate(over="ignore", invalid="ignore"):
            A = X - self._shift if rbf else X
            self._xx = np.einsum("ij,ij->i", A, A)
        if not np.all(np.isfinite(self._xx)):
            what = "X minus its mean" if rbf else "X"
            raise ValueError(f"X is too large in scale for the kernel: squared norms of {what} overflow (max |X_ij| = "
                             f"{float(np.max(np.abs(X))):.3g}); rescale X")
        self._XT = np.ascontiguousarray(A.T)

    def _params(self) -> dict:
        if self._code == 1:
            return {"c": self.c, "d": self.d}
        if self._code == 0:
            return {}
        return {"sigma": self.sigma}

    def kernel_matrix(self, A, B=None) -> np.ndarray:
        """``k(a_i, b_j)`` by :func:`svmref.kernels.kernel_matrix` (dense; for blocks and new points)."""
        return _kernels.kernel_matrix(A, B, kernel=self.kernel, **self._params())

    def cross(self, Z) -> np.ndarray:
        """``K_cross[i, j] = k(z_i, x_j)`` for new points ``Z`` (what a decision function needs)."""
        return self.kernel_matrix(Z, self.X)

    def diag(self) -> np.ndarray:
        return self._diag

    def matvec(self, v: np.ndarray, block_bytes: int = 64 * 1024**2) -> np.ndarray:
        """``K v`` over the non-zero entries of ``v`` only, in row blocks of at most ``block_bytes``."""
        v = np.asarray(v, dtype=np.float64)
        nz = np.flatnonzero(v)
        out = np.zeros(self.n)
        if nz.size == 0:
            return out
        Xnz = self.X[nz]
        vnz = v[nz]
        rows = max(1, int(block_bytes // (8 * nz.size)))
        for s in range(0, self.n, rows):
            out[s:s + rows] = self.kernel_matrix(self.X[s:s + rows], Xnz) @ vnz
        return out

    def block(self, rows, cols) -> np.ndarray:
        return self.kernel_matrix(self.X[rows], self.X[cols])

    def column(self, p: int) -> np.ndarray:
        return self.kernel_matrix(self.X, self.X[p:p + 1])[:, 0]

    def numba_q(self):
        return (KIND_RAW, _EMPTY2, self._XT, self._xx, self._code, self._gamma, self.c, float(self.d), self._buf,
                self._slot_of, self._owner, self._stamp, self._ctr, self.X, float(np.max(self._xx)))

    def cache_info(self) -> dict:
        """Slots, hits and misses (kernel columns computed) so far."""
        return {"kind": self.kind, "cache_size_mb": self.cache_size, "slots": self.n_slots,
                "requests": int(self._ctr[0]), "hits": int(self._ctr[1]), "columns_computed": int(self._ctr[2])}

    def __repr__(self) -> str:
        return (f"RawKernel(n={self.n}, d={self.d_features}, kernel={self.kernel!r}, {self._params()}, "
                f"cache_size={self.cache_size:g} MB, slots={self.n_slots})")


def as_qmatrix(K, name: str = "K"):
    """``K`` as a kernel seam: a :class:`RawKernel` or :class:`PrecomputedKernel` as given, else a dense K checked."""
    if isinstance(K, (RawKernel, PrecomputedKernel)):
        return K
    return PrecomputedKernel(K, name)
