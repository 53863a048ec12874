"""svmref table at its edges: resume keyed on everything that changes a row, no silent overwrite, every bad
argument one line before any work, Dask that cannot hang, workers that do not outlive their run.

Each test is one edge of the table runner; the expected behaviour is stated in its docstring. Each guard was broken on a
scratch copy to see its test fail: the resume key without the model selection, no refusal to overwrite, the
settings written before the scheduler answers, the parent watchdog disabled, the worker-loss timer removed (the
test then waits forever), the BrokenPipeError handler removed.
"""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from svmref.figures.tables import _runner, p000_table2, run_table
from svmref.figures.tables import cli as table_cli
from svmref.figures.tables._runner import DaskWorkersLost, TableInterrupted, read_rows

QUICK = {"quick": True, "splits": 1, "datasets": ["square"], "progress": False}


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------------------------------------------ resume key
def test_resume_refuses_when_splits_change_the_model_selection(tmp_path, monkeypatch):
    """--splits 1, then --resume --splits 2 where the CV runs on the first min(splits, CV splits) training sets: the
    stored rows were computed with other hyperparameters than a fresh --splits 2 run would choose, so resuming is
    refused in one line naming the data set; with --splits at or above the CV count it resumes."""
    monkeypatch.setattr(p000_table2, "QUICK_CV_SPLITS", 2)
    kw = {"quick": True, "datasets": ["heart"], "progress": False}
    run_table("000-table2", out=tmp_path, splits=1, **kw)
    with pytest.raises(ValueError, match="model selection of heart"):
        run_table("000-table2", out=tmp_path, splits=2, resume=True, **kw)
    run_table("000-table2", out=tmp_path / "b", splits=2, **kw)
    more = run_table("000-table2", out=tmp_path / "b", splits=3, resume=True, **kw)  # min(3, 2) = min(2, 2)
    assert more.n_computed == 4  # split 2 of both models and of both at C = 1, sigma = 1, nothing else


def test_interrupted_other_seed_run_never_keeps_the_old_rows(tmp_path):
    """A seed-0 table, then --seed 1: refused without --force (nothing overwritten); with --force, interrupted after
    one row and resumed, the table holds seed-1 rows only, equal to a fresh seed-1 run."""
    run_table("001-table2", out=tmp_path / "a", **QUICK)
    before = _rows(tmp_path / "a" / "001-table2.csv")
    with pytest.raises(ValueError, match="already holds 2 rows.*--resume continues it, --force"):
        run_table("001-table2", out=tmp_path / "a", seed=1, **QUICK)
    assert _rows(tmp_path / "a" / "001-table2.csv") == before
    with pytest.raises(KeyboardInterrupt):
        run_table("001-table2", out=tmp_path / "a", seed=1, force=True, _interrupt_after=1, **QUICK)
    resumed = run_table("001-table2", out=tmp_path / "a", seed=1, resume=True, **QUICK)
    fresh = run_table("001-table2", out=tmp_path / "b", seed=1, **QUICK)
    assert resumed.rows == fresh.rows and resumed.rows != [r for r in before]
    assert json.loads((tmp_path / "a" / "001-table2.meta.json").read_text())["seed"] == 1


@pytest.mark.slow  # processes and signals: seconds each, run in the slow step
def test_a_scheduler_that_does_not_answer_touches_no_file(tmp_path, monkeypatch):
    """--seed 1 --force with an unreachable scheduler: one line naming --scheduler within the connect timeout, and
    the stored seed-0 run (rows and settings) is left as it was, so a later --resume cannot mix the two."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(_runner, "CONNECT_TIMEOUT_S", 2.0)
    run_table("001-table2", out=tmp_path, **QUICK)
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="scheduler: no Dask scheduler answered at 'tcp://127.0.0.1:1'"):
        run_table("001-table2", out=tmp_path, seed=1, force=True, scheduler="tcp://127.0.0.1:1", **QUICK)
    assert time.perf_counter() - t0 < 20
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files


def test_a_server_that_is_not_dask_is_one_line(tmp_path, monkeypatch):
    """An address where something else answers (here a server that sends bytes no Dask frame starts with): Dask read
    a garbage frame length and tried to allocate exabytes (a MemoryError traceback); now one line naming
    --scheduler, and nothing written."""
    import socket
    import threading

    pytest.importorskip("distributed")
    monkeypatch.setattr(_runner, "CONNECT_TIMEOUT_S", 5.0)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def answer():
        for _ in range(4):
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + b"\xff" * 4096)
            time.sleep(0.5)
            conn.close()

    threading.Thread(target=answer, daemon=True).start()
    address = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    try:
        with pytest.raises(ValueError, match=f"scheduler: .*{address}"):
            run_table("001-table2", out=tmp_path, scheduler=address, **QUICK)
    finally:
        srv.close()
    assert not (tmp_path / "001-table2.csv").exists()


@pytest.mark.slow  # processes and signals: seconds each, run in the slow step
def test_no_worker_left_stops_the_run(tmp_path, monkeypatch):
    """A Dask cluster with no worker (all died): the run stops with DaskWorkersLost after the loss timeout instead of
    waiting forever; the CLI says so in one line (exit 1)."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(_runner, "WORKER_LOSS_TIMEOUT_S", 2.0)
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=":0") as cluster:
        t0 = time.perf_counter()
        with pytest.raises(DaskWorkersLost, match="every Dask worker .* is gone"):
            run_table("001-table2", out=tmp_path, scheduler=cluster.scheduler_address, **QUICK)
        assert time.perf_counter() - t0 < 30


