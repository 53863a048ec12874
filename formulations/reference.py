"""Solve a formulation to ground-truth accuracy, and certify it: a short dispatcher over named strategies.

The cvxpy model that a formulation builds is the specification; the numbers may be computed another way,
but they are always certified on the original K (or X) against that model (:mod:`._certify`): the
objective recomputed, feasibility, KKT residuals and the duality gap, each against the requested ``tol``.
A solution that does not certify is polished and, if it still does not, :class:`ReferenceSolveError`
names the residual that failed and by how much. The strategies (:data:`STRATEGIES`), each returning one
:class:`Outcome`:

* ``box_dual_yky``: the box problems (l1_svm, l2_svm, least_1norm_svm, dual and primal): the dual on
  ``Y K Y`` solved by CLARABEL called directly, then certified (and polished) on K; a primal's point is
  rebuilt from the certified alpha. Falls back to ``cvxpy_conic`` when it does not certify.
* ``direct_lapack``: the equality-only problems (LS-SVM classification and regression, RLS, the weighted
  ISLS problem), every form: the KKT system by LAPACK with a condition estimate and refinement in extended
  precision.
* ``cvxpy_conic``: the model itself through cvxpy and CLARABEL at tight tolerances, then certified where
  the problem carries a certifier (the LP form, the support features machine, any problem with
  ``method="cvxpy"``); a plain :class:`cvxpy.Problem` or the epsilon-SVR has none.
* the cross-check (:func:`second_solver`): a second solver (ECOS by default) on the model, after any of
  them, on request, and automatically only when the certificate is marginal or the problem carries none.

A status other than optimal raises :class:`ReferenceSolveError` naming it.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from . import _certify as cert
from . import _model
from ._certify import Certified, ReferenceAccuracyWarning
from ._common import ProblemInfo, check_problem

__all__ = ["solve", "Solution", "Outcome", "STRATEGIES", "ReferenceSolveError", "ReferenceDisagreementWarning",
           "ReferenceAccuracyWarning", "SOLVER_OPTIONS", "DEFAULT_TOL"]

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

#: Default certification tolerance: the reported objective within ``tol`` of the model's optimum relative to
#: itself (duality gap of the box problems, estimated relative error of the direct solves), feasibility relative
#: to each constraint's scale; the KKT residuals are held to ``sqrt(tol)``.
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
        Optimal value, in the problem's own sense (see ``problem.info.sense``): the cvxpy model's own
        objective at ``values``.
    values : dict
        Values of the problem's named variables (``"alpha"``, ``"W"``, ``"b"``, ...).
    constraint_duals : list
        Dual values of the constraints, in the order the problem lists them.
    status, solver : str
        cvxpy status and the solver that produced ``values`` (``"LAPACK (direct, refined)"`` for a direct solve,
        ``"CLARABEL (via the dual)"`` for a box primal solved through its dual).
    time : float
        Seconds in ``problem.solve`` (compilation included).
    cross_check : dict
        ``{"solver", "objective", "status", "rel_diff"}`` of the second solver, or empty.
    info : ProblemInfo
        ``problem.info`` at the time of the solve (formulation, form, citation, hyperparameters, kernel
        factor report, the strategy); it reads as a mapping too (``info["hyper"]``).
    certificate : dict
        The residuals computed on the original K / X (``rel_gap``, ``eq_feasibility``,
        ``bound_feasibility``, ``kkt`` for the box problems; ``condition``, ``est_rel_error``,
        ``backward_error``, ``refinement_steps`` for direct solves), the floating-point floor (``abs_floor``,
        ``rel_floor``), the model's own quantities at the returned point (``model_objective``, ``model_violation``,
        ``model_stationarity``, ``model_complementarity``) and ``rel_error_bound``; ``method`` and ``tol``; empty
        for a problem that carries no certifier (a plain :class:`cvxpy.Problem`). Every residual is relative to
        its own scale (no floor at 1).
    certified : bool
        ``objective`` is within ``residuals["rel_error_bound"] <= max(tol, rel_floor)`` of the optimal value of
        the cvxpy model as written, relative to itself (``rel_floor``: the floating-point floor, above ``tol`` only
        with a :class:`ReferenceAccuracyWarning`); the model's constraints hold at ``values`` to ``tol`` relative to
        their scales, and its KKT conditions to ``sqrt(tol)``.
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
    info: ProblemInfo = field(default_factory=ProblemInfo)
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


@dataclass
class Outcome:
    """What one strategy found: the certificate ``cert`` (``None`` for a problem that carries no certifier),
    the variables' ``values`` and the constraint ``duals`` it returns, the ``status``, the ``solver`` that
    produced them, the seconds spent (``time``) and, without a certificate, the solver's optimal ``value``."""

    cert: Certified | None
    values: dict
    duals: list
    status: str
    solver: str
    time: float
    value: float = float("nan")

    @property
    def objective(self) -> float:
        """The certified objective, else the solver's value."""
        return float(self.cert.objective) if self.cert is not None else float(self.value)


