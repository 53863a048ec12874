"""Import the solver a SPEC names (``package.module:callable`` or ``path/to/file.py:callable``).

Shared by the command line (:mod:`svmref.verify.cli`) and the worker process
(:mod:`svmref.verify.worker`), which loads the solver by name when it is started with ``spawn``.
It imports nothing else of :mod:`svmref.verify`.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

__all__ = ["load_spec", "parse_spec", "SpecError"]


class SpecError(Exception):
    """SPEC cannot be imported or does not name a callable (exit code 2)."""


def _bad_form(spec: str) -> SpecError:
    target, colon, attr = spec.rpartition(":")
    if not colon:
        why = f", which names no callable: add ':NAME' after it, e.g. '{spec}:my_solver'" if spec else " (empty)"
    elif not attr:
        why = f", which ends with ':' and names no callable after it, e.g. '{target}:my_solver'"
    else:
        why = ", which names no module or file before the ':'"
    return SpecError(f"SPEC must look like package.module:callable or path/to/file.py:callable; got {spec!r}{why}")


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``SPEC`` into its module or file and its callable, without importing anything.

    Parameters
    ----------
    spec : str
        ``package.module:callable`` or ``path/to/file.py:callable``.

    Returns
    -------
    tuple of str
        ``(target, attr)``: the module's dotted name or the file's path, and the callable's name.

    Raises
    ------
    SpecError
        When ``spec`` is not of that form; the message says what is missing.
    """
    target, colon, attr = spec.rpartition(":")
    if not colon or not target or not attr:
        raise _bad_form(spec)
    return target, attr


def _from_file(spec: str, target: str):
    """The module of ``path/to/file.py`` (its folder goes on ``sys.path`` so it can import its neighbours)."""
    path = os.path.abspath(target)
    if not os.path.isfile(path):
        raise SpecError(f"cannot import {spec!r}: no such file {target!r}")
    modname = "_svmref_verify_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)  # so the user's file can import its neighbours
    try:
        loader_spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[modname] = module
        loader_spec.loader.exec_module(module)
    except Exception as exc:  # the user's module failed while importing
        raise SpecError(f"cannot import {spec!r}: {type(exc).__name__}: {exc}") from exc
    return module


def _from_package(spec: str, target: str):
    """The module ``package.module``, importable from the current directory or the installed packages."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(target)
    except Exception as exc:
        raise SpecError(f"cannot import {spec!r}: {type(exc).__name__}: {exc}") from exc


_FORMS = "SPEC names the solver, as path/to/file.py:callable or package.module:callable"


def _not_python(spec: str, target: str) -> SpecError | None:
    """The error for a SPEC whose target is an existing file, but not Python (e.g. the training data given as the
    solver: ``data.csv:f`` was read as the module ``data`` and its attribute ``csv``)."""
    if target.endswith(".py") or not os.path.isfile(target):
        return None
    return SpecError(f"cannot import {spec!r}: {target!r} is a file, but not Python (.py): {_FORMS} (training data "
                     "go to --data FILE)")


def load_spec(spec: str):
    """Import ``package.module:callable`` or ``path/to/file.py:callable`` and return the callable."""
    target, attr = parse_spec(spec)
    wrong = _not_python(spec, target)
    if wrong is not None:
        raise wrong
    if target.endswith(".py") or os.sep in target or "/" in target:
        module = _from_file(spec, target)
    else:
        module = _from_package(spec, target)
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SpecError(f"cannot import {spec!r}: module {target!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise SpecError(f"{spec!r} is not callable ({type(obj).__name__})")
    return obj
