"""Tests of the Bayesian LS-SVM (``solvers/bayes.py``, ``docs/bayes.md``): the three levels of inference of 002,
the moderated output and :class:`BayesianLSSVC`.

Each level is checked against a second, independent computation:

* level 1: the posterior mean against the LS-SVM's KKT system (002; the cvxpy module's ``kkt_system``), the
  posterior covariance against the inverse Hessian of ``J_2`` in an explicit (linear-kernel) feature space;
* level 2: the closed-form evidence against the Gaussian marginal likelihood of ``y`` integrated over ``b``
  numerically (``scipy.integrate.quad``), and its maximiser against a joint Nelder-Mead over ``(log mu, log zeta)``
  of that numerical evidence;
* level 3: against LS-SVMlab's ``costL3`` written out from the eigenvalues, and the search against a dense
  grid of full eigendecompositions (the search itself uses eigenvalues and ``U'y`` only, checked against them);
* moderated output: against the same explicit feature space.
"""
from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest
from scipy import integrate, linalg, optimize
from threadpoolctl import threadpool_limits

from svmref.kernels import linear_kernel, rbf_kernel
from svmref.solvers import NotConvexError, bayes
from svmref.solvers._hyperparameters import HyperparameterError

# ---- tolerances, in one table ------------------------------------------------------------------------
TOL = {
    "identity": 1e-10,      # relative: two closed forms of the same quantity in floating point
    "quad": 1e-10,          # relative: log evidence by quad (epsrel 1e-13) vs the closed form
    "log_gamma": 1e-6,      # absolute, in log gamma and log mu: level 2 vs the brute-force maximiser
    "stationarity": 1e-9,   # relative: Van Gestel's level-2 conditions at the maximum (root found to 1e-14)
    "grid": 1e-9,           # absolute: the searched maximum is not below any grid value (log evidence)
}


@pytest.fixture(autouse=True)
def one_blas_thread():
    """Small dense eigendecompositions: one BLAS thread is faster and immune to a loaded machine."""
    with threadpool_limits(1):
        yield


def toy(N=30, seed=0, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=N) > 0, 1.0, -1.0)
    return X, y


