"""The HTML report's landing page and captions read their numbers from the config.

Snakemake renders each caption (workflow/report/*.rst) with Jinja2, `snakemake.config` being the
study's validated config, and then as reStructuredText. Here every caption is rendered the same way
against the demo's and the paper's config (and against variants of them), without a run: each must
render, parse as reStructuredText without a warning, carry the config's values, and state none of
those numbers in its own text, where a changed config would leave it stale.
"""

import copy
import re
from dataclasses import dataclass
from math import prod
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
from docutils.core import publish_parts

from xling.base import yamlfile
from xling.report.claims.core import RESAMPLE_SUPPORT
from xling.study.validate import validate

REPO = Path(__file__).resolve().parents[1]
CAPTIONS = REPO / "workflow/report"
CONFIGS = {
    "demo": ["config/demo.yaml"],
    "paper": ["config/config.yaml"],
    "pilot": ["config/config.yaml", "config/pilot.yaml"],
}
WU_FIGURES = ("4", "6", "7")  # the wildcard values of wu_figure.rst
WU_TASKS = ("xnli", "ner", "parsing")
CATEGORIES = ("Wu et al. 2020", "Muller et al. 2021", "Claims checked against this run", "Pilot")


@dataclass(frozen=True)
class Category:
    """What Snakemake's report passes as a category: hashable, with a name."""

    name: str


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def config(request) -> dict:
    return validate(yamlfile.load_merged(REPO / path for path in CONFIGS[request.param]))