@dataclass(frozen=True)
class _Call:
    """One call of :func:`solve`: the problem, its info and the caller's options."""

    problem: cp.Problem
    info: ProblemInfo
    solver: str
    options: dict | None
    tol: float
    accept_inaccurate: bool

    @property
    def default_clarabel(self) -> bool:
        """CLARABEL at this module's own tolerances (no user options): the polishing re-solves may run."""
        return self.solver == "CLARABEL" and not self.options


def _rel(a: float, b: float) -> float:
    """``|a - b| / max(|a|, |b|)``: relative, with no floor (0 when both are 0)."""
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 0 else (0.0 if a == b else float("inf"))


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


def _name(info: ProblemInfo, default: str = "problem") -> str:
    return info.formulation if info.formulation is not None else default


def _form(info: ProblemInfo) -> str:
    return info.form if info.form is not None else "?"


def _scale_note(info: ProblemInfo) -> str:
    """``C x N max|K|``: the size of C K alpha; far from 1 the problem is badly scaled for any solver. For ``C`` the
    note names the kernel's scale and the fix: the kernel enters only as ``C K`` (the problem with ``s K`` and ``C``
    is the one with ``K`` and ``s C``, its dual variables times ``1/s``: 000 eqs. (1)-(5), 003 eq. (3), the
    epsilon-SVR alike), so rescaling K (or C) is what brings the product nearer 1."""
    h, scale = info.hyper, info.scale
    name = next((k for k in ("C", "gamma") if k in h), None)
    if scale is None or name is None:
        return ""
    prod = float(h[name]) * float(scale)
    if 1e-8 <= prod <= 1e8:
        return ""
    if name == "C":
        return (f"; note C x N x max|K| = {prod:.3g} (the kernel's scale N x max|K| = {float(scale):.3g}, C = "
                f"{float(h[name]):g}): the problem is badly scaled, which is the likely cause; K enters only as C K "
                "(kernel s K with C is kernel K with s C), so rescale K (divide it by a constant, e.g. by max|K|, or "
                "rescale the data) or change C to bring C x N x max|K| nearer 1")
    return (f"; note {name} x N x max|K| = {prod:.3g}: the problem is badly scaled (e.g. the data's scale or "
            f"{name} is extreme), which is the likely cause")


def _impossible_status(status: str) -> str:
    """What an "unbounded" or "infeasible" status of a reference solve means: a numerical failure of the solver, since
    every problem of the papers has a feasible point (``alpha = 0``; ``w = 0`` with large slacks) and, with a PSD
    kernel, a bounded optimum (the primal objectives are sums of norms and losses, >= 0; weak duality bounds the
    duals)."""
    if not any(word in str(status) for word in ("unbounded", "infeasible")):
        return ""
    return (f" (status {status!r} is impossible for this problem, which is feasible and, with a PSD kernel, bounded: "
            "it is the solver's numerical failure)")


