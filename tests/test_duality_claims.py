"""The duality claims of the docs, each checked so that it can fail.

* docs/duality.md §2, weak duality: ``g(alpha) <= f0(x)`` at random primal-feasible, dual-feasible pairs that are
  *not* optimal, both sides read from the cvxpy models as written (variables set, ``objective.value`` read);
  and a dual with a broken factor (the 1/2 of its quadratic term made 1/4) violates it on some draw.
* docs/duality.md §1, the dual function is an infimum: the Lagrangian at a fixed alpha, minimised over the
  primal variables by cvxpy, has the value of the dual model at that alpha.
* docs/formulations/least_1norm_svm.md §6 (000 eq. (6)): every pattern satisfies the condition of its case,
  and every case occurs over the instances.
* docs/formulations/support_features.md §1: at ``mu = 0`` the multipliers of the support features dual (003
  eq. (10)) are twice the L1-SVM's alpha at ``C_svm = C / 2`` (``lam = 2 alpha``), not only the value.
* docs/worked_example.md §6: an L1-SVM on three points with no free multiplier, where every ``b`` in
  ``[0, 1/2]`` is optimal.

The duals of l1_svm, l2_svm, ls_svm and least_1norm_svm are written as minimisations of ``D = -g``
(formulations/__init__.py; p* = -D*), so the dual function is ``g = -D``. Every threshold is derived:
a floating-point floor ``10 N eps`` times the sum of the magnitudes of the terms evaluated, a bound that the
solve's own point certifies, or the reference's certificate.
"""
from __future__ import annotations

from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from instances import make_classification, solve_clarabel

import svmref.formulations as F
from svmref.kernels import kernel_matrix

EPS = 2.0 ** -53  # unit round-off of double precision
BOX_CLASSIFIERS = ["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"]
#: where random alphas are drawn: the dual's box, cut to a finite range where it has no bound
#: (l2_svm: alpha >= 0; ls_svm: alpha free)
DRAW_BOX = {"l1_svm": (0.0, 1.0), "l2_svm": (0.0, 2.0), "ls_svm": (-2.0, 2.0), "least_1norm_svm": (-1.0, 1.0)}
#: the dual's feasible box, in units of C
DUAL_BOX = {"l1_svm": (0.0, 1.0), "l2_svm": (0.0, np.inf), "ls_svm": (-np.inf, np.inf),
            "least_1norm_svm": (-1.0, 1.0)}
SQUARED_SLACK = {"l2_svm", "ls_svm"}  # C/2 sum xi^2 in the primal, ||alpha||^2 / (2C) in the dual


def named(problem) -> dict:
    """The problem's variables by name (W, b, xi; alpha; lam)."""
    return {v.name(): v for v in problem.variables()}


def project(a, y, lo, hi) -> np.ndarray:
    """The point ``clip(a - tau y, lo, hi)`` with ``y' alpha = 0``: ``y' clip(a - tau y)`` is non-increasing in
    ``tau``, so bisection finds tau (to the last bit: 200 halvings of a bracket of width ``4 (max|a| + 1)``, which
    holds the root when the box's finite bounds lie within ``max|a| + 1`` of 0)."""
    t_lo, t_hi = -2.0 * (np.max(np.abs(a)) + 1.0), 2.0 * (np.max(np.abs(a)) + 1.0)
    for _ in range(200):
        t = 0.5 * (t_lo + t_hi)
        if y @ np.clip(a - t * y, lo, hi) > 0:
            t_lo = t
        else:
            t_hi = t
    alpha = np.clip(a - 0.5 * (t_lo + t_hi) * y, lo, hi)
    assert abs(y @ alpha) <= 4 * len(y) * EPS * np.sum(np.abs(alpha)) + 2 * EPS  # the root was in the bracket
    return alpha


def rbf_instance(n=12, seed=0):
    X, y = make_classification(n=n, seed=seed)
    return X, y, kernel_matrix(X, kernel="rbf", sigma=1.5)