def render(caption: str, config: dict, figure: str = "", categories=CATEGORIES) -> str:
    """The caption as Snakemake renders it (its Jinja environment's options, its template
    variables), strict about undefined names so that a key the config lacks fails here."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    snakemake = SimpleNamespace(
        config=config, wildcards=SimpleNamespace(figure=figure), params=SimpleNamespace()
    )
    cats = {Category(name): {} for name in categories}
    text = (CAPTIONS / f"{caption}.rst").read_text(encoding="utf-8")
    return env.from_string(text).render(snakemake=snakemake, categories=cats, files=[])


def flat(text: str) -> str:
    return " ".join(text.split())


def renderings(caption: str) -> list[str]:
    """The wildcard values a caption is rendered with: Figures 4, 6 and 7 share one."""
    return list(WU_FIGURES) if caption == "wu_figure" else [""]


def caption_names() -> list[str]:
    return sorted(path.stem for path in CAPTIONS.glob("*.rst"))


def rst_links(categories) -> str:
    """The link targets Snakemake appends to every caption before it parses it."""
    names = ["Workflow", "Statistics", *categories]
    return "\n\n" + "".join(f".. _{name}: javascript:void(0)\n" for name in names)


def parse(text: str) -> None:
    """Parse as Snakemake does; halt_level 2: a warning (a short title underline, a list without a
    blank line before it, a link to a missing target) raises."""
    publish_parts(text, writer="html", settings_overrides={"halt_level": 2})


def test_the_landing_page_is_the_reports_global_description():
    declared = re.findall(r'^report:\s*"([^"]+)"', _rules_text(), re.M)
    assert declared == ["../../report/workflow.rst"]  # relative to workflow/rules/common/
    assert (CAPTIONS / "workflow.rst").is_file()


def _rules_text() -> str:
    files = [REPO / "Snakefile", *sorted((REPO / "workflow/rules").rglob("*.smk"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


@pytest.mark.parametrize("caption", caption_names())
def test_every_caption_renders_and_parses_without_a_warning(caption, config):
    for figure in renderings(caption):
        text = render(caption, config, figure) + rst_links(CATEGORIES)
        parse(text)


def _best_sets(settings: dict) -> str:
    points = prod(len(values) for values in settings["grid"].values())
    if settings["best_k"] == 1:
        return "the best hyperparameter set"
    return f"the mean of the best {settings['best_k']} of {points} hyperparameter sets"


def test_table1_caption_reads_best_k_and_the_grid(config):
    text = flat(render("table1", config))
    assert f"({config['study']} study;" in text
    for task in WU_TASKS:
        assert _best_sets(config["tasks"][task]) in text, (task, text)


def test_table1_caption_of_the_demo_and_of_the_paper():
    demo = flat(render("table1", validate(yamlfile.load(REPO / "config/demo.yaml"))))
    paper = flat(render("table1", validate(yamlfile.load(REPO / "config/config.yaml"))))
    assert "XNLI: the score of the best hyperparameter set" in demo
    assert "best 2" not in demo and "best two" not in demo
    assert "XNLI: the mean of the best 2 of 18 hyperparameter sets" in paper


def test_table1_caption_follows_a_changed_config(config):
    changed = copy.deepcopy(config)
    changed["tasks"]["ner"]["best_k"] = 3
    changed["tasks"]["ner"]["grid"] = {"batch_size": [16, 32], "lr": [1e-5, 2e-5, 3e-5, 5e-5]}
    changed["tasks"]["xnli"]["best_k"] = 1
    text = flat(render("table1", changed))
    assert "NER: the mean of the best 3 of 8 hyperparameter sets" in text
    assert "XNLI: the score of the best hyperparameter set" in text


def _count(n: int, noun: str) -> str:
    return f"one {noun}" if n == 1 else f"{n} {noun}s"


# caption, its figure wildcard, and what its rendering must say, from the config
EXPECTED = [
    ("claims", "", lambda c: f"{c['report']['resamples']} bootstrap resamples"),
    ("cka_layers", "", lambda c: f"up to {c['analysis']['cka']['sentences']} parallel sentences"),
    ("cka_layers", "", lambda c: f"({', '.join(c['analysis']['cka']['variants'])};"),
    ("wu_figure", "4", lambda c: f"K = {c['analysis']['word_alignment']['csls_k']};"),
    ("wu_figure", "4", lambda c: f"first {c['analysis']['word_alignment']['vocabulary']} words"),
    ("wu_figure", "6", lambda c: f"on {c['analysis']['parallel_sentences']} parallel sentences"),
    ("wu_figure", "7", lambda c: f"up to {c['analysis']['cka']['sentences']} parallel sentences"),
    ("wu_figure5", "", lambda c: f"({c['analysis']['contextual_transfer']['task_layers']} fresh"),
    ("wu_figure8", "", lambda c: f"({c['analysis']['contextual_transfer']['task_layers']} fresh"),
    ("wu_cka_retrieval", "", lambda c: ", ".join(c["monolingual"]["pairs"])),
    ("muller_table1", "", lambda c: ", ".join(c["muller"]["groups"]["table1"])),
    ("muller_table2", "", lambda c: ", ".join(c["muller"]["groups"]["table2"])),
    ("muller_table5", "", lambda c: ", ".join(c["muller"]["groups"]["table5"])),
    ("muller_table5", "", lambda c: f"source {c['muller']['table5_source']}"),
    *(
        (f"muller_table{n}", "", lambda c: ", ".join(c["muller"]["groups"]["table1"]))
        for n in (6, 7, 8)
    ),
    *(
        (f"muller_table{n}", "", lambda c: _count(len(c["muller"]["seeds"]), "fine-tuning seed"))
        for n in (1, 2, 5, 6, 7, 8)
    ),
    ("muller_figure1", "", lambda c: f"{c['muller']['similarity']['sentences']} parallel"),
    ("muller_figure2", "", lambda c: f"layers {c['muller']['similarity']['random_init_group']}"),
    ("muller_figure6", "", lambda c: f"layers {c['muller']['similarity']['random_init_group']}"),
    ("workflow", "", lambda c: f"**{c['study']}** study"),
    ("workflow", "", lambda c: f"pairs {', '.join(c['pairs'])} (config"),
    ("workflow", "", lambda c: f"{c['report']['resamples']} bootstrap resamples"),
    ("workflow", "", lambda c: _count(len(c["muller"]["seeds"]), "fine-tuning seed")),
]


@pytest.mark.parametrize(("caption", "figure", "expected"), EXPECTED)
def test_captions_carry_the_configs_values(caption, figure, expected, config):
    assert flat(expected(config)) in flat(render(caption, config, figure))


# Numbers a config key holds, in the words a caption would state them (the config's keys in the
# comments): none may stand in a caption's own text, outside its Jinja expressions.
STATED = {
    r"\bbest (one|two|three|four|five|\d+)\b": "tasks.<task>.best_k",
    r"\bK = \d": "analysis.word_alignment.csls_k",
    r"\b\d[\d,]* (bootstrap )?resamples\b": "report.resamples",
    r"\b\d[\d,]* (parallel )?sentences\b": "analysis.cka.sentences, muller.similarity.sentences",
    r"\b\d[\d,]* words\b": "analysis.word_alignment.vocabulary",
    r"\b(\d+|one|two|three|four|five) (fine-tuning )?seeds?\b": "muller.seeds",
    r"\b(\d+|four) (fresh )?Transformer layers\b": "analysis.contextual_transfer.task_layers",
    r"\b1-2 \.\. 11-12\b": "muller.groups.table1, table2",
    r"\b\d+ hyperparameter sets?\b": "tasks.<task>.grid",
}


def static_text(caption: str) -> str:
    """A caption's own words: its Jinja expressions, statements and comments taken out."""
    text = (CAPTIONS / f"{caption}.rst").read_text(encoding="utf-8")
    return flat(re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", text, flags=re.S))


@pytest.mark.parametrize("caption", caption_names())
def test_no_caption_states_a_number_that_a_config_key_holds(caption):
    text = static_text(caption)
    for pattern, key in STATED.items():
        match = re.search(pattern, text)
        assert not match, f"{caption}.rst states {match.group(0)!r}: read config {key} instead"


def test_the_resample_threshold_quoted_is_the_claims_checks():
    # 84 % is no config key but the claims check's constant: quoted, it must be that constant
    for caption in ("claims", "workflow"):
        quoted = re.findall(r"(\d+) %", static_text(caption))
        assert quoted == [f"{RESAMPLE_SUPPORT * 100:.0f}"], caption


def test_captions_follow_the_resample_count():
    config = validate(yamlfile.load(REPO / "config/demo.yaml"))
    config["report"]["resamples"] = 0
    for caption in ("claims", "workflow"):
        text = flat(render(caption, config))
        assert "no bootstrap resamples" in text and "84 %" not in text, caption


def test_the_landing_page_names_what_the_study_computes_and_links_its_categories(config):
    text = flat(render("workflow", config))
    for name in CATEGORIES:
        # the pilot's category is on the pilot's landing page only
        assert (f"`{name}`_" in text) == (name != "Pilot" or "pilot" in config)
    for artefact in ("Table 1", "Figure 3", "Figure 4", "Figures 5 and 8", "Figure 7", "Table 4"):
        assert artefact in text
    # a category the report lacks (an unfinished run) is named, not linked to a missing target
    text = render("workflow", config, categories=["Wu et al. 2020"])
    assert "**Claims checked against this run**" in text
    parse(text + rst_links(["Wu et al. 2020"]))


def test_the_landing_page_leaves_out_what_the_config_does_not_compute():
    config = validate(yamlfile.load(REPO / "config/demo.yaml"))
    for section in ("muller", "monolingual"):
        config.pop(section)
    text = flat(render("workflow", config))
    assert "Muller et al. 2021" not in text
    assert "Section 5" not in text
    assert "Table 1" in text
