"""``svmref.verify.check``: run a solver on a suite and hold each answer against the reference."""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping

import numpy as np

from . import kkt
from .instances import TASK, Instance, suite
from .reference import Reference, reference, sparse_reference
from .report import Record, Report
from .worker import PlainAnswer, Runner

__all__ = ["check", "check_signature", "SignatureError", "pass_tolerance", "CALL_FORMS", "TOLERANCES", "tolerances",
           "DEFAULT_TOL"]

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
_ORDER = ("box", "equality", "objective_gap", "primal_feasibility", "complementarity", "stationarity",
          "kkt_absolute", "duality_gap", "decision_gap")

_KKT_NAMES = ("box", "equality", "primal_feasibility", "complementarity", "stationarity")


def tolerances(tol: float = DEFAULT_TOL) -> dict[str, float]:
    """The table of tolerances used at ``tol`` (see :data:`TOLERANCES`)."""
    return {k: f(tol) for k, f in TOLERANCES.items()}


class _BadAnswer(Exception):
    """The solver's answer cannot be used (wrong type, length, NaN); the message says why."""


def _accepts_tol(fn) -> bool:
    try:
        return "tol" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _vector(v, name: str, n: int) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise _BadAnswer(f"{name} is not numeric ({type(v).__name__}: {exc})") from None
    a = np.squeeze(a) if a.ndim > 1 and 1 in a.shape else a
    if a.ndim != 1:
        raise _BadAnswer(f"{name} must be a vector of length {n}; got an array of shape {a.shape}")
    if a.shape[0] != n:
        raise _BadAnswer(f"{name} has length {a.shape[0]}, expected {n}")
    bad = ~np.isfinite(a)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise _BadAnswer(f"{name}_{i} = {a[i]} is not finite ({int(bad.sum())} non-finite entries)")
    return a


def _scalar(v, name: str) -> float | None:
    if v is None:
        return None
    try:
        x = float(np.asarray(v, dtype=float).reshape(-1)[0]) if np.ndim(v) else float(v)
        if np.size(v) != 1:
            raise ValueError(f"size {np.size(v)}")
    except (TypeError, ValueError, IndexError) as exc:
        raise _BadAnswer(f"{name} must be a number; got {v!r} ({exc})") from None
    if not math.isfinite(x):
        raise _BadAnswer(f"{name} = {x} is not finite")
    return x


def _get(out, name):
    if isinstance(out, Mapping):
        return out.get(name)
    return getattr(out, name, None)


def _short(x) -> str:
    if isinstance(x, np.ndarray):
        return f"ndarray of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of length {len(x)}"
    return type(x).__name__


def _received(out) -> str:
    """What the solver returned, for an error message: its type, and for a sequence its length and items."""
    if isinstance(out, PlainAnswer):
        return f"a {out.type_name} (attributes {', '.join(k for k in vars(out) if k != 'type_name') or 'none'})"
    if isinstance(out, (tuple, list)):
        items = ", ".join(_short(x) for x in out[:4]) + (", ..." if len(out) > 4 else "")
        return f"a {type(out).__name__} of length {len(out)} ({items})"
    if isinstance(out, np.ndarray):
        return f"an ndarray of shape {out.shape}"
    return f"a {type(out).__name__}"


