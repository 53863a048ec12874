"""Plain-words advice on a failed answer: diagnoses, hints, and the tolerance at which it would pass.

* :func:`diagnose`: most severe first, "b is wrong" (with its KKT interval), "box violated",
  "y'alpha != 0", "not optimal (objective gap ...)", and "solved a different C/gamma/epsilon/kernel" when
  the answer satisfies the KKT conditions of a neighbouring problem (the entry's ``probes``);
* :func:`hints`: "hint: the answer passes after ..." a known convention slip (the entry's ``transforms``),
  or solves the neighbouring formulation as given (the entry's ``swap``);
* :func:`pass_tolerance`: the smallest one-digit ``tol`` at which the answer passes.

What is formulation-specific comes from the entry (:class:`svmref.verify.specs.Spec`).
"""
from __future__ import annotations

import math
from collections.abc import Callable

from . import specs
from .evaluation import ORDER, bad, evaluate, failed, needed, self_consistent, tolerances, unresolved

__all__ = ["diagnose", "hints", "pass_tolerance"]

def _nice_up(t: float) -> float:
    """The smallest one-significant-digit number >= t (2.3e-4 -> 3e-4, 1e-3 -> 1e-3)."""
    e = math.floor(math.log10(t))
    d = math.ceil(round(t / 10.0**e, 9))
    if d >= 10:
        d, e = 1, e + 1
    return float(f"{d}e{e}")


def _nice_next(t: float) -> float:
    e = math.floor(math.log10(t) + 1e-12)
    d = round(t / 10.0**e) + 1
    if d >= 10:
        d, e = 1, e + 1
    return float(f"{d}e{e}")


def pass_tolerance(evaluate: Callable[[float], dict], tol: float) -> float | None:
    """The smallest one-digit ``tol`` (> the given one) at which the answer passes every check, or None when no
    ``tol < 1`` does (the CLI refuses ``--tol >= 1``).

    ``evaluate(t)`` returns the checked values at ``t``. Every check is ``value <= t`` (within the reference's
    resolution, :func:`svmref.verify.evaluation.judge`), so the candidate is the smallest one-digit number
    ``>= max(value + resolution)`` (:func:`svmref.verify.evaluation.needed`); it is confirmed by re-evaluating at it
    (a pass, not an unresolved comparison), and raised until it passes.
    """
    t = needed(evaluate(tol))
    for _ in range(6):
        if not t < 1.0:
            return None
        cand = _nice_up(max(t, tol * (1 + 1e-12)))
        if not cand < 1.0:
            return None
        vals = evaluate(cand)
        tols = tolerances(cand)
        if not failed(vals, {}, tols) and not unresolved(vals, tols):
            return cand
        t = max(needed(vals), _nice_next(cand))
    return None


def _b_is_wrong(spec, r, values: dict, failing: set, tol: float, hints: list) -> str:
    """"b is wrong" when alpha is optimal but the given b lies outside the reference's KKT interval (``b_gap``),
    or, without a reference, outside its own (``[b_low, b_high]``, by more than ``tol`` in the solution's unit);
    else "". The common cause it names (averaging b over bounded support vectors too) only where no hint
    explains the failure: a hint (``b -> -b``, ...) names the cause itself."""
    alpha_ok = not ({"box", "equality", "stationarity", "objective_gap"} & failing)
    lo, hi = getattr(r, "b_low", float("nan")), getattr(r, "b_high", float("nan"))
    if not (spec.has_b and spec.advice and failing and alpha_ok and not r.b_derived and r.b is not None
            and (math.isfinite(lo) or math.isfinite(hi))):
        return ""
    b = float(r.b)
    if "b_gap" in values and not math.isnan(values["b_gap"]):
        if "b_gap" not in failing:
            return ""
    else:
        slack = tol * r.unit
        if not ((math.isfinite(lo) and b < lo - slack) or (math.isfinite(hi) and b > hi + slack)):
            return ""
    interval = f"its KKT interval [{lo:.6g}, {hi:.6g}]"
    og = values.get("objective_gap", float("nan"))
    if hints:
        cause = "; the hint below names the likely cause"
    elif spec.b_average_hint:
        cause = ("; a common cause is averaging b over all support vectors, bounded ones included: "
                 "average over the free alpha_i (strictly inside the box) only")
    else:
        cause = ""
    return (f"b is wrong: alpha is optimal (objective gap {og:.1e}, b-free KKT residual "
            f"{values.get('stationarity', float('nan')):.1e}) but b = {b:.6g} is outside {interval}" + cause)


