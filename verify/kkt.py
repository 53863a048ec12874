"""KKT residuals of every formulation, computed with numpy from a solver's answer (the third view).

Nothing here imports :mod:`svmref.formulations` or :mod:`svmref.solvers`: each residual is written from the
papers' optimality conditions, so that a mistake shared by the reference and a solver is caught.

Units. Every residual is a dimensionless number compared with one tolerance, ``tol`` itself (see
:data:`svmref.verify.evaluation.TOLERANCES`):

* the KKT residuals ``stationarity`` and ``kkt_absolute`` are in the **solution's units**: the margin for
  classification (``y_i f(x_i) - 1`` is dimensionless since ``y_i = +-1``; the margin 1 is the unit the
  problem itself fixes), ``max_i |y_i|`` for regression (:func:`target_scale`); dual variables are measured
  in units of ``C`` (``alpha_i / C``; for L2 and LS ``alpha_i / C = xi_i`` is the slack, 000 eq. (7)). They are
  natural (projected-gradient) residuals (:func:`natural_residual`): an ``alpha_i`` a little inside its bound
  with the right gradient sign counts its distance to the bound, a free ``alpha_i`` its margin error;
* ``primal_feasibility`` and ``complementarity`` are relative to the size of the terms that make up the
  residual ``s_i`` (``f_scale = max_i sum of |terms|``, as OSQP's ``eps_rel``): a solver that stores K in single
  precision, as LIBSVM's kernel cache does, is accurate to about 1e-7 of that;
* ``box`` is relative to ``C``; equality constraints ``sum_i e_i alpha_i = 0`` to ``sum_i |alpha_i|``;
* the duality gap to the size of the objectives' terms.

No tolerance's scale is ``max(1, ...)`` (which would make "relative" absolute below 1): where a quantity can be 0
the denominator is the smallest positive float (the residual is then 0 too), and the floating-point floor of the
margins, :func:`rounding`, is reported beside them (:attr:`Residuals.floor`). The one ``max(1, max|y|)`` left is
the ISLS support-vector threshold (:data:`SV_ATOL`), a classification of coefficients taken from 004 §4.

``nan`` means *not applicable* (e.g. complementarity for LS-SVM, whose constraints are
equalities); ``inf`` means *cannot be computed* (the answer is missing something it needs).

Residual names, the same for every formulation (cvxpy's ``SolverTestHelper`` checks each separately):

``box``                dual feasibility, bounds: ``max_i dist(alpha_i, [l, u]) / C``;
``equality``           dual feasibility, equality: ``|sum_i e_i alpha_i| / sum_i |alpha_i|``;
``primal_feasibility`` constraint violation of the primal recovered from ``(alpha, b)``, relative;
``complementarity``    multiplier x constraint slack of the recovered primal and dual, relative;
``stationarity``       the b-free natural residual ``min_b max_i r_i(b)`` (:func:`natural_b_interval`: the maximal
                       violating pair of 000 eqs. (10)-(11), with the eps-active set at the residual itself);
``kkt_absolute``       the natural residual at the answer's own ``b``, ``max_i r_i(b)``: every KKT condition
                       (margin, sign, bound) in the solution's units;
``duality_gap``        recovered primal objective minus dual objective, relative.

Indices in messages are 0-based (Python), e.g. ``alpha_17`` is ``alpha[17]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmref._thresholds import ACTIVE_RTOL

__all__ = [
    "Residuals",
    "RESIDUALS",
    "BOX_DUALS",
    "BoxDual",
    "box_dual_residuals",
    "rls_residuals",
    "sparse_ls_svm_residuals",
    "support_features_residuals",
    "b_interval",
    "svr_residuals",
    "regularised_bias_residuals",
    "ridge_residuals",
]

#: The residual names, in the order the report prints them.
RESIDUALS = ("box", "equality", "primal_feasibility", "complementarity", "stationarity", "kkt_absolute",
             "duality_gap")

#: An ``alpha_i`` within ``EPS_ACTIVE * C`` of a bound counts as *at* that bound (eps-active set); the value is
#: :data:`svmref._thresholds.ACTIVE_RTOL`.
EPS_ACTIVE = ACTIVE_RTOL

#: Largest N for which the first-order error of a box dual is an active-set Newton correction (one dense
#: solve of size N + 1); above it, the diagonal estimate of :func:`step_error`.
SYSTEM_N = 1000

#: ISLS support-vector threshold (004 §4: a pattern is a SV when |alpha_i| > 1e-6), times max(1, max|y|).
SV_ATOL = 1e-6


@dataclass
class Residuals:
    """What :mod:`svmref.verify.kkt` computes from one answer.

    Attributes
    ----------
    objective : float
        The formulation's objective at the answer, in the sense its reference reports
        (a minimisation dual for the box duals, ISLS and RLS primal; the maximised W of 003 eq. (10)).
    primal_objective : float
        Objective of the primal recovered from the answer (``nan`` if not applicable).
    values : dict
        residual name -> value (see module docstring; ``nan`` n/a, ``inf`` cannot be computed).
    where : dict
        residual name -> a sentence naming the worst offender (``"alpha_17 = -0.31 is outside [0, C = 1]"``).
    b : float or None
        The bias used (given by the solver or derived).
    b_derived : bool
        True when the solver gave no ``b`` and verify derived it from the KKT conditions.
    b_unique : bool
        Whether the KKT conditions determine ``b`` uniquely (some ``alpha_i`` strictly inside its box).
    coef : ndarray
        Decision coefficients: ``f(x) = sum_i coef_i k(x_i, x) + b`` (support features: ``f(x) = coef'x + b``).
    notes : list of str
        Anything the reader should know (b derived, degenerate answers, ...).
    b_low, b_high : float
        The KKT interval of the bias (:func:`natural_b_interval`; ``nan`` where not computed): the ``b`` that
        minimise the natural residual at the answer's ``alpha`` (``b_low <= b_high``; a point when some
        ``alpha_i`` is free; at an optimum every ``b`` in it is optimal).
    unit : float
        The solution's unit of the decision values and margins: 1 for classification (the margin), the scale
        of the targets ``max|y|`` for regression (1 when ``y = 0``).
    gap_abs : float
        The duality gap ``P - (-D)`` (``P - W`` for 003) in the objective's own units; by weak duality the
        objective is within it of the optimum (``nan`` where not computed).
    obj_scale : float
        The size of the terms that make up the objective itself (its rounding is ``rounding(N, obj_scale)``).
    floor : float
        The floating-point floor of the margins in the solution's units, ``rounding(N, f_scale) / unit``: no
        residual in those units is meaningful below it.
    coef_error : ndarray or None
        Per decision coefficient, how far it may still move (:func:`step_error`, one projected diagonal Newton
        step): a first-order estimate of the answer's own error, used for the reference's resolution
        (:func:`svmref.verify.reference.resolution`).
        Computed only with ``own_error=True`` (the reference's residuals); ``None`` otherwise.
    coef_correction, b_correction : bool, float
        ``coef_correction`` True: ``coef_error`` is instead the signed Newton correction of a linear system (RLS,
        LS-SVM: the exact first-order error), and ``b_correction`` that of ``b``.
    """

    objective: float
    primal_objective: float
    values: dict
    where: dict
    b: float | None
    b_derived: bool = False
    b_unique: bool = True
    coef: np.ndarray | None = None
    notes: list = field(default_factory=list)
    b_low: float = float("nan")
    b_high: float = float("nan")
    unit: float = 1.0
    gap_abs: float = float("nan")
    obj_scale: float = float("nan")
    floor: float = 0.0
    coef_error: np.ndarray | None = None
    coef_correction: bool = False
    b_correction: float = 0.0


def target_scale(y: np.ndarray) -> float:
    """The unit of a regression's targets and decision values: ``max_i |y_i|`` (relative, as the margin 1 is
    for classification), or 1 when every ``y_i = 0`` (then the optimum is 0 and only absolute errors are left)."""
    top = float(np.max(np.abs(y))) if y.size else 0.0
    return top if top > 0 else 1.0


def _terms_scale(terms: np.ndarray) -> float:
    """``max_i`` of the size of the terms that make up a residual (each row's ``sum |term|``), the denominator
    of a relative residual (as OSQP's ``eps_rel``); the smallest positive float when every term is 0 (then
    the residual is 0 too)."""
    top = float(np.max(terms)) if terms.size else 0.0
    return top if top > 0 else float(np.finfo(float).tiny)


def _nan_values() -> dict:
    return {k: float("nan") for k in RESIDUALS}


def _rel(num: float, *scales: float) -> float:
    """``|num|`` relative to the largest finite ``|scale|`` (the size of the terms ``num`` is made of, so ``num = 0``
    whenever they all are; the smallest positive float keeps ``0 / 0`` at 0)."""
    den = max([abs(s) for s in scales if np.isfinite(s)] + [float(np.finfo(float).tiny)])
    return abs(num) / den


# ---------------------------------------------------------------------------------------------
# The box-constrained duals: L1, L2, LS, Least 1-Norm (000 eqs. (2), (5)) and LS-SVM regression
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoxDual:
    """One member of the family ``min 1/2 v'Ktilde v + p'alpha  s.t.  e'alpha = 0, l <= alpha <= u``.

    ``v = alpha * y`` and ``e = y``, ``p = -1`` for classification; ``v = alpha``, ``e = 1``, ``p = -y``
    for regression. ``Ktilde = K + I/C`` when ``shift`` (L2, LS; 000 eq. (2)), else ``K``.
    ``lower``/``upper`` are the bounds in units of ``C`` (``-inf``/``inf`` when absent).
    ``loss`` names the slack term of the primal (``hinge``, ``squared_hinge``, ``squared``, ``absolute``).
    ``constraint``: ``(left-hand side, requirement)`` of the primal constraint that no finite bound
    absorbs, as the primal feasibility residual names it (empty when the bounds absorb every sign);
    ``complementarity_cite``: the paper's equation of the complementarity conditions, where it has one;
    ``weighted``: the weighted LS-SVM (Suykens, De Brabanter, Lukas & Vandewalle, Neurocomputing 2002), whose
    pattern ``i`` has the loss ``C v_i / 2 xi_i^2``: ``Ktilde = K + diag(1/(C v_i))``.
    """

    name: str
    lower: float
    upper: float
    shift: bool
    loss: str
    regression: bool = False
    cite: str = ""
    constraint: tuple = ()
    complementarity_cite: str = ""
    weighted: bool = False

    @property
    def shift_words(self) -> str:
        """The shift of ``Ktilde`` in a margin equation, in words (empty when there is none)."""
        return " + alpha_i/(C v_i)" if self.weighted else " + alpha_i/C" if self.shift else ""


#: The five box-constrained duals (bounds in units of C).
BOX_DUALS: dict[str, BoxDual] = {
    "l1_svm": BoxDual("l1_svm", 0.0, 1.0, False, "hinge", cite="003 eqs. (2)-(3); 000 Table 1"),
    "l2_svm": BoxDual("l2_svm", 0.0, np.inf, True, "squared_hinge", cite="000 §1, Table 1",
                      constraint=("y_i f(x_i) - 1 + alpha_i/C", "the L2-SVM constraint y_i f(x_i) >= 1 - xi_i, "
                                  "xi_i = alpha_i/C, requires >= 0")),
    "ls_svm": BoxDual("ls_svm", -np.inf, np.inf, True, "squared", cite="000 eqs. (1), (2), (7)",
                      constraint=("y_i f(x_i) - 1 + alpha_i/C", "000 eq. (7) requires 0")),
    "least_1norm_svm": BoxDual("least_1norm_svm", -1.0, 1.0, False, "absolute", cite="000 eqs. (3)-(6)",
                               complementarity_cite=" (000 eq. (6))"),
    "ls_svm_regression": BoxDual("ls_svm_regression", -np.inf, np.inf, True, "squared", True,
                                 cite="004 eqs. (1)-(2)", constraint=("f(x_i) + alpha_i/C - y_i", "004 system (2) requires 0")),
    "weighted_ls_svm": BoxDual("weighted_ls_svm", -np.inf, np.inf, True, "squared",
                               cite="000 eqs. (1), (2), (7) with C v_i (Suykens et al. 2002)",
                               constraint=("y_i f(x_i) - 1 + alpha_i/(C v_i)", "000 eq. (7) with C v_i requires 0"),
                               weighted=True),
    "weighted_ls_svm_regression": BoxDual("weighted_ls_svm_regression", -np.inf, np.inf, True, "squared", True,
                                          cite="004 eqs. (1)-(2) with C v_i (Suykens et al. 2002)",
                                          constraint=("f(x_i) + alpha_i/(C v_i) - y_i",
                                                      "004 system (2) with C v_i requires 0"),
                                          weighted=True),
}


def b_interval(g: np.ndarray, e: np.ndarray, alpha: np.ndarray, lo: float, hi: float, eps: float):
    """The interval ``[m, M]`` of biases that satisfy the KKT conditions with a fixed eps-active set, and the free
    set (LIBSVM's form, kept for callers; verify's residuals use :func:`natural_b_interval`, whose eps-active
    threshold is the residual itself, so an interior-point answer is not misclassified).

    With ``g`` the gradient of the (minimised) dual and ``s_i = g_i + e_i b`` the Lagrangian's
    derivative in ``alpha_i``, optimality asks ``s_i >= 0`` where ``alpha_i`` can grow (``alpha_i < u``)
    and ``s_i <= 0`` where it can shrink (``alpha_i > l``). For ``e_i = +-1`` this reads
    ``b >= -e_i g_i`` on ``I_up = {e_i = +1, alpha_i < u} U {e_i = -1, alpha_i > l}`` and
    ``b <= -e_i g_i`` on ``I_low = {e_i = +1, alpha_i > l} U {e_i = -1, alpha_i < u}``, so

        m = max_{I_up} -e_i g_i,   M = min_{I_low} -e_i g_i,

    and the b-free optimality condition is ``m <= M``: the maximal violating pair criterion of
    LIBSVM (Fan, Chen & Lin 2005) and of 000 eqs. (10) (LS-SVM: every index is in both sets, so
    ``m - M = max_i - min_i``) and (11) (Least 1-Norm, sets ``I_U, I_L`` of (8)). "At a bound" is
    tested up to ``eps`` (an eps-active set). Returns ``(m, M, i_m, i_M, free)``.
    """
    up = alpha < hi - eps
    down = alpha > lo + eps
    I_up = ((e > 0) & up) | ((e < 0) & down)
    I_low = ((e > 0) & down) | ((e < 0) & up)
    score = -e * g
    m, i_m = -np.inf, -1
    M, i_M = np.inf, -1
    if np.any(I_up):
        idx = np.flatnonzero(I_up)
        i_m = int(idx[np.argmax(score[idx])])
        m = float(score[i_m])
    if np.any(I_low):
        idx = np.flatnonzero(I_low)
        i_M = int(idx[np.argmin(score[idx])])
        M = float(score[i_M])
    free = up & down
    return m, M, i_m, i_M, free


#: Units of rounding of one float64 operation (``2.2e-16``): the floating-point floor of a residual is
#: ``N * ROUNDOFF * scale`` for a sum of ``N`` terms of size ``scale`` (the worst case of Higham's bound).
ROUNDOFF = float(np.finfo(float).eps)


def rounding(n: int, scale: float) -> float:
    """The floating-point floor of a sum of ``n`` terms whose sizes add up to ``scale``: ``sqrt(n) ROUNDOFF scale``,
    the typical accumulated rounding (a random walk of ``n`` roundings; Higham's worst case is ``n ROUNDOFF
    scale``). Residuals and comparisons are not judged below it."""
    return float(np.sqrt(max(n, 1))) * ROUNDOFF * scale


def distances(alpha: np.ndarray, lo: float, hi: float, width: float):
    """How far each ``alpha_i`` may move down and up inside ``[lo, hi]``, in units of ``width``:
    ``(d_lo, d_hi)``, ``inf`` for an absent bound and 0 outside the box (the box residual reports that)."""
    d_lo = np.full(alpha.shape, np.inf) if not np.isfinite(lo) else np.maximum(alpha - lo, 0.0) / width
    d_hi = np.full(alpha.shape, np.inf) if not np.isfinite(hi) else np.maximum(hi - alpha, 0.0) / width
    return d_lo, d_hi


def natural_residual(s: np.ndarray, d_lo: np.ndarray, d_hi: np.ndarray, unit: float) -> np.ndarray:
    """The natural (projected-gradient) residual of each variable, in the solution's units.

    ``s_i`` is the derivative of the Lagrangian in ``alpha_i`` (a margin residual, units of ``unit``);
    ``d_lo, d_hi`` (:func:`distances`) how far ``alpha_i`` can move down and up. With ``width`` the unit of
    ``alpha`` this is ``|alpha_i - clip(alpha_i - s_i width / unit, lo, hi)| / width``:

        r_i = min(max(s_i, 0) / unit, d_lo_i) + min(max(-s_i, 0) / unit, d_hi_i).

    A free ``alpha_i`` with ``s_i != 0`` contributes ``|s_i| / unit`` (its margin is off); an ``alpha_i`` at
    distance ``delta`` inside the bound that ``s_i`` pushes it to contributes ``min(|s_i| / unit, delta)``, so an
    interior-point answer (bounded ``alpha_i`` left a little inside their bounds) is charged for the distance,
    not for the gradient. No eps-active set is needed.
    """
    return np.minimum(np.maximum(s, 0.0) / unit, d_lo) + np.minimum(np.maximum(-s, 0.0) / unit, d_hi)


def step_error(s: np.ndarray, d_lo: np.ndarray, d_hi: np.ndarray, width: float, curv: np.ndarray) -> np.ndarray:
    """How far each variable would still move (in its own units) under one diagonal Newton step on the
    Lagrangian, projected on the box: ``min(|s_i| / curv_i, distance to the bound it moves towards)``, with
    ``s_i`` the Lagrangian's derivative and ``curv_i`` its curvature in ``alpha_i`` (``Ktilde_ii``); a
    first-order estimate of the answer's own error (the reference's resolution). ``curv_i <= 0``: the
    distance alone (``|s_i| width`` where that is infinite)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.where(curv > 0, np.abs(s) / np.where(curv > 0, curv, 1.0), np.abs(s) * width)
    room = np.where(s > 0, d_lo, np.where(s < 0, d_hi, 0.0)) * width
    return np.minimum(step, room)


