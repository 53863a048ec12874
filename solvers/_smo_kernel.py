"""The compiled inner loop of :mod:`svmref.solvers.smo` (numba, ``cache=True``: compiled once per machine).

Notation (000, eq. (5) and §3; LIBSVM's ``Solver``). The problem, over ``M`` variables, is

    min_alpha  D(alpha) = 1/2 sum_ij alpha_i alpha_j y_i y_j Kt_ij + sum_i p_i alpha_i
    s.t.       sum_i alpha_i y_i = const,   l_i <= alpha_i <= u_i,

with ``Kt_ij = K[pat_i, pat_j] + s delta_ij`` (``s`` = ``shift``, 0 or 1/C; ``pat`` maps a variable to its
pattern: the identity for classification, ``t mod N`` for the 2N variables of epsilon-SVR, as LIBSVM's
``SVR_Q``).  ``p = -1`` gives the classification duals of 000 eq. (2), (5).  The loop keeps, for every
variable,

    F_t = y_t dD/dalpha_t = sum_j alpha_j y_j Kt_tj + y_t p_t        (= W.Phi~(X_t) - y_t when p = -1,
                                                                      000 eq. (10)/(11))

and the index sets of 000 eq. (8), written for general bounds:

    I_up  = {t : y_t = +1, alpha_t < u_t}  u  {t : y_t = -1, alpha_t > l_t}   (000 calls it I_L)
    I_low = {t : y_t = +1, alpha_t > l_t}  u  {t : y_t = -1, alpha_t < u_t}   (000 calls it I_U)

with the KKT gap (000, eq. (11); eq. (10) when every index is in both sets, as in LS-SVM)

    gap = max_{t in I_low} F_t - min_{t in I_up} F_t.

A step on the pair (i in I_up, j in I_low) is ``alpha_i += y_i lam``, ``alpha_j -= y_j lam`` with

    lam = (F_j - F_i) / a_ij,   a_ij = Kt_ii + Kt_jj - 2 Kt_ij,

clipped to the box (000, eq. (9), there with l = -C, u = C).  ``a_ij < 0`` beyond rounding proves that Kt
is not positive semidefinite (``(e_i - e_j)' Kt (e_i - e_j) = a_ij``): the loop stops with
:data:`NOT_CONVEX` (``clamp=False``) or, as LIBSVM does, replaces ``a_ij`` by :data:`TAU` and goes on.

Kernel columns come from :func:`svmref.solvers._qmatrix.get_col` only (LIBSVM's ``QMatrix``: a dense K
read in place, or raw X with an LRU column cache).

Shrinking (LIBSVM's ``do_shrinking``, Fan, Chen & Lin 2005 §4 / Chang & Lin 2011 §5.1): every
``min(M, 1000)`` iterations a variable that sits at a bound and cannot be part of a violating pair now
(in I_up only with ``F_t > max_{I_low} F``; in I_low only with ``F_t < min_{I_up} F``) leaves the active
set: the selection and the gradient update skip it.  ``Gbar_t = sum_{j at a non-zero bound}
alpha_j y_j K_tj`` is kept up to date (one full column when a variable reaches or leaves such a bound),
so that the gradient of the shrunk variables is reconstructed from ``Gbar`` and the columns of the free
variables only (LIBSVM's ``reconstruct_gradient``).  The gap is re-checked on all variables, with the
reconstructed gradient, before the loop reports :data:`OPTIMAL`; all variables come back once when
the gap first falls below ``10 tol`` (LIBSVM's ``unshrink``).

Layout (LIBSVM's): inside the loop the active variables are addressed by position ``q < na`` and their
gradient ``cF``, masks ``cup``/``clo`` (``0`` or ``+-inf`` for membership in ``I_up``/``I_low``, so that both
extremes come from branch-free ``min``/``max`` reductions), diagonal ``ckd`` and pattern ``cpat`` are contiguous
arrays; ``F`` (indexed by variable) is brought up to date from ``cF`` before anything reads it by variable
(shrinking, reconstruction, exit). The working pair's columns are read over the positions from a cache of compact
columns (:func:`_ccol`, least recently used out, never evicting the other working column). Shrinking in this layout
(:func:`_shrink_swap`) moves the last kept variable into a removed one's position, so positions and cached columns
survive; the slots are re-cut when the active set halves, and while nothing is shrunk the seam's own column is read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._qmatrix import get_col, gram_scan  # noqa: F401  (gram_scan re-exported)
from ._smo_common import _at_nz, _in_low, _in_up, _sets, bias, kkt_gap  # noqa: F401  (bias, kkt_gap re-exported)

#: LIBSVM's curvature floor for a pair whose a_ij is not positive.
TAU = 1e-12

#: Status codes returned by :func:`solve`.
OPTIMAL = 0
MAX_ITER = 1
NOT_CONVEX = 2
UNBOUNDED = 3


def q_diagonal(K):
    """The diagonal ``K_ii`` as a contiguous vector (LIBSVM's ``QMatrix::get_QD``)."""
    return np.ascontiguousarray(np.diagonal(K), dtype=np.float64)


@njit(cache=True)
def _scan(active, na, member, F):
    """``(i, min_{I_up} F, jmax, max_{I_low} F)`` over the active variables."""
    i = -1
    jmax = -1
    Fmin = np.inf
    Fmax = -np.inf
    for q in range(na):
        t = active[q]
        m = member[t]
        ft = F[t]
        if (m & 1) and ft < Fmin:
            Fmin = ft
            i = t
        if (m & 2) and ft > Fmax:
            Fmax = ft
            jmax = t
    return i, Fmin, jmax, Fmax


@njit(cache=True, inline="always")
def _lru_unlink(s, cst, clink):
    p = clink[0, s]
    n = clink[1, s]
    if p >= 0:
        clink[1, p] = n
    else:
        cst[7] = n
    if n >= 0:
        clink[0, n] = p
    else:
        cst[8] = p


@njit(cache=True, inline="always")
def _lru_front(s, cst, clink):
    h = cst[7]
    clink[0, s] = -1
    clink[1, s] = h
    if h >= 0:
        clink[0, h] = s
    else:
        cst[8] = s
    cst[7] = s


@njit(cache=True)
def _ccol(Q, v, pv, cbuf, cst, cgen, cslot, cowner, clink, mlog, sver, protect, cpat, cperm, na):
    """Column ``v`` of Kt at the active positions, ``K[pat[active[q]], pv]`` for ``q < na``, contiguous: from the
    compact cache ``cbuf`` (LIBSVM's cached columns of length ``active_size``), else gathered from the kernel
    seam's column into a free slot or the least recently used one (never the slot of ``protect``, the other
    working variable), as LIBSVM's ``Cache``. ``cst = [generation, -, slot length, slots, identity layout, slots
    used, gathers, most recent slot, least recent slot, shrinking's moves since the positions were in variable
    order, entries of the move log]``; a cached column replays the moves logged since it was last read
    (``sver``, see :func:`_shrink_swap`) before it is returned; ``clink[0]``/``clink[1]`` link the slots from most to
    least recently used; a column is valid while ``cgen[v]`` equals the generation, which advances whenever the
    slots are re-cut. The gather reads the seam's column forwards, which the hardware prefetches: in position
    order while the positions are nearly in variable order (a vectorised gather), else in the order ``cperm``
    (by variable, so by pattern for a classification dual), once shrinking has moved more than an eighth of
    them (``cst[9]`` moves; a gather in scrambled position order was 1.6x slower at N = 20000)."""
    if cst[4] == 1:  # the identity layout of a classification dual: the seam's column is already contiguous
        return get_col(Q, pv)
    gen = cst[0]
    clen = cst[2]
    if cgen[v] == gen:
        s = cslot[v]
        if cst[7] != s:
            _lru_unlink(s, cst, clink)
            _lru_front(s, cst, clink)
        base = s * clen
        nlog = cst[10]
        for k in range(sver[s], nlog):  # shrinking's moves since this column was last read, in order
            cbuf[base + mlog[1, k]] = cbuf[base + mlog[0, k]]
        sver[s] = nlog
        return cbuf[base:base + na]
    if cst[5] < cst[3]:
        s = cst[5]
        cst[5] = s + 1  # slots [0, cst[5]) have been filled in this generation
    else:
        s = cst[8]
        if protect >= 0 and cowner[s] == protect and clink[0, s] >= 0:
            s = clink[0, s]
        _lru_unlink(s, cst, clink)
        o = cowner[s]
        if o >= 0:
            cgen[o] = -1
    _lru_front(s, cst, clink)
    cowner[s] = v
    cgen[v] = gen
    cslot[v] = s
    cst[6] += 1
    sver[s] = cst[10]
    col = get_col(Q, pv)
    base = s * clen
    if 8 * cst[9] > na:
        for k in range(na):
            q = cperm[k]
            cbuf[base + q] = col[cpat[q]]
    else:
        for q in range(na):
            cbuf[base + q] = col[cpat[q]]
    return cbuf[base:base + na]


@njit(cache=True)
def _order_positions(is_active, pos, cperm):
    """``cperm``: the positions of the active variables in variable order (see :func:`_ccol`)."""
    k = 0
    for t in range(is_active.shape[0]):
        if is_active[t]:
            cperm[k] = pos[t]
            k += 1


@njit(cache=True, inline="always")
def _removable(m, f, Fmin, Fmax):
    # LIBSVM's be_shrunk (see _shrink), for one variable
    if m == 3:
        return False
    if m == 1:
        return f > Fmax
    if m == 2:
        return f < Fmin
    return True


@njit(cache=True)
def _shrink_swap(active, na, member, cF, cup, clo, ckd, cpat, pos, is_active, Fmin, Fmax, cst, mlog):
    """LIBSVM's ``do_shrinking`` in the compact layout: a removable variable at position q is replaced by the
    last non-removable one (``swap_index``), so the other positions, and the cached compact columns, stay put.
    Returns the new active count.

    LIBSVM moves the entry in every cached column at once; here the moves (position ``last`` -> position ``q``)
    are appended to the log ``mlog`` (``cst[10]`` entries) and a cached column replays the ones it has not seen
    when it is next read (:func:`_ccol`). A column that is never read again costs nothing: with 400 MB of
    columns at N = 20000, C = 10 the eager update made 44 million scattered copies."""
    nlog = cst[10]
    nmv = 0
    q = 0
    while q < na:
        t = active[q]
        if not _removable(member[t], cF[q], Fmin, Fmax):
            q += 1
            continue
        is_active[t] = False
        last = na - 1
        while last > q and _removable(member[active[last]], cF[last], Fmin, Fmax):
            is_active[active[last]] = False
            last -= 1
        if last > q:
            u = active[last]
            active[q] = u
            pos[u] = q
            cF[q] = cF[last]
            cup[q] = cup[last]
            clo[q] = clo[last]
            ckd[q] = ckd[last]
            cpat[q] = cpat[last]
            mlog[0, nlog] = last
            mlog[1, nlog] = q
            nlog += 1
            nmv += 1
            na = last
            q += 1
        else:
            na = q
    cst[9] += nmv
    cst[10] = nlog
    return na


@njit(cache=True)
def _cscan(active, na, cF, cup, clo):
    """``(i, min_{I_up} F, jmax, max_{I_low} F)`` over the compact layout (first index in position order)."""
    Fmin = np.inf
    Fmax = -np.inf
    i = -1
    jmax = -1
    for q in range(na):
        f = cF[q]
        u = f + cup[q]
        if u < Fmin:
            Fmin = u
            i = active[q]
        lo = f + clo[q]
        if lo > Fmax:
            Fmax = lo
            jmax = active[q]
    return i, Fmin, jmax, Fmax


@njit(cache=True)
def _new_layout(cst, na, M, nbuf):
    """A new generation of the compact cache (every cached column stale), slots of length ``na``."""
    cst[0] += 1
    cst[2] = na
    cst[3] = min(M, nbuf // max(na, 1))
    cst[5] = 0
    cst[7] = -1
    cst[8] = -1
    cst[10] = 0


@njit(cache=True)
def _unshrink(Q, pat, y, p, lower, upper, shift, alpha, F, Gbar, active, is_active):
    """Every variable active again, with the gradient of the shrunk ones rebuilt (LIBSVM's ``unshrink``);
    returns the new active count M."""
    M = alpha.shape[0]
    reconstruct(Q, pat, y, p, lower, upper, shift, alpha, F, Gbar, is_active)
    for t in range(M):
        active[t] = t
        is_active[t] = True
    return M


@njit(cache=True, inline="always")
def _sync(F, cF, active, na):
    # the compact gradient of the active variables back into F (indexed by variable)
    for q in range(na):
        F[active[q]] = cF[q]


@njit(cache=True)
def _shrink(active, na, member, F, Fmin, Fmax, is_active):
    """LIBSVM's ``be_shrunk``: drop the variables at a bound that cannot join a violating pair now."""
    k = 0
    for q in range(na):
        t = active[q]
        m = member[t]
        ft = F[t]
        if m == 3:
            keep = True
        elif m == 1:  # in I_up only: can only be i; violates iff F_t < max_{I_low} F
            keep = ft <= Fmax
        elif m == 2:  # in I_low only: can only be j; violates iff F_t > min_{I_up} F
            keep = ft >= Fmin
        else:  # l_t = u_t: cannot move
            keep = False
        if keep:
            active[k] = t
            k += 1
        else:
            is_active[t] = False
    return k


@njit(cache=True)
def reconstruct(Q, pat, y, p, lower, upper, shift, alpha, F, Gbar, is_active):
    """F of the inactive variables from ``Gbar`` and the free variables' columns (LIBSVM's
    ``reconstruct_gradient``)."""
    M = alpha.shape[0]
    inact = np.empty(M, dtype=np.int64)
    ni = 0
    for t in range(M):
        if not is_active[t]:
            inact[ni] = t
            ni += 1
    if ni == 0:
        return
    for q in range(ni):
        t = inact[q]
        F[t] = Gbar[t] + shift * alpha[t] * y[t] + y[t] * p[t]
    for jv in range(M):
        a = alpha[jv]
        if a != 0.0 and not _at_nz(a, lower[jv], upper[jv]):
            col = get_col(Q, pat[jv])
            c = a * y[jv]
            for q in range(ni):
                t = inact[q]
                F[t] += c * col[pat[t]]


@njit(cache=True)
def solve(Q, Kd, pat, ident, y, p, lower, upper, shift, tol, second_order, max_iter, shrinking, psd_rtol, clamp,
          alpha, F, Gbar, out, cbuf):
    """Run SMO in place on ``alpha``, ``F`` (and ``Gbar`` when shrinking); return ``(n_iter, status, gap)``.

    Each iteration (000 §3; Fan, Chen & Lin 2005, WSS 2):

    1. ``i = argmin_{t in I_up} F_t``  (000 eq. (8): L = argmin over I_L of W.Phi(X_t) - y_t);
    2. ``gap = max_{I_low} F - min_{I_up} F``; stop when ``gap <= tol`` (000 eq. (10)/(11));
    3. first order: ``j = argmax_{t in I_low} F_t`` (000 eq. (8)); second order:
       ``j = argmax {(F_t - F_i)^2 / a_it : t in I_low, F_t > F_i}`` (Fan, Chen & Lin 2005, eq. (14)-(16));
    4. clipped step (000 eq. (9)) and the rank-2 update of ``F``, fused with steps 1-2 of the next
       iteration in one pass over the active variables.

    ``out`` (float64[6]) receives ``[i, j, a_ij, nonconvex_seen, smallest active-set size, compact columns
    gathered]`` for the caller's messages and ``info``.
    """
    M = alpha.shape[0]
    member = np.empty(M, dtype=np.int8)
    # the same membership as additive masks (0 or +-inf), so that the fused pass finds min_{I_up} F and
    # max_{I_low} F by branch-free min/max reductions, which the compiler vectorises
    upm = np.empty(M)
    lom = np.empty(M)
    # cf[q] = F + lom of the active variable active[q], written contiguously by the update pass, so that the
    # second-order selection reads one contiguous array instead of gathering F and the membership
    cf = np.empty(M)
    cf_ok = False
    # per active position q, rebuilt when the active set changes: the diagonal of active[q] and its masks
    # (updated in place when a working variable's membership changes), and pos[t] = q
    ckd = np.empty(M)
    cup = np.empty(M)
    clo = np.empty(M)
    pos = np.empty(M, dtype=np.int64)
    cpat = np.empty(M, dtype=np.int64)  # cpat[q] = pattern of active[q] (the row of K it reads)
    # cF[q] = F of active[q]: while ckd_ok, the authoritative gradient of the active variables (read and
    # written contiguously by the loop); copied back into F before anything reads F by variable
    cF = np.empty(M)
    ckd_ok = False
    # the compact column cache (cbuf: at least 2 M floats; see _ccol)
    cst = np.zeros(11, dtype=np.int64)  # see _ccol
    mlog = np.empty((2, M), dtype=np.int64)  # shrinking's moves in this generation (see _shrink_swap)
    sver = np.zeros(M, dtype=np.int64)  # per slot: how many of them its column has replayed
    clink = np.empty((2, M), dtype=np.int64)
    cperm = np.empty(M, dtype=np.int64)
    cgen = np.full(M, -1, dtype=np.int64)
    cslot = np.zeros(M, dtype=np.int64)
    cowner = np.full(M, -1, dtype=np.int64)
    for t in range(M):
        member[t] = _sets(alpha[t], y[t], lower[t], upper[t])
        upm[t] = 0.0 if member[t] & 1 else np.inf
        lom[t] = 0.0 if member[t] & 2 else -np.inf
    active = np.arange(M)
    is_active = np.ones(M, dtype=np.bool_)
    na = M
    min_active = M
    counter = min(M, 1000) + 1
    unshrunk = False
    nonconvex = False
    n_iter = 0
    status = OPTIMAL
    i, Fmin, jmax, Fmax = _scan(active, na, member, F)
    gap = Fmax - Fmin
    while True:
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(M, 1000)
                if ckd_ok:
                    _sync(F, cF, active, na)
                if not unshrunk and Fmax - Fmin <= 10.0 * tol:
                    unshrunk = True
                    if na < M:
                        na = _unshrink(Q, pat, y, p, lower, upper, shift, alpha, F, Gbar, active, is_active)
                        i, Fmin, jmax, Fmax = _scan(active, na, member, F)
                        cf_ok = ckd_ok = False
                if i >= 0 and jmax >= 0:
                    if ckd_ok:  # in the compact layout: positions kept, cached columns kept
                        na_old = na
                        recut = cst[4] == 1
                        if recut:  # leaving the identity layout: the cache starts from here
                            cst[4] = 0
                            cst[0] += 1
                            cst[5] = 0
                            cst[7] = -1
                            cst[8] = -1
                            cst[10] = 0
                        na = _shrink_swap(active, na, member, cF, cup, clo, ckd, cpat, pos, is_active, Fmin, Fmax,
                                          cst, mlog)
                        if 0 < na and (recut or 2 * na < cst[2]):  # slots as long as the active set, or twice too long
                            _new_layout(cst, na, M, cbuf.shape[0])
                        if na != na_old:
                            i, Fmin, jmax, Fmax = _cscan(active, na, cF, cup, clo)
                            cf_ok = False
                            if 8 * cst[9] > na:
                                _order_positions(is_active, pos, cperm)
                    else:
                        na = _shrink(active, na, member, F, Fmin, Fmax, is_active)
                        i, Fmin, jmax, Fmax = _scan(active, na, member, F)
                    min_active = min(min_active, na)
        # --- 2. stopping rule on the KKT gap ------------------------------------------------
        gap = Fmax - Fmin
        if gap <= tol or i < 0 or jmax < 0:
            if ckd_ok:
                _sync(F, cF, active, na)
            if na < M:  # confirm on every variable, with the gradient reconstructed
                na = _unshrink(Q, pat, y, p, lower, upper, shift, alpha, F, Gbar, active, is_active)
                i, Fmin, jmax, Fmax = _scan(active, na, member, F)
                cf_ok = ckd_ok = False
                gap = Fmax - Fmin
                if gap <= tol or i < 0 or jmax < 0:
                    status = OPTIMAL
                    break
                counter = 1  # LIBSVM: shrink again at the next iteration
                continue
            status = OPTIMAL
            break
        if n_iter >= max_iter:
            if ckd_ok:
                _sync(F, cF, active, na)
            if na < M:
                na = _unshrink(Q, pat, y, p, lower, upper, shift, alpha, F, Gbar, active, is_active)
                i, Fmin, jmax, Fmax = _scan(active, na, member, F)
                cf_ok = ckd_ok = False
                gap = Fmax - Fmin
            status = MAX_ITER
            if gap <= tol or i < 0 or jmax < 0:
                status = OPTIMAL
            break
        # --- 3. j ----------------------------------------------------------------------------
        pi = pat[i]
        Kii = Kd[pi]
        j = jmax
        if not ckd_ok:
            for q in range(na):
                t = active[q]
                ckd[q] = Kd[pat[t]]
                cup[q] = upm[t]
                clo[q] = lom[t]
                pos[t] = q
                cpat[q] = pat[t]
                cF[q] = F[t]
            ckd_ok = True
            cst[9] = 0  # positions in variable order
            _new_layout(cst, na, M, cbuf.shape[0])
            cst[4] = 1 if (ident and na == M) else 0
        cKi = _ccol(Q, i, pi, cbuf, cst, cgen, cslot, cowner, clink, mlog, sver, -1, cpat, cperm, na)
        if second_order:
            if not cf_ok:
                for q in range(na):
                    cf[q] = cF[q] + clo[q]
            j = -1
            best = -1.0
            for q in range(na):
                fq = cf[q]  # F_t for t in I_low, -inf otherwise
                if fq > Fmin:
                    bt = fq - Fmin
                    pt = cpat[q]
                    at = Kii + ckd[q] - 2.0 * cKi[q] + 2.0 * shift
                    if at <= 0.0:
                        if at < -psd_rtol * max(1.0, abs(Kii) + abs(Kd[pt]) + 2.0 * shift):
                            if not clamp:
                                out[0] = i
                                out[1] = active[q]
                                out[2] = at
                                status = NOT_CONVEX
                                _sync(F, cF, active, na)
                                return n_iter, status, gap
                            nonconvex = True
                        at = TAU
                    v = bt * bt / at
                    if v > best:
                        best = v
                        j = active[q]
            if j < 0:  # cannot happen when gap > 0, kept as a guard
                j = jmax
        # --- 4. clipped step along (+y_i at i, -y_j at j) ---------------------------------
        pj = pat[j]
        qi = pos[i]
        qj = pos[j]
        cKj = _ccol(Q, j, pj, cbuf, cst, cgen, cslot, cowner, clink, mlog, sver, i, cpat, cperm, na)
        aij = Kii + Kd[pj] - 2.0 * cKi[qj] + 2.0 * shift
        yi = y[i]
        yj = y[j]
        ai_old = alpha[i]
        aj_old = alpha[j]
        # largest step each variable allows (000 eq. (9): C - y_L alpha_L, C + y_U alpha_U)
        mi = (upper[i] - ai_old) if yi > 0.0 else (ai_old - lower[i])
        mj = (aj_old - lower[j]) if yj > 0.0 else (upper[j] - aj_old)
        if aij <= 0.0:
            if aij < -psd_rtol * max(1.0, abs(Kii) + abs(Kd[pj]) + 2.0 * shift):
                if not clamp:
                    out[0] = i
                    out[1] = j
                    out[2] = aij
                    status = NOT_CONVEX
                    _sync(F, cF, active, na)
                    return n_iter, status, gap
                nonconvex = True
            if mi == np.inf and mj == np.inf:
                # no curvature and no box along this direction: D is unbounded below
                out[0] = i
                out[1] = j
                out[2] = aij
                status = UNBOUNDED
                break
            aij = TAU
        lam = (cF[qj] - cF[qi]) / aij
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
        upm[i] = 0.0 if member[i] & 1 else np.inf
        lom[i] = 0.0 if member[i] & 2 else -np.inf
        upm[j] = 0.0 if member[j] & 1 else np.inf
        lom[j] = 0.0 if member[j] & 2 else -np.inf
        cup[qi] = upm[i]
        clo[qi] = lom[i]
        cup[qj] = upm[j]
        clo[qj] = lom[j]
        di = yi * (ai_new - ai_old)
        dj = yj * (aj_new - aj_old)
        if shrinking:  # Gbar follows the variables at a non-zero bound (full columns)
            oi = _at_nz(ai_old, lower[i], upper[i])
            ni_ = _at_nz(ai_new, lower[i], upper[i])
            if oi or ni_:
                dc = (yi * ai_new if ni_ else 0.0) - (yi * ai_old if oi else 0.0)
                if dc != 0.0:
                    Ki = get_col(Q, pi)
                    for t in range(M):
                        Gbar[t] += dc * Ki[t if ident else pat[t]]
            oj = _at_nz(aj_old, lower[j], upper[j])
            nj_ = _at_nz(aj_new, lower[j], upper[j])
            if oj or nj_:
                dc = (yj * aj_new if nj_ else 0.0) - (yj * aj_old if oj else 0.0)
                if dc != 0.0:
                    Kj = get_col(Q, pj)
                    for t in range(M):
                        Gbar[t] += dc * Kj[t if ident else pat[t]]
        # the diagonal shift s I of Kt, applied here instead of to a copy of K
        cF[qi] += shift * di
        cF[qj] += shift * dj
        # rank-2 update F += di K_i + dj K_j, fused with steps 1-2 of the next iteration: the values
        # min_{I_up} F and max_{I_low} F by masked min/max reductions, then their first index in the active
        # order (the same i and j as a running strict comparison would give)
        Fmin = np.inf
        Fmax = -np.inf
        for q in range(na):  # every array here is contiguous over the active positions
            ft = cF[q] + di * cKi[q] + dj * cKj[q]
            cF[q] = ft
            fl = ft + clo[q]
            cf[q] = fl
            Fmin = min(Fmin, ft + cup[q])
            Fmax = max(Fmax, fl)
        cf_ok = True
        i = -1
        jmax = -1
        if Fmin < np.inf:
            for q in range(na):
                t = active[q]
                if cF[q] + cup[q] == Fmin:
                    i = t
                    break
        if Fmax > -np.inf:
            for q in range(na):
                t = active[q]
                if cF[q] + clo[q] == Fmax:
                    jmax = t
                    break
        n_iter += 1
    if ckd_ok:
        _sync(F, cF, active, na)
    out[3] = 1.0 if nonconvex else 0.0
    out[4] = min_active
    out[5] = cst[6]
    return n_iter, status, gap
