"""svmref table: each table's quick mode, resume after an interruption, Dask against the local run.

The numbers of a full table are not asserted here (they take minutes to hours; docs/tables.md shows
them next to the papers'); what is checked is the machinery that produces them: the CSV columns,
one row per (dataset, model, split), the Markdown comparison, determinism, resume and Dask.
"""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from svmref.datasets import load_dataset
from svmref.figures.tables import TABLES, get, names, read_rows, run_table
from svmref.figures.tables import cli as table_cli
from svmref.figures.tables._common import fit_model, split_rng
from svmref.figures.tables._runner import SPLIT_COLUMNS

#: per table, a quick run small enough for the fast suite: (datasets or None for all, splits)
QUICK = {
    "000-table2": (["heart", "breast"], 2),
    "004-table1": (None, 2),
    "001-table1": (["iris", "glass"], 2),
    "001-table2": (None, 2),
}
REQUIRED = ("dataset", "model", "split", "error_pct", "n_sv", "n_iter", "C", "sigma")


def _csv_text(path) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def test_registry_lists_the_four_tables():
    assert names() == ["000-table2", "004-table1", "001-table1", "001-table2"]
    for name in names():
        mod = get(name)
        assert mod.NAME == name
        assert set(mod.PAPER) and all(isinstance(v, dict) for v in mod.PAPER.values())


@pytest.mark.parametrize("name", list(TABLES))
def test_quick_mode_writes_one_row_per_dataset_model_split(name, tmp_path):
    dsets, splits = QUICK[name]
    run = run_table(name, quick=True, splits=splits, datasets=dsets, out=tmp_path, progress=False)
    mod = get(name)
    rows = read_rows(tmp_path / f"{name}.csv")
    assert list(csv.reader([_csv_text(tmp_path / f"{name}.csv").splitlines()[0]]))[0] == list(SPLIT_COLUMNS)
    assert set(REQUIRED) <= set(SPLIT_COLUMNS)
    want = {(d, m, s) for t in mod.split_tasks(dsets or mod.datasets(True), splits, True, 0, run.selection_rows)
            for d, m, s in [(t["dataset"], t["model"], t["split"])]}
    assert {(r["dataset"], r["model"], int(r["split"])) for r in rows} == want
    assert len(rows) == len(want)
    for r in rows:
        assert r["model"].split("@")[0] in ("ls_svm", "least_1norm_svm", "isls_svm", "l1_svm", "rls")
        assert r["error_pct"] != "" or r["mse"] != ""
        if r["error_pct"] != "":
            assert 0.0 <= float(r["error_pct"]) <= 100.0
        assert 0 <= int(r["n_sv"]) <= int(r["n_train"])
        assert float(r["sigma"]) > 0
    md = run.md_path.read_text(encoding="utf-8")
    assert "| data set | model | metric | ours mean ± std (n) | SE | paper | z | flag |" in md
    summary = json.loads(run.json_path.read_text(encoding="utf-8"))
    assert summary["table"] == name and summary["rows"] == len(rows)
    # every cell's mean is the mean of its CSV column
    for c in run.cells:
        if c["metric"] in ("error_pct", "n_sv"):
            vals = [float(r[c["metric"]]) for r in rows if r["dataset"] == c["dataset"] and r["model"] == c["model"]]
            assert c["mean"] == pytest.approx(np.mean(vals), rel=1e-12, abs=1e-12)
            pm, ps = c["paper_mean"], c["paper_std"]
            if ps is not None:
                assert c["within_paper_std"] == (abs(c["mean"] - pm) <= ps)


def test_000_uses_the_benchmark_sizes_and_the_papers_smo_settings(tmp_path):
    run = run_table("000-table2", quick=True, splits=1, datasets=["titanic"], out=tmp_path, progress=False)
    for r in run.rows:
        assert (int(r["n_train"]), int(r["n_test"])) == (150, 2051)
        assert r["solver"] == f"smo.{r['model'].split('@')[0]}(wss='first', tol=1e-3)"
    # the CV scores that chose (C, sigma) are kept beside the table
    cv = read_rows(tmp_path / "000-table2.cv.csv", ("dataset", "model", "cv_split", "grid", "C", "sigma", "gamma",
                                                    "cv_score"))
    assert len(cv) == 2 * 2 * 2  # two models x a 2 x 2 quick grid x one selection split
    for model in ("ls_svm", "least_1norm_svm"):
        scores = {(float(r["C"]), float(r["sigma"])): float(r["cv_score"]) for r in cv if r["model"] == model}
        chosen = next(r for r in run.rows if r["model"] == model)
        assert scores[(float(chosen["C"]), float(chosen["sigma"]))] == min(scores.values())


