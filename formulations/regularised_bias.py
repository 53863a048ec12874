r"""The L1- and L2-SVM with the bias in the penalty: the problem LIBLINEAR and scikit-learn's ``LinearSVC`` solve.

Not a problem of the five papers, but the one the most used linear SVM solvers solve instead of theirs, so that a
user of LIBLINEAR (Fan, Chang, Hsieh, Wang & Lin, "LIBLINEAR: A library for large linear classification", JMLR 9,
2008, §2 and Appendix A: the bias as an extra feature of constant value ``B``, LIBLINEAR's ``-B``) or of
``LinearSVC(intercept_scaling=B)`` can hold its answer against its own problem. With the feature ``B`` appended to
every pattern, its weight ``v`` and ``b = B v``, the L1-SVM of 003 eq. (2) becomes

.. code-block:: text

    min_{W, v, xi}  1/2 ||W||^2 + 1/2 v^2 + C sum_i xi_i
    s.t.            y_i (W . Phi(x_i) + B v) >= 1 - xi_i,   xi_i >= 0,

i.e. ``1/2 b^2 / B^2`` added to the primal, and the L2-SVM of 000 §1 the same with ``C/2 sum_i xi_i^2`` (the
svmref convention of :class:`svmref.formulations.svm.L2SVM`; LIBLINEAR's and LinearSVC's squared hinge is
``C' sum_i xi_i^2``, so their ``C'`` is ``C/2`` here). ``B = 0`` is the SVM without a bias (LIBLINEAR without ``-B``,
``LinearSVC(fit_intercept=False)``).

Dual (derived here, the steps of 003 eq. (3) with the extra variable ``v``). The Lagrangian with ``alpha_i >= 0``
(and ``mu_i >= 0`` for ``xi_i >= 0`` in L1) is stationary in ``W`` at ``W = sum_i alpha_i y_i Phi(x_i)``, in ``v``
at ``v = B sum_i alpha_i y_i`` (where the free bias gave the constraint ``sum_i alpha_i y_i = 0``), and in ``xi_i``
at ``alpha_i + mu_i = C`` (L1: the box ``0 <= alpha_i <= C``) or ``xi_i = alpha_i / C`` (L2). Substituting::

    min_alpha  1/2 sum_ij alpha_i alpha_j y_i y_j (K_ij + B^2) - sum_i alpha_i   [+ 1/(2C) sum_i alpha_i^2 for L2]
    s.t.       0 <= alpha_i <= C (L1),   alpha_i >= 0 (L2),

with no equality constraint: the kernel is ``K + B^2 1 1'`` and ``b = B^2 sum_i alpha_i y_i`` is fixed by alpha.
Strong duality ``p* = -d*``. The primal objective is strongly convex in ``(W, v)``, so ``W``, ``b`` and the decision
function are unique (unlike the L1-SVM's ``b``).

The reference is the cvxpy model itself (CLARABEL), certified on K by :class:`RegularisedBiasCertifier`: the
duality gap of the dual point (clipped to its box) and of the primal point it defines, polished by an active-set
Newton step when it does not certify.
"""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from svmref._validation import check_nonnegative, check_positive

from ._base import Formulation
from ._certify import POINT_KKT, Certified, Multipliers, better

_U = 2.0 ** -53


def _bias_scale_param():
    return {"bias_scale": ({"nonneg": True}, lambda h: h["bias_scale"])}


def _bias_sq_param():
    return {"bias_scale_sq": ({"nonneg": True}, lambda h: h["bias_scale"] ** 2)}


