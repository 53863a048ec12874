"""What every SMO engine here shares (LIBSVM's ``Solver`` bookkeeping): the index sets of a box-constrained
dual with one equality constraint, the KKT gap over them, and the bias rule.

The problem has variables ``l_t <= alpha_t <= u_t`` with ``sum_t y_t alpha_t`` fixed (``y_t = +-1``), and
``F_t = y_t dD/dalpha_t``. The index sets (000, eq. (8), written for general bounds; for the support
features machine 003 §2.6 with ``l = 0, u = C``):

    I_up  = {t : y_t = +1, alpha_t < u_t}  u  {t : y_t = -1, alpha_t > l_t}   (000 calls it I_L)
    I_low = {t : y_t = +1, alpha_t > l_t}  u  {t : y_t = -1, alpha_t < u_t}   (000 calls it I_U)

and the point is optimal iff ``max_{I_low} F <= min_{I_up} F`` (000, eq. (11) for a box; eq. (10) is the
LS-SVM case, with no bounds, where both sets hold every pattern). Used by the box-dual
SMO (:mod:`svmref.solvers._smo_kernel`) and the generalised SMO of the support features machine
(:mod:`svmref.solvers._sfm_engine`).
"""
from __future__ import annotations

import numpy as np
from numba import njit


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


@njit(cache=True, inline="always")
def _at_nz(a, lo, up):
    # alpha at a non-zero bound: its term alpha y K_:t is kept in Gbar
    return (a == up and up != 0.0) or (a == lo and lo != 0.0)


@njit(cache=True)
def bias(y, lower, upper, alpha, F):
    """``b = -rho`` (LIBSVM's ``calculate_rho``): ``rho`` = mean of ``F`` over the free variables,
    else the midpoint of ``[max F over I_low-only, min F over I_up-only]``.

    Why: the KKT conditions (000 eq. (6) for a box; eq. (7) for the LS-SVM, every variable free with the
    shifted kernel of 000 eq. (2)) read ``F_t = -b`` for a free ``alpha_t`` and
    ``max_{I_low} F <= -b <= min_{I_up} F`` in general (the same for epsilon-SVR, whose ``F`` carries
    ``+-epsilon - z_t``).
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
def kkt_gap(y, lower, upper, alpha, F):
    """``max_{I_low} F - min_{I_up} F`` over all variables (``-inf`` if a set is empty)."""
    Fmin = np.inf
    Fmax = -np.inf
    for t in range(y.shape[0]):
        a = alpha[t]
        if _in_up(a, y[t], lower[t], upper[t]) and F[t] < Fmin:
            Fmin = F[t]
        if _in_low(a, y[t], lower[t], upper[t]) and F[t] > Fmax:
            Fmax = F[t]
    if Fmin == np.inf or Fmax == -np.inf:
        return -np.inf
    return Fmax - Fmin
