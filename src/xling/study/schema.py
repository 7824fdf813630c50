"""The study config's JSON schema (config/schema.yaml): validation, its defaults filled in, and
one message per problem that names the key, what was found and what is allowed."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from xling.base import yamlfile
from xling.base.schemas import resolve_ref, schema_hint
from xling.study.keys import ConfigError

DEFAULT_SCHEMA = Path(__file__).resolve().parents[3] / "config" / "schema.yaml"


def load_yaml(path: str | Path) -> dict:
    """A config file's mapping; a syntax error or a repeated key names the file and line."""
    try:
        return yamlfile.load(path)
    except yamlfile.ConfigFileError as error:
        raise ConfigError(str(error)) from None


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def _describe(error: jsonschema.ValidationError, root: Mapping[str, Any] | None = None) -> str:
    """The message of one schema error: the key, what was found, and what is allowed or how to
    fix it. ``root`` (the whole schema) resolves the ``$ref`` s of the error's schema path."""
    key = _key_path(error)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    root = root or {}
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        return f"config key '{key}': {error.instance!r} is not allowed; allowed values: {allowed}"
    if error.validator == "required":
        return f"config key '{key}': {error.message}; add it (see config/schema.yaml)"
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        known = ", ".join(sorted(_known_keys(schema, root)))
        return f"config key '{key}': {error.message}; known keys here: {known}"
    hint = schema_hint(error, root)
    if error.validator == "pattern":
        pattern = error.validator_value
        fix = f". {hint}" if hint else "; write a value that matches it (see config/schema.yaml)"
        return f"config key '{key}': {error.instance!r} does not match {pattern!r}{fix}"
    return f"config key '{key}': {error.message}" + (f" ({hint})" if hint else "")


def _known_keys(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> set[str]:
    """Every key ``schema`` names under ``properties``, also through ``allOf``, ``$ref`` and the
    like: the keys an ``unevaluatedProperties: false`` schema accepts."""
    if depth > 10 or not isinstance(schema, Mapping):
        return set()
    keys = set(schema.get("properties") or {})
    if "$ref" in schema:
        keys |= _known_keys(resolve_ref(root, {"$ref": schema["$ref"]}), root, depth + 1)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(keyword) or []:
            keys |= _known_keys(part, root, depth + 1)
    for keyword in ("then", "else"):
        keys |= _known_keys(schema.get(keyword) or {}, root, depth + 1)
    return keys


def _most_specific(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    """The error to report: the deepest key's; at one key, any other error before an
    ``unevaluatedProperties`` one (a subschema that failed, e.g. on a missing required key,
    evaluates none of its properties, which are then all "unevaluated")."""
    return max(
        errors,
        key=lambda e: (
            len(e.absolute_path),
            e.validator != "unevaluatedProperties",
            -len(e.context or []),
        ),
    )


def validate_schema(config: dict, schema_path: str | Path = DEFAULT_SCHEMA) -> dict:
    """Validate against the JSON schema and return a copy with the schema's defaults filled in."""
    schema = load_yaml(schema_path)
    config = copy.deepcopy(config)
    validator_cls = jsonschema.validators.validator_for(schema)
    validator = _with_defaults(validator_cls)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    while errors and any([_coerce_string(config, validator, error) for error in errors]):
        errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError(_describe(_most_specific(errors), schema))
    return config


def _coerce_string(config: dict, validator, error: jsonschema.ValidationError) -> bool:
    """Replace a string where the schema wants a number or a boolean by the value it spells.

    Snakemake reads a nested ``--config`` value with YAML's BaseLoader, which keeps every scalar
    a string: ``--config 'report={"resamples": 0}'`` arrives as ``{"resamples": "0"}``. A string
    that YAML reads as a value of the wanted type is taken as that value; any other stays an
    error. Returns whether ``config`` changed.
    """
    for candidate in [error, *(error.context or [])]:
        wanted = candidate.validator_value
        if candidate.validator != "type" or not isinstance(candidate.instance, str):
            continue
        try:
            value = yaml.safe_load(candidate.instance)
        except yaml.YAMLError:
            continue
        if isinstance(value, str):  # YAML 1.1 reads "1e-3" (no dot) as a string; Python not
            try:
                value = float(candidate.instance)
            except ValueError:
                continue
        types = [wanted] if isinstance(wanted, str) else list(wanted)
        if isinstance(value, str) or not any(validator.is_type(value, t) for t in types):
            continue
        path = list(candidate.absolute_path)
        if not path:
            continue
        *parents, last = path
        owner = config
        for key in parents:
            owner = owner[key]
        owner[last] = value
        return True
    return False


def _with_defaults(validator_cls):
    """A validator that also fills ``default`` values of present objects (jsonschema FAQ)."""
    validate_properties = validator_cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if isinstance(subschema, Mapping) and "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_cls, {"properties": set_defaults})
