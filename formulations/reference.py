"""Solve a formulation to ground-truth accuracy, and certify it (DESIGN example 3; issue 18).

cvxpy's default for a QP is OSQP at 1e-5: that is not ground truth. :func:`solve` uses CLARABEL
(interior point) at tight tolerances, then **certifies** the solution on the original K (or X) with
:mod:`._certify`: the objective recomputed, feasibility, KKT residuals and the duality gap, each against
the requested ``tol``; a solution that does not certify is polished (active-set Newton step) and, if it
still does not, :class:`ReferenceSolveError` names the residual that failed and by how much.
Equality-only problems (LS-SVM, LS-SVM regression, RLS, the weighted ISLS problem) are solved directly
(LAPACK, condition estimate, iterative refinement in extended precision) instead. A second solver
(ECOS by default) cross-checks the optimal value on request, and automatically only when the
certificate is marginal or the problem carries none (a plain :class:`cvxpy.Problem`).
A status other than optimal raises :class:`ReferenceSolveError` naming it.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from ._certify import ReferenceAccuracyWarning

__all__ = ["solve", "Solution", "ReferenceSolveError", "ReferenceDisagreementWarning", "ReferenceAccuracyWarning",
           "SOLVER_OPTIONS", "DEFAULT_TOL"]

#: Tolerances passed to each solver (the tightest each converges at reliably on these problems).
SOLVER_OPTIONS: dict[str, dict] = {
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8, "max_iter": 500},
    "ECOS": {"abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9, "max_iters": 500},
    "OSQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "polishing": True, "max_iter": 200000},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000},
}

#: CLARABEL options of the fast route of the box problems: a looser interior-point solve (fewer iterations),
#: which the active-set Newton polish then takes to round-off accuracy before it is certified.
FAST_OPTIONS = {"tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7, "tol_feas": 1e-7, "tol_ktratio": 1e-6, "max_iter": 500}

#: CLARABEL options of the re-solve that polishes a solution that did not certify.
TIGHTER = {"tol_gap_abs": 1e-14, "tol_gap_rel": 1e-14, "tol_feas": 1e-14, "tol_ktratio": 1e-10, "max_iter": 1000}

#: Relative disagreement of the two solvers' optimal values above which a warning is issued.
DISAGREEMENT_WARN = 1e-6

#: Default certification tolerance: relative duality gap (box problems) or estimated relative error
#: (direct solves) of the reference, and feasibility; the KKT residual is held to ``sqrt(tol)``.
DEFAULT_TOL = 1e-8

#: A certificate using more than this fraction of its tolerance is "marginal":
#: with ``cross_check="auto"`` the second solver is then run too.
MARGINAL = 0.1


class ReferenceSolveError(RuntimeError):
    """The reference could not be trusted: the solver's status was not optimal, or the solution did not
    certify on the original K (the message names the residual that failed and by how much)."""


class ReferenceDisagreementWarning(UserWarning):
    """The cross-checking solver's optimal value differs from the reference's by more than 1e-6 relative."""


@dataclass(frozen=True)
class Solution:
    """A reference solution.

    Attributes
    ----------
    objective : float
        Optimal value, in the problem's own sense (see ``problem.info["sense"]``).
    values : dict
        Values of the problem's named variables (``"alpha"``, ``"W"``, ``"b"``, ...).
    constraint_duals : list
        Dual values of the constraints, in the order the problem lists them.
    status, solver : str
        cvxpy status and the solver that produced ``values``.
    time : float
        Seconds in ``problem.solve`` (compilation included).
    cross_check : dict
        ``{"solver", "objective", "status", "rel_diff"}`` of the second solver, or empty.
    info : dict
        ``problem.info`` (formulation, form, citation, hyperparameters, kernel factor report).
    certificate : dict
        The residuals computed on the original K / X (``rel_gap``, ``eq_feasibility``,
        ``bound_feasibility``, ``kkt`` for the box problems; ``condition``, ``est_rel_error``,
        ``backward_error``, ``refinement_steps`` for direct solves), ``method`` and ``tol``; empty
        for a problem that carries no certifier (a plain :class:`cvxpy.Problem`).
    certified : bool
        Every residual is within ``tol``.
    polished : bool
        A polish step (active-set Newton, or iterative refinement) produced ``values``.
    condition : float
        1-norm condition estimate of the linear system (direct solves); ``nan`` otherwise.
    """

    objective: float
    values: dict
    constraint_duals: list
    status: str
    solver: str
    time: float
    cross_check: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    certificate: dict = field(default_factory=dict)
    certified: bool = False
    polished: bool = False
    condition: float = float("nan")

    @property
    def residuals(self) -> dict:
        """The certificate's residuals (name -> value)."""
        return dict(self.certificate.get("residuals", {}))

    @property
    def disagreement(self) -> float:
        """Relative difference of the cross-checking solver's optimal value (``nan`` if none)."""
        return float(self.cross_check.get("rel_diff", float("nan")))

    def __getitem__(self, name):
        return self.values[name]


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(a), abs(b))


