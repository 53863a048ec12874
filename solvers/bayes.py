r"""Bayesian LS-SVM: MacKay's three levels of inference for the LS-SVM (002, "Bayesian interpretation for LS-SVM").

002 gives the LS-SVM classifier its Bayesian reading: the primal ``J_2 = mu/2 w'w + zeta/2 sum e_i^2`` with
``e_i = y_i - (w'phi(x_i) + b)`` (the regression form of the classifier, 002 "Using y_i^2 = 1"), a Gaussian prior
``p(w | mu) = (mu/2pi)^(n_f/2) exp(-mu/2 w'w)``, a flat prior on ``b`` (002: ``sigma_b -> inf``) and a Gaussian
likelihood ``p(e_i | zeta) = sqrt(zeta/2pi) exp(-zeta e_i^2/2)``, so that the MAP estimate minimises ``J_2``
and depends on ``gamma = zeta/mu`` only. 002 names the three levels (posterior of the parameters; of the
hyperparameters; of the model) but derives only level 1's MAP. The rest follows Van Gestel, Suykens et al.
(Neural Computation 14, 2002; Suykens et al., *Least Squares Support Vector Machines*, 2002, ch. 4) and
LS-SVMlab's ``bay_lssvm`` / ``bay_optimize`` / ``bay_modoutClass``; the derivations are in ``docs/bayes.md``,
which says which steps are ours.

Everything is computed from **one** eigendecomposition per kernel matrix: of the kernel matrix centred in the
(N-1)-dimensional subspace orthogonal to the ones vector (:func:`centred_eigen`), ``U' K U = diag(lam)`` with
``U`` (N x N-1) orthonormal, ``U'1 = 0``. With ``c = U'y``:

* level 1 (:func:`level1`): ``e = U diag(1/(1 + gamma lam)) c``, ``alpha = gamma e``, ``b = mean(y - K alpha)``;
  the posterior of ``w`` (``b`` integrated out) has covariance ``(mu I + zeta Phi' M Phi)^-1``, eigenvalues
  ``1/(mu + zeta lam_i)`` along the kernel principal directions and ``1/mu`` elsewhere;
* level 2 (:func:`level2`): ``log p(D | mu, zeta) = -(N-1)/2 log 2pi - 1/2 log N - mu/2 S(gamma)
  - 1/2 sum_i [log(1 + gamma lam_i) - log(gamma mu)]``, ``S(gamma) = sum_i gamma c_i^2/(1 + gamma lam_i)``:
  the exact Gaussian marginal likelihood of ``y`` with ``w`` and ``b`` integrated out. Its maximum over
  ``mu`` is ``mu = (N-1)/S(gamma)``, leaving a 1-D search over ``log gamma``;
* level 3 (:func:`level3`): ``log p(D | sigma) = log p(D | mu_MP, zeta_MP) + log 2pi + 1/2 log(2/gamma_eff')
  + 1/2 log(2/(N - 1 - gamma_eff'))`` (Van Gestel's Gaussian approximation of the hyperparameter posterior,
  ``gamma_eff' = sum_i gamma lam_i / (1 + gamma lam_i)``), maximised over ``sigma`` (a grid of one point per
  decade, then parabolic steps, each ``sigma`` one eigenvalue decomposition without eigenvectors,
  :func:`_spectrum`) among the ``sigma`` whose level 2 has an interior maximum;
* moderated output (:func:`moderated_log_odds`): class probabilities that integrate the latent output over
  the posterior of ``w`` (Van Gestel et al. 2002, LS-SVMlab ``bay_modoutClass``).

A maximum found on the boundary of a search range (``gamma_range``, ``sigma_range``) is never returned as a
maximum: the result says ``at_boundary=True`` and a :class:`BoundaryWarning` is issued.

:class:`BayesianLSSVC` is the scikit-learn estimator on top (one-vs-rest for more than two classes).
This module imports numpy, scipy and scikit-learn's base classes only (no cvxpy, no matplotlib).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh_tridiagonal, lapack
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from svmref._thresholds import CENTRED_PSD_RTOL
from svmref._validation import NotConvexError, check_gram, check_positive, check_targets, check_X
from svmref.kernels import linear_kernel, rbf_gamma, rbf_kernel
from svmref.solvers._hyperparameters import POSITIVE, HyperparameterError, HyperparameterMixin, Rule, options
from svmref.solvers._result import kernel_expansion

__all__ = [
    "BoundaryWarning",
    "CentredEigen",
    "centred_eigen",
    "Level1Result",
    "level1",
    "log_evidence",
    "Level2Result",
    "level2",
    "level3_log_evidence",
    "Level3Result",
    "level3",
    "evidence_surface",
    "median_distance",
    "moderated_log_odds",
    "BayesianLSSVC",
    "BayesianLSSVR",
]

#: default search range of gamma = zeta/mu at level 2 (log-uniform grid, then Brent)
GAMMA_RANGE = (1e-6, 1e6)
#: grid points per decade of gamma (level 2) and of sigma (level 3) before the refinement (Brent or brentq at
#: level 2, parabolic steps at level 3: each level-3 point costs an eigendecomposition, so its grid only brackets)
GRID_PER_DECADE = 8
SIGMA_GRID_PER_DECADE = 1
#: level 3 stops its parabolic steps when the vertex is within SIGMA_XATOL/2 of the best point (log sigma)
SIGMA_XATOL = 1e-3
#: level 3 approaches a sigma where the level-3 evidence is undefined (level 2 on its boundary) by this many
#: bisections of the grid step next to it (each an eigendecomposition)
EDGE_BISECTIONS = 2
#: default level-3 range of the RBF width, as multiples of the median pairwise distance of the inputs
SIGMA_RANGE_FACTORS = (1e-2, 1e2)
#: an optimum within this distance (in log) of an end of its search range is reported as on the boundary
BOUNDARY_LOG_TOL = 1e-3
#: relative size of a negative eigenvalue of the centred kernel matrix that is clipped to 0 (rounding);
#: anything more negative means the kernel is not positive semidefinite and is refused
#: (:data:`svmref._thresholds.CENTRED_PSD_RTOL`)
NEG_EIG_RTOL = CENTRED_PSD_RTOL


class BoundaryWarning(UserWarning):
    """An evidence maximum lies on the boundary of its search range: the returned value is the range's end,
    not a maximum of the evidence (widen the range; ``at_boundary`` is True on the result)."""


# ---- the one eigendecomposition ------------------------------------------------------------------------
@dataclass(frozen=True)
class CentredEigen:
    """Eigendecomposition of the kernel matrix centred in the subspace orthogonal to ``1``.

    ``U`` (N x N-1) has orthonormal columns with ``U' 1 = 0`` and ``U' K U = diag(lam)``: the columns of ``U``
    are the eigenvectors of the centred kernel matrix ``M K M`` (``M = I - 11'/N``) other than ``1/sqrt(N)``,
    whose eigenvalue is 0 by construction (kernel PCA's eigenvalues times N). ``lam`` is ascending, clipped at
    0 (``clipped`` is the most negative eigenvalue that was set to 0, 0.0 if none).
    """

    lam: np.ndarray
    U: np.ndarray
    N: int
    clipped: float = 0.0

    def coordinates(self, y) -> np.ndarray:
        """``c = U' y``: the targets in the eigenbasis (their mean is what ``b`` absorbs)."""
        return self.U.T @ y


def centred_eigen(K) -> CentredEigen:
    """One eigendecomposition of ``K`` restricted to ``1``'s orthogonal complement (see :class:`CentredEigen`).

    A Householder reflection ``H`` maps ``1/sqrt(N)`` to ``e_1``; its other columns ``Q = H[:, 1:]`` are an
    orthonormal basis of ``1``'s complement, and ``Q'KQ = V diag(lam) V'`` gives ``U = Q V``. The eigenvalues
    are those of ``M K M`` less the zero of ``1`` (exactly, without having to recognise which zero is ``1``'s).
    Raises :class:`~svmref.solvers.NotConvexError` when an eigenvalue is below ``-1e-10 max|lam|`` (a kernel
    that is not positive semidefinite: the Gaussian prior of 002 on ``w`` has no such covariance).
    """
    K = check_gram(K, "K")
    A, v, beta = _centred_block(K)
    lam, V = np.linalg.eigh(A)
    lam, clipped = _clip_negative(lam)
    U = -beta * np.outer(v, v[1:] @ V)  # U = H[:, 1:] V
    U[1:] += V
    return CentredEigen(lam=lam, U=U, N=K.shape[0], clipped=clipped)


def _centred_block(K):
    """``(A, v, beta)``: ``A = (H K H)[1:, 1:]`` (symmetrised), ``H = I - beta v v'`` the Householder reflection
    mapping ``1/sqrt(N)`` to ``e_1`` (:func:`centred_eigen`); ``H K H`` by rank-one updates, O(N^2)."""
    N = K.shape[0]
    if N < 2:
        raise ValueError(f"K must be at least 2 x 2 (the evidence needs N >= 2 patterns); got shape {K.shape}")
    v = np.full(N, 1.0 / np.sqrt(N))
    v[0] -= 1.0
    beta = 2.0 / (v @ v)
    w = K @ v
    HKH = K - beta * (np.outer(v, w) + np.outer(w, v)) + (beta * beta * (v @ w)) * np.outer(v, v)
    A = HKH[1:, 1:]
    return 0.5 * (A + A.T), v, beta


def _clip_negative(lam):
    """``(lam clipped at 0, the most negative eigenvalue clipped)``; refuses a kernel that is not PSD."""
    scale = max(float(np.max(np.abs(lam))), np.finfo(float).tiny)
    clipped = 0.0
    if lam[0] < 0.0:
        if lam[0] < -NEG_EIG_RTOL * max(scale, 1.0):
            raise NotConvexError(f"K is not positive semidefinite on the complement of 1: centred eigenvalue {lam[0]:.3g} "
                                 f"(max |lam| = {scale:.3g}); the Gaussian prior on w of 002 needs a PSD kernel")
        clipped = float(lam[0])
        lam = np.maximum(lam, 0.0)
    return lam, clipped


@dataclass(frozen=True)
class _Spectrum:
    """What the evidence needs of one kernel matrix: ``lam`` (ascending, clipped at 0), ``C2[:, j] = (U'y_j)^2``
    and ``N``; no eigenvectors (level 3's search over ``sigma``, :func:`_spectrum`)."""

    lam: np.ndarray
    C2: np.ndarray
    N: int


def _spectrum(K, Ys) -> _Spectrum:
    """``lam`` and ``c_j = U'y_j`` of :func:`centred_eigen` without forming ``U`` (same quantities, other rounding).

    ``A = (H K H)[1:, 1:] = Q T Q'`` (LAPACK ``dsytrd``, Householder tridiagonalisation), ``T = S diag(lam) S'``
    (``eigh_tridiagonal``, MRRR), so ``V = Q S`` and ``c = V' (H y)[1:] = S' (Q' (H y)[1:])``: ``Q'`` is applied to
    the m target vectors by its reflections (LAPACK ``dormqr``, O(N^2 m)) instead of forming ``V`` (the
    back-transformation, about half of a full eigendecomposition's time).
    """
    A, v, beta = _centred_block(K)
    Z = Ys - beta * np.outer(v, v @ Ys)  # H Y
    Z = np.asfortranarray(Z[1:], dtype=float)
    n, m = Z.shape
    if n == 1:
        lam, S = np.array([A[0, 0]]), np.ones((1, 1))
    else:
        lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])
        R, d, e, tau, info = lapack.dsytrd(A, lower=1, lwork=max(lwork, n), overwrite_a=1)
        if info != 0:
            raise FloatingPointError(f"LAPACK dsytrd failed (info = {info})")
        # Q = H(0) ... H(n-2), H(k) = I - tau_k u u', u = (0_{k+1}, 1, R[k+2:, k]): the reflectors of a QR
        # factorisation of R[1:, :n-1] acting on rows 1: (what LAPACK's dormtr does for uplo = 'L'); Z <- Q'Z
        Z[1:], _, info = lapack.dormqr("L", "T", R[1:, :n - 1], tau, Z[1:], lwork=max(1, m * 64))
        if info != 0:
            raise FloatingPointError(f"LAPACK dormqr failed (info = {info})")
        lam, S = eigh_tridiagonal(d, e)
    lam, _ = _clip_negative(lam)
    C = S.T @ Z
    return _Spectrum(lam=lam, C2=C * C, N=K.shape[0])


