"""Fast, hand-written solvers for the SVM family (no cvxpy, no matplotlib at import time).

Modules:

* :mod:`svmref.solvers.smo`               -- one SMO engine for the four box-constrained duals
  (L1, L2, LS, Least 1-Norm; 000 eq. (5), (8)-(11)), its four adapters and epsilon-SVR (``smo.svr``);
  K may be a dense array or :class:`RawKernel` (raw X, LRU column cache of ``cache_size`` MB);
* :mod:`svmref.solvers._qmatrix`          -- the kernel seam of the SMO engine (LIBSVM's ``QMatrix``);
* :mod:`svmref.solvers.linear`            -- LS-SVM (classification and regression) and RLS by linear systems;
* :mod:`svmref.solvers.isls`              -- the ISLS-SVM loop (004, Algorithm 1);
* :mod:`svmref.solvers.support_features`  -- the generalised SMO for the support features machine (003 §2.6);
* :mod:`svmref.solvers.sfm_path`          -- its selectivity path and leave-one-out (003 §3);
* :mod:`svmref.solvers.robust`            -- the weighted LS-SVM by its KKT system and the robust LS-SVM on top
  (Suykens, De Brabanter, Lukas & Vandewalle 2002);
* :mod:`svmref.solvers.fixed_size`        -- the fixed-size LS-SVM (004 §1, its reference [7]): Nystrom features of
  prototypes chosen by the Renyi entropy, the primal accumulated over blocks of rows;
* :mod:`svmref.solvers.kernels`           -- kernel matrices (re-exported from :mod:`svmref.kernels`).

Every result reports its certified relative duality gap (``duality_gap``, with its floor ``gap_floor``) and is
labelled ``"optimal"`` only when that gap is within the solver's ``gap_tol``; a result whose stopping rule held at a
point further from the optimum is ``"suboptimal"``, with a :class:`SuboptimalWarning` (a ``ConvergenceWarning``)
that says how far and which ``tol`` should fix it (:mod:`svmref.solvers._result`; ``docs/smo.md`` §10).

Every solver follows the contract that :mod:`svmref.verify` checks: ``f(K, y, C, **options)`` returning a
:class:`~svmref.solvers._result.SolverResult` with ``.alpha`` and ``.b`` (``f(K, y, gamma)`` with ``.c`` for
RLS; ``f(X, y, C, mu)`` with ``.lam``, ``.a``, ``.b`` for the support features machine).
"""
from svmref._validation import NotConvexError

from ._result import ConvergenceWarning, IllConditionedWarning, SolverResult, SuboptimalWarning

__all__ = ["SolverResult", "ConvergenceWarning", "IllConditionedWarning", "SuboptimalWarning", "NotConvexError",
           "REGISTRY"]

#: Built-in solvers as ``"module:callable" -> formulation name`` (what ``svmref verify --list`` prints).
REGISTRY: dict[str, str] = {
    "svmref.solvers.smo:l1_svm": "l1_svm",
    "svmref.solvers.smo:l2_svm": "l2_svm",
    "svmref.solvers.smo:ls_svm": "ls_svm",
    "svmref.solvers.smo:least_1norm_svm": "least_1norm_svm",
    "svmref.solvers.linear:ls_svm": "ls_svm",
    "svmref.solvers.linear:ls_svm_regression": "ls_svm_regression",
    "svmref.solvers.linear:rls": "rls",
    "svmref.solvers.isls:sparse_ls_svm": "sparse_ls_svm",
    "svmref.solvers.support_features:support_features": "support_features",
    "svmref.solvers.smo:svr": "svr",
    "svmref.solvers.robust:weighted_ls_svm_classification": "weighted_ls_svm",
    "svmref.solvers.robust:weighted_ls_svm_regression": "weighted_ls_svm_regression",
    "svmref.solvers.fixed_size:fixed_size_primal": "fixed_size_ls_svm",
}
