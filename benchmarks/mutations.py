"""A mutation run: put a wrong bound, sign or factor into a cvxpy model, into the certificate or into verify's
residuals, on a scratch copy of the tree, and run the tests that guard it. Every mutation must be caught (a test
fails); the table printed at the end says which test caught it.

    python benchmarks/mutations.py [--only NAME ...] [--tests PATH ...] [--keep]

The scratch copy is made with ``git ls-files`` (the working tree's versions of the tracked files, and the
untracked ones git does not ignore) into a temporary folder, with links ``svmref/{formulations, solvers, verify,
figures}`` (the installed layout) so that ``import svmref.formulations`` resolves to the copy (``PYTHONPATH``, ahead
of the editable install); the tests run there with ``python -m pytest -x -q``. Nothing in the working tree is changed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_TESTS = ("tests/test_model_as_written.py", "tests/test_reference_model.py", "tests/test_formulations.py")
VERIFY_TESTS = ("tests/test_verify_labels.py", "tests/test_verify.py")
SOLVER_TESTS = ("tests/test_solver_labels.py",)


@dataclass(frozen=True)
class Mutation:
    """``old`` replaced by ``new`` (exactly once) in ``path``; ``tests`` are the files run against it."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...] = MODEL_TESTS


MUTATIONS = (
    # the cvxpy models (000, 003, 001, 004 and the derived duals)
    Mutation("least_1norm dual box [-C, C] -> [0, C]", "formulations/least_1norm.py",
             'alpha >= -P["C"], alpha <= P["C"]]', 'alpha >= 0, alpha <= P["C"]]'),
    Mutation("l1_svm primal C -> 2C", "formulations/svm.py",
             'cp.Minimize(0.5 * cp.sum_squares(W) + P["C"] * cp.sum(xi))',
             'cp.Minimize(0.5 * cp.sum_squares(W) + 2 * P["C"] * cp.sum(xi))'),
    Mutation("l1_svm dual upper bound dropped", "formulations/svm.py",
             'constraints = [y @ alpha == 0, alpha >= 0, alpha <= P["C"]]',
             'constraints = [y @ alpha == 0, alpha >= 0, alpha <= 2 * P["C"]]'),
    Mutation("l2_svm dual 1/(2C) -> 1/C", "formulations/svm.py",
             'cp.psd_wrap(Q)) + 0.5 * P["C_inv"] * cp.sum_squares(alpha)',
             'cp.psd_wrap(Q)) + P["C_inv"] * cp.sum_squares(alpha)'),
    Mutation("ls_svm primal C/2 -> C", "formulations/ls_svm.py",
             'objective = cp.Minimize(0.5 * cp.sum_squares(W) + 0.5 * P["C"] * cp.sum_squares(xi))\n'
             '        constraints = [cp.multiply(y, F.Phi @ W + b) == 1 - xi]',
             'objective = cp.Minimize(0.5 * cp.sum_squares(W) + P["C"] * cp.sum_squares(xi))\n'
             '        constraints = [cp.multiply(y, F.Phi @ W + b) == 1 - xi]'),
    Mutation("ls_svm primal constraint sign", "formulations/ls_svm.py",
             "constraints = [cp.multiply(y, F.Phi @ W + b) == 1 - xi]",
             "constraints = [cp.multiply(y, F.Phi @ W + b) == 1 + xi]"),
    Mutation("rls primal gamma -> 2 gamma", "formulations/rls.py",
             '/ m + P["gamma"] * cp.sum_squares(F.Phi.T @ c))', '/ m + 2 * P["gamma"] * cp.sum_squares(F.Phi.T @ c))'),
    Mutation("sparse_ls_svm primal weights dropped", "formulations/sparse_ls_svm.py",
             'cp.Minimize(0.5 * cp.sum(cp.multiply(P["lam"], cp.square(alpha)))',
             'cp.Minimize(0.5 * cp.sum(cp.square(alpha))'),
    Mutation("support_features primal mu|a| dropped", "formulations/support_features.py",
             'cp.sum_squares(a) + P["mu"] * cp.norm1(a) + P["C"]', 'cp.sum_squares(a) + P["C"]'),
    Mutation("support_features qp box C -> 2C", "formulations/support_features.py",
             'constraints = [gamma >= cp.abs(w) - P["mu"], lam >= 0, lam <= P["C"], y @ lam == 0]',
             'constraints = [gamma >= cp.abs(w) - P["mu"], lam >= 0, lam <= 2 * P["C"], y @ lam == 0]'),
    Mutation("svr dual epsilon sign", "formulations/svr.py",
             "+ eps * cp.sum(ap + am) - y @ d)", "- eps * cp.sum(ap + am) - y @ d)"),
    # the certificate
    Mutation("certificate: hinge loss C -> 2C", "formulations/_certify.py",
             'return C * float(np.sum(np.maximum(r, 0.0)))', 'return 2 * C * float(np.sum(np.maximum(r, 0.0)))'),
    Mutation("certificate: dual quadratic 1/2 -> 1", "formulations/_certify.py",
             "d = 0.5 * float(v @ f) - float(np.sum(a))", "d = float(v @ f) - float(np.sum(a))"),
    Mutation("certificate: Least 1-Norm box [-C, C] -> [0, C]", "formulations/_certify.py",
             'lo = -C if kind == "l1n" else 0.0', "lo = 0.0"),
    Mutation("certificate: gap relative to max(1, |d|)", "formulations/_certify.py",
             '"rel_gap": _rel(gap, d),\n           "eq_feasibility": eq_res, "bound_feasibility": bound_res, "kkt": kkt',
             '"rel_gap": _rel(gap, max(1.0, abs(d))),\n           "eq_feasibility": eq_res, '
             '"bound_feasibility": bound_res, "kkt": kkt'),
    Mutation("certificate: LS direct system 1/C -> 2/C", "formulations/ls_svm.py",
             "A[np.arange(1, N + 1), np.arange(1, N + 1)] += 1.0 / C", "A[np.arange(1, N + 1), np.arange(1, N + 1)] += 2.0 / C"),
    Mutation("certificate: SFM a from (8) factor", "formulations/_certify.py",
             "return np.sign(w) * np.maximum(np.abs(w) - mu, 0.0) / (2.0 * (1.0 - mu))",
             "return np.sign(w) * np.maximum(np.abs(w) - mu, 0.0) / (1.0 - mu)"),
    # verify's residuals and comparisons (a pass at T must mean every error <= T)
    Mutation("verify: box stationarity / 10", "verify/kkt.py",
             'vals["stationarity"] = iv.rho\n    where["stationarity"] = (f"no b puts every alpha_i within',
             'vals["stationarity"] = iv.rho / 10\n    where["stationarity"] = (f"no b puts every alpha_i within',
             VERIFY_TESTS),
    Mutation("verify: natural residual bounds swapped", "verify/kkt.py",
             "return np.minimum(np.maximum(s, 0.0) / unit, d_lo) + np.minimum(np.maximum(-s, 0.0) / unit, d_hi)",
             "return np.minimum(np.maximum(s, 0.0) / unit, d_hi) + np.minimum(np.maximum(-s, 0.0) / unit, d_lo)",
             VERIFY_TESTS),
    Mutation("verify: decision values held to sqrt(T)", "verify/evaluation.py",
             '"decision_gap": lambda t: t,', '"decision_gap": lambda t: t ** 0.5,', VERIFY_TESTS),
    Mutation("verify: decision gap / 10", "verify/evaluation.py",
             "dg = max(float(np.max(np.abs(d + shift))), float(np.max(np.abs(d)))) / unit if d.size else 0.0",
             "dg = max(float(np.max(np.abs(d + shift))), float(np.max(np.abs(d)))) / (10 * unit) if d.size else 0.0",
             VERIFY_TESTS),
    Mutation("verify: objective gap relative to max(1, |ref|)", "verify/evaluation.py",
             "og = abs(r.objective - ref.objective) / max(abs(ref.objective), float(np.finfo(float).tiny))",
             "og = abs(r.objective - ref.objective) / max(abs(ref.objective), 1.0)", VERIFY_TESTS),
    # the fast solvers' certificates and labels
    Mutation("solvers: Fenchel-Young excess 1/2 -> 1", "solvers/_smo_common.py",
             "fy = (a - beta) * (xi - 0.5 * shift * (a + beta))", "fy = (a - beta) * (xi - shift * (a + beta))",
             SOLVER_TESTS),
    Mutation("solvers: optimal at 10 gap_tol", "solvers/_result.py",
             "return bool(np.isfinite(gap) and np.isfinite(floor) and gap <= gap_tol * scale)",
             "return bool(np.isfinite(gap) and np.isfinite(floor) and gap <= 10 * gap_tol * scale)", SOLVER_TESTS),
    Mutation("solvers: SMO gap relative to max(1, |D|)", "solvers/smo.py",
             "scale = max(0.0, -objective - floor)", "scale = max(1.0, -objective - floor)", SOLVER_TESTS),
    Mutation("solvers: SMO tight tol without its margin", "solvers/smo.py",
             "TIGHT_MARGIN = 0.1", "TIGHT_MARGIN = 1.0", SOLVER_TESTS),
    Mutation("solvers: support features without its polish", "solvers/_sfm_model.py",
             "POLISH_TOL = 1e-5", "POLISH_TOL = 0.0", SOLVER_TESTS),
)