def _parse(out, task: str, inst: Instance) -> dict:
    """The solver's answer as arrays, per the contract (see the package docstring)."""
    N = inst.N
    if task == "rls":
        c = out
        if isinstance(out, Mapping) or (not isinstance(out, (np.ndarray, list, tuple)) and hasattr(out, "c")):
            c = _get(out, "c")
        elif isinstance(out, tuple) and len(out) == 1:
            c = out[0]
        elif isinstance(out, tuple):
            raise _BadAnswer(f"an RLS solver returns c or an object with .c; got {_received(out)}")
        if c is None:
            raise _BadAnswer(f"an RLS solver returns c or an object with .c; got {_received(out)}")
        return {"c": _vector(c, "c", N)}
    if task == "features":
        if isinstance(out, (tuple, list, np.ndarray)):
            raise _BadAnswer("a support features solver returns an object (or dict) with .lam and/or .a, .b; "
                             f"got {_received(out)}")
        lam, a, b = _get(out, "lam"), _get(out, "a"), _get(out, "b")
        if lam is None and a is None:
            raise _BadAnswer(f"the answer has neither .lam nor .a ({_received(out)})")
        if lam is None and b is None:
            raise _BadAnswer("a primal answer (.a without .lam) must also give .b")
        return {"lam": None if lam is None else _vector(lam, "lam", N),
                "a": None if a is None else _vector(a, "a", inst.X.shape[1]),
                "b": _scalar(b, "b")}
    # box duals, regression, sparse
    if isinstance(out, np.ndarray):
        alpha, b = out, None
    elif isinstance(out, Mapping) or hasattr(out, "alpha"):
        alpha, b = _get(out, "alpha"), _get(out, "b")
    elif isinstance(out, (tuple, list)) and len(out) in (1, 2) and not np.isscalar(out[0]):
        alpha, b = out[0], (out[1] if len(out) == 2 else None)
    else:
        raise _BadAnswer(f"the solver returns (alpha, b), alpha, or an object with .alpha and .b; "
                         f"got {_received(out)}")
    if alpha is None:
        raise _BadAnswer(f"the answer's alpha is None ({_received(out)})")
    return {"alpha": _vector(alpha, "alpha", N), "b": _scalar(b, "b")}


#: How verify calls a solver of each task (for signature errors and the docs).
CALL_FORMS = {
    "box": "f(K, y, C, **options)",
    "regression": "f(K, y, C, **options)",
    "rls": "f(K, y, gamma, **options)",
    "features": "f(X, y, C, mu, **options)",
    "svr": "f(K, y, C, epsilon=epsilon, **options)",
}


class SignatureError(TypeError):
    """The solver cannot be called the way verify calls it (checked once, before any instance runs)."""


def check_signature(solver, formulation: str, options: dict | None = None, name: str | None = None) -> bool:
    """Check that ``solver`` can be called as verify calls it for ``formulation``.

    Raises :class:`SignatureError` naming the expected call (``f(K, y, C, **options)``, ...) and the
    solver's own signature. Returns False when the signature cannot be inspected (a builtin), True otherwise.
    """
    task = TASK[formulation]
    kw = dict(options or {})
    if _accepts_tol(solver):
        kw.setdefault("tol", DEFAULT_TOL)
    try:
        sig = inspect.signature(solver)
    except (TypeError, ValueError):
        return False
    npos = 4 if task == "features" else 3
    if task == "svr":
        kw.setdefault("epsilon", 0.1)  # epsilon-SVR: the tube half-width goes by keyword (CALL_FORMS)
    try:
        sig.bind(*range(npos), **kw)
    except TypeError as exc:
        label = name or _name(solver)
        extra = f" with options {sorted(options)}" if options else ""
        raise SignatureError(f"the solver {label}{sig} cannot be called as {CALL_FORMS[task]}{extra}, which is how "
                             f"verify calls a {formulation} solver ({exc})") from None
    return True


def _arguments(solver, task: str, inst: Instance, tol: float, options: dict) -> tuple[tuple, dict]:
    """Positional arguments (copies, so the solver cannot corrupt the instance) and keywords."""
    kw = dict(options)
    if _accepts_tol(solver) and "tol" not in kw:
        kw["tol"] = tol
    h = inst.hyper
    if task == "rls":
        return (inst.K.copy(), inst.y.copy(), h["gamma"]), kw
    if task == "features":
        return (inst.X.copy(), inst.y.copy(), h["C"], h["mu"]), kw
    if task == "svr":
        kw.setdefault("epsilon", h["epsilon"])
    return (inst.K.copy(), inst.y.copy(), h["C"]), kw


def _decision(task: str, inst: Instance, coef, b) -> tuple[np.ndarray, float]:
    """``W . Phi(x)`` on the held-out points, and ``b``."""
    g = inst.X_test @ coef if task == "features" else inst.K_test @ coef
    return g, float(b or 0.0)


def _name(solver) -> str:
    mod = getattr(solver, "__module__", None) or ""
    qn = getattr(solver, "__qualname__", None) or getattr(solver, "__name__", None) or type(solver).__name__
    return f"{mod}:{qn}" if mod and mod != "__main__" else qn


