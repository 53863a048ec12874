r"""The support features machine (003) and its generalised SMO (003 §2.6).

The model is the linear SVM with the l2-l1 regulariser of selectivity ``mu in [0, 1)`` (003, eq. (4)).
Notation of 003: ``N`` patterns ``x_j in R^n`` (rows of ``X``), labels ``y_j in {-1, +1}``, ``c`` the
penalty (``C`` here). Every formula below is cited to 003 by equation number; the derivations and the
reconstructions of the garbled extraction are written out in ``docs/support_features_notes.md``.

Primal (003, eq. (5))::

    min_{a, b, delta}  sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j delta_j
    s.t.               y_j (a'x_j + b) >= 1 - delta_j,   delta_j >= 0.

Dual (003, eq. (10)), concave and *not* quadratic, with ``w = sum_j lam_j y_j x_j`` (003, eq. (6))::

    max_lam  W(lam) = sum_j lam_j - 1/(4(1 - mu)) sum_i max{0, |w_i| - mu}^2
    s.t.     0 <= lam_j <= C,   sum_j y_j lam_j = 0.

(003 writes the square as ``min{mu + w_i, 0, mu - w_i}^2``; it equals ``max{0, |w_i| - mu}^2``, 003 §2.5.)

Primal recovery (003, eq. (8)), soft thresholding of ``w`` (the extraction's case 2 reads
"``w_i < mu``"; it is ``w_i < -mu``, and (7) lost a square: ``L_i = (1-mu) a_i^2 + mu|a_i| - w_i a_i``)::

    a_i = sign(w_i) max{0, |w_i| - mu} / (2 (1 - mu)).

Gradient of (10) (003 §2.6, simplified with (8))::

    dW/dlam_j = 1 - y_j a(lam)'x_j,

the gradient of the standard SVM dual with the soft-thresholded weight. In LIBSVM's notation
(minimising ``-W``, ``G_j = y_j a'x_j - 1``, so ``-y_j G_j = y_j - a'x_j``) the KKT conditions of (10) read
``max_{t in I_up} (y_t - a'x_t) <= min_{t in I_low} (y_t - a'x_t)`` with
``I_up = {lam_t < C, y_t = +1} u {lam_t > 0, y_t = -1}`` and ``I_low = {lam_t < C, y_t = -1} u {lam_t > 0, y_t = +1}``
(000, eq. (8) with box [0, C]); the solver stops when the difference (the KKT gap) is ``<= tol``.

Pair step (003, eq. (14)): with the maximal violating pair ``(i, j)``, ``lam_i += y_i t``,
``lam_j -= y_j t`` keeps ``sum y lam`` fixed (it is the line ``lam_k2 = gamma - s lam_k1``), moves
``w(t) = w + t u`` with ``u = x_i - x_j`` and gives, along the line,

    phi'(t) = (y_i - y_j) - a(w + t u)'u,    phi''(t) = -1/(2(1-mu)) sum_{k: |w_k + t u_k| > mu} u_k^2,

monotone (non-increasing) and piecewise linear with at most ``2n`` breakpoints ``t = (+-mu - w_k)/u_k``
(only features with ``u_k != 0`` move). ``phi'(0)`` is the KKT gap ``> 0``. One ``O(n)`` pass gives
``phi'(0)``, the slope after 0 and the breakpoints in ``(0, t_max)``; if the zero of the first linear piece
comes before the smallest breakpoint (most steps near convergence) it is exact and we are done. Otherwise
we walk the breakpoints in increasing order with a binary heap (``O(n + r log n)`` for ``r`` breakpoints
passed, instead of a full ``O(n log n)`` sort or the thesis' bisection), updating the slope by
``+-u_k^2/(2(1-mu))`` at each, recompute the value and slope exactly on the final piece, interpolate its
zero, and clip to ``t <= t_max`` (the box ``[0, C]``).

Keeping the gradient up to date: ``w`` is updated in ``O(n)``; the cached ``F = X a`` (so that
``y_t - F_t`` is the KKT quantity) changes by ``X delta_a``. For features that stay active with the same
sign ``delta_a_k = t u_k / (2(1-mu))`` exactly, so ``X delta_a = t/(2(1-mu)) (K_:i - K_:j) +
sum_{k not in S} x_:k (delta_a_k - t u_k/(2(1-mu)))`` with ``K = X X'`` columns computed on demand. We
take whichever of this form and the direct ``sum_{k: delta_a_k != 0} x_:k delta_a_k`` touches fewer
features: ``O(N min(|D|, n - |S|))`` per step, ``O(N)`` at ``mu = 0`` (plain SMO) and ``O(N |active|)`` at
large ``mu``. LIBSVM-style shrinking (:func:`_shrink`) restricts ``N`` to the patterns that can still
violate the KKT conditions; the stopping rule is always re-checked on all patterns with ``w`` and ``F``
recomputed from scratch.
"""
from __future__ import annotations

import time as _time
import warnings
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from svmref._validation import (
    check_kernel_memory,
    check_labels,
    check_max_iter,
    check_mu,
    check_positive,
    check_tol,
    check_X,
)

from ._result import ConvergenceWarning, SolverResult, warn_not_converged

__all__ = [
    "SFMResult",
    "PathResult",
    "support_features",
    "selectivity_path",
    "two_hypercubes",
    "leave_one_out",
    "recover_a",
    "recover_b",
    "dual_objective",
    "primal_objective",
]

#: Default gram-matrix budget (bytes) for the on-demand ``K = X X'`` columns; above it the direct update is used.
GRAM_BYTES = 512 * 1024**2
#: Exact recomputation of ``w`` and ``F = X a`` (against rounding drift) every this many pair steps.
REFRESH_EVERY = 20_000


