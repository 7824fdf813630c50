"""Build a Snakemake plan through its Python API (dry run) and count the jobs per rule.

The API is documented as internal to Snakemake, so every use of it is kept in this one helper.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def plan(configfiles, workdir, targets=("all",), config=None) -> Counter:
    """Jobs per rule of the plan."""
    return _planned(configfiles, workdir, targets, config, _count_rules)


def rule_inputs(configfiles, workdir, rule, targets=("all",), config=None) -> list[list[str]]:
    """The input files of each planned job of ``rule``."""

    def inputs(jobs):
        return [[str(path) for path in job.input] for job in jobs if job.rule.name == rule]

    return _planned(configfiles, workdir, targets, config, inputs)


def _count_rules(jobs) -> Counter:
    return Counter(job.rule.name for job in jobs)


def _planned(configfiles, workdir, targets, config, summarize):
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, dryrun=True)) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=64),
            config_settings=ConfigSettings(
                configfiles=[Path(f).resolve() for f in configfiles], config=config or {}
            ),
            snakefile=REPO / "Snakefile",
            workdir=Path(workdir),
        )
        dag = workflow.dag(DAGSettings(targets=set(targets)))
        dag.execute_workflow(executor="dryrun")
        return summarize(dag.workflow_api._workflow.dag.jobs)