def test_ordinal_encoding_gives_the_benchmark_feature_counts():
    for name, n in (("titanic", 3), ("breast", 9), ("german", 20), ("heart", 13)):
        assert load_dataset(name, encoding="ordinal")[0].shape[1] == n
    assert load_dataset("breast")[0].shape[1] > 9  # one-hot stays the default
    with pytest.raises(ValueError, match="encoding"):
        load_dataset("breast", encoding="binary")


def test_fits_share_the_result_types_decision_and_tie_rule():
    """A table's Fit evaluates f as the solver's result does, and labels f = 0 as -1 for every model (the one tie
    rule of solvers/_result.py, +1 where f > 0): a zero cross-kernel puts f exactly at b."""
    from svmref.kernels import rbf_kernel
    from svmref.solvers.linear import ls_svm, rls

    X, y = load_dataset("synth.tr")
    X, y = X[::6], y[::6]  # both classes (synth.tr is sorted by class)
    K = rbf_kernel(X, sigma=0.5)
    for model, kw, res in (("ls_svm", {"C": 1.0}, ls_svm(K, y, 1.0)), ("rls", {"gamma": 0.01}, rls(K, y, 0.01))):
        fit = fit_model(model, K, y, **kw)
        assert np.array_equal(fit.decision(K), res.decision_function(K))
        assert np.array_equal(fit.predict(K), res.predict(K))
        zero = type(fit)(fit.coef, 0.0, fit.n_sv, fit.n_iter, fit.converged)
        assert np.array_equal(zero.predict(np.zeros((2, len(y)))), [-1.0, -1.0])


def test_split_seeds_depend_on_table_dataset_split_only():
    a = split_rng(0, "000-table2", "heart", 3).permutation(50)
    assert np.array_equal(a, split_rng(0, "000-table2", "heart", 3).permutation(50))
    assert not np.array_equal(a, split_rng(0, "000-table2", "heart", 4).permutation(50))
    assert not np.array_equal(a, split_rng(1, "000-table2", "heart", 3).permutation(50))
    assert not np.array_equal(a, split_rng(0, "000-table2", "german", 3).permutation(50))


def test_resume_after_an_interruption_equals_an_uninterrupted_run(tmp_path):
    kw = {"quick": True, "splits": 3, "datasets": ["heart"], "progress": False}
    full = run_table("000-table2", out=tmp_path / "full", **kw)
    part = tmp_path / "part"
    # a Ctrl-C after 6 of the 8 selection rows, then one after 2 split rows
    with pytest.raises(KeyboardInterrupt):
        run_table("000-table2", out=part, _interrupt_after=6, **kw)
    assert len(read_rows(part / "000-table2.cv.csv", ("dataset", "model", "cv_split", "grid", "C", "sigma", "gamma",
                                                      "cv_score"))) == 6
    with pytest.raises(KeyboardInterrupt):
        run_table("000-table2", out=part, resume=True, _interrupt_after=4, **kw)
    kept = read_rows(part / "000-table2.csv")
    assert len(kept) == 2
    # a worker killed while writing leaves half a line: it is dropped, not misread
    with open(part / "000-table2.csv", "a", encoding="utf-8") as fh:
        fh.write("heart,ls_svm,2,13.")
    resumed = run_table("000-table2", out=part, resume=True, **kw)
    assert resumed.n_computed == len(full.rows) - 2  # only the missing splits
    assert _csv_text(part / "000-table2.csv") == _csv_text(tmp_path / "full" / "000-table2.csv")
    assert _csv_text(part / "000-table2.cv.csv") == _csv_text(tmp_path / "full" / "000-table2.cv.csv")
    # resuming a finished run computes nothing
    again = run_table("000-table2", out=part, resume=True, **kw)
    assert again.n_computed == 0 and again.rows == resumed.rows


def test_resume_refuses_other_settings(tmp_path):
    run_table("001-table2", quick=True, splits=1, datasets=["square"], out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="--seed differs"):
        run_table("001-table2", quick=True, splits=1, datasets=["square"], out=tmp_path, seed=1, resume=True,
                  progress=False)


def test_joblib_workers_give_the_same_rows(tmp_path):
    kw = {"quick": True, "splits": 2, "datasets": ["square"], "progress": False}
    one = run_table("001-table2", out=tmp_path / "one", jobs=1, **kw)
    two = run_table("001-table2", out=tmp_path / "two", jobs=2, **kw)
    assert one.rows == two.rows
    assert _csv_text(tmp_path / "one" / "001-table2.csv") == _csv_text(tmp_path / "two" / "001-table2.csv")


