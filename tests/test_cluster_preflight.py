"""The preflight (xling.cluster.preflight): SLURM's outputs parsed as recorded
(tests/cluster/slurm_outputs/), every job checked against them, and, on the test suite's own
SLURM cluster, a partition's MaxTime and the controller's cap on jobs named as what to change."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster import local_slurm
from tests.cluster.local_slurm import LocalSlurm
from xling.cluster import slurminfo
from xling.cluster.expected import Expected
from xling.cluster.plan import JobRequest, StudyPlan
from xling.cluster.preflight import Settings, preflight

REPO = Path(__file__).resolve().parents[1]
OUTPUTS = Path(__file__).with_name("cluster") / "slurm_outputs"
SITE, TEST_CLUSTER = OUTPUTS / "site", OUTPUTS / "test_cluster"
RESTRICTED = OUTPUTS / "restricted"


def recorded(folder: Path, missing: dict[str, str] | None = None):
    """A runner that answers read_cluster's commands from a folder of recorded outputs; the
    commands in ``missing`` (by program) fail with that message."""
    files = {
        ("scontrol", "partition"): "scontrol_show_partition.txt",
        ("sinfo", "--Node"): "sinfo_nodes.txt",
        ("scontrol", "config"): "scontrol_show_config.txt",
        ("sacctmgr", "associations"): "sacctmgr_associations.txt",
        ("sacctmgr", "qos"): "sacctmgr_qos.txt",
        ("sacctmgr", "user"): "sacctmgr_user.txt",
        ("squeue", "--user"): "squeue.txt",
        ("id", "-Gn"): "id_groups.txt",
    }

    def run(argv):
        if argv[0] in (missing or {}):
            return 1, "", missing[argv[0]]
        name = next(
            name for (program, word), name in files.items() if argv[0] == program and word in argv
        )
        path = folder / name
        return (0, path.read_text(), "") if path.exists() else (0, "", "")

    return run


# --------------------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("UNLIMITED", None), ("INFINITE", None), ("", None),
        ("20", 20), ("30:30", 30.5), ("00:20:00", 20), ("04:00:00", 240),
        ("2-00:00:00", 2880), ("1-12", 2160), ("1-12:30", 2190), ("7-00:00:00", 10080),
    ],
)  # fmt: skip
def test_slurm_time_limits_in_minutes(text, minutes):
    assert slurminfo.minutes_of(text) == minutes


@pytest.mark.parametrize(
    ("gres", "gpus"),
    [
        ("(null)", {}),
        ("gpu:2", {"": 2}),
        ("gpu:a100:8(S:0-1)", {"a100": 8}),
        ("gpu:a100:4(S:0),gpu:v100:2(S:1)", {"a100": 4, "v100": 2}),
        ("gpu:nvidia_a100-sxm4-80gb:8(S:0-1),shard:32", {"nvidia_a100-sxm4-80gb": 8}),
        ("tmpdisk:800", {}),
    ],
)
def test_gpus_of_a_nodes_gres(gres, gpus):
    assert slurminfo.gpus_of_gres(gres) == gpus


def test_the_test_clusters_recorded_outputs_parse():
    """SLURM 22.05's own text, recorded on the test suite's cluster."""
    partitions = slurminfo.parse_partitions(
        (TEST_CLUSTER / "scontrol_show_partition.txt").read_text()
    )
    assert partitions["gpu"].max_minutes == 20 and partitions["gpu"].max_time_text == "00:20:00"
    assert partitions["cpu"].max_minutes is None and partitions["cpu"].allow_accounts is None
    [node] = slurminfo.parse_nodes((TEST_CLUSTER / "sinfo_nodes.txt").read_text())
    assert node.partitions == ("cpu", "gpu") and node.gpus == {"a100": 2} and node.cpus == 2
    config = (TEST_CLUSTER / "scontrol_show_config.txt").read_text()
    assert slurminfo.parse_max_job_count(config) == 10


def test_a_sites_outputs_parse():
    partitions = slurminfo.parse_partitions((SITE / "scontrol_show_partition.txt").read_text())
    gpu = partitions["gpu"]
    assert (gpu.max_minutes, gpu.max_nodes, gpu.max_mem_per_node_mb) == (2880, 2, 500000)
    assert gpu.allow_accounts == ("nlp_lab", "ml_core") and gpu.qos == "gpu_part"
    short = partitions["gpu_short"]
    assert short.allow_qos == ("normal", "short") and short.deny_accounts == ("guests",)
    assert partitions["maint"].state == "DOWN" and partitions["maint"].max_minutes == 2160
    nodes = {
        node.name: node for node in slurminfo.parse_nodes((SITE / "sinfo_nodes.txt").read_text())
    }
    assert nodes["g005"].partitions == ("gpu", "gpu_short") and nodes["g005"].gpus == {"v100": 4}
    assert nodes["c004"].partitions == ("cpu", "maint") and nodes["c001"].gpus == {}
    assert nodes["g001"].features == ("a100", "ib", "nvlink") and nodes["g007"].state == "drain"
    associations = slurminfo.parse_associations((SITE / "sacctmgr_associations.txt").read_text())
    lab, core = associations
    assert (lab.account, lab.partition, lab.max_submit, lab.max_wall_minutes) == (
        "nlp_lab",
        "",
        500,
        10080,
    )
    assert core.qos == ("normal", "short") and (core.max_jobs, core.grp_submit) == (20, 400)
    qos = slurminfo.parse_qos((SITE / "sacctmgr_qos.txt").read_text())
    assert qos["gpu_part"].max_submit_per_user == 150 and qos["normal"].max_wall_minutes is None
    assert qos["gpu_long"].max_wall_minutes == 10080


def test_a_cluster_without_accounting_is_read_all_the_same():
    """sacctmgr answers only with an accounting database: the rest is read, and the reason kept."""
    refused = (TEST_CLUSTER / "sacctmgr.stderr").read_text()
    facts = slurminfo.read_cluster(recorded(TEST_CLUSTER, {"sacctmgr": refused}), user="alice")
    assert facts.partitions and facts.nodes and facts.max_job_count == 10
    assert facts.associations is None and facts.qos is None
    assert len(facts.unread) == 3
    assert all("sacctmgr show" in line and "slurmdbd" in line for line in facts.unread)


# --------------------------------------------------------------------------- checks
def request(
    rule,
    partition="gpu",
    gpus=1,
    minutes=(120.0,),
    cpus=4,
    mem_mb=(32000.0,),
    expected=None,
    **slurm,
):
    """A job of ``rule`` asking for ``gpus`` (``gpu: N`` unless the SLURM resources say)."""
    if gpus and not {"gpu", "gpus_per_node", "gres"} & set(slurm):
        slurm["gpu"] = gpus
    return JobRequest(
        rule, "stage", gpus=gpus, cpus=cpus, minutes=tuple(minutes), partition=partition,
        mem_mb=tuple(mem_mb), slurm=slurm, expected=expected,
    )  # fmt: skip


def settings(requests, jobs=100, set_resources=None, pretrain=None) -> Settings:
    plan = StudyPlan(
        requests=list(requests), retries=2, jobs=jobs,
        set_resources=set_resources or {"finetune_run": {"runtime", "gpu", "mem_mb"}},
        default_resources={"slurm_partition", "runtime", "mem_mb"}, set_threads=set(),
        config={"study": "paper", "pretrain": {"precision": "auto", **(pretrain or {})}},
    )  # fmt: skip
    return Settings(plan, "slurm/config.yaml", pins_in_one_place=True)


@pytest.fixture(scope="module")
def site():
    return slurminfo.read_cluster(recorded(SITE), user="alice")


def findings_of(requests, facts, **options):
    """{(severity, rule): [finding, ...]} of the preflight of ``requests``."""
    found = {}
    for finding in preflight(settings(requests, **options), facts):
        found.setdefault((finding.severity, finding.rule), []).append(finding)
    return found


def one(found, severity, rule, fragment):
    """The finding of ``rule`` whose problem says ``fragment``."""
    matching = [f for f in found.get((severity, rule), []) if fragment in f.problem]
    assert len(matching) == 1, found
    return matching[0]


def test_a_job_longer_than_its_partitions_max_time_names_its_runtime_setting(site):
    found = findings_of(
        [request("finetune_run", minutes=(720, 2900, 3000), gpu_model="a100")], site
    )
    error = one(found, "error", "finetune_run", "up to 3,000 minutes (attempt 3)")
    assert "partition gpu's MaxTime of 2,880 minutes (2-00:00:00)" in error.problem
    assert error.change.startswith("set-resources: finetune_run: runtime in slurm/config.yaml")


def test_a_pretraining_job_names_the_config_key_of_its_wall_time(site):
    job = request(
        "pretrain_model", gpus=8, minutes=(3000,) * 4, gpu_model="a100", cpus=32,
        expected=Expected({"A100": (10.0, 20.0)}),
    )  # fmt: skip
    error = one(findings_of([job], site), "error", "pretrain_model", "MaxTime")
    assert error.change == "config pretrain.runtime_minutes, to at most 2,880 at every attempt"


def test_a_pinned_gpu_type_the_partition_lacks_stops_naming_gpu_type(site):
    found = findings_of([request("finetune_run", gpu_model="h100")], site)
    error = one(
        found, "error", "finetune_run", "'h100', which partition gpu lacks (it has a100, v100)"
    )
    assert error.change.startswith("GPU_TYPE in the __definitions__ of slurm/config.yaml")


def test_no_pin_on_a_partition_of_several_gpu_types_is_a_warning(site):
    found = findings_of([request("finetune_run")], site)
    one(found, "warning", "finetune_run", "a retry may resume on another type")
    assert ("error", "finetune_run") not in found
    # a pinned type whose nodes have too few GPUs a node: 8 V100s, where V100 nodes have 4
    found = findings_of([request("pretrain_model", gpus=8, gpu_model="v100", cpus=8)], site)
    one(found, "error", "pretrain_model", "asks for 8 v100 GPU(s) on each of 1 node(s)")


def test_nodes_cpus_and_memory_beyond_the_partitions_nodes_are_errors(site):
    too_many = request("pretrain_model", gpus=12, nodes=3, gpus_per_node=4, gpu_model="a100")
    error = one(findings_of([too_many], site), "error", "pretrain_model", "asks for 3 node(s)")
    assert error.change.startswith("set-resources: pretrain_model: nodes")
    hungry = request("finetune_run", gpu_model="a100", cpus=96, mem_mb=(32000.0, 640000.0))
    found = findings_of([hungry], site)
    cpus = one(found, "error", "finetune_run", "96 CPUs a node")
    assert cpus.change == "set-threads: finetune_run in slurm/config.yaml"
    memory = one(found, "error", "finetune_run", "640,000 MB a node (attempt 2)")
    assert "gives at most 500,000" in memory.problem  # the partition's MaxMemPerNode
    assert memory.change.startswith("set-resources: finetune_run: mem_mb")


def test_jobs_beyond_a_submit_limit_name_the_profiles_jobs(site):
    """gpu's partition QOS lets a user queue 150 jobs, and alice has 3 queued already."""
    jobs = [request("finetune_run", gpu_model="a100") for _ in range(400)]
    error = one(findings_of(jobs, site, jobs=200), "error", "(all)", "MaxSubmitJobsPerUser")
    assert "QOS gpu_part's MaxSubmitJobsPerUser (sacctmgr) of 150" in error.problem
    assert "besides the 3 you have queued now" in error.problem
    assert error.change == "jobs: in slurm/config.yaml, to at most 147"
    assert ("error", "(all)") not in findings_of(jobs, site, jobs=100)
    # fewer jobs in the plan than the limit: nothing to change
    assert ("error", "(all)") not in findings_of(jobs[:50], site, jobs=200)