# ----------------------------------------------------------------------------------------------
# formulas of 003, in numpy (the reading copy; the numba loop below repeats them inline)
# ----------------------------------------------------------------------------------------------
def recover_a(w: np.ndarray, mu: float) -> np.ndarray:
    """003, eq. (8): ``a_i = sign(w_i) max{0, |w_i| - mu} / (2(1 - mu))`` (soft thresholding of ``w``).

    ``w = sum_j lam_j y_j x_j`` (003, eq. (6)). Case 2 of (8) is garbled in the extraction
    ("solution when ``w_i < mu``"); the subdifferential argument of 003 §2.2 gives ``w_i < -mu``.
    """
    w = np.asarray(w, dtype=np.float64)
    return np.sign(w) * np.maximum(0.0, np.abs(w) - mu) / (2.0 * (1.0 - mu))


def dual_objective(lam: np.ndarray, w: np.ndarray, mu: float) -> float:
    """003, eq. (10): ``W(lam) = sum_j lam_j - 1/(4(1-mu)) sum_i max{0, |w_i| - mu}^2``."""
    g = np.maximum(0.0, np.abs(w) - mu)
    return float(np.sum(lam) - g @ g / (4.0 * (1.0 - mu)))


def primal_objective(X: np.ndarray, y: np.ndarray, a: np.ndarray, b: float, C: float, mu: float) -> float:
    """003, eq. (5) at ``(a, b)`` with the optimal slacks ``delta_j = max{0, 1 - y_j (a'x_j + b)}``."""
    delta = np.maximum(0.0, 1.0 - y * (X @ a + b))
    return float((1.0 - mu) * (a @ a) + mu * np.sum(np.abs(a)) + C * np.sum(delta))


def _kkt_bounds(F, y, lam, C):
    """``(m, M)``: ``m = max_{I_up} (y_t - F_t)``, ``M = min_{I_low} (y_t - F_t)`` (000, eq. (8), box [0, C]).

    Every optimal ``b`` lies in ``[m, M]`` (from ``y_t (a'x_t + b) >= 1`` at ``lam_t = 0`` and ``<= 1`` at
    ``lam_t = C``); ``-inf``/``+inf`` when a set is empty.
    """
    g = y - F
    up = ((y > 0) & (lam < C)) | ((y < 0) & (lam > 0))
    low = ((y < 0) & (lam < C)) | ((y > 0) & (lam > 0))
    m = float(np.max(g[up])) if np.any(up) else -np.inf
    M = float(np.min(g[low])) if np.any(low) else np.inf
    return m, M


def recover_b(F: np.ndarray, y: np.ndarray, lam: np.ndarray, C: float, rule: str = "eq11",
              rtol: float = 1e-10) -> tuple[float, str]:
    """The bias from the dual solution; ``F = X a``. Returns ``(b, how)``.

    * ``"eq11"`` -- 003, eq. (11): ``b = -(sum_free lam_j a'x_j + C sum_{lam_j = C} y_j) / sum_free lam_j``,
      the ``lam``-weighted mean of ``y_j - a'x_j`` over the free ``0 < lam_j < C`` (it uses ``sum y lam = 0``).
    * ``"mean"``  -- the plain mean of ``y_j - a'x_j`` over the free ``lam_j`` (LIBSVM's rule).

    Free means ``rtol C < lam_j < (1 - rtol) C``, at C means ``lam_j >= (1 - rtol) C`` (the SMO puts a
    variable that reaches a bound exactly on it; ``rtol`` only guards against rounding: (11) goes wrong
    if a ``lam_j`` at C is counted as free). When no ``lam_j`` is free, (11) is ``0/0``; both rules then
    take the midpoint of the KKT interval ``[m, M]`` of :func:`_kkt_bounds` (every optimal b lies in it;
    LIBSVM does the same), or its finite end if one side is empty.
    """
    free = (lam > rtol * C) & (lam < C * (1.0 - rtol))
    if np.any(free):
        if rule == "eq11":
            at_C = lam >= C * (1.0 - rtol)
            num = np.sum(lam[free] * F[free]) + C * np.sum(y[at_C])
            return float(-num / np.sum(lam[free])), "eq11"
        return float(np.mean(y[free] - F[free])), "mean"
    m, M = _kkt_bounds(F, y, lam, C)
    if np.isfinite(m) and np.isfinite(M):
        return 0.5 * (m + M), "midpoint"
    return (m if np.isfinite(m) else M), "interval_end"


# ----------------------------------------------------------------------------------------------
# the generalised SMO (003 §2.6), compiled
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _soft(v, mu):
    if v > mu:
        return v - mu
    if v < -mu:
        return v + mu
    return 0.0


@njit(cache=True)
def _refresh(X, y, lam, mu, w, F):
    """Exact ``w = X'(y * lam)`` (003, eq. (6)) and ``F = X a`` with ``a`` from (8)."""
    N, n = X.shape
    half = 0.5 / (1.0 - mu)
    for k in range(n):
        w[k] = 0.0
    for t in range(N):
        c = lam[t] * y[t]
        if c != 0.0:
            for k in range(n):
                w[k] += c * X[t, k]
    a = np.empty(n)
    for k in range(n):
        a[k] = _soft(w[k], mu) * half
    for t in range(N):
        s = 0.0
        for k in range(n):
            s += X[t, k] * a[k]
        F[t] = s


