"""Selectivity of the support features machine on the two-hypercubes data (003 Figs. 2, 3; Fig. 5's analogue).

003 §3.1-3.2: ``n = 50`` features, 25 + 25 training patterns drawn uniformly inside two hypercubes
that touch along a face whose normal is ``(5, 4, 3, 2, 1, 0, ..., 0)``, so 5 features carry the
class; generalisation is measured on a test sample of ``N = 100000`` patterns drawn the same way and
by the leave-one-out (LOO) error. The thesis plots, for one sample,

* Fig. 2: the test error against the selectivity ``mu`` (on the axis ``artanh(mu)``, "for scaling");
  at its minimum 4 of the 5 true features are selected and the error is 17 % below the SVM's
  (``mu = 0``);
* Fig. 3: the LOO error against ``mu``; at its minimum 13 features are selected, the 5 true ones
  among them, and the error is 12 % below the SVM's.

003's Fig. 5 (the number of selected features against ``mu``) is drawn for the **Lung Cancer** data, not
for the hypercubes (that is the figure ``support-features-lung-cancer``). The third panel here is the
same quantity on the hypercubes: an analogue of Fig. 5, not a reproduction of it.

**Spread over seeds.** One 50-pattern sample decides the details (the feature counts at the minima,
the size of the reduction), so the figure trains on :data:`N_SEEDS` samples (seeds ``S, S + 1, ...``;
:data:`N_SEEDS_FAST` with ``fast``) and shows, per seed, the test-error reduction at the test minimum
(``1 - min test error / SVM test error``), the number of features at the test minimum and at the LOO
minimum (the first minimum, smallest ``mu``, as the thesis reads its curves; the report also gives the
range of the feature count over the LOO plateau), next to the thesis' 17 %, 4 and 13. The curves drawn
in the first row are those of the **median seed by test-error reduction** (:func:`median_seed`: rank
``(N - 1) // 2`` of the seeds sorted by reduction, ties to the smaller seed), never the best or worst.

The model is the primal 003 eq. (5), ``min sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j delta_j``
s.t. ``y_j (a'x_j + b) >= 1 - delta_j``, ``delta_j >= 0``, trained with the generalised SMO of
003 §2.6 (:func:`svmref.solvers.support_features.selectivity_path`, warm-started along the ``mu`` grid; its
``loo=True`` computes the LOO errors). A feature is selected when ``a_i != 0`` (003 eq. (8): soft
thresholding makes the others exactly zero). The data come from
:func:`svmref.datasets.two_hypercubes` (its docstring gives the exact construction); seed ``s`` draws
the training sample, ``s + 1`` the test sample.

The thesis does not give ``C``. Here ``C`` is chosen per seed the way one would tune a plain SVM: the
value in :data:`CS` with the smallest LOO error at ``mu = 0`` (ties: the smaller ``C``).
:func:`to_json` gives the per-seed numbers and their medians (``svmref figure ... --json FILE``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import format_table, new_figure
from ._draws import map_draws

__all__ = ["DEFAULT_SEED", "CS", "N_SEEDS", "N_SEEDS_FAST", "THESIS", "selectivity_axis", "SeedRun", "SelectivityResult",
           "median_seed", "compute", "plot", "figure", "to_json"]

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
#: samples (seeds S, S + 1, ...) of the full figure and of ``fast`` (odd: the median seed is one seed)
N_SEEDS = 101
N_SEEDS_FAST = 5
#: 003 §3.2, as printed: features at the test-error minimum (4 of 5 true), at the LOO minimum
#: (13 with all 5 true), and the relative reductions against the SVM (17 %, 12 %).
THESIS = {"test_min_selected": 4, "test_min_true": 4, "test_reduction": 0.17,
          "loo_min_selected": 13, "loo_min_true": 5, "loo_reduction": 0.12}


def selectivity_axis(mus) -> np.ndarray:
    """The thesis' horizontal axis, ``artanh(mu)`` (003 §3.2, "arcth(mu)")."""
    return np.arctanh(np.asarray(mus, dtype=float))