# --------------------------------------------------------------------------------------------------
# 1. weak duality (duality.md §2)
# --------------------------------------------------------------------------------------------------
def random_pair(name, rng, s, opt, Phi, y, C):
    """A primal-feasible (W, b, xi) and a dual-feasible alpha, a fraction ``s`` of the way from the optimum
    ``opt`` to a random point (s in [1e-3, 1]: near-optimal pairs too, where a wrong factor shows)."""
    lo, hi = DRAW_BOX[name]
    a = (1 - s) * opt["alpha"] + s * rng.uniform(lo * C, hi * C, len(y))
    alpha = project(a, y, DUAL_BOX[name][0] * C, DUAL_BOX[name][1] * C)
    W = (1 - s) * opt["W"] + s * rng.normal(size=Phi.shape[1])
    b = (1 - s) * opt["b"] + s * rng.normal()
    r = 1.0 - y * (Phi @ W + b)                     # the slack that makes the margin constraint hold exactly
    if name == "l1_svm":
        xi = np.maximum(r, 0.0) + s * rng.exponential(size=len(y))
    elif name == "l2_svm":
        xi = r + s * rng.exponential(size=len(y))
    else:                                           # equality constraints: xi is determined
        xi = r
    return W, b, xi, alpha


def floor_of_terms(name, W, b, xi, alpha, Phi, Q, C) -> float:
    """``10 N eps`` times the magnitudes of every term of f0, of D and of the Lagrangian's constraint terms:
    what evaluating them in double precision (and the round-off infeasibility of the pair) can move."""
    n = len(alpha)
    primal = 0.5 * W @ W + (0.5 * C * xi @ xi if name in SQUARED_SLACK else C * np.sum(np.abs(xi)))
    dual = 0.5 * np.abs(alpha) @ np.abs(Q) @ np.abs(alpha) + np.sum(np.abs(alpha))
    dual += alpha @ alpha / (2 * C) if name in SQUARED_SLACK else 0.0
    constraint = np.abs(alpha) @ (np.abs(Phi) @ np.abs(W) + abs(b) + 1.0 + np.abs(xi))
    return 10 * n * EPS * (primal + dual + constraint)


def weak_duality_instance(name, seed=0):
    """(K, y, C, the optimum): an RBF instance and the reference's optimal (W, b) and alpha, the centre of the draws."""
    X, y, K = rbf_instance(seed=seed)
    C = 0.7
    f = F.get(name)
    ref_p, ref_d = F.solve(f.primal(K, y, C=C)), F.solve(f.dual(K, y, C=C))
    return K, y, C, {"W": ref_p.values["W"], "b": ref_p.values["b"], "alpha": ref_d.values["alpha"]}


def weak_duality_draws(name, dual, instance, *, draws=30, seed=0):
    """(g, f0, floor) at ``draws`` random pairs: f0 read from the primal model, g = -D from the model ``dual``."""
    K, y, C, opt = instance
    primal = F.get(name).primal(K, y, C=C)
    Phi = F.kernel_factor(K).Phi                  # the primal's own factor (deterministic: the same eigh)
    Q = (y[:, None] * K) * y[None, :]
    pv, dv = named(primal), named(dual)
    rng = np.random.default_rng([seed, BOX_CLASSIFIERS.index(name)])
    out = []
    for _ in range(draws):
        W, b, xi, alpha = random_pair(name, rng, 10 ** rng.uniform(-3, 0), opt, Phi, y, C)
        pv["W"].value, pv["b"].value, pv["xi"].value, dv["alpha"].value = W, b, xi, alpha
        floor = floor_of_terms(name, W, b, xi, alpha, Phi, Q, C)
        viol = max(float(np.max(np.atleast_1d(c.violation()))) for c in primal.constraints + dual.constraints)
        assert viol <= floor, f"{name}: the drawn pair is not feasible ({viol:.3g} > {floor:.3g})"
        out.append((-dual.objective.value, primal.objective.value, floor))
    return np.array(out).T


