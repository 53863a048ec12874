"""The docs must not rot, and the derivation steps they claim are checked here when no other test does.

Part 1 (links, < 1 s, no imports of the linked code): every markdown link in ``docs/`` (and the links of
``README.md`` that point into ``docs/``) is parsed; its target file must exist; a link whose text names a
test (``test_name`` or ``test_file.py::test_name``) must point to a test file that defines that function;
a link whose text is a dotted path (``svmref.formulations.svm.L1SVM.dual``) must point to the module file of that
path, and the path must resolve in the file's syntax tree (parsed with :mod:`ast`, nothing imported).
Every page under ``docs/formulations/`` links at least one test, and every section of it that states
display maths links both a test and the code (a dotted path) that implements it; on the other pages of this
set (taxonomy, smo, generalised_smo, isls) every section with display maths links a test.
``$$`` blocks are balanced and inline ``$...$`` never spans a line.

Part 2 (derivation steps): the equalities that the pages derive themselves (the papers skip them) and that
``tests/test_formulations.py`` does not already check, each on a small seeded instance.
"""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# --- tolerances, in one table -------------------------------------------------------------------
TOL = {
    "objective": 1e-7,   # relative, two optimal values that must be equal
    "kkt": 1e-5,         # absolute, a KKT condition at a reference optimum (CLARABEL at 1e-9, N <= 30)
    "exact": 1e-10,      # relative, an algebraic identity evaluated in floating point
    "fd": 1e-6,          # relative, a gradient against central finite differences (step 1e-6)
}

# Pages this helper owns; their maths follows the strict rules (display $$ alone on its line).
OWN_PAGES = ["index.md", "taxonomy.md", "smo.md", "generalised_smo.md", "isls.md"]
FORMULATION_PAGES = ["l1_svm", "l2_svm", "ls_svm", "ls_svm_regression", "least_1norm_svm", "rls",
                     "sparse_ls_svm", "support_features", "svr", "regularised_bias"]

LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
TESTREF = re.compile(r"^(?:(?P<file>test_[A-Za-z0-9_]*\.py)::)?(?P<name>test_[A-Za-z0-9_]*)$")


# --- the link checker (plain functions, so that its own tests below can feed it bad pages) --------
def strip_code(text: str) -> str:
    """Blank out fenced code blocks, and inline code spans that contain a whole link."""
    out, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            out.append("")
            continue
        # an inline code span that shows a link (e.g. the convention itself) is an example, not a link
        out.append("" if fence else re.sub(r"`[^`]*\]\([^`]*`", "``", line))
    return "\n".join(out)


def links(text: str):
    """(line number, text, target) of every markdown link outside code fences."""
    for n, line in enumerate(strip_code(text).splitlines(), 1):
        for m in LINK.finditer(line):
            yield n, m.group(1).strip().strip("`").strip(), m.group(2)


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _members(body) -> dict:
    names = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom):  # re-exports, e.g. formulations/__init__.py
            for a in node.names:
                names[a.asname or a.name] = node
    return names


def module_name(path: Path) -> str:
    rel = path.resolve().relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts and parts[0] in ("formulations", "solvers", "verify", "figures"):
        parts.insert(0, "svmref")  # the top-level folders install as svmref.* (package-dir mapping)
    return ".".join(parts)


def resolve(path: Path, dotted: str) -> bool:
    """Whether ``dotted`` (module path + attributes) names an object defined in the file ``path``."""
    mod = module_name(path)
    if dotted == mod:
        return True
    if not dotted.startswith(mod + "."):
        return False
    body = _tree(path).body
    for part in dotted[len(mod) + 1:].split("."):
        node = _members(body).get(part)
        if node is None:
            return False
        body = node.body if isinstance(node, ast.ClassDef) else []
    return True


@cache
def defined_tests(path: Path) -> frozenset[str]:
    names = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
    return frozenset(names)


def check_link(page: Path, text: str, target: str) -> str | None:
    """None if the link is good, else what is wrong with it."""
    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
        return None  # external URL or in-page anchor
    file_part = target.split("#", 1)[0]
    dest = (page.parent / file_part).resolve()
    try:
        dest.relative_to(ROOT)
    except ValueError:
        return f"target {target!r} is outside the repository"
    if not dest.exists():
        return f"target {target!r} does not exist"
    if dest.suffix != ".py":
        return None
    t = TESTREF.match(text)
    if t and dest.parent.name == "tests":
        if t.group("file") and t.group("file") != dest.name:
            return f"link text names {t.group('file')} but points to {dest.name}"
        if t.group("name") not in defined_tests(dest):
            return f"{dest.name} has no test function {t.group('name')!r}"
        return None
    if t:
        return f"link text {text!r} names a test but {target!r} is not under tests/"
    if IDENT.match(text) and "." in text:
        if not resolve(dest, text):
            return f"{text!r} does not resolve in {dest.relative_to(ROOT)} (module {module_name(dest)})"
    return None


