"""The Newton steps between the pair steps of the support features machine's generalised SMO
(``solvers/_sfm_newton.py``, 003 §2.6 and eq. (10)): the same optimum as SMO alone, feasibility kept, far fewer pair
steps on separable data with ``n > N``, and the branch-free line search equal to the former one."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from instances import as_written

import svmref.formulations as F
from svmref.solvers import _sfm_newton as NW
from svmref.solvers._sfm_engine import _line_search, _refresh
from svmref.solvers.support_features import support_features, two_hypercubes


def _separable(N, n, seed):
    """As benchmarks/support_features.py's ``separable``: Gaussian X, labels from a random hyperplane."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    return X, np.where(X @ rng.standard_normal(n) > 0, 1.0, -1.0)


def _noisy(N, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    return X, np.where(X[:, 0] - 0.5 * X[:, 1] + 0.7 * rng.standard_normal(N) > 0, 1.0, -1.0)


CASES = {
    "separable 60x200": (_separable(60, 200, 0), 1.0, 0.5),
    "hypercubes 40x150": (two_hypercubes(20, 150, seed=1), 1.0, 0.5),
    "noisy 80x20 mu0": (_noisy(80, 20, 2), 1.0, 0.0),
    "noisy 50x8 mu0.8": (_noisy(50, 8, 3), 1.0, 0.8),        # more patterns free than features active
    "noisy 60x200 C100": (_noisy(60, 200, 4), 100.0, 0.6),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_newton_reaches_the_smo_optimum_and_keeps_feasibility(name, tol):
    """With and without Newton steps: "optimal" with the certificate within tol, the same W(lam) (003 eq. (10)) as SMO
    alone at tol 1e-10 to tol, lam in the box and sum y lam = 0 to rounding."""
    (X, y), C, mu = CASES[name]
    ref = support_features(X, y, C, mu, tol=1e-10, newton=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = support_features(X, y, C, mu, tol=tol, newton=True)
    assert r.status == "optimal" and r.converged and r.kkt_gap <= tol and r.duality_gap <= tol
    assert abs(ref.objective - r.objective) <= tol * abs(ref.objective)
    assert np.all(r.lam >= 0.0) and np.all(r.lam <= C)
    assert abs(float(y @ r.lam)) <= 1e-12 * C * len(y)


@pytest.mark.parametrize("name", ["separable 60x200", "hypercubes 40x150", "noisy 50x8 mu0.8"])
def test_newton_optimum_equals_the_primal_as_written(name):
    """The optimum the Newton steps reach (tol 1e-6, certified) is p* of 003 eq. (5) solved as written by cvxpy: W(lam)
    and (5) at the returned (a, b) within 1e-6 relative of it (strong duality, 003 §2.4)."""
    (X, y), C, mu = CASES[name]
    r = support_features(X, y, C, mu, tol=1e-6, newton=True)
    p = as_written(F.get("support_features").primal(X, y, C=C, mu=mu)).objective
    assert r.status == "optimal" and r.info["newton_steps"] >= 1
    assert abs(r.objective - p) <= 1e-6 * abs(p) and abs(r.primal_objective - p) <= 1e-6 * abs(p)


def test_newton_cuts_pair_steps_on_separable_data():
    """Separable, n > N, most patterns free: SMO alone needs thousands of pair steps at tol 1e-3 (its KKT gap of
    1e-3 leaves a certified gap above 1e-3, so a tightened round follows); with the Newton steps a tenth of them."""
    X, y = _separable(200, 1000, 0)
    plain = support_features(X, y, 1.0, 0.5, tol=1e-3, newton=False)
    fast = support_features(X, y, 1.0, 0.5, tol=1e-3)
    assert plain.status == fast.status == "optimal"
    assert fast.info["newton_steps"] >= 1
    assert fast.n_iter * 5 <= plain.n_iter, (fast.n_iter, plain.n_iter)
    assert fast.duality_gap <= plain.duality_gap


def test_newton_false_is_smo_alone_and_newton_is_checked():
    X, y = _separable(40, 100, 1)
    r = support_features(X, y, 1.0, 0.5, newton=False)
    assert r.info["newton_steps"] == 0
    with pytest.raises(ValueError, match="newton"):
        support_features(X, y, 1.0, 0.5, newton="yes")


def test_newton_auto_is_on_only_where_patterns_are_at_most_twice_the_features():
    """``newton="auto"``: on with N <= 2 n (most patterns can be free), off with more patterns (SMO with shrinking
    does better there: 4000 x 50 took 3.4x the time with Newton steps)."""
    X, y = _separable(60, 200, 0)
    assert support_features(X, y, 1.0, 0.5).info["newton_steps"] >= 1
    X, y = _noisy(81, 40, 0)                       # N = 2n + 1: off
    assert support_features(X, y, 1.0, 0.5).info["newton_steps"] == 0
    X, y = _noisy(80, 40, 0)                       # N = 2n: on
    assert support_features(X, y, 1.0, 0.5).info["newton_steps"] >= 1


def test_newton_step_never_lowers_W_and_keeps_the_equality():
    """Each Newton step (exact line search along the target direction) raises W (eq. (10)) and keeps y'lam = 0 and the
    box, from points SMO left at several KKT gaps."""
    X, y = _separable(60, 200, 2)
    C, mu = 1.0, 0.5
    N, n = X.shape
    bp, ds = np.empty(2 * n), np.empty(2 * n)
    taken = 0
    for gap in (1.0, 0.3, 0.1, 0.01):
        lam = support_features(X, y, C, mu, tol=gap, gap_tol=1e9, newton=False).lam.copy()
        w, F = np.zeros(n), np.zeros(N)
        _refresh(X, y, lam, mu, w, F)
        W0 = NW.dual_objective(lam, w, mu)
        took = NW.newton_step(X, y, lam, w, F, C, mu, bp, ds)
        taken += took
        assert NW.dual_objective(lam, w, mu) >= W0
        assert abs(float(y @ lam)) <= 1e-12 * N * C and lam.min() >= 0.0 and lam.max() <= C
    assert taken >= 3


def test_newton_target_meets_the_equality_when_the_system_is_singular():
    """More free patterns than active features: G G' is singular and the least-squares solution of the bordered
    system need not meet its last row (y'lam = 0); the target must."""
    X, y = _noisy(50, 8, 3)
    C, mu = 1.0, 0.8
    r = support_features(X, y, C, mu, tol=0.3, gap_tol=1e9, newton=False)
    N, n = X.shape
    w, F = np.zeros(n), np.zeros(N)
    _refresh(X, y, r.lam, mu, w, F)
    free = np.sum((r.lam > 0) & (r.lam < C))
    assert free > np.sum(np.abs(w) > mu)          # the singular case
    target = NW.newton_target(X, y, r.lam, w, F, C, mu)
    assert target is not None and abs(float(y @ target)) <= 1e-10 * N * C


def _line_search_branchy(w, u, mu, yi, yj, tmax):
    """The former line search, in numpy: breakpoints sorted, slope updated at each (003 §2.6)."""
    half = 0.5 / (1.0 - mu)

    def dphi(t):
        z = w + t * u
        return yi - yj - float((np.sign(z) * np.maximum(0.0, np.abs(z) - mu) * half) @ u)

    nz = u != 0
    bps = np.concatenate([(mu - w[nz]) / u[nz], (-mu - w[nz]) / u[nz]])
    bps = np.sort(bps[(bps > 0) & (bps < tmax)])
    if dphi(0.0) <= 0:
        return 0.0
    lo = 0.0
    for b in list(bps) + [tmax]:
        if dphi(b) <= 0:          # the zero is in (lo, b]: phi' is linear there
            v0, v1 = dphi(lo), dphi(b)
            return lo + (b - lo) * v0 / (v0 - v1)
        lo = b
    return tmax


def test_branch_free_line_search_matches_the_sorted_breakpoints():
    rng = np.random.default_rng(5)
    n = 60
    bp, ds = np.empty(2 * n), np.empty(2 * n)
    for trial in range(200):
        mu = [0.0, 0.3, 0.8][trial % 3]
        w = rng.standard_normal(n)
        u = rng.standard_normal(n) * (rng.random(n) > 0.2)   # some features do not move
        w[:3] = [mu, -mu, mu]                                # ties at the threshold
        yi, yj = rng.choice([-1.0, 1.0], 2)
        tmax = float(rng.choice([0.05, 1.0, 10.0]))
        t = _line_search(w, u, mu, yi, yj, tmax, bp, ds)
        assert t == pytest.approx(_line_search_branchy(w, u, mu, yi, yj, tmax), rel=1e-9, abs=1e-12)


def test_newton_step_refuses_a_target_off_the_equality(monkeypatch):
    """A target that leaves y'lam = 0 (a wrong solve) is not taken: the step reports False and lam, w are unchanged."""
    X, y = _separable(40, 100, 3)
    C, mu = 1.0, 0.5
    lam = support_features(X, y, C, mu, tol=0.3, gap_tol=1e9, newton=False).lam.copy()
    N, n = X.shape
    w, F = np.zeros(n), np.zeros(N)
    _refresh(X, y, lam, mu, w, F)
    bad = lam.copy()
    j = int(np.flatnonzero((lam > 0) & (lam < C))[0])
    bad[j] = lam[j] + 0.5 * min(lam[j], C - lam[j]) * np.sign(1.0 - y[j] * F[j])   # uphill: dW/dlam_j = 1 - y_j a'x_j
    monkeypatch.setattr(NW, "newton_target", lambda *args: bad)
    gains = iter([0.0, 1.0])                      # W would rise: only the equality can refuse the step
    monkeypatch.setattr(NW, "dual_objective", lambda *args: next(gains))
    before, w0 = lam.copy(), w.copy()
    assert not NW.newton_step(X, y, lam, w, F, C, mu, np.empty(2 * n), np.empty(2 * n))
    assert np.array_equal(lam, before) and np.array_equal(w, w0)


def test_newton_phase_goes_on_when_the_pinned_direction_is_not_uphill():
    """Separable 200 x 1000, seed 4: targets with pinned patterns stop being uphill directions (the exact line search
    returns t = 0 three times in a row); the step towards the first solve's target (no pins, stopped at the box) keeps
    the Newton phase going. Without it the phase ended and SMO alone took 14 155 pair steps."""
    X, y = _separable(200, 1000, 4)
    r = support_features(X, y, 1.0, 0.5, tol=1e-3)
    assert r.status == "optimal" and r.n_iter < 2000, r.n_iter


def test_the_newton_steps_run_blas_on_one_thread(monkeypatch):
    """BLAS is limited to one thread while the solver runs the Newton steps (two OpenBLAS threads on small matrices
    cost 20x the CPU time on a loaded machine), and the caller's setting is restored after."""
    from threadpoolctl import threadpool_info, threadpool_limits

    seen = []
    step = NW.newton_step

    def spy(*args):
        seen.append(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return step(*args)

    monkeypatch.setattr(NW, "newton_step", spy)
    X, y = _separable(60, 200, 0)
    with threadpool_limits(2, user_api="blas"):
        support_features(X, y, 1.0, 0.5)
        after = max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
    assert seen and set(seen) == {1} and after == 2


def test_active_gram_updates_equal_the_direct_block():
    """:class:`ActiveGram` kept by rank updates as the active features change gives the same ``X_A X_A'`` block as
    forming it anew (a wrong sign or a missed feature in an update is a wrong Newton direction, found only as a slower
    solve)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 80))
    gram = NW.ActiveGram(X)
    w = rng.standard_normal(80)
    mu = 0.5
    updated = 0
    for _ in range(25):
        flip = rng.choice(80, 2, replace=False)
        w[flip] = rng.standard_normal(2)               # a few features enter or leave
        free = np.sort(rng.choice(30, 20, replace=False))
        A = np.abs(w) > mu
        direct = X[np.ix_(free, np.flatnonzero(A))] @ X[np.ix_(free, np.flatnonzero(A))].T
        assert np.allclose(gram.block(w, mu, free), direct, rtol=0, atol=1e-10 * np.abs(direct).max())
        updated = max(updated, gram.updates)
    assert updated > 0                                 # the rank updates were exercised
