"""The license and the citation file say what pyproject.toml says, and cite both studies."""

import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def test_the_license_file_is_the_license_the_package_declares():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"]["text"]
    assert declared == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")


def test_the_citation_file_cites_the_workflow_and_both_papers():
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert citation["license"] == "MIT" and citation["version"] == project["version"]
    papers = {ref["title"]: ref for ref in citation["references"]}
    wu = papers["Emerging Cross-lingual Structure in Pretrained Language Models"]
    muller = papers[
        "First Align, then Predict: Understanding the Cross-Lingual Ability of Multilingual BERT"
    ]
    assert [a["family-names"] for a in wu["authors"]][:2] == ["Wu", "Conneau"]
    assert wu["year"] == 2020 and muller["year"] == 2021
    assert muller["authors"][0]["family-names"] == "Muller"
