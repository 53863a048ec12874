"""The reference answer of an instance, from :mod:`svmref.formulations` (cvxpy, CLARABEL, cross-checked).

One reference per (formulation, instance), cached for the process, so that checking several
solvers of the same formulation (``svmref verify --all``) solves each reference once.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import kkt

__all__ = ["Reference", "reference", "sparse_reference", "clear_cache"]


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


#: eps-active threshold (units of C) for the reference's alpha: an interior-point solution sits a
#: little inside its bounds, so "free" (which fixes the reference's b) needs a margin.
REF_EPS = 1e-6

_CACHE: dict = {}


class _Negated:
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


def _solve(prob):
    import svmref.formulations as F

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = F.solve(prob)
    msgs = [f"{type(w.message).__name__}: {w.message}" for w in caught
            if issubclass(w.category, (F.ReferenceDisagreementWarning, F.KernelClipWarning))]
    return sol, msgs


def reference(formulation: str, inst) -> Reference:
    """The (cached) reference of ``inst`` for ``formulation`` (not for ``sparse_ls_svm``: see :func:`sparse_reference`)."""
    key = (formulation, inst.key())
    if key in _CACHE:
        return _CACHE[key]
    import svmref.formulations as F

    t0 = time.perf_counter()
    f = F.get(formulation)
    ref = Reference()
    try:
        if formulation == "support_features":
            sol, ref.warnings = _solve(f.dual(inst.X, inst.y, C=inst.hyper["C"], mu=inst.hyper["mu"]))
            lam = np.asarray(sol.values["lam"], dtype=float)
            r = kkt.support_features_residuals(inst.X, inst.y, inst.hyper["C"], inst.hyper["mu"], lam=lam,
                                               eps=REF_EPS)
        elif formulation == "rls":
            gamma = inst.hyper["gamma"]
            try:
                sol, ref.warnings = _solve(f.primal(inst.K, inst.y, gamma=gamma))
                c = np.asarray(sol.values["c"], dtype=float)
            except F.ReferenceSolveError as exc:
                # the primal (7) is badly scaled for tiny gamma; its dual is strongly convex: c = alpha / (2 gamma)
                sol, ref.warnings = _solve(f.dual(inst.K, inst.y, gamma=gamma))
                c = np.asarray(sol.values["alpha"], dtype=float) / (2.0 * gamma)
                ref.warnings.append(f"primal reference failed ({exc}); used the dual, p* = -d*")
                sol = _Negated(sol)
            r = kkt.rls_residuals(inst.K, inst.y, gamma, c)
        elif formulation == "svr":
            sol, ref.warnings = _solve(f.dual(inst.K, inst.y, C=inst.hyper["C"], epsilon=inst.hyper["epsilon"]))
            beta = np.asarray(sol.values["alpha_plus"], dtype=float) - np.asarray(sol.values["alpha_minus"], dtype=float)
            r = kkt.svr_residuals(inst.K, inst.y, inst.hyper, {"alpha": beta, "b": None}, eps=REF_EPS)
        else:
            sol, ref.warnings = _solve(f.dual(inst.K, inst.y, C=inst.hyper["C"]))
            alpha = np.asarray(sol.values["alpha"], dtype=float)
            r = kkt.box_dual_residuals(formulation, inst.K, inst.y, inst.hyper["C"], alpha, None, eps=REF_EPS)
    except F.NotConvexError as exc:
        ref.convex = False
        ref.message = f"reference not convex: {exc}"
        ref.time = time.perf_counter() - t0
        _CACHE[key] = ref
        return ref
    except F.ReferenceSolveError as exc:
        ref.error = f"no reference: {exc}"
        ref.time = time.perf_counter() - t0
        _CACHE[key] = ref
        return ref
    ref.objective = float(sol.objective)
    ref.coef, ref.b, ref.b_unique = r.coef, float(r.b), r.b_unique
    ref.disagreement = sol.disagreement
    ref.status = f"{sol.solver}: {sol.status}"
    _certificate(ref, sol)
    ref.time = time.perf_counter() - t0
    _CACHE[key] = ref
    return ref


def sparse_reference(inst, alpha: np.ndarray) -> Reference:
    """Reference for the ISLS fixed point: problem (3) of 004 at the weights ``alpha`` implies.

    ``lam_i = 1/alpha_i^2`` (004 Algorithm 1); an ``alpha_i`` below the support-vector threshold
    (``kkt.SV_ATOL * max(1, max|y|)``) is taken as 0, and an ``alpha_i = 0`` (``lam_i = inf``) is
    given the weight 1e300, i.e. ``diag(lam)^-1 = 1e-300``, which is 0 to double precision in
    ``H = K diag(lam)^-1 K + I/C``. The dual (``beta``) is solved, ``alpha_ref = diag(lam)^-1 K beta``
    and ``b_ref = mean(y - H beta)`` (system (4)); the objective is ``p* = -d*``.
    """
    import svmref.formulations as F

    t0 = time.perf_counter()
    ref = Reference()
    alpha = np.asarray(alpha, dtype=float)
    y_scale = max(1.0, float(np.max(np.abs(inst.y))))
    a2 = np.where(np.abs(alpha) > kkt.SV_ATOL * y_scale, alpha, 0.0) ** 2
    lam = 1.0 / np.maximum(a2, 1e-300)
    C = inst.hyper["C"]
    try:
        if not inst.psd()[0]:
            raise F.NotConvexError(f"K is not PSD (smallest eigenvalue {inst.psd()[1]:.3g}); problem (3) is not convex")
        sol, ref.warnings = _solve(F.get("sparse_ls_svm").dual(inst.K, inst.y, C=C, lam=lam))
    except F.NotConvexError as exc:
        ref.convex = False
        ref.message = f"reference not convex: {exc}"
        ref.time = time.perf_counter() - t0
        return ref
    except F.ReferenceSolveError as exc:
        ref.error = f"no reference: {exc}"
        ref.time = time.perf_counter() - t0
        return ref
    beta = np.asarray(sol.values["beta"], dtype=float)
    Kb = inst.K @ beta
    alpha_ref = Kb / lam
    Hb = inst.K @ alpha_ref + beta / C
    ref.objective = -float(sol.objective)
    ref.coef = alpha_ref
    ref.b = float(np.mean(inst.y - Hb))
    ref.disagreement = sol.disagreement
    ref.status = f"{sol.solver}: {sol.status}"
    _certificate(ref, sol)
    ref.time = time.perf_counter() - t0
    return ref
