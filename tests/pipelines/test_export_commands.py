"""The modules shipped with every lmms-eval export must be closed under their own first-party
imports: a vendored module that imports one left out fails only inside lmms-eval's process, after
the kit's venv (minutes) is installed — this checks the set in milliseconds."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipelines.export_commands import lmms_eval_vendored
from pipelines.registry import BENCHMARKS, benchmark

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


ADAPTERS = [name for name in BENCHMARKS if benchmark(name).exports.lmms_eval is not None]


@pytest.mark.parametrize("name", ADAPTERS)
def test_every_first_party_import_of_a_vendored_module_is_vendored(name: str) -> None:
    """Per benchmark folder: its hook module (copied into the task folder as ``utils.py``) and the
    modules its adapter vendors import nothing first-party the adapter does not list — so a
    benchmark's list is right on its own, not only thanks to another benchmark's."""
    adapter = benchmark(name).exports.lmms_eval
    vendored = set(adapter.vendored)
    missing = {
        f"{module} imports {needed}"
        for module in [str(adapter.utils.relative_to(REPO)), *adapter.vendored]
        for needed in _first_party_imports(REPO / module)
        if needed not in vendored and not needed.endswith("__init__.py")
    }
    assert missing == set()


def test_every_export_ships_every_benchmarks_vendored_modules() -> None:
    """Tasks of several exports run in one lmms-eval process, where the first ``_vendor/`` on the
    path wins: each export ships the union, sorted."""
    assert set(ADAPTERS) == {"proactivebench", "proready", "streamvibe"}
    union = sorted({m for n in ADAPTERS for m in benchmark(n).exports.lmms_eval.vendored})
    assert lmms_eval_vendored() == union
    assert {"core/media/images.py", "pipelines/streamvibe/scoring.py", "filtering/parsing.py"} <= set(union)


def test_the_set_fails_when_a_needed_module_is_left_out() -> None:
    """The check above can fail: the sampler needs the probe, which needs images.py."""
    assert "core/media/probe.py" in _first_party_imports(REPO / "core/media/video.py")
    assert "core/media/images.py" in _first_party_imports(REPO / "core/media/probe.py")
