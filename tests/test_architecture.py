"""The layers of src/xling (docs/architecture.md) hold: no import circle, no import upward, the
study package torch-free, and functions a reader can take in at once."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
# Bottom to top: a package may import its own layer and those below it, never one above.
LAYERS = (
    "base",  # with the package root, xling/__init__.py
    "papers",
    "contracts",
    "jobs",
    "preprocess",
    "acquire",
    "toyworld",
    "vocab",
    "model",
    "pretrain",
    "finetune",
    "analysis",
    "muller",
    "study",
    "report",
    "cluster",
)
MAX_LINES = 80
MAX_PARAMETERS = 8
REASON = "Why so many parameters:"  # a docstring line that says why a function needs more


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((SRC / "xling").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The xling modules ``name`` imports (at any depth of its code, lazy imports included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `from m import name`: the module m
                target = target.rpartition(".")[0]
            if target.startswith("xling") and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0
    if parts[1] not in LAYERS:
        raise AssertionError(f"{module}: package {parts[1]!r} has no layer; add it to LAYERS")
    return LAYERS.index(parts[1])


def test_no_import_circle():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_nothing_imports_a_layer_above_its_own():
    upward = [
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in sorted(targets)
        if layer(target) > layer(module)
    ]
    assert upward == []


def test_every_package_has_a_layer():
    packages = {path.parent.name for path in (SRC / "xling").glob("*/__init__.py")}
    assert packages <= set(LAYERS)
    loose = {path.name for path in (SRC / "xling").glob("*.py")} - {"__init__.py"}
    assert loose == set(), "modules belong in a layer's package, not loose at the top"


def test_the_study_package_is_torch_free():
    """The Snakefile imports it at parse time, which every cluster job pays."""
    code = "import sys, xling.study; print(sorted({'torch', 'pandas'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
    )
    assert result.stdout.strip() == "[]"


def _functions():
    roots = [SRC / "xling", REPO / "workflow" / "scripts"]
    for path in sorted(p for root in roots for p in root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield path.relative_to(REPO), node


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return [name for name in names if name not in ("self", "cls")]


def test_no_function_is_longer_than_a_screen():
    long = [
        f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path, node in _functions()
        if node.end_lineno - node.lineno + 1 > MAX_LINES
    ]
    assert long == []


def test_a_function_with_many_parameters_says_why():
    unexplained = [
        f"{path}:{node.lineno} {node.name} ({len(_parameters(node))} parameters)"
        for path, node in _functions()
        if len(_parameters(node)) > MAX_PARAMETERS and REASON not in (ast.get_docstring(node) or "")
    ]
    assert unexplained == []


@pytest.mark.parametrize("source, expected", [("def f(a, b, *c, d, **e): pass", 5)])
def test_parameters_are_counted_as_a_caller_sees_them(source, expected):
    node = ast.parse(source).body[0]
    assert len(_parameters(node)) == expected


def test_the_layers_doc_lists_the_layers():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [name for name in LAYERS if f"`{name}`" not in text]
    assert missing == []
