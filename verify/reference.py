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

__all__ = ["Reference", "Point", "build", "solve", "Negated", "clear_cache", "REF_EPS"]


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
        ref.disagreement = p.sol.disagreement
        ref.status = f"{p.sol.solver}: {p.sol.status}"
        _certificate(ref, p.sol)
    ref.time = time.perf_counter() - t0
    if key is not None:
        _CACHE[key] = ref
    return ref