# ------------------------------------------------------------------------------ one evaluation


def _evaluate(formulation, task, inst, ans, ref, eps, *, K=None, hyper=None, compare=True):
    """The residuals of ``ans`` and every checked quantity: ``(r, values, where)``.

    ``K``/``hyper`` replace the instance's (to ask whether the answer solves a different problem);
    ``compare`` adds the objective and decision gaps against ``ref`` (only meaningful for the instance's
    own problem).
    """
    h = dict(inst.hyper if hyper is None else hyper)
    Km = inst.K if K is None else K
    with np.errstate(all="ignore"):
        if formulation in kkt.EXTRA_RESIDUALS:  # a self-contained block (e.g. epsilon-SVR) registered in kkt
            r = kkt.EXTRA_RESIDUALS[formulation](Km, inst.y, h, ans, eps)
        elif task == "rls":
            r = kkt.rls_residuals(Km, inst.y, h["gamma"], ans["c"])
        elif task == "features":
            r = kkt.support_features_residuals(inst.X, inst.y, h["C"], h["mu"], ans["lam"], ans["a"], ans["b"], eps=eps)
        elif formulation == "sparse_ls_svm":
            r = kkt.sparse_ls_svm_residuals(Km, inst.y, h["C"], ans["alpha"], ans["b"])
        else:
            r = kkt.box_dual_residuals(formulation, Km, inst.y, h["C"], ans["alpha"], ans["b"], eps=eps)
    for k in r.where:  # an applicable residual that came out NaN could not be computed (overflow): inf
        if math.isnan(r.values.get(k, 0.0)):
            r.values[k] = float("inf")
    values, where = dict(r.values), dict(r.where)
    if compare and ref is not None and ref.convex and not ref.error:
        og = abs(r.objective - ref.objective) / max(abs(ref.objective), 1e-12)
        values["objective_gap"] = og
        cert = "" if ref.certified is None else (", certified" if ref.certified else ", NOT certified")
        where["objective_gap"] = (f"objective {r.objective:.10g} vs reference {ref.objective:.10g} "
                                  f"(relative gap {og:.2e}; reference {ref.status}{cert}"
                                  + ("" if math.isnan(ref.disagreement)
                                     else f", cross-check disagreement {ref.disagreement:.1e}") + ")")
        g_s, b_s = _decision(task, inst, r.coef, r.b)
        g_r, b_r = _decision(task, inst, ref.coef, ref.b)
        both_b = r.b_unique and ref.b_unique and task != "rls"
        diff = np.abs(g_s - g_r) + (abs(b_s - b_r) if both_b else 0.0)
        scale = max(1.0, float(np.max(np.abs(g_r + b_r)))) if g_r.size else 1.0
        dg = float(np.max(diff)) / scale if diff.size else 0.0
        values["decision_gap"] = dg
        where["decision_gap"] = ("decision function differs from the reference's on held-out points by "
                                 f"{dg:.2e} (relative)"
                                 + ("" if both_b else "; b is not unique here, so only W.Phi(x) is compared"))
    return r, values, where


def _failed(values: dict, where: dict, tols: dict) -> list[str]:
    out = []
    for k in _ORDER:
        v = values.get(k, float("nan"))
        if math.isnan(v):
            continue
        if not v <= tols[k]:
            out.append(f"{k} {v:.2e} > {tols[k]:.0e}: {where.get(k, '')}")
    return out


#: The checks whose tolerance is sqrt(tol) (see TOLERANCES): passing needs tol >= value**2.
_SQRT_CHECKS = ("kkt_absolute", "decision_gap")


