"""Plain-words advice on a failed answer: diagnoses, hints, and the tolerance at which it would pass.

* :func:`diagnose`: the cause first, then the facts. The cause is what the solver itself said (a status other than
  optimal, a convergence warning, a line of its output saying it reached its iteration limit: :class:`SolverReport`),
  or another problem the answer solves exactly (:func:`other_problem`: no bias or a regularised one, K rounded to
  float32, a diagonal added to K, RLS's other penalty, another C/gamma/epsilon/kernel), or the stopping tolerance
  (every KKT condition holds to a small residual above tol); where none of these is there, the diagnosis says that
  verify does not know the cause. The facts: "b is wrong for the answer's own alpha" (only when b lies outside the
  KKT interval of the answer's own alpha), "box violated", "y'alpha != 0", "not optimal (...)". Numbers that differ
  print differently (:func:`apart`). docs/verify.md, "Causes verify names", lists each with its evidence;
* :func:`hints`: "hint: the answer passes after ..." a known convention slip (the entry's ``transforms``),
  or solves the neighbouring formulation as given (the entry's ``swap``);
* :func:`pass_tolerance`: the smallest one-digit ``tol`` at which the answer passes.

What is formulation-specific comes from the entry (:class:`svmref.verify.specs.Spec`).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import kkt, specs
from .evaluation import COMPARISONS, ORDER, apart, bad, evaluate, failed, needed, self_consistent, tolerances, unresolved

__all__ = ["diagnose", "hints", "pass_tolerance", "other_problem", "SolverReport", "apart"]

#: Above this N the probes that copy K (float32, an added diagonal) are skipped.
MAX_N_PROBE = 5000

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


# ---------------------------------------------------------------------------------------------- what the solver said

#: Statuses that mean "finished as asked" (no cause to name).
_FINISHED = ("optimal", "converged", "success", "solved", "ok")
#: Words of a solver's output or warning that say it stopped at its iteration limit (LIBSVM and LIBLINEAR print
#: "reaching max number of iterations"; scikit-learn warns "Solver terminated early (max_iter=...)").
_ITERATION_WORDS = ("max number of iterations", "maximum number of iteration", "max_iter", "maxiter",
                    "iteration limit", "terminated early", "max iterations")
#: LIBLINEAR's note when its dual solver hits the limit and it hands the problem to its primal solver.
_SWITCH_WORDS = ("switching to use -s", "switching to -s")


@dataclass
class SolverReport:
    """What the solver said about its own answer: its ``status`` and ``message`` (where the answer has them), the
    warnings it issued (``(category, message, count)``), what it printed, and the tolerance verify passed to it
    (``tol``, through the parameter ``tol_parameter``)."""

    status: str | None = None
    message: str = ""
    warnings: list = field(default_factory=list)
    output: str = ""
    tol: float | None = None
    tol_parameter: str | None = None

    @classmethod
    def of(cls, rec) -> SolverReport:
        """The report of a :class:`~svmref.verify.report.Record`."""
        return cls(rec.solver_status, rec.solver_message, list(rec.solver_warnings), rec.solver_output or "",
                   rec.solver_tol, rec.solver_tol_parameter)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


def _iteration_line(text: str) -> str:
    """The first line of ``text`` that says the iteration limit was reached, "" when none does."""
    for line in text.splitlines():
        low = line.lower()
        if any(w in low for w in _ITERATION_WORDS):
            return line.strip()
    return ""


def _measured(spec, values: dict, failing: set) -> str:
    """The errors measured on a failed answer, in words: "objective gap 1.2e-09, b 1.7e-05 off the reference's, ..."."""
    names = {"objective_gap": "objective gap", "b_gap": "b off the reference's by",
             "decision_gap": "decision values off by", "stationarity": "b-free KKT residual",
             "kkt_absolute": "KKT residual" + (" at its b" if spec.has_b else ""), "duality_gap": "duality gap",
             "box": "box violation", "equality": "equality violation", "primal_feasibility": "primal feasibility",
             "complementarity": "complementarity"}
    parts = [f"{names.get(k, k)} {values[k]:.1e}" for k in ORDER if k in failing and math.isfinite(values.get(k, 0))]
    return ", ".join(parts)


def _solver_said(spec, said: SolverReport | None, values: dict, failing: set) -> str:
    """The cause the solver itself reported, first: a status other than optimal, a warning that it did not converge,
    or a line of its output saying it reached its iteration limit; with the errors verify measured."""
    if said is None:
        return ""
    measured = _measured(spec, values, failing)
    tail = f"; verify measured: {measured}" if measured else ""
    iteration = _iteration_line(said.output)
    status = said.status if isinstance(said.status, str) else None
    if status is not None and status.lower() not in _FINISHED:
        words = f"the solver reported status {status!r}" + (f" ({_short(said.message)})" if said.message else "")
        if "iter" in status.lower():
            words += ": it stopped at its iteration limit"
        return words + ": the first cause to look at" + tail
    conv = [(c, m, n) for c, m, n in said.warnings
            if c == "ConvergenceWarning" or any(w in m.lower() for w in _ITERATION_WORDS)]
    if conv:
        c, m, n = conv[0]
        limit = any(w in m.lower() for w in _ITERATION_WORDS)
        return (f"the solver warned {c}: {_short(m)!r}" + (f" ({n} times)" if n > 1 else "")
                + (": it stopped at its iteration limit" if limit else ": it did not converge")
                + ": the first cause to look at" + tail)
    if iteration:
        low = said.output.lower()
        switched = any(w in low for w in _SWITCH_WORDS)
        return (f"the solver stopped at its iteration limit (it printed {_short(iteration)!r}"
                + ("; it then handed the problem to another of its solvers" if switched else "")
                + "): the first cause to look at" + tail)
    return ""


# ---------------------------------------------------------------------------------------------- numbers and b


def _b_words(spec, inst, ans: dict, r, ref, values: dict, failing: set, tol: float, hints: list) -> tuple[str, str]:
    """``(b_wrong, b_from_alpha)``.

    ``b_wrong``: "b is wrong for the answer's own alpha" when the given ``b`` lies outside the KKT interval of the
    answer's own ``alpha`` by more than ``tol`` (in the solution's unit) and that alpha is optimal (box, equality,
    b-free residual and objective pass: "b for this alpha" means something). For an alpha that meets its KKT conditions
    only to its b-free residual ``rho`` (``stationarity``) the interval is widened by ``rho`` on each side: that is
    where the maximal violating pair ``m, M`` lies, and where a solver stopped at ``rho`` puts ``b`` (LIBSVM
    averages the free alpha_i's ``-y_i grad_i``, each in ``[M, m]``). The averaging slip is named only when ``b``
    equals the average of ``y_i - W.Phi(x_i)`` over every support vector (computed). ``b_from_alpha``: when ``b``
    fails against the reference but lies within its own alpha's interval: the b error comes from ``alpha``."""
    if not (spec.has_b and spec.advice and r.b is not None and not r.b_derived):
        return "", ""
    lo, hi = getattr(r, "b_low", float("nan")), getattr(r, "b_high", float("nan"))
    if not (math.isfinite(lo) or math.isfinite(hi)):
        return "", ""
    b, unit = float(r.b), r.unit
    rho = values.get("stationarity", 0.0)
    if math.isfinite(rho) and rho > 0:  # an inaccurate alpha: the b a solver stopped at residual rho may return
        lo, hi = lo - rho * unit, hi + rho * unit
    out_by = max((lo - b) if math.isfinite(lo) else 0.0, (b - hi) if math.isfinite(hi) else 0.0, 0.0) / unit
    rlo, rhi = (ref.b_low, ref.b_high) if ref is not None else (float("nan"), float("nan"))
    bb, lo_s, hi_s, rlo_s, rhi_s = apart(b, lo, hi, rlo, rhi)
    alpha_ok = not ({"box", "equality", "stationarity", "objective_gap"} & failing)
    if out_by > tol and alpha_ok:
        words = (f"b is wrong for the answer's own alpha: b = {bb} lies {out_by:.2e} outside the KKT interval "
                 f"[{lo_s}, {hi_s}] of that alpha")
        if hints:
            return words + "; the hint below names the likely cause", ""
        avg = spec.average_b(inst, ans, r) if spec.average_b is not None else None
        if avg is not None and abs(avg - b) <= tol * unit:
            words += (f"; b equals the average of y_i - W.Phi(x_i) over every support vector ({apart(avg)[0]}), bounded "
                      "ones included: average over the free alpha_i (strictly inside the box) only")
        return words, ""
    if "b_gap" in failing and ref is not None and out_by <= tol:
        return "", (f"b = {bb} is right for the answer's own alpha (inside the KKT interval [{lo_s}, {hi_s}] of that "
                    f"alpha) but {values['b_gap']:.2e} outside the reference's [{rlo_s}, {rhi_s}]: the b error comes "
                    "from alpha, not from how b was computed")
    return "", ""


def _not_optimal(spec, values: dict, failing: set) -> str:
    """"not optimal (objective gap ..., stationarity ...)" naming the failed checks other than box and equality."""
    rest = [k for k in ORDER if k in failing and k not in ("box", "equality")]
    if not rest:
        return ""
    parts = []
    if "objective_gap" in values and not math.isnan(values["objective_gap"]):
        parts.append(f"objective gap {values['objective_gap']:.1e}")
    at_b = "KKT residual at b" if spec.has_b else "KKT residual"
    for k in rest:
        if k != "objective_gap":
            name = {"stationarity": spec.stationarity_words, "kkt_absolute": at_b}.get(k, k.replace("_", " "))
            parts.append(f"{name} {values[k]:.1e}")
    return f"not optimal ({', '.join(parts)})"


# ---------------------------------------------------------------------------------------------- the diagnosis


def diagnose(spec, inst, ans: dict, r, values: dict, tols: dict, tol: float, hints: list | None = None,
             said: SolverReport | None = None, ref=None) -> list[str]:
    """Plain-words diagnoses of a failed answer, the cause first (see the module docstring).

    1. what the solver said (a status other than optimal, a convergence warning, its iteration limit);
    2. another problem the answer solves exactly (:func:`other_problem`: a regularised or absent bias, another C,
       gamma, epsilon or kernel, K rounded to float32); when one is found, the failed checks it explains are not
       repeated;
    3. the facts: "b is wrong for the answer's own alpha", "box violated", the equality, "not optimal (...)";
    4. where nothing above names a cause: the stopping tolerance (every KKT condition holds to a small residual
       above ``tol``), or "verify does not know the cause".

    ``hints`` are those of :func:`hints` for the same answer (a diagnosis does not contradict them); ``said`` what
    the solver reported (:class:`SolverReport`); ``ref`` the reference (its KKT interval of ``b``).
    """
    failing = bad(values, tols)
    out: list[str] = []
    first = _solver_said(spec, said, values, failing)
    if first:
        out.append(first)
    other = other_problem(spec, inst, ans, r, values, tol, tols, failing)
    if other:
        out.append(other)
        return out
    b_wrong, b_from_alpha = _b_words(spec, inst, ans, r, ref, values, failing, tol, hints or [])
    if b_wrong:
        out.append(b_wrong)
    if "box" in failing:
        out.append("box violated: " + r.where.get("box", ""))
    if "equality" in failing:
        out.append(f"{spec.equality_words}: " + r.where.get("equality", ""))
    if not b_wrong:
        not_optimal = _not_optimal(spec, values, failing)
        if not_optimal:
            out.append(not_optimal + (f"; {b_from_alpha}" if b_from_alpha else ""))
    if not first and not b_wrong and not hints:
        out.append(_stopping(spec, values, failing, tol, said))
    return [o for o in out if o]


#: The largest b-free KKT residual that verify reads as "stopped early" rather than "not solved".
STOPPED_EARLY_MAX = 0.1


def _stopping(spec, values: dict, failing: set, tol: float, said: SolverReport | None) -> str:
    """The stopping tolerance as the cause, where the evidence is there: the box and the equality hold, and the
    answer meets every KKT condition to a residual between ``tol`` and :data:`STOPPED_EARLY_MAX`; else "verify does
    not know the cause"."""
    rho = values.get("stationarity", float("nan"))
    k_abs = values.get("kkt_absolute", float("nan"))
    own = max(v for v in (rho, k_abs) if math.isfinite(v)) if any(math.isfinite(v) for v in (rho, k_abs)) else None
    if ({"box", "equality"} & failing) or own is None or not own <= STOPPED_EARLY_MAX:
        return ("verify does not know the cause: the answer is not a solution of this problem to tol, and it "
                "solves none of the neighbouring problems verify tries (docs/verify.md, 'Causes verify names')")
    passed = ""
    if said is not None and said.tol is not None:
        passed = (f"; verify passed tol = {said.tol:g} to its parameter {said.tol_parameter}, so that parameter "
                  "measures something else than these residuals, or was not met")
    if own <= tol:  # its own conditions hold to tol: what fails is a comparison with the reference
        return (f"the answer meets its own KKT conditions to {own:.1e}, within tol, yet differs from the reference by "
                "more than tol (the measured gaps): on this instance a KKT residual below tol does not bound the "
                "error of the solution (an ill-conditioned kernel or a degenerate active set); a tighter stopping "
                "tolerance of the solver brings it closer" + passed)
    return (f"stopped early: the answer meets every KKT condition to {own:.1e} (in the solution's units), above "
            f"tol = {tol:g}: what a solver leaves when it stops at a tolerance near {own:.0e} (LIBSVM's -e, "
            "scikit-learn's tol, default 1e-3); tighten the solver's stopping tolerance" + passed)


# ---------------------------------------------------------------------------------------------- other problems


def _solves(spec, inst, ans: dict, tol: float, tols: dict, skip: tuple = (), **change) -> dict | None:
    """The residuals of ``ans`` for the problem ``change`` (``K=``, ``hyper=``), or None when one of them (other than
    ``skip``) fails, or none could be computed."""
    try:
        _, vals, _ = evaluate(spec, inst, ans, None, tol, compare=False, **change)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None
    for k in skip:
        vals[k] = float("nan")
    return vals if self_consistent(vals, tols) else None


def _no_or_regularised_bias(spec, inst, ans, r, values, tol, tols, failing) -> str:
    """A bias left out (b = 0, no constraint e'alpha = 0) or put in the penalty (``1/2 b^2 / c`` added to the primal:
    LIBLINEAR's ``-B``, scikit-learn's ``LinearSVC``; its signature is ``b = c sum_i coef_i``, the kernel
    ``K + c 11'`` and no equality). Tried only when the equality fails by more than 100 tol (a near miss of
    ``e'alpha = 0`` says nothing about the bias)."""
    if not (spec.has_b and not spec.on_features and "equality" in failing and values.get("equality", 0) > 100 * tol
            and r.coef is not None and ans.get("alpha") is not None):
        return ""
    s = float(np.sum(r.coef))
    given = ans.get("b")
    eq = r.where.get("equality", "")
    if given is None or abs(float(given)) <= tol * r.unit:
        if _solves(spec, inst, {**ans, "b": 0.0}, tol, tols, skip=("equality",)):
            return (f"solves the problem without a bias instead: b = {0.0 if given is None else float(given):.3g} and "
                    f"{eq}; the answer is optimal for f(x) = W.Phi(x) with no b and no constraint "
                    f"{spec.equality_words.replace(' != ', ' = ')} (add the bias and its multiplier)")
        return ""
    b = float(given)
    if s == 0.0 or not b / s > 0:
        return ""
    c = b / s
    K2 = inst.K + c
    ok = _solves(spec, inst, {**ans, "b": 0.0}, tol, tols, skip=("equality",), K=K2)
    C2 = None
    if ok is None and spec.box_dual is not None and spec.box_dual.shift:
        C2 = _ls_C(spec, inst, ans, K2, 0.0)
        if C2 is not None:
            ok = _solves(spec, inst, {**ans, "b": 0.0}, tol, tols, skip=("equality",), K=K2,
                         hyper={**inst.hyper, "C": C2})
    if ok is None:
        return ""
    what = "sum_i alpha_i y_i" if spec.classification else "sum_i alpha_i"
    ratio = (f"b = {what} (to {abs(c - 1.0):.1e})" if abs(c - 1.0) <= 1e-3
             else f"b = c {what} with c = {c:.6g} (c = B^2 for a bias feature of value B)")
    out = (f"solves the problem with a regularised bias instead: b is in the penalty (1/2 b^2 / c added to the primal, "
           f"as LIBLINEAR's -B and scikit-learn's LinearSVC do), whose signature is {ratio}, with no constraint "
           f"{spec.equality_words.replace(' != ', ' = ')}")
    if C2 is not None:
        out += (f", and C = {C2:.6g} instead of C = {inst.hyper['C']:g} (as a code does that solves "
                f"(K + c 11' + I/C') alpha = y with b = c 1'alpha and its own C')")
    return out + ": a different problem from this formulation's (give b its own multiplier and the constraint)"


def _ls_C(spec, inst, ans, K, b) -> float | None:
    """The C that an LS-SVM-type answer (``alpha_i / C`` in its margin equations, 000 eq. (7), 004 system (2))
    satisfies best, by least squares on those equations: ``1/C = sum_i alpha_i u_i / sum_i alpha_i^2`` with
    ``u_i = 1 - y_i f(x_i)`` (resp. ``y_i - f(x_i)``); None when it is not a positive finite number."""
    alpha = np.asarray(ans["alpha"], dtype=float)
    v = alpha * inst.y if spec.classification else alpha
    f = K @ v + b
    u = (1.0 - inst.y * f) if spec.classification else (inst.y - f)
    den = float(alpha @ alpha)
    if den <= 0:
        return None
    inv = float(alpha @ u) / den
    if not (inv > 0 and math.isfinite(inv)):
        return None
    C2 = 1.0 / inv
    return C2 if math.isfinite(C2) and abs(C2 - inst.hyper["C"]) > 1e-9 * inst.hyper["C"] else None


def _own_worst(values: dict, exclude: tuple = ()) -> tuple[str, float]:
    """The largest of the answer's own residuals (no comparison with the reference; not those in ``exclude``), and
    its name."""
    own = [(k, values[k]) for k in ORDER if k not in COMPARISONS and k not in exclude
           and math.isfinite(values.get(k, float("nan")))]
    return max(own, key=lambda kv: kv[1]) if own else ("", float("nan"))


def _float32(spec, inst, ans, r, values, tol, tols, failing) -> str:
    """K rounded to float32 (LIBSVM's and scikit-learn's kernel cache keep float32 columns): the answer's own
    residuals fail on K and pass on that K; or they pass on both, a comparison with the reference fails, and on the
    float32 K they are within tol / 10 and ten times smaller than on K (the answer solves that K much better)."""
    if spec.on_features or inst.K is None or inst.N > MAX_N_PROBE:
        return ""
    K32 = inst.K.astype(np.float32).astype(float)
    if np.array_equal(K32, inst.K):
        return ""
    own_fail = [k for k in failing if k not in COMPARISONS]
    vals = _solves(spec, inst, ans, tol, tols, K=K32)
    if vals is None:
        return ""
    worst, r64 = _own_worst(values, exclude=("box", "equality"))  # those that depend on K
    r32 = vals.get(worst, float("nan"))
    if own_fail:
        return (f"solves the problem for K rounded to float32 instead: on that K every KKT residual is within tol "
                f"({worst} {r32:.1e} there, {r64:.1e} on K in double precision); a float32 kernel (LIBSVM's and "
                "scikit-learn's kernel cache keep float32 columns) limits the answer to about that accuracy: keep K in "
                "double precision, or judge it at a tol above it")
    _, r32_worst = _own_worst(vals, exclude=("box", "equality"))
    if not (r32_worst <= 0.1 * tol and r32_worst <= 0.1 * r64):
        return ""
    return (f"solves the problem for K rounded to float32 instead: its KKT residuals are {r32_worst:.1e} on that K and "
            f"{r64:.1e} on K in double precision, and the float32 rounding of K moves the solution by about the "
            "measured gaps; a float32 kernel (LIBSVM's and scikit-learn's kernel cache keep float32 columns) limits the "
            "answer to that accuracy: keep K in double precision, or judge it at a tol above it")


def _added_diagonal(spec, inst, ans, r, values, tol, tols, failing) -> str:
    """``K + delta I`` instead of ``K`` (a code that adds ``lambda N I``, or the modified kernel's ``I/C`` where it does
    not belong), with ``delta`` estimated from the answer's free ``alpha_i`` (least squares on their margin
    equations); the LS-SVM-type duals meet this as another C."""
    box = spec.box_dual
    if box is None or box.shift or ans.get("alpha") is None or ans.get("b") is None or inst.N > MAX_N_PROBE:
        return ""
    alpha = np.asarray(ans["alpha"], dtype=float)
    C = inst.hyper["C"]
    lo, hi = box.lower * C, box.upper * C
    free = (alpha > lo + 1e-6 * C) & (alpha < hi - 1e-6 * C) & (alpha != 0)
    if free.sum() < 2:
        return ""
    v = alpha * inst.y
    s = inst.y * (inst.K @ v + float(ans["b"])) - 1.0
    delta = -float(s[free] @ alpha[free]) / float(alpha[free] @ alpha[free])
    if not (math.isfinite(delta) and delta > 1e3 * kkt.rounding(inst.N, float(np.max(np.abs(np.diag(inst.K)))))):
        return ""  # a delta at the rounding of K's entries is K itself
    if _solves(spec, inst, ans, tol, tols, K=inst.K + delta * np.eye(inst.N)) is None:
        return ""
    return (f"solves the problem for K + delta I instead of K, with delta = {delta:.6g} (= {delta * C:.6g} / C, "
            f"= {delta / inst.N:.6g} N): a diagonal was added to the kernel (a lambda N I, or an I/C of the modified "
            "kernel, 000 eq. (2), where it does not belong)")


def other_problem(spec, inst, ans: dict, r, values: dict, tol: float, tols: dict, failing: set | None = None) -> str:
    """"solves ... instead" when the answer satisfies every KKT condition of another problem (empty when none):
    a bias left out or regularised, K in float32, the entry's ``causes`` (RLS's other penalty), the entry's
    ``probes`` (another C, gamma, epsilon; ``K + I/C`` either way; for a near miss, every failed residual within
    100 x its tolerance, only a neighbour whose conditions hold within tol / 100: an answer optimal for C with every
    alpha_i below some C' < C is also optimal for C', so a slightly inaccurate answer often "fits" a smaller C about
    as well as its own), then a diagonal added to K."""
    failing = bad(values, tols) if failing is None else failing
    if not (failing and spec.advice) or (not spec.on_features and not isinstance(inst.K, np.ndarray)):
        return ""  # (a blockwise kernel, at N beyond the reference's reach: each probe would be another pass)
    for probe in (_no_or_regularised_bias, _float32) + tuple(spec.causes):
        words = probe(spec, inst, ans, r, values, tol, tols, failing)
        if words:
            return words
    if "box" in failing:
        return ""  # a box violation is its own story
    if not [k for k in failing if k not in COMPARISONS]:
        return ""  # its own KKT conditions hold: it solves this problem to tol, so no neighbour is "instead"
    near_miss = all(math.isfinite(values.get(k, float("nan"))) and values[k] <= 100.0 * tols[k]
                    for k in failing if k in tols)
    # a near miss names a neighbour only where it meets that problem's conditions a hundred times better than tol
    strict = {k: t / 100.0 for k, t in tols.items()} if near_miss else tols
    for probe in spec.probes:
        for change, message in probe(inst, ans):
            if _solves(spec, inst, ans, tol, strict, **change) is not None:
                return message
    if near_miss:
        return ""
    return _added_diagonal(spec, inst, ans, r, values, tol, tols, failing)


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
