"""The API reference (``docs/api/*.md``, mkdocstrings): every name of each module's ``__all__`` is on its page.

The site is ``build/site`` when its API pages are newer than everything they are rendered from (``mkdocs.yml``,
``docs/api/``, ``docs/_site/``, ``pyproject.toml`` and the package's Python sources); otherwise it is built once
for this module (``mkdocs build --strict`` into a temporary folder, about 20 s). Then, for each module of
:data:`PAGES`, every name of its ``__all__`` must be the ``id`` of an element of its page (mkdocstrings gives each
object's heading its dotted path, ``svmref.solvers.smo.least_1norm_svm``), and the section of
``svmref.solvers.smo.least_1norm_svm`` must show its docstring and every parameter of its signature.

Marked slow (the build). A missing ``mkdocs`` is a skip, or a failure under ``SVMREF_REQUIRE_BROWSER=1`` (as in
``tests/test_docs_site.py``).
"""
from __future__ import annotations

import html
import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = os.environ.get("SVMREF_REQUIRE_BROWSER") == "1"
pytestmark = pytest.mark.slow

#: Each page of ``docs/api/`` and the modules it documents, one section (a ``:::`` block) each.
PAGES = {
    "formulations": ["svmref.formulations", "svmref.formulations.reference"],
    "solvers": ["svmref.solvers"] + [f"svmref.solvers.{m}" for m in (
        "smo", "linear", "isls", "support_features", "sfm_path", "bayes", "estimators", "fixed_size", "robust", "tuning",
        "kernels")],
    "verify": ["svmref.verify"] + [f"svmref.verify.{m}" for m in (
        "answers", "blockwise", "cli", "core", "data", "diagnosis", "estimators", "evaluation", "exchange",
        "instances", "kkt", "loader", "models", "ovo", "reference", "report", "specs", "worker")],
    "testing": ["svmref.testing", "svmref.testing.strategies"],
    "datasets": ["svmref.datasets"],
    "kernels": ["svmref.kernels"],
    "figures": ["svmref.figures"],
}
MODULES = [(page, module) for page, modules in PAGES.items() for module in modules]
#: Packages whose public modules the reference must cover; the figure modules are documented by docs/figures.md and
#: docs/tables.md (their commands), not here.
COVERED_PACKAGES = ("svmref.formulations", "svmref.solvers", "svmref.verify", "svmref.testing")
#: What the API pages are rendered from: a change to any of these makes ``build/site`` stale.
SOURCES = ("mkdocs.yml", "pyproject.toml", "docs/api", "docs/_site", "svmref", "formulations", "solvers", "verify",
           "figures")


def _newest_source() -> float:
    newest = 0.0
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        newest = max([newest] + [f.stat().st_mtime for f in files])
    return newest


def _is_fresh(site: Path) -> bool:
    pages = [site / "api" / f"{page}.html" for page in PAGES]
    return all(p.is_file() for p in pages) and min(p.stat().st_mtime for p in pages) >= _newest_source()


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    built = ROOT / "build" / "site"
    if _is_fresh(built):
        return built
    if not (_installed("mkdocs") and _installed("mkdocstrings_handlers.python")):
        why = "mkdocs or mkdocstrings-python is not installed (pip install -e '.[docs]'): the API reference cannot be built"
        if REQUIRED:
            pytest.fail(why + " (SVMREF_REQUIRE_BROWSER=1)")
        pytest.skip(reason=why)
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(out)], cwd=ROOT,
                         capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=900)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])


def page_ids(text: str) -> set[str]:
    """Every ``id`` of an HTML page."""
    parser = _Ids()
    parser.feed(text)
    return parser.ids


def missing_names(ids: set[str], module: str, names: list[str]) -> list[str]:
    """The names of ``module`` (and the module itself, as ``"(module)"``) with no ``module.name`` among ``ids``."""
    return (["(module)"] if module not in ids else []) + [n for n in names if f"{module}.{n}" not in ids]


