"""RLS against the SVM on the three simulated 2-D problems of 001 §4 (Figs. 1-4, Table 2).

The problems (001 §4 is brief: "two dimensions (unit square)", areas numbered 1-4 and 1-6 in its
Fig. 1; this is how they are built here, an interpretation written down so it can be checked):

* ``square`` (non-overlapping, 001 Fig. 1 left, Fig. 2): the unit square cut at ``x1 = 0.5`` and
  ``x2 = 0.5`` into four areas, numbered like the paper's figure reads, 1 top-left, 2 top-right,
  3 bottom-left, 4 bottom-right. "The areas 1 and 4 are class -1 data, while the areas 2 and 3 are
  class 1 data" (an XOR pattern); ``x`` is uniform on the square. Bayes classifier: the area's
  label; Bayes error 0.
* ``mixture`` (001 Fig. 3): ``x`` uniform on the square and ``y = +1`` with probability 0.8,
  independently of ``x`` ("both are uniformly randomly distributed in the same range ... 80% of the
  data are in class 1"). Bayes classifier: +1 everywhere; Bayes error 0.2.
* ``overlap`` (partly overlapping, 001 Fig. 1 right, Fig. 4): the square cut at ``x1 = 0.5`` and
  into three horizontal bands, ``x2 >= 0.6`` (areas 1 left, 2 right), ``0.4 <= x2 < 0.6`` (areas 5
  left, 6 right) and ``x2 < 0.4`` (areas 3 left, 4 right). Areas 1 and 4 are class -1, areas 2 and
  3 class +1; in the overlapping areas 5 and 6 "70% of the data ... are in class 1". ``x`` is
  uniform on the square. Bayes classifier: the area's label outside the band, +1 inside it;
  Bayes error ``0.3 x 0.2 = 0.06`` (the band's area is 0.2).

Training: 40 points per problem (001 §4). Test: 001 uses "2601 testing data points", i.e. the
51 x 51 mesh of the unit square; here the test inputs are that mesh and each test label is drawn
from the problem's ``P(y | x)``, so the test error estimates the true error (Bayes: 0, 0.2, 0.06).

Models (001 §2-3), both with the Gaussian kernel ``K(x, x') = exp(-||x - x'||^2 / (2 sigma^2))``
(001 §3, :func:`svmref.kernels.gaussian_kernel`):

* RLS: ``(m gamma I + K) c = y`` (001 eq. (8)), ``f(x) = sum_i c_i K(x, x_i)`` (001 eq. (9)),
  trained by :func:`svmref.solvers.linear.rls`;
* SVM: the L1-SVM dual (001 eq. (4)), trained by :func:`svmref.solvers.smo.l1_svm`,
  ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``;

and the prediction is +1 when ``f(x) > 0``, else -1 (001 §2.2). The hyperparameters are chosen by
ten-fold cross-validation on the 40 training points, as 001 §3 does, over a modest grid
(:data:`SIGMAS` x :data:`CS` for the SVM, :data:`SIGMAS` x :data:`GAMMAS` for RLS; 001 searches
[1e-15, 1e15], far wider than 40 points can distinguish). Table 2 averages 10 repetitions: so
does :func:`compute` (``n_repeats``); the panels show the first repetition.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmref.kernels import gaussian_kernel

from ._common import format_table, new_figure

__all__ = [
    "PROBLEMS",
    "BAYES_ERROR",
    "TABLE2",
    "DEFAULT_SEED",
    "conditional_p",
    "bayes_predict",
    "sample",
    "test_set",
    "fit_rls",
    "fit_svm",
    "cv_select",
    "RLSvsSVMResult",
    "compute",
    "plot",
    "figure",
]

DEFAULT_SEED = 0
PROBLEMS = ("square", "mixture", "overlap")
PROBLEM_TITLES = {"square": "non-overlapping (square)", "mixture": "mixture (80/20)",
                  "overlap": "partly overlapping"}
#: Bayes error of each problem as built here (see the module docstring).
BAYES_ERROR = {"square": 0.0, "mixture": 0.2, "overlap": 0.06}
#: 001 Table 2, average error rates over 10 runs (mean, std), as printed. The paper's rows are
#: "squre", "ov" and "mix"; the "mix" values (0.0363, 0.1703) are below the Bayes error 0.2 that
#: the text states, so they cannot be raw error rates of that problem (perhaps the excess over the
#: Bayes error); they are reproduced as printed.
TABLE2 = {
    "square": {"RLS": (0.0792, 0.0226), "SVM": (0.0753, 0.0228)},
    "overlap": {"RLS": (0.1445, 0.0186), "SVM": (0.1435, 0.0454)},
    "mixture": {"RLS": (0.0363, 0.0549), "SVM": (0.1703, 0.0752)},
}
N_TRAIN = 40
MESH_SIDE = 51  # 51 x 51 = 2601 test points (001 §4)
#: Cross-validation grids (001 §3 uses ten folds).
SIGMAS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
CS = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
GAMMAS = (1e-6, 1e-4, 1e-2, 1e-1, 1.0, 10.0)
N_FOLDS = 10


def _check_problem(problem: str) -> str:
    if problem not in PROBLEMS:
        raise ValueError(f"problem must be one of {PROBLEMS}; got {problem!r}")
    return problem


def conditional_p(problem: str, X) -> np.ndarray:
    """``P(y = +1 | x)`` for each row of ``X`` (points of the unit square)."""
    _check_problem(problem)
    X = np.asarray(X, dtype=float)
    left, top = X[:, 0] < 0.5, X[:, 1] >= 0.5
    if problem == "mixture":
        return np.full(len(X), 0.8)
    if problem == "square":
        # area 1 top-left (-1), 2 top-right (+1), 3 bottom-left (+1), 4 bottom-right (-1)
        return np.where(left ^ top, 1.0, 0.0)
    band = (X[:, 1] >= 0.4) & (X[:, 1] < 0.6)
    p = np.where(left ^ top, 1.0, 0.0)
    return np.where(band, 0.7, p)


def bayes_predict(problem: str, X) -> np.ndarray:
    """The Bayes classifier: +1 where ``P(y = +1 | x) > 1/2``, else -1."""
    return np.where(conditional_p(problem, X) > 0.5, 1.0, -1.0)


def sample(problem: str, n: int, rng: np.random.Generator):
    """``n`` points uniform on the unit square with labels drawn from ``P(y | x)``."""
    X = rng.uniform(0.0, 1.0, size=(n, 2))
    y = np.where(rng.uniform(size=n) < conditional_p(problem, X), 1.0, -1.0)
    return X, y


def test_set(problem: str, rng: np.random.Generator):
    """The 51 x 51 = 2601-point mesh of the unit square with labels drawn from ``P(y | x)``."""
    g = np.linspace(0.0, 1.0, MESH_SIDE)
    xx, yy = np.meshgrid(g, g)
    X = np.column_stack([xx.ravel(), yy.ravel()])
    y = np.where(rng.uniform(size=len(X)) < conditional_p(problem, X), 1.0, -1.0)
    return X, y


class _Model:
    """A trained kernel expansion ``f(x) = sum_i coef_i K(x_i, x) + b`` with the Gaussian kernel."""

    def __init__(self, X, coef, b, sigma, n_sv):
        self.X, self.coef, self.b, self.sigma, self.n_sv = X, coef, float(b), float(sigma), int(n_sv)

    def decision(self, Z):
        """:func:`~svmref.solvers._result.kernel_expansion` on ``K(z, x_i)``."""
        from svmref.solvers._result import kernel_expansion

        return kernel_expansion(gaussian_kernel(np.asarray(Z, dtype=float), self.X, sigma=self.sigma), self.coef, self.b)

    def predict(self, Z):
        """:func:`~svmref.solvers._result.sign_labels` of :meth:`decision`: +1 where ``f > 0``, else -1 (001 §2)."""
        from svmref.solvers._result import sign_labels

        return sign_labels(self.decision(Z))


def fit_rls(X, y, sigma: float, gamma: float) -> _Model:
    """RLS (001 eq. (8)-(9)) with :func:`svmref.solvers.linear.rls`: ``f(x) = sum_i c_i K(x, x_i)``, no bias."""
    from svmref.solvers.linear import rls

    res = rls(gaussian_kernel(X, sigma=sigma), y, gamma)
    c = np.asarray(res.c, dtype=float)
    return _Model(X, c, 0.0, sigma, np.count_nonzero(c))


def fit_svm(X, y, sigma: float, C: float) -> _Model:
    """L1-SVM (001 eq. (4)) with :func:`svmref.solvers.smo.l1_svm`: ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``."""
    from svmref.solvers.smo import l1_svm

    res = l1_svm(gaussian_kernel(X, sigma=sigma), y, C)
    alpha = np.asarray(res.alpha, dtype=float)
    return _Model(X, alpha * y, res.b, sigma, np.count_nonzero(alpha > 1e-8 * C))


def cv_select(method: str, X, y, rng: np.random.Generator, *, sigmas=SIGMAS, second=None,
              n_folds: int = N_FOLDS):
    """Ten-fold cross-validation (001 §3): the ``(sigma, C)`` (SVM) or ``(sigma, gamma)`` (RLS)
    with the fewest validation errors (ties: the first in grid order). Returns ``(sigma, p, cv_error)``."""
    fit = {"svm": fit_svm, "rls": fit_rls}[method]
    if second is None:
        second = CS if method == "svm" else GAMMAS
    folds = np.array_split(rng.permutation(len(y)), n_folds)
    best = None
    for sigma in sigmas:
        for p in second:
            errors = 0
            for k in range(n_folds):
                te = folds[k]
                tr = np.concatenate([folds[j] for j in range(n_folds) if j != k])
                if np.all(y[tr] == y[tr][0]):  # a one-class fold: predict that class
                    errors += int(np.sum(y[te] != y[tr][0]))
                    continue
                errors += int(np.sum(fit(X[tr], y[tr], sigma, p).predict(X[te]) != y[te]))
            if best is None or errors < best[2]:
                best = (float(sigma), float(p), errors)
    return best[0], best[1], best[2] / len(y)


def _fit_or_constant(method, X, y, sigma, p):
    if np.all(y == y[0]):  # one class in the sample (possible for the 80/20 mixture): predict it
        return _Model(X, np.zeros(len(y)), y[0], sigma, 0)
    return (fit_svm if method == "svm" else fit_rls)(X, y, sigma, p)


@dataclass(frozen=True)
class RLSvsSVMResult:
    """Per problem: the first repetition's data, models' mesh predictions and the error rates of all
    repetitions."""

    seed: int
    n_repeats: int
    train: dict = field(default_factory=dict)      # problem -> (X, y) of repetition 0
    grid: np.ndarray | None = None                 # mesh side (for drawing)
    predictions: dict = field(default_factory=dict)  # (problem, "Bayes"|"RLS"|"SVM") -> labels on the mesh
    params: dict = field(default_factory=dict)     # (problem, "RLS"|"SVM") -> list of (sigma, p) per repetition
    errors: dict = field(default_factory=dict)     # (problem, "Bayes"|"RLS"|"SVM") -> array of test errors
    n_sv: dict = field(default_factory=dict)       # (problem, "RLS"|"SVM") -> array of #nonzero coefficients

    def report(self) -> str:
        rows = []
        for pb in PROBLEMS:
            row = [pb, f"{BAYES_ERROR[pb]:.3f}"]
            for m in ("RLS", "SVM"):
                e = self.errors[(pb, m)]
                row.append(f"{e.mean():.4f} +- {e.std(ddof=1) if len(e) > 1 else 0.0:.4f}")
                row.append(f"{TABLE2[pb][m][0]:.4f} +- {TABLE2[pb][m][1]:.4f}")
            row.append(f"{self.n_sv[(pb, 'RLS')].mean():.1f}")
            row.append(f"{self.n_sv[(pb, 'SVM')].mean():.1f}")
            rows.append(row)
        params = []
        for pb in PROBLEMS:
            for m, pname in (("RLS", "gamma"), ("SVM", "C")):
                sig, p = self.params[(pb, m)][0]
                params.append([pb, m, f"{sig:g}", f"{pname} = {p:g}"])
        return "\n".join([
            f"rls-vs-svm (001 Figs. 1-4, Table 2): seed={self.seed}, {self.n_repeats} repetition(s), "
            f"{N_TRAIN} training points, {MESH_SIDE}x{MESH_SIDE} = {MESH_SIDE ** 2} test points",
            "",
            "test error rate, mean +- std over repetitions (ours) next to 001 Table 2 (paper):",
            format_table(["problem", "Bayes", "RLS ours", "RLS paper", "SVM ours", "SVM paper", "RLS #c!=0",
                          "SVM #SV"], rows),
            "(001 prints 0.0363 / 0.1703 for 'mix', below its Bayes error 0.2: see TABLE2's note)",
            "",
            "hyperparameters chosen by 10-fold CV in repetition 0 (Gaussian kernel width sigma):",
            format_table(["problem", "model", "sigma", "parameter"], params),
        ])


def compute(seed: int = DEFAULT_SEED, *, n_repeats: int | None = None, fast: bool = False) -> RLSvsSVMResult:
    """Generate the three problems ``n_repeats`` times (default 10, as 001; 1 with ``fast``), select
    hyperparameters by 10-fold CV, train RLS and the SVM, and measure the test error on the mesh.
    ``fast`` also shrinks the CV grids to three values each."""
    if n_repeats is None:
        n_repeats = 1 if fast else 10
    if isinstance(n_repeats, bool) or int(n_repeats) != n_repeats or n_repeats < 1:
        raise ValueError(f"n_repeats must be an integer >= 1; got {n_repeats!r}")
    sigmas = (0.1, 0.2, 0.4) if fast else SIGMAS
    grids = {"svm": (1.0, 10.0, 100.0) if fast else CS, "rls": (1e-4, 1e-2, 1.0) if fast else GAMMAS}
    rng = np.random.default_rng(seed)
    train, preds, params, errors, n_sv = {}, {}, {}, {}, {}
    g = np.linspace(0.0, 1.0, MESH_SIDE)
    xx, yy = np.meshgrid(g, g)
    M = np.column_stack([xx.ravel(), yy.ravel()])
    for pb in PROBLEMS:
        errs = {"Bayes": [], "RLS": [], "SVM": []}
        nsv = {"RLS": [], "SVM": []}
        prm = {"RLS": [], "SVM": []}
        for r in range(int(n_repeats)):
            X, y = sample(pb, N_TRAIN, rng)
            Xt, yt = test_set(pb, rng)
            errs["Bayes"].append(float(np.mean(bayes_predict(pb, Xt) != yt)))
            for m, key in (("RLS", "rls"), ("SVM", "svm")):
                sigma, p, _ = cv_select(key, X, y, rng, sigmas=sigmas, second=grids[key])
                model = _fit_or_constant(key, X, y, sigma, p)
                errs[m].append(float(np.mean(model.predict(Xt) != yt)))
                nsv[m].append(model.n_sv)
                prm[m].append((sigma, p))
                if r == 0:
                    preds[(pb, m)] = model.predict(M).reshape(xx.shape)
            if r == 0:
                train[pb] = (X, y)
                preds[(pb, "Bayes")] = bayes_predict(pb, M).reshape(xx.shape)
        for m in errs:
            errors[(pb, m)] = np.array(errs[m])
        for m in nsv:
            n_sv[(pb, m)] = np.array(nsv[m])
            params[(pb, m)] = prm[m]
    return RLSvsSVMResult(int(seed), int(n_repeats), train, g, preds, params, errors, n_sv)


#: area number -> (x, y) of its label in the drawings (see the module docstring for the layout)
_AREA_LABELS = {
    "square": {1: (0.25, 0.75), 2: (0.75, 0.75), 3: (0.25, 0.25), 4: (0.75, 0.25)},
    "overlap": {1: (0.25, 0.8), 2: (0.75, 0.8), 5: (0.25, 0.5), 6: (0.75, 0.5), 3: (0.25, 0.2), 4: (0.75, 0.2)},
}


def _draw_areas(ax, problem: str) -> None:
    """The area boundaries and numbers of 001 Fig. 1 (dashed), on the Bayes panel."""
    if problem == "mixture":
        ax.text(0.5, 0.04, "P(y = +1) = 0.8 everywhere", ha="center", va="bottom", fontsize=9,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
        return
    ax.axvline(0.5, color="0.3", ls="--", lw=0.8)
    cuts = (0.5,) if problem == "square" else (0.4, 0.6)
    for c in cuts:
        ax.axhline(c, color="0.3", ls="--", lw=0.8)
    for k, (u, v) in _AREA_LABELS[problem].items():
        ax.text(u, v, str(k), ha="center", va="center", fontsize=14, color="0.25", alpha=0.8)


def plot(result: RLSvsSVMResult):
    """3 x 3 panels (001 Figs. 2-4): rows square / mixture / overlap, columns Bayes / RLS / SVM
    predictions on the 51 x 51 mesh, with the first repetition's 40 training points."""
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["#f4c7c3", "#c6dbef"])  # -1 light red, +1 light blue
    fig, axes = new_figure(3, 3, width=11.0, height=11.0)
    g = result.grid
    for r, pb in enumerate(PROBLEMS):
        X, y = result.train[pb]
        for c, m in enumerate(("Bayes", "RLS", "SVM")):
            ax = axes[r, c]
            ax.pcolormesh(g, g, result.predictions[(pb, m)], cmap=cmap, vmin=-1, vmax=1, shading="nearest")
            ax.scatter(X[y > 0, 0], X[y > 0, 1], marker="o", facecolors="none", edgecolors="tab:blue", s=30)
            ax.scatter(X[y < 0, 0], X[y < 0, 1], marker="x", color="tab:red", s=30)
            if m == "Bayes":
                _draw_areas(ax, pb)
            e = result.errors[(pb, m)][0]
            ax.set_title(f"{PROBLEM_TITLES[pb]}: {m}\ntest error {e:.3f}", fontsize=10)
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_aspect("equal")
    fig.suptitle("Predictions on the mesh (blue: +1, red: -1); 001 Figs. 2-4", fontsize=11)
    return fig


def figure(seed: int = DEFAULT_SEED, *, fast: bool = False, **params):
    """``plot(compute(seed, fast=fast, **params))``."""
    return plot(compute(seed, fast=fast, **params))
