"""The client layer sits below filtering/ and annotation/, and no module reaches into another
package's private names (the three model-call loops used to import ``_run_one`` / ``_run_async``
from filtering/). Read from the source with ``ast``, so a lazy import inside a function counts."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "schemas", "clients", "filtering", "annotation", "exports", "pipelines")
#: known and outside the client layer: the duplicated great-expectations runners (issue 12 §3);
#: exports/ is being reworked separately. The list may only shrink.
KNOWN_PRIVATE_IMPORTS = ["pipelines/streamvibe/quality.py: from exports.quality import _write_reports"]


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every import statement in ``path``."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
    return out


def sources(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def test_clients_import_only_core_schemas_and_third_party() -> None:
    upward = {(p.relative_to(REPO).as_posix(), m) for p in sources("clients") for m, _ in imports(p)
              if m.split(".")[0] in ("filtering", "annotation", "exports", "pipelines")}
    assert upward == set()


def test_no_module_imports_another_packages_private_names() -> None:
    found = []
    for package in PACKAGES:
        for path in sources(package):
            for module, names in imports(path):
                top = module.split(".")[0]
                private = [n for n in names if n.startswith("_") and n != "__future__"]
                if top in PACKAGES and top != package and private:
                    found.append(f"{path.relative_to(REPO)}: from {module} import {', '.join(private)}")
    assert found == KNOWN_PRIVATE_IMPORTS
