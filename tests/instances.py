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




def as_written(problem, **_ignored):
    """The cvxpy problem solved as written: a plain :class:`cvxpy.Problem` with the same objective and
    constraints (no strategy, no certificate, nothing rebuilt from another form), CLARABEL at tight
    tolerances. A test of a derivation step uses it for the side whose equality it claims, so that the
    claim is checked against the model and not against a value the reference set by construction.
    Returns an object with ``objective``, ``values`` (name -> value) and ``constraint_duals``."""
    import types
    import warnings

    import cvxpy as cp

    plain = cp.Problem(problem.objective, problem.constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10,
                    max_iter=500)
    assert plain.status == cp.OPTIMAL, f"the model as written did not solve: {plain.status}"
    values = {v.name(): (float(v.value) if v.ndim == 0 else np.array(v.value)) for v in plain.variables()}
    duals = [c.dual_value for c in plain.constraints]
    return types.SimpleNamespace(objective=float(plain.value), values=values, constraint_duals=duals)