def _reduction(err, k) -> float:
    """``1 - err[k] / err[0]``: the relative reduction against the SVM (``mu = 0``); 0 when the SVM's is 0."""
    return float(1.0 - err[k] / err[0]) if err[0] > 0 else 0.0


@dataclass(frozen=True)
class SeedRun:
    """One sample (seed): the curves per ``mu``: test error, LOO error, #selected and #selected true features."""

    seed: int
    C: float
    C_loo: dict            # C -> LOO error at mu = 0
    mus: np.ndarray
    test_error: np.ndarray
    loo_error: np.ndarray
    n_selected: np.ndarray
    n_true_selected: np.ndarray
    n_test: int

    @property
    def test_min(self) -> int:
        """Index of the first (smallest ``mu``) minimum of the test error."""
        return int(np.argmin(self.test_error))

    @property
    def loo_min(self) -> int:
        """Index of the first (smallest ``mu``) minimum of the LOO error."""
        return int(np.argmin(self.loo_error))

    @property
    def test_reduction(self) -> float:
        return _reduction(self.test_error, self.test_min)

    @property
    def loo_reduction(self) -> float:
        return _reduction(self.loo_error, self.loo_min)

    @property
    def loo_plateau_features(self) -> tuple[int, int]:
        """(min, max) #features over every ``mu`` where the LOO error is minimal (LOO moves in steps of 1/50)."""
        n = self.n_selected[self.loo_error == self.loo_error.min()]
        return int(n.min()), int(n.max())

    def summary(self) -> dict:
        """The per-seed numbers set beside the thesis' (JSON-able)."""
        kt, kl = self.test_min, self.loo_min
        return {"seed": self.seed, "C": self.C, "svm_test_error": float(self.test_error[0]),
                "test_min_error": float(self.test_error[kt]), "test_min_mu": float(self.mus[kt]),
                "test_reduction": self.test_reduction, "test_min_selected": int(self.n_selected[kt]),
                "test_min_true": int(self.n_true_selected[kt]), "svm_loo_error": float(self.loo_error[0]),
                "loo_min_error": float(self.loo_error[kl]), "loo_min_mu": float(self.mus[kl]),
                "loo_reduction": self.loo_reduction, "loo_min_selected": int(self.n_selected[kl]),
                "loo_min_true": int(self.n_true_selected[kl]),
                "loo_plateau_selected": list(self.loo_plateau_features),
                "largest_mu_selected": int(self.n_selected[-1])}


#: the per-seed quantities compared with the thesis, with how they are shown
SPREAD = (("test_reduction", "test-error reduction at the test minimum", "{:.0%}"),
          ("test_min_selected", "#features at the test minimum", "{:g}"),
          ("loo_min_selected", "#features at the LOO minimum", "{:g}"),
          ("loo_reduction", "LOO-error reduction at the LOO minimum", "{:.0%}"))
SPREAD_FORMAT = {key: fmt for key, _, fmt in SPREAD}


