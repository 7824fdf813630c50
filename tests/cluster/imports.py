"""Which third-party distributions a workflow script needs: its imports, followed through the
modules of src/xling and workflow/scripts it imports (at any depth), mapped to package names.

Imports guarded by ``try: ... except ImportError`` are optional by design and not followed.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
SCRIPTS = REPO / "workflow" / "scripts"
# Provided by Snakemake's script preamble (it puts its own package on sys.path), never by an env.
PROVIDED_BY_SNAKEMAKE = {"snakemake"}


@dataclass(frozen=True)
class Use:
    """A third-party top-level module and where it is imported."""

    module: str
    where: str  # path:line


def normalize(name: str) -> str:
    """PEP 503 form of a distribution name: PyYAML -> pyyaml, subword_nmt -> subword-nmt."""
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def _installed() -> dict[str, list[str]]:
    return packages_distributions()


def distributions_of(module: str) -> set[str]:
    """The distributions that install top-level ``module``, from this environment's metadata."""
    return {normalize(d) for d in _installed().get(module, [])}


def local_module_file(name: str) -> Path | None:
    """The file of a module of this repository (xling.*, or a script helper such as _bootstrap)."""
    if name.split(".")[0] == "xling":
        base = SRC.joinpath(*name.split("."))
    elif name in sys.stdlib_module_names or "." in name:
        return None  # workflow/scripts/tokenize.py is a script, not the stdlib's tokenize
    else:
        base = SCRIPTS / name
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path) -> str:
    relative = path.relative_to(SRC if path.is_relative_to(SRC) else SCRIPTS).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _optional_import_nodes(tree: ast.AST) -> set[int]:
    """ids of import nodes inside ``try`` blocks that catch ImportError."""
    optional: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = {
            name.id
            for handler in node.handlers
            for name in ast.walk(handler.type)
            if handler.type is not None and isinstance(name, ast.Name)
        }
        if caught & {"ImportError", "ModuleNotFoundError"}:
            for statement in node.body:
                optional |= {id(sub) for sub in ast.walk(statement)}
    return optional


def imported_names(path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every non-optional import in ``path``; ``from a import b``
    yields ``a`` and ``a.b`` (b may be a submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    optional = _optional_import_nodes(tree)
    package = module_name(path) if path.is_relative_to(SRC) else ""
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names.append((base, node.lineno))
            names += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return names


@cache
def third_party_uses(path: Path) -> frozenset[Use]:
    """Third-party modules that running ``path`` imports, following local modules."""
    uses: set[Use] = set()
    seen: set[Path] = set()
    todo = [path.resolve()]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for name, line in imported_names(current):
            top = name.split(".")[0]
            parts = name.split(".")
            local = [local_module_file(".".join(parts[:i])) for i in range(1, len(parts) + 1)]
            if any(local):
                todo += [f for f in local if f is not None]  # the module and its packages
            elif top == "xling":
                continue  # ``from xling.x import some_function``: not a module
            elif top not in sys.stdlib_module_names and top not in PROVIDED_BY_SNAKEMAKE:
                where = f"{current.relative_to(REPO)}:{line}"
                uses.add(Use(top, where))
    return frozenset(uses)
