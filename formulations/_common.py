"""Shared machinery of the ground truth: the problem type, the kernel factor and parameters.

Nothing here knows any formulation's maths; each formulation module writes its own problem
from its paper, line for line.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable

import cvxpy as cp
import numpy as np

from svmref._thresholds import PSD_RTOL as _PSD_RTOL
from svmref._validation import check_gram, check_X

__all__ = [
    "RefProblem",
    "NotConvexError",
    "KernelClipWarning",
    "kernel_factor",
    "psd_gram",
    "Factor",
    "set_params",
]

#: Relative size (w.r.t. the largest |eigenvalue|) under which a negative eigenvalue of K is
#: taken for round-off and clipped to 0 (reported); below minus this, K is not PSD.
#: Defined once, with its reason, in :mod:`svmref._thresholds`.
PSD_RTOL = _PSD_RTOL

#: Eigenvalues of K below ``EIG_ROUNDOFF * N * max|w|`` are eigh's round-off: not kept in the factor.
EIG_ROUNDOFF = float(np.finfo(float).eps)


from svmref._validation import NotConvexError  # noqa: E402  (one class for formulations and solvers)


class KernelClipWarning(UserWarning):
    """Negative eigenvalues of K were clipped to build the factor K = Phi Phi^T (reported, not hidden)."""


class RefProblem(cp.Problem):
    """A :class:`cvxpy.Problem` that carries where it comes from.

    ``info`` holds: ``formulation``, ``form`` (``"primal"``, ``"dual"``, ``"lp"``, ...), ``cite``
    (paper file and equation), ``sense`` (``"min"``/``"max"``), ``factor`` (the kernel factor's
    report: rank, clipped eigenvalues) and ``param_rules`` (how the problem's
    :class:`cvxpy.Parameter` values derive from the user's hyperparameters, see :func:`set_params`).
    """

    def __init__(self, objective, constraints=None, *, info: dict | None = None):
        super().__init__(objective, constraints)
        self.info = dict(info or {})

    @property
    def hyperparameters(self) -> dict[str, float]:
        """Current hyperparameter values (``C``, ``gamma``, ``mu``, ...) of this problem."""
        return dict(self.info.get("hyper", {}))


class Factor:
    """An exact factor ``K = Phi Phi^T`` of a PSD Gram matrix, and the report of what it took.

    Attributes: ``Phi`` (N x r), ``rank`` r, ``n_clipped`` (negative eigenvalues set to 0),
    ``min_eig`` (the most negative eigenvalue before clipping), ``max_abs_err``
    (``max |Phi Phi^T - K|``).
    """

    def __init__(self, Phi, rank, n_clipped, min_eig, max_abs_err, source):
        self.Phi = Phi
        self.rank = rank
        self.n_clipped = n_clipped
        self.min_eig = min_eig
        self.max_abs_err = max_abs_err
        self.source = source

    def report(self) -> dict:
        return {
            "source": self.source,
            "rank": self.rank,
            "n_clipped": self.n_clipped,
            "min_eig": self.min_eig,
            "max_abs_err": self.max_abs_err,
        }

    def __repr__(self) -> str:
        return f"Factor({self.report()})"


def kernel_factor(K=None, X=None, *, psd: str = "raise") -> Factor:
    """Factor the Gram matrix as ``K = Phi Phi^T`` so that a kernel primal is finite-dimensional.

    With ``X`` (linear kernel), ``Phi = X`` exactly. Otherwise ``K = V diag(w) V^T`` (``eigh``)
    and ``Phi = V_+ diag(sqrt(w_+))`` over **every** eigenvalue above ``eigh``'s own round-off level
    ``N * eps * max|w|`` (:data:`EIG_ROUNDOFF`): an eigenvalue below that level is indistinguishable
    from 0 (eigh's backward error is of that size), so dropping it changes K by no more than the
    eigendecomposition already does. (Earlier versions dropped eigenvalues below ``1e-9 max|w|``,
    which changed the problem at large C; issue 18.)
    Eigenvalues in ``[-PSD_RTOL * max|w|, 0)`` are round-off: they are clipped and counted in the
    report (and a :class:`KernelClipWarning` is issued if any was clipped). A more negative
    eigenvalue means ``K`` is not PSD: with ``psd="raise"`` (default) :class:`NotConvexError` is
    raised, with ``psd="clip"`` it is clipped too, with a warning naming its size.
    """
    if psd not in ("raise", "clip"):
        raise ValueError(f"psd must be 'raise' or 'clip'; got {psd!r}")
    if X is not None:
        X = check_X(X, "X")
        return Factor(X, X.shape[1], 0, float("nan"), 0.0, "X (linear kernel)")
    K = check_gram(K, "K")
    Ks = 0.5 * (K + K.T)
    w, V = np.linalg.eigh(Ks)
    scale = max(float(np.max(np.abs(w))), np.finfo(float).tiny)
    thresh = PSD_RTOL * scale
    min_eig = float(w[0])
    if min_eig < -thresh:
        msg = (
            f"K is not positive semidefinite: its smallest eigenvalue is {min_eig:.3g} "
            f"(largest |eigenvalue| {scale:.3g}); the formulation is not convex for this kernel "
            "(e.g. the MLP kernel tanh(k x'z + theta) of 002 is not Mercer for all k, theta), "
            "so the cvxpy reference is not ground truth here"
        )
        if psd == "raise":
            raise NotConvexError(msg)
        warnings.warn(msg + "; negative eigenvalues were clipped (psd='clip')", KernelClipWarning, stacklevel=3)
    n_clipped = int(np.sum(w < 0))
    keep = w > EIG_ROUNDOFF * Ks.shape[0] * scale
    Phi = V[:, keep] * np.sqrt(w[keep])
    err = float(np.max(np.abs(Phi @ Phi.T - Ks))) if Phi.shape[1] else float(np.max(np.abs(Ks)))
    if n_clipped and min_eig >= -thresh and min_eig < -1e-12 * scale:
        warnings.warn(
            f"{n_clipped} negative eigenvalue(s) of K (down to {min_eig:.3g}, round-off size) were clipped "
            f"to build K = Phi Phi^T; max |Phi Phi^T - K| = {err:.3g}",
            KernelClipWarning,
            stacklevel=3,
        )
    return Factor(np.ascontiguousarray(Phi), int(keep.sum()), n_clipped, min_eig, err, "eigh(K)")


def set_params(problem: RefProblem, **hyper) -> RefProblem:
    """Set hyperparameters (``C=``, ``gamma=``, ``mu=``, ``lam=`` ...) of a built problem in place.

    The problem's :class:`cvxpy.Parameter` objects are updated through the rules recorded when it
    was built (some problems also hold a derived parameter such as ``C_inv = 1/C`` so that they stay
    DPP and re-solve without recompiling). Returns the problem.
    """
    rules: dict[str, tuple[str, Callable]] = problem.info.get("param_rules", {})
    current = dict(problem.info.get("hyper", {}))
    unknown = set(hyper) - set(current)
    if unknown:
        raise ValueError(f"unknown hyperparameter(s) {sorted(unknown)}; this problem has {sorted(current)}")
    current.update(hyper)
    validate = problem.info.get("validate")
    if validate is not None:
        current = validate(**current)
    params = {p.name(): p for p in problem.parameters()}
    for pname, (_, rule) in rules.items():
        params[pname].value = rule(current)
    problem.info["hyper"] = current
    return problem


def make_params(spec: dict[str, tuple[dict, Callable]], hyper: dict) -> tuple[dict, dict]:
    """Create named parameters. ``spec``: name -> (cvxpy.Parameter kwargs, rule(hyper) -> value)."""
    params, rules = {}, {}
    for name, (kwargs, rule) in spec.items():
        value = rule(hyper)
        shape = np.shape(value)
        params[name] = cp.Parameter(shape, name=name, value=value, **kwargs)
        rules[name] = (name, rule)
    return params, rules


def _lambda_max(K: np.ndarray, iters: int = 30) -> float:
    """A lower bound on the largest eigenvalue of the symmetric K (power iteration, O(iters N^2))."""
    v = np.random.default_rng(0).standard_normal(K.shape[0])
    lam = 0.0
    for _ in range(iters):
        w = K @ v
        nw = float(np.linalg.norm(w))
        if nw == 0.0:
            return 0.0
        lam = float(v @ w) / float(v @ v)
        v = w / nw
    return max(lam, float(np.max(np.diag(K))))


def psd_gram(K, *, psd: str = "raise") -> tuple[np.ndarray, dict]:
    """Check that the Gram matrix is PSD (to round-off) and return it, for a dual written with
    ``cp.psd_wrap``: ``(K_used, report)``.

    Cheap path (O(N^3 / 3)): a Cholesky factorisation of ``K + PSD_RTOL * lambda_max I`` succeeds, which
    proves ``lambda_min(K) >= -PSD_RTOL * lambda_max``: K is used as given, exactly (no factor, no
    eigenvalue dropped). Otherwise the eigendecomposition decides as :func:`kernel_factor` does: a
    genuinely indefinite K raises :class:`NotConvexError` (``psd="raise"``) or is clipped to its PSD
    part with a warning (``psd="clip"``), and a K whose negative eigenvalues are round-off is used as
    given (the reference's certificate is computed on this K).
    """
    import scipy.linalg as sla

    if psd not in ("raise", "clip"):
        raise ValueError(f"psd must be 'raise' or 'clip'; got {psd!r}")
    K = check_gram(K, "K")
    Ks = 0.5 * (K + K.T)
    lmax = _lambda_max(Ks)
    shift = PSD_RTOL * max(lmax, np.finfo(float).tiny)
    try:
        sla.cholesky(Ks + shift * np.eye(Ks.shape[0]), lower=True, check_finite=False)
        return Ks, {"source": "psd_wrap(K) (Cholesky test)", "lambda_max": lmax, "min_eig_bound": -shift, "n_clipped": 0}
    except np.linalg.LinAlgError:
        pass
    fac = kernel_factor(Ks, psd=psd)  # raises NotConvexError, or warns when clipping
    if fac.min_eig < -PSD_RTOL * max(lmax, np.finfo(float).tiny):  # psd="clip" of a genuinely indefinite K
        Kc = fac.Phi @ fac.Phi.T
        return 0.5 * (Kc + Kc.T), {"source": "psd_wrap(clipped K)", **fac.report()}
    return Ks, {"source": "psd_wrap(K) (eigh test)", **fac.report()}
