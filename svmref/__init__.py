"""svmref: a reference implementation of the SVM family of five papers.

The distribution installs five import packages:

* ``formulations`` -- every primal and dual of the papers in cvxpy (the ground truth);
* ``solvers``      -- the fast hand-written solvers (SMO engine, linear systems, ISLS, generalised SMO);
* ``verify``       -- holds a solver's answer against the reference (objective, KKT, duality gap);
* ``figures``      -- regenerates the papers' figures;
* ``svmref``       -- this package: shared numeric helpers (kernels, input checks), the shipped
  data sets and the ``svmref`` command line. It imports numpy only.
"""
from .datasets import dataset_names, load_dataset
from .kernels import (
    gaussian_kernel,
    kernel_matrix,
    linear_kernel,
    mlp_kernel,
    polynomial_kernel,
    rbf_kernel,
)

__version__ = "0.1.0"

__all__ = [
    "load_dataset",
    "dataset_names",
    "kernel_matrix",
    "linear_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "gaussian_kernel",
    "mlp_kernel",
    "__version__",
]
