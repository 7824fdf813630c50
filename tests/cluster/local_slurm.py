"""A real single-node SLURM cluster for the tests: Debian's slurm-wlm daemons on this machine.

    cluster = LocalSlurm(partitions=["cpu", "gpu"], fake_gpus=1)
    cluster.start()    # installs munge + slurm from apt if missing, starts the daemons
    # limits, as a site sets them: a partition's MaxTime, the controller's MaxJobCount (without
    # an accounting database, the one cap on submissions: jobs beyond it fail to submit), typed GPUs
    LocalSlurm(["cpu", "gpu"], max_time={"gpu": "20"}, max_job_count=10, gpu_type="a100")
    ...                # sbatch, squeue, scancel work; jobs run on this machine
    cluster.stop()     # stops exactly the daemons start() started, nothing else

Needs root and Debian's package registry (CI runs as root on Debian 12 without systemd). There is
no accounting database (slurmdbd): the SLURM profile reads job states with squeue, as it must on
such clusters. GPUs are fake (character devices cloned from /dev/null): SLURM schedules and binds
them like real ones, and torch's CPU build ignores them. Every setting here was checked against
SLURM 22.05 on a 2-core Debian 12 machine; the command line is for debugging by hand:

    python -m tests.cluster.local_slurm start|stop|status
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("munge", "slurm-client", "slurmctld", "slurmd")
MARKER = "# Written by xling's test suite (tests/cluster/local_slurm.py)."
SLURM_ETC = Path("/etc/slurm")
STATE = Path("/run/xling-slurm")  # our PID records and fake GPU devices
SLURM_RUN, SLURM_LOG = Path("/run/slurm"), Path("/var/log/slurm")
MUNGE_PID = Path("/run/munge/munged.pid")
# (name, process name in /proc/PID/comm, PID file the daemon writes), in start order.
DAEMONS = (
    ("munged", "munged", MUNGE_PID),
    ("slurmctld", "slurmctld", SLURM_RUN / "slurmctld.pid"),
    ("slurmd", "slurmd", SLURM_RUN / "slurmd.pid"),
)
SKIP_VARIABLE = "XLING_NO_SLURM"
# Set where the cluster must start (CI, root on Debian): a skip is then a failure.
REQUIRE_VARIABLE = "XLING_REQUIRE_SLURM"


def unavailable_reason() -> str | None:
    """Why this machine cannot start the test cluster, in one line; None where it can try.

    Starting it needs root (daemons, /etc/slurm) and either the Debian packages already installed
    or apt-get to install them; a SLURM of the machine's own is never touched.
    """
    if os.environ.get(SKIP_VARIABLE) == "1":
        return f"{SKIP_VARIABLE}=1: this machine cannot run a SLURM cluster"
    if os.geteuid() != 0:
        return "the test SLURM cluster needs root (daemons, /etc/slurm); run the tests as root"
    if shutil.which("apt-get") is None and shutil.which("slurmd") is None:
        return "no apt-get to install SLURM's Debian packages (munge, slurmctld, slurmd)"
    conf = SLURM_ETC / "slurm.conf"
    if conf.exists() and not conf.read_text(errors="replace").startswith(MARKER):
        return f"{conf} belongs to this machine's own SLURM, which the tests leave alone"
    return None


def skip_unless_available() -> None:
    """Skip the calling test (or fixture) where the cluster cannot start, with the one-line reason;
    fail instead where the environment requires the cluster (``XLING_REQUIRE_SLURM=1``)."""
    import pytest

    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get(REQUIRE_VARIABLE) == "1":
        pytest.fail(f"{REQUIRE_VARIABLE}=1 but the SLURM tests cannot run: {reason}")
    pytest.skip(reason)


class ClusterError(RuntimeError):
    pass


def _run(*command: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    if done.returncode != 0:
        raise ClusterError(
            f"`{' '.join(command)}` failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
        )
    return done


def pid_running(pid: int, comm: str) -> bool:
    """Whether ``pid`` is a live (not zombie) process named ``comm``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    name, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2]
    return name == comm and state != "Z"