@dataclass
class BInterval:
    """The b-free natural residual and the biases that attain it (:func:`natural_b_interval`)."""

    rho: float
    b_low: float
    b_high: float
    m: float
    M: float
    i_m: int
    i_M: int


def _extremes(score: np.ndarray, up: np.ndarray, low: np.ndarray):
    m, i_m, M, i_M = -np.inf, -1, np.inf, -1
    if np.any(up):
        idx = np.flatnonzero(up)
        i_m = int(idx[np.argmax(score[idx])])
        m = float(score[i_m])
    if np.any(low):
        idx = np.flatnonzero(low)
        i_M = int(idx[np.argmin(score[idx])])
        M = float(score[i_M])
    return m, M, i_m, i_M


def natural_b_interval(g: np.ndarray, e: np.ndarray, d_lo: np.ndarray, d_hi: np.ndarray, unit: float) -> BInterval:
    """``rho = min_b max_i r_i(b)`` of :func:`natural_residual` with ``s_i = g_i + e_i b`` (``e_i = +-1``), and
    the interval ``[b_low, b_high]`` of the ``b`` that attain it.

    With ``score_i = -e_i g_i``, ``r_i(b) <= rho`` reads ``b >= score_i - rho unit`` for ``i`` in
    ``I_up(rho)`` (``alpha_i`` can grow by more than ``rho``: ``e_i = +1, d_hi_i > rho`` or ``e_i = -1,
    d_lo_i > rho``) and ``b <= score_i + rho unit`` on ``I_low(rho)`` (the mirror), so ``rho`` is feasible iff
    ``m(rho) - M(rho) <= 2 rho unit`` with ``m = max_{I_up} score``, ``M = min_{I_low} score``: the maximal
    violating pair of LIBSVM and of 000 eqs. (10)-(11), with the eps-active set at ``eps = rho`` itself. The
    sets change only at the distances ``d``, so ``rho`` is found by bisection over them. At an optimum with a
    free ``alpha_i``, ``rho = 0`` and ``b_low = b_high``; with none, ``[b_low, b_high] = [m, M]``.
    """
    score = -e * g
    up_d = np.where(e > 0, d_hi, d_lo)
    low_d = np.where(e > 0, d_lo, d_hi)
    brk = np.unique(np.concatenate([[0.0], up_d[np.isfinite(up_d)], low_d[np.isfinite(low_d)]]))

    def at(k: int):
        m, M, i_m, i_M = _extremes(score, up_d > brk[k], low_d > brk[k])
        half = (m - M) / (2.0 * unit) if np.isfinite(m) and np.isfinite(M) else -np.inf
        return max(float(brk[k]), half), m, M, i_m, i_M

    lo_k, hi_k = 0, len(brk) - 1
    while lo_k < hi_k:  # the first segment [brk_k, brk_k+1) that holds a feasible rho
        mid = (lo_k + hi_k) // 2
        if at(mid)[0] < brk[mid + 1]:
            hi_k = mid
        else:
            lo_k = mid + 1
    rho, m, M, i_m, i_M = at(lo_k)
    if np.isnan(score).any():
        rho = float("nan")
    b_low = m - rho * unit if np.isfinite(m) else -np.inf
    b_high = M + rho * unit if np.isfinite(M) else np.inf
    return BInterval(float(rho), float(b_low), float(b_high), m, M, i_m, i_M)


def mvp_words(iv: BInterval, name, var: str, cite: str) -> str:
    """The maximal violating pair behind a b-free residual, in words: "(maximal violating pair (3, 7): m - M = 0.2;
    <cite>)". Where the residual saturates (no pair is left: every variable that a violated condition asks to move
    is at least ``rho`` of its box from the bound it would reach, e.g. every ``alpha_i = 0`` with its margin
    violated), it says that instead of printing a pair of missing indices and ``m - M = -inf``."""
    if iv.i_m >= 0 and iv.i_M >= 0 and np.isfinite(iv.m - iv.M):
        return f"(maximal violating pair ({name(iv.i_m)}, {name(iv.i_M)}): m - M = {iv.m - iv.M:.3g}; {cite})"
    return (f"(the residual saturates at {iv.rho:.3g}: each {var} whose condition is violated would have to move "
            f"at least that far, in units of its box, so no violating pair is left to compare)")


def _best_b(iv: BInterval, b: float) -> float:
    """The middle of the KKT interval where it is finite, else ``b``."""
    return 0.5 * (iv.b_low + iv.b_high) if np.isfinite(iv.b_low) and np.isfinite(iv.b_high) else b


def _given_or_derived_b(b, iv: BInterval, notes: list, unit: float, scale: float):
    """``(b, b_unique)``: the given ``b``, or the middle of the KKT interval ``[b_low, b_high]`` (the ``b`` that
    minimises the natural residual) when ``b`` is None, with a note saying so. ``b_unique``: the interval is a
    point up to ``4 rho unit`` plus the rounding floor ``64 ROUNDOFF scale`` (some ``alpha_i`` is free)."""
    lo, hi = iv.b_low, iv.b_high
    b_unique = bool(hi - lo <= 4.0 * iv.rho * unit + 64.0 * ROUNDOFF * scale)
    if b is None:
        if np.isfinite(lo) and np.isfinite(hi):
            b = 0.5 * (lo + hi)
        else:
            b = lo if np.isfinite(lo) else hi if np.isfinite(hi) else 0.0
        notes.append(f"b was not given: derived from the KKT conditions as b = {b:.6g} "
                     + ("(where the KKT interval closes)" if b_unique else
                        f"(middle of the KKT interval [{lo:.6g}, {hi:.6g}])"))
        return float(b), b_unique
    return float(b), b_unique


