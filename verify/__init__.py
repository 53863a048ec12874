"""Hold any solver against the cvxpy reference and give a verdict with numbers.

>>> from svmref import verify
>>> report = verify.check(my_solver, "least_1norm_svm", instances="quick", tol=1e-6)   # doctest: +SKIP
>>> print(report)              # a table, then success rate and shifted geometric means   # doctest: +SKIP
>>> report.passed, report.to_records()                                                   # doctest: +SKIP

Command line: ``svmref verify SPEC --formulation NAME [--suite NAME] [--tol T] [--json PATH] [--timeout S]
[--n N] [--data FILE.csv]`` (see :mod:`svmref.verify.cli`; docs/verify.md has an annotated failing report).

The contract a solver follows
-----------------------------

* Box-constrained duals ``l1_svm``, ``l2_svm``, ``ls_svm``, ``least_1norm_svm`` and also
  ``ls_svm_regression``, ``sparse_ls_svm``: ``f(K, y, C, **options)`` with ``K`` the N x N Gram
  matrix, returning ``(alpha, b)``, ``alpha`` alone, or an object (or dict) with ``.alpha`` and ``.b``.
  ``b`` may be omitted (``None``): verify then derives the best ``b`` from the KKT conditions and says
  so. Conventions: ``f(x) = sum_i alpha_i y_i k(x_i, x) + b`` for the four classifiers;
  ``f(x) = sum_i alpha_i k(x_i, x) + b`` for ``ls_svm_regression`` and ``sparse_ls_svm`` (004).
* ``rls``: ``f(K, y, gamma)`` returning ``c`` or an object with ``.c``;
  ``f(x) = sum_i c_i k(x_i, x)`` (001 eq. (9)).
* ``support_features``: ``f(X, y, C, mu)`` returning an object (or dict) with ``.lam`` and/or ``.a``,
  ``.b``; verify checks whatever is given (the dual (003 eq. (10)), the primal (5), or both).
* ``svr`` (epsilon-SVR): ``f(K, y, C, epsilon=epsilon, **options)`` (each instance carries its ``epsilon``,
  passed by keyword), returning ``alpha = alpha^+ - alpha^-`` (length N) and ``b`` as for the box duals;
  ``f(x) = sum_i alpha_i k(x_i, x) + b`` (docs/formulations/svr.md).
* If ``f`` has a parameter named ``tol``, verify passes it the tolerance it checks at (and each
  record says so: ``solver_tol``).
* The signature is checked once, before any instance runs (:func:`check_signature`,
  :class:`SignatureError`); ``check(..., timeout=S)`` runs the solver in a worker process killed after
  ``S`` seconds per instance (:mod:`svmref.verify.worker`).

The arrays handed to the solver are copies: a solver that writes into them does not corrupt the check.

What verify computes per instance
---------------------------------

The reference (``formulations``: CLARABEL at tight tolerance with its own certificate, an optional
ECOS cross-check whose disagreement is reported); the solver's objective and its relative gap; the KKT residuals of the
formulation, computed here with numpy (:mod:`svmref.verify.kkt`: dual feasibility box and equality,
primal feasibility of the recovered primal, complementarity, stationarity); the duality gap between
the recovered primal and the dual; the agreement of the decision function with the reference's on
training and held-out points; the solver's time. A verdict per instance names every failed check and its worst
offender, e.g. ``box 3.1e-01 > 1e-06: alpha_17 = -0.31 is outside [0, 1] (C = 1)``.

For ``sparse_ls_svm`` (not convex) verify checks that the answer is a fixed point of 004's Algorithm 1:
it solves the weighted problem (3) for the weights ``lam_i = 1/alpha_i^2`` it implies.

Tolerances (``tol`` = 1e-6 by default, :data:`TOLERANCES`): every check is held to ``tol`` itself, so a pass
at ``tol`` means every reported error is at most ``tol`` in its unit: the objective gap (relative to
``|objective*|``), the duality gap, box and equality (relative), the KKT residuals in the solution's units
(``stationarity``, ``kkt_absolute``: the natural residual, margin units for classification, ``max|y|`` for
regression; an interior-point answer is charged for its distance to the bounds, not for the gradient), ``b``
(``b_gap``, its distance from the reference's optimal interval) and the decision values ``f = W.Phi(x) + b`` on the
training and held-out points (``decision_gap``; the difference of ``W.Phi(x)`` alone is reported as ``bias_free_gap``,
not judged). A comparison with the reference is only judged as far as the reference resolves it
(:func:`svmref.verify.reference.resolution`): otherwise the verdict is ``unresolved``, never a pass or fail.

A failed instance also gets diagnoses in plain words, the cause first (the solver's own status or warning, "solves
the problem with C = ... instead", "... for K rounded to float32", "stopped early", or "verify does not know the
cause"), then the facts ("b is wrong for the answer's own alpha" with its KKT interval, "box violated",
"y'alpha != 0", "not optimal (objective gap ...)"),
the smallest one-digit ``tol < 1`` at which it would pass, confirmed by re-checking (``would_pass_at_tol``; the report's
``suite_tol`` for the whole suite), and ``hint: ...`` when it passes after a known convention change
(``alpha -> y * alpha``, ``b -> -b``, a scaling, the neighbouring formulation).

What differs between formulations (the call, the answer, the residuals, the reference, the decision
function, the convention slips and the neighbouring problems) is one entry per formulation in
:mod:`svmref.verify.specs`; docs/verify.md shows what adding a formulation takes.

Verdicts: ``pass``, ``fail``, ``error`` (the solver raised or returned something unusable), ``timeout``
(no answer within ``timeout``; a failure), ``not convex``
(the kernel is not PSD: the reference does not apply) and ``no reference`` (the reference solver
failed); the last two are reported, and count neither as passes nor as failures.
"""
from .core import DEFAULT_TOL, TOLERANCES, SignatureError, check, check_signature, check_verify_tol, tolerances
from .instances import SUITES, Instance, suite
from .kkt import RESIDUALS
from .report import Record, Report, shifted_geometric_mean

__all__ = [
    "check",
    "check_signature",
    "check_verify_tol",
    "SignatureError",
    "Report",
    "Record",
    "Instance",
    "suite",
    "SUITES",
    "TOLERANCES",
    "DEFAULT_TOL",
    "RESIDUALS",
    "tolerances",
    "shifted_geometric_mean",
]
