# What the whole workflow shares: the study's plan (xling.study), the results folder, the wildcard
# constraints and the one helper that marks a captioned output for the HTML report. Each stage's
# paths and input functions are in common/<stage>.smk beside it, one file per rules file.
# Only functions and constants here: Snakemake's linter wants rules and functions apart. Functions
# that rules call with the job's wildcards are named get_<what they return>; a function that
# names an output path takes the wildcards as arguments, and the rule that writes the file calls it
# without them (its defaults are the wildcard patterns), so every path is written once.

import os

from xling import study
from xling.cluster.torch_builds import torch_env_file
from xling.study.keys import pair_languages

R = f"results/{config['study']}"
# The conda env of the rules that run torch, relative to the rules' files: the CUDA build of torch
# that `cluster.torch_build` picks (xling.cluster.torch_builds; docs/cluster.md).
TORCH_ENV = f"../../{torch_env_file(config)}"
PLAN = study.plan(config)
T1 = PLAN.table1
PAIRS = list(T1.pairs)  # Table 1's pairs
VARIANTS = list(T1.variants)
TASKS = list(T1.tasks)
LANGUAGES = sorted(config["languages"])
# Wu section 5 (None when the config has no `monolingual` section): its monolingual models, and
# the bilingual models it compares them with besides Table 1's.
S5 = PLAN.section5
# Muller et al. (None when the config has no `muller` section): its setups, runs and jobs.
MULLER = PLAN.muller
BILINGUAL_MODELS = list(PLAN.bilingual_models)  # Table 1's and those section 5 compares with
MONOLINGUAL_MODELS = sorted(S5.models) if S5 else []
PAIR_LANGUAGES = sorted({lang for pair, _ in BILINGUAL_MODELS for lang in pair_languages(pair)})


def _alternatives(values):
    # A regex that matches nothing when nothing is configured, so that no rule matches by accident.
    return "|".join(sorted(values)) if values else "(?!x)x"


wildcard_constraints:
    lang=_alternatives(LANGUAGES),
    src=_alternatives(LANGUAGES),
    tgt=_alternatives(LANGUAGES),
    pair=_alternatives({pair for pair, _ in BILINGUAL_MODELS}),
    mono=_alternatives(MONOLINGUAL_MODELS),
    kind="mono|bilingual",
    layer=r"\d+",
    domain="wiki|cc",
    domains="(wiki|cc)-(wiki|cc)",
    scheme=_alternatives(config["vocab"]["schemes"]),
    variant=_alternatives({variant for _, variant in BILINGUAL_MODELS}),
    task=_alternatives(
        set(TASKS) | set(config["analysis"]["contextual_transfer"]["tasks"] if S5 else [])
    ),
    split="train|valid|test",
    hp="[A-Za-z0-9_.+-]+",
    shard=r"\d+",


def get_pair_languages(wildcards):
    return list(pair_languages(wildcards.pair))


def get_output_dir(wildcards, output):
    """The directory that holds every output of a job. Derived from the outputs rather than
    written as a second path: a param that repeats an output path goes stale when one changes
    (Snakemake's linter flags that too)."""
    return os.path.commonpath([str(path) for path in output])


# The HTML report's landing page; it and every caption read their numbers from the config (Jinja).
report: "../../report/workflow.rst"


# Categories of Snakemake's HTML report: one per paper, and the claims check of both.
WU_REPORT = "Wu et al. 2020"
MULLER_REPORT = "Muller et al. 2021"
CLAIMS_REPORT = "Claims checked against this run"
TABLE_FORMATS = ("csv", "md", "tex")  # every table of the report comes in all three
FORMAT_LABELS = {
    "csv": "csv",
    "md": "markdown",
    "tex": "LaTeX",
    "png": "png",
    "pdf": "pdf",
    "json": "json",
}


def captioned(path, caption, category, artefact=None, subcategory=None, labels=None):
    """``path`` marked for the HTML report, captioned by workflow/report/<caption>.rst: labelled
    with the artefact it shows and its format (from its extension), or with ``labels``."""
    if labels is None:
        labels = {"artefact": artefact, "format": FORMAT_LABELS[path.rsplit(".", 1)[-1]]}
    return report(
        path,
        caption=f"{workflow.basedir}/workflow/report/{caption}.rst",
        category=category,
        subcategory=subcategory,
        labels=labels,
    )
