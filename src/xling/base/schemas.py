"""Reading JSON-schema errors: the description a schema gives the key that failed.

Shared by the study config (:mod:`xling.study.schema`) and the toy world's spec
(:mod:`xling.toyworld.schema`), so that both say what a failing key is for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

# Schema keywords whose value maps names to schemas (the next step of a path is a name).
_NAME_MAPS = ("properties", "patternProperties", "$defs")


def resolve_ref(root: Mapping[str, Any], node: Any) -> Any:
    """``node`` with its local ``$ref`` (``#/$defs/name``) followed, as often as it has one."""
    seen = 0
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and seen < 20:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        if not target:
            break
        node, seen = target, seen + 1
    return node


def schema_hint(error: jsonschema.ValidationError, root: Mapping[str, Any]) -> str | None:
    """The description nearest to the failing keyword on its schema path, counting only the
    schema of the failing key and what is inside it (an array's description serves its items),
    not the sections around it."""
    node: Any = root
    hint = None
    for step in list(error.absolute_schema_path)[:-1]:
        node = resolve_ref(root, node)
        has_step = step in node if isinstance(node, Mapping) else isinstance(step, int)
        if (
            not isinstance(node, Mapping | list)
            or not has_step
            or (isinstance(node, list) and step >= len(node))
        ):
            break
        node = node[step]
        if step in _NAME_MAPS:
            hint = None
            continue
        for part in (node, resolve_ref(root, node)):
            if isinstance(part, Mapping) and isinstance(part.get("description"), str):
                hint = part["description"].strip()
                break
    if hint is None and isinstance(error.schema, Mapping):
        hint = error.schema.get("description")
    return hint
