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


# -- inside the packages ---------------------------------------------------------------------------
# Why: the layers above say nothing about modules of one package, where circles had grown
# (pipelines.cli → driver → export_commands → cli; benchmark ⇄ driver; ProReady-QA's generation →
# review → release → quality → release), hidden by imports inside functions. The graph below
# counts those too: a function-level import is still a dependency.
BENCHMARK_PARTS = ("pipelines.cli", "pipelines.export_commands", "pipelines.registry")


def modules() -> dict[str, Path]:
    found = {}
    for package in LAYER:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """module → the project modules it imports (``from a import b`` counts ``a.b`` when ``b`` is
    a module, else ``a``), at any depth of the module's code."""
    mods = modules()

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            graph[mod] |= {o for o in map(owner, names) if o and o != mod}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others() -> None:
    assert circles(import_graph()) == []


def test_the_circle_check_finds_a_circle() -> None:
    """Guard against a vacuous pass: a made-up circle through a function-level import is found."""
    graph = import_graph()
    graph["pipelines.common.options"].add("pipelines.common.driver")
    assert any({"pipelines.common.driver", "pipelines.common.options"} <= set(c) for c in circles(graph))


def test_the_shared_pipeline_code_knows_no_benchmark_and_no_command() -> None:
    """``pipelines/common`` serves every benchmark folder and the CLI; importing one of them
    would make it depend on what depends on it."""
    benchmarks = {p.parent.name for p in (ROOT / "pipelines").glob("*/build.py")}
    assert benchmarks >= {"proactivebench", "streamvibe", "proready"}
    wrong = sorted(f"{mod} imports {dep}" for mod, deps in import_graph().items()
                   if mod.startswith("pipelines.common") for dep in deps
                   if dep in BENCHMARK_PARTS or dep.split(".")[1] in benchmarks)
    assert wrong == []
