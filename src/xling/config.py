"""Load and validate a study config: schema first, then the checks a schema cannot express.

Validation also expands ``<name>: paper`` under ``variants`` into that row's settings from
:mod:`xling.papers.wu2020`, so the rest of the workflow only ever sees full mappings.

Every problem is reported as one :class:`ConfigError` whose message names the key, what was
found and what is allowed, so a wrong config stops the workflow before any job runs.
"""

from __future__ import annotations

import copy
import string
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
PRETRAIN_JOB_KEYS = ("runtime_minutes", "attempts", "checkpoint_minutes", "world_size", "threads")


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


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key_path(error)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        return f"config key '{key}': {error.instance!r} is not allowed; allowed values: {allowed}"
    if error.validator == "required":
        return f"config key '{key}': {error.message}; add it (see config/schema.yaml)"
    if error.validator == "additionalProperties":
        known = ", ".join(sorted(schema.get("properties", {})))
        return f"config key '{key}': {error.message}; known keys here: {known}"
    if error.validator == "pattern":
        hint = schema.get("description", "")
        pattern = error.validator_value
        return f"config key '{key}': {error.instance!r} does not match {pattern!r}. {hint}"
    hint = schema.get("description")
    return f"config key '{key}': {error.message}" + (f" ({hint})" if hint else "")


