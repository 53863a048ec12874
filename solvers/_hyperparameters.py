"""The hyperparameter rules of the estimators: one table per estimator, checked at the start of ``fit``.

Each estimator declares ``_hyperparameter_rules``, parameter name -> :class:`Rule` (what is expected, in
words; a predicate). :meth:`HyperparameterMixin._check_hyperparameters` checks them in the table's order,
then the estimator's :meth:`~HyperparameterMixin._check_hyperparameter_combinations` hook, and raises
:class:`HyperparameterError` naming the first bad parameter and what was expected.

These names are deliberately not scikit-learn's (``_parameter_constraints``, ``BaseEstimator._validate_params``,
``sklearn.utils._param_validation.InvalidParameterError``): scikit-learn's constraint objects (``Interval``,
``StrOptions``) live in a private module, and the project relies on scikit-learn's public API only
(``scikit-learn>=1.6``); they would also accept values these rules refuse (``C=True``, a boolean taken as
the number 1, and ``inf`` where an interval has no upper end). No scikit-learn attribute or method is
overridden here, so scikit-learn's own validation machinery sees an estimator without constraints.
"""
from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "HyperparameterError",
    "InvalidParameterError",
    "Rule",
    "HyperparameterMixin",
    "options",
    "POSITIVE",
    "NONNEGATIVE",
    "FINITE",
    "INT_GE1",
    "INT_GE1_OR_NONE",
    "BOOL",
]


class HyperparameterError(ValueError, TypeError):
    """A hyperparameter outside its documented range; raised by ``fit``.

    A ``ValueError`` and a ``TypeError`` (as scikit-learn's own parameter error is), so ``except ValueError``
    and ``except TypeError`` both catch it.
    """


#: The earlier name of :class:`HyperparameterError`, kept so that ``except InvalidParameterError`` clauses
#: written against ``svmref.solvers.estimators`` go on catching it (the same class, not scikit-learn's).
InvalidParameterError = HyperparameterError


class Rule(NamedTuple):
    """One row of an estimator's ``_hyperparameter_rules``: ``expected`` (in words, for the message) and
    ``ok`` (the predicate a valid value satisfies)."""

    expected: str
    ok: Callable[[Any], bool]


def is_real(v) -> bool:
    """A finite real number that is not a boolean."""
    return isinstance(v, Real) and not isinstance(v, (bool, np.bool_)) and bool(np.isfinite(v))


def is_int(v) -> bool:
    """An integer that is not a boolean."""
    return isinstance(v, Integral) and not isinstance(v, (bool, np.bool_))


def options(*opts: str) -> Rule:
    """One of the strings ``opts``."""
    return Rule("one of " + ", ".join(map(repr, opts)), lambda v: isinstance(v, str) and v in opts)


POSITIVE = Rule("a finite float > 0", lambda v: is_real(v) and v > 0)
NONNEGATIVE = Rule("a finite float >= 0", lambda v: is_real(v) and v >= 0)
FINITE = Rule("a finite float", is_real)
INT_GE1 = Rule("an int >= 1", lambda v: is_int(v) and v >= 1)
INT_GE1_OR_NONE = Rule("an int >= 1 or None", lambda v: v is None or (is_int(v) and v >= 1))
BOOL = Rule("True or False", lambda v: isinstance(v, (bool, np.bool_)))


class HyperparameterMixin:
    """Checks ``_hyperparameter_rules`` (declared by each estimator) at the start of ``fit``."""

    _hyperparameter_rules: dict[str, Rule] = {}

    def _check_hyperparameters(self) -> None:
        """Check every hyperparameter against ``_hyperparameter_rules``; raise naming the first bad one."""
        for name, (expected, ok) in self._hyperparameter_rules.items():
            value = getattr(self, name)
            if not ok(value):
                raise HyperparameterError(
                    f"The {name!r} parameter of {type(self).__name__} must be {expected}; got {value!r}.")
        self._check_hyperparameter_combinations()

    def _check_hyperparameter_combinations(self) -> None:
        """Hook: checks that involve several hyperparameters (each valid on its own); none by default."""
