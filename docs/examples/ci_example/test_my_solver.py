"""The tests of my_solver, written with svmref.testing, as they run in CI (docs/testing.md).

The docs run this file once for each solver of my_solver.py: the environment variable MY_SOLVER names it
(default ``solve``). In a project of your own, set ``SOLVER = my_solver.solve`` and leave the rest as it is.
"""
import os
from pathlib import Path

import my_solver
from hypothesis import given, settings

from svmref.testing import assert_solves, check_instance, load_instance, parametrize_solver
from svmref.testing.strategies import instances

SOLVER = getattr(my_solver, os.environ.get("MY_SOLVER", "solve"))
FORMULATION = "l1_svm"
#: Hard instances found once (by the generated test below) and kept: checked on every run.
CASES = Path(__file__).parent / "svm_cases"


def test_standard_suite():
    """verify's standard suite: N = 50 ... 300, linear, polynomial and RBF kernels, C = 0.1 ... 100."""
    assert_solves(SOLVER, FORMULATION)


@parametrize_solver(SOLVER, FORMULATION, suite="adversarial")
def test_adversarial(check):
    """One test per instance of verify's adversarial suite (duplicates, C = 1e-4 and 1e4, sigma -> 0, ...)."""
    check()


@parametrize_solver(SOLVER, FORMULATION, suite=[load_instance(p) for p in sorted(CASES.glob("*.json"))])
def test_kept_cases(check):
    """Every instance kept in svm_cases/."""
    check()


@settings(deadline=None)  # the cvxpy reference takes tens of milliseconds; hypothesis' default 100 examples
@given(instances(FORMULATION))
def test_generated_instances(instance):
    """Instances drawn by hypothesis, hard regimes included; a failure is shrunk and written to svm_cases/."""
    check_instance(SOLVER, instance, keep=CASES / "last_failure.json")
