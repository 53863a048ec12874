r"""The compiled generalised SMO of the support features machine (003 §2.6); the API is
:mod:`svmref.solvers.support_features`, the derivations ``docs/generalised_smo.md``.

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
sum_{k not in S} x_:k (delta_a_k - t u_k/(2(1-mu)))`` with ``K = X X'``. We take whichever of this form
and the direct ``sum_{k: delta_a_k != 0} x_:k delta_a_k`` touches fewer features: ``O(N min(|D|, n - |S|))``
per step, ``O(N)`` at ``mu = 0`` (plain SMO) and ``O(N |active|)`` at large ``mu``. LIBSVM-style shrinking
(:func:`_shrink`) restricts ``N`` to the patterns that can still violate the KKT conditions; shrunk patterns
are judged again on exact ``w`` and ``F`` (:func:`_rejudge`) each time the active gap falls 10x, at every
periodic refresh and at the stopping rule, which is always checked on all patterns (LIBSVM looks again only
once, at ``10 tol``: too rarely when the subproblem is slow; ``docs/generalised_smo.md`` §5).

What this engine shares with the box-dual SMO (:mod:`svmref.solvers._smo_kernel`):

* **The kernel seam.** The columns of ``K = X X'`` (the linear kernel on the patterns) come only from
  :func:`svmref.solvers._qmatrix.get_col` on the tuple ``Q`` of a ``RawKernel(X, "linear", cache_size=...)``
  (computed on demand into an LRU cache bounded in megabytes: memory ``cache_size + O(N n)``, never an
  ``N x N`` array) or of a ``PrecomputedKernel`` when the caller holds the Gram. A column returned by
  ``get_col`` stays valid until two further columns are requested, so the loop never holds more than two:
  :func:`_select2` reads ``K_:i`` alone, the ``F`` update reads ``K_:i`` and ``K_:j`` and nothing else in
  between.
* **The index sets** ``I_up``, ``I_low`` (000, eq. (8)) are :func:`svmref.solvers._smo_common._in_up`,
  ``_in_low`` and ``_sets`` with ``lower = 0``, ``upper = C`` (the box of 003 eq. (10)). The sets are the
  same in both conventions; only the sign of the KKT quantity differs. This engine keeps
  ``g_t = y_t - F_t`` with ``F = X a`` (so ``g_t = y_t dW/dlam_t``, ``W`` of (10) maximised); the box-dual
  convention of :mod:`svmref.solvers._smo_common` minimises ``-W`` and writes ``F^box_t = y_t d(-W)/dlam_t =
  a'x_t - y_t = -g_t``. Hence ``i = argmax_{I_up} g = argmin_{I_up} F^box``, ``j = argmin_{I_low} g =
  argmax_{I_low} F^box``, and the KKT gap ``max_{I_up} g - min_{I_low} g`` equals
  ``max_{I_low} F^box - min_{I_up} F^box`` (``_smo_common.kkt_gap`` on ``F^box``).
* **The bias** (in :func:`svmref.solvers._sfm_model.recover_b`): LIBSVM's rule
  (:func:`svmref.solvers._smo_common.bias` on ``F^box = F - y``) for ``b_rule="mean"`` and, for both rules,
  when no ``lam_j`` is free; 003 eq. (11) (the ``lam``-weighted mean) for ``b_rule="eq11"`` with free ``lam_j``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from svmref._thresholds import SNAP_RTOL as SNAP
from svmref._thresholds import TAU

from ._qmatrix import get_col
from ._smo_common import _in_low, _in_up, _sets

#: Exact recomputation of ``w`` and ``F = X a`` (against rounding drift) every this many pair steps.
REFRESH_EVERY = 20_000


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
    over the unshrunk patterns ``rows[:n_rows]`` (``I_up``, ``I_low`` of :mod:`svmref.solvers._smo_common`
    with the box ``[0, C]``)."""
    i = -1
    j = -1
    gmax = -np.inf
    gmin = np.inf
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        if _in_up(lam[t], y[t], 0.0, C):
            if g > gmax:
                gmax = g
                i = t
        if _in_low(lam[t], y[t], 0.0, C):
            if g < gmin:
                gmin = g
                j = t
    return i, j, gmax - gmin


