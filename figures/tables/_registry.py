"""The table registry: name -> module. Its own module so that the runner can look a table up without importing
the package that imports the runner."""
from __future__ import annotations

import importlib
from types import ModuleType

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
