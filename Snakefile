"""Reproduction of Wu, Conneau et al. (2020) and Muller et al. (2021), end to end.

    snakemake --cores 2 --configfile config/demo.yaml all     # the demo study (toy world, CPU)
    snakemake --profile slurm all                             # the paper study on a SLURM cluster

Every output lands under results/<study>/ (config key `study`). Keep this file's top level cheap:
every cluster job parses it again.
"""

import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.14.1")

# The workflow's logic lives in src/xling; make it importable without an install.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from xling import config as xconfig  # noqa: E402

# The paper study is the default; a --configfile replaces it instead of being merged into it.
if not workflow.overwrite_configfiles:

    configfile: f"{workflow.basedir}/config/config.yaml"


# `snakemake --configfile config/demo.yaml data` passes the target `data` as a config file (the
# option takes every following word); the files ./all, ./data, ... name the stage they stand for.
CLI_TARGETS = sorted(config.pop("_cli_targets", {}))

config.update(xconfig.validate(config, Path(workflow.basedir) / "config" / "schema.yaml"))


include: "workflow/rules/common.smk"
include: "workflow/rules/acquire.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/vocab.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"


# Targets: `all` (the default) and one per stage, so that a user can run a single stage. They live
# here because Snakemake ignores a default target set inside an included file.
rule all:
    default_target: True
    input:
        requested_targets(CLI_TARGETS),


rule data:
    input:
        STAGE_TARGETS["data"](),


rule preprocess:
    input:
        STAGE_TARGETS["preprocess"](),


rule vocab:
    input:
        STAGE_TARGETS["vocab"](),


rule pretrain:
    input:
        STAGE_TARGETS["pretrain"](),


rule finetune:
    input:
        STAGE_TARGETS["finetune"](),


rule analysis:
    input:
        STAGE_TARGETS["analysis"](),


rule report:
    input:
        STAGE_TARGETS["report"](),
