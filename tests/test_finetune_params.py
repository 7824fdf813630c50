"""A new grid point, or another best_k, leaves the finished fine-tuning runs alone: neither their
params (Snakemake's rerun trigger) nor their settings (the run's own fingerprint) change."""

from tests.dag import rules_settings

RULES = ["finetune_model", "muller_finetune"]


def _runs(repo, tmp_path, config=None):
    planned = rules_settings([repo / "config/demo.yaml"], tmp_path, RULES, config=config or {})
    table1 = {
        (run["pair"], run["variant"], run["task"], str(run["hp"])): run["settings"]
        for params, _ in planned["finetune_model"]
        for run in params["runs"]
    }
    muller = [params["settings"] for params, _ in planned["muller_finetune"]]
    return table1, muller


def test_a_new_grid_point_or_best_k_keeps_every_finished_runs_settings(repo, tmp_path):
    table1, muller = _runs(repo, tmp_path)
    grown = {
        "tasks": {"ner": {"grid": {"batch_size": [16], "lr": [0.002, 0.003]}, "best_k": 2}},
        "muller": {"tasks": {"pos": {"grid": {"batch_size": [16], "lr": [0.001, 0.002]}}}},
    }
    table1_grown, muller_grown = _runs(repo, tmp_path, grown)
    assert len(table1_grown) > len(table1)
    assert {key: table1_grown[key] for key in table1} == table1
    assert sorted(map(str, muller_grown)) == sorted(map(str, muller))
    assert all("grid" not in settings for settings in [*table1.values(), *muller])