def _eig_of(K, eig) -> CentredEigen:
    if eig is not None:
        if not isinstance(eig, CentredEigen):
            raise TypeError(f"eig must be a CentredEigen from centred_eigen(K); got {type(eig).__name__}")
        return eig
    if K is None:
        raise ValueError("K is required when eig is not given")
    return centred_eigen(K)


def _targets(y, N) -> np.ndarray:
    y = check_targets(y, N, "y")
    if np.ptp(y) == 0.0:
        raise ValueError("y is constant: the evidence has no maximum (the bias b explains all of y); "
                         "a classifier needs both classes -1 and +1")
    return y


def _hyper(value, name) -> float:
    return check_positive(value, name)


# ---- level 1 -------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Level1Result:
    """Level 1 of 002 for given ``mu``, ``zeta``: the posterior of ``(w, b)``.

    The posterior mean is the LS-SVM (002, the linear system with ``gamma = zeta/mu``): ``w_MP = sum_i alpha_i
    phi(x_i)``, latent output ``f(x) = sum_i alpha_i k(x_i, x) + b``, ``e = alpha/gamma`` (002: ``alpha_i =
    gamma e_i``). ``E_W = 1/2 w'w``, ``E_D = 1/2 sum e_i^2``, ``J = mu E_W + zeta E_D`` (002's ``J_2``).
    The posterior covariance of ``w`` (``b`` integrated out under its flat prior) is, in the eigenbasis of the
    centred kernel matrix, ``diag(1/(mu + zeta lam_i))`` along the directions ``Phi'U_i/sqrt(lam_i)`` and
    ``1/mu`` on their complement (:attr:`w_variances`); :meth:`latent_variance` and :meth:`centred_variance`
    evaluate it on new points through the kernel.
    """

    alpha: np.ndarray
    b: float
    e: np.ndarray
    mu: float
    zeta: float
    gamma: float
    E_W: float
    E_D: float
    J: float
    eig: CentredEigen = field(repr=False)

    @property
    def w_variances(self) -> np.ndarray:
        """Posterior variances of ``w`` along the kernel principal directions: ``1/(mu + zeta lam_i)``."""
        return 1.0 / (self.mu + self.zeta * self.eig.lam)

    def centred_variance(self, K_xt, k_xx, K_t, idx=None) -> np.ndarray:
        """Posterior variance of ``w'(phi(x) - m)``, ``m`` the feature-space mean of the training points ``idx``.

        ``K_xt`` (n x N): ``k(x, x_j)``; ``k_xx`` (n,): ``k(x, x)``; ``K_t``: the training kernel matrix; ``idx``:
        training indices (default all). With ``d = phi(x) - m`` and the posterior covariance
        ``Q_w = 1/mu I - sum_i (1/mu - 1/(mu + zeta lam_i)) u_i u_i'``, ``u_i = Phi'U_i / sqrt(lam_i)``::

            d'Q_w d = d'd / mu - sum_i zeta / (mu (mu + zeta lam_i)) (U_i'(k_x - K[:, idx] 1/|idx|))^2,
            d'd = k(x, x) - 2 mean_j k(x, x_j) + mean_jl K_jl   (j, l in idx)

        (no division by ``lam_i``, so zero eigenvalues need no threshold). Clipped at 0 against rounding.
        """
        K_xt = np.atleast_2d(np.asarray(K_xt, dtype=float))
        k_xx = np.asarray(k_xx, dtype=float).reshape(-1)
        K_t = np.asarray(K_t, dtype=float)
        idx = np.arange(self.eig.N) if idx is None else np.asarray(idx)
        kbar = K_t[:, idx].mean(axis=1)
        dd = k_xx - 2.0 * K_xt[:, idx].mean(axis=1) + K_t[np.ix_(idx, idx)].mean()
        proj = (K_xt - kbar[None, :]) @ self.eig.U
        shrink = self.zeta / (self.mu * (self.mu + self.zeta * self.eig.lam))
        return np.maximum(dd / self.mu - (proj * proj) @ shrink, 0.0)

    def latent_variance(self, K_xt, k_xx, K_t) -> np.ndarray:
        """Posterior variance of the latent output ``f(x) = w'phi(x) + b`` under the posterior of ``(w, b)``.

        ``b`` given ``w`` is Gaussian with mean ``mean(y - Phi w)`` and variance ``1/(N zeta)``, so
        ``f(x) = w'(phi(x) - mean_j phi(x_j)) + const + noise`` and ``Var f(x) = d'Q_w d + 1/(N zeta)`` with
        ``d`` centred on the mean of all training points (:meth:`centred_variance`)."""
        return self.centred_variance(K_xt, k_xx, K_t) + 1.0 / (self.eig.N * self.zeta)

    def __repr__(self) -> str:
        return (f"Level1Result(mu={self.mu:.6g}, zeta={self.zeta:.6g}, gamma={self.gamma:.6g}, b={self.b:.6g}, "
                f"E_W={self.E_W:.6g}, E_D={self.E_D:.6g}, J={self.J:.6g}, N={self.eig.N})")


