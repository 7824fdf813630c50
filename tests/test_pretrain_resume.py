"""Kill a pretraining job (SIGKILL, or SLURM's SIGTERM) at a random step and rerun it: the final
weights equal those of an uninterrupted run, bit for bit (CPU, deterministic settings). The same
from the previous checkpoint when the newest is truncated; and a rerun may change the threads.
A retry resumes on GPUs of the same compute capability and precision, whatever their names."""

import functools
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import load_file

from xling.pretrain import PretrainSettings, pretrain_in_folder, read_curve
from xling.pretrain.checkpoint import check_same_job, checkpoint_files
from xling.pretrain.distributed import Runtime
from xling.pretrain.synthetic import write_synthetic_vocab_dir
from xling.pretrain.trainer import _hardware

TOTAL_STEPS, CHECKPOINT_STEPS = 30, 4
# What summary.json measures of a run rather than trains: a resumed run differs there.
TIMED = ("seconds", "attempts", "tokens_per_s")

# The job runs in a child process so that it can really be killed. It prints every finished step
# and, when asked, sleeps a little after each so that the parent can kill it mid-run.
CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from xling.pretrain import PretrainSettings, pretrain_in_folder

    data_dir, out, settings, delay = sys.argv[1], Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])

    def on_step(step):
        print(f"STEP {step}", flush=True)
        time.sleep(delay)

    settings = PretrainSettings.from_dict(json.loads(settings))
    pretrain_in_folder(out, data_dir, ["en", "fr"], settings, step_callback=on_step)
    """
)


def settings_json(threads: int = 1) -> str:
    settings = PretrainSettings(
        # Dropout on and one separate layer: the dropout RNG and routing must resume exactly too.
        architecture={
            "dim": 32,
            "layers": 2,
            "heads": 2,
            "ffn_dim": 64,
            "max_positions": 16,
            "dropout": 0.1,
            "attention_dropout": 0.1,
            "sep_layers": 1,
        },
        seq_len=16,
        batch_size=4,
        lr=3e-3,
        warmup_steps=5,
        total_steps=TOTAL_STEPS,
        eval_interval=10,
        dev_tokens=1024,
        log_interval=5,
        checkpoint_steps=CHECKPOINT_STEPS,
        checkpoint_minutes=1e6,
        threads=threads,
        deterministic=True,
    )
    return json.dumps(settings.to_dict())


def run_in_process(root, out, step_callback=None, threads=1) -> dict:
    settings = PretrainSettings.from_dict(json.loads(settings_json(threads)))
    return pretrain_in_folder(
        out, root / "vocab", ["en", "fr"], settings, step_callback=step_callback
    )


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    write_synthetic_vocab_dir(
        root / "vocab", sentences={"train": 300, "valid": 60}, anchors=10, vocabulary_scale=0.2
    )
    (root / "child.py").write_text(CHILD)
    reference = root / "reference"  # uninterrupted
    run_in_process(root, reference)
    return root, reference


def assert_same_outcome(reference, resumed):
    ours = load_file(str(resumed / "model" / "model.safetensors"))
    theirs = load_file(str(reference / "model" / "model.safetensors"))
    assert ours.keys() == theirs.keys()
    for name, tensor in theirs.items():
        assert torch.equal(ours[name], tensor), f"{name} differs after resuming"
    drop = lambda rows: [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows]  # noqa: E731
    assert drop(read_curve(resumed / "curve.csv")) == drop(read_curve(reference / "curve.csv"))
    summaries = [json.loads((d / "summary.json").read_text()) for d in (reference, resumed)]
    for summary in summaries:
        for timed in TIMED:
            summary.pop(timed)
    assert summaries[0] == summaries[1]


def test_sigkilled_job_resumes_to_identical_weights(job, tmp_path):
    root, reference = job
    # After the first checkpoint, and early enough that the kill lands before the end even on a
    # busy machine (the child pauses 50 ms after every step).
    step = random.randint(CHECKPOINT_STEPS + 1, TOTAL_STEPS - 5)
    out = tmp_path / "killed"
    # A real process, killed for real once it reports the chosen step.
    command = [sys.executable, str(root / "child.py"), str(root / "vocab"), str(out)]
    child = subprocess.Popen(
        [*command, settings_json(), "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in child.stdout:
        if line.strip() == f"STEP {step}":
            child.send_signal(signal.SIGKILL)
            break
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL, f"not killed at step {step}: {stderr}"
    assert not (out / "model").exists(), "no model may appear before the end"
    saved = torch.load(checkpoint_files(out / ".work")[0], weights_only=True)
    assert saved["step"] >= CHECKPOINT_STEPS
    run_in_process(root, out)  # the rerun of the same job
    assert_same_outcome(reference, out)


def test_sigterm_checkpoints_the_step_exits_and_resumes_to_identical_weights(job, tmp_path, capsys):
    root, reference = job
    step = random.randint(1, TOTAL_STEPS - 2)
    out = tmp_path / "terminated"
    handler_before = signal.getsignal(signal.SIGTERM)

    def terminate(current: int) -> None:
        if current == step:
            os.kill(os.getpid(), signal.SIGTERM)  # as SLURM warns a job before preemption

    with pytest.raises(SystemExit, match=f"stopped by signal {int(signal.SIGTERM)}"):
        run_in_process(root, out, step_callback=terminate)
    saved = torch.load(checkpoint_files(out / ".work")[0], weights_only=True)
    assert saved["step"] == step + 1, "the job finishes the step it is in, then checkpoints"
    assert signal.getsignal(signal.SIGTERM) == handler_before, "the job restores the handler"
    run_in_process(root, out)
    assert (
        f"resumed from {out / '.work' / f'checkpoint-step{step + 1}.pt'} at step {step + 1}"
        in capsys.readouterr().out
    )
    assert_same_outcome(reference, out)


class Crash(Exception):
    """A trainer dying between checkpoints (raised from the step callback)."""


def crash_after(step: int):
    def callback(current: int) -> None:
        if current == step:
            raise Crash

    return callback


def test_a_truncated_newest_checkpoint_falls_back_to_the_previous_one(job, tmp_path, capsys):
    root, reference = job
    out, work = tmp_path / "truncated", tmp_path / "truncated" / ".work"
    with pytest.raises(Crash):
        run_in_process(root, out, step_callback=crash_after(22))
    # Checkpoints at steps 4, 8, ..., 20: the last two are kept, each with its best model (dev
    # evaluations at steps 10 and 20), because the previous one is the fallback.
    newest, previous = checkpoint_files(work)
    assert (newest.name, previous.name) == ("checkpoint-step20.pt", "checkpoint-step16.pt")
    bests = [torch.load(path, weights_only=True)["best"]["step"] for path in (previous, newest)]
    assert bests == [10, 20]
    assert {p.name for p in work.glob("best-step*")} == {"best-step10", "best-step20"}
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])  # a truncated copy
    capsys.readouterr()
    run_in_process(root, out)
    log = capsys.readouterr().out
    assert f"warning: checkpoint {newest} cannot be read" in log
    assert f"resumed from {previous} at step 16" in log
    assert_same_outcome(reference, out)


def test_no_readable_checkpoint_starts_afresh(job, tmp_path, capsys):
    root, reference = job
    out, work = tmp_path / "unreadable", tmp_path / "unreadable" / ".work"
    with pytest.raises(Crash):
        run_in_process(root, out, step_callback=crash_after(10))
    for path in checkpoint_files(work):
        path.write_bytes(b"not a checkpoint")
    capsys.readouterr()
    run_in_process(root, out)
    log = capsys.readouterr().out
    assert "checkpoint-step8.pt, checkpoint-step4.pt); starting this job afresh" in log
    assert "resumed from" not in log
    assert_same_outcome(reference, out)


def test_a_rerun_may_use_another_thread_count(job, tmp_path, capsys):
    """Threads are not part of the resume key: they change speed and the order of float sums,
    not the training (see PretrainSettings.resume_key)."""
    root, reference = job
    out = tmp_path / "threads"
    with pytest.raises(Crash):
        run_in_process(root, out, step_callback=crash_after(14), threads=1)
    capsys.readouterr()
    run_in_process(root, out, threads=2)
    assert "at step 12" in capsys.readouterr().out
    assert torch.get_num_threads() == 1, "the job gives the caller its thread count back"
    # The same training up to float rounding (on 2 threads a sum may run in another order).
    # Adam magnifies rounding in parameters whose true gradient is 0 (the key bias, which
    # softmax ignores), so weights get a tolerance of a fraction of one update (lr 3e-3).
    ours = load_file(str(out / "model" / "model.safetensors"))
    theirs = load_file(str(reference / "model" / "model.safetensors"))
    for name, tensor in theirs.items():
        torch.testing.assert_close(ours[name], tensor, rtol=0, atol=5e-4, msg=name)
    summaries = [json.loads((d / "summary.json").read_text()) for d in (reference, out)]
    assert summaries[0]["best_step"] == summaries[1]["best_step"]
    assert summaries[1]["best_dev_loss"] == pytest.approx(summaries[0]["best_dev_loss"], rel=1e-4)


# --------------------------------------------------------------------------- the hardware key
def hardware_of(monkeypatch, name: str, capability: tuple[int, int], precision: str = "auto"):
    """What the trainer records of one process on a GPU of this name and compute capability."""
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)
    properties = SimpleNamespace(total_memory=40 * 2**30)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: properties)
    return _hardware(precision, Runtime(0, 0, 1, torch.device("cuda", 0)), print)


def key_of(hardware) -> dict:
    """A job key of the same settings and data on ``hardware`` (Trainer.job_key's last entries)."""
    key = {"global_batch": 8, "languages": ["en", "fr"], "vocab_size": 100, "data": {"en": 1}}
    return {
        **key,
        "precision": hardware.precision,
        "compute_capability": hardware.compute_capability,
    }


def test_a_retry_resumes_on_a_sibling_gpu_of_the_same_compute_capability(monkeypatch, tmp_path):
    """Sites put the 40GB and 80GB A100 (or 16GB and 32GB V100) under one gres type: a retry that
    lands on the other one runs the same kernels, and resumes."""
    path = tmp_path / "checkpoint-step40.pt"
    for first, then, capability in [
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", (8, 0)),
        ("NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-40GB", (8, 0)),
        ("Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB", (7, 0)),
    ]:
        saved = key_of(hardware_of(monkeypatch, first, capability))
        now = hardware_of(monkeypatch, then, capability)
        check_same_job({"job": saved}, key_of(now), path, gpu=now.gpu)


@pytest.mark.parametrize(
    "then, capability, precision, refusal",
    [
        ("NVIDIA H100 80GB HBM3", (9, 0), "auto", "bf16 on GPUs of compute capability 9.0"),
        ("NVIDIA A100-SXM4-80GB", (8, 0), "fp16", "fp16 on GPUs of compute capability 8.0"),
        ("Tesla V100-SXM2-32GB", (7, 0), "auto", "fp16 on GPUs of compute capability 7.0"),
    ],
)
def test_a_retry_on_another_compute_capability_or_precision_is_refused(
    monkeypatch, tmp_path, then, capability, precision, refusal
):
    saved = key_of(hardware_of(monkeypatch, "NVIDIA A100-SXM4-40GB", (8, 0)))
    now = hardware_of(monkeypatch, then, capability, precision)
    was = "was trained in bf16 on GPUs of compute capability 8.0"
    with pytest.raises(RuntimeError, match=f"{was}; this job would continue it in {refusal}"):
        check_same_job({"job": saved}, key_of(now), tmp_path / "c.pt", gpu=now.gpu)


@pytest.mark.parametrize(
    "saved_gpu, then, capability, resumes",
    [
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", (8, 0), True),
        ("NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", (9, 0), False),
        ("NVIDIA A10", "NVIDIA A100-SXM4-80GB", (8, 0), False),  # A10 is sm_86
        ("NVIDIA Future X1", "NVIDIA Future X1", (12, 0), True),  # unknown, but the same name
        ("NVIDIA Future X1", "NVIDIA Future X2", (12, 0), False),
    ],
)
def test_a_checkpoint_that_names_its_gpu_resumes_where_the_capability_matches(
    monkeypatch, tmp_path, saved_gpu, then, capability, resumes
):
    """The version before keyed a resume on the GPU's name: its checkpoints read the name as its
    compute capability."""
    legacy = {**key_of(hardware_of(monkeypatch, then, capability)), "gpu": saved_gpu}
    legacy.pop("compute_capability")
    now = hardware_of(monkeypatch, then, capability)
    check = functools.partial(check_same_job, {"job": legacy}, key_of(now), tmp_path / "c.pt")
    if resumes:
        check(gpu=now.gpu)
    else:
        with pytest.raises(RuntimeError, match="was trained in bf16 on GPUs of compute capab"):
            check(gpu=now.gpu)


def test_a_checkpoint_of_the_cpu_resumes_on_the_cpu_only(tmp_path):
    cpu = _hardware("auto", Runtime(0, 0, 1, torch.device("cpu")), print)
    assert (cpu.precision, cpu.compute_capability, cpu.gpu) == ("fp32", None, None)
    legacy = {**key_of(cpu), "gpu": None}
    legacy.pop("compute_capability")
    check_same_job({"job": legacy}, key_of(cpu), tmp_path / "c.pt", gpu=None)
    check_same_job({"job": key_of(cpu)}, key_of(cpu), tmp_path / "c.pt", gpu=None)
    gpu = {**key_of(cpu), "precision": "bf16", "compute_capability": "8.0"}
    with pytest.raises(RuntimeError, match=r"trained in fp32 on the CPU; .* bf16 on GPUs"):
        check_same_job({"job": key_of(cpu)}, gpu, tmp_path / "c.pt")
