"""A CUDA machine simulated on the CPU: GPU code paths of the engine run on test machines without
a GPU, in this process and in every process it starts.

torch.cuda reports the simulated GPUs (name, compute capability, memory, torch's CUDA version and
architectures); tensors stay on the CPU. The points where code makes devices are mapped to the
CPU: every torch call given a CUDA device (``.to(device)``, ``torch.zeros(..., device=)``,
``module.to``) through a TorchFunctionMode, ``autocast`` and ``GradScaler`` of device type
"cuda", ``pin_memory`` (a no-op), NCCL (gloo) and DDP's ``device_ids`` (none, as for a CPU
module). ``torch.cuda.set_device`` raises on a device without an index, as the real one does, and
records every device it is given; events and streams do nothing. Memory: the bytes of the tensors
made on the device (weights, inputs; not activations), and ``torch.cuda.OutOfMemoryError`` for a
token batch of more streams than ``oom_streams``. Two shortcuts for speed only: torch.compile's
graphs run eagerly (inductor would make C++ for the CPU, not a GPU's kernels), and
``use_deterministic_algorithms`` does not import the compiler to configure it.

    with simulate(SimulatedGpus(count=2, oom_streams=100)) as simulation:
        ...  # simulation.set_devices: every device set_device was given

Processes started inside get the same simulation when :func:`environment` is in their
environment (a ``sitecustomize`` module on their ``PYTHONPATH`` installs it at start-up).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import weakref
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist
from torch.cuda._utils import _get_device_index
from torch.nn.parallel import DistributedDataParallel
from torch.overrides import TorchFunctionMode

VARIABLE = "XLING_SIMULATED_CUDA"  # the simulation's settings (JSON) for processes started inside
# torch.cuda.get_arch_list() of PyTorch 2.13's CUDA 13.0 wheel
CU130 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
_installed = None  # the scope of install_from_environment
_SITE = """import os
import sys
if os.environ.get({variable!r}):
    import importlib.util
    spec = importlib.util.spec_from_file_location("simulated_cuda", {module!r})
    simulated_cuda = importlib.util.module_from_spec(spec)
    sys.modules["simulated_cuda"] = simulated_cuda  # its dataclasses look their module up
    spec.loader.exec_module(simulated_cuda)
    simulated_cuda.install_from_environment()
"""


@dataclass
class SimulatedGpus:
    count: int = 1
    name: str = "NVIDIA H100 80GB HBM3"
    capability: tuple[int, int] = (9, 0)
    memory_gib: float = 80.0
    cuda: str = "13.0"
    arch_list: tuple[str, ...] = CU130
    oom_streams: int | None = None  # a token batch (2-D integer tensor) of more rows is too big


@dataclass
class _Properties:
    """What torch.cuda.get_device_properties reports of a simulated GPU."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int = 132