def _level1(eig: CentredEigen, y: np.ndarray, K: np.ndarray | None, mu: float, zeta: float) -> Level1Result:
    gamma = zeta / mu
    c = eig.coordinates(y)
    g = 1.0 / (1.0 + gamma * eig.lam)
    e = eig.U @ (g * c)  # residuals y - f(x_i): in the complement of 1 (sum alpha_i = 0, 002)
    alpha = gamma * e
    # b from y = K alpha + b 1 + e (002's last optimality condition), averaged over i
    b = float(np.mean(y - K @ alpha - e))
    E_W = 0.5 * float(np.sum(eig.lam * (gamma * g * c) ** 2))  # w'w = alpha'K alpha, alpha in span(U)
    E_D = 0.5 * float(np.sum((g * c) ** 2))
    return Level1Result(alpha=alpha, b=b, e=e, mu=mu, zeta=zeta, gamma=gamma, E_W=E_W, E_D=E_D,
                        J=mu * E_W + zeta * E_D, eig=eig)


def level1(K, y, mu: float, zeta: float, *, eig: CentredEigen | None = None) -> Level1Result:
    """Level 1 of 002: the posterior of ``(w, b)`` given ``mu``, ``zeta`` (its mean is the LS-SVM with
    ``gamma = zeta/mu``; 002 "the solution does only depend on the ratio gamma"). ``y``: targets (+-1 for the
    classifier, 002's regression form). ``eig``: a :func:`centred_eigen` of ``K`` to reuse."""
    K = check_gram(K, "K")
    y = _targets(y, K.shape[0])
    mu, zeta = _hyper(mu, "mu"), _hyper(zeta, "zeta")
    eig = _eig_of(K, eig)
    return _level1(eig, y, K, mu, zeta)


# ---- level 2 -------------------------------------------------------------------------------------------
def _S(eig: CentredEigen, c2: np.ndarray, gamma: float) -> float:
    """``S(gamma) = y'Py / mu = sum_i gamma c_i^2 / (1 + gamma lam_i)`` (= 2 (E_W + gamma E_D) at the MAP)."""
    return float(np.sum(gamma * c2 / (1.0 + gamma * eig.lam)))


def _log_ev(eig: CentredEigen, c2: np.ndarray, mu: float, gamma: float) -> float:
    N = eig.N
    return float(-0.5 * (N - 1) * np.log(2.0 * np.pi) - 0.5 * np.log(N) - 0.5 * mu * _S(eig, c2, gamma)
                 - 0.5 * np.sum(np.log1p(gamma * eig.lam)) + 0.5 * (N - 1) * np.log(gamma * mu))


def _profile(eig: CentredEigen, c2: np.ndarray, log_gamma: float) -> tuple[float, float]:
    """``(max_mu log p(D | mu, gamma mu), argmax mu)``: ``mu = (N-1)/S(gamma)`` (level 2, d/dmu = 0)."""
    gamma = float(np.exp(log_gamma))
    mu = (eig.N - 1) / _S(eig, c2, gamma)
    return _log_ev(eig, c2, mu, gamma), mu


def _dprofile(eig: CentredEigen, c2: np.ndarray, log_gamma: float) -> float:
    """``d/d log(gamma)`` of the profile :func:`_profile`: ``1/2 [(N-1) - gamma_eff' - (N-1) A/S]`` with
    ``A = sum_i gamma c_i^2/(1 + gamma lam_i)^2`` (``= 2 gamma E_D / mu``-scaled; zero exactly when
    ``2 zeta E_D = N - gamma_eff``, Van Gestel's level-2 condition)."""
    gamma = float(np.exp(log_gamma))
    d = 1.0 + gamma * eig.lam
    S = float(np.sum(gamma * c2 / d))
    A = float(np.sum(gamma * c2 / (d * d)))
    geff = float(np.sum(gamma * eig.lam / d))
    return 0.5 * ((eig.N - 1) - geff - (eig.N - 1) * A / S)


def log_evidence(K, y, mu: float, zeta: float, *, eig: CentredEigen | None = None) -> float:
    r"""Level-2 log evidence ``log p(D | log mu, log zeta)`` with ``w`` and ``b`` integrated out.

    With the flat prior on ``b`` taken as density 1 (002's ``sigma_b -> inf`` limit with its vanishing
    normalisation ``1/sqrt(2 pi sigma_b)`` dropped, the same for every ``mu``, ``zeta``, ``sigma``) this is
    exactly ``log int N(y; b 1, K/mu + I/zeta) db``::

        -(N-1)/2 log 2pi - 1/2 log N - mu/2 sum_i gamma c_i^2 / (1 + gamma lam_i)
            - 1/2 sum_i [log(1 + gamma lam_i) - log(gamma mu)],          gamma = zeta/mu, c = U'y,

    the sums over the N-1 eigenpairs of the centred kernel matrix (Van Gestel et al. 2002's evidence; its
    ``N_eff`` nonzero eigenvalues appear here because a zero eigenvalue contributes ``-log zeta`` only).
    """
    K = check_gram(K, "K")
    y = _targets(y, K.shape[0])
    mu, zeta = _hyper(mu, "mu"), _hyper(zeta, "zeta")
    eig = _eig_of(K, eig)
    c = eig.coordinates(y)
    return _log_ev(eig, c * c, mu, zeta / mu)


@dataclass(frozen=True, repr=False)
class Level2Result:
    """Level 2: ``mu``, ``zeta`` (hence ``gamma = zeta/mu``) maximising the evidence ``p(D | log mu, log zeta)``.

    ``gamma_eff`` is the effective number of parameters as Van Gestel et al. and LS-SVMlab count it,
    ``1 + sum_i gamma lam_i / (1 + gamma lam_i)`` (the 1 is ``b``); at the maximum ``2 mu E_W = gamma_eff - 1``
    and ``2 zeta E_D = N - gamma_eff``. ``at_boundary`` is True when the maximum found lies on an end of
    ``gamma_range`` (then a :class:`BoundaryWarning` was issued and ``gamma`` is that end, not a maximum).
    ``level1`` is the posterior of ``(w, b)`` at ``mu``, ``zeta``.
    """

    gamma: float
    mu: float
    zeta: float
    gamma_eff: float
    log_evidence: float
    at_boundary: bool
    gamma_range: tuple
    level1: Level1Result = field(repr=False)
    status: str = "optimal"
    message: str = ""

    @property
    def E_W(self) -> float:
        return self.level1.E_W

    @property
    def E_D(self) -> float:
        return self.level1.E_D

    @property
    def N(self) -> int:
        return self.level1.eig.N

    def __repr__(self) -> str:
        return (f"Level2Result(gamma={self.gamma:.6g}, mu={self.mu:.6g}, zeta={self.zeta:.6g}, "
                f"gamma_eff={self.gamma_eff:.6g}, log_evidence={self.log_evidence:.6g}, "
                f"at_boundary={self.at_boundary}, status={self.status!r})")


def _check_range(rng, name) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in rng)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high) of numbers with 0 < low < high; got {rng!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and 0.0 < lo < hi):
        raise ValueError(f"{name} must be a pair (low, high) of numbers with 0 < low < high; got {rng!r}")
    return lo, hi


def _search_log(f, lo: float, hi: float, per_decade: int, df=None, xatol: float = 1e-11, frugal: bool = False):
    """Maximise ``f(t)`` over ``t in [log lo, log hi]``: log-uniform grid, then around the best grid point
    either the root of the derivative ``df`` (brentq, when it changes sign there: the maximum to rounding) or
    Brent on ``f`` (to ``xatol`` in ``t``; about ``sqrt(eps)`` relative at best, the flatness of a maximum).

    ``frugal`` (level 3, where each ``f`` costs an eigendecomposition; ``f`` should cache its values): a neighbour
    of the best grid point where ``f`` is not finite is approached by :data:`EDGE_BISECTIONS` bisections (the
    bracket then ends at the last finite point); a bracket whose best point is one of its ends (an end of the range
    or such an edge) is settled by one probe ``BOUNDARY_LOG_TOL / 2`` inside it; then successive parabolic
    interpolation to ``xatol`` (:func:`_frugal_refine`, :func:`_parabolic_max`) instead of Brent.
    Returns ``(t, f(t), at_boundary, grid, grid_values, at_edge)``; ``at_edge``: ``t`` is the end of the bracket
    next to a point where ``f`` is not finite and the maximum did not move inside (``f`` still rises towards it)."""
    a, b = np.log(lo), np.log(hi)
    n = max(5, int(np.ceil(per_decade * (b - a) / np.log(10.0))) + 1)
    t = np.linspace(a, b, n)
    vals = np.array([f(ti) for ti in t])
    vals = np.where(np.isfinite(vals), vals, -np.inf)
    k = int(np.argmax(vals))
    if not np.isfinite(vals[k]):
        raise FloatingPointError("the evidence is not finite anywhere on the search grid")
    # bracket by the neighbours where the function is finite (a -inf neighbour: the grid point itself)
    left = t[k - 1] if k > 0 and np.isfinite(vals[k - 1]) else t[k]
    right = t[k + 1] if k < n - 1 and np.isfinite(vals[k + 1]) else t[k]
    clipped = (k > 0 and left == t[k], k < n - 1 and right == t[k])  # a non-finite neighbour on that side
    if frugal:
        left = _approach_edge(f, t[k - 1], t[k]) if clipped[0] else left
        right = _approach_edge(f, t[k + 1], t[k]) if clipped[1] else right
        tb = _frugal_refine(f, t[k], float(vals[k]), left, right, xatol)
    else:
        tb = _refine(f, df, t[k], float(vals[k]), left, right, k in (0, n - 1), xatol)
    fb = float(f(tb))
    if not np.isfinite(fb) or fb < vals[k]:  # Brent can only improve on the grid
        tb, fb = float(t[k]), float(vals[k])
    at_boundary = bool(tb - a < BOUNDARY_LOG_TOL or b - tb < BOUNDARY_LOG_TOL)
    if at_boundary:  # report the end itself, not a point a hair inside it
        tb = a if tb - a < BOUNDARY_LOG_TOL else b
        fb = float(f(tb))
    at_edge = bool((clipped[0] and tb - left < BOUNDARY_LOG_TOL) or (clipped[1] and right - tb < BOUNDARY_LOG_TOL))
    return tb, fb, at_boundary, t, vals, at_edge


def _refine(f, df, tk, fk, left, right, at_end, xatol):
    """The grid maximum ``tk`` refined in ``[left, right]``: the root of ``df`` when it changes sign there, ``tk``
    when ``df`` says ``f`` still climbs at the end of the range, else bounded Brent on ``f``."""
    if not left < right:
        return float(tk)
    if df is not None:
        dl, dr = df(left), df(right)
        if dl > 0.0 > dr:
            return float(brentq(df, left, right, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200))
        if at_end and (dl > 0.0 and dr > 0.0 and tk == right or dl < 0.0 and dr < 0.0 and tk == left):
            return float(tk)  # still climbing at the end of the range: a boundary maximum
    return _bounded_brent(f, fk, left, right, xatol)


def _bounded_brent(f, fk, left, right, xatol):
    worse = -fk + 1e3  # keeps Brent's arithmetic finite where f is -inf or nan

    def g(s):
        v = f(s)
        return -v if np.isfinite(v) else worse

    res = minimize_scalar(g, bounds=(left, right), method="bounded", options={"xatol": xatol, "maxiter": 500})
    return float(res.x)


def _approach_edge(f, bad, good):
    """Bisect :data:`EDGE_BISECTIONS` times between a point ``bad`` where ``f`` is not finite and a point ``good``
    where it is; returns the finite point nearest to ``bad`` found."""
    for _ in range(EDGE_BISECTIONS):
        m = 0.5 * (bad + good)
        if np.isfinite(f(m)):
            good = m
        else:
            bad = m
    return float(good)


def _frugal_refine(f, tk, fk, left, right, xatol):
    """:func:`_search_log`'s refinement with few evaluations of ``f`` (``frugal``; ``f`` caches its values).

    If the best of ``left``, ``tk``, ``right`` is an end of the bracket, one probe ``BOUNDARY_LOG_TOL / 2`` inside
    it decides: ``f`` not higher there, the end is returned (``f`` rises up to it: a boundary or edge maximum);
    higher, the probe is the middle of a bracket. Then :func:`_parabolic_max` from the bracket."""
    if not left < right:
        return float(tk)
    pts = sorted({float(left): f(left), float(tk): fk, float(right): f(right)}.items())
    pts = [(x, v if np.isfinite(v) else -np.inf) for x, v in pts]
    i = max(range(len(pts)), key=lambda j: pts[j][1])
    if i in (0, len(pts) - 1):
        inner = pts[i][0] + (0.5 if i == 0 else -0.5) * BOUNDARY_LOG_TOL
        fi = f(inner)
        if not fi > pts[i][1]:
            return float(pts[i][0])
        pts = sorted(pts + [(float(inner), float(fi))])
    return _parabolic_max(f, pts, xatol)


def _parabolic_max(f, pts, xatol, maxiter: int = 50):
    """Safeguarded successive parabolic interpolation from a bracket ``x0 < x1 < x2``, ``f(x0) < f(x1) > f(x2)``
    (``pts``: their ``(x, f)``). Each step evaluates ``f`` at the vertex of the parabola through the best point and
    its nearest evaluated neighbours (a golden-section point of the wider side when the vertex is not strictly
    inside, or lies within ``xatol / 2`` of a bracket end), keeping a bracket. Stops when the vertex lies within
    ``xatol / 2`` of the best point (then ``f`` is evaluated ``xatol / 2`` from it towards the vertex) or the
    bracket is narrower than ``4 xatol``; returns the best point evaluated."""
    pts = sorted(pts)
    for _ in range(maxiter):
        i = max(range(1, len(pts) - 1), key=lambda j: pts[j][1])
        (x0, f0), (x1, f1), (x2, f2) = pts[i - 1], pts[i], pts[i + 1]
        x = np.nan
        if np.isfinite(f0) and np.isfinite(f2):
            p, q = (x1 - x0) * (f1 - f2), (x1 - x2) * (f1 - f0)
            if p != q:
                x = x1 - ((x1 - x0) * p - (x1 - x2) * q) / (2.0 * (p - q))
        if abs(x - x1) < xatol and x2 - x0 < 4.0 * xatol:
            break
        if not (x0 + 0.5 * xatol < x < x2 - 0.5 * xatol):
            x = x1 + 0.381966 * ((x2 - x1) if x2 - x1 > x1 - x0 else (x0 - x1))
        if abs(x - x1) < 0.5 * xatol:  # a step below the tolerance: step xatol/2 towards the vertex instead
            x = x1 + np.copysign(0.5 * xatol, x - x1)
        fx = f(x)
        pts = sorted(pts + [(float(x), fx if np.isfinite(fx) else -np.inf)])
        if abs(x - x1) <= 0.5 * xatol * (1.0 + 1e-9):
            break  # the vertex was within xatol/2 of the best point: converged
    return float(max(pts, key=lambda pv: pv[1])[0])


def _level2_max(eig, c2: np.ndarray, gamma_range) -> tuple[float, float, float, float, bool]:
    """``(gamma, mu, log evidence, gamma_eff, at_boundary)`` at the level-2 maximum over ``gamma_range``; ``eig``
    needs ``lam`` and ``N`` only (a :class:`CentredEigen` or a :class:`_Spectrum`), ``c2 = (U'y)^2``."""
    lo, hi = gamma_range
    t, _, at_boundary, _, _, _ = _search_log(lambda s: _profile(eig, c2, s)[0], lo, hi, GRID_PER_DECADE,
                                          df=lambda s: _dprofile(eig, c2, s))
    gamma = float(np.exp(t))
    lev, mu = _profile(eig, c2, t)
    gamma_eff = 1.0 + float(np.sum(gamma * eig.lam / (1.0 + gamma * eig.lam)))
    return gamma, mu, lev, gamma_eff, at_boundary


def _level2(eig: CentredEigen, y: np.ndarray, K: np.ndarray, gamma_range) -> Level2Result:
    c = eig.coordinates(y)
    c2 = c * c
    if not np.any(c2 > 0.0):
        raise ValueError("y is constant: the evidence has no maximum (the bias b explains all of y)")
    lo, hi = gamma_range
    gamma, mu, lev, gamma_eff, at_boundary = _level2_max(eig, c2, gamma_range)
    zeta = gamma * mu
    l1 = _level1(eig, y, K, mu, zeta)
    status, message = "optimal", ""
    if at_boundary:
        status = "at_boundary"
        message = (f"the level-2 evidence is largest at gamma = {gamma:.6g}, an end of gamma_range = "
                   f"({lo:g}, {hi:g}): not a maximum; widen gamma_range")
    return Level2Result(gamma=gamma, mu=mu, zeta=zeta, gamma_eff=gamma_eff, log_evidence=lev,
                        at_boundary=at_boundary, gamma_range=(lo, hi), level1=l1, status=status, message=message)


