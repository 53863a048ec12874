"""verify at its edges: data near the ends of the float range, malformed SPECs, a closed pipe, a talkative or
crashing solver, an unusable answer, swapped arguments, and every bad option refused before any work.

Each test holds one promise of docs/verify.md ("Command line", "The contract a solver follows"); the solvers
are written here. The exact LS-SVM solver solves 000's KKT system (eqs. (2), (7)) by a dense solve, so
it passes at the default tol wherever the data are sound: a failure of it is verify's (or the data's), not the
solver's.
"""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from svmref import verify
from svmref.verify import answers, specs
from svmref.verify.cli import EXIT_PIPE
from svmref.verify.cli import main as verify_main
from svmref.verify.data import check_targets, scale_columns
from svmref.verify.instances import from_data
from svmref.verify.worker import OUTPUT_KEEP_LINES

#: Lines the talkative solver prints per call on standard output with print() (plus one on standard error with
#: print() and one written straight to file descriptor 1, as compiled code does).
TALK_LINES = 300

USER_SOLVERS = f'''
import os
import sys
import time

import numpy as np

TALK_LINES = {TALK_LINES}


def exact(K, y, C):
    """LS-SVM by its KKT system (000 eqs. (2), (7))."""
    N = len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = y
    A[1:, 0] = y
    A[1:, 1:] = np.outer(y, y) * K + np.eye(N) / C
    sol = np.linalg.solve(A, np.concatenate([[0.0], np.ones(N)]))
    return sol[1:], sol[0]


def exact_regression(K, y, C):
    """LS-SVM regression by 004 system (2)."""
    N = len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = 1.0
    A[1:, 0] = 1.0
    A[1:, 1:] = K + np.eye(N) / C
    sol = np.linalg.solve(A, np.concatenate([[0.0], y]))
    return sol[1:], sol[0]


def talkative(K, y, C):
    for k in range(TALK_LINES):
        print(f"iter {{k}}: progress")
    print("a warning of my own", file=sys.stderr)
    os.write(1, b"written to fd 1\\n")
    return exact(K, y, C)


def very_talkative(K, y, C):
    for k in range(3 * {OUTPUT_KEEP_LINES}):
        print(f"line {{k}}")
    return exact(K, y, C)


def talks_then_hangs(K, y, C):
    print("started", flush=True)
    while True:
        time.sleep(0.01)


def _inner_helper():
    raise ValueError("singular pivot in my update")


def raises(K, y, C):
    return _inner_helper()


def slow_first(K, y, C):
    """Answers after a pause, so that a test can close the pipe before the first row is written."""
    time.sleep(1.0)
    return exact(K, y, C)


class SmoSVM:
    """An answer with the right numbers under the wrong names."""

    def __init__(self, alphas, b):
        self.alphas = alphas
        self._b = b
        self.kernel = "precomputed"


def wrong_names(K, y, C):
    return SmoSVM(*exact(K, y, C))


def wrong_names_local(K, y, C):
    class Local:  # a class the worker cannot pickle back: only names travel
        pass
    out = Local()
    out.alphas, out._b = exact(K, y, C)
    return out


def wrong_keys(K, y, C):
    a, b = exact(K, y, C)
    return {{"alphas": a, "bias": b}}


def swapped(K, C, y):
    return exact(K, y, C)
'''

#: A SPEC module that leaves a marker the moment it is imported: an option refused "before any work" must be
#: refused before the user's code is even imported.
MARKED = '''
open(__file__ + ".imported", "w").close()


def solve(K, y, C, epsilon=0.1):
    raise AssertionError("never called")
'''


@pytest.fixture
def user(tmp_path):
    p = tmp_path / "user_solvers.py"
    p.write_text(USER_SOLVERS)
    return p


def _cli(argv, capfd):
    """Run ``svmref verify`` in this process; (exit code, stdout, stderr) as the file descriptors saw them."""
    code = verify_main([str(a) for a in argv])
    out = capfd.readouterr()
    return code, out.out, out.err


