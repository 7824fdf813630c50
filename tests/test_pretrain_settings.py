"""Settings validation, the paper's step count, and XLM's inverse square root schedule."""

import json
from itertools import pairwise

import pytest
import torch

from xling.pretrain.optim import InverseSqrtWithWarmup, build_optimizer
from xling.pretrain.settings import PretrainSettings, paper_total_steps


def test_paper_schedule_is_200_epochs_of_200k_streams_at_96_per_step():
    assert paper_total_steps() == 200 * 2084
    settings = PretrainSettings()
    assert settings.total_steps == 416_800
    assert (settings.seq_len, settings.batch_size, settings.lr) == (256, 96, 1e-4)
    assert (settings.warmup_steps, settings.sampling_alpha, settings.mask_prob) == (
        30_000,
        0.7,
        0.15,
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"architecture": {"width": 64}}, "unknown architecture keys"),
        ({"batch_size": 0}, "batch_size must be >= 1"),
        ({"mask_token_rate": 0.8, "random_token_rate": 0.3}, "sum to at most 1"),
        ({"precision": "fp8"}, "precision must be one of"),
        ({"seq_len": 600}, "exceeds architecture.max_positions"),
        ({"mask_prob": 0.0}, r"mask_prob must be in \(0, 1\]"),
    ],
)
def test_bad_settings_name_the_setting(changes, message):
    with pytest.raises(ValueError, match=message):
        PretrainSettings(**changes)


def test_settings_round_trip_through_json_and_yaml(tmp_path):
    settings = PretrainSettings(architecture={"dim": 64, "sep_layers": 3}, lr=2e-3, seed=4)
    (tmp_path / "s.json").write_text(json.dumps(settings.to_dict()))
    assert PretrainSettings.load(tmp_path / "s.json") == settings
    (tmp_path / "s.yaml").write_text("lr: 0.002\narchitecture: {dim: 64, sep_layers: 3}\nseed: 4\n")
    assert PretrainSettings.load(tmp_path / "s.yaml") == settings
    (tmp_path / "bad.yaml").write_text("learning_rate: 0.1\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: pretraining settings: unknown keys"):
        PretrainSettings.load(tmp_path / "bad.yaml")


def test_resume_key_ignores_only_what_leaves_the_weights_alone():
    base = PretrainSettings()
    assert base.resume_key() == PretrainSettings(total_steps=5, checkpoint_steps=3).resume_key()
    assert base.resume_key() != PretrainSettings(lr=2e-4).resume_key()
    assert base.resume_key() != PretrainSettings(architecture={"sep_layers": 3}).resume_key()
    # how a job splits its blocks for memory, and when it stops, change no checkpoint's key
    assert base.resume_key() == PretrainSettings(micro_batch=48).resume_key()
    assert base.resume_key() == PretrainSettings(stop_margin_minutes=30).resume_key()


def test_micro_batch_and_stop_margin_are_job_keys_that_rerun_nothing():
    from xling.study.keys import PRETRAIN_JOB_KEYS

    assert {"micro_batch", "stop_margin_minutes"} <= set(PRETRAIN_JOB_KEYS)


@pytest.mark.parametrize("micro_batch", [0, 97])
def test_a_micro_batch_outside_one_to_batch_size_is_refused(micro_batch):
    with pytest.raises(ValueError, match=r"micro_batch must be between 1 and batch_size \(96\)"):
        PretrainSettings(micro_batch=micro_batch)
    assert PretrainSettings(micro_batch=96).micro_batch == 96


def test_the_default_stop_margin_outlasts_the_profiles_early_signal():
    """15 minutes, above SLURM's TERM at 600 s plus the 60 s it may come early."""
    assert PretrainSettings().stop_margin_minutes * 60 > 600 + 60


def test_inverse_square_root_schedule_after_linear_warmup():
    schedule = InverseSqrtWithWarmup(lr=1e-3, warmup=100, init_lr=1e-7)
    lrs = [1e-3 * schedule(step) for step in range(400)]
    assert lrs[0] == pytest.approx(1e-7)
    assert lrs[50] == pytest.approx(1e-7 + (1e-3 - 1e-7) / 2)
    assert lrs[100] == pytest.approx(1e-3)
    assert lrs[400 - 1] == pytest.approx(1e-3 * (100 / 399) ** 0.5)
    assert all(a < b for a, b in pairwise(lrs[:101]))
    assert all(a > b for a, b in pairwise(lrs[100:]))


def test_optimizer_follows_the_schedule_and_its_state_round_trips():
    model = torch.nn.Linear(4, 3)
    kwargs = dict(lr=1e-3, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.0, warmup_init_lr=0.0)
    optimizer, schedule = build_optimizer(model, warmup_steps=10, **kwargs)
    seen = []
    for _ in range(15):
        seen.append(optimizer.param_groups[0]["lr"])
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        schedule.step()
    assert seen[0] == 0.0 and seen[5] == pytest.approx(5e-4) and seen[10] == pytest.approx(1e-3)
    assert seen[14] == pytest.approx(1e-3 * (10 / 14) ** 0.5)
    copy, copy_schedule = build_optimizer(torch.nn.Linear(4, 3), warmup_steps=10, **kwargs)
    copy.load_state_dict(optimizer.state_dict())
    copy_schedule.load_state_dict(schedule.state_dict())
    assert copy.param_groups[0]["lr"] == optimizer.param_groups[0]["lr"]
    assert copy_schedule.last_epoch == 15


def test_the_paper_study_takes_xlm_recipe_adam_epsilon_and_weight_decay():
    from pathlib import Path

    from xling import study
    from xling.study import keys

    config = study.validate(study.load_yaml(Path(__file__).parents[1] / "config/config.yaml"))
    fields = {k: v for k, v in config["pretrain"].items() if k not in keys.PRETRAIN_JOB_KEYS}
    settings = PretrainSettings(**fields)
    assert (settings.adam_eps, settings.weight_decay, settings.adam_betas) == (
        1e-6,
        0.01,
        (0.9, 0.999),
    )


@pytest.mark.parametrize("config", ["config/demo.yaml", "config/config.yaml"])
def test_a_micro_batch_above_the_batch_is_refused_in_the_config(config):
    """Before any job: the study's check names the key (a job would refuse it at its start)."""
    from pathlib import Path

    from xling import study

    repo = Path(__file__).resolve().parents[1]
    shipped = study.load_yaml(repo / config)
    batch = shipped["pretrain"]["batch_size"]
    shipped["pretrain"]["micro_batch"] = batch + 1
    with pytest.raises(study.keys.ConfigError, match=r"'pretrain\.micro_batch': \d+ streams"):
        study.validate(shipped, repo / "config/schema.yaml")
    shipped["pretrain"]["micro_batch"] = max(batch // 2, 1)
    assert study.validate(shipped, repo / "config/schema.yaml")["pretrain"]["micro_batch"]
