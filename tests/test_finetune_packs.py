"""Table 1's fine-tuning runs packed N to a job (finetune.runs_per_job: N): the plan's packs, the
jobs Snakemake plans for them, and what select_finetune reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dag import plan, rule_inputs, rules_settings
from xling import study
from xling.study.keys import ConfigError
from xling.study.schema import load_yaml

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "config/config.yaml"


def table1_with(runs_per_job):
    config = load_yaml(PAPER)
    config["finetune"] = {"runs_per_job": runs_per_job}
    return study.plan(study.validate(config, study.DEFAULT_SCHEMA)).table1


def test_packs_take_a_tasks_grid_points_n_at_a_time_in_grid_order():
    table1 = table1_with(4)
    assert table1.packs_runs
    xnli = table1.packs("xnli")
    assert [len(pack) for pack in xnli] == [4, 4, 4, 4, 2]
    assert [point for pack in xnli for point in pack] == list(table1.grids["xnli"])
    assert [len(pack) for pack in table1.packs("ner")] == [4, 2]
    # one a job, and a pack larger than the grid: the whole grid in one job
    assert [len(pack) for pack in table1_with(1).packs("ner")] == [1] * 6
    assert [len(pack) for pack in table1_with(50).packs("xnli")] == [18]
    with pytest.raises(ValueError, match="every task in one job"):
        table1_with("model").packs("ner")


@pytest.mark.parametrize("value", [0, -2, "all", 2.5])
def test_runs_per_job_is_model_or_a_positive_count(value):
    config = load_yaml(PAPER)
    config["finetune"] = {"runs_per_job": value}
    with pytest.raises(ConfigError, match="runs_per_job"):
        study.validate(config, study.DEFAULT_SCHEMA)


def test_a_packed_study_plans_one_job_per_pack_and_selects_from_them(tmp_path):
    """The paper study at N = 4: 30 models x (5 XNLI + 2 NER + 2 parsing) packs instead of 900
    jobs, each running its grid points through xling.finetune.bundle."""
    packed = {"finetune": {"runs_per_job": 4}}
    counts = plan([PAPER], tmp_path, config=packed)
    assert counts["finetune_pack"] == 30 * 9 and counts["select_finetune"] == 90
    assert "finetune_run" not in counts and "finetune_model" not in counts
    jobs = rules_settings([PAPER], tmp_path, ["finetune_pack"], config=packed)["finetune_pack"]
    runs = [run for params, _ in jobs for run in params["runs"]]
    assert len(runs) == 900
    assert len({run["out_dir"] for run in runs}) == 900
    sizes = sorted(len(params["runs"]) for params, _ in jobs)
    assert sizes.count(4) == 30 * (4 + 1 + 1) and sizes.count(2) == 30 * 3
    selections = rule_inputs([PAPER], tmp_path, "select_finetune", config=packed)
    xnli = next(inputs for inputs in selections if "/en-fr/default/xnli/" in inputs[0])
    assert [Path(path).name for path in xnli] == [
        "pack1_4runs.json", "pack2_4runs.json", "pack3_4runs.json", "pack4_4runs.json",
        "pack5_2runs.json",
    ]  # fmt: skip
