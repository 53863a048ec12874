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


#: A solve "as written" (:func:`as_written`) asks CLARABEL for these full-accuracy tolerances first (gap, feasibility;
#: the k/t ratio 100 times looser, as in CLARABEL's own defaults) ...
AS_WRITTEN_TOLS = (1e-12, 1e-11, 1e-10, 1e-9)
#: ... and accepts what CLARABEL's own residuals certify within this: a hundredth of the tightest claim any test checks
#: against such a solve (two optimal values equal to 1e-7, relative; ``TOL["objective"]`` of the test modules).
AS_WRITTEN_ACCEPT = 1e-9


def as_written(problem, **_ignored):
    """The cvxpy problem solved as written: a plain :class:`cvxpy.Problem` with the same objective and
    constraints (no strategy, no certificate, nothing rebuilt from another form), by CLARABEL. A test of a
    derivation step uses it for the side whose equality it claims, so that the claim is checked against the model
    and not against a value the reference set by construction. Returns an object with ``objective``, ``values``
    (name -> value), ``constraint_duals``, ``status`` and ``tol`` (the full-accuracy tolerance of the solve kept).

    What is accepted, on any machine. CLARABEL's ``optimal`` at a tolerance ``t`` is its own certificate that the
    duality gap and the primal and dual residuals it computes are within ``t``; its ``optimal_inaccurate``
    ("AlmostSolved") certifies only the *reduced* tolerances, 5e-5 to 1e-4 by default, far looser than the claims
    checked here (on an AVX-512 OpenBLAS path the L2-SVM primal of ``tests/test_docs.py`` ended
    ``optimal_inaccurate`` at 1e-12 with an objective 7.5e-6 relative off). So the reduced tolerances are set to
    :data:`AS_WRITTEN_ACCEPT`: either status then means CLARABEL's residuals are within it. A rung of
    :data:`AS_WRITTEN_TOLS` that ends in neither (insufficient progress at working precision: which rung does
    depends on the machine's floating-point path) is followed by the next, looser one; a problem no rung solves
    fails the test with every rung's status.
    """
    import types

    import cvxpy as cp

    plain = cp.Problem(problem.objective, problem.constraints)
    status, t = solve_clarabel(plain)
    values = {v.name(): (float(v.value) if v.ndim == 0 else np.array(v.value)) for v in plain.variables()}
    duals = [c.dual_value for c in plain.constraints]
    return types.SimpleNamespace(objective=float(plain.value), values=values, constraint_duals=duals, status=status,
                                 tol=t)


def solve_clarabel(prob, tols=AS_WRITTEN_TOLS, accept: float = AS_WRITTEN_ACCEPT) -> tuple[str, float]:
    """Solve the cvxpy problem ``prob`` in place by CLARABEL, as :func:`as_written` does: the rungs ``tols`` in turn,
    each with the reduced accuracy ``accept`` (:func:`clarabel_ladder`); ``(status, t)``."""
    return clarabel_ladder(lambda opts: _clarabel_status(prob, opts), tols, accept)


def clarabel_options(t: float, accept: float = AS_WRITTEN_ACCEPT) -> dict:
    """CLARABEL's options for one rung: full accuracy ``t``, reduced accuracy ``accept`` (the k/t ratios 100 times
    looser, as in CLARABEL's defaults)."""
    return dict(tol_gap_abs=t, tol_gap_rel=t, tol_feas=t, tol_ktratio=100 * t, reduced_tol_gap_abs=accept,
                reduced_tol_gap_rel=accept, reduced_tol_feas=accept, reduced_tol_ktratio=100 * accept, max_iter=500)


def clarabel_ladder(solve, tols=AS_WRITTEN_TOLS, accept: float = AS_WRITTEN_ACCEPT) -> tuple[str, float]:
    """The rungs ``tols`` in turn: ``solve(options)`` returns cvxpy's status; the first rung that ends ``optimal`` or
    ``optimal_inaccurate`` (both certified within ``accept`` by :func:`clarabel_options`) is kept, ``(status, t)``;
    none raises AssertionError with every rung's status."""
    if not max(tols) <= accept:
        raise ValueError(f"every rung must ask at least the accepted accuracy {accept:g}; got {tols}")
    tried = []
    for t in tols:
        status = solve(clarabel_options(t, accept))
        tried.append(f"{t:g}: {status}")
        if status in ("optimal", "optimal_inaccurate"):
            return status, t
    raise AssertionError(f"the model as written did not solve to {accept:g}: " + "; ".join(tried))


def _clarabel_status(plain, opts: dict) -> str:
    import warnings

    import cvxpy as cp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plain.solve(solver="CLARABEL", **opts)
        except cp.error.SolverError as exc:  # CLARABEL's InsufficientProgress, among others
            return f"solver error ({str(exc).splitlines()[0][:60]})"
    return plain.status
