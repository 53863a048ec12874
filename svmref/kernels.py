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


def linear_kernel(X, Z=None) -> np.ndarray:
    """``K_ij = x_i^T z_j`` (002, linear kernel)."""
    X, Z, same = _pair(X, Z)
    check_kernel_memory(X.shape[0], Z.shape[0])
    K = X @ Z.T
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
    return K ** int(d)


def _sq_dists(X, Z, same) -> np.ndarray:
    check_kernel_memory(X.shape[0], Z.shape[0])
    xx = np.einsum("ij,ij->i", X, X)
    zz = xx if same else np.einsum("ij,ij->i", Z, Z)
    D = X @ Z.T
    D *= -2.0
    D += xx[:, None]
    D += zz[None, :]
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
    X, Z, same = _pair(X, Z)
    D = _sq_dists(X, Z, same)
    D *= -1.0 / (sigma * sigma)
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
