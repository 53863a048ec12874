"""Input checks shared by ``formulations``, ``solvers`` and ``verify``.

Every check raises :class:`ValueError` (or :class:`TypeError` for a wrong
kind of object) whose message names the parameter and says what was
expected, so that bad input never fails silently or deep inside a solver.
This module imports numpy only: it is safe for ``solvers`` to import.
"""
from __future__ import annotations

import numbers

import numpy as np

from ._thresholds import PSD_RTOL, SYM_RTOL

__all__ = [
    "asymmetric",
    "check_gram",
    "check_X",
    "check_labels",
    "check_targets",
    "check_positive",
    "check_scaled",
    "check_mu",
    "check_weights",
    "check_tol",
    "check_max_iter",
    "check_kernel_memory",
    "is_psd",
    "NotConvexError",
]


class NotConvexError(ValueError):
    """The kernel matrix is not positive semidefinite, so the problem is not convex: the cvxpy
    reference does not apply and an SMO solver refuses it by default (e.g. the MLP kernel of 002
    for some k, theta). One class for the whole package: ``svmref.formulations.NotConvexError``
    and ``svmref.solvers.NotConvexError`` are this class."""

#: Largest dense kernel matrix (bytes) we agree to build; above this a clear
#: error is raised instead of an opaque MemoryError or an OOM kill.
MAX_KERNEL_BYTES = 8 * 1024**3


def _as_float_array(a, name: str, ndim: int) -> np.ndarray:
    if hasattr(a, "toarray") and not isinstance(a, np.ndarray):
        raise TypeError(
            f"{name} must be a dense array; got a sparse matrix ({type(a).__name__}). "
            f"Convert it with {name}.toarray() first."
        )
    if np.iscomplexobj(a):
        raise TypeError(f"{name} must be real; got complex values (dtype {np.asarray(a).dtype}): the papers' problems "
                        "are over the reals, and dropping the imaginary part would solve another problem")
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; could not convert it to float: {exc}") from None
    if arr.ndim != ndim:
        shape = "a vector (1-D)" if ndim == 1 else "a matrix (2-D)"
        raise ValueError(f"{name} must be {shape}; got an array of shape {arr.shape}")
    if arr.size == 0:
        if ndim == 2 and arr.shape[0] > 0:
            raise ValueError(f"{name} has no features (shape {arr.shape}: {arr.shape[0]} patterns, 0 features); at "
                             "least one feature is needed")
        raise ValueError(f"{name} is empty (shape {arr.shape}); at least one pattern is needed")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at index {tuple(int(i) for i in bad)}); "
            "all entries must be finite"
        )
    return arr


def asymmetric(max_asym: float, max_abs: float, rtol: float = SYM_RTOL) -> bool:
    """The symmetry test of :func:`check_gram`: ``max|K - K^T| > rtol * max(1, max|K|)``.

    ``max_asym`` is ``max_ij |K_ij - K_ji|`` and ``max_abs`` is ``max_ij |K_ij|``, however they were computed
    (numpy here, the compiled scans of ``solvers/_qmatrix.py`` there); ``rtol`` defaults to
    :data:`svmref._thresholds.SYM_RTOL`.
    """
    return bool(max_asym > rtol * max(1.0, max_abs))


def _is_dense_square(K) -> bool:
    return (isinstance(K, np.ndarray) and K.dtype == np.float64 and K.ndim == 2 and K.shape[0] == K.shape[1]
            and K.size > 0 and K.flags.c_contiguous)


