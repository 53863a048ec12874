"""The ``numerics`` marker (``tests/_numerics.py``, applied by ``tests/conftest.py``): CI runs the marked tests again
under other floating-point paths, so a precision-sensitive test that goes unmarked is a test that no second path sees.
The reading of the source is checked on planted sources, one signal each, and on the tests that did flip between
floating-point paths."""
from __future__ import annotations

from pathlib import Path

import pytest
from _numerics import TIGHT, is_sensitive, sensitive_functions

HERE = Path(__file__).resolve().parent

#: One planted test per signal: (source, the functions that must be read as sensitive).
PLANTED = {
    "a tight literal": ("def test_a(x):\n    assert abs(x) <= 1e-9\n", {"test_a"}),
    "the boundary 1e-6 itself": ("def test_a(x):\n    assert abs(x) <= 1e-6\n", {"test_a"}),
    "a status word": ("def test_a(r):\n    assert r == 'optimal'\n", {"test_a"}),
    "a status attribute": ("def test_a(r):\n    assert r.status\n", {"test_a"}),
    "verify's verdict by key": ("def test_a(rec):\n    assert rec['verdict']\n", {"test_a"}),
    "machine epsilon": ("import numpy as np\ndef test_a(x):\n    assert x <= np.finfo(float).eps\n", {"test_a"}),
    "a parametrized tolerance": ("import pytest\n@pytest.mark.parametrize('t', [1e-10])\ndef test_a(t):\n    pass\n",
                                 {"test_a"}),
    "a module-level tolerance table": ("TOL = {'kkt': 1e-9}\ndef test_a(x):\n    assert x <= TOL['kkt']\n", {"test_a"}),
    "a helper, two calls down": ("def _inner(x):\n    return x <= 1e-12\ndef _outer(x):\n    return _inner(x)\n"
                                 "def test_a(x):\n    assert _outer(x)\n", {"_inner", "_outer", "test_a"}),
    "a method of a test class": ("class TestA:\n    def test_a(self, r):\n        assert r.converged\n",
                                 {"TestA.test_a", "test_a"}),
    "a shared helper": ("def test_a(p):\n    assert as_written(p)\n", {"test_a"}),
}
#: Planted tests that are not precision-sensitive.
COLD = {
    "a loose tolerance": "def test_a(x):\n    assert abs(x) <= 1e-3\n",
    "a count": "def test_a(x):\n    assert len(x) == 3 and x[0] == 0.0\n",
    "an error message": "import pytest\ndef test_a():\n    with pytest.raises(ValueError, match='C must be'):\n        f()\n",
    "a tight literal outside any test": "X = 1e-12\ndef test_a(y):\n    assert y == 1\n",
}


@pytest.mark.parametrize("case", list(PLANTED))
def test_each_signal_marks_the_test(case):
    source, want = PLANTED[case]
    assert want <= sensitive_functions(source, helpers=frozenset({"as_written"}))


@pytest.mark.parametrize("case", list(COLD))
def test_a_test_without_a_signal_is_not_marked(case):
    assert "test_a" not in sensitive_functions(COLD[case], helpers=frozenset({"as_written"}))


#: The tests that flipped between OpenBLAS's kernels (SkylakeX, Haswell, Sandybridge, Prescott) before they asserted
#: what their labels promise: each must be in the runs CI repeats under other paths.
FLIPPED = [
    ("test_docs.py", "test_alpha_is_C_times_loss_derivative"),
    ("test_formulations.py", "test_strong_duality_property"),
    ("test_labels_independent.py", "test_independent_optimum_is_certified_by_its_gap_and_a_second_solver"),
    ("test_solver_labels.py", "test_a_tight_tol_below_the_gradients_rounding_ends_with_an_honest_label"),
    ("test_testing.py", "test_cases_found_by_the_strategy_still_fail"),
    ("test_testing.py", "test_the_isls_fixed_point_is_judged_above_its_rounding"),
]


@pytest.mark.parametrize("module, name", FLIPPED)
def test_the_tests_that_flipped_are_marked(module, name):
    assert is_sensitive(str(HERE / module), name)


def test_the_marker_is_applied_at_collection(request):
    """This test reads a tight literal (TIGHT, 1e-6): conftest.py must have marked it."""
    assert TIGHT == 1e-6
    assert request.node.get_closest_marker("numerics") is not None
