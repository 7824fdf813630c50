"""Every setting of one pretraining job, with the paper's values as defaults.

Wu, Conneau et al. (2020), section 3.1: streams of 256 tokens, 15% of tokens predicted (80% masked,
10% random, 10% kept), one language per batch sampled with p ~ sentences^0.7, Adam with an inverse
square root schedule, lr 1e-4 after 30k linear warmup steps, batch 96 per GPU on 8 GPUs, mixed
precision, "epochs of 200k batches", stop at epoch 200, best model by English dev perplexity.

Steps. The paper trained with XLM, whose ``--epoch_size`` counts *streams* (sentences of the stream
dataset) per process, not batches: an epoch of 200k streams at 96 streams per step is ceil(200000 /
96) = 2084 optimizer steps, and 200 epochs are 416,800 steps (about 82 billion tokens on 8 GPUs,
which matches "days of 8-GPU work"). Read literally as 200k *batches* per epoch, 200 epochs would be
40M steps, 7.9 trillion tokens, which no 8-V100 budget allows. :func:`paper_total_steps` computes
the former; XLM evaluates and selects at the end of each epoch, so the paper's evaluation interval
is one epoch (2084 steps).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from xling.model.config import EncoderConfig

# EncoderConfig fields that come from the data, not from the settings.
_DATA_FIELDS = {"vocab_size", "languages"}
ARCHITECTURE_KEYS = sorted(f.name for f in fields(EncoderConfig) if f.name not in _DATA_FIELDS)
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def paper_total_steps(epochs: int = 200, epoch_streams: int = 200_000, batch_size: int = 96) -> int:
    """Optimizer steps of the paper's schedule (see the module docstring)."""
    return epochs * math.ceil(epoch_streams / batch_size)


