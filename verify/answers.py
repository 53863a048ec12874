"""What a solver returns, read into arrays (the contract of :mod:`svmref.verify`).

Each formulation's entry in :mod:`svmref.verify.specs` names the reader of its answers:
:func:`alpha_b` (``(alpha, b)``, ``alpha`` alone, or an object with ``.alpha`` and ``.b``), :func:`coefficients`
(``c`` or an object with ``.c``) or :func:`features` (an object with ``.lam`` and/or ``.a``, ``.b``).
A reader raises :class:`BadAnswer` saying what is wrong (wrong type, length, a non-finite entry).
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from types import SimpleNamespace

import numpy as np

__all__ = ["BadAnswer", "DifferentProblem", "PlainAnswer", "ATTRIBUTES", "alpha_b", "coefficients", "features",
           "linear_primal", "ridge", "get", "attribute_names"]

#: The attributes the readers below look for (and ``status``, which the report notes): what the worker
#: process sends back of an answer that cannot be pickled.
ATTRIBUTES = ("alpha", "b", "c", "lam", "a", "w", "status")


#: Names that people give the contract's attributes, for "did you mean" (besides the close spellings).
SYNONYMS = {"b": ("bias", "intercept", "intercept_", "b0", "beta0", "bias_"), "alpha": ("dual_coef", "dual_coef_"),
            "c": ("coef", "coef_", "dual_coef_"), "lam": ("lambda", "lambda_", "lambdas"), "a": ("w", "coef_", "weights")}
#: Most names an error message lists.
_MAX_NAMES = 12


class PlainAnswer(SimpleNamespace):
    """An answer that could not be pickled, as its contract attributes.

    ``type_name`` keeps its type's name and ``attribute_names`` the names of all its attributes.
    """


def attribute_names(out) -> list[str]:
    """The names an answer offers: a mapping's keys, or an object's attributes, public and private.

    An object's are those of its ``__dict__``, its ``__slots__`` and the properties of its class (not methods,
    not ``__dunder__`` names), in the order they were defined.
    """
    if isinstance(out, PlainAnswer):
        return list(getattr(out, "attribute_names", ()))
    if isinstance(out, Mapping):
        return [str(k) for k in out]
    names = list(vars(out)) if isinstance(getattr(out, "__dict__", None), dict) else []
    for cls in type(out).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
        names += [k for k, v in cls.__dict__.items() if isinstance(v, property)]
    seen = dict.fromkeys(n for n in names if not (n.startswith("__") and n.endswith("__")))
    return list(seen)


def _listing(out) -> str:
    """``with attributes alphas, _b`` (or ``with keys 'x', 'y'``; ``with no attributes``)."""
    names = attribute_names(out)
    keys = isinstance(out, Mapping)
    if not names:
        return "with no keys" if keys else "with no attributes"
    shown = [repr(n) if keys else n for n in names[:_MAX_NAMES]]
    more = f", ... ({len(names)} in all)" if len(names) > _MAX_NAMES else ""
    return f"with {'keys' if keys else 'attributes'} {', '.join(shown)}{more}"


def _suggestions(names: list[str], accepted: tuple[str, ...]) -> list[str]:
    """``alphas -> alpha`` for each accepted name that the answer seems to give under another name."""
    out = []
    for want in accepted:
        if want in names:
            continue
        bare = {n.strip("_").lower(): n for n in names}
        hit = bare.get(want) or next((bare[s.strip("_").lower()] for s in SYNONYMS.get(want, ())
                                      if s.strip("_").lower() in bare), None)
        if hit is None:
            close = difflib.get_close_matches(want, list(bare), n=1, cutoff=0.75)
            hit = bare[close[0]] if close else None
        if hit is not None:
            out.append(f"{hit} -> {want}")
    return out


def unusable(out, accepted: tuple[str, ...], contract: str) -> BadAnswer:
    """The error for an answer that lacks the names verify reads: what it has, what is accepted, and a guess."""
    if _is_plain(out) or isinstance(out, (tuple, list, np.ndarray)):  # nothing named to list
        return BadAnswer(f"{contract}; got {received(out)}")
    names = attribute_names(out)
    word = "keys" if isinstance(out, Mapping) else "attributes"
    guess = _suggestions(names, accepted)
    hint = f"; did you mean {', '.join(guess)}?" if guess else ""
    return BadAnswer(f"{contract}; got {received(out)}: verify reads the {word} "
                     f"{', '.join(accepted)}{hint}")


class BadAnswer(Exception):
    """The solver's answer cannot be used (wrong type, length, NaN); the message says why."""


class DifferentProblem(BadAnswer):
    """The answer is that of another problem than the formulation's, known from how it was made (a linear model that
    puts its intercept in the penalty); the verdict is "different problem", neither a pass nor a fail."""


def _refuse_complex(v, name: str) -> None:
    """A complex answer is not an answer of a real problem, even with zero imaginary parts (its dtype says the
    solver computed in complex arithmetic)."""
    try:
        complex_ = np.iscomplexobj(v)
    except Exception:  # not array-like: the caller's conversion says so
        return
    if complex_:
        imag = float(np.max(np.abs(np.imag(v)), initial=0.0))
        raise BadAnswer(f"{name} is complex (dtype {np.asarray(v).dtype}; imaginary parts up to {imag:.3g}): the "
                        "problem is over the reals, so the answer must be real")


