"""The ``svmref`` command never wastes a run.

Every option and output path is checked before any work starts; a user error exits 2 with one line on
standard error naming the option and no traceback; ``svmref verify`` runs each instance in a worker
killed at ``--timeout``, prints rows as they finish, and on Ctrl-C keeps the finished rows (exit 130).
The solvers here are deliberately flawed; the verify tests of the same flaws through the Python API are in
``tests/test_verify.py``.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from svmref.cli import main as svmref_main

USER_SOLVERS = '''
import time

import numpy as np
from sklearn.svm import SVC


def _svc(K, y, C, tol):
    m = SVC(C=C, kernel="precomputed", tol=tol).fit(K, y)
    a = np.zeros(len(y))
    a[m.support_] = np.abs(m.dual_coef_[0])
    return a, float(m.intercept_[0])


def good(K, y, C):
    return _svc(K, y, C, 1e-10)


def near_optimal(K, y, C):
    """LIBSVM's SMO stopped at its default 1e-3."""
    return _svc(K, y, C, 1e-3)


def hanging(K, y, C):
    """Never returns; leaves a marker file first, so a test can tell whether any instance ran."""
    open(__file__ + ".called", "w").close()
    while True:
        time.sleep(0.01)


def slow_after_first(K, y, C):
    """Answers the first instance, then hangs: for Ctrl-C."""
    if len(y) != 20:
        while True:
            time.sleep(0.01)
    return _svc(K, y, C, 1e-10)


def wrong_signature(K, y):
    return _svc(K, y, 1.0, 1e-10)


def three_tuple(K, y, C):
    return (*_svc(K, y, C, 1e-10), None)