def box_dual_residuals(name: str, K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray, b: float | None,
                       eps: float = EPS_ACTIVE, own_error: bool = False, weights: np.ndarray | None = None) -> Residuals:
    r"""Residuals of the box-constrained duals at ``(alpha, b)``.

    Formulas (``f = K v + b`` the decision values on the training set, ``t = alpha / C``):

    * dual objective (000 eqs. (2), (5); L2 derived in ``svmref.formulations.svm``):
      ``D(alpha) = 1/2 v' Ktilde v + p' alpha`` (``= 1/2 sum_ij alpha_i alpha_j y_i y_j Ktilde_ij - sum_i alpha_i``);
    * gradient ``g = y * (Ktilde v) - 1`` (classification), ``g = Ktilde alpha - y`` (regression), and
      ``s_i = g_i + e_i b`` the derivative of the Lagrangian ``D + b e'alpha - ...`` in ``alpha_i``;
      classification: ``s_i = y_i f(x_i) - 1 + [alpha_i / C if L2/LS]`` (000 eqs. (6), (7));
      regression: ``s_i = f(x_i) - y_i + alpha_i / C`` (004 system (2));
    * ``box = max_i max(l - alpha_i, alpha_i - u, 0) / C``;
    * ``equality = |e' alpha| / sum_i |alpha_i|`` (``sum_i alpha_i y_i = 0``, resp. ``sum_i alpha_i = 0``);
    * a bound that is finite carries a multiplier ``nu >= 0`` that absorbs the sign of ``s_i`` it allows
      (``s_i > 0`` at ``l``, ``s_i < 0`` at ``u``); what no finite bound can absorb is a violated primal
      constraint: ``primal_feasibility = max_i ([l = -inf] max(s_i, 0) + [u = inf] max(-s_i, 0))``.
      For L2 this is ``y_i f(x_i) >= 1 - xi_i`` with ``xi_i = alpha_i / C``; for LS (and regression) the
      equality (7) ``y_i f(x_i) = 1 - alpha_i / C``; for L1 and Least 1-Norm the recovered slacks are
      the optimal ones for ``(W, b)`` and this is 0 by construction;
    * ``complementarity = max_i ([l finite] |t_i - l/C| max(s_i, 0) + [u finite] |u/C - t_i| max(-s_i, 0))``,
      i.e. multiplier x slack in margin units: L1 ``alpha_i (y_i f_i - 1 + xi_i) = 0`` and
      ``(C - alpha_i) xi_i = 0``; Least 1-Norm 000 eq. (6) (``s_i > 0`` needs ``alpha_i = -C``,
      ``s_i < 0`` needs ``alpha_i = C``); L2 ``alpha_i (y_i f_i - 1 + xi_i) = 0``;
    * ``stationarity``: the b-free natural residual of :func:`natural_b_interval` (``unit`` = 1, resp. ``max|y|``;
      ``alpha`` in units of ``C``, resp. ``C max|y|``);
    * ``kkt_absolute``: the natural residual at the given ``b``, ``max_i r_i(b)`` (:func:`natural_residual`), in the
      same units: not relative, a margin error of 0.01 is 0.01 whatever ``f_scale``;
    * primal feasibility and complementarity are relative to the size of the terms that make up ``s_i``:
      ``f_scale = max_i (sum_j |K_ij v_j| + |alpha_i|/C + |c_i|)`` with ``c_i = 1`` (the margin) or ``|y_i|``;
    * the weighted LS-SVM (``weights`` ``v``, Suykens et al. 2002): ``alpha_i / C`` reads ``alpha_i / (C v_i)``
      everywhere (``Ktilde = K + diag(1/(C v_i))``) and the loss ``C/2 sum v_i xi_i^2``;
    * ``eps`` is not used (kept for the signature): the natural residual needs no eps-active set;
    * ``own_error``: also estimate the answer's own first-order error (:func:`active_set_correction`; one dense
      solve), as the reference's resolution needs;
    * ``b_low, b_high``: the ``b`` that attain ``stationarity``; ``b`` when not given is their middle;
    * recovered primal (000 eqs. (1), (3); 003 eq. (2); L2 000 §1; regression 004 eq. (1)), with the
      slack ``xi_i = 1 - y_i f(x_i)`` (resp. ``y_i - f(x_i)``) that is optimal for ``(W, b)``:
      ``P = 1/2 v'Kv + C sum max(xi, 0)`` (L1), ``C/2 sum max(xi, 0)^2`` (L2), ``C/2 sum xi^2`` (LS),
      ``C sum |xi|`` (Least 1-Norm); strong duality ``p* = -d*`` so
      ``duality_gap = (P + D) / max(|P|, |D|, mag)`` with ``mag = 1/2 v'Kv + C sum |xi|`` (resp.
      ``C/2 sum xi^2``) ``+ sum |p_i alpha_i| + ||alpha||^2/(2C)``: the size of the terms, since
      ``P + D`` is a sum of N per-pattern complementarity terms (for L1,
      ``P + D = sum_i alpha_i max(s_i, 0) + (C - alpha_i) max(-s_i, 0)`` when ``e'alpha = 0``);
    """
    spec = BOX_DUALS[name]
    p = _box_point(spec, K, y, C, np.asarray(alpha, dtype=float), weights)
    d_lo, d_hi = distances(p.alpha, p.lo, p.hi, p.a_scale)
    iv = natural_b_interval(p.g, p.e, d_lo, d_hi, p.y_scale)
    notes = []
    b_derived = b is None
    b, b_unique = _given_or_derived_b(b, iv, notes, p.y_scale, p.f_scale)
    s = p.g + p.e * b
    vals = _nan_values()
    where: dict[str, str] = {}
    _box_feasibility(p, vals, where)
    _margin_residuals(p, s, b, vals, where)
    vals["stationarity"] = iv.rho
    where["stationarity"] = (f"no b puts every alpha_i within {iv.rho:.3g} of its KKT conditions "
                             + mvp_words(iv, lambda t: str(t), "alpha_i",
                                         "000 eqs. (10)-(11): max over I_up minus min over I_low of -e_i grad_i"))
    r_nat = natural_residual(s, d_lo, d_hi, p.y_scale)
    i = int(np.argmax(r_nat)) if r_nat.size else 0
    vals["kkt_absolute"] = float(r_nat[i]) if r_nat.size else 0.0
    if r_nat.size:
        where["kkt_absolute"] = (f"pattern {i}: alpha_{i} = {p.alpha[i]:.6g}, "
                                 + ("f(x_i) - y_i" if spec.regression else "y_i f(x_i) - 1")
                                 + spec.shift_words + f" = {s[i]:.3g} (with b = {b:.6g}): "
                                 + f"natural residual {r_nat[i]:.3g} in "
                                 + (f"units of max|y| = {p.y_scale:.3g}" if spec.regression else "margin units"))
    P, gap_abs, _ = _box_duality_gap(p, b, vals, where)
    absv = np.abs(p.v)
    obj_terms = 0.5 * float(absv @ (np.abs(K) @ absv)) + float(np.sum(np.abs(p.alpha * (y if spec.regression else 1.0)))) \
        + 0.5 * float(np.abs(p.alpha) @ np.abs(p.shift))
    floor = rounding(K.shape[0], p.f_scale) / p.y_scale
    res = Residuals(p.D, P, vals, where, b, b_derived, b_unique, p.v.copy(), notes, b_low=iv.b_low, b_high=iv.b_high,
                    unit=p.y_scale, gap_abs=gap_abs, obj_scale=obj_terms, floor=floor)
    if own_error:  # the reference's resolution needs it (one dense solve): not for every answer
        _own_error(res, p, K, s, d_lo, d_hi, 0.0)
    return res


def _own_error(res: Residuals, p: _BoxPoint, K: np.ndarray, s: np.ndarray, d_lo, d_hi, db: float) -> None:
    """The answer's own first-order error (:attr:`Residuals.coef_error`) at the best ``b`` (``b + db``): the signed
    correction of one active-set Newton step (:func:`active_set_correction`, ``Qt = diag(e) Ktilde diag(e)``; with
    no bound, LS-SVM 000 eq. (7) and 004 system (2), the exact Newton correction); the decision values move by
    ``K (e * da) + db``."""
    shift = 1.0 / (p.C * p.weights) if p.spec.shift else np.zeros(K.shape[0])
    curv = np.diag(K) + shift
    s = s + p.e * db
    out = active_set_correction(lambda: (p.e[:, None] * p.e[None, :]) * K + np.diag(shift), p.e, p.alpha,
                                s, d_lo, d_hi, p.a_scale, curv)
    if out is None:
        res.coef_error = step_error(s, d_lo, d_hi, p.a_scale, curv)
        return
    da, dbb = out
    res.coef_error, res.b_correction, res.coef_correction = p.e * da, db + dbb, True


def active_set_correction(Qt, e, alpha, s, d_lo, d_hi, width, curv):
    """One active-set Newton step from ``alpha`` (``N <= SYSTEM_N``; ``None`` above it or when it fails).

    Each variable whose diagonal step ``|s_i| / curv_i`` would reach the bound that ``s_i`` pushes it to is moved
    onto it (set ``B``, by its distance; :func:`step_error`); the others (``F``) solve the KKT conditions on ``F``
    with ``B`` moved, the bordered system ``[[Qt_FF, e_F], [e_F', 0]] [da_F; db] = -[s_F + Qt_FB da_B;
    e'(alpha + da)]`` (least squares: ``Qt`` may be singular). ``Qt`` is a callable (the dense matrix is only
    formed when it is used). Returns ``(da, db)``: how far the answer still is from the optimum, to first order
    where its active set is right.
    """
    N = alpha.shape[0]
    if N > SYSTEM_N:
        return None
    step = step_error(s, d_lo, d_hi, width, curv)
    with np.errstate(divide="ignore", invalid="ignore"):
        newton = np.where(curv > 0, np.abs(s) / np.where(curv > 0, curv, 1.0), np.inf)
    bound = newton > step  # the step is cut by the bound: move onto it
    da = np.where(bound, -np.sign(s) * step, 0.0)
    F = np.flatnonzero(~bound)
    Q = Qt()
    A = np.zeros((F.size + 1, F.size + 1))
    A[:F.size, :F.size] = Q[np.ix_(F, F)]
    A[:F.size, F.size] = e[F]
    A[F.size, :F.size] = e[F]
    rhs = -np.concatenate([s[F] + Q[F] @ da, [float(e @ (alpha + da))]])
    try:
        d = np.linalg.lstsq(A, rhs, rcond=None)[0]
    except np.linalg.LinAlgError:
        return None
    da[F] = d[:F.size]
    return da, float(d[F.size])


@dataclass
class _BoxPoint:
    """A box dual at ``alpha`` (see :func:`box_dual_residuals`): bounds ``[lo, hi]``, signs ``e``,
    ``v`` (``alpha * y`` or ``alpha``), ``Kv``, the shift ``alpha / C`` of ``Ktilde`` (``alpha / (C v_i)`` with the
    pattern weights ``weights``, all 1 unless the dual is weighted), the gradient ``g``, the dual objective ``D`` and the
    scales of the margins (``y_scale``, ``a_scale``, ``f_scale``)."""

    spec: BoxDual
    C: float
    y: np.ndarray
    alpha: np.ndarray
    lo: float
    hi: float
    e: np.ndarray
    v: np.ndarray
    y_scale: float
    a_scale: float
    Kv: np.ndarray
    shift: np.ndarray
    f_scale: float
    g: np.ndarray
    D: float
    weights: np.ndarray


