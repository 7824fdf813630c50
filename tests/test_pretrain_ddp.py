"""DDP of every model variant on two processes (gloo, CPU), as the trainer sets it up
(xling.pretrain.loop._objective): it looks for parameters without a gradient only in models with
a language's own embeddings or layers, which sit out the other language's steps, and broadcasts
no buffers. Every variant trains without error to the weights DDP's catch-all setting (search for
unused parameters, broadcast buffers: the setting before) gives; and a variant that leaves
parameters out would fail without the search, which is what the test would catch."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from xling.model import EncoderConfig, MLMEncoder
from xling.pretrain.distributed import Runtime
from xling.pretrain.loop import _objective
from xling.pretrain.objective import MaskedLMObjective

VOCABULARY = 40
# Each step trains one language on both processes, as the trainer's batch plan does.
LANGUAGES_BY_STEP = ["en", "fr", "fr", "en"]
VARIANTS = {
    "default": {},  # fully shared, with language embeddings
    "no_language_embeddings": {"language_embeddings": False},
    "sep_embeddings": {"sep_embeddings": True},
    "sep_layers": {"sep_layers": 1},
    "sep_both": {"sep_embeddings": True, "sep_layers": 1},
    "monolingual": {"languages": ["en"]},
}


def build_model(variant: dict) -> MLMEncoder:
    torch.manual_seed(0)
    options = dict(languages=["en", "fr"], dim=16, layers=2, heads=2, ffn_dim=32, max_positions=8)
    options.update(dropout=0.0, attention_dropout=0.0, **variant)
    model = MLMEncoder(EncoderConfig(vocab_size=VOCABULARY, **options))
    if model.config.sep_embeddings:  # each language's softmax over its own half of the ids
        halves = {"en": range(0, 25), "fr": [*range(0, 5), *range(25, VOCABULARY)]}
        for lang in model.config.languages:
            model.set_language_vocabulary(lang, list(halves[lang]))
    return model


def train(model: MLMEncoder, objective: torch.nn.Module, rank: int) -> dict[str, torch.Tensor]:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for step, lang in enumerate(LANGUAGES_BY_STEP):
        if lang not in model.config.languages:
            lang = model.config.languages[0]
        generator = torch.Generator().manual_seed(100 * step + rank)  # each process its own batch
        low = 25 if (lang == "fr" and model.config.sep_embeddings) else 5
        ids = torch.randint(low, low + 15, (2, 8), generator=generator)
        selected = torch.tensor([1, 6, 12])
        objective(ids, lang, selected, ids.reshape(-1)[selected]).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def worker(rank: int, init_file: str, results: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    torch.set_num_threads(1)
    runtime = Runtime(rank, rank, 2, torch.device("cpu"))
    found: dict = {"chosen": {}, "catch_all": {}, "search_off_fails": None}
    for name, variant in VARIANTS.items():
        model = build_model(variant)
        found["chosen"][name] = train(model, _objective(model, runtime, compile_layers=False), rank)
        model = build_model(variant)
        catch_all = DistributedDataParallel(MaskedLMObjective(model), find_unused_parameters=True)
        found["catch_all"][name] = train(model, catch_all, rank)
    model = build_model(VARIANTS["sep_layers"])
    try:
        train(model, DistributedDataParallel(MaskedLMObjective(model)), rank)
    except RuntimeError as error:
        found["search_off_fails"] = str(error)
    if rank == 0:
        torch.save(found, results)
    dist.barrier()
    dist.destroy_process_group()


def test_ddp_of_each_variant_trains_to_the_weights_of_the_catch_all_setting(tmp_path):
    results = tmp_path / "weights.pt"
    mp.spawn(worker, args=(str(tmp_path / "rendezvous"), str(results)), nprocs=2, join=True)
    found = torch.load(results, weights_only=True)
    for name in VARIANTS:
        chosen, catch_all = found["chosen"][name], found["catch_all"][name]
        assert chosen.keys() == catch_all.keys()
        differing = [k for k in chosen if not torch.equal(chosen[k], catch_all[k])]
        assert not differing, f"{name}: {differing} differ from DDP's catch-all setting"
        start = build_model(VARIANTS[name]).state_dict()
        assert any(not torch.equal(start[k], chosen[k]) for k in start), f"{name} did not train"
    # The check above has teeth: without the search a model with separate layers fails.
    assert "parameters that were not used in producing loss" in (found["search_off_fails"] or "")


def test_only_models_with_a_languages_own_parts_search_for_unused_parameters():
    runtime = Runtime(0, 0, 2, torch.device("cpu"))
    searching = {}
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    try:
        for name, variant in VARIANTS.items():
            ddp = _objective(build_model(variant), runtime, compile_layers=False)
            searching[name] = ddp.find_unused_parameters
            assert ddp.broadcast_buffers is False, name
    finally:
        dist.destroy_process_group()
    assert searching == {
        "default": False,
        "no_language_embeddings": False,
        "sep_embeddings": True,
        "sep_layers": True,
        "sep_both": True,
        "monolingual": False,
    }
