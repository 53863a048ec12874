"""Kernels for the solvers: re-exported from :mod:`svmref.kernels` (numpy only, no cvxpy)."""
from svmref.kernels import (  # noqa: F401
    KERNELS,
    gaussian_kernel,
    kernel_matrix,
    linear_kernel,
    mlp_kernel,
    polynomial_kernel,
    rbf_kernel,
)

__all__ = ["KERNELS", "gaussian_kernel", "kernel_matrix", "linear_kernel", "mlp_kernel", "polynomial_kernel", "rbf_kernel"]
