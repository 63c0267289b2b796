"""The package's import structure: layers in order, no private names across packages, no cycles.

Every import counts, wherever it sits (module level, inside a function, under `TYPE_CHECKING`):
a type-only edge still couples the two modules, and a cycle of them is what once forced
weakened types such as `verify(task, episode: Any)`. So does a string that names a module of
workgym (`importlib.import_module("workgym....")`, or a `"module:attr"` handed to a resolver):
it is an import the `import` statements do not show. The layer order is the one in
docs/decisions/0022-layers-enforced-by-a-test.md; inside `envs/warehouse/` the pipeline stages
are ranked the same way (docs/architecture.md). The test reads the source with `ast` and imports
nothing, so it is fast and sees imports that never run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "workgym"

# Lower numbers are lower layers; a module may import its own package and any lower layer.
# Packages that share a rank are siblings and may not import each other (except as allowed).
LAYERS: dict[str, int] = {
    "core": 0,
    "models": 1,
    "testing": 2,
    "run": 2,
    "stats": 2,
    "verifiers": 3,
    "guards": 3,
    "envs": 4,
    "train": 5,
    "swarm": 5,
    "certify": 5,
    "apps": 6,
    "adapters": 6,
}
# The public face (`workgym/__init__.py`, `__main__.py`) sits above everything.
FACE_RANK = 7
# Sibling edges that are allowed. `stats` is a leaf, so its siblings may use it; `run` does not
# import `testing`: it resolves `scripted/...` names through the registry (see the decision).
SIBLING_EDGES = {("run", "stats"), ("testing", "stats")}
# `stats` is a leaf: it imports nothing of workgym but itself.
LEAVES = {"stats"}

# The warehouse wing's stages, lowest first (docs/architecture.md): a stage may import its own
# folder and the stages below it. `runtime` sits below `generate` because the generator writes
# and checks the directory `WarehouseEnv` loads; `investigate` (F9) sits on top because it
# phrases with the generator's lexicon and plays episodes through the runtime's tools, and
# `generate` and `runtime` reach it only through the registry (`runtime/family_plug.py`).
WAREHOUSE = "workgym.envs.warehouse"
WAREHOUSE_STAGES: dict[str, int] = {
    "source": 0,
    "schema": 1,
    "runtime": 2,
    "generate": 3,
    "investigate": 4,
}


@dataclass(frozen=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (a module of workgym)
    names: tuple[str, ...]  # names taken with `from target import ...` (or a string's `:attr`)
    line: int
    text: str = ""  # for an import written as a string: the string

    def where(self) -> str:
        return f"{MODULES[self.source].relative_to(ROOT.parents[1])}:{self.line}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve_relative(source: str, module: str | None, level: int) -> str:
    base = source.split(".")
    if not _is_package(source):
        base = base[:-1]
    if level > 1:
        base = base[: -(level - 1)]
    return ".".join([*base, module] if module else base)


def _edges(source: str, path: Path) -> Iterator[Edge]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "workgym":
                    yield Edge(source, _existing(alias.name), (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = _resolve_relative(source, node.module, node.level)
            else:
                target = node.module or ""
            if target.split(".")[0] != "workgym":
                continue
            plain: list[str] = []
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:  # `from package import module`: an edge to the module
                    yield Edge(source, sub, (), node.lineno)
                else:
                    plain.append(alias.name)
            if plain or not node.names:
                yield Edge(source, _existing(target), tuple(plain), node.lineno)


def _existing(name: str) -> str:
    if name not in MODULES:
        raise AssertionError(f"import of {name!r}, which is no module of src/workgym")
    return name


EDGES = [edge for name, path in MODULES.items() for edge in _edges(name, path)]

# `workgym.a.b` or `workgym.a.b:attr.sub`, the whole string: a module named for an import.
_MODULE_STRING = re.compile(r"workgym(?:\.\w+)+(?::[\w.]+)?")
_IMPORT_CALLS = {"import_module", "__import__"}


def _string_edges(source: str, tree: ast.AST) -> Iterator[Edge]:
    """Imports written as strings: the literal handed to `import_module(...)` (or `__import__`),
    and every string constant that is exactly a module of workgym, with or without `:attr` (what
    the `module:attr` resolvers take: `SAVED_ONLY`, finishers). Prose that mentions a module is
    never the whole string; a dotted name that is no module (an entry-point group) is left out,
    while a `module:attr` whose module does not exist fails as a broken reference."""
    handed: set[int] = set()  # the literals already taken as `import_module` arguments
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0] if node.args else None
        if name in _IMPORT_CALLS and isinstance(first, ast.Constant):
            handed.add(id(first))
            text = str(first.value)
            if text.split(".")[0] == "workgym":
                yield Edge(source, _existing(text.split(":")[0]), (), node.lineno, text)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in handed:
            continue
        if isinstance(node.value, str) and _MODULE_STRING.fullmatch(node.value):
            module, _, attr = node.value.partition(":")
            if attr:  # `module:attr` is a reference for a resolver: its module must exist
                names = (attr.split(".")[0],)
                yield Edge(source, _existing(module), names, node.lineno, node.value)
            elif module in MODULES:
                yield Edge(source, module, (), node.lineno, node.value)


def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


STRING_EDGES = [e for name, path in MODULES.items() for e in _string_edges(name, _parse(path))]
# String imports that break the rule and are allowed by name. Empty since the saved-only classes
# and the default finisher became entry-point groups (issue 32, decision 0115); an entry here must
# go once its string is gone (the test below says so).
KNOWN_STRING_IMPORTS: set[tuple[str, str]] = set()


def _package(module: str) -> str:
    """`workgym.run.runner` -> `run`; the face (`workgym`, `workgym.__main__`) -> ''."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and _is_package(module)) else ""