@dataclass
class PretrainSettings:
    """Settings of one pretraining job (defaults: the paper's, section 3.1).

    ``architecture`` holds :class:`~xling.model.EncoderConfig` fields except ``vocab_size`` and
    ``languages`` (those come from the vocabulary stage), e.g. ``{"dim": 64, "sep_layers": 3}``.
    """

    architecture: dict[str, Any] = field(default_factory=dict)
    seq_len: int = 256
    batch_size: int = 96  # per device of world_size; the most a process trains at once
    # The devices batch_size is per: the global batch is world_size x batch_size streams a step
    # (the paper: 8 x 96), on however many processes the job has (xling.pretrain.batching).
    world_size: int = 1
    # The most streams a process trains at once, for memory: each batch_size block is cut into
    # the fewest equal parts of at most this many, their gradients added (None: whole blocks).
    # The same masks and global batch, so the same update without dropout; dropout inside a cut
    # block is drawn per part and so differs. How a job runs, not what it trains: in no key.
    micro_batch: int | None = None
    lr: float = 1e-4
    warmup_steps: int = 30_000
    warmup_init_lr: float = 1e-7  # XLM's AdamInverseSqrtWithWarmup starts here
    total_steps: int = field(default_factory=paper_total_steps)
    adam_betas: tuple[float, float] = (0.9, 0.999)  # XLM's Adam defaults (the paper names none)
    adam_eps: float = 1e-8
    weight_decay: float = 0.0
    clip_grad_norm: float = 5.0  # XLM's default --clip_grad_norm
    sampling_alpha: float = 0.7
    mask_prob: float = 0.15
    mask_token_rate: float = 0.8
    random_token_rate: float = 0.1  # the remaining 1 - 0.8 - 0.1 keep the original token
    eval_interval: int = 2084  # one XLM epoch (200k streams / 96)
    dev_tokens: int = 262_144  # per language, from the start of {lang}.valid.npy
    eval_batch_size: int = 32
    eval_seed: int = 0  # fixed dev masks: every model is scored on the same masked positions
    selection_language: str = "en"  # falls back to the only language of a monolingual model
    checkpoint_minutes: float = 10.0
    checkpoint_steps: int = 0  # 0 = time-based only; tests set a step interval
    # Checkpoint and stop this long before a SLURM time limit: more than the profile's early
    # signal (--signal=TERM@600) plus the 60 s SLURM may send it early, so that the signal, the
    # fallback, does not come first (xling.cluster.launch.check_stop_margin).
    stop_margin_minutes: float = 15.0
    # The pilot's (config/pilot.yaml): finish, as at total_steps, once this many minutes are
    # trained over the attempts (None: train total_steps); and the attempts (1, 2, ...) that do
    # not stop themselves before the time limit, leaving the stop to SLURM's early signal.
    max_train_minutes: float | None = None
    signal_stop_attempts: tuple[int, ...] = ()
    log_interval: int = 100
    seed: int = 0
    precision: str = "auto"
    threads: int = 0  # torch CPU threads; 0 leaves torch's default
    deterministic: bool = False  # deterministic GPU kernels (CPU ones already are)
    compile_layers: bool = False  # torch.compile each Transformer layer (GPU; slower on CPU)

    def __post_init__(self) -> None:
        self.architecture = dict(self.architecture)
        self.adam_betas = tuple(self.adam_betas)
        self.signal_stop_attempts = tuple(self.signal_stop_attempts)
        unknown = set(self.architecture) - set(ARCHITECTURE_KEYS)
        if unknown:
            raise ValueError(
                f"pretraining settings: unknown architecture keys {sorted(unknown)}; "
                f"known: {', '.join(ARCHITECTURE_KEYS)}"
            )
        positive = ("seq_len", "batch_size", "world_size", "total_steps", "eval_interval")
        positive += ("dev_tokens",)
        for name in (*positive, "eval_batch_size", "log_interval"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"pretraining setting {name} must be >= 1, got {getattr(self, name)}"
                )
        if min(self.warmup_steps, self.checkpoint_steps, self.stop_margin_minutes) < 0:
            raise ValueError(
                "pretraining settings warmup_steps, checkpoint_steps and stop_margin_minutes must "
                "be >= 0"
            )
        if self.micro_batch is not None and not 1 <= self.micro_batch <= self.batch_size:
            raise ValueError(
                f"pretraining setting micro_batch must be between 1 and batch_size "
                f"({self.batch_size}), got {self.micro_batch}; unset it to train whole blocks"
            )
        if not 0 < self.mask_prob <= 1:
            raise ValueError(
                f"pretraining setting mask_prob must be in (0, 1], got {self.mask_prob}"
            )
        if min(self.mask_token_rate, self.random_token_rate) < 0 or (
            self.mask_token_rate + self.random_token_rate > 1
        ):
            raise ValueError(
                "pretraining settings mask_token_rate and random_token_rate must be >= 0 and sum "
                f"to at most 1, got {self.mask_token_rate} and {self.random_token_rate}"
            )
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"pretraining setting precision must be one of {PRECISIONS}, got {self.precision!r}"
            )
        max_positions = self.architecture.get("max_positions", 512)
        if self.seq_len > max_positions:
            raise ValueError(
                f"pretraining setting seq_len={self.seq_len} exceeds architecture.max_positions="
                f"{max_positions}; raise max_positions or shorten seq_len"
            )

    @property
    def global_batch(self) -> int:
        """Streams of one optimizer step, whatever the processes: world_size x batch_size."""
        return self.world_size * self.batch_size

    def masking(self) -> dict[str, float]:
        """The rates :func:`xling.pretrain.masking.mask_tokens` takes: training and dev batches
        are masked alike."""
        rates = ("mask_prob", "mask_token_rate", "random_token_rate")
        return {name: getattr(self, name) for name in rates}

    def optimizer_options(self) -> dict[str, Any]:
        """The options :func:`xling.pretrain.optim.build_optimizer` takes."""
        return {
            "lr": self.lr,
            "betas": self.adam_betas,
            "eps": self.adam_eps,
            "weight_decay": self.weight_decay,
            "warmup_steps": self.warmup_steps,
            "warmup_init_lr": self.warmup_init_lr,
        }

    def encoder_config(self, vocab_size: int, languages: list[str]) -> EncoderConfig:
        return EncoderConfig(vocab_size=vocab_size, languages=list(languages), **self.architecture)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["adam_betas"] = list(self.adam_betas)
        data["signal_stop_attempts"] = list(self.signal_stop_attempts)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PretrainSettings:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(
                f"pretraining settings: unknown keys {sorted(unknown)}; known: "
                f"{', '.join(sorted(known))}"
            )
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> PretrainSettings:
        """Read settings from a JSON or YAML file (a mapping of the field names above)."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: pretraining settings must be a mapping of setting names")
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from error

    def resume_key(self) -> dict[str, Any]:
        """The settings a resumed run must share with the run that wrote the checkpoint.

        Left out: what only changes how often things happen outside the weights' path (logging,
        checkpoint interval, the stop margin, ``micro_batch``, which cuts blocks after they are
        masked), ``total_steps`` (the inverse square root schedule
        does not depend on it, so a finished run can be extended), and how the same computation
        is executed: ``threads``, ``compile_layers`` and ``deterministic``. These change speed and
        the order of float sums, not the training's definition (data order, masks, dropout and the
        update rule come from seeds and the step number), so a rerun on a node with other cores
        may resume. Only bit-for-bit equality with an uninterrupted run needs the same values
        throughout. ``world_size`` and ``batch_size`` count as their product, the global batch: a
        rerun may split the same global batch otherwise (:mod:`xling.pretrain.batching`).
        ``precision`` counts as what it resolves to on the job's GPUs, which the trainer adds.
        """
        free = {"total_steps", "checkpoint_minutes", "checkpoint_steps", "log_interval"}
        free |= {"threads", "compile_layers", "deterministic", "stop_margin_minutes"}
        free |= {"micro_batch", "max_train_minutes", "signal_stop_attempts"}
        free |= {"world_size", "batch_size", "precision"}
        key = {k: v for k, v in self.to_dict().items() if k not in free}
        return {**key, "global_batch": self.global_batch}
