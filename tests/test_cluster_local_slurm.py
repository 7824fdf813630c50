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


def test_a_machine_that_cannot_start_the_cluster_skips_with_one_line_why(monkeypatch):
    monkeypatch.delenv(local_slurm.SKIP_VARIABLE, raising=False)
    monkeypatch.delenv(local_slurm.REQUIRE_VARIABLE, raising=False)
    monkeypatch.setattr(local_slurm.os, "geteuid", lambda: 1000)
    reason = local_slurm.unavailable_reason()
    assert "needs root" in reason and "\n" not in reason
    with pytest.raises(pytest.skip.Exception, match="needs root"):
        local_slurm.skip_unless_available()
    monkeypatch.setenv(local_slurm.SKIP_VARIABLE, "1")
    assert local_slurm.unavailable_reason().startswith(f"{local_slurm.SKIP_VARIABLE}=1")


def test_where_the_cluster_is_required_a_skip_is_a_failure(monkeypatch):
    """CI runs as root on Debian and sets XLING_REQUIRE_SLURM=1: it must not skip silently."""
    monkeypatch.setenv(local_slurm.REQUIRE_VARIABLE, "1")
    monkeypatch.setattr(local_slurm.os, "geteuid", lambda: 1000)
    with pytest.raises(pytest.fail.Exception, match="XLING_REQUIRE_SLURM=1 but"):
        local_slurm.skip_unless_available()
