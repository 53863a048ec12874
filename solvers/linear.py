r"""LS-SVM (classification and regression) and RLS by linear systems.

The LS-SVM KKT system (004, eq. (2); 002, the (N+1) x (N+1) system; 000, eq. (2) with ``y_i y_j``)::

    [ 0   1^T    ] [ b    ]   [ 0 ]
    [ 1   Ktilde ] [ beta ] = [ y ],        Ktilde = K + I/C,                                (2)

is solved by block elimination (the Schur complement of ``Ktilde``)::

    Ktilde nu = y,   Ktilde eta = 1,   b = 1'nu / 1'eta,   beta = nu - b eta.

Check, line by line: row 0 of (2) asks ``1'beta = 1'nu - b 1'eta = 0``, which is the formula for b;
the rows below ask ``Ktilde beta + b 1 = (y - b 1) + b 1 = y``.  One factorisation of ``Ktilde``
serves both right-hand sides (they are solved together as the two columns of ``[y, 1]``).

Classification (000, eq. (2)) uses the variables ``alpha_i = y_i beta_i``: with ``Y = diag(y)`` and
``y_i^2 = 1`` the system ``[0 y'; y Y Ktilde Y][b; alpha] = [0; 1]`` becomes (2) after multiplying the
lower rows by ``Y``.  So one routine solves both forms; ``alpha_regression = y * alpha_classification``.

Three paths (``method``):

* ``"cholesky"`` -- LAPACK ``potrf``/``potrs`` on a working copy of ``K`` whose diagonal is shifted by
  ``1/C`` once (``overwrite_K=True`` shifts and factorises ``K`` itself, destroying it, as
  ``scipy.linalg.cho_factor(overwrite_a=True)`` does).  If ``Ktilde`` is numerically not positive
  definite (``potrf`` fails: an indefinite kernel such as MLP, or ``1/C`` below rounding on a singular
  ``K``) the solver warns (:class:`scipy.linalg.LinAlgWarning`), rebuilds ``Ktilde`` from the triangle
  ``potrf`` did not touch and uses a symmetric-indefinite ``L D L'`` factorisation (LAPACK ``sytrf``,
  Bunch-Kaufman); if that finds ``Ktilde`` exactly singular, the eigendecomposition with the
  minimum-norm (pseudo-inverse) solution.  ``status`` is then ``"numerical_issue"``.
* ``"cg"`` -- conjugate gradients on the operator ``v -> K v + v/C``, both right-hand sides in lock
  step (one pass over ``K`` per iteration), stopped when every column has
  ``||r|| <= tol ||rhs||``.  ``K`` may be a :class:`scipy.sparse.linalg.LinearOperator` (matrix-free).
* ``"auto"`` -- ``"cholesky"`` for a dense ``K`` with ``N <= AUTO_CG_N``, otherwise ``"cg"``.

RLS (001, eq. (8)) ``(m gamma I + K) c = y`` uses the same Cholesky path with shift ``m gamma``.

Scale.  K is solved in the scale of its largest entry (a LinearOperator K: of ``max|K R| / max|R|`` for the
right-hand sides R, one product): with ``s`` the power of 2 that brings
``max(max|K_ij|, shift)`` into ``[1/4, 2)`` (:func:`_pow2_scale`), the system solved is ``(K/s + (shift/s) I) X' = R``
and ``X = X'/s``.  This is the same problem (000 eqs. (1)-(2), (7): the LS-SVM with kernel ``s K'`` and ``C`` is the
LS-SVM with ``K'`` and ``s C``, with the same ``b`` and ``alpha = alpha'/s``, since ``s (K' + I/(sC)) (alpha'/s) =
(K' + I/(sC)) alpha'`` and ``1'(alpha'/s) = 0`` iff ``1'alpha' = 0``; the RLS (001 eq. (8)) with ``s K'`` and
``gamma`` is the RLS with ``K'`` and ``gamma/s``, ``c = c'/s``, same objective (7)), and the division is exact
(a power of 2; only entries below ``2^-1022`` times the largest, far below the rounding of any product with K,
can lose bits), so a well-scaled K gives the same numbers as before, and a K of ``1e300`` or ``2^1020`` (whose
row sums overflow: ``||K||_1`` was ``inf`` and the condition estimate with it) or ``1e-300`` neither over- nor
underflows.  The certificate is computed in that scale (the LS-SVM's dual objective and gap are ``1/s`` times the
scaled problem's, the RLS objective is the same).  What scaling cannot change: the problem depends on ``C max|K|``
(``max|K| / (m gamma)`` for RLS) only, and where it is so large that the optimum's slacks ``alpha_i / C`` lie below
the rounding of ``K alpha`` (``C max|K|`` about ``1e24`` and above for unit data: the hard-margin regime) no duality
gap can be certified in float64; such a solve is labelled ``"suboptimal"`` with a message that names ``max|K|``
and ``C`` and says to lower ``C`` or rescale ``K``.

Accuracy of the Cholesky path.  After ``potrf`` the reciprocal condition number of the shifted
matrix ``A = K + shift I`` is estimated by LAPACK ``pocon`` (Hager/Higham 1-norm estimator, O(N^2) from the
factor and ``||A||_1``).  When ``eps cond_1(A) > 1e-12`` one or two steps of iterative refinement
``X <- X + A^-1 (R - A X)`` are applied (residual with the original ``A``: ``K`` itself, or with
``overwrite_K=True`` the triangle ``potrf`` left untouched, by BLAS ``symm``).

Mixed precision.  From ``N = MIXED_MIN_N`` on, while ``u_32 ||A||_1 / shift`` (a bound on ``u_32 cond_2(A)`` for a
positive semidefinite K) is small enough to pay, ``A`` is factorised in float32 (``spotrf``: half the time and half
the memory of ``dpotrf``) and the solution refined in float64 against the original K until dsposv's backward-error
test holds (:func:`_mixed_solve`): the accuracy of the float64 factorisation at about 0.6 of its cost.  ``rcond``
is then ``spocon``'s on the float32 factor and ``info["precision"]`` is ``"mixed"`` (else ``"float64"``).  The
refinement's last product ``A X`` also serves the certificate, which therefore needs no further pass over K.  A
float32 factorisation that breaks down, or a refinement that stops contracting, hands over to the float64 path.

The expected relative accuracy
of the solution is ``eps cond_1(A)`` (the forward-error bound of a backward-stable solve); when it is worse
than ``tol`` an :class:`IllConditionedWarning` says so with the number, and ``status="numerical_issue"``.
``info["rcond"]``, ``info["expected_rel_error"]`` and ``info["refinement_steps"]`` report it.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgWarning, blas, lapack

from svmref._validation import (
    asymmetric,
    check_gram,
    check_labels,
    check_max_iter,
    check_positive,
    check_targets,
    check_tol,
    check_weights,
)

from ._qmatrix import scan_gram
from ._result import (
    UNIT_ROUNDOFF,
    IllConditionedWarning,
    SolverResult,
    SuboptimalWarning,
    certified,
    relative_gap,
    warn_not_converged,
    warn_suboptimal,
)
from ._smo_common import duality_gap, gap_floor, gap_terms

__all__ = ["ls_svm", "ls_svm_regression", "rls", "loo_residuals", "LinearResult", "RLSResult", "AUTO_CG_N",
           "IllConditionedWarning", "GAP_TOL"]

#: Above this many patterns ``method="auto"`` switches from the Cholesky factorisation to CG.
AUTO_CG_N = 15000
_METHODS = ("cholesky", "cg", "auto")
_EPS = np.finfo(np.float64).eps
#: Default ``gap_tol`` of the three solvers: ``"optimal"`` needs a certified relative duality gap (with its floor)
#: of at most this. A direct solve is accurate to about ``eps cond`` (the residual's square enters the gap, so the
#: gap is usually at its floor, 1e-16 to 1e-12 relative on the tests' instances); 1e-8 is the reference's
#: certification tolerance (``svmref.formulations.reference.DEFAULT_TOL``): a solve labelled optimal here is as
#: accurate as the ground truth claims to be.
GAP_TOL = 1e-8
#: Iterative refinement is applied when ``eps cond_1`` exceeds this (below it the Cholesky solution is
#: already accurate to about 1e-12, and a refinement step would cost a third of the solve).
_REFINE_ABOVE = 1e-12
#: The mixed-precision Cholesky path (:func:`_mixed_solve`) is tried from this many patterns on ...
MIXED_MIN_N = 1024
#: ... when ``u_32 ||A||_1 / shift`` is at most this times ``max(1, N / 2000)`` (:func:`_mixed_worthwhile`).
_MIXED_COND = 0.03
#: Refinement steps of the mixed-precision path before it gives up (LAPACK dsposv's ITERMAX).
_MIXED_STEPS = 30
_U32 = float(np.finfo(np.float32).eps) / 2.0


@dataclass(frozen=True, repr=False)
class LinearResult(SolverResult):
    """Result of an LS-SVM solve; its decision function and predict are :class:`SolverResult`'s.

    ``task`` is ``"classification"`` (``alpha`` as in 000 eq. (2)) or ``"regression"`` (004 eq. (2));
    ``coef`` holds the coefficients of the kernel expansion ``f(x) = sum_i coef_i k(x_i, x) + b``:
    ``alpha * y`` for classification, ``alpha`` for regression.

    Extra attributes
    ----------------
    method : str
        The path taken: ``"cholesky"``, ``"ldl"``, ``"eigh"`` or ``"cg"``.
    """

    method: str = "cholesky"


@dataclass(frozen=True, repr=False)
class RLSResult(SolverResult):
    """Result of :func:`rls`: ``c`` solves ``(m gamma I + K) c = y`` (001, eq. (8)); ``b`` is None."""

    c: np.ndarray | None = None
    method: str = "cholesky"

    def expansion(self) -> tuple[np.ndarray, None]:
        """``(c, None)``: ``f(x_j) = sum_i c_i K(x_j, x_i)`` (001, eq. (9)), no bias."""
        return self.c, None


# --------------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------------
def _is_operator(K) -> bool:
    return not isinstance(K, np.ndarray) and hasattr(K, "matmat") and hasattr(K, "shape")


def _check_K_rows(K, name: str = "K"):
    """``(K, row sums of |K|)`` of :func:`_check_K_scan`."""
    return _check_K_scan(K, name)[:2]


def _check_K_scan(K, name: str = "K"):
    """``(K, row sums of |K|, max|K_ij|)``. Dense K: :func:`svmref._validation.check_gram` (finite, square,
    symmetric to :data:`svmref._thresholds.SYM_RTOL`) on the one compiled scan of K,
    :func:`svmref.solvers._qmatrix.scan_gram`, which also gives the row sums (the 1-norm of a symmetric K, which
    the condition estimate of :func:`_shifted_solve` needs) and the largest entry (the scale, module docstring).
    LinearOperator K: square shape only, rows and scale ``None``."""
    if _is_operator(K):
        if len(K.shape) != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"{name} must be a square operator (N x N); got shape {K.shape}")
        return K, None, None
    scanned = {}

    def fast(A, rtol):
        bad, asym, scanned["big"], scanned["rows"] = scan_gram(A, 64)
        return int(bad), asymmetric(asym, scanned["big"], rtol)

    K = check_gram(K, name, fast=fast)
    return K, scanned["rows"], float(scanned["big"])


def _pow2_scale(big: float, shift_exponent: int) -> tuple[float, float]:
    """``(s, 1/s)``: the power of 2 with ``max(big, shift) / s`` in ``[1/4, 2)``, where ``big = max|K_ij|`` and the
    diagonal shift is below ``2^shift_exponent`` and at least ``2^(shift_exponent - 2)`` (an exponent, so that
    ``m gamma`` need not be formed where it overflows). The exponent is clipped to ``[-1022, 1023]`` so that both
    ``s`` and ``1/s`` are finite normal numbers (module docstring, "Scale")."""
    e = int(shift_exponent)
    if big > 0.0:
        e = max(e, int(np.frexp(big)[1]))
    e = min(max(e - 1, -1022), 1023)
    return float(np.ldexp(1.0, e)), float(np.ldexp(1.0, -e))


def _operator_scale(K, R) -> float:
    """``max|K R| / max|R|``: the scale of a LinearOperator K (whose entries are not at hand) from one product with
    the right-hand sides, for :func:`_pow2_scale`; the largest float64 where the product is not finite. Only which
    power of 2 is used depends on it, and any power of 2 is exact (module docstring, "Scale")."""
    with np.errstate(over="ignore", invalid="ignore"):
        top = float(np.max(np.abs(K.matmat(R)))) / float(np.max(np.abs(R)))
    return top if np.isfinite(top) else float(np.finfo(np.float64).max)


def _scaled_rows(K, rows, big, shift_exponent, probe=None):
    """``(s, 1/s, rows / s)`` for a dense K (:func:`_pow2_scale`); ``rows`` and ``big`` are computed by the scan when
    not given, and the row sums of ``|K / s|`` recomputed where those of ``|K|`` overflowed. For a LinearOperator K,
    ``(s, 1/s, None)`` with the scale of :func:`_operator_scale` on ``probe`` (``(1, 1, None)`` without one)."""
    if _is_operator(K):
        if probe is None:
            return 1.0, 1.0, None
        return (*_pow2_scale(_operator_scale(K, probe), shift_exponent), None)
    if rows is None or big is None:
        big, rows = scan_gram(K, 64)[2:]
    s, inv = _pow2_scale(float(big), shift_exponent)
    rows_s = rows * inv
    if not np.all(np.isfinite(rows_s)):  # sum_j |K_ij| overflowed (K near the float64 limit); sum_j |K_ij / s| cannot
        rows_s = scan_gram(K * inv, 64)[3]
    return s, inv, rows_s


def _check_K(K, name: str = "K"):
    """Dense K: finite, square, symmetric (:func:`_check_K_rows`). LinearOperator K: square shape only."""
    return _check_K_rows(K, name)[0]


def _check_C(C, name: str = "C") -> float:
    """``C`` finite and > 0 with ``1/C`` finite (a C whose reciprocal overflows is refused, naming it)."""
    C = check_positive(C, name)
    with np.errstate(over="ignore", divide="ignore"):
        inv = 1.0 / C
    if not np.isfinite(inv):
        raise ValueError(f"{name} = {C!r} is too small: 1/{name} overflows float64 (use {name} >= "
                         f"{1.0 / np.finfo(float).max:.3g})")
    return C


def _check_method(method, N, K) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
    if method == "auto":
        method = "cg" if (_is_operator(K) or N > AUTO_CG_N) else "cholesky"
    if method == "cholesky" and _is_operator(K):
        raise ValueError("method='cholesky' needs K as a dense array; a LinearOperator K needs method='cg'")
    return method


# --------------------------------------------------------------------------------------------------
# direct path: Cholesky of the shifted matrix, with the LDL' / eigh fallback
# --------------------------------------------------------------------------------------------------
def _shifted_solve(K: np.ndarray, shift: float, R: np.ndarray, overwrite_K: bool, rows: np.ndarray | None = None):
    """``(X, method, message, report)`` of :func:`_shifted_solve_applied` (its ``apply`` left out), ``X`` in the units
    of ``K``: solves ``(K + shift I) X = R`` in the scale of K (module docstring, "Scale")."""
    s, inv, rows_s = _scaled_rows(K, rows, None, int(np.frexp(shift)[1]))
    X, method, message, report, *_ = _shifted_solve_applied(K, shift * inv, R, overwrite_K, rows_s, inv)
    return X * inv, method, message, report


def _shifted_solve_applied(K: np.ndarray, shift: float, R: np.ndarray, overwrite_K: bool,
                           rows: np.ndarray | None = None, inv: float = 1.0):
    """Solve ``(K inv + shift I) X = R`` for the columns of ``R`` with one factorisation (``inv``: ``1/s`` of
    :func:`_pow2_scale`, a power of 2; ``shift`` and ``rows`` are already in that scale).

    Returns ``(X, method, message, report, apply, product)``; ``report`` (Cholesky path only, else empty) holds ``rcond``,
    ``expected_rel_error`` and ``refinement_steps`` (module docstring); ``apply(V) = (K inv + shift I) V`` with the
    original ``K`` (times ``inv``, exact: from the untouched triangle when ``overwrite_K`` or ``inv != 1``), for the
    certificate; ``product`` is ``(K inv + shift I) X`` where the path computed it anyway (the mixed-precision path,
    :func:`_mixed_solve`, tried first), else None.  ``rows`` are the row sums of ``|K inv|`` (:func:`_scaled_rows`;
    computed here by the same scan when not given), for ``||K inv + shift I||_1``.

    ``K`` (C-contiguous, symmetric) is copied once into ``W`` (times ``inv``) unless ``overwrite_K``.  ``W.T`` is a
    Fortran-ordered view of the same memory and, ``K`` being symmetric, the same matrix, so LAPACK factorises
    it in place with no further copy; ``potrf(lower)`` on ``W.T`` writes the upper triangle of ``W`` and
    leaves its strict lower triangle (= that of K inv) untouched, which is what the fallback rebuilds
    ``K inv + shift I`` from.
    """
    N = K.shape[0]
    if rows is None:
        rows = scan_gram(K, 64)[3] * inv  # row sums of |K inv|, before K may be overwritten
    mixed = _mixed_solve(K, shift, R, rows, inv)
    if mixed is not None:
        return mixed
    if overwrite_K:
        W = K
        if inv != 1.0:
            W *= inv
    else:
        W = K * inv if inv != 1.0 else K.copy()
    kd = np.diag(W)
    anorm = float(np.max(rows - np.abs(kd) + np.abs(kd + shift)))
    diag = W.reshape(-1)[:: N + 1]     # a view on the diagonal (W is C-contiguous)
    diag += shift                        # W = Ktilde (000 eq. (2): Ktilde_ij = K_ij + delta_ij / C)
    d_saved = np.array(diag)            # N numbers, to rebuild Ktilde if potrf fails
    L, info = lapack.dpotrf(W.T, lower=1, overwrite_a=1, clean=0)
    if info == 0:
        X, info2 = lapack.dpotrs(L, R, lower=1)
        if info2 != 0:  # pragma: no cover - potrs only fails on illegal arguments
            raise RuntimeError(f"LAPACK dpotrs failed (info={info2})")
        rcond, info3 = lapack.dpocon(L, anorm, uplo="L")
        rcond = float(rcond) if info3 == 0 else 0.0
        acc = _EPS / rcond if rcond > 0.0 else np.inf     # expected relative accuracy, eps cond_1
        steps = 0
        apply = _applier(K if not overwrite_K and inv == 1.0 else None, L, d_saved, shift)
        if acc > _REFINE_ABOVE:
            X, steps = _refine(apply, L, R, X)
        return X, "cholesky", "", {"rcond": rcond, "expected_rel_error": acc, "refinement_steps": steps,
                                    "precision": "float64"}, apply, None
    if info < 0:  # pragma: no cover
        raise RuntimeError(f"LAPACK dpotrf: illegal argument {-info}")
    # ---- fallback: K + shift I is numerically not positive definite --------------------------------
    A = np.tril(W, -1)                  # strict lower triangle, untouched by potrf on W.T (see above)
    A += A.T
    A.reshape(-1)[:: N + 1] = d_saved
    msg = (f"K + I*{shift / inv:.3g} is numerically not positive definite (Cholesky failed at column {info}); "
           "used a symmetric-indefinite LDL' factorisation (LAPACK sytrf) instead")
    ldu, ipiv, info = lapack.dsytrf(A, lower=1)
    if info == 0:
        X, info2 = lapack.dsytrs(ldu, ipiv, R, lower=1)
        if info2 == 0 and np.all(np.isfinite(X)):
            warnings.warn(msg, LinAlgWarning, stacklevel=4)
            return X, "ldl", msg, {}, (lambda V: A @ V), None
    # ---- exactly singular: minimum-norm solution through the eigendecomposition ------------------
    w, V = np.linalg.eigh(A)
    cut = N * _EPS * max(float(np.max(np.abs(w))), 1.0)
    keep = np.abs(w) > cut
    X = V[:, keep] @ ((V[:, keep].T @ R) / w[keep, None])
    msg = (f"K + I*{shift / inv:.3g} is singular to working precision ({int(np.sum(~keep))} eigenvalues with "
           f"|w| <= {cut:.3g}); used the minimum-norm solution from its eigendecomposition")
    warnings.warn(msg, LinAlgWarning, stacklevel=4)
    return X, "eigh", msg, {}, (lambda V: A @ V), None


def sym_matmat(K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``K V`` for a symmetric K (float64, or float32 by ``ssymv``) by BLAS ``dsymv``, one column of ``V`` at a time,
    reading the triangle the factorisations read (the entries ``K[i, j]``, ``i <= j``, whatever the memory order):
    0.6 - 1.0 ms for two columns at N = 2000 against 2.5 - 2.7 ms for ``K @ V`` (numpy's ``gemm``) and 2.9 ms for
    BLAS ``dsymm`` (one thread), since ``symv`` reads half of K."""
    if K.flags.c_contiguous:            # K.T is the Fortran view; its lower triangle is K[i, j], i <= j
        F, lower = K.T, 1
    else:
        F, lower = np.asfortranarray(K), 0
    symv = blas.ssymv if K.dtype == np.float32 else blas.dsymv
    V = np.asarray(V, dtype=K.dtype)
    if V.ndim == 1:
        return symv(1.0, F, V, lower=lower)
    out = np.empty(V.shape, dtype=K.dtype, order="F")
    for j in range(V.shape[1]):
        out[:, j] = symv(1.0, F, V[:, j], lower=lower)
    return out


