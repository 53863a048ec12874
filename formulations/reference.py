"""Solve a formulation to ground-truth accuracy, explicitly (DESIGN example 3).

cvxpy's default for a QP is OSQP at 1e-5: that is not ground truth. :func:`solve` uses CLARABEL
(interior point) at tight tolerances and cross-checks the optimal value with a second, independent
solver (ECOS by default), reporting the disagreement. A status other than optimal raises
:class:`ReferenceSolveError` naming it.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

__all__ = ["solve", "Solution", "ReferenceSolveError", "ReferenceDisagreementWarning", "SOLVER_OPTIONS"]

#: Tolerances passed to each solver (the tightest each converges at reliably on these problems).
SOLVER_OPTIONS: dict[str, dict] = {
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8, "max_iter": 500},
    "ECOS": {"abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9, "max_iters": 500},
    "OSQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "polishing": True, "max_iter": 200000},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000},
}

#: Relative disagreement of the two solvers' optimal values above which a warning is issued.
DISAGREEMENT_WARN = 1e-6


class ReferenceSolveError(RuntimeError):
    """The reference solver did not return an optimal solution (status named in the message)."""


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
    """

    objective: float
    values: dict
    constraint_duals: list
    status: str
    solver: str
    time: float
    cross_check: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

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
    except cp.error.SolverError as exc:
        return f"solver_error: {exc}", float("nan"), time.perf_counter() - t0
    return problem.status, problem.value, time.perf_counter() - t0


def solve(
    problem: cp.Problem,
    *,
    solver: str = "CLARABEL",
    cross_check: str | None | bool = True,
    options: dict | None = None,
    accept_inaccurate: bool = False,
) -> Solution:
    """Solve ``problem`` to reference accuracy and return a :class:`Solution`.

    Parameters
    ----------
    problem : cvxpy.Problem
        Typically from ``svmref.formulations.get(name).primal(...)`` / ``.dual(...)``.
    solver : str
        Main solver, CLARABEL by default at the tolerances of :data:`SOLVER_OPTIONS`.
    cross_check : str, True, or None/False
        Second solver for the optimal value (True: ECOS; also "OSQP" (with polishing) or "SCS").
        Its relative disagreement is reported in ``Solution.cross_check``; above 1e-6 a
        :class:`ReferenceDisagreementWarning` is issued.
    options : dict
        Extra options for the main solver (override :data:`SOLVER_OPTIONS`).
    accept_inaccurate : bool
        Return ``optimal_inaccurate`` solutions instead of raising (the status is kept).

    Raises
    ------
    ReferenceSolveError
        If the problem is infeasible, unbounded, or the solver fails or is inaccurate. When CLARABEL
        at its tight tolerances stops as inaccurate, it is retried once at its default tolerances
        (recorded in ``Solution.status``) before raising.
    """
    if not problem.is_dcp():
        raise ReferenceSolveError("the problem is not DCP (not convex as written); cvxpy cannot be the reference")
    status, value, t = _run(problem, solver, options)
    if status == cp.OPTIMAL_INACCURATE and solver == "CLARABEL" and not options:
        status2, value2, t2 = _run(problem, solver, None, tight=False)
        t += t2
        if status2 == cp.OPTIMAL:
            status, value = "optimal (CLARABEL default tolerances)", value2
        else:
            status, value = status2, value2
    ok = status.startswith(cp.OPTIMAL) and not status.startswith(cp.OPTIMAL_INACCURATE)
    if not ok and not (accept_inaccurate and status == cp.OPTIMAL_INACCURATE):
        info = getattr(problem, "info", {})
        raise ReferenceSolveError(
            f"reference solve of {info.get('formulation', 'problem')} ({info.get('form', '?')}) with {solver} "
            f"ended with status {status!r} (value {value}); the reference is not trusted"
        )
    values = {v.name(): (np.array(v.value) if v.value is not None else None) for v in problem.variables()}
    values = {k: (float(v) if v is not None and v.ndim == 0 else v) for k, v in values.items()}
    duals = [c.dual_value for c in problem.constraints]
    objective = float(value)
    check: dict = {}
    if cross_check:
        second = "ECOS" if cross_check is True else str(cross_check)
        with warnings.catch_warnings():
            # the second solver's own status is recorded below; its cvxpy warning would only repeat it
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            s2, v2, t2 = _run(problem, second, None)
        check = {"solver": second, "objective": float(v2) if v2 is not None else float("nan"), "status": s2,
                 "rel_diff": _rel(objective, float(v2)) if s2 in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else float("inf"),
                 "time": t2}
        if not check["rel_diff"] <= DISAGREEMENT_WARN:
            warnings.warn(
                f"reference cross-check: {second} ({s2}) gives {check['objective']:.12g}, {solver} gives "
                f"{objective:.12g} (relative difference {check['rel_diff']:.2e})",
                ReferenceDisagreementWarning,
                stacklevel=2,
            )
        # restore the main solver's variable values (the cross-check overwrote them)
        for v in problem.variables():
            v.value = values[v.name()]
    return Solution(objective, values, duals, status, solver, t, check, dict(getattr(problem, "info", {})))