@pytest.mark.parametrize("name", BOX_CLASSIFIERS)
def test_weak_duality_at_random_feasible_pairs(name, monkeypatch):
    """duality.md §2: g(alpha) <= f0(x) at every random feasible pair, with a strict gap on most (the pairs are not
    optimal); and the check is sharp: the dual with 1/4 for the 1/2 of its quadratic term violates it."""
    f = F.get(name)
    assert f.dual_sense == "min"  # the dual model minimises D = -g (p* = -D*)
    inst = weak_duality_instance(name)
    K, y, C, _ = inst
    g, f0, floor = weak_duality_draws(name, f.dual(K, y, C=C), inst)
    assert np.all(g <= f0 + floor), f"{name}: weak duality fails by {np.max(g - f0 - floor):.3g}"
    assert np.mean(g < f0 - floor) >= 0.9, f"{name}: the pairs are (nearly) optimal, the check proves little"
    # a deliberately broken dual: cvxpy's quad_form halved while the model is built, 1/2 alpha'Q alpha -> 1/4;
    # the same draws (same seed)
    quad_form = cp.quad_form
    monkeypatch.setattr(cp, "quad_form", lambda x, P, *a, **k: 0.5 * quad_form(x, P, *a, **k))
    broken = f.dual(K, y, C=C)
    monkeypatch.undo()
    g_bad, f0_bad, floor_bad = weak_duality_draws(name, broken, inst)
    assert np.any(g_bad > f0_bad + floor_bad), f"{name}: a dual with 1/4 for 1/2 passes: the draws are too weak"


# --------------------------------------------------------------------------------------------------
# 2. the dual function is the infimum of the Lagrangian (duality.md §1)
# --------------------------------------------------------------------------------------------------
def dyadic_alpha(rng, y, signed: bool) -> np.ndarray:
    """A random alpha on the grid 1/64 with ``y' alpha = 0`` exactly in floating point (every partial sum is a
    multiple of 1/64 below 2^53/64), so that the Lagrangian's term ``-b y' alpha`` is exactly 0 and its
    infimum over b finite (duality.md §4); ``signed``: entries of both signs (ls_svm), else >= 0 (l2_svm)."""
    k = rng.integers(-64 if signed else 1, 65, size=len(y)).astype(float)
    d = y @ k                                       # move one entry to make y'k = 0, staying >= 0 if unsigned
    j = np.flatnonzero(y == (-np.sign(d) if not signed and d != 0 else 1.0))[0]
    k[j] -= y[j] * d
    assert y @ k == 0.0 and (signed or np.all(k >= 0))
    return k / 64.0


@pytest.mark.parametrize("name", ["l2_svm", "ls_svm"])
def test_dual_function_is_the_infimum_of_the_lagrangian(name):
    """duality.md §1: at a fixed random alpha, min over (W, b, xi) of the Lagrangian, solved by cvxpy, equals
    g(alpha) = -D(alpha) read from the package's dual model (l2_svm: alpha >= 0; ls_svm: alpha free)."""
    X, y, K = rbf_instance(n=12, seed=4)
    C = 0.5
    f = F.get(name)
    Phi = F.kernel_factor(K).Phi
    rng = np.random.default_rng(11)
    for _ in range(3):
        alpha = dyadic_alpha(rng, y, signed=(name == "ls_svm"))
        W, b, xi = cp.Variable(Phi.shape[1]), cp.Variable(), cp.Variable(len(y))
        # L = f0 - sum_i alpha_i [y_i (W.Phi_i + b) - 1 + xi_i]: the primal's constraint written as h(x) >= 0
        # (l2_svm) or h(x) = 0 (ls_svm), f0 = 1/2 ||W||^2 + C/2 ||xi||^2 (000 (1); 000 §1)
        L = (0.5 * cp.sum_squares(W) + 0.5 * C * cp.sum_squares(xi)
             - alpha @ (cp.multiply(y, Phi @ W + b) - 1 + xi))
        lagrangian = cp.Problem(cp.Minimize(L))
        solve_clarabel(lagrangian)
        dual = f.dual(K, y, C=C)
        named(dual)["alpha"].value = alpha
        g = -dual.objective.value
        # The solve's certified accuracy, from its own point x: L is a quadratic in (W, xi) with Hessian
        # diag(I, C I) (the coefficients 1/2 and C/2 of the two sum_squares) and constant in b (its coefficient
        # -y'alpha is exactly 0), so L(x) - inf L = ||grad_W||^2 / 2 + ||grad_xi||^2 / (2C) exactly; the gradient
        # is cvxpy's own (Expression.grad), not the derivation's stationarity conditions.
        grad = L.grad
        gW, gxi, gb = (np.ravel(grad[v].toarray() if hasattr(grad[v], "toarray") else grad[v]) for v in (W, xi, b))
        assert gb[0] == 0.0
        certified = gW @ gW / 2 + gxi @ gxi / (2 * C)
        Q = (y[:, None] * K) * y[None, :]
        floor = floor_of_terms(name, W.value, float(b.value), xi.value, alpha, Phi, Q, C)
        Lx = lagrangian.value
        assert -floor <= Lx - g <= certified + floor, (
            f"{name}: min L = {Lx!r} but g(alpha) = {g!r} (certified {certified:.3g}, floor {floor:.3g})")