def _mixed_worthwhile(N, shift, anorm, inv) -> bool:
    """Whether the float32 factor is tried (:func:`_mixed_solve`): ``N >= MIXED_MIN_N`` (below it the float64
    factorisation is cheap and the refinement's passes over K cost what they save), the scale ``inv`` in
    ``[2^-500, 2^500]`` (so that ``(K V) inv`` neither over- nor underflows), and ``u_32 ||A||_1 / shift`` at most
    :data:`_MIXED_COND` ``x max(1, N / 2000)``: for a positive semidefinite K, ``A = K + shift I >= shift I``, so
    ``||A||_1 / shift`` bounds ``cond_2(A)``, and the refinement gains about ``-log10(u_32 cond)`` digits per pass
    over K; the bound grows with N because the float32 factor saves ``N^3 / 6`` flops against ``N^2`` per pass."""
    if N < MIXED_MIN_N or not 2.0 ** -500 <= inv <= 2.0 ** 500 or not shift > 0.0:
        return False
    return _U32 * anorm / shift <= _MIXED_COND * max(1.0, N / 2000.0)


def _mixed_solve(K: np.ndarray, shift: float, R: np.ndarray, rows: np.ndarray, inv: float):
    """``(K inv + shift I) X = R`` by a float32 Cholesky factor refined in float64 (LAPACK's ``dsposv`` scheme;
    Langou et al., "Exploiting the performance of 32 bit floating point arithmetic", 2006), or None when the path is
    not worthwhile (:func:`_mixed_worthwhile`) or fails (``spotrf`` breaks down: K not positive definite; or the
    refinement stops contracting): the float64 factorisation then runs as before.

    ``W = K inv + shift I`` is rounded to float32 (half the memory of the float64 copy), factorised by ``spotrf``
    (about twice as fast as ``dpotrf``) and ``X_0 = W^-1 R`` in float32.  Each refinement step computes the residual
    ``r = R - (K inv + shift I) X`` in float64 with the original, untouched K (one pass, one product ``K X`` for
    both right-hand sides) and corrects ``X <- X + W^-1 r`` through the float32 factor (the residual brought to unit
    scale first, so that float32 neither under- nor overflows).  It stops with dsposv's test, per column
    ``||r||_inf <= sqrt(N) ||X||_inf ||A||_1 eps``: a normwise backward error at float64's level, the accuracy of a
    float64 factorisation (``eps cond``).  A step that does not halve the residual, or 30 steps, give up.

    Returns ``(X, "cholesky", "", report, apply, product)`` like :func:`_shifted_solve_applied`, ``report`` with
    ``precision="mixed"``, ``rcond`` from ``spocon`` on the float32 factor, ``expected_rel_error = eps / rcond`` and
    ``refinement_steps``; ``product`` is ``(K inv + shift I) X`` from the last residual (no further pass for the
    certificate)."""
    N = K.shape[0]
    kd = np.diag(K) * inv
    anorm = float(np.max(rows - np.abs(kd) + np.abs(kd + shift)))
    if not _mixed_worthwhile(N, shift, anorm, inv):
        return None
    if inv == 1.0:
        W = K.astype(np.float32, order="C")       # spotrf on W.T reads W[i, j], i <= j: the triangle of sym_matmat
    else:
        W = np.empty((N, N), dtype=np.float32)
        np.multiply(K, inv, out=W, casting="same_kind")
    W.reshape(-1)[:: N + 1] += np.float32(shift)
    L, info = lapack.spotrf(W.T, lower=1, overwrite_a=1, clean=0)
    if info != 0:
        return None
    rcond, info3 = lapack.spocon(L, anorm, uplo="L")
    rcond = float(rcond) if info3 == 0 else 0.0

    def apply(V):
        P = sym_matmat(K, V)
        if inv != 1.0:
            P *= inv
        P += shift * V
        return P

    def correction(r):
        sc = float(np.max(np.abs(r))) or 1.0
        return lapack.spotrs(L, (r / sc).astype(np.float32), lower=1)[0].astype(np.float64) * sc

    X = correction(np.asarray(R, dtype=np.float64))
    bound = np.sqrt(N) * anorm * _EPS
    prev = np.inf
    for steps in range(_MIXED_STEPS):
        P = apply(X)
        r = R - P
        rn = np.max(np.abs(r), axis=0)
        if not np.all(np.isfinite(rn)):
            return None
        if np.all(rn <= bound * np.max(np.abs(X), axis=0)):
            report = {"rcond": rcond, "expected_rel_error": _EPS / rcond if rcond > 0.0 else np.inf,
                      "refinement_steps": steps, "precision": "mixed"}
            return X, "cholesky", "", report, apply, P
        if not float(np.max(rn)) <= 0.5 * prev:
            return None
        prev = float(np.max(rn))
        X = X + correction(r)
    return None