def _rank(module: str) -> int:
    package = _package(module)
    if not package:
        return FACE_RANK
    if package not in LAYERS:
        raise AssertionError(f"{module}: package {package!r} has no layer; add it to LAYERS")
    return LAYERS[package]


def _stage(module: str) -> str | None:
    """`workgym.envs.warehouse.runtime.env` -> `runtime`; None outside the warehouse's stages."""
    if not module.startswith(WAREHOUSE + "."):
        return None
    return module.split(".")[3]


def _stage_violation(edge: Edge) -> str | None:
    source, target = _stage(edge.source), _stage(edge.target)
    if source is None or target is None or source == target:
        return None
    for stage in (source, target):
        if stage not in WAREHOUSE_STAGES:
            return f"warehouse stage {stage!r} has no rank; add it to WAREHOUSE_STAGES"
    if WAREHOUSE_STAGES[target] < WAREHOUSE_STAGES[source]:
        return None
    return f"warehouse stage {source} imports the higher stage {target}"


def _layer_violation(edge: Edge) -> str | None:
    source, target = _package(edge.source), _package(edge.target)
    if source == target:
        return _stage_violation(edge)
    if source in LEAVES:
        return f"{source} is a leaf and imports nothing of workgym"
    rank_source, rank_target = _rank(edge.source), _rank(edge.target)
    if rank_target < rank_source:
        return None
    if rank_target == rank_source and (source, target) in SIBLING_EDGES:
        return None
    kind = "a sibling" if rank_target == rank_source else "a higher"
    return f"{source} (layer {rank_source}) imports {kind} layer {target or 'workgym'}"


def _owner(module: str) -> str:
    """The package a module belongs to: itself for a package, else its parent."""
    return module if _is_package(module) else module.rsplit(".", 1)[0]


def _private_violation(edge: Edge) -> str | None:
    private = [n for n in edge.names if n.startswith("_") and not n.startswith("__")]
    private += [p for p in edge.target.split(".") if p.startswith("_") and p != "__main__"]
    if not private or _owner(edge.source) == _owner(edge.target):
        return None
    return f"private {', '.join(private)} taken across packages"


def test_every_module_has_a_layer() -> None:
    missing = sorted({_package(m) for m in MODULES} - set(LAYERS) - {""})
    assert not missing, f"packages without a layer: {missing}; add them to LAYERS in this test"


def _report(problems: list[tuple[Edge, str]]) -> str:
    lines = [
        f"  {edge.where()}: {edge.source} -> {edge.text or edge.target}: {why}"
        for edge, why in problems
    ]
    return f"{len(problems)} violation(s):\n" + "\n".join(sorted(lines))


def test_layers_import_only_downwards() -> None:
    problems = [(e, why) for e in EDGES if (why := _layer_violation(e))]
    assert not problems, _report(problems)


def test_no_private_names_across_packages() -> None:
    problems = [(e, why) for e in [*EDGES, *STRING_EDGES] if (why := _private_violation(e))]
    assert not problems, _report(problems)


def _string_problems(edges: list[Edge]) -> list[tuple[Edge, str]]:
    return [
        (e, f"a string import: {why}")
        for e in edges
        if (e.source, e.text) not in KNOWN_STRING_IMPORTS and (why := _layer_violation(e))
    ]


def test_string_imports_only_downwards() -> None:
    """`import_module("...")` and `"module:attr"` strings obey the layers and the warehouse's
    stages like `import` statements do; a plug point upward is an entry point (the registry)."""
    problems = _string_problems(STRING_EDGES)
    assert not problems, _report(problems)