@dataclass(frozen=True, eq=False)
class RegularisedBiasCertifier:
    """Certifies a solution of the regularised-bias problem (``loss`` ``"hinge"``: L1; ``"squared_hinge"``: L2) in the
    form ``form`` on the original K: the dual point ``alpha`` (from ``alpha_from``) is clipped to its box, and the
    duality gap ``P + D`` of it and of the primal point it defines (``W = Phi'(y alpha)``, ``v = B y'alpha``, the
    optimal slacks) bounds both objectives' errors (module docstring: ``p* = -d*``)."""

    loss: str
    K: np.ndarray
    y: np.ndarray
    form: str
    alpha_from: Multipliers
    Phi: np.ndarray | None = None

    def _upper(self, C: float) -> float:
        return C if self.loss == "hinge" else np.inf

    def certificate(self, C: float, B: float, alpha, tol: float) -> Certified:
        """The certificate of ``alpha`` (clipped to the box): residuals ``rel_gap``, ``rel_floor``, ``kkt`` (the
        natural residual in margin units), ``objective_primal`` and ``objective_dual`` (the dual as a
        minimisation), ``b``; ``failed`` holds ``rel_gap`` where it is above ``max(tol, rel_floor)``."""
        a = np.clip(np.asarray(alpha, dtype=float), 0.0, self._upper(C))
        y, v = self.y, self.y * a
        f = self.K @ v + B * B * float(np.sum(v))            # (K + B^2 1 1') v: the decision values with b
        q = float(v @ f)
        m = 1.0 - y * f
        xi = np.maximum(m, 0.0)
        sq = self.loss == "squared_hinge"
        P = 0.5 * q + (0.5 * C * float(xi @ xi) if sq else C * float(np.sum(xi)))
        D = 0.5 * q - float(np.sum(a)) + (0.5 * float(a @ a) / C if sq else 0.0)
        gap = P + D
        n = a.shape[0]
        # the rounding of f = (K + B^2 1 1') v, entry by entry, and of the sums: f enters P through the loss, whose
        # slope is C (hinge) or C xi_i (squared hinge), and q = v'f through |v|
        f_err = (n + 4) * _U * (np.abs(self.K) @ np.abs(v) + B * B * float(np.sum(np.abs(v))))
        slope = C * (xi if sq else (m > -f_err).astype(float))
        terms = abs(q) + C * float(np.sum(np.abs(m) * (np.abs(m) if sq else 1.0))) + float(np.sum(a)) \
            + (float(a @ a) / C if sq else 0.0) + float(np.abs(v) @ (np.abs(self.K) @ np.abs(v)))
        floor = (n + 8) * _U * terms + float((slope + np.abs(v)) @ f_err)
        scale = max(abs(P), np.finfo(float).tiny)
        t = a / C
        g = y * f - 1.0 + (t if sq else 0.0)
        kkt = float(np.max(np.abs(t - np.clip(t - g, 0.0, 1.0 if not sq else np.inf)), initial=0.0))
        res = {"rel_gap": max(gap, 0.0) / scale, "rel_floor": floor / scale, "kkt": kkt, "gap": gap,
               "objective_primal": P, "objective_dual": D, "b": B * B * float(np.sum(v))}
        failed = {}
        if not res["rel_gap"] <= max(tol, res["rel_floor"]) or gap < -floor:
            failed["rel_gap"] = (res["rel_gap"], tol)
        c = Certified(objective=D if self.form == "dual" else P, values=None, residuals=res, failed=failed,
                      method=f"duality gap on K ({self.loss} loss, bias in the penalty)", alpha=a,
                      bounds=(-P, D) if self.form == "dual" else (-D, P))
        return c

    def _newton_point(self, Q, a, at_lo, at_up, up):
        """The point whose free variables solve ``Q_FF a_F = 1 - Q_FU a_U`` with the others at their bounds, or
        ``None`` (no free variable, or a failed solve)."""
        free = ~at_lo & ~at_up
        if not np.any(free):
            return None
        rhs = 1.0 - Q[np.ix_(free, at_up)] @ np.full(int(at_up.sum()), up)
        try:
            a_f = np.linalg.lstsq(Q[np.ix_(free, free)], rhs, rcond=None)[0]
        except np.linalg.LinAlgError:
            return None
        new = np.zeros_like(a)
        new[free] = a_f
        new[at_up] = up
        return new

    def polish(self, C: float, B: float, alpha, tol: float, max_iter: int = 8, delta: float = 1e-6) -> Certified:
        """Active-set Newton steps on the dual: the variables free at the current point solve ``Q_FF a_F = 1 -
        Q_FU a_U`` (``Q = Y (K + B^2 1 1') Y``, plus ``I/C`` for L2; ``U`` the variables at ``C``), clipped to the box.
        Two guesses of the active set are tried at each step: a variable within ``delta C`` of a bound that its
        gradient ``g = Q a - 1`` pushes it to is at that bound (an interior-point solution sits a little inside); or,
        by the gradient alone, every variable whose ``|g_i|`` is above ``delta max(1, max|g|)`` is at the bound its sign
        pushes it to (where the solver stopped a little short of many bounds). The best certificate met is returned
        (:func:`._certify.better`), so a wrong guess costs nothing but its solve."""
        up = self._upper(C)
        sq = self.loss == "squared_hinge"
        y = self.y
        Q = (y[:, None] * (self.K + B * B)) * y[None, :] + (np.eye(y.shape[0]) / C if sq else 0.0)
        best = self.certificate(C, B, alpha, tol)
        a = best.alpha
        for _ in range(max_iter):
            g = Q @ a - 1.0
            tau = delta * max(1.0, float(np.max(np.abs(g), initial=0.0)))
            guesses = (((a <= delta * C) & (g > 0.0), (a >= up - delta * C) & (g < 0.0)),
                       (g > tau, (g < -tau) & np.isfinite(up)))
            found = [self.certificate(C, B, p, tol) for p in (self._newton_point(Q, a, lo, hi, up) for lo, hi in guesses)
                     if p is not None]
            if not found:
                break
            c = found[0] if len(found) == 1 or better(found[0], found[1]) else found[1]
            if np.array_equal(c.alpha, a):
                break
            a = c.alpha  # go on from the clipped point: the sets change where a step left the box
            if better(c, best):
                best = c
                best.polished = True
        return best

    def certify(self, hyper: dict, values, duals, tol: float, alpha_override=None) -> Certified | None:
        """The certificate of the form's solution (or of ``alpha_override``), polished where it does not certify or
        its KKT residual is above round-off; ``None`` when the solution holds no alpha."""
        C, B = hyper["C"], hyper["bias_scale"]
        alpha = alpha_override if alpha_override is not None else (
            None if values is None else self.alpha_from(values, duals))
        if alpha is None or not np.all(np.isfinite(np.asarray(alpha, dtype=float))):
            # the solver left no point: the active-set Newton method from alpha = 0, certified like any answer
            c = self.polish(C, B, np.zeros(self.y.shape[0]), tol, max_iter=4 * self.y.shape[0] + 8)
            return self._report(c, B, rebuild=True) if c.polished else None
        c = self.certificate(C, B, alpha, tol)
        if not c.certified or c.residuals["kkt"] > POINT_KKT:
            p = self.polish(C, B, c.alpha, tol)
            if p.polished and better(p, c):
                c = p
        return self._report(c, B, rebuild=alpha_override is not None)

    def _report(self, c: Certified, B: float, *, rebuild: bool) -> Certified:
        """The form's values at the certified alpha: alpha for the dual; for the primal (after a polish, or when
        alpha came from elsewhere) ``W = Phi'(y alpha)``, ``v = B y'alpha`` and the optimal slacks."""
        a = c.alpha
        if self.form == "dual":
            c.values = {"alpha": a}
        elif (c.polished or rebuild) and self.Phi is not None:
            v = self.y * a
            W = self.Phi.T @ v
            vb = B * float(np.sum(v))
            xi = np.maximum(1.0 - self.y * (self.Phi @ W + B * vb), 0.0)
            c.values = {"W": W, "v": vb, "xi": xi}
        return c