# SNAP (relative distance to a bound of [0, C] below which a variable is put on the bound) and TAU (the curvature
# floor of the second-order selection, LIBSVM's) are imported above from svmref/_thresholds.py.


@njit(cache=True)
def _select2(X, y, lam, F, C, w, mu, use_gram, Q, diag, act, inact, rows, n_rows):  # noqa: C901
    """Second-order working-set selection (Fan, Chen & Lin 2005; LIBSVM's WSS2) adapted to (10).

    ``i = argmax_{I_up} (y_t - F_t)`` as in :func:`_select`; ``j`` minimises ``-b_it^2 / q_it`` over
    ``t in I_low`` with ``b_it = (y_i - F_i) - (y_t - F_t) > 0``, where ``q_it = -phi''(0+)`` is the
    curvature of ``-W`` along the pair direction at the current point:
    ``q_it = 1/(2(1-mu)) sum_{k: |w_k| > mu} (x_ik - x_tk)^2`` (floored at :data:`TAU`). The stopping gap is
    the first-order one, ``max_{I_up} - min_{I_low}``. When fewer features are inactive than active, ``q_it``
    is computed as ``K_ii + K_tt - 2 K_it`` minus the inactive terms, with the one column ``K_:i`` of
    ``K = X X'`` from the kernel seam ``Q`` (:func:`svmref.solvers._qmatrix.get_col`).
    """
    N, n = X.shape
    half = 0.5 / (1.0 - mu)
    i, j_first, gap = _select(y, lam, F, C, rows, n_rows)
    if i < 0 or j_first < 0:
        return -1, -1, np.inf
    gmax = y[i] - F[i]
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
    Ki = diag  # (typing only) replaced by the column K_:i when via_gram
    if via_gram:
        Ki = get_col(Q, i)  # the only column held here
    j = -1
    best = np.inf
    for q in range(n_rows):
        t = rows[q]
        if _in_low(lam[t], y[t], 0.0, C):
            bt = gmax - (y[t] - F[t])
            if bt > 0.0:
                if via_gram:
                    cur = diag[i] + diag[t] - 2.0 * Ki[t]
                    for r in range(ni):
                        d = X[i, inact[r]] - X[t, inact[r]]
                        cur -= d * d
                else:
                    cur = 0.0
                    for r in range(na):
                        d = X[i, act[r]] - X[t, act[r]]
                        cur += d * d
                cur *= half
                if cur <= TAU:
                    cur = TAU
                v = -bt * bt / cur
                if v <= best:
                    best = v
                    j = t
    return i, j, gap


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
def _line_search(w, u, mu, yi, yj, tmax, bp, ds):  # noqa: C901
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
    # one pass without data-dependent branches (the pattern of w and u changes every step, so branches
    # mispredict; a breakpoint is written at bp[m] always and kept by m += ok)
    for k in range(n):
        uk = u[k]
        wk = w[k]
        nz = uk != 0.0
        v -= (max(wk - mu, 0.0) + min(wk + mu, 0.0)) * half * uk
        # active just after t = 0 (the tie |w_k| = mu counts when w moves outward)
        act = (wk > mu) | (wk < -mu) | ((wk == mu) & (uk > 0.0)) | ((wk == -mu) & (uk < 0.0))
        q = uk * abs(uk) * half
        s -= abs(q) * act
        us = uk if nz else 1.0
        # upper threshold +mu: entering when moving up (uk > 0: slope -u^2 half), leaving when moving down
        tb = (mu - wk) / us
        ok = nz & (tb > 0.0) & (tb < tmax)
        bp[m] = tb
        ds[m] = -q
        m += ok
        bmin = min(bmin, tb if ok else tmax)
        # lower threshold -mu: entering when moving down (uk < 0), leaving when moving up
        tb = (-mu - wk) / us
        ok = nz & (tb > 0.0) & (tb < tmax)
        bp[m] = tb
        ds[m] = q
        m += ok
        bmin = min(bmin, tb if ok else tmax)
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
    # exact value at tprev and slope on the final segment (tprev, nxt), without data-dependent branches. The
    # slope is judged at the segment's midpoint, where no |w_k + t u_k| is at mu: judged at tprev, a feature whose
    # breakpoint is tprev sits at mu only up to rounding and could count on the wrong side (the step overshot)
    v = yi - yj
    s = 0.0
    tmid = 0.5 * (tprev + nxt)
    for k in range(n):
        uk = u[k]
        wt = w[k] + tprev * uk
        v -= (max(wt - mu, 0.0) + min(wt + mu, 0.0)) * half * uk
        wm = w[k] + tmid * uk
        act = (wm > mu) | (wm < -mu)
        s -= uk * uk * half * act
    if v <= 0.0:
        return tprev
    if s >= 0.0:
        return min(nxt, tmax)
    t = tprev + v / (-s)
    if t > tmax:
        t = tmax
    return t


