"""Guardrails on the shape of the code, read from the source (``ast`` and ``tokenize``; nothing imported
except in the one subprocess test):

* the import contract of the house: ``formulations/`` and ``solvers/`` never import each other, verify's KKT
  module (and what it imports within ``verify/``) imports neither, and importing ``svmref.solvers`` loads
  neither cvxpy nor matplotlib;
* no import cycle among the project's modules, counting the imports inside functions (not those under
  ``if TYPE_CHECKING:``, which never run);
* no function over :data:`MAX_LINES` lines, except the numba kernels;
* comments and docstrings refer only to the repository and the papers (no issue numbers, no numbered DESIGN examples);
* the shared numerical thresholds (symmetry, PSD) are numbers only in ``svmref/_thresholds.py``.

Every import counts, at module level or inside a function. Each check is a function of the repository root
and :func:`test_guards_catch_planted_violations` runs it on a small tree with one planted violation each, so a
check that can no longer fail is itself a failure.
"""
from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Import package -> folder, as ``[tool.setuptools.package-dir]`` of pyproject.toml maps them.
PACKAGES = {
    "svmref": "svmref",
    "svmref.formulations": "formulations",
    "svmref.solvers": "solvers",
    "svmref.verify": "verify",
    "svmref.figures": "figures",
}
#: The bare folder names, should a module import them without the namespace.
BARE = {"formulations", "solvers", "verify", "figures"}
#: Longest function allowed, from ``def`` to its last line, docstring included.
MAX_LINES = 80
#: Decorators that make a function a numba kernel (exempt from :data:`MAX_LINES`).
NUMBA_DECORATORS = {"njit", "jit", "intrinsic", "generated_jit", "vectorize", "guvectorize", "cfunc"}
#: A reference the reader of the repository cannot follow.
UNTRACEABLE = re.compile(r"\bissues?\s*#?\s*\d+|\bDESIGN(?:\.md)?,?\s+examples?\s*\d+", re.IGNORECASE)


# ------------------------------------------------------------------------------------------------
# the module graph, from the source
# ------------------------------------------------------------------------------------------------
def collect_modules(root: Path) -> dict[str, Path]:
    """Every module of the project: dotted name (``svmref.solvers.smo``; a package is its ``__init__``) -> file."""
    modules = {}
    for pkg, folder in PACKAGES.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if "data" in rel.parts[:-1] or "__pycache__" in rel.parts:
                continue
            if pkg == "svmref" and rel.parts[0] in BARE:
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([pkg, *parts])] = path
    return modules


def _absolute(name: str) -> str:
    head, _, rest = name.partition(".")
    if head in BARE:
        return "svmref." + name
    return name


