"""Selectivity of the support features machine on the two-hypercubes data (003, Figs. 2, 3, 5).

003 §3.1-3.2: ``n = 50`` features, 25 + 25 training patterns drawn uniformly inside two hypercubes
that touch along a face whose normal is ``(5, 4, 3, 2, 1, 0, ..., 0)``, so 5 features carry the
class; generalisation is measured on a test sample of ``N = 100000`` patterns drawn the same way and
by the leave-one-out (LOO) error. The thesis plots

* Fig. 2: the test error against the selectivity ``mu`` (on the axis ``artanh(mu)``, "for scaling");
  at its minimum 4 of the 5 true features are selected and the error is 17 % below the SVM's
  (``mu = 0``);
* Fig. 3: the LOO error against ``mu``; at its minimum 13 features are selected, the 5 true ones
  among them, and the error is 12 % below the SVM's;
* Fig. 5: the number of selected features against ``mu`` (for the Lung Cancer data in 003; drawn here
  for the two hypercubes, and for Lung Cancer by the figure ``support-features-lung-cancer``): as
  ``mu -> 1`` all features are dropped.

The model is the primal 003 eq. (5), ``min sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j delta_j``
s.t. ``y_j (a'x_j + b) >= 1 - delta_j``, ``delta_j >= 0``, trained with the generalised SMO of
003 §2.6 (:func:`svmref.solvers.support_features.selectivity_path`, warm-started along the ``mu`` grid; its
``loo=True`` computes the LOO errors). A feature is selected when ``a_i != 0`` (003 eq. (8): soft
thresholding makes the others exactly zero). The data come from
:func:`svmref.datasets.two_hypercubes` (its docstring gives the exact construction).

The thesis does not give ``C``. Here ``C`` is chosen the way one would tune a plain SVM: the value in
:data:`CS` with the smallest LOO error at ``mu = 0`` (ties: the smaller ``C``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import format_table, new_figure

__all__ = ["DEFAULT_SEED", "CS", "selectivity_axis", "SelectivityResult", "compute", "plot", "figure"]

DEFAULT_SEED = 0
N_FEATURES = 50
N_TRAIN_PER_CLASS = 25
N_INFORMATIVE = 5
N_TEST = 100_000  # 003 §3.1
#: grid of C for the LOO choice at mu = 0
CS = (0.01, 0.1, 1.0, 10.0, 100.0)
#: the mu grid: equally spaced in artanh(mu) from 0 to ARTANH_MAX (mu up to tanh(3) = 0.995)
ARTANH_MAX = 3.0
N_MUS = 25
#: 003 §3.2, as printed: features at the test-error minimum (4 of 5 true), at the LOO minimum
#: (13 with all 5 true), and the relative reductions against the SVM (17 %, 12 %).
THESIS = {"test_min_selected": 4, "test_min_true": 4, "test_reduction": 0.17,
          "loo_min_selected": 13, "loo_min_true": 5, "loo_reduction": 0.12}


def selectivity_axis(mus) -> np.ndarray:
    """The thesis' horizontal axis, ``artanh(mu)`` (003 §3.2, "arcth(mu)")."""
    return np.arctanh(np.asarray(mus, dtype=float))


@dataclass(frozen=True)
class SelectivityResult:
    """The curves drawn, per ``mu``: test error, LOO error, #selected and #selected true features."""

    seed: int
    C: float
    C_loo: dict            # C -> LOO error at mu = 0
    mus: np.ndarray
    test_error: np.ndarray
    loo_error: np.ndarray
    n_selected: np.ndarray
    n_true_selected: np.ndarray
    n_test: int

    def _at_min(self, err):
        k = int(np.argmin(err))  # the first (smallest mu) minimum
        return k, float(err[k]), float(err[0])

    def report(self) -> str:
        rows = [[f"{m:.4f}", f"{a:.3f}", f"{t:.4f}", f"{v:.3f}", int(s), int(ts)]
                for m, a, t, v, s, ts in zip(self.mus, selectivity_axis(self.mus), self.test_error,
                                             self.loo_error, self.n_selected, self.n_true_selected)]
        kt, et, e0 = self._at_min(self.test_error)
        kl, el, l0 = self._at_min(self.loo_error)
        def row(what, k, err, base, thesis):
            sel = f"{int(self.n_selected[k])} ({int(self.n_true_selected[k])} true)"
            red = f"{(1 - err / base) if base > 0 else 0:.0%}"
            return [what, f"{self.mus[k]:.4f}", f"{err:.4f} vs SVM {base:.4f}", red, sel, thesis]

        summary = [
            row("test-error minimum", kt, et, e0, f"4 (4 true), {THESIS['test_reduction']:.0%}"),
            row("LOO-error minimum", kl, el, l0, f"13 (5 true), {THESIS['loo_reduction']:.0%}"),
        ]
        return "\n".join([
            f"support-features-selectivity (003 Figs. 2, 3, 5): seed={self.seed}, n={N_FEATURES} features "
            f"({N_INFORMATIVE} informative), {2 * N_TRAIN_PER_CLASS} training patterns, {self.n_test} test patterns",
            "C chosen by the LOO error of the plain SVM (mu = 0): "
            + ", ".join(f"C={c:g}: {e:.3f}" for c, e in self.C_loo.items()) + f" -> C = {self.C:g}",
            "",
            format_table(["mu", "artanh(mu)", "test error", "LOO error", "#selected", "#true selected"], rows),
            "",
            format_table(["", "mu", "error", "reduction", "#selected", "thesis (#selected, reduction)"], summary),
        ])


