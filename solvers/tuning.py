r"""Hyperparameter search as LS-SVMlab's ``tunelssvm`` does it: coupled simulated annealing, then a simplex.

004 §4 tunes its LS-SVMs with ``tunelssvm``: coupled simulated annealing (CSA; Xavier-de-Souza, Suykens, Vandewalle &
Bolle, "Coupled simulated annealing", IEEE Trans. Systems, Man and Cybernetics B 40(2), 2010) with 5 coupled starters
finds a good region of ``(log C, log sigma^2)``, and Nelder-Mead's simplex refines the best point. This module is that
search, written from the CSA paper's description (its variant with variance control of the acceptance temperature,
CSA-MwVC), for any criterion ``f(x)`` on a box:

* ``m`` starters ``x_i`` drawn uniformly in the box; at step ``k`` each proposes ``y_i = x_i + T_gen(k) * c``, ``c`` a
  vector of independent standard Cauchy draws (scaled to the box's widths; a coordinate that leaves the box is drawn
  again uniformly in it), with the generation temperature ``T_gen(k) = T_gen(0) / (k + 1)``;
* the starters are coupled through their acceptance probabilities: with ``E_max`` the worst current energy,
  ``A_i = exp((E_i - E_max) / T_ac) / sum_j exp((E_j - E_max) / T_ac)``; a proposal is taken when it is better than its
  starter, or else with probability ``A_i``;
* the acceptance temperature is steered so that the variance of the ``A_i`` stays near its target
  ``0.99 (m - 1) / m^2``: ``T_ac`` shrinks by ``1 - alpha`` when the variance is below it and grows by ``1 + alpha``
  above (``alpha = 0.05``);
* after ``n_iter`` steps the best point met seeds Nelder-Mead (:func:`scipy.optimize.minimize`), whose points are
  clipped to the box.

Every evaluation is counted and the search is deterministic for an integer ``seed``. Nothing guarantees the global
minimum: the result is the best point the search met, and :class:`TuneResult` says how many evaluations it took.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = ["TuneResult", "coupled_simulated_annealing", "tune"]


@dataclass(frozen=True)
class TuneResult:
    """``x`` the best point met, ``fun`` its criterion, ``n_evaluations`` the criterion's evaluations (CSA and
    simplex), ``csa_x`` / ``csa_fun`` the best point after the annealing, before the simplex."""

    x: np.ndarray
    fun: float
    n_evaluations: int
    csa_x: np.ndarray
    csa_fun: float


def _check_bounds(bounds) -> np.ndarray:
    b = np.asarray(bounds, dtype=float)
    if b.ndim != 2 or b.shape[1] != 2 or not np.all(np.isfinite(b)) or not np.all(b[:, 0] < b[:, 1]):
        raise ValueError(f"bounds must be a sequence of (low, high) pairs with low < high, finite; got {bounds!r}")
    return b


class _Counted:
    """``f`` with its evaluations counted and the best point met kept."""

    def __init__(self, f):
        self.f, self.n, self.best_x, self.best = f, 0, None, np.inf

    def __call__(self, x) -> float:
        self.n += 1
        v = float(self.f(np.asarray(x, dtype=float)))
        v = v if np.isfinite(v) else np.inf
        if v < self.best:
            self.best, self.best_x = v, np.array(x, dtype=float)
        return v


def _propose(x, t_gen, b, rng):
    width = b[:, 1] - b[:, 0]
    y = x + t_gen * width * np.tan(np.pi * (rng.random(x.shape) - 0.5))  # Cauchy steps
    out = (y < b[:, 0]) | (y > b[:, 1])
    y[out] = b[out, 0] + width[out] * rng.random(int(out.sum()))
    return y


def coupled_simulated_annealing(f, bounds, *, n_starters: int = 5, n_iter: int = 20, t_gen: float = 1.0,
                                t_ac: float = 1.0, seed=None) -> tuple[np.ndarray, float, int]:
    """CSA with variance control (module docstring): ``(best x, best f, evaluations)``."""
    b = _check_bounds(bounds)
    m = int(n_starters)
    if m < 2:
        raise ValueError(f"n_starters must be an integer >= 2 (the starters are coupled); got {n_starters!r}")
    rng = np.random.default_rng(seed)
    F = _Counted(f)
    X = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.random((m, b.shape[0]))
    E = np.array([F(x) for x in X])
    target = 0.99 * (m - 1) / m ** 2
    for k in range(int(n_iter)):
        finite = np.where(np.isfinite(E), E, np.nanmax(np.where(np.isfinite(E), E, np.nan), initial=0.0) + 1.0)
        a = np.exp((finite - finite.max()) / t_ac)
        A = a / a.sum()
        for i in range(m):
            y = _propose(X[i], t_gen / (k + 1), b, rng)
            ey = F(y)
            if ey <= E[i] or A[i] > rng.random():
                X[i], E[i] = y, ey
        t_ac *= (1.0 - 0.05) if np.var(A) < target else (1.0 + 0.05)
    return F.best_x, F.best, F.n


def tune(f, bounds, *, n_starters: int = 5, n_iter: int = 20, simplex_iter: int = 60, seed=None) -> TuneResult:
    """``tunelssvm``'s search: :func:`coupled_simulated_annealing`, then Nelder-Mead from its best point, the
    simplex's points clipped to ``bounds``. ``f(x)`` is minimised; ``x`` are the coordinates of ``bounds`` (for the
    LS-SVM, ``(log10 C, log10 sigma)``)."""
    b = _check_bounds(bounds)
    F = _Counted(lambda x: f(np.clip(x, b[:, 0], b[:, 1])))
    x0, f0, _ = coupled_simulated_annealing(F, b, n_starters=n_starters, n_iter=n_iter, seed=seed)
    step = 0.05 * (b[:, 1] - b[:, 0])
    simplex = np.vstack([x0] + [x0 + np.diag(step)[j] * (1 if x0[j] + step[j] <= b[j, 1] else -1)
                                for j in range(b.shape[0])])
    minimize(F, x0, method="Nelder-Mead", options={"maxfev": int(simplex_iter), "initial_simplex": simplex,
                                                    "xatol": 1e-3, "fatol": 0.0})
    return TuneResult(x=np.clip(F.best_x, b[:, 0], b[:, 1]), fun=F.best, n_evaluations=F.n, csa_x=x0, csa_fun=f0)
