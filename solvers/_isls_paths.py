r"""The solve paths of ISLS's weighted system (N): each returns its solution with its certificate.

One iteration of :func:`svmref.solvers.isls.isls_svm` solves, on the active set ``S`` (``a = |alpha^t|_S``,
``A_c = K_c[:, S] diag(a)``, ``c = C / kappa``; module docstring of :mod:`svmref.solvers.isls`)::

    M v = g,        M = I + c A_c'A_c,        g = c A_c' y_c.                                   (N)

``M`` has every eigenvalue >= 1, so ``||v - v_computed|| <= ||r||`` for the residual ``r = g - M v``: the residual,
computed in float64 with the exact K, certifies the iterate (:class:`Certificate`, ``kind``):

* ``"residual"``: ``||r|| <= _CERTIFY max(1, ||v||)``;
* ``"backward error"``: refinement has reached float64's floor, a normwise backward error
  ``||r|| / (||M|| ||v|| + ||g||) <= _BERR`` (Rigal & Gaches 1967; ``||M||`` a lower estimate, so the ratio is not
  understated), and the forward bound that follows, the residual's own rounding ``_RESID_ROUND u (2 ||M|| ||v|| +
  ||g||)`` included, is at most ``_FORWARD max(1, ||v||)`` (:func:`certified`);
* ``"augmented"``: the residual of the augmented (least-squares) form of (N), with the fit's residual ``xi`` carried
  as a second unknown (:func:`_augmented_refine`): ``||v - v*|| <= ||s1|| + sqrt(c) ||t|| / 2`` plus their rounding,
  which is ``u sqrt(||M||)`` times the data instead of ``u ||M||``, at most ``_FORWARD max(1, ||v||)``; tried first by
  the factorisation paths (``"gram"``, ``"lowrank"``, ``"cholesky32"``, ``"cholesky"``) wherever that rounding
  allows it (:func:`_augmented_enough`: ``||M||`` up to ~1e9 to 1e10);
* ``"double-double"``: where even that rounding is too large, the residual of ``M v = g`` is computed in
  double-double (:func:`svmref.solvers._dd.dd_residual`) and the correction certifies (:func:`_dd_refine`);
* ``"qr"``: Householder QR of the least-squares form, the last resort (backward stable; no certificate computed).

Paths (:data:`PATHS`; :func:`solve_active` takes the first of :data:`SMALL_PATHS` or :data:`LARGE_PATHS` whose
iterate is certified):

* ``"gram"`` (``m <= QR_MAX_M``): the Cholesky factor of ``M`` formed from ``A_c`` (BLAS ``syrk``, O(N m^2)),
  iterative refinement against the same ``A_c``;
* ``"lowrank"``: K numerically of low rank (pivoted Cholesky), a Woodbury preconditioner of iterative refinement;
* ``"pcg"``: iterative refinement in float64 around conjugate gradients in float32, preconditioned by a Nystrom
  approximation of ``K_c'K_c`` from ``NYSTROM_RANK`` sampled columns (no O(N^3) work), while
  ``cond(M) u_32 <= 0.05``;
* ``"cholesky32"``: the float32 Cholesky factor of ``M`` refined in float64 (same precision gate as ``"pcg"``), where
  the CG did not certify; ``"cholesky"``: the float64 factor (from ``K_c'K_c``, one ``syrk`` per precision, reused by
  every later set) refined in float64, or with double-double residuals where ``||M||`` is too large for the float64
  residual;
* ``"qr"``: ``min || [sqrt(c) A_c; I] v - [sqrt(c) y_c; 0] ||`` by Householder QR (never squares A's condition).

What each path is for, measured (``benchmarks/isls.py``; docs/isls_notes.md §2 and §6): ``"gram"`` solves the small
sets everywhere; ``"pcg"`` the large sets of RBF kernels at moderate C (the benchmark's blobs at C = 1); ``"lowrank"`` those of
the 2-D data and of linear kernels; ``"cholesky"`` the large sets at C >= 10 to 100, where the float32 CG cannot work;
``"qr"`` the small sets whose condition is beyond the Gram path's precision (C = 100); ``"cholesky32"`` the large sets
the CG did not certify (``sparse_ls_svm``, 004's weights verbatim, on 1000 regression targets at C = 100): without it
those iterates come from ``"cholesky"`` and move by about 1e-12.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import scipy.linalg
from numba import njit
from scipy.linalg import blas, lapack

from ._dd import dd_residual
from .linear import sym_matmat

__all__ = ["FitData", "Certificate", "Solution", "PATHS", "SMALL_PATHS", "LARGE_PATHS", "QR_MAX_M", "NYSTROM_RANK",
           "solve_active", "solve_qr", "certified"]

_U = np.finfo(np.float64).eps / 2.0       # unit roundoff
_U32 = float(np.finfo(np.float32).eps) / 2.0
#: Active sets up to this size are solved directly (O(N m^2)): Cholesky of the exact Gram matrix, refined and
#: certified, else QR; larger ones by the mixed-precision preconditioned CG (or a factorisation).
QR_MAX_M = 256
#: An iterate is accepted when ||residual of (N)|| <= this x max(1, ||v||) (the residual bounds the error: M >= I) ...
_CERTIFY = 1e-11
#: ... or when the refinement has reached float64's floor, a normwise backward error ``||r|| / (||M|| ||v|| + ||g||)``
#: (Rigal-Gaches 1967; LAPACK's xPORFS tests the componentwise one) of at most this, AND the forward-error bound that
#: follows, ``||v - v*|| <= ||M^-1|| ||r_true|| <= ||r|| + _RESID_ROUND u (||M|| ||v|| + ||g||)`` (``M >= I``; the
#: second term models the rounding of the float64 residual itself, ``||M||`` taken as twice its lower estimate), is at
#: most ``_FORWARD max(1, ||v||)``.  Beyond that (``||M||`` above ~1e5 to 1e6: C >= 10 on the benchmark's blobs) the
#: residual is computed in double-double and the correction certifies (:func:`_dd_refine`).
_BERR = 32.0 * _U
_RESID_ROUND = 8.0
_FORWARD = 1e-9
#: Columns of K_c'K_c sampled for the Nystrom preconditioner of the large systems (once per fit).
NYSTROM_RANK = 128
#: Relative residual asked of each float32 inner solve of the mixed-precision CG.
_INNER_TOL = 1e-4
#: The paths tried, in order, for an active set of size m <= QR_MAX_M and for a larger one (names of :data:`PATHS`).
SMALL_PATHS = ("gram", "qr")
LARGE_PATHS = ("lowrank", "pcg", "cholesky32", "cholesky", "qr")


# --------------------------------------------------------------------------------------------------
# what every iteration of one fit reuses
# --------------------------------------------------------------------------------------------------
class FitData:
    """What every iteration of one fit reuses: K, its column means and squared column norms, centred y, K y_c,
    and the factors formed once per fit (the Gram matrix, the low-rank and Nystrom factors, the float32 K)."""

    def __init__(self, K, y):
        self.K = K
        self.N = K.shape[0]
        self.y = y
        self.ybar = float(np.mean(y))
        self.yc = y - self.ybar
        both = sym_matmat(K, np.c_[np.ones(self.N), self.yc])   # K 1 and K y_c: one pass over half of K (symv)
        self.kmean = both[:, 0] / self.N                   # column means (K symmetric: row means too)
        self.Kyc = both[:, 1]                              # K_c' y_c = K' y_c  (y_c is centred)
        self.colsq = np.einsum("ij,ij->j", K, K)           # ||K_:i||^2, for the drop rule
        self.gram = {}                                     # dtype -> K_c'K_c, formed once when an m > N/2 set needs it
        self.lowrank = None                                # (G, Lp) for a K of low numerical rank, False if not
        self.K32 = None                                    # float32 copy of K: the inner operator of the mixed CG
        self.F0 = None                                     # K_c'K_c ~ F0 F0' (Nystrom), formed once per fit
        self.last_mnorm = None                             # (a, ||M|| estimate) of the last large iteration
        self.last_xinorm = None                            # ||xi|| of the last certified iterate
        self.ynorm, self.ycnorm = float(np.linalg.norm(y)), float(np.linalg.norm(self.yc))

    def k32(self):
        if self.K32 is None:
            self.K32 = self.K.astype(np.float32)
            self.kmean32 = self.kmean.astype(np.float32)
        return self.K32

    def fit_c(self, S, z):
        """``K_c[:, S] z`` (centred fitted values of the coefficients ``z`` on ``S``), one pass over K in float64 (rows
        ``K[S]`` for a small set: K is symmetric, and rows are gathered four times faster than columns)."""
        u = self.K[S].T @ z if 4 * S.shape[0] <= self.N else sym_matmat(self.K, _scatter(z, S, self.N))
        u -= float(self.kmean[S] @ z)
        return u

    def kct_c(self, S, u):
        """``(K_c' u)_S = (K u)_S`` for a centred ``u``, one pass over K in float64."""
        return self.K[S] @ u if 4 * S.shape[0] <= self.N else sym_matmat(self.K, u)[S]

    def kc_cols(self, S):
        """``K_c[:, S] = K[:, S] - 1 kmean_S'`` (a new N x m array)."""
        B = self.K[:, S]
        B -= self.kmean[S][None, :]
        return B

    def k_rows(self, S):
        """The rows ``K[S]`` (m x N, C order; ``K[S]' = K[:, S]``, K symmetric) that the residual passes read."""
        return self.K[S] if S.shape[0] < self.N else np.ascontiguousarray(self.K)

    def apply_AcT_Ac(self, S, a, v):
        """``A_c'A_c v`` with ``A_c = K_c[:, S] diag(a)``, by two passes over K (no N x m copy)."""
        return a * self.kct_c(S, self.fit_c(S, a * v))


def _scatter(z, S, N):
    out = np.zeros(N)
    out[S] = z
    return out


# --------------------------------------------------------------------------------------------------
# the certificate
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Certificate:
    """How one path's iterate of (N) was judged.

    Attributes
    ----------
    path : str
        The path's name (:data:`PATHS`).
    kind : str or None
        ``"residual"``, ``"backward error"``, ``"augmented"``, ``"double-double"`` or ``"qr"`` (module docstring);
        ``None`` when the path could not certify its iterate (the next path is tried).
    residual : float
        ``||r|| / max(1, ||v||)`` of the float64 residual of the returned ``v`` (augmented: its bound on the error over
        ``max(1, ||v||)``; double-double refinement: its estimate ``2 ||d|| / max(1, ||v||)`` of the error from the last
        correction ``d``); ``inf`` for QR.
    backward_error : float
        ``||r|| / (||M|| ||v|| + ||g||)`` with the lower estimate of ``||M||`` the test used, to compare with
        ``_BERR``; ``nan`` where the residual alone decided (or QR).
    steps : int
        Refinement steps (corrections of ``v``); the mixed-precision CG: its outer float64 steps.
    inner_steps : int
        The mixed-precision CG's float32 steps, all outer steps together (0 for the other paths).
    """

    path: str
    kind: str | None
    residual: float = float("inf")
    backward_error: float = float("nan")
    steps: int = 0
    inner_steps: int = 0

    @property
    def accepted(self) -> bool:
        """Whether the iterate is taken (certified, or QR's, the last resort)."""
        return self.kind is not None


@dataclass(frozen=True)
class Solution:
    """A path's answer to (N): ``v`` (``alpha_S = a v``), ``u = A_c v = K_c[:, S] alpha_S`` when the path computed it
    (else None), its :class:`Certificate`, and the certificates of the paths tried before on the same system."""

    v: np.ndarray
    u: np.ndarray | None
    certificate: Certificate
    tried: tuple = ()


def certified(res, vnorm, mnorm, gnorm):
    """The certificate of an iterate ``v`` of (N) from its float64 residual ``r`` (``res = ||r|| / max(1, ||v||)``):
    ``||r|| <= _CERTIFY max(1, ||v||)`` (then ``||v - v*|| <= ||r||``, as ``M >= I``), or the normwise backward error
    ``||r|| / (||M|| ||v|| + ||g||) <= _BERR`` (``mnorm`` a lower estimate of ``||M||``, so it is not understated) and
    ``||r|| + _floor <= _FORWARD max(1, ||v||)``: the forward error, the residual's own rounding included (module
    constants)."""
    if not np.isfinite(res):
        return False
    if res <= _CERTIFY:
        return True
    rn = res * max(1.0, vnorm)
    return rn <= _BERR * (mnorm * vnorm + gnorm) and rn + _floor(vnorm, mnorm, gnorm) <= _FORWARD * max(1.0, vnorm)


def _floor(vnorm, mnorm, gnorm):
    """The modelled rounding error of the float64 residual of (N): ``_RESID_ROUND u (2 mnorm ||v|| + ||g||)``."""
    return _RESID_ROUND * _U * (2.0 * mnorm * vnorm + gnorm)


def _berr_enough(v, mnorm, gnorm):
    """Whether the float64 residual can certify ``v`` at all (:func:`certified`): its rounding below half the bound."""
    vnorm = float(np.linalg.norm(v))
    return _floor(vnorm, mnorm, gnorm) <= 0.5 * _FORWARD * max(1.0, vnorm)


def _backward_error(res, vnorm, mnorm, gnorm):
    """``||r|| / (||M|| ||v|| + ||g||)`` for the :class:`Certificate` (a report only: never raises)."""
    with np.errstate(all="ignore"):
        return float(res * max(1.0, vnorm) / (mnorm * vnorm + gnorm))


# --------------------------------------------------------------------------------------------------
# one system (N)
# --------------------------------------------------------------------------------------------------
class WeightedSystem:
    """System (N) on one active set: ``S``, ``a``, ``c`` and what the paths share about it (``g``, the power
    estimate of ``||M||``, computed at most once)."""

    def __init__(self, data: FitData, S, a, c):
        self.data, self.S, self.a, self.c = data, S, a, c
        self.m = S.shape[0]
        self._power = None

    @cached_property
    def g(self):
        """``c A_c' y_c``, the right-hand side of (N)."""
        return self.c * self.a * self.data.Kyc[self.S]

    @cached_property
    def gnorm(self) -> float:
        return float(np.linalg.norm(self.g))

    @cached_property
    def fro(self) -> float:
        """``f = ||K[:, S] diag(a)||_F`` from the column norms (no pass over K): ``||A_c|| <= f``, and ``1 + c f^2``
        bounds ``||M||`` from above."""
        return float(np.sqrt(self.a * self.a @ self.data.colsq[self.S]))

    def power_estimate(self) -> float:
        """``||M||`` by power steps through the float32 operator, padded by 10% (:func:`_lam_max`); once per system,
        and remembered for the next iteration's choice of precision."""
        if self._power is None:
            self._power = _lam_max(self.data, self.S, self.a, self.c)
            self.remember(self._power / 1.1)
        return self._power

    def remember(self, mnorm):
        """Keep ``(a, ||M||)`` of a large set: the next iteration bounds its own ``||M||`` from it (:func:`_precision`)."""
        if self.m > QR_MAX_M and mnorm > 0.0:
            full = np.zeros(self.data.N)
            full[self.S] = self.a
            self.data.last_mnorm = (full, mnorm)

    def judge(self, path, v, res, mnorm=None, *, dd=False, steps=0, inner_steps=0) -> Certificate:
        """The certificate of a path's ``v``: by its residual, else by the backward error with ``mnorm`` (the path's
        lower estimate of ``||M||``; ``None``: the power estimate, divided back by its padding)."""
        kind, berr = None, float("nan")
        if res <= _CERTIFY:
            kind = "residual"
        else:
            mnorm = self.power_estimate() / 1.1 if mnorm is None else mnorm
            vnorm = float(np.linalg.norm(v))
            if certified(res, vnorm, mnorm, self.gnorm):
                kind = "backward error"
            if np.isfinite(res):
                berr = _backward_error(res, vnorm, mnorm, self.gnorm)
        if kind is not None and dd:
            kind = "double-double"
        return Certificate(path, kind, float(res), berr, steps, inner_steps)

    def certify_augmented(self, path, v, est, u, steps, mnorm=None) -> Solution:
        """A path's :class:`Solution` certified by :func:`_augmented_refine` (``est <= _FORWARD``).  ``||M||`` for the
        next iteration's choice of precision: the path's estimate, else the bound ``1 + c ||K[:, S] diag(a)||_F^2``
        (from above: it can only keep a float32 path out)."""
        if mnorm is None:
            mnorm = 1.0 + self.c * self.fro ** 2
        self.remember(mnorm)
        return Solution(v, u, Certificate(path, "augmented", float(est), float("nan"), steps))

    def conclude(self, path, v, res, u, mnorm, **how) -> Solution:
        """A path's :class:`Solution`: ``mnorm`` (the path's lower estimate of ``||M||``) remembered, then judged."""
        if mnorm:
            self.remember(mnorm)
        return Solution(v, u, self.judge(path, v, res, mnorm, **how))


# --------------------------------------------------------------------------------------------------
# the policy
# --------------------------------------------------------------------------------------------------
def solve_active(data: FitData, S, a, c, cond) -> Solution:
    """(N) on the active set ``S``: the first path of :data:`SMALL_PATHS` (``m <= QR_MAX_M``) or :data:`LARGE_PATHS`
    whose iterate is certified, QR when none is.  ``cond`` bounds ``sqrt(cond(M))``; a path whose working precision
    cannot reach the certificate at the condition bound :func:`_precision` gives is skipped."""
    system = WeightedSystem(data, S, a, c)
    large = system.m > QR_MAX_M
    kap = _precision(system, cond * cond) if large else cond * cond
    tried = []
    for name in LARGE_PATHS if large else SMALL_PATHS:
        path = PATHS[name]
        if not path.usable(kap):
            continue
        sol = path.solve(system)
        if sol is None:                                   # a factorisation failed: nothing to judge
            continue
        if sol.certificate.accepted:
            if sol.u is not None:                         # the fit's residual, for the next augmented pre-check
                data.last_xinorm = float(np.linalg.norm(data.yc - sol.u))
            return replace(sol, tried=tuple(tried))
        tried.append(sol.certificate)
    return replace(PATHS["qr"].solve(system), tried=tuple(tried))


def _precision(system: WeightedSystem, kap):
    """The bound on ``cond(M) = ||M||`` (``M >= I``) the paths are gated by, for a large set.  ``kap = cond^2`` can be
    ``m`` times too big; the float32 path needs ``cond(M) u_32 <= 0.05``.  From the last large iteration's estimate:
    ``c D'G D' = E (c D G D) E`` with ``E = diag(a' / a)``, so ``||M'|| - 1 <= max(E)^2 (||M|| - 1)``.  Power steps
    (24 passes over the float32 K) only when that bound is not decisive: below the limit, or above it by less than a
    factor of 4."""
    if kap * _U32 <= 0.05:
        return kap
    prev, S, a = system.data.last_mnorm, system.S, system.a
    if prev is not None and np.all(prev[0][S] > 0.0):
        e2 = float(np.max((a / prev[0][S]) ** 2))
        bound = 1.0 + e2 * max(prev[1] - 1.0, 0.0)
        if bound * _U32 <= 0.05:
            return min(kap, bound)
        if prev[1] * _U32 > 0.2:
            return min(kap, prev[1])
    return min(kap, system.power_estimate())


# --------------------------------------------------------------------------------------------------
# the paths
# --------------------------------------------------------------------------------------------------
class _Path(ABC):
    """A way to solve (N): ``usable(kap)`` says whether its working precision can reach the certificate at the
    condition bound ``kap``; ``solve(system)`` returns a :class:`Solution` (judged), or None when it cannot start."""

    name = ""

    def usable(self, kap) -> bool:
        return True

    @abstractmethod
    def solve(self, system: WeightedSystem) -> Solution | None:
        """Each path's own solve: the iterate with its :class:`Certificate`, or None when the path cannot start."""


class QRPath(_Path):
    """``"qr"``: backward-stable Householder QR of the least-squares form (:func:`solve_qr`), the last resort."""

    name = "qr"

    def solve(self, system):
        v = solve_qr(system.data, system.S, system.a, system.c)
        return Solution(v, None, Certificate("qr", "qr"))


def solve_qr(D: FitData, S, a, c):
    """(N) as the least-squares problem ``min ||[sqrt(c) A_c; I] v - [sqrt(c) y_c; 0]||`` by Householder QR.

    One ``geqrf`` of the (N + m) x (m + 1) matrix ``[[sqrt(c) A_c, sqrt(c) y_c]; [I, 0]]``: the last column of
    ``R`` holds ``Q'rhs``, so ``v = R_11^-1 r_12`` (backward stable; the condition number is
    ``sqrt(kappa(M))``, not ``kappa(M)``).
    """
    N, m = D.N, S.shape[0]
    sc = np.sqrt(c)
    W = np.zeros((N + m, m + 1), order="F")
    W[:N, :m] = D.kc_cols(S) * (sc * a)[None, :]
    W[:N, m] = sc * D.yc
    W[N + np.arange(m), np.arange(m)] = 1.0
    R = scipy.linalg.qr(W, mode="r", overwrite_a=True, check_finite=False)[0]
    v = scipy.linalg.solve_triangular(R[:m, :m], R[:m, m], check_finite=False)
    return v


class GramPath(_Path):
    """``"gram"``: a small active set.  ``M = I + c A_c'A_c`` from ``A_c = K_c[:, S] diag(a)`` (N x m, float64, BLAS
    ``syrk``: O(N m^2)), its Cholesky factor, and iterative refinement: on the augmented system
    (:func:`_augmented_refine`) where its rounding can certify, else against the same ``A_c`` (exact in float64),
    kept while the residual halves; when ``||M||`` (from the factor) is too large for the backward-error certificate,
    refinement with double-double residuals instead (:func:`_dd_refine`).  Needs ``cond(M) u <= 1e-6``."""

    name = "gram"

    def usable(self, kap):
        return kap * _U <= 1e-6

    def solve(self, system):
        D, S, a, c = system.data, system.S, system.a, system.c
        B = D.kc_cols(S)
        B *= a[None, :]                                       # A_c
        M = blas.dsyrk(c, B.T, trans=0, lower=0)              # c A_c'A_c, upper triangle
        M[np.diag_indices_from(M)] += 1.0
        U, info = lapack.dpotrf(M, lower=0, overwrite_a=1, clean=0)
        if info != 0:
            return None
        g = system.g
        v = lapack.dpotrs(U, g, lower=0)[0]
        if _augmented_enough(system, v):
            va, est, u, steps = _augmented_refine(system, v, lambda r: lapack.dpotrs(U, r, lower=0)[0], B=B)
            if est <= _FORWARD:
                return system.certify_augmented(self.name, va, est, u, steps)
        mnorm = _norm_from_factor(U, False)
        if not _berr_enough(v, mnorm, system.gnorm):            # only a double-double residual can certify
            v, res, u, steps = _dd_refine(system, v, lambda r: lapack.dpotrs(U, r, lower=0)[0])
            return system.conclude(self.name, v, res, u, mnorm, dd=True, steps=steps)

        def resid(v):
            u = B @ v
            return g - v - c * (u @ B), u

        r, u = resid(v)
        res = float(np.linalg.norm(r)) / max(1.0, float(np.linalg.norm(v)))
        steps = 0
        for _ in range(4):
            if res <= _CERTIFY:
                break
            v_new = v + lapack.dpotrs(U, r, lower=0)[0]
            r_new, u_new = resid(v_new)
            res_new = float(np.linalg.norm(r_new)) / max(1.0, float(np.linalg.norm(v_new)))
            if not res_new < 0.5 * res:
                break
            v, r, u, res = v_new, r_new, u_new, res_new
            steps += 1
        return system.conclude(self.name, v, res, u, mnorm, steps=steps)


def _norm_from_factor(U, lower, steps=12):
    """``||M||`` from below, ``M = U'U`` (``lower=False``) or ``L L'`` (``lower=True``), by ``steps`` power steps through
    the factor (two triangular products each, O(m^2)): the ``||M||`` of the backward-error certificate, without a pass
    over K.  A float32 factor's estimate is lowered by 1% to stay below ``||M||`` despite its rounding."""
    trmv = blas.strmv if U.dtype == np.float32 else blas.dtrmv
    z = np.full(U.shape[0], 1.0 / np.sqrt(U.shape[0]), dtype=U.dtype)
    lam = 1.0
    for _ in range(steps):
        if lower:
            w = trmv(U, trmv(U, z, lower=1, trans=1), lower=1)
        else:
            w = trmv(U, trmv(U, z, lower=0), lower=0, trans=1)
        nw = float(np.linalg.norm(w))
        if not (nw > 0.0 and np.isfinite(nw)):
            break
        lam, z = nw, w / w.dtype.type(nw)
    return lam * (0.99 if U.dtype == np.float32 else 1.0)


class CholeskyPath(_Path):
    """``"cholesky"`` (float64) and ``"cholesky32"`` (float32): the Cholesky factor of ``M = I + c A_c'A_c`` in that
    precision (:func:`_gram_M`) and iterative refinement in float64.

    Refinement on the augmented system (:func:`_augmented_refine`: residuals from the exact operator, passes over
    the rows ``K[S]``, the fit's residual carried), wherever its rounding can certify; a float32 factor is a
    preconditioner whose error (``cond(M) u_32``, at most 0.05 by its gate) the refinement removes.  Otherwise
    ``v <- v + M^-1 (c A_c'y_c - v - c A_c'(A_c v))``, stopped when the iterate is certified (:func:`certified`,
    ``||M||`` from the factor) or the residual stops halving, or, where that float64 residual cannot certify,
    refinement with double-double residuals (:func:`_dd_refine`).
    """

    def __init__(self, dtype=np.float64):
        self.dtype = dtype
        self.name = "cholesky32" if dtype == np.float32 else "cholesky"
        self.steps = 12 if dtype == np.float32 else 4

    def usable(self, kap):
        return self.dtype != np.float32 or kap * _U32 <= 0.05

    def solve(self, system):
        D, S, a, c, dtype = system.data, system.S, system.a, system.c, self.dtype
        M, lower = _gram_M(D, S, a, c, dtype)
        potrf, potrs = (lapack.spotrf, lapack.spotrs) if dtype == np.float32 else (lapack.dpotrf, lapack.dpotrs)
        U, info = potrf(M, lower=lower, overwrite_a=1, clean=0)
        if info != 0:
            return None
        KS = D.k_rows(S)
        km = D.kmean[S]

        def apply(v):                                      # (c A_c'(A_c v), A_c v): exact float64, two passes over K[S]
            z = a * v
            u = KS.T @ z
            u -= float(km @ z)
            return c * a * (KS @ u), u

        def solve(r):                                      # M^-1 r, the right-hand side at unit scale
            sc = float(np.max(np.abs(r))) or 1.0
            return potrs(U, (r / sc).astype(dtype), lower=lower)[0].astype(np.float64) * sc

        g, gnorm = system.g, system.gnorm
        v = solve(g)
        if _augmented_enough(system, v):
            va, est, u, steps = _augmented_refine(system, v, solve, self.steps, KS)
            if est <= _FORWARD:
                return system.certify_augmented(self.name, va, est, u, steps)
        mnorm = _norm_from_factor(U, lower)
        if not _berr_enough(v, mnorm, gnorm):                   # only a double-double residual can certify
            v, res, u, steps = _dd_refine(system, v, solve, self.steps, KS)
            return system.conclude(self.name, v, res, u, mnorm, dd=True, steps=steps)
        res, prev, u, steps = np.inf, np.inf, None, 0
        for _ in range(self.steps):
            w, u = apply(v)
            r = g - v - w
            nv = float(np.linalg.norm(v))
            res = float(np.linalg.norm(r)) / max(1.0, nv)
            if certified(res, nv, mnorm, gnorm) or not np.isfinite(res) or res > 0.5 * prev:
                break
            prev = res
            v, u = v + solve(r), None
            steps += 1
        return system.conclude(self.name, v, res, u, mnorm, steps=steps)


@njit(cache=True)
def _gather_scaled(Gt, S, a, c):  # pragma: no cover - compiled
    """``Mt`` (m x m, C order) with ``Mt[j, i] = c a_i a_j G[S_i, S_j] + [i == j]`` for ``i <= j`` (the rest left
    unset): the upper triangle of ``M = I + c (D G D)_SS`` (system (N): 004 eq. (4) rewritten) in the Fortran array
    ``Mt.T``, one pass.  ``Gt = G.T`` for
    the Fortran ``G`` whose upper triangle ``syrk`` filled; ``S`` sorted, so ``S_i <= S_j`` reads that triangle."""
    m = S.shape[0]
    Mt = np.empty((m, m), dtype=Gt.dtype)
    for j in range(m):
        row = Gt[S[j]]
        caj = c * a[j]
        for i in range(j + 1):
            Mt[j, i] = caj * a[i] * row[S[i]]
        Mt[j, j] += 1.0
    return Mt


def _gram_M(D: FitData, S, a, c, dtype):
    """``M = I + c A_c'A_c`` in ``dtype`` as a Fortran array and the triangle LAPACK must read: ``(M, lower)``.

    While ``m > N/2`` the Gram block comes from ``K_c'K_c`` (one ``syrk`` per precision, kept in ``D``), gathered,
    scaled and shifted in one compiled pass over the upper triangle (:func:`_gather_scaled`; ``S`` is sorted, so that
    triangle of ``(K_c'K_c)_SS`` is filled).  Otherwise ``syrk`` on ``A_c`` itself (N m^2).
    """
    N, m = D.N, S.shape[0]
    syrk = blas.ssyrk if dtype == np.float32 else blas.dsyrk
    if 2 * m > N or dtype in D.gram:                                  # once formed, reused for every later set
        G = D.gram.get(dtype)
        if G is None:
            Kc = (D.K - D.kmean[None, :]).astype(dtype, copy=False)   # K_c = P_c K (K symmetric: K_c' = K P_c)
            G = D.gram[dtype] = syrk(1.0, Kc.T, trans=0, lower=0)     # K_c'K_c, upper triangle (Fortran)
            del Kc
        return _gather_scaled(G.T, S, a.astype(dtype), dtype(c)).T, False        # Fortran, upper triangle
    B = (D.kc_cols(S) * a[None, :]).astype(dtype, copy=False)
    M = syrk(c, B.T, trans=0, lower=0)                                 # c B'B, upper triangle
    M = np.asfortranarray(M)
    M[np.arange(m), np.arange(m)] += 1.0
    return M, False


class LowRankPath(_Path):
    """``"lowrank"``: ``M_lr = I + c F F'``, ``F = diag(a) G_S Lp`` (m x r, :func:`_lowrank_factor`), as the
    preconditioner of iterative refinement against the exact operator: ``M_lr^-1 r = r - c F (I_r + c F'F)^-1 F' r``
    costs O(m r) after an O(m r^2 + r^3) set-up.  ``M - M_lr`` is ``c diag(a) (K_c'K_c - G_c-part)_SS diag(a)``, of
    norm about ``c a^2 ||K|| N u max K_ii``, so refinement converges in a step or two when that is small, and the
    residual certifies the result either way: the augmented residual (:func:`_augmented_refine`) where its rounding
    allows, else that of ``M v = g``, and when neither float64 residual can certify (``||M||`` too large),
    double-double refinement (:func:`_dd_refine`, with the contraction observed, as ``M_lr`` is not a factor of
    ``M``).  Not started when K is not numerically of low rank."""

    name = "lowrank"

    def solve(self, system):
        D, S, a, c = system.data, system.S, system.a, system.c
        if D.lowrank is None:
            D.lowrank = _lowrank_factor(D) or False
        if not D.lowrank:
            return None
        G, Lp = D.lowrank
        H = G[S]
        H *= a[:, None]                                       # F = H Lp, never formed (m r^2 flops saved)
        W = blas.dsyrk(1.0, H.T, trans=0, lower=0)            # H'H, upper triangle (H.T: Fortran, no copy)
        W += np.triu(W, 1).T
        T = Lp.T @ W @ Lp * c                                 # c F'F, r x r
        T[np.diag_indices_from(T)] += 1.0
        U, info = lapack.dpotrf(T, lower=0)
        if info != 0:
            return None
        mnorm = _norm_from_factor(U, False)                   # ||I + c F'F|| = ||M_lr||, about ||M||

        def solve(r):
            return r - c * (H @ (Lp @ lapack.dpotrs(U, Lp.T @ (H.T @ r), lower=0)[0]))

        g, gnorm = system.g, system.gnorm
        v = solve(g)
        if _augmented_enough(system, v):                     # a small set: its rows copied once (contiguous reads)
            KS = D.k_rows(S) if 4 * system.m <= D.N else None
            va, est, u, steps = _augmented_refine(system, v, solve, 8, KS)
            if est <= _FORWARD:
                return system.certify_augmented(self.name, va, est, u, steps, mnorm)
        if not _berr_enough(v, mnorm, gnorm):                 # only a double-double residual can certify
            v, res, u, steps = _dd_refine(system, v, solve, 8, observed=True)
            return system.conclude(self.name, v, res, u, mnorm, dd=True, steps=steps)
        res, prev, steps = np.inf, np.inf, 0
        for _ in range(8):
            r = g - v - c * D.apply_AcT_Ac(S, a, v)
            nv = float(np.linalg.norm(v))
            res = float(np.linalg.norm(r)) / max(1.0, nv)
            if certified(res, nv, mnorm, gnorm) or not np.isfinite(res) or res > 0.5 * prev:
                break
            prev = res
            v = v + solve(r)
            steps += 1
        return system.conclude(self.name, v, res, None, mnorm, steps=steps)


def _pivoted_cholesky(K: np.ndarray, tol: float, max_rank: int):
    """``K ~ G G'`` (N x r) by greedy pivoted Cholesky; stops when ``trace(K - GG') <= tol``.

    Returns ``G``, or None when the rank needed exceeds ``max_rank``.  At k = 32, 64, 128, ... the
    residual trace's decay over the last k/2 steps is extrapolated geometrically; if even that
    predicts more than ``2 max_rank`` steps the attempt is abandoned early (a kernel of full
    numerical rank then costs 32-64 steps, not ``max_rank``).
    """
    N = K.shape[0]
    d = np.array(np.diag(K), dtype=np.float64)
    G = np.zeros((N, max_rank), order="F")      # column k written contiguously, G[:, :k] one BLAS operand
    trace_at = {}
    for k in range(max_rank):
        tr = float(np.sum(np.maximum(d, 0.0)))
        if tr <= tol:
            return G[:, :k].copy()
        trace_at[k] = tr
        if k >= 32 and (k & (k - 1)) == 0:           # k a power of two
            rho = (tr / trace_at[k // 2]) ** (2.0 / k)  # mean decay per step over the last k/2 steps
            if rho >= 1.0 or k + np.log(tol / tr) / np.log(rho) > 2 * max_rank:
                return None
        p = int(np.argmax(d))
        piv = d[p]
        if piv <= 0.0:
            return G[:, :k].copy()
        g = K[:, p] - G[:, :k] @ G[p, :k]
        g /= np.sqrt(piv)
        G[:, k] = g
        d -= g * g
    return None


def _lowrank_factor(D: FitData):
    """``(G, Lp)`` with ``K ~ G G'`` (pivoted Cholesky to a residual trace of ``N u max K_ii``, rank <= N/4) and
    ``Lp Lp' = G_c'G_c`` (``G_c`` = G with centred columns), so that ``K_c'K_c ~ (G Lp)(G Lp)'``; None when K is
    not numerically of low rank (the attempt is abandoned early, see :func:`_pivoted_cholesky`)."""
    K = D.K
    N = D.N
    G = _pivoted_cholesky(K, N * _U * float(np.max(np.diag(K))), max(1, N // 4))
    if G is None or G.shape[1] == 0:
        return None
    Gc = G - G.mean(axis=0)[None, :]
    w, Q = np.linalg.eigh(Gc.T @ Gc)
    return G, Q * np.sqrt(np.maximum(w, 0.0))[None, :]


class MixedPCGPath(_Path):
    r"""``"pcg"``: iterative refinement in float64 around preconditioned CG in float32 (while ``cond(M) u_32 <= 0.05``).

    Outer (float64, exact): ``v <- v + d``, ``r = c A_c'y_c - v - c A_c'(A_c v)`` by two passes over K; stop when the
    iterate is certified (:func:`certified`; ``||M|| >= lambda_max(I + F'F)``, by power steps on that r x r matrix)
    or ``||r||`` stops halving.  Inner (float32, :func:`_cg32`): CG on ``M d = r`` with ``M`` applied through the
    float32 copy of K, to a relative residual of ``_INNER_TOL``, preconditioned by ``P = I + F F'``,
    ``F = sqrt(c) diag(a) F0_S`` (the Nystrom factor of :func:`_nystrom`), inverted by Woodbury:
    ``P^-1 r = r - F (I_r + F'F)^-1 F'r``, O(m r) per step after an O(m r^2) set-up.  A float32 operator is accurate
    to about ``cond(M) u_32``, so each outer step gains that many digits and three or four outer steps certify the
    iterate; each CG step costs two passes over a half-size copy of K (kept in cache), a tenth of an exact step.
    An iterate its own estimate of ``||M||`` does not certify is judged once more with the power estimate
    (:meth:`WeightedSystem.power_estimate`), a second lower estimate that can certify where the first did not.
    """

    name = "pcg"

    def usable(self, kap):
        return kap * _U32 <= 0.05

    def solve(self, system):
        D, S, a, c, m = system.data, system.S, system.a, system.c, system.m
        if D.F0 is None:
            _nystrom(D, S, a)
        F32 = D.F0[S] if m < D.N else D.F0.copy()
        F32 *= (np.sqrt(c) * a).astype(np.float32)[:, None]
        T = (F32.T @ F32).astype(np.float64)
        T[np.diag_indices_from(T)] += 1.0
        U, info = lapack.dpotrf(T, lower=0)
        if info != 0:
            return None

        def prec(r):
            return r - F32 @ lapack.dpotrs(U, F32.T @ r, lower=0)[0].astype(np.float32)

        op32 = _op32(D, S, a, c)
        lam = _power_norm(T)              # ||M|| >= lambda_max(T): the Nystrom part is below K_c'K_c
        g, gnorm = system.g, system.gnorm
        v = np.zeros(m)
        r = g
        res, prev, ok = np.inf, np.inf, False
        n_outer = n_inner = 0
        for _ in range(12):
            n_outer += 1
            d, k = _cg32(op32, prec, r, m)
            n_inner += k
            v = v + d
            u = D.fit_c(S, a * v)                             # exact residual (float64, two passes over K)
            r = g - v - c * a * D.kct_c(S, u)
            nv = float(np.linalg.norm(v))
            res = float(np.linalg.norm(r)) / max(1.0, nv)
            ok = certified(res, nv, 0.9 * lam, gnorm)
            if ok or not (np.isfinite(res) and res < 0.5 * prev):
                break
            prev = res
        how = {"steps": n_outer, "inner_steps": n_inner}
        if ok:                                                # certified against its own lower estimate of ||M||
            return Solution(v, u, system.judge(self.name, v, res, 0.9 * lam, **how))
        return Solution(v, u, system.judge(self.name, v, res, **how))


def _power_norm(T, steps=30):
    """``lambda_max(T)`` from below, ``T`` a small symmetric positive definite matrix: ``steps`` power steps."""
    z = np.full(T.shape[0], 1.0 / np.sqrt(max(T.shape[0], 1)))
    lam = 1.0
    for _ in range(steps):
        w = T @ z
        lam = float(np.linalg.norm(w))
        if not lam > 0.0:
            break
        z = w / lam
    return lam


def _cg32(op32, prec, r, m):
    """Preconditioned CG in float32 on ``M d = r`` to a relative residual of ``_INNER_TOL`` (at most 200 steps).
    Returns ``(d, steps)``."""
    rr = r.astype(np.float32)
    r0 = float(np.linalg.norm(rr))
    d = np.zeros(m, dtype=np.float32)
    z = prec(rr)
    p = z.copy()
    rz = float(rr @ z)
    k = 0
    for _ in range(200):
        k += 1
        q = op32(p)
        pq = float(p @ q)
        if not (pq > 0.0 and rz > 0.0):
            break
        step = np.float32(rz / pq)
        d += step * p
        rr -= step * q
        if not float(np.linalg.norm(rr)) > _INNER_TOL * r0:
            break
        z = prec(rr)
        rz_new = float(rr @ z)
        p = z + np.float32(rz_new / rz) * p
        rz = rz_new
    return d, k


def _nystrom(D: FitData, S, a):
    r"""``F0`` (N x r) with ``G = K_c'K_c ~ F0 F0'``: the Nystrom approximation of G from r of its columns.

    ``J``: ``r = min(NYSTROM_RANK, #{tau_i > 0})`` columns sampled without replacement with probability proportional to
    ``tau_i = a_i^2 ||K_c e_i||^2`` (the diagonal of ``diag(a) G diag(a)``, the matrix the preconditioner serves),
    with a fixed seed, so a fit is deterministic.  ``G[:, J] = K_c'K_c[:, J] = K K_c[:, J]`` (the columns of
    ``K_c[:, J]`` are centred) costs one float32 product (``2 N^2 r`` flops; ``r/N`` of a Gram matrix), and
    ``F0 = G[:, J] R^-1`` with ``R'R = G[J, J] + nu I`` (a shift ``nu`` of float32 rounding size keeps the Cholesky
    factor defined).  ``G - F0 F0'`` is positive semidefinite and vanishes on the sampled columns.  Only a
    preconditioner: its accuracy changes the number of CG steps, never the iterate (module docstring).
    """
    N = D.N
    K32 = D.k32()
    tau = np.zeros(N)
    tau[S] = a * a * np.maximum(D.colsq[S] - N * D.kmean[S] ** 2, 0.0)   # ||K_c e_i||^2 = ||K e_i||^2 - N kmean_i^2
    nz = int(np.count_nonzero(tau))
    r = min(NYSTROM_RANK, nz)
    if r == 0:
        D.F0 = np.zeros((N, 0), dtype=np.float32)
        return
    J = np.sort(np.random.default_rng(0).choice(N, size=r, replace=False, p=tau / float(np.sum(tau))))
    Y1 = K32[:, J] - D.kmean32[J][None, :]                                # K_c[:, J]
    Y = (K32.T @ Y1).astype(np.float64)                                   # G[:, J]  (K symmetric)
    W = 0.5 * (Y[J] + Y[J].T)
    nu = r * _U32 * float(np.max(np.diag(W)))
    for _ in range(8):
        R, info = lapack.dpotrf(W + nu * np.eye(r), lower=0)
        if info == 0:
            break
        nu *= 10.0
    else:  # pragma: no cover - W + nu I with nu ~ max(diag W) is positive definite
        D.F0 = np.zeros((N, 0), dtype=np.float32)
        return
    D.F0 = blas.dtrsm(1.0, R, Y, side=1, lower=0).astype(np.float32)     # Y R^-1 (a preconditioner: float32)


def _op32(D: FitData, S, a, c):
    """``p -> M p = p + c diag(a) K_c[:, S]'K_c[:, S] diag(a) p`` through the float32 copy of K (float32 vectors):
    two passes over K32 (over a contiguous copy of its columns S when ``m <= N/4``)."""
    N, m = D.N, S.shape[0]
    K32 = D.k32()
    a32 = a.astype(np.float32)
    ca32 = (c * a).astype(np.float32)
    km32 = D.kmean32[S]
    if 4 * m <= N:
        KS = np.ascontiguousarray(K32[:, S])                            # N x m, read twice per CG step

        def op32(p):
            z = a32 * p
            u = KS @ z
            u -= km32 @ z
            return p + ca32 * (u @ KS)
    elif m == N:                                          # S = everything: no scatter, no gather

        def op32(p):
            z = a32 * p
            u = sym_matmat(K32, z)                          # ssymv: half of K32 read (0.15 ms vs 0.23 at N = 2000)
            u -= km32 @ z
            w = sym_matmat(K32, u)
            w *= ca32
            w += p
            return w
    else:
        zz = np.zeros(N, dtype=np.float32)

        def op32(p):
            z = a32 * p
            zz[S] = z
            u = sym_matmat(K32, zz)
            u -= km32 @ z
            return p + ca32 * sym_matmat(K32, u)[S]
    return op32


def _lam_max(D: FitData, S, a, c, steps: int = 12):
    """``||M|| = lambda_max(I + c A_c'A_c)`` by power iteration through the float32 operator, padded by 10%
    (an estimate from below before the padding)."""
    op32 = _op32(D, S, a, c)
    z = np.full(S.shape[0], 1.0 / np.sqrt(S.shape[0]), dtype=np.float32)
    lam = 1.0
    for _ in range(steps):
        w = op32(z)
        nw = float(np.linalg.norm(w))
        if not (nw > 0.0 and np.isfinite(nw)):
            break
        lam, z = nw, w / np.float32(nw)
    return 1.1 * lam


def _augmented_enough(system: WeightedSystem, v):
    """Whether :func:`_augmented_refine` is likely to certify ``v``: its rounding floor at most ``_FORWARD max(1,
    ||v||)``, with ``||xi||`` (not computed yet) taken as 1.1 times the last iterate's, at most ``||y_c||``
    (``c ||xi*||^2 + ||v*||^2 <= c ||y_c||^2``, the objective at ``v = 0``).  A wrong guess costs time, not
    accuracy: the refinement's own bound decides."""
    D = system.data
    vn = float(np.linalg.norm(v))
    xn = D.ycnorm if D.last_xinorm is None else min(D.ycnorm, 1.1 * D.last_xinorm)
    return _augmented_floor(system, vn, xn) <= _FORWARD * max(1.0, vn)


def _augmented_floor(system: WeightedSystem, vn, xn):
    """The modelled rounding of the augmented residuals (:func:`_augmented_refine`), ``rho1 + rho2 / 2`` with
    ``rho1 = R u (||v|| + c f ||xi||)`` and ``rho2 = R u sqrt(c) (||y|| + f ||v|| + ||xi||)``, ``R = _RESID_ROUND``."""
    c, f = system.c, system.fro
    return _RESID_ROUND * _U * (vn + c * f * xn + 0.5 * np.sqrt(c) * (system.data.ynorm + f * vn + xn))


class AugmentedResidual:
    """The residuals of the augmented form of (N) at a pair ``(v, xi)``, and the bound they give on the error of
    ``v`` (:func:`_augmented_refine` explains both).  The passes read ``B = A_c`` itself when given (N x m, the
    ``"gram"`` path's), else the rows ``KS = K[S]``, else FitData's passes (half of K by ``symv`` for a large set)."""

    def __init__(self, system: WeightedSystem, KS=None, B=None):
        D, S, a, c = system.data, system.S, system.a, system.c
        self.system, self.D, self.c, self.sc = system, D, c, float(np.sqrt(c))
        if B is not None:
            self.fit, self.adj = (lambda v: B @ v), (lambda X: B.T @ X)
        elif KS is not None:
            def fit(v):                                        # P_c K[:, S] (a v), K symmetric: K[:, S] = K[S]'
                q = KS.T @ (a * v)
                q -= q.mean()
                return q
            self.fit, self.adj = fit, (lambda X: a[:, None] * (KS @ X))
        else:
            self.fit, self.adj = (lambda v: D.fit_c(S, a * v)), (lambda X: a[:, None] * D.kct_c(S, X))

    def __call__(self, v, xi=None):
        """``(u, xi, t, s1, ct, bound, floor)`` at ``(v, xi)`` (``xi=None``: the fit's residual ``y_c - A_c v``):
        ``u = A_c v``, ``t = y_c - u - xi``, ``s1 = v - c A_c' xi``, ``ct = c A_c' t`` (the correction's right-hand
        side is ``ct - s1``), ``bound = ||s1|| + sqrt(c) ||t|| / 2 + floor >= ||v - v*||`` and ``floor = rho1 + rho2 / 2``,
        the modelled rounding of the two residuals."""
        u = self.fit(v)                                        # A_c v
        if xi is None:
            xi = self.D.yc - u
        t = self.D.yc - u - xi
        both = self.c * self.adj(np.c_[xi - xi.mean(), t - t.mean()])   # c A_c' [xi, t]: one pass
        s1 = v - both[:, 0]
        floor = _augmented_floor(self.system, float(np.linalg.norm(v)), float(np.linalg.norm(xi)))
        bound = float(np.linalg.norm(s1)) + 0.5 * self.sc * float(np.linalg.norm(t)) + floor
        return u, xi, t, s1, both[:, 1], bound, floor


def _augmented_refine(system: WeightedSystem, v, solve, steps=4, KS=None, B=None):
    """Iterative refinement of ``v`` on the augmented (least-squares) form of (N), which certifies the iterate in
    float64 where the residual of ``M v = g`` cannot: Bjorck's refinement of least-squares solutions (BIT 7, 1967),
    the fit's residual carried as a second unknown.

    (N), 004's system (4) for the weights of its eq. (3) rewritten (module docstring of :mod:`svmref.solvers.isls`), is
    the normal equations of ``min ||B v - sqrt(c) y_c||^2 + ||v||^2``, ``B = sqrt(c) A_c``.  Its augmented
    system in ``(v, w)``, ``w = sqrt(c) xi`` (``xi`` the centred residual of the fit), is::

        [ -I  B' ] [v]   [     0      ]
        [  B  I  ] [w] = [ sqrt(c) y_c ],      residuals  s1 = v - B'w,   s2 = sqrt(c) t,  t = y_c - A_c v - xi.

    Eliminating ``w``: ``M (v* - v) = B's2 - s1``, so ``||v - v*|| <= ||s1|| + ||s2|| / 2``, as ``M = I + B'B`` has
    ``||M^-1|| <= 1`` and ``||M^-1 B'|| = max s / (1 + s^2) <= 1/2`` over the singular values ``s`` of ``B``.  With
    ``xi`` carried (not recomputed from ``v``) both residuals go to their rounding, which is only ``u sqrt(||M||)``
    times the data, not the ``u ||M|| ||v||`` of ``c A_c'(A_c v)``.  The rounding is modelled normwise (as in
    :func:`certified`, ``R = _RESID_ROUND``) with ``f = ||K[:, S] diag(a)||_F >= ||A_c||`` (column norms, no pass):
    ``rho1 = R u (||v|| + c f ||xi||)``, ``rho2 = R u sqrt(c) (||y|| + f ||v|| + ||xi||)``, and the bound
    ``e = ||s1|| + ||s2|| / 2 + rho1 + rho2 / 2``.  A correction is ``dv = solve(c A_c't - s1)`` (any approximation of
    ``M^-1``: the bound does not depend on it), ``dxi = t - A_c dv``; they go on until ``e <= _CERTIFY max(1, ||v||)``,
    the residuals are at their rounding, they stop halving, or ``steps`` corrections.  Returns the best ``(v,
    e / max(1, ||v||), u, n)``: ``u = A_c v = K_c[:, S] alpha_S`` of that ``v``, ``n`` its corrections; the iterate
    is certified when the second is at most ``_FORWARD``.
    """
    res = AugmentedResidual(system, KS, B)
    best, prev, xi, n = None, np.inf, None, 0
    while True:
        u, xi, t, s1, ct, bound, floor = res(v, xi)
        vn = float(np.linalg.norm(v))
        est = bound / max(1.0, vn)
        if best is None or est < best[1]:
            best = (v, est, u, n)
        rn = bound - floor
        if est <= _CERTIFY or rn <= floor or n == steps or not (np.isfinite(rn) and rn <= 0.5 * prev):
            return best
        prev = rn
        dv = solve(ct - s1)
        xi = xi + (t - res.fit(dv))
        v = v + dv
        n += 1


def _dd_refine(system: WeightedSystem, v, solve, steps=4, KS=None, observed=False):
    """Extra-precise iterative refinement of ``v`` (as LAPACK's xPORFSX for a symmetric positive definite M;
    Demmel et al., ACM TOMS 32(2), 2006): residuals of (N) in double-double
    (:func:`svmref.solvers._dd.dd_residual`, the exact K), corrections ``d = solve(r)`` from a factor of ``M`` with a
    relative error ``theta`` (``cond(M) u`` for float64, at most 0.05 for float32: the gating of the paths).

    The residual of a float64 ``v`` cannot go below about ``u ||M|| ||v||`` (rounding ``v`` itself), so it is the
    correction that certifies: ``v - v* = -M^-1 r`` and ``M^-1 r = (I + M^-1 E) d``, so
    ``||v - v*|| <= (1 + theta) ||d||``.  ``v`` is accepted when ``2 ||d|| <= _CERTIFY max(1, ||v||)``; it is given up
    when a correction is not at most half the previous one (the observed contraction bounds ``theta``).  With
    ``observed=True`` (a preconditioner ``solve`` that is not a factor of ``M``, ``theta`` unknown) a correction
    certifies only after a contraction ``q = ||d_k|| / ||d_{k-1}|| <= 1/2`` has been seen, with the estimate
    ``||d|| / (1 - q)`` (the geometric tail) in place of ``(1 + theta) ||d||``.  Returns ``(v, estimate, u, n)``:
    ``estimate = 2 ||d|| / max(1, ||v||)`` (``<= _CERTIFY`` when certified), ``u = K_c[:, S] alpha_S``, ``n`` the
    corrections applied.
    """
    D, S, a, c = system.data, system.S, system.a, system.c
    if KS is None:                                         # the rows K[S] (m x N, C order)
        KS = D.k_rows(S)
    ca = c * a
    prev = np.inf
    est = np.inf
    n = 0
    for k in range(steps):
        r, xi = dd_residual(KS, a * v, D.y, ca, v)
        d = solve(r)
        nd = float(np.linalg.norm(d))
        if observed:
            q = nd / prev if k > 0 else 1.0
            est = 2.0 * nd / max(1.0, float(np.linalg.norm(v))) if q <= 0.5 else np.inf
        else:
            est = 2.0 * nd / max(1.0, float(np.linalg.norm(v)))
        if est <= _CERTIFY or k == steps - 1 or not (np.isfinite(nd) and nd <= 0.5 * prev):
            break                                          # v is the iterate whose residual (and xi) was computed
        prev = nd
        v = v + d
        n += 1
    return v, est, D.yc - xi, n


#: The paths by name (:data:`SMALL_PATHS`, :data:`LARGE_PATHS` list them in the order they are tried).
PATHS = {p.name: p for p in (GramPath(), QRPath(), LowRankPath(), MixedPCGPath(), CholeskyPath(np.float32),
                             CholeskyPath())}
