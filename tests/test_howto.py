"""docs/howto.md and config/README.md work as written.

Every ```bash block of both runs with `bash -e`, in doc order, at the root of a scratch copy of the
repository made of links (its `config/` a real folder of links, so that the override files the
blocks write land in the scratch copy, not in the repository). A Snakemake line that would run jobs
runs as a dry run instead; each block must exit 0 and plan the rules its recipe is about. The
comparison commands read stand-ins of the two runs' results. config/README.md's catalogue quotes
every top-level key of both configs and their values as the files hold them.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.docblocks import (
    DRY,
    REPO,
    VENV,
    bash_blocks,
    commands,
    dry,
    is_snakemake,
    scratch_repository,
)
from xling.base import yamlfile

HOWTO = REPO / "docs/howto.md"
CONFIG_README = REPO / "config/README.md"
CONFIGS = {"paper": REPO / "config/config.yaml", "demo": REPO / "config/demo.yaml"}

# What each block must plan, in doc order per heading: (rule, text its jobs must show), the text
# a wildcard or path that shows the recipe's change reached the plan.
PLANS: dict[str, list[list[tuple[str, str]]]] = {
    "config/README.md: Configuration": [[]],
    "Rerun one table / On a laptop (the demo)": [[("table1", "results/demo/tables/table1.md")]],
    "Rerun one table / On the cluster (the paper study)": [
        [("table1", "results/paper/tables/table1.md"), ("finetune_run", "pair=en-zh")]
    ],
    "Change one setting and compare two runs": [
        [("table1", "results/demo_lr/tables/table1.md"), ("pretrain_model", "results/demo_lr/")],
        [("claims", "results/demo_lr/report/claims.md")],
    ],
    "Add a language pair (English-Spanish) / In the paper study": [
        [("pretrain_model", "pair=en-es"), ("import_ud", "lang=es"), ("table1", "")]
    ],
    "Add a language pair (English-Spanish) / In the demo": [
        [("toyworld", "results/demo/data/corpus/wiki/es.txt"), ("pretrain_model", "pair=en-es")]
    ],
    "Add a Table 1 variant": [
        [
            ("pretrain_model", "variant=sep_l1_2"),
            ("table1", "results/demo/tables/table1.md"),
            ("table1", "results/paper/tables/table1.md"),
        ]
    ],
    "Add a language to section 5 / In the paper study": [
        [("pretrain_monolingual", "mono=es"), ("download_tatoeba", "tgt=es"), ("wu_figure", "")]
    ],
    "Add a language to section 5 / In the demo": [
        [("pretrain_monolingual", "mono=es"), ("sentence_retrieval", "tgt=es"), ("wu_figure", "")]
    ],
}


def config_readme_heading(headings: dict[int, str]) -> str:
    """config/README.md's blocks by its page: "<doc>: Section" (its title where no section)."""
    return f"{CONFIG_README.relative_to(REPO)}: {headings.get(2) or headings.get(1, '')}"


BLOCKS = [*bash_blocks(CONFIG_README, config_readme_heading), *bash_blocks(HOWTO)]


def configfiles(line: str) -> list[str]:
    """The config files a validation or Snakemake line reads (Snakemake's default without any)."""
    words = shlex.split(line)
    if "xling.study" in words:
        return words[words.index("xling.study") + 1 :]
    if "--configfile" not in words:
        return ["config/config.yaml"]
    files = []
    for word in words[words.index("--configfile") + 1 :]:
        if word.startswith("-"):
            break
        files.append(word)
    return files


