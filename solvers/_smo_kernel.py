"""The compiled inner loops of :mod:`svmref.solvers.smo` (numba, ``cache=True``: compiled once per machine).

Notation (000, eq. (5) and §3; LIBSVM's ``Solver``): the problem is

    min_alpha  D(alpha) = 1/2 sum_ij alpha_i alpha_j y_i y_j Kt_ij - sum_i alpha_i
    s.t.       sum_i alpha_i y_i = 0,   l_i <= alpha_i <= u_i,

with ``Kt = K + s I`` (``s`` = ``shift``, 0 or 1/C).  The loop keeps, for every pattern,

    F_t = W . Phi~(X_t) - y_t = sum_j alpha_j y_j Kt_tj - y_t            (000, eq. (10)/(11))

which is ``y_t`` times the gradient ``dD/dalpha_t`` (LIBSVM keeps ``G_t = y_t F_t``).
The index sets are those of 000 eq. (8), written for general bounds:

    I_up  = {t : y_t = +1, alpha_t < u_t}  u  {t : y_t = -1, alpha_t > l_t}
            (000 calls it I_L: alpha_t may move along +y_t)
    I_low = {t : y_t = +1, alpha_t > l_t}  u  {t : y_t = -1, alpha_t < u_t}
            (000 calls it I_U: alpha_t may move along -y_t)

and the KKT gap (000, eq. (11); eq. (10) when every index is in both sets, as in LS-SVM)

    gap = max_{t in I_low} F_t - min_{t in I_up} F_t.

A step on the pair (i in I_up, j in I_low) is ``alpha_i += y_i lam``, ``alpha_j -= y_j lam`` with

    lam = (F_j - F_i) / a_ij,   a_ij = Kt_ii + Kt_jj - 2 Kt_ij = K_ii + K_jj - 2 K_ij + 2 s,

clipped to the box (000, eq. (9), there with l = -C, u = C); a_ij <= 0 (a non-PSD kernel) is
replaced by ``TAU`` as LIBSVM does.

Kernel access goes through two functions only, :func:`_q_row` (row ``i`` of K, which is column ``i``
because K is symmetric) and :func:`_q_diag` (``K_ii``, from the vector of :func:`q_diagonal`): LIBSVM's ``QMatrix`` seam.
A kernel
computed on demand with a row cache would replace these two and nothing else.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: LIBSVM's curvature floor for a pair whose a_ij is not positive (non-PSD kernels).
TAU = 1e-12

#: Status codes returned by :func:`smo_loop`.
OPTIMAL = 0
MAX_ITER = 1


@njit(cache=True, inline="always")
def _q_row(K, i):
    """Row (= column) ``i`` of the kernel matrix: the only way the loops read off-diagonal entries."""
    return K[i]


def q_diagonal(K):
    """The diagonal ``K_ii`` as a contiguous vector, read once (LIBSVM's ``QMatrix::get_QD``).

    Reading ``K[t, t]`` inside the loop would touch one cache line per pattern and per
    iteration (N = 10,000: 10,000 cache misses per iteration); the vector costs ``8 N`` bytes.
    """
    return np.ascontiguousarray(np.diagonal(K), dtype=np.float64)


@njit(cache=True, inline="always")
def _q_diag(Kd, i):
    """``K_ii`` from the vector of :func:`q_diagonal`: the only way the loops read the diagonal."""
    return Kd[i]


@njit(cache=True, inline="always")
def _in_up(a, yt, lo, up):
    # t in I_up: alpha_t can move along +y_t (000 eq. (8), I_L there).
    return (a < up) if yt > 0.0 else (a > lo)


@njit(cache=True, inline="always")
def _in_low(a, yt, lo, up):
    # t in I_low: alpha_t can move along -y_t (000 eq. (8), I_U there).
    return (a > lo) if yt > 0.0 else (a < up)


@njit(cache=True, inline="always")
def _sets(a, yt, lo, up):
    # membership byte: bit 1 = t in I_up, bit 2 = t in I_low (LIBSVM's alpha_status, for any box)
    return np.int8(_in_up(a, yt, lo, up)) | (np.int8(_in_low(a, yt, lo, up)) << 1)


@njit(cache=True)
def smo_loop(K, Kd, y, lower, upper, shift, tol, second_order, max_iter, alpha, F):
    """Run SMO in place on ``alpha`` and ``F``; return ``(n_iter, status, gap)``.

    Each iteration (000 §3; Fan, Chen & Lin 2005, WSS 2):

    1. ``i = argmin_{t in I_up} F_t``  (000 eq. (8): L = argmin over I_L of W.Phi(X_t) - y_t);
    2. ``gap = max_{I_low} F - min_{I_up} F``; stop when ``gap <= tol`` (000 eq. (10)/(11));
    3. first order: ``j = argmax_{t in I_low} F_t`` (000 eq. (8)); second order:
       ``j = argmax {(F_t - F_i)^2 / a_it : t in I_low, F_t > F_i}`` (Fan, Chen & Lin 2005, eq. (14)-(16));
    4. clipped step (000 eq. (9)) and the rank-2 update of ``F``.

    Steps 4 and 1-2 of the next iteration share one pass over the patterns (the update of ``F_t``
    and the running min/max), and set membership is kept in one byte per pattern, so that a pass
    reads the two kernel rows, ``F`` and the bytes only.
    """
    n = K.shape[0]
    member = np.empty(n, dtype=np.int8)
    i = -1
    jmax = -1
    Fmin = np.inf
    Fmax = -np.inf
    for t in range(n):
        m = _sets(alpha[t], y[t], lower[t], upper[t])
        member[t] = m
        ft = F[t]
        if (m & 1) and ft < Fmin:
            Fmin = ft
            i = t
        if (m & 2) and ft > Fmax:
            Fmax = ft
            jmax = t
    n_iter = 0
    status = OPTIMAL
    while True:
        # --- 2. stopping rule on the KKT gap (i, jmax, Fmin, Fmax from the last pass) --------
        gap = Fmax - Fmin
        if gap <= tol or i < 0 or jmax < 0:
            status = OPTIMAL
            break
        if n_iter >= max_iter:
            status = MAX_ITER
            break
        # --- 3. j ----------------------------------------------------------------------------
        Ki = _q_row(K, i)
        Kii = _q_diag(Kd, i)
        if second_order:
            j = -1
            best = -1.0
            for t in range(n):
                ft = F[t]
                if ft > Fmin and (member[t] & 2):
                    bt = ft - Fmin
                    at = Kii + _q_diag(Kd, t) - 2.0 * Ki[t] + 2.0 * shift
                    if at <= 0.0:
                        at = TAU
                    v = bt * bt / at
                    if v > best:
                        best = v
                        j = t
            if j < 0:  # cannot happen when gap > 0, kept as a guard
                j = jmax
        else:
            j = jmax
        # --- 4. clipped step along (+y_i at i, -y_j at j) ---------------------------------
        Kj = _q_row(K, j)
        aij = Kii + _q_diag(Kd, j) - 2.0 * Ki[j] + 2.0 * shift
        if aij <= 0.0:
            aij = TAU
        lam = (F[j] - F[i]) / aij
        yi = y[i]
        yj = y[j]
        ai_old = alpha[i]
        aj_old = alpha[j]
        # largest step each variable allows (000 eq. (9): C - y_L alpha_L, C + y_U alpha_U)
        mi = (upper[i] - ai_old) if yi > 0.0 else (ai_old - lower[i])
        mj = (aj_old - lower[j]) if yj > 0.0 else (upper[j] - aj_old)
        if lam >= mi or lam >= mj:
            if mi <= mj:
                lam = mi
                ai_new = upper[i] if yi > 0.0 else lower[i]
                if mi == mj:
                    aj_new = lower[j] if yj > 0.0 else upper[j]
                else:
                    aj_new = aj_old - yj * lam
            else:
                lam = mj
                aj_new = lower[j] if yj > 0.0 else upper[j]
                ai_new = ai_old + yi * lam
        else:
            ai_new = ai_old + yi * lam
            aj_new = aj_old - yj * lam
        # rounding must never leave the box
        ai_new = min(max(ai_new, lower[i]), upper[i])
        aj_new = min(max(aj_new, lower[j]), upper[j])
        alpha[i] = ai_new
        alpha[j] = aj_new
        member[i] = _sets(ai_new, yi, lower[i], upper[i])
        member[j] = _sets(aj_new, yj, lower[j], upper[j])
        di = yi * (ai_new - ai_old)
        dj = yj * (aj_new - aj_old)
        # the diagonal shift s I of Kt, applied here instead of to a copy of K
        F[i] += shift * di
        F[j] += shift * dj
        # rank-2 update F += di K_i + dj K_j, fused with steps 1-2 of the next iteration
        i = -1
        jmax = -1
        Fmin = np.inf
        Fmax = -np.inf
        for t in range(n):
            ft = F[t] + di * Ki[t] + dj * Kj[t]
            F[t] = ft
            m = member[t]
            if (m & 1) and ft < Fmin:
                Fmin = ft
                i = t
            if (m & 2) and ft > Fmax:
                Fmax = ft
                jmax = t
        n_iter += 1
    return n_iter, status, gap


@njit(cache=True)
def bias(y, lower, upper, alpha, F):
    """``b = -rho`` (LIBSVM's ``calculate_rho``): ``rho`` = mean of ``F`` over the free variables,
    else the midpoint of ``[max F over I_low-only, min F over I_up-only]``.

    Why: the KKT conditions (000 eq. (6), (7)) read ``F_t = -b`` for a free ``alpha_t`` and
    ``max_{I_low} F <= -b <= min_{I_up} F`` in general.
    """
    n = y.shape[0]
    nfree = 0
    sfree = 0.0
    ub = np.inf
    lb = -np.inf
    for t in range(n):
        a = alpha[t]
        if lower[t] < a < upper[t]:
            nfree += 1
            sfree += F[t]
        else:
            up = _in_up(a, y[t], lower[t], upper[t])
            low = _in_low(a, y[t], lower[t], upper[t])
            if up and not low:
                ub = min(ub, F[t])
            elif low and not up:
                lb = max(lb, F[t])
    if nfree > 0:
        rho = sfree / nfree
    elif np.isfinite(ub) and np.isfinite(lb):
        rho = 0.5 * (ub + lb)
    elif np.isfinite(ub):
        rho = ub
    elif np.isfinite(lb):
        rho = lb
    else:
        rho = 0.0
    return -rho, nfree


@njit(cache=True)
def gram_scan(K, rtol):
    """One tiled pass over K: ``(first non-finite flat index or -1, max|K_ij - K_ji| > rtol*max(1,max|K|))``.

    The same checks as :func:`svmref._validation.check_gram` without its ``N x N`` temporaries (at
    N = 10,000 ``check_gram`` needs 2.7 s and 2.4 GB here; this pass needs one read of K).
    """
    n = K.shape[0]
    B = 64
    maxabs = 0.0
    maxasym = 0.0
    for ib in range(0, n, B):
        ie = min(ib + B, n)
        for jb in range(ib, n, B):
            je = min(jb + B, n)
            for r in range(ib, ie):
                for c in range(max(jb, r), je):
                    x = K[r, c]
                    z = K[c, r]
                    if not (np.isfinite(x) and np.isfinite(z)):
                        return r * n + c, False
                    ax = abs(x)
                    if ax > maxabs:
                        maxabs = ax
                    az = abs(z)
                    if az > maxabs:
                        maxabs = az
                    d = abs(x - z)
                    if d > maxasym:
                        maxasym = d
    return -1, maxasym > rtol * max(1.0, maxabs)
