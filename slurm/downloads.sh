#!/usr/bin/env bash
# Every download of a study and nothing else, on the machine this runs on: a data-transfer node,
# or the login node, with the repository and its Python environment (docs/cluster.md, Data).
# The downloads are the workflow's local rules: they resume where a transfer stopped and check
# each file against its pinned sha256; run it again until it has nothing left to do.
#
#     bash slurm/downloads.sh                          # the paper study
#     bash slurm/downloads.sh -n                       # what it would fetch
#     bash slurm/downloads.sh --configfile my.yaml     # another study
set -euo pipefail
cd "$(dirname "$0")/.."
# The rules that fetch files: tests/test_cluster_scripts.py checks this list against the workflow.
RULES=(download download_wikipedia download_commoncrawl download_muse download_tatoeba
    download_fasttext download_transformers_file)
exec "${SNAKEMAKE:-snakemake}" all --cores "${CORES:-4}" --until "${RULES[@]}" "$@"