def _most_specific(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    return max(errors, key=lambda e: (len(e.absolute_path), -len(e.context or [])))


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
        raise ConfigError(_describe(_most_specific(errors)))
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


def _check_pairs(config: dict) -> None:
    known = sorted(config["languages"])
    seen = set()
    for index, pair in enumerate(config["pairs"]):
        source, target = pair.split("-")
        for lang in (source, target):
            if lang not in config["languages"]:
                raise ConfigError(
                    f"config key 'pairs' (item {index}, {pair!r}): unknown language {lang!r}; "
                    f"known languages (config key 'languages'): {', '.join(known)}"
                )
        if source == target:
            raise ConfigError(
                f"config key 'pairs' (item {index}): {pair!r} pairs a language with itself"
            )
        if pair in seen:
            raise ConfigError(f"config key 'pairs': {pair!r} is listed twice")
        seen.add(pair)
        if "xnli" in config.get("tasks", {}) and source != "en":
            raise ConfigError(
                f"config key 'pairs' (item {index}, {pair!r}): a pair is source-target and "
                f"fine-tunes on its source, but XNLI (config key 'tasks.xnli') has English "
                f"training data only; write it as 'en-{source}'"
            )


# The fields each url template of config `data` may use, as the rules fill them in.
URL_FIELDS = {
    "commoncrawl": {"lang"},
    "muse": {"src", "tgt", "span"},
    "tatoeba": {"code", "side"},
    "fasttext": {"lang"},
    "transformers": {"name", "revision", "file"},
}


def _check_url_templates(config: dict) -> None:
    for section, allowed in URL_FIELDS.items():
        template = (config["data"].get(section) or {}).get("url")
        if template is None:
            continue
        key = f"config key 'data.{section}.url'"
        try:
            fields = {field for _, field, _, _ in string.Formatter().parse(template) if field}
        except ValueError as error:
            raise ConfigError(f"{key}: {template!r} is not a valid template ({error})") from None
        unknown = sorted(fields - allowed)
        if unknown:
            raise ConfigError(
                f"{key}: {template!r} uses {', '.join('{' + f + '}' for f in unknown)}, which "
                f"nothing fills in; it may use {', '.join('{' + f + '}' for f in sorted(allowed))}"
            )


# MUSE's file of each dictionary split: train = the 0-5000 dictionary, test = 5000-6500.
MUSE_SPANS = {"train": "0-5000", "test": "5000-6500"}


def commoncrawl_code(config: Mapping[str, Any], lang: str) -> str:
    """CC-100's name of ``lang`` (data.commoncrawl.codes; Chinese: zh-Hans), else the code."""
    return config["data"]["commoncrawl"].get("codes", {}).get(lang, lang)


def template_file_names(config: Mapping[str, Any], section: str) -> set[str]:
    """Every file name ``data.<section>.url`` gives for the configured languages (a superset of
    those the rules download): what a ``data.<section>.sha256`` pin may be keyed by."""
    data = config["data"][section]
    languages = list(config["languages"])
    if section == "commoncrawl":
        fillings = [{"lang": commoncrawl_code(config, lang)} for lang in languages]
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


def _check_pins(config: dict) -> None:
    """A pin under a name no download has would never be checked: say so."""
    for section in URL_FIELDS:
        pins = (config["data"].get(section) or {}).get("sha256") or {}
        if not pins:
            continue
        names = template_file_names(config, section)
        unknown = sorted(set(pins) - names)
        if unknown:
            example = sorted(names)[0] if names else "none"
            raise ConfigError(
                f"config key 'data.{section}.sha256': {unknown} name no file that "
                f"data.{section}.url gives for the configured languages (e.g. {example}), so "
                "these pins would never be checked; key each pin by the downloaded file's name"
            )


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


def _check_variants(config: dict) -> None:
    schemes = config["vocab"]["schemes"]
    layers = config["model"]["layers"]
    for name, variant in config["variants"].items():
        if variant["vocab"] not in schemes:
            raise ConfigError(
                f"config key 'variants.{name}.vocab': scheme {variant['vocab']!r} has no settings "
                f"in 'vocab.schemes'; configured schemes: {', '.join(sorted(schemes))}"
            )
        if variant["sep_layers"] > layers:
            raise ConfigError(
                f"config key 'variants.{name}.sep_layers': {variant['sep_layers']} separate "
                f"layers, but the model has model.layers={layers}"
            )


def _check_selection(config: dict) -> None:
    for key, configured in (("variants", config["variants"]), ("tasks", config["tasks"])):
        for name in config.get("select", {}).get(key, []):
            if name not in configured:
                raise ConfigError(
                    f"config key 'select.{key}': {name!r} is not configured under '{key}' "
                    f"(configured: {', '.join(configured)})"
                )


def selected(config: Mapping[str, Any], key: str) -> list[str]:
    """The variants or tasks to build: config ``select.<key>`` or every configured one."""
    return list(config.get("select", {}).get(key) or config[key])


def _check_task_datasets(config: dict) -> None:
    for task, settings in config.get("tasks", {}).items():
        for pair in settings.get("datasets", {}).get("pairs", {}):
            if pair not in config["pairs"]:
                raise ConfigError(
                    f"config key 'tasks.{task}.datasets.pairs.{pair}': {pair!r} is not in 'pairs' "
                    f"({', '.join(config['pairs'])})"
                )


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


def _check_ud(config: dict) -> None:
    """The UD datasets of ``data.ud`` can be built, and every pair finds its parsing data there."""
    data = config["data"]
    if data["source"] != "download":
        return
    known = sorted(config["languages"])
    for name, dataset in data["ud"].items():
        key = f"data.ud.{name}"
        if dataset.get("manual"):
            for extra in ("download", "treebanks"):
                if extra in dataset:
                    raise ConfigError(
                        f"config key '{key}.{extra}': a manual dataset (manual: true) is put "
                        f"under data.manual_dir by hand and has no {extra}; remove one or the other"
                    )
        elif dataset["download"] not in data["downloads"]:
            raise ConfigError(
                f"config key '{key}.download': {dataset['download']!r} is not a download in "
                f"'data.downloads' (configured: {', '.join(sorted(data['downloads']))})"
            )
        for lang in ud_languages(dataset):
            if lang not in config["languages"]:
                part = "languages" if dataset.get("manual") else "treebanks"
                raise ConfigError(
                    f"config key '{key}.{part}': language {lang!r} is not in 'languages' "
                    f"({', '.join(known)}); add it there with its segmenter"
                )
    if "parsing" not in config["tasks"]:
        return
    # Every language of a pair reads its parsing data from a dataset of data.ud: the source
    # language all three splits (fine-tuning), the target language its test split. Wu §5's
    # transfer pairs (with a `monolingual` section) read theirs the same way.
    pairs = list(config["pairs"])
    transfer = config.get("analysis", {}).get("contextual_transfer", {})
    if "monolingual" in config and "parsing" in transfer.get("tasks", []):
        pairs += [pair for pair in transfer["pairs"] if pair not in pairs]
    for pair in pairs:
        source, target = pair_languages(pair)
        for lang, splits in ((source, TASK_SPLITS), (target, ("test",))):
            name = task_dataset(config, "parsing", pair, lang)
            where = f"config key 'tasks.parsing.datasets' (pair {pair}, {lang})"
            if name not in data["ud"]:
                raise ConfigError(
                    f"{where}: UD dataset {name!r} is not defined under 'data.ud' "
                    f"(defined: {', '.join(sorted(data['ud']))})"
                )
            try:
                ud_source(config, name, lang)
            except ValueError as error:
                raise ConfigError(f"{where}: {error}") from None
            missing = [split for split in splits if split not in data["ud"][name]["splits"]]
            if missing:
                raise ConfigError(
                    f"{where}: {lang} needs the {', '.join(missing)} split(s), and config key "
                    f"'data.ud.{name}.splits' has only {', '.join(data['ud'][name]['splits'])}"
                )


def _check_toyworld(config: dict) -> None:
    if config["data"]["source"] != "toyworld":
        if config["analysis"].get("word_aligner") == "gold":
            raise ConfigError(
                "config key 'analysis.word_aligner': gold alignments exist only in the toy world "
                f"(data.source toyworld), and data.source is {config['data']['source']!r}; "
                "use eflomal"
            )
        return
    from xling.toyworld import resolve_spec, validate_spec

    try:
        validate_spec(resolve_spec(config["data"]["toyworld"]))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    spec_languages = resolve_spec(config["data"]["toyworld"])["languages"]
    missing = sorted(set(config["languages"]) - set(spec_languages))
    if missing:
        raise ConfigError(
            f"config key 'languages': {missing} have no toy-world data; the toy world writes "
            f"{', '.join(spec_languages)} (config key data.toyworld.languages)"
        )


def _check_architecture(architecture: Mapping[str, Any], key: str) -> None:
    """What xling.model.EncoderConfig would refuse inside the first pretraining job."""
    dim, heads = architecture.get("dim", 768), architecture.get("heads", 12)
    if dim % heads:
        raise ConfigError(
            f"config key '{key}': dim {dim} is not a multiple of heads {heads} (each head gets "
            "dim / heads dimensions); change one of them"
        )


def _check_training(config: dict) -> None:
    """Settings that would otherwise fail inside a job, hours into a run: rejected here, naming
    the key and the fix."""
    model, pretrain = config["model"], config["pretrain"]
    _check_architecture(model, "model")
    muller_model = (config.get("muller") or {}).get("model") or {}
    if muller_model.get("architecture"):
        merged = {**model, **muller_model["architecture"]}
        _check_architecture(merged, "muller.model.architecture")
    positions = model.get("max_positions", 512)
    if pretrain["seq_len"] > positions:
        raise ConfigError(
            f"config key 'pretrain.seq_len': {pretrain['seq_len']} tokens do not fit the model's "
            f"{positions} positions (model.max_positions); shorten seq_len or raise max_positions"
        )
    if pretrain["warmup_steps"] > pretrain["total_steps"]:
        raise ConfigError(
            f"config key 'pretrain.warmup_steps': {pretrain['warmup_steps']} warmup steps exceed "
            f"the {pretrain['total_steps']} steps of training (pretrain.total_steps), so the "
            "learning rate would never reach its peak; lower warmup_steps or raise total_steps"
        )
    for task, settings in config["tasks"].items():
        if settings.get("max_length", 0) > positions:
            raise ConfigError(
                f"config key 'tasks.{task}.max_length': {settings['max_length']} tokens do not "
                f"fit the model's {positions} positions (model.max_positions); lower it"
            )
    trained = set(selected(config, "variants"))
    for variant in config["analysis"]["cka"]["variants"]:
        if variant not in trained:
            raise ConfigError(
                f"config key 'analysis.cka.variants': {variant!r} is not a trained variant, so "
                f"its CKA would be an empty figure; trained: {', '.join(sorted(trained))} "
                "(config keys 'variants' and 'select')"
            )


def validate(config: dict, schema_path: str | Path = DEFAULT_SCHEMA) -> dict:
    """Validate a whole study config; return it with defaults filled in."""
    config = validate_schema(config, schema_path)
    _check_pairs(config)
    _check_url_templates(config)
    _check_pins(config)
    _check_toyworld(config)
    _expand_paper_rows(config)
    _check_variants(config)
    _check_task_datasets(config)
    _check_ud(config)
    _check_selection(config)
    _check_training(config)
    from xling.monolingual import check as check_monolingual  # it builds on this module

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
    sys.exit(main(sys.argv[1:]))