def test_known_string_imports_are_still_there() -> None:
    found = {(e.source, e.text) for e in STRING_EDGES}
    gone = sorted(KNOWN_STRING_IMPORTS - found)
    assert not gone, f"these string imports are gone; remove them from KNOWN_STRING_IMPORTS: {gone}"


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("workgym.run.runner", 'importlib.import_module("workgym.guards.audit")'),
        ("workgym.run.runner", 'import_module("workgym.envs.toy.env")'),
        ("workgym.core.loading", 'KNOWN = {"workgym.envs.toy.env:ToyShop"}'),
        (f"{WAREHOUSE}.runtime.env", f'importlib.import_module("{WAREHOUSE}.investigate.family")'),
        (f"{WAREHOUSE}.generate.pipeline", f'REF = "{WAREHOUSE}.investigate.family:F9"'),
    ],
)
def test_a_planted_string_import_of_a_higher_layer_fails(source: str, code: str) -> None:
    """The same checker, on a module source planted for the test, refuses the upward string."""
    planted = list(_string_edges(source, ast.parse(f"import importlib\n{code}\n")))
    assert len(planted) == 1, planted
    problems = _string_problems(planted)
    assert len(problems) == 1 and "a string import" in problems[0][1], problems


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("workgym.apps.cli.main", 'importlib.import_module("workgym.run.runner")'),
        (f"{WAREHOUSE}.investigate.build", f'REF = "{WAREHOUSE}.runtime.env:WarehouseEnv"'),
        ("workgym.run.runner", 'LOG = "see workgym.guards.audit for the audit"'),  # prose
    ],
)
def test_a_planted_string_import_downwards_passes(source: str, code: str) -> None:
    planted = list(_string_edges(source, ast.parse(f"import importlib\n{code}\n")))
    assert not _string_problems(planted)
    assert len(planted) == (0 if "see " in code else 1)


def test_every_warehouse_stage_has_a_rank() -> None:
    stages = {s for m in MODULES if (s := _stage(m)) is not None}
    assert stages == set(WAREHOUSE_STAGES), f"stages: {sorted(stages)}; ranks: {WAREHOUSE_STAGES}"


def _stage_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {s: set() for s in WAREHOUSE_STAGES}
    for edge in [*EDGES, *STRING_EDGES]:
        source, target = _stage(edge.source), _stage(edge.target)
        if source is not None and target is not None and source != target:
            graph[source].add(target)
    return graph


def test_warehouse_stages_form_no_cycle_type_only_and_string_imports_included() -> None:
    """At folder level too: no two stages import each other, however indirectly."""
    cycles = _cycles(_stage_graph())
    assert not cycles, f"warehouse stages in a cycle: {cycles}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
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
                    found.append(sorted(component))
    return found


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    strings = [e for e in STRING_EDGES if (e.source, e.text) not in KNOWN_STRING_IMPORTS]
    for edge in [*EDGES, *strings]:
        if edge.target != edge.source:
            graph[edge.source].add(edge.target)
    return graph


# Cycles that are known and tracked (none left: the playbook trainer's steps take its
# `TrainingState`, not the loop). An entry here must go once its cycle is gone.
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles_type_only_edges_included() -> None:
    cycles = [c for c in _cycles(_import_graph()) if c not in KNOWN_CYCLES]
    shown = "\n".join(f"  {len(c)} modules: {' '.join(c)}" for c in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s):\n{shown}"


def test_known_cycles_are_still_cycles() -> None:
    gone = [c for c in KNOWN_CYCLES if c not in _cycles(_import_graph())]
    assert not gone, f"these cycles are gone; remove them from KNOWN_CYCLES: {gone}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("source", "target", "names", "bad"),
    [
        ("workgym.core.episode", "workgym.guards.audit", ("audit",), True),
        ("workgym.guards.audit", "workgym.core.episode", ("Episode",), False),
        ("workgym.run.runner", "workgym.testing.scripted", ("ScriptedModel",), True),
        ("workgym.stats.tests", "workgym.core.errors", ("ConfigError",), True),
        ("workgym.apps.cli.main", "workgym.run.runner", ("eval_async",), False),
        (f"{WAREHOUSE}.runtime.tools", f"{WAREHOUSE}.generate.splits", ("unit_key",), True),
        (f"{WAREHOUSE}.runtime.env", f"{WAREHOUSE}.investigate.surface", (), True),
        (f"{WAREHOUSE}.generate.pipeline", f"{WAREHOUSE}.runtime.env", ("WarehouseEnv",), False),
        (f"{WAREHOUSE}.investigate.frame", f"{WAREHOUSE}.generate.phrasing", ("Lexicon",), False),
        (f"{WAREHOUSE}.schema.card", f"{WAREHOUSE}.source.snapshot", (), False),
    ],
)
def test_the_layer_rule_itself(source: str, target: str, names: tuple[str, ...], bad: bool) -> None:
    MODULES.setdefault("workgym.core.errors", ROOT / "core" / "errors.py")
    assert (_layer_violation(Edge(source, target, names, 1)) is not None) is bad


def test_a_private_name_may_stay_inside_its_package() -> None:
    inside = Edge("workgym.run.runner", "workgym.run.rundir", ("_helper",), 1)
    across = Edge("workgym.run.executors.ray_executor", "workgym.run.runner", ("_attempt",), 1)
    assert _private_violation(inside) is None
    assert _private_violation(across) is not None