def test_accounts_and_qos_are_the_users_and_admitted(site):
    stranger = request("finetune_run", gpu_model="a100", slurm_account="physics")
    found = findings_of([stranger], site)
    one(
        found, "error", "finetune_run", "account 'physics' is not one of alice's (ml_core, nlp_lab)"
    )
    one(found, "error", "finetune_run", "admits the accounts nlp_lab, ml_core only")
    short = request(
        "finetune_run", partition="gpu_short", gpu_model="v100", qos="gpu_long", minutes=(60,)
    )
    error = one(
        findings_of([short], site), "error", "finetune_run", "admits the QOS normal, short only"
    )
    assert error.change.startswith("set-resources: finetune_run: qos")
    # a QOS's MaxWall counts as the partition's MaxTime does
    capped = request(
        "finetune_run", partition="gpu_short", gpu_model="v100", qos="short", minutes=(300,),
        slurm_account="ml_core",
    )  # fmt: skip
    one(findings_of([capped], site), "error", "finetune_run", "QOS short's MaxWall of 240")


def test_a_pretraining_that_its_attempts_cannot_cover_names_the_attempts(site):
    """On the pinned V100s a model needs 27 to 47 h: one day is too little even at best (an
    error), 2 x 20 h leave no failed attempt to spare at the slow end (a warning), 4 x 24 h do."""
    expected = Expected({"A100": (11.0, 19.0), "V100": (27.0, 47.0), "H100": (3.4, 6.0)}, 4)

    def pretraining(minutes):
        return request(
            "pretrain_model", gpus=4, minutes=minutes, gpu_model="v100", expected=expected
        )

    found = findings_of([pretraining((1440,))], site)
    error = one(found, "error", "pretrain_model", "expected to train 27-47 h on 4 V100s")
    assert "1 attempt(s) give 24 h, 0 h if one fails" in error.problem
    assert error.change.startswith("config pretrain.attempts, to at least 3, or pretrain.runtime")
    found = findings_of([pretraining((1200, 1200))], site)
    assert ("error", "pretrain_model") not in found
    one(found, "warning", "pretrain_model", "2 attempt(s) give 40 h, 20 h if one fails")
    found = findings_of([pretraining((1440,) * 4)], site)
    assert not [f for f in found.get(("warning", "pretrain_model"), []) if "attempt" in f.problem]


