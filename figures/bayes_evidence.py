"""The Bayesian LS-SVM's evidence over ``(gamma, sigma)`` on Ripley's data, against 10-fold cross-validation (002).

002 ("Bayesian interpretation for LS-SVM") reads the LS-SVM's ``gamma = zeta/mu`` as a ratio of two
hyperparameters inferred at level 2 and the kernel (here the RBF width ``sigma`` of
``exp(-||x - z||^2 / sigma^2)``) as a model compared at level 3. This figure draws, on Ripley's synthetic
data (``synth.tr``, 250 patterns; tested on ``synth.te``, 1000 patterns):

* left: the level-2 log evidence ``max_mu log p(D | mu, gamma mu, sigma)`` over the ``(gamma, sigma)`` grid
  (:func:`svmref.solvers.bayes.evidence_surface`), the level-2 ridge ``gamma_MP(sigma)`` and the Bayesian
  choice ``(gamma_MP, sigma_MP)`` of :class:`svmref.solvers.bayes.BayesianLSSVC` (level 3 over sigma);
* middle: the level-3 log evidence as a function of ``sigma`` (each sigma with its own level 2);
* right: the 10-fold cross-validation error of the LS-SVM (sign of ``f(x)``) over the same grid, its
  minimiser and the Bayesian choice.

The report closes with the test errors on ``synth.te`` of both choices. Nothing is tuned by hand: the grid
is the only constant (:data:`GRID`), the CV folds come from ``seed``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from svmref.datasets import load_dataset
from svmref.kernels import rbf_kernel

from ._common import format_table, new_figure

__all__ = ["GRID", "DEFAULT_SEED", "cv_error_surface", "EvidenceResult", "compute", "plot", "figure"]

DEFAULT_SEED = 0  # permutation of the 10 CV folds
#: the (gamma, sigma) grid, log-uniform: (low, high, points); ``fast`` uses fewer points on the same ranges.
#: The sigma range spans 0.08 to 8 times Ripley's median pairwise distance (0.65).
GRID = {"gamma": (1e-3, 1e4, 29), "sigma": (0.05, 5.0, 25)}
GRID_FAST = {"gamma": (1e-3, 1e4, 8), "sigma": (0.05, 5.0, 7)}
N_FOLDS = 10


def _ls_svm_eigen(eig, K, y, gamma):
    """The LS-SVM (002's linear system) at ``gamma`` from the centred eigendecomposition: ``(alpha, b)``."""
    from svmref.solvers.bayes import level1

    r = level1(K, y, 1.0, gamma, eig=eig)  # mu = 1, zeta = gamma: only the ratio matters (002)
    return r.alpha, r.b


def cv_error_surface(X, y, gammas, sigmas, *, n_folds: int = N_FOLDS, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``E[i, j]``: the ``n_folds``-fold cross-validation error rate of the LS-SVM classifier (sign of
    ``f(x) = sum alpha_i k(x_i, x) + b``) at ``sigma_i``, ``gamma_j`` (one eigendecomposition per fold and sigma)."""
    from svmref.solvers._result import kernel_expansion, sign_labels
    from svmref.solvers.bayes import centred_eigen

    folds = np.array_split(np.random.default_rng(seed).permutation(len(y)), n_folds)
    wrong = np.zeros((len(sigmas), len(gammas)))
    for i, s in enumerate(sigmas):
        K = rbf_kernel(X, sigma=float(s))
        for k in range(n_folds):
            te = folds[k]
            tr = np.concatenate([folds[m] for m in range(n_folds) if m != k])
            Ktr = K[np.ix_(tr, tr)]
            eig = centred_eigen(Ktr)
            for j, g in enumerate(gammas):
                alpha, b = _ls_svm_eigen(eig, Ktr, y[tr], float(g))
                wrong[i, j] += np.sum(sign_labels(kernel_expansion(K[np.ix_(te, tr)], alpha, b)) != y[te])
    return wrong / len(y)


@dataclass(frozen=True)
class EvidenceResult:
    """The numbers drawn and printed."""

    gammas: np.ndarray
    sigmas: np.ndarray
    L2: np.ndarray            # level-2 log evidence, profiled over mu, [sigma, gamma]
    L3: np.ndarray            # level-3 log evidence per sigma (nan where level 2 is on its boundary)
    ridge: np.ndarray         # gamma_MP(sigma), the level-2 maximiser per sigma
    cv: np.ndarray            # 10-fold CV error rate [sigma, gamma]
    choice: dict              # "bayes" / "cv" -> (gamma, sigma)
    test_error: dict          # "bayes" (moderated output), "bayes_latent" (sign f), "cv" (sign f) on synth.te
    cv_error: dict            # "bayes" / "cv": CV error of the chosen point (bayes: at the nearest grid cell)
    bayes: dict               # mu, zeta, gamma_eff, log evidences, boundary flag of the Bayesian fit
    n_train: int
    n_test: int

    def report(self) -> str:
        gb, sb = self.choice["bayes"]
        gc, sc = self.choice["cv"]
        rows = [
            ["Bayesian (levels 2, 3)", f"{gb:.4g}", f"{sb:.4g}", f"{self.cv_error['bayes']:.3f}",
             f"{100 * self.test_error['bayes']:.1f}", f"{100 * self.test_error['bayes_latent']:.1f}"],
            ["10-fold CV (grid)", f"{gc:.4g}", f"{sc:.4g}", f"{self.cv_error['cv']:.3f}", "",
             f"{100 * self.test_error['cv']:.1f}"],
        ]
        b = self.bayes
        return "\n".join([
            f"bayes-evidence (002, Bayesian LS-SVM): Ripley synth.tr (N = {self.n_train}), RBF "
            f"exp(-||x-z||^2/sigma^2); test on synth.te ({self.n_test})",
            format_table(["choice", "gamma", "sigma", "CV error", "test err % (moderated)", "test err % (sign f)"], rows),
            f"Bayesian fit: mu = {b['mu']:.4g}, zeta = {b['zeta']:.4g}, gamma_eff = {b['gamma_eff']:.4g}, "
            f"level-2 log evidence = {b['log_evidence']:.4f}, level-3 log evidence = {b['level3']:.4f}, "
            f"on a search boundary: {b['at_boundary']}",
            f"grid: gamma in [{self.gammas[0]:g}, {self.gammas[-1]:g}] ({len(self.gammas)} points), sigma in "
            f"[{self.sigmas[0]:g}, {self.sigmas[-1]:g}] ({len(self.sigmas)} points); CV ties go to the largest "
            "sigma, then the smallest gamma (the smoothest model); the Bayesian sigma is searched continuously",
            f"closing note: the evidence picks (gamma, sigma) = ({gb:.3g}, {sb:.3g}) with test error "
            f"{100 * self.test_error['bayes']:.1f}% (moderated output; {100 * self.test_error['bayes_latent']:.1f}% "
            f"with the sign of f); 10-fold CV picks ({gc:.3g}, {sc:.3g}) with {100 * self.test_error['cv']:.1f}%; "
            f"one binomial standard deviation on 1000 test patterns is about "
            f"{100 * np.sqrt(self.test_error['cv'] * (1 - self.test_error['cv']) / self.n_test):.1f} points.",
        ])


def compute(seed: int = DEFAULT_SEED, *, fast: bool = False) -> EvidenceResult:
    """Evidence surface, level-3 curve, 10-fold CV surface and both choices on Ripley (``seed``: CV folds)."""
    from svmref.solvers._result import kernel_expansion, sign_labels
    from svmref.solvers.bayes import BayesianLSSVC, evidence_surface, level1

    grid = GRID_FAST if fast else GRID
    gammas = np.logspace(np.log10(grid["gamma"][0]), np.log10(grid["gamma"][1]), grid["gamma"][2])
    sigmas = np.logspace(np.log10(grid["sigma"][0]), np.log10(grid["sigma"][1]), grid["sigma"][2])
    X, y = load_dataset("synth.tr")
    Xt, yt = load_dataset("synth.te")
    with threadpool_limits(1):  # many small eigendecompositions: one BLAS thread is fastest
        L2, L3, best = evidence_surface(X, y, gammas, sigmas)
        cv = cv_error_surface(X, y, gammas, sigmas, seed=seed)
        clf = BayesianLSSVC().fit(X, y)
    order = sorted((cv[i, j], -sigmas[i], gammas[j], i, j) for i in range(len(sigmas)) for j in range(len(gammas)))
    _, _, _, ic, jc = order[0]
    gc, sc = float(gammas[jc]), float(sigmas[ic])
    K = rbf_kernel(X, sigma=sc)
    r_cv = level1(K, y, 1.0, gc)
    f_cv = kernel_expansion(rbf_kernel(Xt, X, sigma=sc), r_cv.alpha, r_cv.b)
    gb, sb = float(clf.gamma_), float(clf.sigma_)
    ib = int(np.argmin(np.abs(np.log(sigmas / sb))))
    jb = int(np.argmin(np.abs(np.log(gammas / gb))))
    return EvidenceResult(
        gammas=gammas, sigmas=sigmas, L2=L2, L3=L3, ridge=np.array([r.gamma for r in best]), cv=cv,
        choice={"bayes": (gb, sb), "cv": (gc, sc)},
        test_error={"bayes": float(np.mean(clf.predict(Xt) != yt)),
                    "bayes_latent": float(np.mean(sign_labels(clf.latent_function(Xt)) != yt)),
                    "cv": float(np.mean(sign_labels(f_cv) != yt))},
        cv_error={"bayes": float(cv[ib, jb]), "cv": float(cv[ic, jc])},
        bayes={"mu": float(clf.mu_), "zeta": float(clf.zeta_), "gamma_eff": float(clf.gamma_eff_),
               "log_evidence": float(clf.log_evidence_), "level3": float(clf.level3_log_evidence_),
               "at_boundary": bool(clf.at_boundary_)},
        n_train=len(y), n_test=len(yt),
    )


def plot(result: EvidenceResult):
    """Three panels: level-2 evidence surface (with ridge and choices), level-3 curve, CV error surface."""
    fig, axes = new_figure(1, 3, width=16.0, height=5.0)
    lg, ls = np.log10(result.gammas), np.log10(result.sigmas)
    gb, sb = result.choice["bayes"]
    gc, sc = result.choice["cv"]

    def marks(ax):
        ax.plot(np.log10(gb), np.log10(sb), marker="*", ms=16, color="gold", mec="k", ls="none",
                label=f"Bayes: gamma={gb:.3g}, sigma={sb:.3g}")
        ax.plot(np.log10(gc), np.log10(sc), marker="o", ms=9, color="white", mec="k", ls="none",
                label=f"10-fold CV: gamma={gc:.3g}, sigma={sc:.3g}")
        ax.set_xlabel("log10 gamma  (gamma = zeta / mu)")
        ax.set_ylabel("log10 sigma")

    ax = axes[0, 0]
    top = np.nanmax(result.L2)
    levels = top - np.r_[np.geomspace(200, 1, 12), 0.0]  # increasing, finer near the maximum
    cs = ax.contourf(lg, ls, np.maximum(result.L2, top - 200), levels=np.unique(levels), cmap="viridis")
    fig.colorbar(cs, ax=ax, label="level-2 log evidence (max over mu)")
    inside = (result.ridge > result.gammas[0]) & (result.ridge < result.gammas[-1])
    ax.plot(np.log10(result.ridge[inside]), ls[inside], color="w", lw=1.5, ls="--", label="level-2 ridge gamma_MP(sigma)")
    marks(ax)
    ax.set_title("Level 2: log p(D | mu, zeta, sigma), profiled over mu", fontsize=10)
    ax.legend(loc="lower left", fontsize=7)

    ax = axes[0, 1]
    ok = np.isfinite(result.L3)
    ax.semilogx(result.sigmas[ok], result.L3[ok], "o-", color="tab:blue", ms=4, label="level-3 log evidence")
    if np.any(~ok):
        ax.plot(result.sigmas[~ok], np.full(np.sum(~ok), np.nanmin(result.L3)), "x", color="tab:red",
                label="level 2 on its gamma boundary (undefined)")
    ax.axvline(sb, color="goldenrod", lw=1.5, label=f"Bayes sigma = {sb:.3g}")
    ax.axvline(sc, color="k", lw=1, ls=":", label=f"CV sigma = {sc:.3g}")
    ax.set_xlabel("sigma")
    ax.set_ylabel("log p(D | sigma)  (+ const)")
    ax.set_title("Level 3: the evidence for the RBF width", fontsize=10)
    ax.legend(loc="lower center", fontsize=7)

    ax = axes[0, 2]
    cs = ax.contourf(lg, ls, 100 * result.cv, levels=np.linspace(100 * result.cv.min(), min(50.0, 100 * result.cv.max()), 12),
                     cmap="magma_r", extend="max")
    fig.colorbar(cs, ax=ax, label="10-fold CV error (%)")
    marks(ax)
    ax.set_title("10-fold cross-validation error of the LS-SVM", fontsize=10)
    ax.legend(loc="lower left", fontsize=7)
    te = result.test_error
    fig.suptitle(f"Bayesian LS-SVM on Ripley (synth.tr): evidence vs cross-validation.  Test error on synth.te: "
                 f"Bayes {100 * te['bayes']:.1f}% (moderated), CV {100 * te['cv']:.1f}%", fontsize=11)
    return fig


def figure(seed: int = DEFAULT_SEED, *, fast: bool = False):
    """``plot(compute(seed, fast=fast))``."""
    return plot(compute(seed, fast=fast))