PAIRS = [(r"\\left(?![a-z])", r"\\right(?![a-z])"), (r"\\bigl", r"\\bigr"), (r"\\Bigl", r"\\Bigr"),
         (r"\\lVert", r"\\rVert"), (r"\\lvert", r"\\rvert"), (r"\\begin", r"\\end")]


def tex_problems(tex: str) -> list[str]:
    """Unbalanced braces or delimiters in one maths segment (what makes a formula fail to render)."""
    s = tex.replace(r"\{", "").replace(r"\}", "")
    out = [] if s.count("{") == s.count("}") else [f"unbalanced braces in {tex[:60]!r}"]
    for a, b in PAIRS:
        if len(re.findall(a, s)) != len(re.findall(b, s)):
            out.append(f"unbalanced {a[2:8]} / {b[2:8]} in {tex[:60]!r}")
    return out


def inline_math_problems(n: int, s: str, strict: bool) -> list[str]:
    """The problems of line ``n`` (outside a $$ block, its code spans removed): an inline $ left open and,
    (strict) what GitHub renders wrongly inside an inline formula."""
    problems = []
    if s.count("$") % 2:
        problems.append(f"line {n}: inline $...$ not closed on its line")
    if not strict:
        return problems
    for m in re.finditer(r"\$([^$]*)\$", s):
        if "\\\\" in m.group(1):
            problems.append(f"line {n}: \\\\ inside inline math")
        # GitHub applies markdown's backslash escapes inside inline maths: \, \{ \; ... lose the backslash
        for esc in re.findall(r"\\[!-/:-@\[\]^_`{-~]", m.group(1).replace("\\\\", "")):
            problems.append(f"line {n}: {esc} inside inline math (use \\lbrace, \\ , ...)")
        problems += [f"line {n}: {p}" for p in tex_problems(m.group(1))]
    return problems


def math_problems(text: str, strict: bool) -> list[str]:
    """Unbalanced $$ blocks; inline $ spanning lines; (strict) $$ not alone on its line, \\\\ inline,
    unbalanced braces or delimiters in a formula."""
    problems, in_block, block = [], False, []
    for n, line in enumerate(strip_code(text).splitlines(), 1):
        s = line.strip()
        if s == "$$":
            if in_block and strict:
                problems += [f"line {n}: {p}" for p in tex_problems("\n".join(block))]
            in_block, block = not in_block, []
            continue
        if in_block:
            block.append(line)
            continue
        if "$$" in s:
            if strict:
                problems.append(f"line {n}: $$ not alone on its line")
            if s.count("$$") % 2:
                problems.append(f"line {n}: odd number of $$")
            s = s.replace("$$", "")
        problems += inline_math_problems(n, re.sub(r"`[^`]*`", "", s.replace(r"\$", "")), strict)
    if in_block:
        problems.append("a $$ block is never closed")
    return problems


def sections(text: str):
    """(heading, body) of each ## / ### section."""
    parts = re.split(r"(?m)^(#{2,3} .*)$", strip_code(text))
    yield "(preamble)", parts[0]
    for i in range(1, len(parts), 2):
        yield parts[i].strip(), parts[i + 1]


def is_test_link(text: str, target: str) -> bool:
    return bool(TESTREF.match(text)) and "tests/" in target


def is_code_link(text: str, target: str) -> bool:
    return target.endswith(".py") and "tests/" not in target and bool(IDENT.match(text))


def all_pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


# --- part 1: the docs ---------------------------------------------------------------------------
def test_docs_exist_and_index_links_every_page():
    index = DOCS / "index.md"
    assert index.exists(), "docs/index.md is missing"
    targets = {(DOCS / t.split("#")[0]).resolve() for _, _, t in links(index.read_text()) if not re.match(r"^[a-z]+:", t)}
    for name in OWN_PAGES[1:] + [f"formulations/{p}.md" for p in FORMULATION_PAGES]:
        page = DOCS / name
        assert page.exists(), f"docs/{name} is missing"
        assert page.resolve() in targets, f"docs/index.md does not link docs/{name}"


