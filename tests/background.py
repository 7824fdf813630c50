"""A Snakemake run in a process of its own, started now and waited for later.

Two runs, or a run and the one-threaded unit tests, then share the machine's two cores instead of
taking turns (tests/conftest.py's reduced demo, tests/test_cluster.py's local reference run).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class BackgroundRun:
    workdir: Path
    process: subprocess.Popen
    output: Path  # Snakemake's output, beside results/
    deadline: float

    @classmethod
    def start(cls, command: list[str], workdir: Path, timeout: float) -> BackgroundRun:
        """Start ``command`` (one torch thread a job) and return at once; ``timeout`` counts
        from now."""
        env = dict(os.environ, OMP_NUM_THREADS="1")
        output = workdir / "snakemake.out"
        with open(output, "w", encoding="utf-8") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        return cls(workdir, process, output, time.monotonic() + timeout)

    def wait(self) -> None:
        """Wait for the run to end; it must have succeeded."""
        returncode = self.process.wait(timeout=max(1.0, self.deadline - time.monotonic()))
        assert returncode == 0, self.output.read_text(encoding="utf-8")[-8000:]

    def stop(self) -> None:
        """End a run still going (a session cut short): Snakemake stops its jobs and exits."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=120)
