"""Load and validate a study config: the schema first, then the checks a schema cannot express,
stage by stage (:mod:`xling.study.checks`). Validation also expands ``<name>: paper`` under
``variants`` into that row's settings from :mod:`xling.papers.wu2020`.

Every problem is reported as one :class:`~xling.study.keys.ConfigError` whose message names the
key, what was found and what is allowed, so a wrong config stops the workflow before any job runs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from xling.base import yamlfile
from xling.study.checks import datasets, muller, section5, sources, table1, training
from xling.study.keys import ConfigError
from xling.study.schema import DEFAULT_SCHEMA, load_yaml, validate_schema


def validate(config: dict, schema_path: str | Path = DEFAULT_SCHEMA) -> dict:
    """Validate a whole study config; return it with defaults filled in and the paper's rows
    expanded."""
    sources.check_retired_forms(config)
    config = validate_schema(config, schema_path)
    sources.check(config)
    table1.expand_paper_rows(config)
    table1.check(config)
    datasets.check(config)
    training.check(config)
    section5.check(config)
    muller.check(config)
    return config


def load(path: str | Path, schema_path: str | Path = DEFAULT_SCHEMA) -> dict:
    return validate(load_yaml(path), schema_path)


def check_files(paths: Iterable[str | Path]) -> None:
    """Read each config file strictly (syntax errors and repeated keys, with file and line):
    Snakemake's own reader lets a repeated key silently win."""
    for path in paths:
        load_yaml(path)


def main(paths: list[str]) -> int:
    """``python -m xling.study FILE...``: check config files as the workflow would, naming the
    file and line of a YAML error that Snakemake reports only as "not valid JSON or YAML"."""
    if not paths:
        print("usage: python -m xling.study CONFIG.yaml [MORE.yaml ...]", file=sys.stderr)
        return 2
    try:
        study = validate(yamlfile.load_merged(paths))["study"]
    except (ConfigError, yamlfile.ConfigFileError, OSError) as error:
        print(f"invalid: {error}", file=sys.stderr)
        return 1
    print(f"valid: {', '.join(paths)} (study {study!r})")
    return 0