def _failure_message(info: ProblemInfo, c: Certified, tol: float) -> str:
    parts = [f"{k} = {v[0]:.3g} > {v[1]:.1g}" for k, v in c.failed.items()]
    return (f"reference of {_name(info)} ({_form(info)}, {info.hyper}) does not certify on the original data"
            f"{' after polishing' if c.polished or c.method == 'direct' else ''}: " + "; ".join(parts)
            + f" (requested tol {tol:g}); the reference is not trusted" + _scale_note(info))


def _set_values(problem, values):
    for v in problem.variables():
        if v.name() in values and values[v.name()] is not None:
            v.value = np.reshape(np.asarray(values[v.name()], dtype=float), v.shape)


def _as_values(values: dict) -> dict:
    """A certificate's values as floats (scalars) and float arrays."""
    return {k: (float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float)) for k, v in values.items()}


def _variable_values(problem) -> dict:
    """The values cvxpy left in the problem's variables (``None`` where it left none)."""
    values = {v.name(): (np.array(v.value) if v.value is not None else None) for v in problem.variables()}
    return {k: (float(v) if v is not None and v.ndim == 0 else v) for k, v in values.items()}


# ------------------------------------------------------------------------------------------------
# The strategies: each returns one Outcome, or None to hand over to the next one
# ------------------------------------------------------------------------------------------------
def box_dual_yky(call: _Call) -> Outcome | None:
    """The box dual ``min 1/2 a'(Y K Y)a - 1'a`` (``+ ||a||^2/(2C)`` for l2) s.t. ``y'a = 0`` and the box
    (003 eq. (3); 000 eq. (5)) solved by CLARABEL called directly on ``P = triu(Y K Y)`` to
    :data:`FAST_OPTIONS` (:func:`._certify.clarabel_box_dual`: no cvxpy canonicalisation of the dense quadratic
    form), then certified on K and finished by the active-set Newton polish. For a kernel primal the certified
    alpha gives the primal point (``W = Phi'(y alpha)``, the exact best b, the optimal slacks) and the
    constraint duals are rebuilt. ``None`` (hand over to ``cvxpy_conic``) when it does not certify."""
    box, C = call.info.certifier, call.info.hyper["C"]
    t0 = time.perf_counter()
    try:
        alpha, _, _ = cert.clarabel_box_dual(box.kind, box.K, box.y, C, FAST_OPTIONS)
    except Exception:  # noqa: BLE001 - any failure of the fast route falls back to cvxpy
        return None
    if alpha is None or not np.all(np.isfinite(alpha)):
        return None
    c = box.certify(call.info.hyper, None, None, call.tol, alpha_override=alpha)
    if c is None or not c.certified:
        return None
    c.duals = box.constraint_duals(c, call.info.hyper)
    t = time.perf_counter() - t0
    values = _as_values(c.values)
    _set_values(call.problem, values)
    used = call.solver if call.info.form == "dual" else f"{call.solver} (via the dual)"
    return Outcome(c, values, list(c.duals), "optimal", used, t)


def direct_lapack(call: _Call) -> Outcome:
    """The KKT system of an equality-only problem (``info.system``) solved by LAPACK with a condition estimate
    and refinement in extended precision (:func:`._certify.refined_solve`); a system singular to working
    precision is refused, an estimated error above ``tol`` warned about (:class:`ReferenceAccuracyWarning`)
    and refused above 1e-2 unless ``accept_inaccurate``."""
    info, tol = call.info, call.tol
    t0 = time.perf_counter()
    try:
        c = info.system.solve(info.hyper, tol)
    except np.linalg.LinAlgError as exc:
        raise ReferenceSolveError(
            f"direct reference solve of {_name(info)} ({_form(info)}, {info.hyper}) refused: {exc}; "
            "the hyperparameters make the problem numerically singular"
        ) from None
    t = time.perf_counter() - t0
    values = _as_values(c.values)
    _set_values(call.problem, values)
    status = "optimal"
    if not c.certified:
        msg = _failure_message(info, c, tol)
        if not call.accept_inaccurate and c.residuals.get("est_rel_error", 0.0) > 1e-2:
            raise ReferenceSolveError(msg)
        warnings.warn(msg.replace("the reference is not trusted", f"expected relative accuracy "
                                  f"{c.residuals.get('est_rel_error', float('nan')):.2g}"),
                      ReferenceAccuracyWarning, stacklevel=_CALLER)
        status = "optimal_inaccurate (direct)"
    duals = list(c.duals) if c.duals is not None else [None for _ in call.problem.constraints]
    return Outcome(c, values, duals, status, "LAPACK (direct, refined)", t)


