"""svmref table: both readings of the papers' ambiguous rows, grid-edge flags, flags by standard error, the paper's
layout and the ``--plot`` figure.

Each test was run against a deliberately broken copy of the code it guards and seen to fail (the break is named in
its docstring).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from svmref.datasets import load_dataset
from svmref.figures.tables import cli as table_cli
from svmref.figures.tables import get, run_table
from svmref.figures.tables._common import at_edge
from svmref.figures.tables._summary import se_flag, summarize


@pytest.fixture(scope="module")
def mixture_run(tmp_path_factory):
    """One quick 001-table2 run on the mixture under both readings, shared by the tests that read its rows."""
    return run_table("001-table2", quick=True, splits=2, datasets=["mixture", "mixture@bayes-labels"],
                     out=tmp_path_factory.mktemp("mixture"), progress=False)


# ------------------------------------------------------------------------------------------------ readings
def test_letter_rows_read_u_w_and_v_w():
    """001 Table 1's letter row is computed as U vs W and as V vs W, both compared with the one printed row.
    Break: ``letter-uw`` mapped to ("V", "W") (the test sees the V-vs-W data twice)."""
    mod = get("001-table1")
    assert {"letter-uw", "letter-vw"} <= set(mod.datasets()) and "letter" not in mod.datasets()
    Xv, yv = mod.load("letter-vw")
    X0, y0 = load_dataset("letter", scale="minmax")
    assert np.array_equal(Xv, X0) and np.array_equal(yv, y0)  # V vs W is the loader's letter set
    Xu, yu = mod.load("letter-uw")
    assert Xu.shape[1] == 16 and 0.0 <= Xu.min() and Xu.max() <= 1.0
    assert Xu.shape[0] != Xv.shape[0]  # U and V have different counts in the file (813 and 764)
    assert int(np.sum(yu < 0)) == int(np.sum(yv < 0))  # W is the -1 class of both
    assert int(np.sum(yu > 0)) == 813 and int(np.sum(yv > 0)) == 764
    assert mod.PAPER[("letter-uw", "rls")] == mod.PAPER[("letter-vw", "rls")]
    with pytest.raises(ValueError, match="pos must be one capital letter"):
        mod.letters("uu", "W")


def test_bayes_labels_come_from_the_generating_distribution():
    """The Bayes classifier of each simulated problem is the majority label of the distribution the data are drawn
    from: on a large sample its error is the problem's Bayes error (0, 0.06, 0.2), and no other labelling of the
    regions does better; for the mixture it is +1 everywhere (001 §4). Break: ``> 0.5`` turned into ``>= 0.9``
    (the overlap band then goes to -1)."""
    from svmref.figures import rls_vs_svm as rv

    mod = get("001-table2")
    rng = np.random.default_rng(0)
    for problem, bayes_error in (("square", 0.0), ("overlap", 0.06), ("mixture", 0.2)):
        X, y = rv.sample(problem, 200_000, rng)
        b = mod.bayes_labels(problem, X)
        assert np.mean(b != y) == pytest.approx(bayes_error, abs=0.005)
        assert np.mean(-b != y) >= np.mean(b != y)
    Xm, _ = rv.test_set("mixture", rng)
    assert np.all(mod.bayes_labels("mixture", Xm) == 1.0)


def test_bayes_reading_scores_the_same_fit(mixture_run):
    """``PROBLEM@bayes-labels`` rows are the same fits as ``PROBLEM``'s (same hyperparameters, support vectors and
    iterations per split), scored against other labels. Break: the @bayes-labels data drawn from its own seed
    (``split_rng(..., d, ...)`` instead of the problem's)."""
    rows = {(r["dataset"], r["model"], r["split"]): r for r in mixture_run.rows}
    differ = 0
    for (d, m, s), r in rows.items():
        if d != "mixture":
            continue
        b = rows[("mixture@bayes-labels", m, s)]
        for col in ("C", "sigma", "gamma", "n_sv", "n_iter", "at_edge"):
            assert b[col] == r[col], (m, s, col)
        differ += b["error_pct"] != r["error_pct"]
    assert differ > 0


def test_isls_at_ls_svm_params_uses_the_ls_svm_selection(monkeypatch):
    """``isls_svm@ls_svm_params`` runs Algorithm 1 with the (C, sigma) the LS-SVM's CV selects; ``isls_svm`` with its
    own CV's. A stand-in tuner gives each model other values. Break: the @ model tuned as ``isls_svm``."""
    mod = get("004-table1")
    picked = {"ls_svm": (10.0, 0.5), "isls_svm": (100.0, 1.0)}
    tuned, fitted = [], []

    def fake_tune(model, Xtr, ytr, task, folds, quick):
        tuned.append(model)
        C, sigma = picked[model]
        return C, sigma, None, 0.0, ""

    import svmref.figures.tables.p004_table1 as p4

    real_fit = p4.fit_model

    def spy_fit(model, K, y, **kw):
        fitted.append((model, kw["C"]))
        return real_fit(model, K, y, **kw)

    monkeypatch.setattr(p4, "tune", fake_tune)
    monkeypatch.setattr(p4, "fit_model", spy_fit)
    base = {"dataset": "motorcycle", "split": 0, "seed": 0, "quick": True}
    own = mod.run_split({**base, "model": "isls_svm"})
    at_ls = mod.run_split({**base, "model": "isls_svm@ls_svm_params"})
    assert tuned == ["isls_svm", "ls_svm"]
    assert fitted == [("isls_svm", 100.0), ("isls_svm", 10.0)]
    assert (own["C"], own["sigma"]) == (100.0, 1.0) and (at_ls["C"], at_ls["sigma"]) == (10.0, 0.5)
    assert at_ls["solver"] == own["solver"] and at_ls["solver"].startswith("isls.isls_svm")
    assert mod.PAPER[("motorcycle", "isls_svm@ls_svm_params")] == mod.PAPER[("motorcycle", "isls_svm")]


def test_a_diverging_isls_grid_point_is_never_chosen(monkeypatch):
    """ISLS-SVM diverges at large C (``ISLSDivergenceError``); in 004's tuning such a point scores inf instead of
    ending the run. A stand-in CV prefers the largest C, where ISLS diverges: the next one is chosen.
    Break: the ``except ISLSDivergenceError`` removed (the error ends the tuning)."""
    import svmref.figures.tables.p004_table1 as p4
    from svmref.solvers.isls import ISLSDivergenceError

    top = max(p4.QUICK_C_GRID)

    def fake_cv(model, K, y, folds, *, C=None, **kw):
        if C == top:
            raise ISLSDivergenceError("diverged")
        return 100.0 - C * 1e-3

    monkeypatch.setattr(p4, "cv_score", fake_cv)
    X = np.random.default_rng(0).normal(size=(12, 2))
    C, sigma, eps, score, edge = p4.tune("isls_svm", X, np.sign(X[:, 0]) + (X[:, 0] == 0), "classification",
                                         None, quick=True)
    assert C == sorted(p4.QUICK_C_GRID)[-2] and math.isfinite(score) and "C:" not in edge


def test_the_svr_is_tuned_on_its_wider_c_grid(monkeypatch):
    """004's SVR (Motorcycle) searches C up to 1e5, the other machines up to 1e4: a stand-in CV that prefers the largest
    C gets 1e5 for the SVR and 1e4 for the LS-SVM. Break: the SVR tuned on the shared C grid."""
    import svmref.figures.tables.p004_table1 as p4

    monkeypatch.setattr(p4, "cv_score", lambda model, K, y, folds, *, C=None, **kw: -C)
    X = np.random.default_rng(0).normal(size=(6, 2))
    y = X[:, 0] * 10.0
    assert p4.tune("l1_svm", X, y, "regression", None, quick=False)[0] == max(p4.SVR_C_GRID) == 1e5
    assert p4.tune("ls_svm", X, y, "regression", None, quick=False)[0] == max(p4.C_GRID) == 1e4


def test_000_also_runs_at_c1_sigma1(tmp_path):
    """000 Table 2 adds ``ls_svm@C1_sigma1`` and ``least_1norm_svm@C1_sigma1`` rows at C = 1, sigma = 1 (the lower
    corner of 000's grid), with the same solver as the CV-selected machines, and no edge flag (nothing selected).
    Break: the fixed models dropped from ``split_tasks``."""
    run = run_table("000-table2", quick=True, splits=1, datasets=["heart"], out=tmp_path, progress=False)
    by = {r["model"]: r for r in run.rows}
    assert set(by) == {"ls_svm", "least_1norm_svm", "ls_svm@C1_sigma1", "least_1norm_svm@C1_sigma1"}
    for m in ("ls_svm", "least_1norm_svm"):
        fixed = by[f"{m}@C1_sigma1"]
        assert (float(fixed["C"]), float(fixed["sigma"])) == (1.0, 1.0) and fixed["at_edge"] == ""
        assert fixed["solver"] == by[m]["solver"] == f"smo.{m}(wss='first', tol=1e-3)"
        assert int(fixed["n_iter"]) > 0
    md = run.md_path.read_text(encoding="utf-8")
    assert "L1N #It at C = 1, σ = 1" in md


# ------------------------------------------------------------------------------------------------ grid edges
def test_at_edge_names_the_hyperparameter_and_its_edge():
    """Break: low and high swapped, a one-point grid counted as an edge, or the flat-CV test comparing the edge with
    itself instead of its inner neighbour."""
    g = (0.1, 1.0, 10.0)
    assert at_edge(C=(0.1, g), sigma=(1.0, g)) == "C:low"
    # the CV score of the inner neighbour (C = 1, same sigma) equals the edge's: the tie rule picked the edge
    assert at_edge({(0.1, 1.0): 5.0, (1.0, 1.0): 5.0, (0.1, 10.0): 4.0}, C=(0.1, g), sigma=(1.0, g)) == "C:low(flat)"
    assert at_edge({(0.1, 1.0): 5.0, (1.0, 1.0): 6.0, (0.1, 0.1): 5.0}, C=(0.1, g), sigma=(1.0, g)) == "C:low"
    assert at_edge(C=(10.0, g), sigma=(0.1, g)) == "C:high;sigma:low"
    assert at_edge(C=(1.0, g)) == ""
    assert at_edge(C=(5.0, (5.0,))) == ""


def test_every_row_flags_its_grid_edges_and_the_summary_counts_them(mixture_run):
    """Each row's ``at_edge`` is its selection against the table's grid, and the .md and .json count the rows at an
    edge. Break: ``edge_counts`` returning nothing, or ``at_edge`` left out of a table's row."""
    mod = get("001-table2")
    run = mixture_run
    for r in run.rows:
        second = ("gamma", mod.QUICK_GAMMAS) if r["model"] == "rls" else ("C", mod.QUICK_CS)
        want = at_edge(sigma=(float(r["sigma"]), mod.QUICK_SIGMAS), **{second[0]: (float(r[second[0]]), second[1])})
        assert r["at_edge"].replace("(flat)", "") == want
    n_edge = sum(1 for r in run.rows if r["at_edge"])
    assert n_edge > 0  # a 2 x 2 grid: every selection is on an edge of one of them
    summary = json.loads(run.json_path.read_text(encoding="utf-8"))
    assert summary["at_edge"]["rows"] == n_edge and summary["at_edge"]["of"] == len(run.rows)
    assert sum(summary["at_edge"]["by_edge"].values()) == sum(len(r["at_edge"].split(";")) for r in run.rows
                                                               if r["at_edge"])
    assert f"Selections on a grid edge: {n_edge} of {len(run.rows)} rows." in run.md_path.read_text(encoding="utf-8")
    hyper = [c for c in run.cells if c["metric"].startswith("hyperparameters")]
    assert sum(c["n_at_edge"] for c in hyper) == n_edge


def test_grids_are_wider_than_where_the_selections_piled_up():
    """001 Table 1's grids reach past the edges the selections piled on (sigma 10^{-1}, 10^{1}; gamma 10^{-6}), and
    001 Table 2's past the figure's (sigma 0.05, C 1000, gamma 1e-6). Break: the old grids restored."""
    from svmref.figures import rls_vs_svm as rv

    t1 = get("001-table1")
    assert min(t1.SIGMA_GRID) < 0.1 and max(t1.SIGMA_GRID) > 10.0 and min(t1.GAMMA_GRID) < 1e-6
    assert max(t1.C_GRID) > 1e3
    t4 = get("004-table1")
    assert max(t4.SVR_C_GRID) > max(t4.C_GRID) >= 1e4 and min(t4.C_GRID) < 0.1 and max(t4.EPS_FACTORS) > 0.4
    t2 = get("001-table2")
    assert min(t2.SIGMAS) < min(rv.SIGMAS) and max(t2.CS) > max(rv.CS) and min(t2.GAMMAS) < min(rv.GAMMAS)


# ------------------------------------------------------------------------------------------------ SE flags
def test_flags_by_standard_error_beside_the_papers_std():
    """Two splits of 12 % and 14 % against 000's heart LS-SVM, 15.6 ± 3.2 over 100 splits: SE = sqrt(2)/sqrt(2) = 1,
    z = -2.6 (>2 SE), two-sample z = -2.6 / sqrt(1 + 3.2^2 / 100) = -2.48 (>2 SE), yet within the paper's std.
    Break: SE without the 1/sqrt(n) (z = -1.84, 'ok')."""
    mod = get("000-table2")
    rows = [{"dataset": "heart", "model": "ls_svm", "split": str(s), "error_pct": str(e), "mse": "", "n_sv": "170",
             "n_iter": "1", "C": "1.0", "sigma": "0.5", "gamma": "", "converged": "1", "at_edge": ""}
            for s, e in enumerate((12.0, 14.0))]
    cell = next(c for c in summarize(mod, rows) if c["metric"] == "error_pct")
    assert cell["se"] == pytest.approx(1.0)
    assert cell["z"] == pytest.approx(-2.6) and cell["flag"] == ">2 SE"
    assert cell["z_two_sample"] == pytest.approx(-2.6 / math.sqrt(1 + 3.2 ** 2 / 100)) and cell["paper_n"] == 100
    assert cell["flag_two_sample"] == ">2 SE" and cell["within_paper_std"] is True
    assert se_flag(3.5, 1.0) == (3.5, ">3 SE") and se_flag(1.0, 1.0) == (1.0, "ok")
    assert se_flag(0.0, 0.0) == (0.0, "ok") and se_flag(1.0, 0.0) == (None, ">3 SE")
    # 004 prints no std: no two-sample z
    mod4 = get("004-table1")
    c4 = next(c for c in summarize(mod4, [dict(r, dataset="ripley") for r in rows]) if c["metric"] == "error_pct")
    assert c4["z"] == pytest.approx(0.2) and c4["flag"] == "ok"  # (13 - 12.8) / 1
    assert c4["z_two_sample"] is None and c4["flag_two_sample"] is None


# ------------------------------------------------------------------------------------------------ layout, plot
def test_markdown_is_in_the_papers_layout(mixture_run):
    """The .md opens with the paper's table: one row per data set (both readings as rows), the paper's columns (RLS,
    SVM), each cell ours ± SE · the paper's number · the flag. Break: the layout table left out of the .md."""
    run = mixture_run
    md = run.md_path.read_text(encoding="utf-8").splitlines()
    head = md.index("| data set | RLS (% error) | SVM (% error) |")
    body = md[head + 2:head + 4]
    assert [line.split(" | ")[0] for line in body] == ["| mixture", "| mixture@bayes-labels"]
    cell = next(c for c in run.cells if c["dataset"] == "mixture" and c["model"] == "rls" and c["metric"] == "error_pct")
    assert f"{cell['mean']:.1f} ± {cell['se']:.1f} · 3.6 ± 5.5 · {cell['flag']}" in body[0]
    assert "## Readings of the paper (both computed)" in md


def test_plot_writes_a_png_beside_the_csv(tmp_path, capsys):
    """``--plot`` writes NAME.png (a PNG, named in the JSON summary); without it there is none.
    Break: the plot call removed from the runner."""
    argv = ["001-table2", "--quick", "--splits", "2", "--datasets", "square", "--no-progress", "--json"]
    assert table_cli.main([*argv, "--out", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    assert not (tmp_path / "a" / "001-table2.png").exists()
    assert table_cli.main([*argv, "--out", str(tmp_path / "b"), "--plot"]) == 0
    summary = json.loads(capsys.readouterr().out)
    png = tmp_path / "b" / "001-table2.png"
    assert summary["plot"] == str(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_docs_name_every_reading():
    """docs/tables.md describes every labelled reading. Break: a reading's label dropped from the docs."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "tables.md").read_text(encoding="utf-8")
    for label in ("letter-uw", "letter-vw", "@bayes-labels", "isls_svm@ls_svm_params", "@C1_sigma1", "at_edge",
                  "--plot", ">2 SE"):
        assert label in text, label