def _needed(values: dict) -> float:
    """The smallest ``tol`` at which each of ``values`` is within its tolerance (residuals held fixed)."""
    t = 0.0
    for k, v in values.items():
        if k not in TOLERANCES or math.isnan(v):
            continue
        t = max(t, v * v if k in _SQRT_CHECKS else v)
    return t


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
    """The smallest one-digit ``tol`` (> the given one) at which the answer passes every check, or None (>= 1).

    ``evaluate(t)`` returns the checked values with the eps-active threshold at ``t`` (it changes which
    ``alpha_i`` count as at a bound); the candidate from the values at ``tol`` is confirmed by
    re-evaluating at it, and raised until it passes.
    """
    t = _needed(evaluate(tol))
    for _ in range(6):
        if not t < 1.0:
            return None
        cand = _nice_up(max(t, tol * (1 + 1e-12)))
        vals = evaluate(cand)
        if not _failed(vals, {}, tolerances(cand)):
            return cand
        t = max(_needed(vals), _nice_next(cand))
    return None


# ------------------------------------------------------------------------------ diagnoses and hints


def _bad(values: dict, tols: dict) -> set:
    return {k for k, v in values.items() if k in tols and not math.isnan(v) and not v <= tols[k]}


def _self_consistent(values: dict, tols: dict) -> bool:
    """Every residual (no reference comparison) within its tolerance, and at least one was computed."""
    vals = {k: v for k, v in values.items() if k not in ("objective_gap", "decision_gap")}
    return any(not math.isnan(v) for v in vals.values()) and not _bad(vals, tols)


def _diagnose(formulation, task, inst, ans, r, values, tols, ref, tol) -> list[str]:
    """Plain-words diagnoses of a failed answer, most severe first (see the package docstring)."""
    bad = _bad(values, tols)
    out: list[str] = []
    sparse = formulation == "sparse_ls_svm"
    # 1. b is wrong: alpha optimal, b outside its KKT interval
    alpha_ok = not ({"box", "equality", "stationarity", "objective_gap"} & bad)
    lo, hi = getattr(r, "b_low", float("nan")), getattr(r, "b_high", float("nan"))
    if (task != "rls" and not sparse and bad and alpha_ok and not r.b_derived and r.b is not None
            and (math.isfinite(lo) or math.isfinite(hi))):
        b = float(r.b)
        slack = tol * max(1.0, abs(b))
        # [m, M] with m > M when the b-free gap m - M is not 0: then every b in [M, m] is equally good
        lo_, hi_ = sorted((lo, hi)) if math.isfinite(lo) and math.isfinite(hi) else (lo, hi)
        if (math.isfinite(lo_) and b < lo_ - slack) or (math.isfinite(hi_) and b > hi_ + slack):
            interval = f"its KKT interval [{lo_:.6g}, {hi_:.6g}]"
            og = values.get("objective_gap", float("nan"))
            out.append(f"b is wrong: alpha is optimal (objective gap {og:.1e}, b-free KKT gap "
                       f"{values.get('stationarity', float('nan')):.1e}) but b = {b:.6g} is outside {interval}"
                       + ("; a common cause is averaging b over all support vectors, bounded ones included: "
                          "average over the free alpha_i (strictly inside the box) only"
                          if formulation in ("l1_svm", "least_1norm_svm", "support_features", "svr") else ""))
    # 2. box, 3. equality, 4. not optimal
    if "box" in bad:
        out.append("box violated: " + r.where.get("box", ""))
    if "equality" in bad:
        what = {"features": "y'lam != 0", "regression": "sum(alpha) != 0", "svr": "sum(alpha) != 0"}.get(task, "y'alpha != 0")
        out.append(f"{what}: " + r.where.get("equality", ""))
    b_wrong = bool(out) and out[0].startswith("b is wrong")
    rest = [k for k in _ORDER if k in bad and k not in ("box", "equality")]
    if rest and not b_wrong:
        parts = []
        if "objective_gap" in values and not math.isnan(values["objective_gap"]):
            parts.append(f"objective gap {values['objective_gap']:.1e}")
        for k in rest:
            if k != "objective_gap":
                name = {"stationarity": "stationarity" + ("" if task == "rls" or sparse else " (maximal violating pair)"),
                        "kkt_absolute": "absolute KKT residual"}.get(k, k.replace("_", " "))
                parts.append(f"{name} {values[k]:.1e}")
        out.append(f"not optimal ({', '.join(parts)})")
    # 5. a different C / gamma / kernel (only where the box holds: a box violation is its own story).
    # Not for a near miss (every failed residual within 100 x its tolerance): an answer optimal for C with
    # every alpha_i below some C' < C is also optimal for C', so a slightly inaccurate answer often "fits"
    # a smaller C better than its own, and naming that C would send the user after the wrong bug.
    near_miss = bool(bad) and all(
        math.isfinite(values.get(k, float("nan"))) and values[k] <= 100.0 * tols[k] for k in bad if k in tols)
    if bad and not sparse and not b_wrong and "box" not in bad and not near_miss:
        other = _other_problem(formulation, task, inst, ans, tol, tols)
        if other:
            out.append(other)
    return out