@pytest.mark.slow  # processes and signals: seconds each, run in the slow step
def test_local_workers_die_with_their_main_process(tmp_path):
    """kill -9 of the main process of a --jobs 2 run: its joblib workers exit within seconds (they watch their
    parent) instead of computing for minutes."""
    code = ("from svmref.figures.tables import run_table; "
            f"run_table('001-table2', quick=True, splits=400, jobs=2, out={str(tmp_path)!r}, progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    csv_path = tmp_path / "001-table2.csv"
    t0 = time.time()
    while time.time() - t0 < 90 and not (csv_path.exists() and csv_path.read_text().count("\n") > 3):
        time.sleep(0.3)
    workers = [pid for pid in _children(proc.pid) if "LokyProcess" in _cmdline(pid)]
    assert workers, "the run started no worker"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(os.path.exists(f"/proc/{w}") for w in workers):
        time.sleep(0.2)
    assert not [w for w in workers if os.path.exists(f"/proc/{w}")]


def _children(pid):
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/stat", encoding="utf-8") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except OSError:
            pass
    return out


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return ""


# ------------------------------------------------------------------------------------------------ arguments
@pytest.mark.parametrize("argv, says", [
    (["--splits", "1000000000"], "--splits must be an integer from 1 to 1000"),
    (["--datasets", ","], "--datasets names no data set"),
    (["--resume", "--force"], "--resume and --force exclude each other"),
])
def test_bad_arguments_are_one_line_before_any_work(tmp_path, capsys, argv, says):
    out = tmp_path / "out"
    try:
        rc = table_cli.main(["001-table2", "--quick", "--out", str(out), "--no-progress", *argv])
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2 and says in err and "Traceback" not in err
    assert not (out / "001-table2.csv").exists()


def test_out_that_is_a_file_or_cannot_be_created(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    for out, says in ((f, "is a file, not a folder"), (f / "sub", "cannot write there")):
        assert table_cli.main(["001-table2", "--quick", "--out", str(out), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert f"--out {str(out)!r}" in err and says in err and err.count("\n") == 1


def test_a_corrupted_number_names_its_file_and_line(tmp_path, capsys):
    run_table("001-table2", out=tmp_path, **{**QUICK, "splits": 2})
    path = tmp_path / "001-table2.csv"
    lines = path.read_text().splitlines()
    cells = lines[2].split(",")
    cells[3] = "12.3.4"  # error_pct
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"{path}:3: column 'error_pct' holds '12.3.4', not a number"):
        read_rows(path)
    rc = table_cli.main(["001-table2", "--quick", "--splits", "2", "--datasets", "square", "--out", str(tmp_path),
                         "--resume", "--no-progress"])
    assert rc == 2 and f"{path}:3" in capsys.readouterr().err


def test_an_interruption_names_the_file_of_its_phase(tmp_path):
    """Ctrl-C during the model selection keeps the CV scores in NAME.cv.csv (not NAME.csv), and says so."""
    kw = {"quick": True, "splits": 1, "datasets": ["heart"], "progress": False}
    with pytest.raises(TableInterrupted) as exc:
        run_table("000-table2", out=tmp_path, _interrupt_after=2, **kw)
    assert exc.value.phase == "model selection" and exc.value.path.name == "000-table2.cv.csv"
    with pytest.raises(TableInterrupted) as exc:
        run_table("000-table2", out=tmp_path, resume=True, _interrupt_after=7, **kw)
    assert exc.value.phase == "splits" and exc.value.path.name == "000-table2.csv"


def test_each_phase_has_a_bar_whose_total_does_not_change(tmp_path, monkeypatch):
    """The progress bar of a phase is created with that phase's work and ends at 100 % (before, one bar's total
    grew between phases: 100 % of the selection, then 67 %)."""
    seen = []

    class Bar:
        def __init__(self, desc):
            self.desc, self.total, self.n, self.totals = desc, 0, 0, []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            seen.append(self)
            return False

        def refresh(self):
            self.totals.append(self.total)

        def update(self, n=1):
            self.n += n

    monkeypatch.setattr(_runner, "_progress_bar", lambda desc, progress: Bar(desc))
    run_table("000-table2", out=tmp_path, quick=True, splits=1, datasets=["heart"], progress=True)
    assert [b.desc for b in seen] == ["000-table2 (model selection)", "000-table2 (splits)"]
    for b in seen:
        assert len(b.totals) == 1 and b.n == b.total > 0


@pytest.mark.slow  # processes and signals: seconds each, run in the slow step
@pytest.mark.parametrize("fmt", ["--json", "--no-progress"])
def test_output_into_a_closed_pipe_exits_quietly(tmp_path, fmt):
    """`svmref table ... | head -1` where the reader is gone before the table is printed (`| true`: it never reads),
    for the JSON summary (larger than the pipe's buffer: the write fails inside print) and the Markdown table
    (smaller: it fails when stdout is flushed): exit status 1 and no BrokenPipeError traceback."""
    cmd = (f"{sys.executable} -m svmref.cli table 001-table2 --quick --splits 1 --datasets square "
           f"--out {tmp_path} --no-progress {fmt} | true; echo status=${{PIPESTATUS[0]}}")
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
    assert "status=1" in res.stdout, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr


def test_figure_seed_out_of_range_names_seed(capsys):
    from svmref.figures.cli import main

    assert main(["outlier-robustness", "--seed", "-1", "--fast"]) == 2
    assert "--seed must be an integer from 0" in capsys.readouterr().err