def _applier(K, L, d_saved, shift):
    """``V -> A V``, ``A = K + shift I``: from the intact input ``K``, or (``K = None``: overwritten) from the strict
    triangle of the working array that ``potrf`` did not touch (the strict upper triangle of the Fortran array ``L``)
    and the saved diagonal ``d_saved``, by BLAS ``symm`` with the factor's diagonal swapped out and back."""
    N = L.shape[0]

    def apply(V):
        if K is not None:
            return K @ V + shift * V
        dL = np.array(np.diag(L))
        L[np.arange(N), np.arange(N)] = d_saved
        try:
            return blas.dsymm(1.0, L, V, lower=0)
        finally:
            L[np.arange(N), np.arange(N)] = dL

    return apply


def _refine(apply, L, R, X, max_steps: int = 2):
    """Up to ``max_steps`` steps of iterative refinement ``X <- X + A^-1 (R - A X)``, ``A = K + shift I`` applied by
    ``apply`` (:func:`_applier`), the solves by the factor ``L``.  A step is kept only if it lowers the residual.
    Returns ``(X, steps_kept)``.
    """
    res = R - apply(X)
    rn = float(np.max(np.abs(res)))
    kept = 0
    for _ in range(max_steps):
        if not rn > 0.0:
            break
        dX = lapack.dpotrs(L, res, lower=1)[0]
        Xn = X + dX
        res_n = R - apply(Xn)
        rn_n = float(np.max(np.abs(res_n)))
        if not rn_n < rn:
            break
        X, res, rn = Xn, res_n, rn_n
        kept += 1
    return X, kept