def stand_in_runs(root: Path, text: str) -> None:
    """A claims.json for each results folder the block's comparison commands read, unless there."""
    for line in commands(text):
        if is_snakemake(line):
            continue
        for folder in set(re.findall(r"\bresults/[\w-]+", line)):
            claims = root / folder / "report/claims.json"
            if not claims.exists():
                claims.parent.mkdir(parents=True, exist_ok=True)
                verdicts = [{"id": "wu.4", "verdict": "supported"}]
                claims.write_text(json.dumps({"claims": verdicts}), encoding="utf-8")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every block, run in doc order in one scratch repository (later recipes reuse files that
    earlier ones wrote, as a reader following the page would)."""
    root = scratch_repository(tmp_path_factory.mktemp("howto"))
    env = {**os.environ, "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    results = {}
    for block in BLOCKS:
        stand_in_runs(root, block.text)
        results[block.id] = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", dry(block.text)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    return results


def test_every_block_has_its_expected_plan():
    headings = {block.heading for block in BLOCKS}
    assert headings == set(PLANS), "a block without expectations here, or one that went"
    for block in BLOCKS:
        assert block.index < len(PLANS[block.heading]), block.id


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.id)
def test_block_runs_as_written_and_plans_its_rules(block, outcomes):
    result = outcomes[block.id]
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    runs = [line for line in commands(block.text) if is_snakemake(line)]
    assert output.count("This was a dry-run") == len(runs), output[-4000:]
    for rule, text in PLANS[block.heading][block.index]:
        jobs = re.findall(rf"^rule {re.escape(rule)}:\n(.*?)(?=^\S|\Z)", output, re.M | re.S)
        assert jobs, f"no {rule} job planned:\n{output[-3000:]}"
        assert any(text in job for job in jobs), f"no {rule} job shows {text!r}"


@pytest.mark.parametrize(
    "section", sorted({b.heading.split(" / ")[0] for b in BLOCKS if b.doc == HOWTO})
)
def test_each_recipe_ends_in_validation_and_a_dry_run_of_the_same_config(section):
    blocks = [b for b in BLOCKS if b.doc == HOWTO and b.heading.split(" / ")[0] == section]
    endings = []
    for block in blocks:
        lines = commands(block.text)
        for before, line in itertools.pairwise(lines):
            if is_snakemake(line) and DRY & set(line.split()):
                assert "xling.study" in before, f"{block.id}: {line!r} comes without validation"
                assert configfiles(before) == configfiles(line), block.id
        endings.append(len(lines) >= 2 and "xling.study" in lines[-2] and is_snakemake(lines[-1]))
        if endings[-1]:
            assert DRY & set(lines[-1].split()), f"{block.id} ends in a real run"
    assert any(endings), f"{section}: no block ends in validation and a dry run"


# --- config/README.md's catalogue --------------------------------------------------------------

ROW = re.compile(r"^\| `([a-z_][a-z0-9_.]*)` \|(.*)\|\s*$", re.M)
ABSENT = "—"


def catalogue() -> dict[str, list[str]]:
    """Key path -> the cells of its row after the key (what, paper, demo, reruns)."""
    text = CONFIG_README.read_text(encoding="utf-8")
    rows = {}
    for key, cells in ROW.findall(text):
        assert key not in rows, f"config/README.md lists {key} twice"
        rows[key] = [cell.strip() for cell in cells.split("|")]
    return rows


def lookup(config: dict, key: str):
    value = config
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return ABSENT
        value = value[part]
    return value


def test_every_top_level_key_of_both_configs_is_catalogued():
    keys = {key.split(".")[0] for key in catalogue()}
    for name, path in CONFIGS.items():
        missing = set(yamlfile.load(path)) - keys
        assert not missing, f"config/README.md lacks {sorted(missing)} of the {name} config"


@pytest.mark.parametrize("column", [1, 2], ids=["paper", "demo"])
def test_quoted_values_are_the_configs(column):
    config = yamlfile.load(CONFIGS["paper" if column == 1 else "demo"])
    wrong = []
    for key, cells in catalogue().items():
        assert len(cells) == 4, f"{key}: a row has five cells (key, what, paper, demo, reruns)"
        cell, value = cells[column], lookup(config, key)
        if cell == ABSENT:
            if value is not ABSENT:
                wrong.append(f"{key}: quoted as absent, but the file has {value!r}")
        elif re.fullmatch(r"`[^`]+`", cell):
            if value is ABSENT or yaml.safe_load(cell[1:-1]) != value:
                wrong.append(f"{key}: quoted {cell}, the file has {value!r}")
        elif value is ABSENT:
            wrong.append(f"{key}: described as {cell!r}, but the file lacks it")
    assert not wrong, "config/README.md:\n" + "\n".join(wrong)