def _type_checking_only(tree) -> set[int]:
    """``id`` of the import nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def imported_names(path: Path, module: str, runtime_only: bool = False) -> list[tuple[str, int]]:
    """``(dotted name, line)`` of every import in ``path``, at any depth: ``import a.b`` gives ``a.b``;
    ``from a import b`` gives ``a.b`` (a module or a name in ``a``). Relative imports are resolved.
    ``runtime_only`` leaves out the imports under ``if TYPE_CHECKING:``, which never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skip = _type_checking_only(tree) if runtime_only else set()
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(_absolute(a.name), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = _absolute(node.module)
            out += [(f"{src}.{a.name}", node.lineno) for a in node.names]
    return out


def _target(name: str, modules) -> str | None:
    """The project module an imported name loads: the longest prefix of ``name`` that is a module."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in modules:
            return cand
    return None


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """``module -> {imported project module: line}`` (the first line that imports it), the imports that run."""
    graph = {}
    for mod, path in modules.items():
        edges = {}
        for name, line in imported_names(path, mod, runtime_only=True):
            t = _target(name, modules)
            if t is not None and t != mod:
                edges.setdefault(t, line)
        graph[mod] = edges
    return graph


def _within(mod: str, pkg: str) -> bool:
    return mod == pkg or mod.startswith(pkg + ".")


def contract_violations(root: Path) -> list[str]:
    """The imports that break the house's contract (DESIGN.md, "Independence is the point"), including those
    under ``if TYPE_CHECKING:`` (a type annotation couples the packages too)."""
    modules = collect_modules(root)
    graph = {m: {name: line for name, line in imported_names(p, m)} for m, p in modules.items()}
    bad = []
    rules = [("svmref.formulations", "svmref.solvers"), ("svmref.solvers", "svmref.formulations")]
    for src, dst in rules:
        for mod, names in graph.items():
            if _within(mod, src):
                bad += [f"{modules[mod].relative_to(root)}:{line} imports {n}" for n, line in names.items() if _within(n, dst)]
    # verify's KKT module, and every verify module it reaches, imports neither formulations nor solvers
    proj = import_graph(modules)
    seen, todo = set(), ["svmref.verify.kkt"]
    while todo:
        mod = todo.pop()
        if mod in seen or mod not in modules:
            continue
        seen.add(mod)
        for n, line in graph[mod].items():
            if _within(n, "svmref.formulations") or _within(n, "svmref.solvers"):
                bad.append(f"{modules[mod].relative_to(root)}:{line} imports {n} (reached from verify/kkt.py)")
        todo += [t for t in proj[mod] if _within(t, "svmref.verify")]
    return bad


def import_cycles(root: Path) -> list[list[str]]:
    """One cycle ``[m0, m1, ..., m0]`` per strongly connected component of the import graph with more than one
    module (Tarjan's algorithm)."""
    graph = import_graph(collect_modules(root))
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_one_cycle(graph, sorted(c)) for c in comps]


def _one_cycle(graph, comp: list[str]) -> list[str]:
    """A shortest cycle through the first module of ``comp`` (breadth first within the component)."""
    start, members = comp[0], set(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


# ------------------------------------------------------------------------------------------------
# function length, references
# ------------------------------------------------------------------------------------------------
def _source_files(root: Path):
    yield from (path for _, path in sorted(collect_modules(root).items()))


def _is_numba(fn: ast.AST) -> bool:
    for dec in fn.decorator_list:
        d = dec.func if isinstance(dec, ast.Call) else dec
        name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
        if name in NUMBA_DECORATORS:
            return True
    return False


def long_functions(root: Path, limit: int = MAX_LINES) -> list[tuple[str, str, int]]:
    """``(file:line, name, lines)`` of every function longer than ``limit`` lines (``def`` to its last line),
    numba kernels excepted."""
    out = []
    for path in _source_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_numba(node):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append((f"{path.relative_to(root)}:{node.lineno}", node.name, n))
    return sorted(out, key=lambda t: -t[2])


def complexity_exemptions(root: Path, files=None) -> list[str]:
    """``file:line name`` of every ``# noqa: C901`` (ruff's complexity rule switched off) that is not on the
    ``def`` line of a numba kernel, the only functions the rule exempts; ``files`` defaults to every module of
    the packages, the tests and the benchmarks."""
    out = []
    if files is None:
        files = [*_source_files(root), *sorted((root / "tests").glob("*.py")), *sorted((root / "benchmarks").glob("*.py"))]
    for path in files:
        src = path.read_text(encoding="utf-8")
        numba_defs = {node.lineno for node in ast.walk(ast.parse(src, str(path)))
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_numba(node)}
        lines = src.splitlines()
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            k = tok.start[0]
            if tok.type == tokenize.COMMENT and re.search(r"noqa\b.*\bC901\b", tok.string) and k not in numba_defs:
                out.append(f"{path.relative_to(root)}:{k} {lines[k - 1].strip()[:60]}")
    return out


def _docstring_nodes(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                yield first.value
    # attribute docstrings: a string right after an assignment
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for a, b in zip(body, body[1:]):
                if isinstance(a, (ast.Assign, ast.AnnAssign)) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) \
                        and isinstance(b.value.value, str):
                    yield b.value


def _tool_and_doc_files(root: Path):
    """The tests, the benchmarks and the Markdown pages (README, CHANGELOG, docs/): read by the same people."""
    for folder in ("tests", "benchmarks"):
        yield from sorted((root / folder).glob("*.py"))
    yield from (p for p in (root / "README.md", root / "CHANGELOG.md") if p.is_file())
    yield from sorted((root / "docs").rglob("*.md"))


def untraceable_references(root: Path, files=None) -> list[str]:
    """``file:line: text`` of every comment or docstring (every line of a Markdown page) that points at an issue
    number or a DESIGN example; ``files`` defaults to the packages' modules."""
    out = []
    for path in _source_files(root) if files is None else files:
        src = path.read_text(encoding="utf-8")
        if path.suffix == ".md":
            rel = path.relative_to(root)
            out += [f"{rel}:{k}: {line.strip()}" for k, line in enumerate(src.splitlines(), 1) if UNTRACEABLE.search(line)]
            continue
        rel = path.relative_to(root)
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT and UNTRACEABLE.search(tok.string):
                out.append(f"{rel}:{tok.start[0]}: {tok.string.strip()}")
        for node in _docstring_nodes(ast.parse(src, str(path))):
            for k, line in enumerate(node.value.splitlines()):
                if UNTRACEABLE.search(line):
                    out.append(f"{rel}:{node.lineno + k}: {line.strip()}")
    return sorted(set(out))


#: Names of the shared thresholds; elsewhere they may only be imported (or bound to an imported name).
THRESHOLD_NAME = re.compile(r"(PSD|SYM|ACTIVE)_RTOL$|^EPS_ACTIVE$|^NEG_EIG_RTOL$|^TAU$")
THRESHOLD_HOME = "svmref/_thresholds.py"


def _is_tiny_number(node) -> bool:
    """A float literal of a threshold's size (``0 < |x| < 1e-3``); ``max(1.0, ...)`` floors and factors are not."""
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and 0.0 < abs(node.value) < 1e-3


def redefined_thresholds(root: Path) -> list[str]:
    """``file:line name = value`` of every assignment of a tiny number to a threshold name outside its home, and
    every function parameter of that name with a tiny number as its default."""
    out = []
    for path in _source_files(root):
        rel = path.relative_to(root).as_posix()
        if rel == THRESHOLD_HOME:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.posonlyargs + node.args.args
                pairs = list(zip(args[len(args) - len(node.args.defaults):], node.args.defaults))
                pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
            for target, value in pairs:
                name = getattr(target, "id", getattr(target, "arg", getattr(target, "attr", "")))
                if THRESHOLD_NAME.search(name.upper()) and any(_is_tiny_number(v) for v in ast.walk(value)):
                    out.append(f"{rel}:{node.lineno} {name} = {ast.unparse(value)}")
    return out


def heavy_modules_loaded(module: str, heavy=("cvxpy", "matplotlib")) -> list[str]:
    """Import ``module`` and every module under it (as a package) in a fresh interpreter; return which of
    ``heavy`` it loaded."""
    code = (
        "import importlib, pkgutil, sys\n"
        f"m = importlib.import_module({module!r})\n"
        "for info in pkgutil.walk_packages(getattr(m, '__path__', []), m.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        f"print(','.join(h for h in {tuple(heavy)!r} if h in sys.modules))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return [h for h in res.stdout.strip().split(",") if h]


# ------------------------------------------------------------------------------------------------
# the checks on this repository
# ------------------------------------------------------------------------------------------------
def test_import_contract():
    """formulations/ and solvers/ never import each other; verify/kkt.py (and the verify modules it imports)
    imports neither."""
    bad = contract_violations(ROOT)
    assert not bad, "imports across the contract:\n" + "\n".join(bad)


def test_importing_solvers_loads_neither_cvxpy_nor_matplotlib():
    """Every module of svmref.solvers, imported in a fresh interpreter, leaves cvxpy and matplotlib unloaded."""
    assert heavy_modules_loaded("svmref.solvers") == []


def test_no_import_cycle():
    cycles = import_cycles(ROOT)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_function_over_80_lines():
    long = long_functions(ROOT)
    assert not long, f"functions over {MAX_LINES} lines:\n" + "\n".join(f"{w} {n}: {k} lines" for w, n, k in long)


def test_only_numba_kernels_are_exempt_from_the_complexity_rule():
    bad = complexity_exemptions(ROOT)
    assert not bad, "noqa: C901 outside a numba kernel's def line:\n" + "\n".join(bad)


def test_the_exemption_guard_catches_a_plain_function(tmp_path):
    src = ("from numba import njit\n\n\n@njit(cache=True)\ndef kernel(x):  # noqa: C901\n    return x\n\n\n"
           "def plain(x):  # noqa: C901\n    return x\n")
    path = tmp_path / "m.py"
    path.write_text(src, encoding="utf-8")
    assert complexity_exemptions(tmp_path, [path]) == ["m.py:9 def plain(x):  # noqa: C901"]


def test_thresholds_are_numbers_only_in_their_home():
    bad = redefined_thresholds(ROOT)
    assert not bad, f"thresholds defined outside {THRESHOLD_HOME}:\n" + "\n".join(bad)


def test_comments_refer_only_to_the_repository_and_the_papers():
    bad = untraceable_references(ROOT)
    assert not bad, "comments or docstrings the reader cannot follow:\n" + "\n".join(bad)


def test_tests_benchmarks_and_docs_refer_only_to_the_repository_and_the_papers():
    bad = untraceable_references(ROOT, _tool_and_doc_files(ROOT))
    assert not bad, "comments, docstrings or pages the reader cannot follow:\n" + "\n".join(bad)


def test_the_pages_guard_catches_a_planted_reference(tmp_path):
    page = tmp_path / "docs" / "notes.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Notes\n\nThe cache, as issue 12 asked.\n", encoding="utf-8")
    test = tmp_path / "tests" / "test_x.py"
    test.parent.mkdir(parents=True)
    test.write_text('def test_f():\n    """As DESIGN example 5 says."""\n', encoding="utf-8")
    found = untraceable_references(tmp_path, _tool_and_doc_files(tmp_path))
    assert found == ["docs/notes.md:3: The cache, as issue 12 asked.", "tests/test_x.py:2: As DESIGN example 5 says."], found


# ------------------------------------------------------------------------------------------------
# each check fails on a planted violation
# ------------------------------------------------------------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    base = {f"{folder}/__init__.py": "" for folder in PACKAGES.values()}
    base["verify/kkt.py"] = "import numpy as np\n"
    for rel, text in {**base, **files}.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


_LONG = "def f():\n" + "    x = 1\n" * 80 + "    return x\n"
PLANTED = {
    "formulations imports solvers in a function": (
        {"formulations/svm.py": "def solve():\n    from svmref.solvers import smo\n"},
        lambda root: contract_violations(root), "formulations/svm.py:2 imports svmref.solvers.smo"),
    "solvers imports formulations, relatively": (
        {"solvers/smo.py": "from ..formulations import svm\n"},
        lambda root: contract_violations(root), "solvers/smo.py:1 imports svmref.formulations.svm"),
    "kkt reaches solvers through another verify module": (
        {"verify/kkt.py": "from . import helper\n", "verify/helper.py": "def f():\n    import svmref.solvers.linear\n"},
        lambda root: contract_violations(root), "verify/helper.py:2 imports svmref.solvers.linear"),
    "a cycle hidden in a function-level import": (
        {"verify/cli.py": "from . import core\n", "verify/core.py": "from .worker import run\n",
         "verify/worker.py": "def run():\n    from svmref.verify.cli import main\n"},
        lambda root: [" -> ".join(c) for c in import_cycles(root)],
        "svmref.verify.cli -> svmref.verify.core -> svmref.verify.worker -> svmref.verify.cli"),
    "a function of 82 lines": (
        {"solvers/long.py": _LONG},
        lambda root: [f"{w} {n} {k}" for w, n, k in long_functions(root)], "solvers/long.py:1 f 82"),
    "a comment pointing at an issue": (
        {"figures/fig.py": "x = 1  # the bound of issue 12\n"},
        untraceable_references, "figures/fig.py:1: # the bound of issue 12"),
    "a docstring pointing at a DESIGN example": (
        {"svmref/util.py": 'def f():\n    """As DESIGN example 3 says."""\n'},
        untraceable_references, "svmref/util.py:2: As DESIGN example 3 says."),
    "a PSD threshold defined a second time": (
        {"verify/instances.py": "PSD_RTOL = 1e-9\n"},
        redefined_thresholds, "verify/instances.py:1 PSD_RTOL = 1e-09"),
    "a symmetry threshold as a default argument": (
        {"solvers/linear.py": "def check(K, sym_rtol=1e-8):\n    return K\n"},
        redefined_thresholds, "solvers/linear.py:1 sym_rtol = 1e-08"),
    "the SMO's curvature floor defined a second time": (
        {"solvers/_engine.py": "TAU = 1e-12\n"},
        redefined_thresholds, "solvers/_engine.py:1 TAU = 1e-12"),
}


def test_a_quantity_derived_from_a_threshold_is_not_a_redefinition(tmp_path):
    """``tau = PSD_RTOL * max(1.0, norm)`` uses the threshold; only a tiny literal is a second definition."""
    root = _tree(tmp_path, {"solvers/smo.py": "from svmref._thresholds import PSD_RTOL\n"
                                              "def f(n):\n    tau = PSD_RTOL * max(1.0, n)\n    return tau\n"})
    assert redefined_thresholds(root) == []


@pytest.mark.parametrize("case", list(PLANTED))
def test_guards_catch_planted_violations(case, tmp_path):
    files, check, expected = PLANTED[case]
    assert check(_tree(tmp_path / "clean", {})) == []
    found = check(_tree(tmp_path / "planted", files))
    assert any(f.startswith(expected) for f in found), found


def test_guards_spare_numba_kernels_plain_strings_and_type_checking_imports(tmp_path):
    """A numba kernel may be long; an error message (not a docstring) may say "issue"; an import under
    ``if TYPE_CHECKING:`` makes no cycle (it never runs) but still counts against the contract."""
    root = _tree(tmp_path, {
        "solvers/kern.py": "from numba import njit\n\n@njit(cache=True)\n" + _LONG,
        "solvers/msg.py": "def f():\n    '''Docstring.'''\n    raise ValueError('see issue 4 of the input')\n",
        "formulations/a.py": "from . import b\n",
        "formulations/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                             "    from svmref.solvers import smo\n",
    })
    assert long_functions(root) == [] and untraceable_references(root) == [] and import_cycles(root) == []
    assert contract_violations(root) == ["formulations/b.py:4 imports svmref.solvers.smo"]


def test_heavy_import_check_can_fail():
    """The subprocess check sees cvxpy when the package imports it (svmref.formulations does)."""
    assert "cvxpy" in heavy_modules_loaded("svmref.formulations")
