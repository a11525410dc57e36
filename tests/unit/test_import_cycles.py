"""No import cycle between kernelkit's modules, function-level imports included.

import-linter's contracts hold the arrows between packages (and between builder's
subpackages); a cycle between two modules of one package, hidden by an import inside a
function, slips past them, as ``toolchain_lock`` <-> ``compiler_cache`` <-> ``header_deps``
did (issue 28). grimp (import-linter's graph) reads every import statement, wherever it is.
"""

from __future__ import annotations

import grimp

#: Cycles kept on purpose, each with why. bench/timing.py imports the CUDA timer inside
#: ``prepare`` only when a CUDA device is asked for: bench/cuda.py imports torch at the top.
KNOWN: set[frozenset[str]] = {frozenset({"kernelkit.bench.cuda", "kernelkit.bench.timing"})}


def import_cycles(package: str) -> set[frozenset[str]]:
    """Each set of modules that import each other (strongly connected, more than one)."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges = {m: {i for i in graph.find_modules_directly_imported_by(m)
                 if i == package or i.startswith(package + ".")} for m in graph.modules
             if m == package or m.startswith(package + ".")}
    return {frozenset(c) for c in _components(edges) if len(c) > 1}


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in edges), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
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
                out.append(sorted(component))
    return out


def test_no_module_imports_itself_back() -> None:
    cycles = import_cycles("kernelkit")
    assert sorted(map(sorted, cycles - KNOWN)) == [], "import cycles between modules"
    assert sorted(map(sorted, KNOWN - cycles)) == [], "a known cycle is gone: drop it from KNOWN"


def test_the_cycle_finder_finds_a_function_level_cycle() -> None:
    """Guards the test above against a finder that finds nothing."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [sorted(c) for c in _components(edges) if len(c) > 1] == [["a", "b", "c"]]
