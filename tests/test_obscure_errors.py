"""The obscure errors: inputs that failed deep inside with a message that named neither the input nor the
fix, or refused a legitimate problem. Each now gets a clear error naming the input and the fix, or a correct answer
with an honest label.

1. ``sigma`` whose square under- or overflows (``1e-200``): refused naming ``sigma`` and the accepted range, on every
   path that builds an RBF or Gaussian kernel (dense, cross, ``kernel_matrix``, ``RawKernel``, the estimators on raw
   X, the Bayesian estimator).

Instances: 30 points of 3 Gaussian features (seed 0), RBF kernel of width 1: ``K`` is positive definite (its least
eigenvalue is about 1e-3 of its largest), so alpha, b and c are unique and are compared directly.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from svmref import kernels
from svmref.solvers import estimators
from svmref.solvers._qmatrix import RawKernel


def data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


# ---- 1. sigma out of range -------------------------------------------------------------------------
X0, Y0, T0 = data()
SIGMA_PATHS = {
    "rbf_kernel": lambda s: kernels.rbf_kernel(X0, sigma=s),
    "rbf cross": lambda s: kernels.rbf_kernel(X0, X0[:3], sigma=s),
    "gaussian_kernel": lambda s: kernels.gaussian_kernel(X0, sigma=s),
    "kernel_matrix": lambda s: kernels.kernel_matrix(X0, kernel="rbf", sigma=s),
    "RawKernel rbf": lambda s: RawKernel(X0, "rbf", sigma=s),
    "RawKernel gaussian": lambda s: RawKernel(X0, "gaussian", sigma=s),
    "L1SVC raw X": lambda s: estimators.L1SVC(sigma=s).fit(X0, Y0),
    "L1SVC raw X gaussian": lambda s: estimators.L1SVC(sigma=s, kernel="gaussian").fit(X0, Y0),
    "RLSClassifier dense": lambda s: estimators.RLSClassifier(sigma=s, kernel="rbf").fit(X0, Y0),
    "BayesianLSSVC": lambda s: estimators.BayesianLSSVC(sigma=s).fit(X0, Y0),
}
GAUSSIAN = {"gaussian_kernel", "RawKernel gaussian", "L1SVC raw X gaussian"}


@pytest.mark.parametrize("path", sorted(SIGMA_PATHS))
@pytest.mark.parametrize("sigma", [1e-200, 1e200])
def test_sigma_out_of_range_is_refused_naming_sigma_and_the_range(path, sigma):
    """Was: ZeroDivisionError inside the kernel seam (sigma^2 = 0). Now a ValueError naming sigma, whose stated range
    is the accepted one: both printed ends are accepted by the kernel, and 1% beyond either end is refused."""
    with pytest.raises(ValueError, match=re.escape(f"sigma = {sigma!r} is out of range")) as exc:
        SIGMA_PATHS[path](sigma)
    m = re.search(r"sigma must lie in \[([0-9.e+-]+), ([0-9.e+-]+)\] for this kernel", str(exc.value))
    assert m and "rescale X" in str(exc.value), str(exc.value)
    lo, hi = float(m.group(1)), float(m.group(2))
    factor = 0.5 if path in GAUSSIAN else 1.0
    assert kernels.rbf_gamma(lo, factor) > 0 and kernels.rbf_gamma(hi, factor) > 0
    for outside in (0.99 * lo, 1.01 * hi):
        with pytest.raises(ValueError, match="is out of range"):
            kernels.rbf_gamma(outside, factor)


def test_sigma_at_the_ends_of_the_range_gives_the_kernel():
    """The smallest accepted sigma is a legitimate width: every distinct pair is many widths apart, K = I exactly."""
    lo, hi = kernels.sigma_range(1.0)
    assert np.array_equal(kernels.rbf_kernel(X0, sigma=lo), np.eye(len(X0)))
    assert np.all(kernels.rbf_kernel(X0, sigma=hi) == 1.0)
