"""The documentation site: built strictly, then a derivation page opened in headless Chromium.

``mkdocs build --strict`` (``mkdocs.yml``; warnings are errors: a broken link, a missing anchor, an API object
that does not resolve) into a temporary folder; then:

* every internal link of every built HTML page (but the 404 page, whose links are absolute to the server's
  root) resolves to a built file, and its ``#anchor`` to an ``id`` in it;
* ``formulations/l1_svm.html`` and ``worked_example.html`` are opened in Debian's ``chromium --headless
  --dump-dom`` after their JavaScript ran (``--virtual-time-budget``): MathJax (served by the site itself,
  no network) must have typeset every maths element (one ``mjx-container`` per ``arithmatex`` element) and
  no raw ``$$``, ``\\(`` or ``\\[`` may remain in the page's text outside code;
* the teaching notebooks (``docs/notebooks/``, rendered by mkdocs-jupyter): each page with a notebook links it and
  its ``.ipynb``; one notebook page, opened in the browser, shows every cell of its ``.ipynb`` with its maths typeset
  as on the pages (no ``$`` left either); and the API page of ``svmref.solvers`` shows ``least_1norm_svm`` with
  ``K``, ``y``, ``C`` and ``tol`` in its rendered signature and Parameters table.

Marked slow (about a minute: the build and the browser); ``.ci/run`` runs it with ``SVMREF_REQUIRE_BROWSER=1``,
under which a missing ``chromium`` or ``mkdocs`` is a failure, not a skip.
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = os.environ.get("SVMREF_REQUIRE_BROWSER") == "1"
pytestmark = pytest.mark.slow
#: Every derivation page (the formulations, the duality toolkit, the worked example) and the index.
PAGES = [f"formulations/{p.stem}.html" for p in sorted((ROOT / "docs" / "formulations").glob("*.md"))] + [
    "duality.html", "worked_example.html", "index.html"]


def _need(ok: bool, why: str):
    if not ok:
        if REQUIRED:
            pytest.fail(why + " (SVMREF_REQUIRE_BROWSER=1)")
        pytest.skip(reason=why)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if tag in ("a", "link", "script", "img") and a.get(key):
                self.links.append(a[key])


def _parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def broken_links(site: Path) -> tuple[list[str], int]:
    """(problems, number of internal links checked) over every HTML file of ``site``."""
    parsed, bad, n = {}, [], 0
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html" and page.parent == site:
            continue  # served for any missing URL, so its links are absolute to the server's root by design
        for href in _parse(page).links:
            url = urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue
            n += 1
            target = page if not url.path else (page.parent / unquote(url.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                bad.append(f"{page.relative_to(site)}: {href}: no such file")
                continue
            if url.fragment and target.suffix == ".html":
                if target not in parsed:
                    parsed[target] = _parse(target).ids
                if unquote(url.fragment) not in parsed[target]:
                    bad.append(f"{page.relative_to(site)}: {href}: no anchor {url.fragment!r}")
    return bad, n


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _need(shutil.which("mkdocs") is not None or _has_mkdocs(), "mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                         capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


def _has_mkdocs() -> bool:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        return False
    return True


def test_every_internal_link_of_the_site_resolves(site):
    bad, n = broken_links(site)
    print(f"internal links checked: {n} in {len(list(site.rglob('*.html')))} pages")
    assert n > 1000, f"only {n} internal links: the site is not what it should be"
    assert not bad, f"{len(bad)} broken of {n}:\n" + "\n".join(bad[:40])


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def dump_dom(browser: str, page: Path) -> str:
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                          "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def raw_math(dom: str) -> list[str]:
    """Raw TeX delimiters left in the text of ``dom`` outside code, pre and script elements."""
    text = re.sub(r"(?s)<(script|style|code|pre)\b.*?</\1>", "", dom)
    text = re.sub(r"(?s)<mjx-container\b.*?</mjx-container>", "", text)
    return re.findall(r"\$\$|\\\(|\\\)|\\\[|\\\]", re.sub(r"<[^>]+>", " ", text))


@pytest.mark.parametrize("name", PAGES)
def test_math_is_typeset_in_a_real_browser(site, name):
    browser = _chromium()
    _need(browser is not None, "chromium is not installed (apt-get install chromium)")
    page = site / name
    before = page.read_text(encoding="utf-8")
    n_math = len(re.findall(r'class="arithmatex"', before))
    assert n_math > 10 and raw_math(before), "the built page has no maths to typeset"  # the check can fail
    dom = dump_dom(browser, page)
    n_typeset = dom.count("<mjx-container")
    print(f"{name}: {n_math} arithmatex elements, {n_typeset} typeset by MathJax")
    assert n_typeset == n_math, f"MathJax typeset {n_typeset} of {n_math} maths elements"
    left = raw_math(dom)
    assert not left, f"raw TeX left after MathJax ran: {left[:10]}"


def test_checkers_catch_what_they_guard(tmp_path):
    (tmp_path / "a.html").write_text('<a href="b.html#x">b</a><a href="c.html">c</a><a id="y" href="#y">y</a>'
                                     '<a href="b.html#z">z</a><a href="https://example.org">e</a>')
    (tmp_path / "b.html").write_text('<h2 id="x">x</h2>')
    bad, n = broken_links(tmp_path)
    assert n == 4 and len(bad) == 2 and "c.html" in bad[0] and "'z'" in bad[1]
    assert raw_math(r"<p>\(x\)</p><code>$$</code>") == ["\\(", "\\)"]
    assert raw_math("<p><mjx-container>x</mjx-container></p><pre>\\[</pre>") == []


# --------------------------------------------------------------------------------------------------
# the teaching notebooks (docs/notebooks/, rendered by mkdocs-jupyter) and the API reference, in the browser
# --------------------------------------------------------------------------------------------------
NOTEBOOK = "l1_svm"


def test_each_page_with_a_notebook_links_it_and_its_download(site):
    """docs/notebooks/site_hooks.py adds the link to each page; mkdocs-jupyter's include_source copies the .ipynb."""
    stems = [p.stem for p in sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))]
    assert len(stems) >= 11, stems
    for stem in stems:
        page = site / ("worked_example.html" if stem == "worked_example" else f"formulations/{stem}.html")
        rel = ("" if stem == "worked_example" else "../") + f"notebooks/{stem}"
        text = page.read_text(encoding="utf-8")
        assert f'href="{rel}.html"' in text and f'href="{rel}.ipynb" download' in text, f"{page.name}: no notebook link"
        assert (site / "notebooks" / f"{stem}.html").is_file() and (site / "notebooks" / f"{stem}.ipynb").is_file()


