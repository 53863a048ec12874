"""Shared, seeded test instances (small, so that cvxpy references stay fast). Import: ``from instances import ...``."""
from __future__ import annotations

import numpy as np

from svmref.kernels import linear_kernel, polynomial_kernel, rbf_kernel

KERNELS = {
    "linear": lambda X: linear_kernel(X),
    "poly": lambda X: polynomial_kernel(X, c=2.0, d=3),
    "rbf": lambda X: rbf_kernel(X, sigma=1.5),
}


def make_classification(n: int = 30, d: int = 3, seed: int = 0, overlap: float = 0.8):
    """Two overlapping Gaussian clouds in d dimensions, labels +-1 (both classes present)."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    X = rng.normal(size=(n, d)) * overlap + 0.8 * y[:, None] * np.eye(d)[0]
    return X, y


def make_regression(n: int = 30, d: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


