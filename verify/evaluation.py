"""One evaluation of an answer: its residuals, its gaps to the reference, and which checks they fail.

:func:`evaluate` computes what :func:`svmref.verify.check` judges, for the instance's own problem or (with
``K``/``hyper``) for another one, as the diagnoses ask; the residual functions and the decision function
come from the formulation's entry in :mod:`svmref.verify.specs`. :data:`TOLERANCES` says what each
checked quantity is compared with.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

__all__ = ["DEFAULT_TOL", "TOLERANCES", "COMPARISONS", "ORDER", "KKT_NAMES", "tolerances", "evaluate", "judge",
           "needed", "failed", "unresolved", "bad", "self_consistent"]

#: Default tolerance: what a demanding user expects of a solver run at tol = 1e-8.
DEFAULT_TOL = 1e-6

#: Each check's tolerance as a function of ``tol``: every one is ``tol`` itself, so a pass at ``tol`` means
#: every reported error is at most ``tol`` in its stated unit (docs/verify.md, "What a pass means"):
#:
#: * ``objective_gap``: relative to ``|objective*|``; ``duality_gap``: relative to the size of its terms;
#: * ``box``, ``equality``: relative to ``C`` and to ``sum_i |alpha_i|``;
#: * ``primal_feasibility``, ``complementarity``: relative to the size of the terms of ``f(x_i)``;
#: * ``stationarity`` (the b-free natural residual), ``kkt_absolute`` (the natural residual at the answer's
#:   ``b``), ``b_gap`` and ``decision_gap``: in the solution's units, the margin (1) for classification,
#:   ``max|y|`` for regression; ``kkt_absolute`` and ``stationarity`` are floored at the floating-point floor
#:   of the margins (:attr:`kkt.Residuals.floor`, reported as ``<name>_floor``).
#:
#: A comparison with the reference (objective, b, decision values) is judged only as far as the reference
#: resolves it (``<name>_resolution``, :func:`svmref.verify.reference.resolution`): pass when
#: ``value + resolution <= tol``, fail when ``value - resolution > tol``, otherwise *unresolved*.
TOLERANCES: dict[str, Callable[[float], float]] = {
    "objective_gap": lambda t: t,
    "box": lambda t: t,
    "equality": lambda t: t,
    "primal_feasibility": lambda t: t,
    "complementarity": lambda t: t,
    "stationarity": lambda t: t,
    "kkt_absolute": lambda t: t,
    "duality_gap": lambda t: t,
    "b_gap": lambda t: t,
    "decision_gap": lambda t: t,
}

#: The checks made against the reference (judged within its resolution).
COMPARISONS = ("objective_gap", "b_gap", "decision_gap")

#: The checks floored at the floating-point floor of the margins.
FLOORED = ("stationarity", "kkt_absolute")

#: Order in which failures are listed (the first is the headline reason).
ORDER = ("box", "equality", "objective_gap", "primal_feasibility", "complementarity", "stationarity",
         "kkt_absolute", "duality_gap", "b_gap", "decision_gap")

#: The KKT residuals whose largest is a record's ``kkt_violation``.
KKT_NAMES = ("box", "equality", "primal_feasibility", "complementarity", "stationarity")


def apart(*xs: float, digits: int = 6) -> list[str]:
    """``xs`` printed with at least ``digits`` significant digits, and with as many more (up to 17) as it takes for
    the first number to print differently from each other one that differs from it: "b = 128.15448 is outside
    [128.15446, 128.15446]", never "b = 128.154 is outside [128.154, 128.154]" (the others need not differ among
    themselves: the two ends of a point interval one rounding apart print alike)."""
    for p in range(digits, 18):
        out = [f"{x:.{p}g}" for x in xs]
        if all(out[0] != out[j] for j in range(1, len(xs)) if xs[0] != xs[j]):
            return out
    return [repr(float(x)) for x in xs]


def tolerances(tol: float = DEFAULT_TOL) -> dict[str, float]:
    """The table of tolerances used at ``tol`` (see :data:`TOLERANCES`)."""
    return {k: f(tol) for k, f in TOLERANCES.items()}


def _b_range(b: float, derived: bool, lo: float, hi: float) -> tuple[float, float]:
    """The biases an answer stands for: its own ``b``, or its KKT interval when verify derived ``b``."""
    if derived and math.isfinite(lo) and math.isfinite(hi):
        return lo, hi
    return b, b


def _rows(spec, inst) -> np.ndarray:
    """The points the decision values are compared on: the training points and the held-out ones (the rows
    ``Phi(x) . Phi(x_i)``, or ``x`` for a solver on features)."""
    train = inst.X if spec.on_features else inst.K
    held = spec.held_out(inst)
    return np.vstack([train, held]) if np.size(held) else train


def _decision(spec, inst, r, ref) -> tuple[float, float, float]:
    """``(decision_gap, b_gap, bias_free_gap)`` in the solution's unit.

    ``decision_gap``, the judged one: the largest difference of the decision values ``f = W.Phi(x) + b`` on the
    training and held-out points, with each side's ``b`` free in its KKT interval where it is not unique (the best
    pair). ``b_gap``: the distance of the given ``b`` from the reference's interval (``nan``: no ``b``, or ``b``
    derived). ``bias_free_gap``: the same difference of ``W.Phi(x)`` alone, reported for information and never
    judged (a pass promises the decision function; an answer whose ``b`` makes up for a shift of ``W.Phi`` on these
    points is as good as the reference's there)."""
    rows = _rows(spec, inst)
    d = rows @ r.coef - rows @ ref.coef
    unit = r.unit
    free = float(np.max(np.abs(d))) / unit if d.size else 0.0
    if not spec.has_b:
        return free, float("nan"), free
    b_s = float(r.b or 0.0)
    s_lo, s_hi = _b_range(b_s, r.b_derived, r.b_low, r.b_high)
    r_lo, r_hi = _b_range(float(ref.b or 0.0), True, ref.b_low, ref.b_high)
    lo, hi = s_lo - r_hi, s_hi - r_lo
    shift = min(max(-0.5 * (float(np.max(d)) + float(np.min(d))), lo), hi) if d.size else 0.0
    dg = float(np.max(np.abs(d + shift))) / unit if d.size else 0.0
    bg = float("nan") if r.b_derived else max(r_lo - b_s, b_s - r_hi, 0.0) / unit
    return dg, bg, free


def _compare(spec, inst, r, ref, values: dict, where: dict) -> None:
    """Add the objective gap, the b gap and the decision gap on the instance's points, against the reference, and how
    far the reference resolves each (``<name>_resolution``)."""
    og = abs(r.objective - ref.objective) / max(abs(ref.objective), float(np.finfo(float).tiny))
    values["objective_gap"] = og
    cert = "" if ref.certified is None else (", certified" if ref.certified else ", NOT certified")
    where["objective_gap"] = (f"objective {r.objective:.10g} vs reference {ref.objective:.10g} "
                              f"(relative gap {og:.2e}; reference {ref.status}{cert}"
                              + ("" if math.isnan(ref.disagreement)
                                 else f", cross-check disagreement {ref.disagreement:.1e}") + ")")
    dg, bg, free = _decision(spec, inst, r, ref)
    values["decision_gap"] = dg
    values["bias_free_gap"] = free
    unit = "margin units" if r.unit == 1.0 and spec.classification else f"units of max|y| = {r.unit:.3g}"
    fx = "f = W.Phi(x) + b" if spec.has_b else "f = W.Phi(x)"
    where["decision_gap"] = (f"the decision function {fx} differs from the reference's on the training and held-out "
                             f"points by {dg:.2e} ({unit})"
                             + ("" if r.b_unique and ref.b_unique or not spec.has_b else
                                "; b is not unique here: each side's b is taken at its best in its KKT interval")
                             + (f"; W.Phi(x) alone differs by {free:.2e} (not judged)" if spec.has_b else ""))
    values["b_gap"] = bg
    if not math.isnan(bg):
        b_s, lo_s, hi_s = apart(float(r.b), ref.b_low, ref.b_high)
        where["b_gap"] = f"b = {b_s} is {bg:.2e} ({unit}) outside the reference's KKT interval [{lo_s}, {hi_s}]"
    train = inst.X if spec.on_features else inst.K
    for k, v in ref.resolution(train, _rows(spec, inst)).items():
        values[k + "_resolution"] = v


def evaluate(spec, inst, ans: dict, ref, eps: float, *, K=None, hyper=None, weights=None, compare: bool = True):
    """The residuals of ``ans`` and every checked quantity: ``(r, values, where)``.

    ``spec`` is the formulation's entry (:class:`svmref.verify.specs.Spec`); ``K``/``hyper``/``weights`` (the
    weighted LS-SVM's ``v``) replace the instance's (to ask whether the answer solves a different problem);
    ``compare`` adds the objective and decision gaps against ``ref`` (only meaningful for the instance's own problem).
    """
    if weights is not None:
        inst = dataclasses.replace(inst, weights=np.asarray(weights, dtype=float))
    h = dict(inst.hyper if hyper is None else hyper)
    Km = K if K is not None else None if spec.on_features else inst.K  # (features: no N x N kernel is made)
    with np.errstate(all="ignore"):
        r = spec.residuals(Km, inst, h, ans, eps)
    for k in r.where:  # an applicable residual that came out NaN could not be computed (overflow): inf
        if math.isnan(r.values.get(k, 0.0)):
            r.values[k] = float("inf")
    values, where = dict(r.values), dict(r.where)
    for k in FLOORED:
        values[k + "_floor"] = r.floor
    if compare and ref is not None and ref.convex and not ref.error:
        _compare(spec, inst, r, ref, values, where)
    return r, values, where


def judge(values: dict, k: str, tols: dict) -> str:
    """``"pass"``, ``"fail"``, ``"unresolved"`` or ``"n/a"`` for check ``k`` (see :data:`TOLERANCES`)."""
    v = values.get(k, float("nan"))
    if k not in tols or math.isnan(v):
        return "n/a"
    bound = max(tols[k], values.get(k + "_floor", 0.0))
    res = values.get(k + "_resolution", 0.0)
    if not v - res <= bound:
        return "fail"
    return "pass" if v + res <= bound else "unresolved"


def needed(values: dict) -> float:
    """The smallest ``tol`` at which every check of ``values`` passes (the values held fixed)."""
    t = 0.0
    for k in TOLERANCES:
        v = values.get(k, float("nan"))
        if math.isnan(v) or v <= values.get(k + "_floor", 0.0):
            continue
        t = max(t, v + values.get(k + "_resolution", 0.0))
    return t


def failed(values: dict, where: dict, tols: dict) -> list[str]:
    """One sentence per failed check, in :data:`ORDER`: ``"box 3.1e-01 > 1e-06: alpha_17 = ..."``."""
    out = []
    for k in ORDER:
        if judge(values, k, tols) == "fail":
            bound = max(tols[k], values.get(k + "_floor", 0.0))
            res = values.get(k + "_resolution", 0.0)
            extra = f" (reference resolution {res:.1e})" if res > 0.01 * bound else ""
            out.append(f"{k} {values[k]:.2e} > {bound:.0e}{extra}: {where.get(k, '')}")
    return out


def unresolved(values: dict, tols: dict) -> list[str]:
    """The checks the reference cannot resolve at these tolerances (neither pass nor fail), as sentences."""
    return [f"{k} {values[k]:.2e} vs tol {tols[k]:.0e}: the reference is accurate to {values[k + '_resolution']:.1e} "
            "only, so it cannot resolve tol here" for k in ORDER if judge(values, k, tols) == "unresolved"]


def bad(values: dict, tols: dict) -> set:
    """The names of the checks that fail (``nan``, not applicable, never fails)."""
    return {k for k in ORDER if judge(values, k, tols) == "fail"}


def self_consistent(values: dict, tols: dict) -> bool:
    """Every residual (no reference comparison) within its tolerance, and at least one was computed."""
    own = [k for k in ORDER if k not in COMPARISONS]
    return (any(not math.isnan(values.get(k, float("nan"))) for k in own)
            and not any(judge(values, k, tols) == "fail" for k in own))
