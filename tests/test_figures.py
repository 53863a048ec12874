"""Tests of the figure modules and of ``svmref figure``.

Every figure command runs headless (Agg) and writes a non-empty image; the derived facts behind the
figures are checked (the outlier-robustness figure's in tests/test_outlier_robustness.py).
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from svmref import figures  # noqa: E402
from svmref.figures import cli  # noqa: E402

# ---- tolerances and thresholds, all in one place -------------------------------------------------
TOL = {
    # the Bayes classifier's error on the 2601-point test mesh vs the Bayes error: 5 binomial
    # standard deviations, sqrt(p(1-p)/2601) <= 0.0098 for p <= 0.5:
    "bayes_error_abs": 5 * 0.0098,
    # first bytes of each output format
    "magic": {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"},
}

FAST_ARGS = ["--fast"]


def _need(module: str, attr: str | None = None):
    """Import a solver this figure trains with; a missing module or attribute is a failure, not a skip."""
    import importlib

    mod = importlib.import_module(module)
    assert attr is None or hasattr(mod, attr), f"{module}.{attr} is missing"


SOLVERS_OF = {
    "outlier-robustness": [("svmref.solvers.linear", "ls_svm"), ("svmref.solvers.smo", "least_1norm_svm"),
                           ("svmref.formulations", "solve")],
    "isls-sparse-models": [("svmref.solvers.isls", "isls_svm")],
    "support-features-selectivity": [("svmref.solvers.support_features", "selectivity_path"),
                                     ("svmref.solvers.support_features", "two_hypercubes")],
    "rls-vs-svm": [("svmref.solvers.linear", "rls"), ("svmref.solvers.smo", "l1_svm")],
    "support-features-lung-cancer": [("svmref.solvers.support_features", "support_features")],
    "bayes-evidence": [("svmref.solvers.bayes", "BayesianLSSVC"), ("svmref.solvers.bayes", "evidence_surface")],
    "bayes-errorbar": [("svmref.solvers.bayes", "BayesianLSSVR")],
}


# ---- the command line ----------------------------------------------------------------------------
def test_list_names_every_figure(capsys):
    assert cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    for name in figures.names():
        assert name in out


@pytest.mark.parametrize("argv", [[], ["no-such-figure"], ["outlier-robustness", "--format", "nope"]])
def test_usage_errors_exit_2(argv, capsys):
    assert cli.main(argv) == 2


#: Figure commands whose test runs with ``-m slow`` (the paper reproductions step): the Lung Cancer figure takes 12 s
#: even with ``--fast`` (its numbers are checked in the default run by tests/test_lung_cancer.py); the selectivity,
#: rls-vs-svm and evidence figures 2-4 s each. The command's path (options, bar, PNG) stays in the default run through
#: the other figures, outlier-robustness among them, which has draws.
SLOW_COMMANDS = {"support-features-lung-cancer", "support-features-selectivity", "rls-vs-svm", "bayes-evidence"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_COMMANDS else n
                                  for n in figures.FIGURES])
def test_every_figure_command_writes_a_png(name, tmp_path, capsys):
    for module, attr in SOLVERS_OF[name]:
        _need(module, attr)
    out = tmp_path / f"{name}.png"
    assert cli.main([name, "--out", str(out), "--print", "--jobs", "1", "--progress", *FAST_ARGS]) == 0
    assert out.stat().st_size > 1000
    assert out.read_bytes()[:4] == TOL["magic"]["png"]
    captured = capsys.readouterr()
    assert name in captured.out and f"wrote {out}" in captured.out
    module = figures.get(name)
    if hasattr(module, "work"):  # a figure with draws says what it will do, then counts them on its bar
        assert f"svmref figure {name}: {module.work(True)}" in captured.err
        total = int(module.work(True).split()[0]) * (3 if name == "rls-vs-svm" else 1)
        assert f"{total}/{total}" in captured.err, captured.err


@pytest.mark.parametrize("out,fmt,expected", [
    (None, None, "NAME.png"), ("a/b.svg", None, "a/b.svg"), ("a/b", "pdf", "a/b.pdf"),
    ("a/b.jpg", None, "a/b.jpg"), ("a/", None, "a/NAME.png"),
])
def test_output_path_and_format(out, fmt, expected):
    """--out honours its suffix (refusals are tested in tests/test_cli.py)."""
    from pathlib import Path

    path, f = cli.resolve_out("NAME", out, fmt)
    assert path == Path(expected) and f == Path(expected).suffix[1:]


def test_get_rejects_unknown_name():
    with pytest.raises(ValueError, match="name"):
        figures.get("nope")


# The outlier-robustness figure (000 Fig. 1) has its own file: tests/test_outlier_robustness.py.


# ---- rls-vs-svm (001 §4) -------------------------------------------------------------------------
@pytest.mark.parametrize("problem", ["square", "mixture", "overlap"])
def test_bayes_classifier_error_on_the_test_mesh(problem):
    from svmref.figures import rls_vs_svm as R

    X, y = R.test_set(problem, np.random.default_rng(1))
    assert X.shape == (2601, 2)
    err = np.mean(R.bayes_predict(problem, X) != y)
    # the mesh is not uniform sampling, so compare with the Bayes risk *of the mesh*
    p = R.conditional_p(problem, X)
    mesh_risk = np.mean(np.minimum(p, 1 - p))
    assert abs(mesh_risk - R.BAYES_ERROR[problem]) < 0.02  # the mesh approximates the square's areas
    assert abs(err - mesh_risk) < TOL["bayes_error_abs"]


@pytest.mark.parametrize("problem,point,p", [
    ("square", (0.25, 0.75), 0.0), ("square", (0.75, 0.75), 1.0), ("square", (0.25, 0.25), 1.0),
    ("square", (0.75, 0.25), 0.0), ("mixture", (0.1, 0.9), 0.8), ("overlap", (0.25, 0.5), 0.7),
    ("overlap", (0.75, 0.5), 0.7), ("overlap", (0.25, 0.8), 0.0), ("overlap", (0.75, 0.2), 0.0),
])
def test_area_labels_as_001(problem, point, p):
    """001 §4: areas 1 and 4 are class -1, areas 2 and 3 class +1; 70% class +1 in areas 5, 6."""
    from svmref.figures import rls_vs_svm as R

    assert R.conditional_p(problem, np.array([point]))[0] == p


# ---- support-features-selectivity (003) ----------------------------------------------------------
def test_selectivity_axis_is_artanh():
    from svmref.figures import support_features_selectivity as S

    mus = np.array([0.0, 0.5, 0.9])
    assert np.allclose(np.tanh(S.selectivity_axis(mus)), mus)


@pytest.fixture(scope="module")
def selectivity_fast():
    for module, attr in SOLVERS_OF["support-features-selectivity"]:
        _need(module, attr)
    from svmref.figures import support_features_selectivity as S

    return S.compute(fast=True)


@pytest.mark.slow  # 003 Figs. 2-3 reproduced (the fixture's fast run: 3 s)
def test_svm_end_of_the_path_keeps_every_feature(selectivity_fast):
    """003 eq. (8) at mu = 0: a_i = w_i / 2, zero only if w_i = 0 exactly, so all 50 are selected (every seed)."""
    for run in selectivity_fast.runs:
        assert run.mus[0] == 0.0
        assert run.n_selected[0] == 50


@pytest.mark.slow  # 003 Figs. 2-3 reproduced
def test_selectivity_drops_features_towards_one(selectivity_fast):
    """As mu -> 1 the machine drops (almost) all features (on the hypercubes: the analogue of 003 Fig. 5)."""
    for run in selectivity_fast.runs:
        assert run.n_selected[-1] < run.n_selected[0]
        assert run.n_selected[-1] <= 5
        assert np.all(run.n_true_selected <= np.minimum(run.n_selected, 5))


def _fake_run(S, seed, test_error):
    """A SeedRun with a given test-error curve (the rest constant): for testing the selection rule."""
    e = np.asarray(test_error, dtype=float)
    return S.SeedRun(seed, 0.1, {}, np.linspace(0, 0.9, e.size), e, np.full(e.size, 0.1), np.full(e.size, 50, int),
                     np.full(e.size, 5, int), 100)


@pytest.mark.parametrize("reductions, expected_seed", [
    ([0.5, 0.1, 0.9, 0.3, 0.7], 10),       # seeds 10..14; sorted: 0.1 (11), 0.3 (13), 0.5 (10), 0.7, 0.9
    ([0.9, 0.8, 0.1, 0.2], 13),            # even: the lower median, 0.2 (seed 13)
    ([0.4, 0.4, 0.9], 11),                 # a tie at the median rank: the smaller seed first (10, 11, 12)
])
def test_drawn_seed_is_the_median_by_test_error_reduction(reductions, expected_seed):
    from svmref.figures import support_features_selectivity as S

    runs = tuple(_fake_run(S, 10 + i, [1.0, 1.0 - r, 1.0]) for i, r in enumerate(reductions))
    assert [round(r.test_reduction, 12) for r in runs] == reductions
    assert runs[S.median_seed(runs)].seed == expected_seed


@pytest.mark.slow  # 003 Figs. 2-3 reproduced
def test_selectivity_summary_equals_the_per_seed_curves(selectivity_fast):
    """Every number of the caption, report and JSON is recomputed here from the per-seed curves."""
    import json

    from svmref.figures import support_features_selectivity as S

    r = selectivity_fast
    assert [x.seed for x in r.runs] == list(range(S.DEFAULT_SEED, S.DEFAULT_SEED + S.N_SEEDS_FAST))
    mine = {"test_reduction": [], "test_min_selected": [], "loo_min_selected": [], "loo_reduction": []}
    for run in r.runs:
        kt = int(np.flatnonzero(run.test_error == run.test_error.min())[0])
        kl = int(np.flatnonzero(run.loo_error == run.loo_error.min())[0])
        mine["test_reduction"].append(1 - run.test_error[kt] / run.test_error[0])
        mine["loo_reduction"].append(1 - run.loo_error[kl] / run.loo_error[0] if run.loo_error[0] > 0 else 0.0)
        mine["test_min_selected"].append(int(run.n_selected[kt]))
        mine["loo_min_selected"].append(int(run.n_selected[kl]))
    js = json.loads(json.dumps(S.to_json(r), allow_nan=False))
    for key, values in mine.items():
        assert np.allclose([s[key] for s in js["per_seed"]], values, rtol=0, atol=1e-15)
        assert js["medians"][key] == pytest.approx(float(np.median(values)), abs=1e-15)
    # the drawn seed: median test-error reduction (odd number of seeds: exactly the median)
    assert r.test_reduction == pytest.approx(np.median(mine["test_reduction"]), abs=0)
    assert js["drawn"]["seed"] == r.seed == r.runs[int(np.argsort(mine["test_reduction"], kind="stable")[2])].seed
    assert js["thesis"]["test_reduction"] == 0.17 and js["thesis"]["test_min_selected"] == 4
    assert js["thesis"]["loo_min_selected"] == 13
    text = r.report()
    red = sorted(mine["test_reduction"])
    assert (f"test-error reduction at the test minimum over 5 seeds: median {np.median(red):.0%}, "
            f"range {red[0]:.0%}-{red[-1]:.0%}; 003: 17%") in text
    n_loo = mine["loo_min_selected"]
    assert (f"#features at the LOO minimum over 5 seeds: median {np.median(n_loo):g}, range {min(n_loo)}-{max(n_loo)}; "
            "003: 13") in text
    fig = S.plot(r)
    titles = [ax.get_title() for ax in fig.get_axes()]
    assert f"test: median {np.median(red):.0%}, range {red[0]:.0%}-{red[-1]:.0%}; 003: 17%" in titles[4]
    assert f"seed {r.seed}, the median test-error reduction ({np.median(red):.0%})" in fig._suptitle.get_text()


@pytest.mark.slow  # 003 Figs. 2-3 reproduced
def test_selectivity_attributes_fig5_to_lung_cancer(selectivity_fast):
    """003's Fig. 5 is the Lung Cancer data: the hypercube panel is labelled an analogue, never Fig. 5 itself."""
    import re

    from svmref.figures import support_features_selectivity as S

    what = figures.FIGURES["support-features-selectivity"][1]
    for text in (what, selectivity_fast.report().splitlines()[0], S.__doc__.splitlines()[0]):
        assert "analogue of Fig. 5" in text or "Fig. 5's analogue" in text, text
        assert not re.search(r"Figs?\. 2, 3,? (and )?5", text), text
    titles = [ax.get_title() for ax in S.plot(selectivity_fast).get_axes()]
    assert "Fig. 2" in titles[0] and "Fig. 3" in titles[1]
    assert "analogue of 003 Fig. 5" in titles[2] and "Fig. 5 is Lung Cancer" in titles[2]
    assert "Lung Cancer" in figures.FIGURES["support-features-lung-cancer"][1]