@pytest.mark.parametrize("gpus, refused", [(8, False), (4, False), (3, False), (5, True)])
def test_a_gpu_count_that_does_not_divide_the_global_batch_names_the_gpus(site, gpus, refused):
    """8 x 96 = 768 streams a step: 4 or 3 GPUs keep it by accumulating, 5 cannot split it."""
    job = request(
        "pretrain_model", gpus=gpus, minutes=(1440,) * 4, gpu_model="a100", cpus=32,
        expected=Expected({"A100": (10.0, 20.0)}),
    )  # fmt: skip
    pretrain = {"world_size": 8, "batch_size": 96}
    found = findings_of([job], site, pretrain=pretrain, set_resources={"pretrain_model": {"gpu"}})
    matching = [f for f in found.get(("error", "pretrain_model"), []) if "768" in f.problem]
    assert bool(matching) is refused
    if refused:
        assert matching[0].change.startswith("set-resources: pretrain_model: gpu in slurm/config")


def test_nothing_readable_checks_nothing_and_says_so():
    facts = slurminfo.read_cluster(
        lambda argv: (127, "", f"no {argv[0]} on this machine"), user="bob"
    )
    assert preflight(settings([request("finetune_run", minutes=(99999,))], jobs=10**6), facts) == []
    assert len(facts.unread) == 8


