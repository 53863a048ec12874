"""Tests of ``svmref.testing``: verify inside a user's own test suite.

Part 1 runs the example project of docs/testing.md (``docs/examples/ci_example``) as its user would, with
``python -m pytest`` in a copy of it, once per solver of its ``my_solver.py``: the exact solver passes every test;
the solver with the bias bug fails and the message says "b is wrong"; the solver that shrinks alpha by 1 % from
C = 1e3 on passes the standard suite (C <= 100 there) and is caught by the hypothesis strategy within hypothesis'
default budget of 100 examples, shrunk to a small instance that is kept in ``svm_cases/last_failure.json``.

Part 2 holds each function of ``svmref.testing`` to its contract: what ``assert_solves``, ``check_instance`` and
``parametrize_solver`` return, raise and say; the JSON round trip of a kept case; the errors on bad input; that
``svmref.testing`` imports neither pytest nor hypothesis; and that the strategies draw instances verify accepts, with
every hard regime among hypothesis' default 100 examples, and shrink to the smallest instance.
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis.errors import NoSuchExample
from scipy.optimize import linprog

from svmref import verify
from svmref.solvers import REGISTRY, smo
from svmref.testing import (
    Case,
    SolverCheck,
    assert_solves,
    check_instance,
    load_instance,
    parametrize_solver,
    save_instance,
    strategies,
)
from svmref.testing._cases import content_name
from svmref.testing.strategies import instances
from svmref.verify.loader import load_spec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "ci_example"
#: The C from which the example's solve_large_c_bug shrinks alpha (my_solver.LARGE_C, read from the file, not imported).
LARGE_C = float(re.search(r"^LARGE_C = (.+)$", (EXAMPLE / "my_solver.py").read_text(), re.M).group(1))
#: hypothesis' default number of examples: the strategy must find the large-C bug within it.
DEFAULT_EXAMPLES = settings.default.max_examples
#: The smallest N an instance can have (two points, one per class): what a counterexample that does not need more
#: points shrinks to.
MIN_N = 2
#: Above this N a counterexample is not "small" for a bug that any two points with C >= LARGE_C show.
SMALL_N = 4


def exact(K, y, C):
    """L1-SVM, exact: svmref's SMO to a KKT gap of 1e-8 (no tol parameter: verify does not loosen it)."""
    res = smo.l1_svm(K, y, C, tol=1e-8)
    return res.alpha, res.b


def wrong_from_1e3(K, y, C):
    """Exact below C = 1e3, alpha shrunk by 1 % from there on."""
    alpha, b = exact(K, y, C)
    return (0.99 * alpha if C >= 1e3 else alpha), b


# ------------------------------------------------------------------------------------------------------------------
# Part 1: the example project, run as its user runs it
# ------------------------------------------------------------------------------------------------------------------
def _run_example(tmp_path: Path, solver: str, *args: str):
    """``python -m pytest`` in a copy of the example with MY_SOLVER=solver (hypothesis seeded, so a run is repeatable).
    Returns the process, ``{test id: (outcome, message, text)}`` from the JUnit XML (the exception's message; the
    report pytest prints, hypothesis' falsifying example included), and the copy's folder."""
    work = tmp_path / "ci_example"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", "last_failure.json"))
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "MY_SOLVER": solver}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--hypothesis-seed=0", "--tb=short",
                           "--hypothesis-show-statistics", f"--junitxml={junit}", *args],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600)
    cases = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        kid = next(iter(tc), None)
        outcome = kid.tag if kid is not None and kid.tag in ("failure", "error", "skipped") else "passed"
        message, text = ("", "") if kid is None else (kid.get("message") or "", kid.text or "")
        cases[tc.get("name")] = (outcome, _whole_message(message, text), text)
    return proc, cases, work


def _whole_message(message: str, text: str) -> str:
    """The exception's whole message: pytest >= 9.2 cuts the JUnit ``message`` attribute ("[+N more lines; full
    report in element text]"); the report's ``E   `` lines then hold it, each prefixed by four characters."""
    if not re.search(r"\[\+\d+ more lines; full report in element text\]\s*$", message):
        return message
    return "\n".join(line[4:] for line in text.splitlines() if line.startswith("E   ") or line == "E")


