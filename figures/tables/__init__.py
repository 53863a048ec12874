"""The papers' tables with one command: ``svmref table NAME`` (one module per table).

Every table module exposes the same small interface, used by :func:`run_table`
(:mod:`svmref.figures.tables._runner`):

* ``NAME``, ``TITLE``, ``DEFAULT_SPLITS``, ``QUICK_SPLITS``, ``METRICS`` (the CSV columns summarised),
  ``PAPER`` (``(dataset, model) -> {metric: (mean, std or None)}``, the paper's numbers as printed),
  ``NOTES`` (the protocol in two lines, printed under the Markdown table);
* ``datasets(quick)``; ``selection_tasks(datasets, splits, quick, seed)`` and ``run_selection(task)``
  (cross-validation scores, possibly none); ``split_tasks(datasets, splits, quick, seed, selection_rows)``
  and ``run_split(task)`` (one CSV row per data set, model and split).

Tasks are plain dicts and ``run_*`` pure functions of them, so the same task gives the same row in
this process, on a joblib worker or on a Dask worker. Each module's docstring lists the ambiguities
of the paper's protocol and how they were resolved (collected in ``docs/tables.md``).
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ._runner import TableRun, read_rows, run_table

__all__ = ["TABLES", "names", "get", "run_table", "TableRun", "read_rows"]

#: table name -> (module, what it reproduces)
TABLES: dict[str, tuple[str, str]] = {
    "000-table2": ("svmref.figures.tables.p000_table2",
                   "000 Table 2: LS-SVM vs Least 1-Norm SVM (titanic, heart, breast cancer, german; SMO, eps = 1e-3)"),
    "004-table1": ("svmref.figures.tables.p004_table1",
                   "004 Table 1: LS-SVM, ISLS-SVM and SVM on Ripley (% error) and Motorcycle (MSE), with #SV"),
    "001-table1": ("svmref.figures.tables.p001_table1",
                   "001 Table 1: RLS vs SVM error rates on the UCI sets shipped with the package (60/40 splits)"),
    "001-table2": ("svmref.figures.tables.p001_table2",
                   "001 Table 2: RLS vs SVM error rates on the simulated square, overlap and mixture problems"),
}


def names() -> list[str]:
    """The table names accepted by :func:`get`, :func:`run_table` and ``svmref table``."""
    return list(TABLES)


def get(name: str) -> ModuleType:
    """The module of table ``name``."""
    if name not in TABLES:
        raise ValueError(f"name must be one of {names()}; got {name!r}")
    return importlib.import_module(TABLES[name][0])