@njit(cache=True)
def _pick(X, y, lam, F, C, w, mu, use_gram, Q, diag, act, inact, wss, rows, n_rows):
    if wss == 2:
        return _select2(X, y, lam, F, C, w, mu, use_gram, Q, diag, act, inact, rows, n_rows)
    return _select(y, lam, F, C, rows, n_rows)


@njit(cache=True)
def _shrink(y, lam, F, C, rows, n_rows):
    """LIBSVM-style shrinking (``be_shrunk``): drop patterns at a bound that cannot join a violating pair now.

    A pattern in ``I_up`` only (``lam = 0, y = +1`` or ``lam = C, y = -1``) can only be ``i``; it violates
    with some ``j`` only if ``y_t - F_t > M = min_{I_low}``, so it is dropped when ``y_t - F_t < M``;
    symmetrically a pattern in ``I_low`` only is dropped when ``y_t - F_t > m = max_{I_up}`` (``m``, ``M`` over
    ``rows[:n_rows]``). Returns ``(count, m - M)``; ``rows[:count]`` are the kept patterns. A shrunk pattern's
    ``F`` need not be updated until it is judged again by :func:`_rejudge`, which recomputes it.
    """
    m = -np.inf
    M = np.inf
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        if _in_up(lam[t], y[t], 0.0, C):
            m = max(m, g)
        if _in_low(lam[t], y[t], 0.0, C):
            M = min(M, g)
    k = 0
    for q in range(n_rows):
        t = rows[q]
        g = y[t] - F[t]
        st = _sets(lam[t], y[t], 0.0, C)  # 1: I_up only, 2: I_low only, 3: both (free)
        if (st == 1 and g < M) or (st == 2 and g > m):
            continue
        rows[k] = t
        k += 1
    return k, m - M


@njit(cache=True)
def _rejudge(X, y, lam, mu, w, F, C, rows, shrinking):
    """Judge every pattern on exact numbers: ``w`` and ``F`` recomputed on all patterns (:func:`_refresh`),
    every pattern un-shrunk and, with ``shrinking``, the working set re-derived by :func:`_shrink` on the
    exact ``F`` with ``m``, ``M`` over all patterns, so that a shrunk pattern which violates now comes back.
    Returns ``(n_rows, gap)``, ``gap`` the KKT gap ``m - M`` over all patterns (``-inf`` if a set is empty)."""
    N = X.shape[0]
    _refresh(X, y, lam, mu, w, F)
    for q in range(N):
        rows[q] = q
    if shrinking:
        return _shrink(y, lam, F, C, rows, N)
    i, j, gap = _select(y, lam, F, C, rows, N)
    return N, gap