@pytest.mark.parametrize("page", all_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_link_resolves(page):
    bad = [f"{page.relative_to(ROOT)}:{n}: [{text}]({target}): {why}"
           for n, text, target in links(page.read_text(encoding="utf-8"))
           if (why := check_link(page, text, target))]
    assert not bad, "\n".join(bad)


def test_readme_links_into_docs_resolve():
    readme = ROOT / "README.md"
    assert readme.exists(), "README.md is missing"
    into_docs = [(n, t, g) for n, t, g in links(readme.read_text(encoding="utf-8")) if g.startswith("docs/")]
    bad = [f"README.md:{n}: [{t}]({g}): {why}" for n, t, g in into_docs if (why := check_link(readme, t, g))]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("page", all_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_math_is_balanced(page):
    rel = page.relative_to(DOCS).as_posix()
    strict = rel in OWN_PAGES or rel.startswith("formulations/")
    problems = math_problems(page.read_text(encoding="utf-8"), strict)
    assert not problems, f"{rel}: " + "; ".join(problems)


@pytest.mark.parametrize("name", FORMULATION_PAGES)
def test_every_formulation_section_with_maths_links_a_test(name):
    page = DOCS / "formulations" / f"{name}.md"
    text = page.read_text(encoding="utf-8")
    assert any(is_test_link(t, g) for _, t, g in links(text)), f"{name}.md links no test"
    missing = [h for h, body in sections(text)
               if "$$" in body and not any(is_test_link(t, g) for _, t, g in links(body))]
    assert not missing, f"{name}.md: sections with maths but no test link: {missing}"
    no_code = [h for h, body in sections(text)
               if "$$" in body and not any(is_code_link(t, g) for _, t, g in links(body))]
    assert not no_code, f"{name}.md: sections with maths but no link to the code: {no_code}"
    assert any(g.startswith("../../formulations/") for _, _, g in links(text)), f"{name}.md links no formulation code"


@pytest.mark.parametrize("name", OWN_PAGES[1:])
def test_every_section_with_maths_on_the_other_pages_links_a_test(name):
    text = (DOCS / name).read_text(encoding="utf-8")
    missing = [h for h, body in sections(text)
               if "$$" in body and not any(is_test_link(t, g) for _, t, g in links(body))]
    assert not missing, f"{name}: sections with maths but no test link: {missing}"


# the checker itself must be able to fail
@pytest.mark.parametrize(
    "text, target, expect",
    [
        ("test_strong_duality_regression", "../../tests/test_formulations.py", None),
        ("test_formulations.py::test_strong_duality_rls", "../../tests/test_formulations.py", None),
        ("test_no_such_test", "../../tests/test_formulations.py", "no test function"),
        ("test_docs.py::test_strong_duality_rls", "../../tests/test_formulations.py", "names test_docs.py"),
        ("svmref.formulations.svm.L1SVM.dual", "../../formulations/svm.py", None),
        ("svmref.formulations.svm.L1SVM.no_such", "../../formulations/svm.py", "does not resolve"),
        ("svmref.formulations.svm.L1SVM.dual", "../../formulations/ls_svm.py", "does not resolve"),
        ("anything", "../../formulations/missing.py", "does not exist"),
        ("test_strong_duality_rls", "../../formulations/rls.py", "not under tests/"),
    ],
)
def test_link_checker_catches_bad_links(text, target, expect):
    page = DOCS / "formulations" / "page.md"  # need not exist: targets resolve relative to its folder
    why = check_link(page, text, target)
    assert (why is None) if expect is None else (why is not None and expect in why), why


@pytest.mark.parametrize(
    "text, n_problems",
    [
        ("a $x_i$ and\n$$\nx\n$$\n", 0),
        ("$$\nx\n", 1),                  # block never closed
        ("inline $x\n= y$ broken\n", 2),  # two lines with one $ each
        ("$$x$$\n", 1),                  # strict: $$ not alone
        ("$a \\\\ b$\n", 1),             # strict: \\ inside inline math
        ("$\\frac{1}{2$\n", 1),           # unbalanced braces
        ("$$\n\\bigl( x\n$$\n", 1),       # \bigl without \bigr
        ("$a \\leftarrow b$\n", 0),       # \leftarrow is not \left
        ("$C\\,x + \\{a\\}$\n", 3),         # escapes GitHub eats inside inline maths
    ],
)
def test_math_checker_catches_bad_math(text, n_problems):
    assert len(math_problems(text, strict=True)) == n_problems


# --- part 2: derivation steps the pages claim and no other test checks ---------------------------
from instances import KERNELS, as_written, make_classification  # noqa: E402


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(a), abs(b))


def _F():
    import svmref.formulations as F  # cvxpy: imported only by the tests that need the reference

    return F


def _instance(n=24, seed=0, kernel="rbf", overlap=0.8):
    X, y = make_classification(n=n, d=2, seed=seed, overlap=overlap)
    return X, y, KERNELS[kernel](X)


def _outlier_data(seed=0):
    """000 Fig. 1: 20 points from N((0,0), I) labelled +1, 20 from N((5,2), I) labelled -1, and the
    deepest point of each class (closest to the other class's mean) relabelled: two outliers."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + [5.0, 2.0]])
    y = np.r_[np.ones(20), -np.ones(20)]
    out = [int(np.argmin(np.linalg.norm(X[:20] - [5.0, 2.0], axis=1))),
           20 + int(np.argmin(np.linalg.norm(X[20:], axis=1)))]
    y[out] *= -1
    return X, y, out


@pytest.mark.parametrize("C", [0.5, 5.0])
def test_l1_svm_kkt_and_recovery(C):
    """l1_svm.md §5-§6: the three KKT cases, sparsity, and the primal recovered from the dual."""
    F = _F()
    X, y, K = _instance(seed=20, overlap=0.4)  # well separated: some patterns beyond the margin
    f = F.get("l1_svm")
    p, d = as_written(f.primal(K, y, C=C)), F.solve(f.dual(K, y, C=C))
    alpha = d.values["alpha"]
    eps = 1e-5 * C
    zero, at_C = alpha <= eps, alpha >= C - eps
    free = ~zero & ~at_C
    Kay = K @ (alpha * y)
    b = np.mean(y[free] - Kay[free])  # the mean over the free alpha_i
    assert abs(b - p.values["b"]) <= TOL["kkt"]
    margin = y * (Kay + b)
    assert np.all(margin[zero] >= 1 - TOL["kkt"])
    assert np.max(np.abs(margin[free] - 1), initial=0.0) <= TOL["kkt"]
    assert np.all(margin[at_C] <= 1 + TOL["kkt"])
    assert zero.any(), "some pattern beyond the margin must get alpha_i = 0 (sparsity)"
    xi = np.maximum(0.0, 1 - margin)
    value = 0.5 * (alpha * y) @ Kay + C * xi.sum()
    assert _rel(value, p.objective) <= 1e-6


@pytest.mark.parametrize("C", [5.0, 50.0])  # at small C every pattern is inside the margin (1 - alpha_i/C)
def test_l2_svm_slack_is_alpha_over_C_and_kkt(C):
    """l2_svm.md §3, §5, §6: xi = alpha / C; margins; the same b from every alpha_i > 0."""
    F = _F()
    X, y, K = _instance(seed=21, overlap=0.4)  # well separated: some patterns beyond the margin
    f = F.get("l2_svm")
    p, d = as_written(f.primal(K, y, C=C)), F.solve(f.dual(K, y, C=C))
    alpha = d.values["alpha"]
    assert np.max(np.abs(p.values["xi"] - alpha / C)) <= TOL["kkt"]
    Kt = K + np.eye(len(y)) / C
    sv = alpha > 1e-5 * C
    b_each = y[sv] - (Kt @ (alpha * y))[sv]
    assert np.max(np.abs(b_each - p.values["b"])) <= TOL["kkt"]
    margin = y * (K @ (alpha * y) + p.values["b"])
    assert np.max(np.abs(margin[sv] - (1 - alpha[sv] / C))) <= TOL["kkt"]
    assert np.all(margin[~sv] >= 1 - TOL["kkt"])
    assert (~sv).any(), "the L2-SVM is sparse: some alpha_i = 0"


@pytest.mark.parametrize("C", [0.5, 5.0])
def test_least_1norm_alpha_is_gamma_minus_beta(C):
    """least_1norm_svm.md §3-§4: the multipliers of the LP (4) give alpha = gamma - beta, beta + gamma = C."""
    F = _F()
    X, y, K = _instance(seed=22)  # RBF: K positive definite, so the dual's alpha is unique
    f = F.get("least_1norm_svm")
    lp = as_written(f.lp(K, y, C=C))  # the LP as written: its multipliers are the conic solver's own
    beta, gamma = lp.constraint_duals  # of  -t <= r  and  r <= t  (r_i = 1 - y_i f(X_i))
    d = F.solve(f.dual(K, y, C=C))
    assert np.max(np.abs((gamma - beta) - d.values["alpha"])) <= TOL["kkt"] * max(1.0, C)
    assert np.max(np.abs(beta + gamma - C)) <= TOL["kkt"] * max(1.0, C)


@pytest.mark.parametrize("name", ["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"])
@pytest.mark.parametrize("C", [0.5, 5.0])
def test_alpha_is_C_times_loss_derivative(name, C):
    """taxonomy.md §2: alpha_i in C * subdifferential of the loss at xi_i (primal slacks, dual alpha)."""
    F = _F()
    X, y, K = _instance(seed=23)
    f = F.get(name)
    p, d = as_written(f.primal(K, y, C=C)), F.solve(f.dual(K, y, C=C))
    Phi = F.kernel_factor(K).Phi
    xi = 1 - y * (Phi @ p.values["W"] + p.values["b"])  # the slack, from the primal alone
    alpha, tol = d.values["alpha"], TOL["kkt"] * max(1.0, C)
    kink = np.abs(xi) <= 1e-6
    if C == 5.0:  # the instance exercises both sides of the loss (one-sided and two-sided losses differ)
        assert (xi < -1e-6).any() and (xi > 1e-6).any()
    if name == "l1_svm":      # max(0, xi)
        lo, hi = np.where(xi > 0, C, 0.0), np.where(xi < 0, 0.0, C)
        lo[kink], hi[kink] = 0.0, C
    elif name == "least_1norm_svm":  # |xi|
        lo, hi = C * np.sign(xi), C * np.sign(xi)
        lo[kink], hi[kink] = -C, C
    elif name == "l2_svm":    # max(0, xi)^2 / 2
        lo = hi = C * np.maximum(0.0, xi)
    else:                     # xi^2 / 2
        lo = hi = C * xi
    assert np.all(alpha >= lo - tol) and np.all(alpha <= hi + tol)


def _ls_svm_alpha(K, y, C):
    F = _F()
    A, rhs = F.get("ls_svm").kkt_system(K, y, C=C)
    sol = np.linalg.solve(A, rhs)
    return sol[1:], sol[0]


def test_ls_svm_is_not_sparse_and_outlier_alpha_grows_with_C():
    """ls_svm.md §5 (000 (7)): every alpha_i != 0; an outlier's |alpha| = C |xi| exceeds C and grows with C."""
    X, y, out = _outlier_data()
    K = KERNELS["linear"](X)
    prev = 0.0
    F = _F()
    for C in [1.0, 10.0, 100.0]:
        alpha, b = _ls_svm_alpha(K, y, C)
        # the system's alpha is the minimiser of the dual (2) solved as written (unique: K + I/C is PD)
        d = as_written(F.get("ls_svm").dual(K, y, C=C))
        assert np.max(np.abs(d.values["alpha"] - alpha)) <= TOL["kkt"] * (1 + np.max(np.abs(alpha)))
        assert np.min(np.abs(alpha)) > 1e-8, "an LS-SVM alpha_i is zero only by accident"
        xi = 1 - y * (K @ (alpha * y) + b)
        assert np.max(np.abs(alpha - C * xi)) <= TOL["exact"] * C * (1 + np.max(np.abs(xi)))
        a_out = np.max(np.abs(alpha[out]))
        assert a_out > C and a_out > prev
        prev = a_out


def test_least_1norm_outlier_influence_bounded_but_not_sparse():
    """least_1norm_svm.md §7: |alpha_i| <= C, the outliers sit at the bound, patterns beyond the margin
    get -C (not 0); zero alpha_i need margin exactly 1, which in 2-D (linear kernel, data in general
    position) at most d + 1 = 3 patterns can have, so at least N - 3 alpha_i are non-zero."""
    F = _F()
    X, y, out = _outlier_data()
    K = KERNELS["linear"](X)
    C = 1.0
    f = F.get("least_1norm_svm")
    d, p = F.solve(f.dual(K, y, C=C)), as_written(f.primal(K, y, C=C))
    alpha = d.values["alpha"]
    assert np.all(np.abs(alpha) <= C * (1 + 1e-8))
    assert np.all(alpha[out] >= C * (1 - 1e-5))
    margin = y * (K @ (alpha * y) + p.values["b"])
    beyond = margin > 1 + TOL["kkt"]
    assert beyond.any() and np.all(alpha[beyond] <= -C * (1 - 1e-5))
    assert np.sum(np.abs(alpha) > 1e-5 * C) >= len(y) - 3


@pytest.mark.parametrize("name", ["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"])
def test_kkt_gap_vanishes_at_the_optimum(name):
    """smo.md §4: at the reference optimum max_{I_U} F - min_{I_L} F = 0 (000 (11); (10) for LS-SVM),
    and b = -F_i on the free set is the primal's b."""
    F = _F()
    X, y, K = _instance(seed=24)
    C = 2.0
    f = F.get(name)
    d, p = F.solve(f.dual(K, y, C=C)), as_written(f.primal(K, y, C=C))
    alpha = d.values["alpha"]
    lo, up = {"l1_svm": (0.0, C), "l2_svm": (0.0, np.inf), "ls_svm": (-np.inf, np.inf),
              "least_1norm_svm": (-C, C)}[name]
    Kt = K + np.eye(len(y)) / C if name in ("l2_svm", "ls_svm") else K
    Fv = Kt @ (alpha * y) - y
    eps = 1e-6 * max(1.0, C)
    below, above = alpha < up - eps, alpha > lo + eps
    I_L = np.where(y > 0, below, above)   # 000 eq. (8)
    I_U = np.where(y > 0, above, below)
    gap = np.max(Fv[I_U]) - np.min(Fv[I_L])
    assert gap <= TOL["kkt"]
    free = below & above
    assert np.max(np.abs(-Fv[free] - p.values["b"])) <= TOL["kkt"]


@pytest.mark.parametrize("gamma", [1e-3, 0.1])
def test_rls_residuals_and_ls_svm_link(gamma):
    """rls.md §5-§6: residuals y - Kc = m gamma c = (m/2) alpha (primal, system (8) and dual agree), and
    p*_RLS = 2 gamma p*_LS-SVM(b = 0) with C = 1/(m gamma)."""
    F = _F()
    X, y, K = _instance(seed=25)
    m = len(y)
    f = F.get("rls")
    p, d = as_written(f.primal(K, y, gamma=gamma)), as_written(f.dual(K, y, gamma=gamma))
    A, rhs = f.system(K, y, gamma=gamma)
    c = np.linalg.solve(A, rhs)
    resid = y - K @ p.values["c"]
    assert np.max(np.abs(resid - m * gamma * c)) <= TOL["kkt"]
    assert np.max(np.abs(resid - m / 2 * d.values["alpha"])) <= TOL["kkt"]
    C = 1.0 / (m * gamma)
    J_ls = 0.5 * c @ K @ c + C / 2 * np.sum((y - K @ c) ** 2)
    assert _rel(p.objective, 2 * gamma * J_ls) <= TOL["objective"]


@pytest.mark.parametrize("mu", [0.0, 0.3, 0.9])
def test_sfm_soft_threshold_minimises_L_i(mu):
    """support_features.md §3 (003 (7)-(8)): argmin and min of L_i(a) = (1-mu)a^2 + mu|a| - w a on a grid."""
    F = _F()
    w = np.array([-2.0, -1.0, -0.95 * mu, -0.2 * mu, 0.0, 0.5 * mu, mu + 0.05, 1.3, 2.5])
    h = 1e-5
    a_hat = F.SupportFeatures.recover_a(np.atleast_2d(w), np.ones(1), np.ones(1), mu)  # w = X'(y*lam)
    for wi, ai in zip(w, a_hat):
        a = np.round(ai / h) * h + np.arange(-1.0, 1.0 + h / 2, h)  # L_i is convex: a local min is global
        L = (1 - mu) * a**2 + mu * np.abs(a) - wi * a
        k = int(np.argmin(L))
        assert 0 < k < len(a) - 1 and abs(a[k] - ai) <= h
        L_hat = -max(0.0, abs(wi) - mu) ** 2 / (4 * (1 - mu))
        assert L[k] >= L_hat - 1e-12 and L[k] - L_hat <= (1 - mu) * h**2 + abs(wi) * h
        assert (ai == 0.0) == (abs(wi) <= mu)  # feature selection


def _W(lam, X, y, mu):
    w = X.T @ (y * lam)
    return lam.sum() - np.sum(np.maximum(0.0, np.abs(w) - mu) ** 2) / (4 * (1 - mu))


@pytest.mark.parametrize("same_class", [True, False])
def test_generalised_smo_line_derivative(same_class):
    """generalised_smo.md §2-§4: phi'(t) = (1 - s) - a(w0 + t u)'u, non-increasing, linear between the
    breakpoints (+-mu - w0_i)/u_i; its zero, clipped to the box, maximises phi on the feasible segment."""
    rng = np.random.default_rng(30)
    N, n, mu, C = 10, 6, 0.4, 1.0
    X = rng.normal(size=(N, n))
    y = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)
    lam0 = rng.uniform(0.1, 0.9, N)
    k1, k2 = (0, 2) if same_class else (0, 1)
    s = y[k1] * y[k2]
    u = y[k1] * (X[k1] - X[k2])
    w0 = X.T @ (y * lam0)

    def lam(t):
        out = lam0.copy()
        out[k1] += t
        out[k2] -= s * t
        return out

    def dphi(t):
        wt = w0 + t * u
        a = np.sign(wt) * np.maximum(0.0, np.abs(wt) - mu) / (2 * (1 - mu))
        return (1 - s) - a @ u

    bps = np.sort(np.r_[(mu - w0) / u, (-mu - w0) / u])
    assert len(bps) <= 2 * n
    # the formula against central differences, at points off the breakpoints
    h = 1e-6
    for t in np.linspace(-3, 3, 13) + 0.0123:
        fd = (_W(lam(t + h), X, y, mu) - _W(lam(t - h), X, y, mu)) / (2 * h)
        assert abs(fd - dphi(t)) <= TOL["fd"] * max(1.0, abs(fd))
    # non-increasing, and linear between consecutive breakpoints
    grid = np.linspace(bps[0] - 1, bps[-1] + 1, 2001)
    vals = np.array([dphi(t) for t in grid])
    assert np.all(np.diff(vals) <= 1e-12)
    for lo, hi in zip(bps[:-1], bps[1:]):
        if hi - lo > 1e-9:
            mid = dphi((lo + hi) / 2)
            assert abs(mid - (dphi(lo) + dphi(hi)) / 2) <= 1e-10 * max(1.0, abs(mid))
    # the zero from the breakpoints (linear interpolation on the piece where phi' changes sign)
    ends = np.r_[bps[0] - 100.0, bps, bps[-1] + 100.0]
    g = np.array([dphi(t) for t in ends])
    k = int(np.flatnonzero((g[:-1] >= 0) & (g[1:] <= 0))[0])
    t_star = ends[k] + g[k] * (ends[k + 1] - ends[k]) / (g[k] - g[k + 1])
    assert abs(dphi(t_star)) <= 1e-9
    # clipped to the box: 0 <= lam0[k1] + t <= C and 0 <= lam0[k2] - s t <= C
    lo1, hi1 = -lam0[k1], C - lam0[k1]
    lo2, hi2 = sorted([s * lam0[k2], s * (lam0[k2] - C)])
    t_min, t_max = max(lo1, lo2), min(hi1, hi2)
    t_clip = min(t_max, max(t_min, t_star))
    seg = np.linspace(t_min, t_max, 4001)
    best = max(_W(lam(t), X, y, mu) for t in seg)
    assert _W(lam(t_clip), X, y, mu) >= best - 1e-12


