r"""ISLS-SVM: the iterative sparse LS-SVM of 004, Algorithm 1 (classification and regression).

Algorithm 1 (004; the extraction's first line reads "lambda_i <- alpha_i", the loop's rule
``lambda_i <- 1/alpha_i^2`` is the method, see INDEX.md)::

    solve system (2) for (alpha, b)                                   # the LS-SVM start
    repeat
        lambda_i <- 1 / alpha_i^2
        H <- K diag(lambda)^-1 K + I/C
        solve system (4) [0 1'; 1 H][b; beta] = [0; y] for (beta, b)
        alpha <- diag(lambda)^-1 K beta
    until ||alpha^t - alpha^{t+1}|| / N < tol  or  max_iter iterations
    support vectors: |alpha_i| > sv_threshold (1e-6 in 004 §4)

How this module computes one iteration (derivation and measurements in ``docs/isls_notes.md``).
With ``a = |alpha^t|`` the weighted problem (3) (004, eq. (3)), ``lambda_i = kappa / a_i^2``, reads in the
variables ``v_i = alpha_i / a_i`` (``A = K_:S diag(a_S)``, ``S = {i : a_i > 0}``)::

    min_{v, b}  kappa/2 ||v||^2 + C/2 ||xi||^2,   xi = y - A v - b 1,                        (3')

a ridge regression with an unpenalised intercept.  Eliminating ``b`` (``b = mean(y - A v)``) centres
``y`` and the columns of ``A`` (``y_c``, ``A_c``); with ``c = C / kappa``::

    (I + c A_c'A_c) v = c A_c' y_c,        alpha_S = a_S * v,        beta = C xi.            (N)

``M = I + c A_c'A_c`` has every eigenvalue >= 1, so the residual of (N), computed with the exact K, bounds the
error of a computed ``v``: every iterate is certified.  The ways (N) is solved -- the paths ``"gram"``, ``"lowrank"``,
``"pcg"``, ``"cholesky"``, ``"qr"`` -- and their certificates are in :mod:`svmref.solvers._isls_paths`;
``info["path"]`` and ``info["certificate"]`` say which solved and certified each iteration.  ``alpha`` is ``a * v``
(never ``a^2 (K beta)``, which multiplies the rounding error of the small residual ``xi`` by ``C a^2``: the reason
an earlier Woodbury implementation lost every digit at large C).

* Scale.  004's regulariser ``sum_i (alpha_i / alpha_i^t)^2`` is dimensionless while ``C ||xi||^2`` has the
  units of ``C y^2``, so Algorithm 1 read literally is not invariant to the units of ``y``: scaling ``y`` by
  ``s`` is Algorithm 1 at ``C s^2``.  ``weight_scale="auto"`` (default) uses ``lambda_i = kappa / alpha_i^2``
  with ``kappa = var_y / mean(diag K)`` (``var_y = 1`` for labels +-1, the variance of the targets for
  regression): invariant to ``y -> t y`` and to ``(K, C) -> (s K, C / s)``, and exactly 004's Algorithm 1
  for +-1 labels with a unit-diagonal kernel (RBF, 004 §4).  ``weight_scale=1.0`` is Algorithm 1 verbatim.
* Drop rule: pattern ``i`` leaves the model (``alpha_i := 0``, ``lambda_i = inf``) once
  ``c a_i^2 ||K_:i||^2 <= u`` (``u`` the unit roundoff): its column changes the fitted values by less than
  their rounding.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from svmref._validation import check_labels, check_max_iter, check_positive, check_targets, check_tol

from ._isls_paths import FitData, solve_active, solve_qr
from ._result import SolverResult, certified, kernel_expansion, relative_gap, warn_not_converged, warn_suboptimal
from .linear import GAP_TOL, _check_C, _check_K, _check_K_scan, _ls_svm_kkt

__all__ = ["isls_svm", "sparse_ls_svm", "ISLSResult", "ISLSDivergenceError", "solve_weighted_system",
           "weighted_certificate"]

_U = np.finfo(np.float64).eps / 2.0       # unit roundoff


class ISLSDivergenceError(ArithmeticError):
    """The ISLS iterates left the range where the weighted problem (3) can be solved in double precision
    (they grow without bound, or became non-finite).  The message says what diverged and at which iteration."""


@dataclass(frozen=True, repr=False)
class ISLSResult(SolverResult):
    """Result of :func:`isls_svm`.

    Extra attributes
    ----------------
    history : list of (alpha, b, n_sv)
        One entry per solve: entry 0 is the LS-SVM start (system (2)), entry t the solution of (3)
        at iteration t; ``n_sv = #{i : |alpha_i| > sv_threshold}``.
    weights_history : list of ndarray
        ``diag(lambda)^-1 = alpha_prev^2 / kappa`` used at iteration t (0 for patterns that left the model).
    beta_history : list of ndarray
        The ``beta = C xi`` of system (4) at iteration t.
    support_ : ndarray of int
        Indices with ``|alpha_i| > sv_threshold`` in the final model.
    sv_threshold : float
        The threshold used, in the units of ``alpha`` (``sv_threshold x alpha_scale``).
    weight_scale : float
        ``kappa`` in ``lambda_i = kappa / alpha_i^2`` (1 is 004's Algorithm 1 verbatim).

    ``task`` (``"classification"`` or ``"regression"``: the same algorithm, 004 §2) decides what the inherited
    ``predict`` returns: labels by the project's tie rule, or ``f``.
    """

    history: list = field(default_factory=list)
    weights_history: list = field(default_factory=list)
    beta_history: list = field(default_factory=list)
    support_: np.ndarray | None = None
    sv_threshold: float = 1e-6
    weight_scale: float = 1.0

    @property
    def n_sv(self) -> int:
        return int(self.support_.shape[0])

    def decision_function(self, K_cross) -> np.ndarray:
        """``f(x) = sum_{i in SV} alpha_i k(x_i, x) + b`` (004 §3), with the support vectors only.

        ``K_cross`` is ``k(x_test_j, x_i)``, either against all N training patterns (n_test x N;
        the SV columns are taken) or against the support vectors only (n_test x n_sv, in the order
        of ``support_``); the sum is :func:`~svmref.solvers._result.kernel_expansion`.
        """
        K_cross = np.asarray(K_cross, dtype=np.float64)
        N = self.alpha.shape[0]
        if K_cross.ndim != 2 or K_cross.shape[1] not in (N, self.n_sv):
            raise ValueError(
                f"K_cross must have shape (n_test, {N}) (all training patterns) or (n_test, {self.n_sv}) "
                f"(support vectors only); got {K_cross.shape}"
            )
        if K_cross.shape[1] == N and N != self.n_sv:
            K_cross = K_cross[:, self.support_]
        return kernel_expansion(K_cross, self.alpha[self.support_], self.b)


# --------------------------------------------------------------------------------------------------
# one weighted problem (3)
# --------------------------------------------------------------------------------------------------
def _condition(D: FitData, S, a, c):
    """``sqrt(cond(M))``, the condition of the stacked least-squares form of (N), from above:
    ``sqrt(1 + c sigma_max(A_c)^2) <= sqrt(1 + c sum a_i^2 ||K_:i||^2)``.  Where that bound says the problem is beyond
    double precision it can exceed the condition by up to ``sqrt(m)``: ``sigma_max(A_c)^2`` is then estimated by 20
    power steps instead (an estimate from below, padded by 10%)."""
    m = S.shape[0]
    cond = float(np.sqrt(1.0 + c * float(np.sum(a * a * D.colsq[S]))))
    if np.isfinite(cond) and cond * _U > 1e-2:
        z = np.ones(m) / np.sqrt(m)
        lam = 0.0
        for _ in range(20):
            w = D.apply_AcT_Ac(S, a, z)
            lam = float(np.linalg.norm(w))
            if not lam > 0.0 or not np.isfinite(lam):
                break
            z = w / lam
        cond = float(np.sqrt(1.0 + 1.1 * c * lam))
    return cond


def _weighted_step(D: FitData, a_full, C, kappa):
    """Solve (3) with ``lambda_i = kappa / a_i^2`` (``a_i = 0``: pattern out of the model).

    Returns ``(alpha, b, beta, S, solution)``, ``solution`` the :class:`~svmref.solvers._isls_paths.Solution` of (N)
    with its certificate (None when no pattern is left).  Raises :class:`ISLSDivergenceError` when even QR cannot give
    the iterate to 1e-2 (the condition of (3') beyond ``1 / (100 u)``) or the result is not finite.
    """
    N = D.N
    c = C / kappa
    S = np.flatnonzero(c * a_full * a_full * D.colsq > _U)     # drop rule
    m = S.shape[0]
    alpha = np.zeros(N)
    if m == 0:
        b = D.ybar
        xi = D.yc.copy()
        return alpha, b, C * xi, S, None
    a = a_full[S]
    cond = _condition(D, S, a, c)
    if not np.isfinite(cond) or cond * _U > 1e-2:
        raise ISLSDivergenceError(
            f"the weighted problem (3) has condition ~{cond:.3g} (max|alpha| = {float(np.max(a)):.3g}): "
            "beyond double precision"
        )
    sol = solve_active(D, S, a, c, cond)
    z = a * sol.v                                         # alpha_S = a_S v
    alpha[S] = z
    b = D.ybar - float(D.kmean[S] @ z)                    # b = mean(y - K_:S alpha_S)
    if sol.u is not None:
        xi = D.yc - sol.u                                 # y - K_:S alpha_S - b = y_c - K_c[:, S] alpha_S
    else:
        xi = D.y - b - (D.K[:, S] @ z if 4 * m <= N else D.K @ alpha)
    if not (np.all(np.isfinite(alpha)) and np.isfinite(b) and np.all(np.isfinite(xi))):
        raise ISLSDivergenceError("the solution of (3) is not finite")
    return alpha, b, C * xi, S, sol


def solve_weighted_system(K, y, C, inv_lam, *, drop: bool = True):
    r"""Solve (3)/(4) of 004 once for given ``diag(lambda)^-1 = inv_lam`` (>= 0; 0 means lambda = inf).

    ``[0 1'; 1 H][b; beta] = [0; y]``, ``H = K diag(inv_lam) K + I/C``, ``alpha = diag(inv_lam) K beta``
    (004 §3), computed as in the module docstring (``alpha = sqrt(inv_lam) v``).  With ``drop=True`` the
    patterns with ``C inv_lam_i ||K_:i||^2 <= u`` are left out (module docstring); ``drop=False`` keeps every
    ``inv_lam_i > 0``.  Returns ``(alpha, b, beta)``.  For tests and for users who want one step.
    """
    K = _check_K(K)
    N = K.shape[0]
    y = check_targets(y, N)
    C = _check_C(C)
    w = np.asarray(inv_lam, dtype=np.float64)
    if w.shape != (N,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"inv_lam must be a vector of {N} finite numbers >= 0")
    D = FitData(K, y)
    a = np.sqrt(w)
    if not drop:
        # keep every w_i > 0: run the solve on S = {w > 0} directly
        S = np.flatnonzero(w > 0)
        alpha = np.zeros(N)
        if S.shape[0] == 0:
            return alpha, D.ybar, C * D.yc
        v = solve_qr(D, S, a[S], C)
        alpha[S] = a[S] * v
        b = D.ybar - float(D.kmean[S] @ alpha[S])
        beta = C * (y - b - K @ alpha)
        if not (np.all(np.isfinite(alpha)) and np.isfinite(b) and np.all(np.isfinite(beta))):
            raise ISLSDivergenceError("solve_weighted_system: the solution of (3) is not finite")
        return alpha, b, beta
    alpha, b, beta, _, _ = _weighted_step(D, a, C, 1.0)
    return alpha, b, beta


# --------------------------------------------------------------------------------------------------
# Algorithm 1
# --------------------------------------------------------------------------------------------------
def _scales(K, y, task, weight_scale):
    """``(kappa, alpha_scale)``: the weight scale of (3) and the unit of ``alpha`` for tol and sv_threshold."""
    if weight_scale != "auto":
        return check_positive(weight_scale, "weight_scale"), 1.0
    # the scale of K: mean(diag K) (1 for RBF); |.| and max|K| only matter for a K that is not PSD or is 0
    kbar = float(np.mean(np.abs(np.diag(K)))) or float(np.max(np.abs(K))) or 1.0
    var_y = 1.0 if task == "classification" else float(np.var(y))
    return var_y / kbar, np.sqrt(var_y) / kbar


def _checked(K, y, C, task, tol, max_iter, sv_threshold):
    """The arguments of :func:`isls_svm`, checked in the order the errors name them; with the row sums of ``|K|``
    and ``max|K_ij|`` of the one scan of K, which the LS-SVM start reuses."""
    if task not in ("classification", "regression"):
        raise ValueError(
            f"task must be 'classification' (labels in {{-1, +1}}) or 'regression' (real targets); got {task!r}. "
            "ISLS-SVM does not guess the task from the labels."
        )
    K, rows, big = _check_K_scan(K)
    if not isinstance(K, np.ndarray):
        raise ValueError("isls_svm needs K as a dense array")
    N = K.shape[0]
    y = check_labels(y, N) if task == "classification" else check_targets(y, N)
    return (K, y, _check_C(C), check_tol(tol), check_max_iter(max_iter),
            check_positive(sv_threshold, "sv_threshold"), rows, big)


@dataclass
class _Run:
    """The iterates of Algorithm 1 as the loop records them (:func:`_iterate`)."""

    alpha: np.ndarray
    b: float
    beta: np.ndarray
    history: list
    weights_history: list = field(default_factory=list)
    beta_history: list = field(default_factory=list)
    solutions: list = field(default_factory=list)       # the Solution of (N) of each iteration (None: no pattern left)
    n_active: list = field(default_factory=list)
    t: int = 0
    diff: float = float("inf")
    converged: bool = False


def _diverged(exc, t, C, a, history):
    """The :class:`ISLSDivergenceError` of iteration ``t`` (``a = |alpha^{t-1}|``), naming what grew."""
    if t == 1:
        return ISLSDivergenceError(
            f"isls_svm cannot take its first step at C = {C:g}: the LS-SVM start has max|alpha| = "
            f"{float(np.max(a)):.3g}; {exc}. Use a smaller C (or rescale K and C together)."
        )
    return ISLSDivergenceError(
        f"isls_svm diverged at iteration {t} (C = {C:g}): max|alpha^{t - 1}| = {float(np.max(a)):.3g} "
        f"(LS-SVM start: {float(np.max(np.abs(history[0][0]))):.3g}); {exc}. The L0 trade-off of (3) "
        "lets coefficients grow without bound along directions K nearly annihilates (near-duplicate "
        "inputs with different targets); use a smaller C."
    )


def _iterate(D: FitData, run: _Run, C, kappa, alpha_scale, thr, tol, max_iter) -> _Run:
    """Algorithm 1's loop from the start in ``run``: reweight, solve (3), until ``||alpha^t - alpha^{t+1}|| / N < tol``
    (in units of ``alpha_scale``) or ``max_iter`` iterations."""
    N = D.N
    for t in range(1, max_iter + 1):
        run.t = t
        a = np.abs(run.alpha)
        try:
            with np.errstate(over="raise", invalid="raise"):
                alpha_new, b_new, beta_new, S, sol = _weighted_step(D, a, C, kappa)
        except (ISLSDivergenceError, FloatingPointError) as exc:
            raise _diverged(exc, t, C, a, run.history) from None
        w = np.zeros(N)
        w[S] = a[S] ** 2 / kappa                   # diag(lambda)^-1 = alpha_prev^2 / kappa
        run.weights_history.append(w)
        run.n_active.append(int(S.shape[0]))
        run.solutions.append(sol)
        run.diff = float(np.linalg.norm(run.alpha - alpha_new)) / (N * alpha_scale)
        run.alpha, run.b, run.beta = alpha_new, b_new, beta_new
        run.beta_history.append(run.beta)
        run.history.append((run.alpha.copy(), run.b, int(np.sum(np.abs(run.alpha) > thr))))
        if run.diff < tol:
            run.converged = True
            break
    return run


def _info(run: _Run, kappa, alpha_scale) -> dict:
    """``info``: per iteration the active-set size, the path that solved (N) and how its iterate was certified; the
    (outer float64, inner float32) step counts of every mixed-precision CG run; the two scales."""
    sols = [s for s in run.solutions if s is not None]
    pcg = [c for s in sols for c in (*s.tried, s.certificate) if c.path == "pcg"]
    return {"n_active": run.n_active, "path": [s.certificate.path for s in sols],
            "cg_steps": [(c.steps, c.inner_steps) for c in pcg],
            "certificate": [s.certificate.kind for s in sols],
            "weight_scale": kappa, "alpha_scale": alpha_scale}


def weighted_certificate(K, y, C, alpha, b, w):
    r"""The certified duality gap of ``(alpha, b)`` for the weighted problem (3) of 004 at ``diag(lambda)^-1 = w``
    (``w_i = 0``: ``lambda_i = inf``, ``alpha_i = 0``): ``(P, gap, floor, scale, b_cert)``, absolute.

    Primal (004 eq. (3), ``lambda_i = 1 / w_i``)::

        min  1/2 sum_i alpha_i^2 / w_i + C/2 ||xi||^2   s.t.   K alpha + b 1 + xi = y,

    its Lagrange dual (derived in ``docs/formulations/sparse_ls_svm.md``; ``alpha = diag(w) K beta``, ``xi = beta / C``)::

        max  D(beta) = y'beta - 1/2 sum_i w_i (K beta)_i^2 - ||beta||^2 / (2C)   s.t.   1'beta = 0.

    The primal point is ``alpha``, the exact best ``b`` (``b + mean(xi)``: the residuals centred) and its slacks
    ``xi``; the dual point ``beta = C xi`` (``1'beta = 0``). With ``y = K alpha + b 1 + xi`` the gap is a sum of
    squares, ``P - D = 1/2 sum_i (alpha_i - w_i (K beta)_i)^2 / w_i``, so ``0 <= P - p* <= gap``; ``scale = P - gap -
    floor <= p*``. One pass over ``K[:, S]`` for ``xi`` and one over ``K[S]`` for ``K beta`` (``S = {w > 0}``)."""
    S = np.flatnonzero(w > 0.0)
    N = y.shape[0]
    u = _U
    aS, wS = alpha[S], w[S]
    xi = y - b - K[:, S] @ aS
    b_cert = b + float(np.mean(xi))
    xi = xi - float(np.mean(xi))
    beta = C * xi
    Kb = K[S] @ beta
    r = aS - wS * Kb
    P = 0.5 * float(np.sum(aS * aS / wS)) + 0.5 * C * float(xi @ xi)
    gap = 0.5 * float(np.sum(r * r / wS))
    kmax = float(np.max(np.abs(np.diag(K)))) if N else 0.0
    e_xi = (S.shape[0] + 4) * u * (kmax * float(np.sum(np.abs(aS))) + float(np.max(np.abs(y))) + abs(b))
    e_kb = (N + 4) * u * kmax * float(np.sum(np.abs(beta))) + N * kmax * C * e_xi
    floor = ((N + 4) * u * (P + gap) + C * float(np.sum(np.abs(xi))) * e_xi
             + float(np.sum(np.abs(r))) * e_kb)
    return P, gap, floor, max(0.0, P - gap - floor), b_cert


def _final_label(run, K, y, C, gap_tol, tol, max_iter):
    """``(status, message, objective, certificate fields, info entries)`` of the last iterate: the step rule of
    Algorithm 1 and the certificate of the weighted problem (3) it solved (:func:`weighted_certificate`)."""
    P, gap, floor, scale, b_cert = weighted_certificate(K, y, C, run.alpha, run.b, run.weights_history[-1])
    rel, rel_floor = relative_gap(gap, floor, scale)
    fields = dict(duality_gap=rel, gap_floor=rel_floor, gap_tol=gap_tol)
    extra = {"duality_gap_abs": gap, "gap_floor_abs": floor, "gap_scale": scale, "b_certified": b_cert}
    if not run.converged:
        warn_not_converged("isls_svm", run.t, run.diff, tol, stacklevel=4)
        return ("max_iter_reached", f"stopped at max_iter = {max_iter}: ||alpha^t - alpha^(t+1)||/N = {run.diff:.3g} >= "
                f"tol = {tol:g}", -P, fields, extra)
    rule = f"converged in {run.t} iterations: ||alpha^t - alpha^(t+1)||/N = {run.diff:.3g} < {tol:g}"
    if certified(gap, floor, scale, gap_tol):
        return ("optimal", f"{rule}; the weighted problem (3) certified to a relative duality gap {rel:.3g} <= gap_tol "
                f"{gap_tol:g}", -P, fields, extra)
    msg = warn_suboptimal("isls_svm", rule + " (the last weighted problem (3))", rel, rel_floor, gap_tol,
                          "The weighted system is beyond double precision here: a smaller C", stacklevel=4)
    return "suboptimal", msg, -P, fields, extra


def isls_svm(K, y, C, *, task: str = "classification", tol: float = 1e-4, max_iter: int = 50,
             sv_threshold: float = 1e-6, weight_scale="auto", gap_tol: float = GAP_TOL) -> ISLSResult:
    r"""ISLS-SVM (004, Algorithm 1): iteratively reweighted LS-SVM converging to a sparse model.

    Parameters
    ----------
    K : (N, N) symmetric positive semidefinite kernel matrix (dense)
    y : (N,) labels in {-1, +1} (``task="classification"``, the default: anything else is refused) or real
        targets (``task="regression"``, asked for explicitly)
    C : float > 0
    task : "classification" or "regression": the same iteration (004 §2); ``predict`` returns signs for
        classification.  (There is no "auto": labels {0, 1} or three classes are refused, not regressed.)
    tol : stop when ``||alpha^t - alpha^{t+1}||_2 / N < tol x alpha_scale`` (004 §4: 1e-4, ``alpha_scale = 1``
        for +-1 labels and an RBF kernel; ``std(y) / mean(diag K)`` for regression)
    max_iter : iteration limit (004 §4: 50); reaching it sets ``status="max_iter_reached"`` and warns
    sv_threshold : a pattern is a support vector when ``|alpha_i| > sv_threshold x alpha_scale`` (004 §4: 1e-6)
    weight_scale : "auto" (default) or kappa > 0: the weights are ``lambda_i = kappa / alpha_i^2``
        (module docstring); ``1.0`` is 004 verbatim (then ``alpha_scale = 1``).
    gap_tol : ``status="optimal"`` needs, beside the step rule, the certified relative duality gap of the last
        weighted problem (3) (:func:`weighted_certificate`; the problem whose solution is returned) within it
        (default :data:`svmref.solvers.linear.GAP_TOL`); else ``"suboptimal"`` with a
        :class:`~svmref.solvers._result.SuboptimalWarning`. Algorithm 1 as a whole minimises no fixed objective
        (it is a fixed-point iteration of reweighted problems), so nothing certifies the sparsity pattern itself.

    Returns
    -------
    ISLSResult
        ``alpha, b`` in 004's convention ``f(x) = sum_i alpha_i k(x_i, x) + b`` for both tasks;
        ``objective`` = the dual of (3) at the last weights in minimisation sign, ``-(optimal value of (3))``;
        ``history``, ``support_``, ``decision_function``; ``info["path"]`` names the solver of each iteration
        (:mod:`svmref.solvers._isls_paths`), ``info["certificate"]`` how its iterate was certified
        (:class:`~svmref.solvers._isls_paths.Certificate`), ``info["n_active"]`` the active-set sizes,
        ``info["cg_steps"]`` the (outer float64, inner float32) step counts of the mixed-precision CG runs.

    Raises
    ------
    ISLSDivergenceError
        if the iterates grow beyond what double precision can resolve or become non-finite (the message
        names the iteration and the size of ``alpha``); no non-finite model is ever returned.
    """
    t0 = time.perf_counter()
    K, y, C, tol, max_iter, sv_threshold, rows, big = _checked(K, y, C, task, tol, max_iter, sv_threshold)
    gap_tol = check_positive(gap_tol, "gap_tol")
    N = K.shape[0]
    kappa, alpha_scale = _scales(K, y, task, weight_scale)
    thr = sv_threshold * alpha_scale

    # Start: the LS-SVM solution of system (2) (004 Algorithm 1, first line), regression convention.
    if task == "regression" and kappa == 0.0:       # constant targets: the model is f = y_0, alpha = 0
        alpha, b = np.zeros(N), float(y[0])
        return ISLSResult(alpha=alpha, b=b, objective=0.0, n_iter=0, converged=True, status="optimal",
                          message="constant targets: alpha = 0, b = y_0", time=time.perf_counter() - t0,
                          kkt_gap=0.0, info={"n_active": [], "path": []}, history=[(alpha.copy(), b, 0)],
                          support_=np.zeros(0, dtype=int), task=task, sv_threshold=thr, weight_scale=kappa,
                          duality_gap=0.0, gap_floor=0.0, gap_tol=gap_tol)
    alpha, b, *_ = _ls_svm_kkt(K, y, C, "cholesky", 1e-8, None, False, "isls_svm", rows, big)  # 1e-8: asked of each iterate
    if not (np.all(np.isfinite(alpha)) and np.isfinite(b)):
        raise ISLSDivergenceError("isls_svm: the LS-SVM start (system (2)) is not finite")
    start = _Run(alpha=alpha, b=b, beta=alpha.copy(),      # the start's beta (system (2): beta = alpha)
                 history=[(alpha.copy(), b, int(np.sum(np.abs(alpha) > thr)))])
    run = _iterate(FitData(K, y), start, C, kappa, alpha_scale, thr, tol, max_iter)

    status, msg, objective, fields, extra = _final_label(run, K, y, C, gap_tol, tol, max_iter)
    return ISLSResult(
        alpha=run.alpha, b=run.b, objective=objective, n_iter=run.t, converged=run.converged, status=status,
        message=msg, time=time.perf_counter() - t0, kkt_gap=run.diff, info={**_info(run, kappa, alpha_scale), **extra},
        history=run.history, weights_history=run.weights_history, beta_history=run.beta_history,
        support_=np.flatnonzero(np.abs(run.alpha) > thr), task=task, sv_threshold=thr, weight_scale=kappa, **fields,
    )


def sparse_ls_svm(K, y, C, *, tol: float = 1e-8, max_iter: int = 2000, **options) -> ISLSResult:
    """The verify-contract callable for ``sparse_ls_svm``: 004's Algorithm 1 verbatim on real targets.

    verify checks a fixed point of Algorithm 1 with ``lambda_i = 1/alpha_i^2`` (``weight_scale=1``,
    ``task="regression"``).  004 §4 stops when ``||alpha^t - alpha^{t+1}|| / N < tol``; a checker that asks for
    a fixed point to ``tol`` needs ``||alpha^t - alpha^{t+1}|| < tol`` instead, so this passes
    ``1e-3 tol / N`` on (the reweighting converges linearly, so a step of size ``d`` leaves a residual of about
    ``d / (1 - rate)``; the factor 1e-3 covers rates up to 0.999), with ``max_iter=2000``.
    """
    N = np.shape(K)[0]
    options.setdefault("task", "regression")
    options.setdefault("weight_scale", 1.0)
    return isls_svm(K, y, C, tol=1e-3 * float(tol) / max(N, 1), max_iter=max_iter, **options)
