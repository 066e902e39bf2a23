"""Packaging: every imported dependency is declared, and the wheel carries every package and data file.

A non-editable install is what these tests stand in for: the package list and package-data globs of
pyproject.toml decide what the wheel holds, and an import that is only satisfied because another
dependency happens to pull the module in breaks when that dependency changes.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("assistant", "tools", "knowledge")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _dist_key(name: str) -> str:
    """A distribution name as PEP 503 compares them ("slack_sdk" == "Slack-SDK")."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"]) + [r for extra in project.get("optional-dependencies", {}).values()
                                            for r in extra]
    return {_dist_key(re.match(r"[A-Za-z0-9_.-]+", r).group(0)) for r in reqs}


def _source_files() -> list[Path]:
    return [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts] + [ROOT / "app.py"]


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module name -> the files that import it, for every import outside the stdlib and this project."""
    out: dict[str, set[str]] = {}
    for path in _source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in PACKAGES and top != "app":
                    out.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return out


def test_every_imported_third_party_module_is_declared():
    providers = md.packages_distributions()
    declared = _declared()
    undeclared = {}
    for module, files in sorted(_third_party_imports().items()):
        dists = {_dist_key(d) for d in providers.get(module, [])}
        if not dists & declared:
            undeclared[module] = (sorted(dists) or ["not installed"], sorted(files))
    assert not undeclared, f"imported but not in pyproject.toml's dependencies: {undeclared}"


def test_the_three_import_names_come_from_this_distribution_only():
    """The README's reason the generic top-level names are safe: in the project's virtual environment no
    other installed distribution provides `assistant`, `tools` or `knowledge`."""
    providers = md.packages_distributions()
    for name in PACKAGES:
        assert {_dist_key(d) for d in providers.get(name, [])} == {"gpu-advisor"}, (name, providers.get(name))


def test_the_package_list_includes_every_subpackage():
    include = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = [".".join(p.parent.relative_to(ROOT).parts) for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py")
                if "__pycache__" not in p.parts]
    missing = [p for p in packages if not any(fnmatch.fnmatchcase(p, pat) for pat in include)]
    assert packages and not missing, f"packages the wheel would leave out: {missing}"


def test_package_data_covers_every_data_file():
    """Each non-Python file must match a package-data glob of a package above it (a folder with __init__.py; the
    glob relative to that folder, `*` not crossing a `/`, as setuptools reads it), or the installed app lacks it."""
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]
    uncovered = []
    for pkg in PACKAGES:
        for f in (ROOT / pkg).rglob("*"):
            if f.is_dir() or f.suffix in {".py", ".pyc"} or "__pycache__" in f.parts:
                continue
            owners = [d for d in f.parents if (d / "__init__.py").exists()]
            if not any(fnmatch.fnmatchcase(rel, pat) and rel.count("/") == pat.count("/")
                       for d in owners for rel in [f.relative_to(d).as_posix()]
                       for pat in globs.get(".".join(d.relative_to(ROOT).parts), [])):
                uncovered.append(str(f.relative_to(ROOT)))
    assert not uncovered, f"data files the wheel would leave out (add a package-data glob): {uncovered}"
