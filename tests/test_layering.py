"""papergym's imports run one way and never in a circle (DESIGN.md §Layout).

Order: core <- backends <- envs <- wrappers / credit / viewer <- baselines / integrations / cli /
reproduce. The root package ``papergym`` sits at the envs layer (it imports envs and re-exports core).

What counts as an edge, decided here:

- **direction**: every ``import`` anywhere in a module, at top level, inside functions and under
  ``if TYPE_CHECKING:``. A lazy import inside a function (for an optional backend) is fine only downward:
  an upward lazy import is still a dependency on a higher layer.
- **cycles**: every import except those under ``if TYPE_CHECKING:`` (annotations only, never executed).
  Function-level imports count: moving an import into a function to dodge a load-time cycle hides the
  cycle without removing the coupling.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

import papergym

ROOT = Path(papergym.__file__).resolve().parent
LAYERS: dict[str, int] = {
    "core": 0,
    "backends": 1,
    "envs": 2,
    "wrappers": 3,
    "credit": 3,
    "viewer": 3,  # records and renders episodes: reads envs, used by cli and the trainers' evaluations
    "baselines": 4,
    "integrations": 4,
    "cli": 4,
    "reproduce": 4,
}
ROOT_LAYER = LAYERS["envs"]
# Cycles tolerated while a known one is being removed; each must still be a cycle (checked below).
ALLOWED_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    """Dotted name of a file under ``papergym/``."""
    parts = ["papergym", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer(module: str) -> int:
    """The layer of a papergym module name."""
    parts = module.split(".")
    if len(parts) == 1:
        return ROOT_LAYER
    if parts[1] not in LAYERS:
        raise KeyError(f"{module} is in no layer of DESIGN.md §Layout; add its subpackage to LAYERS")
    return LAYERS[parts[1]]


def _resolve(name: str) -> str:
    """The most specific papergym module a dotted import name refers to."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(body: list[ast.stmt], runs: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement under ``body`` with whether it ever runs (False under ``if TYPE_CHECKING:``)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, runs
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _walk(node.body, False)
            yield from _walk(node.orelse, runs)
        else:
            yield from _walk([n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)], runs)


def imports(module: str) -> Iterator[tuple[str, bool, int]]:
    """``(target module, ever runs, line)`` for each papergym import in ``module``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node, runs in _walk(ast.parse(path.read_text(), str(path)).body, True):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            if name == "papergym" or name.startswith("papergym."):
                yield _resolve(name), runs, node.lineno


def upward_edges() -> list[str]:
    """Every import from a lower layer into a higher one, as readable lines."""
    return [
        f"{src}:{line} imports {dst} (layer {layer(src)} -> {layer(dst)})"
        for src in MODULES
        for dst, _, line in imports(src)
        if layer(dst) > layer(src)
    ]


def all_cycles() -> list[frozenset[str]]:
    """Every import cycle (strongly connected set of modules) among imports that run."""
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    edges = [(src, dst) for src in MODULES for dst, runs, _ in imports(src) if runs and dst != src]
    graph.add_edges_from(edges)
    return [frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def load_cycles() -> list[set[str]]:
    """Import cycles less the allow-listed ones."""
    return [set(c) for c in all_cycles() if c not in ALLOWED_CYCLES]


def test_every_module_is_in_a_layer() -> None:
    assert len(MODULES) > 50
    for module in MODULES:
        assert 0 <= layer(module) <= 4


def test_imports_run_downward_only() -> None:
    assert upward_edges() == []


def test_no_import_cycles() -> None:
    assert load_cycles() == []


def test_allowed_cycles_still_exist() -> None:
    """An allow-listed cycle that is gone must leave the allow-list (so it cannot hide a new one)."""
    sccs = set(all_cycles())
    for allowed in ALLOWED_CYCLES:
        assert allowed in sccs, f"{sorted(allowed)} is no longer a cycle: delete it from ALLOWED_CYCLES"


def test_detects_an_upward_edge_and_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks catch a planted upward import and a planted cycle through a function-level import;
    a ``TYPE_CHECKING`` import forms no cycle."""
    fake = {
        "papergym.core.a": "from papergym.envs import b\n",
        "papergym.envs.b": "import papergym.envs.c\n",
        "papergym.envs.c": "def f():\n    from papergym.envs import b\n    import papergym.baselines.d\n",
        "papergym.envs.e": "import typing\nif typing.TYPE_CHECKING:\n    import papergym.envs.b\n",
        "papergym.envs.b.x": "import papergym.envs.e\n",
        "papergym.baselines.d": "",
    }
    files = {}
    for name, text in fake.items():
        path = tmp_path / f"{name.replace('.', '_')}.py"
        path.write_text(text)
        files[name] = path
    monkeypatch.setitem(globals(), "MODULES", files)
    edges = upward_edges()
    cycles = load_cycles()
    assert any("papergym.core.a:1 imports papergym.envs.b" in e for e in edges)
    assert any("papergym.envs.c:3 imports papergym" in e for e in edges)  # a function-level upward import
    assert cycles == [{"papergym.envs.b", "papergym.envs.c"}]