def _run(problem: cp.Problem, solver: str, options: dict | None, *, tight: bool = True) -> tuple[str, float, float]:
    opts = dict(SOLVER_OPTIONS.get(solver, {})) if tight else {}
    opts.update(options or {})
    t0 = time.perf_counter()
    try:
        problem.solve(solver=solver, **opts)
    except (cp.error.SolverError, ValueError) as exc:
        # ValueError: e.g. a conic solver's own eigendecomposition of a psd_wrap'ed P with round-off
        # negative eigenvalues ("quad_form canonicalization does not support indefinite matrices")
        return f"solver_error: {str(exc).splitlines()[0][:200]}", float("nan"), time.perf_counter() - t0
    return problem.status, problem.value, time.perf_counter() - t0


def _scale_note(info) -> str:
    """``C x N max|K|``: the size of C K alpha; far from 1 the problem is badly scaled for any solver."""
    h, scale = info.get("hyper", {}), info.get("scale")
    name = next((k for k in ("C", "gamma") if k in h), None)
    if scale is None or name is None:
        return ""
    prod = float(h[name]) * float(scale)
    if 1e-8 <= prod <= 1e8:
        return ""
    return (f"; note {name} x N x max|K| = {prod:.3g}: the problem is badly scaled (e.g. the data's scale or "
            f"{name} is extreme), which is the likely cause")


def _failure_message(info, c, tol) -> str:
    parts = [f"{k} = {v[0]:.3g} > {v[1]:.1g}" for k, v in c.failed.items()]
    return (f"reference of {info.get('formulation', 'problem')} ({info.get('form', '?')}, "
            f"{info.get('hyper', {})}) does not certify on the original data"
            f"{' after polishing' if c.polished or c.method == 'direct' else ''}: " + "; ".join(parts)
            + f" (requested tol {tol:g}); the reference is not trusted" + _scale_note(info))


def _set_values(problem, values):
    for v in problem.variables():
        if v.name() in values and values[v.name()] is not None:
            v.value = np.reshape(np.asarray(values[v.name()], dtype=float), v.shape)