def _D(alpha, y, Kt):
    return 0.5 * (alpha * y) @ Kt @ (alpha * y) - alpha.sum()


@pytest.mark.parametrize("shift", [0.0, 0.5])  # K and K + I/C with C = 2
def test_smo_pair_step_gain(shift):
    """smo.md §1: D(alpha + step) - D(alpha) = -lam Delta + lam^2 ||Z||^2 / 2, hence -Delta^2 / (2 ||Z||^2)."""
    X, y, K = _instance(n=16, seed=31)
    Kt = K + shift * np.eye(len(y))
    rng = np.random.default_rng(31)
    for _ in range(20):
        alpha = rng.uniform(-1, 1, len(y))
        L, U = rng.choice(len(y), 2, replace=False)
        Fv = Kt @ (alpha * y) - y
        delta = Fv[U] - Fv[L]
        z2 = Kt[L, L] + Kt[U, U] - 2 * Kt[L, U]
        for lam in (delta / z2, 0.3 * delta / z2, rng.normal()):
            new = alpha.copy()
            new[L] += y[L] * lam
            new[U] -= y[U] * lam
            assert abs(new @ y - alpha @ y) <= 1e-12 * len(y)
            change = _D(new, y, Kt) - _D(alpha, y, Kt)
            assert abs(change - (-lam * delta + lam**2 * z2 / 2)) <= TOL["exact"] * max(1.0, abs(change))
        best = alpha.copy()
        best[L] += y[L] * delta / z2
        best[U] -= y[U] * delta / z2
        change = _D(best, y, Kt) - _D(alpha, y, Kt)
        assert abs(change + delta**2 / (2 * z2)) <= TOL["exact"] * max(1.0, abs(change))


