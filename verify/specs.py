"""One entry per formulation: everything verify does differently for it, in one table (:data:`SPECS`).

An entry (:class:`Spec`) says how to call the solver (:attr:`Spec.arguments`, :attr:`Spec.call`), how to
read its answer (:attr:`Spec.parse`, :mod:`svmref.verify.answers`), its residuals (:attr:`Spec.residuals`,
the functions of :mod:`svmref.verify.kkt`), how to compute its reference (:attr:`Spec.reference`, run by
:func:`svmref.verify.reference.build`), its decision function on held-out points (:attr:`Spec.held_out`),
its instances (:attr:`Spec.suite`, :mod:`svmref.verify.data`), the convention slips users make
(:attr:`Spec.transforms`, :attr:`Spec.swap`) and the neighbouring problems a wrong answer may have solved
(:attr:`Spec.probes`: another C, gamma, epsilon or kernel). :mod:`svmref.verify.core`,
:mod:`svmref.verify.instances`, :mod:`svmref.verify.diagnosis` and :mod:`svmref.verify.evaluation` look
the entry up and never name a formulation. docs/verify.md walks through adding one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from svmref._validation import check_nonnegative

from . import answers, data, kkt, ovo
from . import reference as R

__all__ = ["Spec", "SPECS", "get", "names"]

#: Above this N the "different kernel" probe (a copy of K) is skipped.
MAX_N_KERNEL_PROBE = 5000


@dataclass(frozen=True)
class Spec:
    """What verify needs to know about one formulation.

    Attributes
    ----------
    name : str
        The formulation's name in :mod:`svmref.formulations`, or the entry's own name where :attr:`formulation` says
        which model it judges against.
    formulation : str
        The formulation of :mod:`svmref.formulations` whose model is the ground truth, where it is not :attr:`name`
        (``fixed_size_ls_svm``: the ``ls_svm_regression`` primal on explicit features).
    kind : str
        Its family, for the reader (``box``, ``regression``, ``rls``, ``features``, ``svr``;
        :data:`svmref.verify.instances.TASK`).
    call : str
        How verify calls a solver of it, as printed in signature errors (``"f(K, y, C, **options)"``).
    arguments : callable
        ``arguments(inst) -> (args, keywords)``: the positional arguments (copies, so the solver cannot
        corrupt the instance) and the keywords each instance carries (epsilon-SVR's ``epsilon``).
    n_args : int
        Number of positional arguments (for the signature check).
    parse : callable
        ``parse(out, inst) -> dict``: the answer as arrays (:mod:`svmref.verify.answers`).
    residuals : callable
        ``residuals(K, inst, hyper, ans, eps) -> kkt.Residuals``.
    reference : callable
        ``reference(F, inst, ans) -> reference.Point``: the reference strategy.
    cache_reference : bool
        Whether the reference depends on the instance only (cached), not on the answer.
    held_out : callable
        ``held_out(inst)``: the rows ``Phi(x) . Phi(x_i)`` (or ``x``) of the held-out points, so that
        ``W . Phi(x) = held_out(inst) @ coef`` (verify's own decision function).
    suite : callable
        ``suite(which, n) -> list of Instance``.
    classification : bool
        Labels are two classes (mapped to -1, +1 for ``--data``).
    data_hyper : callable
        ``data_hyper(C, mu, epsilon, n_train) -> dict``: the hyperparameters of an instance from the user's data.
    on_features : bool
        The solver works on ``X`` (linear), not on a kernel matrix.
    instance_keywords : tuple of str
        Keywords that each instance sets (options must not).
    has_b : bool
        The decision function has a bias (RLS: ``f(x) = sum_i c_i k(x_i, x)``, none).
    advice : bool
        Diagnose "b is wrong", another problem, and hints (not for a non-convex fixed point).
    b_average_hint : bool
        A wrong b is often averaged over bounded support vectors too: the diagnosis says so where ``b`` equals that
        average (:attr:`average_b`).
    average_b : callable or None
        ``average_b(inst, ans, r) -> float | None``: the bias that slip computes, the average over every support
        vector (``alpha_i != 0``), bounded ones included, of the ``b`` that would put pattern ``i`` on its margin.
    estimator_params : callable or None
        ``estimator_params(inst) -> dict``: the instance's hyperparameters in scikit-learn's names (``C``; ``epsilon``;
        KernelRidge's ``alpha = m gamma`` for RLS), for an estimator judged on raw X
        (:func:`svmref.verify.estimators.check_estimator`); None: no estimator convention.
    read_fitted : callable or None
        ``read_fitted(est, inst) -> answer``: the answer in the contract's form, read from a fitted estimator's state
        (``dual_coef_``, ``support_``, ``intercept_``; one pair of a one-vs-one model, :mod:`svmref.verify.ovo`).
    answer_words : str
        What an answer of this formulation holds and how it makes the decision function, in words (the manifest of
        ``svmref suite export``, :mod:`svmref.verify.exchange`).
    answer_vector : str
        The name of the answer's vector of length N (``alpha``; ``c`` for RLS, ``lam`` for the support features machine):
        the numbers of an answer file in text, before ``b``.
    certificate : callable or None
        ``certificate(inst, r, values) -> dict``: what the answer's own primal-dual certificate bounds, without a
        reference (:func:`svmref.verify.check` with ``certificate=True``): ``{"objective_gap", "decision_gap",
        "b_gap"}``, each an upper bound in the check's unit, ``inf`` where the certificate bounds nothing
        (:func:`_certificate_bounds`; docs/verify.md derives them). None: no certificate.
    causes : tuple of callables
        ``cause(spec, inst, ans, r, values, tol, tols, failing) -> str``: other problems of this formulation that a
        wrong answer may solve exactly, tried by :func:`svmref.verify.diagnosis.other_problem` ("solves ...
        instead"; "" when not).
    equality_words, stationarity_words : str
        How the diagnoses name a failed equality and stationarity.
    transforms : callable
        ``transforms(inst, ans) -> [(description, answer), ...]``: known convention slips.
    swap : tuple or None
        ``(neighbour, convention)``: the formulation a wrong answer often solves, and why.
    probes : tuple of callables
        ``probe(inst, ans)`` yields ``(change, message)``: ``change`` (``{"hyper": ...}`` or ``{"K": ...}``)
        is a neighbouring problem; ``message`` is the diagnosis when the answer solves it.
    """

    name: str
    kind: str
    call: str
    arguments: Callable
    n_args: int
    parse: Callable
    residuals: Callable
    reference: Callable
    held_out: Callable
    suite: Callable
    classification: bool
    data_hyper: Callable
    transforms: Callable
    probes: tuple = ()
    swap: tuple | None = None
    cache_reference: bool = True
    on_features: bool = False
    instance_keywords: tuple = ()
    has_b: bool = True
    advice: bool = True
    b_average_hint: bool = False
    average_b: Callable | None = None
    estimator_params: Callable | None = None
    read_fitted: Callable | None = None
    answer_words: str = "alpha (length N) and b: f(x) = sum_i alpha_i y_i k(x_i, x) + b"
    answer_vector: str = "alpha"
    certificate: Callable | None = None
    causes: tuple = ()
    formulation: str = ""
    equality_words: str = "y'alpha != 0"
    stationarity_words: str = "b-free KKT residual (maximal violating pair)"

    @property
    def model(self) -> str:
        """The formulation whose model is this entry's ground truth (:attr:`formulation`, else :attr:`name`)."""
        return self.formulation or self.name

    @property
    def box_dual(self) -> kkt.BoxDual | None:
        """The box-constrained dual this formulation is (:data:`svmref.verify.kkt.BOX_DUALS`), or None."""
        return kkt.BOX_DUALS.get(self.name)

    @property
    def positional_names(self) -> list[str]:
        """The names of the positional arguments in :attr:`call`: ``f(K, y, C, **options)`` -> K, y, C."""
        inside = self.call[self.call.index("(") + 1:self.call.rindex(")")]
        return [a.strip() for a in inside.split(",")][:self.n_args]

    def build_reference(self, inst, ans: dict) -> R.Reference:
        """The reference of ``inst`` (cached per instance unless it depends on the answer)."""
        key = (self.name, inst.key()) if self.cache_reference else None
        return R.build(self.reference, inst, ans, key=key)


# ------------------------------------------------------------------------------ calling the solver


def _kernel_C(inst) -> tuple[tuple, dict]:
    return (inst.K.copy(), inst.y.copy(), inst.hyper["C"]), {}


def _kernel_C_v(inst) -> tuple[tuple, dict]:
    return (inst.K.copy(), inst.y.copy(), inst.hyper["C"]), {"v": data.weights_of(inst).copy()}


def _kernel_gamma(inst) -> tuple[tuple, dict]:
    return (inst.K.copy(), inst.y.copy(), inst.hyper["gamma"]), {}


def _features_C_mu(inst) -> tuple[tuple, dict]:
    return (inst.X.copy(), inst.y.copy(), inst.hyper["C"], inst.hyper["mu"]), {}


def _features_C(inst) -> tuple[tuple, dict]:
    return (inst.X.copy(), inst.y.copy(), inst.hyper["C"]), {}


def _features_C_bias(inst) -> tuple[tuple, dict]:
    return (inst.X.copy(), inst.y.copy(), inst.hyper["C"]), {"bias_scale": inst.hyper["bias_scale"]}


def _kernel_C_epsilon(inst) -> tuple[tuple, dict]:
    return (inst.K.copy(), inst.y.copy(), inst.hyper["C"]), {"epsilon": inst.hyper["epsilon"]}


def _kernel_rows(inst) -> np.ndarray:
    return inst.K_test


def _feature_rows(inst) -> np.ndarray:
    return inst.X_test


def _hyper_C(C, mu, epsilon, n_train) -> dict:
    return {"C": float(C)}


def _hyper_gamma(C, mu, epsilon, n_train) -> dict:
    return {"gamma": 1.0 / (C * n_train)}


def _hyper_C_mu(C, mu, epsilon, n_train) -> dict:
    return {"C": float(C), "mu": float(mu)}


def _hyper_C_bias(C, mu, epsilon, n_train) -> dict:
    return {"C": float(C), "bias_scale": 1.0}  # LIBLINEAR's -B 1 and LinearSVC's intercept_scaling=1


def _hyper_C_epsilon(C, mu, epsilon, n_train) -> dict:
    return {"C": float(C), "epsilon": check_nonnegative(epsilon, "epsilon", "width of the insensitive tube")}


# ------------------------------------------------------------------------------ residuals


def _weights(name: str, inst) -> np.ndarray | None:
    """The instance's pattern weights where the box dual ``name`` is weighted (:func:`data.weights_of`), else None."""
    return data.weights_of(inst) if kkt.BOX_DUALS[name].weighted else None


def _box_residuals(name: str) -> Callable:
    def residuals(K, inst, hyper, ans, eps):
        return kkt.box_dual_residuals(name, K, inst.y, hyper["C"], ans["alpha"], ans["b"], eps=eps,
                                      weights=_weights(name, inst))
    return residuals


def _rls_residuals(K, inst, hyper, ans, eps):
    return kkt.rls_residuals(K, inst.y, hyper["gamma"], ans["c"])


def _sparse_residuals(K, inst, hyper, ans, eps):
    return kkt.sparse_ls_svm_residuals(K, inst.y, hyper["C"], ans["alpha"], ans["b"])


def _features_residuals(K, inst, hyper, ans, eps):
    return kkt.support_features_residuals(inst.X, inst.y, hyper["C"], hyper["mu"], ans["lam"], ans["a"], ans["b"],
                                          eps=eps)


def _regularised_bias_residuals(loss: str) -> Callable:
    def residuals(K, inst, hyper, ans, eps):
        return kkt.regularised_bias_residuals(inst.X, inst.y, hyper["C"], hyper["bias_scale"], loss, ans["alpha"],
                                              ans["w"], ans["b"])
    return residuals


def _ridge_residuals(K, inst, hyper, ans, eps):
    return kkt.ridge_residuals(inst.X, inst.y, hyper["C"], ans["alpha"], ans["w"], ans["b"])


def _svr_residuals(K, inst, hyper, ans, eps):
    return kkt.svr_residuals(K, inst.y, hyper, ans, eps)


# ------------------------------------------------------------------------------ references


def _point(lo: float, hi: float, n: int) -> bool:
    """Whether ``[lo, hi]`` is a single ``b`` up to the rounding of the margins that set its ends."""
    return bool(hi - lo <= kkt.rounding(n, abs(lo) + abs(hi)))


def _middle(lo: float, hi: float, fallback: float) -> float:
    """The middle of ``[lo, hi]``, its finite end, or ``fallback``."""
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if np.isfinite(lo) else hi if np.isfinite(hi) else fallback


def _box_dual_reference(name: str) -> Callable:
    """The dual of :mod:`svmref.formulations`; the optimal ``b`` for its ``W`` from the primal
    (:func:`kkt.primal_b_interval`: an interval where ``b`` is not unique), its residuals at that ``b``."""
    def point(F, inst, ans):
        C = inst.hyper["C"]
        v = _weights(name, inst)
        sol, warns = R.solve(F.get(name).dual(inst.K, inst.y, C=C, **({} if v is None else {"v": v})))
        alpha = np.asarray(sol.values["alpha"], dtype=float)
        spec = kkt.BOX_DUALS[name]
        r = kkt.box_dual_residuals(name, inst.K, inst.y, C, alpha, None, eps=R.REF_EPS, weights=v)
        lo, hi = kkt.primal_b_interval(spec.loss, inst.y - inst.K @ r.coef, inst.y, weights=v)
        b = _middle(lo, hi, r.b)
        r = kkt.box_dual_residuals(name, inst.K, inst.y, C, alpha, b, eps=R.REF_EPS, own_error=True,  # at its best b
                                   weights=v)
        return R.Point(sol, float(sol.objective), r.coef, b, _point(lo, hi, inst.N), warns, r, lo, hi)
    return point


def _rls_reference(F, inst, ans):
    """The primal (001 eq. (7)); for tiny gamma it is badly scaled, and its strongly convex dual gives c = alpha/(2 gamma)."""
    gamma = inst.hyper["gamma"]
    f = F.get("rls")
    try:
        sol, warns = R.solve(f.primal(inst.K, inst.y, gamma=gamma))
        c = np.asarray(sol.values["c"], dtype=float)
    except F.ReferenceSolveError as exc:
        sol, warns = R.solve(f.dual(inst.K, inst.y, gamma=gamma))
        c = np.asarray(sol.values["alpha"], dtype=float) / (2.0 * gamma)
        warns.append(f"primal reference failed ({exc}); used the dual, p* = -d*")
        sol = R.Negated(sol)
    r = kkt.rls_residuals(inst.K, inst.y, gamma, c, own_error=True)
    return R.Point(sol, float(sol.objective), r.coef, r.b, r.b_unique, warns, r)


def _svr_reference(F, inst, ans):
    """The dual in ``alpha^+, alpha^-``; ``b`` from the KKT conditions of ``alpha = alpha^+ - alpha^-``."""
    sol, warns = R.solve(F.get("svr").dual(inst.K, inst.y, C=inst.hyper["C"], epsilon=inst.hyper["epsilon"]))
    beta = np.asarray(sol.values["alpha_plus"], dtype=float) - np.asarray(sol.values["alpha_minus"], dtype=float)
    r = kkt.svr_residuals(inst.K, inst.y, inst.hyper, {"alpha": beta, "b": None}, eps=R.REF_EPS)
    lo, hi = kkt.primal_b_interval("tube", inst.y - inst.K @ beta, inst.y, inst.hyper["epsilon"])
    b = _middle(lo, hi, r.b)
    r = kkt.svr_residuals(inst.K, inst.y, inst.hyper, {"alpha": beta, "b": b}, eps=R.REF_EPS, own_error=True)
    return R.Point(sol, float(sol.objective), r.coef, b, _point(lo, hi, inst.N), warns, r, lo, hi)


def _features_reference(F, inst, ans):
    """The dual (003 eq. (10)); ``a`` by eq. (8) and ``b`` from the KKT conditions."""
    C, mu = inst.hyper["C"], inst.hyper["mu"]
    sol, warns = R.solve(F.get("support_features").dual(inst.X, inst.y, C=C, mu=mu))
    lam = np.asarray(sol.values["lam"], dtype=float)
    r = kkt.support_features_residuals(inst.X, inst.y, C, mu, lam=lam, eps=R.REF_EPS)
    lo, hi = kkt.primal_b_interval("hinge", inst.y - inst.X @ r.coef, inst.y)
    b = _middle(lo, hi, r.b)
    r = kkt.support_features_residuals(inst.X, inst.y, C, mu, lam=lam, b=b, eps=R.REF_EPS)
    return R.Point(sol, float(sol.objective), r.coef, b, _point(lo, hi, inst.N), warns, r, lo, hi)


def _newton_correction(r, X, y, C, B, loss, alpha) -> None:
    """The reference's own first-order error (:func:`R.resolution`), as for the LS-SVM: the signed Newton correction
    of its dual (docs/formulations/regularised_bias.md §4: 003 eq. (3) on ``K + B^2 11'`` without ``y'alpha = 0``)
    on the free variables (``0 < alpha_i < C``; ``alpha_i > 0`` for L2), ``Q_FF d_F = -s_F`` with ``Q = Y
    (X X' + B^2 1 1') Y [+ I/C]`` and ``s`` the gradient, carried to ``w`` (``X_F'(y_F d_F)``) and ``b`` (``B^2 y_F'd_F``).
    The primal is strongly convex, so ``w`` and ``b`` are unique and this is their error to first order."""
    sq = loss == "squared_hinge"
    up = np.inf if sq else C
    s = y * (X @ r.coef + r.b) - 1.0 + (alpha / C if sq else 0.0)
    delta = R.REF_EPS * C  # an interior-point alpha a little inside the bound its gradient holds it at is at it
    free = ~((alpha <= delta) & (s > 0.0)) & ~((alpha >= up - delta) & (s < 0.0))
    r.coef_correction, r.coef_error, r.b_correction = True, np.zeros(X.shape[1]), 0.0
    if not np.any(free):
        return
    Xf, yf, af, s = X[free], y[free], alpha[free], s[free]
    Q = (yf[:, None] * (Xf @ Xf.T + B * B)) * yf[None, :] + (np.eye(af.size) / C if sq else 0.0)
    d = np.linalg.lstsq(Q, -s, rcond=None)[0]
    r.coef_error = Xf.T @ (yf * d)
    r.b_correction = B * B * float(yf @ d)


def _regularised_bias_reference(name: str, loss: str) -> Callable:
    """The dual of :mod:`svmref.formulations.regularised_bias` on ``K = X X'``; ``w = X'(y alpha)`` and ``b = B^2
    y'alpha``, unique (the primal is strongly convex in ``(w, b / B)``)."""
    def point(F, inst, ans):
        C, B = inst.hyper["C"], inst.hyper["bias_scale"]
        sol, warns = R.solve(F.get(name).dual(inst.X @ inst.X.T, inst.y, C=C, bias_scale=B))
        alpha = np.asarray(sol.values["alpha"], dtype=float)
        r = kkt.regularised_bias_residuals(inst.X, inst.y, C, B, loss, alpha=alpha)
        _newton_correction(r, inst.X, inst.y, C, B, loss, alpha)
        return R.Point(sol, -float(sol.objective), r.coef, float(r.b), True, warns, r, float(r.b), float(r.b))
    return point


def _ridge_newton(X, y, C, w, b) -> tuple[np.ndarray, float]:
    """The exact Newton step of the quadratic primal ``P(w, b)`` at ``(w, b)``: ``H [dw; db] = -grad P`` with ``b``
    eliminated by its own row, ``(I + C Xc'Xc) dw = -g_w + xbar g_b``, ``db = -g_b / (C N) - xbar'dw`` (``Xc`` the
    centred features: no cancellation when the features have a large common offset)."""
    e = y - X @ w - b
    gw, gb = w - C * (X.T @ e), -C * float(np.sum(e))
    xbar = X.mean(axis=0)
    Xc = X - xbar
    H = C * (Xc.T @ Xc)
    H[np.diag_indices(X.shape[1])] += 1.0
    dw = np.linalg.lstsq(H, -gw + xbar * gb, rcond=None)[0]
    return dw, -gb / (C * X.shape[0]) - float(xbar @ dw)


def _ridge_reference(F, inst, ans):
    """The primal of ``ls_svm_regression`` (004 eq. (1)) with ``Phi = X`` (the linear kernel's exact factor), solved by
    :func:`svmref.formulations.solve`, then one exact Newton step on the centred normal equations (:func:`_ridge_newton`;
    the cvxpy model's solve goes through ``K = X X'``, whose rounding grows with ``||X||^2``); a second step is its own
    first-order error."""
    C = inst.hyper["C"]
    X, y = inst.X, inst.y
    sol, warns = R.solve(F.get("ls_svm_regression").primal(None, y, C=C, X=X))
    w, b = np.asarray(sol.values["W"], dtype=float), float(sol.values["b"])
    dw, db = _ridge_newton(X, y, C, w, b)
    w, b = w + dw, b + db
    r = kkt.ridge_residuals(X, y, C, w=w, b=b)
    dw, db = _ridge_newton(X, y, C, w, b)
    r.coef_correction, r.coef_error, r.b_correction = True, dw, db
    return R.Point(sol, r.primal_objective, r.coef, b, True, warns, r, b, b)


def _sparse_reference(F, inst, ans):
    """Problem (3) of 004 at the weights the answer implies, ``lam_i = 1/alpha_i^2`` (Algorithm 1).

    An ``alpha_i`` below the support-vector threshold (``kkt.SV_ATOL * max(1, max|y|)``) is taken as 0, and
    an ``alpha_i = 0`` (``lam_i = inf``) is given the weight 1e300, i.e. ``diag(lam)^-1 = 1e-300``, which is
    0 to double precision in ``H = K diag(lam)^-1 K + I/C``. The dual (``beta``) is solved,
    ``alpha_ref = diag(lam)^-1 K beta`` and ``b_ref = mean(y - H beta)`` (system (4)); the objective is ``p* = -d*``.
    """
    alpha = np.asarray(ans["alpha"], dtype=float)
    y_scale = max(1.0, float(np.max(np.abs(inst.y))))
    a2 = np.where(np.abs(alpha) > kkt.SV_ATOL * y_scale, alpha, 0.0) ** 2
    lam = 1.0 / np.maximum(a2, 1e-300)
    C = inst.hyper["C"]
    if not inst.psd()[0]:
        raise F.NotConvexError(f"K is not PSD (smallest eigenvalue {inst.psd()[1]:.3g}); problem (3) is not convex")
    sol, warns = R.solve(F.get("sparse_ls_svm").dual(inst.K, inst.y, C=C, lam=lam))
    beta = np.asarray(sol.values["beta"], dtype=float)
    alpha_ref = (inst.K @ beta) / lam
    Hb = inst.K @ alpha_ref + beta / C
    b_ref = float(np.mean(inst.y - Hb))
    # its accuracy (reference.resolution) from its own certificate: the objective to the certificate's duality gap
    # (P + D, or its relative gap times max(1, |objective|)), the coefficients to its relative error bound;
    # inf (unresolved) where the certificate does not give them
    cert = (getattr(sol, "certificate", {}) or {}).get("residuals", {})
    obj = float(sol.objective)
    gap = cert.get("gap", cert.get("gap_p_plus_d"))
    if gap is None and "rel_gap" in cert:
        gap = float(cert["rel_gap"]) * max(1.0, abs(obj))
    rel_err = float(cert.get("rel_error_bound", float("inf")))
    unit = kkt.target_scale(inst.y)
    terms = float(np.max(np.abs(inst.K) @ np.abs(alpha_ref) + np.abs(inst.y)))
    r = kkt.Residuals(-obj, float("nan"), {"stationarity": 0.0}, {}, b_ref, unit=unit,
                      gap_abs=abs(float(gap)) if gap is not None else float("inf"), obj_scale=abs(obj),
                      floor=kkt.rounding(inst.N, terms) / unit, coef_error=rel_err * np.abs(alpha_ref))
    return R.Point(sol, -float(sol.objective), alpha_ref, b_ref, True, warns, r, b_ref, b_ref)


# ------------------------------------------------------------------------------ convention slips


def _alpha_scalings(inst, a, b) -> list:
    C = inst.hyper["C"]
    scal = [(0.5, "alpha / 2"), (2.0, "alpha * 2")]
    if abs(C - 1.0) > 1e-12:
        scal = [(1.0 / C, "alpha / C"), (C, "alpha * C")] + scal
    return [(how, {"alpha": a * f, "b": b}) for f, how in scal]


def _classifier_transforms(absolute: bool) -> Callable:
    """Box duals of classification: ``y * alpha`` (scikit-learn's ``dual_coef_``), ``|alpha|``, ``-b``, scalings."""
    def transforms(inst, ans):
        a, b = ans["alpha"], ans["b"]
        y = inst.y
        out = [("alpha -> y * alpha (your alpha looks like y_i alpha_i: scikit-learn's dual_coef_, or the "
                "regression convention)", {"alpha": a * y, "b": b})]
        if absolute:
            out.append(("alpha -> |alpha|", {"alpha": np.abs(a), "b": b}))
        if b is not None:
            out.append(("alpha -> y * alpha and b -> -b", {"alpha": a * y, "b": -b}))
            out.append(("b -> -b (the decision function is sum_i alpha_i y_i k(x_i, x) + b)", {"alpha": a, "b": -b}))
        return out + _alpha_scalings(inst, a, b)
    return transforms


def _regression_transforms(inst, ans):
    a, b = ans["alpha"], ans["b"]
    out = []
    if b is not None:
        out.append(("b -> -b (the decision function is sum_i alpha_i y_i k(x_i, x) + b)", {"alpha": a, "b": -b}))
    return out + _alpha_scalings(inst, a, b)


def _svr_transforms(inst, ans):
    a, b = ans["alpha"], ans["b"]
    out = [("alpha -> -alpha (your alpha looks like alpha^- - alpha^+; the decision function is "
            "sum_i (alpha^+_i - alpha^-_i) k(x_i, x) + b)", {"alpha": -a, "b": b})]
    if b is not None:
        out.append(("alpha -> -alpha and b -> -b", {"alpha": -a, "b": -b}))
        out.append(("b -> -b (the decision function is sum_i alpha_i k(x_i, x) + b; LIBSVM's rho is -b)",
                    {"alpha": a, "b": -b}))
    return out + _alpha_scalings(inst, a, b)


def _rls_transforms(inst, ans):
    c, m = ans["c"], inst.N
    return [(how, {"c": c * f}) for f, how in ((1.0 / m, "c / m"), (float(m), "c * m"), (0.5, "c / 2"), (2.0, "c * 2"))]


def _features_transforms(inst, ans):
    out = []
    if ans["lam"] is not None:
        for f, how in ((0.5, "lam / 2"), (2.0, "lam * 2")):
            out.append((how, {**ans, "lam": ans["lam"] * f, "a": None if ans["a"] is None else ans["a"] * f}))
    if ans["b"] is not None:
        out.append(("b -> -b", {**ans, "b": -ans["b"]}))
    return out


def _no_transforms(inst, ans):
    return []


# ------------------------------------------------------------------------------ neighbouring problems


def _gamma_probe(inst, ans) -> Iterator:
    """RLS with another gamma (scikit-learn's KernelRidge(alpha=gamma) solves gamma / m)."""
    h = dict(inst.hyper)
    g, N = h["gamma"], inst.N
    for f, how in ((1.0 / N, "gamma / m (e.g. KernelRidge(alpha=gamma) instead of alpha = m gamma)"),
                   (float(N), "gamma * m"), (0.5, "gamma / 2"), (2.0, "gamma * 2")):
        yield ({"hyper": {**h, "gamma": g * f}},
               f"solves the problem with {how} = {g * f:.6g} instead of gamma = {g:.6g}")


def _C_how(c2: float, C: float, N: int) -> str:
    """How another C relates to the instance's, where it is one of the usual slips (" (= C / N)", ...)."""
    for f, how in ((1.0 / N, "C / N: C scaled by the number of patterns"), (float(N), "C N: C scaled by the number of "
                   "patterns"), (0.5, "C / 2"), (2.0, "2 C")):
        if abs(c2 - C * f) <= 1e-9 * abs(C * f):
            return f" (= {how})"
    return ""


def _C_probe(saturating: str | None) -> Callable:
    """Another C: a few multiples, and first, where several ``|saturating_i|`` share one top value, that value."""
    def probe(inst, ans) -> Iterator:
        h = dict(inst.hyper)
        C, N = h["C"], inst.N
        cands = []
        vec = ans.get(saturating) if saturating else None
        if vec is not None:
            top = float(np.max(np.abs(vec)))
            if top > 0 and abs(top - C) > 1e-3 * C and np.sum(np.abs(np.abs(vec) - top) <= 1e-6 * top) >= 2:
                cands.append(top)  # several alpha_i saturate at the same value: the C the solver used
        cands += [C * f for f in (0.5, 2.0, 0.1, 10.0, 1.0 / N, float(N))]
        for c2 in cands:
            yield ({"hyper": {**h, "C": c2}},
                   f"solves the problem with C = {c2:.6g}{_C_how(c2, C, N)} instead of C = {C:g}")
    return probe


def _epsilon_probe(inst, ans) -> Iterator:
    """epsilon-SVR with epsilon ignored, doubled or halved."""
    h = dict(inst.hyper)
    e = h["epsilon"]
    for e2, how in ((0.0, "epsilon = 0 (epsilon ignored: no tube)"), (2.0 * e, "2 epsilon"), (0.5 * e, "epsilon / 2")):
        if e2 == e:
            continue
        yield ({"hyper": {**h, "epsilon": e2}},
               f"solves the problem with {how} instead of epsilon = {e:g} (verify passes epsilon by keyword: "
               "f(K, y, C, epsilon=...))")


def _kernel_probe(shifted: bool) -> Callable:
    """The modified kernel K + I/C (000 eq. (2)) confused with K, either way."""
    def probe(inst, ans) -> Iterator:
        N, C = inst.N, inst.hyper["C"]
        if N > MAX_N_KERNEL_PROBE:
            return
        K2 = inst.K - np.eye(N) / C if shifted else inst.K + np.eye(N) / C
        yield ({"K": K2},
               "solves the problem for the kernel K instead of K + I/C (the I/C of the modified kernel, "
               "000 eq. (2), was left out)" if shifted else
               "solves the problem for the kernel K + I/C instead of K (a diagonal I/C was added)")
    return probe


def _ridge_C_probe(inst, ans) -> Iterator:
    """Another C: ``1/C`` first (scikit-learn's ``Ridge(alpha=C)``: its ``alpha`` is ``1/C``), then the usual multiples
    (:func:`_C_probe`)."""
    C = inst.hyper["C"]
    if abs(1.0 / C - C) > 1e-9 * C:
        yield ({"hyper": {**inst.hyper, "C": 1.0 / C}},
               f"solves the problem with C = {1.0 / C:.6g} = 1/C instead of C = {C:g} (scikit-learn's Ridge minimises "
               "||y - Xw - b||^2 + alpha ||w||^2, so its alpha is 1/C: Ridge(alpha=C) is this slip)")
    yield from _C_probe(None)(inst, ans)


def _ridge_bias(spec, inst, ans, r, values, tol, tols, failing) -> str:
    """A bias in the penalty (``1/2 b^2`` added: a column of ones appended to the features) or none (``b = 0``): the
    answer's ``(w, b)`` meets that problem's stationarity, ``w = C X'e`` and ``b = C 1'e`` (resp. ``b = 0``), within
    ``tol`` relative to the size of its terms."""
    if r.coef is None or r.b is None:
        return ""
    X, y, C = inst.X, inst.y, float(inst.hyper["C"])
    w, b = np.asarray(r.coef, dtype=float), float(r.b)
    e = y - X @ w - b
    scale = max(float(np.max(np.abs(w), initial=0.0)), abs(b),
                C * float(np.max(np.abs(X).T @ np.abs(e), initial=0.0)), C * float(np.sum(np.abs(e))))
    if not scale > 0:
        return ""
    gw = float(np.max(np.abs(w - C * (X.T @ e)), initial=0.0)) / scale
    if b == 0.0 and gw <= tol:
        return ("solves ridge regression without a bias instead (b = 0, no condition sum_i e_i = 0): the answer meets "
                f"w = C X'e to {gw:.1e}; 004 eq. (1) has a free b")
    gb = abs(b - C * float(np.sum(e))) / scale
    if b != 0.0 and max(gw, gb) <= tol:
        return (f"solves ridge regression with the bias in the penalty instead (1/2 b^2 added, as a column of ones "
                f"appended to the features does): the answer meets w = C X'e and b = C sum_i e_i to "
                f"{max(gw, gb):.1e}; 004 eq. (1) has a free b, whose condition is sum_i e_i = 0")
    return ""


def _weighted_kernel_probe(inst, ans) -> Iterator:
    """The weighted modified kernel ``K + diag(1/(C v_i))`` confused with ``K``."""
    N, C = inst.N, inst.hyper["C"]
    if N > MAX_N_KERNEL_PROBE:
        return
    yield ({"K": inst.K - np.diag(1.0 / (C * data.weights_of(inst)))},
           "solves the problem for the kernel K instead of K + diag(1/(C v_i)) (the diagonal of the weighted "
           "modified kernel was left out)")


def _weights_probe(inst, ans) -> Iterator:
    """The weights ignored, inverted, square-rooted or squared (the usual slips with per-pattern weights)."""
    v = data.weights_of(inst)
    for v2, how in ((np.ones_like(v), "the weights ignored (every v_i = 1): the unweighted LS-SVM"),
                    (1.0 / v, "the weights inverted: C / v_i instead of C v_i"),
                    (np.sqrt(v), "sqrt(v_i) instead of v_i (the weights taken as factors of the errors e_i, whose "
                                 "squares the loss weighs)"),
                    (v * v, "v_i^2 instead of v_i (the weights applied twice)")):
        if np.array_equal(v2, v):
            continue
        yield ({"weights": v2}, f"solves the problem with {how} (verify passes the weights by keyword: "
                                "f(K, y, C, v=v))")


def _average_margin_b(tube: bool) -> Callable:
    """The bias of a common slip (:attr:`Spec.average_b`): the average of ``y_i - W.Phi(x_i)`` (epsilon-SVR:
    ``y_i - W.Phi(x_i) - epsilon sign(alpha_i)``) over every support vector (``|alpha_i| > 1e-8 C``), bounded ones
    included."""
    def average(inst, ans, r):
        alpha = ans.get("alpha")
        if alpha is None or r.coef is None:
            return None
        alpha = np.asarray(alpha, dtype=float)
        sv = np.abs(alpha) > 1e-8 * inst.hyper["C"]  # an interior-point answer leaves zeros a rounding above 0
        if not np.any(sv):
            return None
        z = inst.y - inst.K @ r.coef
        if tube:
            z = z - inst.hyper["epsilon"] * np.sign(alpha)
        return float(np.mean(z[sv]))
    return average


def _rls_penalty(spec, inst, ans, r, values, tol, tols, failing) -> str:
    """RLS with the penalty ``gamma' ||c||^2`` instead of ``gamma c'Kc`` (001 eq. (7)): its stationarity
    ``K (Kc - y) + m gamma' c = 0``, with ``gamma'`` by least squares, within ``tol`` relative to the larger of its
    two terms (or within the rounding of ``K (Kc - y)``)."""
    c = np.asarray(ans["c"], dtype=float)
    K, y, m = inst.K, inst.y, inst.N
    g = K @ (K @ c - y)
    cc = float(c @ c)
    if cc <= 0:
        return ""
    gam = -float(c @ g) / (m * cc)
    if not (gam > 0 and np.isfinite(gam)):
        return ""
    res = g + m * gam * c
    # relative to its two terms (at a solution they cancel; the rounding of each is that of K(Kc - y))
    scale = max(float(np.max(np.abs(g))), m * gam * float(np.max(np.abs(c))))
    floor = kkt.rounding(m, float(np.max(np.abs(K) @ (np.abs(K) @ np.abs(c) + np.abs(y)))))
    rel = float(np.max(np.abs(res))) / scale if scale > 0 else 0.0
    if not (rel <= tol or float(np.max(np.abs(res))) <= floor):
        return ""
    return (f"solves RLS with the penalty gamma' ||c||^2 instead of gamma c'Kc (001 eq. (7)), with gamma' = {gam:.6g}: "
            f"its stationarity K(Kc - y) + m gamma' c = 0 holds to {rel:.1e} (relative); the RKHS norm of f is c'Kc")


# ------------------------------------------------------------------------------ estimators (scikit-learn's conventions)


def _params_C(inst) -> dict:
    return {"C": float(inst.hyper["C"])}


def _params_C_epsilon(inst) -> dict:
    return {"C": float(inst.hyper["C"]), "epsilon": float(inst.hyper["epsilon"])}


def _params_linear_svc(loss: str) -> Callable:
    """scikit-learn's ``LinearSVC`` (LIBLINEAR): ``loss``; ``C`` (its squared hinge is ``C' sum xi^2``, so ``C' = C/2``
    for the L2 loss written ``C/2 sum xi^2``); ``intercept_scaling = B``, and ``fit_intercept=False`` for ``B = 0``."""
    def params(inst) -> dict:
        C, B = float(inst.hyper["C"]), float(inst.hyper["bias_scale"])
        out = {"C": C if loss == "hinge" else 0.5 * C, "loss": loss, "fit_intercept": B > 0}
        if B > 0:
            out["intercept_scaling"] = B
        return out
    return params


def _read_linear(est, inst):
    """The primal ``w, b`` from ``coef_`` and ``intercept_`` (``f(x) = w'x + b``), and ``alpha`` from ``dual_coef_``
    where the estimator keeps it (``y_i alpha_i``, LIBSVM's layout)."""
    if getattr(est, "coef_", None) is None:
        raise answers.BadAnswer(f"the fitted {type(est).__name__} has no coef_: verify reads w and b of a linear model "
                                "from coef_ and intercept_")
    coef = np.atleast_2d(np.asarray(est.coef_, dtype=float))
    if coef.shape[0] != 1:
        raise answers.BadAnswer(f"coef_ has {coef.shape[0]} rows: verify judges a binary linear model (one row)")
    intercept = np.ravel(np.asarray(getattr(est, "intercept_", 0.0), dtype=float))
    return {"w": coef[0], "b": float(intercept[0]) if intercept.size else 0.0}


def _params_rls(inst) -> dict:
    """KernelRidge solves ``(K + alpha I) c = y``; 001 eq. (8) is ``(K + m gamma I) c = y``: ``alpha = m gamma``."""
    return {"alpha": float(inst.N * inst.hyper["gamma"])}


def _linear_model(est, what: str) -> answers.BadAnswer:
    """A fitted linear model (``coef_``, no ``dual_coef_``). scikit-learn's ``LinearSVC``/``LinearSVR`` and LIBLINEAR
    put the intercept in the penalty (``intercept_scaling``; LIBLINEAR's ``-B``), or have none (``fit_intercept=False``):
    a different problem, said so. A linear model without either attribute gives no evidence of its problem: its answer
    cannot be read as one of ``what`` (an error that says so, not a claim)."""
    name = type(est).__name__
    scaling = getattr(est, "intercept_scaling", None)
    ask = ("verify judges it against its own problem with --formulation l1_svm_regularised_bias (loss='hinge') or "
           "l2_svm_regularised_bias (loss='squared_hinge')")
    if not getattr(est, "fit_intercept", True):
        return answers.DifferentProblem(f"{name} is a linear model (coef_, no dual_coef_) fitted without an intercept "
                                        f"(fit_intercept=False): a different problem from {what}, whose b is free; {ask}"
                                        " with bias_scale 0")
    if scaling is not None:
        return answers.DifferentProblem(f"{name} is a linear model (coef_, no dual_coef_) that solves its problem with "
                                        "the intercept in the penalty (a regularised bias: 1/2 b^2 / B^2 added to the "
                                        f"primal, B = intercept_scaling = {scaling!r}), a different problem from {what}; "
                                        f"{ask}")
    return answers.BadAnswer(f"{name} is a linear model (coef_, no dual_coef_): verify reads a {what} answer from "
                             "dual_coef_, support_ and intercept_, and a primal-only model says nothing of which problem "
                             f"its intercept solves; a LIBLINEAR-style model (intercept in the penalty): {ask}")


def _pair_rows(est, inst) -> tuple[np.ndarray, np.ndarray, float]:
    """The support vectors of the instance's binary problem, as its row numbers, their ``y_t alpha_t`` and ``b``: the
    whole binary model, or one pair of a one-vs-one model fitted on more classes (``inst.pair``, ``inst.rows``)."""
    support = np.asarray(est.support_, dtype=int)
    dual = np.atleast_2d(np.asarray(est.dual_coef_, dtype=float))
    intercept = np.ravel(np.asarray(getattr(est, "intercept_", [0.0]), dtype=float))
    pair = getattr(inst, "pair", None)
    if pair is None:
        classes = np.asarray(getattr(est, "classes_", [-1.0, 1.0]), dtype=float)
        if classes.size != 2 or not np.array_equal(classes, [-1.0, 1.0]):
            raise answers.BadAnswer(f"the fitted estimator has the classes {classes.tolist()}; a binary instance has "
                                    "the labels -1 and +1")
        return support, dual[0], float(intercept[0])
    local, c, b = ovo.pair_coefficients(est.n_support_, dual, intercept, *pair)
    where = {int(r): t for t, r in enumerate(inst.rows)}  # a row of the whole training set -> its row in the pair
    try:
        pos = np.array([where[int(r)] for r in support[local]], dtype=int)
    except KeyError:
        raise answers.BadAnswer(f"pair {pair}: a support vector is not a pattern of the pair's two classes") from None
    return pos, c, b


def _read_dual(classification: bool, what: str) -> Callable:
    """``(alpha, b)`` from ``dual_coef_`` (``y_t alpha_t`` for a classifier, in LIBSVM's layout), ``support_`` and
    ``intercept_`` (scikit-learn's ``SVC``, ``SVR`` and the classes that follow them)."""
    def read(est, inst):
        if getattr(est, "dual_coef_", None) is None:
            if getattr(est, "coef_", None) is not None:
                raise _linear_model(est, what)
            raise answers.BadAnswer(f"the fitted {type(est).__name__} has no dual_coef_ (nor coef_): verify reads the "
                                    "dual solution from dual_coef_, support_ and intercept_")
        alpha = np.zeros(inst.N)
        if classification:
            pos, c, b = _pair_rows(est, inst)
            alpha[pos] = c * inst.y[pos]
            return alpha, b
        dual = np.ravel(np.asarray(est.dual_coef_, dtype=float))
        support = getattr(est, "support_", None)
        if support is None:
            alpha = dual
        else:
            alpha[np.asarray(support, dtype=int)] = dual
        intercept = getattr(est, "intercept_", None)
        return alpha, (None if intercept is None else float(np.ravel(intercept)[0]))
    return read


def _read_rls(est, inst):
    """``c`` from KernelRidge's ``dual_coef_`` (001 eq. (9): ``f(x) = sum_i c_i k(x_i, x)``, no bias)."""
    c = getattr(est, "dual_coef_", None)
    if c is None:
        raise answers.BadAnswer(f"the fitted {type(est).__name__} has no dual_coef_: verify reads RLS's c from it")
    if np.any(np.ravel(getattr(est, "intercept_", 0.0)) != 0):
        raise answers.DifferentProblem(f"{type(est).__name__} fitted an intercept; RLS (001 eq. (7)) has none")
    return np.ravel(np.asarray(c, dtype=float))


def _read_features(est, inst):
    """The primal ``a, b`` from ``coef_`` and ``intercept_`` (003 eq. (5): ``f(x) = a'x + b``)."""
    if getattr(est, "coef_", None) is None:
        raise answers.BadAnswer(f"the fitted {type(est).__name__} has no coef_: verify reads the support features "
                                "machine's a and b from coef_ and intercept_")
    return {"a": np.ravel(np.asarray(est.coef_, dtype=float)),
            "b": float(np.ravel(getattr(est, "intercept_", [0.0]))[0])}


# ------------------------------------------------------------------------------ certificates (no reference)


def _kernel_diagonal(X, inst) -> np.ndarray:
    from .blockwise import BlockKernel

    return BlockKernel(X, inst.kernel, inst.kernel_params).diagonal() if np.size(X) else np.zeros(0)


def _ls_gradient_bounds(inst, r, v: np.ndarray, kappa: float) -> tuple[float, float]:
    """``(decision bound, b bound)`` of an LS-SVM answer (weights ``v``; all 1 unweighted) from the gradient of its
    reduced primal (000 eq. (1), 004 eq. (1); weighted: Suykens et al. 2002), in the answer's own units (docs/verify.md,
    "Judged by its certificate"). :func:`_ridge_certificate` is the same argument on explicit features, in ``O(N d)``.

    The primal ``1/2 ||w||^2 + C/2 sum_i v_i (t_i - w.phi_i - b)^2`` (``t = y``: regression, and classification, whose
    ``(1 - y_i f_i)^2 = (y_i - f_i)^2``) minimised over ``b`` (``b(w) = sum_i v_i (t_i - w.phi_i) / sum_i v_i``) has
    Hessian ``I + C Phi_c' V Phi_c >= I``: it is 1-strongly convex, so ``||w - w*|| <= ||g||``, ``g = Phi'd`` with
    ``d = c - C v e``, ``e = t - K c - b(w)`` (``w = Phi'c``, ``||g||^2 = d'K d``), and ``b* = b(w*)``. With
    ``phibar = Phi'v / sum v``: ``|b - b*| <= ||phibar|| ||g|| + |b - b(w)|`` and ``|f(x) - f*(x)| <= (sqrt(kappa) +
    ||phibar||) ||g|| + |b - b(w)|``. ``||g||`` carries the rounding of ``d``: ``C max v`` times the margins' floor, times
    ``sqrt(N kappa)``. ``K c`` is cached from the residuals; ``K [d, v]`` is one more pass of a blockwise K."""
    K, y, N = inst.K, inst.y, inst.N
    C = float(inst.hyper["C"])
    c, b = np.asarray(r.coef, dtype=float), float(r.b)
    V = float(np.sum(v))
    z = y - np.asarray(K @ c, dtype=float)
    bw = float(v @ z) / V
    d = c - C * v * (z - bw)
    KdKv = np.asarray(K @ np.column_stack([d, v]), dtype=float)
    g = np.sqrt(max(float(d @ KdKv[:, 0]), 0.0))
    g += np.sqrt(N * kappa) * C * float(np.max(v)) * r.floor * r.unit
    phibar = np.sqrt(max(float(v @ KdKv[:, 1]), 0.0)) / V
    b_off = abs(b - bw) + kkt.rounding(N, float(np.max(np.abs(z), initial=0.0)))
    return ((np.sqrt(kappa) + phibar) * g + b_off) / r.unit + r.floor, (phibar * g + b_off) / r.unit + r.floor


def _certificate_bounds(strong: str | None) -> Callable:
    """Bounds from weak duality alone (docs/verify.md, "Judged by its certificate").

    * every formulation here: the answer is dual feasible (box and equality hold to rounding), so the duality gap
      ``G = P(W, b) + D(alpha) >= 0`` bounds the objective's error, ``|D(alpha) - D*| <= G``;
    * ``strong="ls"`` (LS-SVM, classification and regression, 000 eq. (1), 004 eq. (1)): the primal is a quadratic
      in ``(w, b)``, 1-strongly convex in ``w`` and with curvature at least ``C`` along each training pattern's
      ``(Phi(x_i), 1)``, so ``||w - w*|| <= sqrt(2 G)``, ``|f(x_i) - f*(x_i)| <= sqrt(2 G / C)``,
      ``|b - b*| <= sqrt(2 G) (sqrt(kappa) + 1/sqrt(C))`` and ``|f(x) - f*(x)| <= sqrt(2 G) (2 sqrt(kappa) + 1/sqrt(C))``
      at every point, ``kappa = max k(x, x)`` over the training and held-out points; or, where smaller, the bounds
      from the gradient of the primal reduced over ``b`` (:func:`_ls_gradient_bounds`), which do not carry the square
      root of the objective's rounding;
    * ``strong="wls"`` (the weighted LS-SVM): as ``"ls"`` with ``C min_i v_i`` for ``C`` (pattern ``i``'s curvature
      is ``C v_i``);
    * ``strong="rls"`` (001 eq. (7)): ``J`` is ``2 gamma``-strongly convex in ``f`` in the RKHS norm, so
      ``|f(x) - f*(x)| <= sqrt(kappa G / gamma)``;
    * otherwise (L1-SVM, L2-SVM, Least 1-Norm, epsilon-SVR) ``W`` is bounded (``sqrt(2 G kappa)``) but ``b`` need
      not be unique: the decision function and ``b`` are not bounded (unresolved, never passed).
    """
    def bounds(inst, r, values) -> dict:
        inf = float("inf")
        out = {"objective_gap": inf, "decision_gap": inf, "b_gap": inf}
        n = inst.N
        box, eq = values.get("box", float("nan")), values.get("equality", float("nan"))
        feasible = not (box > 0) and not (eq > 4.0 * kkt.rounding(n, 1.0))
        G = float(r.gap_abs)
        if not (feasible and np.isfinite(G)):
            return out
        G = max(G, 0.0) + kkt.rounding(n, r.obj_scale if np.isfinite(r.obj_scale) else abs(r.objective))
        out["objective_gap"] = G / max(abs(r.objective), float(np.finfo(float).tiny))
        if strong is None:
            return out
        kappa = float(max(np.max(_kernel_diagonal(inst.X, inst)), np.max(_kernel_diagonal(inst.X_test, inst),
                                                                          initial=0.0)))
        if strong in ("ls", "wls"):
            v = data.weights_of(inst) if strong == "wls" else np.ones(n)
            C = float(inst.hyper["C"]) * float(np.min(v))
            out["decision_gap"] = np.sqrt(2 * G) * (2 * np.sqrt(kappa) + 1 / np.sqrt(C)) / r.unit + r.floor
            out["b_gap"] = np.sqrt(2 * G) * (np.sqrt(kappa) + 1 / np.sqrt(C)) / r.unit + r.floor
            if r.coef is not None and r.b is not None:  # the gradient's bound, where it is the tighter one
                dec, bb = _ls_gradient_bounds(inst, r, v, kappa)
                out["decision_gap"], out["b_gap"] = min(out["decision_gap"], dec), min(out["b_gap"], bb)
        elif strong == "rls":
            out["decision_gap"] = np.sqrt(kappa * G / float(inst.hyper["gamma"])) / r.unit + r.floor
            out["b_gap"] = float("nan")  # RLS has no b
        return out
    return bounds


def _ridge_certificate(inst, r, values) -> dict:
    """The certificate of the fixed-size primal (004 eq. (1) with ``Phi(x) = x``: ridge with a free bias on ``X``), from
    the gradient, not the gap (:func:`_ls_gradient_bounds`'s argument, on the features).

    With ``b(w) = mean(y - X w)`` the best bias for ``w``, the reduced primal ``P(w, b(w)) = 1/2 ||w||^2 + C/2
    ||y_c - X_c w||^2`` (centred data) has Hessian ``I + C X_c'X_c >= I``: it is 1-strongly convex, so
    ``||w - w*|| <= ||g||`` with ``g = w - C X'e`` its gradient (``e = y - X w - b(w)``), and ``b* = b(w*)``. Hence
    ``|b - b*| <= ||xbar|| ||g|| + |b - b(w)|`` and ``|f(x) - f*(x)| <= ||x - xbar|| ||g|| + |b - b(w)|`` at every
    training and held-out point ``x``; ``||g||`` is taken with the rounding of ``C X'e`` added. Unlike the bound from the
    duality gap (a square root of the objective's error, whose rounding grows with N), this one resolves tol at any N.
    The objective's bound is the duality gap's (:func:`_certificate_bounds`)."""
    out = _certificate_bounds(None)(inst, r, values)
    if r.coef is None or r.b is None:
        return out
    X, y, C = inst.X, inst.y, float(inst.hyper["C"])
    w, b = np.asarray(r.coef, dtype=float), float(r.b)
    z = y - X @ w
    bw = float(np.mean(z))
    e = z - bw
    g = float(np.linalg.norm(w - C * (X.T @ e)))
    g += np.sqrt(X.shape[1]) * kkt.rounding(inst.N, C * float(np.max(np.abs(X).T @ np.abs(e), initial=0.0)))
    b_off = abs(b - bw) + kkt.rounding(inst.N, float(np.max(np.abs(z), initial=0.0)))
    xbar = X.mean(axis=0)
    spread = max(float(np.max(np.linalg.norm(X - xbar, axis=1), initial=0.0)),
                 float(np.max(np.linalg.norm(inst.X_test - xbar, axis=1), initial=0.0)))
    out["b_gap"] = (float(np.linalg.norm(xbar)) * g + b_off) / r.unit + r.floor
    out["decision_gap"] = (spread * g + b_off) / r.unit + r.floor
    return out


# ------------------------------------------------------------------------------ the table


def _classification_suite(which, n):
    return data.kernel_instances(which, False, n)


def _regression_suite(which, n):
    return data.kernel_instances(which, True, n)


def _params_ridge(inst) -> dict:
    """scikit-learn's ``Ridge`` minimises ``||y - Xw - b||^2 + alpha ||w||^2`` with a free intercept: ``alpha = 1/C``."""
    return {"alpha": 1.0 / float(inst.hyper["C"]), "fit_intercept": True}


def _read_ridge(est, inst):
    """``w, b`` from a fitted linear regressor's ``coef_`` and ``intercept_``."""
    coef = np.ravel(np.asarray(getattr(est, "coef_", None) if getattr(est, "coef_", None) is not None else [],
                               dtype=float))
    if coef.size != inst.X.shape[1]:
        raise answers.BadAnswer(f"the fitted {type(est).__name__} has no coef_ of length {inst.X.shape[1]}: verify reads "
                                "w and b of a linear regressor from coef_ and intercept_")
    intercept = np.ravel(np.asarray(getattr(est, "intercept_", 0.0), dtype=float))
    return {"alpha": None, "w": coef, "b": float(intercept[0]) if intercept.size else 0.0}


def _weighted_classification_suite(which, n):
    return data.weighted_instances(which, False, n)


def _weighted_regression_suite(which, n):
    return data.weighted_instances(which, True, n)


def _box_dual(name: str, *, absolute: bool = False, saturating: bool = False, swap=None) -> Spec:
    """A box-constrained dual of classification (000 eqs. (2), (5)): its bounds are ``kkt.BOX_DUALS[name]``."""
    return Spec(
        name=name,
        kind="box",
        call="f(K, y, C, **options)",
        arguments=_kernel_C,
        n_args=3,
        parse=answers.alpha_b,
        residuals=_box_residuals(name),
        reference=_box_dual_reference(name),
        held_out=_kernel_rows,
        suite=_classification_suite,
        classification=True,
        data_hyper=_hyper_C,
        transforms=_classifier_transforms(absolute),
        probes=(_C_probe("alpha" if saturating else None), _kernel_probe(kkt.BOX_DUALS[name].shift)),
        swap=swap,
        b_average_hint=saturating,
        average_b=_average_margin_b(False) if saturating else None,
        estimator_params=_params_C,
        read_fitted=_read_dual(True, name),
        certificate=_certificate_bounds("ls" if name == "ls_svm" else None),
    )


def _regularised_bias(name: str, loss: str) -> Spec:
    """The L1-/L2-SVM with the bias in the penalty on the features ``X`` (LIBLINEAR, ``LinearSVC``)."""
    return Spec(
        name=name,
        kind="linear_svm",
        call="f(X, y, C, bias_scale=bias_scale, **options)",
        arguments=_features_C_bias,
        n_args=3,
        parse=answers.linear_primal,
        residuals=_regularised_bias_residuals(loss),
        reference=_regularised_bias_reference(name, loss),
        held_out=_feature_rows,
        suite=data.regularised_bias_instances,
        classification=True,
        data_hyper=_hyper_C_bias,
        transforms=_no_transforms,
        on_features=True,
        instance_keywords=("bias_scale",),
        advice=False,
        estimator_params=_params_linear_svc(loss),
        read_fitted=_read_linear,
        answer_words=("alpha (length N) and/or the primal w (length d) with b: f(x) = w'x + b, b = B v with the "
                      "bias feature's weight v in the penalty (w = X'(y alpha), b = B^2 y'alpha)"),
        equality_words="(no equality: b is fixed by alpha)",
        stationarity_words="stationarity",
    )


def _weighted_ls_svm(regression: bool) -> Spec:
    """The weighted LS-SVM (Suykens, De Brabanter, Lukas & Vandewalle, Neurocomputing 2002): the LS-SVM's entry with
    ``C v_i`` for pattern ``i``; the instances carry the weights (:func:`data.weighted_instances`)."""
    name = "weighted_ls_svm_regression" if regression else "weighted_ls_svm"
    other = "weighted_ls_svm" if regression else "weighted_ls_svm_regression"
    return Spec(
        name=name,
        kind="weighted_regression" if regression else "weighted",
        call="f(K, y, C, v=v, **options)",
        arguments=_kernel_C_v,
        n_args=3,
        parse=answers.alpha_b,
        residuals=_box_residuals(name),
        reference=_box_dual_reference(name),
        held_out=_kernel_rows,
        suite=_weighted_regression_suite if regression else _weighted_classification_suite,
        classification=not regression,
        data_hyper=_hyper_C,
        transforms=_regression_transforms if regression else _classifier_transforms(False),
        probes=(_weights_probe, _C_probe(None), _weighted_kernel_probe),
        swap=(other, "alpha is in the " + ("classification convention: return y * alpha" if regression
                                           else "regression convention (alpha_i y_i): return y * alpha")),
        instance_keywords=("v",),
        equality_words="sum(alpha) != 0" if regression else "y'alpha != 0",
        certificate=_certificate_bounds("wls"),
        answer_words=("alpha (length N) and b: f(x) = sum_i alpha_i k(x_i, x) + b (004's convention); the instance's "
                      "weights v (length N) are passed by keyword" if regression else
                      "alpha (length N) and b: f(x) = sum_i alpha_i y_i k(x_i, x) + b; the instance's weights v "
                      "(length N) are passed by keyword"),
    )


def _fixed_size() -> Spec:
    """The fixed-size LS-SVM's primal (004 eq. (1) on explicit features, its reference [7]): ridge with a free bias on
    ``X``; the reference is the ``ls_svm_regression`` model's primal with ``Phi = X``; every residual is ``O(N d)``,
    so its certificate judges an answer at any N."""
    return Spec(
        name="fixed_size_ls_svm",
        kind="ridge",
        call="f(X, y, C, **options)",
        arguments=_features_C,
        n_args=3,
        parse=answers.ridge,
        residuals=_ridge_residuals,
        reference=_ridge_reference,
        held_out=_feature_rows,
        suite=data.fixed_size_instances,
        classification=False,
        data_hyper=_hyper_C,
        transforms=_no_transforms,
        probes=(_ridge_C_probe,),
        causes=(_ridge_bias,),
        on_features=True,
        formulation="ls_svm_regression",
        estimator_params=_params_ridge,
        read_fitted=_read_ridge,
        certificate=_ridge_certificate,
        answer_words=("w (length d) and b, and/or alpha (length N): f(x) = w'x + b on the features x, w = X'alpha "
                      "(004 eq. (1) with Phi(x) = x)"),
        equality_words="sum(alpha) != 0",
        stationarity_words="stationarity",
    )


_SPECS = (
    _box_dual("l1_svm", absolute=True, saturating=True,
              swap=("least_1norm_svm", "its box is [-C, C], not [0, C]")),
    _box_dual("l2_svm", absolute=True),
    _box_dual("ls_svm", swap=("ls_svm_regression", "alpha is in the regression convention (alpha_i y_i): return y * alpha")),
    _box_dual("least_1norm_svm", saturating=True, swap=("l1_svm", "its box is [0, C], not [-C, C]")),
    Spec(
        name="ls_svm_regression",
        kind="regression",
        call="f(K, y, C, **options)",
        arguments=_kernel_C,
        n_args=3,
        parse=answers.alpha_b,
        residuals=_box_residuals("ls_svm_regression"),
        reference=_box_dual_reference("ls_svm_regression"),
        held_out=_kernel_rows,
        suite=_regression_suite,
        classification=False,
        data_hyper=_hyper_C,
        transforms=_regression_transforms,
        probes=(_C_probe(None), _kernel_probe(kkt.BOX_DUALS["ls_svm_regression"].shift)),
        swap=("ls_svm", "alpha is in the classification convention: return y * alpha"),
        equality_words="sum(alpha) != 0",
        estimator_params=_params_C,
        read_fitted=_read_dual(False, "ls_svm_regression"),
        certificate=_certificate_bounds("ls"),
        answer_words="alpha (length N) and b: f(x) = sum_i alpha_i k(x_i, x) + b (004's convention)",
    ),
    Spec(
        name="sparse_ls_svm",
        kind="regression",
        call="f(K, y, C, **options)",
        arguments=_kernel_C,
        n_args=3,
        parse=answers.alpha_b,
        residuals=_sparse_residuals,
        reference=_sparse_reference,
        held_out=_kernel_rows,
        suite=_regression_suite,
        classification=False,
        data_hyper=_hyper_C,
        transforms=_no_transforms,
        cache_reference=False,
        advice=False,
        estimator_params=_params_C,
        read_fitted=_read_dual(False, "sparse_ls_svm"),
        answer_words="alpha (length N) and b: f(x) = sum_i alpha_i k(x_i, x) + b (004's convention)",
        equality_words="sum(alpha) != 0",
        stationarity_words="stationarity",
    ),
    Spec(
        name="rls",
        kind="rls",
        call="f(K, y, gamma, **options)",
        arguments=_kernel_gamma,
        n_args=3,
        parse=answers.coefficients,
        residuals=_rls_residuals,
        reference=_rls_reference,
        held_out=_kernel_rows,
        suite=data.rls_instances,
        classification=False,
        data_hyper=_hyper_gamma,
        transforms=_rls_transforms,
        probes=(_gamma_probe,),
        causes=(_rls_penalty,),
        estimator_params=_params_rls,
        read_fitted=_read_rls,
        certificate=_certificate_bounds("rls"),
        answer_words="c (length N), no b: f(x) = sum_i c_i k(x_i, x) (001 eq. (9))",
        answer_vector="c",
        has_b=False,
        stationarity_words="stationarity",
    ),
    Spec(
        name="support_features",
        kind="features",
        call="f(X, y, C, mu, **options)",
        arguments=_features_C_mu,
        n_args=4,
        parse=answers.features,
        residuals=_features_residuals,
        reference=_features_reference,
        held_out=_feature_rows,
        suite=data.feature_instances,
        classification=True,
        data_hyper=_hyper_C_mu,
        transforms=_features_transforms,
        probes=(_C_probe("lam"),),
        on_features=True,
        b_average_hint=True,
        estimator_params=_params_C,
        read_fitted=_read_features,
        answer_words="lam (length N) and/or the primal a (length d) with b: f(x) = a'x + b (003 eqs. (5), (8))",
        answer_vector="lam",
        equality_words="y'lam != 0",
    ),
    Spec(
        name="svr",
        kind="svr",
        call="f(K, y, C, epsilon=epsilon, **options)",
        arguments=_kernel_C_epsilon,
        n_args=3,
        parse=answers.alpha_b,
        residuals=_svr_residuals,
        reference=_svr_reference,
        held_out=_kernel_rows,
        suite=data.svr_instances,
        classification=False,
        data_hyper=_hyper_C_epsilon,
        transforms=_svr_transforms,
        probes=(_C_probe("alpha"), _epsilon_probe),
        instance_keywords=("epsilon",),
        b_average_hint=True,
        average_b=_average_margin_b(True),
        estimator_params=_params_C_epsilon,
        read_fitted=_read_dual(False, "svr"),
        certificate=_certificate_bounds(None),
        answer_words="alpha = alpha^+ - alpha^- (length N) and b: f(x) = sum_i alpha_i k(x_i, x) + b",
        equality_words="sum(alpha) != 0",
    ),
    _regularised_bias("l1_svm_regularised_bias", "hinge"),
    _regularised_bias("l2_svm_regularised_bias", "squared_hinge"),
    _weighted_ls_svm(False),
    _weighted_ls_svm(True),
    _fixed_size(),
)

#: The formulations verify knows, by name (the order of ``svmref verify --formulation``'s list).
SPECS: dict[str, Spec] = {s.name: s for s in _SPECS}


def names() -> list[str]:
    """The formulations verify can check."""
    return list(SPECS)


def get(formulation: str) -> Spec:
    """The entry of ``formulation``; ``ValueError`` naming the known ones otherwise."""
    try:
        return SPECS[formulation]
    except (KeyError, TypeError):
        raise ValueError(f"formulation must be one of {sorted(SPECS)}; got {formulation!r}") from None
