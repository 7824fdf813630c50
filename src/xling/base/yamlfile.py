"""Read a config file strictly: a syntax error or a repeated key names the file and the line.

PyYAML keeps the last of two equal keys without a word, so a setting typed twice would silently
win over the first; Snakemake's own reader says only "Config file is not valid JSON or YAML".
This reader refuses both, pointing at the line to fix.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml


class ConfigFileError(ValueError):
    """A config file that cannot be read; the message names the file, the line and the fix."""


# libyaml's parser where PyYAML was built with it: reading the paper config is then 5x faster,
# and every Snakemake job reads it again.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_SafeLoader):
    """SafeLoader that rejects a key repeated within one mapping."""


def _construct_unique_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False):
    first_line: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            if key in first_line:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} is repeated (first on line {first_line[key] + 1}), and only the "
                    "last would count",
                    key_node.start_mark,
                )
            first_line[key] = key_node.start_mark.line
        except TypeError:  # an unhashable key: SafeLoader refuses it with its own message
            break
    return yaml.constructor.SafeConstructor.construct_mapping(loader, node, deep=deep)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def load(path: str | Path) -> dict:
    """The mapping in the YAML (or JSON) file ``path``.

    Raises:
        ConfigFileError: a syntax error or a repeated key (with file, line and column), a file
            that is not UTF-8 (with the line and byte), or a file whose top level is not a
            mapping.
    """
    text = _utf8_text(path)
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: builds plain data only
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else path
        what = " ".join(part for part in (error.context, error.problem) if part)
        raise ConfigFileError(f"{where}: {what}; fix the YAML there") from None
    if not isinstance(data, dict):
        raise ConfigFileError(
            f"{path}: a config file must be a YAML mapping of keys, found {type(data).__name__}"
        )
    return data


def _utf8_text(path: str | Path) -> str:
    """The file's text; ConfigFileError naming the line and byte of the first one that is not
    UTF-8 (YAML config files are UTF-8; an editor may have saved it as Latin-1)."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        start = error.start
        line = raw.count(b"\n", 0, start) + 1
        column = start - (raw.rfind(b"\n", 0, start) + 1) + 1
        raise ConfigFileError(
            f"{path}, line {line}, column {column} (byte {start}): byte 0x{raw[start]:02x} is not "
            "UTF-8 (the file seems saved in another encoding, e.g. Latin-1); save it as UTF-8 "
            f"(e.g. iconv -f latin1 -t utf-8 {path} > fixed.yaml)"
        ) from None


def load_merged(paths: Iterable[str | Path]) -> dict:
    """The files' mappings merged as Snakemake merges ``--configfile A B``: a later file's value
    replaces an earlier one's, key by key inside nested mappings."""
    merged: dict = {}
    for path in paths:
        _merge_into(merged, load(path))
    return merged


def _merge_into(base: dict, update: Mapping) -> None:
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge_into(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
