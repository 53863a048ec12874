"""The papers' real data sets, shipped with the package (no download, no extra package).

``load_dataset(name) -> (X, y)`` reads a CSV from ``svmref/datasets/data`` (copies of the
project's ``shared/data``; provenance, licences and changes in ``PROVENANCE.md`` beside this file).

Encoding, the same for every set:

* a column whose every value parses as a number is kept as a float feature;
* any other column is categorical and is one-hot encoded (one 0/1 column per category,
  categories in sorted order), so that a kernel method can use it; ``encoding="ordinal"`` gives
  one column of codes 0, 1, ... instead (the benchmark versions' feature counts);
* the class column is mapped to ``+1`` / ``-1`` as listed in :data:`DATASETS`
  (``positive`` is the class mapped to ``+1``; every other class goes to ``-1``,
  except ``letter`` where only the two letters are kept);
* features are returned as stored unless ``scale`` is ``"minmax"`` (to [0, 1], as 001 §3.1
  does) or ``"standard"`` (zero mean, unit variance).

Regression sets (``mcycle``) return the real target unchanged.

``lung-cancer`` (UCI Lung Cancer, 003 §3.3) has the class in the *first* column and ``?`` for missing
values; by default the loader does 003's preparation (rows with ``?`` dropped, then the constant
attribute dropped: 27 x 55; class 3 -> +1, classes 1 and 2 -> -1); ``raw=True`` gives the file's
32 x 56 table (``NaN`` for ``?``, ``y`` the class codes 1, 2, 3). :func:`lung_cancer_attributes`
names the columns of ``X`` by their UCI attribute numbers.

Synthetic data (generated, numpy only; :mod:`svmref.datasets.synthetic`): :func:`two_hypercubes`, the
"two hypercubes" of 003 §3.1.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

from .synthetic import two_hypercubes

__all__ = ["load_dataset", "dataset_names", "DATASETS", "DatasetInfo", "lung_cancer_attributes", "two_hypercubes"]


@dataclass(frozen=True)
class DatasetInfo:
    """What :func:`load_dataset` knows of a data set."""

    file: str
    header: bool
    task: str  # "classification" or "regression"
    positive: tuple[str, ...] = ()  # raw class values mapped to +1
    keep: tuple[str, ...] | None = None  # raw class values kept (None: all)
    used_by: str = ""
    class_first: bool = False  # the class is the first column (else the last)
    missing: str | None = None  # missing-value marker; rows holding it are dropped unless raw=True
    drop_constant: bool = False  # drop columns that are constant after the rows are dropped (unless raw=True)


DATASETS: dict[str, DatasetInfo] = {
    "titanic": DatasetInfo("titanic.csv", False, "classification", ("1.0",), used_by="000 Table 2"),
    "heart": DatasetInfo("heart.csv", False, "classification", ("2",), used_by="000 Table 2 (class 2: presence)"),
    "breast": DatasetInfo("breast.csv", False, "classification", ("recurrence-events",),
        used_by="000 Table 2 'Cancer'; 001 'cancer'"),
    "german": DatasetInfo("german.csv", False, "classification", ("2",), used_by="000 Table 2 (class 2: bad credit)"),
    "banana": DatasetInfo("banana.csv", False, "classification", ("1.0",), used_by="extra benchmark"),
    "twonorm": DatasetInfo("twonorm.csv", False, "classification", ("1",), used_by="extra benchmark"),
    "ring": DatasetInfo("ring.csv", False, "classification", ("1",), used_by="extra benchmark"),
    "sonar": DatasetInfo("sonar.csv", False, "classification", ("M",), used_by="001 Table 1 (M: mine)"),
    "ionosphere": DatasetInfo("ionosphere.csv", False, "classification", ("g",), used_by="001 Table 1 (g: good)"),
    "pima": DatasetInfo("pima.csv", False, "classification", ("tested_positive",), used_by="001 Table 1"),
    "wisconsin": DatasetInfo("wisconsin.csv", False, "classification", ("4",), used_by="001 Table 1 'cancer-w' (4: malignant)"),
    "crx": DatasetInfo("crx.csv", False, "classification", ("positive",), used_by="001 Table 1 'credit card'"),
    "iris": DatasetInfo("iris.csv", False, "classification", ("Iris-versicolor",),
        used_by="001 Table 1 (versicolor vs the other two)"),
    "letter": DatasetInfo("letter.csv", False, "classification", ("V",), keep=("V", "W"),
        used_by="001 Table 1 'letter (v, w)': V +1, W -1"),
    "new-thyroid1": DatasetInfo("new-thyroid1.csv", False, "classification", ("positive",), used_by="001 Table 1 'thyroid'"),
    "glass1": DatasetInfo("glass1.csv", False, "classification", ("positive",), used_by="001 Table 1 'glass'"),
    "wdbc": DatasetInfo("wdbc.csv", False, "classification", ("M",), used_by="extra benchmark (M: malignant)"),
    "australian": DatasetInfo("australian.csv", False, "classification", ("1",), used_by="extra benchmark"),
    "synth.tr": DatasetInfo("synth.tr.csv", True, "classification", ("1",),
        used_by="004 Table 1 and Fig. 1 'Ripley' (training set, 250)"),
    "synth.te": DatasetInfo("synth.te.csv", True, "classification", ("1",), used_by="004 Table 1 'Ripley' (test set, 1000)"),
    "mcycle": DatasetInfo("mcycle.csv", True, "regression", used_by="004 Table 1 and Fig. 1 'Motorcycle' (X: times, y: accel)"),
    "lung-cancer": DatasetInfo("lung-cancer.csv", False, "classification", ("3",), used_by=(
        "003 §3.3-3.4, Figs. 4-5: class 3 (9 patients, 003's N1) +1 vs classes 1 and 2 (18, N2) -1; 27 x 55"),
        class_first=True, missing="?", drop_constant=True),
}

_ALIASES = {
    "cancer": "breast",
    "thyroid": "new-thyroid1",
    "glass": "glass1",
    "cancer-w": "wisconsin",
    "credit": "crx",
    "ripley": "synth.tr",
    "ripley-train": "synth.tr",
    "ripley-test": "synth.te",
    "motorcycle": "mcycle",
    "lung": "lung-cancer",
}


def dataset_names() -> list[str]:
    """Names accepted by :func:`load_dataset` (aliases excluded)."""
    return sorted(DATASETS)


def _read_rows(info: DatasetInfo) -> list[list[str]]:
    text = resources.files(__name__).joinpath("data", info.file).read_text(encoding="utf-8")
    rows = [[v.strip() for v in r] for r in csv.reader(text.splitlines()) if r]
    rows = rows[1:] if info.header else rows
    return [r[1:] + r[:1] for r in rows] if info.class_first else rows  # the class goes last


def _prepare_rows(info: DatasetInfo, rows: list[list[str]], raw: bool) -> list[list[str]]:
    """Missing values: ``raw`` keeps every row with ``NaN`` for the marker; otherwise drops the rows holding it."""
    if info.missing is None:
        return rows
    if raw:
        return [[("nan" if v == info.missing else v) for v in r] for r in rows]
    return [r for r in rows if info.missing not in r]


def lung_cancer_attributes(*, raw: bool = False) -> np.ndarray:
    """UCI attribute numbers of the columns of ``load_dataset("lung-cancer", raw=raw)[0]``.

    UCI's ``lung-cancer.names`` numbers the file's columns 1..57: attribute 1 is the class, attributes
    2..57 the 56 features (integer codes 0-3; ``?`` only in attributes 5 and 39). 003's preparation
    drops the 5 rows holding ``?`` and then attribute 2, constant (0) on the 27 rows left, so the
    prepared ``X`` has attributes 3..57 (55 columns) and the raw table attributes 2..57.
    """
    info = DATASETS["lung-cancer"]
    rows = _prepare_rows(info, _read_rows(info), raw)
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    attrs = np.arange(2, X.shape[1] + 2)
    return attrs if raw else attrs[np.ptp(X, axis=0) > 0]


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _natural_key(v: str) -> tuple:
    """Sort key that compares digit runs as numbers, so that ``"5-9"`` sorts before ``"10-14"``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v))