def _pid_from(path: Path) -> int | None:
    try:
        return int(path.read_text().strip() or "x")
    except (OSError, ValueError):
        return None


def _log_tail(daemon: str) -> str:
    log = (
        SLURM_LOG / f"{daemon}.log"
        if daemon.startswith("slurm")
        else Path("/var/log/munge/munged.log")
    )
    try:
        return f"; the end of {log}:\n" + "\n".join(log.read_text().splitlines()[-15:])
    except OSError:
        return ""


def _wait(condition, seconds: float, what: str, daemon: str | None = None) -> None:
    """Wait for ``condition``; give up early, with its log, when ``daemon`` died meanwhile."""
    deadline = time.monotonic() + seconds
    while not condition():
        alive = daemon is None or any(
            pid_running(pid, daemon) for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
        )
        if not alive or time.monotonic() > deadline:
            state = "stopped" if not alive else f"timed out after {seconds:.0f} s"
            raise ClusterError(
                f"{state} waiting for {what}" + (_log_tail(daemon) if daemon else "")
            )
        time.sleep(0.25)


@dataclass
class LocalSlurm:
    partitions: list[str]  # the first is the default partition
    fake_gpus: int = 1
    timeout: float = 120.0
    started: dict[str, int] = field(default_factory=dict)  # daemon name -> PID we started
    max_time: dict[str, str] = field(default_factory=dict)  # partition -> MaxTime (INFINITE)
    max_job_count: int | None = None  # the controller's MaxJobCount (SLURM's default: 10000)
    gpu_type: str = ""  # the fake GPUs' gres type ("" = untyped, gpu:N)

    # ------------------------------------------------------------------ facts about the node
    @property
    def node(self) -> str:
        return socket.gethostname().split(".")[0]

    @staticmethod
    def cpus() -> int:
        if shutil.which("slurmd") is None:  # not installed yet
            return os.cpu_count() or 1
        found = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=False)
        for token in found.stdout.split():
            if token.startswith("CPUs="):
                return int(token.removeprefix("CPUs="))
        return os.cpu_count() or 1

    @staticmethod
    def memory_mb() -> int:
        """A little less than the node has: SLURM marks a node claiming too much INVALID."""
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024 * 9 // 10
        raise ClusterError("no MemTotal in /proc/meminfo")

    # ------------------------------------------------------------------ start
    def start(self) -> None:
        if os.geteuid() != 0:
            raise ClusterError(
                "starting the test SLURM cluster needs root (apt-get, daemons); run the tests as "
                f"root, or set {SKIP_VARIABLE}=1 on a machine that cannot run SLURM"
            )
        self._install()
        changed = self._configure()
        STATE.mkdir(parents=True, exist_ok=True)
        self._adopt_earlier_daemons()
        if changed:
            for name in ("slurmd", "slurmctld"):
                self._stop_daemon(name)
        self._start_munge()
        self._start_daemon("slurmctld", ["slurmctld"])
        _wait(self._controller_up, self.timeout, "slurmctld to answer", "slurmctld")
        self._start_daemon("slurmd", ["slurmd"])
        self._wait_node_ready()

    def _install(self) -> None:
        if shutil.which("apt-get") is None:
            raise ClusterError(f"no apt-get: install {' '.join(PACKAGES)} by hand")
        missing = [p for p in PACKAGES if not self._installed(p)]
        if not missing:
            return
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        _run("apt-get", "update", "-qq", env=env)
        _run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, env=env)

    @staticmethod
    def _installed(package: str) -> bool:
        query = ["dpkg-query", "-W", "-f=${Status}", package]
        done = subprocess.run(query, capture_output=True, text=True, check=False)
        return done.stdout.strip() == "install ok installed"

    def slurm_conf(self) -> str:
        partitions = [
            f"PartitionName={name} Nodes={self.node} Default={'YES' if i == 0 else 'NO'} "
            f"MaxTime={self.max_time.get(name, 'INFINITE')} State=UP"
            for i, name in enumerate(self.partitions)
        ]
        typed = f"{self.gpu_type}:" if self.gpu_type else ""
        gres = f" Gres=gpu:{typed}{self.fake_gpus}" if self.fake_gpus else ""
        limits = [f"MaxJobCount={self.max_job_count}"] if self.max_job_count else []
        lines = [
            MARKER,
            "ClusterName=xlingtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            "SlurmUser=slurm",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "StateSaveLocation=/var/lib/slurm/slurmctld",
            "SlurmdSpoolDir=/var/lib/slurm/slurmd",
            f"SlurmctldPidFile={SLURM_RUN}/slurmctld.pid",
            f"SlurmdPidFile={SLURM_RUN}/slurmd.pid",
            f"SlurmctldLogFile={SLURM_LOG}/slurmctld.log",
            f"SlurmdLogFile={SLURM_LOG}/slurmd.log",
            # No systemd or cgroup delegation in CI containers: plain process tracking.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "DefMemPerCPU=512",  # without it a job with no --mem takes the whole node
            "ReturnToService=2",
            "MinJobAge=300",  # squeue remembers finished jobs this long (the profile needs >= 120)
            "KillWait=10",
            "InactiveLimit=0",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={SLURM_LOG}/jobcomp.log",  # one line per finished job, read by the tests
            "GresTypes=gpu",
            *limits,
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus()} "
            f"RealMemory={self.memory_mb()}{gres} State=UNKNOWN",
            *partitions,
        ]
        return "\n".join(lines) + "\n"

    def gres_conf(self) -> str:
        devices = [self._fake_gpu(i) for i in range(self.fake_gpus)]
        typed = f" Type={self.gpu_type}" if self.gpu_type else ""
        lines = [MARKER, *(f"NodeName={self.node} Name=gpu{typed} File={d}" for d in devices)]
        return "\n".join(lines) + "\n"

    @staticmethod
    def _fake_gpu(index: int) -> Path:
        """SLURM drops GPUs without a device file and refuses regular files: /dev/null clones."""
        STATE.mkdir(parents=True, exist_ok=True)
        device = STATE / f"fakegpu{index}"
        if not device.is_char_device():
            device.unlink(missing_ok=True)
            os.mknod(device, 0o666 | 0o020000, os.makedev(1, 3))
        return device

    def _configure(self) -> bool:
        """Write slurm.conf and gres.conf; True if they changed. Never overwrite a real site's."""
        files = {SLURM_ETC / "slurm.conf": self.slurm_conf(), SLURM_ETC / "gres.conf": None}
        files[SLURM_ETC / "gres.conf"] = self.gres_conf()
        changed = False
        for path, text in files.items():
            if path.exists():
                old = path.read_text()
                if not old.startswith(MARKER):
                    raise ClusterError(
                        f"{path} exists and was not written by the test suite: this machine has "
                        f"its own SLURM. Run the tests elsewhere, or set {SKIP_VARIABLE}=1"
                    )
                if old == text:
                    continue
            SLURM_ETC.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed = True
        for directory in (SLURM_RUN, SLURM_LOG, Path("/var/lib/slurm/slurmctld")):
            directory.mkdir(parents=True, exist_ok=True)
            shutil.chown(directory, "slurm", "slurm")
        Path("/var/lib/slurm/slurmd").mkdir(parents=True, exist_ok=True)
        return changed

    def _adopt_earlier_daemons(self) -> None:
        """Daemons recorded by an earlier run of this module that was killed before stop()."""
        for name, comm, _ in DAEMONS:
            pid = _pid_from(STATE / f"{name}.pid")
            if pid is not None and pid_running(pid, comm):
                self.started[name] = pid
            else:
                (STATE / f"{name}.pid").unlink(missing_ok=True)

    def _start_munge(self) -> None:
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            _run("mungekey", "--create", f"--keyfile={key}")
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        self._start_daemon("munged", ["runuser", "-u", "munge", "--", "/usr/sbin/munged"])
        munge = subprocess.run(["munge", "-n"], capture_output=True, check=True, timeout=30)
        _run("unmunge", input=munge.stdout.decode(), timeout=30)

    def _start_daemon(self, name: str, command: list[str]) -> None:
        comm, pid_file = next((c, f) for n, c, f in DAEMONS if n == name)
        running = _pid_from(pid_file)
        if running is not None and pid_running(running, comm):
            return  # ours (adopted) or the machine's own: used, and stopped only if ours
        pid_file.unlink(missing_ok=True)
        _run(*command, timeout=60, stdin=subprocess.DEVNULL)  # the daemon forks and returns
        _wait(
            lambda: (pid := _pid_from(pid_file)) is not None and pid_running(pid, comm),
            self.timeout,
            f"{name} to start",
            comm,
        )
        self.started[name] = _pid_from(pid_file)
        (STATE / f"{name}.pid").write_text(f"{self.started[name]}\n")

    @staticmethod
    def _controller_up() -> bool:
        done = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, check=False)
        return "is UP" in done.stdout

    def node_state(self) -> str:
        done = subprocess.run(
            ["sinfo", "-h", "-n", self.node, "-o", "%T"], capture_output=True, text=True
        )
        return done.stdout.split("\n")[0].strip()

    def _wait_node_ready(self) -> None:
        def ready() -> bool:
            state = self.node_state()
            if "drain" in state or "down" in state:  # left so by an earlier configuration
                subprocess.run(["scontrol", "update", f"nodename={self.node}", "state=resume"])
            return state in ("idle", "mixed", "allocated")

        _wait(ready, self.timeout, f"node {self.node} to be idle", "slurmd")

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        """Cancel the jobs left, then stop the daemons start() started (latest first)."""
        if "slurmctld" in self.started and self._controller_up():
            jobs = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True)
            if jobs.stdout.split():
                subprocess.run(["scancel", *jobs.stdout.split()], check=False)
        for name, _, _ in reversed(DAEMONS):
            self._stop_daemon(name)
        self._remove_configuration()

    @staticmethod
    def _remove_configuration() -> None:
        """Without a controller, a slurm.conf makes every SLURM client wait ~10 s for it (and
        Snakemake's SLURM plugin asks scontrol at import): remove ours once nothing uses it."""
        controller = _pid_from(SLURM_RUN / "slurmctld.pid")
        if controller is not None and pid_running(controller, "slurmctld"):
            return
        for name in ("slurm.conf", "gres.conf"):
            path = SLURM_ETC / name
            if path.exists() and path.read_text().startswith(MARKER):
                path.unlink()

    def _stop_daemon(self, name: str) -> None:
        pid = self.started.pop(name, None)
        (STATE / f"{name}.pid").unlink(missing_ok=True)
        comm = next(c for n, c, _ in DAEMONS if n == name)
        if pid is None or not pid_running(pid, comm):
            return
        os.kill(pid, signal.SIGTERM)
        try:
            _wait(lambda: not pid_running(pid, comm), 30, f"{name} (pid {pid}) to stop")
        except ClusterError:
            os.kill(pid, signal.SIGKILL)
            _wait(lambda: not pid_running(pid, comm), 10, f"{name} (pid {pid}) to die")


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--partitions", nargs="+", default=["cpu", "gpu"])
    parser.add_argument("--fake-gpus", type=int, default=1)
    args = parser.parse_args(argv)
    cluster = LocalSlurm(args.partitions, args.fake_gpus)
    if args.action == "start":
        cluster.start()
    elif args.action == "stop":
        cluster._adopt_earlier_daemons()
        cluster.stop()
    cluster._adopt_earlier_daemons()
    print(f"daemons started by this module and running: {cluster.started or 'none'}")


if __name__ == "__main__":
    main()