@njit(cache=True)
def _axpy_cols(XT, idx, coef, m, F, rows, n_rows, all_rows):
    """``F += sum_q X[:, idx_q] coef_q`` on the unshrunk patterns, ``XT = X'`` row-major (contiguous columns); on all
    patterns when ``all_rows`` (the engine passes it while at least half are unshrunk: a contiguous loop is faster
    than the indexed one, and a shrunk pattern's ``F`` is recomputed exactly when it is judged again anyway)."""
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
def _smo(X, XT, y, C, mu, tol, max_iter, lam, w, F, use_gram, Q, diag, wss, refresh_every, shrinking):  # noqa: C901
    """The generalised SMO loop (003 §2.6). Returns ``(n_iter, gap, code, n_refresh, min_rows)``.

    ``Q`` is the kernel seam's tuple for ``K = X X'`` (read only by :func:`get_col`, and only when
    ``use_gram``), ``diag`` its diagonal ``||x_t||^2``.

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
    # Shrunk patterns are judged again (exact F on all patterns, working set re-derived: _rejudge) whenever
    # the gap over the unshrunk ones has fallen by 10x since the last judgement of all patterns. LIBSVM
    # does this once, at 10 tol; once is not enough when the subproblem is slow to solve (see
    # docs/generalised_smo.md, "Shrinking").
    check_at = np.inf
    min_rows = N
    while True:
        i, j, gap = _pick(X, y, lam, F, C, w, mu, use_gram, Q, diag, act, inact, wss, rows, n_rows)
        if i < 0 or j < 0 or gap <= tol or (n_rows < N and gap <= check_at):
            # the stopping rule is checked on exact w and F over all patterns, and so is a shrunk gap
            # that fell by 10x: un-shrink and re-derive the working set
            n_rows, gap = _rejudge(X, y, lam, mu, w, F, C, rows, shrinking)
            n_refresh += 1
            since = 0
            since_shrink = 0
            min_rows = min(min_rows, n_rows)
            if gap <= tol:
                code = 0
                break
            check_at = gap / 10.0
            continue
        if it >= max_iter:
            # report the gap over all patterns, on exact w and F
            n_rows, gap = _rejudge(X, y, lam, mu, w, F, C, rows, False)
            n_refresh += 1
            if gap <= tol:
                code = 0
            break
        if since >= refresh_every:
            # exact w and F against rounding drift, on all patterns: judge the shrunk ones too
            n_rows, g = _rejudge(X, y, lam, mu, w, F, C, rows, shrinking)
            n_refresh += 1
            since = 0
            since_shrink = 0
            min_rows = min(min_rows, n_rows)
            check_at = g / 10.0
            continue
        if shrinking and since_shrink >= shrink_every:
            was_all = n_rows == N
            n_rows, g = _shrink(y, lam, F, C, rows, n_rows)
            if was_all:
                check_at = g / 10.0
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
            # no progress possible at working precision: exact w and F, all patterns, and re-check once
            n_rows, g = _rejudge(X, y, lam, mu, w, F, C, rows, False)
            n_refresh += 1
            since = 0
            since_shrink = 0
            if g <= tol:  # the exact gap says converged (the incremental F had drifted): not a stall
                gap = g
                code = 0
                break
            i2, j2, gap2 = _pick(X, y, lam, F, C, w, mu, use_gram, Q, diag, act, inact, wss, rows, n_rows)
            if i2 == i and j2 == j:
                gap = gap2
                code = 2
                break
            check_at = g / 10.0
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
            # two columns held at once (K_:i may be the one _select2 just read): the seam keeps >= 2
            Ki = get_col(Q, i)
            Kj = get_col(Q, j)
            for p in range(n_rows):
                r = rows[p]
                F[r] += cu * (Ki[r] - Kj[r])
            _axpy_cols(XT, idx2, ev, n_e, F, rows, n_rows, 2 * n_rows >= N)
        else:
            _axpy_cols(XT, idx, da, n_d, F, rows, n_rows, 2 * n_rows >= N)
    return it, gap, code, n_refresh, min_rows