def _run_main(call: _Call) -> tuple[str, float, float]:
    """The main conic solve; an inaccurate CLARABEL solve at this module's tolerances is retried at CLARABEL's own."""
    status, value, t = _run(call.problem, call.solver, call.options)
    if status == cp.OPTIMAL_INACCURATE and call.default_clarabel:
        status2, value2, t2 = _run(call.problem, call.solver, None, tight=False)
        t += t2
        if status2 == cp.OPTIMAL:
            status, value = "optimal (CLARABEL default tolerances)", value2
        else:
            status, value = status2, value2
    return status, value, t


def cvxpy_conic(call: _Call) -> Outcome:
    """The model itself, through cvxpy and ``solver`` at :data:`SOLVER_OPTIONS`, then certified by the problem's
    certifier where it has one (:func:`_certify_conic`), which can also salvage an inaccurate, stopped or
    failed solve; without a certifier any status other than optimal is refused."""
    info, solver = call.info, call.solver
    status, value, t = _run_main(call)
    ok = status.startswith(cp.OPTIMAL) and not status.startswith(cp.OPTIMAL_INACCURATE)
    salvage = info.certifier is not None and (status in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT)
                                              or status.startswith("solver_error") or bool(_impossible_status(status)))
    failure = (f"reference solve of {_name(info)} ({_form(info)}) with {solver} "
               f"ended with status {status!r} (value {value}); the reference is not trusted"
               + _impossible_status(status) + _scale_note(info))
    if not ok and not salvage and not (call.accept_inaccurate and status == cp.OPTIMAL_INACCURATE):
        raise ReferenceSolveError(failure)
    values = _variable_values(call.problem)
    duals = [c_.dual_value for c_ in call.problem.constraints]
    if info.certifier is None:
        return Outcome(None, values, duals, status, solver, t, value=float(value))
    return _certify_conic(call, Outcome(None, values, duals, status, solver, t), ok, failure)


def _certify_conic(call: _Call, out: Outcome, ok: bool, failure: str) -> Outcome:
    """Certify the conic solution on the original data (re-solving in better scaling when the solver left no
    point, at tighter tolerances when it does not certify), and label its status."""
    info, solver, status = call.info, call.solver, out.status
    t0 = time.perf_counter()
    have = (all(v is not None for v in out.values.values()) and not status.startswith("solver_error")
            and not _impossible_status(status))
    c = info.certifier.certify(info.hyper, out.values if have else None, out.duals if have else None, call.tol)
    if c is None:
        raise ReferenceSolveError(failure + "; a re-solve in better scaling failed too" + _scale_note(info))
    if not have:
        status = f"{status} -> re-solved in better scaling"
    if not c.certified and call.default_clarabel:
        c = _tighter(call, c, out)
    out.time += time.perf_counter() - t0
    if c.values:
        out.values.update(_as_values(c.values))
        _set_values(call.problem, out.values)
        out.duals = _duals_at(call, c)
    if not c.certified and not call.accept_inaccurate:
        raise ReferenceSolveError(_failure_message(info, c, call.tol) + f" ({solver} status {status!r})")
    if not c.certified:  # only with accept_inaccurate: never labelled "optimal"
        status = f"optimal_inaccurate (not certified: {', '.join(c.failed)}; {solver} said {status!r})"
    elif not ok:
        status = f"optimal (certified; {solver} said {status!r})"
    elif c.polished:
        status = f"{status} (polished)"
    out.cert, out.status = c, status
    return out


