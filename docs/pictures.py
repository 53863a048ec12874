"""Draw the teaching pictures of docs/pictures.md into docs/img/: ``python docs/pictures.py``.

* ``margin.png``: an L1-SVM (003 (2)-(3)) on two 2-D clouds: the hyperplane f = 0, the margins f = +-1,
  the patterns coloured by their KKT case (l1_svm.md §5: alpha = 0, free, alpha = C).
* ``kkt-regions.png``: alpha_i against the margin y_i f(x_i) for the L1-SVM, the Least 1-Norm SVM (000 (6))
  and the LS-SVM (000 (7)), side by side: the curve each page derives, and the patterns of one data set
  solved by the project's SMO engine on top of it.
* ``soft-threshold.png``: the soft thresholding of the support features machine, a(w) of 003 (8), for
  three values of mu.
* ``worked-example.png``: the points of docs/worked_example.md on their line, one row per case solved there
  (§2-§4: the four points; §6: three points), with f = 0, f = +-1 and each alpha_i; where no alpha is free the
  whole interval of optimal b moves f = 0, and the band it sweeps is shaded.

Each figure is a function of (seed,) returning a matplotlib Figure (no pyplot state); ``main`` saves them.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from svmref.kernels import linear_kernel
from svmref.solvers import smo

IMG = Path(__file__).resolve().parent / "img"
C = 1.0


def data(seed: int = 0, n: int = 40):
    """Two overlapping Gaussian clouds in 2-D, labels +-1."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) * 0.9 + 1.1 * y[:, None] * np.array([1.0, 0.6])
    return X, y


def solve(name: str, X, y):
    """alpha, b and the margins y_i f(x_i) of one of the box-dual classifiers, by the SMO engine."""
    K = linear_kernel(X)
    res = getattr(smo, name)(K, y, C, tol=1e-8)
    alpha, b = np.asarray(res.alpha), float(res.b)
    return alpha, b, y * (K @ (alpha * y) + b)


def margin_figure(seed: int = 0) -> Figure:
    X, y = data(seed)
    alpha, b, _ = solve("l1_svm", X, y)
    w = X.T @ (alpha * y)
    fig = Figure(figsize=(5.5, 5))
    ax = fig.add_subplot()
    lo, hi = X.min(0) - 0.5, X.max(0) + 0.5
    xs = np.linspace(lo[0], hi[0], 2)
    for level, style in [(0, "-"), (1, "--"), (-1, "--")]:
        ax.plot(xs, (level - b - w[0] * xs) / w[1], "k" + style, lw=1.2 if level == 0 else 0.8)
    eps = 1e-6 * C
    cases = [(alpha <= eps, "alpha = 0 (beyond the margin)", "o", "none"),
             ((alpha > eps) & (alpha < C - eps), "0 < alpha < C (on the margin)", "s", "C1"),
             (alpha >= C - eps, "alpha = C (inside, or misclassified)", "D", "C3")]
    for mask, label, marker, face in cases:
        for cls, edge in [(1.0, "C0"), (-1.0, "C2")]:
            m = mask & (y == cls)
            ax.scatter(X[m, 0], X[m, 1], marker=marker, facecolors=face if face != "none" else "none",
                       edgecolors=edge, s=45, label=label if cls == 1.0 else None)
    ax.set(xlim=(lo[0], hi[0]), ylim=(lo[1], hi[1]), xlabel="$x_1$", ylabel="$x_2$",
           title=f"L1-SVM, C = {C:g}: f = 0 (solid), f = ±1 (dashed)")
    ax.legend(loc="lower right", fontsize=7, title="edge: class +1 blue, -1 green", title_fontsize=7)
    return fig


def kkt_figure(seed: int = 0) -> Figure:
    X, y = data(seed)
    m = np.linspace(-1.5, 3.0, 400)
    curves = {  # alpha as a function of the margin y f(x), as each page derives it
        "l1_svm": ("L1-SVM: box [0, C], 003 (2)-(3)", [(m[m < 1], C + 0 * m[m < 1]), ([1, 1], [0, C]),
                                                        (m[m > 1], 0 * m[m > 1])]),
        "least_1norm_svm": ("Least 1-Norm SVM: box [-C, C], 000 (6)", [(m[m < 1], C + 0 * m[m < 1]), ([1, 1], [-C, C]),
                                                                       (m[m > 1], -C + 0 * m[m > 1])]),
        "ls_svm": ("LS-SVM: alpha = C (1 - y f), 000 (7)", [(m, C * (1 - m))]),
    }
    fig = Figure(figsize=(12, 3.8))
    for k, (name, (title, pieces)) in enumerate(curves.items()):
        ax = fig.add_subplot(1, 3, k + 1)
        for xs, ys in pieces:
            ax.plot(xs, ys, "k-", lw=1.5)
        alpha, _, margin = solve(name, X, y)
        ax.scatter(margin, alpha, s=18, c="C3", zorder=3, label="patterns (SMO)")
        ax.axvline(1, color="0.7", lw=0.8, ls=":")
        ax.axhline(0, color="0.7", lw=0.8, ls=":")
        ax.set(title=title, xlabel="margin $y_i f(x_i)$", ylabel=r"$\alpha_i$" if k == 0 else None,
               xlim=(m[0], m[-1]), ylim=(-1.6 * C, 2.5 * C))
        ax.title.set_fontsize(9)
        ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def soft_threshold_figure(seed: int = 0) -> Figure:
    w = np.linspace(-2, 2, 801)
    fig = Figure(figsize=(5.5, 4))
    ax = fig.add_subplot()
    for mu in (0.0, 0.3, 0.6):
        a = np.sign(w) * np.maximum(0.0, np.abs(w) - mu) / (2 * (1 - mu))  # 003 (8)
        ax.plot(w, a, label=f"mu = {mu:g}")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set(xlabel="$w_i$", ylabel=r"$\hat a_i$", title=r"003 (8): $\hat a_i = 0$ for $|w_i| \leq \mu$ (feature dropped)")
    ax.legend()
    return fig