@pytest.mark.slow  # 13 s: the example project's whole suite in a subprocess; its failing run below stays in the default
def test_example_exact_solver_passes_every_test(tmp_path):
    proc, cases, work = _run_example(tmp_path, "solve")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    skipped = {k: v for k, v in cases.items() if v[0] == "skipped"}
    # the one instance verify does not judge: the MLP kernel, which is not PSD (a refusal is the right answer)
    assert list(skipped) == ["test_adversarial[a-mlp-not-psd]"] and "not convex" in skipped["test_adversarial[a-mlp-not-psd]"][1]
    passed = [k for k, v in cases.items() if v[0] == "passed"]
    kept = [f"test_kept_cases[{load_instance(p).name}]" for p in sorted((EXAMPLE / "svm_cases").glob("*.json"))]
    assert kept and {"test_standard_suite", "test_generated_instances", *kept} <= set(passed), cases
    assert len(passed) == len(cases) - 1
    assert not (work / "svm_cases" / "last_failure.json").exists()  # nothing failed, nothing kept


def test_example_bias_bug_fails_with_b_is_wrong(tmp_path):
    """(The generated test is left out here: it fails too, with "b is wrong", but shrinking takes most of a minute.)"""
    proc, cases, _ = _run_example(tmp_path, "solve_bias_bug", "-k", "not generated")
    assert proc.returncode == 1, proc.stdout[-5000:]
    outcome, message, _ = cases["test_standard_suite"]
    assert outcome == "failure"
    assert "does not solve l1_svm on 6 of 6 instance(s) of suite 'standard'" in message
    assert message.count("\n    - b is wrong for the answer's own alpha") == 6, message
    assert message.count("over every support vector") == 6
    assert message.count("bounded ones included: average over the free alpha_i (strictly inside the box) only") == 6
    assert cases["test_adversarial[a-C-1e-4]"][0] == "failure" and "b is wrong" in cases["test_adversarial[a-C-1e-4]"][1]


def _generate_phase(stdout: str) -> tuple[int, int]:
    """(passing, failing) examples of the generate phase of test_generated_instances (--hypothesis-show-statistics)."""
    m = re.search(r"test_generated_instances:\s+- during generate phase.*?- (\d+) passing(?: examples?)?, (\d+) failing",
                  stdout, re.S)   # hypothesis' two wordings: "3 passing examples, 1 failing" and "3 passing, 1 failing"
    assert m, stdout[-3000:]
    return int(m.group(1)), int(m.group(2))


@pytest.mark.slow  # 20 s: hypothesis searches and shrinks in a subprocess (the strategy's own tests stay in the default)
def test_example_large_c_bug_is_found_by_the_strategy_and_shrunk(tmp_path):
    proc, cases, work = _run_example(tmp_path, "solve_large_c_bug")
    assert proc.returncode == 1, proc.stdout[-5000:]
    assert cases["test_standard_suite"][0] == "passed"  # C <= 100 in the standard suite: the bug does not show
    outcome, message, text = cases["test_generated_instances"]
    assert outcome == "failure" and "does not solve l1_svm on instance" in message
    assert "Falsifying example" in text or "Failing test case" in text, text[-2000:]   # hypothesis' two wordings
    passing, failing = _generate_phase(proc.stdout)
    assert failing >= 1 and passing + failing <= DEFAULT_EXAMPLES  # found within the default budget
    shrunk = load_instance(work / "svm_cases" / "last_failure.json")  # the last example hypothesis ran: the shrunk one
    print(f"large-C bug: found after {passing} passing example(s); shrunk to N = {shrunk.N}, C = {shrunk.hyper['C']:g}, "
          f"{shrunk.kernel} kernel, regime {shrunk.regime}")
    assert f"instance {shrunk.name}: N = {shrunk.N}," in message and repr(shrunk) in text
    assert MIN_N <= shrunk.N <= SMALL_N and LARGE_C <= shrunk.hyper["C"] < 10 * LARGE_C
    with pytest.raises(AssertionError):  # the kept case fails the buggy solver again, and the exact one passes it
        check_instance(wrong_from_1e3, shrunk)
    assert check_instance(exact, shrunk).passed is True