# --------------------------------------------------------------------------- what sbatch refuses
@pytest.fixture(scope="module")
def restricted():
    """SLURM's own answers for partitions that refuse jobs (tests/cluster/slurm_outputs/README.md),
    read as the user nobody on the host vm; no accounting database."""
    refused = (TEST_CLUSTER / "sacctmgr.stderr").read_text()
    runner = recorded(RESTRICTED, {"sacctmgr": refused})
    return slurminfo.read_cluster(runner, user="nobody", host="vm")


def test_the_restricted_partitions_parse():
    partitions = slurminfo.parse_partitions(
        (RESTRICTED / "scontrol_show_partition.txt").read_text()
    )
    gpu, v100 = partitions["gpu"], partitions["v100"]
    assert gpu.allow_groups == ("nlp", "ml") and gpu.max_cpus_per_node == 48
    assert gpu.max_mem_per_cpu_mb == 8000 and gpu.default_memory == {"CPU": 4000}
    assert v100.min_nodes == 2 and v100.deny_qos == ("long",) and v100.exclusive_user
    assert v100.default_memory == {"GPU": 64000} and v100.tres["node"] == "6"
    assert (partitions["closing"].state, partitions["retired"].state) == ("DRAIN", "INACTIVE")
    assert partitions["admin"].root_only and partitions["reserved"].requires_reservation
    assert partitions["campus"].alloc_nodes == ("login1", "login2")
    assert slurminfo.expand_hostlist("g[001-002,010],login") == ["g001", "g002", "g010", "login"]