def _one_line_error(err: str, *words: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("svmref verify: error: "), err
    for w in words:
        assert w in lines[0], (w, err)
    return lines[0]


def _csv(path: Path, X, y) -> Path:
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    return path


def _two_classes(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


# ------------------------------------------------------------------------- --data near the float range


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_data_near_the_float_range_gets_the_verdict_of_the_same_data_at_unit_scale(scale, user, tmp_path, capfd):
    """Standardising 1e200 squares it (inf) and 1e-200 (0): every feature became 0 and anything passed.

    verify standardises each column, so a column's scale cannot change the problem: the run on X * scale must
    give the objective of the run on X (to rounding), which a zeroed kernel (K = 11') would not.
    """
    X, y = _two_classes()
    runs = {}
    for name, Xs in (("unit", X), ("scaled", X * scale)):
        js = tmp_path / f"{name}.json"
        code, out, err = _cli([f"{user}:exact", "-f", "ls_svm", "--data", _csv(tmp_path / f"{name}.csv", Xs, y),
                               "--json", js], capfd)
        assert code == 0 and "verdict: PASS" in out, (out, err)
        runs[name] = json.loads(js.read_text())["records"][0]
    ref, got = runs["unit"]["objective"], runs["scaled"]["objective"]
    assert abs(got - ref) <= 1e-9 * abs(ref), (got, ref)
    # the comparison can tell: on the zeroed features (K = 11', what the overflow gave) the objective differs
    zeroed = verify.check(_load(user, "exact"), "ls_svm", [from_data(np.zeros_like(X), y, "ls_svm")]).records[0]
    assert abs(zeroed.objective - ref) > 1e-3 * abs(ref), (zeroed.objective, ref)


def test_power_of_two_column_scaling_changes_nothing_for_ordinary_data():
    """scale_columns divides by powers of two: every rounding of the standardisation scales exactly, so the
    instance built from ordinary data is the same, bit for bit."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 5)) * np.array([1e-3, 1.0, 7.0, 3e5, 123.456]) + np.array([0, 5, -2, 1e6, 0.1])
    y = np.where(rng.standard_normal(60) > 0, 1.0, -1.0)
    plain, scaled = from_data(X, y, "l1_svm"), from_data(scale_columns(X), y, "l1_svm")
    assert np.array_equal(plain.X, scaled.X) and np.array_equal(plain.X_test, scaled.X_test)
    peaks = np.max(np.abs(scale_columns(X)), axis=0)
    assert np.all((peaks >= 0.5) & (peaks < 1.0)), peaks


def test_data_whose_features_are_all_constant_is_refused(user, tmp_path, capfd):
    """Constant columns standardise to 0; when every column is constant there is nothing to verify."""
    rng = np.random.default_rng(4)
    p = _csv(tmp_path / "const.csv", np.full((30, 2), 1e200), np.where(rng.standard_normal(30) > 0, 1, -1))
    code, out, err = _cli([f"{user}:exact", "-f", "ls_svm", "--data", p], capfd)
    assert code == 2 and out == ""
    _one_line_error(err, "--data", "const.csv", "every feature column is constant", "give at least one column")


@pytest.mark.parametrize("magnitude", [1e100, 1e150, 1e153, 5e153, 1e154, 1e155, 1e200])
def test_targets_are_refused_exactly_when_the_sum_of_their_squares_overflows(magnitude):
    """The rule of check_targets, against float64 itself: refused iff sum(y**2) is inf (at 5e153 the largest
    square is finite and the sum of the 40 is not, so a rule on the largest target alone would pass it)."""
    y = magnitude * np.sin(np.arange(1.0, 41.0))
    with np.errstate(over="ignore"):
        overflows = not math.isfinite(float(np.sum(y * y)))
    if overflows:
        with pytest.raises(ValueError, match=r"the sum of their squares overflows float64, so no objective can be "
                                             r"computed; divide them by 1e"):
            check_targets(y)
    else:
        check_targets(y)


def test_regression_targets_at_1e200_are_one_usage_error(user, tmp_path, capfd):
    X, _ = _two_classes()
    p = _csv(tmp_path / "big_targets.csv", X, 1e200 * np.sin(X[:, 0]))
    code, out, err = _cli([f"{user}:exact_regression", "-f", "ls_svm_regression", "--data", p], capfd)
    assert code == 2 and out == ""
    _one_line_error(err, "--data", "big_targets.csv", "the targets (the last column) reach", "divide them by 1e200")


# ------------------------------------------------------------------------------------------- SPEC's form


@pytest.mark.parametrize("spec, words", [
    ("{user}", "which names no callable: add ':NAME' after it"),
    ("{user}:", "ends with ':' and names no callable"),
    (":exact", "names no module or file before the ':'"),
    ("mypackage.mymodule", "which names no callable"),
])
@pytest.mark.parametrize("formulation", [[], ["-f", "ls_svm"]])
def test_spec_without_a_callable_is_named_as_such(spec, words, formulation, user, capfd):
    """Not "--formulation is required": the SPEC is wrong, whatever else is given."""
    spec = spec.format(user=user)
    code, out, err = _cli([spec, *formulation], capfd)
    assert code == 2 and out == ""
    line = _one_line_error(err, "SPEC must look like package.module:callable or path/to/file.py:callable",
                           f"got {spec!r}", words)
    assert "--formulation" not in line


# ------------------------------------------------------------------------------------- a closed pipe


def _subprocess_verify(args, cwd):
    env = dict(os.environ, PYTHONUNBUFFERED="0")
    return subprocess.Popen([sys.executable, "-m", "svmref.cli", "verify", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # processes and signals: seconds each, run in the slow step
def test_a_reader_that_closes_the_pipe_ends_verify_quietly(user, tmp_path):
    """``svmref verify ... | head -1``: no traceback, no "Exception ignored", exit 141 (128 + SIGPIPE)."""
    proc = _subprocess_verify([f"{user}:slow_first", "-f", "ls_svm"], tmp_path)
    first = proc.stdout.readline()  # the heading is printed before the first instance runs (1 s)
    proc.stdout.close()             # head -1 exits
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    assert first.startswith("formulation"), first
    assert code == EXIT_PIPE == 128 + signal.SIGPIPE, (code, err)
    assert err == "", err


def test_json_dash_puts_the_json_alone_on_standard_output(user, capfd):
    code, out, err = _cli([f"{user}:exact", "-f", "ls_svm", "--json", "-"], capfd)
    assert code == 0
    data = json.loads(out)  # nothing but the JSON
    assert data["passed"] is True and len(data["records"]) == 3
    assert "verdict: PASS" in err and "formulation" in err.splitlines()[0]


# ------------------------------------------------------------------------- the solver's output, tracebacks


def test_the_solvers_output_is_captured_per_instance_and_kept_in_the_json(user, tmp_path, capfd):
    """Three instances x (300 print lines + 1 stderr line + 1 line written to fd 1): none reaches the terminal."""
    js = tmp_path / "out.json"
    code, out, err = _cli([f"{user}:talkative", "-f", "ls_svm", "--json", js], capfd)
    per_call = TALK_LINES + 2
    assert code == 0
    assert "iter " not in out + err and "written to fd 1" not in out + err and "a warning of my own" not in out + err
    assert f"the solver printed {3 * per_call} line(s) on 3 instance(s), captured and not shown" in out
    for rec in json.loads(js.read_text())["records"]:
        lines = rec["solver_output"].splitlines()
        assert rec["solver_output_lines"] == per_call == len(lines)
        assert lines[0] == "iter 0: progress" and set(lines[-2:]) == {"a warning of my own", "written to fd 1"}


def test_verbose_prints_the_output_under_its_row(user, capfd):
    code, out, _ = _cli([f"{user}:talkative", "-f", "ls_svm", "--verbose"], capfd)
    assert code == 0
    lines = out.splitlines()
    rows = [k for k, ln in enumerate(lines) if ln.startswith("ls_svm ")]
    assert len(rows) == 3
    for k in rows:
        assert lines[k + 1] == f"    solver output ({TALK_LINES + 2} line(s)):"
        assert lines[k + 2] == "    | iter 0: progress"
    assert "captured and not shown" not in out


def test_long_output_keeps_its_first_and_last_lines_and_its_count(user):
    fn = _load(user, "very_talkative")
    rec = verify.check(fn, "ls_svm", "quick").records[0]  # in this process: the same capture
    total = 3 * OUTPUT_KEEP_LINES
    lines = rec.solver_output.splitlines()
    assert rec.solver_output_lines == total
    assert lines[0] == "line 0" and lines[-1] == f"line {total - 1}"
    assert f"[... {total - OUTPUT_KEEP_LINES} lines left out ...]" in lines
    assert len(lines) == OUTPUT_KEEP_LINES + 1


def test_a_timed_out_solver_keeps_what_it_printed(user):
    fn = _load(user, "talks_then_hangs")
    rec = verify.check(fn, "ls_svm", "quick", timeout=0.5).records[0]
    assert rec.verdict == "timeout" and rec.solver_output == "started" and rec.solver_output_lines == 1


def test_a_solver_exception_keeps_its_traceback(user, tmp_path, capfd):
    js = tmp_path / "err.json"
    code, out, _ = _cli([f"{user}:raises", "-f", "ls_svm", "--json", js], capfd)
    assert code == 1
    assert "solver raised ValueError: singular pivot in my update" in out and "Traceback" not in out
    assert "the solver raised on 3 instance(s); the tracebacks are not shown" in out
    for rec in json.loads(js.read_text())["records"]:
        tb = rec["traceback"]
        assert tb.startswith("Traceback (most recent call last):")
        assert "in raises" in tb and "in _inner_helper" in tb and tb.rstrip().endswith(
            "ValueError: singular pivot in my update")
        assert "worker.py" not in tb  # from the solver's frame down
    code, out, _ = _cli([f"{user}:raises", "-f", "ls_svm", "--verbose"], capfd)
    assert out.count("    ! Traceback (most recent call last):") == 3 and "    !     raise ValueError(" in out


# ------------------------------------------------------------------------------------ unusable answers


def _load(user, name):
    from svmref.verify.loader import load_spec

    return load_spec(f"{user}:{name}")


@pytest.mark.parametrize("name, timeout, words", [
    ("wrong_names", None, ["got a SmoSVM with attributes alphas, _b, kernel", "verify reads the attributes alpha, b",
                           "did you mean alphas -> alpha, _b -> b?"]),
    ("wrong_names_local", 30, ["got a Local with attributes alphas, _b", "did you mean alphas -> alpha, _b -> b?"]),
    ("wrong_keys", None, ["got a dict with keys 'alphas', 'bias'", "verify reads the keys alpha, b",
                          "did you mean alphas -> alpha, bias -> b?"]),
])
def test_an_unusable_answer_lists_its_names_and_the_names_verify_reads(name, timeout, words, user):
    rec = verify.check(_load(user, name), "ls_svm", "quick", timeout=timeout).records[0]
    assert rec.verdict == "error" and rec.reason.startswith("unusable answer: ")
    for w in words:
        assert w in rec.reason, (w, rec.reason)


@pytest.mark.parametrize("answer, reader, words", [
    ({"coef": [0.0] * 4}, answers.coefficients, ["got a dict with keys 'coef'", "reads the keys c", "coef -> c"]),
    ({"lambda": [0.0] * 4, "w": [0.0] * 2}, answers.features,
     ["got a dict with keys 'lambda', 'w'", "reads the keys lam, a, b", "lambda -> lam, w -> a"]),
])
def test_every_reader_lists_the_names_it_reads(answer, reader, words):
    inst = verify.Instance("t", np.zeros((4, 2)), np.array([1.0, -1.0, 1.0, -1.0]), np.zeros((1, 2)))
    with pytest.raises(answers.BadAnswer) as info:
        reader(answer, inst)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


# ------------------------------------------------------------------------------------ swapped arguments


def _permuted(names: list[str]):
    """A function whose first two parameters are named as verify's first two arguments, the other way round."""
    order = [names[1], names[0], *names[2:]]
    scope: dict = {}
    exec(f"def f({', '.join(order)}, **options):\n    pass\n", scope)  # noqa: S102 - a signature built for the test
    return scope["f"], order


@pytest.mark.parametrize("formulation", specs.names())
def test_parameters_named_in_another_order_are_refused_naming_the_expected_call(formulation):
    entry = specs.SPECS[formulation]
    names = [a.strip() for a in entry.call[2:entry.call.index(")")].split(",")][:entry.n_args]
    in_order = {}
    exec(f"def g({', '.join(names)}, **options):\n    pass\n", in_order)  # noqa: S102
    assert verify.check_signature(in_order["g"], formulation)
    fn, order = _permuted(names)
    with pytest.raises(verify.SignatureError) as info:
        verify.check_signature(fn, formulation)
    msg = str(info.value)
    assert entry.call in msg and f"{order[0]} would receive {names[0]}" in msg
    assert f"put them in the order {', '.join(names)}" in msg


def test_swapped_arguments_are_one_usage_error_before_any_instance_runs(user, capfd):
    code, out, err = _cli([f"{user}:swapped", "-f", "ls_svm"], capfd)
    assert code == 2 and out == ""
    _one_line_error(err, "swapped(K, C, y)", "f(K, y, C, **options)", "C would receive y, y would receive C")


def test_every_builtin_solver_names_its_parameters_in_verifys_order():
    from svmref.solvers import REGISTRY
    from svmref.verify.loader import load_spec

    for spec, formulation in REGISTRY.items():
        assert verify.check_signature(load_spec(spec), formulation, name=spec)


# ------------------------------------------------------------------------------------------------ --help


def test_help_names_the_installed_module(capfd):
    code, out, _ = _cli(["--help"], capfd)
    assert code == 0
    assert "python -m pydoc svmref.verify" in out
    assert "import verify" not in out
    import importlib

    for token in out.replace("'", " ").replace('"', " ").split():
        if token.startswith("svmref.") and token.rstrip(".;,)").count(".") >= 1:
            importlib.import_module(token.rstrip(".;,)"))  # every module the help names exists


# ------------------------------------------------------------------------- every bad option, before any work


@pytest.mark.parametrize("extra, option, words", [
    (["--tol", "0"], "--tol", "> 0 and < 1"),
    (["--tol", "1"], "--tol", "> 0 and < 1"),
    (["--tol", "-0.5"], "--tol", "> 0 and < 1"),
    (["--tol=-1e-6"], "--tol", "> 0 and < 1"),
    (["--timeout", "0"], "--timeout", "> 0"),
    (["--timeout", "-1"], "--timeout", "> 0"),
    (["--n", "1"], "--n", ">= 4"),
    (["--data", "{ok}", "--C", "0"], "--C", "> 0"),
    (["--data", "{ok}", "--C", "-2"], "--C", "> 0"),
    (["--data", "{ok}", "--sigma", "0"], "--sigma", "> 0"),
    (["--data", "{ok}", "--sigma", "-1"], "--sigma", "> 0"),
    (["--data", "{ok}", "--epsilon", "-0.1", "-f", "svr"], "--epsilon", ">= 0"),
    (["--data", "{ok}", "--epsilon", "0.1"], "--epsilon", "ls_svm has none"),
    (["--sigma", "2"], "--sigma goes with --data", ""),
    (["--json", "{tmp}"], "--json", "is a directory"),
    (["--json", "/proc/no/such/dir/out.json"], "--json", "cannot write"),
    (["--data", "{tmp}/missing.csv"], "--data", "cannot read"),
    (["--data", "{tmp}"], "--data", "cannot read"),
    (["--data", "{binary}"], "--data", "is not UTF-8 text"),
    (["--data", "{words}"], "--data", "is not numeric"),
    (["--quiet", "--verbose"], "--verbose", "not both"),
])
def test_every_bad_option_is_one_line_before_spec_is_imported(extra, option, words, tmp_path, capfd):
    spec = tmp_path / "marked.py"
    spec.write_text(MARKED)
    X, y = _two_classes()
    files = {"ok": _csv(tmp_path / "ok.csv", X, y), "tmp": tmp_path, "binary": tmp_path / "binary.csv",
             "words": tmp_path / "words.csv"}
    files["binary"].write_bytes(b"\xff\xfe\x00\x01binary")
    files["words"].write_text("a,b,label\n1,2,1\nx,y,-1\n")
    extra = [a.format(**files) for a in extra]
    form = [] if "-f" in extra else ["-f", "ls_svm"]
    code, out, err = _cli([f"{spec}:solve", *form, *extra], capfd)
    assert code == 2 and out == "", (out, err)
    _one_line_error(err, option, words)
    assert not Path(f"{spec}.imported").exists()


def test_from_data_near_the_float_range_is_the_instance_of_the_unit_data():
    """verify.from_data from Python (not only the CLI) standardises X * 1e200 to the instance of X, not to zeros."""
    X, y = _two_classes()
    plain, big = from_data(X, y, "l1_svm"), from_data(X * 1e200, y, "l1_svm")
    assert np.allclose(big.X, plain.X, rtol=1e-12, atol=1e-12) and np.any(big.X != 0.0)


def test_instances_with_one_name_but_other_data_never_share_a_reference(user):
    """Two from_data instances with the same name, kernel, hyperparameters and size but other targets: each is
    held to its own reference (the cache key digests the data). The user module's exact LS-SVM solve (its KKT system,
    000 eqs. (2), (7)) passes on both; with a shared cache the second failed with an objective gap of 3."""
    X, y = _two_classes()
    z = np.where(np.arange(y.size) % 3 == 0, -y, y)  # other labels, same name and size
    exact = _load(user, "exact")
    first, second = from_data(X, y, "ls_svm"), from_data(X, z, "ls_svm")
    assert first.key() != second.key()
    for inst in (first, second):
        rec = verify.check(exact, "ls_svm", [inst]).records[0]
        assert rec.verdict == "pass", rec.reason
