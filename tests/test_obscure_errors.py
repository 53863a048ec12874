"""The obscure errors: inputs that failed deep inside with a message that named neither the input nor the
fix, or refused a legitimate problem. Each now gets a clear error naming the input and the fix, or a correct answer
with an honest label.

1. ``sigma`` whose square under- or overflows (``1e-200``): refused naming ``sigma`` and the accepted range, on every
   path that builds an RBF or Gaussian kernel (dense, cross, ``kernel_matrix``, ``RawKernel``, the estimators on raw
   X, the Bayesian level 3 and its ``sigma_range``).
2. The linear solvers on a kernel of scale ``1e300``: no spurious "KKT system (2) is singular" (an absolute threshold
   on ``1'Ktilde^-1 1``); the system is solved in the scale of K (``solvers/linear.py``, "Scale"), so that
   ``(s K, C / s)`` gives ``alpha / s`` of ``(K, C)`` at any power of 2 ``s``, and where ``C max|K|`` is so large that
   no gap can be certified the result says so (``"suboptimal"``, never ``"optimal"``) naming ``max|K|``, ``C`` and the
   fix.
3. The epsilon-SVR reference on ``s K`` with ``C / s`` (the same problem) is solved by a re-solve in better scaling as
   the box duals are; where it is refused or only resolvable to a floor, the note names the kernel's scale and says
   to rescale K.
4. Bayesian level 3 (and the estimator) on X whose rows are all one point: refused up front naming X (every
   distance is 0, so the evidence cannot choose a width); a constant feature among others changes nothing.

Instances: 30 points of 3 Gaussian features (seed 0), RBF kernel of width 1: ``K`` is positive definite (its least
eigenvalue is about 1e-3 of its largest), so alpha, b and c are unique and are compared directly.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from scipy.linalg import LinAlgWarning
from scipy.sparse.linalg import LinearOperator, aslinearoperator

import svmref.formulations as F
from svmref import kernels
from svmref.formulations._certify import ReferenceAccuracyWarning
from svmref.solvers import bayes, estimators
from svmref.solvers._qmatrix import RawKernel
from svmref.solvers._result import SuboptimalWarning
from svmref.solvers.linear import GAP_TOL, ls_svm, ls_svm_regression, rls

# ---- tolerances (one table) ----------------------------------------------------------------------
TOL = {
    "pow2": 1e-12,   # (2^k K, C 2^-k) against (K, C): the same floating-point problem up to the rounding of the solve
    "decimal": 1e-9,  # (1e300 K, C) against (K, 1e300 C) or the reference: two solves of a system with cond ~1e3
    "cg": 1e-9,      # CG to a relative residual of 1e-13 against Cholesky (cond ~1e3)
    "ref": 1e-7,     # two certified references (tol 1e-8 each) of the same problem in two scalings
}


def data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


# ---- 1. sigma out of range -------------------------------------------------------------------------
X0, Y0, T0 = data()
SIGMA_PATHS = {
    "rbf_kernel": lambda s: kernels.rbf_kernel(X0, sigma=s),
    "rbf cross": lambda s: kernels.rbf_kernel(X0, X0[:3], sigma=s),
    "gaussian_kernel": lambda s: kernels.gaussian_kernel(X0, sigma=s),
    "kernel_matrix": lambda s: kernels.kernel_matrix(X0, kernel="rbf", sigma=s),
    "RawKernel rbf": lambda s: RawKernel(X0, "rbf", sigma=s),
    "RawKernel gaussian": lambda s: RawKernel(X0, "gaussian", sigma=s),
    "L1SVC raw X": lambda s: estimators.L1SVC(sigma=s).fit(X0, Y0),
    "L1SVC raw X gaussian": lambda s: estimators.L1SVC(sigma=s, kernel="gaussian").fit(X0, Y0),
    "RLSClassifier dense": lambda s: estimators.RLSClassifier(sigma=s, kernel="rbf").fit(X0, Y0),
    "BayesianLSSVC": lambda s: estimators.BayesianLSSVC(sigma=s).fit(X0, Y0),
}
GAUSSIAN = {"gaussian_kernel", "RawKernel gaussian", "L1SVC raw X gaussian"}


@pytest.mark.parametrize("path", sorted(SIGMA_PATHS))
@pytest.mark.parametrize("sigma", [1e-200, 1e200])
def test_sigma_out_of_range_is_refused_naming_sigma_and_the_range(path, sigma):
    """Was: ZeroDivisionError inside the kernel seam (sigma^2 = 0). Now a ValueError naming sigma, whose stated range
    is the accepted one: both printed ends are accepted by the kernel, and 1% beyond either end is refused."""
    with pytest.raises(ValueError, match=re.escape(f"sigma = {sigma!r} is out of range")) as exc:
        SIGMA_PATHS[path](sigma)
    m = re.search(r"sigma must lie in \[([0-9.e+-]+), ([0-9.e+-]+)\] for this kernel", str(exc.value))
    assert m and "rescale X" in str(exc.value), str(exc.value)
    lo, hi = float(m.group(1)), float(m.group(2))
    factor = 0.5 if path in GAUSSIAN else 1.0
    assert kernels.rbf_gamma(lo, factor) > 0 and kernels.rbf_gamma(hi, factor) > 0
    for outside in (0.99 * lo, 1.01 * hi):
        with pytest.raises(ValueError, match="is out of range"):
            kernels.rbf_gamma(outside, factor)


def test_sigma_at_the_ends_of_the_range_gives_the_kernel():
    """The smallest accepted sigma is a legitimate width: every distinct pair is many widths apart, K = I exactly."""
    lo, hi = kernels.sigma_range(1.0)
    assert np.array_equal(kernels.rbf_kernel(X0, sigma=lo), np.eye(len(X0)))
    assert np.all(kernels.rbf_kernel(X0, sigma=hi) == 1.0)


@pytest.mark.parametrize("given", [(1e-200, 1.0), None])
def test_level3_sigma_range_outside_the_kernel_is_refused_naming_it(given):
    """A sigma_range end the kernel refuses is refused up front naming sigma_range (or, for the default range, which
    follows the median distance of X, naming X's scale); before, the search met it and named sigma."""
    X = X0 if given is not None else X0 * 1e-160
    with pytest.raises(ValueError, match=r"sigma_range .*has an end outside the widths the RBF kernel accepts") as exc:
        bayes.level3(X, Y0, sigma_range=given)
    assert ("median pairwise distance of X" in str(exc.value)) == (given is None)


# ---- 2. the linear solvers on a kernel of extreme scale ---------------------------------------------
K0 = kernels.rbf_kernel(X0)
SOLVERS = {
    "ls_svm": lambda K, C: ls_svm(K, Y0, C),
    "ls_svm_regression": lambda K, C: ls_svm_regression(K, T0, C),
    "ls_svm_regression cg": lambda K, C: ls_svm_regression(K, T0, C, method="cg", tol=1e-13),
    "rls": lambda K, C: rls(K, T0, 1.0 / C),   # gamma = 1/C: RLS with s K and gamma is RLS with K and gamma / s
}


def coef(r):
    return r.c if r.alpha is None else r.alpha


@pytest.mark.parametrize("k", [1000, 1023, -1000])
@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_scaled_kernel_with_scaled_C_is_the_same_problem(name, k):
    """(2^k K, C 2^-k) is (K, C) (000 eqs. (1)-(2), (7): the LS-SVM with s K and C is the LS-SVM with K and s C,
    alpha / s; 001 eq. (8) for RLS with gamma = 1/C): the same alpha times 2^-k, the same b, the same objective times
    2^-k (RLS: the same), certified optimal. Was: "KKT system (2) is singular" at k = 1000 and 1023 (an absolute
    threshold on 1'Ktilde^-1 1), and at k = 1023 overflowing row sums of |K| (condition estimate inf) and K V."""
    s = 2.0 ** k
    base = SOLVERS[name](K0, 1.0)
    r = SOLVERS[name](K0 * s, 1.0 / s)
    assert base.status == "optimal" and r.status == "optimal", r.message
    assert r.duality_gap <= GAP_TOL
    assert rel(coef(r) * s, coef(base)) <= TOL["pow2"]
    if r.b is not None:
        assert abs(r.b - base.b) <= TOL["pow2"] * np.max(np.abs(T0))
    ratio = 1.0 if name == "rls" else s
    assert abs(r.objective * ratio - base.objective) <= TOL["pow2"] * abs(base.objective)


@pytest.mark.parametrize("k", [1000, -1000, 1023])
def test_operator_kernel_at_extreme_scale(k):
    """A LinearOperator K, whose entries are not at hand, is solved in the scale of one product with the right-hand
    sides. Was: at 2^1000 "KKT system (2) is singular" (1'Ktilde^-1 1 about 2^-1000 under an absolute threshold); at
    2^-1000 "CG met p'(K + I/C)p <= 0: K + I/C is not positive definite" (p'Ap underflowed to 0); at 2^1023
    "singular" too (the products overflowed). CG agrees with the dense solve of (K, C) (times 2^-k)."""
    s = 2.0 ** k
    base = ls_svm(K0, Y0, 1.0)
    r = ls_svm(aslinearoperator(K0 * s), Y0, 1.0 / s, method="cg", tol=1e-13)
    assert r.status == "optimal", r.message
    assert rel(r.alpha * s, base.alpha) <= TOL["cg"] and abs(r.b - base.b) <= TOL["cg"]


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_huge_kernel_at_C_1_is_solved_and_labelled_honestly(name):
    """K * 1e300 at C = 1: the system is regular and is solved (was: "the LS-SVM KKT system (2) is
    singular"; RLS: a gap of inf with no word on why). It is the problem of K at C = 1e300, the hard-margin regime:
    its optimum is about 1e-300 while the slacks' rounding is about 1e-16, so no duality gap can be certified. The
    result is never labelled optimal; the warning names max|K|, C and the fix. Its alpha is that of K at 1e300 C,
    divided by 1e300, and (LS-SVM) that of the certified reference (a different certificate: the solve's error)."""
    with pytest.warns(SuboptimalWarning) as caught, warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an overflow in the certificate is an infinite gap, not a warning
        r = SOLVERS[name](K0 * 1e300, 1.0)
    msg = " ".join(str(w.message) for w in caught)
    assert r.status == "suboptimal" and not np.isfinite(r.gap_floor)
    assert "no duality gap can be certified" in msg and "max|K_ij| = 1e+300" in msg, msg
    assert ("raise gamma or rescale K" if name == "rls" else "lower C or rescale K") in msg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SuboptimalWarning)
        same = SOLVERS[name](K0, 1e300)
    assert rel(coef(r) * 1e300, coef(same)) <= TOL["decimal"]
    if name.startswith("ls_svm"):
        f = F.get("ls_svm" if name == "ls_svm" else "ls_svm_regression")
        sol = F.solve(f.dual(K0 * 1e300, Y0 if name == "ls_svm" else T0, C=1.0))
        assert sol.certified and rel(coef(r), sol.values["alpha"]) <= TOL["decimal"]