def level2(K, y, *, gamma_range=GAMMA_RANGE, eig: CentredEigen | None = None) -> Level2Result:
    """Level 2 of 002: ``mu``, ``zeta`` maximising ``p(D | log mu, log zeta)`` (:func:`log_evidence`), ``b``
    integrated out under its flat prior (so the centred kernel matrix enters).

    One eigendecomposition (:func:`centred_eigen`, or ``eig``), then a 1-D search: for fixed ``gamma`` the
    evidence is maximal at ``mu = (N-1)/S(gamma)`` (``S`` as in :func:`log_evidence`), so the profile
    ``max_mu log p`` is searched over ``log gamma in log(gamma_range)`` (grid of 8 points per decade, then
    bounded Brent to 1e-11 in ``log gamma``). A maximum at an end of ``gamma_range`` issues a
    :class:`BoundaryWarning` and sets ``at_boundary`` (status ``"at_boundary"``).
    """
    K = check_gram(K, "K")
    y = _targets(y, K.shape[0])
    rng = _check_range(gamma_range, "gamma_range")
    eig = _eig_of(K, eig)
    res = _level2(eig, y, K, rng)
    if res.at_boundary:
        warnings.warn(res.message, BoundaryWarning, stacklevel=2)
    return res


# ---- level 3 -------------------------------------------------------------------------------------------
def level3_log_evidence(res: Level2Result) -> float:
    """Level-3 log evidence ``log p(D | H)`` of the model ``H`` (kernel and its parameters) from its level 2.

    MacKay's Gaussian approximation of the posterior of ``(log mu, log zeta)`` with Van Gestel et al.'s error
    bars ``sigma^2_{log mu | D} = 2/(gamma_eff - 1)``, ``sigma^2_{log zeta | D} = 2/(N - gamma_eff)``::

        log p(D | H) = log p(D | mu_MP, zeta_MP) + log 2pi + 1/2 log(2/(gamma_eff - 1)) + 1/2 log(2/(N - gamma_eff)),

    up to the log of the (common) widths of the flat priors on ``log mu`` and ``log zeta``. This equals
    ``-costL3/2`` of LS-SVMlab's ``bay_lssvm`` plus a constant. ``-inf`` when ``gamma_eff - 1`` or
    ``N - gamma_eff`` is 0 (a centred kernel matrix of zeros: the data cannot tell ``mu`` apart).
    """
    return _level3_formula(res.log_evidence, res.gamma_eff, res.N)


def _level3_formula(log_evidence: float, gamma_eff: float, N: int) -> float:
    """:func:`level3_log_evidence` from the level-2 log evidence, ``gamma_eff`` and ``N``."""
    g1 = gamma_eff - 1.0
    g2 = N - gamma_eff
    if not (g1 > 1e-12 and g2 > 1e-12):
        return -np.inf
    return float(log_evidence + np.log(2.0 * np.pi) + 0.5 * np.log(2.0 / g1) + 0.5 * np.log(2.0 / g2))


@dataclass(frozen=True, repr=False)
class Level3Result:
    """Level 3: the RBF width ``sigma`` maximising the level-3 evidence (:func:`level3_log_evidence`).

    For several target vectors (one-vs-rest) the evidence is the sum over them (independent outputs sharing
    the kernel). ``level2``: the level-2 results at ``sigma`` (one per target vector); ``sigmas`` and
    ``log_evidences``: every ``sigma`` the search evaluated (its grid, edge bisections and parabolic steps),
    ascending, and the level-3 log evidence there (``-inf`` where level 2 is on its boundary); ``at_boundary``: the
    maximum is an end of ``sigma_range`` (a :class:`BoundaryWarning` was issued); ``n_evaluations``: kernel
    matrices decomposed (``len(sigmas)`` eigenvalue-and-coordinate decompositions, :func:`_spectrum`, and the one
    full eigendecomposition at ``sigma``).
    """

    sigma: float
    log_evidence: float
    level2: tuple
    at_boundary: bool
    sigma_range: tuple
    sigmas: np.ndarray = field(repr=False)
    log_evidences: np.ndarray = field(repr=False)
    status: str = "optimal"
    message: str = ""
    n_evaluations: int = 0

    def __repr__(self) -> str:
        return (f"Level3Result(sigma={self.sigma:.6g}, log_evidence={self.log_evidence:.6g}, "
                f"gammas={[round(r.gamma, 6) for r in self.level2]}, at_boundary={self.at_boundary}, "
                f"status={self.status!r})")


def median_distance(X) -> float:
    """Median of the pairwise Euclidean distances between distinct rows of ``X`` (the scale of the default
    ``sigma_range``); 1.0 when all rows coincide. Uses at most 1000 rows (evenly spaced)."""
    X = check_X(X, "X")
    if X.shape[0] > 1000:
        X = X[np.linspace(0, X.shape[0] - 1, 1000).astype(int)]
    X = X - X.mean(axis=0)  # translation-invariant: centred, the expansion below cancels nothing (a feature's offset)
    sq = np.einsum("ij,ij->i", X, X)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    d = np.sqrt(D[np.triu_indices(X.shape[0], 1)])
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


def _check_spread(X) -> None:
    """Refuse (``ValueError`` naming X) data whose rows are all the same point, before any work: every pairwise
    distance is then 0, so the kernel matrix is ``k(x, x) 11'`` for every ``sigma`` (and for the linear kernel), its
    centred part ``M K M`` is 0 and the evidence (002 levels 2 and 3) does not depend on ``sigma`` or ``gamma``: it
    has no maximum to choose, and a search would only find rounding noise (or no finite value at all). A constant
    feature among others changes no distance and is fine."""
    if X.shape[0] >= 2 and np.all(X == X[0]):
        raise ValueError(
            f"X has zero spread: all {X.shape[0]} rows are the same point, so every pairwise distance is 0 and the kernel "
            "matrix is the same constant for every sigma (and for the linear kernel); its centred part is 0, so the "
            "evidence does not depend on sigma or gamma and cannot choose them (002 levels 2-3). X needs at least two "
            "distinct rows: check how it was built (e.g. a feature selection or a scaling that left no variation)")


def _check_sigma_range(srng, given) -> None:
    """Refuse (``ValueError`` naming sigma_range, or X for the default range) a range with an end that
    :func:`svmref.kernels.rbf_gamma` refuses, before the search meets it."""
    for end in srng:
        try:
            rbf_gamma(end)
        except ValueError as exc:
            what = (f"sigma_range = {given!r}" if given is not None else
                    f"the default sigma_range {SIGMA_RANGE_FACTORS} x the median pairwise distance of X, {srng!r},")
            raise ValueError(f"{what} has an end outside the widths the RBF kernel accepts: {exc}") from None


def _ys_matrix(y) -> np.ndarray:
    try:
        Y = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("y must be numeric targets (+-1 labels), a vector (N,) or a matrix (N x m)") from None
    return Y[:, None] if Y.ndim == 1 else Y


def _level3_evaluator(X, Ys, gamma_range):
    """``total(log_sigma, strict)``: the summed level-3 log evidence at ``sigma`` (``-inf`` where ``strict`` and a
    level 2 is on the boundary of ``gamma_range``), and the dict of evaluations it made. Each ``sigma`` costs one
    kernel matrix and one :func:`_spectrum` (no eigenvectors), made once: a ``sigma`` asked for again (Brent's
    end points, the final value, the fallback search) is looked up, not recomputed."""
    cache = {}

    def total(log_sigma, strict):
        key = float(log_sigma)
        if key not in cache:
            spec = _spectrum(rbf_kernel(X, sigma=float(np.exp(key))), Ys)
            per = []
            for j in range(Ys.shape[1]):
                _, _, lev, geff, at_b = _level2_max(spec, spec.C2[:, j], gamma_range)
                per.append((_level3_formula(lev, geff, spec.N), at_b))
            cache[key] = per
        per = cache[key]
        if strict and any(at_b for _, at_b in per):
            return -np.inf  # no interior level-2 maximum: the Gaussian approximation is undefined here
        return float(sum(v for v, _ in per))

    return total, cache


def _level3(X, Ys, sigma_range, gamma_range):
    total, cache = _level3_evaluator(X, Ys, gamma_range)
    lo, hi = sigma_range
    strict = True
    try:
        t, lev, at_boundary, _, _, at_edge = _search_log(lambda s: total(s, True), lo, hi, SIGMA_GRID_PER_DECADE,
                                                               xatol=SIGMA_XATOL, frugal=True)
    except FloatingPointError:  # level 2 on the boundary of gamma_range at every sigma of the grid
        strict = False
        t, lev, at_boundary, _, _, at_edge = _search_log(lambda s: total(s, False), lo, hi, SIGMA_GRID_PER_DECADE,
                                                               xatol=SIGMA_XATOL, frugal=True)
    sigma = float(np.exp(t))
    K = rbf_kernel(X, sigma=sigma)
    eig = centred_eigen(K)
    l2 = tuple(_level2(eig, Ys[:, j], K, gamma_range) for j in range(Ys.shape[1]))
    status, message = "optimal", ""
    if not strict:
        status = "at_boundary"
        message = (f"level 2 has no interior maximum in gamma_range = {gamma_range} at any sigma of the grid, so the "
                   f"level-3 evidence (a Gaussian approximation around that maximum) is undefined; sigma = {sigma:.6g} "
                   "maximises the formula regardless and is not a level-3 maximum; widen gamma_range")
        at_boundary = True
    elif at_boundary:
        status = "at_boundary"
        message = (f"the level-3 evidence is largest at sigma = {sigma:.6g}, an end of sigma_range = "
                   f"({lo:.6g}, {hi:.6g}): not a maximum; widen sigma_range")
    elif at_edge:
        status = "at_boundary"
        at_boundary = True
        message = (f"the level-3 evidence is largest at sigma = {sigma:.6g}, next to sigma where level 2 has no interior "
                   f"maximum in gamma_range = {gamma_range} (the level-3 approximation is undefined there) and still "
                   "rises towards them: sigma is the edge of the valid region, not a level-3 maximum")
    seen = np.array(sorted(cache))  # every sigma the search evaluated (grid, edge bisections, parabolic steps)
    return Level3Result(sigma=sigma, log_evidence=float(lev), level2=l2, at_boundary=at_boundary,
                        sigma_range=(lo, hi), sigmas=np.exp(seen), log_evidences=np.array([total(u, strict) for u in seen]),
                        status=status, message=message, n_evaluations=len(cache) + 1)


