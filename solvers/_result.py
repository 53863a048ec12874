"""The result object every solver returns (after qpsolvers' ``Solution`` and scipy's ``OptimizeResult``).

A frozen dataclass that reports on itself: what was solved (``alpha``, ``b``), how well
(``objective``, ``kkt_gap``), how (``n_iter``, ``time``) and whether it finished
(``converged``, ``status``, ``message``). Solvers with other unknowns subclass it and add
fields (RLS: ``c``; support features machine: ``lam``, ``a``; ISLS: ``history``).

``status`` is one of:

* ``"optimal"``            -- the stopping rule was met (KKT gap <= tol, or a direct solve);
* ``"max_iter_reached"``   -- the iteration limit stopped the solver first (a
  :class:`~sklearn.exceptions.ConvergenceWarning` was issued);
* ``"numerical_issue"``    -- a fallback path was taken or accuracy was lost (``message`` says which).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["SolverResult", "ConvergenceWarning", "warn_not_converged"]

STATUSES = ("optimal", "max_iter_reached", "numerical_issue")


@dataclass(frozen=True, repr=False)
class SolverResult:
    """What a solver returns.

    Attributes
    ----------
    alpha : ndarray or None
        Dual coefficients, in the convention of the formulation solved (classification:
        ``f(x) = sum_i alpha_i y_i k(x_i, x) + b``; regression and ISLS: ``f(x) = sum_i alpha_i k(x_i, x) + b``).
    b : float or None
        Bias.
    objective : float
        Value of the objective the solver minimised (the dual, in its documented sign).
    n_iter : int
        Iterations (SMO pair updates, ISLS reweightings, CG steps; 1 for a direct solve).
    converged : bool
        Whether the stopping rule was met.
    status : str
        ``"optimal"``, ``"max_iter_reached"`` or ``"numerical_issue"``.
    message : str
        Human-readable detail.
    time : float
        Wall-clock seconds spent in the solver.
    kkt_gap : float
        Final KKT violation measured by the solver's own stopping rule (``nan`` if none).
    """

    alpha: np.ndarray | None
    b: float | None
    objective: float
    n_iter: int
    converged: bool
    status: str
    message: str = ""
    time: float = 0.0
    kkt_gap: float = float("nan")
    info: dict = field(default_factory=dict)

    def __iter__(self):
        """Unpack as ``alpha, b = result``."""
        yield self.alpha
        yield self.b

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = f"array(shape={v.shape})"
            elif isinstance(v, float):
                v = f"{v:.6g}"
            elif isinstance(v, (list, dict)) and len(v) > 4:
                v = f"<{type(v).__name__} of {len(v)}>"
            else:
                v = repr(v)
            parts.append(f"{f.name}={v}")
        return f"{type(self).__name__}({', '.join(parts)})"


def warn_not_converged(solver: str, n_iter: int, gap: float, tol: float, stacklevel: int = 3) -> None:
    """Issue the standard :class:`ConvergenceWarning` for a solver stopped by its iteration limit."""
    warnings.warn(
        f"{solver} stopped at its iteration limit ({n_iter} iterations) with KKT gap "
        f"{gap:.3g} > tol = {tol:g}; the result is not optimal (status='max_iter_reached'). "
        "Increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )
