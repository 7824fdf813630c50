"""The pilot's report (xling.cluster.pilot) on constructed measurements and plans."""

from __future__ import annotations

import json

import pytest

from xling.cluster.pilot import (
    Attempt,
    PretrainMeasure,
    RunMeasure,
    StudyWork,
    attempts_needed,
    forecast,
    markdown_to_html,
    read_pretrain,
    read_run_log,
    report_markdown,
    stop_checks,
    study_work,
)
from xling.cluster.plan import JobRequest
from xling.finetune.fitting import EPOCH_LOG

THREE_ATTEMPTS = (
    Attempt(1, 0, 400, "time limit", 50.0, 12.0),
    Attempt(2, 400, 900, "signal", 70.0, 14.0),
    Attempt(3, 900, 1200, "finished", 65.0, None),
)


def measure(**changes) -> PretrainMeasure:
    values = {
        "gpu": "NVIDIA H100 80GB HBM3",
        "processes": 8,
        "layout": "768 streams a step = 8 process(es) x 1 micro-batch(es) of 96",
        "global_batch": 768,
        "seq_len": 256,
        "tokens_per_s": 768 * 256 / 0.25,  # 0.25 s a step
        "mfu": 0.3,
        "peak_memory_gib": (20.0,) * 8,
        "gpu_memory_gib": 80.0,
        "attempts": THREE_ATTEMPTS,
    }
    return PretrainMeasure(**(values | changes))


def work(**changes) -> StudyWork:
    values = {
        "total_steps": 144_000,  # 10 h at 0.25 s a step
        "runtime_minutes": 240,
        "stop_margin_minutes": 15,
        "attempts": 4,
        "examples_per_run": {("finetune", "ner"): 10_000, ("muller", "pos"): 5_000},
    }
    return StudyWork(**(values | changes))


def request(rule: str, gpus: int = 1, minutes: float = 60, **wildcards) -> JobRequest:
    return JobRequest(
        rule=rule,
        stage="x",
        gpus=gpus,
        cpus=1,
        minutes=(minutes,),
        wildcards=tuple(wildcards.items()),
    )


RUNS = {
    "ner": RunMeasure("ner", train_examples=1_000, train_seconds=100.0, total_seconds=160.0),
    "muller_pos": RunMeasure("pos", train_examples=500, train_seconds=25.0, total_seconds=35.0),
}


def test_pretraining_is_priced_at_the_measured_step_time_and_the_gpus():
    result = forecast([request("pretrain_model", gpus=8, minutes=240)], work(), measure(), RUNS)
    stage = result.stages["pretrain"]
    assert result.model_hours == pytest.approx(10.0)
    assert stage.gpu_hours == pytest.approx(80.0)  # 10 h x 8 GPUs
    assert stage.asked_gpu_hours == pytest.approx(32.0)  # 4 h x 8 GPUs at the first attempt
    # 240 - 15 minutes of stop margin - 70 s of the slowest resume: 3 attempts of 223.8 minutes
    assert result.attempts_needed == 3


def test_a_job_on_half_the_gpus_takes_twice_as_long():
    eight = forecast([request("pretrain_model", gpus=8)], work(), measure(), RUNS)
    four = forecast([request("pretrain_model", gpus=4)], work(), measure(), RUNS)
    assert four.model_hours == pytest.approx(2 * eight.model_hours)
    assert four.stages["pretrain"].gpu_hours == pytest.approx(eight.stages["pretrain"].gpu_hours)


def test_too_few_attempts_are_named_with_the_number_needed():
    result = forecast([request("pretrain_model", gpus=8)], work(attempts=3), measure(), RUNS)
    assert any(change.startswith("pretrain.attempts: 3 -> 4") for change in result.changes)
    enough = forecast([request("pretrain_model", gpus=8)], work(attempts=4), measure(), RUNS)
    assert not any("pretrain.attempts" in change for change in enough.changes)


def test_attempts_cannot_be_counted_when_the_margin_eats_the_runtime():
    assert attempts_needed(measure(), work(runtime_minutes=15), 1.0) > 1000


def test_a_peak_near_the_gpus_memory_asks_for_a_smaller_micro_batch():
    tight = forecast([], work(), measure(peak_memory_gib=(15.5,), gpu_memory_gib=16.0), RUNS)
    assert any(change.startswith("pretrain.micro_batch") for change in tight.changes)
    roomy = forecast([], work(), measure(peak_memory_gib=(10.0,), gpu_memory_gib=16.0), RUNS)
    assert not roomy.changes


def test_fine_tuning_runs_scale_their_training_and_keep_their_overhead():
    requests = [
        request("finetune_run", task="ner"),
        request("finetune_pack", task="ner", runs="3"),
        request("muller_finetune", mtask="pos"),
    ]
    result = forecast(requests, work(), measure(), RUNS)
    one_ner = (60 + 0.1 * 10_000) / 3600  # overhead + 0.1 s an example x 10k examples
    assert result.stages["finetune"].gpu_hours == pytest.approx(4 * one_ner)
    assert result.stages["finetune"].longest_hours == pytest.approx(3 * one_ner)
    assert result.stages["muller"].gpu_hours == pytest.approx((10 + 0.05 * 5_000) / 3600)


def test_a_task_the_pilot_did_not_run_is_named():
    with pytest.raises(ValueError, match="no parsing fine-tuning run"):
        forecast([request("finetune_run", task="parsing")], work(), measure(), RUNS)