def test_smo_clipping_9_is_the_best_feasible_step():
    """smo.md §3 (000 (9)): lam = min{Delta/||Z||^2, C - y_L alpha_L, C + y_U alpha_U} keeps the box [-C, C]
    and is the best step on the feasible segment; any larger step leaves the box."""
    X, y, K = _instance(n=16, seed=32)
    C = 1.0
    rng = np.random.default_rng(32)
    n_clipped = 0
    for _ in range(50):
        alpha = rng.uniform(-C, C, len(y))
        Fv = K @ (alpha * y) - y
        I_L = np.flatnonzero(np.where(y > 0, alpha < C, alpha > -C))
        I_U = np.flatnonzero(np.where(y > 0, alpha > -C, alpha < C))
        L, U = I_L[np.argmin(Fv[I_L])], I_U[np.argmax(Fv[I_U])]
        delta = Fv[U] - Fv[L]
        z2 = K[L, L] + K[U, U] - 2 * K[L, U]
        cap = min(C - y[L] * alpha[L], C + y[U] * alpha[U])
        lam = min(delta / z2, cap)
        n_clipped += lam < delta / z2

        def step(t):
            new = alpha.copy()
            new[L] += y[L] * t
            new[U] -= y[U] * t
            return new

        assert np.all(np.abs(step(lam)) <= C * (1 + 1e-12))
        assert np.any(np.abs(step(cap * (1 + 1e-6))) > C)
        values = [_D(step(t), y, K) for t in np.linspace(0, cap, 501)]
        assert _D(step(lam), y, K) <= min(values) + 1e-12
    assert n_clipped > 0, "the instance must exercise the clipping"