@pytest.mark.parametrize(
    ("partition", "asked", "severity", "fragment"),
    [
        ("closing", {}, "error", "partition closing is DRAIN: sbatch refuses every job there"),
        ("retired", {}, "error", "partition retired is INACTIVE"),
        ("admin", {}, "error", "takes root's jobs only (RootOnly=YES); they run as nobody"),
        ("reserved", {}, "error", "takes jobs of a reservation only (ReqResv=YES)"),
        ("campus", {}, "error", "submitted from login1, login2 only (AllocNodes); this is vm"),
        ("campus", {"qos": "low"}, "error", "admits the QOS normal, high only; QOS low"),
        ("gpu", {}, "error", "admits the groups nlp, ml only; nobody is in nogroup (id -Gn)"),
        ("v100", {"nodes": 1}, "error", "asks for 1 node(s); partition v100 takes jobs of 2 to"),
        ("v100", {"nodes": 2, "qos": "long"}, "error", "refuses QOS long (DenyQos)"),
        ("gpu", {"cpus": 56}, "error", "56 CPUs a node; partition gpu gives a job at most 48"),
        ("gpu", {"mem_mb": (480000.0,)}, "error", "raises its CPUs to 60, more than a node"),
        (
            "gpu",
            {"mem_mb": (300000.0,), "cpus": 32},
            "warning",
            "raises its CPUs to 38, and charges",
        ),
    ],
)
def test_what_sbatch_refuses_the_preflight_refuses_first(
    restricted, partition, asked, severity, fragment
):
    """Each case is one that sbatch refused, or took and never ran, on the recorded cluster."""
    options = {"cpus": 40, "mem_mb": (32000.0,), **asked}
    nodes = options.pop("nodes", 1)
    job = request("finetune_run", partition=partition, gpus=nodes, nodes=nodes, **options)
    finding = one(findings_of([job], restricted), severity, "finetune_run", fragment)
    assert finding.change


@pytest.mark.parametrize(
    ("partition", "asked"),
    [("admin", {"user": "root"}), ("reserved", {"slurm_extra": "--reservation=maint"}),
     ("campus", {"host": "login1"}), ("v100", {"nodes": 2})],
)  # fmt: skip
def test_what_sbatch_takes_passes(partition, asked):
    refused = (TEST_CLUSTER / "sacctmgr.stderr").read_text()
    user, host = asked.pop("user", "nobody"), asked.pop("host", "vm")
    facts = slurminfo.read_cluster(recorded(RESTRICTED, {"sacctmgr": refused}), user, host)
    nodes = asked.pop("nodes", 1)
    job = request("finetune_run", partition=partition, gpus=nodes, nodes=nodes, **asked)
    assert ("error", "finetune_run") not in findings_of([job], facts)


def test_a_job_that_asks_no_memory_gets_the_partitions_default(restricted):
    from xling.cluster.preflight import job_memory

    partitions = restricted.partitions
    gpus = request("finetune_run", partition="v100", gpus=4, mem_mb=(), cpus=8)
    assert job_memory(gpus, partitions["v100"])[:2] == (
        256000,
        "the partition's DefMemPerGPU, asking none",
    )
    cpus = request("cka", partition="cpu", gpus=0, mem_mb=(), cpus=16)
    assert job_memory(cpus, partitions["cpu"])[0] == 16 * 3900
    per_cpu = request("cka", partition="cpu", gpus=0, mem_mb=(), cpus=16, mem_mb_per_cpu=2000)
    assert job_memory(per_cpu, partitions["cpu"])[:2] == (32000, "mem_mb_per_cpu x 16 CPUs")


# --------------------------------------------------------------------------- pretraining's own
PAPER_MODEL = {"layers": 8, "dim": 768, "heads": 12, "ffn_dim": 3072, "dropout": 0.1}


def pretraining_request(precision="auto", **slurm):
    """Wu et al.'s model, global batch 8 x 96, on 4 V100s of the site."""
    pretrain = {"seq_len": 256, "batch_size": 96, "world_size": 8, "total_steps": 416800}
    pretrain["precision"] = precision
    job = request(
        "pretrain_model", gpus=4, minutes=(1440,) * 4, cpus=16, mem_mb=(128000.0,),
        expected=Expected({"V100": (50.0, 90.0)}, 4), **slurm,
    )  # fmt: skip
    from dataclasses import replace

    trained = {"model": PAPER_MODEL, "pretrain": pretrain, "languages": ["en", "fr"]}
    return replace(job, pretraining=trained), pretrain


