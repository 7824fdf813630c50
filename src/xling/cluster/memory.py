"""The peak GPU memory of one pretraining process, estimated before the job is submitted.

A process holds, at its peak (the start of the backward pass of a micro-batch, when every tensor
saved for it is still alive and the output softmax's gradients are made), in bytes, with ``P`` the
model's parameters, ``B`` the streams of a micro-batch, ``L`` the tokens of a stream, ``d`` the
width, ``f`` the feed-forward width, ``H`` the heads, ``V`` the vocabulary, ``n = mask_prob x B x
L`` the predicted positions and ``h`` the bytes of a matmul input (2 under fp16/bf16 autocast, 4
in fp32):

* **weights** ``4P``: fp32, the master copy that autocast casts from;
* **gradients** ``4P``: fp32, kept from micro-batch to micro-batch while a step accumulates;
* **Adam** ``8P``: its two fp32 moments (fused, so no per-step temporaries);
* **DDP buckets** ``4P`` with several processes: DDP's flat gradient buffers for the all-reduce;
* **autocast copies** ``2 x`` the matmul weights (the layers' four matrices and the tied
  ``V x d`` output embedding): the half-precision casts autocast caches and backward keeps;
* **embedding activations**: the token ids (``8BL``), the LayerNorm's input (``4BLd``) and
  statistics (``8BL``), the dropout mask (``BLd``, one byte an element as CUDA draws it);
* **activations of each layer**, ``(6h + 8)BLd + 2hBLf + 4BHL + 16BL`` and the masks: the cast
  input of the QKV projection (``hBLd``), Q, K and V (``3hBLd``), the attention output
  (``hBLd``), the log-sum-exp of the fused attention kernel (``4BHL``: flash or memory-efficient
  attention on a GPU keeps no ``L x L`` weights), the fp32 inputs of both LayerNorms (``8BLd``)
  and their statistics (``16BL``), the cast input of the first feed-forward matrix (``hBLd``),
  the GELU's input and output (``2hBLf``), and two dropout masks (``2BLd``);
* **output softmax, kept**: the predicted positions' indices and targets (``16n``), their cast
  hidden states (``hnd``) and the fp32 log-probabilities over the vocabulary (``4nV``);
* **output softmax, at its backward**: the gradient of the log-probabilities and that of the
  logits, two more fp32 ``n x V`` (``8nV``), alive beside the kept ones.

The first three are an upper bound at a step's first micro-batch (gradients are made as backward
goes), exact from the second on. The tensors saved for backward were checked against torch's own
count (``torch.autograd.graph.saved_tensors_hooks``) on a CPU forward pass
(tests/test_cluster_memory.py). Not counted, hence :data:`OVERHEAD_GIB` and
:data:`FRAGMENTATION` when the estimate is compared with a GPU's memory: the CUDA context, cuBLAS
and NCCL workspaces, and the caching allocator's fragmentation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace

from xling.model.config import EncoderConfig

# GiB of memory of each GPU type's variants (nvidia-smi's total is a little less: ECC, reserve).
GPU_MEMORY_GIB = {"V100": (16, 32), "A100": (40, 80), "H100": (80, 94), "H200": (141,)}
OVERHEAD_GIB = 1.0  # CUDA context, cuBLAS and NCCL workspaces
FRAGMENTATION = 1.1  # the caching allocator reserves more than it hands out
# The vocabulary is built after planning: Wu's 80k joint merges, plus the base characters of the
# two languages (thousands for Chinese), give about 85k to 95k types.
ASSUMED_VOCAB = 90_000
GIB = 2**30


@dataclass(frozen=True)
class MemoryJob:
    """What one process of a pretraining job trains at once."""

    config: EncoderConfig
    streams: int  # B: the streams of a micro-batch (a block, or a part of one)
    seq_len: int
    mask_prob: float = 0.15
    half_precision: bool = True  # fp16/bf16 autocast (fp32: False)
    distributed: bool = True  # several processes: DDP's buckets


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes of each term of the module docstring."""

    weights: float
    gradients: float
    adam: float
    ddp_buckets: float
    autocast_copies: float
    activations: float  # embedding and layers
    logits_kept: float
    logits_backward: float

    @property
    def saved_for_backward(self) -> float:
        """What autograd saves for a micro-batch: activations, kept logits, autocast copies."""
        return self.activations + self.logits_kept + self.autocast_copies

    @property
    def total(self) -> float:
        return sum(getattr(self, term.name) for term in fields(self))

    def needed_gib(self) -> float:
        """GiB of GPU memory the process needs, with allocator and CUDA overheads."""
        return self.total * FRAGMENTATION / GIB + OVERHEAD_GIB