# ---- isls-sparse-models (004 Fig. 1) -------------------------------------------------------------
def test_isls_models_are_sparse():
    """004 §4: ISLS-SVM models are very sparse (Table 1: 13 of 250 SVs for Ripley, 8.4 of 133 for
    Motorcycle); a support vector is |alpha_i| > 1e-6. We ask for fewer than 10 % of the patterns."""
    for module, attr in SOLVERS_OF["isls-sparse-models"]:
        _need(module, attr)
    from svmref.figures import isls_sparse_models as I

    res = I.compute()
    for name in ("synth", "mcycle"):
        alpha = res.models[name].alpha
        assert np.array_equal(res.support[name], np.flatnonzero(np.abs(alpha) > 1e-6))
        assert 0 < len(res.support[name]) < 0.10 * len(alpha)
        assert res.results[name].converged


def test_rls_vs_svm_reproducible():
    for module, attr in SOLVERS_OF["rls-vs-svm"]:
        _need(module, attr)
    from svmref.figures import rls_vs_svm as R

    a = R.compute(3, fast=True)
    b = R.compute(3, fast=True)
    for key in a.errors:
        assert np.array_equal(a.errors[key], b.errors[key])


# ---- the paper reproductions at full size (slow: python -m pytest -m slow) -----------------------
@pytest.mark.slow
def test_selectivity_lowers_the_test_error_below_the_svm():
    """003 §3.2 (Fig. 2), on every one of the 101 seeds: the test-error minimum over mu lies below the SVM's
    (mu = 0) with fewer features than n, inside the mu grid except on three seeds whose C >= 1 keeps the 1-norm SVM's
    10-20 features at the grid's end. Also the spread quoted in docs/figures.md (its measured medians and ranges,
    recomputed here from the per-seed curves)."""
    for module, attr in SOLVERS_OF["support-features-selectivity"]:
        _need(module, attr)
    from svmref.figures import support_features_selectivity as S

    res = S.compute()
    assert len(res.runs) == S.N_SEEDS == 101
    at_end = []
    for run in res.runs:
        k = int(np.argmin(run.test_error))
        assert 0 < k and run.test_error[k] < run.test_error[0] and run.n_selected[k] < 50
        if k == len(run.mus) - 1:
            at_end.append((run.seed, run.C))
    assert at_end == [(50, 1.0), (79, 1.0), (82, 10.0)]
    red = [1 - r.test_error.min() / r.test_error[0] for r in res.runs]
    n_test = [int(r.n_selected[np.argmin(r.test_error)]) for r in res.runs]
    n_loo = [int(r.n_selected[np.argmin(r.loo_error)]) for r in res.runs]
    # docs/figures.md: median 47 % (7-83 %), 11 (4-26) and 15 (2-50) features; drawn seed 80
    assert (round(100 * np.median(red)), round(100 * min(red)), round(100 * max(red))) == (47, 7, 83)
    assert sum(r < 0.17 for r in red) == 1
    assert (np.median(n_test), min(n_test), max(n_test)) == (11, 4, 26)
    assert (np.median(n_loo), min(n_loo), max(n_loo)) == (15, 2, 50)
    assert res.seed == 80 and [r.C for r in res.runs].count(0.1) == 76
    # features left at artanh(mu) = 3: 1-3 where C = 0.1, 10-20 where C = 1 or 10 (the 1-norm SVM limit)
    last = {c: [int(r.n_selected[-1]) for r in res.runs if r.C == c] for c in (0.1, 1.0, 10.0)}
    assert (min(last[0.1]), max(last[0.1])) == (1, 3) and len(last[1.0]) + len(last[10.0]) == 25
    assert (min(last[1.0] + last[10.0]), max(last[1.0] + last[10.0])) == (10, 20)


