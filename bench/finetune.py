"""Fine-tuning speed: sentences per second of training and of tree decoding, as ratios.

* Training: one NER step of ``xling.finetune`` (demo-size encoder: 8 layers, width 64) against
  ``transformers.BertForTokenClassification`` of the same size, the model a user would otherwise
  pick, on the same batches.
* Decoding: ``xling.finetune.mst.decode_trees`` (batched greedy check + vectorized Chu-Liu-Edmonds)
  against a plain Python Chu-Liu-Edmonds (a loop over arcs, as AllenNLP's and crosslingual-nlp's)
  and against networkx's ``maximum_spanning_arborescence``, all with the same single-root rule,
  on random scores (every sentence needs Chu-Liu-Edmonds) and on peaked scores (like a trained
  parser's, where greedy heads are mostly a tree already). Tree scores are checked equal.

Run: ``.venv/bin/python bench/finetune.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import networkx as nx
import numpy as np
import torch

from xling.finetune import FinetuneSettings
from xling.finetune.mst import decode_trees
from xling.finetune.tasks import TaskModel, make_task
from xling.model import EncoderConfig, MLMEncoder

THREADS = 1
SENTENCES = 400
NETWORKX_SENTENCES = 50


def best_of(runs: int, function) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


# ----------------------------------------------------------------------------- decoding
def python_chu_liu_edmonds(scores: list[list[float]]) -> list[int]:
    """Textbook recursive Chu-Liu-Edmonds over an arc list (``scores[dep][head]``), root 0."""
    n = len(scores)
    arcs = [(h, d, scores[d][h]) for d in range(1, n) for h in range(n) if h != d]
    return _cle_arcs(list(range(n)), arcs)


def _cle_arcs(nodes: list[int], arcs: list[tuple[int, int, float]]) -> list[int]:
    best: dict[int, tuple[int, int, float]] = {}
    for head, dep, weight in arcs:
        if dep != 0 and (dep not in best or weight > best[dep][2]):
            best[dep] = (head, dep, weight)
    heads = {dep: arc[0] for dep, arc in best.items()}
    cycle = None
    for start in heads:
        seen, node = [], start
        while node != 0 and node not in seen:
            seen.append(node)
            node = heads[node]
        if node != 0:
            cycle = seen[seen.index(node) :]
            break
    if cycle is None:
        result = [0] * (max(nodes) + 1)
        for dep, head in heads.items():
            result[dep] = head
        return result
    members = set(cycle)
    new = max(nodes) + 1
    contracted, origin = [], {}
    for head, dep, weight in arcs:
        if head in members and dep not in members:
            arc = (new, dep, weight)
        elif head not in members and dep in members:
            arc = (head, new, weight - best[dep][2])
        elif head not in members and dep not in members:
            arc = (head, dep, weight)
        else:
            continue
        if arc[:2] not in origin or arc[2] > origin[arc[:2]][1]:
            origin[arc[:2]] = ((head, dep), arc[2])
    contracted = [(h, d, w) for (h, d), (_, w) in origin.items()]
    sub = _cle_arcs([v for v in nodes if v not in members] + [new], contracted)
    result = [0] * (max(nodes) + 1)
    for dep in nodes:
        if dep == 0:
            continue
        if dep in members:
            result[dep] = heads[dep]
        else:
            result[dep] = origin[(sub[dep], dep)][0][0]
    entry_head, entry_dep = origin[(sub[new], new)][0]
    result[entry_dep] = entry_head
    return result


def with_root_penalty(scores: np.ndarray) -> np.ndarray:
    """The single-root rule xling uses, applied to the baselines' input too."""
    scores = scores.astype(np.float64).copy()
    penalty = (len(scores) - 1) * (scores.max() - scores.min()) + 1.0
    scores[1:, 0] -= penalty
    return scores


def networkx_mst(scores: np.ndarray) -> list[int]:
    n = len(scores)
    graph = nx.DiGraph()
    graph.add_weighted_edges_from(
        (h, d, scores[d, h]) for d in range(1, n) for h in range(n) if h != d
    )
    tree = nx.maximum_spanning_arborescence(graph)
    heads = [0] * n
    for head, dep in tree.edges():
        heads[dep] = head
    return heads


def tree_score(scores: np.ndarray, heads) -> float:
    return float(sum(scores[d, heads[d]] for d in range(1, len(scores))))