def test_a_notebook_page_renders_in_a_real_browser(site):
    browser = _chromium()
    _need(browser is not None, "chromium is not installed (apt-get install chromium)")
    page = site / "notebooks" / f"{NOTEBOOK}.html"
    before = page.read_text(encoding="utf-8")
    n_math = len(re.findall(r'class="arithmatex"', before))
    assert n_math > 10 and raw_math(before), "the notebook page has no maths to typeset"
    assert f'href="{NOTEBOOK}.ipynb"' in before, "the notebook page does not offer its .ipynb"
    cells = json.loads((ROOT / "docs" / "notebooks" / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))["cells"]
    dom = dump_dom(browser, page)
    shown = re.findall(r'class="jp-Cell jp-(Code|Markdown)Cell[^"]*" id="cell-id=([\w-]+)"', dom)  # nbconvert's cells
    n_typeset = dom.count("<mjx-container")
    print(f"{page.name}: {len(shown)} cells of {len(cells)}, {n_typeset} of {n_math} formulas typeset")
    assert [(kind.lower(), cell_id) for kind, cell_id in shown] == [(c["cell_type"], c["id"]) for c in cells]
    assert sum(kind == "Code" for kind, _ in shown) >= 5 and sum(kind == "Markdown" for kind, _ in shown) >= 5
    assert "raise NotImplementedError" in dom and "Exercise 1 (derive)" in dom
    assert n_typeset == n_math, f"MathJax typeset {n_typeset} of {n_math} maths elements"
    left = raw_math(dom)
    text = re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(script|style|code|pre)\b.*?</\1>|<mjx-container\b.*?</mjx-container>", "", dom))
    assert not left and "$" not in text, f"raw TeX left after MathJax ran: {left[:10]} {text[text.find('$') - 40:][:80]!r}"


def test_the_solvers_api_page_shows_least_1norm_svm_and_its_parameters(site):
    browser = _chromium()
    _need(browser is not None, "chromium is not installed (apt-get install chromium)")
    dom = dump_dom(browser, site / "api" / "solvers.html")
    start = dom.find('id="svmref.solvers.smo.least_1norm_svm"')
    assert start >= 0, "no section for svmref.solvers.smo.least_1norm_svm"
    head_end = dom.find("</h", start)
    end = dom.find('class="doc doc-heading"', head_end)  # the next documented object
    section = dom[head_end:end if end > 0 else None]
    heading = html.unescape(re.sub(r"<[^>]+>", "", dom[dom.find(">", start) + 1:head_end]))
    params = re.findall(r'<tr class="doc-section-item">\s*<td>\s*<code>(\w+)</code>', section)
    print(f"least_1norm_svm{heading[heading.find('('):][:80]}...; documented parameters: {params}")
    assert "least_1norm_svm" in heading
    for name in ("K", "y", "C", "tol"):
        assert re.search(rf"\b{name}\b", heading), f"{name} not in the rendered signature {heading!r}"
        assert name in params, f"{name} not in the rendered Parameters table {params}"