def _duals_at(call: _Call, c: Certified) -> list:
    """The multipliers of the model's constraints at the certificate's point (the solver's no longer match it):
    rebuilt from the certified multipliers by the certifier (box problems, support features machine); unknown
    (``None``) otherwise, and the model's Lagrangian is then not evaluated."""
    rebuild = getattr(call.info.certifier, "constraint_duals", None)
    if rebuild is not None and c.alpha is not None:
        return list(rebuild(c, call.info.hyper))
    return [None for _ in call.problem.constraints]


def _tighter(call: _Call, c: Certified, out: Outcome) -> Certified:
    """Polish by re-solving at :data:`TIGHTER` tolerances (the certifier's own polish did not suffice); the
    re-solve's point replaces ``out``'s values and duals when it certifies or has a smaller gap."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s3, _, _ = _run(call.problem, call.solver, TIGHTER)
    if s3 in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        v3 = _variable_values(call.problem)
        d3 = [c_.dual_value for c_ in call.problem.constraints]
        c3 = call.info.certifier.certify(call.info.hyper, v3, d3, call.tol)
        if c3 is not None and (c3.certified or c3.residuals.get("rel_gap", np.inf) < c.residuals.get("rel_gap", np.inf)):
            c, out.values, out.duals = c3, v3, d3
            c.polished = True
    _set_values(call.problem, out.values)
    return c


def second_solver(call: _Call, out: Outcome, request) -> dict:
    """The second solver on the model (``True``/``"auto"``: ECOS; or the solver named), when requested or, with
    ``"auto"``, when the certificate is marginal or missing. Returns its record (empty when it did not run) and
    warns (:class:`ReferenceDisagreementWarning`) when its optimal value differs by more than
    :data:`DISAGREEMENT_WARN` relative; the main solution's values are restored in the problem afterwards."""
    c, objective = out.cert, out.objective
    marginal = c is None or any(abs(c.residuals.get(k, 0.0)) > MARGINAL * call.tol
                                for k in ("rel_gap", "eq_feasibility", "bound_feasibility", "est_rel_error", "rel_floor"))
    if not (bool(request) and (request != "auto" or marginal)):
        return {}
    second = "ECOS" if request in (True, "auto") else str(request)
    with warnings.catch_warnings():
        # the second solver's own status is recorded below; its cvxpy warning would only repeat it
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        warnings.filterwarnings("ignore", message="Forming a nonconvex expression")
        s2, v2, t2 = _run(call.problem, second, None)
    check = {"solver": second, "objective": float(v2) if v2 is not None else float("nan"), "status": s2,
             "rel_diff": _rel(objective, float(v2)) if s2 in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else float("inf"),
             "time": t2, "reason": "requested" if request != "auto" else "marginal certificate"}
    failed_to_run = s2.startswith("solver_error")
    certified = c is not None and c.certified
    # the second solver resolves the optimal value only to its own absolute gap tolerance: a difference within
    # it is no disagreement (an objective of 1e-5 and ECOS's abstol 1e-9 give 1e-4 relative)
    resolvable = _second_abs_tol(second) / max(abs(objective), abs(check["objective"]), np.finfo(float).tiny)
    check["resolves"] = float(resolvable)
    if not (failed_to_run and certified) and not check["rel_diff"] <= max(DISAGREEMENT_WARN, resolvable):
        # (a cross-check that failed to run is recorded in cross_check; the certificate is the evidence)
        warnings.warn(
            f"reference cross-check: {second} ({s2}) gives {check['objective']:.12g}, {out.solver} gives "
            f"{objective:.12g} (relative difference {check['rel_diff']:.2e})"
            + (f"; the certified reference (relative gap {c.residuals.get('rel_gap', float('nan')):.1e}) stands"
               if certified else ""),
            ReferenceDisagreementWarning,
            stacklevel=_CALLER,
        )
    _set_values(call.problem, out.values)  # the cross-check overwrote them
    return check