#: Above this N the "different kernel" guess (a copy of K) is skipped.
_MAX_N_KERNEL_GUESS = 5000


def _other_problem(formulation, task, inst, ans, tol, tols) -> str:
    """'solved a different C/gamma/kernel' when the answer satisfies the KKT conditions of one."""
    h = dict(inst.hyper)
    N = inst.N
    if task == "rls":
        g = h["gamma"]
        for f, how in ((1.0 / N, "gamma / m (e.g. KernelRidge(alpha=gamma) instead of alpha = m gamma)"),
                       (float(N), "gamma * m"), (0.5, "gamma / 2"), (2.0, "gamma * 2")):
            _, vals, _ = _evaluate(formulation, task, inst, ans, None, tol, hyper={**h, "gamma": g * f}, compare=False)
            if _self_consistent(vals, tols):
                return f"solved a different gamma: the answer is optimal for {how} = {g * f:.6g}, not gamma = {g:.6g}"
        return ""
    C = h["C"]
    cands = []
    vec = ans.get("lam") if task == "features" else ans.get("alpha")
    if vec is not None and formulation in ("l1_svm", "least_1norm_svm", "support_features", "svr"):
        top = float(np.max(np.abs(vec)))
        if top > 0 and abs(top - C) > 1e-3 * C and np.sum(np.abs(np.abs(vec) - top) <= 1e-6 * top) >= 2:
            cands.append(top)  # several alpha_i saturate at the same value: the C the solver used
    cands += [C * f for f in (0.5, 2.0, 0.1, 10.0, 1.0 / N, float(N))]
    for c2 in cands:
        _, vals, _ = _evaluate(formulation, task, inst, ans, None, tol, hyper={**h, "C": c2}, compare=False)
        if _self_consistent(vals, tols):
            return f"solved a different C: the answer satisfies the KKT conditions for C = {c2:.6g}, not C = {C:g}"
    if task == "svr":
        e = h["epsilon"]
        for e2, how in ((0.0, "epsilon = 0 (epsilon ignored: no tube)"), (2.0 * e, "2 epsilon"), (0.5 * e, "epsilon / 2")):
            if e2 == e:
                continue
            _, vals, _ = _evaluate(formulation, task, inst, ans, None, tol, hyper={**h, "epsilon": e2}, compare=False)
            if _self_consistent(vals, tols):
                return (f"solved a different epsilon: the answer satisfies the KKT conditions for {how}, not "
                        f"epsilon = {e:g} (verify passes epsilon by keyword: f(K, y, C, epsilon=...))")
    if task in ("box", "regression") and formulation in kkt.BOX_DUALS and N <= _MAX_N_KERNEL_GUESS:
        shifted = kkt.BOX_DUALS[formulation].shift
        K2 = inst.K - np.eye(N) / C if shifted else inst.K + np.eye(N) / C
        _, vals, _ = _evaluate(formulation, task, inst, ans, None, tol, K=K2, compare=False)
        if _self_consistent(vals, tols):
            return ("solved a different kernel: the answer is optimal for K instead of K + I/C (the I/C of the "
                    "modified kernel, 000 eq. (2), was left out)" if shifted else
                    "solved a different kernel: the answer is optimal for K + I/C, not K (a diagonal I/C was added)")
    return ""