def test_C_times_scale_is_what_matters_for_certification():
    """The label depends on C max|K| only: at C max|K| = 1e300 no certificate (as for K at C = 1e300, which was
    already refused), at 1 the certificate holds whatever the scale of K."""
    with pytest.warns(SuboptimalWarning, match="no duality gap can be certified"):
        assert ls_svm(K0, Y0, 1e300).status == "suboptimal"
    assert ls_svm(K0 * 1e300, Y0, 1e-300).status == "optimal"


@pytest.mark.parametrize("s", [1.0, 1e300])
def test_a_truly_singular_system_is_still_refused(s):
    """The singularity test is relative now (it was ``|1'eta| <= N eps (sum|eta| + 1)``, absolute through the ``+ 1``),
    and still refuses, at any scale, a system that is singular: K = s diag(0, -2) and C = 1/s give Ktilde =
    s diag(1, -1), so Ktilde^-1 1 = (1, -1) / s and 1'Ktilde^-1 1 = 0 exactly (b is not determined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinAlgWarning)  # the LDL' fallback of an indefinite Ktilde says so
        with pytest.raises(np.linalg.LinAlgError, match=r"KKT system \(2\) is singular: 1' Ktilde\^-1 1 = 0"):
            ls_svm(np.diag([0.0, -2.0]) * s, np.array([1.0, -1.0]), 1.0 / s)


def test_cg_on_an_operator_with_non_finite_products_is_refused():
    """CG on an operator whose products are not finite (here NaN from the first product on) stopped at once with NaN
    residuals counted as converged, and the zero solution was refused as "singular". Now a FloatingPointError that says
    the products are not finite and what to check."""
    broken = LinearOperator((30, 30), matvec=lambda v: np.full(30, np.nan), dtype=float)
    with pytest.raises(FloatingPointError, match=r"CG on the LS-SVM KKT system \(2\) did not stay finite.*K's products"):
        ls_svm(broken, Y0, 1.0, method="cg")


# ---- 3. the epsilon-SVR reference on a kernel of extreme scale --------------------------------------
@pytest.mark.parametrize("form", ["dual", "primal"])
@pytest.mark.parametrize("s", [1e20, 1e300])
def test_svr_reference_on_scaled_kernel_with_scaled_C(form, s):
    """(s K, C / s) is (K, C) for the epsilon-SVR (the dual with alpha = alpha' / s): its reference is certified and
    its objective is that of (K, C) divided by s (dual) or times 1/s (primal: p* = -d*). Was: refused ("does not
    certify ... rel_gap 0.125", or "CLARABEL failed ... a re-solve in better scaling failed too", though no re-solve
    was tried for the SVR)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CLARABEL's own "inaccurate" notes on the badly scaled model
        base = F.solve(F.get("svr").dual(K0, T0, C=1.0, epsilon=0.1))
        sol = F.solve(getattr(F.get("svr"), form)(K0 * s, T0, C=1.0 / s, epsilon=0.1))
    assert sol.certified and sol.residuals["rel_gap"] <= 1e-8 and sol.residuals["rel_floor"] <= 1e-8
    sign = 1.0 if form == "dual" else -1.0
    assert abs(sign * sol.objective * s - base.objective) <= TOL["ref"] * abs(base.objective)


@pytest.mark.parametrize("s", [1e20, 1e300])
def test_svr_reference_on_huge_kernel_gives_the_scaling_note_and_the_right_answer(s):
    """K * s at C = 1. At 1e300 it was "CLARABEL failed" with a note that did not say what to rescale; at 1e20 the
    polished CLARABEL point was labelled optimal with an objective 30% off (its relative gap, 1.1, below the floor of
    the certificate, 1.6e7). Now the dual is re-solved in better scaling, as the box duals are, whenever its gap is above
    tol, and the better point kept; the warning of the box duals says the gap can only be resolved to a floor far
    above tol, and its note names the kernel's scale N max|K| and says to rescale K. The answer is right: it is the
    problem of K at C = s, and the box of that problem is inactive: the optimum of K at C = 1e4 has |beta| far below
    1e4 (checked), so it is the optimum without the box, which is also the optimum at any larger C; the objectives
    agree (times s). (C = 1e4, not larger: there the reference is certified to 1e-9 itself.)

    The certificate cannot show that it is right: its floor is far above 1e-2 relative, so by default the reference
    is refused (naming the kernel's scale and the fix), and with accept_inaccurate it is returned as
    optimal_inaccurate and not certified, never labelled optimal."""
    n = len(T0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(F.ReferenceSolveError) as exc:
            F.solve(F.get("svr").dual(K0 * s, T0, C=1.0, epsilon=0.1))
    assert "floating-point floor" in str(exc.value) and "rescale K" in str(exc.value), str(exc.value)
    with pytest.warns(ReferenceAccuracyWarning) as caught:
        sol = F.solve(F.get("svr").dual(K0 * s, T0, C=1.0, epsilon=0.1), accept_inaccurate=True)
    assert sol.status.startswith("optimal_inaccurate (floor") and not sol.certified
    msg = " ".join(str(w.message) for w in caught if issubclass(w.category, ReferenceAccuracyWarning))
    assert f"the kernel's scale N x max|K| = {n * s:.3g}" in msg and "rescale K" in msg, msg
    far = F.solve(F.get("svr").dual(K0, T0, C=1e4, epsilon=0.1))
    beta = far.values["alpha_plus"] - far.values["alpha_minus"]
    assert far.residuals["rel_gap"] <= 1e-8 and far.residuals["rel_floor"] <= 1e-8
    assert np.max(np.abs(beta)) < 1e-3 * 1e4
    assert abs(sol.objective * s - far.objective) <= TOL["ref"] * abs(far.objective)


def test_svr_reference_refusal_names_the_kernel_scale_and_the_fix():
    """A refused SVR reference (a rank-2 linear kernel of X * 1e6, C = 1: C x N x max|K| ~ 1e13) says what to rescale."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(8, 2))
    t = X[:, 0] + 0.1 * rng.normal(size=8)
    K = kernels.linear_kernel(X * 1e6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(F.ReferenceSolveError) as exc:
            F.solve(F.get("svr").dual(K, t, C=1.0, epsilon=0.1))
    scale = 8 * float(np.max(np.abs(K)))
    assert f"the kernel's scale N x max|K| = {scale:.3g}" in str(exc.value) and "rescale K" in str(exc.value)


# ---- 4. Bayesian level 3 on X with no spread ---------------------------------------------------------
XC = np.full((30, 3), 2.5)
ZERO_SPREAD = {
    "level3": lambda: bayes.level3(XC, Y0),
    "evidence_surface": lambda: bayes.evidence_surface(XC, Y0, [1.0], [1.0]),
    "BayesianLSSVC": lambda: estimators.BayesianLSSVC().fit(XC, Y0),
    "BayesianLSSVC fixed sigma": lambda: estimators.BayesianLSSVC(sigma=1.0).fit(XC, Y0),
    "BayesianLSSVC linear": lambda: estimators.BayesianLSSVC(kernel="linear").fit(XC, Y0),
}


@pytest.mark.parametrize("path", sorted(ZERO_SPREAD))
def test_zero_spread_X_is_refused_up_front_naming_X(path, monkeypatch):
    """Every row of X the same point: was "the evidence is not finite anywhere on the search grid" after
    a full grid of eigendecompositions (level 3), or a level-2 gamma chosen from rounding noise and labelled optimal
    (fixed sigma, linear kernel). Now refused before any kernel is built (the kernel and the eigendecomposition are
    replaced by functions that fail the test if called)."""
    def forbidden(*args, **kwargs):
        raise AssertionError("work was done before the zero-spread check")

    for fn in ("rbf_kernel", "linear_kernel", "centred_eigen", "median_distance"):
        monkeypatch.setattr(bayes, fn, forbidden)
    with pytest.raises(ValueError, match=r"X has zero spread: all 30 rows are the same point") as exc:
        ZERO_SPREAD[path]()
    assert "every pairwise distance is 0" in str(exc.value) and "at least two distinct rows" in str(exc.value)


def test_a_constant_feature_among_others_changes_nothing():
    """A constant feature changes no distance: level 3 on X with one is level 3 on X without it (the same sigma and
    evidence, to rounding), and the estimator fits."""
    X = X0[:, :2]
    Xc = np.column_stack([X, np.full(len(X), 7.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayes.BoundaryWarning)
        a, b = bayes.level3(X, Y0), bayes.level3(Xc, Y0)
        clf = estimators.BayesianLSSVC().fit(Xc, Y0)
    assert abs(a.sigma - b.sigma) <= 1e-9 * a.sigma and abs(a.log_evidence - b.log_evidence) <= 1e-9 * abs(a.log_evidence)
    assert clf.sigma_ == b.sigma
