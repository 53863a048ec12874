"""The ground truth: every primal and dual of the five papers, each a cvxpy model that is the specification.

The numbers of a reference are computed by one of a few named strategies (the box problems through their dual
on ``Y K Y`` by CLARABEL called directly, the equality problems by a direct LAPACK solve, the rest through the
cvxpy model itself) and then certified on the original K or X against that model: :func:`solve`, and
``problem.info.strategy`` says which strategy a problem uses (docs/reference.md has the table).

>>> import numpy as np
>>> import svmref.formulations as F
>>> F.names()                                   # doctest: +NORMALIZE_WHITESPACE
['l1_svm', 'l2_svm', 'ls_svm', 'ls_svm_regression', 'least_1norm_svm', 'rls', 'sparse_ls_svm',
 'support_features', 'svr', 'l1_svm_regularised_bias', 'l2_svm_regularised_bias', 'weighted_ls_svm',
 'weighted_ls_svm_regression']
>>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]])
>>> y = np.array([-1.0, -1.0, 1.0, 1.0])
>>> prob = F.get("least_1norm_svm").dual(X @ X.T, y, C=1.0)
>>> prob.info.strategy, prob.info["cite"]
('box_dual_yky', '000, eq. (5)')
>>> sol = F.solve(prob)
>>> sol.certified, sol.solver
(True, 'CLARABEL')
>>> bool(abs(sol.objective - prob.objective.value) <= 1e-12 * abs(sol.objective))
True
>>> bool(abs(y @ sol.values["alpha"]) <= 1e-12)
True

Calling convention: ``get(name).primal(K, y, C=...)`` and ``get(name).dual(K, y, C=...)`` for the kernel
formulations (``K`` the Gram matrix; with the linear kernel ``primal(None, y, C=..., X=X)`` uses ``Phi = X``),
hyperparameters ``C``, ``gamma`` (RLS), ``mu`` (selectivity), ``lam`` (ISLS weights); the support
features machine takes ``X`` in place of ``K``. Each returns an unsolved :class:`cvxpy.Problem`
(a :class:`RefProblem`, whose ``info``, a :class:`ProblemInfo`, says where it comes from and how its reference
is computed) with variables named as in the paper.

Conventions:

* classification decision ``f(x) = sum_i alpha_i y_i k(x_i, x) + b`` (l1_svm, l2_svm, ls_svm,
  least_1norm_svm); regression and the sparse LS-SVM ``f(x) = sum_i alpha_i k(x_i, x) + b``
  (ls_svm_regression, sparse_ls_svm); RLS ``f(x) = sum_i c_i k(x_i, x)`` (no bias).
* every dual is written as a **minimisation** (as 000 eqs. (2), (5)), so strong duality reads
  ``p* = -d*``, except the support features dual (003, eq. (10)) and its QP form (13), written as
  **maximisations** as the thesis has them (``p* = d*``). ``get(name).dual_sense`` says which.
* kernel primals are finite-dimensional through an exact factor ``K = Phi Phi^T``
  (:func:`kernel_factor`): round-off negative eigenvalues are clipped and reported in
  ``problem.info.factor``; a kernel that is not PSD (e.g. MLP) raises :class:`NotConvexError`.
* hyperparameters are :class:`cvxpy.Parameter` objects; :func:`set_params` changes them in place
  (problems with ``1/C`` hold a derived parameter ``C_inv`` so that they stay DPP).

This package imports neither :mod:`svmref.solvers` nor :mod:`svmref.verify`: it is the independent view.
"""
from __future__ import annotations

from ._base import Formulation
from ._common import KernelClipWarning, NotConvexError, ProblemInfo, RefProblem, kernel_factor, set_params
from .least_1norm import Least1NormSVM
from .ls_svm import LSSVM, LSSVMRegression
from .reference import ReferenceAccuracyWarning, ReferenceDisagreementWarning, ReferenceSolveError, Solution, solve
from .regularised_bias import L1SVMRegularisedBias, L2SVMRegularisedBias
from .rls import RLS
from .sparse_ls_svm import SparseLSSVM
from .support_features import SupportFeatures
from .svm import L1SVM, L2SVM
from .svr import SVR
from .weighted_ls_svm import WeightedLSSVM, WeightedLSSVMRegression

_REGISTRY: dict[str, Formulation] = {
    f.name: f
    for f in (L1SVM(), L2SVM(), LSSVM(), LSSVMRegression(), Least1NormSVM(), RLS(), SparseLSSVM(), SupportFeatures(),
              SVR(), L1SVMRegularisedBias(), L2SVMRegularisedBias(), WeightedLSSVM(), WeightedLSSVMRegression())
}


def names() -> list[str]:
    """The names of all formulations, in the order of the papers' taxonomy."""
    return list(_REGISTRY)


def get(name: str) -> Formulation:
    """The formulation object called ``name`` (see :func:`names`)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown formulation {name!r}; expected one of {names()}") from None


__all__ = [
    "names",
    "get",
    "solve",
    "set_params",
    "kernel_factor",
    "Formulation",
    "RefProblem",
    "ProblemInfo",
    "Solution",
    "NotConvexError",
    "KernelClipWarning",
    "ReferenceSolveError",
    "ReferenceDisagreementWarning",
    "ReferenceAccuracyWarning",
    "L1SVM",
    "L2SVM",
    "LSSVM",
    "LSSVMRegression",
    "Least1NormSVM",
    "RLS",
    "SparseLSSVM",
    "SupportFeatures",
    "SVR",
    "L1SVMRegularisedBias",
    "L2SVMRegularisedBias",
    "WeightedLSSVM",
    "WeightedLSSVMRegression",
]