def level3(X, y, *, sigma_range=None, gamma_range=GAMMA_RANGE) -> Level3Result:
    """Level 3 of 002 for the RBF kernel ``exp(-||x - z||^2 / sigma^2)`` (002; :func:`svmref.kernels.rbf_kernel`):
    ``sigma`` maximising :func:`level3_log_evidence`, each ``sigma`` with its own level 2.

    ``y``: a target vector (N,) or several (N x m, e.g. one-vs-rest codes; their level-3 log evidences add).
    Only the ``sigma`` whose level 2 has an interior maximum compete (at a level-2 maximum on the boundary of
    ``gamma_range``, e.g. ``gamma -> inf`` where a narrow kernel interpolates, ``N - gamma_eff -> 0`` and Van
    Gestel's error bar ``2/(N - gamma_eff)`` on ``log zeta`` diverges: the approximation is undefined there;
    their grid values are ``-inf``). If no ``sigma`` qualifies, the formula is maximised regardless; if the
    maximum sits next to the excluded ``sigma`` and still rises towards them, it is the edge of the valid region.
    Both are flagged like a range end.
    ``sigma_range``: default ``(0.01, 100)`` times the median pairwise distance of ``X``; searched on a
    log grid of :data:`SIGMA_GRID_PER_DECADE` (1) point per decade (at least 5), which only has to bracket the
    maximum, then refined by safeguarded parabolic interpolation in ``log sigma`` until the vertex is within
    ``SIGMA_XATOL / 2`` (``SIGMA_XATOL = 1e-3``) of the best point (:func:`_search_log` with ``frugal=True``). A
    best point at an end of the range (or of the valid region, located by :data:`EDGE_BISECTIONS` (2) bisections
    of the grid step, i.e. to a quarter decade) is kept when one probe ``BOUNDARY_LOG_TOL / 2`` inside is not higher.
    Each ``sigma`` is decomposed once (eigenvalues and ``U'y`` only, :func:`_spectrum`); the chosen ``sigma`` gets
    one full eigendecomposition for level 1. Like any local search from a grid, it assumes one maximum per grid
    cell of one decade. A maximum at an end of ``sigma_range`` issues a :class:`BoundaryWarning` and sets
    ``at_boundary``; level-2 boundary hits at the chosen ``sigma`` warn too.

    Refused up front (``ValueError``): ``X`` whose rows are all the same point (no distance to choose a width for;
    :func:`_check_spread`) and a ``sigma_range`` with an end outside the widths the kernel accepts
    (:func:`svmref.kernels.rbf_gamma`).
    """
    X = check_X(X, "X")
    _check_spread(X)
    Ys = _ys_matrix(y)
    if Ys.ndim != 2 or Ys.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one row per pattern of X ({X.shape[0]}); got shape {np.shape(y)}")
    for j in range(Ys.shape[1]):
        _targets(Ys[:, j], X.shape[0])
    given = sigma_range
    if sigma_range is None:
        s = median_distance(X)
        sigma_range = (SIGMA_RANGE_FACTORS[0] * s, SIGMA_RANGE_FACTORS[1] * s)
    srng = _check_range(sigma_range, "sigma_range")
    _check_sigma_range(srng, given)
    grng = _check_range(gamma_range, "gamma_range")
    res = _level3(X, Ys, srng, grng)
    if res.at_boundary:
        warnings.warn(res.message, BoundaryWarning, stacklevel=2)
    for r in res.level2:
        if r.at_boundary:
            warnings.warn(r.message + f" (at the level-3 sigma = {res.sigma:.6g})", BoundaryWarning, stacklevel=2)
    return res


def evidence_surface(X, y, gammas, sigmas):
    """The evidence over a ``(gamma, sigma)`` grid (for the figure): returns ``(L2, L3, l2_best)``.

    ``L2[i, j] = max_mu log p(D | mu, gamma_j mu, sigma_i)`` (the level-2 evidence profiled over ``mu``, one
    eigendecomposition per ``sigma_i``); ``L3[i]`` = the level-3 log evidence at ``sigma_i`` (its own level 2
    over :data:`GAMMA_RANGE`; ``nan`` where that level 2 is on the boundary, see :func:`level3`);
    ``l2_best[i]`` the level-2 results behind ``L3``."""
    X = check_X(X, "X")
    _check_spread(X)
    y = _targets(y, X.shape[0])
    gammas = np.asarray(gammas, dtype=float)
    sigmas = np.asarray(sigmas, dtype=float)
    if gammas.ndim != 1 or np.any(gammas <= 0) or not np.all(np.isfinite(gammas)):
        raise ValueError("gammas must be a 1-D array of finite numbers > 0")
    if sigmas.ndim != 1 or np.any(sigmas <= 0) or not np.all(np.isfinite(sigmas)):
        raise ValueError("sigmas must be a 1-D array of finite numbers > 0")
    L2 = np.empty((sigmas.size, gammas.size))
    L3 = np.empty(sigmas.size)
    best = []
    for i, s in enumerate(sigmas):
        K = rbf_kernel(X, sigma=float(s))
        eig = centred_eigen(K)
        c = eig.coordinates(y)
        L2[i] = [_profile(eig, c * c, np.log(g))[0] for g in gammas]
        r = _level2(eig, y, K, GAMMA_RANGE)
        best.append(r)
        L3[i] = np.nan if r.at_boundary else level3_log_evidence(r)
    return L2, L3, best


# ---- moderated output ----------------------------------------------------------------------------------
def moderated_log_odds(res: Level1Result, y, K_t, K_xt, k_xx, prior_pos: float = 0.5):
    r"""Moderated output (Van Gestel et al. 2002; LS-SVMlab ``bay_modoutClass``): ``log P(y=+1|x)/P(y=-1|x)``.

    002: the latent outputs ``w'phi(x) + b`` of each class follow a Gaussian of variance ``1/zeta`` around the
    class centre. The centre ``m_+-`` is the mean latent output of the training points of that class
    (``w_MP'm_phi+- + b``, ``m_phi+-`` the class mean in feature space); integrating ``w`` over its level-1
    posterior adds the variance of ``w'(phi(x) - m_phi+-)`` (:meth:`Level1Result.centred_variance`)::

        p(x | y = +-1) ~ N(f(x); m_+-, 1/zeta + var_+-(x)),
        log-odds = log pi_+ - log pi_- + log N(f; m_+, s_+^2) - log N(f; m_-, s_-^2).

    ``y``: the +-1 training labels; ``K_t`` training kernel; ``K_xt`` (n x N), ``k_xx`` (n,) as in
    :meth:`Level1Result.centred_variance`; ``prior_pos``: ``pi_+`` in (0, 1). Returns an (n,) array;
    ``P(y=+1|x) = expit(log-odds)``.
    """
    y = np.asarray(y, dtype=float)
    K_t = np.asarray(K_t, dtype=float)
    K_xt = np.atleast_2d(np.asarray(K_xt, dtype=float))
    if not (0.0 < prior_pos < 1.0):
        raise ValueError(f"prior_pos must lie in (0, 1); got {prior_pos!r}")
    f = kernel_expansion(K_xt, res.alpha, res.b)
    f_train = kernel_expansion(K_t, res.alpha, res.b)
    out = np.full(K_xt.shape[0], np.log(prior_pos) - np.log1p(-prior_pos))
    for sign in (1.0, -1.0):
        idx = np.flatnonzero(y == sign)
        if idx.size == 0:
            raise ValueError("y must contain both classes -1 and +1")
        m = f_train[idx].mean()
        s2 = 1.0 / res.zeta + res.centred_variance(K_xt, k_xx, K_t, idx)
        out += sign * (-0.5 * np.log(2.0 * np.pi * s2) - 0.5 * (f - m) ** 2 / s2)
    return out


