"""Per-rule conda envs (envs/*.yaml), checked without conda (no channel is reachable here): every
module a rule's script imports, directly or through src/xling, is provided by the rule's env; every
package is pinned, within pyproject's ranges, to the version the tests run with; the GPU rules
get a CUDA build of torch, whichever `cluster.torch_build` picks."""

import importlib.metadata
import re
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from tests.cluster.imports import SCRIPTS, distributions_of, normalize, third_party_uses
from tests.cluster.profile import gpu_rules, load_profile
from tests.cluster.rules import workflow_rules
from xling.cluster.torch_builds import BUILDS, DEFAULT_BUILD

REPO = Path(__file__).resolve().parents[1]
ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))
# conda-forge names of packages whose PyPI (import metadata) names differ.
CONDA_TO_PYPI = {"pytorch": "torch"}
CONDA_ONLY = {"python", "pip", "cuda-version"}


def read_env(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def pinned_packages(path: Path) -> dict[str, tuple[str, str]]:
    """Normalized package name -> (installer, version) of every dependency of an env file."""
    packages = {}
    for dep in read_env(path)["dependencies"]:
        if isinstance(dep, dict):
            for line in dep.get("pip", []):
                if line.startswith("-"):
                    continue  # an option such as --extra-index-url
                name, _, version = line.partition("==")
                packages[normalize(name)] = ("pip", version)
        else:
            name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*=?=?\s*(\S*)", dep).groups()
            packages[normalize(CONDA_TO_PYPI.get(name, name))] = ("conda", version)
    return packages


def pip_options(path: Path) -> list[str]:
    return [
        line
        for dep in read_env(path)["dependencies"]
        if isinstance(dep, dict)
        for line in dep.get("pip", [])
        if line.startswith("-")
    ]


@pytest.fixture(scope="module")
def script_rules():
    return {name: rule for name, rule in workflow_rules().items() if rule.script is not None}


def test_every_rule_that_runs_code_has_an_env_file_of_envs(script_rules):
    assert script_rules, "no rule with a script found"
    for rule in workflow_rules().values():
        if rule.runs_something:
            assert rule.env is not None, f"rule {rule.name} has no conda env"
            assert rule.env.parent == REPO / "envs" and rule.env.is_file(), (rule.name, rule.env)


def test_each_scripts_imports_are_provided_by_its_rules_env(script_rules):
    missing = []
    for rule in script_rules.values():
        provided = set(pinned_packages(rule.env))
        for use in sorted(third_party_uses(rule.script), key=lambda u: (u.module, u.where)):
            candidates = distributions_of(use.module)
            if not candidates:
                missing.append(f"{use.where}: no installed package provides {use.module!r}")
            elif not candidates & provided:
                missing.append(
                    f"rule {rule.name} (env {rule.env.name}): {use.where} imports {use.module!r}; "
                    f"add {' or '.join(sorted(candidates))} to envs/{rule.env.name}"
                )
    assert not missing, "\n".join(sorted(set(missing)))


def test_the_import_scan_follows_xling_and_the_script_helpers():
    # The adapter imports no torch itself: it comes through xling.pretrain and xling.cluster.
    uses = third_party_uses(SCRIPTS / "pretrain.py")
    modules = {use.module for use in uses}
    assert {"torch", "numpy"} <= modules
    assert any(use.where.startswith("src/xling/pretrain/") for use in uses)
    assert "snakemake" not in modules and "xling" not in modules and "json" not in modules


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_files_pin_every_package_on_conda_forge(path):
    env = read_env(path)
    assert "conda-forge" in env["channels"] and "nodefaults" in env["channels"], path.name
    assert "defaults" not in env["channels"], f"{path.name}: the defaults channel needs a licence"
    for name, (installer, version) in pinned_packages(path).items():
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+*]*", version), (
            f"{path.name}: {name} is not pinned to a version ({installer})"
        )


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_pins_lie_within_the_projects_dependency_ranges(path):
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    block = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    ranges = {
        normalize(req.name): req.specifier
        for req in map(Requirement, re.findall(r'"([^"]+)"', block))
    }
    for name, (installer, version) in pinned_packages(path).items():
        if name in ranges and installer == "pip":
            assert Version(version) in ranges[name], (
                f"{path.name}: {name}=={version} not in {ranges[name]}"
            )