# --------------------------------------------------------------------------------------------------
# 3. Least 1-Norm SVM, 000 eq. (6): each case holds, and each occurs
# --------------------------------------------------------------------------------------------------
def l1n_instance(kind):
    """(K, y, C): a linear instance where all three cases occur; RBF at C = 0.1 (every alpha at +C) and at C = 1;
    the worked example's four points (alpha = (-3/8, 1, 1, -3/8))."""
    if kind == "worked":
        x = np.array([-2.0, -1.0, 1.0, 2.0])
        return np.outer(x, x), np.array([-1.0, -1.0, 1.0, 1.0]), 1.0
    kernel, n, seed, C = {"linear": ("linear", 12, 1, 1.0), "rbf_small_C": ("rbf", 24, 0, 0.1),
                          "rbf": ("rbf", 16, 3, 1.0)}[kind]
    X, y = make_classification(n=n, seed=seed)
    return kernel_matrix(X, kernel=kernel, **({"sigma": 1.5} if kernel == "rbf" else {})), y, C


def kkt_cases(K, y, C):
    """The cases of 000 (6) at the reference's (alpha, b), each pattern's margin y_i f(x_i) and the tolerance.

    The certificate's ``kkt`` residual is ``max_i |alpha_i - clip(alpha_i - g_i w)| / w`` with ``g_i = y_i f(x_i) - 1``
    and ``w = 2C`` the box width: at most ``t`` implies ``|g_i| <= t`` when alpha_i is farther than ``w t`` from
    both bounds, ``g_i <= t`` within ``w t`` of +C and ``g_i >= -t`` within ``w t`` of -C. ``t`` adds the round-off
    of recomputing the margins here."""
    sol = F.solve(F.get("least_1norm_svm").dual(K, y, C=C), method="cvxpy")
    assert sol.certified
    alpha, b = sol.values["alpha"], sol.residuals["b"]
    margin = y * (K @ (y * alpha) + b)               # recomputed here, not read from the certificate
    t = sol.residuals["kkt"] + 4 * len(y) * EPS * (np.abs(K) @ np.abs(alpha) + abs(b) + 1.0)
    at_hi, at_lo = alpha >= C - 2 * C * t, alpha <= -C + 2 * C * t
    return {"-C < alpha < C": (~at_hi & ~at_lo, np.abs(margin - 1) <= t),
            "alpha = C": (at_hi, margin <= 1 + t),
            "alpha = -C": (at_lo, margin >= 1 - t)}


