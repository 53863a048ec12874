"""The package installs one top-level name, ``svmref``: the folders formulations/, solvers/, verify/
and figures/ are ``svmref.formulations`` and so on (setuptools' package-dir mapping). The bare names
belong to unrelated packages on the package index, so they must not be importable from svmref.

Run in a subprocess from an empty temporary directory, so that the repository root is not on
``sys.path`` and only what pip installed can be imported.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

NAMESPACED = ("svmref", "svmref.formulations", "svmref.solvers", "svmref.verify", "svmref.figures")
BARE = ("formulations", "solvers", "verify", "figures")


def _run(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", NAMESPACED)
def test_namespaced_package_imports_from_anywhere(name, tmp_path):
    res = _run(f"import {name} as m, pathlib; print(pathlib.Path(m.__file__).parent.name)", tmp_path)
    assert res.returncode == 0, res.stderr
    expected = name.split(".")[-1]
    assert res.stdout.strip() == expected  # the folder at the top of the repository


@pytest.mark.parametrize("name", BARE)
def test_bare_name_is_not_installed(name, tmp_path):
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.find_spec({name!r})\n"
        "origin = spec.origin if spec else None\n"
        "sys.exit(0 if spec is None or 'svmref' not in str(origin) and 'work' not in str(origin) else 1)\n"
    )
    res = _run(code, tmp_path)
    assert res.returncode == 0, f"{name!r} resolves to svmref's folder: {res.stdout}{res.stderr}"
    res = _run(f"import {name}", tmp_path)
    assert res.returncode != 0 and "ModuleNotFoundError" in res.stderr


def test_cli_specs_use_the_namespace(tmp_path):
    res = subprocess.run([sys.executable, "-m", "svmref.cli", "verify", "--list"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    specs = [line.split()[0] for line in res.stdout.splitlines() if ":" in line.split()[0:1][0]] if res.stdout else []
    assert specs and all(s.startswith("svmref.solvers.") for s in specs), res.stdout
