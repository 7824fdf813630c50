"""bench/gpu_check.py's GPU path, every case of it, on two simulated H100s (tests/simulated_cuda.py)
at a tiny shape: no case fails (an ERROR row, or a verdict against the engine: fp16 accumulation
on 2 processes must equal 1 process accumulating, loss scale included), none is skipped or missing
from the table, no device without an index reaches torch.cuda.set_device, the processes the
script starts train on the simulated GPUs, and the memory case finds the largest micro-batch that
fits.

The script runs once, in this process (its shapes patched) and in the processes it starts (the
simulation installed by a sitecustomize module); the tests read its table and measurements.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.simulated_cuda import SimulatedGpus, environment, simulate

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
# A simulated GPU holds token batches of at most this many streams (then: OutOfMemoryError). More
# than the dev batches (eval_batch_size 32), which every case trains with.
OOM_STREAMS = 100
VERDICTS_OF_FAILURE = ("ERROR", "DIFFERENT", "DISAGREE", "WRONG STEP", "FAILED")


def load_module(name: str, path, patch: pytest.MonkeyPatch):
    """The module at ``path``, in sys.modules as ``name`` until ``patch`` undoes it."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    patch.setitem(sys.modules, name, module)  # a dataclass's module is looked up as it is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def simulated_run(tmp_path_factory):
    """The script's GPU path on two simulated H100s: (the script, its table's rows, its report,
    the simulation of this process)."""
    tmp = tmp_path_factory.mktemp("gpu_check")
    gpus = SimulatedGpus(count=2, oom_streams=OOM_STREAMS)
    with pytest.MonkeyPatch.context() as patch:
        script = load_module("gpu_check", BENCH / "gpu_check.py", patch)
        tiny = script.Shape(2, 32, 2, 16, 4, vocabulary_scale=0.2, sentences=300, steps=6)
        patch.setattr(script, "PAPER", tiny)
        bench_pretrain = load_module("pretrain", BENCH / "pretrain.py", patch)  # bert's
        patch.setattr(bench_pretrain, "GPU_SIZE", bench_pretrain.Size("tiny", 2, 32, 2, 500, 16, 4))
        for name, value in environment(gpus, tmp / "site").items():
            patch.setenv(name, value)
        patch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        out, report = tmp / "gpu_check.md", tmp / "gpu_check.json"
        patch.setattr(sys, "argv", ["gpu_check.py", "--out", str(out), "--json", str(report)])
        with simulate(gpus) as simulation:
            script.main()
    rows = [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in out.read_text(encoding="utf-8").splitlines()[2:]
    ]
    print(out.read_text(encoding="utf-8"))
    return script, rows, json.loads(report.read_text(encoding="utf-8")), simulation


def test_every_case_runs_and_passes_on_the_simulated_gpus(simulated_run):
    script, rows, _, _ = simulated_run
    titles = [case.title for case in script.CASES]
    assert len(titles) == len({case.key for case in script.CASES}) > 5
    missing = [title for title in titles if not any(row[0].startswith(title) for row in rows)]
    assert missing == []
    failed = [row for row in rows if row[1].startswith(VERDICTS_OF_FAILURE)]
    assert failed == []
    skipped = [row for row in rows if row[1] == "skipped"]
    assert skipped == []  # two GPUs with bf16: every case can run


def test_every_device_set_has_an_index(simulated_run):
    """The simulated set_device raises on "cuda" as the real one does (the case would be an
    ERROR row); here, also none reached it in this process."""
    _, _, _, simulation = simulated_run
    assert simulation.set_devices
    assert all(getattr(device, "index", device) is not None for device in simulation.set_devices)


def test_the_memory_case_finds_the_largest_micro_batch_that_fits(simulated_run):
    script, _, report, _ = simulated_run
    memory = report["memory"]
    assert memory["peak_gib"] > 0
    assert memory["largest"] <= OOM_STREAMS < memory["out_of_memory_at"]
    # doubled from the shape's batch, then bisected MEMORY_BISECTIONS times
    doubled = memory["micro_batch"]
    while 2 * doubled <= OOM_STREAMS:
        doubled *= 2
    resolution = doubled / 2**script.MEMORY_BISECTIONS
    assert OOM_STREAMS - memory["largest"] < resolution


def test_the_processes_started_inside_trained_on_the_simulated_gpus(simulated_run):
    """Processes that did not get the simulation would have trained on the CPU, and passed."""
    script, _, report, _ = simulated_run
    on_gpus = f"2 process(es) on {SimulatedGpus.name}"
    assert report["torchrun"]["trained_on"] == on_gpus
    accumulation = report["accumulation"]
    assert accumulation["devices"] == ["cuda:0", "cuda:1"]
    assert [accumulation[p]["trained_on"] for p in ("bf16", "fp16")] == [on_gpus, on_gpus]
    assert accumulation["bf16"]["max_abs_difference"] <= script.ACCUMULATION_TOLERANCE