def _box_point(spec: BoxDual, K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray,
               weights: np.ndarray | None = None) -> _BoxPoint:
    """The dual objective and gradient of 000 eqs. (2), (5) (004 eq. (2) for regression) at ``alpha``; a weighted
    dual's ``Ktilde`` is ``K + diag(1/(C v_i))``."""
    N = K.shape[0]
    if spec.weighted and weights is None:
        raise ValueError(f"the {spec.name} dual needs the weights v (length {N})")
    wts = np.asarray(weights, dtype=float) if spec.weighted else np.ones(N)
    lo, hi = spec.lower * C, spec.upper * C
    if spec.regression:
        e = np.ones(N)
        v = alpha
        y_scale = target_scale(y)
        const = np.abs(y)
    else:
        e = y
        v = alpha * y
        y_scale = 1.0
        const = np.ones(N)
    a_scale = C * y_scale  # alpha / a_scale is in the units of the margin
    Kv = K @ v
    shift = alpha / (C * wts) if spec.shift else np.zeros(N)
    f_scale = _terms_scale(np.abs(K) @ np.abs(v) + np.abs(shift) + const)
    if spec.regression:
        g = Kv + shift - y
        D = 0.5 * float(v @ Kv) + 0.5 * float(alpha @ shift) - float(y @ alpha)
    else:
        g = y * Kv + shift - 1.0
        D = 0.5 * float(v @ Kv) + 0.5 * float(alpha @ shift) - float(np.sum(alpha))
    return _BoxPoint(spec, C, y, alpha, lo, hi, e, v, y_scale, a_scale, Kv, shift, f_scale, g, D, wts)


def _box_feasibility(p: _BoxPoint, vals: dict, where: dict) -> None:
    """Dual feasibility (000 eq. (5); 004 eq. (2)): the box ``l <= alpha <= u`` (relative to C) and the
    equality ``e'alpha = 0``."""
    alpha, lo, hi, C = p.alpha, p.lo, p.hi, p.C
    if np.isfinite(lo) or np.isfinite(hi):
        viol = np.maximum(np.maximum(lo - alpha, alpha - hi), 0.0) / C
        i = int(np.argmax(viol))
        vals["box"] = float(viol[i])
        where["box"] = (f"alpha_{i} = {alpha[i]:.6g} is outside [{_fmt(lo)}, {_fmt(hi)}] (C = {C:g})")
    else:
        vals["box"] = float("nan")
    eq = float(p.e @ alpha)
    vals["equality"] = _rel(eq, float(np.sum(np.abs(alpha)))) if np.any(alpha) else 0.0
    where["equality"] = (f"sum_i alpha_i = {eq:.3g}, not 0" if p.spec.regression
                         else f"sum_i alpha_i y_i = {eq:.3g}, not 0") + f" (sum_i |alpha_i| = {np.sum(np.abs(alpha)):.3g})"


def _margin_residuals(p: _BoxPoint, s: np.ndarray, b: float, vals: dict, where: dict) -> None:
    """Primal feasibility (what no finite bound absorbs of ``s``; 000 eq. (7), 004 system (2)) and
    complementarity (multiplier x slack; 000 eq. (6)), both relative to ``f_scale``."""
    spec, alpha, lo, hi = p.spec, p.alpha, p.lo, p.hi
    N = alpha.shape[0]
    unabs = np.zeros(N)
    if not np.isfinite(lo):
        unabs += np.maximum(s, 0.0)
    if not np.isfinite(hi):
        unabs += np.maximum(-s, 0.0)
    i = int(np.argmax(unabs))
    unabs /= p.f_scale
    vals["primal_feasibility"] = float(unabs[i])
    if spec.constraint:
        lhs, requirement = spec.constraint
        where["primal_feasibility"] = f"pattern {i}: {lhs} = {s[i]:.3g} ({requirement})"
    t = alpha / p.a_scale
    comp = np.zeros(N)
    if np.isfinite(lo):
        comp += np.abs(t - lo / p.a_scale) * np.maximum(s, 0.0)
    if np.isfinite(hi):
        comp += np.abs(hi / p.a_scale - t) * np.maximum(-s, 0.0)
    if np.isfinite(lo) or np.isfinite(hi):
        comp /= p.f_scale
        i = int(np.argmax(comp))
        vals["complementarity"] = float(comp[i])
        need = "alpha_i = " + (_fmt(lo) if s[i] > 0 else _fmt(hi))
        where["complementarity"] = (f"pattern {i}: alpha_{i} = {alpha[i]:.6g} but y_i f(x_i) - 1"
                                    + spec.shift_words
                                    + f" = {s[i]:.3g} (with b = {b:.6g}); a nonzero margin residual needs {need}"
                                    + spec.complementarity_cite)


def _box_duality_gap(p: _BoxPoint, b: float, vals: dict, where: dict) -> tuple:
    """The primal recovered from ``(alpha, b)`` (000 eqs. (1), (3); 003 eq. (2); 004 eq. (1)) and its gap to
    the dual, relative to the size of the terms; returns ``(P, P + D, the size of the terms)``."""
    spec, y, C, alpha = p.spec, p.y, p.C, p.alpha
    f_train = p.Kv + b
    xi = (y - f_train) if spec.regression else (1.0 - y * f_train)
    reg = 0.5 * float(p.v @ p.Kv)
    if spec.loss == "hinge":
        P = reg + C * float(np.sum(np.maximum(xi, 0.0)))
    elif spec.loss == "squared_hinge":
        P = reg + 0.5 * C * float(np.sum(np.maximum(xi, 0.0) ** 2))
    elif spec.loss == "squared":
        P = reg + 0.5 * C * float(np.sum(p.weights * xi**2))
    else:
        P = reg + C * float(np.sum(np.abs(xi)))
    # relative to the magnitude of the objectives' terms (a sum of N per-pattern complementarity terms)
    loss_abs = (C * float(np.sum(np.abs(xi))) if spec.loss in ("hinge", "absolute")
                else 0.5 * C * float(np.sum(p.weights * xi**2)))
    mag = reg + loss_abs + float(np.sum(np.abs(alpha * (y if spec.regression else 1.0)))) + 0.5 * float(alpha @ p.shift)
    D = p.D
    vals["duality_gap"] = _rel(P + D, P, D, mag)
    where["duality_gap"] = f"recovered primal P = {P:.10g}, dual -D = {-D:.10g}: P - (-D) = {P + D:.3g}"
    return P, P + D, max(abs(P), abs(D), mag)


def _fmt(x: float) -> str:
    return "inf" if x == np.inf else "-inf" if x == -np.inf else f"{x:g}"


# ---------------------------------------------------------------------------------------------
# The optimal biases of a primal for a given W
# ---------------------------------------------------------------------------------------------

#: ``dP/db`` of one pattern's loss (times ``C``) at the residual ``u = z_i - b`` (``z_i = y_i - W.Phi(x_i)``) and
#: the label ``y_i`` (classification: the slack is ``xi_i = y_i u``); ``epsilon`` for the tube.
_LOSS_SLOPE = {
    "hinge": lambda u, y, eps: -y * (y * u > 0),
    "squared_hinge": lambda u, y, eps: -y * np.maximum(y * u, 0.0),
    "squared": lambda u, y, eps: -u,
    "absolute": lambda u, y, eps: -np.sign(u),
    "tube": lambda u, y, eps: -np.sign(u) * (np.abs(u) > eps),
}


def primal_b_interval(loss: str, z: np.ndarray, y: np.ndarray, epsilon: float = 0.0,
                      weights: np.ndarray | None = None) -> tuple[float, float]:
    """The biases that minimise the primal for a fixed ``W``: ``argmin_b sum_i loss(z_i - b)``, with
    ``z_i = y_i - W.Phi(x_i)`` (000 eqs. (1), (3); 003 eqs. (2), (5); 004 eq. (1); the epsilon tube of SVR);
    ``weights``: ``sum_i v_i loss(z_i - b)`` (the weighted LS-SVM).

    The primal is convex in ``b``, so its slope ``dP/db`` (:data:`_LOSS_SLOPE`) is non-decreasing; the ends of
    the interval ``{b: dP/db(b) = 0}`` are found by bisection to the last bit (piecewise-linear losses give a
    segment where the slope is exactly 0 when ``b`` is not unique; the quadratic ones a point). This is the
    set of optimal ``b`` for the optimal ``W``, whatever dual point gave ``W``: it does not depend on which
    ``alpha_i`` look bounded. ``(-inf, inf)`` ends where the slope stays 0 (no pattern's loss depends on ``b``).
    """
    slope = _LOSS_SLOPE[loss]
    if z.size == 0:
        return -np.inf, np.inf
    span = float(np.max(z) - np.min(z)) + epsilon + 1.0
    left, right = float(np.min(z)) - epsilon - span, float(np.max(z)) + epsilon + span

    def d(b: float) -> float:
        s = slope(z - b, y, epsilon)
        return float(np.sum(s if weights is None else weights * s))

    def first(pred) -> float:  # the smallest b in [left, right] with pred(b) (pred is monotone)
        lo, hi = left, right
        if pred(lo):
            return -np.inf
        if not pred(hi):
            return np.inf
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (lo, mid) if pred(mid) else (mid, hi)
        return hi

    b_low = first(lambda b: d(b) >= 0.0)
    b_high = first(lambda b: d(b) > 0.0)
    return b_low, max(b_low, b_high)


# ---------------------------------------------------------------------------------------------
# RLS (001)
# ---------------------------------------------------------------------------------------------


def _rls_dual(y, gamma: float, a: np.ndarray, Ka: np.ndarray) -> float:
    """The RLS dual objective (derived in ``svmref.formulations.rls``), ``D(a) = (m/4)||a||^2 + a'Ka/(4 gamma) - y'a``,
    with ``Ka = K @ a`` given."""
    m = y.shape[0]
    return m / 4.0 * float(a @ a) + float(a @ Ka) / (4.0 * gamma) - float(y @ a)


#: Largest N for which the RLS residual is taken modulo the null space of K (one symmetric eigendecomposition).
NULL_SPACE_N = 4000


def _modulo_null_space(K: np.ndarray, r: np.ndarray, floor: float) -> tuple[np.ndarray, float]:
    """``r`` without its component in the numerical null space of ``K`` (eigenvalues at most ``N eps max|eig|``, the
    rank threshold of ``numpy.linalg.pinv``), and the largest entry of what was removed.

    RLS minimises ``J(c)`` over ``c``; with ``K`` singular every ``c* + z`` with ``Kz = 0`` is a minimiser (the same
    ``f`` and ``J``), and the residual of 001 eq. (8) at it is ``m gamma z``: the minimisers are those whose residual
    ``r`` satisfies ``K r = 0`` (the gradient ``(2/m) K r``), so ``r`` is judged modulo the null space. Nothing is
    computed when ``r`` is already at the rounding ``floor`` or ``N > NULL_SPACE_N``."""
    n = K.shape[0]
    if n == 0 or n > NULL_SPACE_N or not isinstance(K, np.ndarray) or not float(np.max(np.abs(r))) > floor:
        return r, 0.0
    try:
        w, V = np.linalg.eigh(0.5 * (K + K.T))
    except np.linalg.LinAlgError:
        return r, 0.0
    null = np.abs(w) <= n * ROUNDOFF * float(np.max(np.abs(w)))
    if not np.any(null):
        return r, 0.0
    Vn = V[:, null]
    part = Vn @ (Vn.T @ r)
    return r - part, float(np.max(np.abs(part)))