def test_second_order_choice_is_the_best_unclipped_pair():
    """smo.md §5: with L fixed, (F_t - F_L)^2 / a_Lt is twice the exact decrease of D by the unclipped step
    on (L, t), so its argmax is the pair with the largest decrease (LS-SVM: no box, never clipped)."""
    X, y, K = _instance(n=16, seed=33)
    Kt = K + np.eye(len(y)) / 2.0
    rng = np.random.default_rng(33)
    alpha = rng.uniform(-1, 1, len(y))
    alpha -= y * (alpha @ y) / len(y)  # sum alpha_i y_i = 0
    Fv = Kt @ (alpha * y) - y
    L = int(np.argmin(Fv))
    crit, decrease = {}, {}
    for t in np.flatnonzero(Fv > Fv[L]):
        a = Kt[L, L] + Kt[t, t] - 2 * Kt[L, t]
        crit[t] = (Fv[t] - Fv[L]) ** 2 / a
        lam = (Fv[t] - Fv[L]) / a
        new = alpha.copy()
        new[L] += y[L] * lam
        new[t] -= y[t] * lam
        decrease[t] = _D(alpha, y, Kt) - _D(new, y, Kt)
        assert abs(decrease[t] - crit[t] / 2) <= TOL["exact"] * max(1.0, crit[t])
    assert max(crit, key=crit.get) == max(decrease, key=decrease.get)