def _transforms(formulation, task, inst, ans):
    """(description, transformed answer) pairs of the known convention slips."""
    out = []
    h = inst.hyper
    if task == "rls":
        c = ans["c"]
        m = inst.N
        for f, how in ((1.0 / m, "c / m"), (float(m), "c * m"), (0.5, "c / 2"), (2.0, "c * 2")):
            out.append((how, {"c": c * f}))
        return out
    if task == "features":
        if ans["lam"] is not None:
            for f, how in ((0.5, "lam / 2"), (2.0, "lam * 2")):
                out.append((how, {**ans, "lam": ans["lam"] * f, "a": None if ans["a"] is None else ans["a"] * f}))
        if ans["b"] is not None:
            out.append(("b -> -b", {**ans, "b": -ans["b"]}))
        return out
    a, b = ans["alpha"], ans["b"]
    y = inst.y
    negb = None if b is None else -b
    if task == "box":
        out.append(("alpha -> y * alpha (your alpha looks like y_i alpha_i: scikit-learn's dual_coef_, or the "
                    "regression convention)", {"alpha": a * y, "b": b}))
        if formulation in ("l1_svm", "l2_svm"):
            out.append(("alpha -> |alpha|", {"alpha": np.abs(a), "b": b}))
        if b is not None:
            out.append(("alpha -> y * alpha and b -> -b", {"alpha": a * y, "b": negb}))
    if task == "svr":
        out.append(("alpha -> -alpha (your alpha looks like alpha^- - alpha^+; the decision function is "
                    "sum_i (alpha^+_i - alpha^-_i) k(x_i, x) + b)", {"alpha": -a, "b": b}))
        if b is not None:
            out.append(("alpha -> -alpha and b -> -b", {"alpha": -a, "b": negb}))
            out.append(("b -> -b (the decision function is sum_i alpha_i k(x_i, x) + b; LIBSVM's rho is -b)",
                        {"alpha": a, "b": negb}))
    elif b is not None:
        out.append(("b -> -b (the decision function is sum_i alpha_i y_i k(x_i, x) + b)", {"alpha": a, "b": negb}))
    C = h["C"]
    scal = [(0.5, "alpha / 2"), (2.0, "alpha * 2")]
    if abs(C - 1.0) > 1e-12:
        scal = [(1.0 / C, "alpha / C"), (C, "alpha * C")] + scal
    for f, how in scal:
        out.append((how, {"alpha": a * f, "b": b}))
    return out


_SWAPS = {"ls_svm": "ls_svm_regression", "ls_svm_regression": "ls_svm", "l1_svm": "least_1norm_svm",
          "least_1norm_svm": "l1_svm"}


def _hints(formulation, task, inst, ans, ref, tol, tols) -> list[str]:
    """'hint: ...' for a failed answer that passes after a known transformation (see :func:`_transforms`)."""
    if formulation == "sparse_ls_svm":
        return []
    out = []
    for how, ans2 in _transforms(formulation, task, inst, ans):
        try:
            _, vals, _ = _evaluate(formulation, task, inst, ans2, ref, tol)
        except (ValueError, FloatingPointError):
            continue
        if not _bad(vals, tols):
            out.append(f"hint: the answer passes after {how}")
            break
    other = _SWAPS.get(formulation)
    if other is not None and task in ("box", "regression"):
        _, vals, _ = _evaluate(other, TASK[other], inst, ans, None, tol, compare=False)
        if _self_consistent(vals, tols):
            conv = {"ls_svm": "alpha is in the regression convention (alpha_i y_i): return y * alpha",
                    "ls_svm_regression": "alpha is in the classification convention: return y * alpha",
                    "l1_svm": "its box is [-C, C], not [0, C]",
                    "least_1norm_svm": "its box is [0, C], not [-C, C]"}[formulation]
            out.append(f"hint: as given, the answer solves {other} ({conv})")
    return out


# ------------------------------------------------------------------------------ check


