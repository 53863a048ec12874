"""``svmref.verify.check``: run a solver on a suite and hold each answer against the reference."""
from __future__ import annotations

import inspect
import math
import time
import warnings
from collections.abc import Callable, Mapping

import numpy as np

from . import kkt
from .instances import TASK, Instance, suite
from .reference import Reference, reference, sparse_reference
from .report import Record, Report

__all__ = ["check", "TOLERANCES", "tolerances", "DEFAULT_TOL"]

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


def _parse(out, task: str, inst: Instance) -> dict:
    """The solver's answer as arrays, per the contract (see the package docstring)."""
    N = inst.N
    if task == "rls":
        c = out
        if isinstance(out, Mapping) or (not isinstance(out, (np.ndarray, list, tuple)) and hasattr(out, "c")):
            c = _get(out, "c")
        elif isinstance(out, tuple) and len(out) == 1:
            c = out[0]
        if c is None:
            raise _BadAnswer(f"an RLS solver returns c or an object with .c; got {type(out).__name__}")
        return {"c": _vector(c, "c", N)}
    if task == "features":
        if isinstance(out, (tuple, list, np.ndarray)):
            raise _BadAnswer("a support features solver returns an object (or dict) with .lam and/or .a, .b; "
                             f"got a {type(out).__name__}")
        lam, a, b = _get(out, "lam"), _get(out, "a"), _get(out, "b")
        if lam is None and a is None:
            raise _BadAnswer(f"the answer has neither .lam nor .a ({type(out).__name__})")
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
                         f"got {type(out).__name__}")
    if alpha is None:
        raise _BadAnswer("the answer's alpha is None")
    return {"alpha": _vector(alpha, "alpha", N), "b": _scalar(b, "b")}


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
    return (inst.K.copy(), inst.y.copy(), h["C"]), kw


def _residuals(formulation: str, task: str, inst: Instance, ans: dict, eps: float) -> kkt.Residuals:
    h = inst.hyper
    if task == "rls":
        return kkt.rls_residuals(inst.K, inst.y, h["gamma"], ans["c"])
    if task == "features":
        return kkt.support_features_residuals(inst.X, inst.y, h["C"], h["mu"], ans["lam"], ans["a"], ans["b"], eps=eps)
    if formulation == "sparse_ls_svm":
        return kkt.sparse_ls_svm_residuals(inst.K, inst.y, h["C"], ans["alpha"], ans["b"])
    return kkt.box_dual_residuals(formulation, inst.K, inst.y, h["C"], ans["alpha"], ans["b"], eps=eps)


def _decision(task: str, inst: Instance, coef, b) -> tuple[np.ndarray, float]:
    """``W . Phi(x)`` on the held-out points, and ``b``."""
    g = inst.X_test @ coef if task == "features" else inst.K_test @ coef
    return g, float(b or 0.0)


def _name(solver) -> str:
    mod = getattr(solver, "__module__", None) or ""
    qn = getattr(solver, "__qualname__", None) or getattr(solver, "__name__", None) or type(solver).__name__
    return f"{mod}:{qn}" if mod and mod != "__main__" else qn


def check(solver: Callable, formulation: str, instances="quick", tol: float = DEFAULT_TOL, *,
          options: dict | None = None, name: str | None = None) -> Report:
    """Run ``solver`` on each instance and hold its answer against the cvxpy reference.

    Parameters
    ----------
    solver : callable
        Follows the contract of :mod:`svmref.verify` (``f(K, y, C, **options)`` for the box duals,
        ``ls_svm_regression`` and ``sparse_ls_svm``; ``f(K, y, gamma)`` for ``rls``;
        ``f(X, y, C, mu)`` for ``support_features``). If it has a parameter named ``tol``,
        ``tol`` is passed to it.
    formulation : str
        One of ``svmref.formulations.names()``.
    instances : str or list of Instance
        A suite name (``"quick"``, ``"standard"``, ``"adversarial"``, ``"real"``) or instances.
    tol : float
        The tolerance of the check (see :data:`TOLERANCES` for how each quantity uses it).
    options : dict
        Extra keyword arguments for the solver.
    name : str
        How the solver is named in the report (default: ``module:qualname``).

    Returns
    -------
    Report
        One :class:`~svmref.verify.report.Record` per instance; ``report.passed`` is the overall verdict.
    """
    from svmref._validation import check_tol

    tol = check_tol(tol)
    if formulation not in TASK:
        raise ValueError(f"formulation must be one of {sorted(TASK)}; got {formulation!r}")
    if not callable(solver):
        raise TypeError(f"solver must be callable; got {type(solver).__name__}")
    task = TASK[formulation]
    insts = suite(instances, formulation) if isinstance(instances, str) else list(instances)
    label = name or _name(solver)
    tols = tolerances(tol)
    records = [_check_one(solver, formulation, task, inst, tol, tols, dict(options or {}), label) for inst in insts]
    return Report(records, tol)