def check_gram(K, name: str = "K", *, symmetric: bool = True, rtol: float = SYM_RTOL, fast=None) -> np.ndarray:
    """Return ``K`` as a C-contiguous float64 square matrix, or raise: the one Gram check of the package.

    Checks: 2-D, square, non-empty, finite and (when ``symmetric``) ``max|K - K^T| <= rtol * max(1, max|K|)``
    (:func:`asymmetric`; ``rtol`` defaults to :data:`svmref._thresholds.SYM_RTOL`).

    ``fast`` is an optional faster exact implementation of the finiteness and symmetry tests for a float64
    C-contiguous square ``K``, ``fast(K, rtol) -> (flat index of a non-finite entry or -1, asymmetric)``
    (the compiled scans and the sketch of ``solvers/_qmatrix.py``, which need no ``N x N`` temporary). What
    it accepts is returned as it is, without a copy; anything it flags goes through the numpy test below,
    which raises with the message (the first non-finite entry in row-major order, the size of the
    asymmetry), so the verdicts and the messages do not depend on ``fast``.
    """
    if fast is not None and symmetric:
        A = K if _is_dense_square(K) else _as_square(K, name)
        bad, asym = fast(A, rtol)
        if bad < 0 and not asym:
            return A
        K = A
    K = _as_square(K, name)
    if symmetric:
        with np.errstate(over="ignore"):  # entries near the float64 limit: the difference is inf, and refused
            asym = float(np.max(np.abs(K - K.T)))
        if asymmetric(asym, float(np.max(np.abs(K))), rtol):
            raise ValueError(
                f"{name} must be symmetric; max |{name} - {name}^T| = {asym:.3g} "
                f"exceeds {rtol:g} x max|{name}|"
            )
    return K


def _as_square(K, name: str) -> np.ndarray:
    K = _as_float_array(K, name, 2)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be square (a Gram matrix N x N); got shape {K.shape}")
    return np.ascontiguousarray(K)


def check_X(X, name: str = "X") -> np.ndarray:
    """Return the data matrix as a 2-D finite float64 array (N patterns x n features)."""
    return np.ascontiguousarray(_as_float_array(X, name, 2))


def check_labels(y, n: int | None = None, name: str = "y") -> np.ndarray:
    """Return class labels as float64 in {-1, +1}; both classes must occur.

    ``n`` is the number of patterns the labels must match (rows of K or X).
    """
    y = _as_float_array(y, name, 1)
    if n is not None and y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} labels but the data have {n} patterns; lengths must match")
    bad = ~np.isin(y, (-1.0, 1.0))
    if np.any(bad):
        vals = np.unique(y[bad])[:5]
        raise ValueError(
            f"{name} must contain class labels in {{-1, +1}}; found {vals.tolist()}. "
            "Map your classes to -1 and +1 first."
        )
    if np.all(y == y[0]):
        raise ValueError(f"{name} contains only the class {int(y[0]):+d}; both classes -1 and +1 are needed")
    return y


def check_targets(y, n: int | None = None, name: str = "y") -> np.ndarray:
    """Return regression targets as a finite float64 vector of length ``n``."""
    y = _as_float_array(y, name, 1)
    if n is not None and y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} targets but the data have {n} patterns; lengths must match")
    return y


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float, or raise unless it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number > 0; got {value!r} ({type(value).__name__})")
    v = float(value)
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    with np.errstate(over="ignore", divide="ignore"):
        inv = 1.0 / v
    if not np.isfinite(inv):
        raise ValueError(
            f"{name} = {value!r} is too small: 1/{name} overflows to infinity in float64 "
            f"(the smallest usable value is about {1.0 / np.finfo(float).max:.3g})"
        )
    return v


