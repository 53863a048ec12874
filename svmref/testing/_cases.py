"""One instance that knows its formulation (:class:`Case`), and how to keep it in a file and read it back.

A hard instance found once (by the strategies of :mod:`svmref.testing.strategies`, or by hand) is kept as a
small JSON file (:func:`save_instance`) and checked on every later run (:func:`load_instance`). JSON writes a
float as its shortest round-tripping decimal (``repr``), so a loaded case is bit for bit the saved one.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from svmref.verify import Instance
from svmref.verify.specs import get as _spec

__all__ = ["Case", "save_instance", "load_instance", "hyper_keys", "content_name", "describe", "FORMAT"]

#: The version of the file format written by :func:`save_instance`.
FORMAT = 1


@dataclass(repr=False)
class Case(Instance):
    """An :class:`svmref.verify.Instance` that carries the formulation it was made for.

    ``formulation`` is a name of :func:`svmref.verify.specs.names` (``check_instance`` needs no second argument
    then); ``regime`` says which hard regime of :mod:`svmref.testing.strategies` built it ("" for an instance made
    otherwise). Everything else is the instance's (``X``, ``y``, ``X_test``, ``kernel``, ``kernel_params``,
    ``hyper``, ``unique``, ``description``; ``K`` and ``K_test`` computed once).
    """

    formulation: str = ""
    regime: str = ""

    def __post_init__(self):
        self.X, self.y, self.X_test = (np.asarray(a, dtype=np.float64) for a in (self.X, self.y, self.X_test))

    def __repr__(self) -> str:
        """The call that builds this case again, on one line (what hypothesis prints for a falsifying example, and
        what its ``@example`` patches write)."""
        return (f"Case(name={self.name!r}, X={_array(self.X)}, y={_array(self.y)}, X_test={_array(self.X_test)}, "
                f"kernel={self.kernel!r}, kernel_params={self.kernel_params!r}, hyper={self.hyper!r}, "
                f"unique={self.unique!r}, description={self.description!r}, "
                + ("" if self.weights is None else f"weights={_array(self.weights)}, ")
                + f"formulation={self.formulation!r}, regime={self.regime!r})")

    def _repr_pretty_(self, printer, cycle) -> None:
        """hypothesis' (and IPython's) pretty printer: the same one line as :meth:`__repr__`."""
        printer.text(repr(self))


def _array(a) -> str:
    """Every entry, on one line, each float written so that it reads back exactly (Python's ``repr``)."""
    return repr(np.asarray(a, dtype=float).tolist())


def hyper_keys(formulation: str) -> tuple[str, ...]:
    """The hyperparameters an instance of ``formulation`` must carry (``("C",)``, ``("gamma",)``, ``("C", "mu")``,
    ``("C", "epsilon")``), read from verify's entry (:attr:`svmref.verify.specs.Spec.data_hyper`)."""
    return tuple(_spec(formulation).data_hyper(1.0, 0.5, 0.1, 10))


def content_name(prefix: str, X, y, X_test, kernel: str, kernel_params: dict, hyper: dict, weights=None) -> str:
    """``prefix-<8 hex digits>``: the digits are a hash of the data, kernel, hyperparameters and weights.

    verify caches a reference per instance name, kernel, hyperparameters and size; two generated instances
    that differ only in their data must therefore differ in name, and do.
    """
    h = hashlib.sha1()
    for a in (X, y, X_test) + (() if weights is None else (weights,)):
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    h.update(json.dumps([kernel, kernel_params, hyper], sort_keys=True).encode())
    return f"{prefix}-{h.hexdigest()[:8]}"


def describe(inst: Instance) -> str:
    """``N = 2, d = 1, linear kernel, C = 1000 (regime generic)``: the size and setting of an instance."""
    d = inst.X.shape[1] if inst.X.ndim == 2 else 0
    kp = ", ".join(f"{k} = {v:g}" for k, v in sorted(inst.kernel_params.items()))
    kern = f"{inst.kernel} kernel" + (f" ({kp})" if kp else "")
    hyp = ", ".join(f"{k} = {v:g}" for k, v in inst.hyper.items())
    regime = getattr(inst, "regime", "")
    return f"N = {inst.N}, d = {d}, {kern}, {hyp}" + (f" (regime {regime})" if regime else "")


def save_instance(instance: Instance, path, formulation: str | None = None) -> Path:
    """Write ``instance`` to the JSON file ``path``, or to ``path/<instance name>.json`` when ``path`` is a folder.

    Parameters
    ----------
    instance : Instance
        A :class:`Case` (from :mod:`svmref.testing.strategies` or :func:`load_instance`) or any
        :class:`svmref.verify.Instance`.
    path : str or os.PathLike
        A file ending in ``.json`` or a folder (either is created with its parent folders when missing).
    formulation : str, optional
        The formulation it is for; defaults to ``instance.formulation``.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    if not isinstance(instance, Instance):
        raise TypeError(f"instance must be an svmref.verify.Instance (or svmref.testing.Case); got {type(instance).__name__}")
    formulation = formulation or getattr(instance, "formulation", "") or ""
    if formulation:
        _spec(formulation)  # ValueError naming the known formulations
    path = Path(os.fspath(path))
    if path.suffix.lower() != ".json":  # a folder (created if missing): the file is named after the instance
        path = path / f"{instance.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"format": FORMAT, "formulation": formulation, "name": instance.name, "regime": getattr(instance, "regime", ""),
           "description": instance.description, "kernel": instance.kernel, "kernel_params": instance.kernel_params,
           "hyper": {k: float(v) for k, v in instance.hyper.items()}, "unique": bool(instance.unique),
           "X": np.asarray(instance.X, dtype=float).tolist(), "y": np.asarray(instance.y, dtype=float).tolist(),
           "X_test": np.asarray(instance.X_test, dtype=float).tolist()}
    if instance.weights is not None:
        doc["weights"] = np.asarray(instance.weights, dtype=float).tolist()
    path.write_text(_json(doc), encoding="utf-8")
    return path


def _json(doc: dict) -> str:
    """One field per line and one row of a matrix per line: a kept case reads (and diffs) as a table."""
    def value(v):
        if isinstance(v, list) and v and isinstance(v[0], list):
            return "[\n    " + ",\n    ".join(json.dumps(row) for row in v) + "\n  ]"
        return json.dumps(v, sort_keys=True)
    return "{\n" + ",\n".join(f"  {json.dumps(k)}: {value(v)}" for k, v in doc.items()) + "\n}\n"


_FIELDS = {"format": int, "formulation": str, "name": str, "regime": str, "description": str, "kernel": str,
           "kernel_params": dict, "hyper": dict, "unique": bool, "X": list, "y": list, "X_test": list}


def _matrix(doc: dict, key: str, where: Path, ndim: int) -> np.ndarray:
    try:
        a = np.asarray(doc[key], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {key} must be numbers") from None
    if a.ndim != ndim or not np.all(np.isfinite(a)):
        shape = "a list of rows of numbers" if ndim == 2 else "a list of numbers"
        raise ValueError(f"{where}: {key} must be {shape}, all finite; got shape {a.shape}")
    return a


def load_instance(path) -> Case:
    """Read a case written by :func:`save_instance`.

    Raises ``FileNotFoundError`` naming ``path`` when it does not exist, and ``ValueError`` naming the file and
    the field when its content is not a saved instance.
    """
    path = Path(os.fspath(path))
    if not path.is_file():
        raise FileNotFoundError(f"path: no file {str(path)!r} (a JSON file written by svmref.testing.save_instance)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON file written by svmref.testing.save_instance ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a saved instance (a JSON object was expected)")
    for key, kind in _FIELDS.items():
        if not isinstance(doc.get(key), kind):
            raise ValueError(f"{path}: field {key!r} must be a {kind.__name__}; got {doc.get(key)!r:.60}")
    if doc["format"] != FORMAT:
        raise ValueError(f"{path}: format {doc['format']} is not {FORMAT}, the one this version reads")
    if doc["formulation"]:
        try:
            _spec(doc["formulation"])
        except ValueError as exc:
            raise ValueError(f"{path}: field 'formulation': {exc}") from None
    X, y, X_test = _matrix(doc, "X", path, 2), _matrix(doc, "y", path, 1), _matrix(doc, "X_test", path, 2)
    if X.shape[0] != y.shape[0] or X.shape[1] != X_test.shape[1]:
        raise ValueError(f"{path}: X is {X.shape}, y {y.shape} and X_test {X_test.shape}: y must have one value per "
                         f"row of X and X_test the columns of X")
    v = None
    if doc.get("weights") is not None:
        v = _matrix(doc, "weights", path, 1)
        if v.shape != y.shape or not np.all(v > 0):
            raise ValueError(f"{path}: weights must be N = {y.shape[0]} positive numbers; got shape {v.shape}")
    return Case(doc["name"], X, y, X_test, doc["kernel"], dict(doc["kernel_params"]), dict(doc["hyper"]), doc["unique"],
                doc["description"], weights=v, formulation=doc["formulation"], regime=doc["regime"])