def rls_residuals(K: np.ndarray, y: np.ndarray, gamma: float, c: np.ndarray, own_error: bool = False) -> Residuals:
    r"""Residuals of RLS at ``c`` (001 eqs. (7)-(9)).

    * objective (001, eq. (7) with ``f = sum_i c_i K(x_i, .)``): ``J(c) = (1/m)||y - Kc||^2 + gamma c'Kc``;
    * ``stationarity = ||(m gamma I + K) c - y||_inf / max_i (|y_i| + sum_j |K_ij c_j| + m gamma |c_i|)``:
      the system (8) (relative to the size of its terms); ``kkt_absolute`` the same residual in units of
      ``max|y|`` (:func:`target_scale`); the system implies ``grad J = (2/m) K ((K + m gamma I) c - y) = 0``, and
      where ``K`` is singular every minimiser ``c* + z`` (``Kz = 0``: the same ``f`` and ``J``) leaves the residual
      ``m gamma z``, so the residual is taken modulo the null space of ``K`` (:func:`_modulo_null_space`);
    * dual (derived in ``svmref.formulations.rls``): ``min (m/4)||a||^2 + a'Ka/(4 gamma) - y'a`` with
      ``a = 2 gamma c = 2 (y - Kc) / m`` at the optimum; ``duality_gap = (J(c) + D(a)) / max(|J|, |D|)`` at the
      better of the two points (the second does not move with a null-space component of ``c``);
    * box, equality, primal feasibility and complementarity: not applicable (no constraints).
    """
    c = np.asarray(c, dtype=float)
    m = K.shape[0]
    Kc = K @ c
    J = float(np.sum((y - Kc) ** 2)) / m + gamma * float(c @ Kc)
    r = Kc + m * gamma * c - y
    terms = _terms_scale(np.abs(y) + np.abs(K) @ np.abs(c) + m * gamma * np.abs(c))
    unit = target_scale(y)
    r, dropped = _modulo_null_space(K, r, rounding(m, terms))
    vals = _nan_values()
    where = {}
    i = int(np.argmax(np.abs(r)))
    vals["stationarity"] = float(abs(r[i])) / terms
    vals["kkt_absolute"] = float(abs(r[i])) / unit
    null = (f"; its part in the null space of K ({dropped:.3g}), which moves neither f nor J, is left out"
            if dropped > 0 else "")
    where["kkt_absolute"] = (f"row {i} of (m gamma I + K) c = y (001 eq. (8)): residual {r[i]:.3g}, "
                             f"{abs(r[i]) / unit:.3g} in units of max|y| = {unit:.3g}" + null)
    where["stationarity"] = f"row {i} of (m gamma I + K) c = y (001 eq. (8)): residual {r[i]:.3g}" + null
    # two dual points, each a bound by weak duality: a = 2 gamma c, and a = 2 (y - Kc) / m, which a null-space
    # component of c does not move (the two agree at the optimum, where (K + m gamma I) c = y)
    a2 = 2.0 * (y - Kc) / m
    D = min(_rls_dual(y, gamma, 2.0 * gamma * c, 2.0 * gamma * Kc), _rls_dual(y, gamma, a2, K @ a2))
    vals["duality_gap"] = _rel(J + D, J, D)
    where["duality_gap"] = f"J(c) = {J:.10g}, the better of the dual points a = 2 gamma c, 2(y - Kc)/m gives -D = {-D:.10g}"
    coef_error = None
    if own_error:  # the first-order error of c: the Newton correction that the residual of (8) asks for
        try:
            coef_error = np.linalg.solve(K + m * gamma * np.eye(m), r)
        except np.linalg.LinAlgError:
            coef_error = np.full(m, np.inf)
    return Residuals(J, J, vals, where, 0.0, False, True, c.copy(), [], unit=unit, gap_abs=J + D,
                     obj_scale=max(abs(J), abs(D)), floor=rounding(m, terms) / unit, coef_error=coef_error,
                     coef_correction=True)


# ---------------------------------------------------------------------------------------------
# Sparse LS-SVM (004, eq. (3) and Algorithm 1)
# ---------------------------------------------------------------------------------------------


def _weighted_objectives(K, y, C: float, a2, xi, n_sv: int) -> tuple[float, float]:
    """``(P, D)`` of 004 eq. (3) at the weights ``diag(lam)^-1 = diag(a2)``: the primal at the residuals ``xi``,
    ``P = #SV/2 + C/2 ||xi||^2``, and the dual ``D(beta) = 1/2 beta'(K diag(a2) K + I/C) beta - y'beta`` at the dual
    feasible ``beta = C (xi - mean(xi))`` (``sum_i beta_i = 0``; :func:`sparse_ls_svm_residuals` says why)."""
    P = 0.5 * n_sv + 0.5 * C * float(xi @ xi)
    beta0 = C * (xi - np.mean(xi))
    Kb0 = K @ beta0
    return P, 0.5 * float(Kb0 @ (a2 * Kb0)) + 0.5 / C * float(beta0 @ beta0) - float(y @ beta0)


def sparse_ls_svm_residuals(K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray, b: float | None) -> Residuals:
    r"""Residuals of the ISLS-SVM fixed point (004, eq. (3) and Algorithm 1) at ``(alpha, b)``.

    Problem (3) is convex for *fixed* weights; the whole procedure is not. What can be checked is
    that ``(alpha, b)`` is a fixed point of Algorithm 1, i.e. that it solves (3) for the weights it
    implies, ``lam_i = 1/alpha_i^2``.

    Support vectors: ``|alpha_i| > SV_ATOL * y_scale`` (004 §4 counts a pattern as a SV when
    ``|alpha_i| > 1e-6``; ``y_scale = max(1, max|y|)``: the paper's absolute threshold for targets of size up
    to 1, scaled with larger targets; it classifies coefficients, it is not a tolerance). The others are taken as exactly 0
    (``lam_i = inf``: Algorithm 1 sends them to 0 quadratically, ``alpha_i <- alpha_i^2 (K beta)_i``),
    which keeps (3) continuous: ``lam_i alpha_i^2 = 1`` for every nonzero ``alpha_i``, however small.

    The KKT conditions of (3) (004 §3) at the pruned ``alpha``, with ``xi = y - K alpha - b`` (the
    constraint, so primal feasibility holds by construction) and ``beta = C xi``:

    * ``dL/db = 0``: ``sum_i beta_i = 0``; ``equality = |sum_i xi_i| / sum_i |xi_i|``
      (when ``b`` is not given it is the value that satisfies it, ``b = mean(y - K alpha)``);
    * ``dL/dalpha_i = 0``: ``lam_i alpha_i = (K beta)_i``; multiplied by ``alpha_i^2`` so that
      ``alpha_i = 0`` (``lam_i = inf``) is allowed: ``alpha_i = alpha_i^2 (K beta)_i``, which is exactly
      the update ``alpha <- diag(lam)^-1 K beta`` of Algorithm 1 holding still;
      ``stationarity = max_i (|alpha_i - alpha_i^2 (K beta)_i| - r_i)_+ / max_i |alpha_i|``, with ``r_i`` the
      rounding of computing that step from ``(alpha, b)`` (of ``xi``, amplified by ``C`` and ``K``);
    * objective of (3) at the implied weights: ``P = 1/2 sum_SV lam_i alpha_i^2 + C/2 ||xi||^2
      = #SV/2 + C/2 ||xi||^2``; its dual (``svmref.formulations.sparse_ls_svm``)
      ``D(beta) = 1/2 beta'(K diag(alpha^2) K + I/C) beta - y'beta`` (``diag(lam)^-1 = diag(alpha^2)``) on
      ``sum_i beta_i = 0`` (the multiplier of ``b``: the Lagrangian is unbounded below in ``b`` elsewhere);
      ``duality_gap = (P + D(beta_0)) / max(|P|, |D|)`` at ``beta_0 = C (xi - mean(xi))``, the point ``C xi`` made
      dual feasible. At ``C xi`` itself the gap would carry ``b sum_i beta_i`` (the gradient of ``D`` at a fixed
      point is ``-b 1``), so that one rounding unit of ``b`` moves it by ``N C |b| u``: 1.4e-5 relative on the
      three-point case of ``tests/cases/`` (``b = 2707``, ``C = 5652``), where ``beta_0`` gives 1e-12 on every
      floating-point path. The equality itself is judged by ``equality``.
    """
    alpha = np.asarray(alpha, dtype=float)
    N = K.shape[0]
    y_scale = max(1.0, float(np.max(np.abs(y))))
    sv = np.abs(alpha) > SV_ATOL * y_scale
    notes = []
    if np.any(alpha[~sv] != 0.0):
        notes.append(f"{int(np.sum((alpha != 0) & ~sv))} coefficient(s) with 0 < |alpha_i| <= {SV_ATOL:g} "
                     "taken as 0 (not support vectors, 004 §4)")
    alpha = np.where(sv, alpha, 0.0)
    Ka = K @ alpha
    b_derived = b is None
    if b is None:
        b = float(np.mean(y - Ka))
        notes.append(f"b was not given: derived from sum_i beta_i = 0 (004 §3) as b = {b:.6g}")
    b = float(b)
    xi = y - Ka - b
    beta = C * xi
    vals = _nan_values()
    where = {}
    vals["primal_feasibility"] = 0.0
    eq = float(np.sum(xi))
    vals["equality"] = _rel(eq, float(np.sum(np.abs(xi)))) if np.any(xi) else 0.0
    where["equality"] = f"sum_i beta_i = C sum_i xi_i = {C * eq:.3g}, not 0 (004 §3, dL/db = 0)"
    a2 = alpha**2
    Kb = K @ beta
    # the rounding of one step alpha_i^2 (K beta)_i computed from (alpha, b): beta = C xi carries the rounding of
    # xi = y - K alpha - b, (N + 2) eps (|y| + |K||alpha| + |b|) times C, and K beta adds its own; a difference
    # within it cannot be told from a fixed point (K near 11' and a large C amplify it: 1e-5 relative, seen)
    absK = np.abs(K)
    beta_err = C * (N + 2) * ROUNDOFF * (np.abs(y) + absK @ np.abs(alpha) + abs(b))
    step_round = a2 * (absK @ beta_err + (N + 2) * ROUNDOFF * (absK @ np.abs(beta)))
    st = np.maximum(np.abs(alpha - a2 * Kb) - step_round, 0.0)
    amax = float(np.max(np.abs(alpha))) if N else 0.0
    i = int(np.argmax(st))
    vals["stationarity"] = float(st[i]) / amax if amax > 0 else 0.0
    where["stationarity"] = (f"alpha_{i} = {alpha[i]:.6g} but one step of Algorithm 1 with lam = 1/alpha^2 "
                             f"gives {a2[i] * Kb[i]:.6g} (not a fixed point of 004 Algorithm 1)")
    P, D = _weighted_objectives(K, y, C, a2, xi, int(np.sum(sv)))
    vals["duality_gap"] = _rel(P + D, P, D)
    where["duality_gap"] = (f"P = {P:.10g} (of (3) at lam = 1/alpha^2), dual -D(beta) = {-D:.10g} at the dual feasible "
                            "beta = C (xi - mean(xi))")
    if amax == 0.0:
        notes.append("alpha is identically 0: the trivial fixed point (Algorithm 1 reaches it when C is small)")
    return Residuals(P, P, vals, where, b, b_derived, True, alpha.copy(), notes, unit=target_scale(y), gap_abs=P + D,
                     obj_scale=max(abs(P), abs(D)), floor=rounding(N, _terms_scale(np.abs(y) + np.abs(K) @ np.abs(alpha)))
                     / target_scale(y))


# ---------------------------------------------------------------------------------------------
# Support features machine (003)
# ---------------------------------------------------------------------------------------------


def soft_threshold_a(X: np.ndarray, y: np.ndarray, lam: np.ndarray, mu: float) -> np.ndarray:
    """003, eq. (8): ``a_i = sign(w_i) max(0, |w_i| - mu) / (2(1 - mu))`` with ``w = X'(lam * y)`` (eq. (6)).

    (The extraction's ``a_i = (|w_i| - mu)/|w_i| w_i`` lost the factor ``1/(2(1 - mu))``; rebuilt
    from the three cases of (8).)
    """
    w = X.T @ (lam * y)
    return np.sign(w) * np.maximum(0.0, np.abs(w) - mu) / (2.0 * (1.0 - mu))


