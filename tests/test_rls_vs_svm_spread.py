"""The rls-vs-svm figure (001 §4, Figs. 1-4, Table 2) over many draws: its stated claim, the spread over the
draws, the median-draw rule, the CV grid edges, axis labels and legends, and ``--json``.

Every test runs a tiny setting (3 draws, 3-fold CV, 3 x 3 grids); the full figure's numbers quoted in
docs/figures.md are checked by the slow test at the end.
"""
from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from svmref.figures import cli  # noqa: E402
from svmref.figures import rls_vs_svm as R  # noqa: E402

TINY = {"n_draws": 3, "n_folds": 3, "sigmas": (0.1, 0.3, 1.0), "gammas": (1e-3, 1e-1, 10.0), "cs": (0.1, 10.0, 1000.0)}


@pytest.fixture(scope="module")
def tiny():
    return R.compute(5, **TINY)


@pytest.fixture(scope="module")
def tiny_fig(tiny):
    return R.plot(tiny)


def _draw(k, diff, problem="square"):
    """A Draw with the given paired difference (RLS error 0.1 + diff, SVM error 0.1)."""
    flags = {"sigma": None, "param": None, "edge_only": False}
    return R.Draw(problem, k, (k, 0), {"Bayes": 0.0, "RLS": 0.1 + diff, "SVM": 0.1}, {"RLS": (1.0, 1.0), "SVM": (1.0, 1.0)},
                  {"RLS": flags, "SVM": flags}, {"RLS": 40, "SVM": 10})


# ---- 1. the claim is stated, in the figure and in the JSON -----------------------------------------------------
def test_the_claim_is_stated_in_the_figure_and_the_json(tiny, tiny_fig):
    assert "similar" in R.CLAIM and "mixture" in R.CLAIM and "Bayes" in R.CLAIM
    assert R.CLAIM in tiny_fig.get_suptitle()
    titles = [ax.get_title() for ax in tiny_fig.axes]
    for pb in R.PROBLEMS:
        assert any(R.CLAIMS[pb] in t for t in titles), pb
    js = R.to_json(tiny)
    assert js["claim"] == R.CLAIM and js["paper"].startswith("001")
    assert {pb: js["problems"][pb]["claim"] for pb in R.PROBLEMS} == R.CLAIMS


# ---- 2. the spread over the draws ------------------------------------------------------------------------------
def test_the_summary_is_computed_over_every_draw(tiny):
    assert tiny.n_draws == 3 and all(len(tiny.draws[pb]) == 3 for pb in R.PROBLEMS)
    for pb in R.PROBLEMS:
        rls, svm = tiny.errors[(pb, "RLS")], tiny.errors[(pb, "SVM")]
        s = tiny.summary()[pb]
        assert s["draws"] == 3
        assert s["fraction_rls_le_svm"] == pytest.approx(np.mean(rls <= svm))
        assert s["fraction_rls_lt_svm"] == pytest.approx(np.mean(rls < svm))
        assert s["models"]["RLS"]["median"] == pytest.approx(np.median(rls))
        assert s["models"]["SVM"]["median"] == pytest.approx(np.median(svm))
        assert s["diff"]["median"] == pytest.approx(np.median(rls - svm))
        bayes = tiny.errors[(pb, "Bayes")]
        assert s["models"]["RLS"]["at_bayes"] == int(np.sum(rls <= bayes))
        assert s["models"]["SVM"]["equals_bayes"] == sum(d.vs_bayes["SVM"] == 0 for d in tiny.draws[pb])


def test_the_fractions_count_ties_as_rls_at_least_as_good():
    draws = [_draw(0, -0.01), _draw(1, 0.0), _draw(2, 0.02), _draw(3, 0.0)]
    s = R.summarize(draws)
    assert (s["fraction_rls_le_svm"], s["fraction_rls_lt_svm"], s["fraction_rls_gt_svm"]) == (0.75, 0.25, 0.25)


def test_the_spread_panels_show_every_draw(tiny, tiny_fig):
    """Column 4 scatters one point per draw (plus the drawn one), column 5 histograms every paired difference."""
    axes = np.array(tiny_fig.axes).reshape(3, 5)
    for r in range(len(R.PROBLEMS)):
        sizes = [len(c.get_offsets()) for c in axes[r, 3].collections]
        assert tiny.n_draws in sizes and 1 in sizes
        counts = sum(p.get_height() for p in axes[r, 4].patches)
        assert counts == tiny.n_draws


def test_draws_are_independent_and_reproducible(tiny):
    seeds = [d.seed for pb in R.PROBLEMS for d in tiny.draws[pb]]
    assert len(set(seeds)) == len(seeds)
    again = R.compute(5, **TINY)
    for key, v in tiny.errors.items():
        assert np.array_equal(v, again.errors[key])


def test_the_default_setting_has_at_least_100_draws_and_ten_folds():
    assert R.N_DRAWS >= 100 and R.N_DRAWS % 2 == 1 and R.N_FOLDS == 10