def scratch_copy() -> Path:
    """The working tree's files (tracked, and untracked not ignored) copied to a temporary folder, with the
    package layout that ``PYTHONPATH`` needs."""
    tmp = Path(tempfile.mkdtemp(prefix="svmref-mut-"))
    tree = tmp / "tree"
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            dst = tree / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    for pkg in ("formulations", "solvers", "verify", "figures"):  # the installed layout: svmref.<pkg>
        os.symlink(tree / pkg, tree / "svmref" / pkg)
    return tmp


def run_tests(tmp: Path, tests) -> tuple[bool, str, float]:
    """``(failed, first failing test, seconds)`` of the tests on the copy."""
    env = dict(os.environ, PYTHONPATH=str(tmp / "tree"), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                         cwd=tmp / "tree", env=env, capture_output=True, text=True)
    first = next((ln.split(" ")[1] for ln in out.stdout.splitlines() if ln.startswith("FAILED ")), "")
    return out.returncode != 0, first, time.perf_counter() - t0


def apply(tmp: Path, m: Mutation) -> str:
    """Apply ``m`` to the copy; returns the original text (to restore)."""
    path = tmp / "tree" / m.path
    text = path.read_text(encoding="utf-8")
    if text.count(m.old) != 1:
        raise SystemExit(f"mutation {m.name!r}: the text to replace occurs {text.count(m.old)} times in {m.path}")
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="run only mutations whose name contains one of these")
    ap.add_argument("--tests", nargs="*", default=None, help="test files to run instead of each mutation's own")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or any(s in m.name for s in args.only)]
    tmp = scratch_copy()
    try:
        failed, first, sec = run_tests(tmp, args.tests or MODEL_TESTS)
        print(f"unmutated copy: {'FAILS (' + first + ')' if failed else 'passes'} ({sec:.0f} s)", flush=True)
        if failed:
            return 2
        missed = 0
        for m in chosen:
            original = apply(tmp, m)
            caught, first, sec = run_tests(tmp, args.tests or m.tests)
            (tmp / "tree" / m.path).write_text(original, encoding="utf-8")
            missed += not caught
            print(f"{'caught' if caught else 'MISSED'}  {m.name:50s} {sec:5.0f} s  {first}", flush=True)
        print(f"{len(chosen) - missed} of {len(chosen)} mutations caught")
        return 1 if missed else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
