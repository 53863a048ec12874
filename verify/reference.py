"""The reference answer of an instance, from :mod:`svmref.formulations` (cvxpy, CLARABEL, cross-checked).

What differs between formulations (which problem of :mod:`svmref.formulations` to solve, how its solution
gives the reference's objective and decision function) is each entry's ``reference`` in
:mod:`svmref.verify.specs`: a function ``point(F, inst, answer) -> Point``. This module runs it: it times it,
turns :class:`svmref.formulations.NotConvexError` into a ``not convex`` reference and
:class:`svmref.formulations.ReferenceSolveError` into ``no reference``, copies the reference's own
certificate, and caches the result per (formulation, instance), so that checking several solvers of the
same formulation (``svmref verify --all``) solves each reference once.
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .kkt import rounding as kkt_rounding

__all__ = ["Reference", "Point", "build", "solve", "Negated", "clear_cache", "REF_EPS", "resolution"]


@dataclass
class Reference:
    """The reference optimum of one instance.

    ``objective`` is in the sense :mod:`svmref.verify.kkt` reports (minimised dual for the box duals; the
    RLS objective (7); W of 003 eq. (10)); ``coef, b`` give the reference decision function
    (``b`` derived from the reference dual by the KKT conditions); ``b_unique`` whether that b is
    determined; ``disagreement`` the relative difference of the cross-checking solver;
    ``convex`` False (with ``message``) when the kernel is not PSD: the reference does not apply;
    ``error`` non-empty when the reference solver itself failed (reported, never hidden);
    ``certified``/``certificate``: the reference's own optimality certificate where
    :func:`svmref.formulations.solve` gives one (``None``/empty otherwise).
    """

    objective: float = float("nan")
    coef: np.ndarray | None = None
    b: float = 0.0
    b_unique: bool = True
    disagreement: float = float("nan")
    status: str = ""
    time: float = 0.0
    convex: bool = True
    message: str = ""
    error: str = ""
    warnings: list = field(default_factory=list)
    certified: bool | None = None
    certificate: dict = field(default_factory=dict)
    b_low: float = float("nan")
    b_high: float = float("nan")
    residuals: object = None

    def resolution(self, train_rows, test_rows) -> dict:
        """How accurately this reference knows what verify compares with it (:func:`resolution`)."""
        return resolution(self, train_rows, test_rows)


@dataclass
class Point:
    """What a formulation's reference strategy returns: the solution of :func:`svmref.formulations.solve`
    (its ``solver``, ``status``, ``disagreement`` and certificate are reported), the objective in the sense
    of :class:`Reference`, the decision function ``coef, b`` and the warnings the solve issued."""

    sol: object
    objective: float
    coef: np.ndarray
    b: float
    b_unique: bool = True
    warnings: list = field(default_factory=list)
    residuals: object = None
    b_low: float = float("nan")
    b_high: float = float("nan")


#: eps-active threshold (units of C) for the reference's alpha: an interior-point solution sits a
#: little inside its bounds, so "free" (which fixes the reference's b) needs a margin.
REF_EPS = 1e-6

_CACHE: dict = {}


class Negated:
    """A dual solution seen as the primal's: ``p* = -d*`` (strong duality)."""

    def __init__(self, sol):
        self.objective = -sol.objective
        self.disagreement = sol.disagreement
        self.solver, self.status = sol.solver, sol.status + " (dual)"
        self.certificate, self.certified = getattr(sol, "certificate", {}), getattr(sol, "certified", False)


def _certificate(ref: Reference, sol) -> None:
    """Copy the reference's certificate (``Solution.certified``/``.certificate``) where it has one."""
    cert = getattr(sol, "certificate", None)
    if isinstance(cert, dict) and cert:
        ref.certified = bool(getattr(sol, "certified", False))
        ref.certificate = dict(cert)


def clear_cache() -> None:
    _CACHE.clear()


def solve(prob):
    """``svmref.formulations.solve(prob)`` and the reference warnings it issued, as ``"Type: message"``."""
    import svmref.formulations as F  # cvxpy: imported when a reference is first needed

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = F.solve(prob)
    msgs = [f"{type(w.message).__name__}: {w.message}" for w in caught
            if issubclass(w.category, (F.ReferenceDisagreementWarning, F.KernelClipWarning))]
    return sol, msgs