def support_features_residuals(X, y, C, mu, lam=None, a=None, b=None, eps: float = EPS_ACTIVE) -> Residuals:
    r"""Residuals of the support features machine (003) at whatever the solver gave.

    * dual (003, eq. (10)), maximised: ``W(lam) = sum_j lam_j - 1/(4(1-mu)) sum_i max(0, |w_i| - mu)^2``,
      ``w = X'(lam * y)`` (eq. (6)); its gradient is ``dW/dlam_j = 1 - y_j x_j'a(lam)`` with ``a(lam)``
      of eq. (8) (003 §2.6), so ``g = y * (X a(lam)) - 1`` is the gradient of ``-W`` and the box
      residuals, ``b`` interval and maximal violating pair are those of the L1-SVM with ``W = a``;
    * primal (003, eq. (5)): ``P(a, b) = sum_i ((1-mu) a_i^2 + mu |a_i|) + C sum_j max(0, 1 - y_j(a'x_j + b))``;
    * ``stationarity``: the b-free natural residual of ``lam`` (:func:`natural_b_interval`, margin units);
      ``kkt_absolute`` the natural residual at the given ``b``;
    * with ``lam`` and ``a`` both given, ``stationarity`` also takes ``max_i |a_i - a_i(lam)| / max|a(lam)|``
      (floored at the rounding of eq. (8))
      (the subgradient condition ``0 in 2(1-mu) a_i + mu d|a_i| - w_i`` solved by (8));
    * complementarity (003 §2.3): ``lam_j (y_j(a'x_j + b) - 1 + delta_j) = 0``, ``(C - lam_j) delta_j = 0``,
      in margin units as for the L1-SVM;
    * ``duality_gap = (P - W) / max(|P|, |W|, mag)`` (``p* = W*``), ``mag`` the size of the terms
      ``sum((1-mu) a^2 + mu|a|) + C sum_j |1 - y_j(a'x_j + b)| + sum_j lam_j``;
    * complementarity is relative to ``f_scale = max_j (sum_i |x_ji a_i| + 1)``, the size of the terms of the margin.

    With only ``a, b`` (a primal answer) the dual residuals are ``inf``-free ``nan`` (not applicable) and the
    objective is ``P``; with ``lam`` the objective is ``W(lam)``.
    """
    vals = _nan_values()
    where: dict[str, str] = {}
    notes = []
    if lam is not None:
        lam = np.asarray(lam, dtype=float)
        a, b, Wd, iv, b_derived, b_unique, coef_error, floor = _features_dual(X, y, C, mu, lam, a, b, eps, vals, where,
                                                                              notes)
        m, M = iv.b_low, iv.b_high
    else:
        m = M = float("nan")
        coef_error, floor = None, 0.0
        if a is None:
            raise ValueError("the answer has neither lam nor a")
        a = np.asarray(a, dtype=float)
        if b is None:
            raise ValueError("a primal answer (a without lam) needs b")
        Wd = float("nan")
        b_derived, b_unique = False, True
    a = np.asarray(a, dtype=float)
    b = float(b)
    vals["primal_feasibility"] = 0.0  # delta_j = max(0, 1 - y_j(a'x_j + b)) is feasible by construction
    delta = np.maximum(0.0, 1.0 - y * (X @ a + b))
    P = float(np.sum((1.0 - mu) * a**2 + mu * np.abs(a))) + C * float(np.sum(delta))
    if lam is not None:
        # relative to the size of the terms (P - W is a sum of N complementarity terms, as for the L1-SVM)
        mag = float(np.sum((1.0 - mu) * a**2 + mu * np.abs(a))) + C * float(np.sum(np.abs(1.0 - y * (X @ a + b)))) \
            + float(np.sum(np.abs(lam)))
        vals["duality_gap"] = _rel(P - Wd, P, Wd, mag)
        where["duality_gap"] = f"primal (5) P = {P:.10g}, dual (10) W = {Wd:.10g}"
        obj, gap_abs, obj_scale = Wd, P - Wd, max(abs(P), abs(Wd), mag)
    else:
        obj, gap_abs, obj_scale = P, float("nan"), abs(P)
    return Residuals(obj, P, vals, where, b, b_derived, b_unique, a.copy(), notes, b_low=m, b_high=M, gap_abs=gap_abs,
                     obj_scale=obj_scale, floor=floor, coef_error=coef_error)


def _features_dual(X, y, C, mu, lam, a, b, eps, vals: dict, where: dict, notes: list):
    """The dual residuals of the support features machine at ``lam`` (003 eqs. (6), (8), (10), §2.3; see
    :func:`support_features_residuals`). Returns ``(a, b, W, interval, b_derived, b_unique, coef_error, floor)``
    with ``a`` and ``b`` recovered from ``lam`` where not given."""
    a_given = a is not None
    a_lam = soft_threshold_a(X, y, lam, mu)
    w = X.T @ (lam * y)
    Wd = float(np.sum(lam)) - float(np.sum(np.maximum(0.0, np.abs(w) - mu) ** 2)) / (4.0 * (1.0 - mu))
    g = y * (X @ a_lam) - 1.0
    d_lo, d_hi = distances(lam, 0.0, C, C)
    iv = natural_b_interval(g, y, d_lo, d_hi, 1.0)
    f_scale = _terms_scale(np.abs(X) @ np.abs(a_lam) + 1.0)
    b_derived = b is None
    b, b_unique = _given_or_derived_b(b, iv, notes, 1.0, f_scale)
    if a is None:
        a = a_lam
        notes.append("a was not given: recovered from lam by 003 eq. (8)")
    viol = np.maximum(np.maximum(-lam, lam - C), 0.0) / C
    i = int(np.argmax(viol))
    vals["box"] = float(viol[i])
    where["box"] = f"lam_{i} = {lam[i]:.6g} is outside [0, {C:g}] (C = {C:g})"
    eq = float(y @ lam)
    vals["equality"] = _rel(eq, float(np.sum(np.abs(lam)))) if np.any(lam) else 0.0
    where["equality"] = f"sum_j y_j lam_j = {eq:.3g}, not 0 (003 eq. (10))"
    vals["stationarity"] = iv.rho
    where["stationarity"] = (f"no b puts every lam_j within {iv.rho:.3g} of its KKT conditions "
                             + mvp_words(iv, lambda t: str(t), "lam_j", "of dual (10)"))
    N = X.shape[0]
    w_unit = (float(np.max(np.abs(w))) + mu) / (2.0 * (1.0 - mu)) if w.size else 0.0
    if a_given:
        a = np.asarray(a, dtype=float)
        # relative to the size of a(lam), floored at the rounding of eq. (8); a difference within the rounding of
        # computing a_k(lam) itself ((N + 2) u sum_j |lam_j x_jk| / (2(1 - mu)): w = X'(y lam) can cancel terms far
        # larger than itself) cannot be told from 0 (a solver may put a feature on the threshold at a_k = 0)
        a_round = (N + 2) * ROUNDOFF * (np.abs(X).T @ np.abs(lam)) / (2.0 * (1.0 - mu))
        da = np.maximum(np.abs(a - a_lam) - a_round, 0.0) / max(float(np.max(np.abs(a_lam))), rounding(N, w_unit),
                                                                 float(np.finfo(float).tiny))
        i = int(np.argmax(da))
        if da[i] > vals["stationarity"]:
            vals["stationarity"] = float(da[i])
            where["stationarity"] = (f"a_{i} = {a[i]:.6g} but 003 eq. (8) at the given lam gives {a_lam[i]:.6g}")
    s = y * (X @ a + b) - 1.0
    r_nat = natural_residual(s, d_lo, d_hi, 1.0)  # s_j = g_j + y_j b: the Lagrangian's derivative in lam_j
    i = int(np.argmax(r_nat))
    vals["kkt_absolute"] = float(r_nat[i])
    where["kkt_absolute"] = (f"pattern {i}: lam_{i} = {lam[i]:.6g}, y_i(a'x_i + b) - 1 = {s[i]:.3g} (with b = {b:.6g}): "
                             f"natural residual {r_nat[i]:.3g} in margin units")
    t = lam / C
    comp = (t * np.maximum(s, 0.0) + np.abs(1.0 - t) * np.maximum(-s, 0.0)) / f_scale
    i = int(np.argmax(comp))
    vals["complementarity"] = float(comp[i])
    where["complementarity"] = (f"pattern {i}: lam_{i} = {lam[i]:.6g} but y_i(a'x_i + b) - 1 = {s[i]:.3g} "
                                f"(with b = {b:.6g}; 003 §2.3)")
    curv = np.sum(X * X, axis=1) / (2.0 * (1.0 - mu))  # the curvature of -W in lam_j where every feature is active
    dlam = step_error(g + y * _best_b(iv, b), d_lo, d_hi, C, curv)
    coef_error = np.abs(X).T @ dlam / (2.0 * (1.0 - mu))  # eq. (8) is 1/(2(1 - mu))-Lipschitz in w
    return a, b, Wd, iv, b_derived, b_unique, coef_error, rounding(N, f_scale)


# ---------------------------------------------------------------------------------------------
# epsilon-SVR (Vapnik; LIBSVM's epsilon-SVR)
# ---------------------------------------------------------------------------------------------


