"""What a validated study config builds, in one planning style: one torch-free plan object per
part of the study, each made by its module's ``plan(config)``: Table 1 (:mod:`.table1`), Wu
section 5 (:mod:`.section5`) and Muller et al. (:mod:`.muller`); and what the parts share, the
bilingual models and the corpora they train on. The Snakefile reads paths and jobs from these at
parse time, so they stay cheap (every cluster job parses it again)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xling.study.keys import pair_languages
from xling.study.plan import muller, section5, table1


@dataclass(frozen=True)
class StudyPlan:
    table1: table1.Table1Plan
    section5: section5.Section5 | None  # None without a `monolingual` section
    muller: muller.MullerPlan | None  # None without a `muller` section
    # (pair, variant) of every bilingual model: Table 1's and those section 5 compares with
    bilingual_models: tuple[tuple[str, str], ...]
    # (domain, language of the text) of every corpus a Table 1 or section 5 model trains on
    corpora: tuple[tuple[str, str], ...]


def variant_corpora(config: Mapping[str, Any], pair: str, variant: str) -> list[tuple[str, str]]:
    """(domain, lang) of each side of a pair's model, e.g. wiki-cc -> (wiki, en), (cc, fr)."""
    source_domain, target_domain = config["variants"][variant]["domains"].split("-")
    source, target = pair_languages(pair)
    return [(source_domain, source), (target_domain, target)]


def plan(config: Mapping[str, Any]) -> StudyPlan:
    """The plan of a validated config (:func:`xling.study.validate`)."""
    wu_table1, wu_section5 = table1.plan(config), section5.plan(config)
    bilingual = set(wu_table1.models)
    corpora = set()
    if wu_section5:
        bilingual |= set(wu_section5.bilingual.items())
        corpora |= {("wiki", model.lang) for model in wu_section5.models.values()}
    for pair, variant in bilingual:
        for domain, lang in variant_corpora(config, pair, variant):
            text = wu_section5.corpus_language(lang) if wu_section5 else lang  # en' reads English
            corpora.add((domain, text))
    return StudyPlan(
        table1=wu_table1,
        section5=wu_section5,
        muller=muller.plan(config),
        bilingual_models=tuple(sorted(bilingual)),
        corpora=tuple(sorted(corpora)),
    )