def vector(v, name: str, n: int) -> np.ndarray:
    """``v`` as a finite float vector of length ``n`` (a column or row matrix is squeezed)."""
    _refuse_complex(v, name)
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
    _refuse_complex(v, name)
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
        return f"{_article(out.type_name)} {_listing(out)}"
    if isinstance(out, (tuple, list)):
        items = ", ".join(_short(x) for x in out[:4]) + (", ..." if len(out) > 4 else "")
        return f"a {type(out).__name__} of length {len(out)} ({items})"
    if isinstance(out, np.ndarray):
        return f"an ndarray of shape {out.shape}"
    if out is None:
        return "None"
    if _is_plain(out):
        return _article(type(out).__name__)
    return f"{_article(type(out).__name__)} {_listing(out)}"


def _is_plain(out) -> bool:
    """A value without attributes worth listing (None, a number, a string)."""
    return out is None or isinstance(out, (int, float, complex, str, bytes, np.generic))


def _article(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def alpha_b(out, inst) -> dict:
    """``{"alpha", "b"}`` from ``(alpha, b)``, ``alpha`` alone, or an object (or dict) with ``.alpha`` and ``.b``."""
    contract = "the solver returns (alpha, b), alpha, or an object (or dict) with .alpha and .b"
    if isinstance(out, np.ndarray):
        alpha, b = out, None
    elif isinstance(out, Mapping) or hasattr(out, "alpha"):
        alpha, b = get(out, "alpha"), get(out, "b")
    elif isinstance(out, (tuple, list)) and len(out) in (1, 2) and not np.isscalar(out[0]):
        alpha, b = out[0], (out[1] if len(out) == 2 else None)
    else:
        raise unusable(out, ("alpha", "b"), contract)
    if alpha is None:
        if isinstance(out, Mapping) and "alpha" not in out:
            raise unusable(out, ("alpha", "b"), contract)
        raise BadAnswer(f"the answer's alpha is None ({received(out)})")
    return {"alpha": vector(alpha, "alpha", inst.N), "b": scalar(b, "b")}


def coefficients(out, inst) -> dict:
    """``{"c"}`` from ``c`` or an object (or dict) with ``.c`` (RLS: no bias)."""
    contract = "an RLS solver returns c or an object (or dict) with .c"
    c = out
    if isinstance(out, Mapping) or (not isinstance(out, (np.ndarray, list, tuple)) and hasattr(out, "c")):
        c = get(out, "c")
    elif isinstance(out, tuple) and len(out) == 1:
        c = out[0]
    elif isinstance(out, tuple):
        raise BadAnswer(f"{contract}; got {received(out)}")
    elif not isinstance(out, (np.ndarray, list)) and attribute_names(out):
        raise unusable(out, ("c",), contract)  # an object with attributes, none of them c
    if c is None:
        if isinstance(out, Mapping) and "c" not in out:
            raise unusable(out, ("c",), contract)
        raise BadAnswer(f"{contract}; got {received(out)}")
    return {"c": vector(c, "c", inst.N)}


def _dual_and_or_primal(out, inst, dual: str, primal: str, who: str) -> dict:
    """``{dual, primal, "b"}`` from an object (or dict) with the dual vector ``.<dual>`` (length N) and/or the primal
    ``.<primal>`` (length d) with ``.b`` (absent ones ``None``): the answer of a formulation on the features ``X``."""
    if isinstance(out, (tuple, list, np.ndarray)):
        raise BadAnswer(f"{who} returns an object (or dict) with .{dual} and/or .{primal}, .b; got {received(out)}")
    d, p, b = get(out, dual), get(out, primal), get(out, "b")
    if d is None and p is None:
        raise unusable(out, (dual, primal, "b"), f"the answer has neither .{dual} nor .{primal}")
    if d is None and b is None:
        raise BadAnswer(f"a primal answer (.{primal} without .{dual}) must also give .b")
    return {dual: None if d is None else vector(d, dual, inst.N),
            primal: None if p is None else vector(p, primal, inst.X.shape[1]),
            "b": scalar(b, "b")}


def features(out, inst) -> dict:
    """``{"lam", "a", "b"}``: the support features machine's dual ``lam`` and/or primal ``a`` with ``b``."""
    return _dual_and_or_primal(out, inst, "lam", "a", "a support features solver")


def ridge(out, inst) -> dict:
    """``{"alpha", "w", "b"}``: the dual ``alpha`` and/or the primal ``w`` with ``b`` of the fixed-size LS-SVM's primal
    (ridge with a free bias) on the features ``X``."""
    return _dual_and_or_primal(out, inst, "alpha", "w", "a solver of the fixed-size LS-SVM's primal")


def linear_primal(out, inst) -> dict:
    """``{"alpha", "w", "b"}``: the dual ``alpha`` and/or the primal ``w`` with ``b`` of the SVM with the bias in the
    penalty on the features ``X``."""
    return _dual_and_or_primal(out, inst, "alpha", "w", "a solver of the SVM with the bias in the penalty")