def _not_optimal(spec, values: dict, failing: set) -> str:
    """"not optimal (objective gap ..., stationarity ...)" naming the failed checks other than box and equality."""
    rest = [k for k in ORDER if k in failing and k not in ("box", "equality")]
    if not rest:
        return ""
    parts = []
    if "objective_gap" in values and not math.isnan(values["objective_gap"]):
        parts.append(f"objective gap {values['objective_gap']:.1e}")
    for k in rest:
        if k != "objective_gap":
            name = {"stationarity": spec.stationarity_words, "kkt_absolute": "KKT residual at b"}.get(
                k, k.replace("_", " "))
            parts.append(f"{name} {values[k]:.1e}")
    return f"not optimal ({', '.join(parts)})"


def diagnose(spec, inst, ans: dict, r, values: dict, tols: dict, tol: float, hints: list | None = None) -> list[str]:
    """Plain-words diagnoses of a failed answer, most severe first (see the module docstring); ``hints`` are
    those of :func:`hints` for the same answer (a diagnosis does not contradict them)."""
    failing = bad(values, tols)
    out: list[str] = []
    b_wrong = _b_is_wrong(spec, r, values, failing, tol, hints or [])
    if b_wrong:
        out.append(b_wrong)
    if "box" in failing:
        out.append("box violated: " + r.where.get("box", ""))
    if "equality" in failing:
        out.append(f"{spec.equality_words}: " + r.where.get("equality", ""))
    if not b_wrong:
        not_optimal = _not_optimal(spec, values, failing)
        if not_optimal:
            out.append(not_optimal)
    # A different C / gamma / kernel (only where the box holds: a box violation is its own story).
    # Not for a near miss (every failed residual within 100 x its tolerance): an answer optimal for C with
    # every alpha_i below some C' < C is also optimal for C', so a slightly inaccurate answer often "fits"
    # a smaller C better than its own, and naming that C would send the user after the wrong bug.
    near_miss = bool(failing) and all(
        math.isfinite(values.get(k, float("nan"))) and values[k] <= 100.0 * tols[k] for k in failing if k in tols)
    if failing and spec.advice and not b_wrong and "box" not in failing and not near_miss:
        other = _other_problem(spec, inst, ans, tol, tols)
        if other:
            out.append(other)
    return out


def _other_problem(spec, inst, ans: dict, tol: float, tols: dict) -> str:
    """'solved a different C/gamma/epsilon/kernel' when the answer satisfies the KKT conditions of one."""
    for probe in spec.probes:
        for change, message in probe(inst, ans):
            _, vals, _ = evaluate(spec, inst, ans, None, tol, compare=False, **change)
            if self_consistent(vals, tols):
                return message
    return ""


def hints(spec, inst, ans: dict, ref, tol: float, tols: dict) -> list[str]:
    """'hint: ...' for a failed answer that passes after a known transformation (the entry's ``transforms``)."""
    if not spec.advice:
        return []
    out = []
    for how, ans2 in spec.transforms(inst, ans):
        try:
            _, vals, _ = evaluate(spec, inst, ans2, ref, tol)
        except (ValueError, FloatingPointError):
            continue
        if not bad(vals, tols):
            out.append(f"hint: the answer passes after {how}")
            break
    if spec.swap is not None:
        other, convention = spec.swap
        _, vals, _ = evaluate(specs.get(other), inst, ans, None, tol, compare=False)
        if self_consistent(vals, tols):
            out.append(f"hint: as given, the answer solves {other} ({convention})")
    return out
