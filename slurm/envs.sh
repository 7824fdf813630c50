#!/usr/bin/env bash
# Builds every rule's conda env where the internet is: the login node or a data-transfer node,
# with the repository and its Python environment (docs/cluster.md, Envs). Compute nodes often
# reach no package index; the jobs find the envs built here (.snakemake/conda, or the profile's
# conda-prefix) on the shared file system. Run it once before the first run, and again after an
# envs/*.yaml changed:
#
#     bash slurm/envs.sh                          # the paper study's envs
#     bash slurm/envs.sh --configfile my.yaml     # another study's
#
# pip compiles eflomal (Wu 5.1.2's word aligner, envs/text.yaml) from its source with its own
# Makefile's flags, among them -march=native: for the CPU of the machine that builds the env, on
# which a compute node with an older CPU dies of an illegal instruction. Its flags are given here
# without -march (the compiler's default target, which every node of the architecture runs):
# MAKEFLAGS' variables override a Makefile's own, and pip's build inherits them. An env built
# before with -march=native stays as it is: delete it (its folder under .snakemake/conda) first.
set -euo pipefail
cd "$(dirname "$0")/.."
export MAKEFLAGS='-- CFLAGS=-Ofast\ -Wall\ --std=gnu99\ -Wno-unused-function\ -g\ -fopenmp'
exec "${SNAKEMAKE:-snakemake}" --profile slurm --conda-create-envs-only all "$@"