#: the cases of docs/worked_example.md: (section, solver, C, x, y)
WORKED = [("§2", "l1_svm", 1.0, [-2.0, -1.0, 1.0, 2.0], [-1.0, -1.0, 1.0, 1.0]),
          ("§3", "least_1norm_svm", 1.0, [-2.0, -1.0, 1.0, 2.0], [-1.0, -1.0, 1.0, 1.0]),
          ("§4", "l1_svm", 0.25, [-2.0, -1.0, 1.0, 2.0], [-1.0, -1.0, 1.0, 1.0]),
          ("§6", "l1_svm", 0.25, [-1.0, 1.0, 2.0], [-1.0, 1.0, 1.0])]


def b_interval(alpha, y, wx, C, lower):
    """The interval of optimal b when no alpha is free (duality.md §5): alpha_i at its lower bound needs
    y_i (w x_i + b) >= 1, at C needs <= 1; ``lower`` is the box's lower bound (0, or -C for 000 (6))."""
    eps = 1e-9 * C
    lo, hi = -np.inf, np.inf
    for a, yi, f in zip(alpha, y, wx):
        at_lo = a <= lower + eps
        if (yi > 0) == at_lo:      # y_i b >= 1 - y_i w x_i at the lower bound, <= at C
            lo = max(lo, yi - f)
        else:
            hi = min(hi, yi - f)
    return lo, hi


def worked_example_figure(seed: int = 0) -> Figure:
    fig = Figure(figsize=(7, 7.2))
    for k, (sec, name, C_, x, y) in enumerate(WORKED):
        x, y = np.array(x), np.array(y)
        res = getattr(smo, name)(np.outer(x, x), y, C_, tol=1e-12)
        alpha, b = np.asarray(res.alpha), float(res.b)
        w = float(alpha @ (y * x))
        ax = fig.add_subplot(len(WORKED), 1, k + 1)
        lower = -C_ if name == "least_1norm_svm" else 0.0
        free = (alpha > lower + 1e-9 * C_) & (alpha < C_ * (1 - 1e-9))
        label = f"b = {Fraction(b).limit_denominator(64)}"
        if not np.any(free):
            lo, hi = b_interval(alpha, y, w * x, C_, lower)
            ax.axvspan(-hi / w, -lo / w, color="C1", alpha=0.25, lw=0)  # where f = 0 lies for b in [lo, hi]
            label = f"b in [{Fraction(lo).limit_denominator(64)}, {Fraction(hi).limit_denominator(64)}], drawn at {label[4:]}"
        for level, style in [(0, "-"), (1, "--"), (-1, "--")]:
            ax.axvline((level - b) / w, color="k", ls=style, lw=1.2 if level == 0 else 0.8)
        for cls, marker, colour in [(1.0, "o", "C0"), (-1.0, "s", "C2")]:
            m = y == cls
            ax.scatter(x[m], 0 * x[m], marker=marker, s=60, color=colour, zorder=3,
                       label=f"y = {cls:+.0f}" if k == 0 else None)
        for xi, a in zip(x, alpha):
            ax.annotate(f"α = {Fraction(float(a)).limit_denominator(64)}", (xi, 0), (0, 12),
                        textcoords="offset points", ha="center", fontsize=8,
                        bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
        title = {"l1_svm": "L1-SVM", "least_1norm_svm": "Least 1-Norm SVM"}[name]
        ax.set_title(f"{sec}: {title}, C = {Fraction(C_)}: w = {Fraction(w).limit_denominator(64)}, {label}",
                     fontsize=9)
        ax.set(xlim=(-3, 3), ylim=(-0.6, 1.0), yticks=[])
        ax.spines[["left", "right", "top"]].set_visible(False)
    ax.set_xlabel("x   (solid: f = 0; dashed: f = ±1; shaded: f = 0 over the interval of optimal b)")
    fig.axes[0].legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    return fig


FIGURES = {"margin": margin_figure, "kkt-regions": kkt_figure, "soft-threshold": soft_threshold_figure,
           "worked-example": worked_example_figure}


def main(argv=None) -> int:
    IMG.mkdir(exist_ok=True)
    for name, make in FIGURES.items():
        make().savefig(IMG / f"{name}.png", dpi=110, bbox_inches="tight")
        print(f"wrote {IMG / name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
