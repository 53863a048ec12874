"""What a solver returns, read into arrays (the contract of :mod:`svmref.verify`).

Each formulation's entry in :mod:`svmref.verify.specs` names the reader of its answers:
:func:`alpha_b` (``(alpha, b)``, ``alpha`` alone, or an object with ``.alpha`` and ``.b``), :func:`coefficients`
(``c`` or an object with ``.c``) or :func:`features` (an object with ``.lam`` and/or ``.a``, ``.b``).
A reader raises :class:`BadAnswer` saying what is wrong (wrong type, length, a non-finite entry).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace

import numpy as np

__all__ = ["BadAnswer", "PlainAnswer", "ATTRIBUTES", "alpha_b", "coefficients", "features", "get"]

#: The attributes the readers below look for (and ``status``, which the report notes): what the worker
#: process sends back of an answer that cannot be pickled.
ATTRIBUTES = ("alpha", "b", "c", "lam", "a", "status")


class PlainAnswer(SimpleNamespace):
    """An answer that could not be pickled, as its contract attributes (``type_name`` keeps its type)."""


class BadAnswer(Exception):
    """The solver's answer cannot be used (wrong type, length, NaN); the message says why."""


def vector(v, name: str, n: int) -> np.ndarray:
    """``v`` as a finite float vector of length ``n`` (a column or row matrix is squeezed)."""
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise BadAnswer(f"{name} is not numeric ({type(v).__name__}: {exc})") from None
    a = np.squeeze(a) if a.ndim > 1 and 1 in a.shape else a
    if a.ndim != 1:
        raise BadAnswer(f"{name} must be a vector of length {n}; got an array of shape {a.shape}")
    if a.shape[0] != n:
        raise BadAnswer(f"{name} has length {a.shape[0]}, expected {n}")
    bad = ~np.isfinite(a)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise BadAnswer(f"{name}_{i} = {a[i]} is not finite ({int(bad.sum())} non-finite entries)")
    return a


def scalar(v, name: str) -> float | None:
    """``v`` as a finite float (``None`` stays ``None``: not given)."""
    if v is None:
        return None
    try:
        x = float(np.asarray(v, dtype=float).reshape(-1)[0]) if np.ndim(v) else float(v)
        if np.size(v) != 1:
            raise ValueError(f"size {np.size(v)}")
    except (TypeError, ValueError, IndexError) as exc:
        raise BadAnswer(f"{name} must be a number; got {v!r} ({exc})") from None
    if not math.isfinite(x):
        raise BadAnswer(f"{name} = {x} is not finite")
    return x


def get(out, name):
    """The attribute (or key of a mapping) ``name`` of an answer, ``None`` when absent."""
    if isinstance(out, Mapping):
        return out.get(name)
    return getattr(out, name, None)


def _short(x) -> str:
    if isinstance(x, np.ndarray):
        return f"ndarray of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of length {len(x)}"
    return type(x).__name__


def received(out) -> str:
    """What the solver returned, for an error message: its type, and for a sequence its length and items."""
    if isinstance(out, PlainAnswer):
        return f"a {out.type_name} (attributes {', '.join(k for k in vars(out) if k != 'type_name') or 'none'})"
    if isinstance(out, (tuple, list)):
        items = ", ".join(_short(x) for x in out[:4]) + (", ..." if len(out) > 4 else "")
        return f"a {type(out).__name__} of length {len(out)} ({items})"
    if isinstance(out, np.ndarray):
        return f"an ndarray of shape {out.shape}"
    return f"a {type(out).__name__}"


def alpha_b(out, inst) -> dict:
    """``{"alpha", "b"}`` from ``(alpha, b)``, ``alpha`` alone, or an object (or dict) with ``.alpha`` and ``.b``."""
    if isinstance(out, np.ndarray):
        alpha, b = out, None
    elif isinstance(out, Mapping) or hasattr(out, "alpha"):
        alpha, b = get(out, "alpha"), get(out, "b")
    elif isinstance(out, (tuple, list)) and len(out) in (1, 2) and not np.isscalar(out[0]):
        alpha, b = out[0], (out[1] if len(out) == 2 else None)
    else:
        raise BadAnswer(f"the solver returns (alpha, b), alpha, or an object with .alpha and .b; "
                        f"got {received(out)}")
    if alpha is None:
        raise BadAnswer(f"the answer's alpha is None ({received(out)})")
    return {"alpha": vector(alpha, "alpha", inst.N), "b": scalar(b, "b")}


def coefficients(out, inst) -> dict:
    """``{"c"}`` from ``c`` or an object (or dict) with ``.c`` (RLS: no bias)."""
    c = out
    if isinstance(out, Mapping) or (not isinstance(out, (np.ndarray, list, tuple)) and hasattr(out, "c")):
        c = get(out, "c")
    elif isinstance(out, tuple) and len(out) == 1:
        c = out[0]
    elif isinstance(out, tuple):
        raise BadAnswer(f"an RLS solver returns c or an object with .c; got {received(out)}")
    if c is None:
        raise BadAnswer(f"an RLS solver returns c or an object with .c; got {received(out)}")
    return {"c": vector(c, "c", inst.N)}


def features(out, inst) -> dict:
    """``{"lam", "a", "b"}`` from an object (or dict) with ``.lam`` and/or ``.a``, ``.b`` (absent ones ``None``)."""
    if isinstance(out, (tuple, list, np.ndarray)):
        raise BadAnswer("a support features solver returns an object (or dict) with .lam and/or .a, .b; "
                        f"got {received(out)}")
    lam, a, b = get(out, "lam"), get(out, "a"), get(out, "b")
    if lam is None and a is None:
        raise BadAnswer(f"the answer has neither .lam nor .a ({received(out)})")
    if lam is None and b is None:
        raise BadAnswer("a primal answer (.a without .lam) must also give .b")
    return {"lam": None if lam is None else vector(lam, "lam", inst.N),
            "a": None if a is None else vector(a, "a", inst.X.shape[1]),
            "b": scalar(b, "b")}
