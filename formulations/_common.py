"""Shared machinery of the ground truth: the problem type and its typed metadata, the kernel factor and parameters.

Nothing here knows any formulation's maths; each formulation module writes its own problem
from its paper, line for line.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import cvxpy as cp
import numpy as np

from svmref._thresholds import PSD_RTOL as _PSD_RTOL
from svmref._validation import check_gram, check_X

if TYPE_CHECKING:
    from ._base import Formulation
    from ._certify import Certified

__all__ = [
    "RefProblem",
    "ProblemInfo",
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


class Certifier(Protocol):
    """Certifies a solution of one form on the original K or X against its model (:mod:`._certify`)."""

    def certify(self, hyper: dict, values: dict | None, duals: list | None, tol: float) -> Certified | None:
        """The certificate of ``values`` / ``duals`` (``None``: the solver left none) at ``hyper``."""


class DirectSystem(Protocol):
    """The KKT system of an equality-only problem, solved directly and certified (:func:`._certify.refined_solve`)."""

    def solve(self, hyper: dict, tol: float) -> Certified:
        """Solve at ``hyper``; raises ``numpy.linalg.LinAlgError`` when singular to working precision."""


#: The keys ``problem.info[key]`` answers (the data fields of :class:`ProblemInfo`).
INFO_KEYS = ("formulation", "form", "cite", "sense", "hyper", "param_rules", "factor", "scale", "gram", "strategy")


@dataclass(frozen=True, eq=False)
class ProblemInfo:
    """Where a reference problem comes from, and how :func:`svmref.formulations.solve` computes its reference.

    Attributes
    ----------
    formulation, form, cite, sense : str or None
        The formulation's name, the form (``"primal"``, ``"dual"``, ``"lp"``, ...), the paper file and
        equation, and ``"min"`` / ``"max"``; ``None`` for a plain :class:`cvxpy.Problem`.
    hyper : dict
        The current hyperparameters (``C``, ``gamma``, ``mu``, ...).
    param_rules : dict
        How the problem's :class:`cvxpy.Parameter` values derive from ``hyper`` (see :func:`set_params`).
    factor, gram : dict or None
        The report of the kernel factor ``K = Phi Phi^T`` of a primal, or of the PSD test of a dual's Gram matrix.
    scale : float or None
        ``N max|K|`` (``N max|X|^2`` for X): ``C x scale`` says how hard the problem is scaled.
    owner : Formulation or None
        The formulation object that built the problem; it checks the hyperparameters again in :func:`set_params`.
    certifier : Certifier or None
        What certifies a solution of this problem on the original K or X: a
        :class:`~svmref.formulations._box.BoxCertifier` or the support features machine's
        :class:`~svmref.formulations.support_features.SFMCertifier`.
    system : DirectSystem or None
        The KKT system of an equality-only problem, solved directly (``LSSystem``, ``RLSSystem``, ``ISLSSystem``).
    box_dual : bool
        The certifier is a box dual's, and the dual on ``Y K Y`` may be solved directly for this form.

    ``problem.info[key]`` and ``problem.info.get(key, default)`` read the data fields (:data:`INFO_KEYS`) as
    a mapping does; a field that is ``None`` counts as absent.
    """

    formulation: str | None = None
    form: str | None = None
    cite: str | None = None
    sense: str | None = None
    hyper: dict = field(default_factory=dict)
    param_rules: dict = field(default_factory=dict, repr=False)
    factor: dict | None = None
    scale: float | None = None
    gram: dict | None = None
    owner: Formulation | None = field(default=None, repr=False)
    certifier: Certifier | None = field(default=None, repr=False)
    system: DirectSystem | None = field(default=None, repr=False)
    box_dual: bool = False

    @property
    def strategy(self) -> str:
        """The reference strategy ``solve(problem)`` uses by default: ``"direct_lapack"`` (equality-only
        problems), ``"box_dual_yky"`` (the box problems solved through their dual on ``Y K Y``) or
        ``"cvxpy_conic"`` (the model itself through CLARABEL)."""
        if self.system is not None:
            return "direct_lapack"
        return "box_dual_yky" if self.box_dual else "cvxpy_conic"

    def validate(self, hyper: dict) -> dict:
        """``hyper`` checked as the builder checked it (positive, within the scale of K), or unchanged
        for a problem that no formulation built."""
        if self.owner is None:
            return hyper
        return self.owner._check_scaled(self.owner._check_hyper(**hyper), self.scale)

    def __getitem__(self, key: str):
        value = getattr(self, key) if key in INFO_KEYS else None
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: str, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def keys(self) -> list[str]:
        return [k for k in INFO_KEYS if k in self]

    @classmethod
    def from_mapping(cls, info) -> ProblemInfo:
        """A :class:`ProblemInfo` from a ``dict`` of its fields (or the object itself)."""
        if isinstance(info, ProblemInfo):
            return info
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in dict(info or {}).items() if k in names})


class RefProblem(cp.Problem):
    """A :class:`cvxpy.Problem` that carries where it comes from: ``info``, a :class:`ProblemInfo`
    (formulation, form, citation, sense, hyperparameters, the kernel factor's report, how the
    :class:`cvxpy.Parameter` values derive from the hyperparameters, and what certifies its reference).
    """

    def __init__(self, objective, constraints=None, *, info: ProblemInfo | dict | None = None):
        super().__init__(objective, constraints)
        self.info = ProblemInfo.from_mapping(info)

    @property
    def hyperparameters(self) -> dict[str, float]:
        """Current hyperparameter values (``C``, ``gamma``, ``mu``, ...) of this problem."""
        return dict(self.info.hyper)


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
    eigendecomposition already does (a fixed relative cut such as ``1e-9 max|w|`` would change the
    problem at large C).
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


def check_problem(problem) -> None:
    """Refuse (``TypeError``) anything that is not a :class:`cvxpy.Problem`, naming what was given and where problems
    come from."""
    if not isinstance(problem, cp.Problem):
        raise TypeError(f"problem must be a cvxpy.Problem, e.g. F.get('l1_svm').dual(K, y, C=1.0); got "
                        f"{type(problem).__name__} {problem!r:.60}")


def set_params(problem: RefProblem, **hyper) -> RefProblem:
    """Set hyperparameters (``C=``, ``gamma=``, ``mu=``, ``lam=`` ...) of a built problem in place.

    The problem's :class:`cvxpy.Parameter` objects are updated through the rules recorded when it
    was built (some problems also hold a derived parameter such as ``C_inv = 1/C`` so that they stay
    DPP and re-solve without recompiling), and ``problem.info`` is replaced by a copy with the new
    hyperparameters. Returns the problem.
    """
    check_problem(problem)
    info = ProblemInfo.from_mapping(getattr(problem, "info", None))
    rules: dict[str, tuple[str, Callable]] = info.param_rules
    current = dict(info.hyper)
    unknown = set(hyper) - set(current)
    if unknown:
        raise ValueError(f"unknown hyperparameter(s) {sorted(unknown)}; this problem has {sorted(current)}")
    current.update(hyper)
    current = info.validate(current)
    params = {p.name(): p for p in problem.parameters()}
    for pname, (_, rule) in rules.items():
        params[pname].value = rule(current)
    problem.info = dataclasses.replace(info, hyper=current)
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