'''

FIGURE = "outlier-robustness"


@pytest.fixture
def solvers(tmp_path):
    p = tmp_path / "user_solvers.py"
    p.write_text(USER_SOLVERS)
    return p


def _run(argv, capsys):
    code = svmref_main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line_error(err: str, option: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert option in lines[0] and "error" in lines[0] and "Traceback" not in err, err


# ------------------------------------------------------------------------------ verify: usage errors


@pytest.mark.parametrize("extra, option", [
    (["--json", "/proc/no/such/dir/out.json"], "--json"),
    (["--json", "{tmp}"], "--json"),              # a directory
    (["--timeout", "0"], "--timeout"),
    (["--timeout", "-3"], "--timeout"),
    (["--timeout", "nan"], "--timeout"),
    (["--timeout", "soon"], "--timeout"),
    (["--tol", "0"], "--tol"),
    (["--tol", "1.5"], "--tol"),
    (["--tol", "inf"], "--tol"),
    (["--n", "2"], "--n"),
    (["--n", "3.5"], "--n"),
    (["--n", "100", "--suite", "real"], "--n"),
    (["--n", "10000000"], "--n"),                 # a 10^7 x 10^7 kernel cannot fit
    (["--data", "{tmp}/missing.csv"], "--data"),
    (["--C", "2"], "--C"),
])
def test_verify_usage_errors_exit_2_before_any_instance_runs(extra, option, solvers, tmp_path, capsys):
    extra = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    # the hanging solver proves that nothing ran: it leaves a marker file the moment it is called
    code, out, err = _run(["verify", f"{solvers}:hanging", "-f", "l1_svm", "--timeout", "30", *extra], capsys)
    assert code == 2, (out, err)
    _one_line_error(err, option)
    assert out == "" and not Path(f"{solvers}.called").exists()


def test_verify_wrong_signature_is_one_usage_error_with_the_expected_call(solvers, capsys):
    code, out, err = _run(["verify", f"{solvers}:wrong_signature", "-f", "l1_svm"], capsys)
    assert code == 2 and out == ""
    _one_line_error(err, "cannot be called as f(K, y, C, **options)")
    assert "wrong_signature(K, y)" in err


@pytest.mark.parametrize("content, words", [
    ("a,b\n1,x\n", "not numeric"),
    ("1,2,1\n3,4\n", "different numbers of columns"),
    ("1\n2\n3\n4\n", "at least one feature column"),
    ("1,1\n2,-1\n", "at least 4 rows"),
    ("1,0\n2,1\n3,2\n4,1\n5,0\n", "two classes"),
])
def test_verify_data_file_errors_name_the_option(content, words, solvers, tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    code, _, err = _run(["verify", f"{solvers}:good", "-f", "l1_svm", "--data", str(p)], capsys)
    assert code == 2
    _one_line_error(err, "--data")
    assert words in err


# ------------------------------------------------------------------------------ verify: runs


def test_verify_near_optimal_solver_is_told_the_tolerance_it_would_pass_at(solvers, tmp_path, capsys):
    js = tmp_path / "sub" / "out.json"  # a missing folder is created
    code, out, _ = _run(["verify", f"{solvers}:near_optimal", "-f", "l1_svm", "--json", str(js)], capsys)
    assert code == 1
    assert "would pass at --tol" in out and "the whole suite would pass at --tol" in out
    data = json.loads(js.read_text())
    assert data["summary"]["would_pass_at_tol"] is not None
    failed = [r for r in data["records"] if r["passed"] is False]
    assert failed and all(r["would_pass_at_tol"] for r in failed)
    # and it does pass there
    t = f"{data['summary']['would_pass_at_tol']:.0e}"
    code, out, _ = _run(["verify", f"{solvers}:near_optimal", "-f", "l1_svm", "--tol", t], capsys)
    assert code == 0, out


def test_verify_hanging_solver_times_out_and_exits_1(solvers, capsys):
    code, out, _ = _run(["verify", f"{solvers}:hanging", "-f", "l1_svm", "--timeout", "0.3"], capsys)
    assert code == 1 and Path(f"{solvers}.called").exists()  # it ran, and every instance came back as a timeout
    assert out.count("timeout ") >= 3 and "no answer within 0.3 s (--timeout)" in out
    assert "3 timed out" in out and "verdict: FAIL" in out


def test_verify_three_tuple_says_what_it_got(solvers, capsys):
    code, out, _ = _run(["verify", f"{solvers}:three_tuple", "-f", "l1_svm"], capsys)
    assert code == 1 and "got a tuple of length 3 (ndarray of shape (20,), float, NoneType)" in out


def test_verify_n_and_data_run(solvers, tmp_path, capsys):
    code, out, _ = _run(["verify", f"{solvers}:good", "-f", "l1_svm", "--n", "40"], capsys)
    assert code == 0 and "q-linear-20@40" in out
    rows = "\n".join(f"{i % 7 / 7:.3f},{(i * 3) % 11 / 11:.3f},{'pos' if i % 2 else 'neg'}" for i in range(30))
    p = tmp_path / "mine.csv"
    p.write_text("x1,x2,label\n" + rows.replace("pos", "1").replace("neg", "0") + "\n")
    code, out, _ = _run(["verify", f"{solvers}:good", "-f", "l1_svm", "--data", str(p), "--C", "3"], capsys)
    assert code == 0 and "data-mine" in out, out


def test_verify_says_what_it_will_run_and_counts_the_instances_on_its_bar(capsys):
    """On stderr (forced: stderr is no terminal here): the number of instances first, then a bar that ends at 3/3;
    --no-progress leaves stderr as it was. The rows stay on stdout."""
    argv = ["verify", "svmref.solvers.smo:l1_svm", "-f", "l1_svm", "--suite", "quick"]
    code, out, err = _run([*argv, "--progress"], capsys)
    assert code == 0 and "svmref verify: 3 instance(s) of suite 'quick' for l1_svm" in err
    assert "| 3/3 [" in err and "q-linear-20" in out and "| 3/3 [" not in out
    code, out, err = _run([*argv, "--no-progress"], capsys)
    assert code == 0 and "3 instance(s)" not in err and "/3 [" not in err


@pytest.mark.slow  # processes and signals: seconds each, run in the slow step
def test_verify_ctrl_c_prints_the_finished_rows_and_a_partial_verdict(solvers, tmp_path):
    """A real SIGINT to a real ``svmref verify`` process: exit 130, the finished row, no traceback."""
    cmd = [sys.executable, "-m", "svmref.cli", "verify", f"{solvers}:slow_after_first", "-f", "l1_svm",
           "--timeout", "60", "--json", str(tmp_path / "partial.json")]
    # a shell starts background jobs with SIGINT ignored, and an ignored signal is inherited: give the command
    # the default disposition, so that Python turns Ctrl-C into KeyboardInterrupt there as in a terminal
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    deadline = time.time() + 60
    while time.time() < deadline:  # wait for the first row (q-linear-20, answered), then interrupt
        line = proc.stdout.readline()
        lines.append(line)
        if "q-linear-20" in line:
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    out = "".join(lines) + out
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err, err
    assert "q-linear-20" in out and "interrupted (Ctrl-C) after 1 of 3" in out and "verdict: PASS (partial)" in out
    data = json.loads((tmp_path / "partial.json").read_text())
    assert data["interrupted"] is True and len(data["records"]) == 1


# ------------------------------------------------------------------------------ figure


@pytest.mark.parametrize("extra, option", [
    (["--dpi", "0"], "--dpi"),
    (["--dpi", "-72"], "--dpi"),
    (["--dpi", "many"], "--dpi"),
    (["--out", "/proc/no/such/dir/f.png"], "--out"),
    (["--out", "f.xyz"], "--out"),
    (["--out", "f.png", "--format", "pdf"], "--out"),
    (["--format", "bmpx"], "--format"),
    (["--seed", "x"], "--seed"),
])
def test_figure_usage_errors_exit_2_before_computing(extra, option, tmp_path, capsys, monkeypatch):
    from svmref import figures

    def boom(*a, **k):  # nothing may be computed before the options are checked
        raise AssertionError("computed before the options were checked")

    monkeypatch.setattr(figures.get(FIGURE), "compute", boom)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["figure", FIGURE, *extra], capsys)
    assert code == 2, (out, err)
    _one_line_error(err, option)


@pytest.fixture
def cheap_figure(monkeypatch):
    """The figure's plot on a stand-in result: these tests are about files, not the figure."""
    import matplotlib.pyplot as plt

    from svmref import figures

    module = figures.get(FIGURE)

    class Result:
        def report(self):
            return "numbers"

    def plot(result):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, 1])
        return fig

    monkeypatch.setattr(module, "compute", lambda **k: Result())
    monkeypatch.setattr(module, "plot", plot)
    return module


MAGIC = {"png": b"\x89PNG", "pdf": b"%PDF", "jpg": b"\xff\xd8\xff", "svg": b"<?xml", "tif": b"II*\x00"}


@pytest.mark.parametrize("name, fmt", [("f.png", "png"), ("f.pdf", "pdf"), ("f.jpg", "jpg"), ("f.svg", "svg"),
                                       ("f.tif", "tif")])
def test_figure_out_honours_the_suffix(name, fmt, cheap_figure, tmp_path, capsys):
    out = tmp_path / name
    code, printed, _ = _run(["figure", FIGURE, "--out", str(out)], capsys)
    assert code == 0 and f"wrote {out}" in printed
    assert out.read_bytes().startswith(MAGIC[fmt])
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_figure_out_directory_gets_the_default_name_inside(cheap_figure, tmp_path, capsys):
    d = tmp_path / "figs"
    d.mkdir()
    code, printed, _ = _run(["figure", FIGURE, "--out", str(d), "--format", "pdf"], capsys)
    assert code == 0
    assert (d / f"{FIGURE}.pdf").read_bytes()[:4] == b"%PDF"
    assert not (tmp_path / "figs.pdf").exists() and not (tmp_path / "figs.png").exists()


def test_figure_out_in_a_new_folder_is_created(cheap_figure, tmp_path, capsys):
    out = tmp_path / "a" / "b" / "f.png"
    code, _, _ = _run(["figure", FIGURE, "--out", str(out), "--dpi", "50"], capsys)
    assert code == 0 and out.read_bytes()[:4] == b"\x89PNG"


# ------------------------------------------------------------------------------ svmref itself


def test_svmref_unknown_command_is_one_line_exit_2(capsys):
    code, _, err = _run(["nope"], capsys)
    assert code == 2
    _one_line_error(err, "nope")


def test_svmref_no_command_prints_help(capsys):
    code, out, _ = _run([], capsys)
    assert code == 0 and "verify" in out and "figure" in out


def test_every_subcommand_is_importable():
    import importlib

    from svmref.cli import _SUBCOMMANDS

    for name, (module, _) in _SUBCOMMANDS.items():
        assert hasattr(importlib.import_module(module), "main"), name
    assert Path(__file__).exists()


def _sleeps_then_marks(marker):
    time.sleep(20.0)
    Path(marker).write_text("finished")


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs signal.pthread_kill (POSIX)")
def test_ctrl_c_delivered_to_another_thread_still_stops_the_wait(tmp_path):
    """The operating system may deliver Ctrl-C to any thread of the verify process (BLAS and numba start
    some); a wait blocked in the main thread must still stop while the solver is running, not only once its
    answer (or --timeout) ends the wait: the solver's marker file must not exist yet when Ctrl-C is raised."""
    import threading

    from svmref.verify.worker import Runner

    marker = tmp_path / "finished.txt"
    runner = Runner(_sleeps_then_marks, timeout=60.0)
    if not runner.isolated:
        pytest.skip(reason="no fork on this platform: the worker runs in-process and cannot be interrupted apart")

    def interrupt_from_this_thread():
        time.sleep(0.5)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)   # the C handler runs in this thread

    # pytest run as a background job has SIGINT ignored (inherited from the shell): use Python's own handler here
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    helper = threading.Thread(target=interrupt_from_this_thread)
    helper.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.call((str(marker),), {})
        assert not marker.exists()     # raised during the solve, not after the 20 s answer
    finally:
        helper.join()
        runner.kill()
        signal.signal(signal.SIGINT, previous)