def ring(N=40, seed=3):
    """A nonlinear problem (a noisy circle), so that level 3 has an interior sigma."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    y = np.where(np.sum(X**2, 1) + 0.5 * rng.normal(size=N) > 1.4, 1.0, -1.0)
    return X, y


INSTANCES = {
    "rbf": lambda: (lambda X, y: (rbf_kernel(X, sigma=1.0), y))(*toy(30, 0)),
    "rbf-narrow": lambda: (lambda X, y: (rbf_kernel(X, sigma=0.3), y))(*toy(24, 2)),
    "linear": lambda: (lambda X, y: (linear_kernel(X), y))(*toy(25, 1, d=3)),
}


# ---- brute force: the Gaussian marginal likelihood, b integrated numerically -------------------------
def brute_log_evidence(K, y, log_mu, log_zeta):
    """``log int N(y; b 1, K/mu + I/zeta) db`` with the integral over b done by quad (flat prior, density 1)."""
    N = len(y)
    C = K / np.exp(log_mu) + np.eye(N) / np.exp(log_zeta)
    L = linalg.cho_factor(C, lower=True)
    logdet = 2.0 * np.sum(np.log(np.diag(L[0])))

    def logp(b):
        r = y - b
        return -0.5 * N * np.log(2 * np.pi) - 0.5 * logdet - 0.5 * r @ linalg.cho_solve(L, r)

    one = np.ones(N)
    prec = one @ linalg.cho_solve(L, one)
    centre = (one @ linalg.cho_solve(L, y)) / prec  # where the integrand peaks; +-12 sd holds all but e^-72
    sd = prec ** -0.5
    ref = logp(centre)
    val, _ = integrate.quad(lambda b: np.exp(logp(b) - ref), centre - 12 * sd, centre + 12 * sd,
                            epsabs=0.0, epsrel=1e-13, limit=200, points=[centre])
    return ref + np.log(val)


# ---- the eigendecomposition ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(INSTANCES))
def test_centred_eigen_spans_the_complement_of_ones(name):
    K, _ = INSTANCES[name]()
    N = K.shape[0]
    eig = bayes.centred_eigen(K)
    assert eig.U.shape == (N, N - 1) and eig.lam.shape == (N - 1,)
    assert np.allclose(eig.U.T @ eig.U, np.eye(N - 1), atol=1e-12)
    assert np.allclose(eig.U.T @ np.ones(N), 0.0, atol=1e-12)
    assert np.allclose(eig.U.T @ K @ eig.U, np.diag(eig.lam), atol=1e-10 * np.abs(K).max())
    M = np.eye(N) - np.ones((N, N)) / N
    full = np.sort(np.linalg.eigvalsh(M @ K @ M))
    # the centred matrix has the same spectrum plus the zero of 1 (the smallest, up to rounding)
    assert np.allclose(np.sort(np.r_[0.0, eig.lam]), np.maximum(full, 0.0), atol=1e-10 * np.abs(K).max())


def test_non_psd_kernel_is_refused():
    X, _ = toy(12, 2)
    K = np.tanh(2.0 * X @ X.T - 1.0)  # 002's MLP kernel, not PSD for these k, theta
    assert np.linalg.eigvalsh(K)[0] < -1e-3
    with pytest.raises(NotConvexError, match="positive semidefinite"):
        bayes.centred_eigen(K)


# ---- level 1 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(INSTANCES))
def test_level1_mean_is_the_ls_svm_of_the_kkt_system(name):
    """002: the MAP of (w, b) minimises J_2, i.e. solves [[0, 1'], [1, K + I/gamma]] [b; alpha] = [0; y]."""
    from svmref.formulations.ls_svm import LSSVMRegression

    K, y = INSTANCES[name]()
    mu, zeta = 0.7, 2.3
    r = bayes.level1(K, y, mu, zeta)
    A, rhs = LSSVMRegression().kkt_system(K, y, C=zeta / mu)
    sol = np.linalg.solve(A, rhs)
    assert np.allclose(r.alpha, sol[1:], rtol=0, atol=1e-9 * np.abs(sol).max())
    assert r.b == pytest.approx(sol[0], abs=1e-9 * np.abs(sol).max())
    # E_W = 1/2 w'w = 1/2 alpha'K alpha, E_D = 1/2 sum e_i^2 with e = alpha / gamma (002)
    assert r.E_W == pytest.approx(0.5 * sol[1:] @ K @ sol[1:], rel=TOL["identity"] * 10)
    assert r.E_D == pytest.approx(0.5 * np.sum((sol[1:] * mu / zeta) ** 2), rel=TOL["identity"] * 10)
    assert r.J == pytest.approx(mu * r.E_W + zeta * r.E_D)


def _explicit(X, y, mu, zeta):
    """Posterior of (w, b) in the explicit feature space phi(x) = x: Hessian of J_2 and its inverse."""
    N, d = X.shape
    one = np.ones(N)
    H = np.zeros((d + 1, d + 1))
    H[:d, :d] = mu * np.eye(d) + zeta * X.T @ X
    H[:d, d] = H[d, :d] = zeta * X.T @ one
    H[d, d] = zeta * N
    Sigma = np.linalg.inv(H)
    mean = Sigma @ np.r_[zeta * X.T @ y, zeta * one @ y]
    return mean, Sigma


def test_level1_posterior_covariance_in_explicit_feature_space():
    X, y = toy(25, 1, d=3)
    Xt = np.random.default_rng(5).normal(size=(7, 3))
    mu, zeta = 0.8, 3.0
    K = linear_kernel(X)
    r = bayes.level1(K, y, mu, zeta)
    mean, Sigma = _explicit(X, y, mu, zeta)
    assert np.allclose(X.T @ r.alpha, mean[:3], atol=1e-10) and r.b == pytest.approx(mean[3], abs=1e-10)
    # Var f(x) = [x; 1]' Sigma [x; 1]
    Z = np.c_[Xt, np.ones(len(Xt))]
    want = np.einsum("ij,jk,ik->i", Z, Sigma, Z)
    got = r.latent_variance(Xt @ X.T, np.sum(Xt * Xt, 1), K)
    assert np.allclose(got, want, rtol=1e-9)
    # marginal covariance of w (b integrated out): the Schur complement; d = x - class mean
    Qw = Sigma[:3, :3]
    for cls in (1.0, -1.0):
        idx = np.flatnonzero(y == cls)
        D = Xt - X[idx].mean(0)
        assert np.allclose(r.centred_variance(Xt @ X.T, np.sum(Xt * Xt, 1), K, idx),
                           np.einsum("ij,jk,ik->i", D, Qw, D), rtol=1e-9)
    # in the eigenbasis: eigenvalues 1/(mu + zeta lam_i) on the d nonzero centred eigenvalues
    nz = r.eig.lam > 1e-9 * r.eig.lam.max()
    assert nz.sum() == 3
    assert np.allclose(np.sort(r.w_variances[nz]), np.sort(np.linalg.eigvalsh(Qw)), rtol=1e-9)


# ---- level 2 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(INSTANCES))
@pytest.mark.parametrize("mu,zeta", [(0.3, 4.0), (2.0, 1.0), (10.0, 50.0)])
def test_log_evidence_equals_the_marginal_likelihood_integrated_over_b(name, mu, zeta):
    K, y = INSTANCES[name]()
    closed = bayes.log_evidence(K, y, mu, zeta)
    brute = brute_log_evidence(K, y, np.log(mu), np.log(zeta))
    assert closed == pytest.approx(brute, rel=TOL["quad"])


@pytest.mark.parametrize("name", ["rbf", "linear"])
def test_level2_matches_the_brute_force_evidence_maximum(name):
    """Level 2 (one eigendecomposition, 1-D search) against a joint maximisation over (log mu,
    log zeta) of the evidence computed the second way; agreement to 1e-6 in log gamma."""
    K, y = INSTANCES[name]()
    r = bayes.level2(K, y)
    assert not r.at_boundary and r.status == "optimal"
    assert r.gamma == pytest.approx(r.zeta / r.mu, rel=1e-14)
    res = optimize.minimize(lambda p: -brute_log_evidence(K, y, *p), x0=[0.0, 0.0], method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 5000, "maxfev": 10000})
    assert res.success, res.message
    log_mu, log_zeta = res.x
    assert abs((log_zeta - log_mu) - np.log(r.gamma)) < TOL["log_gamma"]
    assert abs(log_mu - np.log(r.mu)) < TOL["log_gamma"]
    assert r.log_evidence == pytest.approx(-res.fun, rel=TOL["quad"])


@pytest.mark.parametrize("name", list(INSTANCES))
def test_level2_stationarity_conditions(name):
    """Van Gestel et al. 2002 (LS-SVMlab ``bay_lssvm`` level 2): at the maximum 2 mu E_W = gamma_eff - 1 and
    2 zeta E_D = N - gamma_eff, with gamma_eff = 1 + sum gamma lam_i / (1 + gamma lam_i)."""
    K, y = INSTANCES[name]()
    r = bayes.level2(K, y)
    N = len(y)
    assert 1.0 < r.gamma_eff < N
    lam = np.linalg.eigvalsh((np.eye(N) - 1 / N) @ K @ (np.eye(N) - 1 / N))
    lam = np.clip(lam, 0, None)
    assert r.gamma_eff == pytest.approx(1 + np.sum(r.gamma * lam / (1 + r.gamma * lam)), rel=1e-9)
    assert 2 * r.mu * r.E_W == pytest.approx(r.gamma_eff - 1, rel=TOL["stationarity"])
    assert 2 * r.zeta * r.E_D == pytest.approx(N - r.gamma_eff, rel=TOL["stationarity"])


def test_level2_boundary_is_reported_not_silently_returned():
    K, y = INSTANCES["rbf"]()
    best = bayes.level2(K, y).gamma
    with pytest.warns(bayes.BoundaryWarning, match="gamma_range"):
        r = bayes.level2(K, y, gamma_range=(best * 10, best * 1000))
    assert r.at_boundary and r.status == "at_boundary" and r.gamma == pytest.approx(best * 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not bayes.level2(K, y, gamma_range=(best / 10, best * 10)).at_boundary


@pytest.mark.parametrize("kwargs,match", [
    ({"gamma_range": (1.0, 0.5)}, "gamma_range"), ({"gamma_range": (0.0, 1.0)}, "gamma_range"),
    ({"gamma_range": "wide"}, "gamma_range"),
])
def test_level2_bad_input_is_named(kwargs, match):
    K, y = INSTANCES["rbf"]()
    with pytest.raises(ValueError, match=match):
        bayes.level2(K, y, **kwargs)


def test_level2_bad_data_is_named():
    K, y = INSTANCES["rbf"]()
    with pytest.raises(ValueError, match="y is constant"):
        bayes.level2(K, np.ones_like(y))
    with pytest.raises(ValueError, match="y has"):
        bayes.level2(K, y[:-1])
    with pytest.raises(ValueError, match="K must be square"):
        bayes.level2(K[:, :-1], y)
    with pytest.raises(ValueError, match="mu"):
        bayes.level1(K, y, -1.0, 1.0)
    with pytest.raises(ValueError, match="zeta"):
        bayes.log_evidence(K, y, 1.0, np.inf)


# ---- level 3 -------------------------------------------------------------------------------------------
def test_level3_evidence_is_van_gestels_formula():
    """LS-SVMlab ``bay_lssvm`` level 3: costL3 = -(N_eff log mu + (N-1) log zeta - log(gamma_eff - 1)
    - log(N - gamma_eff) - sum_{i <= N_eff} log(mu + zeta lam_i)); our log evidence is -costL3/2 + const."""
    X, y = toy(30, 0)
    vals = []
    for sigma in (0.5, 1.0, 3.0):
        K = rbf_kernel(X, sigma=sigma)
        r = bayes.level2(K, y)
        N = len(y)
        lam = np.clip(np.linalg.eigvalsh((np.eye(N) - 1 / N) @ K @ (np.eye(N) - 1 / N)), 0, None)
        lam = lam[lam > 1000 * np.finfo(float).eps]  # LS-SVMlab's N_eff
        cost = -(len(lam) * np.log(r.mu) + (N - 1) * np.log(r.zeta) - np.log(r.gamma_eff - 1)
                 - np.log(N - r.gamma_eff) - np.sum(np.log(r.mu + r.zeta * lam)))
        vals.append(bayes.level3_log_evidence(r) + cost / 2)
    # the same constant for every sigma (the dropped eigenvalues contribute log(1 + zeta lam/mu) ~ 1e-13)
    assert np.ptp(vals) < 1e-8


def test_level3_search_beats_its_grid_and_finer_grids():
    X, y = ring()
    r = bayes.level3(X, y)
    assert not r.at_boundary
    assert r.log_evidence >= np.max(r.log_evidences) - TOL["grid"]
    fine = np.exp(np.linspace(np.log(r.sigma) - 0.3, np.log(r.sigma) + 0.3, 41))
    for s in fine:
        assert bayes.level3_log_evidence(bayes.level2(rbf_kernel(X, sigma=s), y)) <= r.log_evidence + 1e-6
    # the level-2 result at the chosen sigma is the one level2 computes there
    again = bayes.level2(rbf_kernel(X, sigma=r.sigma), y)
    assert r.level2[0].gamma == pytest.approx(again.gamma, rel=1e-12)


def two_blobs(N=120, seed=0):
    """Two overlapping Gaussian classes in 2-D (the data of ``benchmarks/bayes_level3.py``), labels +-1."""
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal([-0.3, 0.7], 0.25, size=(h, 2)), rng.normal([0.4, 0.5], 0.25, size=(N - h, 2))]
    return X, np.r_[-np.ones(h), np.ones(N - h)]


def dense_level3(X, y, ts):
    """The level-3 log evidence at ``sigma = exp(ts)`` by the public functions (a full eigendecomposition and
    ``level2`` each), ``-inf`` where level 2 is on its boundary: the independent view of the search."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayes.BoundaryWarning)
        for t in ts:
            r = bayes.level2(rbf_kernel(X, sigma=float(np.exp(t))), y)
            out.append(-np.inf if r.at_boundary else bayes.level3_log_evidence(r))
    return np.array(out)


LEVEL3_CASES = {  # name: (data, sigma_range as multiples of the default search's sigma or None, where the max is)
    "ring": (ring, None, "interior"),
    "ring-80": (lambda: ring(80, 5), None, "interior"),
    "two-blobs": (two_blobs, None, "interior"),
    "toy-5d": (lambda: toy(60, 1, 5), None, "high end"),
    "ring-wide-kernels": (ring, (4.0, 400.0), "low end"),
    "ring-max-just-inside": (ring, (0.9, 90.0), "interior"),  # the best grid point is the range's low end
}
# not here: toy() with the default range, whose best sigma is the low end 0.01 x the median distance, where K is
# the identity to rounding and the level-3 evidence of the dense grid is rounding noise (jumps of 1 to 2 nats
# between neighbouring sigma); the search and the dense grid agree only that the end is flagged there


@pytest.mark.parametrize("name", list(LEVEL3_CASES))
def test_level3_search_finds_the_dense_grid_maximum(name):
    """The frugal search (1 grid point per decade, parabolic steps to SIGMA_XATOL) against a dense grid over the
    same sigma_range: 20 points per decade, then 201 points over the best cell's two neighbours (spacing h).
    The dense maximiser is within h/2 of the maximum, so the search's log sigma must be within SIGMA_XATOL + h of
    it; its evidence at most 1/2 |f''| (SIGMA_XATOL + h)^2 below the dense best (f'' by central differences on
    the fine grid), plus the rounding of the evidence (TOL["grid"]). A maximum at an end of the range must be
    that end, flagged."""
    data, factors, where = LEVEL3_CASES[name]
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayes.BoundaryWarning)
        r = bayes.level3(X, y)
        if factors is not None:
            r = bayes.level3(X, y, sigma_range=(factors[0] * r.sigma, factors[1] * r.sigma))
    a, b = np.log(r.sigma_range)
    coarse = np.linspace(a, b, int(round(20 * (b - a) / np.log(10))) + 1)
    fc = dense_level3(X, y, coarse)
    k = int(np.argmax(fc))
    fine = np.linspace(coarse[max(k - 1, 0)], coarse[min(k + 1, coarse.size - 1)], 201)
    ff = dense_level3(X, y, fine)
    j = int(np.argmax(ff))
    t_dense, f_dense, h = fine[j], ff[j], fine[1] - fine[0]
    if where == "interior":
        assert 0 < j < fine.size - 1 and not r.at_boundary and r.status == "optimal"
        assert abs(np.log(r.sigma) - t_dense) <= bayes.SIGMA_XATOL + h
        curv = abs(ff[j - 1] - 2 * ff[j] + ff[j + 1]) / h**2
        assert r.log_evidence >= f_dense - 0.5 * curv * (bayes.SIGMA_XATOL + h) ** 2 - TOL["grid"]
    else:
        end = a if where == "low end" else b
        assert t_dense == end and r.at_boundary and r.status == "at_boundary"
        assert np.log(r.sigma) == pytest.approx(end, abs=1e-12)
    # whatever the case, the search's value is the evidence at its sigma, and no evaluated sigma beats it
    assert r.log_evidence == pytest.approx(dense_level3(X, y, [np.log(r.sigma)])[0], rel=TOL["identity"])
    assert r.log_evidence >= np.max(r.log_evidences) - TOL["grid"]


@pytest.mark.parametrize("N", [2, 3, 4, 37])
def test_spectrum_is_the_centred_eigendecomposition_without_eigenvectors(N):
    """``_spectrum`` (Householder tridiagonalisation, the reflections applied to the targets, a tridiagonal
    eigensolver) gives the eigenvalues and ``(U'y)^2`` of ``centred_eigen`` (two computations of one quantity)."""
    rng = np.random.default_rng(N)
    X = rng.normal(size=(N, 2))
    Ys = np.where(rng.normal(size=(N, 3)) > 0, 1.0, -1.0)
    K = rbf_kernel(X, sigma=0.8)
    eig, spec = bayes.centred_eigen(K), bayes._spectrum(K, Ys)
    scale = np.max(np.abs(eig.lam))
    assert spec.N == N and spec.lam.shape == (N - 1,) and spec.C2.shape == (N - 1, 3)
    assert np.max(np.abs(spec.lam - eig.lam)) <= TOL["identity"] * scale
    # c_i^2 per eigenvalue; a cluster of equal eigenvalues has a basis free up to rotation, so compare the sums
    # of c_i^2 over such clusters (here: eigenvalues equal to rounding, e.g. the zeros of a tiny N)
    c2 = eig.coordinates(Ys) ** 2
    groups = np.r_[0, np.cumsum(np.diff(eig.lam) > 1e-8 * scale)]
    for g in np.unique(groups):
        assert np.allclose(spec.C2[groups == g].sum(0), c2[groups == g].sum(0), rtol=0, atol=TOL["identity"] * N)


def test_level3_decomposes_each_sigma_once(monkeypatch):
    """Each sigma the search asks for costs one kernel matrix, once (the grid's ends, the parabolic steps' bracket
    points and the final value are looked up); the one kernel matrix built twice is the final sigma's, for its
    full eigendecomposition (the eigenvectors the level-1 posterior needs)."""
    seen = []
    real = bayes.rbf_kernel

    def spy(X, Z=None, *, sigma):
        seen.append(sigma)
        return real(X, Z, sigma=sigma)

    monkeypatch.setattr(bayes, "rbf_kernel", spy)
    X, y = ring()
    r = bayes.level3(X, y)
    assert len(seen) == r.n_evaluations == len(r.sigmas) + 1
    assert len(set(seen[:-1])) == len(seen) - 1 and seen[-1] == r.sigma and r.sigma in seen[:-1]
    # the frugal search: a 1-per-decade grid over sigma_range, then a handful of steps
    n_grid = max(5, int(np.ceil(bayes.SIGMA_GRID_PER_DECADE * np.log10(r.sigma_range[1] / r.sigma_range[0]))) + 1)
    assert n_grid < len(r.sigmas) < 3 * n_grid


def test_level3_boundary_is_reported():
    X, y = ring()
    sigma = bayes.level3(X, y).sigma
    with pytest.warns(bayes.BoundaryWarning, match="sigma_range"):
        r = bayes.level3(X, y, sigma_range=(4 * sigma, 40 * sigma))
    assert r.at_boundary and r.sigma == pytest.approx(4 * sigma) and r.status == "at_boundary"


def test_level3_edge_of_the_valid_region_is_reported():
    """On this circle the level-3 formula keeps rising towards the narrow kernels whose level 2 runs to gamma -> inf
    (where it is undefined): the returned sigma is the edge of the valid region and is flagged, not called a maximum."""
    X, y = ring(40, 0)
    with pytest.warns(bayes.BoundaryWarning, match="edge of the valid region"):
        r = bayes.level3(X, y)
    assert r.at_boundary and r.status == "at_boundary"
    k = int(np.argmin(np.abs(np.log(r.sigmas / r.sigma))))
    assert np.isclose(r.sigmas[k], r.sigma) and not np.isfinite(r.log_evidences[k - 1])
    with pytest.warns(bayes.BoundaryWarning, match="gamma_range"):
        assert bayes.level2(rbf_kernel(X, sigma=r.sigmas[k - 1]), y).at_boundary


def test_evidence_surface_profiles_level2():
    X, y = toy(30, 0)
    gammas, sigmas = np.logspace(-2, 2, 5), np.array([0.5, 1.0])
    L2, L3, best = bayes.evidence_surface(X, y, gammas, sigmas)
    assert L2.shape == (2, 5) and L3.shape == (2,)
    for i, s in enumerate(sigmas):
        K = rbf_kernel(X, sigma=s)
        for j, g in enumerate(gammas):  # profiled over mu: mu = (N-1)/S(gamma) is the maximiser
            mu = optimize.minimize_scalar(lambda a: -bayes.log_evidence(K, y, np.exp(a), g * np.exp(a)),
                                          bounds=(-10, 10), method="bounded", options={"xatol": 1e-10}).x
            assert L2[i, j] == pytest.approx(bayes.log_evidence(K, y, np.exp(mu), g * np.exp(mu)), abs=1e-9)
        assert L2[i].max() <= best[i].log_evidence + 1e-12
        assert L3[i] == pytest.approx(bayes.level3_log_evidence(best[i]))


# ---- moderated output ----------------------------------------------------------------------------------
@pytest.mark.parametrize("prior_pos", [0.5, 0.2])
def test_moderated_output_in_explicit_feature_space(prior_pos):
    """P(y=+1|x) with the class densities N(f(x); m_+-, 1/zeta + d_+-'Q_w d_+-), d = x - class mean,
    Q_w the explicit posterior covariance of w."""
    X, y = toy(25, 1, d=3)
    Xt = np.random.default_rng(6).normal(size=(9, 3))
    K = linear_kernel(X)
    r = bayes.level2(K, y)
    mean, Sigma = _explicit(X, y, r.mu, r.zeta)
    f, ftr = Xt @ mean[:3] + mean[3], X @ mean[:3] + mean[3]
    logp = {}
    for cls, pi in ((1.0, prior_pos), (-1.0, 1 - prior_pos)):
        idx = y == cls
        D = Xt - X[idx].mean(0)
        s2 = 1 / r.zeta + np.einsum("ij,jk,ik->i", D, Sigma[:3, :3], D)
        logp[cls] = np.log(pi) - 0.5 * np.log(2 * np.pi * s2) - 0.5 * (f - ftr[idx].mean()) ** 2 / s2
    got = bayes.moderated_log_odds(r.level1, y, K, Xt @ X.T, np.sum(Xt * Xt, 1), prior_pos)
    assert np.allclose(got, logp[1.0] - logp[-1.0], rtol=1e-9, atol=1e-9)


# ---- the estimator -------------------------------------------------------------------------------------
@pytest.mark.parametrize("params", [{}, {"kernel": "linear"}, {"sigma": 1.0}])
def test_check_estimator(params):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayes.BoundaryWarning)  # tiny or separable check data hit the ranges
        res = check_estimator(bayes.BayesianLSSVC(**params), on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])[:300]) for r in res if r["status"] == "failed"]
    assert not failed, failed