# ---- the estimator -------------------------------------------------------------------------------------
def _is_range(rng) -> bool:
    try:
        _check_range(rng, "range")
    except ValueError:
        return False
    return True


def _is_width(v) -> bool:
    """A finite float > 0 whose inverse is finite too (the kernel divides by ``sigma^2``)."""
    if not POSITIVE.ok(v):
        return False
    with np.errstate(over="ignore", divide="ignore"):
        return bool(np.isfinite(1.0 / np.float64(v)))


_RANGE = "a pair (low, high) of numbers with 0 < low < high"


class _BayesKernel:
    """The kernel and the inference shared by :class:`BayesianLSSVC` and :class:`BayesianLSSVR` (``kernel``,
    ``sigma``, ``sigma_range``: level 3 chooses ``sigma`` when it is None)."""

    def _check_hyperparameter_combinations(self):
        """``sigma`` and ``sigma_range`` belong to the RBF kernel."""
        if self.sigma is not None and self.kernel != "rbf":
            raise HyperparameterError(f"sigma applies to kernel='rbf' only; got sigma={self.sigma!r} with kernel={self.kernel!r}")
        if self.sigma_range is not None and self.kernel != "rbf":
            raise HyperparameterError(f"sigma_range applies to kernel='rbf' only; got kernel={self.kernel!r}")

    def _kernel(self, A, B=None, sigma=None):
        if self.kernel == "linear":
            return linear_kernel(A, B)
        return rbf_kernel(A, B, sigma=sigma)

    def _kernel_diag(self, A, sigma=None):
        if self.kernel == "linear":
            return np.einsum("ij,ij->i", A, A)
        return np.ones(A.shape[0])

    def _infer(self, X, Ys, grng):
        """Level 3 (``sigma=None``, RBF) or level 2 at the fixed kernel: ``(sigma, level-2 results)``; sets ``result_``."""
        if self.kernel == "rbf" and self.sigma is None:
            res = level3(X, Ys, sigma_range=self.sigma_range, gamma_range=grng)
            self.result_ = res
            return res.sigma, res.level2
        sigma = None if self.kernel == "linear" else float(self.sigma)
        K = self._kernel(X, sigma=sigma)
        eig = centred_eigen(K)
        l2 = tuple(_level2(eig, Ys[:, j], K, grng) for j in range(Ys.shape[1]))
        for r in l2:
            if r.at_boundary:
                warnings.warn(r.message, BoundaryWarning, stacklevel=3)
        self.result_ = l2[0] if len(l2) == 1 else l2
        return sigma, l2