def test_least_1norm_every_case_of_kkt_6_holds_and_occurs():
    """least_1norm_svm.md §6, 000 eq. (6): y_i f(x_i) = 1 where -C < alpha_i < C, <= 1 where alpha_i = C, >= 1 where
    alpha_i = -C, for every pattern of every instance; and each of the three cases occurs."""
    seen = dict.fromkeys(["-C < alpha < C", "alpha = C", "alpha = -C"], 0)
    for kind in ("linear", "rbf_small_C", "rbf", "worked"):
        K, y, C = l1n_instance(kind)
        for case, (where, holds) in kkt_cases(K, y, C).items():
            assert np.all(holds[where]), f"{kind}: the condition of case {case} fails at {np.flatnonzero(where & ~holds)}"
            seen[case] += int(np.sum(where))
    assert all(seen.values()), f"a case of 000 (6) never occurs over the instances: {seen}"


# --------------------------------------------------------------------------------------------------
# 4. support features at mu = 0: lam = 2 alpha (support_features.md §1)
# --------------------------------------------------------------------------------------------------
def test_support_features_multipliers_are_twice_the_l1_svm_alphas():
    """support_features.md §1: at mu = 0 the dual (10) at C has the multipliers lam = 2 alpha of the L1-SVM dual
    (003 (3)) at C/2, and W* = 2 (-D*). N = 10 patterns in 14 dimensions: X X' is positive definite, so both duals
    are strictly concave/convex and their optima unique (the claim is about the multipliers themselves)."""
    X, y = make_classification(n=10, d=14, seed=0, overlap=1.5)
    C = 0.2
    lam_sol = F.solve(F.get("support_features").dual(X, y, C=C, mu=0.0), method="cvxpy")
    a_sol = F.solve(F.get("l1_svm").dual(X @ X.T, y, C=C / 2), method="cvxpy")
    assert lam_sol.certified and a_sol.certified
    lam, alpha = lam_sol.values["lam"], a_sol.values["alpha"]
    # How far each certified point can be from its optimum. With Q = Y X X' Y (smallest eigenvalue q > 0):
    # D(alpha) = 1/2 alpha'Q alpha - sum alpha is q-strongly convex, so D(alpha) - D* >= q/2 ||alpha - alpha*||^2;
    # W(lam) = sum lam - 1/4 lam'Q lam (mu = 0) is q/2-strongly concave, so W* - W(lam) >= q/4 ||lam - lam*||^2.
    # Each left side is at most the certified gap (or the worst-case round-off of evaluating it, sqrt(N) times
    # the typical floor the certificate reports).
    q = np.linalg.eigvalsh((y[:, None] * (X @ X.T)) * y[None, :])[0]
    assert q > 0
    n = len(y)
    gap_a = max(a_sol.residuals["gap"], np.sqrt(n) * a_sol.residuals["abs_floor"])
    gap_l = max(lam_sol.residuals["gap"], np.sqrt(n) * lam_sol.residuals["abs_floor"])
    bound = np.sqrt(4 * gap_l / q) + 2 * np.sqrt(2 * gap_a / q)   # ||lam - 2 alpha|| if lam* = 2 alpha*
    assert np.linalg.norm(lam - 2 * alpha) <= bound, f"lam - 2 alpha = {np.linalg.norm(lam - 2 * alpha):.3g} > {bound:.3g}"
    free = (alpha > bound) & (alpha < C / 2 - bound)
    assert np.any(free) and np.any(alpha >= C / 2 - bound) and np.any(alpha <= bound)  # all of the box is used
    assert abs(lam_sol.objective - 2 * (-a_sol.objective)) <= 2 * gap_a + gap_l


# --------------------------------------------------------------------------------------------------
# 5. the worked example's three points: an interval of optimal b (worked_example.md §6)
# --------------------------------------------------------------------------------------------------
X3 = np.array([-1.0, 1.0, 2.0])
Y3 = np.array([-1.0, 1.0, 1.0])
C3 = Fraction(1, 4)
#: the page's hand solution: w, alpha, p*, the interval of b; and p(b) = min over w at fixed b
HAND3 = {"w": Fraction(1, 2), "alpha": [Fraction(1, 4), Fraction(1, 4), Fraction(0)], "p": Fraction(3, 8),
         "b": (Fraction(0), Fraction(1, 2)),
         "p_of_b": {Fraction(-1, 2): Fraction(15, 32), Fraction(0): Fraction(3, 8), Fraction(1, 4): Fraction(3, 8),
                    Fraction(1, 2): Fraction(3, 8), Fraction(1): Fraction(15, 32)}}


