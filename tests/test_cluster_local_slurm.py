"""The test cluster's start/stop helper stops exactly the daemons it started (no root needed)."""

import shutil
import subprocess
import time

import pytest

from tests.cluster import local_slurm
from tests.cluster.local_slurm import LocalSlurm


@pytest.fixture
def fake_daemons(tmp_path, monkeypatch):
    """Processes named like SLURM's daemons (a copy of sleep), and a private state folder."""
    monkeypatch.setattr(local_slurm, "STATE", tmp_path / "state")
    monkeypatch.setattr(local_slurm, "SLURM_RUN", tmp_path / "run")
    monkeypatch.setattr(local_slurm, "SLURM_ETC", tmp_path / "etc")
    binary = tmp_path / "slurmd"
    shutil.copy(shutil.which("sleep"), binary)
    processes = [subprocess.Popen([str(binary), "60"]) for _ in range(2)]
    time.sleep(0.2)
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def test_stop_ends_the_recorded_daemon_and_no_other(fake_daemons):
    ours, other = fake_daemons
    cluster = LocalSlurm(["cpu"], started={"slurmd": ours.pid})
    cluster.stop()
    assert ours.wait(timeout=10) is not None
    assert other.poll() is None, "a slurmd this helper did not start was stopped"
    assert cluster.started == {}


def test_stop_leaves_a_recycled_pid_alone(fake_daemons):
    ours, _ = fake_daemons
    # The recorded PID now runs something else (here: it is recorded as munged, runs slurmd).
    cluster = LocalSlurm(["cpu"], started={"munged": ours.pid})
    cluster.stop()
    assert ours.poll() is None


def test_our_configuration_is_removed_and_a_sites_is_never_touched(fake_daemons, tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "slurm.conf").write_text(local_slurm.MARKER + "\nClusterName=xlingtest\n")
    LocalSlurm(["cpu"]).stop()
    assert not (etc / "slurm.conf").exists()
    (etc / "slurm.conf").write_text("ClusterName=thesite\n")
    LocalSlurm(["cpu"]).stop()
    assert (etc / "slurm.conf").read_text() == "ClusterName=thesite\n"
    with pytest.raises(local_slurm.ClusterError, match="has its own SLURM"):
        LocalSlurm(["cpu"], fake_gpus=0)._configure()