def check_nonnegative(value, name: str, what: str = "") -> float:
    """Return ``value`` as a float, or raise unless it is a finite number >= 0 (``what``: a gloss for the message,
    e.g. "width of the insensitive tube")."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number >= 0; got {value!r}")
    v = float(value)
    if not np.isfinite(v) or v < 0.0:
        gloss = f" ({what})" if what else ""
        raise ValueError(f"{name}{gloss} must be a finite number >= 0; got {value!r}")
    return v


def check_cache_size(cache_size, name: str = "cache_size") -> float:
    """Return a cache size in megabytes as a float, or raise unless it is a finite number > 0 (as
    ``sklearn.svm.SVC(cache_size=...)``)."""
    if isinstance(cache_size, bool) or not isinstance(cache_size, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number of megabytes > 0; got {cache_size!r}")
    v = float(cache_size)
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a finite number of megabytes > 0; got {cache_size!r}")
    return v


def check_scaled(value, name: str, scale: float, what: str = "max|K|") -> float:
    """A positive hyperparameter that multiplies a matrix: ``value * scale`` must neither overflow nor
    underflow to 0 (``scale`` is e.g. ``N * max|K|``, the size of ``K alpha`` for ``alpha`` of order 1).

    This refuses, naming the parameter, a ``C`` (or ``gamma``, ``zeta``) with which ``C K`` or ``1/C``
    cannot be represented, instead of failing later inside a solver with a message about a matrix the
    user never passed (:func:`check_positive` already refuses a value whose reciprocal overflows).
    """
    v = check_positive(value, name)
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0.0:
        return v
    with np.errstate(over="ignore", under="ignore"):
        prod = v * scale
    if not np.isfinite(prod):
        raise ValueError(
            f"{name} = {value!r} is too large: {name} x {what} = {name} x {scale:.3g} overflows float64; "
            f"use {name} <= {np.finfo(float).max / scale:.3g} or rescale the data"
        )
    if prod < np.finfo(float).tiny:
        raise ValueError(
            f"{name} = {value!r} is too small: {name} x {what} = {name} x {scale:.3g} underflows "
            f"(below {np.finfo(float).tiny:.3g}); use {name} >= {np.finfo(float).tiny / scale:.3g} or rescale the data"
        )
    return v


def check_mu(mu, name: str = "mu") -> float:
    """Selectivity of the support features machine (003, eq. (4)): 0 <= mu < 1."""
    if isinstance(mu, bool) or not isinstance(mu, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number in [0, 1); got {mu!r}")
    v = float(mu)
    if not np.isfinite(v) or v < 0.0 or v >= 1.0:
        raise ValueError(f"{name} (selectivity) must lie in [0, 1); got {mu!r}")
    return v


def check_weights(lam, n: int | None = None, name: str = "lam") -> np.ndarray:
    """ISLS weights lambda_i (004, eq. (3)): a vector of finite numbers > 0."""
    lam = _as_float_array(lam, name, 1)
    if n is not None and lam.shape[0] != n:
        raise ValueError(f"{name} has {lam.shape[0]} weights but the data have {n} patterns; lengths must match")
    if np.any(lam <= 0.0):
        i = int(np.argmax(lam <= 0.0))
        raise ValueError(f"{name} must be positive; {name}[{i}] = {lam[i]!r}")
    return lam


def check_tol(tol, name: str = "tol") -> float:
    """A stopping tolerance: a finite number > 0."""
    return check_positive(tol, name)


def check_max_iter(max_iter, name: str = "max_iter") -> int:
    """An iteration limit: an integer >= 1."""
    if isinstance(max_iter, bool) or not isinstance(max_iter, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer >= 1; got {max_iter!r}")
    if int(max_iter) < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {max_iter!r}")
    return int(max_iter)


def check_kernel_memory(n_rows: int, n_cols: int | None = None, *, limit: int | None = None) -> None:
    """Raise a clear :class:`MemoryError` if a dense float64 kernel of this size would not fit."""
    n_cols = n_rows if n_cols is None else n_cols
    limit = MAX_KERNEL_BYTES if limit is None else int(limit)
    need = 8 * int(n_rows) * int(n_cols)
    if need > limit:
        raise MemoryError(
            f"a dense {n_rows} x {n_cols} kernel matrix needs {need / 1024**3:.1f} GiB, "
            f"above the limit of {limit / 1024**3:.1f} GiB; use fewer patterns"
        )


def is_psd(K: np.ndarray, rtol: float = PSD_RTOL) -> tuple[bool, float]:
    """Return ``(psd, lambda_min)``: whether the symmetric ``K`` is PSD, ``lambda_min >= -rtol * max(1, max|eig|)``.

    ``rtol`` defaults to :data:`svmref._thresholds.PSD_RTOL`, the reference's threshold.
    """
    w = np.linalg.eigvalsh(0.5 * (K + K.T))
    scale = max(1.0, float(np.max(np.abs(w))))
    return bool(w[0] >= -rtol * scale), float(w[0])