def _check_one(solver, formulation, task, inst, tol, tols, options, label) -> Record:
    rec = Record(formulation, label, inst.name, None, "", "", N=inst.N, hyper=dict(inst.hyper))
    if not inst.unique:
        rec.notes.append("the optimal alpha is not unique here: only objective values, KKT residuals and "
                         "the decision function are compared, never alpha")
    # 1. the solver
    args, kwargs = _arguments(solver, task, inst, tol, options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            out = solver(*args, **kwargs)
        except Exception as exc:  # the user's code: any exception is a verdict, not a crash
            rec.time = time.perf_counter() - t0
            rec.passed, rec.verdict = False, "error"
            rec.reason = f"solver raised {type(exc).__name__}: {exc}"
            return rec
        rec.time = time.perf_counter() - t0
    for w in caught:
        if w.category.__name__ == "ConvergenceWarning":
            rec.notes.append(f"solver warned: {w.message}")
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
        with np.errstate(all="ignore"):
            r = _residuals(formulation, task, inst, ans, eps=tol)
    except (ValueError, FloatingPointError) as exc:
        rec.passed, rec.verdict, rec.reason = False, "error", f"residuals cannot be computed: {exc}"
        return rec
    for k in r.where:  # an applicable residual that came out NaN could not be computed (overflow): inf
        if math.isnan(r.values.get(k, 0.0)):
            r.values[k] = float("inf")
    rec.objective = r.objective
    rec.b_derived = r.b_derived
    rec.notes.extend(r.notes)
    rec.residuals = dict(r.values)
    finite_kkt = [r.values[k] for k in _KKT_NAMES if not math.isnan(r.values[k])]
    rec.kkt_violation = max(finite_kkt) if finite_kkt else float("nan")
    rec.duality_gap = r.values["duality_gap"]
    # 3. the reference
    ref: Reference = sparse_reference(inst, ans["alpha"]) if formulation == "sparse_ls_svm" else reference(formulation, inst)
    rec.reference_time = ref.time
    rec.notes.extend(ref.warnings)
    values = dict(r.values)
    where = dict(r.where)
    if ref.error:
        rec.passed, rec.verdict = None, "no reference"
        rec.reason = ref.error
        return rec
    if ref.convex:
        rec.reference_objective = ref.objective
        rec.reference_disagreement = ref.disagreement
        rec.objective_gap = abs(r.objective - ref.objective) / max(abs(ref.objective), 1e-12)
        values["objective_gap"] = rec.objective_gap
        where["objective_gap"] = (f"objective {r.objective:.10g} vs reference {ref.objective:.10g} "
                                  f"(relative gap {rec.objective_gap:.2e}; reference {ref.status}, "
                                  f"cross-check disagreement {ref.disagreement:.1e})")
        g_s, b_s = _decision(task, inst, r.coef, r.b)
        g_r, b_r = _decision(task, inst, ref.coef, ref.b)
        both_b = r.b_unique and ref.b_unique and task != "rls"
        diff = np.abs(g_s - g_r) + (abs(b_s - b_r) if both_b else 0.0)
        scale = max(1.0, float(np.max(np.abs(g_r + b_r)))) if g_r.size else 1.0
        rec.decision_gap = float(np.max(diff)) / scale if diff.size else 0.0
        values["decision_gap"] = rec.decision_gap
        where["decision_gap"] = ("decision function differs from the reference's on held-out points by "
                                 f"{rec.decision_gap:.2e} (relative)"
                                 + ("" if both_b else "; b is not unique here, so only W.Phi(x) is compared"))
        if not both_b and task != "rls":
            rec.notes.append("b not unique (no free alpha_i): decision compared without b")
    else:
        rec.notes.append(ref.message)
    # 4. the verdict
    failed = []
    for k in _ORDER:
        v = values.get(k, float("nan"))
        if math.isnan(v):
            continue
        if not v <= tols[k]:
            failed.append(f"{k} {v:.2e} > {tols[k]:.0e}: {where.get(k, '')}")
    if not ref.convex:
        rec.passed, rec.verdict = None, "not convex"
        rec.reason = ref.message.split(";")[0] + (f" (KKT residuals, for information: {failed[0]})" if failed else
                                                  " (the answer satisfies the KKT conditions: a stationary point)")
    elif failed:
        rec.passed, rec.verdict, rec.reason = False, "fail", "; ".join(failed)
    else:
        rec.passed, rec.verdict = True, "pass"
        rec.reason = next((n for n in rec.notes if n.startswith("b was not given")), "")
    return rec