def test_gpu_rules_get_a_cuda_build_of_torch():
    rules = workflow_rules()
    for name in sorted(gpu_rules(load_profile())):
        assert name in rules, f"slurm/config.yaml gives GPUs to {name}, which is no rule"
        env = rules[name].env
        packages = pinned_packages(env)
        assert "torch" in packages, f"rule {name} has GPUs but envs/{env.name} has no torch"
        installer, version = packages["torch"]
        # On Linux x86_64 PyPI's torch wheels are the CUDA builds; the CPU ones are "+cpu" wheels
        # from PyTorch's own /cpu index. A conda-forge pytorch must name a cuda build string.
        if installer == "pip":
            assert "+cpu" not in version and not re.search(r"/cpu\b", " ".join(pip_options(env)))
        else:
            dep = next(d for d in read_env(env)["dependencies"] if str(d).startswith("pytorch"))
            assert "cuda" in dep, f"envs/{env.name}: pin a cuda build, e.g. pytorch =X=cuda*"


@pytest.mark.parametrize("build", sorted(BUILDS), ids=str)
def test_each_torch_build_is_its_cuda_wheel_with_the_default_envs_other_pins(build):
    """`cluster.torch_build` picks the GPU rules' env (xling.cluster.torch_builds): the default
    takes PyPI's wheel, which is its CUDA build; another build takes PyTorch's wheel of the same
    torch from that build's index, and every other package as the default env pins it."""
    env = REPO / BUILDS[build].env_file
    default = pinned_packages(REPO / BUILDS[DEFAULT_BUILD].env_file)
    packages = pinned_packages(env)
    installer, version = packages.pop("torch")
    assert installer == "pip"
    if build == DEFAULT_BUILD:
        assert "+" not in version and not pip_options(env), f"{env.name}: PyPI's torch wheel"
    else:
        assert version == f"{default['torch'][1]}+{build}", f"{env.name}: pin torch==X+{build}"
        index = f"--extra-index-url https://download.pytorch.org/whl/{build}"
        assert pip_options(env) == [index], f"{env.name}: take torch from {index}"
    assert packages == {name: pin for name, pin in default.items() if name != "torch"}, (
        f"{env.name}: pin every package but torch as {BUILDS[DEFAULT_BUILD].env_file} does"
    )
    assert read_env(env)["channels"] == read_env(REPO / BUILDS[DEFAULT_BUILD].env_file)["channels"]


def test_the_config_key_offers_exactly_the_builds_that_have_envs():
    schema = read_env(REPO / "config" / "schema.yaml")  # a plain YAML read
    key = schema["properties"]["cluster"]["properties"]["torch_build"]
    assert set(key["enum"]) == set(BUILDS) and key["default"] == DEFAULT_BUILD
    assert all((REPO / build.env_file).is_file() for build in BUILDS.values())


# Pins that may differ from the test venv's version, and why. Nothing else may: a pin is what the
# suite was run with, so that a cluster's envs run the code tested here.
# * torch: the venv holds the CPU build (2.13.0+cpu, `make`'s CPU wheel), the envs the CUDA ones
#   (PyPI's 2.13.0, 2.13.0+cu126): the local label names the build, so the versions compare
#   without it (the release must be the same).
# * pip: the installer conda puts in each env, not a package the code imports; the venv's own is
#   whatever `python -m venv` brought.
LOCAL_LABEL_ONLY = {"torch"}
INSTALLER_ONLY = {"pip"}


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_pins_are_the_versions_the_tests_run_with(path):
    differing = []
    for name, (_, pinned) in pinned_packages(path).items():
        if name in INSTALLER_ONLY:
            continue
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # python, and what the venv lacks: nothing to compare with
        if name in LOCAL_LABEL_ONLY:
            installed, pinned = Version(installed).public, Version(pinned).public
        if Version(installed) != Version(pinned):
            differing.append(f"{name}=={pinned} (the tests run with {installed})")
    assert not differing, f"envs/{path.name}: pin {', '.join(differing)} as tested"
