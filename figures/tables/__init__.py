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

from ._registry import TABLES, get, names
from ._runner import TableRun, read_rows, run_table

__all__ = ["TABLES", "names", "get", "run_table", "TableRun", "read_rows"]
