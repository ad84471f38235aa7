"""Layers only point down: a package imports only packages of lower layers (and itself).

    schemas  ←  core  ←  clients  ←  filtering, annotation (peers: never each other)  ←  exports  ←  pipelines

Why a test: the review before the one-shape redesign found imports in both directions
(pipelines.common ⇄ exports, exports → a benchmark's pools, annotation → filtering's private
helpers and → pipelines' media), which is how copies and drift start. The rule is checked on
the source text (``ast``), so it holds for code paths no other test runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"schemas": 0, "core": 1, "clients": 2, "filtering": 3, "annotation": 3, "exports": 4,
         "pipelines": 5}


def edges() -> list[tuple[str, int, str, str]]:
    out = []
    for package in LAYER:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    out.append((path.relative_to(ROOT).as_posix(), node.lineno, package, name))
    return out


def test_every_import_points_down() -> None:
    wrong = [f"{f}:{line}: {pkg} imports {name}" for f, line, pkg, name in edges()
             if name.split(".")[0] in LAYER and name.split(".")[0] != pkg
             and LAYER[name.split(".")[0]] >= LAYER[pkg]]
    assert wrong == []


def test_no_module_imports_another_packages_private_names() -> None:
    wrong = []
    for path in sorted(p for pkg in LAYER for p in (ROOT / pkg).rglob("*.py")):
        package = path.relative_to(ROOT).parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top = node.module.split(".")[0]
                private = [a.name for a in node.names if a.name.startswith("_")]
                if top in LAYER and top != package and private:
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module} {private}")
    assert wrong == []


def test_the_check_sees_the_packages() -> None:
    """Guard against a vacuous pass: the walk finds modules and real downward edges."""
    found = edges()
    assert {pkg for _, _, pkg, _ in found} == set(LAYER) - {"clients"} | (
        {"clients"} if (ROOT / "clients").is_dir() else set())
    assert any(pkg == "pipelines" and name.startswith("exports") for _, _, pkg, name in found)
