"""The numerical thresholds of the package, each defined once.

``formulations``, ``solvers`` and ``verify`` never import each other; they import these from here. Each
threshold is relative: beside it stand the quantity it bounds, the scale it is relative to, and why it has
its value. ``docs/index.md`` lists them next to what ``tol`` means for each solver.

This module imports nothing.
"""
from __future__ import annotations

__all__ = ["SYM_RTOL", "PSD_RTOL", "SMO_PSD_RTOL", "CENTRED_PSD_RTOL", "ACTIVE_RTOL", "TAU", "SNAP_RTOL"]

#: Symmetry of a Gram matrix. :func:`svmref._validation.check_gram` accepts ``K`` when
#: ``max_ij |K_ij - K_ji| <= SYM_RTOL * max(1, max_ij |K_ij|)`` (absolute below ``max|K| = 1``).
#: A kernel evaluated in float64 is symmetric to a few units of rounding (``1e-16 max|K|``) or exactly;
#: ``1e-8`` is far above that and far below an asymmetry that changes a solution at the accuracies the
#: solvers are run to, so what it refuses was not computed as a kernel matrix (a transposed cross kernel,
#: a matrix of the wrong data). Every dense Gram check of the package uses it: the reference's, the
#: linear systems' and the SMO engines' (``solvers/_qmatrix.py``).
SYM_RTOL = 1e-8

#: Positive semidefiniteness as the reference and verify decide it: ``K`` is PSD when its smallest
#: eigenvalue is at least ``-PSD_RTOL`` times its largest ``|eigenvalue|`` (``formulations/_common.py``:
#: below it ``NotConvexError``, above it a negative eigenvalue is clipped as round-off;
#: :func:`svmref._validation.is_psd`, which ``verify/instances.py`` uses, takes ``max(1, max|eig|)`` as
#: the scale). The backward error of ``eigh`` is about ``N eps max|eig|`` (``2e-13`` at ``N = 1000``):
#: ``1e-9`` is round-off for every ``N`` a dense eigendecomposition handles, while the negative eigenvalues
#: of an indefinite kernel (the MLP kernel of 002) are many orders larger.
PSD_RTOL = 1e-9

#: Non-convexity as the SMO engine (``solvers/smo.py``) proves it, from quantities it computes: a working
#: pair with curvature ``a_ij < -SMO_PSD_RTOL * max(1, |Kt_ii| + |Kt_jj|)``, a diagonal entry
#: ``K_ii + shift < -SMO_PSD_RTOL * max(1, max|K_ii|)``, or (dense ``K``, small ``N``) a failed Cholesky
#: factorisation of ``K + (shift + tau) I`` with ``tau = SMO_PSD_RTOL * max(1, ||K||_F)``. Its scales are
#: not the largest eigenvalue (``||K||_F`` lies between ``max|eig|`` and ``sqrt(N) max|eig|``), so it is
#: not :data:`PSD_RTOL` under another name: a ``K`` whose smallest eigenvalue lies between the two
#: thresholds can be refused by one and accepted by the other. The two values are kept as they were
#: measured and tested; making them one would change which near-PSD kernels the SMO refuses.
SMO_PSD_RTOL = 1e-10

#: Positive semidefiniteness of the *centred* kernel matrix of the Bayesian LS-SVM (``solvers/bayes.py``,
#: 002 §3): its eigenvalues come from one ``eigh`` that the evidence formulas reuse, and a smallest
#: eigenvalue above ``-CENTRED_PSD_RTOL * max(1, max|eig|)`` is clipped to 0 as round-off; below it the kernel
#: is refused. Kept at the value it was measured and tested with, tighter than :data:`PSD_RTOL`: making the
#: two one would change which near-PSD kernels ``BayesianLSSVC`` refuses.
CENTRED_PSD_RTOL = 1e-10

#: Bound classification in verify (``verify/kkt.py``): an ``alpha_i`` within ``ACTIVE_RTOL * C`` of a bound
#: counts as *at* that bound (the eps-active set of the KKT residuals). Far above the rounding of an
#: ``alpha`` computed in float64 (``1e-16 C``) and far below the tolerances verify checks at.
ACTIVE_RTOL = 1e-9

#: Curvature floor of the SMO engines' working-pair step (LIBSVM's ``TAU``, Fan, Chen & Lin 2005): a pair
#: whose curvature ``a_ij = K_ii + K_jj - 2 K_ij`` (plus the diagonal shift) is not above it is stepped
#: with ``a_ij = TAU`` instead (``solvers/_smo_kernel.py`` when ``on_nonconvex="clamp"``, and the
#: second-order selection of the support features engine, ``solvers/_sfm_engine.py``). Absolute, as in
#: LIBSVM: it only keeps the step finite; the step is then clipped to the box.
TAU = 1e-12

#: The support features engine (``solvers/_sfm_engine.py``) puts a ``lam_j`` within ``SNAP_RTOL * C`` of a
#: bound of ``[0, C]`` on that bound after each pair step, so that the index sets of 003 §2.6 see it as
#: bounded; a few units of rounding of ``C`` (``1e-16 C``) and far below any step the engine takes.
SNAP_RTOL = 1e-13