def build(point: Callable, inst, answer=None, key=None) -> Reference:
    """Run the strategy ``point(F, inst, answer)`` (``F`` is :mod:`svmref.formulations`) into a :class:`Reference`.

    With a ``key`` the result is cached (the same object for the same key); without, it is computed
    each time (a reference that depends on the answer, as the ISLS fixed point's does).
    """
    if key is not None and key in _CACHE:
        return _CACHE[key]
    import svmref.formulations as F  # cvxpy: imported when a reference is first needed

    t0 = time.perf_counter()
    ref = Reference()
    try:
        p = point(F, inst, answer)
    except F.NotConvexError as exc:
        ref.convex = False
        ref.message = f"reference not convex: {exc}"
    except F.ReferenceSolveError as exc:
        ref.error = f"no reference: {exc}"
    else:
        ref.warnings = p.warnings
        ref.objective = float(p.objective)
        ref.coef, ref.b, ref.b_unique = p.coef, float(p.b), p.b_unique
        ref.residuals = p.residuals
        ref.b_low, ref.b_high = p.b_low, p.b_high
        ref.disagreement = p.sol.disagreement
        ref.status = f"{p.sol.solver}: {p.sol.status}"
        _certificate(ref, p.sol)
    ref.time = time.perf_counter() - t0
    if key is not None:
        _CACHE[key] = ref
    return ref


#: The first-order estimate of the reference's error in ``b`` and the decision values is doubled: on the 85 references
#: of the quick, standard and adversarial suites where an SMO run to 1e-12 gives the optimum, it came within 0.1 % of
#: the reference's actual error (never below it); the factor covers what a first-order step misses.
RESOLUTION_FACTOR = 2.0


def resolution(ref: Reference, train_rows, test_rows) -> dict:
    """How accurately the reference knows each quantity that verify compares with it, in the units of the
    comparison (:mod:`svmref.verify.evaluation`): ``{"objective_gap": ..., "b_gap": ..., "decision_gap": ...}``.

    * objective (relative to ``|objective|``): the reference's own duality gap ``P - (-D)`` computed by
      :mod:`svmref.verify.kkt` at its point (weak duality: its objective is within it of the optimum), plus
      the rounding of the objective (:func:`svmref.verify.kkt.rounding` of the size of its terms);
    * ``b`` and decision values (in the solution's unit, :attr:`kkt.Residuals.unit`): a first-order estimate,
      the effect of one active-set Newton step from the reference's point (:func:`kkt.active_set_correction`:
      the ``alpha_i`` whose step reaches a bound moved onto it, the others re-solved with ``b``; the exact
      Newton correction for LS-SVM and RLS): ``|K(x, .) dcoef + db|`` on the compared points, ``|db|`` for ``b``.
      Where no dense step is taken (the support features machine; ``N > kkt.SYSTEM_N``) each coefficient's
      diagonal step (:func:`kkt.step_error`) without signs: ``sum_j |k(x, x_j)| |dcoef_j|``, and for ``b`` (the
      optimal biases of the primal for the reference's ``W``, :func:`kkt.primal_b_interval`, whose breakpoints
      are the training margins) the same on the training rows. Plus the rounding floor of the margins; both
      doubled (:data:`RESOLUTION_FACTOR`). For an interior-point reference (bounded ``alpha_i`` a little
      inside) this is the effect of moving them onto their bounds.

    ``inf`` where the reference carries no residuals (nothing is known about its accuracy).
    """
    r = ref.residuals
    if r is None or r.coef_error is None:
        inf = float("inf")
        return {"objective_gap": inf, "b_gap": inf, "decision_gap": inf}
    n = len(r.coef_error)
    obj = abs(ref.objective)
    rounding = kkt_rounding(n, r.obj_scale if np.isfinite(r.obj_scale) else obj)
    og = (max(float(r.gap_abs), 0.0) + rounding) / max(obj, rounding, float(np.finfo(float).tiny))
    unit = r.unit
    err = np.asarray(r.coef_error, dtype=float)
    if r.coef_correction:  # a signed Newton correction: its effect, exact to first order
        b_err = abs(r.b_correction) / unit + r.floor
        moved = test_rows @ err if np.size(test_rows) else np.zeros(1)  # W.Phi(x) alone, and with b
        test = max(float(np.max(np.abs(moved + r.b_correction))), float(np.max(np.abs(moved)))) / unit
    else:
        train = float(np.max(np.abs(train_rows) @ np.abs(err))) if n else 0.0
        b_err = train / unit + r.floor
        test = float(np.max(np.abs(test_rows) @ np.abs(err))) / unit if np.size(test_rows) else 0.0
    f = RESOLUTION_FACTOR
    return {"objective_gap": og if np.isfinite(og) else float("inf"), "b_gap": f * b_err,
            "decision_gap": f * (test + b_err)}