def check(solver: Callable, formulation: str, instances="quick", tol: float = DEFAULT_TOL, *,
          options: dict | None = None, name: str | None = None, timeout: float | None = None,
          spec: str | None = None, on_record: Callable | None = None) -> Report:
    """Run ``solver`` on each instance and hold its answer against the cvxpy reference.

    Parameters
    ----------
    solver : callable
        Follows the contract of :mod:`svmref.verify` (``f(K, y, C, **options)`` for the box duals,
        ``ls_svm_regression`` and ``sparse_ls_svm``; ``f(K, y, gamma)`` for ``rls``;
        ``f(X, y, C, mu)`` for ``support_features``; ``f(K, y, C, epsilon=epsilon)`` for ``svr``, returning
        ``alpha = alpha^+ - alpha^-`` and ``b``). If it has a parameter named ``tol``,
        ``tol`` is passed to it (each record says so in ``solver_tol`` and its notes). The signature is
        checked once, before any instance runs: :class:`SignatureError` (a ``TypeError``) if it does not fit.
    formulation : str
        One of ``svmref.formulations.names()``.
    instances : str or list of Instance
        A suite name (``"quick"``, ``"standard"``, ``"adversarial"``, ``"real"``) or instances
        (:func:`svmref.verify.instances.suite` with ``n=``, :func:`~svmref.verify.instances.from_data`).
    tol : float
        The tolerance of the check (see :data:`TOLERANCES` for how each quantity uses it).
    options : dict
        Extra keyword arguments for the solver.
    name : str
        How the solver is named in the report (default: ``module:qualname``).
    timeout : float or None
        Seconds per instance. ``None`` (default): the solver runs in this process, without a limit.
        A number: it runs in a worker process that is killed when it overruns (verdict ``timeout``);
        see :mod:`svmref.verify.worker` for which callables can be isolated (any, on Linux).
    spec : str
        ``package.module:callable`` naming ``solver``, for a ``spawn`` worker (platforms without fork).
    on_record : callable
        Called with each :class:`~svmref.verify.report.Record` as it finishes (the CLI prints rows with it).

    Returns
    -------
    Report
        One :class:`~svmref.verify.report.Record` per instance; ``report.passed`` is the overall verdict.
        Ctrl-C (KeyboardInterrupt) stops the run: the report holds the instances that finished and
        ``report.interrupted`` is True.
    """
    from svmref._validation import check_tol

    tol = check_tol(tol)
    if formulation not in TASK:
        raise ValueError(f"formulation must be one of {sorted(TASK)}; got {formulation!r}")
    if not callable(solver):
        raise TypeError(f"solver must be callable; got {type(solver).__name__}")
    if timeout is not None:
        try:
            timeout = float(timeout)
        except (TypeError, ValueError):
            raise ValueError(f"timeout must be a positive number of seconds or None; got {timeout!r}") from None
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a positive number of seconds or None; got {timeout!r}")
    task = TASK[formulation]
    options = dict(options or {})
    if task == "svr" and "epsilon" in options:
        raise ValueError("options must not set epsilon for svr: each instance carries its own epsilon, which verify "
                         "passes to the solver as the keyword epsilon=")
    label = name or _name(solver)
    check_signature(solver, formulation, options, label)
    insts = suite(instances, formulation) if isinstance(instances, str) else list(instances)
    tols = tolerances(tol)
    report = Report([], tol)
    report.planned = len(insts)
    runner = Runner(solver, timeout, spec)
    if runner.note:
        report.notes.append(runner.note)
    solver_tol = tol if (_accepts_tol(solver) and "tol" not in options) else None
    if solver_tol is not None:
        report.notes.append(f"verify passed tol = {tol:g} to the solver (it has a parameter named tol)")
    try:
        for inst in insts:
            rec = _check_one(runner, formulation, task, inst, tol, tols, options, label, solver_tol)
            report.records.append(rec)
            if on_record is not None:
                on_record(rec)
    except KeyboardInterrupt:
        runner.kill()
        report.interrupted = True
    finally:
        runner.close()
    return report


