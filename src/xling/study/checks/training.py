"""Checks of the training settings (``model``, ``pretrain``, the tasks' input lengths) and of
the models the CKA analysis reads: what would otherwise fail inside a job, hours into a run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xling.study.keys import ConfigError, selected


def check_architecture(architecture: Mapping[str, Any], key: str) -> None:
    """What xling.model.EncoderConfig would refuse inside the first pretraining job."""
    dim, heads = architecture.get("dim", 768), architecture.get("heads", 12)
    if dim % heads:
        raise ConfigError(
            f"config key '{key}': dim {dim} is not a multiple of heads {heads} (each head gets "
            "dim / heads dimensions); change one of them"
        )


def check(config: dict) -> None:
    """Settings that would otherwise fail inside a job, hours into a run: rejected here, naming
    the key and the fix."""
    model, pretrain = config["model"], config["pretrain"]
    check_architecture(model, "model")
    positions = model.get("max_positions", 512)
    if pretrain["seq_len"] > positions:
        raise ConfigError(
            f"config key 'pretrain.seq_len': {pretrain['seq_len']} tokens do not fit the model's "
            f"{positions} positions (model.max_positions); shorten seq_len or raise max_positions"
        )
    micro_batch = pretrain.get("micro_batch")
    own = ((config.get("muller") or {}).get("model") or {}).get("pretrain") or {}
    batches = {"pretrain.batch_size": pretrain["batch_size"]}
    if "batch_size" in own:  # Muller et al.'s own MLM trains its own batch
        batches["muller.model.pretrain.batch_size"] = own["batch_size"]
    for key, batch in batches.items():
        if micro_batch is not None and micro_batch > batch:
            raise ConfigError(
                f"config key 'pretrain.micro_batch': {micro_batch} streams are more than a block "
                f"of {key} ({batch}), the most a process trains at once; lower it or leave it "
                "unset"
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