class BayesianLSSVC(_BayesKernel, HyperparameterMixin, ClassifierMixin, BaseEstimator):
    """Bayesian LS-SVM classifier (002 "Bayesian interpretation"; Van Gestel et al. 2002): ``gamma`` by level 2,
    ``sigma`` by level 3 (when ``sigma=None``), class probabilities by the moderated output.

    The LS-SVM of 002 (the regression form on targets +-1, ``J_2 = mu/2 w'w + zeta/2 sum_i e_i^2``) with its
    hyperparameters inferred from the data: level 2 (:func:`level2`) chooses ``mu``, ``zeta`` (hence
    ``gamma = zeta/mu``) by the evidence, level 3 (:func:`level3`) the RBF width ``sigma``; ``predict_proba`` is
    the moderated output (:func:`moderated_log_odds`). Derivations: ``docs/bayes.md``.

    Parameters
    ----------
    kernel : {'rbf', 'linear'}, default='rbf'
        ``rbf``: ``exp(-||x - z||^2 / sigma^2)`` (002; the ``rbf`` of the other estimators); ``linear``: ``x'z``.
    sigma : float > 0 or None, default=None
        RBF width; ``None`` chooses it at level 3 (:func:`level3`). Must be ``None`` for ``kernel="linear"``.
        The default differs from the other estimators' ``sigma='scale'`` (a fixed width from the spread of X)
        on purpose: choosing the kernel width by the evidence is the third level of inference of 002, what
        this estimator is for; a number fixes the width and runs level 2 only.
    sigma_range : (low, high) or None, default=None
        Level-3 search range of ``sigma`` (``None``: ``(0.01, 100)`` x the median pairwise distance of X).
    gamma_range : (low, high), default=(1e-6, 1e6)
        Level-2 search range of ``gamma = zeta/mu``.
    class_prior : array-like of shape (n_classes,) or None, default=None
        Prior class probabilities used by the moderated output; ``None``: the training proportions. Checked
        in ``fit`` against the classes found there (a ``ValueError`` naming it).

    Attributes
    ----------
    gamma_, mu_, zeta_ : float or ndarray of shape (n_classes,)
        ``gamma = zeta/mu``, ``mu`` and ``zeta`` of 002 at the level-2 maximum.
    sigma_ : float or None
        The RBF width used (None for the linear kernel).
    gamma_eff_ : float or ndarray of shape (n_classes,)
        The effective number of parameters, ``b`` included (:class:`Level2Result`).
    log_evidence_, level3_log_evidence_ : float or ndarray of shape (n_classes,)
        The level-2 log evidence at the chosen hyperparameters and the level-3 log evidence.
    alpha_ : ndarray of shape (n_samples,) or (n_classes, n_samples)
        alpha, 002's support values: ``f(x) = sum_i alpha_i k(x_i, x) + b``.
    intercept_ : float or ndarray of shape (n_classes,)
        b.
    at_boundary_ : bool
        An evidence maximum hit an end of ``gamma_range`` or ``sigma_range`` (a :class:`BoundaryWarning` was
        issued).
    result_ : Level2Result, Level3Result or tuple of Level2Result
        The level-3 result (``sigma=None``), else the level-2 result(s).
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training inputs (the kernel expansion and the moderated output need them).
    classes_ : ndarray of shape (n_classes,)
        The class labels. With two classes the attributes above are scalars (``alpha_`` an (N,) array) for
        the model of ``classes_[1]`` against ``classes_[0]``; with more, one-vs-rest: one entry (row) per
        class, all sharing one ``sigma_`` chosen by the summed level-3 evidence.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    Hyperparameters are checked at the start of ``fit`` by the same rules as the other estimators
    (:mod:`svmref.solvers._hyperparameters`): a bad one raises :class:`~svmref.solvers._hyperparameters.HyperparameterError`
    (a ``ValueError`` and a ``TypeError``) naming it.

    ``predict`` is the Bayes decision, the most probable class under ``predict_proba`` (for two classes with
    equal priors and equal class variances it thresholds ``f(x)`` at the midpoint of the two class centres);
    :meth:`latent_function` gives the LS-SVM output ``f(x)`` itself (LS-SVMlab's ``latentlssvm``). There is no
    ``decision_function``: the moderated log-odds are not monotone in ``f(x)`` when the class variances differ.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.bayes import BayesianLSSVC
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(2, 1, (20, 2))])
    >>> y = np.repeat([0, 1], 20)
    >>> clf = BayesianLSSVC().fit(X, y)                  # sigma by level 3, gamma by level 2
    >>> bool(clf.score(X, y) > 0.9), clf.at_boundary_
    (True, False)
    >>> P = clf.predict_proba(X)
    >>> bool(np.allclose(P.sum(axis=1), 1.0)), bool(np.all(clf.predict(X) == clf.classes_[P.argmax(axis=1)]))
    (True, True)
    """

    _hyperparameter_rules = {
        "kernel": options("rbf", "linear"),
        "sigma": Rule("None or a finite float > 0 with a finite 1/sigma", lambda v: v is None or _is_width(v)),
        "sigma_range": Rule("None or " + _RANGE, lambda v: v is None or _is_range(v)),
        "gamma_range": Rule(_RANGE, _is_range),
    }

    def __init__(self, kernel="rbf", sigma=None, *, sigma_range=None, gamma_range=GAMMA_RANGE, class_prior=None):
        self.kernel = kernel
        self.sigma = sigma
        self.sigma_range = sigma_range
        self.gamma_range = gamma_range
        self.class_prior = class_prior

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = False
        return tags

    def fit(self, X, y):
        """Levels 1-3 on ``(X, y)``; any two or more class labels (one-vs-rest beyond two).

        Returns
        -------
        self
        """
        self._check_hyperparameters()
        grng = _check_range(self.gamma_range, "gamma_range")
        X, y = validate_data(self, X, y)
        _check_spread(X)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        n_classes = self.classes_.shape[0]
        if n_classes < 2:
            raise ValueError(f"BayesianLSSVC needs at least two classes in y; got one class only: {self.classes_.tolist()}")
        if X.shape[0] < 3:
            raise ValueError(f"BayesianLSSVC needs at least 3 samples (the level-3 evidence needs N > gamma_eff > 1); "
                             f"got n_samples = {X.shape[0]}")
        prior = self._priors(y)
        codes = [self.classes_[1]] if n_classes == 2 else list(self.classes_)
        Ys = np.column_stack([np.where(y == cl, 1.0, -1.0) for cl in codes])
        self._prior_pos = np.array([prior[1]] if n_classes == 2 else prior)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BoundaryWarning)
            sigma, l2 = self._infer(X, Ys, grng)
        for w in caught:  # re-issue from here, each message once
            warnings.warn(w.message, w.category, stacklevel=2)
        self._level2 = l2
        self.X_fit_ = X
        self._Ys = Ys
        self.sigma_ = sigma
        self._K = self._kernel(X, sigma=sigma)
        self._store(l2)
        return self

    def _store(self, l2):
        """The fitted attributes from the level-2 results (scalars for one model, arrays one-vs-rest)."""
        one = len(l2) == 1

        def pick(values):
            return values[0] if one else np.array(values)

        self.gamma_ = pick([r.gamma for r in l2])
        self.mu_ = pick([r.mu for r in l2])
        self.zeta_ = pick([r.zeta for r in l2])
        self.gamma_eff_ = pick([r.gamma_eff for r in l2])
        self.log_evidence_ = pick([r.log_evidence for r in l2])
        self.level3_log_evidence_ = pick([level3_log_evidence(r) for r in l2])
        self.alpha_ = l2[0].level1.alpha if one else np.array([r.level1.alpha for r in l2])
        self.intercept_ = pick([r.level1.b for r in l2])
        self.at_boundary_ = bool(any(r.at_boundary for r in l2) or
                                 (isinstance(self.result_, Level3Result) and self.result_.at_boundary))

    def _priors(self, y):
        n_classes = self.classes_.shape[0]
        if self.class_prior is None:
            return np.array([np.mean(y == c) for c in self.classes_])
        try:
            p = np.asarray(self.class_prior, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"class_prior must be None or {n_classes} probabilities; got {self.class_prior!r}") from None
        if p.shape[0] != n_classes or not np.all(np.isfinite(p)) or np.any(p <= 0) or abs(p.sum() - 1.0) > 1e-8:
            raise ValueError(f"class_prior must be None or {n_classes} probabilities > 0 summing to 1 "
                             f"(one per class in {self.classes_.tolist()}); got {self.class_prior!r}")
        return p

    def _test_kernels(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._kernel(X, self.X_fit_, sigma=self.sigma_), self._kernel_diag(X, sigma=self.sigma_)

    def latent_function(self, X):
        """The LS-SVM output ``f(x) = sum_i alpha_i k(x_i, x) + b`` at the level-2 ``gamma`` (the posterior mean of
        the latent variable; (n,) for two classes, (n, n_classes) one-vs-rest)."""
        K_xt, _ = self._test_kernels(X)
        F = np.column_stack([kernel_expansion(K_xt, r.level1.alpha, r.level1.b) for r in self._level2])
        return F[:, 0] if F.shape[1] == 1 else F

    def _log_odds(self, X):
        K_xt, k_xx = self._test_kernels(X)
        return np.column_stack([moderated_log_odds(r.level1, self._Ys[:, j], self._K, K_xt, k_xx, self._prior_pos[j])
                                for j, r in enumerate(self._level2)])

    def _log_proba(self, X):
        L = self._log_odds(X)
        if L.shape[1] == 1:
            return np.column_stack([log_expit(-L[:, 0]), log_expit(L[:, 0])])
        logp = log_expit(L)  # one-vs-rest P_k(x), normalised over k
        return logp - np.logaddexp.reduce(logp, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Moderated class probabilities (:func:`moderated_log_odds`), columns in the order of ``classes_``;
        one-vs-rest probabilities ``P_k(x)`` are normalised to sum to 1 (computed in log space)."""
        return np.exp(self._log_proba(X))

    def predict(self, X):
        """The most probable class under :meth:`predict_proba` (the Bayes decision)."""
        P = self.predict_proba(X)  # checks that the model is fitted
        return self.classes_[np.argmax(P, axis=1)]


class BayesianLSSVR(_BayesKernel, HyperparameterMixin, RegressorMixin, BaseEstimator):
    """Bayesian LS-SVM regression with error bars (002 "Bayesian interpretation"; Van Gestel et al. 2002; LS-SVMlab's
    ``bay_lssvm`` and ``bay_errorbar``): ``gamma`` by level 2, ``sigma`` by level 3 (when ``sigma=None``), and the
    posterior standard deviation of the latent output.

    The model of 002: ``y_i = w'phi(x_i) + b + e_i``, prior ``w ~ N(0, I/mu)``, a flat prior on ``b``, noise
    ``e_i ~ N(0, 1/zeta)``; the posterior mean of ``f(x) = w'phi(x) + b`` is the LS-SVM with ``gamma = zeta/mu``
    (level 1), and its posterior variance (``w`` and ``b`` integrated out; :meth:`Level1Result.latent_variance`) is

        Var f(x) = d'Q_w d + 1/(N zeta),   d = phi(x) - mean_j phi(x_j),

    ``Q_w`` the posterior covariance of ``w`` (``docs/bayes.md`` §3). This is the posterior variance of a Gaussian
    process with covariance ``k(x, z)/mu``, noise variance ``1/zeta`` and a flat prior on a constant mean (the
    test computes it that way, independently).

    Parameters
    ----------
    kernel, sigma, sigma_range, gamma_range
        As :class:`BayesianLSSVC`.

    Attributes
    ----------
    gamma_, mu_, zeta_ : float
        ``gamma = zeta/mu``, ``mu`` and ``zeta`` of 002 at the level-2 maximum (``1/zeta_`` is the noise variance,
        ``1/mu_`` the prior variance of ``w``).
    sigma_ : float or None
        The RBF width used (None for the linear kernel).
    gamma_eff_, log_evidence_, level3_log_evidence_, at_boundary_, result_, X_fit_
        As :class:`BayesianLSSVC`.
    alpha_ : ndarray of shape (n_samples,)
        002's support values: ``f(x) = sum_i alpha_i k(x_i, x) + b``.
    intercept_ : float
        b.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.bayes import BayesianLSSVR
    >>> rng = np.random.default_rng(0)
    >>> X = np.sort(rng.uniform(-3, 3, 60))[:, None]
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> reg = BayesianLSSVR().fit(X, y)
    >>> mean, std = reg.predict(np.array([[0.0], [6.0]]), return_std=True)
    >>> bool(std[0] < std[1])                  # far from the data, the band widens
    True
    >>> bool(0.05 < 1 / np.sqrt(reg.zeta_) < 0.2)  # the noise level found by level 2
    True
    """

    _hyperparameter_rules = BayesianLSSVC._hyperparameter_rules

    def __init__(self, kernel="rbf", sigma=None, *, sigma_range=None, gamma_range=GAMMA_RANGE):
        self.kernel = kernel
        self.sigma = sigma
        self.sigma_range = sigma_range
        self.gamma_range = gamma_range

    def fit(self, X, y):
        """Levels 1-3 on ``(X, y)``, ``y`` real; returns self."""
        self._check_hyperparameters()
        grng = _check_range(self.gamma_range, "gamma_range")
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        _check_spread(X)
        if X.shape[0] < 3:
            raise ValueError(f"BayesianLSSVR needs at least 3 samples (the level-3 evidence needs N > gamma_eff > 1); "
                             f"got n_samples = {X.shape[0]}")
        y = np.asarray(y, dtype=np.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BoundaryWarning)
            sigma, l2 = self._infer(X, y[:, None], grng)
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        r = l2[0]
        self._level1 = r.level1
        self.X_fit_, self.sigma_ = X, sigma
        self._K = self._kernel(X, sigma=sigma)
        self.gamma_, self.mu_, self.zeta_ = r.gamma, r.mu, r.zeta
        self.gamma_eff_, self.log_evidence_ = r.gamma_eff, r.log_evidence
        self.level3_log_evidence_ = level3_log_evidence(r)
        self.alpha_, self.intercept_ = r.level1.alpha, r.level1.b
        self.at_boundary_ = bool(r.at_boundary or (isinstance(self.result_, Level3Result) and self.result_.at_boundary))
        return self

    def predict(self, X, return_std=False):
        """The posterior mean ``f(x) = sum_i alpha_i k(x_i, x) + b``; with ``return_std`` also the posterior standard
        deviation of the latent ``f(x)`` (not of a new observation: add ``1/zeta_`` to the variance for that)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        K_xt = self._kernel(X, self.X_fit_, sigma=self.sigma_)
        mean = kernel_expansion(K_xt, self.alpha_, self.intercept_)
        if not return_std:
            return mean
        var = self._level1.latent_variance(K_xt, self._kernel_diag(X, sigma=self.sigma_), self._K)
        return mean, np.sqrt(var)
