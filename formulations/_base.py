"""The :class:`Formulation` base: one object per formulation, ``.primal`` and ``.dual`` build problems."""
from __future__ import annotations

import cvxpy as cp
import numpy as np

from svmref._validation import check_gram, check_labels, check_positive, check_scaled, check_targets

from . import _certify as cert
from ._common import RefProblem, kernel_factor, make_params, psd_gram

#: Hyperparameters that multiply (or divide) the Gram matrix, checked against its scale (issue 18).
SCALED = ("C", "gamma", "zeta")


class Formulation:
    """One formulation of the papers: ``primal(...)`` and ``dual(...)`` build unsolved problems.

    Class attributes: ``name``; ``paper`` (file and equations); ``task`` (``"classification"`` or
    ``"regression"``); ``hyper`` (hyperparameter names); ``dual_sense`` (``"min"`` or ``"max"``:
    the sense the dual is written with, so that strong duality reads ``p* = -d*`` for a
    minimisation dual and ``p* = d*`` for a maximisation dual); ``forms`` (names of the further
    forms this object builds, e.g. ``"lp"``, ``"kkt_system"``).
    """

    name: str = ""
    paper: str = ""
    task: str = "classification"
    hyper: tuple[str, ...] = ("C",)
    dual_sense: str = "min"
    forms: tuple[str, ...] = ()

    # -- helpers shared by the kernel formulations -------------------------------------------
    def _data(self, K, y, X=None):
        """Check (K, y); with ``X`` given (linear kernel) K may be None and is X X^T."""
        if K is None:
            if X is None:
                raise ValueError("K (the Gram matrix) is required unless X is given for the linear kernel")
            from svmref._validation import check_X

            X = check_X(X, "X")
            K = X @ X.T
            K = 0.5 * (K + K.T)
        K = check_gram(K, "K")
        if X is not None and np.shape(X)[0] != K.shape[0]:
            raise ValueError(f"X has {np.shape(X)[0]} rows but K is {K.shape[0]} x {K.shape[0]}")
        n = K.shape[0]
        y = check_labels(y, n) if self.task == "classification" else check_targets(y, n)
        return K, y

    def _check_hyper(self, **hyper) -> dict:
        return {k: check_positive(v, k) for k, v in hyper.items()}

    def _check_scaled(self, hyper: dict, scale: float | None) -> dict:
        """Refuse, naming it, a C / gamma / zeta whose product with ``scale`` (N max|K|) over- or underflows."""
        if scale is None:
            return hyper
        return {k: (check_scaled(v, k, scale, "N x max|K|") if k in SCALED else v) for k, v in hyper.items()}

    def _problem(self, objective, constraints, *, form, cite, sense, hyper, rules, factor=None,
                 scale=None, certify=None, direct=None, gram=None, fast=None):
        hyper = self._check_scaled(hyper, scale)

        def validate(**h):
            return self._check_scaled(self._check_hyper(**h), scale)

        info = {
            "formulation": self.name,
            "form": form,
            "cite": cite,
            "sense": sense,
            "hyper": dict(hyper),
            "param_rules": rules,
            "validate": validate,
        }
        if factor is not None:
            info["factor"] = factor.report()
        if scale is not None:
            info["scale"] = scale  # N max|K| (N max|X|^2 for X): C x scale says how hard the problem is scaled
        if gram is not None:
            info["gram"] = gram
        if certify is not None:
            info["certify"] = certify
        if direct is not None:
            info["direct"] = direct
        if fast is not None:
            info["fast"] = fast
        return RefProblem(objective, constraints, info=info)

    @staticmethod
    def _scale(K) -> float:
        return float(K.shape[0]) * float(np.max(np.abs(K)))

    @staticmethod
    def _psd_gram(K, psd):
        return psd_gram(K, psd=psd)

    @staticmethod
    def _box_certifier(kind: str, K, y, form: str, alpha_from, Phi=None, slack: str = "xi"):
        """A certifier (see :mod:`._certify`) of the box problem ``kind`` on the original ``K``.

        ``alpha_from(values, duals)`` gives the dual multipliers of the form's solution; for a primal
        form the primal values are rebuilt from the polished alpha when a polish step was needed
        (``W = Phi'(y alpha)``, the exact best b, the optimal slacks)."""

        def certify(problem, values, duals, tol, alpha_override=None):
            C = problem.info["hyper"]["C"]
            if alpha_override is not None:
                alpha = alpha_override
            else:
                alpha = None if values is None else alpha_from(values, duals)
            if alpha is None or not np.all(np.isfinite(np.asarray(alpha, dtype=float))):
                alpha = cert.box_scaled_resolve(kind, K, y, C, tol=tol)  # the solver failed: re-solve in better scaling
                if alpha is None:
                    return None
                c, a, b = cert.box_certificate(kind, K, y, C, alpha, tol)
                c.polished = True
            else:
                alpha = np.asarray(alpha, dtype=float)
                c, a, b = cert.box_certificate(kind, K, y, C, alpha, tol)
            # polish (cheap: one dense solve on the free set) unless the gap is already far inside tol; a
            # certificate above a tenth of tol would otherwise count as marginal and run the second solver
            if not c.certified or c.residuals["rel_gap"] > 0.1 * tol:
                c2, a2, b2 = cert.box_polish(kind, K, y, C, alpha, tol)
                if (c2.certified and not c.certified) or (c2.certified == c.certified
                                                          and c2.residuals["rel_gap"] < c.residuals["rel_gap"]):
                    c, a, b = c2, a2, b2
                    c.polished = True
            if not c.certified:  # re-solve in better scaling, then polish again
                alpha3 = cert.box_scaled_resolve(kind, K, y, C, tol=tol)
                if alpha3 is not None:
                    c3, a3, b3 = cert.box_certificate(kind, K, y, C, alpha3, tol)
                    if not c3.certified:
                        c3, a3, b3 = cert.box_polish(kind, K, y, C, alpha3, tol)
                    if c3.certified or c3.residuals["rel_gap"] < c.residuals["rel_gap"]:
                        c, a, b = c3, a3, b3
                        c.polished = True
            c.method = f"duality gap on K ({kind} box dual)"
            c.alpha = a
            if form == "dual":
                c.objective = c.residuals["objective_dual"]
                c.values = {"alpha": a}
            else:
                c.objective = c.residuals["objective_primal"]
                c.alpha = a
                if (c.polished or alpha_override is not None) and Phi is not None:
                    f = K @ (y * a)
                    r = 1.0 - y * (f + b)
                    xi = r if kind == "l1n" else np.maximum(r, 0.0)
                    c.values = {"W": Phi.T @ (y * a), "b": b, slack: (np.abs(xi) if slack == "t" else xi)}
            return c

        return certify

    @staticmethod
    def _box_fast(kind: str, K, y, certify, form: str):
        """The fast route (``info["fast"]``) of a box problem: its dual solved by CLARABEL called directly
        (:func:`._certify.clarabel_box_dual`, no cvxpy canonicalisation of the dense quadratic form) to
        ``FAST_OPTIONS`` (1e-7: fewer interior-point iterations), then certified on K and, as needed, finished
        by the active-set Newton polish, which certifies it to round-off (a dense solve on the free set).
        For a kernel primal the certified alpha
        gives the primal point (``W = Phi'(y alpha)``, the exact best b, the optimal slacks).
        ``constraint_duals`` are rebuilt in the order the form lists its constraints: dual
        ``[b, mu_lower, mu_upper]``; primal l1 ``[alpha, C - alpha]``, l2 ``[alpha]``, l1n ``[-alpha]``."""
        from .reference import FAST_OPTIONS

        def fast(problem, tol):
            C = problem.info["hyper"]["C"]
            try:
                alpha, _, _ = cert.clarabel_box_dual(kind, K, y, C, FAST_OPTIONS)
            except Exception:  # noqa: BLE001 - any failure of the fast route falls back to cvxpy
                return None
            if alpha is None or not np.all(np.isfinite(alpha)):
                return None
            c = certify(problem, None, None, tol, alpha_override=alpha)
            if c is None:
                return None
            al = c.alpha
            if form == "dual":
                b = c.residuals["b"]
                g = y * (K @ (y * al) + b) - 1.0 + (al / C if kind == "l2" else 0.0)
                lo_mult, hi_mult = np.maximum(g, 0.0), np.maximum(-g, 0.0)
                c.duals = [b, lo_mult] + ([] if kind == "l2" else [hi_mult])
            else:
                c.duals = [al, C - al] if kind == "l1" else ([al] if kind == "l2" else [-al])
            return c

        return fast

    @staticmethod
    def _factor(K, X, psd):
        return kernel_factor(K, X, psd=psd)

    @staticmethod
    def _params(spec, hyper):
        return make_params(spec, hyper)

    @staticmethod
    def _ls_direct(K, y, form: str, Phi=None, *, classification: bool):
        """Direct reference of the LS-SVM (000 eqs. (2), (7); 004 eq. (2)): the KKT system in ``[b; alpha]``
        solved by LU with a condition estimate and extended-precision refinement (:func:`._certify.refined_solve`);
        the requested form's values and objective are derived from it on the original K."""
        N = K.shape[0]
        s = y if classification else np.ones(N)          # the equality row: sum_i s_i alpha_i = 0
        r = np.ones(N) if classification else y          # right-hand side
        cache = {}

        def direct(problem, tol):
            h = problem.info["hyper"]
            C = h["zeta"] / h["mu"] if "zeta" in h else h["C"]
            if "K_ld" not in cache:
                cache["K_ld"] = K.astype(cert.LD)
                cache["Kx"] = cert.AccurateMatvec(K)
            K_ld, Kx, iC = cache["K_ld"], cache["Kx"], cert.LD(1) / cert.LD(C)
            s_ld = s.astype(cert.LD)
            A = np.zeros((N + 1, N + 1))
            A[0, 1:] = s
            A[1:, 0] = s
            A[1:, 1:] = (s[:, None] * K) * s[None, :]
            A[np.arange(1, N + 1), np.arange(1, N + 1)] += 1.0 / C
            rhs = np.concatenate([[0.0], r])

            def mv(x):  # x in double; the products with K as in twice the precision, the rest in longdouble
                b, a = x[0], x[1:]
                a_ld = a.astype(cert.LD)
                return np.concatenate([[s_ld @ a_ld], s_ld * Kx(s * a) + a_ld * iC + s_ld * cert.LD(b)])

            x, info = cert.refined_solve(A, rhs, mv, tol=tol, what="the LS-SVM KKT system")
            b, a = float(x[0]), x[1:]
            v = (s * a).astype(cert.LD)
            quad = float(v @ (K_ld @ v))
            a_ld = a.astype(cert.LD)
            d = 0.5 * quad + 0.5 * float(a_ld @ a_ld * iC) - float(r.astype(cert.LD) @ a_ld)
            xi = a / C
            p = 0.5 * quad + 0.5 * C * float(xi.astype(cert.LD) @ xi.astype(cert.LD))
            extra = {"gap_p_plus_d": p + d, "rel_gap": abs(p + d) / max(1.0, abs(d))}
            if form == "dual":
                return cert.direct_certified(d, {"alpha": a}, info, tol, extra=extra)
            W = Phi.T @ (s * a)
            if form == "primal_mu_zeta":
                return cert.direct_certified(h["mu"] * p, {"w": W, "b": b, "e": xi}, info, tol, extra=extra)
            return cert.direct_certified(p, {"W": W, "b": b, "xi": xi}, info, tol, extra=extra)

        return direct

    def __repr__(self) -> str:
        return f"<formulation {self.name!r}: {self.paper}; hyperparameters {self.hyper}; dual sense {self.dual_sense}>"


def C_param():
    """Parameter spec for ``C`` (> 0)."""
    return {"C": ({"pos": True}, lambda h: h["C"])}


def C_inv_param():
    """Parameter spec for ``C_inv = 1/C``: keeps problems with ``1/C`` DPP."""
    return {"C_inv": ({"pos": True}, lambda h: 1.0 / h["C"])}


__all__ = ["Formulation", "C_param", "C_inv_param", "cp"]