# ------------------------------------------------------------------------------------------------
# The model as written, held to the certificate
# ------------------------------------------------------------------------------------------------
def _model_failures(rep: _model.ModelReport, c: Certified, tol: float, reported: float) -> dict:
    """The model's own quantities at the returned point that do not agree with the certificate ``c``:
    its objective outside the certified interval, a constraint violated above ``tol``, its Lagrangian at the
    returned multipliers not stationary to ``sqrt(tol)``, or its complementarity above ``sqrt(tol) |objective|``
    (the KKT conditions are held to ``sqrt(tol)``, as the certificate's own; the objective to ``tol``); and the
    ``reported`` objective further than ``tol`` relative (or the reported floors) from the certified interval."""
    own = rep.objective
    lo, hi = c.bounds if c.bounds is not None else (c.objective, c.objective)
    slack = rep.floor + float(c.residuals.get("rounding", 0.0)) + float(c.residuals.get("abs_floor", 0.0))
    err = max(reported - lo, hi - reported, 0.0)
    c.residuals.update({"model_objective": own, "model_floor": rep.floor, "model_violation": rep.violation,
                        "model_stationarity": rep.stationarity, "model_complementarity": rep.complementarity,
                        "error_bound": err, "rel_error_bound": cert._rel(err, reported)})
    failed = {}
    if not (lo - slack - tol * abs(own) <= own <= hi + slack + tol * abs(own)):
        failed["model_objective"] = (cert._rel(max(own - lo, hi - own), own), tol)
    if not rep.violation <= tol:
        failed["model_violation"] = (rep.violation, tol)
    if not (np.isnan(rep.stationarity) or rep.stationarity <= np.sqrt(tol)):
        failed["model_stationarity"] = (rep.stationarity, np.sqrt(tol))
    if not (np.isnan(rep.complementarity) or rep.complementarity <= np.sqrt(tol) * abs(own) + slack):
        failed["model_complementarity"] = (cert._rel(rep.complementarity, own), np.sqrt(tol))
    if not (np.isnan(rep.dual_sign) or rep.dual_sign <= np.sqrt(tol)):
        failed["model_dual_sign"] = (rep.dual_sign, np.sqrt(tol))
    if not failed and not err <= max(tol * abs(reported), slack):
        failed["rel_error_bound"] = (cert._rel(err, reported), tol)
    return failed


def _at_certified_point(call: _Call, c: Certified) -> bool:
    """The certificate's objective is that of the returned point: it gave a value to every variable."""
    return bool(c.values) and all(v.name() in c.values for v in call.problem.variables())


def hold_to_model(call: _Call, out: Outcome) -> None:
    """Evaluate the cvxpy model as written at the returned point and multipliers (:mod:`._model`) and hold it
    to the certificate. The reported objective is the certificate's when it was computed at the returned point
    (on K, in extended precision for the direct solves), else the model's own there (a conic solver's point);
    the certificate's ``rel_error_bound`` bounds its distance to the optimum. A certified answer the model
    disagrees with is a slip in the model or in the certificate: :class:`ReferenceSolveError`, never a silently
    different answer."""
    c = out.cert
    if c is None:
        return
    _set_values(call.problem, out.values)
    rep = _model.evaluate(call.problem, out.duals, kink=float(np.sqrt(call.tol)))
    reported = c.objective if _at_certified_point(call, c) or not np.isfinite(rep.objective) else rep.objective
    failed = _model_failures(rep, c, call.tol, reported)
    if failed and c.certified:
        parts = "; ".join(f"{k} = {v[0]:.3g} > {v[1]:.1g}" for k, v in failed.items())
        lo, hi = c.bounds if c.bounds is not None else (c.objective, c.objective)
        raise ReferenceSolveError(
            f"reference of {_name(call.info)} ({_form(call.info)}, {call.info.hyper}): the cvxpy model as written "
            f"disagrees with the certified solution ({c.method}): {parts}; its objective at the returned point is "
            f"{rep.objective:.12g}, the certified interval [{lo:.12g}, {hi:.12g}]; the model and the certificate "
            "describe different problems (a slip in one of them)")
    c.failed.update(failed)
    c.objective = float(reported)