@pytest.mark.slow
def test_rls_and_svm_similar_on_square_and_overlap():
    """001 §4 (Table 2): on the separable and the partly overlapping problems RLS and SVM have similar
    error rates: their means differ by less than the larger standard deviation over 10 repetitions."""
    for module, attr in SOLVERS_OF["rls-vs-svm"]:
        _need(module, attr)
    from svmref.figures import rls_vs_svm as R

    res = R.compute()
    for pb in ("square", "overlap"):
        rls, svm = res.errors[(pb, "RLS")], res.errors[(pb, "SVM")]
        assert abs(rls.mean() - svm.mean()) < max(rls.std(ddof=1), svm.std(ddof=1))
        assert rls.mean() >= R.BAYES_ERROR[pb] and svm.mean() >= R.BAYES_ERROR[pb]


#: A few draws of each figure with draws, through the library (the CLI's --fast runs more).
FEW_DRAWS = {"outlier-robustness": {"n_draws": 3}, "rls-vs-svm": {"n_draws": 2},
             "support-features-selectivity": {"n_seeds": 2}}


@pytest.mark.slow  # two worker processes, each compiling the solvers when numba's cache is cold
@pytest.mark.parametrize("name", sorted(FEW_DRAWS))
def test_the_numbers_do_not_depend_on_the_number_of_workers(name):
    """The JSON of a figure with draws is byte-identical for jobs=1 (this process, one BLAS thread) and jobs=2 (two
    joblib workers, one BLAS thread each): each draw depends on its seed only, and the results come back in order."""
    import json

    module = figures.get(name)
    text = [json.dumps(module.to_json(module.compute(fast=True, jobs=jobs, **FEW_DRAWS[name])), indent=1)
            for jobs in (1, 2)]
    assert text[0] == text[1]


def test_figure_jobs_are_checked_before_any_work(tmp_path, capsys):
    assert cli.main(["outlier-robustness", "--jobs", "0", "--out", str(tmp_path / "x.png")]) == 2
    assert "--jobs must be a positive integer or -1" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
