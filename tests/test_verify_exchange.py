"""verify for a solver in any language: ``svmref suite export DIR``, answers written to ``DIR/answers``, and
``svmref verify --answers DIR`` (svmref.verify.exchange).

The writer here uses NumPy only (it reads the exported files, solves, writes the answer files), as a program in
another language would; the C program of docs/verify.md is compiled and run where a C compiler is found.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from svmref.verify.exchange import check_answers, export, load_exported

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args):
    """``svmref ARGS`` in this process: its exit status and what it printed, as a finished process would give them."""
    import contextlib
    import io
    from types import SimpleNamespace

    from svmref.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def load_quick(formulation):
    from svmref import verify

    return verify.suite("quick", formulation)


def _ls_svm_writer(directory: Path, skip=(), as_text=(), scale=1.0):
    """A NumPy-only program: reads each exported instance's K, y and C, solves the LS-SVM system (000 eq. (7)),
    writes answers/NAME.npz (or NAME.txt)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    for e in manifest["instances"]:
        if e["name"] in skip:
            continue
        with np.load(directory / f"{e['name']}.npz") as z:
            K, y = z["K"], z["y"]
        N, C = len(y), e["hyper"]["C"]
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = A[1:, 0] = y
        A[1:, 1:] = np.outer(y, y) * K + np.eye(N) / C
        sol = np.linalg.solve(A, np.r_[0.0, np.ones(N)])
        alpha, b = scale * sol[1:], float(sol[0])
        if e["name"] in as_text:
            np.savetxt(directory / "answers" / f"{e['name']}.txt", np.r_[alpha, b])
        else:
            np.savez(directory / "answers" / f"{e['name']}.npz", alpha=alpha, b=b)


def test_answers_written_by_a_numpy_only_program_are_judged_and_missing_ones_named(tmp_path):
    run = _cli("suite", "export", str(tmp_path / "out"), "-f", "ls_svm")
    assert run.returncode == 0, run.stderr
    d = tmp_path / "out"
    _ls_svm_writer(d, skip=("q-poly-24",), as_text=("q-rbf-30",))
    res = _cli("verify", "--answers", str(d), "--json", str(tmp_path / "r.json"))
    assert res.returncode == 0, res.stdout + res.stderr
    records = json.loads((tmp_path / "r.json").read_text())["records"]
    assert [(r["instance"], r["verdict"]) for r in records] == [("q-linear-20", "pass"), ("q-rbf-30", "pass")]
    assert "q-poly-24: no answer" in res.stdout and "q-poly-24: no answer" in res.stderr


def test_a_wrong_answer_fails_with_verifys_words(tmp_path):
    export(tmp_path, "ls_svm", [i for i in load_quick("ls_svm")][:1])
    _ls_svm_writer(tmp_path, scale=2.0)
    report = check_answers(tmp_path)
    assert report[0].verdict == "fail" and any("alpha / 2" in h for h in report[0].hints), report.table()


def test_an_answer_file_of_the_wrong_length_is_named(tmp_path):
    export(tmp_path, "l1_svm", load_quick("l1_svm")[:1])
    (tmp_path / "answers" / "q-linear-20.txt").write_text("0.5\n0.25\n")
    report = check_answers(tmp_path)
    assert not report.records
    assert re.search(r"q-linear-20: unusable answer file: .* has 2 numbers; an answer to l1_svm on q-linear-20 has 21",
                     report.skipped[0]), report.skipped


def test_the_text_instance_file_holds_what_the_manifest_says(tmp_path):
    export(tmp_path, "svr", load_quick("svr")[:1])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    e = manifest["instances"][0]
    nums = np.array((tmp_path / f"{e['name']}.txt").read_text().split(), dtype=float)
    N, d, has_K = (int(v) for v in nums[:3])
    hyper = nums[3:3 + len(e["hyper_order"])]
    rest = nums[3 + len(e["hyper_order"]):]
    with np.load(tmp_path / f"{e['name']}.npz") as z:
        assert (N, d, bool(has_K)) == (e["N"], e["d"], e["has_K"]) == (len(z["y"]), z["X"].shape[1], True)
        assert list(hyper) == [e["hyper"][k] for k in e["hyper_order"]] and e["hyper_order"] == ["C", "epsilon"]
        assert np.array_equal(rest[:N], z["y"])
        assert np.array_equal(rest[N:N + N * N].reshape(N, N), z["K"])
        assert np.array_equal(rest[N + N * N:].reshape(N, d), z["X"])
        K = z["K"]
    formulation, insts = load_exported(tmp_path)
    assert formulation == "svr" and np.array_equal(insts[0].K, K)


def _c_program() -> str:
    text = (ROOT / "docs" / "verify.md").read_text(encoding="utf-8")
    m = re.search(r"```c\n(/\* smo\.c:.*?)```", text, re.S)
    assert m, "docs/verify.md has no C program block starting with /* smo.c:"
    return m.group(1)


def test_the_c_program_of_the_docs_writes_answers_that_pass(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip(reason="no C compiler (cc or gcc) on this machine: the C program of docs/verify.md is not compiled")
    src = tmp_path / "smo.c"
    src.write_text(_c_program())
    build = subprocess.run([cc, "-O2", "-o", str(tmp_path / "smo"), str(src), "-lm"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    d = tmp_path / "out"
    assert _cli("suite", "export", str(d), "-f", "l1_svm").returncode == 0
    for e in json.loads((d / "manifest.json").read_text())["instances"]:
        assert subprocess.run([str(tmp_path / "smo"), str(d), e["name"]], timeout=300).returncode == 0
    res = _cli("verify", "--answers", str(d))
    assert res.returncode == 0 and "3/3 passed" in res.stdout, res.stdout + res.stderr


def test_usage_errors_of_export_and_answers(tmp_path):
    assert _cli("suite", "export", str(tmp_path / "x"), "-f", "nope").returncode == 2
    res = _cli("verify", "--answers", str(tmp_path / "missing"))
    assert res.returncode == 2 and "has no manifest.json" in res.stderr
    export(tmp_path / "ok", "l1_svm", load_quick("l1_svm")[:1])
    res = _cli("verify", "--answers", str(tmp_path / "ok"), "-f", "l1_svm")
    assert res.returncode == 2 and "reads the formulation and the instances from DIR/manifest.json" in res.stderr
