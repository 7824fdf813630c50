"""The SLURM profile as Snakemake reads it, and the test cluster's variant of it.

The test profile is the real one (slurm/config.yaml) with only what a one-node test cluster of two
CPUs and fake GPUs needs changed (tests/cluster/overrides.yaml); everything else, partitions,
retries and rerun triggers included, is exercised as the researchers' runs use it.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from xling.cluster.plan import gpus_of

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "slurm" / "config.yaml"
OVERRIDES = Path(__file__).with_name("overrides.yaml")
# Per-rule mappings that an override merges into instead of replacing.
MERGED_KEYS = ("default-resources", "set-threads", "set-resources")


def load_profile(path: Path = PROFILE) -> dict:
    """The profile after Snakemake's templating (YTE), as a plain mapping."""
    import yte

    with open(path, encoding="utf-8") as handle:
        return yte.process_yaml(handle, require_use_yte=True)


def gpu_rules(profile: dict) -> set[str]:
    return {
        rule
        for rule, resources in (profile.get("set-resources") or {}).items()
        if gpus_of(resources) > 0
    }


def fitted_profile(fake_gpus: int) -> dict:
    """The real profile, fitted to the test cluster (see tests/cluster/overrides.yaml)."""
    # A JSON round trip, not a deep copy: the profile's YAML aliases (the pretraining rules share
    # one mapping) must not carry an override of one rule to the others.
    profile = json.loads(json.dumps(load_profile()))
    overrides = yaml.safe_load(OVERRIDES.read_text(encoding="utf-8"))
    for key in overrides.pop("drop"):
        profile.pop(key, None)
    clamp = overrides.pop("clamp")
    for key, value in overrides.items():
        if key in MERGED_KEYS and isinstance(profile.get(key), dict):
            for name, setting in value.items():
                if isinstance(setting, dict):
                    profile[key].setdefault(name, {}).update(setting)
                else:
                    profile[key][name] = setting
        else:
            profile[key] = value
    # No rule may ask for more than the node has (SLURM would hold such a job forever); threads
    # are capped by max-threads in overrides.yaml.
    for resources in profile.get("set-resources", {}).values():
        if "mem_mb" in resources:
            resources["mem_mb"] = clamp["mem_mb"]
        if resources.get("gpu"):
            resources["gpu"] = min(int(resources["gpu"]), fake_gpus)
        if int(resources.get("nodes") or 1) > 1:
            raise ValueError("the test cluster has one node; override the rule in overrides.yaml")
    return profile


def write_profile(profile: dict, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return directory