@pytest.mark.parametrize("params,match", [
    ({"kernel": "poly"}, "kernel"), ({"sigma": -1.0}, "sigma"), ({"sigma": "wide"}, "sigma"),
    ({"kernel": "linear", "sigma": 1.0}, "sigma applies"), ({"sigma_range": (2.0, 1.0)}, "sigma_range"),
    ({"gamma_range": (1.0,)}, "gamma_range"), ({"class_prior": [0.2, 0.2]}, "class_prior"),
    ({"class_prior": [0.5, 0.3, 0.2]}, "class_prior"),
])
def test_estimator_bad_parameters_are_named(params, match):
    X, y = toy(20, 0)
    with pytest.raises((ValueError, TypeError), match=match) as info:
        bayes.BayesianLSSVC(**params).fit(X, y)
    # the hyperparameters go through the rules every estimator uses (HyperparameterError, a ValueError and a
    # TypeError); class_prior is checked in fit against the classes found there (a plain ValueError)
    assert isinstance(info.value, HyperparameterError) == ("class_prior" not in params)


def test_estimator_docstring_example_runs():
    result = doctest.testmod(bayes, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.attempted >= 8 and result.failed == 0


def test_estimator_one_class_and_too_few_samples():
    X, y = toy(20, 0)
    with pytest.raises(ValueError, match="one class"):
        bayes.BayesianLSSVC().fit(X, np.ones(20))
    with pytest.raises(ValueError, match="at least 3 samples"):
        bayes.BayesianLSSVC().fit(X[:2], [0, 1])


def test_estimator_binary_is_levels_1_to_3():
    X, y = ring()
    labels = np.where(y > 0, "yes", "no")
    clf = bayes.BayesianLSSVC().fit(X, labels)
    r3 = bayes.level3(X, y)
    assert clf.sigma_ == pytest.approx(r3.sigma) and clf.gamma_ == pytest.approx(r3.level2[0].gamma)
    assert clf.gamma_ == pytest.approx(clf.zeta_ / clf.mu_)
    assert clf.log_evidence_ == pytest.approx(r3.level2[0].log_evidence)
    assert clf.level3_log_evidence_ == pytest.approx(r3.log_evidence)
    assert not clf.at_boundary_
    f = clf.latent_function(X)
    assert np.allclose(f, rbf_kernel(X, sigma=clf.sigma_) @ clf.alpha_ + clf.intercept_)
    P = clf.predict_proba(X)
    assert np.allclose(P.sum(1), 1.0) and np.all((P >= 0) & (P <= 1))
    assert np.array_equal(clf.predict(X), clf.classes_[np.argmax(P, 1)])
    # a prior favouring a class can only raise its probability (the log-odds shift by the prior's logit)
    clf2 = bayes.BayesianLSSVC(class_prior=[0.2, 0.8]).fit(X, labels)
    L1, L2 = np.log(P[:, 1] / P[:, 0]), np.log(clf2.predict_proba(X)[:, 1] / clf2.predict_proba(X)[:, 0])
    shift = np.log(0.8 / 0.2) - np.log(np.mean(labels == "yes") / np.mean(labels == "no"))
    assert np.allclose(L2 - L1, shift, atol=1e-8)


def test_estimator_fixed_sigma_boundary_flag():
    X, y = toy(30, 0)
    best = bayes.BayesianLSSVC(sigma=1.0).fit(X, y).gamma_
    with pytest.warns(bayes.BoundaryWarning):
        clf = bayes.BayesianLSSVC(sigma=1.0, gamma_range=(100 * best, 1000 * best)).fit(X, y)
    assert clf.at_boundary_ and clf.gamma_ == pytest.approx(100 * best)


def test_estimator_one_vs_rest_shares_sigma():
    rng = np.random.default_rng(2)
    centres = np.array([[0, 0], [3, 0], [0, 3]])
    X = np.vstack([c + rng.normal(size=(15, 2)) for c in centres])
    y = np.repeat([0, 1, 2], 15)
    clf = bayes.BayesianLSSVC().fit(X, y)
    assert clf.gamma_.shape == (3,) and clf.alpha_.shape == (3, 45) and np.isscalar(clf.sigma_)
    # sigma maximises the summed level-3 evidence of the three one-vs-rest problems
    codes = np.column_stack([np.where(y == k, 1.0, -1.0) for k in range(3)])
    r3 = bayes.level3(X, codes)
    assert clf.sigma_ == pytest.approx(r3.sigma)
    for k in range(3):
        assert clf.gamma_[k] == pytest.approx(bayes.level2(rbf_kernel(X, sigma=clf.sigma_), codes[:, k]).gamma)
    P = clf.predict_proba(X)
    assert P.shape == (45, 3) and np.allclose(P.sum(1), 1.0)
    assert np.mean(clf.predict(X) == y) > 0.8  # three well separated blobs


# ---- Ripley: the Bayesian choice against 10-fold cross-validation (slow) -------------------------------
@pytest.mark.slow
def test_ripley_bayesian_choice_is_as_good_as_cross_validation():
    """The figure's closing comparison: on synth.te (1000 patterns) the Bayesian (gamma, sigma) and the 10-fold
    CV choice have test errors within 3 standard deviations of their difference (binomial, sqrt(2p(1-p)/1000))."""
    from svmref.figures import bayes_evidence

    res = bayes_evidence.compute()
    p = 0.5 * (res.test_error["bayes"] + res.test_error["cv"])
    assert abs(res.test_error["bayes"] - res.test_error["cv"]) <= 3 * np.sqrt(2 * p * (1 - p) / 1000)