def svr_residuals(K: np.ndarray, y: np.ndarray, hyper: dict, answer: dict, eps: float = EPS_ACTIVE,
                  own_error: bool = False) -> Residuals:
    r"""Residuals of the epsilon-SVR dual at ``(beta, b)``, ``beta = alpha^+ - alpha^-`` (length N).

    The dual (derivation in ``docs/formulations/svr.md``; Vapnik's SVM recalled in 002, written as
    LIBSVM's ``solve_epsilon_svr``), a minimisation::

        min 1/2 (a+ - a-)'K(a+ - a-) + epsilon sum(a+ + a-) - y'(a+ - a-)
        s.t. sum(a+ - a-) = 0,  0 <= a+_i, a-_i <= C,

    is evaluated at the split ``a+ = max(beta, 0)``, ``a- = max(-beta, 0)`` (``a+_i a-_i = 0`` at any
    optimum with ``epsilon > 0``, and the best split for ``epsilon = 0``), i.e.
    ``D(beta) = 1/2 beta'K beta + epsilon ||beta||_1 - y'beta``. With ``r_i = y_i - f(x_i)``,
    ``f = K beta + b``:

    * ``box = max_i max(|beta_i| - C, 0) / C`` (``-C <= beta_i <= C``);
    * ``equality = |sum_i beta_i| / sum_i |beta_i|``;
    * the 2N-variable problem (signs ``s = [+1; -1]``, gradient ``g = [K beta + epsilon - y;
      -(K beta) + epsilon + y]``, each variable in ``[0, C]``) gives the b-free natural residual of
      :func:`natural_b_interval` (units of ``max|y|``): ``stationarity``; ``kkt_absolute`` the natural residual at
      the given ``b``; ``b`` in ``[b_low, b_high]`` means ``|r_i| <= epsilon`` where
      ``beta_i = 0``, ``r_i = +epsilon`` where ``0 < beta_i < C``, ``r_i >= epsilon`` at ``beta_i = C``
      (and the mirror for negative ``beta_i``);
    * ``complementarity`` (multiplier x slack, units of y; docs/formulations/svr.md §5):
      ``max_i (a+_i/C) max(epsilon - r_i, 0) + (1 - a+_i/C) max(r_i - epsilon, 0)`` and the mirror
      ``(a-_i/C) max(epsilon + r_i, 0) + (1 - a-_i/C) max(-r_i - epsilon, 0)``;
    * ``primal_feasibility = 0``: the recovered slacks ``xi = max(0, r - epsilon)``,
      ``xi* = max(0, -r - epsilon)`` are the optimal ones for ``(W, b)``;
    * ``f_scale = max_i (|y_i| + sum_j |K_ij beta_j| + epsilon)`` (the size of the terms of the tube's residual), the
      denominator of ``complementarity``;
    * recovered primal ``P = 1/2 beta'K beta + C sum_i max(0, |r_i| - epsilon)``; strong duality ``p* = -d*``,
      ``duality_gap = (P + D) / max(|P|, |D|, mag)`` with ``mag = 1/2 beta'K beta + C sum(xi + xi*)
      + epsilon ||beta||_1 + sum_i |y_i beta_i|`` (``P + D = sum_i C(xi_i + xi*_i) + epsilon |beta_i| - beta_i r_i``
      when ``sum beta = 0``: N per-pattern complementarity terms).
    """
    C = float(hyper["C"])
    epsilon = float(hyper["epsilon"])
    beta = np.asarray(answer["alpha"], dtype=float)
    b = answer.get("b")
    N = K.shape[0]
    y_scale = target_scale(y)
    Kb = K @ beta
    f_scale = _terms_scale(np.abs(y) + np.abs(K) @ np.abs(beta) + epsilon)
    ap, am = np.maximum(beta, 0.0), np.maximum(-beta, 0.0)
    D = 0.5 * float(beta @ Kb) + epsilon * float(np.sum(np.abs(beta))) - float(y @ beta)
    # the 2N-variable engine problem: beta2 = [a+; a-], e = s = [+1; -1], g = s * (K beta) + epsilon - s * y
    s2 = np.concatenate([np.ones(N), -np.ones(N)])
    g2 = np.concatenate([Kb + epsilon - y, -Kb + epsilon + y])
    d_lo, d_hi = distances(np.concatenate([ap, am]), 0.0, C, C)
    iv = natural_b_interval(g2, s2, d_lo, d_hi, y_scale)
    notes = []
    b_derived = b is None
    b, b_unique = _given_or_derived_b(b, iv, notes, y_scale, f_scale)
    r = y - Kb - b
    vals = _nan_values()
    where: dict[str, str] = {}
    _svr_feasibility(beta, C, vals, where)
    vals["primal_feasibility"] = 0.0
    _tube_complementarity(beta, r, C, epsilon, b, f_scale, vals, where)
    vals["stationarity"] = iv.rho

    def _var(t):
        return "-" if t < 0 else (f"alpha^+_{t}" if t < N else f"alpha^-_{t - N}")

    where["stationarity"] = (f"no b puts every alpha^+-_i within {iv.rho:.3g} of its KKT conditions "
                             + mvp_words(iv, _var, "alpha^+-_i", "of the 2N-variable dual; max over I_up minus min "
                                         "over I_low of -s_t grad_t"))
    r_nat = natural_residual(g2 + s2 * b, d_lo, d_hi, y_scale)
    t = int(np.argmax(r_nat)) if N else 0
    vals["kkt_absolute"] = float(r_nat[t]) if N else 0.0
    if N:
        where["kkt_absolute"] = (f"{_var(t)}: y_i - f(x_i) = {r[t % N]:.3g} (with b = {b:.6g}, epsilon = {epsilon:g}): "
                                 f"natural residual {r_nat[t]:.3g} in units of max|y| = {y_scale:.3g}")
    coef_error, b_corr, signed = _svr_own_error(K, s2, np.concatenate([ap, am]), g2 + s2 * b, d_lo, d_hi, C, own_error)
    P = _svr_gap(beta, Kb, y, D, r, C, epsilon, vals, where)
    obj_terms = 0.5 * float(np.abs(beta) @ np.abs(K) @ np.abs(beta)) + epsilon * float(np.sum(np.abs(beta))) \
        + float(np.sum(np.abs(y * beta)))
    return Residuals(D, P, vals, where, b, b_derived, b_unique, beta.copy(), notes, b_low=iv.b_low, b_high=iv.b_high,
                     unit=y_scale, gap_abs=P + D, obj_scale=obj_terms, floor=rounding(N, f_scale) / y_scale,
                     coef_error=coef_error, coef_correction=signed, b_correction=b_corr)


def _svr_gap(beta, Kb, y, D: float, r, C: float, epsilon: float, vals: dict, where: dict) -> float:
    """The recovered primal ``P = 1/2 beta'K beta + C sum max(0, |r_i| - epsilon)`` and the duality gap, relative to
    the size of the terms (see :func:`svr_residuals`); returns ``P``."""
    reg = 0.5 * float(beta @ Kb)
    xi_sum = float(np.sum(np.maximum(np.abs(r) - epsilon, 0.0)))
    P = reg + C * xi_sum
    mag = reg + C * xi_sum + epsilon * float(np.sum(np.abs(beta))) + float(np.sum(np.abs(y * beta)))
    vals["duality_gap"] = _rel(P + D, P, D, mag)
    where["duality_gap"] = f"recovered primal P = {P:.10g}, dual -D = {-D:.10g}: P - (-D) = {P + D:.3g}"
    return P


def _svr_own_error(K, s2, a2, sb, d_lo, d_hi, C: float, wanted: bool = True):
    """The answer's own first-order error in ``beta = alpha^+ - alpha^-`` (:func:`active_set_correction` on the
    2N-variable dual, whose Hessian is ``[[K, -K], [-K, K]]``): ``(coef_error, b_correction, signed)``;
    ``(None, 0, False)`` unless ``wanted``."""
    if not wanted:
        return None, 0.0, False
    N = K.shape[0]
    curv2 = np.concatenate([np.diag(K), np.diag(K)])
    out = active_set_correction(lambda: np.block([[K, -K], [-K, K]]), s2, a2, sb, d_lo, d_hi, C, curv2)
    if out is None:
        dab = step_error(sb, d_lo, d_hi, C, curv2)
        return dab[:N] + dab[N:], 0.0, False
    return out[0][:N] - out[0][N:], out[1], True


def _svr_feasibility(beta: np.ndarray, C: float, vals: dict, where: dict) -> None:
    """Dual feasibility of epsilon-SVR: ``-C <= beta_i <= C`` (relative to C) and ``sum_i beta_i = 0``."""
    N = beta.shape[0]
    viol = np.maximum(np.abs(beta) - C, 0.0) / C
    i = int(np.argmax(viol)) if N else 0
    vals["box"] = float(viol[i]) if N else 0.0
    if N:
        where["box"] = f"alpha_{i} = alpha^+_{i} - alpha^-_{i} = {beta[i]:.6g} is outside [-{C:g}, {C:g}] (C = {C:g})"
    eq = float(np.sum(beta))
    vals["equality"] = _rel(eq, float(np.sum(np.abs(beta)))) if np.any(beta) else 0.0
    where["equality"] = f"sum_i alpha_i = {eq:.3g}, not 0 (sum_i |alpha_i| = {np.sum(np.abs(beta)):.3g})"


def _tube_complementarity(beta, r, C: float, epsilon: float, b: float, f_scale: float, vals: dict, where: dict) -> float:
    """Multiplier x slack of the epsilon tube (docs/formulations/svr.md §5, see :func:`svr_residuals`), relative to
    ``f_scale``; returns the largest in the units of y."""
    N = beta.shape[0]
    ap, am = np.maximum(beta, 0.0), np.maximum(-beta, 0.0)
    tp, tm = ap / C, am / C
    comp_p = tp * np.maximum(epsilon - r, 0.0) + np.abs(1.0 - tp) * np.maximum(r - epsilon, 0.0)
    comp_m = tm * np.maximum(epsilon + r, 0.0) + np.abs(1.0 - tm) * np.maximum(-r - epsilon, 0.0)
    comp = np.maximum(comp_p, comp_m)
    i = int(np.argmax(comp)) if N else 0
    cmax = float(comp[i]) if N else 0.0
    vals["complementarity"] = cmax / f_scale
    if N:
        need = ("alpha_i = C (r_i > epsilon)" if r[i] > epsilon else "alpha_i = -C (r_i < -epsilon)"
                if r[i] < -epsilon else ("alpha_i > 0 only where r_i = epsilon" if beta[i] > 0 else
                                         "alpha_i < 0 only where r_i = -epsilon"))
        where["complementarity"] = (f"pattern {i}: alpha_{i} = {beta[i]:.6g} but the residual r_i = y_i - f(x_i) = "
                                    f"{r[i]:.3g} (with b = {b:.6g}, epsilon = {epsilon:g}); the epsilon tube needs {need}")
    return cmax


# ---------------------------------------------------------------------------------------------
# The L1-/L2-SVM with the bias in the penalty (LIBLINEAR, LinearSVC): svmref.formulations.regularised_bias
# ---------------------------------------------------------------------------------------------


