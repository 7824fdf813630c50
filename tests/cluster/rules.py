"""The rules of the workflow as Snakemake parses them (both studies: their acquire rules differ;
and the paper study with its fine-tuning runs packed, whose rule exists only then).

Snakemake's Python API is documented as internal; its use is kept to this module (and tests/dag.py).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ("config/config.yaml", "config/demo.yaml")
# (config file, overrides): every rule some config defines (finetune.runs_per_job chooses among
# finetune_run, finetune_pack and finetune_model)
PARSED = (
    *((config, {}) for config in CONFIGS),
    ("config/config.yaml", {"finetune": {"runs_per_job": 3}}),
)


@dataclass(frozen=True)
class RuleInfo:
    name: str
    env: Path | None  # the conda env file
    script: Path | None
    runs_something: bool  # False for target rules such as `all`


@cache
def workflow_rules() -> dict[str, RuleInfo]:
    """Every rule of both studies, by name."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    rules: dict[str, RuleInfo] = {}
    for config, overrides in PARSED:
        with (
            tempfile.TemporaryDirectory() as workdir,
            SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api,
        ):
            workflow = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(configfiles=[REPO / config], config=overrides),
                snakefile=REPO / "Snakefile",
                workdir=Path(workdir),
            )._workflow
            for rule in workflow.rules:
                if callable(rule.conda_env):
                    raise AssertionError(f"rule {rule.name}: a conda env chosen by a function")
                rules[rule.name] = RuleInfo(
                    name=rule.name,
                    # relative to the rule's file, as Snakemake resolves it
                    env=(Path(rule.snakefile).parent / str(rule.conda_env)).resolve()
                    if rule.conda_env
                    else None,
                    script=(Path(rule.snakefile).parent / rule.script).resolve()
                    if rule.script
                    else None,
                    runs_something=not rule.norun,
                )
    return rules
