"""The Bayesian LS-SVM's error bars on the motorcycle data (002's Bayesian framework; LS-SVMlab's ``bay_errorbar``).

:class:`svmref.solvers.bayes.BayesianLSSVR` infers the RBF width ``sigma`` (level 3), ``mu`` and ``zeta`` (level 2)
from the data, and gives the posterior mean of the latent ``f(x)`` with its standard deviation (``w`` and ``b``
integrated out; the Gaussian-process posterior with covariance ``k/mu``, noise ``1/zeta`` and a flat prior on the
bias: ``tests/test_bayes_regression.py`` checks that equality). The figure draws, over the 133 patterns of MASS
``mcycle`` (004 Table 1 "Motorcycle"; times standardised, accelerations in g):

* the posterior mean and the latent band ``mean +- 2 std``: where the model itself is uncertain;
* the predictive band ``mean +- 2 sqrt(std^2 + 1/zeta)``: where a new observation should fall under the model's
  Gaussian, homoscedastic noise.

The report gives the inferred hyperparameters and, for the three phases of the crash (before 14 ms, 14 to 40 ms,
after 40 ms), the share of the data inside the predictive band: the noise of these data is not homoscedastic (nearly
none before the impact, large during it), so one noise level makes the band far too wide before the impact (it holds
every point there, most within a few g of the mean) while it holds about 95% of the points overall; the title gives
the shares. The data and the fit are deterministic: there is no draw and no seed to spread over.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from svmref.datasets import load_dataset

from ._common import format_table, new_figure

__all__ = ["PHASES", "ErrorbarResult", "compute", "plot", "figure"]

#: the crash's phases (ms): the head still, the impact, the rebound
PHASES = ((0.0, 14.0), (14.0, 40.0), (40.0, 60.0))


@dataclass
class ErrorbarResult:
    times: np.ndarray
    accel: np.ndarray
    grid: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    noise_std: float
    hyper: dict
    coverage: list

    def report(self) -> str:
        h = self.hyper
        rows = [[f"{lo:g}-{hi:g} ms", n, f"{100 * c:.0f}%"] for (lo, hi), n, c in self.coverage]
        total = sum(n for _, n, _ in self.coverage)
        inside = sum(n * c for _, n, c in self.coverage) / total
        return "\n".join([
            f"bayes-errorbar (002, Bayesian LS-SVM regression): mcycle (N = {len(self.accel)}), RBF on standardised "
            f"times; sigma = {h['sigma']:.4g} (level 3; {h['sigma_ms']:.3g} ms), gamma = zeta/mu = {h['gamma']:.4g}, "
            f"noise std 1/sqrt(zeta) = {self.noise_std:.3g} g, gamma_eff = {h['gamma_eff']:.3g}, on a search "
            f"boundary: {h['at_boundary']}",
            "share of the data inside the predictive band mean +- 2 sqrt(std^2 + 1/zeta), by phase of the crash:",
            format_table(["phase", "patterns", "inside"], rows),
            f"all: {100 * inside:.0f}% (about 95% if the noise were Gaussian with one level)",
        ])


def compute(seed: int = 0, *, fast: bool = False) -> ErrorbarResult:
    """Fit :class:`~svmref.solvers.bayes.BayesianLSSVR` on mcycle and evaluate both bands (``seed`` and ``fast`` are
    accepted for the common interface; nothing here is random, and the fit takes well under a second)."""
    from svmref.solvers.bayes import BayesianLSSVR

    X, y = load_dataset("mcycle")
    t = X[:, 0]
    centre, scale = float(t.mean()), float(t.std())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = BayesianLSSVR().fit((X - centre) / scale, y)
    grid = np.linspace(t.min(), t.max(), 400)
    mean, std = reg.predict(((grid - centre) / scale)[:, None], return_std=True)
    fit_mean, fit_std = reg.predict((X - centre) / scale, return_std=True)
    band = 2.0 * np.sqrt(fit_std ** 2 + 1.0 / reg.zeta_)
    coverage = []
    for lo, hi in PHASES:
        m = (t >= lo) & (t < hi) if hi < PHASES[-1][1] else (t >= lo)
        coverage.append(((lo, hi), int(m.sum()), float(np.mean(np.abs(y[m] - fit_mean[m]) <= band[m]))))
    hyper = {"sigma": float(reg.sigma_), "sigma_ms": float(reg.sigma_) * scale, "gamma": float(reg.gamma_),
             "gamma_eff": float(reg.gamma_eff_), "at_boundary": bool(reg.at_boundary_)}
    return ErrorbarResult(times=t, accel=y, grid=grid, mean=mean, std=std, noise_std=float(1.0 / np.sqrt(reg.zeta_)),
                          hyper=hyper, coverage=coverage)


def plot(result: ErrorbarResult):
    """The data, the posterior mean, the latent and the predictive bands."""
    fig, axes = new_figure(1, 1, width=9.0, height=5.5)
    ax = axes[0, 0]
    g, m, s = result.grid, result.mean, result.std
    pred = 2.0 * np.sqrt(s ** 2 + result.noise_std ** 2)
    ax.fill_between(g, m - pred, m + pred, color="tab:blue", alpha=0.15,
                    label="predictive band: mean +- 2 sqrt(std^2 + 1/zeta)")
    ax.fill_between(g, m - 2 * s, m + 2 * s, color="tab:blue", alpha=0.4, label="latent band: mean +- 2 std of f(x)")
    ax.plot(g, m, color="tab:blue", lw=1.5, label="posterior mean (LS-SVM at the level-2 gamma)")
    ax.plot(result.times, result.accel, "k.", ms=4, label="mcycle (MASS)")
    ax.set_xlabel("time after impact (ms)")
    ax.set_ylabel("head acceleration (g)")
    ax.legend(loc="lower right", fontsize=8)
    cov = ", ".join(f"{lo:g}-{hi:g} ms: {100 * c:.0f}%" for (lo, hi), _, c in result.coverage)
    ax.set_title(f"Bayesian LS-SVM error bars (002; sigma by level 3, gamma by level 2). One Gaussian noise level for\n"
                 f"heteroscedastic data: the predictive band holds {cov} of the points", fontsize=9)
    return fig


def figure(seed: int = 0, *, fast: bool = False):
    """``plot(compute(seed, fast=fast))``."""
    return plot(compute(seed, fast=fast))