def _second_abs_tol(solver: str) -> float:
    """The absolute gap tolerance the cross-checking solver is run at (:data:`SOLVER_OPTIONS`; 0 if none)."""
    o = SOLVER_OPTIONS.get(solver, {})
    return float(o.get("abstol", o.get("tol_gap_abs", o.get("eps_abs", 0.0))))


#: The strategies by name (the cross-check, :func:`second_solver`, runs after any of them).
STRATEGIES = {"box_dual_yky": box_dual_yky, "direct_lapack": direct_lapack, "cvxpy_conic": cvxpy_conic}

#: ``stacklevel`` of the warnings issued by a strategy or helper called from :func:`solve`: the caller of solve.
_CALLER = 3


def _plan(info: ProblemInfo, method: str, call: _Call) -> list[str]:
    """The strategies to try, in order: the first that returns an outcome gives the reference."""
    if method == "cvxpy":
        return ["cvxpy_conic"]
    if info.system is not None:
        return ["direct_lapack"]
    if method == "auto" and info.box_dual and call.default_clarabel:
        return ["box_dual_yky", "cvxpy_conic"]
    return ["cvxpy_conic"]


def _warn_floor(info: ProblemInfo, c: Certified | None, tol: float) -> None:
    """A certified gap that only the floating-point floor of evaluating the objectives bounds, above ``tol``."""
    if c is not None and c.certified and c.residuals.get("rel_floor", 0.0) > tol:
        warnings.warn(
            f"reference of {_name(info)} ({_form(info)}, {info.hyper}): "
            f"the duality gap can only be resolved to {c.residuals['rel_floor']:.1e} relative in double precision "
            f"(the floor of evaluating the objectives), above the requested tol {tol:g}; the gap found is "
            f"{c.residuals['rel_gap']:.1e}" + _scale_note(info), ReferenceAccuracyWarning, stacklevel=_CALLER)


#: A certificate whose floating-point floor (``rel_floor``: the rounding of evaluating the objectives, relative) is
#: above this cannot tell the optimum from a point this far off: the reference is refused (or, with
#: ``accept_inaccurate``, returned as ``optimal_inaccurate`` and not certified), as a direct solve whose estimated
#: error is above it is. Seen: l1_svm on K * 1e300 had a floor of 1.6e286 and was labelled optimal.
FLOOR_REFUSE = 1e-2


def _label_floor(call: _Call, out: Outcome) -> None:
    """The label of an outcome certified by a duality gap whose floor is above ``tol``: ``optimal_inaccurate (floor
    ...)`` (the objective is within ``rel_floor`` of the optimum, not within ``tol``), refused above
    :data:`FLOOR_REFUSE`. The direct solves carry their own estimate of the error (refinement in extended
    precision: ``est_rel_error``), labelled by :func:`direct_lapack`."""
    c = out.cert
    if c is None or not c.certified or "est_rel_error" in c.residuals:  # a direct solve: its own accuracy estimate
        return
    floor = c.residuals.get("rel_floor", 0.0)
    if not floor > call.tol or (np.isinf(floor) and c.residuals.get("gap") == 0.0):
        return  # within tol; or an optimum of exactly 0 reached exactly (a wide tube: beta = 0), not relative
    if floor > FLOOR_REFUSE:
        msg = (f"reference of {_name(call.info)} ({_form(call.info)}, {call.info.hyper}) refused: the floating-point "
               f"floor of evaluating its objectives is {floor:.1e} relative, so the certificate cannot tell the "
               "optimum from a point that far off" + _scale_note(call.info))
        if not call.accept_inaccurate:
            raise ReferenceSolveError(msg)
        c.failed["rel_floor"] = (floor, FLOOR_REFUSE)
    out.status = f"optimal_inaccurate (floor {floor:.1e} > tol {call.tol:g})"


