"""Which tests are precision-sensitive: the ``numerics`` marker, applied by ``conftest.py`` from the test's source.

A test is marked ``numerics`` when it asserts something that another machine's floating-point path (another BLAS
kernel, another CPU, numba's code generation without FMA or AVX-512) could flip:

* a tolerance at or below :data:`TIGHT` (1e-6): a float literal ``0 < |v| <= 1e-6`` or ``eps``/``tiny`` of
  :func:`numpy.finfo`;
* a label: a solver's ``status``, ``converged`` or certified gap, a reference's ``certified``, verify's ``verdict``
  (or a call of ``svmref.testing``'s assertions), or one of the status words (``"optimal"``, ``"suboptimal"``, ...);

read in the test function (its decorators, so ``parametrize`` values count), in the helpers of the same module or of
the shared helper modules (``instances.py``) that it calls, directly or through other helpers, and in the module-level
names it reads (a tolerance table such as ``TOL = {"kkt": 1e-9}``). A test may also carry the marker by hand
(``@pytest.mark.numerics``) where its sensitivity lies in code this reading does not follow.

CI runs ``python -m pytest -m numerics`` again under two other floating-point paths (``.ci/run``); a marker applied
by reading the source needs no one to remember it, and :mod:`tests.test_numerics_marker` checks the reading on
planted sources and on the tests that flipped between machines.
"""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

#: A literal at or below this (in absolute value, above 0) is a tight tolerance.
TIGHT = 1e-6
#: Attribute, subscript-key or name that reads a label or the number behind one (a solver's status and certified gap,
#: the reference's certificate, verify's verdict and advice, a row of ``benchmarks/labels.py``), or calls what asserts
#: one (``svmref.testing``).
LABEL_NAMES = frozenset({"status", "status_", "converged", "certified", "certificate", "verdict", "passed",
                         "would_pass_at_tol", "duality_gap", "kkt_gap", "gap_tol", "violated", "claim",
                         "check_instance", "assert_solves", "assert_estimator_solves"})
#: String literals that are solver or verify labels.
LABEL_WORDS = frozenset({"optimal", "suboptimal", "numerical_issue", "max_iter_reached", "not_convex",
                         "optimal_inaccurate", "unresolved"})
#: ``np.finfo(...).<attr>`` read as a tight tolerance.
FINFO_ATTRS = frozenset({"eps", "tiny", "resolution", "epsneg"})
#: Shared helper modules of the test folder whose functions a test may call by their bare name.
HELPER_MODULES = ("instances",)


def _own_signal(node: ast.AST) -> bool:
    """Whether ``node`` (a function, an assignment's value) contains a tight literal or a label, itself."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant):
            v = sub.value
            if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < abs(v) <= TIGHT:
                return True
            if isinstance(v, str) and v in LABEL_NAMES | LABEL_WORDS:
                return True
        elif isinstance(sub, ast.Attribute) and (sub.attr in LABEL_NAMES or sub.attr in FINFO_ATTRS):
            return True
        elif isinstance(sub, ast.Name) and sub.id in LABEL_NAMES:
            return True
    return False


def _names_read(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def _functions(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level functions and the methods of module-level classes, by name (methods as ``Class.name`` and, for the
    calls between them, also by bare name)."""
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{sub.name}"] = sub
                    out.setdefault(sub.name, sub)
    return out


def _sensitive_globals(tree: ast.Module) -> set[str]:
    """Module-level names bound to a value that holds a tight literal or a label word."""
    names = set()
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is not None and _own_signal(value):
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def sensitive_functions(source: str, helpers: frozenset[str] = frozenset()) -> set[str]:
    """The names of the functions in ``source`` (module functions, ``Class.method``) that are precision-sensitive,
    given the names of sensitive helper functions importable from the shared modules (``helpers``)."""
    tree = ast.parse(source)
    funcs = _functions(tree)
    hot_names = _sensitive_globals(tree)
    reads = {name: _names_read(fn) for name, fn in funcs.items()}
    hot = {name for name, fn in funcs.items() if _own_signal(fn) or reads[name] & hot_names}
    changed = True
    while changed:  # through the helpers it calls, in this module and the shared ones
        changed = False
        for name in funcs:
            if name not in hot and reads[name] & ({n.split(".")[-1] for n in hot} | helpers):
                hot.add(name)
                changed = True
    return hot


@cache
def shared_helpers(folder: str) -> frozenset[str]:
    """The sensitive functions of the shared helper modules in ``folder`` (:data:`HELPER_MODULES`)."""
    out: set[str] = set()
    for mod in HELPER_MODULES:
        path = Path(folder) / f"{mod}.py"
        if path.is_file():
            out |= sensitive_functions(path.read_text(encoding="utf-8"))
    return frozenset(out)


@cache
def sensitive_in_file(path: str) -> frozenset[str]:
    """:func:`sensitive_functions` of one test module, with the shared helpers beside it."""
    p = Path(path)
    return frozenset(sensitive_functions(p.read_text(encoding="utf-8"), shared_helpers(str(p.parent))))


def is_sensitive(path: str, function: str, cls: str | None = None) -> bool:
    """Whether the test ``function`` (of class ``cls``) in the module at ``path`` is precision-sensitive."""
    hot = sensitive_in_file(path)
    return (f"{cls}.{function}" if cls else function) in hot
