"""The import graph, read from the modules' own imports: layers only point down, and there is no circle.

Every ``.py`` file under ``engine/``, ``messages/``, ``services/`` and ``launch/`` is parsed with :mod:`ast`
(nothing is imported); every ``import`` and ``from ... import`` counts, at module level or inside a
function or a ``TYPE_CHECKING`` block, with relative imports resolved against the module's package. An
edge goes from a module to the project module it names (``from pkg import name`` to ``pkg.name`` when
that is a module, else to ``pkg``); importing a module also runs its packages' ``__init__``, which is
not counted as an edge of its own (a package's ``__init__`` importing its children is not a circle).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
#: the project's top-level packages, lowest layer first.
PACKAGES: Final = ("engine", "messages", "services", "launch")

Graph = dict[str, set[str]]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    """Every project module's dotted name -> its file."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _imported_names(module: str, path: Path) -> Iterator[str]:
    """Every dotted name ``module`` imports (absolute; ``from a import b`` yields ``a.b`` and ``a``)."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base_parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                assert node.module is not None
                base = node.module
            yield base
            for alias in node.names:
                yield f"{base}.{alias.name}"


@cache
def import_graph() -> Graph:
    """Module -> the project modules it imports (itself and its own packages left out)."""
    modules = _modules()
    graph: Graph = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for name in _imported_names(module, path):
            if name in modules:
                targets.add(name)
            elif name.rpartition(".")[0] in modules:
                targets.add(name.rpartition(".")[0])  # ``from module import a_function``
        # A module's own package runs first when it is imported; an edge to it is not a dependency.
        targets = {t for t in targets if t != module and not module.startswith(t + ".")}
        graph[module] = targets
    return graph


def _top(module: str) -> str:
    return module.split(".")[0]


def _cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep chain of imports cannot hit the recursion limit.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
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
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


def _edges_into(graph: Graph, sources: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, imported in graph.items()
        if _top(module) in sources
        for target in imported
        if _top(target) in targets
    )


def test_the_graph_is_read_from_every_module() -> None:
    graph = import_graph()
    assert {_top(m) for m in graph} == set(PACKAGES)
    # function-level and relative imports are seen (the configuration loads each service's section)
    assert "services.actuator.config" in graph["services.common.config"]
    assert "services.common.frame" in graph["services.actuator.framed"]
    assert "services.simworld.motion" in graph["services.simworld.frame"]


def test_no_module_imports_itself_through_a_circle() -> None:
    assert _cycles(import_graph()) == []


def test_nothing_below_the_command_line_imports_it() -> None:
    assert _edges_into(import_graph(), ("engine", "messages", "services"), ("launch",)) == []


def test_messages_and_the_engine_import_no_service() -> None:
    assert _edges_into(import_graph(), ("engine", "messages"), ("services",)) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph: Graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
