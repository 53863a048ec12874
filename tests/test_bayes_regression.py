"""BayesianLSSVR (svmref.solvers.bayes): the error bars are the Gaussian-process posterior variance, the mean is the
LS-SVM at the level-2 gamma, and the estimator follows scikit-learn's conventions.

The Gaussian process is computed here independently, by Rasmussen & Williams' formula for a GP with a constant mean of
flat prior (GPML §2.7, eq. (2.42) with h(x) = 1 and B^-1 -> 0): with A = K / mu + I / zeta, k = k(X, x) / mu,

    Var f(x) = k(x, x) / mu - k'A^-1 k + (1 - 1'A^-1 k)^2 / (1'A^-1 1),

by a Cholesky solve of A (no eigendecomposition, no centring): the estimator's path shares nothing with it.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg
from sklearn.utils.estimator_checks import check_estimator

from svmref.datasets import load_dataset
from svmref.kernels import rbf_kernel
from svmref.solvers.bayes import BayesianLSSVR
from svmref.solvers.estimators import LSSVR

U = 2.0 ** -53


def _gp_variance(X, x, sigma, mu, zeta):
    K = rbf_kernel(X, sigma=sigma)
    A = K / mu + np.eye(len(X)) / zeta
    k = rbf_kernel(X, x, sigma=sigma) / mu
    cho = scipy.linalg.cho_factor(A, lower=True)
    Ak, A1 = scipy.linalg.cho_solve(cho, k), scipy.linalg.cho_solve(cho, np.ones(len(X)))
    var = 1.0 / mu - np.einsum("ij,ij->j", k, Ak) + (1.0 - A1 @ k) ** 2 / A1.sum()
    return var, np.linalg.cond(A)


def _data(seed=0, n=50):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(-3, 3, n))[:, None]
    return X, np.sin(X[:, 0]) + 0.15 * rng.normal(size=n)


@pytest.mark.parametrize("sigma", [None, 0.3, 3.0])
def test_the_error_bars_are_the_gaussian_process_posterior(sigma):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = BayesianLSSVR(sigma=sigma).fit(X, y)
    x = np.linspace(-5, 5, 41)[:, None]  # inside and outside the data
    _, std = reg.predict(x, return_std=True)
    var, cond = _gp_variance(X, x, reg.sigma_, reg.mu_, reg.zeta_)
    # both are backward-stable solves with A (or its eigenvectors); rounding grows with cond(A) and N, relative to
    # the prior variance 1/mu that the terms of Var f are of the size of
    bound = 100 * len(X) * U * cond * (1.0 / reg.mu_ + 1.0 / reg.zeta_)
    assert np.max(np.abs(std ** 2 - var)) <= bound, (np.max(np.abs(std ** 2 - var)), bound)
    assert std[0] > std[20] and std[-1] > std[20]  # wider away from the data


def test_the_mean_is_the_ls_svm_at_the_level2_gamma():
    X, y = _data(1)
    reg = BayesianLSSVR(sigma=1.0).fit(X, y)
    ls = LSSVR(C=reg.gamma_, sigma=1.0, standardize_y=False).fit(X, y)
    x = np.linspace(-3, 3, 17)[:, None]
    assert np.max(np.abs(reg.predict(x) - ls.predict(x))) <= 1e-8 * np.max(np.abs(y))


def test_the_motorcycle_band_covers_the_data_as_a_predictive_band_should():
    """On the motorcycle data (004 Table 1; times standardised): the predictive band mean +- 2 sqrt(std^2 + 1/zeta)
    holds about 95 % of the training targets (a Gaussian noise model fitted to heteroscedastic data: between 85 % and
    100 %), the latent band alone far fewer."""
    X, y = load_dataset("mcycle")
    X = (X - X.mean()) / X.std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = BayesianLSSVR().fit(X, y)
    mean, std = reg.predict(X, return_std=True)
    inside = np.abs(y - mean) <= 2.0 * np.sqrt(std ** 2 + 1.0 / reg.zeta_)
    latent = np.abs(y - mean) <= 2.0 * std
    assert 0.85 <= inside.mean() <= 1.0 and latent.mean() < 0.5, (inside.mean(), latent.mean())


def test_check_estimator():
    results = check_estimator(BayesianLSSVR(sigma=1.0), on_fail=None, on_skip=None)
    failed = [f"{r['check_name']}: {r['exception']!r}" for r in results if r["status"] == "failed"]
    assert not failed, failed


def test_bad_input_names_the_parameter():
    X, y = _data()
    with pytest.raises(ValueError, match="sigma"):
        BayesianLSSVR(sigma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="at least 3 samples"):
        BayesianLSSVR(sigma=1.0).fit(X[:2], y[:2])