def test_isls_reweighted_penalty_counts_support_vectors():
    """isls.md §1-§3: with lambda = 1/alpha_t^2 the regulariser sum (alpha_{t+1}/alpha_t)^2 tends to the
    number of support vectors; the LS-SVM start has all N non-zero, the end point fewer; a weight
    1/lambda_i = 0 gives alpha_i = 0 exactly (the solver's system (4))."""
    X, y, K = _instance(n=40, seed=1)
    C, N = 10.0, len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K + np.eye(N) / C
    alpha = np.linalg.solve(A, np.r_[0.0, y])[1:]  # 004 system (2)
    assert np.sum(np.abs(alpha) > 1e-6) == N
    for _ in range(300):
        inv_lam = alpha**2  # diag(lambda)^-1, lambda_i = 1/alpha_i^2
        A[1:, 1:] = (K * inv_lam[None, :]) @ K + np.eye(N) / C  # H of system (4)
        beta = np.linalg.solve(A, np.r_[0.0, y])[1:]
        new = inv_lam * (K @ beta)
        active = inv_lam > 0
        penalty = np.sum(new[active] ** 2 / inv_lam[active])
        done = np.linalg.norm(alpha - new) / N < 1e-12
        alpha = new
        if done:
            break
    n_sv = int(np.sum(np.abs(alpha) > 1e-6))
    assert done and abs(penalty - n_sv) <= 1e-6 and n_sv < N
    from svmref.solvers.isls import solve_weighted_system
    w = np.random.default_rng(34).uniform(0.1, 1.0, N)  # 1/lambda_i; 0 means lambda_i = inf
    w[::3] = 0.0
    a, _, _ = solve_weighted_system(K, y, C, w, drop=False)
    assert np.all(a[w == 0] == 0.0) and np.all(a[w > 0] != 0.0)