def _accuracy_check(report, tol, what, remedy="use a smaller C"):
    """Warn (:class:`IllConditionedWarning`) when the expected relative accuracy in ``report`` (what
    :func:`_shifted_solve` found) exceeds ``tol``.

    Returns ``(ok, message, info)``.
    """
    info = dict(report)
    acc = info.get("expected_rel_error", 0.0)
    if acc <= tol:
        return True, "", info
    rc = info.get("rcond", 0.0)
    cond = 1.0 / rc if rc > 0 else np.inf
    msg = (f"{what} is ill-conditioned: estimated condition number {cond:.3g} (LAPACK pocon, 1-norm), so the "
           f"expected relative accuracy of the solution is {acc:.3g} > tol = {tol:g} after "
           f"{info.get('refinement_steps', 0)} step(s) of iterative refinement; rescale the data or {remedy}")
    warnings.warn(msg, IllConditionedWarning, stacklevel=4)
    return False, msg, info


# --------------------------------------------------------------------------------------------------
# iterative path: conjugate gradients, several right-hand sides in lock step
# --------------------------------------------------------------------------------------------------
def _cg_block(apply_A, R: np.ndarray, tol: float, max_iter: int):
    """Conjugate gradients (Hestenes-Stiefel) on SPD ``A`` for each column of ``R`` in lock step.

    Per column j: ``x += a p``, ``r -= a A p``, ``a = r'r / p'Ap``, ``p = r + (r_new'r_new / r'r) p``;
    a column stops moving once ``||r_j|| <= tol ||R_j||``.  One call of ``apply_A`` on the n x k block
    per iteration, so a dense ``K`` is read once per iteration for all columns.

    Returns ``(X, n_iter, converged, rel_res, ok)``; ``ok`` is False if ``p'Ap <= 0`` was met
    (the operator is not positive definite).
    """
    X = np.zeros_like(R)
    Rr = R.copy()
    P = Rr.copy()
    rs = np.einsum("ij,ij->j", Rr, Rr)
    bnorm = np.sqrt(rs)
    bnorm[bnorm == 0.0] = 1.0
    goal = (tol * bnorm) ** 2
    active = rs > goal
    it = 0
    ok = True
    while np.any(active) and it < max_iter:
        AP = apply_A(P)
        pAp = np.einsum("ij,ij->j", P, AP)
        if np.any(pAp[active] <= 0.0):
            ok = False
            break
        a = np.where(active, rs / np.where(active, pAp, 1.0), 0.0)
        X += a * P
        Rr -= a * AP
        rs_new = np.einsum("ij,ij->j", Rr, Rr)
        beta = np.where(active, rs_new / np.where(rs > 0, rs, 1.0), 0.0)
        P *= beta
        P += Rr
        rs = np.where(active, rs_new, rs)
        active = rs > goal
        it += 1
    return X, it, not np.any(active), np.sqrt(rs) / bnorm, ok