@njit(cache=True)
def _select(y, lam, F, C, rows, n_rows):
    """Maximal violating pair (000 eq. (8)): ``i = argmax_{I_up} y - F``, ``j = argmin_{I_low} y - F``
    over the unshrunk patterns ``rows[:n_rows]``."""
    i = -1
    j = -1
    gmax = -np.inf
    gmin = np.inf
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        if (y[t] > 0 and lam[t] < C) or (y[t] < 0 and lam[t] > 0):
            if g > gmax:
                gmax = g
                i = t
        if (y[t] < 0 and lam[t] < C) or (y[t] > 0 and lam[t] > 0):
            if g < gmin:
                gmin = g
                j = t
    return i, j, gmax - gmin


#: Relative distance to a bound of [0, C] below which the SMO puts a variable on the bound.
SNAP = 1e-13
#: Curvature floor of the second-order working-set selection (LIBSVM's TAU).
TAU = 1e-12


@njit(cache=True)
def _select2(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, rows, n_rows):
    """Second-order working-set selection (Fan, Chen & Lin 2005; LIBSVM's WSS2) adapted to (10).

    ``i = argmax_{I_up} (y_t - F_t)`` as in :func:`_select`; ``j`` minimises ``-b_it^2 / q_it`` over
    ``t in I_low`` with ``b_it = (y_i - F_i) - (y_t - F_t) > 0``, where ``q_it = -phi''(0+)`` is the
    curvature of ``-W`` along the pair direction at the current point:
    ``q_it = 1/(2(1-mu)) sum_{k: |w_k| > mu} (x_ik - x_tk)^2`` (floored at :data:`TAU`). The stopping gap is
    the first-order one, ``max_{I_up} - min_{I_low}``.
    """
    N, n = X.shape
    half = 0.5 / (1.0 - mu)
    i = -1
    gmax = -np.inf
    gmin = np.inf
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        if (y[t] > 0 and lam[t] < C) or (y[t] < 0 and lam[t] > 0):
            if g > gmax:
                gmax = g
                i = t
        if (y[t] < 0 and lam[t] < C) or (y[t] > 0 and lam[t] > 0):
            if g < gmin:
                gmin = g
    if i < 0 or gmin == np.inf:
        return -1, -1, np.inf
    na = 0
    ni = 0
    for k in range(n):
        if w[k] > mu or w[k] < -mu:
            act[na] = k
            na += 1
        else:
            inact[ni] = k
            ni += 1
    via_gram = use_gram and ni < na
    if via_gram:
        _gram_col(X, K, have, i)
    j = -1
    best = np.inf
    for q in range(n_rows):
        t = rows[q]
        if (y[t] < 0 and lam[t] < C) or (y[t] > 0 and lam[t] > 0):
            bt = gmax - (y[t] - F[t])
            if bt > 0.0:
                if via_gram:
                    q = diag[i] + diag[t] - 2.0 * K[i, t]
                    for r in range(ni):
                        d = X[i, inact[r]] - X[t, inact[r]]
                        q -= d * d
                else:
                    q = 0.0
                    for r in range(na):
                        d = X[i, act[r]] - X[t, act[r]]
                        q += d * d
                q *= half
                if q <= TAU:
                    q = TAU
                v = -bt * bt / q
                if v <= best:
                    best = v
                    j = t
    return i, j, gmax - gmin


@njit(cache=True)
def _heap_down(key, val, size, pos):
    while True:
        left = 2 * pos + 1
        if left >= size:
            return
        small = left
        if left + 1 < size and key[left + 1] < key[left]:
            small = left + 1
        if key[small] < key[pos]:
            key[small], key[pos] = key[pos], key[small]
            val[small], val[pos] = val[pos], val[small]
            pos = small
        else:
            return