def parameter_counts(config: EncoderConfig) -> tuple[int, int]:
    """(all parameters, those a step multiplies in matmuls: its layers' matrices and the output
    embedding) of an encoder: one language's parts where they are separate."""
    d, f, vocab = config.dim, config.ffn_dim, config.vocab_size
    languages = len(config.languages)
    embedding = vocab * d + config.max_positions * d + 2 * d + vocab
    owners = languages if config.sep_embeddings else 1
    layer_matrices = 4 * d * d + 2 * d * f
    layer = layer_matrices + 4 * d + f + d + 4 * d  # with biases and two LayerNorms
    layers = config.layers - config.sep_layers + config.sep_layers * languages
    language_embeddings = languages * d if config.language_embeddings and languages > 1 else 0
    total = owners * embedding + layers * layer + language_embeddings
    return total, config.layers * layer_matrices + vocab * d


def estimate(job: MemoryJob) -> MemoryEstimate:
    """The peak memory of one process, term by term (module docstring)."""
    config = job.config
    h = 2 if job.half_precision else 4
    batch, length, d, f = job.streams, job.seq_len, config.dim, config.ffn_dim
    tokens = batch * length
    predicted = job.mask_prob * tokens
    dropout = 1 if config.dropout > 0 else 0
    embedding = 8 * tokens + 4 * tokens * d + 8 * tokens + dropout * tokens * d
    layer = (6 * h + 8) * tokens * d + 2 * h * tokens * f + 4 * batch * config.heads * length
    layer += 16 * tokens + 2 * dropout * tokens * d
    parameters, matmul = parameter_counts(config)
    return MemoryEstimate(
        weights=4 * parameters,
        gradients=4 * parameters,
        adam=8 * parameters,
        ddp_buckets=4 * parameters if job.distributed else 0,
        autocast_copies=2 * matmul if job.half_precision else 0,
        activations=embedding + config.layers * layer,
        logits_kept=predicted * (16 + h * d + 4 * config.vocab_size),
        logits_backward=8 * predicted * config.vocab_size,
    )


def gpu_memory_gib(family: str, described: str = "") -> float | None:
    """The memory of a GPU type (a :data:`GPU_MEMORY_GIB` family): the variant that ``described``
    names (a gres type or constraint such as ``nvidia_a100-sxm4-80gb``, ``v100_32gb``), else the
    smallest; None for a type not in the table."""
    variants = GPU_MEMORY_GIB.get(family)
    if not variants:
        return None
    named = {int(n) for n in re.findall(r"(\d+)\s*g(?:i?b)?(?![a-z])", described.lower())}
    chosen = sorted(named & set(variants))
    return float(chosen[0] if chosen else min(variants))


def largest_fitting(job: MemoryJob, block: int, gib: float) -> int | None:
    """The largest part of a block of ``block`` streams (``block / k`` for a whole ``k``: config
    ``pretrain.micro_batch``) whose process fits in ``gib``; None if not even one stream does."""
    for parts in range(1, block + 1):
        if block % parts:
            continue
        streams = block // parts
        if estimate(replace(job, streams=streams)).needed_gib() <= gib:
            return streams
    return None