class _RegularisedBias(Formulation):
    """The two losses share everything but the slack term (module docstring)."""

    hyper = ("C", "bias_scale")
    loss = "hinge"

    def _check_hyper(self, **hyper) -> dict:
        out = {"C": check_positive(hyper["C"], "C")}
        out["bias_scale"] = check_nonnegative(hyper["bias_scale"], "bias_scale",
                                              "the constant feature B of the bias, b = B v (LIBLINEAR's -B)")
        return out

    def _slack_cost(self, C, xi):
        return C * cp.sum(xi) if self.loss == "hinge" else 0.5 * C * cp.sum_squares(xi)

    def primal(self, K, y, C=1.0, bias_scale=1.0, *, X=None, psd="raise") -> cp.Problem:
        """``min 1/2 ||W||^2 + 1/2 v^2 + [C sum xi | C/2 sum xi^2]`` s.t. ``y_i (W.Phi_i + B v) >= 1 - xi_i``
        (module docstring); ``b = B v``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C, bias_scale=bias_scale)
        P, rules = self._params({"C": ({"pos": True}, lambda h: h["C"]), **_bias_scale_param()}, hyper)
        F = self._factor(K, X, psd)
        Phi, N = F.Phi, K.shape[0]
        W = cp.Variable(Phi.shape[1], name="W")
        v = cp.Variable(name="v")
        xi = cp.Variable(N, name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + 0.5 * cp.square(v) + self._slack_cost(P["C"], xi))
        constraints = [cp.multiply(y, Phi @ W + P["bias_scale"] * v) >= 1 - xi]
        if self.loss == "hinge":
            constraints.append(xi >= 0)
        certifier = RegularisedBiasCertifier(self.loss, K, y, "primal", Multipliers(plus=0), Phi)
        return self._problem(objective, constraints, form="primal", cite=self._cite("primal"), sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), certifier=certifier)

    def dual(self, K, y, C=1.0, bias_scale=1.0, *, psd="raise") -> cp.Problem:
        """``min 1/2 (alpha*y)'(K + B^2 1 1')(alpha*y) - sum alpha [+ ||alpha||^2 / (2C)]`` on the box, no equality
        (module docstring)."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C, bias_scale=bias_scale)
        spec = {"C": ({"pos": True}, lambda h: h["C"]), **_bias_sq_param()}
        if self.loss == "squared_hinge":
            spec["C_inv"] = ({"pos": True}, lambda h: 1.0 / h["C"])
        P, rules = self._params(spec, hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        Q = (y[:, None] * Kp) * y[None, :]
        quad = 0.5 * cp.quad_form(alpha, cp.psd_wrap(Q)) + 0.5 * P["bias_scale_sq"] * cp.square(y @ alpha)
        constraints = [alpha >= 0]
        if self.loss == "hinge":
            constraints.append(alpha <= P["C"])
        else:
            quad = quad + 0.5 * P["C_inv"] * cp.sum_squares(alpha)
        objective = cp.Minimize(quad - cp.sum(alpha))
        certifier = RegularisedBiasCertifier(self.loss, Kp, y, "dual", Multipliers(variable="alpha"))
        return self._problem(objective, constraints, form="dual", cite=self._cite("dual"), sense="min", hyper=hyper,
                             rules=rules, gram=rep, scale=self._scale(K), certifier=certifier)

    def _cite(self, form: str) -> str:
        base = "003 eq. (2)" if self.loss == "hinge" else "000 §1"
        what = "primal" if form == "primal" else "dual derived in svmref.formulations.regularised_bias"
        return f"{base} with the bias in the penalty (LIBLINEAR, Fan et al. 2008): {what}"


class L1SVMRegularisedBias(_RegularisedBias):
    r"""L1-SVM with the bias in the penalty (LIBLINEAR ``-s 3``, ``LinearSVC(loss="hinge")``); module docstring."""

    name = "l1_svm_regularised_bias"
    paper = "003 eqs. (2)-(3) with 1/2 b^2/B^2 in the primal; LIBLINEAR (Fan et al. 2008)"
    loss = "hinge"


class L2SVMRegularisedBias(_RegularisedBias):
    r"""L2-SVM with the bias in the penalty (LIBLINEAR ``-s 1`` with ``C' = C/2``, ``LinearSVC(loss="squared_hinge")``);
    module docstring."""

    name = "l2_svm_regularised_bias"
    paper = "000 §1 with 1/2 b^2/B^2 in the primal; LIBLINEAR (Fan et al. 2008)"
    loss = "squared_hinge"
