"""The reference at the edges: certified, and equal to an INDEPENDENT optimum, or refused.

Independent optima:

* box duals (l1_svm, l2_svm, least_1norm_svm) on small N: exhaustive active-set enumeration. Every
  assignment of each alpha_i to its lower bound, upper bound or "free" gives an equality-constrained QP
  on the free variables (solved by least squares); every feasible candidate is a feasible point, so the
  smallest candidate value is >= d*, and the assignment of the true optimum gives d* itself: the minimum
  over feasible candidates IS the optimum (no tolerance, no solver).
* equality-only problems (ls_svm, ls_svm_regression, rls, sparse_ls_svm): the KKT system solved in
  50-digit arithmetic (mpmath) from the exact double entries of K, y, C, and the objective evaluated there.
* larger N (2 positives against 298 negatives): the primal written with an independent Cholesky factor of
  the (shifted-free) linear kernel and solved by ECOS (another algorithm, another form), its value taken
  from ECOS; and the reference's own weak-duality bound ``d(alpha) >= d*`` is checked on ECOS's alpha.

The agreement asked for is 1e-6 relative on the objective (``max(1, |d*|)``). The numbers are printed
by the last test (``-s``) for the closing note.
"""
from __future__ import annotations

import itertools
import warnings

import cvxpy as cp
import mpmath
import numpy as np
import pytest
from instances import solve_clarabel

import svmref.formulations as F
from svmref.kernels import linear_kernel, rbf_kernel

AGREE = 1e-6
TABLE: list[tuple[str, str, str]] = []


def rel(a, b):
    return abs(a - b) / max(1.0, abs(a), abs(b))