def solve(
    problem: cp.Problem,
    *,
    solver: str = "CLARABEL",
    cross_check: str | None | bool = "auto",
    options: dict | None = None,
    accept_inaccurate: bool = False,
    tol: float = DEFAULT_TOL,
    method: str = "auto",
) -> Solution:
    """Solve ``problem`` to reference accuracy, certify it, and return a :class:`Solution`.

    Parameters
    ----------
    problem : cvxpy.Problem
        Typically from ``svmref.formulations.get(name).primal(...)`` / ``.dual(...)``.
    solver : str
        Main conic solver, CLARABEL by default at the tolerances of :data:`SOLVER_OPTIONS`.
    cross_check : "auto", str, True, or None/False
        Second solver for the optimal value (True: ECOS; also "OSQP" (with polishing) or "SCS").
        ``"auto"`` (default) runs ECOS only when the certificate is marginal (a residual, or the round-off
        floor of the gap, above :data:`MARGINAL` of its tolerance) or when the problem has no certifier.
        Its relative disagreement is reported in ``Solution.cross_check``; above 1e-6 a
        :class:`ReferenceDisagreementWarning` is issued.
    options : dict
        Extra options for the main solver (override :data:`SOLVER_OPTIONS`).
    accept_inaccurate : bool
        Return solutions that are ``optimal_inaccurate`` or do not certify instead of raising
        (``Solution.certified`` and ``status`` say so).
    tol : float
        Certification tolerance (relative duality gap / estimated relative error, feasibility).
    method : "auto", "direct" or "cvxpy"
        ``"auto"``: equality-only problems are solved directly (LAPACK with refinement), the others
        with ``solver``; ``"cvxpy"`` forces the conic solver (its solution is still certified).

    Raises
    ------
    ReferenceSolveError
        If the problem is infeasible, unbounded, or the solver fails, or the solution does not certify
        after polishing (the message names the failed residual), or a direct system is singular to
        working precision (the message gives its condition estimate).
    """
    from svmref._validation import check_positive

    tol = check_positive(tol, "tol")
    if method not in ("auto", "direct", "cvxpy"):
        raise ValueError(f"method must be 'auto', 'direct' or 'cvxpy'; got {method!r}")
    if not problem.is_dcp():
        raise ReferenceSolveError("the problem is not DCP (not convex as written); cvxpy cannot be the reference")
    info = dict(getattr(problem, "info", {}))
    direct = info.get("direct")
    certify = info.get("certify")
    if method == "direct" and direct is None:
        raise ValueError(f"method='direct' needs an equality-only problem; {info.get('formulation', 'this problem')} "
                         f"({info.get('form', '?')}) has inequality constraints")
    c = None
    fast = info.get("fast") if (method == "auto" and solver == "CLARABEL" and not options) else None
    c_fast, t_fast = None, 0.0
    if fast is not None:
        # a box problem: its dual solved by CLARABEL called directly (no cvxpy canonicalisation of the dense
        # quadratic form), certified on K; for a kernel primal (much slower through a rank-N factor) the
        # certified alpha gives the primal point (W = Phi'(y alpha), best b, slacks)
        t0 = time.perf_counter()
        c_fast = fast(problem, tol)
        t_fast = time.perf_counter() - t0
        if c_fast is not None and not c_fast.certified:
            c_fast = None  # fall back to solving the primal as written
    if c_fast is not None:
        c, t = c_fast, t_fast
        values = {k: (float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float)) for k, v in c.values.items()}
        _set_values(problem, values)
        status = "optimal"
        used = solver if info.get("form") == "dual" else f"{solver} (via the dual)"
        duals = list(c.duals) if c.duals is not None else [None for _ in problem.constraints]
    elif direct is not None and method != "cvxpy":
        t0 = time.perf_counter()
        try:
            c = direct(problem, tol)
        except np.linalg.LinAlgError as exc:
            raise ReferenceSolveError(
                f"direct reference solve of {info.get('formulation', 'problem')} ({info.get('form', '?')}, "
                f"{info.get('hyper', {})}) refused: {exc}; the hyperparameters make the problem numerically singular"
            ) from None
        t = time.perf_counter() - t0
        values = {k: (float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float)) for k, v in c.values.items()}
        _set_values(problem, values)
        status, used = "optimal", "LAPACK (direct, refined)"
        duals = [None for _ in problem.constraints]
        if not c.certified:
            msg = _failure_message(info, c, tol)
            if not accept_inaccurate and c.residuals.get("est_rel_error", 0.0) > 1e-2:
                raise ReferenceSolveError(msg)
            warnings.warn(msg.replace("the reference is not trusted", f"expected relative accuracy "
                                      f"{c.residuals.get('est_rel_error', float('nan')):.2g}"),
                          ReferenceAccuracyWarning, stacklevel=2)
            status = "optimal_inaccurate (direct)"
    else:
        status, value, t = _run(problem, solver, options)
        t += t_fast
        if status == cp.OPTIMAL_INACCURATE and solver == "CLARABEL" and not options:
            status2, value2, t2 = _run(problem, solver, None, tight=False)
            t += t2
            if status2 == cp.OPTIMAL:
                status, value = "optimal (CLARABEL default tolerances)", value2
            else:
                status, value = status2, value2
        ok = status.startswith(cp.OPTIMAL) and not status.startswith(cp.OPTIMAL_INACCURATE)
        # a certifier can salvage an inaccurate / stopped / failed solve (polish, re-solve in better scaling)
        salvage = certify is not None and (status in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT)
                                           or status.startswith("solver_error"))
        failure = (f"reference solve of {info.get('formulation', 'problem')} ({info.get('form', '?')}) with {solver} "
                   f"ended with status {status!r} (value {value}); the reference is not trusted")
        if not ok and not salvage and not (accept_inaccurate and status == cp.OPTIMAL_INACCURATE):
            raise ReferenceSolveError(failure)
        values = {v.name(): (np.array(v.value) if v.value is not None else None) for v in problem.variables()}
        values = {k: (float(v) if v is not None and v.ndim == 0 else v) for k, v in values.items()}
        duals = [c_.dual_value for c_ in problem.constraints]
        used = solver
        if certify is not None:
            t0 = time.perf_counter()
            have = all(v is not None for v in values.values()) and not status.startswith("solver_error")
            c = certify(problem, values if have else None, duals if have else None, tol)
            if c is None:
                raise ReferenceSolveError(failure + "; a re-solve in better scaling failed too" + _scale_note(info))
            if not have:
                values = {k: v for k, v in values.items()}
                status = f"{status} -> re-solved in better scaling"
            if not c.certified and solver == "CLARABEL" and not options:
                # polish by re-solving at tighter tolerances (the certifier's own polish did not suffice)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    s3, _, _ = _run(problem, solver, TIGHTER)
                if s3 in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                    v3 = {v.name(): (np.array(v.value) if v.value is not None else None) for v in problem.variables()}
                    v3 = {k: (float(v) if v is not None and v.ndim == 0 else v) for k, v in v3.items()}
                    d3 = [c_.dual_value for c_ in problem.constraints]
                    c3 = certify(problem, v3, d3, tol)
                    if c3 is not None and (c3.certified or c3.residuals.get("rel_gap", np.inf)
                                           < c.residuals.get("rel_gap", np.inf)):
                        c, values, duals = c3, v3, d3
                        c.polished = True
                _set_values(problem, values)
            t += time.perf_counter() - t0
            if c.values:
                values.update({k: (float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float)) for k, v in c.values.items()})
                _set_values(problem, values)
            if not c.certified and not accept_inaccurate:
                raise ReferenceSolveError(_failure_message(info, c, tol) + f" ({solver} status {status!r})")
            if not c.certified:  # only with accept_inaccurate: never labelled "optimal"
                status = f"optimal_inaccurate (not certified: {', '.join(c.failed)}; {solver} said {status!r})"
            elif not ok:
                status = f"optimal (certified; {solver} said {status!r})"
            elif c.polished:
                status = f"{status} (polished)"
        if c is None:
            value = float(value)
    objective = float(c.objective) if c is not None else float(value)
    if c is not None and c.certified and c.residuals.get("rel_floor", 0.0) > tol:
        warnings.warn(
            f"reference of {info.get('formulation', 'problem')} ({info.get('form', '?')}, {info.get('hyper', {})}): "
            f"the duality gap can only be resolved to {c.residuals['rel_floor']:.1e} relative in double precision "
            f"(the floor of evaluating the objectives), above the requested tol {tol:g}; the gap found is "
            f"{c.residuals['rel_gap']:.1e}" + _scale_note(info), ReferenceAccuracyWarning, stacklevel=2)
    cert: dict = {}
    if c is not None:
        cert = {"method": c.method, "tol": tol, "residuals": dict(c.residuals),
                "failed": {k: list(v) for k, v in c.failed.items()}}
    marginal = c is None or (
        c is not None and any(abs(c.residuals.get(k, 0.0)) > MARGINAL * tol
                              for k in ("rel_gap", "eq_feasibility", "bound_feasibility", "est_rel_error",
                                        "rel_floor")))
    run_check = bool(cross_check) and (cross_check != "auto" or marginal)
    check: dict = {}
    if run_check:
        second = "ECOS" if cross_check in (True, "auto") else str(cross_check)
        with warnings.catch_warnings():
            # the second solver's own status is recorded below; its cvxpy warning would only repeat it
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            warnings.filterwarnings("ignore", message="Forming a nonconvex expression")
            s2, v2, t2 = _run(problem, second, None)
        check = {"solver": second, "objective": float(v2) if v2 is not None else float("nan"), "status": s2,
                 "rel_diff": _rel(objective, float(v2)) if s2 in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else float("inf"),
                 "time": t2, "reason": "requested" if cross_check != "auto" else "marginal certificate"}
        failed_to_run = s2.startswith("solver_error")
        if failed_to_run and c is not None and c.certified:
            pass  # recorded in cross_check; the certificate is the evidence
        elif not check["rel_diff"] <= DISAGREEMENT_WARN:
            warnings.warn(
                f"reference cross-check: {second} ({s2}) gives {check['objective']:.12g}, {used} gives "
                f"{objective:.12g} (relative difference {check['rel_diff']:.2e})"
                + (f"; the certified reference (relative gap {c.residuals.get('rel_gap', float('nan')):.1e}) stands"
                   if c is not None and c.certified else ""),
                ReferenceDisagreementWarning,
                stacklevel=2,
            )
        # restore the main solution's variable values (the cross-check overwrote them)
        _set_values(problem, values)
    return Solution(objective, values, duals, status, used, t, check, info, cert,
                    bool(c is not None and c.certified), bool(c is not None and c.polished),
                    float(c.condition) if c is not None else float("nan"))
