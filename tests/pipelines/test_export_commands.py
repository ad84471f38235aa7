"""The modules shipped with every lmms-eval export must be closed under their own first-party
imports: a vendored module that imports one left out fails only inside lmms-eval's process, after
the kit's venv (minutes) is installed — this checks the set in milliseconds."""

from __future__ import annotations

import ast
from pathlib import Path

from pipelines.export_commands import LMMS_EVAL_VENDORED

REPO = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"core", "filtering", "pipelines", "exports", "annotation", "schemas"}


def _first_party_imports(path: Path) -> set[str]:
    """Module files a vendored file imports when it is imported (``from a.b import c`` names
    ``a/b.py``). Imports inside functions are left out: those run only on paths the exported hooks
    do not take (``filtering.parsing.first_turn`` resolves blobs inside benchforge, not lmms-eval)."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text())]
    while pending:
        node = pending.pop()
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            if name.split(".")[0] in FIRST_PARTY:
                as_path = name.replace(".", "/")
                found.add(f"{as_path}.py" if (REPO / f"{as_path}.py").exists() else f"{as_path}/__init__.py")
    return found


def test_every_first_party_import_of_a_vendored_module_is_vendored() -> None:
    """Roots: each benchmark's hook module (copied into the task folder as ``utils.py``) and the
    vendored modules themselves."""
    vendored = set(LMMS_EVAL_VENDORED)
    hooks = [str(p.relative_to(REPO)) for p in sorted(REPO.glob("pipelines/*/lmms_eval_utils.py"))]
    assert len(hooks) == 3
    missing = {
        f"{module} imports {needed}"
        for module in [*hooks, *LMMS_EVAL_VENDORED]
        for needed in _first_party_imports(REPO / module)
        if needed not in vendored and not needed.endswith("__init__.py")
    }
    assert missing == set()


def test_the_set_fails_when_a_needed_module_is_left_out() -> None:
    """The check above can fail: video.py needs images.py."""
    assert "core/media/images.py" in _first_party_imports(REPO / "core/media/video.py")
