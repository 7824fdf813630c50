"""Reproduction of Wu, Conneau et al. (2020) and Muller et al. (2021), end to end.

    snakemake --cores 2 --configfile config/demo.yaml          # the demo study (toy world, CPU)
    snakemake data --cores 2 --configfile config/demo.yaml     # one stage of it (targets below)
    snakemake --profile slurm all                              # the paper study on a SLURM cluster

Every output lands under results/<study>/ (config key `study`). Keep this file's top level cheap:
every cluster job parses it again.
"""

import sys
from pathlib import Path

from snakemake.utils import min_version

# 9.16.3 to 9.18 read a profile's plain runtime number as seconds (snakemake#4039)
min_version("9.19")

# The workflow's logic lives in src/xling; make it importable without an install.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from xling import study

# The paper study is the default; a --configfile replaces it instead of being merged into it.
if not workflow.overwrite_configfiles:
    study.check_files([f"{workflow.basedir}/config/config.yaml"])

    configfile: f"{workflow.basedir}/config/config.yaml"


# Snakemake's reader lets a repeated key silently win; ours names the file and line.
study.check_files(workflow.configfiles)
config.update(study.validate(config, Path(workflow.basedir) / "config" / "schema.yaml"))


include: "workflow/rules/common/study.smk"
include: "workflow/rules/common/acquire.smk"
include: "workflow/rules/common/preprocess.smk"
include: "workflow/rules/common/vocab.smk"
include: "workflow/rules/common/pretrain.smk"
include: "workflow/rules/common/finetune.smk"
include: "workflow/rules/common/analysis.smk"
include: "workflow/rules/common/report.smk"
include: "workflow/rules/common/muller.smk"
include: "workflow/rules/common/pilot.smk"
include: "workflow/rules/acquire.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/vocab.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/muller.smk"
include: "workflow/rules/pilot.smk"


# Targets: `all` (the default: every table and figure, and the scores of every configured task,
# also one no table shows yet, such as pos) and one per stage, so that a user can run a single
# stage by naming it. They live here because Snakemake ignores a default target set inside an
# included file.
rule all:
    default_target: True
    input:
        report_targets(),
        finetune_targets(),
        muller_targets(),


rule data:
    input:
        data_targets(),


rule preprocess:
    input:
        preprocess_targets(),


rule vocab:
    input:
        vocab_targets(),


rule pretrain:
    input:
        pretrain_targets(),


rule finetune:
    input:
        finetune_targets(),


rule analysis:
    input:
        cka_tables(),
        section5_targets(),


rule report:
    input:
        report_targets(),


rule muller:
    input:
        muller_targets(),


# The pilot: run with config/pilot.yaml over the study's config (docs/cluster.md, step 4).
rule pilot:
    input:
        get_pilot_targets,
