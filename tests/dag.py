"""Build a Snakemake plan through its Python API (the DAG a dry run plans) and read its jobs.

The API is documented as internal to Snakemake, so every use of it is kept in this one helper.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def plan(configfiles, workdir, targets=("all",), config=None) -> Counter:
    """Jobs per rule of the plan for ``targets``."""
    return Counter(job.rule.name for job in _jobs(configfiles, workdir, targets, config))


def rule_inputs(configfiles, workdir, rule, targets=("all",), config=None) -> list[list[str]]:
    """The input files of each planned job of ``rule``."""
    jobs = _jobs(configfiles, workdir, targets, config)
    return [[str(path) for path in job.input] for job in jobs if job.rule.name == rule]


def rule_settings(configfiles, workdir, rule, targets=("all",), config=None) -> list[tuple]:
    """(params, retries) of each planned job of ``rule``: what reruns it, and how often it may
    be resubmitted."""
    return rules_settings(configfiles, workdir, [rule], targets, config)[rule]


def rules_settings(configfiles, workdir, rules, targets=("all",), config=None) -> dict:
    """:func:`rule_settings` of several rules from one plan: {rule: [(params, retries), ...]}."""
    settings = {rule: [] for rule in rules}
    for job in _jobs(configfiles, workdir, targets, config):
        if job.rule.name in settings:
            settings[job.rule.name].append((dict(job.params.items()), job.restart_times))
    return settings


def rule_threads(configfiles, workdir, rule, targets=("all",), config=None) -> list[int]:
    """The threads each planned job of ``rule`` asks for."""
    jobs = _jobs(configfiles, workdir, targets, config)
    return [job.threads for job in jobs if job.rule.name == rule]


@dataclass(frozen=True)
class Output:
    """One output file of a planned job."""

    path: str  # relative to the working directory
    rule: str
    directory: bool  # declared with directory()
    report: bool  # marked for the HTML report with report()


def outputs(configfiles, workdir, targets=("all",), config=None) -> list[Output]:
    """Every output of every job of the plan for ``targets``."""
    from snakemake.io import is_flagged

    return [
        Output(str(f), job.rule.name, bool(f.is_directory), bool(is_flagged(f, "report")))
        for job in _jobs(configfiles, workdir, targets, config)
        for f in job.output
    ]


# Plans of an empty working directory, by (config files, targets, config): one depends on nothing
# else, and the paper study's (about 5,000 jobs) takes 10-20 s to build, which a dozen tests read.
_PLANS: dict[tuple, list] = {}


def _jobs(configfiles, workdir, targets, config):
    """Every job of the plan; built once per test session where ``workdir`` is empty."""
    workdir = Path(workdir)
    key = (
        tuple(str(Path(f).resolve()) for f in configfiles),
        tuple(sorted(targets)),
        json.dumps(config or {}, sort_keys=True),
    )
    empty = not workdir.exists() or not any(workdir.iterdir())
    if empty and key in _PLANS:
        return _PLANS[key]
    jobs = _build(configfiles, workdir, targets, config)
    if empty:
        _PLANS[key] = jobs
    return jobs


def _build(configfiles, workdir, targets, config):
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        ExecutionSettings,
        OutputSettings,
        RemoteExecutionSettings,
        ResourceSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, dryrun=True)) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=64),
            config_settings=ConfigSettings(
                configfiles=[Path(f).resolve() for f in configfiles], config=config or {}
            ),
            snakefile=REPO / "Snakefile",
            workdir=workdir,
        )
        # The DAG alone, as `snakemake --dag` builds it: scheduling a dry run would take as long
        # again. The settings a dry run would set are what a job's retries read.
        workflow_api.dag(DAGSettings(targets=set(targets)))
        workflow = workflow_api._workflow
        workflow.execution_settings = ExecutionSettings()
        workflow.remote_execution_settings = RemoteExecutionSettings()
        workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        return list(workflow.dag.jobs)