def regularised_bias_residuals(X, y, C, B, loss: str, alpha=None, w=None, b=None) -> Residuals:
    r"""Residuals of the SVM with the bias in the penalty (:mod:`svmref.formulations.regularised_bias`: 003 eqs.
    (2)-(3) and 000 §1 with ``1/2 b^2 / B^2`` in the primal; the dual derived there) on the features ``X``, at a dual
    answer ``alpha``, a primal answer ``(w, b)``, or both.

    * primal: ``P(w, b) = 1/2 ||w||^2 + 1/2 b^2 / B^2 + C sum_i xi_i`` (``loss="hinge"``) or ``... + C/2 sum_i xi_i^2``
      (``"squared_hinge"``), ``xi_i = max(0, 1 - y_i (w'x_i + b))`` the optimal slacks; ``B = 0``: no bias (``b``
      must be 0);
    * dual, minimised: ``D(alpha) = 1/2 ||w(alpha)||^2 + 1/2 b(alpha)^2 / B^2 - sum alpha [+ ||alpha||^2/(2C)]`` with
      ``w(alpha) = X'(y alpha)``, ``b(alpha) = B^2 y'alpha`` (no equality constraint: ``b`` is fixed by alpha);
      ``p* = -D*``;
    * ``box``: ``max_i max(-alpha_i, alpha_i - C [hinge], 0) / C``; ``equality`` does not apply (``nan``);
    * ``stationarity``: the natural residual of the box dual at alpha (margin units; ``s_i = y_i f_i - 1
      [+ alpha_i / C]``, ``f = X w(alpha) + b(alpha)``), and, where both are given, how far ``(w, b)`` is from
      ``(w(alpha), b(alpha))`` relative to ``max(||w(alpha)||_inf, |b(alpha)|)``;
    * ``complementarity``: as for the L1-/L2-SVM (:func:`box_dual_residuals`);
    * ``duality_gap = (P + D) / max(|P|, |D|, mag)``, ``P`` at the answer's own ``(w, b)`` where given.

    The objective is ``-D(alpha)`` with a dual answer (so that it is ``p*`` at the optimum), else ``P(w, b)``: a
    primal answer alone has no dual residuals (``nan``), and is judged by its objective and decision values, which
    are unique (the primal is strongly convex in ``(w, b/B)``); for the L2 loss, which is smooth, its
    ``stationarity`` is the primal gradient with the multipliers it implies, ``alpha = C xi``.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    sq = loss == "squared_hinge"
    vals, where, notes = _nan_values(), {}, []
    if alpha is None and (w is None or b is None):
        raise ValueError("the answer has neither alpha nor both w and b")
    D = float("nan")
    if alpha is not None:
        alpha = np.asarray(alpha, dtype=float)
        v = y * alpha
        w_a, b_a = X.T @ v, B * B * float(np.sum(v))
        D = _regularised_bias_dual(X, y, C, B, alpha, w_a, b_a, sq, vals, where)
        if w is None:
            notes.append("w and b were not given: w = X'(y alpha), b = B^2 y'alpha")
            w, b = w_a, b_a
        else:
            scale_b = B if B > 0 else 1.0  # compared in (w, v), v = b / B, where the primal's curvature is 1
            ref = max(float(np.max(np.abs(w_a), initial=0.0)), abs(b_a) / scale_b, float(np.finfo(float).tiny))
            off = max(float(np.max(np.abs(np.asarray(w, dtype=float) - w_a), initial=0.0)),
                      abs(float(b) - b_a) / scale_b) / ref
            vals["stationarity"] = max(vals["stationarity"], off)
    w, b = np.asarray(w, dtype=float), float(b)
    f = X @ w + b
    m = 1.0 - y * f
    xi = np.maximum(m, 0.0)
    if B > 0:
        reg = 0.5 * float(w @ w) + 0.5 * (b / B) ** 2
    else:
        reg = 0.5 * float(w @ w) + (0.0 if b == 0.0 else float("inf"))
        if b != 0.0:
            notes.append(f"b = {b:.6g} but bias_scale B = 0 (no bias): the primal objective is infinite")
    P = reg + (0.5 * C * float(xi @ xi) if sq else C * float(np.sum(xi)))
    f_terms = np.abs(X) @ np.abs(w) + abs(b)
    f_scale = _terms_scale(f_terms + 1.0)
    floor = rounding(X.shape[1] + 1, f_scale)
    if alpha is not None:  # f from alpha: X X'(y alpha) + B^2 y'alpha, whose terms can be far larger than f's
        a_abs = np.abs(alpha)
        floor = max(floor, rounding(X.shape[0] + X.shape[1], _terms_scale(
            np.abs(X) @ (np.abs(X).T @ a_abs) + B * B * float(np.sum(a_abs)) + 1.0)))
    # the size of the terms of f as they enter P through the loss (slope C, or C xi_i): with a large C or B their
    # rounding, not P's own terms, is the floor of the objective
    f_mag = C * float(np.sum((xi if sq else (m > 0.0)) * f_terms))
    if alpha is None:
        if sq:  # the L2 loss is smooth: the primal's gradient, with its implied multipliers alpha = C xi
            _primal_stationarity(X, y, C, B, w, b, xi, vals, where)
        return Residuals(P, P, vals, where, b, False, True, w.copy(), notes, floor=floor,
                         obj_scale=max(abs(P), f_mag))
    vals["primal_feasibility"] = 0.0  # the slacks are the optimal ones for (w, b): feasible by construction
    mag = reg + C * float(np.sum(np.abs(m) * (np.abs(m) if sq else 1.0))) + float(np.sum(np.abs(alpha))) \
        + (0.5 * float(alpha @ alpha) / C if sq else 0.0)
    vals["duality_gap"] = _rel(P + D, P, D, mag)
    where["duality_gap"] = f"primal P = {P:.10g}, dual D = {D:.10g} (p* = -D*)"
    return Residuals(-D, P, vals, where, b, False, True, w.copy(), notes, gap_abs=P + D,
                     obj_scale=max(abs(P), mag + f_mag), floor=floor)


def _primal_stationarity(X, y, C, B, w, b, xi, vals, where) -> None:
    """``stationarity`` of a primal answer of the L2 loss: the gradient of ``P`` in ``(w, v)``, ``v = b/B``, is
    ``(w - X'(y a), b/B - B y'a)`` with ``a = C xi``, relative to the size of its terms (``max(||w||_inf,
    ||X'(y a)||_inf)``)."""
    a = C * xi
    gw = X.T @ (y * a)
    ref = max(float(np.max(np.abs(w), initial=0.0)), float(np.max(np.abs(gw), initial=0.0)),
              float(np.finfo(float).tiny))
    parts = np.abs(w - gw)
    gb = abs(b / B - B * float(y @ a)) if B > 0 else 0.0  # the gradient in v = b / B
    vals["stationarity"] = max(float(np.max(parts, initial=0.0)), gb) / ref
    where["stationarity"] = (f"the primal's gradient with alpha = C xi: max|w - X'(y alpha)| = "
                             f"{float(np.max(parts, initial=0.0)):.3g}, |b/B - B y'alpha| = {gb:.3g} (relative to "
                             f"{ref:.3g})")


def _regularised_bias_dual(X, y, C, B, alpha, w_a, b_a, sq, vals, where) -> float:
    """The dual residuals of :func:`regularised_bias_residuals` at ``alpha`` (box, natural residual,
    complementarity); returns ``D(alpha)``."""
    hi = np.inf if sq else C
    viol = np.maximum(np.maximum(-alpha, alpha - hi), 0.0) / C
    vals["box"] = float(np.max(viol, initial=0.0))
    if vals["box"] > 0:
        i = int(np.argmax(viol))
        where["box"] = f"alpha_{i} = {alpha[i]:.6g} is outside [0, {'inf' if sq else f'C = {C:g}'}]"
    f = X @ w_a + b_a
    s = y * f - 1.0 + (alpha / C if sq else 0.0)
    d_lo, d_hi = distances(alpha, 0.0, hi, C)
    r = natural_residual(s, d_lo, d_hi, 1.0)
    vals["stationarity"] = float(np.max(r, initial=0.0))
    if r.size:
        i = int(np.argmax(r))
        where["stationarity"] = (f"pattern {i}: alpha_{i} = {alpha[i]:.6g}, y_i f(x_i) - 1{' + alpha_i/C' if sq else ''}"
                                 f" = {s[i]:.3g} with f = X w(alpha) + b(alpha): natural residual {r[i]:.3g} "
                                 "(margin units)")
    scale = _terms_scale(np.abs(X) @ np.abs(w_a) + abs(b_a) + 1.0)
    t = np.clip(alpha / C, 0.0, None)
    comp = t * np.maximum(s, 0.0) + (0.0 if sq else np.maximum(1.0 - t, 0.0) * np.maximum(-s, 0.0))
    vals["complementarity"] = float(np.max(comp, initial=0.0)) / max(scale, 1.0)
    reg = 0.5 * float(w_a @ w_a) + 0.5 * (B * float(y @ alpha)) ** 2  # 1/2 b^2 / B^2 with b = B^2 y'alpha
    return reg - float(np.sum(alpha)) + (0.5 * float(alpha @ alpha) / C if sq else 0.0)


# ---------------------------------------------------------------------------------------------
# The fixed-size LS-SVM's primal: ridge with a free bias on explicit features (004 eq. (1) with Phi = X)
# ---------------------------------------------------------------------------------------------


def _ridge_dual(X, y, C, alpha) -> tuple[float, np.ndarray]:
    """``D(alpha) = 1/2 ||X'alpha||^2 + ||alpha||^2 / (2C) - y'alpha`` (the LS-SVM regression dual of 004 eq. (2) on
    ``K = X X'``, minimised) and ``X'alpha``."""
    w_a = X.T @ alpha
    return 0.5 * float(w_a @ w_a) + 0.5 * float(alpha @ alpha) / C - float(y @ alpha), w_a


def _ridge_margins(X, y, C, alpha, w_a, b, unit, vals, where) -> None:
    """A dual answer's equality ``1'alpha = 0`` and margin equations ``f(x_i) + alpha_i / C = y_i`` (004 system (2))."""
    eq = float(np.sum(alpha))
    vals["equality"] = _rel(eq, float(np.sum(np.abs(alpha)))) if np.any(alpha) else 0.0
    where["equality"] = f"sum_i alpha_i = {eq:.3g}, not 0 (sum_i |alpha_i| = {np.sum(np.abs(alpha)):.3g})"
    s = X @ w_a + b + alpha / C - y
    f_scale = _terms_scale(np.abs(X) @ np.abs(w_a) + abs(b) + np.abs(alpha) / C + np.abs(y))
    i = int(np.argmax(np.abs(s))) if s.size else 0
    vals["primal_feasibility"] = float(abs(s[i])) / f_scale if s.size else 0.0
    vals["kkt_absolute"] = float(abs(s[i])) / unit if s.size else 0.0
    where["primal_feasibility"] = where["kkt_absolute"] = (
        f"pattern {i}: f(x_i) + alpha_i/C - y_i = {s[i]:.3g} with f = X X'alpha + b (004 system (2) requires 0)"
        if s.size else "")


def ridge_residuals(X, y, C, alpha=None, w=None, b=None) -> Residuals:
    r"""Residuals of the fixed-size LS-SVM's primal, ridge regression with a free bias on the features ``X`` (004 eq.
    (1) with ``Phi(x) = x``: ``P(w, b) = 1/2 ||w||^2 + C/2 sum_i e_i^2``, ``e = y - X w - b``), at a primal answer
    ``(w, b)``, a dual answer ``alpha`` (``w = X'alpha``), or both.

    * dual, minimised: ``D(alpha) = 1/2 ||X'alpha||^2 + ||alpha||^2 / (2C) - y'alpha`` s.t. ``1'alpha = 0`` (004 eq.
      (2) on ``K = X X'``); ``p* = -D*``;
    * ``stationarity``: the primal gradient ``(w - C X'e, -C 1'e)``, each part relative to the size of its terms
      (``max(||w||_inf, C ||X'||e|| ||_inf)``, ``C sum_i |e_i|``); where ``alpha`` and ``w`` are both given, also
      ``||w - X'alpha||_inf`` relative to ``||X'alpha||_inf``;
    * ``equality``, ``primal_feasibility``, ``kkt_absolute``: a dual answer's ``1'alpha = 0`` and margin equations
      ``f(x_i) + alpha_i / C - y_i = 0`` (relative to their terms; absolute in units of ``max|y|``); ``nan`` for a
      primal answer alone, whose dual point is ``alpha = C (e - mean(e))``, feasible by construction;
    * ``duality_gap = (P + D) / max(|P|, |D|, mag)``: weak duality bounds ``P(w, b) - p*`` by ``P + D`` at any
      feasible ``alpha`` (the certificate of :func:`svmref.verify.check` with ``certificate=True``, at any N: every
      quantity here costs ``O(N d)``, never the ``N x N`` kernel).

    The objective is ``P(w, b)`` for a primal answer and ``-D(alpha)`` for a dual one alone (``p*`` at the optimum).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    if alpha is None and (w is None or b is None):
        raise ValueError("the answer has neither alpha nor both w and b")
    unit = target_scale(y)
    vals, where, notes = _nan_values(), {}, []
    D = float("nan")
    derived = False
    if alpha is not None:
        alpha = np.asarray(alpha, dtype=float)
        D, w_a = _ridge_dual(X, y, C, alpha)
        if b is None:
            b, derived = float(np.mean(y - X @ w_a - alpha / C)), True
            notes.append("b was not given: the mean of y_i - f(x_i) - alpha_i/C, the least-squares b of 004 system (2)")
        _ridge_margins(X, y, C, alpha, w_a, float(b), unit, vals, where)
        if w is None:
            notes.append("w was not given: w = X'alpha")
            w = w_a
        else:
            off = float(np.max(np.abs(np.asarray(w, dtype=float) - w_a), initial=0.0))
            vals["stationarity"] = off / max(float(np.max(np.abs(w_a), initial=0.0)), float(np.finfo(float).tiny))
            where["stationarity"] = f"max|w - X'alpha| = {off:.3g}"
    w, b = np.asarray(w, dtype=float), float(b)
    e = y - X @ w - b
    P = 0.5 * float(w @ w) + 0.5 * C * float(e @ e)
    gw = w - C * (X.T @ e)
    ref_w = max(float(np.max(np.abs(w), initial=0.0)), C * float(np.max(np.abs(X).T @ np.abs(e), initial=0.0)),
                float(np.finfo(float).tiny))
    gb = C * float(np.sum(e))
    ref_b = max(C * float(np.sum(np.abs(e))), float(np.finfo(float).tiny))
    stat = max(float(np.max(np.abs(gw), initial=0.0)) / ref_w, abs(gb) / ref_b)
    if not stat <= vals["stationarity"]:  # (nan: not yet set)
        vals["stationarity"] = stat
        where["stationarity"] = (f"the primal gradient: max|w - C X'e| = {float(np.max(np.abs(gw), initial=0.0)):.3g} "
                                 f"(relative to {ref_w:.3g}), |C sum_i e_i| = {abs(gb):.3g} (relative to {ref_b:.3g})")
    a = alpha if alpha is not None else C * (e - float(np.mean(e)))
    if alpha is None:
        D, _ = _ridge_dual(X, y, C, a)
    mag = 0.5 * float(w @ w) + 0.5 * C * float(e @ e) + float(np.abs(y) @ np.abs(a)) + 0.5 * float(a @ a) / C
    vals["duality_gap"] = _rel(P + D, P, D, mag)
    where["duality_gap"] = f"primal P = {P:.10g}, dual D = {D:.10g} (p* = -D*)"
    f_scale = _terms_scale(np.abs(X) @ np.abs(w) + abs(b) + np.abs(y))
    return Residuals(P if alpha is None else -D, P, vals, where, b, derived, True, w.copy(), notes, unit=unit,
                     gap_abs=P + D, obj_scale=mag, floor=rounding(X.shape[1] + 1, f_scale) / unit)