@njit(cache=True)
def _line_search(w, u, mu, yi, yj, tmax, bp, ds):
    """Zero of ``phi'(t) = (y_i - y_j) - a(w + t u)'u`` on ``[0, tmax]`` (003 §2.6, eq. (14)).

    ``phi'`` is non-increasing and piecewise linear; the breakpoints are ``t = (+-mu - w_k)/u_k``.
    Walk them in increasing order (binary heap), track the slope, and interpolate on the final segment
    with its value and slope recomputed exactly. Returns ``t`` (``= tmax`` when ``phi' > 0`` on the whole box).
    """
    n = w.shape[0]
    half = 0.5 / (1.0 - mu)
    m = 0
    s = 0.0
    v = yi - yj  # phi'(0), exact
    bmin = tmax
    for k in range(n):
        uk = u[k]
        if uk == 0.0:
            continue
        wk = w[k]
        v -= _soft(wk, mu) * half * uk
        # active just after t = 0 (the tie |w_k| = mu counts when w moves outward)
        if wk > mu or wk < -mu or (wk == mu and uk > 0.0) or (wk == -mu and uk < 0.0):
            s -= uk * uk * half
        # upper threshold +mu: entering when moving up (uk > 0), leaving when moving down
        tb = (mu - wk) / uk
        if tb > 0.0 and tb < tmax:
            bp[m] = tb
            ds[m] = -uk * uk * half if uk > 0.0 else uk * uk * half
            m += 1
            bmin = min(bmin, tb)
        # lower threshold -mu: entering when moving down (uk < 0), leaving when moving up
        tb = (-mu - wk) / uk
        if tb > 0.0 and tb < tmax:
            bp[m] = tb
            ds[m] = -uk * uk * half if uk < 0.0 else uk * uk * half
            m += 1
            bmin = min(bmin, tb)
    if v <= 0.0:
        return 0.0
    # the common case near convergence: the zero of the first linear piece lies before the first
    # breakpoint; it is then exact (no heap)
    if s < 0.0 and v + s * bmin <= 0.0:
        return min(v / (-s), bmin)
    if m == 0:
        return tmax
    # heapify
    for p in range(m // 2 - 1, -1, -1):
        _heap_down(bp, ds, m, p)
    # walk: v = phi'(tprev) (estimate), s = slope on (tprev, next)
    tprev = 0.0
    size = m
    while True:
        nxt = tmax if size == 0 else bp[0]
        if s < 0.0 and v + s * (nxt - tprev) <= 0.0:
            break  # the zero is in (tprev, nxt]
        if size == 0:
            return tmax
        v += s * (nxt - tprev)
        tprev = nxt
        # pass every breakpoint at nxt
        while size > 0 and bp[0] == nxt:
            s += ds[0]
            size -= 1
            bp[0] = bp[size]
            ds[0] = ds[size]
            _heap_down(bp, ds, size, 0)
    # exact value and slope on the final segment (start at tprev, inside the segment just after it)
    v = yi - yj
    s = 0.0
    for k in range(n):
        uk = u[k]
        if uk == 0.0:
            continue
        wt = w[k] + tprev * uk
        v -= _soft(wt, mu) * half * uk
        if wt > mu or wt < -mu or (wt >= mu and uk > 0.0) or (wt <= -mu and uk < 0.0):
            s -= uk * uk * half
    if v <= 0.0:
        return tprev
    if s >= 0.0:
        return min(nxt, tmax)
    t = tprev + v / (-s)
    if t > tmax:
        t = tmax
    return t


@njit(cache=True)
def _gram_col(X, K, have, i):
    if not have[i]:
        N, n = X.shape
        for t in range(N):
            s = 0.0
            for k in range(n):
                s += X[t, k] * X[i, k]
            K[i, t] = s  # column i of X X' stored as row i (contiguous)
        have[i] = True


@njit(cache=True)
def _pick(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, wss, rows, n_rows):
    if wss == 2:
        return _select2(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, rows, n_rows)
    return _select(y, lam, F, C, rows, n_rows)


@njit(cache=True)
def _shrink(y, lam, F, C, rows, n_rows):
    """LIBSVM-style shrinking: drop patterns at a bound that cannot join a violating pair now.

    A pattern in ``I_up`` only (``lam = 0, y = +1`` or ``lam = C, y = -1``) can only be ``i``; it violates
    with some ``j`` only if ``y_t - F_t > M = min_{I_low}``, so it is dropped when ``y_t - F_t < M``;
    symmetrically a pattern in ``I_low`` only is dropped when ``y_t - F_t > m = max_{I_up}``. Returns the
    new count; ``rows[:count]`` are the kept patterns. Shrunk patterns' ``F`` is not updated until the
    next full refresh (which un-shrinks everything and re-checks the stopping rule on all patterns).
    """
    m = -np.inf
    M = np.inf
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        if (y[t] > 0 and lam[t] < C) or (y[t] < 0 and lam[t] > 0):
            m = max(m, g)
        if (y[t] < 0 and lam[t] < C) or (y[t] > 0 and lam[t] > 0):
            M = min(M, g)
    k = 0
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        up_only = (y[t] > 0 and lam[t] <= 0.0) or (y[t] < 0 and lam[t] >= C)
        low_only = (y[t] < 0 and lam[t] <= 0.0) or (y[t] > 0 and lam[t] >= C)
        if (up_only and g < M) or (low_only and g > m):
            continue
        rows[k] = t
        k += 1
    return k


@njit(cache=True)
def _axpy_cols(XT, idx, coef, m, F, rows, n_rows, all_rows):
    """``F += sum_q X[:, idx_q] coef_q`` on the unshrunk patterns, ``XT = X'`` row-major (contiguous columns)."""
    N = F.shape[0]
    for q in range(m):
        c = coef[q]
        row = XT[idx[q]]
        if all_rows:
            for r in range(N):
                F[r] += c * row[r]
        else:
            for p in range(n_rows):
                r = rows[p]
                F[r] += c * row[r]


@njit(cache=True)
def _smo(X, XT, y, C, mu, tol, max_iter, lam, w, F, use_gram, K, have, diag, wss, refresh_every, shrinking):
    """The generalised SMO loop (003 §2.6). Returns ``(n_iter, gap, code, n_refresh, min_rows)``.

    ``code``: 0 converged (gap <= tol on exact w, F), 1 iteration limit, 2 stalled (the maximal violating
    pair cannot move at working precision).
    """
    N, n = X.shape
    half = 0.5 / (1.0 - mu)
    u = np.empty(n)
    da = np.empty(n)
    idx = np.empty(n, dtype=np.int64)
    idx2 = np.empty(n, dtype=np.int64)
    ev = np.empty(n)
    act = np.empty(n, dtype=np.int64)
    inact = np.empty(n, dtype=np.int64)
    bp = np.empty(2 * n)
    ds = np.empty(2 * n)
    it = 0
    since = 0
    n_refresh = 0
    gap = np.inf
    code = 1
    rows = np.arange(N)
    n_rows = N
    shrink_every = min(N, 1000)
    since_shrink = 0
    unshrunk_once = False
    min_rows = N
    while True:
        i, j, gap = _pick(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, wss, rows, n_rows)
        if i < 0 or j < 0 or gap <= tol:
            # confirm on exact w and F, on all patterns (un-shrink), before stopping
            _refresh(X, y, lam, mu, w, F)
            n_refresh += 1
            since = 0
            since_shrink = 0
            for q in range(N):
                rows[q] = q
            n_rows = N
            i, j, gap = _pick(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, wss, rows, n_rows)
            if i < 0 or j < 0 or gap <= tol:
                code = 0
                break
        elif n_rows < N and not unshrunk_once and gap <= 10.0 * tol:
            # as LIBSVM: un-shrink once when close, so that a wrongly shrunk pattern is caught early
            unshrunk_once = True
            _refresh(X, y, lam, mu, w, F)
            n_refresh += 1
            since = 0
            since_shrink = 0
            for q in range(N):
                rows[q] = q
            n_rows = N
            continue
        if it >= max_iter:
            # report the gap over all patterns, on exact w and F
            _refresh(X, y, lam, mu, w, F)
            n_refresh += 1
            for q in range(N):
                rows[q] = q
            n_rows = N
            i, j, gap = _pick(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, wss, rows, n_rows)
            if i < 0 or j < 0 or gap <= tol:
                code = 0
            break
        if since >= refresh_every:
            _refresh(X, y, lam, mu, w, F)
            n_refresh += 1
            since = 0
            continue
        if shrinking and since_shrink >= shrink_every:
            n_rows = _shrink(y, lam, F, C, rows, n_rows)
            min_rows = min(min_rows, n_rows)
            since_shrink = 0
            continue
        since_shrink += 1
        it += 1
        since += 1
        # 003 eq. (14): lam_i += y_i t, lam_j -= y_j t, t in [0, tmax]
        tmax_i = C - lam[i] if y[i] > 0 else lam[i]
        tmax_j = lam[j] if y[j] > 0 else C - lam[j]
        tmax = min(tmax_i, tmax_j)
        for k in range(n):
            u[k] = X[i, k] - X[j, k]
        t = _line_search(w, u, mu, y[i], y[j], tmax, bp, ds)
        if t <= 0.0:
            # no progress possible at working precision: refresh and re-check once
            _refresh(X, y, lam, mu, w, F)
            n_refresh += 1
            since = 0
            i2, j2, gap2 = _pick(X, y, lam, F, C, w, mu, use_gram, K, have, diag, act, inact, wss, rows, n_rows)
            if i2 == i and j2 == j:
                gap = gap2
                code = 2
                break
            continue
        li = lam[i] + y[i] * t
        lj = lam[j] - y[j] * t
        if t >= tmax:  # snap the variable(s) that reached the box exactly onto it
            if tmax_i <= tmax_j:
                li = C if y[i] > 0 else 0.0
            if tmax_j <= tmax_i:
                lj = 0.0 if y[j] > 0 else C
        # a value within rounding of a bound goes onto it (the bound sets I_up / I_low and (11))
        if li <= SNAP * C:
            li = 0.0
        elif li >= C - SNAP * C:
            li = C
        if lj <= SNAP * C:
            lj = 0.0
        elif lj >= C - SNAP * C:
            lj = C
        dli = (li - lam[i]) * y[i]
        dlj = (lj - lam[j]) * y[j]
        lam[i] = li
        lam[j] = lj
        # w += dli x_i + dlj x_j (= t u); a = soft(w)/(2(1-mu)) changes by da
        cu = t * half
        # one pass builds both exact forms of X da: direct (idx, da) and via K columns (idx2, e)
        n_d = 0
        n_e = 0
        for k in range(n):
            wo = w[k]
            wn = wo + dli * X[i, k] + dlj * X[j, k]
            w[k] = wn
            d = (_soft(wn, mu) - _soft(wo, mu)) * half
            if d != 0.0:
                idx[n_d] = k
                da[n_d] = d
                n_d += 1
            if not ((wo > mu and wn > mu) or (wo < -mu and wn < -mu)):  # k not in S
                e = d - cu * u[k]
                if e != 0.0:
                    idx2[n_e] = k
                    ev[n_e] = e
                    n_e += 1
        if use_gram and n_e + 2 < n_d:
            _gram_col(X, K, have, i)
            _gram_col(X, K, have, j)
            for p in range(n_rows):
                r = rows[p]
                F[r] += cu * (K[i, r] - K[j, r])
            _axpy_cols(XT, idx2, ev, n_e, F, rows, n_rows, n_rows == N)
        else:
            _axpy_cols(XT, idx, da, n_d, F, rows, n_rows, n_rows == N)
    return it, gap, code, n_refresh, min_rows


# ----------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SFMResult(SolverResult):
    """Result of :func:`support_features`.

    ``alpha`` is ``lam`` (the dual (10) variables); ``objective`` is ``W(lam)`` of 003 eq. (10) in its
    *maximisation* sense (so ``primal_objective - objective >= 0`` is the duality gap); ``a`` from (8),
    ``b`` from (11) or the mean rule, ``w = X'(y * lam)`` (003, eq. (6)), ``selected`` the indices of the
    features with ``a_i != 0``; ``primal_objective`` is (5) at ``(a, b)`` with optimal slacks.
    Decision function: ``f(x) = a'x + b``.
    """

    lam: np.ndarray | None = None
    a: np.ndarray | None = None
    w: np.ndarray | None = None
    selected: np.ndarray | None = None
    primal_objective: float = float("nan")
    C: float = float("nan")
    mu: float = float("nan")

    def decision_function(self, X) -> np.ndarray:
        """``f(x) = a'x + b`` for the rows of ``X``."""
        X = check_X(X, "X")
        if X.shape[1] != self.a.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features; the model was trained on {self.a.shape[0]}")
        return X @ self.a + self.b

    def predict(self, X) -> np.ndarray:
        """Class labels ``sign(a'x + b)`` (0 is mapped to +1)."""
        return np.where(self.decision_function(X) >= 0.0, 1.0, -1.0)


def _check_data(X, y):
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        raise TypeError(
            f"X must be a dense array; got {type(X).__name__}. The support features machine needs dense X "
            "(use X.toarray())."
        )
    X = check_X(X, "X")
    y = check_labels(y, X.shape[0], "y")
    return X, y


def _check_lam0(lam0, y, C):
    lam0 = np.array(lam0, dtype=np.float64, copy=True)
    if lam0.ndim != 1 or lam0.shape[0] != y.shape[0]:
        raise ValueError(f"lam0 must be a vector of length {y.shape[0]} (one per pattern); got shape {lam0.shape}")
    if not np.all(np.isfinite(lam0)):
        raise ValueError("lam0 contains NaN or infinity")
    slack = 1e-10 * C
    if np.any(lam0 < -slack) or np.any(lam0 > C + slack):
        raise ValueError(f"lam0 must lie in the box [0, C] = [0, {C:g}] (003, eq. (10)); got range "
                         f"[{lam0.min():.6g}, {lam0.max():.6g}]")
    lam0 = np.clip(lam0, 0.0, C)
    viol = abs(float(y @ lam0))
    if viol > 1e-8 * max(1.0, C * y.shape[0]):
        raise ValueError(f"lam0 must satisfy sum_j y_j lam0_j = 0 (003, eq. (10)); got {y @ lam0:.3g}")
    return lam0


def support_features(X, y, C=1.0, mu=0.0, *, tol=1e-3, max_iter=None, lam0=None, b_rule="eq11",
                     wss="first", shrinking=True, use_gram="auto") -> SFMResult:
    """Train the support features machine (003, eq. (5)) by the generalised SMO on its dual (003, eq. (10)).

    Parameters
    ----------
    X : (N, n) dense array
        Patterns in rows (003 writes ``x_ij``, feature i of pattern j).
    y : (N,) array of -1/+1
    C : float > 0
        The penalty ``c`` of (5).
    mu : float in [0, 1)
        Selectivity (003, eq. (4)); ``mu = 0`` is the L1-SVM with ``C_svm = C/2``, ``lam = 2 alpha``.
    tol : float > 0
        Stop when the KKT gap ``max_{I_up}(y_t - a'x_t) - min_{I_low}(y_t - a'x_t) <= tol`` (default 1e-3
        as LIBSVM; the gap is checked on freshly recomputed ``w`` and ``a'x`` before stopping).
    max_iter : int, optional
        Pair steps; default ``max(10**6, 100 N)``. Reaching it sets ``status="max_iter_reached"`` and warns.
    lam0 : (N,) array, optional
        Warm start; must be feasible for (10) (box [0, C], ``sum y lam = 0``).
    b_rule : "eq11" or "mean"
        Bias by 003 eq. (11) (lam-weighted) or by the plain mean over free ``lam_j``; see :func:`recover_b`.
    wss : "first" or "second"
        Working-set selection: the maximal violating pair (first order, the default; 000 eq. (8)) or the
        second-order rule of :func:`_select2` (same ``i``, ``j`` by the predicted gain with the local
        curvature). Both stop on the same first-order KKT gap.
    shrinking : bool
        LIBSVM-style shrinking (:func:`_shrink`): patterns at a bound that cannot join a violating pair
        are left out of the selection and the gradient update; all are restored, ``F`` recomputed and the
        stopping rule re-checked on every pattern before the solver stops.
    use_gram : "auto", bool
        Cache columns of ``K = X X'`` for the cheap update at ``mu`` near 0 ("auto": when ``N^2`` doubles fit in
        :data:`GRAM_BYTES`).

    Returns
    -------
    SFMResult
    """
    t0 = _time.perf_counter()
    X, y = _check_data(X, y)
    C = check_positive(C, "C")
    mu = check_mu(mu, "mu")
    tol = check_tol(tol, "tol")
    N, n = X.shape
    max_iter = max(10**6, 100 * N) if max_iter is None else check_max_iter(max_iter)
    if b_rule not in ("eq11", "mean"):
        raise ValueError(f"b_rule must be 'eq11' or 'mean'; got {b_rule!r}")
    if use_gram == "auto":
        use_gram = 8 * N * N <= GRAM_BYTES
    elif isinstance(use_gram, (bool, np.bool_)):
        use_gram = bool(use_gram)
        if use_gram:
            check_kernel_memory(N)
    else:
        raise ValueError(f"use_gram must be 'auto', True or False; got {use_gram!r}")
    if not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError(f"shrinking must be True or False; got {shrinking!r}")
    if wss not in ("second", "first"):
        raise ValueError(f"wss must be 'second' or 'first'; got {wss!r}")
    lam = np.zeros(N) if lam0 is None else _check_lam0(lam0, y, C)

    w = np.zeros(n)
    F = np.zeros(N)
    _refresh(X, y, lam, mu, w, F)
    K = np.empty((N, N)) if use_gram else np.empty((1, 1))
    have = np.zeros(N if use_gram else 1, dtype=np.bool_)
    diag = np.einsum("ij,ij->i", X, X)
    XT = np.ascontiguousarray(X.T)
    n_iter, gap, code, n_refresh, min_rows = _smo(X, XT, y, C, mu, tol, max_iter, lam, w, F, use_gram, K, have, diag,
                                        2 if wss == "second" else 1, REFRESH_EVERY, bool(shrinking))
    return _finish(X, y, C, mu, lam, w, F, b_rule, int(n_iter), float(gap), int(code), tol, t0,
                   {"n_refresh": int(n_refresh), "gram": bool(use_gram), "gram_columns": int(have.sum()),
                    "min_unshrunk": int(min_rows)})


def _finish(X, y, C, mu, lam, w, F, b_rule, n_iter, gap, code, tol, t0, info):
    a = recover_a(w, mu)
    b, how = recover_b(F, y, lam, C, b_rule)
    W = dual_objective(lam, w, mu)
    P = primal_objective(X, y, a, b, C, mu)
    selected = np.flatnonzero(a)
    converged = code == 0
    if code == 0:
        status, message = "optimal", f"KKT gap {gap:.3g} <= tol {tol:g}"
    elif code == 1:
        status, message = "max_iter_reached", f"stopped after {n_iter} pair steps with KKT gap {gap:.3g}"
        warn_not_converged("support_features", n_iter, gap, tol, stacklevel=4)
    else:
        status = "numerical_issue"
        message = (f"stalled at working precision with KKT gap {gap:.3g} > tol {tol:g}: the maximal "
                   "violating pair cannot move; use a larger tol")
        warnings.warn(f"support_features: {message} (status='numerical_issue')", ConvergenceWarning, stacklevel=4)
    info = dict(info, b_rule=how, n_free=int(np.sum((lam > 0) & (lam < C))), n_bound=int(np.sum(lam >= C)))
    return SFMResult(alpha=lam, b=b, objective=W, n_iter=n_iter, converged=converged, status=status,
                     message=message, time=_time.perf_counter() - t0, kkt_gap=gap, info=info,
                     lam=lam, a=a, w=w.copy(), selected=selected, primal_objective=P, C=C, mu=mu)


# ----------------------------------------------------------------------------------------------
# selectivity path and leave-one-out (003 §3, Figs. 2-5)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class PathResult:
    """Result of :func:`selectivity_path`: one model per selectivity ``mu`` (003 Figs. 3-5).

    Attributes: ``mus`` (as given), ``models`` (:class:`SFMResult` per mu), ``n_selected`` (features with
    ``a_i != 0``), ``loo_error`` (leave-one-out error rate per mu, or ``None``), ``n_iter`` (pair steps per
    mu, LOO re-solves excluded), ``time`` (seconds, total).
    """

    mus: np.ndarray
    models: list
    n_selected: np.ndarray
    loo_error: np.ndarray | None = None
    n_iter: np.ndarray | None = None
    time: float = 0.0
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.models)

    def records(self) -> list[dict]:
        """One dict per mu: ``mu``, ``model``, ``n_selected``, ``selected``, ``loo_error``."""
        out = []
        for k, r in enumerate(self.models):
            out.append({"mu": float(self.mus[k]), "model": r, "n_selected": int(self.n_selected[k]),
                        "selected": r.selected,
                        "loo_error": None if self.loo_error is None else float(self.loo_error[k])})
        return out

    def best(self) -> int:
        """Index of the smallest LOO error (003 §3 chooses mu this way); ties go to fewer features."""
        if self.loo_error is None:
            raise ValueError("best() needs the leave-one-out errors: call selectivity_path(..., loo=True)")
        order = np.lexsort((self.n_selected, self.loo_error))
        return int(order[0])

    def __repr__(self) -> str:
        loo = "" if self.loo_error is None else f", loo_error={np.round(self.loo_error, 4).tolist()}"
        return (f"PathResult(mus={np.round(self.mus, 6).tolist()}, n_selected={self.n_selected.tolist()}"
                f"{loo}, time={self.time:.3g})")