class _Event:
    def __init__(self, *args, **kwargs):
        pass

    def record(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait(self, stream=None) -> None:
        pass

    def elapsed_time(self, other) -> float:
        return 0.0


class _Stream(_Event):
    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass


@dataclass
class Simulation:
    """The state of a simulation: the devices set_device was given, the current one, memory, the
    process groups joined."""

    gpus: SimulatedGpus
    set_devices: list = field(default_factory=list)
    current: int = 0
    allocated: int = 0
    peak: int = 0
    rng_states: dict = field(default_factory=dict)
    process_groups: list = field(default_factory=list)  # (backend asked for, options) of each

    def index(self, device=None) -> int:
        index = _get_device_index(device, optional=True) if device is not None else self.current
        if index is None or index < 0:
            index = self.current
        if index >= self.gpus.count:
            raise RuntimeError(f"CUDA error: invalid device ordinal (simulated: device {index})")
        return index

    def set_device(self, device) -> None:
        self.set_devices.append(device)
        index = _get_device_index(device)  # ValueError on "cuda" without an index, as torch's
        self.current = self.index(index)

    def allocate(self, tensor: torch.Tensor) -> None:
        limit = self.gpus.oom_streams
        if limit is not None and _is_token_batch(tensor) and tensor.shape[0] > limit:
            raise torch.cuda.OutOfMemoryError(
                f"CUDA out of memory (simulated): a batch of {tensor.shape[0]} streams, more "
                f"than the {limit} this GPU holds"
            )
        size = tensor.numel() * tensor.element_size()
        self.allocated += size
        self.peak = max(self.peak, self.allocated)
        weakref.finalize(tensor, self._free, size)

    def _free(self, size: int) -> None:
        self.allocated -= size

    def reset_peak(self, device=None) -> None:
        self.peak = self.allocated

    def properties(self, device=None) -> _Properties:
        self.index(device)
        major, minor = self.gpus.capability
        total = int(self.gpus.memory_gib * 2**30)
        return _Properties(self.gpus.name, major, minor, total)


def _is_token_batch(tensor: torch.Tensor) -> bool:
    return tensor.dim() == 2 and not tensor.is_floating_point() and tensor.dtype != torch.bool


def _is_cuda(value) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    return isinstance(value, str) and value.split(":")[0] == "cuda"


# torch.device, and what Module.to reads its device with before it moves each tensor
_DEVICE_MAKERS = (torch.device, torch._C._nn._parse_to)


class _OnTheCpu(TorchFunctionMode):
    """Every torch call given a CUDA device gets the CPU; what it makes counts as device memory."""

    def __init__(self, simulation: Simulation):
        super().__init__()
        self.simulation = simulation

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _DEVICE_MAKERS:  # devices stay what the code asked for: only tensors move
            return func(*args, **kwargs)
        if func is torch.Tensor.cuda:
            return args[0]
        kwargs.pop("pin_memory", None)
        on_device = any(_is_cuda(value) for value in (*args, *kwargs.values()))
        if on_device:
            args = tuple(torch.device("cpu") if _is_cuda(a) else a for a in args)
            kwargs = {k: torch.device("cpu") if _is_cuda(v) else v for k, v in kwargs.items()}
        result = func(*args, **kwargs)
        if on_device and isinstance(result, torch.Tensor):
            self.simulation.allocate(result)
        return result


def _cpu_type(device_type):
    return "cpu" if device_type == "cuda" else device_type


class _Autocast(torch.amp.autocast_mode.autocast):
    def __init__(self, device_type, *args, **kwargs):
        super().__init__(_cpu_type(device_type), *args, **kwargs)


class _GradScaler(torch.amp.GradScaler):
    def __init__(self, device="cuda", *args, **kwargs):
        super().__init__(_cpu_type(device), *args, **kwargs)


def _patches(simulation: Simulation) -> list[tuple[object, str, object]]:
    """(owner, attribute, replacement) of every patch of the simulation."""
    gpus, cuda = simulation.gpus, torch.cuda
    ddp_init = DistributedDataParallel.__init__
    init_process_group = dist.init_process_group
    module_compile = torch.nn.Module.compile

    def ddp(self, module, device_ids=None, *args, **kwargs):
        if all(p.device.type == "cpu" for p in module.parameters()):
            device_ids = None  # DDP of a CPU module takes none
        ddp_init(self, module, device_ids, *args, **kwargs)

    def join(backend=None, *args, **kwargs):
        simulation.process_groups.append((backend, dict(kwargs)))
        kwargs.pop("device_id", None)
        gloo = "gloo" if backend in (None, "nccl") else backend
        return init_process_group(gloo, *args, **kwargs)

    def rng_state(device="cuda"):
        return simulation.rng_states.get(
            simulation.index(device), torch.zeros(8, dtype=torch.uint8)
        )

    def deterministic(mode, *, warn_only=False):
        # torch's own also configures torch.compile's kernels, importing the compiler (seconds
        # in every process); only compiled code reads that, and it is configured where loaded.
        if "torch._inductor.config" in sys.modules:
            sys.modules["torch._inductor.config"].deterministic = mode
        torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)

    def compile_eagerly(self, *args, **kwargs):
        # Dynamo traces as it would; the graphs it captures run eagerly: inductor would make C++
        # for the CPU (seconds a layer), not the Triton kernels of a GPU.
        module_compile(self, *args, **{**kwargs, "backend": "eager"})

    def set_rng_state(state, device="cuda"):
        simulation.rng_states[simulation.index(device)] = state.clone()

    return [
        (cuda, "is_available", lambda: True),
        (cuda, "device_count", lambda: gpus.count),
        (cuda, "current_device", lambda: simulation.current),
        (cuda, "set_device", simulation.set_device),
        (cuda, "get_device_name", lambda device=None: simulation.properties(device).name),
        (cuda, "get_device_capability", lambda device=None: gpus.capability),
        (cuda, "get_device_properties", simulation.properties),
        (cuda, "get_arch_list", lambda: list(gpus.arch_list)),
        (cuda, "synchronize", lambda device=None: None),
        (cuda, "empty_cache", lambda: None),
        (cuda, "memory_allocated", lambda device=None: simulation.allocated),
        (cuda, "max_memory_allocated", lambda device=None: simulation.peak),
        (cuda, "reset_peak_memory_stats", simulation.reset_peak),
        (cuda, "get_rng_state", rng_state),
        (cuda, "set_rng_state", set_rng_state),
        (cuda, "Event", _Event),
        (cuda, "Stream", _Stream),
        (cuda, "current_stream", lambda device=None: _Stream()),
        (cuda, "stream", lambda stream=None: contextlib.nullcontext()),
        (torch.version, "cuda", gpus.cuda),
        (torch, "autocast", _Autocast),
        (torch.amp, "autocast", _Autocast),
        (torch.amp, "GradScaler", _GradScaler),
        (torch.Tensor, "pin_memory", lambda self, *args, **kwargs: self),
        (torch, "use_deterministic_algorithms", deterministic),
        (torch.nn.Module, "compile", compile_eagerly),
        (dist, "init_process_group", join),
        (dist, "is_nccl_available", lambda: True),
        (DistributedDataParallel, "__init__", ddp),
    ]


@contextlib.contextmanager
def simulate(gpus: SimulatedGpus) -> Iterator[Simulation]:
    """The simulation in this process (its main thread's torch calls) until the block ends."""
    simulation = Simulation(gpus)
    patches = _patches(simulation)
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, value in patches:
        setattr(owner, name, value)
    try:
        with _OnTheCpu(simulation):
            yield simulation
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def environment(gpus: SimulatedGpus, site_dir: Path) -> dict[str, str]:
    """Variables that give the processes started with them the simulation of ``gpus``: a
    ``sitecustomize`` module written into ``site_dir`` installs it when Python starts."""
    site_dir.mkdir(parents=True, exist_ok=True)
    site = _SITE.format(variable=VARIABLE, module=str(Path(__file__).resolve()))
    (site_dir / "sitecustomize.py").write_text(site, encoding="utf-8")
    path = [str(site_dir), os.environ.get("PYTHONPATH", "")]
    return {VARIABLE: json.dumps(asdict(gpus)), "PYTHONPATH": os.pathsep.join(filter(None, path))}


def install_from_environment() -> Simulation:
    """The simulation :func:`environment` describes, for the rest of this process."""
    values = json.loads(os.environ[VARIABLE])
    values["capability"] = tuple(values["capability"])
    values["arch_list"] = tuple(values["arch_list"])
    global _installed
    _installed = simulate(SimulatedGpus(**values))  # never left: it lasts as long as the process
    return _installed.__enter__()