def _check_call(problem, tol, method, solver="CLARABEL", cross_check="auto") -> tuple[float, ProblemInfo]:
    from svmref._validation import check_positive

    check_problem(problem)
    for name, value in (("solver", solver), ("cross_check", cross_check)):
        if name == "cross_check" and (value in (None, False, True, "auto")):
            continue
        if not isinstance(value, str) or value.upper() not in cp.installed_solvers():
            also = " (or 'auto', True, None)" if name == "cross_check" else ""
            raise ValueError(f"{name} must be the name of an installed cvxpy solver{also}: "
                             f"{', '.join(cp.installed_solvers())}; got {value!r}")
    tol = check_positive(tol, "tol")
    if method not in ("auto", "direct", "cvxpy"):
        raise ValueError(f"method must be 'auto', 'direct' or 'cvxpy'; got {method!r}")
    if not problem.is_dcp():
        raise ReferenceSolveError("the problem is not DCP (not convex as written); cvxpy cannot be the reference")
    info = ProblemInfo.from_mapping(getattr(problem, "info", None))
    if method == "direct" and info.system is None:
        raise ValueError(f"method='direct' needs an equality-only problem; {_name(info, 'this problem')} "
                         f"({_form(info)}) has inequality constraints")
    return tol, info


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
        Its relative disagreement is reported in ``Solution.cross_check`` (``rel_diff``, with ``resolves``: the
        second solver's absolute gap tolerance relative to the objective); above 1e-6 and above ``resolves`` a
        :class:`ReferenceDisagreementWarning` is issued.
    options : dict
        Extra options for the main solver (override :data:`SOLVER_OPTIONS`).
    accept_inaccurate : bool
        Return solutions that are ``optimal_inaccurate`` or do not certify instead of raising
        (``Solution.certified`` and ``status`` say so).
    tol : float
        The relative accuracy certified: the reported objective within ``tol`` of the model's optimal value,
        relative to itself (or the reported floating-point floor, with a warning), every constraint of the model
        at ``tol`` relative to its scale, the KKT conditions at ``sqrt(tol)``; for the direct solves also the
        estimated relative error of the solution. The same meaning for every formulation and form.
    method : "auto", "direct" or "cvxpy"
        ``"auto"``: the problem's own strategy (``problem.info.strategy``: ``direct_lapack`` for the
        equality-only problems, ``box_dual_yky`` for the box problems when ``solver`` is CLARABEL without
        ``options``, else ``cvxpy_conic``); ``"direct"`` requires ``direct_lapack``; ``"cvxpy"`` forces the
        conic solver on the model (its solution is still certified).

    Raises
    ------
    ReferenceSolveError
        If the problem is infeasible, unbounded, or the solver fails, or the solution does not certify
        after polishing (the message names the failed residual), or a direct system is singular to
        working precision (the message gives its condition estimate).
    """
    tol, info = _check_call(problem, tol, method, solver, cross_check)
    call = _Call(problem, info, solver, options, tol, accept_inaccurate)
    out, spent = None, 0.0
    for name in _plan(info, method, call):
        t0 = time.perf_counter()
        out = STRATEGIES[name](call)
        if out is not None:
            break
        spent += time.perf_counter() - t0
    out.time += spent
    hold_to_model(call, out)
    c = out.cert
    _warn_floor(info, c, tol)
    _label_floor(call, out)
    certificate = {} if c is None else {"method": c.method, "tol": tol, "residuals": dict(c.residuals),
                                        "failed": {k: list(v) for k, v in c.failed.items()}}
    check = second_solver(call, out, cross_check)
    return Solution(out.objective, out.values, out.duals, out.status, out.solver, out.time, check, info, certificate,
                    bool(c is not None and c.certified), bool(c is not None and c.polished),
                    float(c.condition) if c is not None else float("nan"))
