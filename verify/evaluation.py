"""One evaluation of an answer: its residuals, its gaps to the reference, and which checks they fail.

:func:`evaluate` computes what :func:`svmref.verify.check` judges, for the instance's own problem or (with
``K``/``hyper``) for another one, as the diagnoses ask; the residual functions and the decision function
come from the formulation's entry in :mod:`svmref.verify.specs`. :data:`TOLERANCES` says what each
checked quantity is compared with.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["DEFAULT_TOL", "TOLERANCES", "ORDER", "KKT_NAMES", "tolerances", "evaluate", "failed", "bad",
           "self_consistent"]

#: Default tolerance: what a demanding user expects of a solver run at tol = 1e-8.
DEFAULT_TOL = 1e-6

#: Each check's tolerance as a function of ``tol`` (all quantities are dimensionless, see svmref.verify.kkt).
#: ``kkt_absolute`` (the margin residuals not divided by f_scale) is checked at sqrt(tol), as the
#: decision values are. ``decision_gap`` is looser because it is a square root: the recovered primal is 1-strongly convex
#: in W, so ``||W - W*||^2 / 2 <= P(W) - p* <= P + D`` (the duality gap) and
#: ``|f(x) - f*(x)| <= ||W - W*|| sqrt(k(x, x))``: a gap of tol allows a decision error of about sqrt(tol).
TOLERANCES: dict[str, Callable[[float], float]] = {
    "objective_gap": lambda t: t,
    "box": lambda t: t,
    "equality": lambda t: t,
    "primal_feasibility": lambda t: t,
    "complementarity": lambda t: t,
    "stationarity": lambda t: t,
    "kkt_absolute": lambda t: math.sqrt(t),
    "duality_gap": lambda t: t,
    "decision_gap": lambda t: math.sqrt(t),
}

#: Order in which failures are listed (the first is the headline reason).
ORDER = ("box", "equality", "objective_gap", "primal_feasibility", "complementarity", "stationarity",
         "kkt_absolute", "duality_gap", "decision_gap")

#: The KKT residuals whose largest is a record's ``kkt_violation``.
KKT_NAMES = ("box", "equality", "primal_feasibility", "complementarity", "stationarity")


def tolerances(tol: float = DEFAULT_TOL) -> dict[str, float]:
    """The table of tolerances used at ``tol`` (see :data:`TOLERANCES`)."""
    return {k: f(tol) for k, f in TOLERANCES.items()}


def _compare(spec, inst, r, ref, values: dict, where: dict) -> None:
    """Add the objective gap and the decision gap on held-out points, against the reference."""
    og = abs(r.objective - ref.objective) / max(abs(ref.objective), 1e-12)
    values["objective_gap"] = og
    cert = "" if ref.certified is None else (", certified" if ref.certified else ", NOT certified")
    where["objective_gap"] = (f"objective {r.objective:.10g} vs reference {ref.objective:.10g} "
                              f"(relative gap {og:.2e}; reference {ref.status}{cert}"
                              + ("" if math.isnan(ref.disagreement)
                                 else f", cross-check disagreement {ref.disagreement:.1e}") + ")")
    # the decision function W.Phi(x) + b on the held-out points, the solver's and the reference's
    rows = spec.held_out(inst)
    g_s, b_s = rows @ r.coef, float(r.b or 0.0)
    g_r, b_r = rows @ ref.coef, float(ref.b or 0.0)
    both_b = r.b_unique and ref.b_unique and spec.has_b
    diff = np.abs(g_s - g_r) + (abs(b_s - b_r) if both_b else 0.0)
    scale = max(1.0, float(np.max(np.abs(g_r + b_r)))) if g_r.size else 1.0
    dg = float(np.max(diff)) / scale if diff.size else 0.0
    values["decision_gap"] = dg
    where["decision_gap"] = ("decision function differs from the reference's on held-out points by "
                             f"{dg:.2e} (relative)"
                             + ("" if both_b else "; b is not unique here, so only W.Phi(x) is compared"))


def evaluate(spec, inst, ans: dict, ref, eps: float, *, K=None, hyper=None, compare: bool = True):
    """The residuals of ``ans`` and every checked quantity: ``(r, values, where)``.

    ``spec`` is the formulation's entry (:class:`svmref.verify.specs.Spec`); ``K``/``hyper`` replace the
    instance's (to ask whether the answer solves a different problem); ``compare`` adds the objective and
    decision gaps against ``ref`` (only meaningful for the instance's own problem).
    """
    h = dict(inst.hyper if hyper is None else hyper)
    Km = inst.K if K is None else K
    with np.errstate(all="ignore"):
        r = spec.residuals(Km, inst, h, ans, eps)
    for k in r.where:  # an applicable residual that came out NaN could not be computed (overflow): inf
        if math.isnan(r.values.get(k, 0.0)):
            r.values[k] = float("inf")
    values, where = dict(r.values), dict(r.where)
    if compare and ref is not None and ref.convex and not ref.error:
        _compare(spec, inst, r, ref, values, where)
    return r, values, where


def failed(values: dict, where: dict, tols: dict) -> list[str]:
    """One sentence per failed check, in :data:`ORDER`: ``"box 3.1e-01 > 1e-06: alpha_17 = ..."``."""
    out = []
    for k in ORDER:
        v = values.get(k, float("nan"))
        if math.isnan(v):
            continue
        if not v <= tols[k]:
            out.append(f"{k} {v:.2e} > {tols[k]:.0e}: {where.get(k, '')}")
    return out


def bad(values: dict, tols: dict) -> set:
    """The names of the checks that fail (``nan``, not applicable, never fails)."""
    return {k for k, v in values.items() if k in tols and not math.isnan(v) and not v <= tols[k]}


def self_consistent(values: dict, tols: dict) -> bool:
    """Every residual (no reference comparison) within its tolerance, and at least one was computed."""
    vals = {k: v for k, v in values.items() if k not in ("objective_gap", "decision_gap")}
    return any(not math.isnan(v) for v in vals.values()) and not bad(vals, tols)
