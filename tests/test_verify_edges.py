"""verify at its edges: a talkative or crashing solver, an unusable answer, swapped arguments.

Each test holds one promise of docs/verify.md ("Command line", "The contract a solver follows"); the solvers
are written here. The exact LS-SVM solver solves 000's KKT system (eqs. (2), (7)) by a dense solve, so
it passes at the default tol wherever the data are sound: a failure of it is verify's (or the data's), not the
solver's.
"""
from __future__ import annotations

import numpy as np
import pytest

from svmref import verify
from svmref.verify import answers, specs
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

@pytest.fixture
def user(tmp_path):
    p = tmp_path / "user_solvers.py"
    p.write_text(USER_SOLVERS)
    return p


# ------------------------------------------------------------------------- the solver's output, tracebacks


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


def test_every_builtin_solver_names_its_parameters_in_verifys_order():
    from svmref.solvers import REGISTRY
    from svmref.verify.loader import load_spec

    for spec, formulation in REGISTRY.items():
        assert verify.check_signature(load_spec(spec), formulation, name=spec)