def _repair_warm_start(lam, y, j, C):
    """Drop pattern ``j`` from a feasible ``lam`` of (10) and restore ``sum y lam = 0`` inside the box.

    Removing ``lam_j`` leaves ``sum y lam = -y_j lam_j``; the other class holds at least ``lam_j`` in total
    (``sum_{y=-y_j} lam = sum_{y=y_j} lam >= lam_j``), so scaling its ``lam`` by ``1 - lam_j / S`` repairs it.
    """
    keep = np.ones(y.shape[0], dtype=bool)
    keep[j] = False
    lam_r, y_r = lam[keep].copy(), y[keep]
    other = y_r == -y[j]
    S = float(np.sum(lam_r[other]))
    if lam[j] > 0.0 and S > 0.0:
        lam_r[other] *= max(0.0, 1.0 - lam[j] / S)
    # rounding: put the residual on a free lam of the other class (never move one off a bound)
    resid = float(y_r @ lam_r)
    free = other & (lam_r > 0.0) & (lam_r < C)
    if resid != 0.0 and np.any(free):
        k = np.flatnonzero(free)[np.argmax(lam_r[free])]
        lam_r[k] = min(C, max(0.0, lam_r[k] + resid * y_r[k]))
    return keep, lam_r


def leave_one_out(X, y, C, mu, model: SFMResult | None = None, *, tol=1e-3, **options) -> tuple[float, np.ndarray]:
    """Leave-one-out error of the support features machine (003 §3: the criterion that chooses mu).

    For each pattern ``j``: train on the others and classify ``x_j``; an error is ``y_j f_{-j}(x_j) <= 0``.
    If ``lam_j = 0`` in the full model, the full ``lam`` without ``j`` is still optimal for the reduced
    problem (feasible, same ``w``, and its KKT sets are subsets), so only ``a`` is reused and ``b`` is
    recomputed without ``j``; otherwise the reduced problem is re-solved from the repaired full ``lam``
    (:func:`_repair_warm_start`). Returns ``(error_rate, margins)`` with ``margins_j = y_j f_{-j}(x_j)``.
    """
    X, y = _check_data(X, y)
    C = check_positive(C, "C")
    mu = check_mu(mu, "mu")
    for cls in (-1.0, 1.0):
        if np.sum(y == cls) < 2:
            raise ValueError(f"y: leave-one-out needs at least 2 patterns of class {int(cls):+d}")
    if model is None:
        model = support_features(X, y, C, mu, tol=tol, **options)
    b_rule = options.get("b_rule", "eq11")
    lam = model.lam
    F = X @ model.a
    N = X.shape[0]
    margins = np.empty(N)
    for j in range(N):
        keep, lam_r = _repair_warm_start(lam, y, j, C)
        if lam[j] == 0.0:
            b, _ = recover_b(F[keep], y[keep], lam_r, C, b_rule)
            f = F[j] + b
        else:
            r = support_features(X[keep], y[keep], C, mu, tol=tol, lam0=lam_r, **options)
            f = float(X[j] @ r.a + r.b)
        margins[j] = y[j] * f
    return float(np.mean(margins <= 0.0)), margins