# ---- 3. the drawn instance: the median draw of the paired difference ------------------------------------------
def test_median_draw_is_the_median_of_the_paired_difference():
    draws = [_draw(0, 0.05), _draw(1, -0.02), _draw(2, 0.01), _draw(3, 0.30), _draw(4, -0.40)]
    assert R.median_draw(draws) == 2
    # even N: the lower median
    assert R.median_draw([_draw(0, 0.3), _draw(1, 0.1), _draw(2, 0.2), _draw(3, 0.4)]) == 2
    # ties sort by draw index: the tied draws 0, 2, 4 hold ranks 1, 2, 3
    assert R.median_draw([_draw(0, 0.0), _draw(1, 0.5), _draw(2, 0.0), _draw(3, -1.0), _draw(4, 0.0)]) == 2
    with pytest.raises(ValueError, match="draws"):
        R.median_draw([])


def test_the_drawn_instance_is_the_median_draw(tiny):
    for pb in R.PROBLEMS:
        d = tiny.draws[pb]
        assert tiny.chosen[pb] == R.median_draw(d)
        diffs = sorted(x.diff for x in d)
        assert tiny.chosen_draw(pb).diff == diffs[(len(d) - 1) // 2]
        # the mesh panels show the chosen draw: its labels reproduce its errors against the Bayes labels' pattern
        X, y = tiny.train[pb]
        s, rng = R._draw_rng(tiny.seed, tiny.chosen_draw(pb).index, pb)
        X2, y2 = R.sample(pb, R.N_TRAIN, rng)
        assert np.array_equal(X, X2) and np.array_equal(y, y2)
        _, yt = R.test_set(pb, rng)
        for m in ("Bayes", "RLS", "SVM"):
            err = np.mean(tiny.predictions[(pb, m)].ravel() != yt)
            assert err == pytest.approx(tiny.chosen_draw(pb).errors[m])
        bayes = tiny.predictions[(pb, "Bayes")]
        for m in ("RLS", "SVM"):
            assert np.mean(tiny.predictions[(pb, m)] != bayes) == pytest.approx(tiny.chosen_draw(pb).vs_bayes[m])


# ---- 4. grid edges --------------------------------------------------------------------------------------------
def test_the_figure_grids_are_wider_than_the_old_ones():
    assert min(R.CV_GAMMAS) <= 1e-4 * min(R.GAMMAS) and max(R.CV_GAMMAS) >= 10 * max(R.GAMMAS)
    assert min(R.CV_SIGMAS) < min(R.SIGMAS) and max(R.CV_SIGMAS) > max(R.SIGMAS)
    assert max(R.CV_CS) > max(R.CS)
    for g in (R.CV_SIGMAS, R.CV_GAMMAS, R.CV_CS):
        assert all(b > a for a, b in zip(g, g[1:]))


def test_select_cell_breaks_ties_toward_the_simplest_model():
    E = np.array([[3, 1, 1], [1, 2, 1], [4, 4, 4]])
    assert R.select_cell("rls", E) == (1, 2)   # largest sigma, then largest gamma
    assert R.select_cell("svm", E) == (1, 0)   # largest sigma, then smallest C
    assert R.select_cell("svm", np.array([[2, 0, 2], [2, 2, 2]])) == (0, 1)


@pytest.mark.parametrize("E,cell,expected", [
    ([[5, 5, 5], [5, 1, 5], [5, 5, 5]], (1, 1), {"sigma": None, "param": None, "edge_only": False}),
    ([[0, 5, 5], [5, 5, 5], [5, 5, 5]], (0, 0), {"sigma": "low", "param": "low", "edge_only": True}),
    ([[5, 5, 5], [5, 1, 1], [5, 5, 5]], (1, 2), {"sigma": None, "param": "high", "edge_only": False}),
    ([[5, 5, 5], [5, 5, 5], [1, 5, 5]], (2, 0), {"sigma": "high", "param": "low", "edge_only": True}),
])
def test_edge_flags(E, cell, expected):
    assert R.edge_flags(np.array(E), cell) == expected


def test_edge_counts_are_reported_in_the_json_and_on_the_figure(tiny, tiny_fig):
    js = R.to_json(tiny)
    for pb in R.PROBLEMS:
        for m in ("RLS", "SVM"):
            e = js["problems"][pb]["models"][m]["edges"]
            flags = [d.edges[m] for d in tiny.draws[pb]]
            assert e["at_edge"] == sum(f["sigma"] is not None or f["param"] is not None for f in flags)
            assert e["edge_only"] == sum(f["edge_only"] for f in flags)
            assert e["sigma_low"] + e["sigma_high"] == sum(f["sigma"] is not None for f in flags)
    texts = [t.get_text() for ax in tiny_fig.axes for t in ax.texts]
    for pb in R.PROBLEMS:
        e = js["problems"][pb]["models"]
        line = f"RLS: {e['RLS']['edges']['at_edge']} / {e['RLS']['edges']['edge_only']} of {tiny.n_draws}"
        assert any("grid edge" in t and line in t for t in texts)


def test_rls_cv_path_matches_the_solver():
    """The CV's batched path gives the labels of :func:`svmref.solvers.linear.rls` (001 eq. (8))."""
    rng = np.random.default_rng(0)
    X, y = R.sample("square", 40, rng)
    for sigma in (0.1, 0.3):
        K = R.gaussian_kernel(X, sigma=sigma)
        gammas = (1e-3, 1e-2, 1.0)
        labels = R.rls_path_labels(K[:30, :30], y[:30], K[30:, :30], gammas)
        for j, g in enumerate(gammas):
            assert np.array_equal(labels[:, j], R.fit_rls(X[:30], y[:30], sigma, g).predict(X[30:]))


def test_cv_select_is_cv_errors_then_select_cell():
    X, y = R.sample("square", 40, np.random.default_rng(1))
    sigmas, second = (0.1, 0.3), (1e-3, 1.0)
    got = R.cv_select("rls", X, y, np.random.default_rng(2), sigmas=sigmas, second=second, n_folds=3)
    E = R.cv_errors("rls", X, y, R._folds(40, 3, np.random.default_rng(2)), sigmas, second)
    i, j = R.select_cell("rls", E)
    assert got == (sigmas[i], second[j], E[i, j] / 40)
    with pytest.raises(ValueError, match="method"):
        R.cv_errors("lssvm", X, y, R._folds(40, 3, np.random.default_rng(2)), sigmas, second)


@pytest.mark.parametrize("kwargs,name", [
    ({"n_draws": 0}, "n_draws"), ({"n_draws": 2.5}, "n_draws"), ({"n_folds": 1}, "n_folds"),
    ({"n_folds": 41}, "n_folds"), ({"gammas": (1.0, 0.1)}, "gammas"), ({"sigmas": (0.0, 1.0)}, "sigmas"),
    ({"cs": (1.0, float("inf"))}, "cs"),
])
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        R.compute(0, **{**TINY, **kwargs})


# ---- 5. axis labels and legends on every panel ----------------------------------------------------------------
def test_every_panel_has_axis_labels_and_a_legend(tiny_fig):
    assert len(tiny_fig.axes) == 15
    for ax in tiny_fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel(), ax.get_title()
        leg = ax.get_legend()
        assert leg is not None and len(leg.get_texts()) >= 2, ax.get_title()


# ---- 6. svmref figure rls-vs-svm --json FILE -------------------------------------------------------------------
@pytest.mark.slow  # the figure's command run end to end (a paper reproduction), in the slow step
def test_json_option_writes_the_numbers(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(R, "FAST_DRAWS", 3)
    monkeypatch.setattr(R, "FAST_FOLDS", 3)
    out, js = tmp_path / "f.png", tmp_path / "sub" / "f.json"
    assert cli.main(["rls-vs-svm", "--fast", "--jobs", "1", "--out", str(out), "--json", str(js)]) == 0
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["n_draws"] == 3 and data["claim"] == R.CLAIM
    assert "median draw" in data["chosen_rule"] and "default_rng" in data["seed_rule"]
    for pb in R.PROBLEMS:
        p = data["problems"][pb]
        assert len(p["draws"]) == 3
        assert {"fraction_rls_le_svm", "diff", "models", "chosen"} <= set(p)
        assert {"median", "at_bayes", "edges"} <= set(p["models"]["RLS"])
        diffs = sorted(d["diff"] for d in p["draws"])
        assert p["chosen"]["diff"] == diffs[1]


# ---- the full figure (slow: python -m pytest -m slow) ----------------------------------------------------------
@pytest.mark.slow
def test_the_documented_numbers():
    """docs/figures.md quotes these numbers of ``svmref figure rls-vs-svm`` (seed 0, 101 draws per problem):
    median test errors, the fraction of draws with RLS <= SVM, draws at the Bayes labels, edge counts."""
    res = R.compute()
    s = res.summary()
    got = {}
    for pb in R.PROBLEMS:
        M = s[pb]["models"]
        got[pb] = (round(M["RLS"]["median"], 3), round(M["SVM"]["median"], 3), round(s[pb]["fraction_rls_le_svm"], 2),
                   M["RLS"]["equals_bayes"], M["SVM"]["equals_bayes"],
                   *((M[m]["edges"]["at_edge"], M[m]["edges"]["edge_only"]) for m in ("RLS", "SVM")))
    assert got == DOCUMENTED
    assert {pb: res.chosen_draw(pb).index for pb in R.PROBLEMS} == {"square": 36, "mixture": 41, "overlap": 19}


DOCUMENTED = {
    "square": (0.116, 0.084, 0.32, 0, 0, (22, 0), (44, 13)),
    "overlap": (0.161, 0.146, 0.42, 0, 0, (37, 2), (47, 16)),
    "mixture": (0.203, 0.203, 0.87, 79, 78, (87, 3), (88, 7)),
}