# --- instances ------------------------------------------------------------------------------------
def data(n=8, d=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    X = rng.normal(size=(n, d)) + 0.5 * y[:, None] * np.eye(d)[0]
    return X, y


def case(name, n=8, seed=0):
    """(K, y) of the named edge case."""
    X, y = data(n, seed=seed)
    if name == "rbf":
        return rbf_kernel(X, sigma=1.0), y
    if name == "K~I (sigma->0)":
        return rbf_kernel(X, sigma=1e-3), y
    if name == "K~11' (sigma->inf)":
        return rbf_kernel(X, sigma=1e3), y
    if name == "linear X*1e6":
        return linear_kernel(X * 1e6), y
    if name == "duplicates, conflicting labels":
        X2 = np.vstack([X[: n // 2], X[: n // 2]])
        y2 = np.concatenate([y[: n // 2], -y[: n // 2]])
        return rbf_kernel(X2, sigma=1.0), y2
    if name == "rank-deficient linear":
        Xr = np.column_stack([X[:, 0], 2.0 * X[:, 0]])  # rank 1
        return linear_kernel(Xr), y
    raise KeyError(name)


CASES = ["rbf", "K~I (sigma->0)", "K~11' (sigma->inf)", "linear X*1e6", "duplicates, conflicting labels",
         "rank-deficient linear"]


# --- independent optima ---------------------------------------------------------------------------
def enumerate_box_dual(kind, K, y, C):
    """Exact optimum of the box dual by active-set enumeration (small N only)."""
    n = len(y)
    Q = (y[:, None] * K) * y[None, :]
    if kind == "l2":
        Q = Q + np.eye(n) / C
    # exact rescaling alpha = a / kappa: d(alpha) = (1/2 a'(Q/kappa)a - 1'a) / kappa, box times kappa
    kappa = float(np.max(np.abs(Q)))
    Q = Q / kappa
    lo = (-C if kind == "l1n" else 0.0) * kappa
    hi = np.inf if kind == "l2" else C * kappa
    C = C * kappa
    states = (0, 2) if kind == "l2" else (0, 1, 2)  # 0 lower, 1 upper, 2 free
    best = np.inf
    for s in itertools.product(states, repeat=n):
        s = np.array(s)
        a = np.where(s == 0, lo, np.where(s == 1, hi, 0.0))
        F_ = np.flatnonzero(s == 2)
        B = np.flatnonzero(s != 2)
        if len(F_):
            M = np.zeros((len(F_) + 1, len(F_) + 1))
            M[:-1, :-1] = Q[np.ix_(F_, F_)]
            M[:-1, -1] = y[F_]
            M[-1, :-1] = y[F_]
            rhs = np.concatenate([1.0 - Q[np.ix_(F_, B)] @ a[B], [-y[B] @ a[B]]])
            sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
            a[F_] = sol[:-1]
            if np.max(np.abs(M @ sol - rhs)) > 1e-9 * np.max(np.abs(M) @ np.abs(sol) + np.abs(rhs)):
                continue  # inconsistent: no stationary point with this free set
        scale = max(np.max(np.abs(a)), C if np.isfinite(hi) else 0.0, np.finfo(float).tiny)
        if np.any(a < lo - 1e-9 * scale) or np.any(a > hi + 1e-9 * scale):
            continue
        if abs(y @ a) > 1e-9 * np.sum(np.abs(a)) + np.finfo(float).tiny:
            continue
        a = np.clip(a, lo, hi)
        if len(F_):  # restore y'a = 0 exactly (to round-off) on the free set, then it is a feasible point
            a[F_] -= y[F_] * (y @ a) / len(F_)
            if np.any(a < lo - 1e-9 * scale) or np.any(a > hi + 1e-9 * scale):
                continue
            a = np.clip(a, lo, hi)
        val = 0.5 * a @ Q @ a - a.sum()
        best = min(best, val)
    return best / kappa


def mp_ls_objective(name, K, y, C, lam=None):
    """Exact optimum (dual, minimisation sense) of the equality problems, in 50 digits."""
    mpmath.mp.dps = 50
    n = len(y)
    Km = [[mpmath.mpf(float(K[i, j])) for j in range(n)] for i in range(n)]
    ym = [mpmath.mpf(float(v)) for v in y]
    Cm = mpmath.mpf(float(C))
    if name == "rls":  # (K + m gamma I) c = y; dual value at alpha = 2 gamma c
        A = mpmath.matrix(Km) + n * Cm * mpmath.eye(n)
        c = mpmath.lu_solve(A, mpmath.matrix(ym))
        a = [2 * Cm * c[i] for i in range(n)]
        Ka = [mpmath.fsum(Km[i][j] * a[j] for j in range(n)) for i in range(n)]
        return float(mpmath.mpf(n) / 4 * mpmath.fsum(v * v for v in a) + mpmath.fsum(a[i] * Ka[i] for i in range(n)) / (4 * Cm)
                     - mpmath.fsum(ym[i] * a[i] for i in range(n)))
    if name == "sparse_ls_svm":
        lm = [mpmath.mpf(float(v)) for v in lam]
        H = [[mpmath.fsum(Km[i][k] * Km[k][j] / lm[k] for k in range(n)) + (1 / Cm if i == j else 0) for j in range(n)]
             for i in range(n)]
        s, r, Kt = [mpmath.mpf(1)] * n, ym, H
    elif name == "ls_svm":
        s, r = ym, [mpmath.mpf(1)] * n
        Kt = [[Km[i][j] + (1 / Cm if i == j else 0) for j in range(n)] for i in range(n)]
    else:  # ls_svm_regression
        s, r = [mpmath.mpf(1)] * n, ym
        Kt = [[Km[i][j] + (1 / Cm if i == j else 0) for j in range(n)] for i in range(n)]
    A = mpmath.matrix(n + 1, n + 1)
    for i in range(n):
        A[0, i + 1] = s[i]
        A[i + 1, 0] = s[i]
        for j in range(n):
            A[i + 1, j + 1] = s[i] * Kt[i][j] * s[j]
    x = mpmath.lu_solve(A, mpmath.matrix([0] + list(r)))
    a = [x[i + 1] for i in range(n)]
    v = [s[i] * a[i] for i in range(n)]
    quad = mpmath.fsum(v[i] * Kt[i][j] * v[j] for i in range(n) for j in range(n))
    return float(quad / 2 - mpmath.fsum(r[i] * a[i] for i in range(n)))


def note(case_, ref, outcome):
    TABLE.append((case_, ref, outcome))


# --- box duals: certified reference = enumeration ---------------------------------------------------
BOX = {"l1_svm": "l1", "l2_svm": "l2", "least_1norm_svm": "l1n"}


@pytest.mark.parametrize("C", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("name", list(BOX))
@pytest.mark.parametrize("kcase", CASES)
def test_box_dual_reference_equals_enumeration(kcase, name, C):
    n = 8 if BOX[name] != "l2" else 10
    K, y = case(kcase, n=n)
    exact = enumerate_box_dual(BOX[name], K, y, C)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", F.ReferenceDisagreementWarning)  # ECOS may fail where the certificate stands
            sol = F.solve(F.get(name).dual(K, y, C=C))
    except F.ReferenceSolveError as exc:
        # allowed only where the problem is extremely scaled, and the message must say so
        assert C * n * np.max(np.abs(K)) > 1e8 and "badly scaled" in str(exc), str(exc)
        note(f"{kcase}, C={C:g}", f"{name} dual", f"refused: C x N x max|K| = {C * n * np.max(np.abs(K)):.1e}, badly scaled"
                                                  f" (enumeration optimum {exact:.6g})")
        return
    assert sol.certified and sol.residuals["rel_gap"] <= max(1e-8, sol.residuals["rel_floor"])
    err = rel(sol.objective, exact)
    note(f"{kcase}, C={C:g}", f"{name} dual", f"agrees {err:.1e} (gap {sol.residuals['rel_gap']:.0e}"
                                              f"{', polished' if sol.polished else ''})")
    assert err <= AGREE, (sol.objective, exact)
    # the certificate is honest: the exact optimum lies within the reported gap (up to the reported
    # worst-case rounding of evaluating the objective in double precision)
    assert exact >= sol.objective - sol.residuals["gap"] - sol.residuals["rounding"]


@pytest.mark.parametrize("name", ["least_1norm_svm", "l1_svm"])
def test_rbf_C_1e6_with_tiny_eigenvalues_primal_and_dual_agree(name):
    """C = 1e6 on an RBF kernel with eigenvalues below 1e-9 lambda_max (which a factor cut at 1e-9 would drop):
    the primal and the dual references agree."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    K = rbf_kernel(X, sigma=3.0)
    w = np.linalg.eigvalsh(K)
    assert np.sum((w > 0) & (w < 1e-9 * w[-1])) > 0  # the eigenvalues a relative cut at 1e-9 drops exist here
    f = F.get(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", F.ReferenceDisagreementWarning)
        d = F.solve(f.dual(K, y, C=1e6))
        p = F.solve(f.primal(K, y, C=1e6))
    assert d.certified and p.certified
    alpha = d.values["alpha"]
    v = y * alpha
    # sol.objective IS its alpha's value on K (up to the reported worst-case rounding of that evaluation)
    assert abs(0.5 * v @ K @ v - alpha.sum() - d.objective) <= d.residuals["rounding"]
    err = rel(p.objective, -d.objective)
    note("RBF with tiny eigenvalues, 40 points, C=1e6", f"{name} primal vs dual", f"agrees {err:.1e}")
    assert err <= AGREE


def test_two_positives_against_298_negatives():
    rng = np.random.default_rng(7)
    n = 300
    y = -np.ones(n)
    y[:2] = 1.0
    X = rng.normal(size=(n, 3))
    X[:2] += 1.0
    K = linear_kernel(X)
    for name, kind in BOX.items():
        for C in (1e-6, 1e6):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", F.ReferenceDisagreementWarning)
                sol = F.solve(F.get(name).dual(K, y, C=C))
            assert sol.certified
            # independent: the primal with Phi = X, solved directly by a conic solver (no certificate involved);
            # ECOS, or CLARABEL where ECOS fails (another problem form and variables than the reference's dual)
            prob = F.get(name).primal(None, y, C=C, X=X)
            plain = cp.Problem(prob.objective, prob.constraints)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    val = plain.solve(solver="ECOS", abstol=1e-10, reltol=1e-10, feastol=1e-10, max_iters=500)
                who = "ECOS"
            except cp.error.SolverError:
                who = "failed"
            if who == "failed" or plain.status != cp.OPTIMAL:  # CLARABEL's own residuals within 1e-9, else it raises
                solve_clarabel(plain, tols=(1e-11, 1e-10, 1e-9), accept=1e-9)
                val, who = plain.value, "CLARABEL"
            err = rel(-sol.objective, val)
            note(f"2 vs 298, linear, C={C:g}", f"{name} dual", f"agrees {err:.1e} with {who} on the primal (Phi = X)")
            assert err <= AGREE
            # weak duality on another feasible alpha (the primal solver's multipliers, projected):
            # d(alpha') >= d* >= ref - gap, up to the reported worst-case rounding of the evaluations
            from svmref.formulations import _certify as cert

            dual = prob.constraints[0].dual_value
            alpha2 = -dual if kind == "l1n" else dual
            lo, hi = cert.box_bounds(kind, C, n)
            a2 = cert.project_feasible(np.asarray(alpha2, float), y, lo, hi)
            d2, _ = cert.box_dual_value(kind, K, y, C, a2)
            assert d2 >= sol.objective - sol.residuals["gap"] - sol.residuals["rounding"]


# --- equality problems: direct reference = 50-digit solve ---------------------------------------------
EQ = ["ls_svm", "ls_svm_regression", "rls", "sparse_ls_svm"]


def eq_build(name, K, y, C):
    f = F.get(name)
    if name == "rls":
        return f.dual(K, y, gamma=C)
    if name == "sparse_ls_svm":
        lam = np.linspace(0.5, 2.0, len(y))
        return f.dual(K, y, C=C, lam=lam)
    return f.dual(K, y, C=C)


@pytest.mark.parametrize("C", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("name", EQ)
@pytest.mark.parametrize("kcase", CASES)
def test_equality_reference_equals_50_digit_solve(kcase, name, C):
    K, y = case(kcase, n=8)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = F.solve(eq_build(name, K, y, C))
    except F.ReferenceSolveError as exc:
        # refusal must name the cause: the condition number of the system
        assert "condition number" in str(exc) or "singular" in str(exc)
        note(f"{kcase}, C={C:g}", f"{name} (direct)", f"refused: {str(exc)[-90:]}")
        return
    lam = np.linspace(0.5, 2.0, len(y)) if name == "sparse_ls_svm" else None
    exact = mp_ls_objective(name, K, y, C, lam)
    err = rel(sol.objective, exact)
    est = sol.residuals["est_rel_error"]
    warned = [w for w in caught if issubclass(w.category, F.ReferenceAccuracyWarning)]
    note(f"{kcase}, C={C:g}", f"{name} (direct)",
         f"agrees {err:.1e} (cond {sol.condition:.1e}, est. error {est:.0e}{', warned' if warned else ''})")
    if sol.certified:
        assert err <= AGREE, (sol.objective, exact)
    else:  # not certified: it must have said so, with its expected accuracy
        assert warned and sol.status.startswith("optimal_inaccurate")


def test_ill_conditioned_linear_kernel_ls_svm_matches_rational_solve():
    """Issue: linear kernel of X*1e6 (condition ~1e14): the reference equals the exact solution."""
    X, y = data(10, d=3, seed=3)
    K = linear_kernel(X * 1e6)
    C = 1.0
    sol = F.solve(F.get("ls_svm").dual(K, y, C=C), cross_check=False)
    # the system from K, y, C in 50 digits (K_ii + 1/C is NOT rounded to double first)
    n = len(y)
    mpmath.mp.dps = 50
    A = mpmath.matrix(n + 1, n + 1)
    for i in range(n):
        A[0, i + 1] = A[i + 1, 0] = mpmath.mpf(float(y[i]))
        for j in range(n):
            A[i + 1, j + 1] = mpmath.mpf(float(y[i])) * mpmath.mpf(float(K[i, j])) * mpmath.mpf(float(y[j]))
        A[i + 1, i + 1] += 1 / mpmath.mpf(C)
    x = mpmath.lu_solve(A, mpmath.matrix([0] + [1] * n))
    alpha_exact = np.array([float(x[i + 1]) for i in range(n)])
    err = np.max(np.abs(sol.values["alpha"] - alpha_exact)) / np.max(np.abs(alpha_exact))
    note("linear X*1e6, C=1, N=10", "ls_svm alpha", f"max rel. error {err:.1e} (cond {sol.condition:.1e})")
    assert err <= 1e-9


# --- refusals -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["l1_svm", "l2_svm", "ls_svm", "ls_svm_regression", "least_1norm_svm", "sparse_ls_svm"])
def test_C_that_underflows_or_overflows_is_refused_naming_C(name):
    K, y = case("rbf")
    with pytest.raises(ValueError, match=r"C = 5e-324 is too small: 1/C overflows"):
        F.get(name).dual(K, y, C=5e-324)
    with pytest.raises(ValueError, match=r"C = 1e\+308 is too large: C x N x max\|K\|"):
        F.get(name).dual(K, y, C=1e308)
    note("C = 5e-324 / 1e308", f"{name}", "refused at build, naming C")


def test_gamma_that_overflows_is_refused_and_set_params_checks_too():
    K, y = case("rbf")
    with pytest.raises(ValueError, match="gamma = 5e-324 is too small"):
        F.get("rls").primal(K, y, gamma=5e-324)
    prob = F.get("l1_svm").dual(K, y, C=1.0)
    with pytest.raises(ValueError, match="C = 1e\\+308 is too large"):
        F.set_params(prob, C=1e308)


def test_kernel_overflow_is_refused_naming_X_and_its_scale():
    X, _ = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning either
        with pytest.raises(ValueError, match=r"overflows float64: X has entries up to \d\.\d+e\+200"):
            rbf_kernel(X * 1e200)
        with pytest.raises(ValueError, match=r"overflows float64: X has entries up to"):
            linear_kernel(X * 1e200)
    note("X * 1e200", "rbf_kernel / linear_kernel", "refused, naming X and its scale")


def test_singular_system_is_refused_naming_the_condition_number():
    K, y = case("rank-deficient linear")
    with pytest.raises(F.ReferenceSolveError, match="singular to working precision.*condition number"):
        F.solve(F.get("rls").dual(K, y, gamma=1e-30))
    note("rank-1 linear K, gamma=1e-30", "rls (direct)", "refused: singular, condition number named")


def test_uncertifiable_solution_is_refused_naming_the_residual(monkeypatch):
    """A solver answer that does not certify is refused, naming the residual and its size. Here CLARABEL
    stops after 3 iterations and the three repairs (polish, active-set method, re-solve in better scaling) are
    disabled."""
    from svmref.formulations import _certify as cert

    K, y = case("rbf")
    prob = F.get("l1_svm").dual(K, y, C=10.0)
    monkeypatch.setattr(cert, "box_polish", lambda kind, K, y, C, alpha, tol: cert.box_certificate(kind, K, y, C, alpha, tol))
    monkeypatch.setattr(cert, "box_scaled_resolve", lambda *a, **k: None)
    monkeypatch.setattr(cert, "box_active_set", lambda kind, K, y, C, alpha, tol: cert.box_certificate(kind, K, y, C, alpha, tol))
    with pytest.raises(F.ReferenceSolveError, match=r"does not certify.*rel_gap = [\d.e+-]+ > 1e-08"):
        F.solve(prob, options={"max_iter": 3})
    # accepted on request, but never labelled optimal
    sol = F.solve(F.get("l1_svm").dual(K, y, C=10.0), options={"max_iter": 3}, accept_inaccurate=True, cross_check=False)
    assert not sol.certified and sol.status.startswith("optimal_inaccurate (not certified: rel_gap")
    # with the repairs: the same stopped solve is polished into a certified reference
    monkeypatch.undo()
    sol = F.solve(F.get("l1_svm").dual(K, y, C=10.0), options={"max_iter": 3}, cross_check=False)
    assert sol.certified and sol.polished
    note("CLARABEL stopped at 3 iterations", "l1_svm dual", "refused naming rel_gap without polish; certified with it")


def test_zz_print_table(capsys):
    with capsys.disabled():
        print("\ncase | reference | outcome")
        for row in TABLE:
            print(" | ".join(row))
    assert TABLE


@pytest.mark.parametrize("name", ["l1_svm", "l2_svm", "least_1norm_svm"])
def test_a_certificate_only_its_floor_bounds_is_never_labelled_optimal(name):
    """K * 1e300 at C = 1: the floor of evaluating the box dual's objectives was 1.6e286 relative, the gap below it,
    and the reference said "optimal" for whatever point it had. A floor above 1e-2 cannot tell the optimum from a
    point that far off: refused by default, naming the floor and the scale; with accept_inaccurate, returned as
    optimal_inaccurate and not certified. The same kernel unscaled is certified optimal."""
    X, y = data(20, d=2, seed=4)
    K = rbf_kernel(X, sigma=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(F.ReferenceSolveError, match="floating-point floor of evaluating its objectives"):
            F.solve(F.get(name).dual(K * 1e300, y, C=1.0))
        sol = F.solve(F.get(name).dual(K * 1e300, y, C=1.0), accept_inaccurate=True)
    assert sol.status.startswith("optimal_inaccurate (floor") and not sol.certified
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = F.solve(F.get(name).dual(K, y, C=1.0))
    assert ok.status.startswith("optimal") and "inaccurate" not in ok.status and ok.certified
