"""Load and validate a study config: schema first, then the checks a schema cannot express.

Validation also expands ``<name>: paper`` under ``variants`` into that row's settings from
:mod:`xling.papers.wu2020`, so the rest of the workflow only ever sees full mappings.

Every problem is reported as one :class:`ConfigError` whose message names the key, what was
found and what is allowed, so a wrong config stops the workflow before any job runs.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from xling import yamlfile
from xling.contracts.layout import TASK_SPLITS
from xling.papers.wu2020 import BUILD_KEYS, TABLE1_ROWS

DEFAULT_SCHEMA = Path(__file__).resolve().parents[2] / "config" / "schema.yaml"
# Under `variants`, `<name>: paper` stands for the row of that name in Wu et al. (2020) Table 1.
PAPER_ROW = "paper"
# Keys of `pretrain` that say how a cluster job runs, not what it trains: the rules keep them out of
# their params, so that changing them never reruns a finished model (training resumes without them).
PRETRAIN_JOB_KEYS = (
    "runtime_minutes", "attempts", "checkpoint_minutes", "world_size", "threads", "compile_layers"
)  # fmt: skip


class ConfigError(ValueError):
    """A config that cannot run; the message says which key and how to fix it."""


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


def _ref(root: Mapping[str, Any], node: Any) -> Any:
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


def _known_keys(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> set[str]:
    """Every key ``schema`` names under ``properties``, also through ``allOf``, ``$ref`` and the
    like: the keys an ``unevaluatedProperties: false`` schema accepts."""
    if depth > 10 or not isinstance(schema, Mapping):
        return set()
    keys = set(schema.get("properties") or {})
    if "$ref" in schema:
        keys |= _known_keys(_ref(root, {"$ref": schema["$ref"]}), root, depth + 1)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(keyword) or []:
            keys |= _known_keys(part, root, depth + 1)
    for keyword in ("then", "else"):
        keys |= _known_keys(schema.get(keyword) or {}, root, depth + 1)
    return keys


# Schema keywords whose value maps names to schemas (the next step of a path is a name).
_NAME_MAPS = ("properties", "patternProperties", "$defs")


def schema_hint(error: jsonschema.ValidationError, root: Mapping[str, Any]) -> str | None:
    """The description nearest to the failing keyword on its schema path, counting only the
    schema of the failing key and what is inside it (an array's description serves its items),
    not the sections around it."""
    node: Any = root
    hint = None
    for step in list(error.absolute_schema_path)[:-1]:
        node = _ref(root, node)
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
        for part in (node, _ref(root, node)):
            if isinstance(part, Mapping) and isinstance(part.get("description"), str):
                hint = part["description"].strip()
                break
    if hint is None and isinstance(error.schema, Mapping):
        hint = error.schema.get("description")
    return hint


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


# The fields each url template of config `data` may use, as the rules fill them in.
URL_FIELDS = {
    "wikipedia": {"lang"},
    "commoncrawl": {"lang"},
    "muse": {"src", "tgt", "span"},
    "tatoeba": {"code", "side"},
    "fasttext": {"lang"},
    "transformers": {"name", "revision", "file"},
}


# MUSE's file of each dictionary split: train = the 0-5000 dictionary, test = 5000-6500.
MUSE_SPANS = {"train": "0-5000", "test": "5000-6500"}


def commoncrawl_code(config: Mapping[str, Any], lang: str) -> str:
    """CC-100's name of ``lang`` (data.commoncrawl.codes; Chinese: zh-Hans), else the code."""
    return config["data"]["commoncrawl"].get("codes", {}).get(lang, lang)


def wikipedia_code(config: Mapping[str, Any], lang: str) -> str:
    """Wikipedia's name of ``lang`` (data.wikipedia.codes, the ``<code>wiki`` of its dumps),
    else the code."""
    return config["data"]["wikipedia"].get("codes", {}).get(lang, lang)


def template_file_names(config: Mapping[str, Any], section: str) -> set[str]:
    """Every file name ``data.<section>.url`` gives for the configured languages (a superset of
    those the rules download): what a ``data.<section>.sha256`` pin may be keyed by."""
    data = config["data"][section]
    languages = list(config["languages"])
    if section == "commoncrawl":
        fillings = [{"lang": commoncrawl_code(config, lang)} for lang in languages]
    elif section == "wikipedia":
        fillings = [{"lang": wikipedia_code(config, lang)} for lang in languages]
    elif section == "muse":
        fillings = [
            {"src": src, "tgt": tgt, "span": span}
            for src in languages
            for tgt in languages
            if src != tgt
            for span in MUSE_SPANS.values()
        ]
    elif section == "tatoeba":
        codes = data.get("codes", {}).values()
        fillings = [{"code": code, "side": side} for code in codes for side in (code, "eng")]
    elif section == "transformers":
        return set(data["files"])
    else:
        fillings = [{"lang": lang} for lang in languages]
    return {data["url"].format(**filling).rsplit("/", 1)[-1] for filling in fillings}


def _expand_paper_rows(config: dict) -> None:
    """Replace every ``<name>: paper`` under ``variants`` by the paper's settings of that row.

    A full mapping under the name of a paper row must build the paper's model: the report prints
    the paper's numbers beside it. Only ``label`` may differ (it only renames the row).
    """
    variants = config["variants"]
    for name, variant in variants.items():
        row = TABLE1_ROWS.get(name)
        if variant == PAPER_ROW:
            if row is None:
                raise ConfigError(
                    f"config key 'variants.{name}': {PAPER_ROW!r} stands for a row of Wu et al. "
                    f"(2020) Table 1, and {name!r} is not one (its rows: "
                    f"{', '.join(TABLE1_ROWS)}); give a new row its settings: "
                    f"{{{', '.join(BUILD_KEYS)}}}"
                )
            variants[name] = row.settings()
        elif row is not None:
            for key in BUILD_KEYS:
                if variant[key] != getattr(row, key):
                    raise ConfigError(
                        f"config key 'variants.{name}.{key}': {variant[key]!r}, but Wu et al. "
                        f"(2020) Table 1 builds {name} with {key}={getattr(row, key)!r}; write "
                        f"'{name}: {PAPER_ROW}' for the paper's row, or give this row another "
                        f"name (it is then added to Table 1)"
                    )


def selected(config: Mapping[str, Any], key: str) -> list[str]:
    """The variants or tasks to build: config ``select.<key>`` or every configured one."""
    return list(config.get("select", {}).get(key) or config[key])


def ud_languages(dataset: Mapping[str, Any]) -> list[str]:
    """The languages of one UD dataset of config ``data.ud``: its treebanks', or a manual one's."""
    return list(dataset["languages"] if dataset.get("manual") else dataset["treebanks"])


def ud_source(config: Mapping[str, Any], dataset: str, lang: str) -> dict:
    """Where the UD dataset ``dataset`` of ``lang`` comes from (config ``data.ud.<dataset>``).

    Returns ``{"dataset", "lang", "splits"}`` with either ``download`` (the release's name in
    ``data.downloads``) and ``treebank`` (its folder in the release), or ``manual_dir`` (the
    files were put by hand under it). Raises ValueError naming the config key when the dataset
    or the language is not configured.
    """
    datasets = config["data"].get("ud", {})
    if dataset not in datasets:
        raise ValueError(
            f"no UD dataset {dataset!r} in config key 'data.ud' "
            f"(configured: {', '.join(sorted(datasets)) or 'none'})"
        )
    settings = datasets[dataset]
    if lang not in ud_languages(settings):
        key = "languages" if settings.get("manual") else "treebanks"
        raise ValueError(
            f"config key 'data.ud.{dataset}.{key}' has no {lang!r} (it has: "
            f"{', '.join(ud_languages(settings))}); add the language there or read another dataset"
        )
    source = {"dataset": dataset, "lang": lang, "splits": ud_splits(settings)}
    if settings.get("manual"):
        return source | {"manual_dir": config["data"]["manual_dir"]}
    return source | {"download": settings["download"], "treebank": settings["treebanks"][lang]}


def ud_splits(dataset: Mapping[str, Any]) -> list[str]:
    """The splits of a UD dataset of config ``data.ud``, in the order train, dev, test."""
    return [split for split in TASK_SPLITS if split in dataset["splits"]]


def validate(config: dict, schema_path: str | Path = DEFAULT_SCHEMA) -> dict:
    """Validate a whole study config; return it with defaults filled in."""
    from xling import config_checks  # it builds on this module

    config_checks.check_retired_forms(config)
    config = validate_schema(config, schema_path)
    config_checks.check_data(config)
    _expand_paper_rows(config)
    config_checks.check_study(config)
    from xling.monolingual import check as check_monolingual

    check_monolingual(config)
    from xling.muller.plan import check as check_muller

    check_muller(config)
    return config


def load(path: str | Path, schema_path: str | Path = DEFAULT_SCHEMA) -> dict:
    return validate(load_yaml(path), schema_path)


def check_files(paths: Iterable[str | Path]) -> None:
    """Read each config file strictly (syntax errors and repeated keys, with file and line):
    Snakemake's own reader lets a repeated key silently win."""
    for path in paths:
        load_yaml(path)


def main(paths: list[str]) -> int:
    """``python -m xling.config FILE...``: check config files as the workflow would, naming the
    file and line of a YAML error that Snakemake reports only as "not valid JSON or YAML"."""
    if not paths:
        print("usage: python -m xling.config CONFIG.yaml [MORE.yaml ...]", file=sys.stderr)
        return 2
    try:
        study = validate(yamlfile.load_merged(paths))["study"]
    except (ConfigError, yamlfile.ConfigFileError, OSError) as error:
        print(f"invalid: {error}", file=sys.stderr)
        return 1
    print(f"valid: {', '.join(paths)} (study {study!r})")
    return 0


def pair_languages(pair: str) -> tuple[str, str]:
    source, target = pair.split("-")
    return source, target


def task_dataset(config: Mapping[str, Any], task: str, pair: str, lang: str) -> str:
    """The dataset ``pair`` uses for ``task`` in ``lang`` (config ``tasks.<task>.datasets``)."""
    datasets = config["tasks"][task]["datasets"]
    return datasets.get("pairs", {}).get(pair, {}).get(lang, datasets["default"])


if __name__ == "__main__":
    # As xling.config, not __main__: the checks in other modules raise xling.config.ConfigError,
    # which __main__'s own copy of the class would not catch.
    from xling.config import main as _main

    sys.exit(_main(sys.argv[1:]))
