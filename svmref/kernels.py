"""Kernel functions of the papers, as dense Gram matrices.

Conventions (each cited to the paper that uses it):

* linear      ``k(x, z) = x^T z``                          (000 §4 Fig. 1; 002 "Kernel function K")
* polynomial  ``k(x, z) = (1 + x^T z / c)^d``              (002, "Polynomial kernel of degree d")
* RBF         ``k(x, z) = exp(-||x - z||^2 / sigma^2)``    (000 §4; 002; 004 §4)
* Gaussian of 001 ``k(x, z) = exp(-||x - z||^2 / (2 sigma^2))`` (001 §3): note the factor 2;
  use :func:`gaussian_kernel` for 001's experiments, or ``rbf_kernel(sigma=sqrt(2)*s)``.
* MLP         ``k(x, z) = tanh(k x^T z + theta)``          (002): **not** positive semidefinite for
  all ``k, theta`` (002: "the Mercer condition holds ... but not for all possible choices of k and
  theta in the MLP case"); convex formulations built on it may not be convex.

Only numpy is imported here, so ``solvers`` can use these without cvxpy.
"""
from __future__ import annotations

import numpy as np

from ._validation import check_kernel_memory, check_positive, check_X

__all__ = [
    "linear_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "gaussian_kernel",
    "mlp_kernel",
    "kernel_matrix",
    "KERNELS",
]


def _pair(X, Z):
    X = check_X(X, "X")
    if Z is None:
        return X, X, True
    Z = check_X(Z, "Z")
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z must have the same number of features as X ({X.shape[1]}); got {Z.shape[1]}")
    return X, Z, False


def _scale_note(X, Z, same) -> str:
    sx = float(np.max(np.abs(X)))
    if same:
        return f"X has entries up to {sx:.3g} in absolute value"
    return f"X has entries up to {sx:.3g} and Z up to {float(np.max(np.abs(Z))):.3g} in absolute value"


def _refuse_overflow(M, X, Z, same, what: str) -> None:
    """Raise naming X (and Z) and their scale if the kernel's intermediate ``M`` overflowed."""
    if not np.all(np.isfinite(M)):
        raise ValueError(
            f"computing {what} overflows float64: {_scale_note(X, Z, same)}; rescale the data "
            "(e.g. standardise each feature) before computing the kernel"
        )


def linear_kernel(X, Z=None) -> np.ndarray:
    """``K_ij = x_i^T z_j`` (002, linear kernel).

    Refuses (``ValueError`` naming X and its scale) data whose inner products overflow float64, or
    underflow so that every entry of a kernel of non-zero data is 0.
    """
    X, Z, same = _pair(X, Z)
    check_kernel_memory(X.shape[0], Z.shape[0])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        K = X @ Z.T
    _refuse_overflow(K, X, Z, same, "the linear kernel x_i'z_j")
    if not np.any(K) and np.any(X) and np.any(Z):
        tiny = np.einsum("ij,ij->i", X, X)
        if not np.any(tiny):
            raise ValueError(
                f"the linear kernel x_i'z_j underflows to 0 for every pair: {_scale_note(X, Z, same)}; "
                "rescale the data before computing the kernel"
            )
    if same:
        K = 0.5 * (K + K.T)
    return K


def polynomial_kernel(X, Z=None, *, c: float = 1.0, d: int = 2) -> np.ndarray:
    """``K_ij = (1 + x_i^T z_j / c)^d`` (002, polynomial kernel of degree d; Mercer for c > 0, d in N)."""
    c = check_positive(c, "c")
    if isinstance(d, bool) or int(d) != d or int(d) < 1:
        raise ValueError(f"d (polynomial degree) must be an integer >= 1; got {d!r}")
    K = linear_kernel(X, Z)
    K /= c
    K += 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        K = K ** int(d)
    if not np.all(np.isfinite(K)):
        X, Z, same = _pair(X, Z)
        raise ValueError(
            f"the polynomial kernel (1 + x'z/c)^d with c = {c:g}, d = {int(d)} overflows float64: "
            f"{_scale_note(X, Z, same)}; rescale the data or increase c"
        )
    return K


def _sq_dists(X, Z, same) -> np.ndarray:
    check_kernel_memory(X.shape[0], Z.shape[0])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        xx = np.einsum("ij,ij->i", X, X)
        zz = xx if same else np.einsum("ij,ij->i", Z, Z)
        D = X @ Z.T
        D *= -2.0
        D += xx[:, None]
        D += zz[None, :]
    _refuse_overflow(D, X, Z, same, "the squared distances ||x_i - z_j||^2")
    np.maximum(D, 0.0, out=D)
    if same:
        D = 0.5 * (D + D.T)
        np.fill_diagonal(D, 0.0)
    return D


def rbf_kernel(X, Z=None, *, sigma: float = 1.0) -> np.ndarray:
    """``K_ij = exp(-||x_i - z_j||^2 / sigma^2)`` (000 §4; 002 RBF kernel; 004 §4).

    Note the absence of the factor 2: 001 uses ``2 sigma^2`` (see :func:`gaussian_kernel`).
    """
    sigma = check_positive(sigma, "sigma")
    s2 = sigma * sigma
    if s2 == 0.0 or not np.isfinite(s2) or not np.isfinite(1.0 / s2):
        raise ValueError(f"sigma = {sigma!r} is out of range: sigma^2 = {s2!r} (or 1/sigma^2) is not a finite number > 0")
    X, Z, same = _pair(X, Z)
    D = _sq_dists(X, Z, same)
    with np.errstate(over="ignore", under="ignore"):
        D *= -1.0 / s2  # may reach -inf (exp gives exactly 0): a genuine limit, not an error
        return np.exp(D, out=D)


def gaussian_kernel(X, Z=None, *, sigma: float = 1.0) -> np.ndarray:
    """``K_ij = exp(-||x_i - z_j||^2 / (2 sigma^2))``: the Gaussian kernel as 001 §3 writes it."""
    sigma = check_positive(sigma, "sigma")
    return rbf_kernel(X, Z, sigma=float(np.sqrt(2.0)) * sigma)


def mlp_kernel(X, Z=None, *, k: float = 1.0, theta: float = 0.0) -> np.ndarray:
    """``K_ij = tanh(k x_i^T z_j + theta)`` (002, MLP kernel). Not PSD for all ``k, theta``."""
    if not np.isfinite(k) or not np.isfinite(theta):
        raise ValueError(f"k and theta must be finite; got k={k!r}, theta={theta!r}")
    K = linear_kernel(X, Z)
    K *= float(k)
    K += float(theta)
    return np.tanh(K, out=K)


KERNELS = {
    "linear": linear_kernel,
    "poly": polynomial_kernel,
    "polynomial": polynomial_kernel,
    "rbf": rbf_kernel,
    "gaussian": gaussian_kernel,
    "mlp": mlp_kernel,
}


def kernel_matrix(X, Z=None, kernel: str = "rbf", **params) -> np.ndarray:
    """Gram matrix ``K_ij = k(x_i, z_j)`` for a kernel named in :data:`KERNELS`.

    ``params`` are the kernel's own (``sigma``; ``c, d``; ``k, theta``).
    """
    if callable(kernel):
        return np.asarray(kernel(X, Z, **params), dtype=np.float64)
    try:
        fn = KERNELS[kernel]
    except KeyError:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a callable; got {kernel!r}") from None
    return fn(X, Z, **params)