def _check_one(runner, formulation, task, inst, tol, tols, options, label, solver_tol=None) -> Record:
    rec = Record(formulation, label, inst.name, None, "", "", N=inst.N, hyper=dict(inst.hyper))
    rec.solver_tol = solver_tol
    if solver_tol is not None:
        rec.notes.append(f"verify set the solver's tol = {solver_tol:g}")
    if not inst.unique:
        rec.notes.append("the optimal alpha is not unique here: only objective values, KKT residuals and "
                         "the decision function are compared, never alpha")
    # 1. the solver
    args, kwargs = _arguments(runner.solver, task, inst, tol, options)
    res = runner.call(args, kwargs)
    rec.time = res.time
    for cat, msg in res.warnings:
        if cat == "ConvergenceWarning":
            rec.notes.append(f"solver warned: {msg}")
    if res.kind != "ok":
        rec.passed = False
        rec.verdict = "timeout" if res.kind == "timeout" else "error"
        rec.reason = f"solver raised {res.message}" if res.kind == "raised" else res.message
        rec.kkt_violation = rec.duality_gap = rec.objective_gap = float("inf")
        if res.kind == "raised" and res.message.startswith("NotConvexError") and not inst.psd()[0]:
            rec.passed, rec.verdict = None, "not convex"  # a refusal of a non-PSD kernel is the right answer
        return rec
    out = res.value
    status = _get(out, "status") if not isinstance(out, (tuple, list, np.ndarray)) else None
    if isinstance(status, str) and status != "optimal":
        rec.notes.append(f"solver reports status {status!r}")
    try:
        ans = _parse(out, task, inst)
    except _BadAnswer as exc:
        rec.passed, rec.verdict, rec.reason = False, "error", f"unusable answer: {exc}"
        rec.kkt_violation = rec.duality_gap = rec.objective_gap = float("inf")
        return rec
    # 2. the residuals (no reference needed)
    try:
        r, _, _ = _evaluate(formulation, task, inst, ans, None, tol)
    except (ValueError, FloatingPointError) as exc:
        rec.passed, rec.verdict, rec.reason = False, "error", f"residuals cannot be computed: {exc}"
        return rec
    rec.objective = r.objective
    rec.b_derived = r.b_derived
    rec.notes.extend(r.notes)
    rec.residuals = dict(r.values)
    finite_kkt = [r.values[k] for k in _KKT_NAMES if not math.isnan(r.values[k])]
    rec.kkt_violation = max(finite_kkt) if finite_kkt else float("nan")
    rec.duality_gap = r.values["duality_gap"]
    if math.isfinite(getattr(r, "b_low", float("nan"))) or math.isfinite(getattr(r, "b_high", float("nan"))):
        rec.b_interval = [r.b_low, r.b_high]
    # 3. the reference
    ref: Reference = sparse_reference(inst, ans["alpha"]) if formulation == "sparse_ls_svm" else reference(formulation, inst)
    rec.reference_time = ref.time
    rec.reference_certified = ref.certified
    rec.notes.extend(ref.warnings)
    if ref.error:
        rec.passed, rec.verdict = None, "no reference"
        rec.reason = ref.error
        return rec
    _, values, where = _evaluate(formulation, task, inst, ans, ref, tol)
    if ref.convex:
        rec.reference_objective = ref.objective
        rec.reference_disagreement = ref.disagreement
        rec.objective_gap = values["objective_gap"]
        rec.decision_gap = values["decision_gap"]
        if not (r.b_unique and ref.b_unique) and task != "rls":
            rec.notes.append("b not unique (no free alpha_i): decision compared without b")
    else:
        rec.notes.append(ref.message)
    # 4. the verdict
    failed = _failed(values, where, tols)
    if not ref.convex:
        rec.passed, rec.verdict = None, "not convex"
        rec.reason = ref.message.split(";")[0] + (f" (KKT residuals, for information: {failed[0]})" if failed else
                                                  " (the answer satisfies the KKT conditions: a stationary point)")
    elif failed:
        rec.passed, rec.verdict, rec.reason = False, "fail", "; ".join(failed)
        try:
            rec.diagnoses = _diagnose(formulation, task, inst, ans, r, values, tols, ref, tol)
            rec.hints = _hints(formulation, task, inst, ans, ref, tol, tols)
            rec.would_pass_at_tol = pass_tolerance(
                lambda t: _evaluate(formulation, task, inst, ans, ref, t)[1], tol)
        except (ValueError, FloatingPointError) as exc:  # advice is best effort; the verdict stands
            rec.notes.append(f"no diagnosis: {type(exc).__name__}: {exc}")
    else:
        rec.passed, rec.verdict = True, "pass"
        rec.reason = next((n for n in rec.notes if n.startswith("b was not given")), "")
    return rec
