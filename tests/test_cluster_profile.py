"""The SLURM profile (slurm/config.yaml) without a cluster: Snakemake finds it from the repository
root, a dry run prints the plan even without conda, it names only real rules, and an edited script
does not rerun finished jobs."""

import ast
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from tests.cluster.profile import PROFILE, gpu_rules, load_profile
from tests.cluster.rules import workflow_rules

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def test_the_profile_names_only_rules_of_the_workflow():
    profile = load_profile()
    rules = workflow_rules()
    named = set(profile["set-resources"]) | set(profile["set-threads"])
    assert named - set(rules) == set(), "set-resources / set-threads name unknown rules"


@pytest.mark.parametrize(
    ("argv", "conda_here", "uses_conda"),
    [
        (["all"], False, True),  # a real run without conda fails in Snakemake, loudly
        (["-n", "all"], False, False),
        (["-np", "results/paper/tables/table1.md"], False, False),
        (["--dry-run", "all"], False, False),
        (["-n", "all"], True, True),
    ],
)
def test_envs_are_used_except_in_a_dry_run_without_conda(
    argv, conda_here, uses_conda, tmp_path, monkeypatch
):
    if conda_here:
        (tmp_path / "conda").write_text("#!/bin/sh\n")
        (tmp_path / "conda").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setattr(sys, "argv", ["snakemake", "--profile", "slurm", *argv])
    deployment = load_profile().get("software-deployment-method")
    assert deployment == ("conda" if uses_conda else None)


def dry_run(*targets: str) -> str:
    """``snakemake --profile slurm -n TARGETS`` from the repository root, as a user types it."""
    command = [SNAKEMAKE, "--profile", "slurm", "-n", "--quiet", "rules", "--", *targets]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Using profile slurm" in done.stdout + done.stderr
    return done.stdout


def test_a_dry_run_from_the_repository_root_prints_the_plan():
    plan = dry_run("all")
    for rule in ("pretrain_model", "finetune_run", "cka", "table1", "figure_cka"):
        assert f"\n{rule} " in plan, rule


def test_a_tables_path_plans_that_table_alone():
    plan = dry_run("results/paper/tables/table1.md")
    assert "\ntable1 " in plan and "\npretrain_model " in plan
    assert "\ncka " not in plan and "\nfigure_cka " not in plan


