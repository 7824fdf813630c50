"""The paper's global batch on any number of GPUs: how it is split, and that accumulating
micro-batches gives the update of one batch of their size; the precision a GPU trains in."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from xling.model import MLMEncoder
from xling.model.config import EncoderConfig
from xling.model.precision import native_precision
from xling.pretrain.batching import BatchPlan, block_parts, plan_batches
from xling.pretrain.data import MASK_ID, StreamSampler, cut_block
from xling.pretrain.distributed import Runtime
from xling.pretrain.loop import _accumulate, _prepare, _update
from xling.pretrain.masking import mask_tokens
from xling.pretrain.objective import MaskedLMObjective, resolve_precision
from xling.pretrain.settings import PretrainSettings


# --------------------------------------------------------------------------- the split
@pytest.mark.parametrize(
    ("processes", "micro_batch", "accumulation"),
    [(1, 96, 8), (2, 96, 4), (4, 96, 2), (8, 96, 1), (16, 48, 1), (3, 64, 4)],
)
def test_the_papers_global_batch_on_any_gpu_count_that_divides_it(
    processes, micro_batch, accumulation
):
    plan = plan_batches(world_size=8, batch_size=96, processes=processes)
    assert (plan.micro_batch, plan.accumulation) == (micro_batch, accumulation)
    assert plan.processes * plan.accumulation * plan.micro_batch == plan.global_batch == 768
    trained = [
        (block, plan.share(rank)) for rank in range(processes) for block in plan.blocks(rank)
    ]
    # every block (with 16 processes, each half of a block) once, in rank order
    assert trained == sorted(set(trained))
    assert sorted({block for block, _ in trained}) == list(
        range(768 // 96 if processes > 8 else processes * accumulation)
    )
    assert plan.sharing * plan.micro_batch == 96 or plan.sharing == 1


def test_sixteen_processes_share_the_blocks_of_eight():
    plan = plan_batches(world_size=8, batch_size=96, processes=16)
    assert (plan.micro_batch, plan.sharing) == (48, 2)
    assert [plan.blocks(rank)[0] for rank in (0, 1, 2, 15)] == [0, 0, 1, 7]
    assert [plan.share(rank) for rank in (0, 1, 2)] == [(0, 2), (1, 2), (0, 2)]
    assert plan.describe().endswith("(each block of 96 shared by 2)")
    # where the processes are no multiple of world_size, they train blocks of their own
    assert plan_batches(world_size=4, batch_size=6, processes=6).sharing == 1


def test_two_nodes_of_four_gpus_train_as_eight():
    assert plan_batches(8, 96, processes=2 * 4) == plan_batches(8, 96, processes=8)


def test_a_gpu_count_that_cannot_split_the_global_batch_is_refused_naming_the_keys():
    with pytest.raises(ValueError, match=r"pretrain\.world_size x pretrain\.batch_size = 8 x 96"):
        plan_batches(8, 96, processes=5)
    # the demo (world_size unset: one process's batch) on two GPUs
    with pytest.raises(ValueError, match=r"21 streams cannot be split evenly over 2"):
        plan_batches(1, 21, processes=2)
    assert plan_batches(1, 21, processes=1).accumulation == 1


def test_the_resume_key_holds_the_global_batch_not_its_split():
    eight = PretrainSettings(world_size=8, batch_size=96)
    four = PretrainSettings(world_size=4, batch_size=192)
    assert eight.resume_key() == four.resume_key()
    assert eight.resume_key()["global_batch"] == 768
    assert PretrainSettings(world_size=4).resume_key() != eight.resume_key()
    with pytest.raises(ValueError, match="world_size must be >= 1"):
        PretrainSettings(world_size=0)


def test_a_step_trains_the_same_windows_however_it_is_split():
    rng = np.random.default_rng(0)
    streams = {"en": rng.integers(5, 50, 4000), "fr": rng.integers(5, 50, 3000)}
    probabilities = {"en": 0.6, "fr": 0.4}

    def windows(processes, accumulation, micro):
        samplers = [
            StreamSampler(
                streams,
                probabilities,
                seq_len=8,
                seed=3,
                plan=BatchPlan(processes * accumulation * micro, processes, micro, accumulation),
                rank=rank,
            )
            for rank in range(processes)
        ]
        steps = [list(sampler.iterate(1, 20, {})) for sampler in samplers]
        return [
            {block: tokens.tolist() for b in batches for block, tokens in b.micro_batches()}
            for batches in zip(*steps, strict=True)
        ], steps[0][-1].consumed

    one, consumed = windows(1, 4, 2)
    assert windows(2, 2, 2) == (one, consumed)
    assert windows(4, 1, 2) == (one, consumed)
    assert consumed["en"] + consumed["fr"] == 20 * 8


# --------------------------------------------------------------------------- the update
def _trainer(settings: PretrainSettings, model: MLMEncoder) -> SimpleNamespace:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return SimpleNamespace(
        settings=settings,
        runtime=Runtime(0, 0, 1, torch.device("cpu")),
        model=model,
        optimizer=optimizer,
        schedule=torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0),
        scaler=torch.amp.GradScaler("cpu", enabled=False),
        autocast=lambda: torch.autocast("cpu", enabled=False),
    )


def _model() -> MLMEncoder:
    torch.manual_seed(0)
    config = EncoderConfig(
        vocab_size=40, languages=["en"], dim=16, layers=2, heads=2, ffn_dim=32,
        max_positions=16, dropout=0.0, attention_dropout=0.0,
    )  # fmt: skip
    return MLMEncoder(config).double()


@pytest.mark.parametrize("k", [1, 2, 4])
def test_accumulating_k_micro_batches_is_one_batch_k_times_the_size(k):
    """float64: the update of k micro-batches of 4 equals that of one batch of 4k (the mean over
    all its selected positions), although each micro-batch selects its own number of them."""
    settings = PretrainSettings(batch_size=4, world_size=k, seq_len=12, clip_grad_norm=0.0)
    rng = np.random.default_rng(k)
    tokens = rng.integers(5, 40, size=(4 * k, 12))
    replacements = np.arange(5, 40)
    masked = mask_tokens(tokens, rng, replacements, mask_id=MASK_ID, mask_prob=0.3)

    whole = _trainer(settings, _model())
    objective = MaskedLMObjective(whole.model)
    input_ids, selected, targets = (
        torch.from_numpy(a) for a in (masked.input_ids, masked.selected, masked.targets)
    )
    loss = objective(input_ids, "en", selected, targets)
    loss.backward()
    whole_grads = [p.grad.clone() for p in whole.model.parameters()]
    _update(whole)

    parts = _trainer(settings, _model())
    positions = masked.selected
    micro_batches = []
    for index in range(k):
        rows = slice(index * 4, (index + 1) * 4)
        low, high = index * 4 * 12, (index + 1) * 4 * 12
        inside = (positions >= low) & (positions < high)
        arrays = (masked.input_ids[rows], positions[inside] - low, masked.targets[inside])
        micro_batches.append([torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
    counts = torch.tensor([float(len(m[1])) for m in micro_batches], dtype=torch.float64)
    assert k == 1 or len(set(counts.tolist())) > 1, "micro-batches of unequal selections"
    whole_blocks = [(block, 0) for block in range(k)]
    prepared = SimpleNamespace(
        micro_batches=micro_batches, counts=counts, weighted=k > 1, parts=whole_blocks, planned=k
    )
    batch = SimpleNamespace(step=1, lang="en", blocks=range(k))
    step_loss = _accumulate(parts, MaskedLMObjective(parts.model), batch, prepared)
    for got, want in zip((p.grad for p in parts.model.parameters()), whole_grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(step_loss, loss.detach(), rtol=1e-6, atol=1e-9)
    _update(parts)
    for got, want in zip(parts.model.parameters(), whole.model.parameters(), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-9)


def test_prepare_masks_each_micro_batch_by_its_number():
    """Block 1 is masked alike whether process 0 accumulates it or process 1 trains it."""
    settings = PretrainSettings(batch_size=2, seq_len=8)
    inputs = SimpleNamespace(replacement_ids=lambda lang: np.arange(5, 50))
    rng = np.random.default_rng(0)
    streams = {"en": rng.integers(5, 50, 800)}
    cpu = torch.device("cpu")

    def prepared(processes, rank, accumulation):
        sampler = StreamSampler(
            streams, {"en": 1.0}, seq_len=8, seed=1,
            plan=BatchPlan(processes * accumulation * 2, processes, 2, accumulation), rank=rank,
        )  # fmt: skip
        runtime = Runtime(rank, rank, processes, cpu)
        batch, ready = _prepare(sampler.batch(5, {}), settings=settings, runtime=runtime,
                                inputs=inputs)  # fmt: skip
        return dict(zip(batch.blocks, ready.micro_batches, strict=True))

    accumulated = prepared(1, 0, 2)
    for rank in (0, 1):
        (tensors,) = prepared(2, rank, 1).values()
        for got, want in zip(tensors, accumulated[rank], strict=True):
            assert torch.equal(got, want)


# --------------------------------------------------------------------------- micro-batches
@pytest.mark.parametrize(
    ("block", "micro_batch", "parts"),
    [(96, None, 1), (96, 96, 1), (96, 200, 1), (96, 48, 2), (96, 40, 3), (96, 7, 16), (21, 10, 3)],
)
def test_a_block_is_cut_into_the_fewest_equal_parts_of_at_most_the_micro_batch(
    block, micro_batch, parts
):
    assert block_parts(block, micro_batch) == parts
    assert block % parts == 0 and block // parts <= (micro_batch or block)


def test_the_plan_describes_the_parts_a_micro_batch_cuts():
    plan = plan_batches(8, 96, processes=8)
    assert plan.describe() == "768 streams a step = 8 process(es) x 1 micro-batch(es) of 96"
    assert plan.describe(48).endswith("each trained in 2 parts of 48")
    assert (plan.streams_at_once(), plan.streams_at_once(48)) == (96, 48)


def test_a_part_without_a_selected_position_is_left_out():
    input_ids = np.arange(4 * 3).reshape(4, 3)
    selected = np.array([0, 2, 10])  # rows 0 and 3: parts 0 and 3 of 4
    cut = cut_block((input_ids, selected, np.array([7, 8, 9])), micro_batch=1)
    assert [part for part, _ in cut] == [0, 3]
    (_, (ids, positions, targets)) = cut[1]
    assert ids.tolist() == [[9, 10, 11]] and positions.tolist() == [1] and targets.tolist() == [9]
    [(part, arrays)] = cut_block((input_ids, selected, np.array([7, 8, 9])), micro_batch=None)
    assert part == 0 and arrays[0] is input_ids  # a whole block passes as it is


def _step_update(processes: int, micro_batch: int | None) -> list[torch.Tensor]:
    """The parameters after one step of the global batch 8 x 4 over ``processes`` simulated
    ranks, each block of 4 cut into parts of at most ``micro_batch``: every rank's sampler and
    masks as in a job, their micro-batches weighed as DDP's average of the ranks would."""
    settings = PretrainSettings(
        world_size=8, batch_size=4, micro_batch=micro_batch, seq_len=8, clip_grad_norm=0.0
    )
    plan = plan_batches(settings.world_size, settings.batch_size, processes)
    rng = np.random.default_rng(0)
    streams = {"en": rng.integers(5, 40, 2000)}
    inputs = SimpleNamespace(replacement_ids=lambda lang: np.arange(5, 40))
    merged = SimpleNamespace(micro_batches=[], counts=[], weighted=True, parts=[], planned=0)
    for rank in range(processes):
        sampler = StreamSampler(
            streams, {"en": 1.0}, seq_len=8, seed=2, plan=plan, rank=rank,
        )  # fmt: skip
        runtime = Runtime(rank, rank, processes, torch.device("cpu"))
        batch, ready = _prepare(sampler.batch(3, {}), settings=settings, runtime=runtime,
                                inputs=inputs)  # fmt: skip
        merged.micro_batches += ready.micro_batches
        merged.counts += ready.counts.tolist()
        merged.parts += ready.parts
        merged.planned += ready.planned
    assert merged.planned == 8 * block_parts(4, min(micro_batch or 4, 4 // plan.sharing))
    merged.counts = torch.tensor(merged.counts, dtype=torch.float64)
    trainer = _trainer(settings, _model())
    _accumulate(trainer, MaskedLMObjective(trainer.model), batch, merged)
    _update(trainer)
    return [p.detach().clone() for p in trainer.model.parameters()]


@pytest.mark.parametrize("processes", [8, 4, 1])
def test_a_micro_batch_of_half_the_batch_gives_the_update_of_whole_blocks(processes):
    """float64, no dropout: micro-batch 2 of batch_size 4 (the paper's 48 of 96: 16 micro-batches
    of 48 in the global batch of 768) on 8, 4 or 1 process(es) updates the model as 8 processes
    of whole blocks of 4 do: the blocks are masked before they are cut."""
    whole = _step_update(8, None)
    for got, want in zip(_step_update(processes, 2), whole, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-9)
    moved = _model()
    assert any(not torch.equal(a, b) for a, b in zip(whole, moved.parameters(), strict=True))


def test_sixteen_processes_of_half_a_block_give_the_update_of_eight_of_whole_blocks():
    """float64, no dropout: the paper's 8 x 96 on 16 GPUs (here 8 x 4 on 16 simulated ranks, 2
    streams each) updates the model as 8 processes of whole blocks do: each pair of processes
    masks the same block whole and trains its own half. Halves cut further (micro_batch 1) too."""
    whole = _step_update(8, None)
    for micro_batch in (None, 1):
        for got, want in zip(_step_update(16, micro_batch), whole, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-9)


def test_the_processes_that_share_a_block_read_its_windows_and_step_past_the_global_batch():
    streams = {"en": np.arange(5, 3000)}
    samplers = [
        StreamSampler(streams, {"en": 1.0}, seq_len=8, seed=2, plan=BatchPlan(8, 4, 2, 1, 2),
                      rank=rank)
        for rank in range(4)
    ]  # fmt: skip
    batches = [sampler.batch(1, {}) for sampler in samplers]
    whole = StreamSampler(streams, {"en": 1.0}, seq_len=8, seed=2, plan=BatchPlan(8, 2, 4, 1))
    for rank, batch in enumerate(batches):
        assert batch.share == (rank % 2, 2) and list(batch.blocks) == [rank // 2]
        np.testing.assert_array_equal(
            batch.tokens,
            whole.batch(1, {}).tokens
            if rank < 2
            else StreamSampler(
                streams, {"en": 1.0}, seq_len=8, seed=2, plan=BatchPlan(8, 2, 4, 1), rank=1
            )
            .batch(1, {})
            .tokens,
        )
        assert batch.consumed == {"en": 8}


def test_without_a_micro_batch_a_block_trains_whole_as_before():
    """micro_batch unset or at least the block: one micro-batch a block, part 0, whose dropout
    seed is the block's own (the demo computes what it did before the setting existed)."""
    from xling.pretrain.data import step_seed

    settings = PretrainSettings(batch_size=2, seq_len=8)
    inputs = SimpleNamespace(replacement_ids=lambda lang: np.arange(5, 50))
    streams = {"en": np.random.default_rng(0).integers(5, 50, 800)}
    sampler = StreamSampler(streams, {"en": 1.0}, seq_len=8, seed=1, plan=BatchPlan(6, 1, 2, 3))
    runtime = Runtime(0, 0, 1, torch.device("cpu"))
    batch = sampler.batch(5, {})
    _, unset = _prepare(batch, settings=settings, runtime=runtime, inputs=inputs)
    settings.micro_batch = 2
    _, at_block = _prepare(batch, settings=settings, runtime=runtime, inputs=inputs)
    assert unset.parts == at_block.parts == [(0, 0), (1, 0), (2, 0)]
    for a, b in zip(unset.micro_batches, at_block.micro_batches, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert step_seed(7, 5, 2, 0) == step_seed(7, 5, 2) != step_seed(7, 5, 2, 1)


# --------------------------------------------------------------------------- precision
@pytest.mark.parametrize(
    ("capability", "precision"),
    [((7, 0), "fp16"), ((7, 5), "fp16"), ((8, 0), "bf16"), ((8, 9), "bf16"), ((9, 0), "bf16")],
)
def test_auto_precision_follows_the_compute_capability(capability, precision):
    assert native_precision(capability) == precision


def test_auto_precision_never_emulates_bf16(monkeypatch):
    """A V100 (sm_70) trains in fp16 although torch says it supports bf16 (by emulation)."""
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 0))
    gpu = torch.device("cuda", 0)
    assert resolve_precision("auto", gpu) == "fp16"
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    assert resolve_precision("auto", gpu) == "bf16"
    assert resolve_precision("fp32", gpu) == "fp32"
    assert resolve_precision("auto", torch.device("cpu")) == "fp32"
    assert native_precision(None) == "fp32"


def test_a_share_that_selects_nothing_still_trains_one_micro_batch_of_zero_loss():
    """Each process must run a backward every step for DDP's all-reduce: a process whose half
    of a shared block selects nothing keeps that half, with no positions and a loss of 0."""
    input_ids = np.arange(5, 5 + 4 * 8).reshape(4, 8)
    selected = np.array([1, 9])  # both in the first half (rows 0-1)
    arrays = (input_ids, selected, np.array([7, 8]))
    [(part, (ids, chosen, targets))] = cut_block(arrays, None, share=(1, 2))
    assert part == 1 and chosen.size == targets.size == 0
    np.testing.assert_array_equal(ids, input_ids[2:])
    model = _model()
    objective = MaskedLMObjective(model)
    loss = objective(
        torch.from_numpy(ids), "en", torch.from_numpy(chosen), torch.from_numpy(targets)
    )
    loss.backward()
    assert loss.item() == 0.0
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.count_nonzero(g) == 0 for g in grads)
