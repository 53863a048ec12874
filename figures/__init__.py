"""Regenerate the papers' figures: one module per figure, one command per figure.

Every figure module exposes the same three functions, with no hidden state (randomness comes
only from the ``seed`` argument; matplotlib is used through :class:`matplotlib.figure.Figure`,
never through pyplot's global figure registry):

* ``compute(seed=..., fast=False, **params) -> result``  -- train the models and return the
  numbers that are drawn (a dataclass with a ``report() -> str`` method, what ``--print`` shows);
* ``plot(result) -> matplotlib.figure.Figure``           -- draw those numbers;
* ``figure(seed=..., fast=False, **params) -> Figure``    -- ``plot(compute(...))``.

``fast=True`` selects a smaller parameter set (fewer repetitions, a coarser grid) for tests.

The command line is ``svmref figure NAME [--out PATH] [--seed S] [--format png|pdf|svg] [--print]``
and ``svmref figure --list`` (see :mod:`svmref.figures.cli`).
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["FIGURES", "names", "get"]

#: figure name -> (module, what it regenerates)
FIGURES: dict[str, tuple[str, str]] = {
    "outlier-robustness": (
        "svmref.figures.outlier_robustness",
        "000 Fig. 1: LS-SVM vs Least 1-Norm SVM contours, without and with two label-flipped outliers",
    ),
    "isls-sparse-models": (
        "svmref.figures.isls_sparse_models",
        "004 Fig. 1: ISLS-SVM models on Ripley's synth (classification) and mcycle (regression), SVs highlighted",
    ),
    "support-features-selectivity": (
        "svmref.figures.support_features_selectivity",
        "003 Figs. 2, 3 and an analogue of Fig. 5 (003's Fig. 5 is Lung Cancer): test error, LOO error and #features "
        "vs selectivity mu on two hypercubes; the median of 101 seeds drawn, the spread over them beside 003's numbers",
    ),
    "support-features-lung-cancer": (
        "svmref.figures.support_features_lung_cancer",
        "003 Figs. 4, 5: leave-one-out error and #features vs selectivity mu on UCI Lung Cancer (27 x 55)",
    ),
    "rls-vs-svm": (
        "svmref.figures.rls_vs_svm",
        "001 Figs. 1-4, Table 2: Bayes/RLS/SVM predictions (median draw) and paired test errors over 101 draws",
    ),
    "bayes-evidence": (
        "svmref.figures.bayes_evidence",
        "002 (Bayesian LS-SVM): level-2/3 evidence over (gamma, sigma) on Ripley vs the 10-fold CV error surface",
    ),
    "bayes-errorbar": (
        "svmref.figures.bayes_errorbar",
        "002 (Bayesian LS-SVM regression): posterior mean, latent and predictive error bars on the motorcycle data",
    ),
}


def names() -> list[str]:
    """The figure names accepted by :func:`get` and ``svmref figure``."""
    return list(FIGURES)


def get(name: str) -> ModuleType:
    """Import and return the module of figure ``name`` (imported lazily: each pulls in its solvers)."""
    if name not in FIGURES:
        raise ValueError(f"name must be one of {names()}; got {name!r}")
    return importlib.import_module(FIGURES[name][0])