def _encode(columns: list[list[str]], encoding: str = "onehot") -> np.ndarray:
    blocks = []
    for col in columns:
        if all(_is_number(v) for v in col):
            blocks.append(np.array([float(v) for v in col])[:, None])
        elif encoding == "ordinal":
            # one column of integer codes 0, 1, ... in natural order of the category names (the
            # benchmark versions' feature counts: breast cancer 9, german 20; see load_dataset)
            idx = {c: float(k) for k, c in enumerate(sorted(set(col), key=_natural_key))}
            blocks.append(np.array([idx[v] for v in col])[:, None])
        else:
            cats = sorted(set(col))
            idx = {c: k for k, c in enumerate(cats)}
            onehot = np.zeros((len(col), len(cats)))
            onehot[np.arange(len(col)), [idx[v] for v in col]] = 1.0
            blocks.append(onehot)
    return np.hstack(blocks)


def load_dataset(name: str, *, scale: str | None = None, encoding: str = "onehot",
                 raw: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Load a shipped data set as ``(X, y)``.

    Parameters
    ----------
    name : str
        One of :func:`dataset_names` (aliases: ``cancer``, ``thyroid``, ``glass``, ``ripley``, ...).
    scale : {None, "minmax", "standard"}
        Feature scaling; ``None`` returns the stored values (categorical columns one-hot encoded).
    encoding : {"onehot", "ordinal"}
        How a categorical column becomes numbers: ``"onehot"`` (default) one 0/1 column per
        category; ``"ordinal"`` one column of codes 0, 1, ... with the categories in natural order
        (digit runs compared as numbers, so ``"5-9"`` comes before ``"10-14"``). Ordinal codes give
        the feature counts of the benchmark versions used by 000 Table 2 (titanic 3, breast 9,
        german 20).
    raw : bool
        Only for data sets with a preparation step (``lung-cancer``): ``True`` returns the file's table
        as it is (``NaN`` for missing values, no column dropped, ``y`` the raw class codes as floats).

    Returns
    -------
    X : ndarray (N, n) float64
    y : ndarray (N,) float64; ``+1`` / ``-1`` for classification (see :data:`DATASETS`),
        the real target for regression.
    """
    key = _ALIASES.get(name, name)
    if key not in DATASETS:
        raise ValueError(f"name must be one of {dataset_names()} (or an alias in {sorted(_ALIASES)}); got {name!r}")
    info = DATASETS[key]
    _check_raw(key, info, raw, scale)
    rows = _prepare_rows(info, _read_rows(info), bool(raw))
    labels = [r[-1] for r in rows]
    if info.keep is not None:
        rows = [r for r, lab in zip(rows, labels) if lab in info.keep]
        labels = [r[-1] for r in rows]
    cols = [list(c) for c in zip(*[r[:-1] for r in rows])]
    if encoding not in ("onehot", "ordinal"):
        raise ValueError(f"encoding must be 'onehot' or 'ordinal'; got {encoding!r}")
    X = _encode(cols, encoding)
    if info.drop_constant and not raw:
        X = X[:, np.ptp(X, axis=0) > 0]
    if raw or info.task == "regression":
        y = np.array([float(v) for v in labels])
    else:
        y = np.where(np.isin(labels, info.positive), 1.0, -1.0)
    return np.ascontiguousarray(_scaled(X, scale)), y


def _check_raw(key: str, info, raw, scale) -> None:
    """``raw`` a bool, only for a data set with a preparation step, and then without ``scale``."""
    if not isinstance(raw, (bool, np.bool_)):
        raise ValueError(f"raw must be True or False; got {raw!r}")
    if raw and info.missing is None and not info.drop_constant:
        raise ValueError(f"raw=True is only for data sets with a preparation step (lung-cancer); {key!r} has none")
    if raw and scale is not None:
        raise ValueError(f"scale must be None with raw=True (the raw table has missing values); got {scale!r}")


def _scaled(X: np.ndarray, scale: str | None) -> np.ndarray:
    """``X`` with each feature scaled to ``[0, 1]`` (``"minmax"``) or to mean 0 and standard deviation 1
    (``"standard"``); a constant feature is shifted only. ``None``: ``X`` as it is."""
    if scale == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        return (X - lo) / span
    if scale == "standard":
        sd = X.std(axis=0)
        return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if scale is not None:
        raise ValueError(f"scale must be None, 'minmax' or 'standard'; got {scale!r}")
    return X