def bench_decoding(kind: str, rng: np.random.Generator) -> None:
    lengths = rng.integers(5, 41, size=SENTENCES)
    size = int(lengths.max()) + 1
    scores = rng.normal(size=(SENTENCES, size, size)).astype(np.float32)
    if kind == "peaked":  # a confident parser: a random (non-projective) tree scores high
        for b, n in enumerate(lengths):
            order = rng.permutation(np.arange(1, n + 1))
            scores[b, order[0], 0] += 8.0
            for i in range(1, n):
                scores[b, order[i], order[rng.integers(0, i)]] += 8.0
    tensor = torch.from_numpy(scores).log_softmax(-1)
    batched = torch.from_numpy(lengths)
    logp = tensor.numpy()
    ours = decode_trees(tensor, batched)
    singles = [with_root_penalty(logp[b, : n + 1, : n + 1]) for b, n in enumerate(lengths)]
    theirs = [python_chu_liu_edmonds(s.tolist()) for s in singles]
    for b, n in enumerate(lengths):
        sub = logp[b, : n + 1, : n + 1].astype(np.float64)
        assert abs(tree_score(sub, ours[b, : n + 1].tolist()) - tree_score(sub, theirs[b])) < 1e-6
    t_ours = best_of(3, lambda: decode_trees(tensor, batched))
    t_python = best_of(1, lambda: [python_chu_liu_edmonds(s.tolist()) for s in singles])
    few = singles[:NETWORKX_SENTENCES]  # networkx is slow: time a sample
    t_nx = best_of(1, lambda: [networkx_mst(s) for s in few]) * len(singles) / len(few)
    print(
        f"decoding, {kind} scores, {SENTENCES} sentences of 5-40 words:\n"
        f"  xling decode_trees    {SENTENCES / t_ours:10.0f} sentences/s\n"
        f"  plain Python CLE      {SENTENCES / t_python:10.0f} sentences/s"
        f"   -> xling is {t_python / t_ours:6.1f}x faster\n"
        f"  networkx arborescence {SENTENCES / t_nx:10.0f} sentences/s"
        f"   -> xling is {t_nx / t_ours:6.1f}x faster"
    )
    if kind == "peaked":
        print(
            "  (most sentences take xling's batched greedy path; both references run\n"
            "   Chu-Liu-Edmonds on every sentence, as AllenNLP and crosslingual-nlp do)"
        )


# ----------------------------------------------------------------------------- training
def bench_training(rng: np.random.Generator) -> None:
    from transformers import BertConfig, BertForTokenClassification

    vocab, labels, batch_size, steps = 2000, 7, 16, 30
    config = EncoderConfig(
        vocab_size=vocab,
        languages=["en", "fr"],
        dim=64,
        layers=8,
        heads=4,
        ffn_dim=256,
        dropout=0.0,
        attention_dropout=0.0,
        max_positions=128,
    )
    tokenizer = SimpleNamespace(pad_id=0, unk_id=1, eos_id=3)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
    settings = FinetuneSettings(epochs=1, max_length=128, seed=0, labels=tags)
    task = make_task("ner", tokenizer, settings)
    torch.manual_seed(0)
    model = TaskModel(MLMEncoder(config), task.build_head(64, 0.0))
    items = []
    for _ in range(batch_size * steps):
        words = int(rng.integers(8, 25))
        pieces = rng.integers(1, 3, size=words)
        first = (np.concatenate([[1], 1 + np.cumsum(pieces)[:-1]])).tolist()
        ids = [3, *rng.integers(5, vocab, size=int(pieces.sum())).tolist(), 3]
        items.append(
            {
                "input_ids": ids,
                "first_subword": first,
                "labels": rng.integers(0, labels, size=words).tolist(),
                "words": words,
            }
        )
    batches = [task.collate(items[i : i + batch_size]) for i in range(0, len(items), batch_size)]

    bert = BertForTokenClassification(
        BertConfig(
            vocab_size=vocab,
            hidden_size=64,
            num_hidden_layers=8,
            num_attention_heads=4,
            intermediate_size=256,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            max_position_embeddings=128,
            num_labels=labels,
            attn_implementation="sdpa",
        )
    )

    def ours():
        optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        for batch in batches:
            task.loss(model, batch, "en").backward()
            optimizer.step()
            optimizer.zero_grad()

    def hf():
        optimizer = torch.optim.Adam(bert.parameters(), lr=1e-4)
        for batch in batches:
            # HF labels every subword position: scatter the word labels onto first subwords.
            labels_at = torch.full_like(batch["input_ids"], -100)
            labels_at.scatter_(1, batch["first_subword"], batch["labels"].clamp(min=-100))
            labels_at[:, 0] = -100
            mask = batch["input_ids"] != 0
            bert(
                input_ids=batch["input_ids"], attention_mask=mask, labels=labels_at
            ).loss.backward()
            optimizer.step()
            optimizer.zero_grad()

    ours()
    hf()  # warm-up
    t_ours, t_hf = best_of(3, ours), best_of(3, hf)
    n = len(items)
    print(
        f"training, NER, 8 layers x 64 wide, batch {batch_size}, {n} sentences of 8-24 words:\n"
        f"  xling run_finetune step              {n / t_ours:8.0f} sentences/s\n"
        f"  transformers BertForTokenClassification {n / t_hf:5.0f} sentences/s"
        f"   -> ratio xling/HF {t_hf / t_ours:5.2f}"
    )


def main() -> None:
    torch.set_num_threads(THREADS)
    print(f"torch {torch.__version__}, {THREADS} thread(s)")
    rng = np.random.default_rng(0)
    bench_decoding("random", rng)
    bench_decoding("peaked", rng)
    bench_training(rng)


if __name__ == "__main__":
    main()