def selectivity_path(X, y, C, mus, *, tol=1e-3, loo=False, **options) -> PathResult:
    """Solve the support features machine for a grid of selectivities ``mus`` with warm starts.

    Each solve starts from the previous ``lam`` (still feasible for (10): the box and ``sum y lam = 0``
    do not depend on ``mu``). Returns a :class:`PathResult` with, per mu, the model, the number of
    selected features and (``loo=True``) the leave-one-out error of :func:`leave_one_out`. Extra
    ``options`` go to :func:`support_features` (``b_rule``, ``wss``, ``max_iter``).
    """
    t0 = _time.perf_counter()
    X, y = _check_data(X, y)
    C = check_positive(C, "C")
    mus_arr = np.atleast_1d(np.asarray(mus, dtype=np.float64))
    if mus_arr.ndim != 1 or mus_arr.size == 0:
        raise ValueError(f"mus must be a non-empty 1-D sequence of selectivities; got shape {mus_arr.shape}")
    for m in mus_arr:
        check_mu(float(m), "mus")
    if "lam0" in options:
        raise ValueError("selectivity_path chooses its own warm starts; do not pass lam0")
    models, n_sel, iters, loo_err = [], [], [], []
    lam = None
    for m in mus_arr:
        r = support_features(X, y, C, float(m), tol=tol, lam0=lam, **options)
        lam = r.lam
        models.append(r)
        n_sel.append(r.selected.size)
        iters.append(r.n_iter)
        if loo:
            loo_err.append(leave_one_out(X, y, C, float(m), r, tol=tol, **options)[0])
    return PathResult(mus=mus_arr, models=models, n_selected=np.asarray(n_sel, dtype=np.int64),
                      loo_error=np.asarray(loo_err) if loo else None, n_iter=np.asarray(iters, dtype=np.int64),
                      time=_time.perf_counter() - t0, info={"C": C, "tol": tol})