def test_example_is_not_collected_by_the_projects_own_run():
    """The example's tests fail on purpose for two of its solvers: only the tests above run them. The project's run
    (``python -m pytest``, no arguments) collects ``testpaths`` only, and the example is outside them."""
    testpaths = re.search(r"^testpaths = (.+)$", (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    paths = [ROOT / p for p in json.loads(testpaths)]
    assert paths and not any(EXAMPLE.is_relative_to(p) for p in paths), paths


# ------------------------------------------------------------------------------------------------------------------
# Part 2: each function of svmref.testing
# ------------------------------------------------------------------------------------------------------------------
def _case(C=1.0, name="two-points", **kw) -> Case:
    """Two points, one per class, linear kernel: the smallest instance there is."""
    return Case(name, np.array([[0.5], [-0.5]]), np.array([1.0, -1.0]), np.array([[0.125], [0.75]]), "linear", {},
                {"C": C}, formulation="l1_svm", **kw)


def test_assert_solves_returns_verify_records():
    records = assert_solves(exact, "l1_svm", suite="quick")
    assert [r.instance for r in records] == [i.name for i in verify.suite("quick", "l1_svm")]
    assert all(isinstance(r, verify.Record) and r.verdict == "pass" for r in records)


def test_assert_solves_reports_only_the_failing_instances_with_verify_advice():
    with pytest.raises(AssertionError) as exc:
        assert_solves(wrong_from_1e3, "l1_svm", suite="adversarial")
    msg = str(exc.value)
    report = verify.check(wrong_from_1e3, "l1_svm", "adversarial")  # the same run, to know which fail
    failing = [r.instance for r in report.failures]
    assert failing and len(failing) < len(report)
    assert msg.startswith(f"{report.records[0].solver} does not solve l1_svm on {len(failing)} of {len(report)} "
                          "instance(s) of suite 'adversarial' at tol = 1e-06")
    rows = [line.split()[2] for line in msg.splitlines() if line.startswith("l1_svm ")]
    assert rows == failing  # the failing rows, and only those
    assert msg.count("    would pass at --tol") + msg.count("would not pass at any") == len(failing)
    assert "- not optimal" in msg and "verdict: FAIL" in msg


def test_assert_solves_passes_options_to_the_solver_and_the_tolerance_to_verify():
    def shifted(K, y, C, shift):
        alpha, b = exact(K, y, C)
        return alpha, b + shift

    assert_solves(shifted, "l1_svm", suite="quick", shift=0.0)
    with pytest.raises(AssertionError, match="b is wrong"):
        assert_solves(shifted, "l1_svm", suite="quick", shift=1e-3)
    assert_solves(shifted, "l1_svm", suite="quick", shift=1e-3, tol=1e-2)  # within 1e-2: passes there


def test_assert_solves_refuses_a_run_where_nothing_was_judged():
    mlp = [i for i in verify.suite("adversarial", "l1_svm") if i.kernel == "mlp"]
    with pytest.raises(AssertionError, match=r"no instance of 1 given instance\(s\) was judged \(a-mlp-not-psd: not convex\)"):
        assert_solves(exact, "l1_svm", suite=mlp)


def test_assert_solves_lets_ctrl_c_stop_the_test_run():
    def interrupted(K, y, C):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        assert_solves(interrupted, "l1_svm", suite="quick")


def test_suite_may_mix_names_and_kept_instances():
    records = assert_solves(exact, "l1_svm", suite=["quick", _case()])
    assert [r.instance for r in records][-1] == "two-points" and len(records) == 4


@pytest.mark.parametrize("suite, error, words", [
    ("everything", ValueError, "suite must be one of"),
    (42, TypeError, "suite must be a suite name"),
    ([1.5], TypeError, "suite must be a suite name"),
    ([], ValueError, "suite is empty"),
    ([Case("g", np.eye(2), np.array([1.0, -1.0]), np.eye(2), hyper={"gamma": 1.0})], ValueError,
     "suite: instance 'g' has the hyperparameters ['gamma']; a l1_svm instance needs ['C']"),
    ([Case("r", np.eye(2), np.array([0.3, 2.0]), np.eye(2), hyper={"C": 1.0})], ValueError,
     "labels other than -1 and +1"),
])
def test_bad_suite_is_refused_naming_it(suite, error, words):
    with pytest.raises(error, match=re.escape(words)):
        assert_solves(exact, "l1_svm", suite=suite)


def test_bad_formulation_tol_and_solver_are_refused_naming_them():
    with pytest.raises(ValueError, match="formulation must be one of"):
        assert_solves(exact, "l3_svm", suite="quick")
    with pytest.raises(ValueError, match="tol must be a finite number > 0"):
        assert_solves(exact, "l1_svm", suite="quick", tol=-1.0)
    with pytest.raises(verify.SignatureError, match=r"cannot be called as f\(K, y, C, \*\*options\)"):
        assert_solves(lambda K, y: exact(K, y, 1.0), "l1_svm", suite="quick")


def test_check_instance_uses_the_cases_formulation_and_says_what_failed(tmp_path):
    assert check_instance(exact, _case(1e3)).verdict == "pass"
    keep = tmp_path / "kept" / "case.json"
    with pytest.raises(AssertionError) as exc:
        check_instance(wrong_from_1e3, _case(1e3), keep=keep)
    msg = str(exc.value)
    assert "does not solve l1_svm on instance two-points at tol = 1e-06" in msg
    assert "instance two-points: N = 2, d = 1, linear kernel, C = 1000" in msg
    assert f"kept in {keep}" in msg and load_instance(keep).hyper == {"C": 1e3}


def test_check_instance_keeps_nothing_when_the_instance_passes(tmp_path):
    keep = tmp_path / "case.json"
    check_instance(exact, _case(1e3), keep=keep)
    assert not keep.exists()


def test_check_instance_needs_a_formulation_for_a_plain_instance():
    inst = verify.suite("quick", "l1_svm")[0]
    with pytest.raises(ValueError, match="formulation: instance 'q-linear-20' carries no formulation"):
        check_instance(exact, inst)
    assert check_instance(exact, inst, "l1_svm").verdict == "pass"
    with pytest.raises(TypeError, match="instance must be an svmref.verify.Instance"):
        check_instance(exact, {"X": [[0.0]]}, "l1_svm")


def test_check_instance_returns_an_unjudged_record_without_failing():
    mlp = next(i for i in verify.suite("adversarial", "l1_svm") if i.kernel == "mlp")
    assert check_instance(exact, mlp, "l1_svm").verdict == "not convex"


def _params(mark):
    argname, params = mark.args
    return argname, {p.id: p.values[0] for p in params}


def test_parametrize_solver_is_one_test_per_instance_named_after_it():
    mark = parametrize_solver(exact, "l1_svm", suite="adversarial")
    argname, checks = _params(mark.mark)
    assert argname == "check" and list(checks) == [i.name for i in verify.suite("adversarial", "l1_svm")]
    assert all(isinstance(c, SolverCheck) for c in checks.values())
    assert checks["a-C-1e4"]().verdict == "pass"
    with pytest.raises(pytest.skip.Exception, match=r"not judged by verify \(not convex\)"):
        checks["a-mlp-not-psd"]()
    _, bad = _params(parametrize_solver(wrong_from_1e3, "l1_svm", suite="adversarial").mark)
    with pytest.raises(AssertionError, match="does not solve l1_svm on instance a-C-1e4"):
        bad["a-C-1e4"]()
    assert bad["a-C-1e-4"]().verdict == "pass"


def test_parametrize_solver_checks_the_signature_when_the_test_module_is_collected():
    with pytest.raises(verify.SignatureError):
        parametrize_solver(lambda K, y: exact(K, y, 1.0), "l1_svm", suite="quick")
    with pytest.raises(ValueError, match="argname must be the name of the test's argument"):
        parametrize_solver(exact, "l1_svm", suite="quick", argname="not an identifier")
    assert _params(parametrize_solver(exact, "l1_svm", suite=[]).mark)[1] == {}  # no kept case yet: pytest skips


@parametrize_solver(exact, "l1_svm", suite="quick", argname="quick_check")
def test_parametrize_solver_as_a_decorator(quick_check, request):
    assert quick_check().verdict == "pass"
    assert request.node.callspec.id == quick_check.instance.name


# ------------------------------------------------------------------------------------------------------------------
# kept cases: save_instance and load_instance
# ------------------------------------------------------------------------------------------------------------------
@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(instances("svr", max_n=8))
def test_a_saved_case_loads_bit_for_bit(tmp_path_factory, case):
    path = save_instance(case, tmp_path_factory.mktemp("kept"))
    back = load_instance(path)
    assert path.name == f"{case.name}.json"
    for a in ("X", "y", "X_test"):
        assert np.array_equal(getattr(back, a), getattr(case, a)) and getattr(back, a).dtype == np.float64
    assert (back.name, back.kernel, back.kernel_params, back.hyper, back.unique, back.description, back.formulation,
            back.regime) == (case.name, case.kernel, case.kernel_params, case.hyper, case.unique, case.description,
                             case.formulation, case.regime)
    assert np.array_equal(back.K, case.K) and repr(back) == repr(case)


def test_the_repr_of_a_case_builds_it_again():
    case = _case(3.5, regime="generic")
    again = eval(repr(case), {"Case": Case})
    assert repr(again) == repr(case) and np.array_equal(again.K, case.K)


def test_a_plain_instance_is_saved_with_the_formulation_given(tmp_path):
    inst = verify.suite("quick", "least_1norm_svm")[0]
    back = load_instance(save_instance(inst, tmp_path / "q.json", "least_1norm_svm"))
    assert back.formulation == "least_1norm_svm" and np.array_equal(back.X, inst.X)
    with pytest.raises(ValueError, match="formulation must be one of"):
        save_instance(inst, tmp_path / "bad.json", "l3_svm")
    with pytest.raises(TypeError, match="instance must be an svmref.verify.Instance"):
        save_instance({"X": 1}, tmp_path / "bad.json")


@pytest.mark.parametrize("edit, words", [
    (lambda d: "not json {", "not a JSON file written by svmref.testing.save_instance"),
    (lambda d: [d], "a JSON object was expected"),
    (lambda d: {**d, "hyper": 3}, "field 'hyper' must be a dict"),
    (lambda d: {k: v for k, v in d.items() if k != "X"}, "field 'X' must be a list"),
    (lambda d: {**d, "format": 2}, "format 2 is not 1"),
    (lambda d: {**d, "formulation": "l3_svm"}, "formulation must be one of"),
    (lambda d: {**d, "X": [[0.5], ["a"]]}, "X must be numbers"),
    (lambda d: {**d, "X": [0.5, -0.5]}, "X must be a list of rows of numbers"),
    (lambda d: {**d, "y": [1.0]}, "y must have one value per row of X"),
])
def test_a_bad_file_is_refused_naming_the_file_and_the_field(tmp_path, edit, words):
    path = save_instance(_case(), tmp_path / "case.json")
    doc = edit(json.loads(path.read_text()))
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(ValueError, match=re.escape(words)) as exc:
        load_instance(path)
    assert str(path) in str(exc.value)


def test_a_missing_file_is_named():
    with pytest.raises(FileNotFoundError, match="path: no file '/nonexistent/case.json'"):
        load_instance("/nonexistent/case.json")


# ------------------------------------------------------------------------------------------------------------------
# optional dependencies
# ------------------------------------------------------------------------------------------------------------------
def test_svmref_testing_needs_neither_pytest_nor_hypothesis():
    code = (
        "import sys\n"
        "sys.modules['hypothesis'] = sys.modules['pytest'] = None  # as if neither were installed\n"
        "import svmref.testing as t\n"
        "from svmref.solvers import smo\n"
        "recs = t.assert_solves(lambda K, y, C: smo.l1_svm(K, y, C, tol=1e-9), 'l1_svm', suite='quick')\n"
        "print('records', len(recs))\n"
        "for stmt in ('import svmref.testing.strategies', \"t.parametrize_solver(print, 'l1_svm')\"):\n"
        "    try:\n"
        "        exec(stmt)\n"
        "    except ImportError as exc:\n"
        "        print('ImportError:', exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT.parent)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "records 3"
    assert lines[1].startswith("ImportError: svmref.testing.strategies needs hypothesis: pip install svmref[testing]")
    assert lines[2] == "ImportError: svmref.testing.parametrize_solver needs pytest: pip install svmref[testing]"


def test_the_testing_extra_names_hypothesis_and_pytest():
    text = (ROOT / "pyproject.toml").read_text()
    extra = re.search(r"^testing = (\[.*\])$", text, re.M)
    assert extra and {re.split(r"[<>=]", r)[0] for r in json.loads(extra.group(1))} == {"hypothesis", "pytest"}
    assert '"svmref.testing",' in text


# ------------------------------------------------------------------------------------------------------------------
# the strategies
# ------------------------------------------------------------------------------------------------------------------
#: Settings of the searches: hypothesis' default budget, seeded.
BUDGET = settings(max_examples=DEFAULT_EXAMPLES, database=None, derandomize=True)
#: The same, without shrinking: whether some example among the first hundred has the property.
FIRST_HUNDRED = settings(BUDGET, phases=[Phase.generate])


def _separable(X, y) -> bool:
    """Whether some (w, b) with every |w_j| <= 1 has y_i (w'x_i + b) >= 1 for all i: separable with a gap of at least 2
    (a linear program; independent of how X was drawn)."""
    d = X.shape[1]
    A = -y[:, None] * np.hstack([X, np.ones((len(y), 1))])
    res = linprog(np.zeros(d + 1), A_ub=A, b_ub=-np.ones(len(y)), bounds=[(-1, 1)] * d + [(None, None)], method="highs")
    return res.status == 0


def _conflicting_duplicates(X, y) -> bool:
    _, inverse = np.unique(X, axis=0, return_inverse=True)
    return any(len(set(y[inverse.ravel() == g])) > 1 for g in set(inverse.ravel()))


#: Each hard regime, as a property of the drawn instance (computed from its data, its K and its hyperparameters).
HARD = {
    "huge C (verify's a-C-1e4)": ("l1_svm", lambda c: c.hyper["C"] >= 1e4),
    "tiny C": ("l1_svm", lambda c: c.hyper["C"] <= 1e-3),
    "sigma -> 0: K = I": ("l1_svm", lambda c: c.kernel == "rbf" and c.N >= 4 and _apart(c).any()
                          and np.all(c.K[_apart(c)] < 1e-6)),
    "sigma -> inf: K = 11'": ("l1_svm", lambda c: c.kernel == "rbf" and c.N >= 4 and c.K.min() > 1 - 1e-3),
    "ill-conditioned polynomial kernel (entries above 1e3)": ("l1_svm", lambda c: c.kernel == "poly"
                                                              and np.abs(c.K).max() >= 1e3),
    "duplicates with conflicting labels": ("l1_svm", lambda c: _conflicting_duplicates(c.X, c.y) and c.N >= 4
                                           and np.unique(c.X, axis=0).shape[0] > 1),
    "every point the same": ("l1_svm", lambda c: c.N >= 4 and np.unique(c.X, axis=0).shape[0] == 1),
    "imbalance, one in five or fewer": ("l1_svm", lambda c: c.N >= 10 and min(np.mean(c.y > 0), np.mean(c.y < 0)) <= 0.2),
    "separable with a gap": ("l1_svm", lambda c: c.N >= 10 and _separable(c.X, c.y)),
    "regression: repeated points, other targets": ("svr", lambda c: c.N >= 4 and np.unique(c.X, axis=0).shape[0] < c.N
                                                   and np.unique(np.column_stack([c.X, c.y]), axis=0).shape[0] == c.N),
    "regression: outliers": ("ls_svm_regression", lambda c: c.N >= 10 and np.max(c.y - np.median(c.y)) >= 4.0),
    "epsilon = 0 (least absolute deviations)": ("svr", lambda c: c.hyper["epsilon"] == 0.0),
    "RLS: gamma <= 1e-7": ("rls", lambda c: c.hyper["gamma"] <= 1e-7),
    "support features: more features than points": ("support_features", lambda c: c.X.shape[1] > c.N),
    "support features: mu in its top quarter": ("support_features", lambda c: c.hyper["mu"] >= 0.75),
}


def _apart(c) -> np.ndarray:
    """The pairs (i, j) of distinct points, as a mask."""
    return np.abs(c.X[:, None, :] - c.X[None, :, :]).max(axis=-1) > 0


#: Examples drawn to measure how often each hard regime comes up, and the least share of them it must have (3 %: about
#: three in hypothesis' default hundred examples; hypothesis often draws an example again with a small change, so a
#: hundred examples hold fewer independent ones, and a rare regime can be missed by one run).
SAMPLE, LEAST_SHARE = 200, 0.03


@functools.cache
def _drawn(formulation: str) -> tuple:
    """The first SAMPLE examples of the strategy (seeded, not shrunk)."""
    out = []

    @settings(FIRST_HUNDRED, max_examples=SAMPLE)
    @given(instances(formulation))
    def draw(case):
        out.append(case)

    draw()
    return tuple(out)


@pytest.mark.parametrize("regime", list(HARD))
def test_every_hard_regime_is_drawn_by_default(regime):
    formulation, hard = HARD[regime]
    drawn = _drawn(formulation)
    share = np.mean([bool(hard(c)) for c in drawn])
    print(f"{regime}: {100 * share:.0f} in 100 examples")
    assert len(drawn) == SAMPLE and share >= LEAST_SHARE, f"{regime}: {share:.1%} of {len(drawn)} drawn {formulation} instances"


def test_no_mlp_kernel_is_drawn_and_every_drawn_kernel_is_psd():
    with pytest.raises(NoSuchExample):
        find(instances("l1_svm"), lambda c: c.kernel not in ("linear", "rbf", "poly") or not c.psd()[0], settings=FIRST_HUNDRED)


@pytest.mark.parametrize("formulation, hard, expect, n", [
    ("l1_svm", lambda c: c.hyper["C"] >= 1e3, {"C": 1e3}, MIN_N),
    ("l1_svm", lambda c: c.N >= 5, {"C": 1.0}, 5),
    ("svr", lambda c: c.hyper["C"] <= 1e-2, {"C": 1e-2, "epsilon": 0.0}, MIN_N),
    ("rls", lambda c: c.hyper["gamma"] <= 1e-4, {"gamma": 1e-4}, MIN_N),
])
def test_a_counterexample_shrinks_to_the_smallest_benign_instance(formulation, hard, expect, n):
    """Only what makes it fail stays away from its benign value (N from the fewest points, a number from 1 or the low end
    of its range), at the edge of failing; the points are distinct."""
    case = find(instances(formulation), hard, settings=BUDGET)
    assert case.N == n and case.X.shape[1] == 1 and case.regime == "generic" and case.kernel == "linear"
    assert case.hyper == pytest.approx(expect, rel=1e-12) and case.unique


def test_generated_names_follow_the_content():
    """verify caches one reference per (name, kernel, hyperparameters, N): two instances that differ only in their data
    must have different names."""
    X, y, Xt = np.array([[0.5], [-0.5]]), np.array([1.0, -1.0]), np.array([[0.125]])
    base = ("p", X, y, Xt, "rbf", {"sigma": 1.0}, {"C": 1.0})
    name = content_name(*base)
    assert name.startswith("p-") and content_name(*base) == name
    for k, other in [(1, X + 0.25), (2, -y), (3, Xt + 0.25), (4, "linear"), (5, {"sigma": 2.0}), (6, {"C": 2.0})]:
        assert content_name(*base[:k], other, *base[k + 1:]) != name, k


#: Built-in solvers that fail verify on some drawn instances: found by the strategy, kept in tests/cases/ (one each,
#: test_cases_found_by_the_strategy_still_fail below), not fixed here.
KNOWN_FAILING = {
    "rls": "rls-outliers-poly-N15-f14b4b2f.json",
}
#: Kept cases that failed once and pass now, each with what was fixed (test_fixed_cases_pass below).
FIXED = {
    "support_features-duplicates-linear-N3-5852e33a.json":
        "two points, one repeated with the opposite label, d = 3, C = 5655: the solver puts a_1 = 0, eq. (8) of 003 at "
        "its lam gives 1.6e-12, within the rounding of computing w = X'(y lam) (terms of size 1e4 cancel to 0.2); "
        "verify held the difference to max|a(lam)| = 1.6e-12 (stationarity 1.0), it now subtracts that rounding first",
    "sparse_ls_svm-generic-rbf-N3-13fc0665.json":
        "three points, RBF sigma = 186 (K nearly 11'), C = 5652, b = 2707: the objective matches the reference's to "
        "1.7e-13, but verify's duality gap at the dual point C xi carried b sum_i C xi_i, so that one rounding unit of b "
        "(the machine's floating-point path) moved it between 1e-12 and 1.4e-5; verify now takes the gap at the dual "
        "feasible C (xi - mean(xi)), 1e-12 on every path",
}
#: What verify says of each kept case, measured (the built-in solver at verify's tol = 1e-6).
FOUND = {
    "rls": "an ill-conditioned polynomial kernel (c = 0.19, degree 3) with gamma = 1e-8: the system (8) of 001 is solved "
           "to round-off, but the objective is 1.1e-4 above the reference's and the duality gap is 3e-4",
}
CASES = ROOT / "tests" / "cases"
#: The kept case of each formulation in FIXED, by formulation.
FIXED_CASE = {name.split("-", 1)[0]: name for name in FIXED}


@pytest.mark.parametrize("formulation", list(KNOWN_FAILING))
def test_cases_found_by_the_strategy_still_fail(formulation):
    """Each kept case fails its built-in solver (a strict expectation: once the solver is fixed, this test says so, and
    the case moves to the passing ones)."""
    case = load_instance(CASES / KNOWN_FAILING[formulation])
    spec = next(s for s, f in REGISTRY.items() if f == formulation)
    assert case.formulation == formulation
    try:
        check_instance(load_spec(spec), case)
    except AssertionError as exc:
        assert f"does not solve {formulation} on instance {case.name}" in str(exc)
    else:
        pytest.fail(f"{spec} now passes {case.name} ({FOUND[formulation]}): move the case to the passing ones")


@pytest.mark.parametrize("name", list(FIXED))
def test_fixed_cases_pass(name):
    """Each case the strategy once found failing and that was fixed (FIXED says what) passes its built-in solver."""
    case = load_instance(CASES / name)
    spec = next(s for s, f in REGISTRY.items() if f == case.formulation)
    check_instance(load_spec(spec), case)


@pytest.mark.parametrize("spec", sorted(REGISTRY), ids=lambda s: REGISTRY[s])
def test_drawn_instances_are_ones_verify_judges(spec):
    """Every formulation's instances run through verify with its built-in solver: no error, and a pass (or a verdict
    that the reference cannot decide) for every solver that passes verify's suites."""
    formulation, fn = REGISTRY[spec], load_spec(spec)
    records = []

    @settings(max_examples=12, deadline=None, derandomize=True, database=None)
    @given(instances(formulation, max_n=15))
    def run(case):
        report = verify.check(fn, formulation, [case])
        records.append((report.records[0].verdict, f"{case!r}\n{report}"))

    run()
    verdicts = [v for v, _ in records]
    assert len(verdicts) >= 12 and "error" not in verdicts, verdicts
    if formulation not in KNOWN_FAILING:
        bad = "\n\n".join(text for v, text in records if v not in ("pass", "unresolved", "no reference"))
        assert not bad and "pass" in verdicts, bad


@pytest.mark.parametrize("kwargs, words", [
    ({"min_n": 1}, "min_n must be an integer >= 2"),
    ({"max_n": 3, "min_n": 5}, "max_n must be >= min_n (5)"),
    ({"max_d": 0}, "max_d must be an integer >= 1"),
    ({"max_n": 2.5}, "max_n must be an integer >= 2"),
    ({"kernels": ["mlp"]}, "kernels must be a non-empty selection of ['linear', 'rbf', 'poly']"),
    ({"kernels": []}, "kernels must be a non-empty selection"),
    ({"regimes": ["outliers"]}, "regimes must be a non-empty selection of ['generic', 'separable'"),
    ({"C": (0, 1)}, "C must be a pair (low, high) of finite numbers with 0 < low <= high"),
    ({"C": (10, 1)}, "C must be a pair (low, high) of finite numbers with 0 < low <= high"),
    ({"sigma": 3.0}, "sigma must be a pair (low, high) of numbers"),
    ({"mu": (0.5, 1.0)}, "mu must be a pair (low, high) with high < 1"),
    ({"epsilon": (-1, 1)}, "epsilon must be a pair (low, high) of finite numbers with 0 <= low <= high"),
])
def test_bad_strategy_arguments_are_refused_naming_them(kwargs, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        instances("l1_svm", **kwargs)


def test_the_strategy_draws_within_the_ranges_given():
    case = find(instances("svr", min_n=5, max_n=5, max_d=2, kernels=["rbf"], regimes=["outliers"], C=(2, 3),
                          sigma=(0.5, 0.5), epsilon=(0.2, 0.3)), lambda c: True, settings=BUDGET)
    assert case.N == 5 and case.X.shape[1] <= 2 and case.kernel == "rbf" and case.kernel_params == {"sigma": 0.5}
    assert 2 <= case.hyper["C"] <= 3 and 0.2 <= case.hyper["epsilon"] <= 0.3 and case.regime == "outliers"
    held_out = {tuple(x) for x in case.X_test}
    assert held_out and not held_out & {tuple(x) for x in case.X}  # the decision functions are compared off the data
    assert set(strategies.KERNELS) == {"linear", "rbf", "poly"}


def test_the_isls_fixed_point_is_judged_above_its_rounding():
    """The kept ISLS case (K nearly 11', C = 5652, b = 2707): one step of 004 Algorithm 1 computed from the answer moves
    alpha_1 by 1e-5 relative, all of it rounding (xi's rounding times C, then K), and verify's stationarity subtracts
    that rounding; the duality gap is taken at the dual feasible point C (xi - mean(xi)), where one rounding unit of b
    no longer moves it (at C xi it did, by N C |b| u = 1.4e-5: a fail on some floating-point paths, a pass on others).
    Both are at round-off and the answer passes. A point moved off the fixed point by 1e-4 still fails both."""
    case = load_instance(CASES / FIXED_CASE["sparse_ls_svm"])
    spec = next(s for s, f in REGISTRY.items() if f == "sparse_ls_svm")
    rec = verify.check(load_spec(spec), "sparse_ls_svm", [case]).records[0]
    assert rec.residuals["stationarity"] <= 1e-8 and rec.residuals["duality_gap"] <= 1e-10, rec.residuals
    assert rec.verdict == "pass"
    good = load_spec(spec)

    def moved(K, y, C, **kw):
        r = good(K, y, C, **kw)
        return {"alpha": r.alpha * (1 + 1e-4), "b": r.b}

    off = verify.check(moved, "sparse_ls_svm", [case]).records[0]
    assert off.verdict == "fail" and off.residuals["stationarity"] > 1e-6 and off.residuals["duality_gap"] > 1e-6


def test_the_bias_in_the_penalty_is_drawn_with_its_bias_scale():
    """The instances of the SVM with the bias in the penalty carry C and bias_scale, the latter from [0, 100] with both
    ends drawn (0: no bias), on the features (a linear kernel)."""
    seen = []

    @settings(max_examples=40, deadline=None, derandomize=True, database=None)
    @given(instances("l1_svm_regularised_bias", max_n=8))
    def run(case):
        assert set(case.hyper) == {"C", "bias_scale"} and case.kernel == "linear"
        seen.append(case.hyper["bias_scale"])

    run()
    assert min(seen) == 0.0 and max(seen) > 75.0 and all(0.0 <= b <= 100.0 for b in seen), seen