def section_text(text: str, anchor: str) -> tuple[str, str]:
    """(heading, whole section) of the object whose heading has id ``anchor``, as plain text: from its heading to
    the next object's heading."""
    at = text.find(f'id="{anchor}"')
    assert at >= 0, f"no element with id {anchor!r}"
    start = text.rfind("<", 0, at)
    end_heading = text.find("</h", start)
    following = text.find('class="doc doc-heading"', end_heading)
    body = text[start:text.rfind("<", 0, following) if following >= 0 else len(text)]

    def plain(s: str) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", s))
    return plain(text[start:end_heading]), plain(body)


def test_every_api_page_is_checked_and_in_the_nav():
    pages = sorted(p.stem for p in (ROOT / "docs" / "api").glob("*.md"))
    assert pages == sorted(PAGES), f"docs/api/ has {pages}; this test checks {sorted(PAGES)}"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    unlisted = [p for p in PAGES if f"api/{p}.md" not in nav]
    assert not unlisted, f"API pages not in the nav of mkdocs.yml: {unlisted}"


@pytest.mark.parametrize("page, module", MODULES, ids=[m for _, m in MODULES])
def test_every_name_of_all_is_on_its_page(site, page, module):
    names = list(importlib.import_module(module).__all__)
    ids = page_ids((site / "api" / f"{page}.html").read_text(encoding="utf-8"))
    missing = missing_names(ids, module, names)
    assert not missing, (f"{module} (its section, or names of its __all__ of {len(names)}) not on api/{page}.html: "
                         f"{missing}; see `members` of `::: {module}` in docs/api/{page}.md")


def test_the_smo_page_shows_least_1norm_svm_and_its_parameters(site):
    from svmref.solvers import smo

    text = (site / "api" / "solvers.html").read_text(encoding="utf-8")
    heading, body = section_text(text, "svmref.solvers.smo.least_1norm_svm")
    assert heading.strip().startswith("least_1norm_svm("), heading
    params = list(inspect.signature(smo.least_1norm_svm).parameters)
    assert {"K", "y", "C", "tol"} <= set(params), params
    shown = re.findall(r"(?:^|,)\s*\**\s*([A-Za-z_]\w*)\s*(?==|,|\))", heading.split("(", 1)[1])
    assert shown == params, f"the page shows the parameters {shown}; the signature has {params}"
    summary = inspect.getdoc(smo.least_1norm_svm).split("(")[0].strip()  # "Least 1-Norm SVM dual"
    assert summary and summary in body, f"the docstring's summary {summary!r} is not in the section:\n{body[:500]}"


def test_the_checks_catch_a_missing_name_and_a_missing_parameter():
    planted = ('<h2 id="svmref.m" class="doc doc-heading">m</h2><h3 id="svmref.m.f" class="doc doc-heading">'
               '<code>f(K, y)</code></h3><div>Solve it.</div><h3 id="svmref.m.g" class="doc doc-heading">g()</h3>')
    ids = page_ids(planted)
    assert missing_names(ids, "svmref.m", ["f", "g", "h"]) == ["h"]
    assert missing_names(ids, "svmref.other", ["f"]) == ["(module)", "f"]
    heading, body = section_text(planted, "svmref.m.f")
    assert heading == "f(K, y)" and "Solve it." in body and "g()" not in body, (heading, body)


def test_every_public_module_with_an_all_is_on_a_page_or_re_exported():
    """A public module (no leading underscore) of the covered packages that declares ``__all__`` has a section on an
    API page, or its package re-exports every one of its names (then its package's section shows them): a new module
    cannot be left out of the reference unnoticed."""
    import pkgutil

    documented = {m for _, m in MODULES}
    missing = []
    for pkg_name in COVERED_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        parent = set(getattr(pkg, "__all__", ()))
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("_"):
                continue
            name = f"{pkg_name}.{info.name}"
            names = getattr(importlib.import_module(name), "__all__", None)
            if names is None or name in documented or set(names) <= parent:
                continue
            missing.append(f"{name} ({', '.join(sorted(set(names) - parent))})")
    assert not missing, f"public modules with names on no API page: {missing}"