def _matmat(K):
    if _is_operator(K):
        return K.matmat
    return lambda V: K @ V


# --------------------------------------------------------------------------------------------------
# LS-SVM
# --------------------------------------------------------------------------------------------------
def _ls_cg(K, R, tol, max_iter, solver_name, inv, shift):
    """CG on ``(K inv + shift I) S = R`` (the scaled Ktilde): ``(S, n_iter, converged, status, msg, gap, info,
    apply)``; ``gap`` is the largest relative residual. Refuses (``FloatingPointError``) a run whose products or
    iterates are not finite, which CG would otherwise count as converged."""
    tol = check_tol(tol)
    max_iter = 10 * R.shape[0] if max_iter is None else check_max_iter(max_iter)
    mm = _matmat(K)
    if inv != 1.0:
        e = int(np.frexp(inv)[1]) - 1   # inv = 2^e; (K (V 2^(e//2))) 2^(e - e//2) = (K/s) V exactly, and neither
        ia, ib = float(np.ldexp(1.0, e // 2)), float(np.ldexp(1.0, e - e // 2))  # factor over- nor underflows

        def apply(V):
            return mm(V * ia) * ib + V * shift  # (K/s + I/(sC)) V; K/s itself is not formed (N^2 memory)
    else:
        def apply(V):
            return mm(V) + V * shift        # Ktilde = K + I/C, matrix-free
    with np.errstate(over="ignore", invalid="ignore"):
        S, n_iter, converged, rel, ok = _cg_block(apply, R, tol, max_iter)
    if not (np.all(np.isfinite(rel)) and np.all(np.isfinite(S))):
        raise FloatingPointError(f"CG on the LS-SVM KKT system (2) did not stay finite: the products (K + I/C) p are "
                                 f"not finite in float64 (K applied in the scale {1.0 / inv:.3g}); check that K's products "
                                 "are finite, or rescale K (K / t with C t is the same problem, alpha times t)")
    gap = float(np.max(rel))
    if not ok:
        status, converged = "numerical_issue", False
        msg = "CG met p'(K + I/C)p <= 0: K + I/C is not positive definite; use method='cholesky' (LDL' fallback)"
        warnings.warn(msg, LinAlgWarning, stacklevel=4)
    elif not converged:
        status = "max_iter_reached"
        msg = f"CG stopped after {n_iter} iterations with relative residual {gap:.3g} > tol = {tol:g}"
        warn_not_converged(solver_name + " (CG)", n_iter, gap, tol, stacklevel=5)
    else:
        status, msg = "optimal", f"CG converged in {n_iter} iterations"
    return S, n_iter, converged, status, msg, gap, {"cg_relative_residual": rel}, apply


def _ls_svm_kkt(K, y, C, method, tol, max_iter, overwrite_K, solver_name, rows=None, big=None):
    """Solve (2) for ``(beta, b)``: 004 eq. (2), by the Schur complement of ``Ktilde`` (module docstring), in the
    scale of K (module docstring, "Scale": the system of ``K/s`` and ``sC``, whose ``b`` is the same and whose
    ``beta`` is ``s`` times this one).

    ``rows``, ``big``: the row sums of ``|K|`` and ``max|K_ij|`` from :func:`_check_K_scan`, if the caller has them.
    Returns ``(beta, b, n_iter, converged, status, msg, gap, used, info, apply, scaled)``: ``beta`` in the units of
    K; ``apply(V) = (K/s + I/(sC)) V`` and ``scaled = (s, rows of |K/s|, 1/(sC), kbeta)``, for the certificate
    (``kbeta``: ``(Ktilde beta, its error bound)`` in the scaled units where the solve computed it, else None)."""
    N = K.shape[0]
    R = np.empty((N, 2), order="F")
    R[:, 0] = y                          # Ktilde nu  = y
    R[:, 1] = 1.0                        # Ktilde eta = 1
    s, inv, rows_s = _scaled_rows(K, rows, big, int(np.frexp(1.0 / C)[1]), probe=R)
    shift = inv / C                      # 1/(sC): exact (a power of 2), never above 2
    info = {}
    if method == "cholesky":
        S, used, msg, report, apply, product = _shifted_solve_applied(K, shift, R, overwrite_K, rows_s, inv)
        n_iter, converged, status, gap = 1, True, ("optimal" if used == "cholesky" else "numerical_issue"), float("nan")
        if used == "cholesky":
            ok, msg, info = _accuracy_check(report, 1e-10 if tol is None else check_tol(tol),
                                            f"Ktilde = K + I/C (C = {C:g})")
            if not ok:
                status = "numerical_issue"
    else:
        S, n_iter, converged, status, msg, gap, info, apply = _ls_cg(K, R, tol, max_iter, solver_name, inv, shift)
        used, product = "cg", None
    nu, eta = S[:, 0], S[:, 1]
    s_eta = float(np.sum(eta))
    if not np.isfinite(s_eta) or abs(s_eta) <= N * _EPS * float(np.sum(np.abs(eta))):  # relative: no absolute floor
        raise np.linalg.LinAlgError(
            "the LS-SVM KKT system (2) is singular: 1' Ktilde^-1 1 = 0, so b is not determined"
        )
    b = float(np.sum(nu)) / s_eta        # b = 1'nu / 1'eta (the same in every scale)
    beta = (nu - b * eta) * inv          # beta = nu - b eta, back in the units of K
    kbeta = None if product is None else _product_of_beta(product, S, b, rows_s, shift)
    return beta, b, n_iter, converged, status, msg, gap, used, info, apply, (s, rows_s, shift, kbeta)


def _product_of_beta(P, S, b, rows, shift):
    """``(Ktilde beta, bound on its error per entry)`` in the scaled units, from the refinement's last product
    ``P = Ktilde [nu, eta]`` (:func:`_mixed_solve`) instead of one more pass over K: ``Ktilde beta = P_0 - b P_1`` for
    ``beta = nu - b eta`` (the block elimination of 004 eq. (2), module docstring). The bound adds the rounding of
    ``P`` (:func:`_matvec_err` for each column, weighted by
    ``|b|``), of ``beta`` itself (``2u (|nu| + |b| |eta|)`` per entry, times the row sums of ``|Ktilde|``) and of the
    combination (``2u (|P_0| + |b| |P_1|)``)."""
    nu, eta = S[:, 0], S[:, 1]
    N = nu.shape[0]
    u = UNIT_ROUNDOFF
    width = (float(np.max(rows)) if rows is not None else 0.0) + shift
    err = (N * u * width * (float(np.max(np.abs(nu))) + abs(b) * float(np.max(np.abs(eta))))
           + 2.0 * u * width * float(np.max(np.abs(nu) + abs(b) * np.abs(eta)))
           + 2.0 * u * float(np.max(np.abs(P[:, 0]) + abs(b) * np.abs(P[:, 1]))))
    return P[:, 0] - b * P[:, 1], err


def _matvec_err(apply, c, rows, shift):
    """A bound on the rounding of ``Ktilde c`` per entry: ``N u max_t sum_j |Ktilde_tj| |c_j|``, from the row sums of
    ``|K|`` for a dense K; for a LinearOperator K, ``N u max(Ktilde |c|)`` (a bound for a K with non-negative
    entries, e.g. RBF; an estimate otherwise)."""
    N = c.shape[0]
    if rows is not None:
        return N * UNIT_ROUNDOFF * (float(np.max(rows)) + shift) * float(np.max(np.abs(c), initial=0.0))
    return N * UNIT_ROUNDOFF * float(np.max(np.abs(apply(np.abs(c)[:, None])), initial=0.0))


def _ls_certificate(apply, y, C, alpha, beta, b, task, rows, *, shift=None, kbeta=None):
    """The certified duality gap of an LS-SVM solution (000 eqs. (1)-(2); 004 eq. (1)), from one product
    ``Ktilde beta``: the box-dual machinery of :func:`svmref.solvers._smo_common.duality_gap` with no bounds, shift
    ``1/C``, signs ``y`` and ``p = -1`` (classification) or signs 1 and ``p = -y`` (regression). The primal point is
    ``W = sum_i beta_i Phi_i``, the exact best ``b`` (the mean of ``y_i - W.Phi_i``) and ``xi`` from the equality
    constraints; ``P + D = (C/2) sum_i (xi_i - alpha_i / C)^2`` (the Fenchel-Young excesses), so
    ``0 <= D - D* <= gap``. Returns ``(objective, gap, floor, scale, gap_at_b, b_cert)``; ``objective`` is the dual
    ``D`` evaluated at ``alpha`` (not the identity that holds at the exact solution only). ``shift``: ``1/C`` unless
    given (the scaled system's ``1/(sC)``, which ``1/C'`` would round to 0 where ``sC`` overflows)."""
    N = y.shape[0]
    shift = 1.0 / C if shift is None else shift
    s = y if task == "classification" else np.ones(N)
    p = -np.ones(N) if task == "classification" else -y
    if kbeta is None:
        Kc, err = apply(beta[:, None])[:, 0], _matvec_err(apply, beta, rows, shift)
    else:
        Kc, err = kbeta
    F = Kc + s * p                      # F_t = s_t (Q alpha + p)_t, with s_t alpha_t = beta_t
    lo, up = np.full(N, -np.inf), np.full(N, np.inf)
    gap, b_cert, _, a, fy = duality_gap(F, alpha, s, lo, up, shift)
    gap_at_b = float(np.sum(gap_terms(F, alpha, s, lo, up, shift, b)[2])) - b * float(s @ alpha)
    objective = 0.5 * float(alpha @ (s * F + p))
    floor = gap_floor(F, alpha, p, a, b_cert, fy, shift, err)
    return objective, gap, floor, max(0.0, -objective - floor), gap_at_b, b_cert


def _label(status, msg, gap, floor, scale, gap_tol, name, rule, regime):
    """``(status, message)``: an ``"optimal"`` solve whose certificate does not hold becomes ``"suboptimal"``, with a
    :class:`~svmref.solvers._result.SuboptimalWarning` (stacklevel: the caller of the public solver). ``regime``
    names the one number the problem's scale depends on (``C max|K|``; module docstring, "Scale") and the fix: the
    message where the floor of the gap is not below ``|optimum|`` (no point can be certified at all)."""
    if status != "optimal":
        return status, msg
    rel, rel_floor = relative_gap(gap, floor, scale)
    if certified(gap, floor, scale, gap_tol):
        return status, (msg + "; " if msg else "") + f"certified relative duality gap {rel:.3g} <= gap_tol {gap_tol:g}"
    if not np.isfinite(rel_floor):
        text = (f"{name}: {rule}, but no duality gap can be certified here: the floating-point floor of the "
                f"certificate is not below the size of the optimum it is relative to (status='suboptimal'). {regime}")
        warnings.warn(text, SuboptimalWarning, stacklevel=4)
        return "suboptimal", text
    advice = "The system is ill-conditioned for this C: a smaller C, or method='cholesky' with iterative refinement"
    return "suboptimal", warn_suboptimal(name, rule, rel, rel_floor, gap_tol, advice, stacklevel=5)


def _regime(name, big, value):
    """The sentence of :func:`_label` for an uncertifiable solve: the scale of K and the one number the problem
    depends on (module docstring, "Scale")."""
    big = f"max|K_ij| = {big:.3g}" if big is not None else "K is a LinearOperator (its largest entry not known here)"
    if name == "rls":
        return (f"The RLS with kernel s K and gamma is the RLS with K and gamma/s (c scaled by 1/s; 001 eq. (8)), so "
                f"only max|K| / (m gamma) matters: here {big} and gamma = {value:g}. Where it is this large the "
                "residuals y - K c lie below the rounding of K c; raise gamma or rescale K (divide it by a constant).")
    return (f"The LS-SVM with kernel s K and C is the LS-SVM with K and s C (alpha scaled by 1/s; 000 eqs. (1)-(2), "
            f"(7)), so only C max|K| matters: here {big} and C = {value:g}. Where it is this large the slacks "
            "alpha_i / C lie below the rounding of K alpha; lower C or rescale K (divide it by a constant).")


def _ls_svm_common(K, y, C, method, tol, max_iter, overwrite_K, task, gap_tol):
    t0 = time.perf_counter()
    K, rows, big = _check_K_scan(K)
    N = K.shape[0]
    y = check_labels(y, N) if task == "classification" else check_targets(y, N)
    C = _check_C(C)
    gap_tol = check_positive(gap_tol, "gap_tol")
    method = _check_method(method, N, K)
    name = "ls_svm" if task == "classification" else "ls_svm_regression"
    beta, b, n_iter, conv, status, msg, gap, used, info, apply, (s, rows_s, shift, kbeta) = _ls_svm_kkt(
        K, y, C, method, tol, max_iter, overwrite_K, name, rows, big)
    alpha = y * beta if task == "classification" else beta   # alpha_i = y_i beta_i (module docstring)
    # the certificate of the returned beta, in the scale of K/s (module docstring, "Scale"): D = D_s / s
    cert = _ls_certificate(apply, y, C, y * (beta * s) if task == "classification" else beta * s, beta * s, b, task,
                           rows_s, shift=shift, kbeta=kbeta)
    objective, dgap, floor, scale, gap_at_b = (v / s for v in cert[:5])
    status, msg = _label(status, msg or f"solved the KKT system (2) by {used}", cert[1], cert[2], cert[3], gap_tol,
                         name, f"the KKT system (2) was solved by {used}", _regime(name, big, C))
    rel, rel_floor = relative_gap(cert[1], cert[2], cert[3])
    info = dict(info, duality_gap_abs=dgap, gap_floor_abs=floor, gap_scale=scale, b_certified=cert[5],
                duality_gap_at_b=relative_gap(cert[4], cert[2], cert[3])[0], kernel_scale=s)
    return LinearResult(
        alpha=alpha, b=b, objective=objective, n_iter=n_iter, converged=conv, status=status, message=msg,
        time=time.perf_counter() - t0, kkt_gap=gap, info=info, task=task, coef=beta, method=used,
        duality_gap=rel, gap_floor=rel_floor, gap_tol=gap_tol,
    )


def ls_svm(K, y, C, *, method: str = "cholesky", tol: float = 1e-10, max_iter: int | None = None,
           overwrite_K: bool = False, gap_tol: float = GAP_TOL) -> LinearResult:
    r"""LS-SVM classifier by its KKT system (000, eqs. (1), (2), (7)).

    Dual (000, eq. (2))::

        min_alpha 1/2 sum_ij alpha_i alpha_j y_i y_j Ktilde_ij - sum_i alpha_i  s.t. sum_i alpha_i y_i = 0,

    ``Ktilde = K + I/C``; its KKT conditions (000 eq. (7)) are linear, solved as (2) of the module
    docstring with ``beta = y * alpha``.

    Parameters
    ----------
    K : (N, N) symmetric array, or a LinearOperator with ``method="cg"``
    y : (N,) labels in {-1, +1}
    C : float > 0
    method : "cholesky" (default), "cg" or "auto"
    tol : relative residual ``||r|| / ||rhs||`` at which CG stops (``method="cg"``); on the Cholesky path the
        expected relative accuracy ``eps cond_1(Ktilde)`` above which :class:`IllConditionedWarning` is issued
        and ``status="numerical_issue"`` (module docstring)
    max_iter : CG iteration limit (default ``10 N``)
    overwrite_K : if True, ``K`` is overwritten by the Cholesky factor (saves one N x N copy)
    gap_tol : ``status="optimal"`` needs the certified relative duality gap with its floor within it (default
        :data:`GAP_TOL`); else ``"suboptimal"`` and a :class:`~svmref.solvers._result.SuboptimalWarning`

    Returns
    -------
    LinearResult
        ``alpha`` with ``f(x) = sum_i alpha_i y_i k(x_i, x) + b``; ``objective`` = the dual (2) evaluated at
        ``alpha`` from one product ``Ktilde (y * alpha)`` (minimisation sign; ``-1/2 sum alpha_i`` at the exact
        solution), so the primal optimum is ``-objective``.

    The certificate (``duality_gap``, ``gap_floor``; :mod:`svmref.solvers._result`): the primal (000 eq. (1)) at
    ``W = sum_i alpha_i y_i Phi_i``, the exact best ``b`` (the mean of ``y_i - W.Phi_i``) and the slacks of its
    equality constraints, against the dual (2) at ``alpha``: weak duality bounds ``D(alpha) - D*`` and the
    primal's excess by ``gap = (C/2) sum_i (xi_i - alpha_i/C)^2`` (derivation: ``docs/smo.md``, "Labels"), relative
    to ``-D(alpha) <= |D*|``. It is computed from the residual with the original K (one more O(N^2) product,
    against the O(N^3) factorisation), so it holds whatever the condition estimate says; the expected accuracy
    ``eps cond_1`` stays the warning of ``tol``.
    """
    return _ls_svm_common(K, y, C, method, tol, max_iter, overwrite_K, "classification", gap_tol)


def ls_svm_regression(K, y, C, *, method: str = "cholesky", tol: float = 1e-10, max_iter: int | None = None,
                      overwrite_K: bool = False, gap_tol: float = GAP_TOL) -> LinearResult:
    r"""LS-SVM regression by the KKT system (004, eqs. (1)-(2); 002).

    Primal (004, eq. (1)): ``min 1/2||W||^2 + C/2 sum xi_i^2`` s.t. ``W.Phi(x_i) + b = y_i - xi_i``.
    System (004, eq. (2)): ``[0 1'; 1 Ktilde][b; alpha] = [0; y]``, ``Ktilde = K + I/C``; its dual,
    ``min 1/2 alpha'Ktilde alpha - y'alpha`` s.t. ``1'alpha = 0``, is ``objective``.

    ``alpha`` is in the convention ``f(x) = sum_i alpha_i k(x_i, x) + b``.  Parameters as :func:`ls_svm`
    (``y`` real targets).
    """
    return _ls_svm_common(K, y, C, method, tol, max_iter, overwrite_K, "regression", gap_tol)


# --------------------------------------------------------------------------------------------------
# RLS
# --------------------------------------------------------------------------------------------------
def _rls_certificate(apply, y, gamma, c, rows):
    """The certified duality gap of an RLS solution ``c`` (001 eq. (7); its dual, derived in
    ``docs/formulations/rls.md``: ``min (m/4)||beta||^2 + beta'K beta / (4 gamma) - y'beta``) at the dual point
    ``beta = 2 xi / m``, ``xi = y - K c`` (stationarity in ``xi``): with ``d = c - xi / (m gamma)``,

        P(c) + D(beta) = gamma d'K d >= 0,

    so ``0 <= P(c) - p* <= gap`` (two products with the original K: ``K c`` and ``K d``). Returns
    ``(P, gap, floor, scale)``; ``scale = P - gap - floor <= p*``."""
    m = y.shape[0]
    shift = m * gamma
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow (K c or K d) is an infinite gap: not certified
        Kc = apply(c[:, None])[:, 0] - shift * c
        xi = y - Kc
        d = c - xi / shift
        Kd = apply(d[:, None])[:, 0] - shift * d
        P = float(xi @ xi) / m + gamma * float(c @ Kc)
        gap = gamma * float(d @ Kd)
        e_c, e_d = _matvec_err(apply, c, rows, shift), _matvec_err(apply, d, rows, shift)
        floor = ((m + 4) * UNIT_ROUNDOFF * (float(xi @ xi) / m + gamma * float(np.abs(c) @ np.abs(Kc))
                                             + gamma * float(np.abs(d) @ np.abs(Kd)))
                 + e_c * (2.0 * float(np.sum(np.abs(xi))) / m + gamma * float(np.sum(np.abs(c)))
                          + 2.0 * float(np.sum(np.abs(Kd))) / m) + gamma * e_d * float(np.sum(np.abs(d))))
    return P, gap, floor, max(0.0, P - gap - floor)


def rls(K, y, gamma, *, tol: float = 1e-10, overwrite_K: bool = False, gap_tol: float = GAP_TOL) -> RLSResult:
    r"""Regularized least squares (001, eqs. (7)-(9)).

    Functional (001, eq. (7)): ``min_f (1/m) sum_i (y_i - f(x_i))^2 + gamma ||f||_K^2``; its minimiser
    is ``f(x) = sum_i c_i K(x, x_i)`` (001, eq. (9)) with (001, eq. (8))::

        (m gamma I + K) c = y,

    solved by Cholesky (same path and fallback as :func:`ls_svm`).  No bias term, as the paper has it.

    ``objective`` is the value of (7) evaluated at ``c`` (one product ``K c``; at the exact solution of (8) it is
    ``gamma y'c``: ``K c = y - m gamma c`` gives ``(1/m)||y - Kc||^2 = m gamma^2 ||c||^2`` and
    ``gamma c'Kc = gamma (c'y - m gamma ||c||^2)``).

    ``tol``: the expected relative accuracy ``eps cond_1(m gamma I + K)`` above which an
    :class:`IllConditionedWarning` is issued and ``status="numerical_issue"`` (module docstring).
    ``gap_tol``: ``status="optimal"`` needs the certified relative duality gap (:func:`_rls_certificate`: weak
    duality against the RLS dual, relative to a certified lower bound on the optimum) with its floor within it.
    """
    t0 = time.perf_counter()
    K, rows, big = _check_K_scan(K)
    if _is_operator(K):
        raise ValueError("rls needs K as a dense array")
    m = K.shape[0]
    y = check_targets(y, m)
    gamma = check_positive(gamma, "gamma")
    tol = check_tol(tol)
    gap_tol = check_positive(gap_tol, "gap_tol")
    R = np.asfortranarray(y[:, None])
    # in the scale of K (module docstring, "Scale"): K/s and gamma/s, c = c_s / s, the same objective (7)
    s, inv, rows_s = _scaled_rows(K, rows, big, int(np.frexp(gamma)[1] + np.frexp(float(m))[1]))
    gamma_s = gamma * inv
    S, used, msg, report, apply, _ = _shifted_solve_applied(K, m * gamma_s, R, overwrite_K, rows_s, inv)
    status = "optimal" if used == "cholesky" else "numerical_issue"
    info = {}
    if used == "cholesky":
        ok, msg, info = _accuracy_check(report, tol, f"m gamma I + K (gamma = {gamma:g})", "use a larger gamma")
        if not ok:
            status = "numerical_issue"
    c = S[:, 0] * inv
    objective, dgap, floor, scale = _rls_certificate(apply, y, gamma_s, c * s, rows_s)  # of the returned c
    status, msg = _label(status, msg or f"solved (m gamma I + K) c = y (001 eq. (8)) by {used}", dgap, floor, scale,
                         gap_tol, "rls", f"(m gamma I + K) c = y was solved by {used}", _regime("rls", big, gamma))
    rel, rel_floor = relative_gap(dgap, floor, scale)
    info = dict(info, duality_gap_abs=dgap, gap_floor_abs=floor, gap_scale=scale, kernel_scale=s)
    return RLSResult(
        alpha=None, b=None, objective=objective, n_iter=1, converged=True, status=status, message=msg,
        time=time.perf_counter() - t0, c=c, method=used, info=info, duality_gap=rel, gap_floor=rel_floor,
        gap_tol=gap_tol,
    )


# --------------------------------------------------------------------------------------------------
# exact leave-one-out of the LS-SVM
# --------------------------------------------------------------------------------------------------
def _loo_weights(v, n: int, C: float) -> np.ndarray:
    """The diagonal ``1 / (C v_i)`` of the weighted system (all ``1 / C`` without weights)."""
    return np.full(n, 1.0 / C) if v is None else 1.0 / (C * check_weights(v, n, "v"))


def _loo_inverse_parts(A: np.ndarray, y: np.ndarray):
    """``(alpha, b, diag(H^-1) over the alpha block)`` of ``H = [0 1'; 1 A]``: by Cholesky of ``A`` (``A^-1`` through
    the inverse factor) and the Schur complement of the bias, or, where ``A`` is not positive definite (an
    indefinite kernel), by an LU inverse of ``H`` itself."""
    n = y.shape[0]
    try:
        L, info = lapack.dpotrf(A, lower=1, clean=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"dpotrf: leading minor {info} is not positive")
        Li, info = lapack.dtrtri(L, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"dtrtri: {info}")
        ones = np.ones(n)
        u = Li.T @ (Li @ ones)                      # A^-1 1
        g = Li.T @ (Li @ y)                         # A^-1 y
        s = float(ones @ u)
        b = float(ones @ g) / s
        alpha = g - b * u
        diag = np.einsum("ij,ij->j", Li, Li) - u * u / s
        return alpha, b, diag
    except np.linalg.LinAlgError:
        H = np.zeros((n + 1, n + 1))
        H[0, 1:] = H[1:, 0] = 1.0
        H[1:, 1:] = A
        Hi = np.linalg.inv(H)
        return Hi[1:, 1:] @ y, float(Hi[0, 1:] @ y), np.diag(Hi)[1:].copy()


def loo_residuals(K, y, C, task: str = "regression", v=None, *, return_solution: bool = False):
    r"""The LS-SVM's leave-one-out residuals ``r_i = y_i - f^(-i)(x_i)`` in closed form, from one factorisation.

    ``f^(-i)`` is the LS-SVM trained on all patterns but ``i`` (the regression system of 004 eq. (2); 002's KKT
    system ``[0 1'; 1 K + I/gamma][b; alpha] = [0; y]``, ``gamma = C``), and

        r_i = alpha_i / [H^-1]_ii,     H = [0 1'; 1 K + D],   D = diag(1 / (C v_i)),

    with ``alpha`` the solution on all N patterns and ``[H^-1]_ii`` the diagonal of the inverse over the alpha block
    (Cawley & Talbot, "Fast exact leave-one-out cross-validation of sparse least-squares support vector machines",
    Neural Networks 17(10), 2004; the same identity for the weighted system of Suykens, De Brabanter, Lukas &
    Vandewalle, Neurocomputing 48, 2002, with weights ``v``). Why: the solution ``z = H^-1 [0; y]`` is linear in
    ``y``. Change ``y_i`` alone to the value ``y'_i`` at which ``alpha_i`` becomes 0: ``alpha_i + [H^-1]_ii (y'_i -
    y_i) = 0``. With ``alpha_i = 0`` the other equations are the system without pattern ``i``, so the model is
    ``f^(-i)``, and equation ``i`` reads ``f^(-i)(x_i) + d_i alpha_i = f^(-i)(x_i) = y'_i``; hence
    ``y_i - f^(-i)(x_i) = y_i - y'_i = alpha_i / [H^-1]_ii``.

    Parameters
    ----------
    K : ndarray (N, N)
        The kernel matrix.
    y : ndarray (N,)
        Targets: real (``task="regression"``) or labels ``+-1`` (``task="classification"``: the LS-SVM classifier
        of 000 eq. (2) is this regression on ``+-1`` targets, ``alpha_reg = y * alpha``, since ``y_i^2 = 1``).
    C : float > 0
        The penalty of the squared errors.
    task : {"regression", "classification"}
    v : ndarray (N,) of floats > 0, optional
        Weights of the weighted LS-SVM (``C v_i`` is pattern ``i``'s penalty); None: all 1.

    return_solution : bool, default=False
        Also return the solution on all N patterns, from the same factorisation.

    Returns
    -------
    ndarray (N,), or ``(residuals, alpha, b)`` with ``return_solution``
        ``r_i = y_i - f^(-i)(x_i)``; ``alpha`` and ``b`` in the regression convention
        ``f(x) = sum_i alpha_i k(x_i, x) + b``. The leave-one-out prediction is ``y - r``; for classification the
        leave-one-out error is ``mean(sign(y - r) != y)``, and the PRESS statistic is ``sum(r**2)``.

    Cost: one Cholesky factorisation of ``K + D`` and one triangular inverse, ``O(N^3)``, instead of N refits,
    ``O(N^4)``. An indefinite ``K + D`` (e.g. 002's MLP kernel) is handled by an LU inverse of ``H``.
    """
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification'; got {task!r}")
    K = _check_K(K)
    n = K.shape[0]
    y = check_labels(y, n) if task == "classification" else check_targets(y, n)
    C = _check_C(C)
    A = np.array(K, dtype=float, copy=True)
    A[np.diag_indices(n)] += _loo_weights(v, n, C)
    alpha, b, diag = _loo_inverse_parts(A, y)
    return (alpha / diag, alpha, b) if return_solution else alpha / diag
