"""The CUDA builds of torch the GPU rules can run in, and the one a study asks for
(``cluster.torch_build``).

A CUDA build of torch runs only on a node whose NVIDIA driver is at least the minimum of the
build's CUDA major version (NVIDIA's minor-version compatibility: CUDA 12.x from driver 525.60.13,
13.x from 580), and only on GPUs it carries kernels for. PyTorch 2.13's CUDA 13.0 wheel, PyPI's
default, has none for Volta (V100, sm_70) and needs driver 580; its CUDA 12.6 wheel, from PyTorch's
own index, keeps Maxwell to Hopper (sm_50 to sm_90) and runs from driver 525 (PyTorch's RELEASE.md,
"PyTorch CUDA Support Matrix", releases 2.12 to 2.14). Torch-free: the Snakefile reads it at parse
time to name the GPU rules' env, and a job reads it to say which build would run on its node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

TORCH_BUILD_KEY = "cluster.torch_build"
DEFAULT_BUILD = "cu130"
# NVIDIA's minimum Linux x86_64 driver per CUDA major version (CUDA compatibility guide, "Minor
# Version Compatibility"; the CUDA 12 and 11 numbers as the toolkit release notes give them).
MIN_DRIVER_BY_CUDA_MAJOR = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580,)}


@dataclass(frozen=True)
class TorchBuild:
    """One CUDA build of torch: its env file (relative to the repository root), the CUDA version
    it was built with, the oldest driver that runs it, and the compute capabilities it carries
    compiled kernels (sm_XY) for."""

    name: str  # the value of cluster.torch_build: PyTorch's name of its wheel index
    env_file: str
    cuda: str
    kernels: tuple[tuple[int, int], ...]
    gpus: str  # the data-centre GPUs it runs on, in words

    @property
    def min_driver(self) -> tuple[int, ...]:
        return MIN_DRIVER_BY_CUDA_MAJOR[int(self.cuda.split(".")[0])]

    def runs_on(self, capability: tuple[int, int]) -> bool:
        """Whether a kernel of this build runs on a GPU of ``capability``: one of the same major
        version and a minor at most the GPU's (sm_80 runs on an 8.6 A10 and an 8.9 L40S)."""
        major, minor = capability
        return any(k_major == major and k_minor <= minor for k_major, k_minor in self.kernels)

    def describe(self) -> str:
        return (
            f"`{TORCH_BUILD_KEY}: {self.name}` ({self.env_file}: CUDA {self.cuda}, NVIDIA driver "
            f">= {format_version(self.min_driver)}, {self.gpus})"
        )


BUILDS = {
    "cu130": TorchBuild(
        "cu130",
        "envs/torch.yaml",
        "13.0",
        kernels=((7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (12, 0)),
        gpus="Turing to Blackwell: T4, A100, A10, L40S, H100, H200, B200; not V100",
    ),
    "cu126": TorchBuild(
        "cu126",
        "envs/torch-cu126.yaml",
        "12.6",
        kernels=((5, 0), (6, 0), (7, 0), (7, 5), (8, 0), (8, 6), (9, 0)),
        gpus="Maxwell to Hopper: P100, V100, T4, A100, A10, L40S, H100, H200; not Blackwell",
    ),
}


def torch_build(config: Mapping) -> TorchBuild:
    """The build a study config asks for (the default where it names none)."""
    name = (config.get("cluster") or {}).get("torch_build", DEFAULT_BUILD)
    return BUILDS[name]


def torch_env_file(config: Mapping) -> str:
    """The conda env file of the GPU rules, relative to the repository root."""
    return torch_build(config).env_file


def min_driver(cuda: str | None) -> tuple[int, ...] | None:
    """The oldest driver that runs a build of CUDA version ``cuda`` ("13.0"); None if unknown."""
    if not cuda:
        return None
    return MIN_DRIVER_BY_CUDA_MAJOR.get(int(cuda.split(".")[0]))


def builds_for(
    capability: tuple[int, int] | None = None, driver: tuple[int, ...] | None = None
) -> list[TorchBuild]:
    """The builds with kernels for a GPU of ``capability`` that a node's ``driver`` runs (either
    left None: not a condition)."""
    return [
        build
        for build in BUILDS.values()
        if (capability is None or build.runs_on(capability))
        and (driver is None or driver >= build.min_driver)
    ]


def parse_version(text: str) -> tuple[int, ...] | None:
    """A driver version ("550.54.15") as a tuple of numbers; None if ``text`` holds none."""
    found = re.search(r"\d+(?:\.\d+)*", text)
    return tuple(int(part) for part in found.group(0).split(".")) if found else None


def format_version(version: tuple[int, ...]) -> str:
    return ".".join(f"{part:02d}" if i else str(part) for i, part in enumerate(version))
