"""MkDocs hooks of the documentation site (``mkdocs.yml``): links to code and tests, and MathJax served offline.

* Every link of a page to a ``.py`` file outside ``docs/`` (``../formulations/svm.py``, ``../tests/test_docs.py``)
  is pointed at a generated page ``code/<path>/`` that shows the file with numbered lines, one section per
  top-level function or class; a link whose text names a test or a dotted path
  (``svmref.formulations.svm.L1SVM.dual``) gets the anchor of that function's (or class's) section. A link
  to a file that does not exist is left alone, so ``mkdocs build --strict`` reports it.
* The API reference (mkdocstrings, static analysis by griffe) needs ``svmref.formulations`` etc. where
  their names say; setuptools maps them from top-level folders (``package-dir``), which griffe cannot follow,
  so on import this module lays out ``build/api-src/svmref/`` as links to ``svmref/*`` and to the mapped
  folders (read from ``pyproject.toml``), and ``mkdocs.yml`` points mkdocstrings there.
* MathJax 3 (its ``es5/tex-svg.js``, a single file with SVG output and no web fonts) is copied from the
  ``django-static-mathjax`` wheel of the ``docs`` extra into ``site/assets/mathjax/``: the site typesets its
  maths without any network access.
"""
from __future__ import annotations

import ast
import posixpath
import re
import shutil
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s#]+\.py)(#[^)\s]*)?\)")
_sources: set[str] = set()


def _api_tree() -> Path:
    """``build/api-src/svmref``: the installed layout of the package, as symbolic links."""
    import tomllib

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    out = ROOT / "build" / "api-src" / "svmref"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for entry in (ROOT / mapping["svmref"]).iterdir():
        (out / entry.name).symlink_to(entry)
    for name, folder in mapping.items():
        if name.count(".") == 1:
            (out / name.split(".")[1]).symlink_to(ROOT / folder)
    return out


_api_tree()


def _top_level(text: str) -> list[tuple[str, int]]:
    """(name, first line) of each top-level function and class, decorators included, in order."""
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.name, min([node.lineno] + [d.lineno for d in node.decorator_list])))
    return out


def _code_page(rel: str, text: str) -> str:
    """The file as a page: one section per top-level function or class, headed by its name (the anchor a
    link to it uses), each block numbered with the file's own line numbers."""
    lines = text.splitlines()
    parts = [("(module)", 1)] + _top_level(text)
    out = [f"# `{rel}`\n"]
    for k, (name, start) in enumerate(parts):
        stop = parts[k + 1][1] - 1 if k + 1 < len(parts) else len(lines)
        chunk = "\n".join(lines[start - 1:stop]).strip("\n")
        if not chunk:
            continue
        out.append(f"## `{name}` {{#{'module' if k == 0 else name}}}\n" if k else "")
        out.append(f"```python linenums=\"{start}\"\n{chunk}\n```\n")
    return "\n".join(out)


def _anchor(path: Path, text: str) -> str:
    names = {name for name, _ in _top_level(path.read_text(encoding="utf-8"))}
    parts = text.split("::")[-1].split(".")
    hit = next((p for p in parts if p in names), None)  # svmref.formulations.svm.L1SVM.dual -> L1SVM
    return f"#{hit}" if hit else ""


def on_files(files, config):
    docs = Path(config["docs_dir"]).resolve()
    for md in docs.rglob("*.md"):
        for m in LINK.finditer(md.read_text(encoding="utf-8")):
            target = (md.parent / m.group(2)).resolve()
            try:
                target.relative_to(docs)
                continue
            except ValueError:
                pass
            if target.is_file() and target.is_relative_to(ROOT):
                _sources.add(target.relative_to(ROOT).as_posix())
    for rel in sorted(_sources):
        content = _code_page(rel, (ROOT / rel).read_text(encoding="utf-8"))
        files.append(File.generated(config, f"code/{rel}.md", content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    docs = Path(config["docs_dir"]).resolve()
    here = (docs / page.file.src_uri).parent

    def repl(m):
        text, target, frag = m.group(1), m.group(2), m.group(3) or ""
        path = (here / target).resolve()
        try:
            rel = path.relative_to(ROOT).as_posix()
        except ValueError:
            return m.group(0)
        if rel not in _sources or not path.is_file():
            return m.group(0)
        link = posixpath.relpath(f"code/{rel}.md", here.relative_to(docs).as_posix() or ".")
        return f"[{text}]({link}{frag or _anchor(path, text)})"

    return LINK.sub(repl, markdown)


def on_post_build(config):
    import mathjax  # the django-static-mathjax wheel (docs extra): MathJax 3.2.2, Apache-2.0

    src = Path(mathjax.__file__).parent / "static" / "mathjax"
    dst = Path(config["site_dir"]) / "assets" / "mathjax"
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "es5" / "tex-svg.js", dst / "tex-svg.js")
    shutil.copy2(src / "LICENSE", dst / "LICENSE")