def primal_at_fixed_b(b0: float):
    """The L1-SVM primal (003 (2)) on the three points, as written, with b fixed at b0, solved by CLARABEL; returns
    (w, the bracket [lower, upper] of its optimal value that the solve certifies, the round-off floor).

    Upper: the objective at the solve's w with the exact slacks max(0, 1 - y_i(w x_i + b0)), a feasible point.
    Lower: the dual function at the solve's margin multipliers clipped to [0, C] (weak duality, duality.md §2):
    g(alpha) = sum_i alpha_i (1 - y_i b0) - 1/2 (sum_i alpha_i y_i x_i)^2."""
    model = F.get("l1_svm").primal(None, Y3, C=float(C3), X=X3[:, None])
    v = named(model)
    fixed = cp.Problem(model.objective, model.constraints + [v["b"] == b0])
    solve_clarabel(fixed)
    w, C = float(v["W"].value[0]), float(C3)
    xi = np.maximum(0.0, 1.0 - Y3 * (w * X3 + b0))
    upper = 0.5 * w * w + C * np.sum(xi)
    a = np.clip(fixed.constraints[0].dual_value, 0.0, C)
    lower = a @ (1.0 - Y3 * b0) - 0.5 * (a @ (Y3 * X3)) ** 2
    floor = 10 * len(X3) * EPS * (0.5 * w * w + C * np.sum(xi) + np.sum(a) * (1 + abs(b0)) + (a @ np.abs(X3)) ** 2)
    return w, lower, upper, floor


def test_worked_example_b_interval():
    """worked_example.md §6: three points, L1-SVM at C = 1/4. Exactly (fractions): alpha = (1/4, 1/4, 0) is dual
    feasible, and at w = 1/2 the primal value at every b in [0, 1/2] equals -D(alpha) = 3/8 (zero gap: all optimal),
    with no alpha free. As written (b fixed, CLARABEL): p(b) = 3/8 on [0, 1/2] and 15/32 at -1/2 and 1."""
    al, w, C = HAND3["alpha"], HAND3["w"], C3
    y, x = [Fraction(int(v)) for v in Y3], [Fraction(int(v)) for v in X3]
    assert sum(a * yi for a, yi in zip(al, y)) == 0 and all(0 <= a <= C for a in al)
    assert not any(0 < a < C for a in al)                                 # no free multiplier
    assert w == sum(a * yi * xi for a, yi, xi in zip(al, y, x))          # stationarity, W = sum alpha_i y_i x_i
    D = Fraction(1, 2) * w * w - sum(al)
    for b in (*HAND3["b"], sum(HAND3["b"]) / 2):
        p = Fraction(1, 2) * w * w + C * sum(max(Fraction(0), 1 - yi * (w * xi + b)) for yi, xi in zip(y, x))
        assert p == -D == HAND3["p"]
    # as written: each p(b0) bracketed by the solve, the bracket narrower than half the gap between the two values
    # the page distinguishes (3/8 and 15/32), so it decides which one p(b0) is; and (w - 1/2)^2 <= 2 (upper - p*)
    # (the objective is 1-strongly convex in w) inside the interval, where p* = p(b0) = 3/8
    half_sep = float(Fraction(15, 32) - Fraction(3, 8)) / 2
    for b0, want in HAND3["p_of_b"].items():
        w_s, lower, upper, floor = primal_at_fixed_b(float(b0))
        assert lower - floor <= float(want) <= upper + floor, f"p({b0}) in [{lower!r}, {upper!r}], not {want}"
        assert upper - lower < half_sep
        if HAND3["b"][0] <= b0 <= HAND3["b"][1]:
            assert (w_s - float(w)) ** 2 <= 2 * (upper - lower) + floor
