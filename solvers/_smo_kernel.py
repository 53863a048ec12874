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

Shrinking (LIBSVM's ``do_shrinking``, Fan, Chen & Lin 2005 §4 / Chang & Lin 2011 §5.1): every
``min(M, 1000)`` iterations a variable that sits at a bound and cannot be part of a violating pair now
(in I_up only with ``F_t > max_{I_low} F``; in I_low only with ``F_t < min_{I_up} F``) leaves the active
set: the selection and the gradient update skip it.  ``Gbar_t = sum_{j at a non-zero bound}
alpha_j y_j K_tj`` is kept up to date (one full column when a variable reaches or leaves such a bound),
so that the gradient of the shrunk variables is reconstructed from ``Gbar`` and the columns of the free
variables only (LIBSVM's ``reconstruct_gradient``).  The gap is re-checked on all variables, with the
reconstructed gradient, before the loop reports :data:`OPTIMAL`; all variables come back once when
the gap first falls below ``10 tol`` (LIBSVM's ``unshrink``).

Layout (LIBSVM's): inside the loop the active variables are addressed by position ``q < na``; their
gradient ``cF``, masks ``cup``/``clo`` (``0`` or ``+-inf`` for membership in ``I_up``/``I_low``, so that both
extremes come from branch-free ``min``/``max`` reductions), diagonal ``ckd`` and pattern ``cpat`` are contiguous
arrays (the fields of :data:`Active`).  ``F`` (indexed by variable) is brought up to date from ``cF`` before
anything reads it by variable (shrinking, reconstruction, exit).  Shrinking in this layout (:func:`_shrink_swap`)
moves the last kept variable into a removed one's position, so positions and cached columns survive.

**Two column caches, two jobs.**  Kernel columns come from :func:`svmref.solvers._qmatrix.get_col` only (LIBSVM's
``QMatrix``): a dense K read in place, or, for raw X, a :class:`~svmref.solvers._qmatrix.RawKernel` whose LRU
cache holds *full* columns (length N, by pattern).  That cache saves kernel evaluations (a column costs a pass
over X), and full columns are what ``Gbar``, the gradient reconstruction and epsilon-SVR's two variables per
pattern need.  The loop itself reads the working pair's columns over the *active positions* (length ``na``,
contiguous, in position order), which is LIBSVM's cached ``get_Q(i, active_size)``: the compact cache here
(:data:`ColumnCache`, :func:`_ccol`, least recently used out) saves the gather from a full column through
``cpat`` once shrinking has scrambled the positions.  For a dense K it is the only cache (up to
``smo.DENSE_CACHE_MB``); for raw X it holds just the two working columns, since the full-column cache already
holds the expensive part.  While nothing is shrunk in a classification dual the positions are the patterns
and the seam's column is read directly (the identity layout).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from svmref._thresholds import TAU

from ._qmatrix import get_col
from ._smo_common import _at_nz, _sets

# TAU (imported above): LIBSVM's curvature floor for a pair whose a_ij is not positive (svmref/_thresholds.py).

#: Status codes returned by :func:`solve`.
OPTIMAL = 0
MAX_ITER = 1
NOT_CONVEX = 2
UNBOUNDED = 3

#: Slots of the ``out`` vector :func:`solve` fills for the caller's messages and ``info``.
OUT_I = 0  # the pair that proved non-convexity or unboundedness: i,
OUT_J = 1  # j
OUT_AIJ = 2  # and its a_ij
OUT_NONCONVEX = 3  # 1.0 if the TAU clamp was used
OUT_MIN_ACTIVE = 4  # the smallest active-set size
OUT_GATHERED = 5  # compact columns gathered from the seam
OUT_MOVED = 6  # sum over the steps of |alpha_i' - alpha_i| + |alpha_j' - alpha_j| (the rounding model of F's drift)

#: The box dual :func:`solve` works on (see the module docstring): the kernel seam ``Q`` (read only through
#: :func:`get_col`), the diagonal ``Kd`` of K by pattern, ``pat``, ``ident`` (``pat`` is the identity), ``y``,
#: ``p``, the bounds and the diagonal shift ``s``.
BoxDual = namedtuple("BoxDual", "Q Kd pat ident y p lower upper shift")

#: The options of :func:`solve`: KKT tolerance, second-order selection, iteration budget, shrinking, the
#: relative threshold below which a negative ``a_ij`` proves non-convexity, and the TAU clamp.
Options = namedtuple("Options", "tol second_order max_iter shrinking psd_rtol clamp")

#: Membership of every variable (indexed by variable): ``member`` (bit 1: I_up, bit 2: I_low) and the same as
#: additive masks ``upm``/``lom`` (``0`` or ``+inf``/``-inf``).
Sets = namedtuple("Sets", "member upm lom")

#: The active set: ``active[q]`` the variable at position ``q``, ``is_active`` by variable, ``pos[t]`` its
#: position; by position ``q``: ``cF`` (while the compact layout is on, the authoritative gradient), the masks
#: ``cup``/``clo``, the diagonal ``ckd`` and pattern ``cpat``; ``cf[q] = cF[q] + clo[q]``, written by the update
#: pass so that the second-order selection reads one contiguous array.
Active = namedtuple("Active", "active is_active pos cF cup clo ckd cpat cf")

#: The compact column cache: ``buf`` (the slots, each ``state[ST_SLOT_LEN]`` floats), ``state`` (the ``ST_*``
#: slots below), per variable ``col_gen`` (its column is cached while this equals ``state[ST_GEN]``) and
#: ``col_slot``, per slot ``owner``, ``seen`` (how many logged moves its column has replayed) and ``link``
#: (``link[0]``/``link[1]``: previous/next from most to least recently used), the move log ``log`` of
#: :func:`_shrink_swap` and ``perm`` (the active positions in variable order).
ColumnCache = namedtuple("ColumnCache", "buf state col_gen col_slot owner link log seen perm")

ST_GEN = 0  # generation; advances whenever the slots are re-cut (every cached column stale)
ST_SLOT_LEN = 1  # floats per slot: the active count when the slots were cut
ST_SLOTS = 2  # number of slots
ST_IDENTITY = 3  # 1: the identity layout, the seam's column is read directly
ST_USED = 4  # slots [0, ST_USED) have been filled in this generation
ST_GATHERS = 5  # compact columns gathered so far
ST_MRU = 6  # most recently used slot (-1: none)
ST_LRU = 7  # least recently used slot
ST_MOVES = 8  # shrinking's moves since the positions were in variable order
ST_LOG_LEN = 9  # entries of the move log


# ------------------------------------------------------------------------------------------------
# the compact column cache
# ------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _lru_unlink(s, st, link):
    p = link[0, s]
    n = link[1, s]
    if p >= 0:
        link[1, p] = n
    else:
        st[ST_MRU] = n
    if n >= 0:
        link[0, n] = p
    else:
        st[ST_LRU] = p


@njit(cache=True, inline="always")
def _lru_front(s, st, link):
    h = st[ST_MRU]
    link[0, s] = -1
    link[1, s] = h
    if h >= 0:
        link[0, h] = s
    else:
        st[ST_LRU] = s
    st[ST_MRU] = s


@njit(cache=True)
def _new_cache(M, cbuf):
    return ColumnCache(cbuf, np.zeros(10, dtype=np.int64), np.full(M, -1, dtype=np.int64), np.zeros(M, dtype=np.int64),
                       np.full(M, -1, dtype=np.int64), np.empty((2, M), dtype=np.int64),
                       np.empty((2, M), dtype=np.int64), np.zeros(M, dtype=np.int64), np.empty(M, dtype=np.int64))


@njit(cache=True, inline="always")
def _new_generation(st):
    # every cached column stale, no slot used, an empty move log
    st[ST_GEN] += 1
    st[ST_USED] = 0
    st[ST_MRU] = -1
    st[ST_LRU] = -1
    st[ST_LOG_LEN] = 0


@njit(cache=True)
def _new_layout(st, na, M, nbuf):
    """A new generation of the compact cache, slots of length ``na``."""
    _new_generation(st)
    st[ST_SLOT_LEN] = na
    st[ST_SLOTS] = min(M, nbuf // max(na, 1))


@njit(cache=True)
def _ccol(Q, v, pv, cc, protect, cpat, na):
    """Column ``v`` of Kt at the active positions, ``K[pat[active[q]], pv]`` for ``q < na``, contiguous.

    From the compact cache if there, replaying the moves :func:`_shrink_swap` logged since it was last read; else
    gathered from the seam's column into a free slot or the least recently used one (never the slot of
    ``protect``, the other working variable), as LIBSVM's ``Cache``.  The gather reads the seam's column
    forwards, which the hardware prefetches: in position order while the positions are nearly in variable order
    (a vectorised gather), else in the order ``perm`` (by variable, so by pattern for a classification dual),
    once shrinking has moved more than an eighth of them (a gather in scrambled position order was 1.6x slower
    at N = 20000)."""
    st = cc.state
    if st[ST_IDENTITY] == 1:  # the seam's column is already contiguous over the positions
        return get_col(Q, pv)
    buf = cc.buf
    base = 0
    clen = st[ST_SLOT_LEN]
    if cc.col_gen[v] == st[ST_GEN]:
        s = cc.col_slot[v]
        if st[ST_MRU] != s:
            _lru_unlink(s, st, cc.link)
            _lru_front(s, st, cc.link)
        base = s * clen
        nlog = st[ST_LOG_LEN]
        log = cc.log
        for k in range(cc.seen[s], nlog):  # shrinking's moves since this column was last read, in order
            buf[base + log[1, k]] = buf[base + log[0, k]]
        cc.seen[s] = nlog
        return buf[base:base + na]
    if st[ST_USED] < st[ST_SLOTS]:
        s = st[ST_USED]
        st[ST_USED] = s + 1
    else:
        s = st[ST_LRU]
        if protect >= 0 and cc.owner[s] == protect and cc.link[0, s] >= 0:
            s = cc.link[0, s]
        _lru_unlink(s, st, cc.link)
        o = cc.owner[s]
        if o >= 0:
            cc.col_gen[o] = -1
    _lru_front(s, st, cc.link)
    cc.owner[s] = v
    cc.col_gen[v] = st[ST_GEN]
    cc.col_slot[v] = s
    st[ST_GATHERS] += 1
    cc.seen[s] = st[ST_LOG_LEN]
    col = get_col(Q, pv)
    base = s * clen
    if 8 * st[ST_MOVES] > na:
        perm = cc.perm
        for k in range(na):
            q = perm[k]
            buf[base + q] = col[cpat[q]]
    else:
        for q in range(na):
            buf[base + q] = col[cpat[q]]
    return buf[base:base + na]


@njit(cache=True)
def _order_positions(is_active, pos, perm):
    """``perm``: the positions of the active variables in variable order (see :func:`_ccol`)."""
    k = 0
    for t in range(is_active.shape[0]):
        if is_active[t]:
            perm[k] = pos[t]
            k += 1


# ------------------------------------------------------------------------------------------------
# selection: the extremes of F over I_up and I_low (000, eq. (8)) and the second-order j
# ------------------------------------------------------------------------------------------------
@njit(cache=True)
def _scan(active, na, member, F):
    """``(i, min_{I_up} F, jmax, max_{I_low} F)`` over the active variables, read by variable."""
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


@njit(cache=True)
def _cscan(act, na):
    """``(i, min_{I_up} F, jmax, max_{I_low} F)`` over the compact layout (first index in position order)."""
    cF = act.cF
    Fmin = np.inf
    Fmax = -np.inf
    i = -1
    jmax = -1
    for q in range(na):
        f = cF[q]
        u = f + act.cup[q]
        if u < Fmin:
            Fmin = u
            i = act.active[q]
        lo = f + act.clo[q]
        if lo > Fmax:
            Fmax = lo
            jmax = act.active[q]
    return i, Fmin, jmax, Fmax


@njit(cache=True, inline="always")
def _stop(gap, tol, i, jmax):
    # 000 eq. (10)/(11): the KKT gap is within tol, or a set is empty
    return gap <= tol or i < 0 or jmax < 0


@njit(cache=True, inline="always")
def _proves_not_psd(a, Kii, Kjj, shift, psd_rtol):
    # a_ij < 0 beyond rounding: (e_i - e_j)' Kt (e_i - e_j) < 0, so Kt is not PSD. The max(1, .) is a safeguard, not
    # a label: absolute for kernels of scale below 1, where a slightly indefinite K can pass; the certificate then
    # catches a gap below -floor (smo._status, "numerical_issue"; docs/smo.md section 10)
    return a < -psd_rtol * max(1.0, abs(Kii) + abs(Kjj) + 2.0 * shift)


@njit(cache=True, inline="always")
def _second_order_j(i, Fmin, Kii, cKi, cf, ckd, cpat, active, na, Kd, shift, psd_rtol, clamp):
    """Fan, Chen & Lin (2005), eq. (14)-(16), LIBSVM's WSS 2: ``j = argmax {(F_t - F_i)^2 / a_it : t in I_low,
    F_t > F_i}`` with ``a_it <= 0`` replaced by :data:`TAU`.  Returns ``(j, bad, a_bad, clamped)``: ``bad >= 0``
    is a variable whose pair with ``i`` proves Kt not PSD (only when not ``clamp``)."""
    j = -1
    best = -1.0
    clamped = False
    for q in range(na):
        fq = cf[q]  # F_t for t in I_low, -inf otherwise
        if fq > Fmin:
            bt = fq - Fmin
            at = Kii + ckd[q] - 2.0 * cKi[q] + 2.0 * shift
            if at <= 0.0:
                if _proves_not_psd(at, Kii, Kd[cpat[q]], shift, psd_rtol):
                    if not clamp:
                        return -1, active[q], at, clamped
                    clamped = True
                at = TAU
            v = bt * bt / at
            if v > best:
                best = v
                j = active[q]
    return j, -1, 0.0, clamped


# ------------------------------------------------------------------------------------------------
# the step (000, eq. (9)) and the updates it makes
# ------------------------------------------------------------------------------------------------
# The helpers called every iteration (here and _second_order_j) take arrays, not the Sets/Active tuples: numba
# counts a reference for every array it takes out of a tuple, and inside a helper with branches or loops those
# counts are not pruned (atomic operations every iteration: the loop was 5-15% slower at N = 3000, C = 1000 that
# way).  The two with the loop's passes over the active set are inlined; _set_membership and _add_column (taken
# only when a variable reaches or leaves a non-zero bound) are plain calls (inlining the first was no faster).
@njit(cache=True, inline="always")
def _clipped_step(lam, ai, aj, yi, yj, mi, mj, li, ui, lj, uj):
    """``alpha_i + y_i lam``, ``alpha_j - y_j lam`` with ``lam`` cut at the first bound it meets (000, eq. (9));
    ``mi``, ``mj`` are the largest steps each variable allows.  A variable cut at its bound is put on it exactly,
    and rounding never leaves the box."""
    if lam >= mi or lam >= mj:
        if mi <= mj:
            lam = mi
            ai_new = ui if yi > 0.0 else li
            if mi == mj:
                aj_new = lj if yj > 0.0 else uj
            else:
                aj_new = aj - yj * lam
        else:
            lam = mj
            aj_new = lj if yj > 0.0 else uj
            ai_new = ai + yi * lam
    else:
        ai_new = ai + yi * lam
        aj_new = aj - yj * lam
    return min(max(ai_new, li), ui), min(max(aj_new, lj), uj)


@njit(cache=True)
def _set_membership(t, q, a, yt, lo, up, member, upm, lom, cup, clo):
    """Variable ``t`` (at position ``q``) in I_up / I_low after its step: the byte and both forms of the masks."""
    m = _sets(a, yt, lo, up)
    member[t] = m
    upm[t] = 0.0 if m & 1 else np.inf
    lom[t] = 0.0 if m & 2 else -np.inf
    cup[q] = upm[t]
    clo[q] = lom[t]


@njit(cache=True, inline="always")
def _gbar_change(yt, a_old, a_new, lo, up):
    # Gbar follows the variables at a non-zero bound: the change of their alpha_t y_t (0 if alpha_t is at none)
    was = _at_nz(a_old, lo, up)
    now = _at_nz(a_new, lo, up)
    if not (was or now):
        return 0.0
    return (yt * a_new if now else 0.0) - (yt * a_old if was else 0.0)


@njit(cache=True)
def _add_column(Gbar, Q, pt, dc, ident, pat):
    """``Gbar += dc K_:t`` (one full column; LIBSVM's ``G_bar`` update).  Not inlined: it runs only when a
    variable reaches or leaves a non-zero bound, and the loop pays nothing for it otherwise."""
    Kt = get_col(Q, pt)
    for t in range(Gbar.shape[0]):
        Gbar[t] += dc * Kt[t if ident else pat[t]]


@njit(cache=True, inline="always")
def _update_gradient(cF, cup, clo, cf, active, na, cKi, cKj, di, dj):
    """The rank-2 update ``F += di K_:i + dj K_:j`` (000, eq. (10)/(11): ``F`` is linear in alpha), fused with the
    masked min/max reductions that give ``min_{I_up} F`` and ``max_{I_low} F`` for the next selection; then
    their first index in position order (the same i and j as a running strict comparison would give).
    Returns ``(i, Fmin, jmax, Fmax)``."""
    Fmin = np.inf
    Fmax = -np.inf
    for q in range(na):  # every array here is contiguous over the active positions
        ft = cF[q] + di * cKi[q] + dj * cKj[q]
        cF[q] = ft
        fl = ft + clo[q]
        cf[q] = fl
        Fmin = min(Fmin, ft + cup[q])
        Fmax = max(Fmax, fl)
    i = -1
    jmax = -1
    if Fmin < np.inf:
        for q in range(na):
            if cF[q] + cup[q] == Fmin:
                i = active[q]
                break
    if Fmax > -np.inf:
        for q in range(na):
            if cF[q] + clo[q] == Fmax:
                jmax = active[q]
                break
    return i, Fmin, jmax, Fmax


# ------------------------------------------------------------------------------------------------
# shrinking and the gradient reconstruction (LIBSVM's do_shrinking, reconstruct_gradient, unshrink)
# ------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _removable(m, f, Fmin, Fmax):
    # LIBSVM's be_shrunk, for one variable: at a bound and unable to join a violating pair now
    if m == 3:
        return False
    if m == 1:
        return f > Fmax
    if m == 2:
        return f < Fmin
    return True


@njit(cache=True)
def _shrink(active, na, member, F, Fmin, Fmax, is_active):
    """LIBSVM's ``do_shrinking`` on the active list read by variable (before the compact layout is built)."""
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
def _shrink_swap(act, na, member, Fmin, Fmax, st, log):
    """LIBSVM's ``do_shrinking`` in the compact layout: a removable variable at position q is replaced by the
    last non-removable one (``swap_index``), so the other positions, and the cached compact columns, stay put.
    Returns the new active count.

    LIBSVM moves the entry in every cached column at once; here the moves (position ``last`` -> position ``q``)
    are appended to the move log and a cached column replays the ones it has not seen when it is next read
    (:func:`_ccol`).  A column that is never read again costs nothing: with 400 MB of columns at N = 20000,
    C = 10 the eager update made 44 million scattered copies."""
    active = act.active
    cF = act.cF
    nlog = st[ST_LOG_LEN]
    nmv = 0
    q = 0
    while q < na:
        t = active[q]
        if not _removable(member[t], cF[q], Fmin, Fmax):
            q += 1
            continue
        act.is_active[t] = False
        last = na - 1
        while last > q and _removable(member[active[last]], cF[last], Fmin, Fmax):
            act.is_active[active[last]] = False
            last -= 1
        if last > q:
            u = active[last]
            active[q] = u
            act.pos[u] = q
            cF[q] = cF[last]
            act.cup[q] = act.cup[last]
            act.clo[q] = act.clo[last]
            act.ckd[q] = act.ckd[last]
            act.cpat[q] = act.cpat[last]
            log[0, nlog] = last
            log[1, nlog] = q
            nlog += 1
            nmv += 1
            na = last
            q += 1
        else:
            na = q
    st[ST_MOVES] += nmv
    st[ST_LOG_LEN] = nlog
    return na


@njit(cache=True)
def _shrink_compact(act, na, member, Fmin, Fmax, cc, M):
    """Shrink in the compact layout; the slots are re-cut when leaving the identity layout or when the active set
    has halved.  Returns ``(na, changed)``."""
    st = cc.state
    na_old = na
    recut = st[ST_IDENTITY] == 1
    if recut:  # leaving the identity layout: the cache starts from here
        st[ST_IDENTITY] = 0
        _new_generation(st)
    na = _shrink_swap(act, na, member, Fmin, Fmax, st, cc.log)
    if 0 < na and (recut or 2 * na < st[ST_SLOT_LEN]):  # slots as long as the active set, or twice too long
        _new_layout(st, na, M, cc.buf.shape[0])
    if na != na_old and 8 * st[ST_MOVES] > na:
        _order_positions(act.is_active, act.pos, cc.perm)
    return na, na != na_old


@njit(cache=True)
def _enter_compact(qp, F, sets, act, na, cc, M):
    """Build the compact layout of the active variables (positions in variable order) and a fresh cache."""
    for q in range(na):
        t = act.active[q]
        act.cF[q] = F[t]
        act.ckd[q] = qp.Kd[qp.pat[t]]
        act.cup[q] = sets.upm[t]
        act.clo[q] = sets.lom[t]
        act.pos[t] = q
        act.cpat[q] = qp.pat[t]
    st = cc.state
    st[ST_MOVES] = 0
    _new_layout(st, na, M, cc.buf.shape[0])
    st[ST_IDENTITY] = 1 if (qp.ident and na == M) else 0


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
def _unshrink(qp, alpha, F, Gbar, act, member):
    """Every variable active again, with the gradient of the shrunk ones rebuilt (LIBSVM's ``unshrink``);
    returns ``(M, i, Fmin, jmax, Fmax)`` over all variables."""
    M = alpha.shape[0]
    reconstruct(qp.Q, qp.pat, qp.y, qp.p, qp.lower, qp.upper, qp.shift, alpha, F, Gbar, act.is_active)
    for t in range(M):
        act.active[t] = t
        act.is_active[t] = True
    i, Fmin, jmax, Fmax = _scan(act.active, M, member, F)
    return M, i, Fmin, jmax, Fmax


@njit(cache=True, inline="always")
def _sync(F, act, na):
    # the compact gradient of the active variables back into F (indexed by variable)
    for q in range(na):
        F[act.active[q]] = act.cF[q]


@njit(cache=True, inline="always")
def _report_pair(out, i, j, a):
    # the pair that proved Kt not PSD or the dual unbounded, for the caller's message
    out[OUT_I] = i
    out[OUT_J] = j
    out[OUT_AIJ] = a


# ------------------------------------------------------------------------------------------------
# the loop
# ------------------------------------------------------------------------------------------------
@njit(cache=True)
def _start(alpha, qp):
    """The index sets of the starting point and an empty active-set layout (every variable active)."""
    M = alpha.shape[0]
    sets = Sets(np.empty(M, dtype=np.int8), np.empty(M), np.empty(M))
    for t in range(M):
        m = _sets(alpha[t], qp.y[t], qp.lower[t], qp.upper[t])
        sets.member[t] = m
        sets.upm[t] = 0.0 if m & 1 else np.inf
        sets.lom[t] = 0.0 if m & 2 else -np.inf
    act = Active(np.arange(M), np.ones(M, dtype=np.bool_), np.empty(M, dtype=np.int64), np.empty(M), np.empty(M),
                 np.empty(M), np.empty(M), np.empty(M, dtype=np.int64), np.empty(M))
    return sets, act


@njit(cache=True)
def solve(qp, opts, alpha, F, Gbar, out, cbuf):  # noqa: C901
    """Run SMO in place on ``alpha``, ``F`` (and ``Gbar`` when shrinking); return ``(n_iter, status, gap)``.

    ``qp`` is a :data:`BoxDual`, ``opts`` an :data:`Options`; ``cbuf`` (at least 2 M floats) holds the compact
    column cache; ``out`` (float64[7]) receives the ``OUT_*`` slots.  Each iteration (000 §3; Fan, Chen & Lin
    2005, WSS 2):

    * stop when ``gap = max_{I_low} F - min_{I_up} F <= tol`` (000 eq. (10)/(11)), confirmed on every variable;
    * select ``i = argmin_{t in I_up} F_t`` (000 eq. (8): L = argmin over I_L of W.Phi(X_t) - y_t) and
      ``j = argmax_{t in I_low} F_t`` (000 eq. (8)) or, second order, the ``j`` of :func:`_second_order_j`;
    * step: the clipped step on the pair (000 eq. (9));
    * update alpha, the index sets, ``Gbar`` and ``F`` (rank 2), fused with the selection of the next ``i``
      (and of ``max_{I_low} F``) in one pass over the active variables.
    """
    M = alpha.shape[0]
    Q, Kd, pat, y, lower, upper, shift = qp.Q, qp.Kd, qp.pat, qp.y, qp.lower, qp.upper, qp.shift
    tol = opts.tol
    sets, act = _start(alpha, qp)
    cc = _new_cache(M, cbuf)
    cf_ok = False  # act.cf is up to date
    compact = False  # the compact layout is built (act.cF is the gradient of the active variables)
    na = M
    min_active = M
    counter = min(M, 1000) + 1
    unshrunk = False
    clamped = False
    n_iter = 0
    moved = 0.0
    status = OPTIMAL
    i, Fmin, jmax, Fmax = _scan(act.active, na, sets.member, F)
    gap = Fmax - Fmin
    while True:
        # --- shrink: every min(M, 1000) iterations -------------------------------------------------
        if opts.shrinking:
            counter -= 1
            if counter == 0:
                counter = min(M, 1000)
                if compact:
                    _sync(F, act, na)
                if not unshrunk and Fmax - Fmin <= 10.0 * tol:
                    unshrunk = True
                    if na < M:
                        na, i, Fmin, jmax, Fmax = _unshrink(qp, alpha, F, Gbar, act, sets.member)
                        cf_ok = compact = False
                if i >= 0 and jmax >= 0:
                    if compact:  # positions kept, cached columns kept
                        na, changed = _shrink_compact(act, na, sets.member, Fmin, Fmax, cc, M)
                        if changed:
                            i, Fmin, jmax, Fmax = _cscan(act, na)
                            cf_ok = False
                    else:
                        na = _shrink(act.active, na, sets.member, F, Fmin, Fmax, act.is_active)
                        i, Fmin, jmax, Fmax = _scan(act.active, na, sets.member, F)
                    min_active = min(min_active, na)
        # --- stop: the KKT gap (000 eq. (10)/(11)), confirmed on every variable ----------------------
        gap = Fmax - Fmin
        stop = _stop(gap, tol, i, jmax)
        if stop or n_iter >= opts.max_iter:
            if compact:
                _sync(F, act, na)
            if na < M:  # confirm on every variable, with the gradient of the shrunk ones reconstructed
                na, i, Fmin, jmax, Fmax = _unshrink(qp, alpha, F, Gbar, act, sets.member)
                cf_ok = compact = False
                gap = Fmax - Fmin
            if _stop(gap, tol, i, jmax):
                status = OPTIMAL
                break
            if not stop:  # the iteration budget is spent
                status = MAX_ITER
                break
            counter = 1  # the gap over the active set was below tol, over all is not: LIBSVM shrinks again now
            continue
        # --- select: j (i and the extremes of F come from the update pass; 000 eq. (8)) --------------
        if not compact:
            _enter_compact(qp, F, sets, act, na, cc, M)
            compact = True
        pi = pat[i]
        Kii = Kd[pi]
        cKi = _ccol(Q, i, pi, cc, -1, act.cpat, na)
        j = jmax
        if opts.second_order:
            if not cf_ok:
                for q in range(na):
                    act.cf[q] = act.cF[q] + act.clo[q]
            j, bad, a_bad, seen = _second_order_j(i, Fmin, Kii, cKi, act.cf, act.ckd, act.cpat, act.active, na, Kd,
                                                  shift, opts.psd_rtol, opts.clamp)
            clamped |= seen
            if bad >= 0:
                _report_pair(out, i, bad, a_bad)
                _sync(F, act, na)
                return n_iter, NOT_CONVEX, gap
            if j < 0:  # cannot happen when gap > 0, kept as a guard
                j = jmax
        # --- step: along (+y_i at i, -y_j at j), clipped to the box (000 eq. (9)) ---------------------
        pj = pat[j]
        qi = act.pos[i]
        qj = act.pos[j]
        cKj = _ccol(Q, j, pj, cc, i, act.cpat, na)
        aij = Kii + Kd[pj] - 2.0 * cKi[qj] + 2.0 * shift
        yi = y[i]
        yj = y[j]
        ai_old = alpha[i]
        aj_old = alpha[j]
        # largest step each variable allows (000 eq. (9): C - y_L alpha_L, C + y_U alpha_U)
        mi = (upper[i] - ai_old) if yi > 0.0 else (ai_old - lower[i])
        mj = (aj_old - lower[j]) if yj > 0.0 else (upper[j] - aj_old)
        if aij <= 0.0:
            if _proves_not_psd(aij, Kii, Kd[pj], shift, opts.psd_rtol):
                if not opts.clamp:
                    _report_pair(out, i, j, aij)
                    _sync(F, act, na)
                    return n_iter, NOT_CONVEX, gap
                clamped = True
            if mi == np.inf and mj == np.inf:
                _report_pair(out, i, j, aij)  # no curvature and no box along this direction: D is unbounded below
                status = UNBOUNDED
                break
            aij = TAU
        ai_new, aj_new = _clipped_step((act.cF[qj] - act.cF[qi]) / aij, ai_old, aj_old, yi, yj, mi, mj,
                                       lower[i], upper[i], lower[j], upper[j])
        # --- update: alpha, the index sets, Gbar and F (rank 2) ---------------------------------------
        alpha[i] = ai_new
        alpha[j] = aj_new
        _set_membership(i, qi, ai_new, yi, lower[i], upper[i], sets.member, sets.upm, sets.lom, act.cup, act.clo)
        _set_membership(j, qj, aj_new, yj, lower[j], upper[j], sets.member, sets.upm, sets.lom, act.cup, act.clo)
        di = yi * (ai_new - ai_old)
        dj = yj * (aj_new - aj_old)
        moved += abs(di) + abs(dj)
        if opts.shrinking:
            dc = _gbar_change(yi, ai_old, ai_new, lower[i], upper[i])
            if dc != 0.0:
                _add_column(Gbar, Q, pi, dc, qp.ident, pat)
            dc = _gbar_change(yj, aj_old, aj_new, lower[j], upper[j])
            if dc != 0.0:
                _add_column(Gbar, Q, pj, dc, qp.ident, pat)
        # the diagonal shift s I of Kt, applied here instead of to a copy of K
        act.cF[qi] += shift * di
        act.cF[qj] += shift * dj
        i, Fmin, jmax, Fmax = _update_gradient(act.cF, act.cup, act.clo, act.cf, act.active, na, cKi, cKj, di,
                                               dj)
        cf_ok = True
        n_iter += 1
    if compact:
        _sync(F, act, na)
    out[OUT_NONCONVEX] = 1.0 if clamped else 0.0
    out[OUT_MIN_ACTIVE] = min_active
    out[OUT_GATHERED] = cc.state[ST_GATHERS]
    out[OUT_MOVED] = moved
    return n_iter, status, gap