def test_other_jobs_are_counted_at_their_ask_and_said_so():
    result = forecast([request("cka", gpus=1, minutes=30)], work(), measure(), RUNS)
    assert result.stages["other"].gpu_hours == pytest.approx(0.5)
    assert not result.stages["other"].measured
    text = report_markdown(measure(), RUNS, result, work())
    assert "(asked, not measured)" in text


def test_the_wall_time_is_the_longest_chain_or_the_gpu_hours_over_the_pool():
    requests = [request("pretrain_model", gpus=8, minutes=240), request("finetune_run", task="ner")]
    result = forecast(requests, work(), measure(), RUNS)
    chain = 3 * 4 + (60 + 1000) / 3600  # three 4-hour attempts, then the fine-tuning run
    assert result.wall_hours() == pytest.approx(chain)
    assert result.wall_hours(1) == pytest.approx(max(chain, result.gpu_hours))


def test_every_stop_path_is_checked():
    assert all(ok for _, ok, _ in stop_checks(THREE_ATTEMPTS))
    no_signal = (THREE_ATTEMPTS[0], Attempt(2, 400, 900, "finished", 70.0, None))
    failed = {what for what, ok, _ in stop_checks(no_signal) if not ok}
    assert failed == {"stopped by SLURM's early signal"}
    skipped = (THREE_ATTEMPTS[0], Attempt(2, 380, 900, "finished", 70.0, None))
    assert "attempt 2 resumed where 1 stopped" in {w for w, ok, _ in stop_checks(skipped) if not ok}
    text = report_markdown(
        measure(attempts=no_signal), RUNS, forecast([], work(), measure(), RUNS), work()
    )
    assert "FAILED: stopped by SLURM's early signal" in text


def test_the_fine_tuning_log_line_is_read_back(tmp_path):
    log = tmp_path / "run.log"
    line = EPOCH_LOG % (1, 1, 0.5, "en", "f1", 0.7, 1234, 56.7, 21.8)
    log.write_text(f"2026 {line}\n2026 ner bs32_lr3e-05 done in 80.5 s: test {{}}\n")
    run = read_run_log("ner", log)
    assert (run.train_examples, run.train_seconds, run.total_seconds) == (1234, 56.7, 80.5)
    log.write_text(f"2026 {line}\n")  # a run that did not finish
    with pytest.raises(ValueError, match="done in"):
        read_run_log("ner", log)


def test_the_pretraining_summary_is_read(tmp_path):
    summary = {
        "settings": {"world_size": 8, "batch_size": 96, "seq_len": 256},
        "world_size": 4,
        "tokens_per_s": 100_000.0,
        "mfu": 0.25,
        "hardware": {"gpus": ["NVIDIA A100-SXM4-40GB"], "peak_memory_gib": [12.0, None]},
        "attempts": [
            {
                "first_step": 0,
                "last_step": 5,
                "ended": "stopped 15 min before the job's time limit",
                "resume_seconds": 3.0,
            },
            {"first_step": 5, "last_step": 9, "ended": "finished", "resume_seconds": 4.0},
        ],
    }
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary))
    read = read_pretrain(path)
    assert read.global_batch == 768 and read.processes == 4
    assert read.seconds_per_step == pytest.approx(768 * 256 / 100_000)
    assert read.peak_memory_gib == (12.0,)
    assert [a.ended for a in read.attempts] == ["time limit", "finished"]
    assert read.resume_minutes == pytest.approx(4.0 / 60)


def test_study_work_takes_xnlis_epoch_size_and_the_pilots_epochs_elsewhere():
    config = {
        "pretrain": {
            "total_steps": 10,
            "runtime_minutes": 60,
            "stop_margin_minutes": 15,
            "attempts": 2,
        },
        "tasks": {"xnli": {"epochs": 200, "epoch_size": 20_000}, "ner": {"epochs": 10}},
        "muller": {"tasks": {"pos": {"epochs": 6}}},
    }
    found = study_work(config, {"ner": 20_000, "muller_pos": 12_000})
    assert found.examples_per_run == {
        ("finetune", "xnli"): 4_000_000,
        ("finetune", "ner"): 200_000,
        ("muller", "pos"): 72_000,
    }


def test_the_html_page_holds_the_tables():
    page = markdown_to_html("# Title\n\n| a | b |\n|---|---|\n| 1 | <2> |\n\n* note\n")
    assert "<h1>Title</h1>" in page
    assert "<th>a</th><th>b</th>" in page and "<td>1</td><td>&lt;2&gt;</td>" in page
    assert "<li>note</li>" in page


def test_muller_tasks_are_priced_by_the_pilots_one_muller_run():
    """mBERT at one input length on every task: NER at the pos run's seconds per example."""
    config = {
        "pretrain": {"total_steps": 1, "runtime_minutes": 60, "stop_margin_minutes": 15,
                     "attempts": 2},
        "tasks": {"ner": {"epochs": 1}},
        "muller": {"tasks": {"parsing": {"epochs": 2}, "ner": {"epochs": 3}}},
    }  # fmt: skip
    found = study_work(config, {"ner": 1_000, "muller_pos": 400})
    # parsing reads pos's treebanks; Muller's NER Table 1's English NER training set
    assert found.examples_per_run[("muller", "parsing")] == 800
    assert found.examples_per_run[("muller", "ner")] == 3_000
    result = forecast([request("muller_finetune", mtask="ner")], found, measure(), RUNS)
    assert result.stages["muller"].gpu_hours == pytest.approx((10 + 0.05 * 3_000) / 3600)