# ----------------------------------------------------------------------------------------------
# the model data of 003 §3.1
# ----------------------------------------------------------------------------------------------
def two_hypercubes(n_train_per_class=25, n=50, seed=0, *, normal=None, side=1.0):
    """The "two hypercubes" data of 003 §3.1: two cubes touching along a face with normal ``(5,4,3,2,1,0,...)``.

    003 says only: uniform points inside two hypercubes that touch along one face, the face's normal
    along ``(5, 4, 3, 2, 1, 0, ..., 0)``, so 5 features carry the class. Our construction (exact):

    * cube coordinates ``z in R^n``: class +1 has ``z_1 ~ U[0, side]``, class -1 has ``z_1 ~ U[-side, 0]``,
      and both have ``z_k ~ U[-side/2, side/2]`` for ``k >= 2`` (two unit cubes sharing the face ``z_1 = 0``,
      centred on the ``z_1`` axis);
    * rotate by the Householder reflection ``H = I - 2 v v'/(v'v)``, ``v = e_1 - nu``, ``nu = normal/||normal||``,
      which maps ``e_1`` to ``nu``: ``x = H z``. Then ``nu'x = z_1``, so the shared face lies in the hyperplane
      ``nu'x = 0`` with normal ``nu``, and the classes are separated exactly by ``sign(nu'x)``;
    * ``v`` is zero beyond the support of ``normal``, so ``H`` leaves ``e_k`` unchanged there: features
      6..n are ``z_k``, pure noise, independent of the class; features 1..5 mix ``z_1..z_5``.

    Returns ``X`` (``2 n_train_per_class x n``: first the class +1 block, then class -1) and ``y``.
    ``seed`` seeds ``numpy.random.default_rng``.
    """
    if isinstance(n_train_per_class, bool) or int(n_train_per_class) != n_train_per_class or n_train_per_class < 1:
        raise ValueError(f"n_train_per_class must be an integer >= 1; got {n_train_per_class!r}")
    normal = np.array([5.0, 4.0, 3.0, 2.0, 1.0]) if normal is None else np.asarray(normal, dtype=np.float64).ravel()
    if isinstance(n, bool) or int(n) != n or n < normal.size:
        raise ValueError(f"n must be an integer >= len(normal) = {normal.size}; got {n!r}")
    side = check_positive(side, "side")
    if not np.all(np.isfinite(normal)) or not np.any(normal != 0):
        raise ValueError("normal must be a finite, non-zero vector")
    n, m = int(n), int(n_train_per_class)
    nu = np.zeros(n)
    nu[: normal.size] = normal / np.linalg.norm(normal)
    v = -nu.copy()
    v[0] += 1.0
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-side / 2, side / 2, size=(2 * m, n))
    Z[:m, 0] = rng.uniform(0.0, side, size=m)
    Z[m:, 0] = rng.uniform(-side, 0.0, size=m)
    vv = float(v @ v)
    X = Z - np.outer(Z @ v, v) * (2.0 / vv) if vv > 0 else Z.copy()  # x = H z (H symmetric)
    y = np.concatenate([np.ones(m), -np.ones(m)])
    return X, y