def median_seed(runs) -> int:
    """Position in ``runs`` of the median seed by test-error reduction: rank ``(N - 1) // 2`` of the runs
    sorted by (reduction, seed) (the median for odd ``N``, the lower median for even ``N``)."""
    order = sorted(range(len(runs)), key=lambda j: (runs[j].test_reduction, runs[j].seed))
    return order[(len(runs) - 1) // 2]


@dataclass(frozen=True)
class SelectivityResult:
    """Every seed's curves (``runs``) and the drawn one, ``runs[chosen]`` (:func:`median_seed`).

    The drawn run's fields (``seed``, ``C``, ``mus``, ``test_error``, ...) are readable on the result itself.
    """

    runs: tuple
    chosen: int

    def __getattr__(self, name):
        if name in SeedRun.__dataclass_fields__ or name in ("test_min", "loo_min", "test_reduction", "loo_reduction"):
            return getattr(self.runs[self.chosen], name)
        raise AttributeError(name)

    @property
    def drawn(self) -> SeedRun:
        return self.runs[self.chosen]

    def per_seed(self, key: str) -> list:
        """``run.summary()[key]`` for every seed, in seed order."""
        return [r.summary()[key] for r in self.runs]

    def medians(self) -> dict:
        """The median over seeds of each quantity of :data:`SPREAD` (one seed's value: ``N`` is odd)."""
        return {key: float(np.median(self.per_seed(key))) for key, _, _ in SPREAD}

    def spread_text(self, key: str) -> str:
        """``key`` of :data:`SPREAD` over the seeds: median, range and the thesis' value."""
        fmt, v = SPREAD_FORMAT[key], self.per_seed(key)
        return (f"median {fmt.format(self.medians()[key])}, range {fmt.format(min(v))}-{fmt.format(max(v))}; "
                f"003: {fmt.format(THESIS[key])}")

    def spread_lines(self) -> list[str]:
        """One line per quantity of :data:`SPREAD`: the median, the range over seeds, the thesis' value."""
        return [f"{what} over {len(self.runs)} seeds: {self.spread_text(key)}" for key, what, _ in SPREAD]

    def rule(self) -> str:
        s = [r.seed for r in self.runs]
        return (f"drawn: seed {self.seed}, the median test-error reduction ({self.test_reduction:.0%}) of the "
                f"{len(s)} seeds {s[0]}-{s[-1]} (rank (N - 1) // 2 by reduction, ties to the smaller seed)")

    def report(self) -> str:
        return _report(self)

    def to_json(self) -> dict:
        """The per-seed numbers, their medians, the thesis' values and the rule that chose the drawn seed."""
        return {"figure": "support-features-selectivity",
                "paper": "003 Figs. 2, 3 (the third panel: an analogue of Fig. 5, which 003 draws for Lung Cancer)",
                "n_features": N_FEATURES, "n_informative": N_INFORMATIVE, "n_train": 2 * N_TRAIN_PER_CLASS,
                "n_test": self.drawn.n_test, "mus": [float(m) for m in self.mus], "Cs": list(CS),
                "seeds": [r.seed for r in self.runs], "per_seed": [r.summary() for r in self.runs],
                "medians": self.medians(), "thesis": dict(THESIS),
                "drawn": {"seed": self.seed, "rule": "median seed by test-error reduction (rank (N - 1) // 2 of "
                          "the seeds sorted by (reduction, seed))"}}


def _report(r: SelectivityResult) -> str:
    d = r.drawn
    rows = [[f"{m:.4f}", f"{a:.3f}", f"{t:.4f}", f"{v:.3f}", int(s), int(ts)]
            for m, a, t, v, s, ts in zip(d.mus, selectivity_axis(d.mus), d.test_error, d.loo_error,
                                         d.n_selected, d.n_true_selected)]
    seeds = [[s["seed"], f"{s['C']:g}", f"{s['svm_test_error']:.4f}", f"{s['test_min_error']:.4f}",
              f"{s['test_reduction']:.0%}", f"{s['test_min_selected']} ({s['test_min_true']} true)",
              f"{s['svm_loo_error']:.2f} -> {s['loo_min_error']:.2f}", f"{s['loo_reduction']:.0%}",
              f"{s['loo_min_selected']} ({s['loo_min_true']} true)",
              "{}-{}".format(*s["loo_plateau_selected"])] for s in (x.summary() for x in r.runs)]
    return "\n".join([
        f"support-features-selectivity (003 Figs. 2, 3; third panel an analogue of Fig. 5, which is Lung Cancer "
        f"in 003): n={N_FEATURES} features ({N_INFORMATIVE} informative), {2 * N_TRAIN_PER_CLASS} training "
        f"patterns, {d.n_test} test patterns, {len(r.runs)} seeds",
        *r.spread_lines(),
        r.rule(),
        "",
        format_table(["seed", "C", "SVM test", "min test", "reduction", "#sel. at test min", "LOO SVM -> min",
                      "LOO red.", "#sel. at LOO min", "#sel. on LOO plateau"], seeds),
        "",
        f"the drawn seed {d.seed}: C chosen by the LOO error of the plain SVM (mu = 0): "
        + ", ".join(f"C={c:g}: {e:.3f}" for c, e in d.C_loo.items()) + f" -> C = {d.C:g}",
        format_table(["mu", "artanh(mu)", "test error", "LOO error", "#selected", "#true selected"], rows),
    ])


def _run(seed: int, mus, C, n_test: int) -> SeedRun:
    """Train one sample along the ``mu`` grid with LOO; test error on ``n_test`` fresh patterns (seed + 1)."""
    from svmref.datasets import two_hypercubes
    from svmref.solvers.support_features import selectivity_path

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
    return SeedRun(int(seed), float(C), C_loo, mus, test_error, np.asarray(path.loo_error, dtype=float),
                   np.asarray(path.n_selected), n_true, len(yt))


def work(fast: bool = False) -> str:
    """What :func:`compute` will do, in words (``svmref figure`` says it at the start)."""
    return f"{N_SEEDS_FAST if fast else N_SEEDS} seeds" + ("" if fast else f"; --fast runs {N_SEEDS_FAST}")


def compute(seed: int = DEFAULT_SEED, *, n_seeds: int | None = None, mus=None, C: float | None = None,
            n_test: int = N_TEST, fast: bool = False, jobs: int = 1, scheduler: str | None = None,
            progress: bool = False) -> SelectivityResult:
    """Every seed ``seed, ..., seed + n_seeds - 1``: train along the ``mu`` grid with LOO, measure the test error.

    ``n_seeds`` defaults to :data:`N_SEEDS` (``fast``: :data:`N_SEEDS_FAST`). ``C=None`` chooses ``C`` per seed
    by LOO at ``mu = 0`` over :data:`CS`. ``fast`` uses 7 values of ``mu`` and 20000 test patterns. The
    drawn seed is the median by test-error reduction (:func:`median_seed`). The seeds run on ``jobs`` workers (or
    the Dask cluster at ``scheduler``) with a progress bar where ``progress`` (:func:`svmref.figures._draws.map_draws`:
    the same numbers for any ``jobs``).
    """
    if isinstance(seed, bool) or int(seed) != seed:
        raise ValueError(f"seed must be an integer; got {seed!r}")
    if n_seeds is None:
        n_seeds = N_SEEDS_FAST if fast else N_SEEDS
    if isinstance(n_seeds, bool) or int(n_seeds) != n_seeds or n_seeds < 1:
        raise ValueError(f"n_seeds must be an integer >= 1; got {n_seeds!r}")
    if mus is None:
        mus = np.tanh(np.linspace(0.0, ARTANH_MAX, 7 if fast else N_MUS))
    mus = np.asarray(mus, dtype=float)
    if fast:
        n_test = min(n_test, 20_000)
    if isinstance(n_test, bool) or int(n_test) != n_test or n_test < 2:
        raise ValueError(f"n_test must be an integer >= 2; got {n_test!r}")
    runs = tuple(map_draws(__name__, "_run", [(int(seed) + i, mus, C, n_test) for i in range(int(n_seeds))],
                           jobs=jobs, scheduler=scheduler, progress=progress, desc="seeds"))
    return SelectivityResult(runs, median_seed(runs))


def _curves(axes, r: SelectivityResult):
    """First row: the drawn seed's test error (003 Fig. 2), LOO error (Fig. 3) and #features (Fig. 5's analogue)."""
    d = r.drawn
    t = selectivity_axis(d.mus)
    for ax, err, what, fig_no in ((axes[0], d.test_error, f"test error ({d.n_test} patterns)", 2),
                                  (axes[1], d.loo_error, "leave-one-out error", 3)):
        ax.plot(t, err, "o-", color="tab:blue", ms=4)
        k = int(np.argmin(err))
        ax.axhline(err[0], color="0.5", ls=":", lw=1.2, label=f"SVM (mu = 0): {err[0]:.3f}")
        ax.plot(t[k], err[k], "*", color="tab:red", ms=14,
                label=f"minimum {err[k]:.3f} at mu = {d.mus[k]:.3f} ({_reduction(err, k):.0%} below)\n"
                      f"{int(d.n_selected[k])} features ({int(d.n_true_selected[k])} of 5 true)")
        ax.set_xlabel("artanh(mu)")
        ax.set_ylabel("error rate")
        ax.set_title(f"{what}, seed {d.seed} (003 Fig. {fig_no})", fontsize=10)
        ax.legend(fontsize=8, loc="best")
    ax = axes[2]
    ax.plot(t, d.n_selected, "o-", color="tab:green", ms=4, label="selected features")
    ax.plot(t, d.n_true_selected, "s--", color="tab:purple", ms=4, label="of which informative (of 5)")
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel("number of features")
    ax.set_title(f"#features, seed {d.seed}: hypercube analogue of 003 Fig. 5\n(003's Fig. 5 is Lung Cancer)",
                 fontsize=10)
    ax.legend(fontsize=8)


def _spread(axes, r: SelectivityResult):
    """Second row: every seed's relative test error, and the per-seed numbers beside the thesis' values."""
    ax = axes[0]
    for run in r.runs:
        t, rel = selectivity_axis(run.mus), run.test_error / run.test_error[0]
        drawn = run is r.drawn
        ax.plot(t, rel, "-", color="tab:blue" if drawn else "0.6", lw=2.0 if drawn else 0.8, alpha=1.0 if drawn else 0.7,
                label=f"seed {run.seed} (drawn)" if drawn else None)
    ax.axhline(1 - THESIS["test_reduction"], color="tab:red", ls="--", lw=1.2, label="003: minimum 17 % below")
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel("test error / SVM's test error")
    ax.set_title(f"test error relative to the SVM, {len(r.runs)} seeds", fontsize=10)
    ax.legend(fontsize=8)
    med = r.medians()
    for ax, keys, unit in ((axes[1], ("test_reduction", "loo_reduction"), "reduction against the SVM"),
                           (axes[2], ("test_min_selected", "loo_min_selected"), "number of features")):
        for x, key in enumerate(keys):
            v = np.asarray(r.per_seed(key), dtype=float)
            scale = 100.0 if "reduction" in key else 1.0
            jitter = np.linspace(-0.12, 0.12, v.size) if v.size > 1 else np.zeros(1)
            ax.plot(x + jitter, scale * v, "o", color="0.4", ms=5, alpha=0.8,
                    label="one seed" if x == 0 else None)
            ax.plot([x - 0.25, x + 0.25], [scale * med[key]] * 2, "-", color="tab:blue", lw=2.5,
                    label="median over seeds" if x == 0 else None)
            ax.plot([x], [scale * THESIS[key]], "X", color="tab:red", ms=11, label="003" if x == 0 else None)
            ax.plot([x], [scale * r.drawn.summary()[key]], "*", color="tab:orange", ms=13,
                    label=f"drawn seed {r.seed}" if x == 0 else None)
        ax.set_xticks([0, 1], ["at the test minimum", "at the LOO minimum"])
        ax.set_xlim(-0.6, 1.6)
        ax.set_ylabel(unit + (" (%)" if "reduction" in unit else ""))
        ax.set_title("\n".join(f"{'test' if k.startswith('test') else 'LOO'}: {r.spread_text(k)}" for k in keys),
                     fontsize=8)
        ax.legend(fontsize=8)


def plot(result: SelectivityResult):
    """Two rows against ``artanh(mu)`` and over seeds: the drawn seed's test error (003 Fig. 2), LOO error
    (Fig. 3) and #features (an analogue of Fig. 5, which 003 draws for Lung Cancer); then the spread."""
    fig, axes = new_figure(2, 3, width=15.0, height=9.4)
    _curves(axes[0], result)
    _spread(axes[1], result)
    fig.suptitle(f"Support features machine on two hypercubes (n = {N_FEATURES}, 25 + 25 patterns, C by LOO at "
                 f"mu = 0 per seed)\n{result.rule()}", fontsize=10)
    return fig


def figure(seed: int = DEFAULT_SEED, *, fast: bool = False, **params):
    """``plot(compute(seed, fast=fast, **params))``."""
    return plot(compute(seed, fast=fast, **params))


def to_json(result: SelectivityResult) -> dict:
    """``result.to_json()``: what ``svmref figure support-features-selectivity --json FILE`` writes."""
    return result.to_json()