def test_an_edited_script_does_not_rerun_finished_jobs(tmp_path):
    """With the profile's rerun triggers; Snakemake's default ones would rerun the job."""
    (tmp_path / "Snakefile").write_text(
        textwrap.dedent(
            """
            rule grid_point:
                output: "metrics.json"
                script: "train.py"
            """
        )
    )
    script = tmp_path / "train.py"
    script.write_text("open(snakemake.output[0], 'w').write('{}')\n")
    run = [
        SNAKEMAKE,
        "--cores",
        "1",
        "--directory",
        str(tmp_path),
        "-s",
        str(tmp_path / "Snakefile"),
    ]
    subprocess.run(run, capture_output=True, check=True, timeout=300)
    time.sleep(1.1)  # a later mtime, as an edit gives
    script.write_text(script.read_text() + "# a comment\n")
    triggers = load_profile()["rerun-triggers"]

    def would_rerun(*options: str) -> bool:
        done = subprocess.run([*run, "-n", *options], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return "grid_point" in done.stdout.split("Job stats", 1)[-1]

    assert would_rerun(), "Snakemake's default triggers no longer see a script change"
    assert not would_rerun("--rerun-triggers", *triggers)


@pytest.mark.parametrize("config", ["config/config.yaml", "config/demo.yaml"])
def test_pretraining_job_settings_are_no_params_and_set_the_retries(config, tmp_path):
    """Changing how pretraining jobs run (wall time, attempts, checkpoint interval) must not rerun
    a finished model (params are a rerun trigger), and the attempts set the rule's retries."""
    from tests.dag import rule_settings
    from xling.study import load
    from xling.study.keys import PRETRAIN_JOB_KEYS

    settings = load(REPO / config)["pretrain"]
    jobs = rule_settings([REPO / config], tmp_path, "pretrain_model")
    assert jobs
    for params, retries in jobs:
        assert retries == settings["attempts"] - 1
        assert not set(PRETRAIN_JOB_KEYS) & set(params["pretrain"])
        assert params["pretrain"]["total_steps"] == settings["total_steps"]


def test_the_multilingual_mlm_takes_its_own_pretraining_keys_over_the_studys(tmp_path):
    """muller.model.pretrain overrides `pretrain` key by key for Muller's model only (the demo's:
    its own steps and learning rate, the study's batch and warmup)."""
    from tests.dag import rules_settings
    from xling.study import load

    config = load(REPO / "config/demo.yaml")
    own = config["muller"]["model"]["pretrain"]
    assert own["total_steps"] != config["pretrain"]["total_steps"]
    jobs = rules_settings(
        [REPO / "config/demo.yaml"], tmp_path, ["pretrain_multilingual", "pretrain_model"]
    )
    [(multilingual, _)] = jobs["pretrain_multilingual"]
    params = multilingual["pretrain"]
    assert own.items() <= params.items()
    inherited = {key: params[key] for key in config["pretrain"] if key in params and key not in own}
    assert {"seq_len", "batch_size"} <= inherited.keys()
    assert inherited.items() <= config["pretrain"].items()
    assert {params["pretrain"]["batch_size"] for params, _ in jobs["pretrain_model"]} == {
        config["pretrain"]["batch_size"]
    }


def test_the_multilingual_mlm_has_nothing_language_specific_as_mbert(tmp_path):
    """Muller et al. study mBERT, which has no language embeddings and no separate parts: the
    demo's own multilingual MLM leaves them out whatever config `model` says for Wu's models."""
    from tests.dag import rules_settings
    from xling.study import load

    assert load(REPO / "config/demo.yaml")["model"]["language_embeddings"] is True
    jobs = rules_settings([REPO / "config/demo.yaml"], tmp_path, ["pretrain_multilingual"])
    [(multilingual, _)] = jobs["pretrain_multilingual"]
    model = multilingual["model"]
    assert model["language_embeddings"] is False
    assert (model["sep_embeddings"], model["sep_layers"]) == (False, 0)
    assert model["layers"] == 12


@pytest.mark.parametrize(
    ("config", "threads"), [("config/config.yaml", 2), ("config/demo.yaml", 1)]
)
def test_pretraining_jobs_ask_for_the_configured_threads(config, threads, tmp_path):
    """pretrain.threads (default 2) sets what every pretraining job asks of Snakemake: the demo
    runs two one-thread jobs side by side."""
    from tests.dag import rule_threads

    for rule in ("pretrain_model", "pretrain_monolingual", "pretrain_multilingual"):
        asked = rule_threads([REPO / config], tmp_path, rule)
        if rule != "pretrain_multilingual" or config.endswith("demo.yaml"):
            assert asked, rule
        assert set(asked) <= {threads}, rule


def test_every_pretraining_rule_is_signalled_before_its_time_limit():
    """SIGTERM well ahead of the limit: the trainer checkpoints and exits, the retry resumes."""
    profile = load_profile()
    for rule in ("pretrain_model", "pretrain_monolingual", "pretrain_multilingual"):
        resources = profile["set-resources"][rule]
        assert "--signal=TERM@600" in resources["slurm_extra"], rule
        assert (
            resources["slurm_partition"]
            == profile["set-resources"]["pretrain_model"]["slurm_partition"]
        )


def test_word_vector_jobs_ask_for_the_memory_the_paper_study_sizes_need():
    """Float64 sums of the paper's vocabulary over every layer (contextual vectors), and two
    languages' float32 vectors (word alignment), must fit the memory of a first attempt."""
    from xling import study

    config = study.load(REPO / "config/config.yaml")
    words = config["analysis"]["word_alignment"]["vocabulary"]
    states = words * (config["model"]["layers"] + 1) * config["model"]["dim"]
    needs = {"contextual_word_vectors": states * 8, "word_alignment": 2 * states * 4}
    resources = load_profile()["set-resources"]
    for rule, size in needs.items():
        asked = eval(str(resources[rule]["mem_mb"]), {"attempt": 1}) * 1e6
        assert asked >= 2 * size, (rule, asked, size)  # room for the model and the copies


@pytest.mark.parametrize(
    "rule, wildcards",
    [
        ("finetune_run", {"task": "xnli"}),
        ("finetune_run", {"task": "ner"}),
        ("muller_finetune", {"mtask": "pos"}),
        ("muller_finetune", {"mtask": "ner"}),
    ],
)
def test_jobs_that_resume_ask_for_the_same_time_at_every_attempt(rule, wildcards):
    """A retry resumes after the last epoch, so it needs no more time; more could exceed the GPU
    partition's limit and leave the job pending."""
    from types import SimpleNamespace

    runtime = str(load_profile()["set-resources"][rule]["runtime"])
    names = {"wildcards": SimpleNamespace(**wildcards)}
    times = [eval(runtime, {**names, "attempt": attempt}) for attempt in (1, 2, 3)]
    assert times[0] > 0 and len(set(times)) == 1, (rule, wildcards, times)


# A rule trains when its script calls one of these (module -> the names that train).
TRAINERS = {
    "xling.pretrain": {"pretrain"},
    "xling.finetune": {"run_finetune"},
    "xling.finetune.bundle": {"run_model_job"},
    "xling.muller.runner": {"run_job"},
    "xling.analysis.transfer_sweep": {"transfer_sweep"},
}
TRAINING_NAMES = re.compile(r"pretrain_\w+|finetune_\w+|\w+_finetune|contextual_transfer")


def trains(script: Path) -> bool:
    """Whether a workflow script imports a trainer (TRAINERS)."""
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.module not in TRAINERS:
            continue
        if TRAINERS[node.module] & {alias.name for alias in node.names}:
            return True
    return False


def training_rules() -> set[str]:
    found = set()
    for rule in workflow_rules().values():
        by_script = rule.script is not None and trains(rule.script)
        if by_script or (TRAINING_NAMES.fullmatch(rule.name) and rule.name != "select_finetune"):
            found.add(rule.name)
    return found


def test_every_rule_that_trains_has_a_gpu_profile_entry():
    """A training rule without its entry would train on the CPU with the default 4 GB (as
    pretrain_multilingual did): on its GPU partition, with GPUs, its threads and the pin."""
    profile = load_profile()
    training = training_rules()
    assert {
        "pretrain_model",
        "pretrain_multilingual",
        "finetune_pack",
        "muller_finetune",
    } <= training
    missing = training - gpu_rules(profile)
    assert not missing, f"rules that train without GPUs in slurm/config.yaml: {sorted(missing)}"
    gpu = profile["set-resources"]["pretrain_model"]["slurm_partition"]
    for rule in sorted(training):
        resources = profile["set-resources"][rule]
        assert resources["slurm_partition"] == gpu, rule
        assert "gpu_model" in resources, f"{rule}: not pinned with the others (GPU_TYPE)"
        assert rule in profile["set-threads"], rule


def profile_with_gpu_type(gpu_type: str, tmp_path: Path) -> dict:
    text = PROFILE.read_text(encoding="utf-8")
    pinned = re.sub(r'^(\s*- GPU_TYPE = )""', rf'\1"{gpu_type}"', text, count=1, flags=re.M)
    assert pinned != text, "the profile no longer defines GPU_TYPE"
    (tmp_path / "config.yaml").write_text(pinned, encoding="utf-8")
    return load_profile(tmp_path / "config.yaml")


def test_the_gpu_type_is_pinned_in_one_place(tmp_path):
    """One definition (GPU_TYPE) pins every GPU rule; unset, none is pinned."""
    from xling.cluster.launch import launch_from_resources
    from xling.cluster.plan import JobRequest
    from xling.cluster.preflight import pinned_gpu_type

    unpinned = load_profile()
    assert {unpinned["set-resources"][rule]["gpu_model"] for rule in gpu_rules(unpinned)} == {""}
    pinned = profile_with_gpu_type("a100", tmp_path)
    for rule in gpu_rules(pinned):
        resources = pinned["set-resources"][rule]
        assert resources["gpu_model"] == "a100", rule
        request = JobRequest(rule, "", gpus=1, cpus=1, minutes=(1,), slurm=resources)
        assert pinned_gpu_type(request) == ("a100", "gpu_model")
    # the pin does not change how many processes a job starts
    layout = launch_from_resources(pinned["set-resources"]["pretrain_model"])
    assert layout.world_size == 8


def node_layout_examples(gpu_type: str = "") -> dict[str, dict]:
    """The commented node layouts of set-resources: pretrain_model, by their title, evaluated
    as Snakemake would (YTE, with the profile's __definitions__)."""
    import yte

    text = PROFILE.read_text(encoding="utf-8")
    block = text.split("# Other GPU nodes", 1)[1].split("# Every pretraining rule", 1)[0]
    examples, title = {}, None
    for line in block.splitlines():
        body = line.strip().removeprefix("#")
        if re.fullmatch(r"   \S.*:", body):  # "#   one node of 8 GPUs ...:"
            title = body.strip().rstrip(":")
            examples[title] = []
        elif title and body.startswith("     ") and ":" in body:
            examples[title].append(body.strip())
    definitions = yaml.safe_load(text)["__definitions__"]
    definitions = [d.replace('GPU_TYPE = ""', f'GPU_TYPE = "{gpu_type}"') for d in definitions]
    evaluated = {}
    for title, lines in examples.items():
        document = {"__use_yte__": True, "__definitions__": definitions}
        document["example"] = yaml.safe_load("\n".join(lines))
        evaluated[title] = yte.process_yaml(yaml.safe_dump(document), require_use_yte=True)[
            "example"
        ]
    return evaluated


def test_the_profiles_node_layouts_start_the_processes_they_name():
    """One node of 8 GPUs, one of 4, two of 4: each as xling.cluster.launch starts it."""
    from xling.cluster.gpus import gpus_of
    from xling.cluster.launch import launch_from_resources

    examples = node_layout_examples()
    layouts = {
        title: (launch_from_resources(resources), gpus_of(resources))
        for title, resources in examples.items()
    }
    found = sorted(
        (launch.nodes, launch.processes_per_node, gpus) for launch, gpus in layouts.values()
    )
    assert found == [(1, 4, 4), (1, 8, 8), (2, 4, 8)], layouts
    two_nodes = next(launch for launch, _ in layouts.values() if launch.nodes == 2)
    assert two_nodes.launcher == "srun"
    # pinned, the two-node layout asks SLURM for typed GPUs and still starts 4 processes a node
    typed = [r for r in node_layout_examples("a100").values() if int(r.get("nodes", 1)) == 2]
    assert "--gpus-per-node=a100:4" in typed[0]["slurm_extra"]
    assert launch_from_resources(typed[0]).processes_per_node == 4


@pytest.mark.parametrize(("task", "runs", "minutes"), [("xnli", 2, 1440), ("ner", 6, 720)])
def test_a_pack_of_runs_asks_for_its_runs_wall_time_at_every_attempt(task, runs, minutes):
    from types import SimpleNamespace

    runtime = str(load_profile()["set-resources"]["finetune_pack"]["runtime"])
    names = {"wildcards": SimpleNamespace(task=task, runs=str(runs))}
    assert {eval(runtime, {**names, "attempt": attempt}) for attempt in (1, 2, 3)} == {minutes}


def test_the_two_node_example_passes_the_preflights_global_batch_check():
    """The commented two-node layout (mpi: srun, 2 x 4 GPUs) as the plan reads a job's
    resources: 8 processes split the paper's 8 x 96 streams, so the preflight accepts it."""
    from xling.cluster.expected import Expected
    from xling.cluster.gpus import gpus_of
    from xling.cluster.plan import JobRequest, StudyPlan, slurm_resources
    from xling.cluster.preflight import Settings, check_global_batch
    from xling.cluster.slurminfo import ClusterFacts

    [two_nodes] = [r for r in node_layout_examples().values() if int(r.get("nodes", 1)) == 2]
    slurm = slurm_resources(two_nodes)
    assert slurm["mpi"] == "srun"
    job = JobRequest(
        "pretrain_model", "pretrain", gpus=gpus_of(two_nodes), cpus=32, minutes=(1440.0,),
        partition="gpu", expected=Expected({"A100": (10.0, 20.0)}, 8), slurm=slurm,
    )  # fmt: skip
    config = {"pretrain": {"world_size": 8, "batch_size": 96}}
    plan = StudyPlan([job], 2, 10, {"pretrain_model": set(two_nodes)}, set(), set(), config)
    assert check_global_batch(Settings(plan, "slurm/config.yaml", True), ClusterFacts()) == []
    # without mpi (the plan's resources before it kept it) the job could not start its nodes
    del slurm["mpi"]
    [refused] = check_global_batch(Settings(plan, "slurm/config.yaml", True), ClusterFacts())
    assert "needs the resources mpi" in refused.problem