def test_dask_local_cluster_gives_the_same_rows(tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the dev extra")
    kw = {"quick": True, "splits": 2, "datasets": ["heart"], "progress": False}
    local = run_table("000-table2", out=tmp_path / "local", **kw)
    # a scheduler on loopback TCP, reached by its address as `--scheduler tcp://127.0.0.1:PORT` would
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0") as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        on_dask = run_table("000-table2", out=tmp_path / "dask", scheduler=cluster.scheduler_address, **kw)
    assert on_dask.rows == local.rows
    assert _csv_text(tmp_path / "dask" / "000-table2.csv") == _csv_text(tmp_path / "local" / "000-table2.csv")


def test_cli_list_json_and_bad_input(tmp_path, capsys):
    assert table_cli.main(["--list"]) == 0
    assert "000-table2" in capsys.readouterr().out
    rc = table_cli.main(["001-table2", "--quick", "--splits", "1", "--datasets", "square", "--out", str(tmp_path),
                         "--json", "--no-progress"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 2 and {c["model"] for c in summary["cells"]} == {"rls", "l1_svm"}
    with pytest.raises(SystemExit):
        table_cli.main(["no-such-table"])
    with pytest.raises(SystemExit):
        table_cli.main(["001-table2", "--splits", "0"])
    assert table_cli.main(["001-table2", "--datasets", "nope", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "datasets must be among" in capsys.readouterr().err
    with pytest.raises(ValueError, match="jobs"):
        run_table("001-table2", jobs=0, out=tmp_path)


def test_svmref_command_dispatches_table(capsys):
    from svmref.cli import main

    assert main(["table", "--list"]) == 0
    assert "004-table1" in capsys.readouterr().out


def test_within_flag_and_missing_std():
    from svmref.figures.tables._runner import summarize

    mod = get("004-table1")
    rows = [{"dataset": "ripley", "model": "ls_svm", "split": str(s), "error_pct": str(e), "mse": "", "n_sv": "167",
             "n_iter": "1", "C": "1.0", "sigma": "0.5", "gamma": "", "converged": "1"} for s, e in enumerate((12.0, 14.0))]
    cells = {c["metric"]: c for c in summarize(mod, rows)}
    assert cells["error_pct"]["mean"] == 13.0 and cells["error_pct"]["std"] == pytest.approx(math.sqrt(2.0))
    assert cells["error_pct"]["within_paper_std"] is None  # 004 prints no std
    mod0 = get("000-table2")
    rows0 = [dict(r, dataset="heart", model="ls_svm") for r in rows]
    cells0 = {c["metric"]: c for c in summarize(mod0, rows0)}
    assert cells0["error_pct"]["within_paper_std"] is True  # |13.0 - 15.6| <= 3.2


def test_tasks_run_with_one_blas_thread_for_every_loaded_blas(monkeypatch):
    """threadpoolctl limits only libraries already loaded: scipy's own OpenBLAS must be loaded first."""
    from threadpoolctl import threadpool_info

    from svmref.figures.tables import _runner

    seen = {}

    def probe(module, kind, task, in_worker=True):
        import scipy.linalg  # noqa: F401  (the solvers' BLAS)

        seen["threads"] = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        return {}

    monkeypatch.setattr(_runner, "_execute", probe)
    list(_runner._Executor(jobs=1).map("unused", "split", [{}]))
    assert seen["threads"] and all(n == 1 for n in seen["threads"])


def test_004_motorcycle_svm_is_the_epsilon_svr(tmp_path):
    run = run_table("004-table1", quick=True, splits=1, datasets=["motorcycle"], out=tmp_path, progress=False)
    by_model = {r["model"]: r for r in run.rows}
    assert set(by_model) == {"ls_svm", "isls_svm", "isls_svm@ls_svm_params", "l1_svm", "ls_svm@tunelssvm",
                             "isls_svm@ls_svm_tunelssvm"}
    svr = by_model["l1_svm"]
    assert svr["solver"].startswith("smo.svr") and float(svr["epsilon"]) > 0 and float(svr["mse"]) > 0
    assert svr["error_pct"] == "" and by_model["ls_svm"]["epsilon"] == ""
    assert int(by_model["ls_svm"]["n_sv"]) == int(by_model["ls_svm"]["n_train"]) == 89  # ceil(2 * 133 / 3)