def test_a_process_beyond_its_gpus_memory_names_the_micro_batch_that_fits(site):
    """fp32 at micro-batch 96 needs more than a 16 GB V100: the warning names the largest part
    of a block of 96 that fits; a 32 GB V100 (its constraint says so) holds it whole."""
    job, pretrain = pretraining_request("fp32", gpu_model="v100")
    found = findings_of([job], site, pretrain=pretrain)
    warning = one(found, "warning", "pretrain_model", "more than a 16 GB V100 has")
    assert "micro-batches of 96 streams" in warning.problem
    fits = int(re.search(r"pretrain\.micro_batch: (\d+)", warning.change).group(1))
    assert 96 % fits == 0 and fits < 96
    job, _ = pretraining_request("fp32", gpu_model="v100", constraint="v100_32gb")
    found = findings_of([job], site, pretrain=pretrain)
    assert not [f for f in found.get(("warning", "pretrain_model"), []) if "GiB" in f.problem]
    # the config's micro_batch is what a process holds at once
    job, _ = pretraining_request("fp32", gpu_model="v100")
    found = findings_of([job], site, pretrain={**pretrain, "micro_batch": fits})
    assert not [f for f in found.get(("warning", "pretrain_model"), []) if "GiB" in f.problem]


@pytest.mark.parametrize(
    ("margin", "refused"), [(10, True), (11, True), (11.5, False), (15, False)]
)
def test_a_stop_margin_the_profiles_signal_beats_is_refused(site, margin, refused):
    """--signal=TERM@600 may come 660 s before the limit: the margin must be above 11 minutes."""
    job, pretrain = pretraining_request(gpu_model="v100", slurm_extra="--signal=TERM@600")
    found = findings_of([job], site, pretrain={**pretrain, "stop_margin_minutes": margin})
    errors = [f for f in found.get(("error", "pretrain_model"), []) if "stop_margin" in f.problem]
    assert bool(errors) is refused
    if refused:
        assert errors[0].change.startswith("config pretrain.stop_margin_minutes, to more than 11")


# --------------------------------------------------------------------------- a real cluster
@pytest.fixture(scope="module")
def limited_cluster():
    """The test cluster with a GPU partition of MaxTime 20 minutes and a controller that holds
    10 jobs at most (without accounting, SLURM's one cap on submissions)."""
    local_slurm.skip_unless_available()
    local = LocalSlurm(
        ["cpu", "gpu"], fake_gpus=2, max_time={"gpu": "20"}, max_job_count=10, gpu_type="a100"
    )
    try:
        local.start()
        yield local
    finally:
        local.stop()


def run_preflight(tmp_path: Path, profile: str = "slurm") -> subprocess.CompletedProcess:
    command = [
        sys.executable, "-m", "xling.cluster.preflight", "--profile", profile,
        "--directory", str(tmp_path / "run"),
        "--configfile", "config/demo.yaml", "tests/config/cluster.yaml",
        "--", "results/demo/tables/table1.md",
    ]  # fmt: skip
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.mark.e2e
def test_the_preflight_names_the_partitions_max_time_and_the_submit_cap(limited_cluster, tmp_path):
    done = run_preflight(tmp_path)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    # the demo's pretraining asks for config pretrain.runtime_minutes, 30, on a partition of 20
    pretraining = re.search(r"pretrain_model: \d+ job\(s\) ask for up to 30 minutes.*\n.*", out)
    assert pretraining and "MaxTime of 20 minutes (00:20:00)" in pretraining.group()
    assert "Change: config pretrain.runtime_minutes, to at most 20" in pretraining.group()
    assert "finetune_run: " in out and "set-resources: finetune_run: runtime" in out
    assert "the cluster's MaxJobCount (scontrol show config) of 10" in out
    assert "Change: jobs: in slurm/config.yaml, to at most 10." in out
    assert "accounts and their limits: `sacctmgr show associations` failed" in out


@pytest.mark.e2e
def test_a_gpu_type_the_partition_lacks_stops_the_preflight(limited_cluster, tmp_path):
    profile = tmp_path / "slurm-h100"
    profile.mkdir()
    text = (REPO / "slurm/config.yaml").read_text(encoding="utf-8")
    (profile / "config.yaml").write_text(text.replace('GPU_TYPE = ""', 'GPU_TYPE = "h100"'))
    done = run_preflight(tmp_path, str(profile))
    assert done.returncode == 1
    assert "pins GPU type 'h100', which partition gpu lacks (it has a100)" in done.stdout
    assert f"Change: GPU_TYPE in the __definitions__ of {profile / 'config.yaml'}" in done.stdout