def compute(seed: int = DEFAULT_SEED, *, mus=None, C: float | None = None, n_test: int = N_TEST,
            fast: bool = False) -> SelectivityResult:
    """Train along the ``mu`` grid with LOO and measure the test error on ``n_test`` fresh patterns.

    ``seed`` seeds the training sample; the test sample uses ``seed + 1``. ``C=None`` chooses ``C``
    by LOO at ``mu = 0`` over :data:`CS`. ``fast`` uses 7 values of ``mu`` and 20000 test patterns.
    """
    from svmref.datasets import two_hypercubes
    from svmref.solvers.support_features import selectivity_path

    if mus is None:
        mus = np.tanh(np.linspace(0.0, ARTANH_MAX, 7 if fast else N_MUS))
    mus = np.asarray(mus, dtype=float)
    if fast:
        n_test = min(n_test, 20_000)
    if isinstance(n_test, bool) or int(n_test) != n_test or n_test < 2:
        raise ValueError(f"n_test must be an integer >= 2; got {n_test!r}")
    X, y = two_hypercubes(N_TRAIN_PER_CLASS, N_FEATURES, seed=seed)
    Xt, yt = two_hypercubes(int(n_test) // 2, N_FEATURES, seed=seed + 1)
    C_loo = {}
    if C is None:
        for c in CS:
            C_loo[float(c)] = float(selectivity_path(X, y, c, [0.0], loo=True).loo_error[0])
        C = min(C_loo, key=lambda c: (C_loo[c], c))
    path = selectivity_path(X, y, C, mus, loo=True)
    test_error = np.array([np.mean(m.predict(Xt) != yt) for m in path.models])
    n_true = np.array([int(np.sum(np.asarray(m.selected) < N_INFORMATIVE)) for m in path.models])
    return SelectivityResult(int(seed), float(C), C_loo, mus, test_error, np.asarray(path.loo_error, dtype=float),
                             np.asarray(path.n_selected), n_true, len(yt))


def plot(result: SelectivityResult):
    """Three panels against ``artanh(mu)``: test error (003 Fig. 2), LOO error (Fig. 3), #features (Fig. 5)."""
    t = selectivity_axis(result.mus)
    fig, axes = new_figure(1, 3, width=15.0, height=4.6)
    for ax, err, what, fig_no in ((axes[0, 0], result.test_error, f"test error ({result.n_test} patterns)", 2),
                                  (axes[0, 1], result.loo_error, "leave-one-out error", 3)):
        ax.plot(t, err, "o-", color="tab:blue", ms=4)
        k = int(np.argmin(err))
        ax.axhline(err[0], color="0.5", ls=":", lw=1.2, label=f"SVM (mu = 0): {err[0]:.3f}")
        ax.plot(t[k], err[k], "*", color="tab:red", ms=14,
                label=f"minimum {err[k]:.3f} at mu = {result.mus[k]:.3f}\n"
                      f"{int(result.n_selected[k])} features ({int(result.n_true_selected[k])} of 5 true)")
        ax.set_xlabel("artanh(mu)")
        ax.set_ylabel("error rate")
        ax.set_title(f"{what} vs selectivity (003 Fig. {fig_no})", fontsize=10)
        ax.legend(fontsize=8, loc="best")
    ax = axes[0, 2]
    ax.plot(t, result.n_selected, "o-", color="tab:green", ms=4, label="selected features")
    ax.plot(t, result.n_true_selected, "s--", color="tab:purple", ms=4, label="of which informative (of 5)")
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel("number of features")
    ax.set_title("selected features vs selectivity (cf. 003 Fig. 5)", fontsize=10)
    ax.legend(fontsize=8)
    fig.suptitle(f"Support features machine on two hypercubes (n = {N_FEATURES}, 25 + 25 patterns), "
                 f"C = {result.C:g}, seed {result.seed}", fontsize=11)
    return fig


def figure(seed: int = DEFAULT_SEED, *, fast: bool = False, **params):
    """``plot(compute(seed, fast=fast, **params))``."""
    return plot(compute(seed, fast=fast, **params))
